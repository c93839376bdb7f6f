//! Tests of the dispatch: the dynamic programs against independently written brute force
//! (every tree of a few leaves), and worked examples whose costs are computed by hand.

use super::bounded::{
    fill_order, jeq_candidates, states, JeqCandidate, FILL_BLOCK, INFEASIBLE, LEAF, NO_TARGET,
};
use super::chains::may_chain_somewhere;
use super::split::{
    optimal_split_cost, optimal_tree, optimal_trees, EXACT_MAX_LEAVES, KNUTH_MIN_LEAVES,
};
use super::*;
use crate::bpf::testing::Rng;

fn leaf(lo: u32, hi: u32, target: NodeId, w: f64) -> Leaf {
    Leaf {
        lo,
        hi,
        target,
        weight: Cost([w, 1.0]),
    }
}

/// A hot value taken out of a wide leaf leaves it lighter by its weight, never below zero:
/// audit 53's workload had two samples in one value gap, counted 2^60 and 16, so the gap
/// weighed fl(2^60 + 16) = 2^60, and taking both out left -16 before [`Cost::less`].
#[test]
fn taking_hot_values_out_of_a_leaf_never_leaves_it_below_zero() {
    let big = 2f64.powi(60);
    let leaves = vec![
        leaf(0, 111, 1, 3.0),
        leaf(112, 130, 2, big + 16.0),
        leaf(131, 200, 1, 5.0),
    ];
    assert_eq!(leaves[1].weight.0[0], big, "the 16 is absorbed");
    let once = take_value(&leaves, 129, Cost([big, 0.0]));
    let twice = take_value(&once, 121, Cost([16.0, 0.0]));
    assert_eq!(twice.len(), 3);
    assert_eq!(twice[1].weight, Cost([0.0, 1.0]));
    // Where the arithmetic is exact, the weight is the difference.
    let exact = take_value(&leaves, 10, Cost([2.0, 0.5]));
    assert_eq!(exact[0].weight, Cost([1.0, 0.5]));
    // A single-value leaf is removed instead, its neighbours merging.
    let single = vec![
        leaf(0, 9, 1, 1.0),
        leaf(10, 10, 2, 4.0),
        leaf(11, 20, 1, 2.0),
    ];
    let without = take_value(&single, 10, Cost([4.0, 1.0]));
    assert_eq!(without.len(), 1);
    assert_eq!((without[0].lo, without[0].hi), (0, 20));
}

/// `best_tree` is public, and a library caller's weights may be NaN, infinite or
/// negative: the tree must still send every leaf's values to its target, without a panic
/// (a NaN hot weight made `hot_chain`'s sort panic on an order that was not total).
#[test]
fn weights_that_are_not_numbers_still_give_a_correct_tree() {
    let odd = [f64::NAN, f64::INFINITY, -1.0, f64::NEG_INFINITY];
    for seed in 0..40usize {
        let mut leaves = Vec::new();
        let mut lo = 0u32;
        for i in 0..60usize {
            // `X s X s …`: single values between wide ranges, so exception chains compete.
            let single = i % 2 == 1;
            let hi = if single { lo } else { lo + 3 };
            let w = match (seed + i) % 6 {
                k @ 0..=3 => odd[(k + seed) % 4],
                _ => (i * 7 % 13) as f64,
            };
            let target = if single { 2 + (i % 3) as NodeId } else { 1 };
            leaves.push(leaf(lo, hi, target, w));
            lo = hi + 1;
        }
        leaves.last_mut().unwrap().hi = u32::MAX;
        let hot: Vec<(u32, Cost)> = (0..8)
            .map(|v| (v * 3, Cost([odd[(v as usize + seed) % 4], 0.0])))
            .collect();
        for tuning in [Tuning::BALANCED, Tuning::SPEED, Tuning::SIZE] {
            let (tree, _) = best_tree_tuned(&leaves, &hot, &tuning);
            for l in &leaves {
                for v in [l.lo, l.hi] {
                    assert_eq!(tree.target_of(v), l.target, "seed {seed}, value {v}");
                }
            }
        }
    }
}

/// Neighbouring single values with different targets are one chain: `[0..62] → X`,
/// `63 → A`, `64 → B`, `[65..] → X` (aarch64's `read` and `write` with different argument
/// checks between allowed ranges). Four leaves need three splits in any tree of splits;
/// the chain `jeq 63 → A; jeq 64 → B; → X` needs two tests. Strict `X s X` alternation
/// missed it. With equal weights the default balance takes it too: the chain's depths are
/// 2, 1, 2, 2 (7), while a tree of splits over four leaves has depths 2, 2, 2, 2 or a
/// permutation of 1, 2, 3, 3 (at least 8).
#[test]
fn neighbouring_single_values_are_one_chain() {
    let len = |_: NodeId| 1;
    let leaves = [
        leaf(0, 62, 1, 1.0),
        leaf(63, 63, 2, 1.0),
        leaf(64, 64, 3, 1.0),
        leaf(65, u32::MAX, 1, 1.0),
    ];
    let chain = Tree::Chain {
        tests: vec![(63, 2), (64, 3)],
        rest: Box::new(Tree::Leaf(1)),
    };
    for tuning in [Tuning::SIZE, Tuning::BALANCED] {
        let (tree, _) = best_tree_bounded(&leaves, &[], &len, false, &tuning);
        assert_eq!(tree, chain);
    }
    assert_eq!(tree_cost(&chain, &leaves).0[0], 7.0);
    assert_eq!(optimal_tree_exhaustive(&leaves, false).1 .0[0], 8.0);
}

/// `--favor size` on `X s X s … X`: six single values (target 2) between wide ranges
/// (target 1). Each single value needs a leaf of its own (a leaf is a range less the values
/// tested with `jeq` on its path, and the wide ranges between two of them cannot be
/// tested away), so a tree has at least 7 leaves and 6 tests; one chain of six `jeq`s has
/// exactly 6. The default chains stop at four exceptions, and two chains need a split
/// between them: at least 7.
#[test]
fn favor_size_takes_one_long_exception_chain() {
    let mut leaves = Vec::new();
    for q in 0..13u32 {
        let (lo, hi, target) = if q % 2 == 1 {
            (50 * q, 50 * q, 2)
        } else {
            let lo = if q == 0 { 0 } else { 50 * q - 49 };
            let hi = if q == 12 { u32::MAX } else { 50 * q + 49 };
            (lo, hi, 1)
        };
        leaves.push(leaf(lo, hi, target, 1.0));
    }
    let len = |_: NodeId| 1;
    let (size, _) = best_tree_bounded(&leaves, &[], &len, false, &Tuning::SIZE);
    assert_eq!(size.tests(), 6, "{size:?}");
    assert!(matches!(size, Tree::Chain { .. }), "{size:?}");
    let (balanced, _) = best_tree_bounded(&leaves, &[], &len, false, &Tuning::BALANCED);
    assert!(balanced.tests() >= 7, "{balanced:?}");
    // Both decide every value as the leaves say.
    for tree in [&size, &balanced] {
        for l in &leaves {
            for v in [l.lo, l.hi, l.lo + (l.hi - l.lo) / 2] {
                assert_eq!(tree.target_of(v), l.target, "{v} in {tree:?}");
            }
        }
    }
}

#[test]
fn one_isolated_exception_is_one_jeq() {
    // [0..40 → A] [41 → B] [42..max → A]: jeq #41 → B, else A.
    let leaves = [
        leaf(0, 40, 1, 0.0),
        leaf(41, 41, 2, 0.0),
        leaf(42, u32::MAX, 1, 0.0),
    ];
    let (tree, cost) = best_tree(&leaves, &[]);
    assert_eq!(
        tree,
        Tree::Chain {
            tests: vec![(41, 2)],
            rest: Box::new(Tree::Leaf(1))
        }
    );
    // Each of the 3 leaves passes one test: tie-break cost 3.
    assert_eq!(cost, Cost([0.0, 3.0]));
}

#[test]
fn weighted_splits_follow_the_weights() {
    // Four leaves with weights 10, 1, 1, 10 (targets all distinct). Splitting in the middle
    // costs 2 × 22 = 44; better is leaf 0 at depth 1 and leaf 3 at depth 2, the light ones
    // at depth 3: 10 + 20 + 3 + 3 = 36 (by hand over all five shapes of 4-leaf trees:
    // 44, 36, 36, 45, 45). A heavy first leaf (100, 1, 1, 1) goes to depth 1:
    // 100 + 2 + 3 + 3 = 108.
    let l = |w: [f64; 4]| -> Vec<Leaf> {
        (0..4)
            .map(|i| {
                leaf(
                    i * 10,
                    if i == 3 { u32::MAX } else { i * 10 + 9 },
                    i + 1,
                    w[i as usize],
                )
            })
            .collect()
    };
    let (_, c) = optimal_tree(&l([10.0, 1.0, 1.0, 10.0]), true, false);
    assert_eq!(c.0[0], 36.0);
    let (t, c) = optimal_tree(&l([100.0, 1.0, 1.0, 1.0]), true, false);
    assert_eq!(c.0[0], 108.0);
    assert_eq!(t.depth_of(5), 1);
    assert_eq!(t.depth_of(35), 3);
    assert_eq!(tree_cost(&t, &l([100.0, 1.0, 1.0, 1.0])).0[0], 108.0);
}

#[test]
fn hot_single_value_goes_first() {
    // 17 leaves of weight 1 with distinct targets, plus value 70 (weight 1000) between two
    // leaves of target 100: a balanced tree needs about 4 tests for 70, `jeq #70` first
    // needs 1 and costs everything else 1.
    let mut leaves: Vec<Leaf> = (0..7u32)
        .map(|i| leaf(i * 10, i * 10 + 9, i, 1.0))
        .collect();
    leaves.push(leaf(70, 70, 7, 1000.0));
    leaves.push(leaf(71, 79, 100, 1.0));
    leaves.extend((8..16u32).map(|i| {
        let hi = if i == 15 { u32::MAX } else { i * 10 + 9 };
        leaf(i * 10, hi, i, 1.0)
    }));
    leaves[6].hi = 69;
    leaves.insert(6, leaf(60, 68, 6, 1.0));
    leaves[7] = leaf(69, 69, 100, 1.0);
    let (tree, cost) = best_tree(&leaves, &[]);
    assert_eq!(tree.depth_of(70), 1, "{tree:?}");
    assert_eq!(cost, tree_cost(&tree, &leaves));
}

/// `m` sorted leaves covering the word: half single values, the rest short ranges, the last
/// running to the end; neighbours never share a target.
/// `hot` values inside about a third of the wider `leaves` (the value after each one's
/// first), weighing up to 39 calls.
fn random_hot(rng: &mut Rng, leaves: &[Leaf]) -> Vec<(u32, Cost)> {
    let mut hot = Vec::new();
    for l in leaves {
        if l.hi > l.lo && rng.chance(1, 3) {
            hot.push((l.lo + 1, Cost([rng.below(40) as f64, 0.0])));
        }
    }
    hot
}

fn random_leaves(rng: &mut Rng, m: usize, mut weight: impl FnMut(&mut Rng) -> Cost) -> Vec<Leaf> {
    let mut leaves = Vec::new();
    let mut lo = 0u32;
    let mut prev = u32::MAX;
    for i in 0..m {
        let hi = if i + 1 == m {
            u32::MAX
        } else if rng.chance(1, 2) {
            lo
        } else {
            lo + 1 + rng.below(5) as u32
        };
        let mut target = rng.below(3) as u32;
        if target == prev {
            target = 3 + i as u32;
        }
        prev = target;
        leaves.push(Leaf {
            lo,
            hi,
            target,
            weight: weight(rng),
        });
        lo = hi.wrapping_add(1);
    }
    leaves
}

#[test]
fn knuth_bounds_match_the_exhaustive_program() {
    let mut rng = Rng::new(7);
    for round in 0..300 {
        let m = 1 + rng.below(14);
        let leaves = random_leaves(&mut rng, m, |rng| {
            Cost([rng.below(4) as f64 * rng.below(20) as f64, 1.0])
        });
        // Knuth's bounds are exact for split trees.
        let (tk, ck) = optimal_tree(&leaves, true, false);
        let (te, ce) = optimal_tree_exhaustive(&leaves, false);
        assert_eq!(ck, tree_cost(&tk, &leaves), "round {round}: reported cost");
        assert_eq!(ce, tree_cost(&te, &leaves));
        assert_eq!(ck, ce, "round {round}: {leaves:?}");
        // With exception chains: never worse than the exact split tree, never better than
        // the exhaustive search over both.
        let (tb, cb) = split_or_chain_tree(&leaves, &Tuning::BALANCED);
        let (_, cx) = optimal_tree_exhaustive(&leaves, true);
        assert_eq!(cb, tree_cost(&tb, &leaves));
        assert!(
            cb.cmp_total(&ce).is_le() && cx.cmp_total(&cb).is_le(),
            "round {round}"
        );
    }
}

/// Garsia and Wachs's cost is the optimal split tree's: the table's with Knuth's bounds
/// and the exhaustive table's, on integer weights (exact in floating point) with many
/// ties in both components, and within rounding on fractional ones.
#[test]
fn garsia_wachs_matches_the_split_table() {
    let l = |w: &[f64]| -> Vec<Leaf> {
        w.iter()
            .enumerate()
            .map(|(i, &w)| leaf(i as u32, i as u32, i as u32, w))
            .collect()
    };
    // By hand: 3 | ((1 | 1) | 3) or ((3 | (1 | 1)) | 3), depths 1 3 3 2 or 2 3 3 1: 15;
    // the balanced tree costs 16.
    assert_eq!(optimal_split_cost(&l(&[3.0, 1.0, 1.0, 3.0])).0[0], 15.0);
    // One leaf: no test. Two: one test each.
    assert_eq!(optimal_split_cost(&l(&[7.0])), Cost::ZERO);
    assert_eq!(optimal_split_cost(&l(&[7.0, 2.0])).0[0], 9.0);
    let mut rng = Rng::new(5);
    for round in 0..600 {
        let m = 1 + rng.below(if round < 400 { 12 } else { 90 });
        let fractional = round % 3 == 2;
        let leaves = random_leaves(&mut rng, m, |rng| {
            let main = rng.below(4) as f64 * rng.below(20) as f64;
            let tie = rng.below(3) as f64;
            if fractional {
                Cost([main * 0.37 + 0.01 * rng.below(7) as f64, tie * 0.5])
            } else {
                Cost([main, tie])
            }
        });
        let gw = optimal_split_cost(&leaves);
        let (_, knuth) = optimal_tree(&leaves, true, false);
        if fractional {
            // Rounding can order near-equal sums either way, and the tie-breaker then
            // follows: the main component agrees within rounding.
            let (a, b) = (gw.0[0], knuth.0[0]);
            assert!(
                (a - b).abs() <= 1e-12 * b,
                "round {round}: {gw:?} {knuth:?}"
            );
        } else {
            assert_eq!(gw, knuth, "round {round}: {leaves:?}");
            if m <= 12 {
                assert_eq!(gw, optimal_tree_exhaustive(&leaves, false).1);
            }
        }
    }
}

/// Skipping the split table when the chain tree is cheaper than Garsia and Wachs's cost
/// changes nothing: `split_or_chain_tree` returns what filling both tables and taking
/// the cheaper returns, for both tunings.
#[test]
fn skipping_the_split_table_keeps_the_cheaper_tree() {
    let mut rng = Rng::new(9);
    let mut chain_wins = 0;
    for round in 0..400 {
        // Both sides of `KNUTH_MIN_LEAVES`: the full program below, Knuth's bounds above.
        let m = 2 + rng.below(2 * KNUTH_MIN_LEAVES);
        let mut leaves = random_leaves(&mut rng, m, |rng| {
            Cost([rng.below(30) as f64 * 0.3, 1.0 + rng.below(4) as f64])
        });
        if round % 4 == 3 {
            // Leaves below zero, as a hot value taken out of a leaf can leave one by a
            // rounding error (found by an audit): Garsia and Wachs do not hold there.
            for l in leaves.iter_mut().filter(|_| rng.chance(1, 2)) {
                l.weight.0[0] = -l.weight.0[0];
            }
        }
        for tuning in [Tuning::BALANCED, Tuning::SIZE] {
            let knuth = m > KNUTH_MIN_LEAVES;
            let both = match optimal_trees(&leaves, knuth, may_chain_somewhere(&leaves), &tuning) {
                ((ts, cs), Some((tc, cc))) => {
                    if cc.lt(&cs) {
                        chain_wins += 1;
                        (tc, cc)
                    } else {
                        (ts, cs)
                    }
                }
                (split, None) => split,
            };
            assert_eq!(split_or_chain_tree(&leaves, &tuning), both, "round {round}");
        }
    }
    // The chain tree wins often enough for the skip to be exercised.
    assert!(chain_wins > 100, "{chain_wins}");
}

/// Every tree of splits, exception chains and `jeq` tests of `candidates` over
/// `leaves[i..=j]` once the candidates in `tested` are tested, as (cost, longest path)
/// pairs, the cheapest of each longest path: the brute force [`BoundedTrees`] is checked
/// against.
fn all_trees(
    leaves: &[Leaf],
    (candidates, price, test): (&[JeqCandidate], f64, f64),
    len: &dyn Fn(NodeId) -> usize,
    (i, j, tested): (usize, usize, usize),
) -> Vec<(f64, usize)> {
    let jeqs = (candidates, price, test);
    // The leaves of the range a value can still reach, and the weight of the range's
    // values still to be told apart.
    let gone = |q: usize| {
        (0..candidates.len())
            .any(|c| tested & (1 << c) != 0 && candidates[c].leaf == q && candidates[c].whole_leaf)
    };
    let mut targets: Vec<NodeId> = (i..=j)
        .filter(|&q| !gone(q))
        .map(|q| leaves[q].target)
        .collect();
    targets.dedup();
    let in_range = |c: &JeqCandidate| (i..=j).contains(&c.leaf);
    if targets.len() <= 1 {
        return vec![(
            0.0,
            len(targets.first().copied().unwrap_or(leaves[i].target)),
        )];
    }
    let tested_weight: f64 = (0..candidates.len())
        .filter(|&c| tested & (1 << c) != 0 && in_range(&candidates[c]))
        .map(|c| candidates[c].weight.0[0])
        .sum();
    let w: f64 = leaves[i..=j].iter().map(|l| l.weight.0[0]).sum::<f64>() - tested_weight;
    let mut out = Vec::new();
    for k in i + 1..=j {
        for &(cl, wl) in &all_trees(leaves, jeqs, len, (i, k - 1, tested)) {
            for &(cr, wr) in &all_trees(leaves, jeqs, len, (k, j, tested)) {
                out.push((cl + cr + w + test, 1 + wl.max(wr)));
            }
        }
    }
    for (c, cand) in candidates.iter().enumerate() {
        if in_range(cand) && tested & (1 << c) == 0 {
            let exit = 1 + len(leaves[cand.leaf].target);
            for &(cr, wr) in &all_trees(leaves, jeqs, len, (i, j, tested | 1 << c)) {
                out.push((cr + w + price + test, exit.max(1 + wr)));
            }
        }
    }
    // A chain: every leaf of the range has the rest target X or is a single value tested
    // with `jeq`, exceptions in any order. X is the first leaf's target or that of the
    // first leaf of more than one value from i on (the choices the program offers).
    let untouched = !candidates
        .iter()
        .enumerate()
        .any(|(c, cand)| tested & (1 << c) != 0 && in_range(cand));
    let single = |q: usize| leaves[q].lo == leaves[q].hi;
    let mut rests = vec![leaves[i].target];
    rests.extend(
        (i..leaves.len())
            .find(|&q| !single(q))
            .map(|q| leaves[q].target),
    );
    for x in rests {
        let exceptions: Vec<usize> = (i..=j).filter(|&q| leaves[q].target != x).collect();
        let fits = exceptions.iter().all(|&q| single(q));
        if !untouched || !fits || exceptions.is_empty() || exceptions.len() > MAX_EXCEPTIONS {
            continue;
        }
        let e = exceptions.len();
        let xw: f64 = (i..=j)
            .filter(|&q| leaves[q].target == x)
            .map(|q| leaves[q].weight.0[0])
            .sum();
        let mut order = exceptions.clone();
        order.sort_by(|&a, &b| leaves[b].weight.0[0].total_cmp(&leaves[a].weight.0[0]));
        let cost = xw * e as f64
            + order
                .iter()
                .enumerate()
                .map(|(p, &q)| leaves[q].weight.0[0] * (p + 1) as f64)
                .sum::<f64>();
        let exits = order
            .iter()
            .enumerate()
            .map(|(p, &q)| p + 1 + len(leaves[q].target))
            .max()
            .unwrap_or(0);
        out.push((cost + test * e as f64, exits.max(e + len(x))));
    }
    // Only the cheapest tree of each longest path can be the cheapest within a bound.
    out.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)));
    out.dedup_by_key(|t| t.1);
    out
}

/// Past [`EXACT_MAX_LEAVES`] the tree is divided at the weighted median: every value
/// still reaches its leaf's target, the reported cost is the tree's, and against the
/// dynamic program on the same leaves (run here directly, however large) the divided tree
/// costs at most 1% more and is at most one test deeper (favouring size: has at most a test
/// more per part it was divided into past the first), with uniform weights and with
/// random ones.
#[test]
fn a_divided_tree_routes_every_value_and_stays_near_the_optimum() {
    let mut rng = Rng::new(11);
    for round in 0..4 {
        // Two of them divided twice.
        let m = EXACT_MAX_LEAVES + 1 + rng.below(400) + (round / 2) * EXACT_MAX_LEAVES;
        let leaves = random_leaves(&mut rng, m, |rng| {
            if round % 2 == 0 {
                Cost([0.0, 1.0])
            } else {
                Cost([1.0 + rng.below(50) as f64, 1.0])
            }
        });
        for tuning in [Tuning::BALANCED, Tuning::SIZE] {
            let (tree, cost) = split_or_chain_tree(&leaves, &tuning);
            assert!(matches!(tree, Tree::Split { .. }));
            for l in &leaves {
                for v in [l.lo, l.hi, l.lo + (l.hi - l.lo) / 2] {
                    assert_eq!(tree.target_of(v), l.target, "round {round}: value {v}");
                }
            }
            let ((split_only, split_cost), chained) =
                optimal_trees(&leaves, true, may_chain_somewhere(&leaves), &tuning);
            let exact = match chained {
                Some((t, c)) if c.lt(&split_cost) => t,
                _ => split_only,
            };
            let weighted = |t: &Tree| tree_cost(t, &leaves);
            if tuning.size_first {
                // Each division can cut an exception chain in two: a test more for each
                // of the parts past the first.
                let parts = m.div_ceil(EXACT_MAX_LEAVES).next_power_of_two();
                assert!(
                    tree.tests() < exact.tests() + parts,
                    "round {round}: {} tests against {}, {parts} parts",
                    tree.tests(),
                    exact.tests()
                );
                let total = leaves.iter().fold(Cost::ZERO, |s, l| s + l.weight);
                let price = Cost([total.0[0] * m as f64 + 1.0, 0.0]);
                assert_eq!(cost, weighted(&tree) + price * tree.tests() as f64);
            } else {
                assert_eq!(cost, weighted(&tree), "round {round}: reported cost");
                let (c, e) = (weighted(&tree), weighted(&exact));
                let main = if e.0[0] > 0.0 { 0 } else { 1 };
                assert!(
                    c.0[main] <= 1.01 * e.0[main],
                    "round {round}: {c:?} vs {e:?}"
                );
                assert!(tree.max_depth() <= exact.max_depth() + 1, "round {round}");
            }
        }
    }
}

/// `best_tree_within` keeps its promise and gives nothing away: the tree it returns fits
/// the bound; when the default tree does not, it costs no more than the best split/chain
/// tree within the bound (found here by brute force); and it refuses only when no such
/// tree fits, naming a shortest worst path above the bound and no longer than theirs.
/// The cheapest of `all` ((cost, longest path) of every tree) whose longest path is at
/// most `bound`.
fn cheapest_within(all: &[(f64, usize)], bound: usize) -> Option<f64> {
    all.iter()
        .filter(|t| t.1 <= bound)
        .map(|t| t.0)
        .min_by(f64::total_cmp)
}

/// Every range is filled once, after every range its splits read (`(i, k - 1)` and
/// `(k, j)`), for sizes on both sides of a block of columns and well past it.
#[test]
fn the_fill_order_fills_each_range_after_the_ranges_it_reads() {
    for m in 0..=3 * FILL_BLOCK + 3 {
        let mut filled = vec![false; m * m];
        let mut count = 0;
        for (i, j) in fill_order(m) {
            assert!(i <= j && j < m, "m {m}: ({i}, {j})");
            assert!(!filled[i * m + j], "m {m}: ({i}, {j}) twice");
            for k in i + 1..=j {
                assert!(
                    filled[i * m + k - 1],
                    "m {m}: ({i}, {j}) before ({i}, {})",
                    k - 1
                );
                assert!(filled[k * m + j], "m {m}: ({i}, {j}) before ({k}, {j})");
            }
            filled[i * m + j] = true;
            count += 1;
        }
        assert_eq!(count, m * (m + 1) / 2, "m {m}");
    }
}

#[test]
fn trees_within_a_bound_keep_it_and_cost_no_more_than_any_other() {
    let mut rng = Rng::new(13);
    let (mut refused, mut tightened) = (0, 0);
    for round in 0..800 {
        let m = 1 + rng.below(7);
        let leaves = random_leaves(&mut rng, m, |rng| Cost([rng.below(10) as f64, 1.0]));
        let len = |t: NodeId| 1 + (t as usize * 7) % 4;
        // Splits and exception chains: a tree with `jeq` tests inside is taken only where
        // it is cheaper, so these bound the cost from above.
        let all = all_trees(&leaves, (&[], 0.0, 0.0), &len, (0, m - 1, 0));
        let brute_shortest = all.iter().map(|t| t.1).min().unwrap();
        let default_worst = best_tree_bounded(&leaves, &[], &len, false, &Tuning::BALANCED)
            .0
            .worst_path(&len);
        for b in 0..=12 {
            let brute = cheapest_within(&all, b);
            let context = format!("round {round}, bound {b}: {leaves:?}");
            match best_tree_within(&leaves, &[], &len, false, &Tuning::BALANCED, b, None) {
                Ok((tree, c)) => {
                    assert!(tree.worst_path(&len) <= b, "{context}");
                    assert_eq!(tree_cost(&tree, &leaves).0[0], c.0[0], "{context}");
                    // (A `jeq` chain at the root may fit where no split/chain tree does.)
                    if let (true, Some(brute)) = (default_worst > b, brute) {
                        tightened += 1;
                        assert!(c.0[0] <= brute, "{context}: {} > {brute}", c.0[0]);
                    }
                }
                Err(shortest) => {
                    refused += 1;
                    assert_eq!(brute, None, "{context}");
                    assert!(shortest > b && shortest <= brute_shortest, "{context}");
                }
            }
        }
    }
    // Both branches were exercised.
    assert!(refused > 100 && tightened > 80, "{refused} {tightened}");
}

/// `dominating_tree` only ever returns a tree that routes every value as the leaves say
/// and beats the searched tree on every count (cost, worst path, tests; better in one).
/// Default-like weights (many ties: 100 or 1 per leaf) on up to 60 leaves; the searched
/// tree is the default-weights one, as the emitter passes it.
#[test]
fn a_dominating_tree_routes_every_value_and_beats_the_searched_one_everywhere() {
    let mut rng = Rng::new(29);
    let mut found = 0;
    for round in 0..400 {
        let m = 2 + rng.below(59);
        let leaves = random_leaves(&mut rng, m, |rng| {
            Cost([if rng.chance(1, 3) { 100.0 } else { 1.0 }, 1.0])
        });
        let len = |t: NodeId| 1 + (t as usize * 7) % 4;
        let searched = best_tree_bounded(&leaves, &[], &len, true, &Tuning::BALANCED);
        let Some((tree, cost)) = dominating_tree(&leaves, &[], &len, &Tuning::BALANCED, &searched)
        else {
            continue;
        };
        found += 1;
        let context = format!("round {round}: {leaves:?}");
        for l in &leaves {
            for v in [l.lo, l.hi, l.lo + (l.hi - l.lo) / 2] {
                assert_eq!(tree.target_of(v), l.target, "{context}: value {v}");
            }
        }
        let old = tree_cost(&searched.0, &leaves).0[0];
        assert_eq!(tree_cost(&tree, &leaves).0[0], cost.0[0], "{context}");
        let (w, ow) = (tree.worst_path(&len), searched.0.worst_path(&len));
        let (n, on) = (tree.tests(), searched.0.tests());
        assert!(cost.0[0] <= old + 1e-9 && w <= ow && n <= on, "{context}");
        assert!(cost.0[0] < old - 1e-9 || w < ow || n < on, "{context}");
    }
    // The searched trees are often beaten (the premise of the replacement).
    assert!(found > 40, "{found}");
}

/// The tables filled in [`fill_order`] hold what they held when they were filled by
/// increasing span (every cost, choice, least path and target, with and without `jeq`
/// candidates), on random dispatches of up to 40 leaves: several blocks of columns.
#[test]
fn tables_filled_in_blocks_hold_what_filling_by_span_gave() {
    let mut rng = Rng::new(34);
    let by_span =
        |m: usize| (1..=m).flat_map(move |span| (0..=m - span).map(move |i| (i, i + span - 1)));
    let mut with_candidates = 0;
    for round in 0..120 {
        let m = 1 + rng.below(40);
        let leaves = random_leaves(&mut rng, m, |rng| Cost([rng.below(50) as f64, 1.0]));
        let hot = random_hot(&mut rng, &leaves);
        let len = |t: NodeId| 1 + (t as usize * 7) % 4;
        let tuning = [Tuning::BALANCED, Tuning::SPEED, Tuning::SIZE][round % 3];
        let bound = 4 + rng.below(14);
        let blocks = BoundedTrees::new(&leaves, &hot, &len, bound, &tuning);
        let mut span = BoundedTrees::new(&leaves, &hot, &len, bound, &tuning);
        let refill = |t: &mut BoundedTrees| {
            // As `with_candidates` leaves them for `fill`.
            t.cost.fill(INFEASIBLE);
            t.choice.fill(LEAF);
            t.least.fill(0);
            t.target.fill(NO_TARGET);
            t.fill(&len, by_span(m), None);
        };
        if let Some(plain) = span.plain.as_deref_mut() {
            refill(plain);
        }
        refill(&mut span);
        let pairs = std::iter::once((&blocks, &span))
            .chain(blocks.plain.as_deref().zip(span.plain.as_deref()));
        for (a, b) in pairs {
            let context = format!(
                "round {round}: {m} leaves, {} candidates",
                a.candidates.len()
            );
            // Bit for bit: the same sums in the same order.
            let bits = |t: &BoundedTrees| -> Vec<[u64; 2]> {
                t.cost
                    .iter()
                    .map(|c| [c.0[0].to_bits(), c.0[1].to_bits()])
                    .collect()
            };
            assert!(bits(a) == bits(b), "{context}: costs");
            assert!(a.choice == b.choice, "{context}: choices");
            assert!(a.least == b.least, "{context}: least paths");
            assert!(a.target == b.target, "{context}: targets");
        }
        with_candidates += usize::from(!blocks.candidates.is_empty());
    }
    assert!(with_candidates > 30, "{with_candidates}");
}

#[test]
fn kept_tables_answer_as_new_ones_would() {
    let mut rng = Rng::new(5);
    let mut reused = 0;
    for round in 0..200 {
        let m = 2 + rng.below(30);
        let leaves = random_leaves(&mut rng, m, |rng| Cost([rng.below(50) as f64, 1.0]));
        let hot = random_hot(&mut rng, &leaves);
        let hot = (round % 2 == 0).then_some(hot.as_slice());
        let short = |t: NodeId| 1 + (t as usize * 7) % 4;
        let long = |t: NodeId| 2 + (t as usize * 5) % 3;
        let tuning = [Tuning::BALANCED, Tuning::SPEED, Tuning::SIZE][round % 3];
        let cache = TablesCache::default();
        let first = cache.tables(&leaves, hot, &short, 14, &tuning);
        let cases: [(&dyn Fn(NodeId) -> usize, usize); 4] =
            [(&short, 12), (&long, 12), (&short, 9), (&short, 16)];
        for (len, bound) in cases {
            let same_bodies = leaves.iter().all(|l| len(l.target) == short(l.target));
            let kept = cache.tables(&leaves, hot, len, bound, &tuning);
            let new = BoundedTrees::for_hot(&leaves, hot, len, bound, &tuning);
            // Other bodies' paths make other tables, and so does a higher bound; a lower
            // one reads the same unless the budget then admits other `jeq` candidates.
            let values = |t: &BoundedTrees| -> Vec<(usize, u32)> {
                t.candidates.iter().map(|c| (c.leaf, c.value)).collect()
            };
            if same_bodies && bound <= 14 && values(&first) == values(&new) {
                assert!(Rc::ptr_eq(&kept, &first), "round {round}: not reused");
                reused += 1;
            } else {
                assert!(!Rc::ptr_eq(&kept, &first), "round {round}: reused");
            }
            assert_eq!(kept.least_path(), new.least_path(), "round {round}");
            for b in 0..=bound {
                let context = format!("round {round}, bound {b}");
                let tree = |t: Option<(Tree, Cost)>| t.map(|t| t.0);
                assert_eq!(tree(kept.best(b)), tree(new.best(b)), "{context}");
                let plain = (tree(kept.best_plain(b)), tree(new.best_plain(b)));
                assert_eq!(plain.0, plain.1, "{context}");
            }
        }
    }
    assert!(reused > 200, "{reused}");
}

/// A watched cache tells each new table's filling from 0% to 100% (every percent in
/// between, once, in order, on tables with more than a hundred times the work of their
/// largest range), says nothing of a table it already keeps, and fills the same tables as
/// an unwatched one. The work a percent counts is each range's states times its leaves:
/// without `jeq` candidates, a table of `m` leaves has `m(m+1)(m+2)/6` of it.
#[test]
fn a_watched_cache_tells_each_percent_of_a_new_table_once() {
    let mut rng = Rng::new(11);
    for round in 0..40 {
        let m = 40 + rng.below(60);
        let leaves = random_leaves(&mut rng, m, |rng| Cost([rng.below(50) as f64, 1.0]));
        let hot = random_hot(&mut rng, &leaves);
        let hot = (round % 2 == 0).then_some(hot.as_slice());
        let len = |t: NodeId| 1 + (t as usize * 7) % 4;
        let tuning = [Tuning::BALANCED, Tuning::SPEED, Tuning::SIZE][round % 3];
        let heard = Rc::new(RefCell::new(Vec::new()));
        let cache = TablesCache::watched(Box::new({
            let heard = Rc::clone(&heard);
            move |fill| heard.borrow_mut().push(fill)
        }));
        let watched = cache.tables(&leaves, hot, &len, 14, &tuning);
        let percents: Vec<u8> = heard.borrow().iter().map(|f| f.percent).collect();
        assert_eq!(percents, (0..=100).collect::<Vec<_>>(), "round {round}");
        for fill in heard.borrow().iter() {
            assert_eq!((fill.ranges, fill.within), (m, 14), "round {round}");
        }
        let plain = watched.plain.as_deref().unwrap_or(&watched);
        assert!(plain.candidates.is_empty());
        assert_eq!(plain.work(), (m * (m + 1) * (m + 2) / 6) as u64);
        // A table it keeps answers without a word.
        let kept = cache.tables(&leaves, hot, &len, 14, &tuning);
        assert!(Rc::ptr_eq(&kept, &watched));
        assert_eq!(heard.borrow().len(), 101, "round {round}");
        let new = BoundedTrees::for_hot(&leaves, hot, &len, 14, &tuning);
        for b in 0..=14 {
            let tree = |t: Option<(Tree, Cost)>| t.map(|t| t.0);
            assert_eq!(tree(watched.best(b)), tree(new.best(b)), "round {round}");
            let plain = (tree(watched.best_plain(b)), tree(new.best_plain(b)));
            assert_eq!(plain.0, plain.1, "round {round}");
        }
    }
}

#[test]
fn bounded_trees_trade_cost_for_the_bound() {
    // The worked example of `BoundedTrees`: by hand, 40 unbounded (paths of 5), 52 within
    // paths of 4, nothing within 3.
    let leaves: Vec<Leaf> = [16.0, 4.0, 1.0, 1.0, 1.0, 1.0]
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let hi = if i == 5 { u32::MAX } else { i as u32 * 10 + 9 };
            leaf(i as u32 * 10, hi, i as u32, w)
        })
        .collect();
    let len = |_: NodeId| 1;
    let tables = BoundedTrees::new(&leaves, &[], &len, 8, &Tuning::BALANCED);
    // (The cost less the price of the tests the program charged: equal up to rounding.)
    let cost = |b| tables.best(b).map(|(_, c)| (c.0[0] * 1e6).round() / 1e6);
    assert_eq!(cost(8), Some(40.0));
    assert_eq!(cost(5), Some(40.0));
    assert_eq!(cost(4), Some(52.0));
    assert_eq!(cost(3), None);
    let (tree, c) = tables.best(4).unwrap();
    assert_eq!(tree.worst_path(&len), 4);
    assert!((tree_cost(&tree, &leaves).0[0] - c.0[0]).abs() < 1e-9);
}

#[test]
fn bounded_trees_are_the_best_of_all_trees_within_each_bound() {
    let mut rng = Rng::new(11);
    let mut nested_wins = 0;
    for round in 0..600 {
        let m = 1 + rng.below(7);
        let mut leaves = random_leaves(&mut rng, m, |rng| Cost([rng.below(10) as f64, 1.0]));
        // Some hot values inside wider leaves, part of their leaf's weight.
        let mut hot = Vec::new();
        for l in leaves.iter_mut() {
            if l.hi > l.lo && l.hi - l.lo < 10 && rng.chance(1, 2) {
                let w = rng.below(12) as f64;
                l.weight.0[0] += w;
                hot.push((
                    l.lo + rng.below((l.hi - l.lo) as usize + 1) as u32,
                    Cost([w, 0.0]),
                ));
            }
        }
        // Bodies of 1 to 4 instructions, fixed per target.
        let len = |t: NodeId| 1 + (t as usize * 7) % 4;
        let tables = BoundedTrees::new(&leaves, &hot, &len, 12, &Tuning::BALANCED);
        let (price, test) = (tables.jeq_price.0[0], tables.test_price.0[0]);
        let all = all_trees(
            &leaves,
            (&tables.candidates, price, test),
            &len,
            (0, m - 1, 0),
        );
        let plain = all_trees(&leaves, (&[], 0.0, 0.0), &len, (0, m - 1, 0));
        // The shortest worst path of all trees, from the table and from a table built up
        // to a bound below it (which has no tree to give: `best_tree_within` names it).
        let shortest = all.iter().map(|t| t.1).min().expect("a tree");
        assert_eq!(tables.least_path(), Some(shortest), "round {round}");
        let short = BoundedTrees::new(&leaves, &hot, &len, shortest - 1, &Tuning::BALANCED);
        assert_eq!(short.least_path(), Some(shortest), "round {round}");
        assert!(short.best(shortest - 1).is_none(), "round {round}");
        for b in 0..=12 {
            let context = format!("round {round}, bound {b}: {leaves:?} {hot:?}");
            // The program's objective: the cost plus the price of each candidate's `jeq`
            // and of every test (`SIZE_PRICE`).
            let brute = cheapest_within(&all, b);
            let exact = tables.best(b);
            // (Sums of prices in another order: equal up to rounding.)
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
            let objective = tables.cost[tables.state(0, m - 1, 0) * 13 + b].0[0];
            assert_eq!(objective.is_finite(), brute.is_some(), "{context}");
            assert_eq!(exact.is_some(), brute.is_some(), "{context}");
            if let Some(brute) = brute {
                assert!(close(objective, brute), "{context}: {objective} {brute}");
            }
            if let Some((tree, c)) = exact {
                assert!(tree.worst_path(&len) <= b, "{context}");
                let walked = cost_with_hot(&tree, &leaves, &hot).0[0];
                assert!(close(walked, c.0[0]), "{context}: {walked} {}", c.0[0]);
                for l in &leaves {
                    for v in [l.lo, l.hi, l.lo.saturating_add(1).min(l.hi)] {
                        assert_eq!(tree.target_of(v), l.target, "{context}: value {v}");
                    }
                }
                for &(v, _) in &hot {
                    let l = leaves[leaves.partition_point(|l| l.hi < v)];
                    assert_eq!(tree.target_of(v), l.target, "{context}: value {v}");
                }
                if cheapest_within(&plain, b).is_none_or(|p| c.0[0] < p - 1e-9) {
                    nested_wins += 1;
                }
            }
        }
    }
    // The wider class paid off on some bounds (the brute force has both classes).
    assert!(nested_wins > 100, "{nested_wins}");
}

#[test]
fn a_jeq_inside_the_tree_merges_its_neighbours() {
    // The example of `BoundedTrees`: leaves A₈ B₂ C₁ s₄ C₁ (weights as subscripts), `s` a
    // single value, one-instruction bodies.
    // - Without `jeq` inside the tree, the best costs 30: `jge B` first (A at depth 1:
    //   8), then on the right `jge C` (B at depth 2: 4), then the exception chain C s C
    //   (s and both C at depth 3: 12 + 6). Testing `s` first of all instead costs 32:
    //   s at 1, A at 2 (16), B and the merged C leaf at 3 (12).
    // - With it, 28: `jge B` first, then `jeq s` (s at depth 2: 8); the two C leaves are
    //   now one, and `jge C` separates it from B (both at depth 3: 6 + 6).
    let leaves = [
        leaf(0, 9, 1, 8.0),
        leaf(10, 19, 2, 2.0),
        leaf(20, 29, 3, 1.0),
        leaf(30, 30, 4, 4.0),
        leaf(31, u32::MAX, 3, 1.0),
    ];
    let len = |_: NodeId| 1;
    let (_, split_and_chains) = optimal_tree_exhaustive(&leaves, true);
    assert_eq!(split_and_chains.0[0], 30.0);
    let (tree, cost) = BoundedTrees::new(&leaves, &[], &len, 10, &Tuning::BALANCED)
        .best(10)
        .unwrap();
    assert_eq!(cost.0[0], 28.0);
    assert_eq!(
        tree,
        Tree::Split {
            at: 10,
            lo: Box::new(Tree::Leaf(1)),
            hi: Box::new(Tree::Chain {
                tests: vec![(30, 4)],
                rest: Box::new(Tree::Split {
                    at: 20,
                    lo: Box::new(Tree::Leaf(2)),
                    hi: Box::new(Tree::Leaf(3)),
                }),
            }),
        }
    );
    // The dispatch of a measured workload finds it.
    let (tree, _) = best_tree_bounded(&leaves, &[], &len, false, &Tuning::BALANCED);
    assert_eq!(tree_cost(&tree, &leaves).0[0], 28.0);
}

#[test]
fn of_two_trees_within_the_size_price_the_smaller_wins() {
    // Leaves X₃₀₀ s₁ X₃₀₀ t₂₀₀ X₄₀₀ u₄₀₀ (weights as subscripts; s, t single values, X one
    // target), one-instruction bodies, 1601 calls: each test is priced 1.601.
    // - The cheapest tree costs 3802 in 4 tests (found by the brute force below).
    // - `jge u` (u: 400), then the chain `jeq t`, `jeq s` over X s X t X (t: 2 · 200,
    //   s: 3 · 1, the X's 3 · 1000) costs 3803 in 3 tests.
    // One test less is worth 1.601 > 1: the program takes the second.
    let leaves = [
        leaf(0, 9, 0, 300.0),
        leaf(10, 10, 1, 1.0),
        leaf(11, 19, 0, 300.0),
        leaf(20, 20, 2, 200.0),
        leaf(21, 29, 0, 400.0),
        leaf(30, u32::MAX, 3, 400.0),
    ];
    let len = |_: NodeId| 1;
    let unpriced = all_trees(&leaves, (&[], 0.0, 0.0), &len, (0, 5, 0));
    assert_eq!(cheapest_within(&unpriced, 8), Some(3802.0));
    let (tree, cost) = BoundedTrees::new(&leaves, &[], &len, 8, &Tuning::BALANCED)
        .best(8)
        .unwrap();
    assert_eq!(tree.tests(), 3);
    assert!((cost.0[0] - 3803.0).abs() < 1e-9, "{cost:?}");
    assert_eq!(tree_cost(&tree, &leaves).0[0], 3803.0);
}

#[test]
fn a_jeq_that_adds_a_test_is_taken_when_it_pays_for_it() {
    // Leaves A₁ (0..=2) B₃₀ (3..=9) C₂ (10..), 33 calls, 28 of them of the value 5 in B.
    // - Without a `jeq` the best is 64 in 2 tests: `jge 10` (C at depth 1: 2), then
    //   `jge 3` (A and B at 2: 62). No exception chain applies: no leaf is one value.
    // - With `jeq 5` first, 41 in 3 tests: 5 at depth 1 (28), then `jge 10` (C at 2: 4)
    //   and `jge 3` (A and B's other 2 calls at 3: 9). One test more saves 23 tests per
    //   33 calls, 0.7 per call: more than `TEST_PRICE`.
    let leaves = [
        leaf(0, 2, 0, 1.0),
        leaf(3, 9, 1, 30.0),
        leaf(10, u32::MAX, 2, 2.0),
    ];
    let hot = [(5, Cost([28.0, 0.0]))];
    let len = |_: NodeId| 1;
    let (_, split_and_chains) = optimal_tree_exhaustive(&leaves, true);
    assert_eq!(split_and_chains.0[0], 64.0);
    let tables = BoundedTrees::new(&leaves, &[], &len, 8, &Tuning::BALANCED);
    let (plain, plain_cost) = tables.best_plain(8).unwrap();
    assert_eq!((plain_cost.0[0], plain.tests()), (64.0, 2));
    let nested = Tree::Chain {
        tests: vec![(5, 1)],
        rest: Box::new(Tree::Split {
            at: 10,
            lo: Box::new(Tree::Split {
                at: 3,
                lo: Box::new(Tree::Leaf(0)),
                hi: Box::new(Tree::Leaf(1)),
            }),
            hi: Box::new(Tree::Leaf(2)),
        }),
    };
    let (tree, cost) = best_tree_bounded(&leaves, &hot, &len, false, &Tuning::BALANCED);
    assert_eq!((cost.0[0], tree.tests()), (41.0, 3));
    assert_eq!(tree, nested);
    // The rule at its edge: a test added must save 0.05 · 33 = 1.65 tests.
    let with_cost = |t: &Tree, c: f64| (t.clone(), Cost([c, 0.0]));
    let p = with_cost(&plain, 64.0);
    // (candidate, its cost, whether it replaces `p`). With no test added, cheaper is
    // enough, and dearer never is.
    for (candidate, cost, pays) in [
        (&nested, 62.3, true),
        (&nested, 62.4, false),
        (&plain, 63.9, true),
        (&plain, 64.1, false),
    ] {
        let n = with_cost(candidate, cost);
        assert_eq!(
            pays_for_its_tests(&n, &p, &leaves, TEST_PRICE),
            pays,
            "{cost}"
        );
    }
}

#[test]
fn candidates_over_the_table_budget_go_lowest_ranked_first() {
    // The hot value 5 weighs 10 but its leaf 19: tested alone it leaves 9 calls one test
    // further down (rank 2·10 − 19 = 1). The single-value leaf 10 weighs 5 (rank 5). Both
    // make 15 states; with 5000 bounds per state only one fits in the budget, and the
    // lighter but better-ranked leaf stays.
    let leaves = [
        leaf(0, 9, 0, 19.0),
        leaf(10, 10, 1, 5.0),
        leaf(11, u32::MAX, 2, 1.0),
    ];
    let hot = [(5, Cost([10.0, 0.0]))];
    let values = |bounds: usize| -> Vec<u32> {
        jeq_candidates(&leaves, &hot, bounds, &Tuning::BALANCED)
            .iter()
            .map(|c| c.value)
            .collect()
    };
    assert_eq!(values(1), vec![5, 10]);
    assert_eq!(
        states(3, &jeq_candidates(&leaves, &hot, 1, &Tuning::BALANCED)),
        15
    );
    const { assert!(15 * 5000 > JEQ_TABLE_BUDGET && 10 * 5000 <= JEQ_TABLE_BUDGET) };
    assert_eq!(values(5000), vec![10]);
}

#[test]
fn a_hot_value_ranks_against_its_leaf_less_the_heavier_hot_values() {
    // One allowed range of 19 calls: 10 to value 3, 6 to value 7, 3 to the rest. Value 3
    // ranks 2·10 − 19 = 1. Against the whole range 7 would rank 2·6 − 19 < 0; once 3 is
    // tested, 9 calls are left, and it ranks 2·6 − 9 = 3 (the way nanosleep shares
    // futex's range in gVisor's aarch64 mix).
    let leaves = [leaf(0, 9, 0, 19.0), leaf(10, u32::MAX, 1, 1.0)];
    let hot = [(3, Cost([10.0, 0.0])), (7, Cost([6.0, 0.0]))];
    let ranked: Vec<(u32, f64)> = jeq_candidates(&leaves, &hot, 1, &Tuning::BALANCED)
        .iter()
        .map(|c| (c.value, c.rank))
        .collect();
    assert_eq!(ranked, vec![(3, 1.0), (7, 3.0)]);
    // As many calls each (8, rest 3): the lower number counts as the heavier, so 3 ranks
    // 16 − 19 < 0 and is left out, 7 ranks 16 − 11 = 5.
    let even = [(3, Cost([8.0, 0.0])), (7, Cost([8.0, 0.0]))];
    let ranked: Vec<(u32, f64)> = jeq_candidates(&leaves, &even, 1, &Tuning::BALANCED)
        .iter()
        .map(|c| (c.value, c.rank))
        .collect();
    assert_eq!(ranked, vec![(7, 5.0)]);
}
