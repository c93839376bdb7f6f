//! A proved lower bound on the no-cache cost of any correct program for a workload: when half
//! of libseccomp's tree is below it, the "at most half" target cannot be met by any
//! filter, and the tests and the comparison bench say so instead of counting a miss.

use secopt::arch::Arch;
use secopt::bpf::analysis::{Analyzer, Budget, NrSet};
use secopt::bpf::{interp, Program, RetVal, SeccompData};
use secopt::optimize::Weights;

/// A floor under the no-cache cost of every correct program, for an allow-list filter and a
/// workload whose calls are all of `arch` (the filter may cover other arches too) and decided
/// by number alone. `None` when the argument below does not apply.
///
/// Every path loads `arch` and `nr`, tests each and returns (the decision depends on both:
/// another token gets the bad-arch action, which no weighted syscall gets; other numbers are
/// decided otherwise): at least 5 instructions, and exactly 5 only with a single test of `nr`
/// against a constant (`jeq`, `jgt`, `jge`, `jset`; X is 0 unless an instruction loads it).
/// Only one side of that first test can end the path (if both did, the decision would
/// be one comparison), and it must then be all ALLOW. The other sides contain 0xffffffff
/// (`[k, ∞)`, `nr & m != 0`, the complement of a singleton), which is denied: so the 5-step
/// side is a `jeq` singleton, a half-line `[0, k)` inside the initial run of allowed numbers,
/// or `{nr & m == 0}`, which holds every submask of each of its members. At most one of those
/// sets is taken, so the weight finishing in 5 steps is at most the largest of: the hottest
/// allowed syscall; the allowed syscalls below the first denied number; the allowed syscalls
/// all of whose submasks are allowed. Everything else costs at least 6.
pub fn allow_list_floor(tree: &Program, arch: Arch, weights: &Weights) -> Option<f64> {
    let analyzer = Analyzer::new(tree).ok()?;
    let budget = Budget::default();
    let token = arch.token();
    let bad_arch = interp::eval(tree, &SeccompData::new(0, 0, [0; 6])).ok()?;
    // Decided ALLOW whatever the arguments; `None` for a number whose decision depends on them.
    let allowed = |nr: u32| {
        let p = analyzer.syscall(token, nr, &budget);
        (p.exact && !p.depends_on_args && !p.returns.contains(&bad_arch))
            .then(|| p.returns.iter().copied().eq([RetVal::ALLOW]))
    };
    let unnamed = analyzer.analyze(token, NrSet::Unnamed(arch), &budget);
    if unnamed.returns.contains(&RetVal::ALLOW) || allowed(u32::MAX) != Some(false) {
        return None;
    }
    let first_denied = (0..4096).find(|&nr| allowed(nr) != Some(true))?;
    // With nothing allowed, the decision need not look at `nr` at all.
    (0..4096).find(|&nr| allowed(nr) == Some(true))?;
    let submasks_allowed = |a: u32| {
        // Every submask of `a`, by the usual `(s - 1) & a` walk.
        let mut s = a;
        loop {
            if allowed(s) != Some(true) {
                return false;
            }
            if s == 0 {
                return true;
            }
            s = (s - 1) & a;
        }
    };
    let total = weights.total();
    let (mut hottest, mut all, mut denied, mut initial_run, mut closed) =
        (0f64, 0.0, 0.0, 0.0, 0.0);
    for (t, nr, w) in weights.iter() {
        if t != token {
            return None;
        }
        let share = w / total;
        if allowed(nr)? {
            all += share;
            hottest = hottest.max(share);
            if nr < first_denied {
                initial_run += share;
            }
            if submasks_allowed(nr) {
                closed += share;
            }
        } else {
            denied += share;
        }
    }
    let in_five = hottest.max(initial_run).max(closed);
    Some(5.0 * denied + 5.0 * in_five + 6.0 * (all - in_five))
}
