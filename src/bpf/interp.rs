//! The reference interpreter: runs a seccomp filter exactly as the kernel does.
//!
//! Semantics (classic BPF after the kernel's conversion for seccomp, `bpf_convert_filter`):
//! - A and X start at 0; 16 scratch words `M[]` (the validator guarantees each is written
//!   before it is read; they start at 0 here).
//! - `LD W ABS k` loads word `k/4` of `seccomp_data` in the machine's byte order;
//!   `LD/LDX W LEN` load 64 (`sizeof(struct seccomp_data)`).
//! - ALU is 32-bit and wraps. `DIV` is unsigned. Division by `X == 0` makes the *whole
//!   filter return 0* (`SECCOMP_RET_KILL_THREAD`): the conversion inserts
//!   `if (X == 0) return 0` before every `DIV X`. Shifts by `X` use `X & 31`, as the kernel's
//!   interpreter and the x86 JIT do (shifts by a constant `>= 32` are rejected at load time).
//! - Jumps compare A with `k` or X as unsigned 32-bit numbers.
//! - `RET K` returns `k`, `RET A` returns A.
//!
//! [`eval`] is the fast path; [`trace`] also records the path, which `seccomp_data` words
//! were read, and feeds a [`Coverage`] map.
//!
//! The ALU and jump semantics here are written out on purpose rather than taken from
//! [`super::insn::alu_result`] / [`super::insn::jump_taken`], which the symbolic executor and
//! the optimizer share: this interpreter is the independent check on both (it confirms the
//! verifier's counterexamples, the random-program tests compare optimized programs with their
//! inputs through it, and the kernel-oracle tests compare it with the running kernel), so a
//! slip in the shared definition cannot hide here as well.

use super::data::{SeccompData, Words, NUM_WORDS};
use super::insn::*;
use super::RetVal;

/// Why a program could not be run to a return (only possible for programs the validator
/// rejects).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    #[error("instruction {pc}: not an instruction seccomp can run (validate the program first)")]
    BadInstruction { pc: usize },
    #[error("instruction {pc}: control leaves the program (validate the program first)")]
    OutOfBounds { pc: usize },
}

/// What one run of a filter did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Trace {
    /// The filter's return value.
    pub ret: RetVal,
    /// Instructions executed, including the final return.
    pub steps: usize,
    /// Indices of the instructions executed, in order.
    pub path: Vec<usize>,
    /// Bit `i` set when word `i` of `seccomp_data` (byte offset `4*i`) was loaded.
    pub words_read: u16,
    /// Whether the run ended because of a division by X == 0 (an implicit `return 0`).
    pub div_by_zero: bool,
}

/// Per-instruction execution counts accumulated over many runs.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Coverage {
    pub hits: Vec<u64>,
}

impl Coverage {
    pub fn new(prog: &Program) -> Self {
        Coverage {
            hits: vec![0; prog.len()],
        }
    }
    /// Adds one run's path.
    pub fn add(&mut self, trace: &Trace) {
        for &pc in &trace.path {
            if let Some(h) = self.hits.get_mut(pc) {
                *h += 1;
            }
        }
    }
    /// Indices never executed.
    pub fn uncovered(&self) -> Vec<usize> {
        (0..self.hits.len())
            .filter(|&i| self.hits[i] == 0)
            .collect()
    }
}

/// Runs `prog` on `data` and returns its decision.
pub fn eval(prog: &Program, data: &SeccompData) -> Result<RetVal, EvalError> {
    eval_words(prog, &data.words())
}

/// Runs `prog` on the 16 input words and returns its decision.
pub fn eval_words(prog: &Program, words: &Words) -> Result<RetVal, EvalError> {
    run(prog, words, &mut NoRecord)
}

/// Runs `prog` on `data`, recording what it did.
pub fn trace(prog: &Program, data: &SeccompData) -> Result<Trace, EvalError> {
    trace_words(prog, &data.words())
}

/// Runs `prog` on the 16 input words, recording what it did.
pub fn trace_words(prog: &Program, words: &Words) -> Result<Trace, EvalError> {
    let mut rec = Record::default();
    let ret = run(prog, words, &mut rec)?;
    Ok(Trace {
        ret,
        steps: rec.path.len(),
        path: rec.path,
        words_read: rec.words_read,
        div_by_zero: rec.div_by_zero,
    })
}

/// What one run did, without its path: for callers that run a filter on many inputs and
/// need only the decision, its length and the words it loaded (the cost model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub ret: RetVal,
    /// Instructions executed, including the final return.
    pub steps: usize,
    /// Bit `i` set when word `i` of `seccomp_data` was loaded.
    pub words_read: u16,
}

/// Runs `prog` on the 16 input words: [`trace_words`] without recording the path.
pub fn outcome_words(prog: &Program, words: &Words) -> Result<Outcome, EvalError> {
    let mut count = Count::default();
    let ret = run(prog, words, &mut count)?;
    Ok(Outcome {
        ret,
        steps: count.steps,
        words_read: count.words_read,
    })
}

trait Recorder {
    fn step(&mut self, pc: usize);
    fn load(&mut self, word: usize);
    fn div_by_zero(&mut self);
}

struct NoRecord;
impl Recorder for NoRecord {
    #[inline(always)]
    fn step(&mut self, _: usize) {}
    #[inline(always)]
    fn load(&mut self, _: usize) {}
    #[inline(always)]
    fn div_by_zero(&mut self) {}
}

#[derive(Default)]
struct Count {
    steps: usize,
    words_read: u16,
}
impl Recorder for Count {
    fn step(&mut self, _: usize) {
        self.steps += 1;
    }
    fn load(&mut self, word: usize) {
        self.words_read |= 1 << word;
    }
    fn div_by_zero(&mut self) {}
}

#[derive(Default)]
struct Record {
    path: Vec<usize>,
    words_read: u16,
    div_by_zero: bool,
}
impl Recorder for Record {
    fn step(&mut self, pc: usize) {
        self.path.push(pc);
    }
    fn load(&mut self, word: usize) {
        self.words_read |= 1 << word;
    }
    fn div_by_zero(&mut self) {
        self.div_by_zero = true;
    }
}

fn run<R: Recorder>(prog: &Program, words: &Words, rec: &mut R) -> Result<RetVal, EvalError> {
    let insns = &prog.insns;
    let (mut a, mut x): (u32, u32) = (0, 0);
    let mut mem = [0u32; 16];
    let mut pc = 0usize;
    loop {
        let Some(&insn) = insns.get(pc) else {
            return Err(EvalError::OutOfBounds { pc });
        };
        rec.step(pc);
        let k = insn.k;
        let bad = || EvalError::BadInstruction { pc };
        let slot = |k: u32| -> Result<usize, EvalError> {
            if k < BPF_MEMWORDS {
                Ok(k as usize)
            } else {
                Err(bad())
            }
        };
        let mut next = pc + 1;
        match class(insn.code) {
            BPF_LD | BPF_LDX => {
                let v = match insn.code & !0x07 {
                    c if c == BPF_W | BPF_ABS && class(insn.code) == BPF_LD => {
                        if k % 4 != 0 || k as usize >= 4 * NUM_WORDS {
                            return Err(bad());
                        }
                        rec.load(k as usize / 4);
                        words[k as usize / 4]
                    }
                    c if c == BPF_W | BPF_LEN => super::data::SECCOMP_DATA_SIZE,
                    c if c == BPF_W | BPF_IMM => k,
                    c if c == BPF_W | BPF_MEM => mem[slot(k)?],
                    _ => return Err(bad()),
                };
                if class(insn.code) == BPF_LD {
                    a = v;
                } else {
                    x = v;
                }
            }
            BPF_ST if insn.code == BPF_ST => mem[slot(k)?] = a,
            BPF_STX if insn.code == BPF_STX => mem[slot(k)?] = x,
            BPF_ALU => {
                let operand = if src(insn.code) == BPF_X { x } else { k };
                a = match op(insn.code) {
                    BPF_ADD => a.wrapping_add(operand),
                    BPF_SUB => a.wrapping_sub(operand),
                    BPF_MUL => a.wrapping_mul(operand),
                    BPF_DIV => {
                        if operand == 0 {
                            rec.div_by_zero();
                            return Ok(RetVal(0));
                        }
                        a / operand
                    }
                    BPF_OR => a | operand,
                    BPF_AND => a & operand,
                    BPF_XOR => a ^ operand,
                    BPF_LSH => a.wrapping_shl(operand & 31),
                    BPF_RSH => a.wrapping_shr(operand & 31),
                    BPF_NEG if insn.code == BPF_ALU | BPF_NEG => a.wrapping_neg(),
                    _ => return Err(bad()),
                };
            }
            BPF_JMP => {
                if insn.code == BPF_JMP | BPF_JA {
                    next = next
                        .checked_add(k as usize)
                        .ok_or(EvalError::OutOfBounds { pc })?;
                } else {
                    let operand = if src(insn.code) == BPF_X { x } else { k };
                    let taken = match op(insn.code) {
                        BPF_JEQ => a == operand,
                        BPF_JGT => a > operand,
                        BPF_JGE => a >= operand,
                        BPF_JSET => a & operand != 0,
                        _ => return Err(bad()),
                    };
                    next += if taken { insn.jt } else { insn.jf } as usize;
                }
            }
            BPF_RET => {
                return match insn.code {
                    c if c == BPF_RET | BPF_K => Ok(RetVal(k)),
                    c if c == BPF_RET | BPF_A => Ok(RetVal(a)),
                    _ => Err(bad()),
                };
            }
            BPF_MISC => match insn.code {
                c if c == BPF_MISC | BPF_TAX => x = a,
                c if c == BPF_MISC | BPF_TXA => a = x,
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        }
        pc = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::action::SECCOMP_RET_ALLOW;

    fn data(nr: i32, args: [u64; 6]) -> SeccompData {
        SeccompData::new(0xc000_003e, nr, args)
    }

    #[test]
    fn arch_check_and_syscall_dispatch() {
        // The classic hand-written filter: allow read (0) on x86_64, kill otherwise.
        let prog = Program::new(vec![
            Insn::ld_abs(4),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0xc000_003e, 0, 3),
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
            Insn::ret(SECCOMP_RET_ALLOW),
            Insn::ret(0),
        ]);
        assert_eq!(eval(&prog, &data(0, [0; 6])).unwrap(), RetVal::ALLOW);
        assert_eq!(eval(&prog, &data(1, [0; 6])).unwrap(), RetVal(0));
        let i386 = SeccompData::new(0x4000_0003, 0, [0; 6]);
        let t = trace(&prog, &i386).unwrap();
        assert_eq!(
            (t.ret, t.steps, t.path.clone(), t.words_read),
            (RetVal(0), 3, vec![0, 1, 5], 0b10)
        );
    }

    #[test]
    fn alu_wraps_at_32_bits_and_ret_a_returns_the_accumulator() {
        let prog = Program::new(vec![
            Insn::ld_abs(16), // args[0].lo
            Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 1),
            Insn::stmt(BPF_ALU | BPF_MUL | BPF_K, 3),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ]);
        assert_eq!(
            eval(&prog, &data(0, [0xffff_ffff, 0, 0, 0, 0, 0])).unwrap(),
            RetVal(0)
        );
        assert_eq!(
            eval(&prog, &data(0, [5, 0, 0, 0, 0, 0])).unwrap(),
            RetVal(18)
        );
    }

    #[test]
    fn division_by_zero_x_returns_zero_from_the_filter() {
        let prog = Program::new(vec![
            Insn::stmt(BPF_LD | BPF_IMM, 10),
            Insn::stmt(BPF_LDX | BPF_IMM, 0),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        let t = trace(&prog, &data(0, [0; 6])).unwrap();
        assert_eq!((t.ret, t.div_by_zero, t.steps), (RetVal(0), true, 3));
    }

    #[test]
    fn shifts_by_x_use_the_low_five_bits() {
        let prog = Program::new(vec![
            Insn::stmt(BPF_LD | BPF_IMM, 1),
            Insn::stmt(BPF_LDX | BPF_IMM, 33),
            Insn::stmt(BPF_ALU | BPF_LSH | BPF_X, 0),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ]);
        assert_eq!(eval(&prog, &data(0, [0; 6])).unwrap(), RetVal(2));
    }

    #[test]
    fn len_scratch_and_registers() {
        let prog = Program::new(vec![
            Insn::stmt(BPF_LD | BPF_W | BPF_LEN, 0),
            Insn::stmt(BPF_ST, 5),
            Insn::stmt(BPF_LDX | BPF_MEM, 5),
            Insn::stmt(BPF_MISC | BPF_TXA, 0),
            Insn::stmt(BPF_ALU | BPF_NEG, 0),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ]);
        assert_eq!(
            eval(&prog, &data(0, [0; 6])).unwrap(),
            RetVal(64u32.wrapping_neg())
        );
    }

    #[test]
    fn invalid_programs_error_instead_of_panicking() {
        let fall_off = Program::new(vec![Insn::ld_abs(0)]);
        assert_eq!(
            eval(&fall_off, &data(0, [0; 6])),
            Err(EvalError::OutOfBounds { pc: 1 })
        );
        let bad_load = Program::new(vec![Insn::ld_abs(64), Insn::ret(0)]);
        assert!(eval(&bad_load, &data(0, [0; 6])).is_err());
        let huge_ja = Program::new(vec![Insn::ja(u32::MAX), Insn::ret(0)]);
        assert!(eval(&huge_ja, &data(0, [0; 6])).is_err());
    }
}
