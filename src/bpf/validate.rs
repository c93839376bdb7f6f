//! The validator: accepts exactly the programs the kernel accepts as a seccomp filter.
//!
//! The kernel checks a filter in this order, and so do we (the first failure is reported):
//! 1. `bpf_check_basics_ok`: 1 to 4096 instructions.
//! 2. `bpf_check_classic`, one pass over the instructions: the opcode is a classic-BPF opcode
//!    (`chk_code_allowed`); `DIV K` (and `MOD K`) by 0; `LSH`/`RSH K` with `k >= 32`; scratch
//!    index `k >= 16` for `LD/LDX MEM`, `ST`, `STX`; `JA` landing outside the program; a
//!    conditional jump whose `jt` or `jf` target is outside; `LD ABS` with an unknown
//!    ancillary offset (`k >= SKF_AD_OFF`).
//! 3. The last instruction is `RET K` or `RET A`.
//! 4. `check_load_and_stores`: no scratch word is read before it is written on some path.
//!    The kernel does this in one linear pass, not over a control-flow graph: it carries the
//!    set of written words forward in program order, intersects it with what every jump into
//!    an instruction brought, and resets it to "all" after each jump. A `RET` does *not* reset
//!    it, so code right after a `RET` inherits the `RET`'s set. We replicate that pass exactly
//!    (it can reject programs whose bad load is unreachable, and the kernel does).
//! 5. `seccomp_check_filter`: only the seccomp subset of opcodes (no byte/half/indirect
//!    loads, no `MOD`, no `MSH`, no ancillary loads), and `LD W ABS` offsets 4-aligned and
//!    inside `struct seccomp_data` (`k < 64`).

use super::insn::*;
use std::fmt;

/// Which kernel rule a program breaks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub enum Rule {
    /// No instructions.
    Empty,
    /// More than [`BPF_MAXINSNS`] instructions.
    TooLong { len: usize },
    /// Not a classic-BPF opcode at all.
    UnknownOpcode,
    /// A classic-BPF opcode the seccomp checker does not allow.
    NotAllowedInSeccomp,
    /// `DIV K` with `k == 0`.
    DivisionByZero,
    /// `LSH K`/`RSH K` with `k >= 32`.
    ShiftTooLarge,
    /// Scratch memory index `k >= 16`.
    ScratchIndexOutOfRange,
    /// A jump target beyond the last instruction.
    JumpOutOfRange { target: u64 },
    /// `LD W ABS` of an offset that is not 4-aligned or not below 64.
    BadLoadOffset,
    /// Last instruction is not `RET K`/`RET A`.
    LastNotRet,
    /// `LD`/`LDX MEM` of a scratch word not written on every path to it.
    LoadBeforeStore { slot: u32 },
}

/// Why the kernel would reject a program, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ValidationError {
    /// Offending instruction index, when the rule concerns one instruction.
    pub index: Option<usize>,
    pub insn: Option<Insn>,
    #[serde(flatten)]
    pub rule: Rule,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (Some(i), Some(insn)) = (self.index, self.insn) {
            write!(
                f,
                "instruction {i} (code=0x{:02x} jt={} jf={} k=0x{:x}): ",
                insn.code, insn.jt, insn.jf, insn.k
            )?;
        }
        match &self.rule {
            Rule::Empty => write!(f, "program is empty (a filter needs 1 to {BPF_MAXINSNS} instructions)"),
            Rule::TooLong { len } => write!(
                f,
                "program has {len} instructions, more than the kernel's limit of {BPF_MAXINSNS}"
            ),
            Rule::UnknownOpcode => write!(f, "opcode is not a classic-BPF instruction"),
            Rule::NotAllowedInSeccomp => write!(
                f,
                "opcode is classic BPF but not allowed in seccomp filters (only LD W ABS/IMM/MEM/LEN, LDX IMM/MEM/LEN, ST, STX, ALU except MOD, JA/JEQ/JGT/JGE/JSET, TAX, TXA, RET K, RET A)"
            ),
            Rule::DivisionByZero => write!(f, "division by the constant 0"),
            Rule::ShiftTooLarge => write!(f, "shift by a constant of 32 or more"),
            Rule::ScratchIndexOutOfRange => {
                write!(f, "scratch memory index is not below {BPF_MEMWORDS}")
            }
            Rule::JumpOutOfRange { target } => write!(
                f,
                "jump target {target} is not inside the program (jumps must land on an instruction after this one)"
            ),
            Rule::BadLoadOffset => write!(
                f,
                "load offset must be a multiple of 4 below 64 (struct seccomp_data is 64 bytes of 32-bit words)"
            ),
            Rule::LastNotRet => write!(f, "the last instruction must be RET K or RET A"),
            Rule::LoadBeforeStore { slot } => write!(
                f,
                "M[{slot}] is read before it is written on some path (the kernel's linear check)"
            ),
        }
    }
}

impl std::error::Error for ValidationError {}

/// `SKF_AD_OFF`: the start of the classic-BPF ancillary-data offsets.
const SKF_AD_OFF: u32 = 0xffff_f000;
/// The last ancillary offset classic BPF knows (`SKF_AD_VLAN_TPID`, `SKF_AD_OFF + 60`); the
/// ancillary loads sit at every multiple of 4 from `SKF_AD_OFF` to here. Seccomp rejects them
/// all later anyway; this only decides which rule gets named.
const SKF_AD_LAST: u32 = 60;

/// Whether `code` is in the kernel's `chk_code_allowed` table of classic-BPF opcodes.
pub fn is_classic_opcode(code: u16) -> bool {
    const ALU_OPS: [u16; 10] = [
        BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_MOD, BPF_AND, BPF_OR, BPF_XOR, BPF_LSH, BPF_RSH,
    ];
    const JMP_OPS: [u16; 4] = [BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET];
    match class(code) {
        BPF_ALU => {
            code == BPF_ALU | BPF_NEG
                || ALU_OPS
                    .iter()
                    .any(|&o| code == BPF_ALU | o | BPF_K || code == BPF_ALU | o | BPF_X)
        }
        BPF_LD => [
            BPF_LD | BPF_W | BPF_ABS,
            BPF_LD | BPF_H | BPF_ABS,
            BPF_LD | BPF_B | BPF_ABS,
            BPF_LD | BPF_W | BPF_LEN,
            BPF_LD | BPF_W | BPF_IND,
            BPF_LD | BPF_H | BPF_IND,
            BPF_LD | BPF_B | BPF_IND,
            BPF_LD | BPF_IMM,
            BPF_LD | BPF_MEM,
        ]
        .contains(&code),
        BPF_LDX => [
            BPF_LDX | BPF_W | BPF_LEN,
            BPF_LDX | BPF_B | BPF_MSH,
            BPF_LDX | BPF_IMM,
            BPF_LDX | BPF_MEM,
        ]
        .contains(&code),
        BPF_ST => code == BPF_ST,
        BPF_STX => code == BPF_STX,
        BPF_MISC => code == BPF_MISC | BPF_TAX || code == BPF_MISC | BPF_TXA,
        BPF_RET => code == BPF_RET | BPF_K || code == BPF_RET | BPF_A,
        BPF_JMP => {
            code == BPF_JMP | BPF_JA
                || JMP_OPS
                    .iter()
                    .any(|&o| code == BPF_JMP | o | BPF_K || code == BPF_JMP | o | BPF_X)
        }
        _ => unreachable!("class is 3 bits"),
    }
}

/// Whether `code` is one of the opcodes `seccomp_check_filter` lets through.
pub fn is_seccomp_opcode(code: u16) -> bool {
    is_classic_opcode(code)
        && match class(code) {
            BPF_LD => matches!(
                code,
                c if c == BPF_LD | BPF_W | BPF_ABS
                    || c == BPF_LD | BPF_W | BPF_LEN
                    || c == BPF_LD | BPF_IMM
                    || c == BPF_LD | BPF_MEM
            ),
            BPF_LDX => matches!(
                code,
                c if c == BPF_LDX | BPF_W | BPF_LEN || c == BPF_LDX | BPF_IMM || c == BPF_LDX | BPF_MEM
            ),
            BPF_ALU => op(code) != BPF_MOD,
            _ => true,
        }
}

/// The rule `bpf_check_classic`'s per-instruction checks find broken at `pc`, if any.
fn classic_rule(pc: usize, insn: &Insn, flen: usize) -> Option<Rule> {
    let (code, k) = (insn.code, insn.k);
    if !is_classic_opcode(code) {
        return Some(Rule::UnknownOpcode);
    }
    let is = |codes: &[u16]| codes.contains(&code);
    if is(&[BPF_ALU | BPF_DIV | BPF_K, BPF_ALU | BPF_MOD | BPF_K]) {
        (k == 0).then_some(Rule::DivisionByZero)
    } else if is(&[BPF_ALU | BPF_LSH | BPF_K, BPF_ALU | BPF_RSH | BPF_K]) {
        (k >= 32).then_some(Rule::ShiftTooLarge)
    } else if is(&[BPF_LD | BPF_MEM, BPF_LDX | BPF_MEM, BPF_ST, BPF_STX]) {
        (k >= BPF_MEMWORDS).then_some(Rule::ScratchIndexOutOfRange)
    } else if insn.is_ja() {
        // The kernel compares as unsigned: `k >= flen - pc - 1`.
        (k as u64 >= (flen - pc - 1) as u64).then_some(Rule::JumpOutOfRange {
            target: pc as u64 + 1 + k as u64,
        })
    } else if insn.is_conditional_jump() {
        [insn.jt, insn.jf]
            .into_iter()
            .map(|off| pc + off as usize + 1)
            .find(|&target| target >= flen)
            .map(|target| Rule::JumpOutOfRange {
                target: target as u64,
            })
    } else if is(&[
        BPF_LD | BPF_W | BPF_ABS,
        BPF_LD | BPF_H | BPF_ABS,
        BPF_LD | BPF_B | BPF_ABS,
    ]) {
        let unknown_ancillary = k >= SKF_AD_OFF
            && (!(k - SKF_AD_OFF).is_multiple_of(4) || k - SKF_AD_OFF > SKF_AD_LAST);
        unknown_ancillary.then_some(Rule::BadLoadOffset)
    } else {
        None
    }
}

/// Checks `prog` exactly as the kernel does when it is loaded with `seccomp(2)` or
/// `prctl(PR_SET_SECCOMP)`. `Ok` means the kernel accepts it.
pub fn validate(prog: &Program) -> Result<(), ValidationError> {
    check(prog, true)
}

/// Every check of [`validate`] except the 4096-instruction limit: the program is well formed
/// (it can be run, analysed and compared exactly like a loadable one) but may be too long to
/// load. The optimizer and the verifier take such programs as *references*: a profile's
/// plain lowering can exceed the limit while its optimized form fits, and the proof that the
/// two agree needs the long one. Anything loaded or written out is checked with [`validate`].
pub fn validate_structure(prog: &Program) -> Result<(), ValidationError> {
    check(prog, false)
}

fn check(prog: &Program, limit_length: bool) -> Result<(), ValidationError> {
    let insns = &prog.insns;
    let flen = insns.len();
    let whole = |rule| ValidationError {
        index: None,
        insn: None,
        rule,
    };
    if flen == 0 {
        return Err(whole(Rule::Empty));
    }
    if limit_length && flen > BPF_MAXINSNS {
        return Err(whole(Rule::TooLong { len: flen }));
    }
    let at = |pc: usize, rule| ValidationError {
        index: Some(pc),
        insn: Some(insns[pc]),
        rule,
    };

    // 2. bpf_check_classic's per-instruction pass.
    for (pc, insn) in insns.iter().enumerate() {
        if let Some(rule) = classic_rule(pc, insn, flen) {
            return Err(at(pc, rule));
        }
    }

    // 3. The last instruction must return.
    let last = insns[flen - 1].code;
    if last != BPF_RET | BPF_K && last != BPF_RET | BPF_A {
        return Err(at(flen - 1, Rule::LastNotRet));
    }

    // 4. check_load_and_stores, the kernel's linear pass.
    let mut masks = vec![u16::MAX; flen];
    let mut memvalid: u16 = 0;
    for (pc, insn) in insns.iter().enumerate() {
        memvalid &= masks[pc];
        let code = insn.code;
        if code == BPF_ST || code == BPF_STX {
            memvalid |= 1 << insn.k;
        } else if code == BPF_LD | BPF_MEM || code == BPF_LDX | BPF_MEM {
            if memvalid & (1 << insn.k) == 0 {
                return Err(at(pc, Rule::LoadBeforeStore { slot: insn.k }));
            }
        } else if let Some((t, f)) = prog.jump_targets(pc) {
            masks[t] &= memvalid;
            masks[f] &= memvalid;
            memvalid = u16::MAX;
        }
    }

    // 5. seccomp_check_filter.
    for (pc, insn) in insns.iter().enumerate() {
        if !is_seccomp_opcode(insn.code) {
            return Err(at(pc, Rule::NotAllowedInSeccomp));
        }
        if insn.code == BPF_LD | BPF_W | BPF_ABS
            && (insn.k >= super::data::SECCOMP_DATA_SIZE || insn.k % 4 != 0)
        {
            return Err(at(pc, Rule::BadLoadOffset));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::action::SECCOMP_RET_ALLOW;

    fn p(insns: &[Insn]) -> Program {
        Program::new(insns.to_vec())
    }
    fn rule(prog: &Program) -> Option<(Option<usize>, Rule)> {
        validate(prog).err().map(|e| (e.index, e.rule))
    }

    #[test]
    fn accepts_minimal_filter() {
        assert_eq!(rule(&p(&[Insn::ret(SECCOMP_RET_ALLOW)])), None);
    }

    #[test]
    fn size_limits() {
        assert_eq!(rule(&p(&[])), Some((None, Rule::Empty)));
        let big = Program::new(vec![Insn::ret(0); BPF_MAXINSNS + 1]);
        assert_eq!(rule(&big), Some((None, Rule::TooLong { len: 4097 })));
        assert_eq!(rule(&Program::new(vec![Insn::ret(0); BPF_MAXINSNS])), None);
    }

    #[test]
    fn loads() {
        assert_eq!(rule(&p(&[Insn::ld_abs(60), Insn::ret(0)])), None);
        assert_eq!(
            rule(&p(&[Insn::ld_abs(64), Insn::ret(0)])),
            Some((Some(0), Rule::BadLoadOffset))
        );
        assert_eq!(
            rule(&p(&[Insn::ld_abs(2), Insn::ret(0)])),
            Some((Some(0), Rule::BadLoadOffset))
        );
        // Half-word load: classic BPF, not seccomp.
        assert_eq!(
            rule(&p(&[Insn::stmt(BPF_LD | BPF_H | BPF_ABS, 0), Insn::ret(0)])),
            Some((Some(0), Rule::NotAllowedInSeccomp))
        );
        assert_eq!(
            rule(&p(&[Insn::stmt(BPF_LD | BPF_H | BPF_IMM, 0), Insn::ret(0)])),
            Some((Some(0), Rule::UnknownOpcode))
        );
    }

    #[test]
    fn jumps() {
        // JA 0 to the next instruction is fine; JA past the end is not.
        assert_eq!(rule(&p(&[Insn::ja(0), Insn::ret(0)])), None);
        assert_eq!(
            rule(&p(&[Insn::ja(1), Insn::ret(0)])),
            Some((Some(0), Rule::JumpOutOfRange { target: 2 }))
        );
        let jeq = |jt, jf| Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, jt, jf);
        assert_eq!(rule(&p(&[jeq(0, 1), Insn::ret(0), Insn::ret(1)])), None);
        assert_eq!(
            rule(&p(&[jeq(0, 2), Insn::ret(0), Insn::ret(1)])),
            Some((Some(0), Rule::JumpOutOfRange { target: 3 }))
        );
        assert_eq!(
            rule(&p(&[jeq(0, 0)])),
            Some((Some(0), Rule::JumpOutOfRange { target: 1 }))
        );
    }

    #[test]
    fn alu_constants() {
        let div0 = Insn::stmt(BPF_ALU | BPF_DIV | BPF_K, 0);
        assert_eq!(
            rule(&p(&[div0, Insn::ret(0)])),
            Some((Some(0), Rule::DivisionByZero))
        );
        let divx = Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0);
        assert_eq!(rule(&p(&[divx, Insn::ret(0)])), None);
        let lsh = Insn::stmt(BPF_ALU | BPF_LSH | BPF_K, 32);
        assert_eq!(
            rule(&p(&[lsh, Insn::ret(0)])),
            Some((Some(0), Rule::ShiftTooLarge))
        );
        let modk = Insn::stmt(BPF_ALU | BPF_MOD | BPF_K, 3);
        assert_eq!(
            rule(&p(&[modk, Insn::ret(0)])),
            Some((Some(0), Rule::NotAllowedInSeccomp))
        );
    }

    #[test]
    fn last_must_return() {
        assert_eq!(
            rule(&p(&[Insn::ld_abs(0)])),
            Some((Some(0), Rule::LastNotRet))
        );
        assert_eq!(rule(&p(&[Insn::stmt(BPF_RET | BPF_A, 7)])), None);
        assert_eq!(
            rule(&p(&[Insn::stmt(BPF_RET | BPF_X, 0)])),
            Some((Some(0), Rule::UnknownOpcode))
        );
    }

    #[test]
    fn scratch_memory_follows_the_kernels_linear_pass() {
        let st = |i| Insn::stmt(BPF_ST, i);
        let ld = |i| Insn::stmt(BPF_LD | BPF_MEM, i);
        let jeq = |jt, jf| Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, jt, jf);
        assert_eq!(rule(&p(&[st(3), ld(3), Insn::ret(0)])), None);
        assert_eq!(
            rule(&p(&[ld(3), Insn::ret(0)])),
            Some((Some(0), Rule::LoadBeforeStore { slot: 3 }))
        );
        // Stored on only one branch.
        assert_eq!(
            rule(&p(&[jeq(0, 1), st(1), ld(1), Insn::ret(0)])),
            Some((Some(2), Rule::LoadBeforeStore { slot: 1 }))
        );
        // Stored on both branches.
        assert_eq!(
            rule(&p(&[
                jeq(0, 2),
                st(1),
                Insn::ja(1),
                st(1),
                ld(1),
                Insn::ret(0)
            ])),
            None
        );
        // A RET does not reset the set: code after it inherits the RET's stores.
        assert_eq!(rule(&p(&[st(0), Insn::ret(0), ld(0), Insn::ret(0)])), None);
        assert_eq!(
            rule(&p(&[st(16), Insn::ret(0)])),
            Some((Some(0), Rule::ScratchIndexOutOfRange))
        );
    }
}
