//! The worst-case path as secopt computed it before its one-pass exploration: the oracle of
//! `tests/worst_path.rs` and the baseline of the `worst-case path` benchmark.

use secopt::bpf::Program;
use secopt::optimize::cost::path_lengths;
use secopt::optimize::lift::word_cut_ranges;

/// The longest of one run (with `cost::path_lengths`, both words known) per range of `arch`
/// values, then of `nr` values, on which every comparison of that word with a constant goes
/// the same way: every input of a range runs the same instructions up to its argument tests,
/// so on filters that compare `nr` and `arch` only with constants this is the worst path.
/// Both ends of each `nr` range are run (once when they are one number).
pub fn worst_by_ranges(prog: &Program) -> u32 {
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
