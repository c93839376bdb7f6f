//! The assembler: text in the syntax of `docs/asm.md` to a [`Program`] the kernel accepts.
//!
//! It reads back everything [`super::disasm::disassemble`] prints, byte for byte, and is
//! friendlier to people writing filters by hand: labels, `next`, `jne`/`jlt`/`jle`,
//! unqualified syscall names where the architecture is clear.
//!
//! Assembly runs in three steps, each reporting the first problem as `line:column: message`:
//! 1. parse every line (labels, directives, one instruction per line);
//! 2. resolve jump targets to offsets, and unqualified syscall names with the arch
//!    [`infer_knowledge`](super::disasm::infer_knowledge) finds at that instruction;
//! 3. validate the program as the kernel would, pointing at the offending source line.

use crate::arch::{Arch, Endian};
use crate::bpf::action::{parse_u32, RetVal};
use crate::bpf::data::{Field, OFF_ARCH, OFF_NR};
use crate::bpf::disasm::{infer_knowledge_with, ArchSet, ALU_OPS, JUMP_OPS};
use crate::bpf::insn::*;
use crate::bpf::validate::{validate, Rule, ValidationError};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// Why a text does not assemble, and where (1-based line and column, counted in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsmError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for AsmError {}

/// A position in the source, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pos {
    line: usize,
    column: usize,
}

impl Pos {
    fn error(self, message: impl Into<String>) -> AsmError {
        AsmError {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }
}

/// Assembles `src` into a program the kernel accepts as a seccomp filter.
pub fn assemble(src: &str) -> Result<Program, AsmError> {
    match assemble_unvalidated(src)? {
        (prog, None) => Ok(prog),
        (_, Some(rejected)) => Err(rejected),
    }
}

/// Assembles `src` without refusing what the kernel would: the program, and why and where the
/// kernel would reject it (`None`: it accepts it). For readers that take what a raw file may
/// hold too, such as a program past the kernel's 4096 instructions whose meaning is compared.
pub fn assemble_unvalidated(src: &str) -> Result<(Program, Option<AsmError>), AsmError> {
    let parsed = Parser::default().parse(src)?;
    let (insns, origins) = resolve(&parsed)?;
    let prog = Program::new(insns);
    let rejected = validate(&prog)
        .err()
        .map(|e| validation_error(&e, &origins));
    Ok((prog, rejected))
}

// ---------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// Letters, digits, `_` and `.`, not starting with a digit (`ld`, `x86_64.read`, `.lo`).
    Ident,
    /// Starts with a digit (`12`, `0x1f`).
    Number,
    Punct(char),
    /// A character the syntax has no use for; an error when the parser gets to it, so
    /// errors are reported left to right.
    Invalid,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    text: String,
    pos: Pos,
}

impl Token {
    fn is_punct(&self, c: char) -> bool {
        self.kind == Kind::Punct(c)
    }
    fn is_word(&self, word: &str) -> bool {
        self.kind == Kind::Ident && self.text.eq_ignore_ascii_case(word)
    }
    fn describe(&self) -> String {
        match self.kind {
            Kind::Invalid if self.text.chars().count() > 1 => format!(
                "`{}` (names are ASCII letters, digits, `_` and `.`)",
                self.text.escape_debug()
            ),
            Kind::Invalid => format!("character `{}`", self.text.escape_debug()),
            _ => format!("`{}`", self.text),
        }
    }
}

const PUNCTUATION: &str = "#[],:(){}=+-";

/// Splits one line (without its comment) into tokens.
fn tokenize(line: &str, line_no: usize) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos {
            line: line_no,
            column: i + 1,
        };
        let start = i;
        let kind = if c == ';' {
            break;
        } else if c.is_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_alphabetic() || c == '_' || c == '.' {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            if i < chars.len() && chars[i].is_alphanumeric() {
                // `lábel`: one word the syntax cannot take, not `l` followed by junk.
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                Kind::Invalid
            } else {
                Kind::Ident
            }
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Kind::Number
        } else if PUNCTUATION.contains(c) {
            i += 1;
            Kind::Punct(c)
        } else {
            i += 1;
            Kind::Invalid
        };
        tokens.push(Token {
            kind,
            text: chars[start..i].iter().collect(),
            pos,
        });
    }
    tokens
}

// ---------------------------------------------------------------------------------------
// Parsed form

/// Where a jump goes, as written.
#[derive(Debug, Clone)]
enum Target {
    /// Skip this many instructions (`next` is 0, `+3` is 3).
    Offset(u32),
    Label(String, Pos),
    /// An absolute instruction index.
    Index(u64, Pos),
}

/// The `k` field as written.
#[derive(Debug, Clone)]
enum KField {
    Value(u32),
    /// An unqualified syscall name, resolved once the arch at this instruction is known.
    Syscall(String, Pos),
    /// `ja`'s target.
    Jump(Target),
}

#[derive(Debug, Clone)]
struct Statement {
    pos: Pos,
    code: u16,
    k: KField,
    jt: Target,
    jf: Target,
}

struct Parsed {
    statements: Vec<Statement>,
    /// Label name → (index of the instruction it names, where it was defined).
    labels: HashMap<String, (usize, Pos)>,
    /// Architectures declared with `.arch` (every arch when none was).
    entry: ArchSet,
}

// ---------------------------------------------------------------------------------------
// Parser

struct Parser {
    statements: Vec<Statement>,
    labels: HashMap<String, (usize, Pos)>,
    arches: Option<Vec<Arch>>,
    /// Byte order for field names: `None` when `.arch` named arches of both orders and no
    /// `.endian` settled it.
    endian: Option<Endian>,
    endian_explicit: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Parser {
            statements: Vec::new(),
            labels: HashMap::new(),
            arches: None,
            endian: Some(Endian::Little),
            endian_explicit: false,
        }
    }
}

/// A cursor over one line's tokens.
struct Cursor<'a> {
    tokens: &'a [Token],
    at: usize,
    /// Position just past the last token, for "found end of line".
    eol: Pos,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.at)
    }
    fn next(&mut self) -> Option<&'a Token> {
        let t = self.tokens.get(self.at);
        self.at += t.is_some() as usize;
        t
    }
    fn pos(&self) -> Pos {
        self.peek().map_or(self.eol, |t| t.pos)
    }
    fn found(&self) -> String {
        self.peek()
            .map_or("end of line".to_string(), Token::describe)
    }
    fn unexpected(&self, expected: &str) -> AsmError {
        self.pos()
            .error(format!("expected {expected}, found {}", self.found()))
    }
    fn eat_punct(&mut self, c: char) -> bool {
        let hit = self.peek().is_some_and(|t| t.is_punct(c));
        self.at += hit as usize;
        hit
    }
    fn expect_punct(&mut self, c: char, expected: &str) -> Result<(), AsmError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }
    fn eat_word(&mut self, word: &str) -> bool {
        let hit = self.peek().is_some_and(|t| t.is_word(word));
        self.at += hit as usize;
        hit
    }
    fn at_end(&self) -> bool {
        self.at >= self.tokens.len()
    }
    fn expect_end(&self) -> Result<(), AsmError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.pos().error(format!(
                "unexpected {} after the instruction; comments start with `;`",
                self.found()
            )))
        }
    }
    /// `-number` as its 32-bit two's complement (`-1` is `0xffffffff`), or `None` when the
    /// next token is not `-`.
    fn negative_number(&mut self) -> Result<Option<u32>, AsmError> {
        let pos = self.pos();
        if !self.eat_punct('-') {
            return Ok(None);
        }
        let (v, _) = self.number("a number after `-`")?;
        if v > 0x8000_0000 {
            return Err(pos.error(format!(
                "-{v} does not fit in 32 bits (the smallest is -2147483648)"
            )));
        }
        Ok(Some(v.wrapping_neg()))
    }

    /// A plain number (decimal, `0x`, `0o`, `0b`).
    fn number(&mut self, what: &str) -> Result<(u32, Pos), AsmError> {
        match self.peek() {
            Some(t) if t.kind == Kind::Number => {
                self.at += 1;
                parse_u32(&t.text).map(|v| (v, t.pos)).ok_or_else(|| {
                    t.pos
                        .error(format!("`{}` is not a 32-bit number ({what})", t.text))
                })
            }
            _ => Err(self.unexpected(what)),
        }
    }
}

/// The instruction being built from one line.
struct Draft {
    code: u16,
    k: KField,
    jt: Target,
    jf: Target,
}

impl Draft {
    fn stmt(code: u16, k: u32) -> Draft {
        Draft {
            code,
            k: KField::Value(k),
            jt: Target::Offset(0),
            jf: Target::Offset(0),
        }
    }
}

impl Parser {
    fn parse(mut self, src: &str) -> Result<Parsed, AsmError> {
        for (i, line) in src.lines().enumerate() {
            self.line(line, i + 1)?;
        }
        let entry = match &self.arches {
            Some(arches) => ArchSet::of(arches),
            None => ArchSet::anything(),
        };
        Ok(Parsed {
            statements: self.statements,
            labels: self.labels,
            entry,
        })
    }

    fn line(&mut self, line: &str, line_no: usize) -> Result<(), AsmError> {
        let tokens = tokenize(line, line_no);
        let eol = Pos {
            line: line_no,
            column: tokens
                .last()
                .map_or(1, |t| t.pos.column + t.text.chars().count()),
        };
        let mut cur = Cursor {
            tokens: &tokens,
            at: 0,
            eol,
        };
        // Labels: `name:` (several may precede one instruction).
        while let (Some(name), Some(colon)) = (cur.peek(), tokens.get(cur.at + 1)) {
            if name.kind != Kind::Ident || !colon.is_punct(':') {
                break;
            }
            self.define_label(name)?;
            cur.at += 2;
        }
        let Some(first) = cur.next() else {
            return Ok(());
        };
        if first.kind == Kind::Ident && first.text.starts_with('.') {
            return self.directive(first, &mut cur);
        }
        if first.kind != Kind::Ident {
            return Err(first.pos.error(format!(
                "expected an instruction, a label (`name:`) or a directive, found {}",
                first.describe()
            )));
        }
        let draft = self.instruction(first, &mut cur)?;
        let draft = self.ignored_fields(draft, &mut cur)?;
        cur.expect_end()?;
        self.statements.push(Statement {
            pos: first.pos,
            code: draft.code,
            k: draft.k,
            jt: draft.jt,
            jf: draft.jf,
        });
        Ok(())
    }

    fn define_label(&mut self, name: &Token) -> Result<(), AsmError> {
        let text = &name.text;
        if text.starts_with('.') {
            return Err(name.pos.error(format!(
                "label `{text}` may not start with `.` (that is a directive)"
            )));
        }
        if text.eq_ignore_ascii_case("next") {
            return Err(name
                .pos
                .error("`next` is reserved (it means the following instruction)"));
        }
        if let Some((_, earlier)) = self.labels.get(text) {
            return Err(name.pos.error(format!(
                "label `{text}` is already defined at line {}",
                earlier.line
            )));
        }
        self.labels
            .insert(text.clone(), (self.statements.len(), name.pos));
        Ok(())
    }

    fn directive(&mut self, name: &Token, cur: &mut Cursor) -> Result<(), AsmError> {
        match name.text.to_ascii_lowercase().as_str() {
            ".arch" => {
                if !self.statements.is_empty() {
                    return Err(name
                        .pos
                        .error("`.arch` must come before the first instruction"));
                }
                let mut arches = self.arches.take().unwrap_or_default();
                loop {
                    let Some(t) = cur.next().filter(|t| t.kind != Kind::Punct(',')) else {
                        return Err(cur.unexpected("an architecture name (e.g. `x86_64`)"));
                    };
                    let arch = Arch::from_name(&t.text).ok_or_else(|| {
                        t.pos.error(format!(
                            "unknown architecture `{}`; expected one of {}",
                            t.text,
                            arch_names()
                        ))
                    })?;
                    arches.push(arch);
                    if !cur.eat_punct(',') {
                        break;
                    }
                }
                cur.expect_end()?;
                if !self.endian_explicit {
                    let first = arches[0].endian();
                    self.endian = arches.iter().all(|a| a.endian() == first).then_some(first);
                }
                self.arches = Some(arches);
                Ok(())
            }
            ".endian" => {
                let endian = if cur.eat_word("little") {
                    Endian::Little
                } else if cur.eat_word("big") {
                    Endian::Big
                } else {
                    return Err(cur.unexpected("`little` or `big`"));
                };
                cur.expect_end()?;
                self.endian = Some(endian);
                self.endian_explicit = true;
                Ok(())
            }
            ".insn" => {
                let (code, code_pos) = cur.number("the opcode")?;
                let code = u16::try_from(code)
                    .map_err(|_| code_pos.error("the opcode must fit in 16 bits"))?;
                cur.expect_punct(',', "`,` after the opcode")?;
                let (jt, jt_pos) = cur.number("jt")?;
                let jt = u8::try_from(jt).map_err(|_| jt_pos.error("jt must fit in 8 bits"))?;
                cur.expect_punct(',', "`,` after jt")?;
                let (jf, jf_pos) = cur.number("jf")?;
                let jf = u8::try_from(jf).map_err(|_| jf_pos.error("jf must fit in 8 bits"))?;
                cur.expect_punct(',', "`,` after jf")?;
                let (k, _) = cur.number("k")?;
                cur.expect_end()?;
                self.statements.push(Statement {
                    pos: name.pos,
                    code,
                    k: KField::Value(k),
                    jt: Target::Offset(jt as u32),
                    jf: Target::Offset(jf as u32),
                });
                Ok(())
            }
            other => Err(name.pos.error(format!(
                "unknown directive `{other}`; expected `.arch`, `.endian` or `.insn`"
            ))),
        }
    }

    fn instruction(&self, mnemonic: &Token, cur: &mut Cursor) -> Result<Draft, AsmError> {
        let m = mnemonic.text.to_ascii_lowercase();
        let draft = match m.as_str() {
            "ld" => self.load(cur)?,
            "ldx" => self.load_x(cur)?,
            "st" => Draft::stmt(BPF_ST, scratch(cur)?),
            "stx" => Draft::stmt(BPF_STX, scratch(cur)?),
            "neg" => Draft::stmt(BPF_ALU | BPF_NEG, 0),
            "tax" => Draft::stmt(BPF_MISC | BPF_TAX, 0),
            "txa" => Draft::stmt(BPF_MISC | BPF_TXA, 0),
            "ja" | "jmp" => Draft {
                code: BPF_JMP | BPF_JA,
                k: KField::Jump(target(cur)?),
                jt: Target::Offset(0),
                jf: Target::Offset(0),
            },
            "ret" => ret(cur)?,
            _ => {
                if let Some(&(_, alu)) = ALU_OPS.iter().find(|(name, _)| *name == m) {
                    self.alu(alu, cur)?
                } else if let Some(draft) = self.conditional_jump(&m, cur)? {
                    draft
                } else {
                    let mut known: Vec<&str> = vec![
                        "ld", "ldx", "st", "stx", "neg", "tax", "txa", "ja", "jmp", "ret", "jne",
                        "jlt", "jle",
                    ];
                    known.extend(ALU_OPS.iter().map(|(n, _)| *n));
                    known.extend(JUMP_OPS.iter().map(|(n, _)| *n));
                    // Classic BPF that seccomp refuses: say why rather than guess.
                    let hint = match m.as_str() {
                        "mod" => "; classic BPF has it, but seccomp filters may not use it \
                                  (`seccomp_check_filter`)"
                            .to_string(),
                        "ldh" | "ldb" | "ldxb" | "ldxh" => "; seccomp filters load 32-bit words \
                                  only: `ld [offset]` with an offset that is a multiple of 4"
                            .to_string(),
                        _ => did_you_mean(&m, known.iter().copied()),
                    };
                    return Err(mnemonic
                        .pos
                        .error(format!("unknown instruction `{}`{hint}", mnemonic.text)));
                }
            }
        };
        Ok(draft)
    }

    fn load(&self, cur: &mut Cursor) -> Result<Draft, AsmError> {
        if cur.eat_punct('[') {
            let offset = self.field(cur)?;
            cur.expect_punct(']', "`]` after the field")?;
            return Ok(Draft::stmt(BPF_LD | BPF_W | BPF_ABS, offset));
        }
        if cur.peek().is_some_and(|t| t.is_punct('#')) {
            let k = self.constant(cur)?;
            return Ok(Draft {
                k,
                ..Draft::stmt(BPF_LD | BPF_IMM, 0)
            });
        }
        if cur.eat_word("len") {
            return Ok(Draft::stmt(BPF_LD | BPF_W | BPF_LEN, 0));
        }
        if cur.peek().is_some_and(|t| t.is_word("m")) {
            return Ok(Draft::stmt(BPF_LD | BPF_MEM, scratch(cur)?));
        }
        Err(cur.unexpected("`[field]`, `#constant`, `len` or `M[index]` after `ld`"))
    }

    fn load_x(&self, cur: &mut Cursor) -> Result<Draft, AsmError> {
        if cur.peek().is_some_and(|t| t.is_punct('#')) {
            let k = self.constant(cur)?;
            return Ok(Draft {
                k,
                ..Draft::stmt(BPF_LDX | BPF_IMM, 0)
            });
        }
        if cur.eat_word("len") {
            return Ok(Draft::stmt(BPF_LDX | BPF_W | BPF_LEN, 0));
        }
        if cur.peek().is_some_and(|t| t.is_word("m")) {
            return Ok(Draft::stmt(BPF_LDX | BPF_MEM, scratch(cur)?));
        }
        if cur.peek().is_some_and(|t| t.is_punct('[')) {
            return Err(cur.pos().error(
                "`ldx` cannot load from seccomp_data (the kernel rejects it); use `ld [...]` then `tax`",
            ));
        }
        Err(cur.unexpected("`#constant`, `len` or `M[index]` after `ldx`"))
    }

    fn alu(&self, alu: u16, cur: &mut Cursor) -> Result<Draft, AsmError> {
        if cur.eat_word("x") {
            return Ok(Draft::stmt(BPF_ALU | alu | BPF_X, 0));
        }
        if !cur.peek().is_some_and(|t| t.is_punct('#')) {
            return Err(cur.unexpected("`#constant` or `x`"));
        }
        let pos = cur.pos();
        let k = self.constant(cur)?;
        match (alu, &k) {
            (BPF_DIV, KField::Value(0)) => {
                return Err(pos.error("division by the constant 0 (the kernel rejects it)"))
            }
            (BPF_LSH | BPF_RSH, KField::Value(v)) if *v >= 32 => {
                return Err(pos.error(format!(
                "shift by {v}: constant shifts must be below 32 (the kernel rejects larger ones)"
            )))
            }
            _ => {}
        }
        Ok(Draft {
            k,
            ..Draft::stmt(BPF_ALU | alu | BPF_K, 0)
        })
    }

    /// `jeq/jgt/jge/jset` and the sugar `jne/jlt/jle` (the same opcodes with the targets
    /// swapped). Returns `None` when `m` is not a conditional jump.
    fn conditional_jump(&self, m: &str, cur: &mut Cursor) -> Result<Option<Draft>, AsmError> {
        let (op, swapped) = match m {
            "jne" | "jneq" => (BPF_JEQ, true),
            "jlt" => (BPF_JGE, true),
            "jle" => (BPF_JGT, true),
            _ => match JUMP_OPS.iter().find(|(name, _)| *name == m) {
                Some(&(_, op)) => (op, false),
                None => return Ok(None),
            },
        };
        let (source, k) = if cur.eat_word("x") {
            (BPF_X, KField::Value(0))
        } else if cur.peek().is_some_and(|t| t.is_punct('#')) {
            (BPF_K, self.constant(cur)?)
        } else {
            return Err(cur.unexpected("`#constant` or `x`"));
        };
        cur.expect_punct(',', "`,` and a jump target")?;
        let first = target(cur)?;
        let second = if cur.eat_punct(',') {
            target(cur)?
        } else {
            Target::Offset(0)
        };
        let (jt, jf) = if swapped {
            (second, first)
        } else {
            (first, second)
        };
        Ok(Some(Draft {
            code: BPF_JMP | op | source,
            k,
            jt,
            jf,
        }))
    }

    /// The inside of `[...]`: a field name or a raw byte offset.
    fn field(&self, cur: &mut Cursor) -> Result<u32, AsmError> {
        let Some(t) = cur.peek() else {
            return Err(cur.unexpected(FIELD_NAMES));
        };
        if t.kind == Kind::Number {
            return cur.number("a byte offset").map(|(v, _)| v);
        }
        if t.kind != Kind::Ident {
            return Err(cur.unexpected(FIELD_NAMES));
        }
        cur.at += 1;
        let lower = t.text.to_ascii_lowercase();
        let field = match lower.as_str() {
            "nr" => return Ok(OFF_NR),
            "arch" => return Ok(OFF_ARCH),
            "ip.lo" | "ip.hi" => Field::Ip {
                high: lower.ends_with("hi"),
            },
            "args" => {
                cur.expect_punct('[', "`[` and an argument index (0 to 5)")?;
                let (index, pos) = cur.number("an argument index (0 to 5)")?;
                if index > 5 {
                    return Err(pos.error(format!(
                        "argument index {index} is out of range; syscalls have args[0] to args[5]"
                    )));
                }
                cur.expect_punct(']', "`]` after the argument index")?;
                let high = if cur.eat_word(".lo") {
                    false
                } else if cur.eat_word(".hi") {
                    true
                } else {
                    return Err(
                        cur.unexpected("`.lo` or `.hi` (which 32-bit half of the 64-bit argument)")
                    );
                };
                Field::Arg {
                    index: index as u8,
                    high,
                }
            }
            "x" => {
                return Err(t.pos.error(format!(
                    "indirect loads (`[x + k]`) are classic BPF that seccomp filters may not \
                     use; expected {FIELD_NAMES}"
                )))
            }
            _ => {
                return Err(t.pos.error(format!(
                    "unknown field `{}`; expected {FIELD_NAMES}",
                    t.text
                )))
            }
        };
        let endian = self.endian.ok_or_else(|| {
            t.pos.error(
                "the `.arch` architectures differ in byte order, so which half of a 64-bit field comes first is unclear; add `.endian little` or `.endian big`",
            )
        })?;
        Ok(field.offset(endian))
    }

    /// `#constant`: a number, `-number`, `arch.syscall`, `syscall`, `AUDIT_ARCH_…`, or an
    /// action (`ALLOW`, `ERRNO(1)`).
    fn constant(&self, cur: &mut Cursor) -> Result<KField, AsmError> {
        cur.expect_punct('#', "`#`")?;
        if let Some(v) = cur.negative_number()? {
            return Ok(KField::Value(v));
        }
        let Some(t) = cur.peek() else {
            return Err(cur.unexpected(CONSTANT_FORMS));
        };
        match t.kind {
            Kind::Number => return cur.number("a constant").map(|(v, _)| KField::Value(v)),
            Kind::Ident => {}
            Kind::Punct(_) | Kind::Invalid => return Err(cur.unexpected(CONSTANT_FORMS)),
        }
        cur.at += 1;
        let text = &t.text;
        if cur.peek().is_some_and(|p| p.is_punct('(')) {
            return action_with_data(text, t.pos, cur).map(|r| KField::Value(r.0));
        }
        if let Some(rest) = strip_prefix_ignore_case(text, "AUDIT_ARCH_") {
            return Arch::from_name(rest)
                .map(|a| KField::Value(a.token()))
                .ok_or_else(|| {
                    t.pos.error(format!(
                        "unknown architecture in `{text}`; expected AUDIT_ARCH_ followed by one of {}",
                        arch_names()
                    ))
                });
        }
        if let Some((arch, name)) = text.split_once('.') {
            let arch = Arch::from_name(arch).ok_or_else(|| {
                t.pos.error(format!(
                    "unknown architecture `{arch}` in `{text}`; expected one of {}",
                    arch_names()
                ))
            })?;
            let name_pos = Pos {
                line: t.pos.line,
                column: t.pos.column + text.chars().take_while(|&c| c != '.').count() + 1,
            };
            return lookup_syscall(arch, name)
                .map(KField::Value)
                .map_err(|m| name_pos.error(m));
        }
        let is_upper = text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if is_upper {
            return text
                .parse::<RetVal>()
                .map(|r| KField::Value(r.0))
                .map_err(|_| {
                    t.pos.error(format!(
                        "unknown constant `{text}`; upper-case names are actions (ALLOW, ERRNO(n), …) or AUDIT_ARCH_…; syscall names are lower-case"
                    ))
                });
        }
        Ok(KField::Syscall(text.clone(), t.pos))
    }

    /// `{jt=…, jf=…, k=…}`: fields the kernel ignores for this opcode, kept for an exact
    /// round trip.
    fn ignored_fields(&self, mut draft: Draft, cur: &mut Cursor) -> Result<Draft, AsmError> {
        if !cur.eat_punct('{') {
            return Ok(draft);
        }
        loop {
            if cur.eat_punct('}') {
                return Ok(draft);
            }
            let Some(name) = cur.next().filter(|t| t.kind == Kind::Ident) else {
                return Err(cur.unexpected("`jt=`, `jf=`, `k=` or `}`"));
            };
            cur.expect_punct('=', "`=`")?;
            let (value, pos) = cur.number("a number")?;
            let code = draft.code;
            match name.text.to_ascii_lowercase().as_str() {
                "jt" | "jf" => {
                    if class(code) == BPF_JMP && op(code) != BPF_JA {
                        return Err(name.pos.error(format!(
                            "`{}` is given by the jump targets of a conditional jump",
                            name.text
                        )));
                    }
                    let v = u8::try_from(value)
                        .map_err(|_| pos.error(format!("{} must fit in 8 bits", name.text)))?;
                    let slot = if name.is_word("jt") {
                        &mut draft.jt
                    } else {
                        &mut draft.jf
                    };
                    *slot = Target::Offset(v as u32);
                }
                "k" => {
                    if crate::bpf::disasm::reads_k(code) {
                        return Err(name.pos.error("`k` is given by this instruction's operand"));
                    }
                    draft.k = KField::Value(value);
                }
                _ => {
                    return Err(name.pos.error(format!(
                        "unknown field `{}`; expected `jt`, `jf` or `k`",
                        name.text
                    )))
                }
            }
            cur.eat_punct(',');
        }
    }
}

const FIELD_NAMES: &str =
    "a field (`nr`, `arch`, `ip.lo`, `ip.hi`, `args[0].lo` … `args[5].hi`) or a byte offset";
const CONSTANT_FORMS: &str =
    "a number, a syscall (`read`, `x86_64.read`), `AUDIT_ARCH_…` or an action (`ALLOW`, `ERRNO(1)`)";

fn arch_names() -> String {
    Arch::ALL.map(|a| a.name()).join(", ")
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `M[index]`.
fn scratch(cur: &mut Cursor) -> Result<u32, AsmError> {
    if !cur.eat_word("m") {
        return Err(cur.unexpected("`M[index]`"));
    }
    cur.expect_punct('[', "`[` after `M`")?;
    let (index, pos) = cur.number("a scratch index (0 to 15)")?;
    if index >= BPF_MEMWORDS {
        return Err(pos.error(format!(
            "scratch index {index} is out of range; there are M[0] to M[15]"
        )));
    }
    cur.expect_punct(']', "`]` after the scratch index")?;
    Ok(index)
}

/// A jump target: a label, `next`, `+offset` or an absolute instruction index.
fn target(cur: &mut Cursor) -> Result<Target, AsmError> {
    const EXPECTED: &str = "a jump target (a label, `next`, `+offset` or an instruction index)";
    let Some(t) = cur.peek() else {
        return Err(cur.unexpected(EXPECTED));
    };
    match &t.kind {
        Kind::Ident if t.is_word("next") => {
            cur.at += 1;
            Ok(Target::Offset(0))
        }
        Kind::Ident if !t.text.starts_with('.') => {
            cur.at += 1;
            Ok(Target::Label(t.text.clone(), t.pos))
        }
        Kind::Punct('+') => {
            cur.at += 1;
            cur.number("an offset after `+`")
                .map(|(v, _)| Target::Offset(v))
        }
        Kind::Number => {
            let (v, pos) = cur.number("an instruction index")?;
            Ok(Target::Index(v as u64, pos))
        }
        _ => Err(cur.unexpected(EXPECTED)),
    }
}

/// `ret a`, `ret #k`, or `ret ACTION`.
fn ret(cur: &mut Cursor) -> Result<Draft, AsmError> {
    if cur.eat_word("a") {
        return Ok(Draft::stmt(BPF_RET | BPF_A, 0));
    }
    if cur.peek().is_some_and(|t| t.is_word("x")) {
        return Err(cur
            .pos()
            .error("`ret x` is not allowed in seccomp filters; use `txa` then `ret a`"));
    }
    // `ret #-1` as `ret #0xffffffff` (KILL_PROCESS), as `#-1` reads elsewhere.
    if cur.eat_punct('#') {
        if let Some(v) = cur.negative_number()? {
            return Ok(Draft::stmt(BPF_RET | BPF_K, v));
        }
    }
    let Some(t) = cur.peek() else {
        return Err(cur.unexpected("an action (`ALLOW`, `ERRNO(1)`, …), `#number` or `a`"));
    };
    let value = match t.kind {
        Kind::Number => cur.number("a return value")?.0,
        Kind::Ident => {
            cur.at += 1;
            if cur.peek().is_some_and(|p| p.is_punct('(')) {
                action_with_data(&t.text, t.pos, cur)?.0
            } else {
                t.text
                    .parse::<RetVal>()
                    .map_err(|e| t.pos.error(e.to_string()))?
                    .0
            }
        }
        Kind::Punct(_) | Kind::Invalid => {
            return Err(cur.unexpected("an action (`ALLOW`, `ERRNO(1)`, …), `#number` or `a`"))
        }
    };
    Ok(Draft::stmt(BPF_RET | BPF_K, value))
}

/// `NAME(data)`, the cursor just past `NAME`.
fn action_with_data(name: &str, pos: Pos, cur: &mut Cursor) -> Result<RetVal, AsmError> {
    cur.expect_punct('(', "`(`")?;
    let (data, data_pos) = cur.number("the action's data")?;
    cur.expect_punct(')', "`)` after the action's data")?;
    if data > 0xffff {
        return Err(data_pos.error(format!(
            "action data {data} does not fit in the 16 data bits of a return value"
        )));
    }
    format!("{name}({data})")
        .parse::<RetVal>()
        .map_err(|e| pos.error(e.to_string()))
}

/// The number of syscall `name` on `arch`, or a message saying it has none (with the name
/// likely meant: `emu --nr` words it so too).
pub(crate) fn lookup_syscall(arch: Arch, name: &str) -> Result<u32, String> {
    let table = arch.syscalls();
    table.nr(name).ok_or_else(|| {
        let hint = did_you_mean(name, table.iter().map(|(_, n)| n));
        format!("unknown syscall `{name}` for {arch}{hint}")
    })
}

/// `; did you mean `x`?` for the closest candidate within a small edit distance.
fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    // Edit distance is quadratic: skip suggestions for absurdly long words.
    const LONGEST_WORTH_SUGGESTING: usize = 64;
    let len = word.chars().count();
    if len > LONGEST_WORTH_SUGGESTING {
        return String::new();
    }
    let limit = (len / 3).max(1);
    let shared_prefix = |c: &str| {
        word.chars()
            .zip(c.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    candidates
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .map(|c| {
            (
                edit_distance(word, c),
                std::cmp::Reverse(shared_prefix(c)),
                c,
            )
        })
        .filter(|&(d, _, _)| d <= limit)
        .min()
        .map_or(String::new(), |(_, _, c)| format!("; did you mean `{c}`?"))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + (ca != cb) as usize)
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

// ---------------------------------------------------------------------------------------
// Resolution

/// Turns statements into instructions: jump targets into offsets, unqualified syscall names
/// into numbers. Also returns where each instruction came from.
fn resolve(parsed: &Parsed) -> Result<(Vec<Insn>, Vec<Pos>), AsmError> {
    let n = parsed.statements.len();
    let mut insns = Vec::with_capacity(n);
    let mut origins = Vec::with_capacity(n);
    let mut names: HashMap<usize, (&str, Pos)> = HashMap::new();
    for (pc, s) in parsed.statements.iter().enumerate() {
        let field = |t: &Target, name: &str| -> Result<u8, AsmError> {
            let offset = jump_offset(parsed, pc, t)?;
            u8::try_from(offset).map_err(|_| too_far(t, s.pos, offset, name))
        };
        let (jt, jf) = if class(s.code) == BPF_JMP {
            (field(&s.jt, "jt")?, field(&s.jf, "jf")?)
        } else {
            (offset_value(&s.jt), offset_value(&s.jf))
        };
        let k = match &s.k {
            KField::Value(v) => *v,
            KField::Syscall(name, pos) => {
                names.insert(pc, (name, *pos));
                0
            }
            KField::Jump(t) => {
                let offset = jump_offset(parsed, pc, t)?;
                u32::try_from(offset).map_err(|_| {
                    s.pos
                        .error(format!("jump offset {offset} does not fit in 32 bits"))
                })?
            }
        };
        insns.push(Insn::new(s.code, jt, jf, k));
        origins.push(s.pos);
    }
    if !names.is_empty() {
        resolve_syscall_names(parsed, &mut insns, &names)?;
    }
    Ok((insns, origins))
}

/// Raw `jt`/`jf` of a non-jump (always an `Offset` below 256, from `{jt=…}`).
fn offset_value(t: &Target) -> u8 {
    match t {
        Target::Offset(v) => u8::try_from(*v).unwrap_or(u8::MAX),
        _ => 0,
    }
}

/// How many instructions a jump from `pc` to `t` skips.
fn jump_offset(parsed: &Parsed, pc: usize, t: &Target) -> Result<u64, AsmError> {
    let n = parsed.statements.len();
    let (index, pos, what) = match t {
        Target::Offset(v) => return Ok(*v as u64),
        Target::Label(name, pos) => {
            let Some(&(index, _)) = parsed.labels.get(name) else {
                let hint = did_you_mean(name, parsed.labels.keys().map(String::as_str));
                return Err(pos.error(format!("undefined label `{name}`{hint}")));
            };
            (index as u64, *pos, format!("label `{name}`"))
        }
        Target::Index(index, pos) => (*index, *pos, format!("instruction {index}")),
    };
    if index <= pc as u64 {
        return Err(pos.error(format!(
            "{what} is not after this instruction ({pc}); BPF jumps only go forward"
        )));
    }
    if index >= n as u64 {
        return Err(pos.error(format!(
            "{what} is past the last instruction ({}); jumps must land on an instruction",
            n.saturating_sub(1)
        )));
    }
    Ok(index - pc as u64 - 1)
}

/// A conditional jump whose target is beyond the reach of its 8-bit offset. The assembler
/// does not insert trampolines (that would change the program behind the author's back).
fn too_far(t: &Target, insn_pos: Pos, offset: u64, field: &str) -> AsmError {
    let (what, pos, via) = match t {
        Target::Label(name, pos) => (format!("label `{name}`"), *pos, format!("`ja {name}`")),
        Target::Index(index, pos) => (
            format!("instruction {index}"),
            *pos,
            format!("`ja {index}`"),
        ),
        Target::Offset(_) => ("the target".to_string(), insn_pos, "`ja`".to_string()),
    };
    pos.error(format!(
        "{what} is too far for a conditional jump: it skips {offset} instructions, but {field} is 8 bits (at most 255); jump to a {via} placed within 255 instructions instead"
    ))
}

/// Fills in unqualified syscall names with the number from the one architecture the filter
/// can be running on at that instruction (see `docs/asm.md`, "Syscall names").
fn resolve_syscall_names(
    parsed: &Parsed,
    insns: &mut [Insn],
    names: &HashMap<usize, (&str, Pos)>,
) -> Result<(), AsmError> {
    let mut first_error: Option<AsmError> = None;
    let mut resolved = HashSet::new();
    infer_knowledge_with(insns, parsed.entry, |pc, know, insn| {
        let Some(&(name, pos)) = names.get(&pc) else {
            return;
        };
        match resolve_unqualified(name, know.arches) {
            Ok(nr) => {
                insn.k = nr;
                resolved.insert(pc);
            }
            Err(message) => {
                first_error.get_or_insert(pos.error(message));
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    // Names left over sit in unreachable code, where no arch is known.
    let unresolved = names
        .iter()
        .filter(|(pc, _)| !resolved.contains(*pc))
        .map(|(_, v)| *v)
        .min_by_key(|(_, pos)| (pos.line, pos.column));
    if let Some((name, pos)) = unresolved {
        return Err(pos.error(format!(
            "cannot tell which architecture `{name}` belongs to: this instruction is unreachable; qualify it (e.g. `x86_64.{name}`)"
        )));
    }
    Ok(())
}

/// The rule for an unqualified name: the architectures possible at this instruction must
/// come down to one, where x86_64 wins over x32 (they share a token; x32 is chosen only where
/// a compare of `nr` has ruled x86_64 out).
fn resolve_unqualified(name: &str, arches: ArchSet) -> Result<u32, String> {
    let mut candidates: Vec<Arch> = arches.arches().collect();
    if candidates.contains(&Arch::X86_64) {
        candidates.retain(|&a| a != Arch::X32);
    }
    match candidates.as_slice() {
        [arch] => lookup_syscall(*arch, name),
        [] => Err(format!(
            "cannot tell which architecture `{name}` belongs to: the checks before this instruction rule out every architecture; qualify it (e.g. `x86_64.{name}`)"
        )),
        many => {
            let listed: Vec<&str> = many.iter().take(4).map(|a| a.name()).collect();
            let more = if many.len() > 4 { ", …" } else { "" };
            Err(format!(
                "cannot tell which architecture `{name}` belongs to: here the filter may run on {}{more}; qualify it (e.g. `{}.{name}`), check `ld [arch]` first, or declare `.arch`",
                listed.join(", "),
                many[0].name()
            ))
        }
    }
}

/// A validation failure as an error at the offending instruction's source line.
fn validation_error(e: &ValidationError, origins: &[Pos]) -> AsmError {
    let rule_text = ValidationError {
        index: None,
        insn: None,
        rule: e.rule.clone(),
    }
    .to_string();
    let index = match e.rule {
        Rule::TooLong { .. } => Some(BPF_MAXINSNS),
        _ => e.index,
    };
    let pos = index
        .and_then(|i| origins.get(i))
        .copied()
        .unwrap_or(Pos { line: 1, column: 1 });
    let whose = match index {
        Some(i) => format!("instruction {i}: "),
        None => String::new(),
    };
    pos.error(format!(
        "the kernel would reject this filter: {whose}{rule_text}"
    ))
}
