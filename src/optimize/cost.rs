//! The cost model: how many instructions a filter runs per syscall of a workload, with and
//! without the kernel's allow cache, and its longest path.
//!
//! - **Path length** of a syscall `(arch, nr)`: the most instructions executed (the final `ret`
//!   included) over all values of the words the workload does not record (IP and arguments).
//!   `strace -c` gives counts only, so a syscall whose decision depends on arguments is charged
//!   its longest path: the assumption is stated in every report. Both sides of a test on an
//!   unknown word are assumed possible, so the figure is an upper bound when two tests
//!   contradict each other (filters from compilers do not do that).
//! - **Expected cost without the cache** (kernels before 5.11, or every first call):
//!   `Σ weight × path length / Σ weight`.
//! - **Expected cost with the cache** (5.11+): the same, but a syscall the kernel caches costs 0
//!   (the filter never runs for it after the first call).
//! - **Worst-case path**: the longest path over every input, found by evaluating one input per
//!   range of `(arch, nr)` values on which every comparison of `arch` and `nr` with a constant
//!   goes the same way (so every input of the range runs the same instructions up to its
//!   argument tests).

use super::lift::word_cut_ranges;
use super::weights::Weights;
use crate::arch::Arch;
use crate::bpf::cache::{CacheBitmap, KernelCache, KernelVersion};
use crate::bpf::insn::*;
use std::collections::{BTreeMap, HashMap};

/// Most distinct register states tracked at one instruction before they are merged into one
/// (where everything is unknown, so both sides of later tests count: still an upper bound).
const MAX_STATES_PER_PC: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Val {
    Unknown,
    Const(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Regs {
    a: Val,
    x: Val,
    m: [Val; 16],
}

const UNKNOWN: Regs = Regs {
    a: Val::Unknown,
    x: Val::Unknown,
    m: [Val::Unknown; 16],
};

/// The fewest and most instructions `prog` (valid) executes for syscall `nr` with arch token
/// `token`, over all values of the other words (see the module documentation).
pub fn path_lengths(prog: &Program, token: u32, nr: u32) -> (u32, u32) {
    let insns = &prog.insns;
    let n = insns.len();
    // Pending states per instruction, with the fewest/most instructions run to get there.
    let mut pending: BTreeMap<usize, HashMap<Regs, (u32, u32)>> = BTreeMap::new();
    let start = Regs {
        a: Val::Const(0),
        x: Val::Const(0),
        ..UNKNOWN
    };
    pending.entry(0).or_default().insert(start, (0, 0));
    let (mut lo, mut hi) = (u32::MAX, 0u32);
    let mut finish = |steps: (u32, u32)| {
        lo = lo.min(steps.0 + 1);
        hi = hi.max(steps.1 + 1);
    };
    while let Some((pc, mut states)) = pending.pop_first() {
        if pc >= n {
            continue;
        }
        if states.len() > MAX_STATES_PER_PC {
            let merged = states
                .values()
                .fold((u32::MAX, 0), |(a, b), &(c, d)| (a.min(c), b.max(d)));
            states = HashMap::from([(UNKNOWN, merged)]);
        }
        let insn = insns[pc];
        let code = insn.code;
        for (regs, steps) in states {
            let go =
                |to: usize, r: Regs, pending: &mut BTreeMap<usize, HashMap<Regs, (u32, u32)>>| {
                    let e = pending
                        .entry(to)
                        .or_default()
                        .entry(r)
                        .or_insert((u32::MAX, 0));
                    e.0 = e.0.min(steps.0 + 1);
                    e.1 = e.1.max(steps.1 + 1);
                };
            if insn.is_ret() {
                finish(steps);
                continue;
            }
            if insn.is_ja() {
                go(pc + 1 + insn.k as usize, regs, &mut pending);
                continue;
            }
            if insn.is_conditional_jump() {
                let k = if src(code) == BPF_K {
                    Val::Const(insn.k)
                } else {
                    regs.x
                };
                let (t, f) = (pc + 1 + insn.jt as usize, pc + 1 + insn.jf as usize);
                match (regs.a, k) {
                    (Val::Const(a), Val::Const(k)) => {
                        let taken = match op(code) {
                            BPF_JEQ => a == k,
                            BPF_JGT => a > k,
                            BPF_JGE => a >= k,
                            _ => a & k != 0,
                        };
                        go(if taken { t } else { f }, regs, &mut pending);
                    }
                    _ => {
                        go(t, regs, &mut pending);
                        go(f, regs, &mut pending);
                    }
                }
                continue;
            }
            let mut r = regs;
            let slot = (insn.k & 15) as usize;
            match class(code) {
                BPF_LD => {
                    r.a = match mode(code) {
                        BPF_ABS if insn.k == 0 => Val::Const(nr),
                        BPF_ABS if insn.k == 4 => Val::Const(token),
                        BPF_ABS => Val::Unknown,
                        BPF_IMM => Val::Const(insn.k),
                        BPF_LEN => Val::Const(64),
                        _ => r.m[slot],
                    }
                }
                BPF_LDX => {
                    r.x = match mode(code) {
                        BPF_IMM => Val::Const(insn.k),
                        BPF_LEN => Val::Const(64),
                        _ => r.m[slot],
                    }
                }
                BPF_ST => r.m[slot] = r.a,
                BPF_STX => r.m[slot] = r.x,
                BPF_ALU => {
                    let operand = if op(code) == BPF_NEG {
                        Val::Const(0)
                    } else if src(code) == BPF_X {
                        r.x
                    } else {
                        Val::Const(insn.k)
                    };
                    if op(code) == BPF_DIV && src(code) == BPF_X {
                        match operand {
                            // Division by zero: the filter stops here.
                            Val::Const(0) => {
                                finish(steps);
                                continue;
                            }
                            Val::Unknown => finish(steps),
                            Val::Const(_) => {}
                        }
                    }
                    r.a = match (r.a, operand) {
                        (Val::Const(a), Val::Const(k)) => Val::Const(alu(op(code), a, k)),
                        _ => Val::Unknown,
                    };
                }
                _ if miscop(code) == BPF_TAX => r.x = r.a,
                _ => r.a = r.x,
            }
            go(pc + 1, r, &mut pending);
        }
    }
    if lo == u32::MAX {
        (0, 0)
    } else {
        (lo, hi)
    }
}

fn alu(op: u16, a: u32, k: u32) -> u32 {
    match op {
        BPF_ADD => a.wrapping_add(k),
        BPF_SUB => a.wrapping_sub(k),
        BPF_MUL => a.wrapping_mul(k),
        BPF_DIV => a.checked_div(k).unwrap_or(0),
        BPF_OR => a | k,
        BPF_AND => a & k,
        BPF_LSH => a.wrapping_shl(k & 31),
        BPF_RSH => a.wrapping_shr(k & 31),
        BPF_NEG => a.wrapping_neg(),
        BPF_XOR => a ^ k,
        _ => a,
    }
}

/// The longest path of `prog` over every input (see the module documentation).
pub fn worst_case_path(prog: &Program) -> u32 {
    let mut worst = 0;
    for (alo, _) in word_cut_ranges(prog, 4, None) {
        for (nlo, nhi) in word_cut_ranges(prog, 0, Some(alo)) {
            worst = worst.max(path_lengths(prog, alo, nlo).1);
            if nhi != nlo {
                worst = worst.max(path_lengths(prog, alo, nhi).1);
            }
        }
    }
    worst
}

/// The kernel whose allow cache applies to syscalls of `arch` (64-bit kernels run the 32-bit
/// ABIs as compat).
pub fn kernel_arch(arch: Arch) -> Arch {
    match arch {
        Arch::X86 | Arch::X32 => Arch::X86_64,
        Arch::Arm => Arch::Aarch64,
        Arch::Ppc => Arch::Ppc64,
        other => other,
    }
}

/// The allow caches of the kernels that run `arches`, after attaching one program.
pub struct Caches {
    /// `(kernel arch, bitmap)`.
    bitmaps: Vec<(Arch, CacheBitmap)>,
}

impl Caches {
    /// The bitmaps of kernel `version` for every kernel one of `arches` runs on, with `prog`
    /// attached; none before 5.11.
    pub fn new(prog: &Program, arches: &[Arch], version: KernelVersion) -> Caches {
        let mut kernels: Vec<Arch> = arches.iter().map(|&a| kernel_arch(a)).collect();
        kernels.sort();
        kernels.dedup();
        let bitmaps = kernels
            .into_iter()
            .filter_map(|k| Some((k, CacheBitmap::new(KernelCache::for_kernel(k, version)?))))
            .map(|(k, b)| (k, b.attach(prog)))
            .collect();
        Caches { bitmaps }
    }

    /// Whether `(token, nr)` skips the filter.
    pub fn is_cached(&self, token: u32, nr: u32) -> bool {
        let Some(arch) = Arch::of_data(token, nr) else {
            return false;
        };
        let kernel = kernel_arch(arch);
        self.bitmaps
            .iter()
            .find(|(k, _)| *k == kernel)
            .is_some_and(|(_, b)| b.is_cached(token, nr))
    }

    /// Every bitmap: `(name, token, cached numbers)`.
    pub fn sets(&self) -> Vec<(&'static str, u32, Vec<u32>)> {
        self.bitmaps
            .iter()
            .flat_map(|(_, b)| {
                b.kernel()
                    .targets()
                    .map(|t| (t.name, t.token, b.cached_numbers(t.token)))
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// Expected instructions per syscall of `weights` for `prog`, without and with the allow cache
/// (`caches`); `(0, 0)` for empty weights.
pub fn expected_costs(prog: &Program, weights: &Weights, caches: &Caches) -> (f64, f64) {
    let total = weights.total();
    if total == 0.0 {
        return (0.0, 0.0);
    }
    let (mut without, mut with) = (0.0, 0.0);
    for (token, nr, w) in weights.iter() {
        if w == 0.0 {
            continue;
        }
        let steps = path_lengths(prog, token, nr).1 as f64;
        without += w * steps;
        if !caches.is_cached(token, nr) {
            with += w * steps;
        }
    }
    (without / total, with / total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::RetVal;

    fn jeq(k: u32, jt: u8, jf: u8) -> Insn {
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf)
    }

    #[test]
    fn path_lengths_by_hand() {
        // 0 ld [0]; 1 jeq #41 → 2 : 5; 2 ld [16]; 3 jeq #16 → 4 : 5; 4 ret ERRNO; 5 ret ALLOW
        let p = Program::new(vec![
            Insn::ld_abs(0),
            jeq(41, 0, 3),
            Insn::ld_abs(16),
            jeq(16, 0, 1),
            Insn::ret(RetVal::errno(1).0),
            Insn::ret(RetVal::ALLOW.0),
        ]);
        // socket: 0,1,2,3,4 or 0,1,2,3,5: 5 either way. read: 0,1,5: 3.
        assert_eq!(path_lengths(&p, 0xc000_003e, 41), (5, 5));
        assert_eq!(path_lengths(&p, 0xc000_003e, 0), (3, 3));
        assert_eq!(worst_case_path(&p), 5);
        // Weighted: 3 socket calls and 1 read: (3×5 + 1×3) / 4 = 4.5 without the cache; read
        // is cached on x86_64 (ALLOW using only nr), socket is not: 15 / 4 = 3.75 with it.
        let mut w = Weights::new();
        w.add(0xc000_003e, 41, 3.0).unwrap();
        w.add(0xc000_003e, 0, 1.0).unwrap();
        let caches = Caches::new(&p, &[Arch::X86_64], KernelVersion::new(6, 18));
        assert_eq!(expected_costs(&p, &w, &caches), (4.5, 3.75));
    }

    #[test]
    fn division_by_zero_stops_the_path() {
        // ldx #0; div x; ret #1  → runs 2 instructions and returns 0.
        let p = Program::new(vec![
            Insn::stmt(BPF_LDX | BPF_W | BPF_IMM, 0),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::ret(1),
        ]);
        assert_eq!(path_lengths(&p, 0, 0), (2, 2));
    }
}
