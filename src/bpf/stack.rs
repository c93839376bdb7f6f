//! Stacked filters: what a task with several filters decides, and one program that decides
//! the same.
//!
//! A task can have many filters (every `seccomp(2)` call adds one; systemd adds one per
//! hardening option and ABI, firejail one per feature, bubblewrap one per `--seccomp`). On
//! each system call the kernel runs **all** of them, newest first, and acts on the answer
//! whose action, read as a signed 32-bit number (`ACTION_ONLY(ret) = (s32)(ret &
//! 0xffff0000)`), is the lowest; among equal actions the newest filter's answer stands, and
//! the starting answer is `ALLOW` (`kernel/seccomp.c`, `seccomp_run_filters`). So
//! `KILL_PROCESS` (0x80000000, negative) beats `KILL_THREAD` (0) beats `TRAP` beats `ERRNO`
//! beats `USER_NOTIF` beats `TRACE` beats `LOG` beats `ALLOW`, and the data of an `ALLOW`
//! never comes through. [`eval_stack`] is that rule.
//!
//! [`as_one_program`] writes the stack as a single program, so everything that works on one
//! program (the verifier, the lifting and the optimizer, `analyze`) works on a stack: each
//! filter runs in turn, newest first, from `A = X = 0`, with its returns turned into jumps to
//! a combining block that keeps the most restrictive answer so far in a scratch word:
//!
//! ```text
//!     ld #0x7fff0000          ; best = ALLOW
//!     st M[best]
//!     ld #0                   ; newest filter, from A = X = 0
//!     ldx #0
//!     <its instructions, every `ret K` now `ja` to a stub, every `ret A` `ja combine`>
//!     ld #K1                  ; stubs: one per distinct K
//!     ja combine
//!     …
//! combine:
//!     st M[cur]               ; A is this filter's answer
//!     and #0xffff0000         ; its action, with the sign bit flipped: unsigned order of
//!     xor #0x80000000         ; the result is the signed order of the action
//!     tax
//!     ld M[best]
//!     and #0xffff0000
//!     xor #0x80000000
//!     jgt x, take, next       ; best's action above this one's: this one wins
//! take:
//!     ld M[cur]
//!     st M[best]
//! next:
//!     … the next filter, and after the oldest one:
//!     ld M[best]
//!     ret a
//! ```
//!
//! Every instruction of a filter keeps its place relative to the others (a return becomes one
//! `ja`), so its conditional jumps keep their offsets. Two scratch words no filter uses are
//! needed. A filter that divides by `X` is refused: in the kernel a division by zero ends
//! only that filter (with 0, `KILL_THREAD`, which a `KILL_PROCESS` of another filter still
//! beats), but it would end the whole joined program.

use super::action::{SECCOMP_RET_ACTION_FULL, SECCOMP_RET_ALLOW};
use super::insn::*;
use super::interp::{self, EvalError};
use super::{RetVal, SeccompData};

/// Why a stack cannot be written as one program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StackError {
    #[error("no filters")]
    Empty,
    #[error("filter {index} uses {used} of the 16 scratch words and the filters together leave fewer than the 2 that joining them needs")]
    NoScratch { index: usize, used: u32 },
    #[error("filter {index} divides by X at instruction {pc}: a division by zero would end the joined program instead of that filter alone")]
    DivisionByX { index: usize, pc: usize },
    #[error("joined, the filters take {len} instructions, more than the {BPF_MAXINSNS} a program may have")]
    TooLong { len: usize },
}

/// The action of a return value as the kernel orders them: lower wins.
pub const fn action_rank(ret: u32) -> i32 {
    (ret & SECCOMP_RET_ACTION_FULL) as i32
}

/// What the kernel decides for `data` with `filters` attached, **oldest first** (the order
/// they were installed in, and `secopt dump`'s order).
pub fn eval_stack(filters: &[Program], data: &SeccompData) -> Result<RetVal, EvalError> {
    let mut ret = SECCOMP_RET_ALLOW;
    for f in filters.iter().rev() {
        let cur = interp::eval(f, data)?.0;
        if action_rank(cur) < action_rank(ret) {
            ret = cur;
        }
    }
    Ok(RetVal(ret))
}

/// Scratch words a program reads or writes, as a bit set.
fn scratch_used(prog: &Program) -> u16 {
    prog.insns
        .iter()
        .filter(|i| {
            i.code == BPF_ST
                || i.code == BPF_STX
                || i.code == BPF_LD | BPF_W | BPF_MEM
                || i.code == BPF_LDX | BPF_W | BPF_MEM
        })
        .fold(0, |m, i| m | 1u16 << (i.k & 15))
}

/// One program deciding every input as the stack `filters` (oldest first) does; see the
/// module documentation for its shape. The filters must be valid.
pub fn as_one_program(filters: &[Program]) -> Result<Program, StackError> {
    let joined = joined_any_length(filters)?;
    if joined.len() > BPF_MAXINSNS {
        return Err(StackError::TooLong { len: joined.len() });
    }
    Ok(joined)
}

/// [`as_one_program`] past the kernel's 4096 instructions too, for what reads its decisions
/// and loads nothing: analysis, and the optimizer, whose output must fit. The joined program
/// is about twice the filters' length (a stub per return value, a combining block per
/// filter), so a stack the kernel takes (32,768 instructions in all) can join past 4096.
pub fn joined_any_length(filters: &[Program]) -> Result<Program, StackError> {
    if filters.is_empty() {
        return Err(StackError::Empty);
    }
    let mut used = 0u16;
    for (index, f) in filters.iter().enumerate() {
        if let Some(pc) = f.insns.iter().position(|i| {
            i.code == BPF_ALU | BPF_DIV | BPF_X || i.code == BPF_ALU | BPF_MOD | BPF_X
        }) {
            return Err(StackError::DivisionByX { index, pc });
        }
        used |= scratch_used(f);
    }
    let free: Vec<u32> = (0..BPF_MEMWORDS).filter(|&m| used & 1 << m == 0).collect();
    let (best, cur) = match free[..] {
        [b, c, ..] => (b, c),
        _ => {
            let (index, f) = filters
                .iter()
                .enumerate()
                .max_by_key(|(_, f)| scratch_used(f).count_ones())
                .expect("not empty");
            return Err(StackError::NoScratch {
                index,
                used: scratch_used(f).count_ones(),
            });
        }
    };
    let ld_imm = |k| Insn::stmt(BPF_LD | BPF_IMM, k);
    let mut out = vec![ld_imm(SECCOMP_RET_ALLOW), Insn::stmt(BPF_ST, best)];
    for f in filters.iter().rev() {
        out.push(ld_imm(0));
        out.push(Insn::stmt(BPF_LDX | BPF_IMM, 0));
        let body = out.len();
        out.extend_from_slice(&f.insns);
        // Stubs after the body, one per distinct `ret K`, each `ld #K; ja combine`.
        let mut stub_values: Vec<u32> = f
            .insns
            .iter()
            .filter(|i| i.code == BPF_RET | BPF_K)
            .map(|i| i.k)
            .collect();
        stub_values.sort_unstable();
        stub_values.dedup();
        let stubs = out.len();
        let combine = stubs + 2 * stub_values.len();
        for (n, &k) in stub_values.iter().enumerate() {
            let at = stubs + 2 * n;
            out.push(ld_imm(k));
            out.push(Insn::ja((combine - at - 2) as u32));
        }
        for (pc, insn) in out.iter_mut().enumerate().take(stubs).skip(body) {
            let target = match insn.code {
                c if c == BPF_RET | BPF_K => {
                    stubs + 2 * stub_values.binary_search(&insn.k).expect("collected above")
                }
                c if c == BPF_RET | BPF_A => combine,
                _ => continue,
            };
            *insn = Insn::ja((target - pc - 1) as u32);
        }
        out.extend_from_slice(&[
            Insn::stmt(BPF_ST, cur),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, SECCOMP_RET_ACTION_FULL),
            Insn::stmt(BPF_ALU | BPF_XOR | BPF_K, 0x8000_0000),
            Insn::stmt(BPF_MISC | BPF_TAX, 0),
            Insn::stmt(BPF_LD | BPF_W | BPF_MEM, best),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, SECCOMP_RET_ACTION_FULL),
            Insn::stmt(BPF_ALU | BPF_XOR | BPF_K, 0x8000_0000),
            Insn::jump(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 2),
            Insn::stmt(BPF_LD | BPF_W | BPF_MEM, cur),
            Insn::stmt(BPF_ST, best),
        ]);
    }
    out.push(Insn::stmt(BPF_LD | BPF_W | BPF_MEM, best));
    out.push(Insn::stmt(BPF_RET | BPF_A, 0));
    Ok(Program::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::action::*;
    use crate::bpf::testing::{random_data, random_program, GenConfig, Rng};
    use crate::bpf::validate::validate;

    fn data(nr: i32) -> SeccompData {
        SeccompData {
            nr,
            arch: 0xc000_003e,
            instruction_pointer: 0,
            args: [0; 6],
        }
    }

    /// `nr == n ? a : b`.
    fn choose(n: u32, a: u32, b: u32) -> Program {
        Program::new(vec![
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, n, 0, 1),
            Insn::ret(a),
            Insn::ret(b),
        ])
    }

    #[test]
    fn the_kernels_precedence_and_ties() {
        let errno = |e| SECCOMP_RET_ERRNO | e;
        let cases: &[(&[Program], u32)] = &[
            // Lowest action wins, whatever the order.
            (
                &[
                    choose(1, errno(5), SECCOMP_RET_ALLOW),
                    choose(1, SECCOMP_RET_TRAP, SECCOMP_RET_ALLOW),
                ],
                SECCOMP_RET_TRAP,
            ),
            (
                &[
                    choose(1, SECCOMP_RET_TRAP, SECCOMP_RET_ALLOW),
                    choose(1, errno(5), SECCOMP_RET_ALLOW),
                ],
                SECCOMP_RET_TRAP,
            ),
            // KILL_PROCESS is negative as s32: below KILL_THREAD (0).
            (
                &[
                    choose(1, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_ALLOW),
                    choose(1, SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ALLOW),
                ],
                SECCOMP_RET_KILL_PROCESS,
            ),
            // Equal actions: the newest (last installed) filter's data.
            (
                &[
                    choose(1, errno(5), SECCOMP_RET_ALLOW),
                    choose(1, errno(7), SECCOMP_RET_ALLOW),
                ],
                errno(7),
            ),
            // LOG beats ALLOW; ALLOW's data never comes through.
            (
                &[
                    choose(1, SECCOMP_RET_LOG, SECCOMP_RET_ALLOW),
                    choose(1, SECCOMP_RET_ALLOW | 9, SECCOMP_RET_ALLOW),
                ],
                SECCOMP_RET_LOG,
            ),
            (
                &[choose(1, SECCOMP_RET_ALLOW | 9, SECCOMP_RET_ALLOW)],
                SECCOMP_RET_ALLOW,
            ),
        ];
        for (n, (filters, want)) in cases.iter().enumerate() {
            assert_eq!(
                eval_stack(filters, &data(1)).unwrap(),
                RetVal(*want),
                "case {n}"
            );
            let one = as_one_program(filters).unwrap();
            validate(&one).unwrap();
            assert_eq!(
                interp::eval(&one, &data(1)).unwrap(),
                RetVal(*want),
                "case {n} joined"
            );
            assert_eq!(
                interp::eval(&one, &data(2)).unwrap(),
                RetVal::ALLOW,
                "case {n} joined"
            );
        }
    }

    #[test]
    fn joined_random_stacks_decide_as_the_stack() {
        let mut rng = Rng::new(0x57ac);
        let cfg = GenConfig::default();
        let (mut joined, mut refused) = (0, 0);
        for _ in 0..3000 {
            let filters: Vec<Program> = (0..1 + rng.below(4))
                .map(|_| random_program(&mut rng, &cfg))
                .collect();
            let one = match as_one_program(&filters) {
                Ok(p) => p,
                Err(StackError::DivisionByX { .. } | StackError::NoScratch { .. }) => {
                    refused += 1;
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            validate(&one).unwrap_or_else(|e| panic!("{e}\n{one:?}"));
            joined += 1;
            for _ in 0..30 {
                let from = rng.below(filters.len());
                let d = random_data(&mut rng, &filters[from], &[0xc000_003e, 0x4000_0003]);
                assert_eq!(
                    interp::eval(&one, &d).unwrap(),
                    eval_stack(&filters, &d).unwrap(),
                    "{d:?}\n{filters:?}"
                );
            }
        }
        assert!(joined > 2000, "only {joined} joined ({refused} refused)");
    }

    #[test]
    fn what_cannot_be_joined_is_refused() {
        let div = Program::new(vec![
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        assert_eq!(
            as_one_program(&[choose(1, 0, SECCOMP_RET_ALLOW), div]),
            Err(StackError::DivisionByX { index: 1, pc: 0 })
        );
        let mut all_scratch: Vec<Insn> = (0..15).map(|m| Insn::stmt(BPF_ST, m)).collect();
        all_scratch.push(Insn::ret(SECCOMP_RET_ALLOW));
        assert!(matches!(
            as_one_program(&[Program::new(all_scratch)]),
            Err(StackError::NoScratch { index: 0, used: 15 })
        ));
        assert_eq!(as_one_program(&[]), Err(StackError::Empty));
    }
}
