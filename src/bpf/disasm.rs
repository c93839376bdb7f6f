//! The disassembler: a program as text a human can review, which [`super::asm::assemble`]
//! turns back into the identical program (byte for byte). The syntax is documented in
//! `docs/asm.md`.
//!
//! To name things the disassembler needs to know, at each instruction, which architectures
//! the filter may be running on and which `seccomp_data` word the accumulator holds. That is
//! [`infer_knowledge`], a forward data-flow over the control-flow graph. Names it prints are
//! always *qualified* (`#x86_64.read`, `#AUDIT_ARCH_X86_64`), so the assembler never has to
//! repeat the inference to read them back.

use crate::arch::{Arch, Endian, X32_SYSCALL_BIT};
use crate::bpf::action::RetVal;
use crate::bpf::data::{Field, OFF_ARCH, OFF_NR, SECCOMP_DATA_SIZE};
use crate::bpf::insn::*;
use crate::bpf::validate::is_seccomp_opcode;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How to disassemble.
#[derive(Debug, Clone, Default)]
pub struct DisasmOptions {
    /// Append `; <index>` to every instruction line (the assembler ignores comments).
    pub index_comments: bool,
    /// The architecture to assume when the program never loads `arch` (e.g. the CLI's
    /// `--arch`): syscall numbers are then named from its table and `.arch` is emitted.
    /// Ignored for programs that load `arch`, where the inference knows better.
    pub arch: Option<Arch>,
}

/// A set of architectures a filter may be running on at some instruction, plus whether
/// `seccomp_data.arch` may be a token secopt does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArchSet(u32);

/// The bit of [`ArchSet`] that stands for "an arch token none of [`Arch::ALL`] has".
const UNKNOWN_TOKEN_BIT: u32 = 1 << Arch::ALL.len();

impl ArchSet {
    /// No architecture (an instruction only reached under contradictory arch checks).
    pub const EMPTY: ArchSet = ArchSet(0);

    /// Every architecture, and unknown tokens too: nothing is known.
    pub fn anything() -> ArchSet {
        ArchSet(UNKNOWN_TOKEN_BIT | (UNKNOWN_TOKEN_BIT - 1))
    }

    /// Exactly the given architectures.
    pub fn of(arches: &[Arch]) -> ArchSet {
        ArchSet(arches.iter().fold(0, |bits, &a| bits | Self::bit(a)))
    }

    fn bit(a: Arch) -> u32 {
        let index = Arch::ALL.iter().position(|&x| x == a).unwrap_or(0);
        1 << index
    }

    /// Whether `a` is possible.
    pub fn contains(self, a: Arch) -> bool {
        self.0 & Self::bit(a) != 0
    }

    /// Whether the arch word may hold a token of no known architecture.
    pub fn may_be_unknown_token(self) -> bool {
        self.0 & UNKNOWN_TOKEN_BIT != 0
    }

    /// The known architectures in the set, in [`Arch::ALL`] order.
    pub fn arches(self) -> impl Iterator<Item = Arch> {
        Arch::ALL.into_iter().filter(move |&a| self.contains(a))
    }

    fn union(self, other: ArchSet) -> ArchSet {
        ArchSet(self.0 | other.0)
    }

    fn without(self, a: Arch) -> ArchSet {
        ArchSet(self.0 & !Self::bit(a))
    }

    /// Splits the set by the outcome of a comparison of the arch word with `k`: the arches
    /// whose token makes `op` true, and those that make it false. An unknown token could go
    /// either way, except that `jeq` with a known token is false for every unknown one.
    fn split_on_arch_compare(self, op: u16, k: u32) -> (ArchSet, ArchSet) {
        let mut taken = ArchSet(self.0 & UNKNOWN_TOKEN_BIT);
        let mut not_taken = taken;
        if op == BPF_JEQ && !Arch::from_token(k).is_empty() {
            taken = ArchSet::EMPTY;
        }
        for a in self.arches() {
            let bit = ArchSet(Self::bit(a));
            if jump_taken(op, a.token(), k) {
                taken = taken.union(bit);
            } else {
                not_taken = not_taken.union(bit);
            }
        }
        (taken, not_taken)
    }

    /// The one architecture whose syscall table names `nr` here, if there is exactly one.
    /// x86_64 and x32 share a token; their numbers do not overlap (x32's carry bit 30), so
    /// the number itself picks between them.
    pub fn naming_arch(self, nr: u32) -> Option<Arch> {
        let mut candidates = self;
        if candidates.contains(Arch::X86_64) && candidates.contains(Arch::X32) {
            let drop = if nr >= X32_SYSCALL_BIT {
                Arch::X86_64
            } else {
                Arch::X32
            };
            candidates = candidates.without(drop);
        }
        let mut arches = candidates.arches();
        match (arches.next(), arches.next()) {
            (Some(a), None) => Some(a),
            _ => None,
        }
    }
}

/// What a register or scratch word is known to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    Unknown,
    /// The `seccomp_data` word at this byte offset (`0` = `nr`, `4` = `arch`, …).
    Word(u32),
    /// The constant loaded by the `ld #k`/`ldx #k` at this instruction index.
    Immediate(usize),
}

/// What is known when an instruction starts to run, on every path that reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Knowledge {
    /// The architectures the filter may be running on.
    pub arches: ArchSet,
    pub a: Value,
    pub x: Value,
    pub mem: [Value; BPF_MEMWORDS as usize],
}

impl Knowledge {
    fn entry(arches: ArchSet) -> Knowledge {
        Knowledge {
            arches,
            a: Value::Unknown,
            x: Value::Unknown,
            mem: [Value::Unknown; BPF_MEMWORDS as usize],
        }
    }

    fn join(&mut self, other: &Knowledge) {
        let meet = |v: &mut Value, w: Value| {
            if *v != w {
                *v = Value::Unknown;
            }
        };
        self.arches = self.arches.union(other.arches);
        meet(&mut self.a, other.a);
        meet(&mut self.x, other.x);
        for (m, &w) in self.mem.iter_mut().zip(&other.mem) {
            meet(m, w);
        }
    }

    /// The knowledge after a conditional jump `op k` on each of its two edges.
    fn split(&self, op: u16, k: u32) -> (Knowledge, Knowledge) {
        let (mut taken, mut not_taken) = (*self, *self);
        match self.a {
            Value::Word(OFF_ARCH) => {
                (taken.arches, not_taken.arches) = self.arches.split_on_arch_compare(op, k);
            }
            Value::Word(OFF_NR) => {
                // x86_64 and x32 share a token: the x32 side is nr >= 0x40000000.
                for (edge, outcome) in [(&mut taken, true), (&mut not_taken, false)] {
                    match x32_side(op, k, outcome) {
                        Some(true) => edge.arches = edge.arches.without(Arch::X86_64),
                        Some(false) => edge.arches = edge.arches.without(Arch::X32),
                        None => {}
                    }
                }
            }
            _ => {}
        }
        (taken, not_taken)
    }
}

/// Whether a comparison of `nr` with outcome `outcome` proves `nr >= 0x40000000` (x32's
/// numbers on the x86_64 token), proves the opposite, or says nothing either way.
fn x32_side(op: u16, k: u32, outcome: bool) -> Option<bool> {
    const X32: u32 = X32_SYSCALL_BIT;
    match (op, outcome) {
        (BPF_JEQ, true) => Some(k >= X32),
        (BPF_JGE, true) if k >= X32 => Some(true),
        (BPF_JGE, false) if k <= X32 => Some(false),
        (BPF_JGT, true) if k >= X32 - 1 => Some(true),
        (BPF_JGT, false) if k < X32 => Some(false),
        // Some bit at or above bit 30 is set.
        (BPF_JSET, true) if k != 0 && k.trailing_zeros() >= 30 => Some(true),
        // Bits 30 and 31 both clear.
        (BPF_JSET, false) if k & 0xc000_0000 == 0xc000_0000 => Some(false),
        _ => None,
    }
}

/// Infers, for every instruction, which architectures the filter may be running on and
/// what A, X and the scratch words hold (`None` for unreachable instructions).
///
/// A single forward pass in program order is a complete data-flow analysis here, because
/// every BPF jump goes forward: when the pass reaches an instruction, all its predecessors
/// are done. Facts from different predecessors are joined (arch sets united, register
/// contents kept only where they agree).
///
/// Facts come from conditional jumps with a constant: comparing the arch word narrows the
/// arch set on each edge to the arches whose token gives that outcome; comparing `nr`
/// against `0x40000000` separates x32 from x86_64 (which share `AUDIT_ARCH_X86_64`).
///
/// Worked example (libseccomp's usual prologue):
/// ```text
/// 0: ld [arch]                                  entry: anything;  A = arch
/// 1: jeq #AUDIT_ARCH_X86_64, next, L5           true edge: {x86_64, x32}; false: the rest
/// 2: ld [nr]                                    {x86_64, x32};    A = nr
/// 3: jge #0x40000000, kill, next                true edge: {x32}; false edge: {x86_64}
/// 4: jeq #x86_64.read, allow, kill              {x86_64}: 0 is named `x86_64.read`
/// 5: jeq #AUDIT_ARCH_I386, next, kill           every arch but x86_64/x32, or unknown
/// 6: ld [nr]                                    {x86}: 102 here is `x86.socketcall`
/// ```
pub fn infer_knowledge(insns: &[Insn], entry: ArchSet) -> Vec<Option<Knowledge>> {
    let mut copy = insns.to_vec();
    infer_knowledge_with(&mut copy, entry, |_, _, _| {})
}

/// [`infer_knowledge`], calling `before(pc, knowledge, insn)` on each reachable instruction
/// before its effect is computed, so the assembler can fill in a constant that depends on
/// the knowledge at that point (an unqualified syscall name).
pub(crate) fn infer_knowledge_with(
    insns: &mut [Insn],
    entry: ArchSet,
    mut before: impl FnMut(usize, &Knowledge, &mut Insn),
) -> Vec<Option<Knowledge>> {
    let n = insns.len();
    let mut state: Vec<Option<Knowledge>> = vec![None; n];
    if n == 0 {
        return state;
    }
    state[0] = Some(Knowledge::entry(entry));
    let flow = |state: &mut Vec<Option<Knowledge>>, target: u64, k: Knowledge| {
        if let Some(slot) = usize::try_from(target).ok().and_then(|t| state.get_mut(t)) {
            match slot {
                Some(existing) => existing.join(&k),
                None => *slot = Some(k),
            }
        }
    };
    for pc in 0..n {
        let Some(know) = state[pc] else { continue };
        before(pc, &know, &mut insns[pc]);
        let insn = insns[pc];
        let next = pc as u64 + 1;
        let code = insn.code;
        if insn.is_ret() {
            continue;
        }
        if insn.is_ja() {
            flow(&mut state, next + insn.k as u64, know);
            continue;
        }
        if insn.is_conditional_jump() {
            // (An opcode the kernel refuses narrows nothing: the filter would not load.)
            let (taken, not_taken) = if src(code) == BPF_K && is_seccomp_opcode(code) {
                know.split(op(code), insn.k)
            } else {
                (know, know)
            };
            flow(&mut state, next + insn.jt as u64, taken);
            flow(&mut state, next + insn.jf as u64, not_taken);
            continue;
        }
        let mut out = know;
        let slot = (insn.k < BPF_MEMWORDS).then_some(insn.k as usize);
        match code {
            c if c == BPF_LD | BPF_W | BPF_ABS => {
                out.a = if insn.k.is_multiple_of(4) && insn.k < SECCOMP_DATA_SIZE {
                    Value::Word(insn.k)
                } else {
                    Value::Unknown
                }
            }
            c if c == BPF_LD | BPF_IMM => out.a = Value::Immediate(pc),
            c if c == BPF_LDX | BPF_IMM => out.x = Value::Immediate(pc),
            c if c == BPF_LD | BPF_MEM => out.a = slot.map_or(Value::Unknown, |s| know.mem[s]),
            c if c == BPF_LDX | BPF_MEM => out.x = slot.map_or(Value::Unknown, |s| know.mem[s]),
            c if c == BPF_ST => {
                if let Some(s) = slot {
                    out.mem[s] = know.a;
                }
            }
            c if c == BPF_STX => {
                if let Some(s) = slot {
                    out.mem[s] = know.x;
                }
            }
            c if c == BPF_MISC | BPF_TAX => out.x = know.a,
            c if c == BPF_MISC | BPF_TXA => out.a = know.x,
            c if class(c) == BPF_LDX => out.x = Value::Unknown,
            _ => out.a = Value::Unknown,
        }
        flow(&mut state, next, out);
    }
    state
}

/// The spelling of an arch token in constants: the kernel header's name.
pub fn audit_arch_name(token: u32) -> Option<String> {
    let arch = *Arch::from_token(token).first()?;
    let suffix = match arch {
        Arch::X86 => "I386".to_string(),
        a => a.name().to_ascii_uppercase(),
    };
    Some(format!("AUDIT_ARCH_{suffix}"))
}

/// A number as the disassembler prints it: small ones in decimal, others in hex.
pub(crate) fn format_number(v: u32) -> String {
    if v < 0x1000 {
        v.to_string()
    } else {
        format!("{v:#x}")
    }
}

/// A number compared against `nr` (a signed int): decimal, negative when the sign bit is set.
fn format_nr_number(v: u32) -> String {
    if v >= X32_SYSCALL_BIT && (v as i32) > 0 {
        format!("{v:#x}")
    } else {
        (v as i32).to_string()
    }
}

/// ALU operations and their mnemonics (`NEG` is separate: it has no operand).
pub(crate) const ALU_OPS: [(&str, u16); 9] = [
    ("add", BPF_ADD),
    ("sub", BPF_SUB),
    ("mul", BPF_MUL),
    ("div", BPF_DIV),
    ("and", BPF_AND),
    ("or", BPF_OR),
    ("xor", BPF_XOR),
    ("lsh", BPF_LSH),
    ("rsh", BPF_RSH),
];

/// Conditional jumps and their mnemonics.
pub(crate) const JUMP_OPS: [(&str, u16); 4] = [
    ("jeq", BPF_JEQ),
    ("jgt", BPF_JGT),
    ("jge", BPF_JGE),
    ("jset", BPF_JSET),
];

/// Whether the kernel reads `k` of an instruction with this (seccomp-valid) opcode. Where it
/// does not, a nonzero `k` is spelled `{k=…}` so the round trip stays exact.
pub(crate) fn reads_k(code: u16) -> bool {
    let ignores = code == BPF_LD | BPF_W | BPF_LEN
        || code == BPF_LDX | BPF_W | BPF_LEN
        || code == BPF_ALU | BPF_NEG
        || code == BPF_MISC | BPF_TAX
        || code == BPF_MISC | BPF_TXA
        || code == BPF_RET | BPF_A
        || (matches!(class(code), BPF_ALU | BPF_JMP) && src(code) == BPF_X);
    !ignores
}

/// Disassembles `prog`. Never fails: instructions the kernel would not accept are printed
/// as `.insn code, jt, jf, k`, and jumps leaving the program as `+offset`, so even an
/// invalid program prints (and reassembles to the same bytes, though the assembler then
/// reports why the kernel would reject it).
pub fn disassemble(prog: &Program, opts: &DisasmOptions) -> String {
    let listing = Listing::new(prog, opts);
    let mut out = String::new();
    if let Some(directive) = &listing.directive {
        out.push_str(directive);
        out.push('\n');
    }
    for (pc, text) in listing.texts.iter().enumerate() {
        if let Some(label) = listing.labels.get(&pc) {
            out.push_str(label);
            out.push_str(":\n");
        }
        let text = format!("    {text}");
        if opts.index_comments {
            const COMMENT_COLUMN: usize = 48;
            let pad = COMMENT_COLUMN.saturating_sub(text.chars().count()).max(1);
            out.push_str(&format!("{text}{:pad$}; {pc}\n", ""));
        } else {
            out.push_str(&text);
            out.push('\n');
        }
    }
    out
}

/// The text of each instruction, by index, as [`disassemble`] prints it (without labels,
/// indentation or comments) — for traces such as `secopt emu`'s path.
pub fn instruction_texts(prog: &Program, opts: &DisasmOptions) -> Vec<String> {
    Listing::new(prog, opts).texts
}

/// A disassembly before layout: the leading directive, the labels, one text per instruction.
struct Listing {
    directive: Option<String>,
    labels: BTreeMap<usize, String>,
    texts: Vec<String>,
}

impl Listing {
    fn new(prog: &Program, opts: &DisasmOptions) -> Listing {
        let insns = &prog.insns;
        let loads_arch = insns.iter().any(|i| *i == Insn::ld_abs(OFF_ARCH));
        let hint = opts.arch.filter(|_| !loads_arch);
        let entry = match hint {
            Some(a) => ArchSet::of(Arch::from_token(a.token())),
            None => ArchSet::anything(),
        };
        let knowledge = infer_knowledge(insns, entry);
        let endian = match hint {
            Some(a) => a.endian(),
            None => program_endian(insns, &knowledge),
        };

        // `ld #k`/`ldx #k` whose constant reaches a `ret a` print it as an action.
        let mut returned_immediates = HashSet::new();
        for (insn, know) in insns.iter().zip(&knowledge) {
            if let (
                true,
                Some(Knowledge {
                    a: Value::Immediate(pc),
                    ..
                }),
            ) = (insn.code == BPF_RET | BPF_A, know)
            {
                returned_immediates.insert(*pc);
            }
        }

        let labels = label_names(prog);
        let printer = Printer {
            insns,
            labels: &labels,
            endian,
            returned_immediates: &returned_immediates,
        };
        let texts = knowledge
            .iter()
            .enumerate()
            .map(|(pc, know)| printer.instruction(pc, know.as_ref()))
            .collect();
        let directive = match hint {
            Some(a) => Some(format!(".arch {}", a.name())),
            None if endian == Endian::Big => Some(".endian big".to_string()),
            None => None,
        };
        Listing {
            directive,
            labels,
            texts,
        }
    }
}

/// Big-endian when every arch token the program tests for equality is a big-endian one.
fn program_endian(insns: &[Insn], knowledge: &[Option<Knowledge>]) -> Endian {
    let mut tokens = insns
        .iter()
        .zip(knowledge)
        .filter(|(insn, know)| {
            insn.code == BPF_JMP | BPF_JEQ | BPF_K
                && matches!(know, Some(k) if k.a == Value::Word(OFF_ARCH))
        })
        .map(|(insn, _)| insn.k)
        .peekable();
    if tokens.peek().is_some() && tokens.all(|t| Endian::of_arch_token(t) == Endian::Big) {
        Endian::Big
    } else {
        Endian::Little
    }
}

/// Labels for every jump target further than the next instruction. A `ret k` target is
/// named after its value (`allow`, `errno_1`), suffixed with its index (`allow.17`) when
/// several targeted returns share the value; anything else is `L<index>`.
fn label_names(prog: &Program) -> BTreeMap<usize, String> {
    let n = prog.len();
    let mut targets = HashSet::new();
    for pc in 0..n {
        if let Some((t, f)) = prog.jump_targets(pc) {
            for target in [t, f] {
                if target > pc + 1 && target < n {
                    targets.insert(target);
                }
            }
        }
    }
    let base = |t: usize| -> String {
        let insn = prog.insns[t];
        if insn.code != BPF_RET | BPF_K {
            return format!("L{t}");
        }
        let text = RetVal(insn.k).to_string().to_ascii_lowercase();
        let mut name: String = text
            .chars()
            .filter(|&c| c != ')')
            .map(|c| if c == '(' { '_' } else { c })
            .collect();
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            name = format!("ret_{name}");
        }
        name
    };
    let mut uses: HashMap<String, usize> = HashMap::new();
    for &t in &targets {
        *uses.entry(base(t)).or_default() += 1;
    }
    targets
        .into_iter()
        .map(|t| {
            let b = base(t);
            let name = if uses[&b] > 1 && !b.starts_with('L') {
                format!("{b}.{t}")
            } else {
                b
            };
            (t, name)
        })
        .collect()
}

struct Printer<'a> {
    insns: &'a [Insn],
    labels: &'a BTreeMap<usize, String>,
    endian: Endian,
    returned_immediates: &'a HashSet<usize>,
}

impl Printer<'_> {
    fn instruction(&self, pc: usize, know: Option<&Knowledge>) -> String {
        let insn = self.insns[pc];
        let code = insn.code;
        if !is_seccomp_opcode(code) {
            return format!(
                ".insn {:#04x}, {}, {}, {}",
                code,
                insn.jt,
                insn.jf,
                format_number(insn.k)
            );
        }
        let k = insn.k;
        let mut text = match class(code) {
            BPF_LD | BPF_LDX => {
                let mnemonic = if class(code) == BPF_LD { "ld" } else { "ldx" };
                let operand = match mode(code) {
                    BPF_ABS => match Field::at_offset(k, self.endian) {
                        Some(field) => format!("[{}]", field.name()),
                        None => format!("[{}]", format_number(k)),
                    },
                    BPF_IMM if self.returned_immediates.contains(&pc) => {
                        format!("#{}", RetVal(k))
                    }
                    BPF_IMM => format!("#{}", format_number(k)),
                    BPF_MEM => format!("M[{k}]"),
                    _ => "len".to_string(),
                };
                format!("{mnemonic} {operand}")
            }
            BPF_ST => format!("st M[{k}]"),
            BPF_STX => format!("stx M[{k}]"),
            BPF_ALU if code == BPF_ALU | BPF_NEG => "neg".to_string(),
            BPF_ALU => {
                let name = ALU_OPS
                    .iter()
                    .find(|(_, o)| *o == op(code))
                    .map_or("?", |(name, _)| name);
                if src(code) == BPF_X {
                    format!("{name} x")
                } else {
                    format!("{name} #{}", format_number(k))
                }
            }
            BPF_MISC if code == BPF_MISC | BPF_TAX => "tax".to_string(),
            BPF_MISC => "txa".to_string(),
            BPF_RET if code == BPF_RET | BPF_A => "ret a".to_string(),
            BPF_RET => format!("ret {}", RetVal(k)),
            _ if insn.is_ja() => format!("ja {}", self.target(pc, k as u64)),
            _ => {
                let name = JUMP_OPS
                    .iter()
                    .find(|(_, o)| *o == op(code))
                    .map_or("?", |(name, _)| name);
                let operand = match (src(code), op(code)) {
                    (BPF_X, _) => "x".to_string(),
                    // A bit mask is not a syscall or an arch, whatever A holds.
                    (_, BPF_JSET) => format!("#{}", format_number(k)),
                    // `nr >= 0x40000000` is the x86_64/x32 split, not a compare with x32's `read`.
                    (_, BPF_JGE | BPF_JGT) if k == X32_SYSCALL_BIT => {
                        format!("#{}", format_number(k))
                    }
                    _ => format!("#{}", self.compared_constant(k, know)),
                };
                format!(
                    "{name} {operand}, {}, {}",
                    self.target(pc, insn.jt as u64),
                    self.target(pc, insn.jf as u64)
                )
            }
        };
        let mut extras = Vec::new();
        if !insn.is_conditional_jump() {
            if insn.jt != 0 {
                extras.push(format!("jt={}", insn.jt));
            }
            if insn.jf != 0 {
                extras.push(format!("jf={}", insn.jf));
            }
        }
        if !reads_k(code) && k != 0 {
            extras.push(format!("k={}", format_number(k)));
        }
        if !extras.is_empty() {
            text.push_str(&format!(" {{{}}}", extras.join(", ")));
        }
        text
    }

    /// A jump target: `next` for offset 0, the label of an instruction inside the program,
    /// or `+offset` for a target outside it (only in invalid programs).
    fn target(&self, pc: usize, offset: u64) -> String {
        if offset == 0 {
            return "next".to_string();
        }
        let target = pc as u64 + 1 + offset;
        usize::try_from(target)
            .ok()
            .and_then(|t| self.labels.get(&t))
            .cloned()
            .unwrap_or_else(|| format!("+{offset}"))
    }

    /// The constant of `jeq`/`jgt`/`jge`, named after what A holds there.
    fn compared_constant(&self, k: u32, know: Option<&Knowledge>) -> String {
        match know.map(|kn| (kn.a, kn.arches)) {
            Some((Value::Word(OFF_ARCH), _)) => {
                audit_arch_name(k).unwrap_or_else(|| format_number(k))
            }
            Some((Value::Word(OFF_NR), arches)) => arches
                .naming_arch(k)
                .and_then(|a| a.syscalls().name(k).map(|name| format!("{a}.{name}")))
                .unwrap_or_else(|| format_nr_number(k)),
            _ => format_number(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_check_narrows_the_set_on_each_edge() {
        let x86_64 = Arch::X86_64.token();
        let insns = [
            Insn::ld_abs(OFF_ARCH),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, x86_64, 0, 3),
            Insn::ld_abs(OFF_NR),
            Insn::jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 1, 0),
            Insn::ret(0),
            Insn::ret(1),
        ];
        let k = infer_knowledge(&insns, ArchSet::anything());
        let at = |pc: usize| k[pc].unwrap().arches;
        assert_eq!(at(2), ArchSet::of(&[Arch::X86_64, Arch::X32]));
        assert_eq!(at(4), ArchSet::of(&[Arch::X86_64]));
        // 5 is reached from the x32 side of 3 and from everything-but-x86_64 at 1.
        assert!(at(5).contains(Arch::X32) && at(5).contains(Arch::Aarch64));
        assert!(!at(5).contains(Arch::X86_64));
        assert!(at(5).may_be_unknown_token());
    }

    #[test]
    fn values_flow_through_scratch_and_x() {
        let insns = [
            Insn::ld_abs(OFF_NR),
            Insn::stmt(BPF_ST, 3),
            Insn::stmt(BPF_LD | BPF_IMM, 7),
            Insn::stmt(BPF_LDX | BPF_MEM, 3),
            Insn::stmt(BPF_MISC | BPF_TXA, 0),
            Insn::ret(0),
        ];
        let k = infer_knowledge(&insns, ArchSet::anything());
        assert_eq!(k[3].unwrap().a, Value::Immediate(2));
        assert_eq!(k[5].unwrap().a, Value::Word(OFF_NR));
    }
}
