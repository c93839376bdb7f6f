//! Argument sweeps shared by the tests that compare secopt's programs with libseccomp's by
//! interpretation.

use secopt::bpf::testing::Rng;
use std::collections::{BTreeMap, BTreeSet};

/// Boundary values per argument index.
pub type ArgValues = BTreeMap<u32, BTreeSet<u64>>;

/// Calls `f` with `base` where each argument index of `values` takes one of its values: every
/// combination when there are at most `limit`, else `limit` random ones.
pub fn each_combination(
    values: &ArgValues,
    base: [u64; 6],
    limit: usize,
    rng: &mut Rng,
    mut f: impl FnMut([u64; 6]),
) {
    let axes: Vec<(u32, Vec<u64>)> = values
        .iter()
        .map(|(&i, s)| (i, s.iter().copied().collect()))
        .collect();
    let mut run = |chosen: &[u64]| {
        let mut args = base;
        for ((i, _), v) in axes.iter().zip(chosen) {
            args[*i as usize] = *v;
        }
        f(args);
    };
    let total: usize = axes.iter().map(|(_, v)| v.len()).product();
    if total <= limit {
        for mut n in 0..total {
            let mut chosen = Vec::with_capacity(axes.len());
            for (_, v) in &axes {
                chosen.push(v[n % v.len()]);
                n /= v.len();
            }
            run(&chosen);
        }
    } else {
        for _ in 0..limit {
            let chosen: Vec<u64> = axes.iter().map(|(_, v)| v[rng.below(v.len())]).collect();
            run(&chosen);
        }
    }
}
