//! The classic-BPF instruction, the opcode constants, and `Program` with raw I/O.
//!
//! A seccomp filter is an array of `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`,
//! 8 bytes each in the host's byte order: little-endian on x86, arm and riscv (the bytes
//! `bwrap --seccomp`, crun's `run.oci.seccomp_bpf_data` and `PTRACE_SECCOMP_GET_FILTER` use
//! there), big-endian on s390x, ppc64 and mips ([`Program::from_raw_in`]).
//!
//! `Insn` keeps every field exactly as read, including fields the kernel ignores for a given
//! opcode (e.g. `k` of `RET A`, `jt`/`jf` of `LD`), so a decode → encode round trip is the
//! identity on bytes.

use crate::arch::Endian;
use std::fmt;

/// Instruction classes (`code & 0x07`).
pub const BPF_LD: u16 = 0x00;
pub const BPF_LDX: u16 = 0x01;
pub const BPF_ST: u16 = 0x02;
pub const BPF_STX: u16 = 0x03;
pub const BPF_ALU: u16 = 0x04;
pub const BPF_JMP: u16 = 0x05;
pub const BPF_RET: u16 = 0x06;
pub const BPF_MISC: u16 = 0x07;

/// Load sizes (`code & 0x18`).
pub const BPF_W: u16 = 0x00;
pub const BPF_H: u16 = 0x08;
pub const BPF_B: u16 = 0x10;

/// Load modes (`code & 0xe0`).
pub const BPF_IMM: u16 = 0x00;
pub const BPF_ABS: u16 = 0x20;
pub const BPF_IND: u16 = 0x40;
pub const BPF_MEM: u16 = 0x60;
pub const BPF_LEN: u16 = 0x80;
pub const BPF_MSH: u16 = 0xa0;

/// ALU operations (`code & 0xf0`).
pub const BPF_ADD: u16 = 0x00;
pub const BPF_SUB: u16 = 0x10;
pub const BPF_MUL: u16 = 0x20;
pub const BPF_DIV: u16 = 0x30;
pub const BPF_OR: u16 = 0x40;
pub const BPF_AND: u16 = 0x50;
pub const BPF_LSH: u16 = 0x60;
pub const BPF_RSH: u16 = 0x70;
pub const BPF_NEG: u16 = 0x80;
pub const BPF_MOD: u16 = 0x90;
pub const BPF_XOR: u16 = 0xa0;

/// Jump operations (`code & 0xf0`).
pub const BPF_JA: u16 = 0x00;
pub const BPF_JEQ: u16 = 0x10;
pub const BPF_JGT: u16 = 0x20;
pub const BPF_JGE: u16 = 0x30;
pub const BPF_JSET: u16 = 0x40;

/// Operand source (`code & 0x08`): the constant `k` or the X register.
pub const BPF_K: u16 = 0x00;
pub const BPF_X: u16 = 0x08;
/// `RET A` (`BPF_RET | BPF_A`).
pub const BPF_A: u16 = 0x10;

/// `BPF_MISC` operations (`code & 0xf8`).
pub const BPF_TAX: u16 = 0x00;
pub const BPF_TXA: u16 = 0x80;

/// Number of scratch memory words (`M[0]..M[15]`).
pub const BPF_MEMWORDS: u32 = 16;
/// Most instructions one seccomp filter may have (`BPF_MAXINSNS`).
pub const BPF_MAXINSNS: usize = 4096;
/// Most instructions over all filters attached to one task (`MAX_INSNS_PER_PATH`);
/// each attached filter costs 4 instructions on top of its length.
pub const MAX_INSNS_PER_PATH: usize = 32768;
/// Size in bytes of one encoded instruction.
pub const INSN_SIZE: usize = 8;

/// Extracts the class bits of an opcode.
pub const fn class(code: u16) -> u16 {
    code & 0x07
}
/// Extracts the size bits of a load opcode.
pub const fn size(code: u16) -> u16 {
    code & 0x18
}
/// Extracts the mode bits of a load opcode.
pub const fn mode(code: u16) -> u16 {
    code & 0xe0
}
/// Extracts the operation bits of an ALU or jump opcode.
pub const fn op(code: u16) -> u16 {
    code & 0xf0
}
/// Extracts the source bit (`BPF_K` or `BPF_X`) of an ALU or jump opcode.
pub const fn src(code: u16) -> u16 {
    code & 0x08
}
/// Extracts the return-value source of a `RET` opcode (`BPF_K`, `BPF_X`, `BPF_A`).
pub const fn rval(code: u16) -> u16 {
    code & 0x18
}
/// Extracts the operation of a `BPF_MISC` opcode.
pub const fn miscop(code: u16) -> u16 {
    code & 0xf8
}

/// What an ALU operation computes from `a` and its operand: 32-bit, wrapping, shifts by the
/// operand's low 5 bits (as the kernel's interpreter and JITs do). `DIV` by 0 gives 0 here;
/// the kernel ends the program instead (returning 0), so a caller that can meet it checks
/// first. One definition for every evaluator (the symbolic one on constants, the optimizer's
/// lifting and cost model, the disassembler's notes).
pub fn alu_result(op: u16, a: u32, operand: u32) -> u32 {
    match op {
        BPF_ADD => a.wrapping_add(operand),
        BPF_SUB => a.wrapping_sub(operand),
        BPF_MUL => a.wrapping_mul(operand),
        BPF_DIV => a.checked_div(operand).unwrap_or(0),
        BPF_OR => a | operand,
        BPF_AND => a & operand,
        BPF_XOR => a ^ operand,
        BPF_LSH => a.wrapping_shl(operand & 31),
        BPF_RSH => a.wrapping_shr(operand & 31),
        // BPF_NEG (the validator admits no other operation).
        _ => a.wrapping_neg(),
    }
}

/// Whether a conditional jump is taken: the unsigned comparison of `a` with its operand.
pub fn jump_taken(op: u16, a: u32, operand: u32) -> bool {
    match op {
        BPF_JEQ => a == operand,
        BPF_JGT => a > operand,
        BPF_JGE => a >= operand,
        // BPF_JSET (the validator admits no other condition).
        _ => a & operand != 0,
    }
}

/// One classic-BPF instruction (`struct sock_filter`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

impl Insn {
    /// An instruction from its four raw fields.
    pub const fn new(code: u16, jt: u8, jf: u8, k: u32) -> Self {
        Insn { code, jt, jf, k }
    }
    /// A non-jump instruction (`BPF_STMT`).
    pub const fn stmt(code: u16, k: u32) -> Self {
        Insn {
            code,
            jt: 0,
            jf: 0,
            k,
        }
    }
    /// A conditional jump (`BPF_JUMP`).
    pub const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Self {
        Insn { code, jt, jf, k }
    }
    /// `LD W ABS k`: load the 32-bit word at byte offset `k` of `seccomp_data` into A.
    pub const fn ld_abs(offset: u32) -> Self {
        Self::stmt(BPF_LD | BPF_W | BPF_ABS, offset)
    }
    /// `RET k`.
    pub const fn ret(value: u32) -> Self {
        Self::stmt(BPF_RET | BPF_K, value)
    }
    /// `JA k`: unconditional forward jump over `k` instructions.
    pub const fn ja(offset: u32) -> Self {
        Self::stmt(BPF_JMP | BPF_JA, offset)
    }

    /// Whether this is a conditional jump (`JEQ`/`JGT`/`JGE`/`JSET` with K or X),
    /// the only instructions whose `jt`/`jf` the kernel reads.
    pub const fn is_conditional_jump(&self) -> bool {
        class(self.code) == BPF_JMP && op(self.code) != BPF_JA
    }
    /// Whether this is `JA`.
    pub const fn is_ja(&self) -> bool {
        self.code == BPF_JMP | BPF_JA
    }
    /// Whether this is a return instruction of any kind.
    pub const fn is_ret(&self) -> bool {
        class(self.code) == BPF_RET
    }

    /// Encodes as the 8 little-endian bytes of `struct sock_filter`.
    pub fn to_bytes(self) -> [u8; INSN_SIZE] {
        let mut b = [0u8; INSN_SIZE];
        b[0..2].copy_from_slice(&self.code.to_le_bytes());
        b[2] = self.jt;
        b[3] = self.jf;
        b[4..8].copy_from_slice(&self.k.to_le_bytes());
        b
    }
    /// Decodes 8 little-endian bytes of `struct sock_filter`.
    pub fn from_bytes(b: [u8; INSN_SIZE]) -> Self {
        Self::from_bytes_in(b, Endian::Little)
    }
    /// Encodes as 8 bytes of `struct sock_filter` in `endian` order.
    pub fn to_bytes_in(self, endian: Endian) -> [u8; INSN_SIZE] {
        let mut b = self.to_bytes();
        if endian == Endian::Big {
            b[0..2].reverse();
            b[4..8].reverse();
        }
        b
    }
    /// Decodes 8 bytes of `struct sock_filter` in `endian` order.
    pub fn from_bytes_in(mut b: [u8; INSN_SIZE], endian: Endian) -> Self {
        if endian == Endian::Big {
            b[0..2].reverse();
            b[4..8].reverse();
        }
        Insn {
            code: u16::from_le_bytes([b[0], b[1]]),
            jt: b[2],
            jf: b[3],
            k: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }
}

impl fmt::Debug for Insn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{ 0x{:02x}, {}, {}, 0x{:08x} }}",
            self.code, self.jt, self.jf, self.k
        )
    }
}

/// Error decoding raw filter bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    #[error("raw filter is {len} bytes, not a multiple of 8 (struct sock_filter is 8 bytes); the last {rest} bytes are a truncated instruction")]
    Truncated { len: usize, rest: usize },
    #[error("raw filter is empty (a seccomp filter needs 1 to 4096 instructions)")]
    Empty,
}

/// A classic-BPF program: the instruction array exactly as the kernel receives it.
///
/// A `Program` is not necessarily valid; [`crate::bpf::validate`] decides whether the kernel
/// would accept it.
#[derive(Clone, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Program {
    pub insns: Vec<Insn>,
}

impl Program {
    pub fn new(insns: Vec<Insn>) -> Self {
        Program { insns }
    }
    pub fn len(&self) -> usize {
        self.insns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// Decodes a raw filter (an array of 8-byte little-endian `struct sock_filter`).
    ///
    /// Only the framing is checked here (length a non-zero multiple of 8); whether the kernel
    /// accepts the instructions is [`crate::bpf::validate`]'s job.
    pub fn from_raw(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_raw_in(bytes, Endian::Little)
    }

    /// [`from_raw`](Self::from_raw) for `struct sock_filter` in `endian` order (big-endian
    /// for the filters of s390x, ppc64 and mips machines).
    pub fn from_raw_in(bytes: &[u8], endian: Endian) -> Result<Self, DecodeError> {
        let rest = bytes.len() % INSN_SIZE;
        if rest != 0 {
            return Err(DecodeError::Truncated {
                len: bytes.len(),
                rest,
            });
        }
        if bytes.is_empty() {
            return Err(DecodeError::Empty);
        }
        let insns = bytes
            .chunks_exact(INSN_SIZE)
            .map(|c| {
                Insn::from_bytes_in(c.try_into().expect("chunks_exact yields 8 bytes"), endian)
            })
            .collect();
        Ok(Program { insns })
    }

    /// Encodes as raw little-endian `struct sock_filter` bytes, whatever machine the program
    /// is for: a big-endian one's (s390x, ppc64, mips) takes [`Program::to_raw_in`] with its
    /// [`Arch::endian`](crate::arch::Arch::endian) (what
    /// [`CompiledFilter::to_raw`](crate::compile::CompiledFilter::to_raw) does).
    pub fn to_raw(&self) -> Vec<u8> {
        self.to_raw_in(Endian::Little)
    }

    /// Encodes as raw `struct sock_filter` bytes in `endian` order.
    pub fn to_raw_in(&self, endian: Endian) -> Vec<u8> {
        self.insns
            .iter()
            .flat_map(|i| i.to_bytes_in(endian))
            .collect()
    }

    /// Targets of the instruction at `pc` as absolute indices: `(jt, jf)` for a
    /// conditional jump, `(t, t)` for `JA`; `None` for other instructions and for a `pc`
    /// past the end. Indices may lie outside the program if it is invalid.
    pub fn jump_targets(&self, pc: usize) -> Option<(usize, usize)> {
        let i = *self.insns.get(pc)?;
        if i.is_conditional_jump() {
            Some((pc + 1 + i.jt as usize, pc + 1 + i.jf as usize))
        } else if i.is_ja() {
            let t = pc.saturating_add(1).saturating_add(i.k as usize);
            Some((t, t))
        } else {
            None
        }
    }
}

impl Program {
    /// The instructions no path from the first one reaches, as inclusive index ranges in
    /// order: code after the last `ret` that no jump targets (Firecracker's libseccomp-based
    /// compiler leaves an earlier thread's program there, docs/kernel-facts.md), or jumped
    /// over. Such code never runs, but the kernel loads it and counts it against its limits.
    /// Syntactic: both sides of every conditional jump count as reachable. For a valid program.
    pub fn unreachable(&self) -> Vec<(usize, usize)> {
        let mut reached = vec![false; self.len()];
        let mut stack = vec![0];
        while let Some(pc) = stack.pop() {
            if pc >= self.len() || std::mem::replace(&mut reached[pc], true) {
                continue;
            }
            match self.jump_targets(pc) {
                Some((t, f)) => stack.extend([t, f]),
                None if class(self.insns[pc].code) == BPF_RET => {}
                None => stack.push(pc + 1),
            }
        }
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for (pc, _) in reached.iter().enumerate().filter(|(_, r)| !**r) {
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == pc => *end = pc,
                _ => ranges.push((pc, pc)),
            }
        }
        ranges
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.insns.iter()).finish()
    }
}

impl From<Vec<Insn>> for Program {
    fn from(insns: Vec<Insn>) -> Self {
        Program { insns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A jumped-over instruction and a tail after the last `ret` are unreachable; both sides
    /// of a conditional jump and the instruction after a non-jump are reached.
    #[test]
    fn unreachable_instructions_are_the_ones_no_path_reaches() {
        let prog = Program::new(vec![
            Insn::ld_abs(0),                                // 0
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1), // 1: to 2 or 3
            Insn::ret(0x7fff_0000),                         // 2
            Insn::jump(BPF_JMP | BPF_JA, 1, 0, 0),          // 3: over 4
            Insn::ret(0),                                   // 4: jumped over
            Insn::ret(0x0005_0001),                         // 5
            Insn::ld_abs(16),                               // 6: a stale tail
            Insn::ret(0),                                   // 7
        ]);
        assert_eq!(prog.unreachable(), vec![(4, 4), (6, 7)]);
        let all = Program::new(vec![Insn::ret(0x7fff_0000)]);
        assert!(all.unreachable().is_empty());
        // Targets as the jumps' offsets give them; none past the end (a caller's index).
        assert_eq!(prog.jump_targets(1), Some((2, 3)));
        assert_eq!(prog.jump_targets(3), Some((5, 5)));
        assert_eq!(prog.jump_targets(2), None);
        assert_eq!(prog.jump_targets(8), None);
        assert_eq!(prog.jump_targets(usize::MAX), None);
    }

    #[test]
    fn raw_layout_matches_struct_sock_filter() {
        // BPF_STMT(BPF_LD|BPF_W|BPF_ABS, 4) as the C compiler lays it out on x86_64:
        // code=0x0020 little-endian, jt=0, jf=0, k=4 little-endian.
        let bytes = [0x20, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00];
        let p = Program::from_raw(&bytes).unwrap();
        assert_eq!(p.insns, vec![Insn::ld_abs(4)]);
        assert_eq!(p.to_raw(), bytes);
        let j = Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0xc000003e, 1, 2);
        assert_eq!(
            j.to_bytes(),
            [0x15, 0x00, 0x01, 0x02, 0x3e, 0x00, 0x00, 0xc0]
        );
    }

    #[test]
    fn truncated_and_empty_are_rejected() {
        assert_eq!(
            Program::from_raw(&[0; 12]),
            Err(DecodeError::Truncated { len: 12, rest: 4 })
        );
        assert_eq!(Program::from_raw(&[]), Err(DecodeError::Empty));
    }
}
