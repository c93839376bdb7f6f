//! The unbounded optimal tree of one dispatch: Knuth's dynamic program over range splits and
//! exception chains ([`split_or_chain_tree`]), Garsia and Wachs's cost of the pure split tree
//! that decides whether a second table is needed, the exhaustive program the tests compare
//! against, and the divided tree for value sets too long for either.

use super::chains::{exception_chains, may_chain_somewhere, Chains};
use super::*;

/// The cheaper of the exact optimal split tree and the tree that may also use exception
/// chains (searched within Knuth's bounds, which are exact only for pure split trees, so the
/// exact split tree is kept when it is better).
///
/// The chain table is filled first. The split table is filled only when the optimal split
/// tree could be the cheaper: its cost, found without the table by [`optimal_split_cost`]
/// (Garsia and Wachs), is compared first. On Docker's default profile the chain trees are
/// 3–5% cheaper on every arch, so each dispatch fills one table instead of two; the result
/// is the same either way (a margin far above rounding keeps near-ties on the table's side).
pub(super) fn split_or_chain_tree(leaves: &[Leaf], tuning: &Tuning) -> (Tree, Cost) {
    if leaves.len() > EXACT_MAX_LEAVES {
        return divided_tree(leaves, tuning);
    }
    let program = SplitProgram::new(
        leaves,
        leaves.len() > KNUTH_MIN_LEAVES,
        tuning,
        may_chain_somewhere(leaves),
    );
    if !program.may_chain() {
        return program.solve(false);
    }
    let (tc, cc) = program.solve(true);
    // Garsia and Wachs need finite weights of at least zero. The optimizer's are (`take_value`
    // clamps at zero), but `best_tree`'s library callers may pass any: then both tables decide.
    let weighable = leaves
        .iter()
        .all(|l| l.weight.0.iter().all(|w| w.is_finite() && *w >= 0.0));
    if weighable {
        // As the table prices it: every split tree of m leaves has m - 1 tests.
        let split_cost =
            optimal_split_cost(leaves) + program.test_price * (leaves.len() - 1) as f64;
        if cc.0[0] < split_cost.0[0] * (1.0 - SPLIT_COST_MARGIN) {
            return (tc, cc);
        }
    }
    let (ts, cs) = program.solve(false);
    if cc.lt(&cs) {
        (tc, cc)
    } else {
        (ts, cs)
    }
}

/// How far below [`optimal_split_cost`] (relatively) the chain tree's cost must be for
/// [`split_or_chain_tree`] to skip the split table: the two sum the same weights in different
/// orders, so they may differ in the last bits (about 1e-16 relatively), never by this much.
const SPLIT_COST_MARGIN: f64 = 1e-9;

/// The cost (Σ weight × depth) of the optimal split tree of `leaves`, without building it:
/// the first phase of the Garsia–Wachs algorithm (Knuth, TAOCP vol. 3, §6.2.2). The leaves'
/// weights are merged pairwise: each time the leftmost adjacent pair whose left member weighs
/// at most the weight after the pair (infinite past the end), the merged weight moved left to
/// just after the nearest weight at least as heavy (or to the front). The tree of merges is
/// not alphabetic, but some optimal alphabetic tree has the same leaf depths, and the sum of
/// the merged weights is its cost. Quadratic in the leaves with a small constant, where the
/// split table is quadratic in cells.
///
/// Worked example: weights 3 1 1 3. The leftmost pair whose left member weighs at most the
/// weight after the pair is (1, 1) (1 ≤ 3); merged to 2, it stays in place (3 ≥ 2): 3 2 3,
/// cost 2. Then (3, 2) (3 ≤ 3) merges to 5 and moves to the front: 5 3, cost 7. Last (5, 3):
/// 8, cost 15: the tree `((3 | (1 | 1)) | 3)`, depths 2 3 3 1, where the balanced tree costs
/// 16.
pub(super) fn optimal_split_cost(leaves: &[Leaf]) -> Cost {
    let mut seq: Vec<Cost> = leaves.iter().map(|l| l.weight).collect();
    let mut total = Cost::ZERO;
    while seq.len() > 1 {
        let n = seq.len();
        let p = (0..n - 1)
            .find(|&p| p + 2 == n || !seq[p + 2].lt(&seq[p]))
            .unwrap_or(n - 2);
        let merged = seq[p] + seq[p + 1];
        total = total + merged;
        seq.drain(p..p + 2);
        let at = seq[..p]
            .iter()
            .rposition(|w| !w.lt(&merged))
            .map_or(0, |q| q + 1);
        seq.insert(at, merged);
    }
    total
}

/// Most leaves [`split_or_chain_tree`] runs its dynamic program on. Its tables grow as the
/// square of the leaves (20 bytes a cell; two tables then, filled one after the other in the
/// same space since the fifty-second session): a value set of 3 000 `ioctl` requests
/// (6 001 leaves) took 0.7 GB and 1.8 s of a 2.2 s compile (`/usr/bin/time` and `perf
/// record` of `secopt compile --no-verify` on a random 3 000-request profile, one run). No
/// syscall dispatch comes near it (a class has at most a few hundred ranges; the 48 outputs of
/// `cargo bench --bench compare` are the same at 512 and without a limit); value sets of more
/// than 256 values do.
/// At 1 024 the 3 000 requests compiled (`--no-verify`) in 0.34 s and 24 MB, at 512 in 0.23 s
/// and 16 MB, to the same programs (also for 1 500 requests).
pub(super) const EXACT_MAX_LEAVES: usize = 512;

/// Dispatches of at most this many leaves skip Knuth's bounds: with exception chains the
/// bounds are a heuristic, and the full program (O(n³): 44 000 cells' splits at 64 leaves) is
/// exact and cheap there. Firecracker's vCPU thread (dispatches of 33–44 leaves, solved 26
/// times by the hot-chain search) lost 0.7% of its cost to the bounds once chains could hold
/// neighbouring single values (7.71 → 7.76 instructions per call, default weights); without
/// them it keeps 7.71. Docker's dispatches (121 and 163 leaves) keep the bounds.
pub(super) const KNUTH_MIN_LEAVES: usize = 64;

/// [`split_or_chain_tree`] for more than [`EXACT_MAX_LEAVES`] leaves: a split at the
/// leaves' weighted median (by count when they weigh nothing), each half laid out the same
/// way, down to halves the dynamic program takes. Not optimal, but within a test or so of it
/// on the long value sets this is for, whose leaves weigh about the same. The cost is
/// [`tree_cost`] (plus the price of every test with [`Tuning::size_first`], as the program
/// charges it).
///
/// Worked example: 3 000 requests make 6 001 leaves (values and the gaps between them). The
/// first split puts leaves 0..3000 below `jge #leaves[3000].lo` and the rest above; each half
/// of ~3 000 is split again, and so on down to sixteen parts of ~375 leaves that the program
/// lays out exactly (1.1 M cells a table in all, against 18 M for the whole set).
fn divided_tree(leaves: &[Leaf], tuning: &Tuning) -> (Tree, Cost) {
    let total = leaves.iter().fold(Cost::ZERO, |s, l| s + l.weight);
    let component = if total.0[0] > 0.0 {
        Some(0)
    } else if total.0[1] > 0.0 {
        Some(1)
    } else {
        None
    };
    let m = leaves.len();
    let mut k = m / 2;
    if let Some(c) = component {
        let mut best = f64::INFINITY;
        let mut below = 0.0;
        for (i, leaf) in leaves.iter().enumerate().take(m - 1) {
            below += leaf.weight.0[c];
            let imbalance = (2.0 * below - total.0[c]).abs();
            if imbalance < best {
                best = imbalance;
                k = i + 1;
            }
        }
    }
    let (lo, _) = split_or_chain_tree(&leaves[..k], tuning);
    let (hi, _) = split_or_chain_tree(&leaves[k..], tuning);
    let tree = Tree::Split {
        at: leaves[k].lo,
        lo: Box::new(lo),
        hi: Box::new(hi),
    };
    let mut cost = tree_cost(&tree, leaves);
    if tuning.size_first {
        // The program's price of a test for these leaves (see `optimal_trees`).
        cost = cost + Cost([total.0[0] * m as f64 + 1.0, 0.0]) * tree.tests() as f64;
    }
    (tree, cost)
}

/// Optimal tree of splits (and exception chains with `chains`); with `knuth`, split roots are
/// searched only between the best split roots of the two one-shorter subranges (Knuth 1971:
/// exact for split trees).
pub(super) fn optimal_tree(leaves: &[Leaf], knuth: bool, chains: bool) -> (Tree, Cost) {
    let (split_only, with_chains) = optimal_trees(leaves, knuth, chains, &Tuning::BALANCED);
    with_chains.unwrap_or(split_only)
}

/// The optimal split tree and, with `chains`, the tree that may also use exception chains
/// (both programs share the ranges and their weights).
pub(super) fn optimal_trees(
    leaves: &[Leaf],
    knuth: bool,
    chains: bool,
    tuning: &Tuning,
) -> ((Tree, Cost), Option<(Tree, Cost)>) {
    let program = SplitProgram::new(leaves, knuth, tuning, chains);
    (
        program.solve(false),
        program.may_chain().then(|| program.solve(true)),
    )
}

/// The dynamic program over ranges of `leaves`: what its tables share.
struct SplitProgram<'a> {
    leaves: &'a [Leaf],
    knuth: bool,
    /// `prefix[i]` = Σ weights of `leaves[..i]`.
    prefix: Vec<Cost>,
    /// What each test costs on top of the weights (see [`SplitProgram::new`]).
    test_price: Cost,
    max_exceptions: usize,
    /// The exception chains of the leaves; empty without chains.
    chain_list: Chains,
}

impl<'a> SplitProgram<'a> {
    fn new(leaves: &'a [Leaf], knuth: bool, tuning: &Tuning, chains: bool) -> Self {
        let m = leaves.len();
        let mut prefix = vec![Cost::ZERO; m + 1];
        for i in 0..m {
            prefix[i + 1] = prefix[i] + leaves[i].weight;
        }
        // With `size_first`, a price per test above any tree's weighted cost (every leaf is at
        // depth below m): a tree with fewer tests always wins, the weights break ties. Adding
        // the same amount to every range keeps Knuth's bounds exact (it cancels in the
        // quadrangle inequality).
        let test_price = if tuning.size_first {
            Cost([prefix[m].0[0] * m as f64 + 1.0, 0.0])
        } else {
            Cost::ZERO
        };
        let max_exceptions = tuning.max_exceptions;
        let chain_list = if chains && m > 0 {
            exception_chains(leaves, max_exceptions, test_price)
        } else {
            Chains::default()
        };
        SplitProgram {
            leaves,
            knuth,
            prefix,
            test_price,
            max_exceptions,
            chain_list,
        }
    }

    /// Whether the program may use exception chains.
    fn may_chain(&self) -> bool {
        !self.chain_list.is_empty()
    }

    /// The best tree of splits (and, with `chains`, exception chains) and its cost.
    fn solve(&self, chains: bool) -> (Tree, Cost) {
        let (leaves, m) = (self.leaves, self.leaves.len());
        if m == 0 {
            return (Tree::Leaf(0), Cost::ZERO);
        }
        let chains = chains && self.may_chain();
        let (knuth, prefix, test_price) = (self.knuth, &self.prefix, self.test_price);
        let w = |i: usize, j: usize| prefix[j + 1] + prefix[i] * -1.0 + test_price;
        let max_exceptions = self.max_exceptions;
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let Scratch { cost, split } = &mut *scratch;
            // Upper triangle, diagonal by diagonal (diagonal d holds (i, i + d) for every i).
            // The program fills one diagonal at a time, and a cell (i, j) reads (i, k - 1) and
            // (k, j) for a few k near the previous cell's: as i moves to i + 1 those move one
            // cell along their own diagonals, so every read is sequential (a row-major table
            // makes the (k, j) reads one cache miss per cell, most of the program's time).
            let cells = m * (m + 1) / 2;
            // Where diagonal d starts; diagonal d + 1 starts `m - d` cells later.
            let diagonal: Vec<usize> = (0..m)
                .map(|d| d * m - d * (d.saturating_sub(1)) / 2)
                .collect();
            cost.clear();
            cost.resize(cells, Cost::ZERO);
            split.clear();
            split.resize(cells, 0);
            split[..m].iter_mut().zip(0..).for_each(|(s, i)| *s = i);
            let root_of = |s: u32| (s & !CHAIN) as usize;
            for d in 1..m {
                // Diagonals below d are done and only read; d is written.
                let (done, rest) = cost.split_at_mut(diagonal[d]);
                let (split_done, split_rest) = split.split_at_mut(diagonal[d]);
                // The roots of (i, j - 1) and (i + 1, j): cells i and i + 1 of diagonal d - 1.
                let roots = &split_done[diagonal[d - 1]..];
                // A chain spans at most 2 × max_exceptions + 1 leaves.
                let chained = chains && d < 2 * max_exceptions + 1;
                for (i, (out, out_split)) in rest[..m - d]
                    .iter_mut()
                    .zip(&mut split_rest[..m - d])
                    .enumerate()
                {
                    let j = i + d;
                    let (lo_k, hi_k) = if knuth && d > 1 {
                        (root_of(roots[i]).max(i + 1), root_of(roots[i + 1]).min(j))
                    } else {
                        (i + 1, j)
                    };
                    // (i, k - 1) lies on diagonal k - 1 - i at index i, (k, j) on diagonal
                    // j - k at index k; step both along k without looking `diagonal` up.
                    let mut left = diagonal[lo_k - 1 - i] + i;
                    let mut right = diagonal[j - lo_k] + lo_k;
                    let mut best = (done[left] + done[right], lo_k);
                    for k in lo_k + 1..=hi_k {
                        left += m - (k - 2 - i);
                        right = right + 1 - (m - (j - k));
                        let c = done[left] + done[right];
                        if c.lt(&best.0) {
                            best = (c, k);
                        }
                    }
                    let mut c = best.0 + w(i, j);
                    let mut s = best.1 as u32;
                    if chained {
                        if let Some(chain) = self.chain_list.cheapest(i, j) {
                            if chain.cost.lt(&c) {
                                c = chain.cost;
                                s |= CHAIN;
                            }
                        }
                    }
                    *out = c;
                    *out_split = s;
                }
            }
            let choice = |i: usize, j: usize| -> Option<usize> {
                let s = split[diagonal[j - i] + i];
                (s & CHAIN == 0).then_some(s as usize)
            };
            let tree = build(leaves, &self.chain_list, &choice, 0, m - 1);
            (tree, cost[diagonal[m - 1]])
        })
    }
}

/// Marks a range of the dynamic program whose best tree is an exception chain.
pub(super) const CHAIN: u32 = 1 << 31;

/// The dynamic program's table, kept between runs: it is large (a quarter of a megabyte for
/// 150 leaves) and a fresh allocation each time costs page faults.
#[derive(Default)]
struct Scratch {
    cost: Vec<Cost>,
    split: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// The O(n³) dynamic program without Knuth's bounds, with or without exception chains (for
/// tests).
pub fn optimal_tree_exhaustive(leaves: &[Leaf], chains: bool) -> (Tree, Cost) {
    optimal_tree(leaves, false, chains)
}

/// The tree of range `i..=j` from the program's choices (`None`: an exception chain, else
/// the first leaf of the right part of a split).
fn build(
    leaves: &[Leaf],
    chains: &Chains,
    choice: &dyn Fn(usize, usize) -> Option<usize>,
    i: usize,
    j: usize,
) -> Tree {
    if i == j {
        return Tree::Leaf(leaves[i].target);
    }
    match choice(i, j) {
        None => chains.tree(chains.cheapest(i, j).expect("chosen chain"), leaves),
        Some(k) => Tree::Split {
            at: leaves[k].lo,
            lo: Box::new(build(leaves, chains, choice, i, k - 1)),
            hi: Box::new(build(leaves, chains, choice, k, j)),
        },
    }
}
