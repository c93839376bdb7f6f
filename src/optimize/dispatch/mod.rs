//! Dispatch on one input word: the cheapest decision tree that sends every value to its piece's
//! target.
//!
//! The input is a list of *leaves*: sorted ranges covering every value of the word, each with a
//! target node and a weight (how often values of that range are looked up). The tree is built
//! from these kinds of node:
//! - **range split** `jge #k`: values below `k` go left, the others right. A tree of splits
//!   never needs an equality test: once the range is narrowed to one leaf, the value is known to
//!   be in it.
//! - **exception chain** `jeq #s1 → t1; jeq #s2 → t2; …; → X`: a run of leaves each of which
//!   has the target `X` or is a single value (`X s1 X s2 X …`, but also `X s1 s2 X` or
//!   `s1 X s2`) costs one test per single value instead of up to two splits each.
//! - **hot chain** at the root: `jeq #s → t` for the few single values that are looked up so
//!   often that testing them first pays for the extra test every other value then needs; the
//!   tree below no longer has to separate them, so their neighbours may merge.
//! - **`jeq` inside the tree** (only in the exact bounded trees, [`BoundedTrees`]): the same
//!   test for a value heavy within one subtree, at the top of that subtree.
//!
//! Cost of a tree = Σ over leaves of weight × tests on its path. Weights are compared
//! lexicographically ([`Cost`]): first the workload's (the cost model being optimized, with the
//! other one blended in), then a tie-break weight that grows with the length of the leaf's
//! body ([`leaf_balance`]), so among equally good trees the one with the shortest longest path
//! wins. [`best_tree_bounded`] also holds that longest path near the best possible.
//!
//! The split tree is the optimal alphabetic tree of the leaves (Knuth's O(n²) dynamic program
//! for optimal binary search trees with all weight on the leaves: the best root of a range lies
//! between the best roots of its two one-shorter subranges). Exception chains are extra
//! candidates for a range in a second table of the same program; [`optimal_tree_exhaustive`] is
//! the O(n³) version without Knuth's bounds that the tests compare against. Knuth's bounds are
//! exact only without chains, so the pure split tree is the fallback, and its cost alone
//! (Garsia and Wachs's algorithm, `optimal_split_cost`) decides whether its table is needed;
//! dispatches of at most `KNUTH_MIN_LEAVES` leaves run without the bounds, exactly.
//!
//! Where the code is: this file has the cost and tree types and the entry points that hold the
//! worst path near the best ([`best_tree_bounded`], [`best_tree_within`]) and add the hot
//! chain; `split` has the unbounded dynamic program, `chains` the exception chains both
//! programs draw on, `bounded` the exact tables under every bound ([`BoundedTrees`]).

use super::dag::{Dag, NodeId};
use crate::bpf::insn::*;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::ops::{Add, Mul};
use std::rc::Rc;

mod bounded;
mod chains;
mod split;
#[cfg(test)]
mod tests;

pub use bounded::{BoundedTrees, TableFill, TablesCache, EXACT_BOUNDED_MAX_LEAVES, JEQ_MIN_GAIN};
pub use split::optimal_tree_exhaustive;
use split::split_or_chain_tree;

/// A lexicographically ordered cost (or weight): the workload's (the optimized model, with the
/// other model blended in, see [`super::emit::OTHER_MODEL_SHARE`]), then a tie-breaker.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost(pub [f64; 2]);

impl Cost {
    pub const ZERO: Cost = Cost([0.0; 2]);

    /// What is left of a weight once `part` of it is taken out, never below zero: with counts
    /// near 2^53 a sum can absorb a small addend, and subtracting it again went below zero
    /// (a leaf of -16 after taking out 2^60 and 16 from a leaf of fl(2^60 + 16) = 2^60),
    /// which the layout then rewarded for being deep.
    pub fn less(self, part: Cost) -> Cost {
        Cost([
            (self.0[0] - part.0[0]).max(0.0),
            (self.0[1] - part.0[1]).max(0.0),
        ])
    }
}

impl Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost([self.0[0] + o.0[0], self.0[1] + o.0[1]])
    }
}

impl Mul<f64> for Cost {
    type Output = Cost;
    fn mul(self, f: f64) -> Cost {
        Cost([self.0[0] * f, self.0[1] * f])
    }
}

impl PartialOrd for Cost {
    fn partial_cmp(&self, o: &Cost) -> Option<Ordering> {
        Some(self.cmp_total(o))
    }
}

impl Cost {
    /// Total lexicographic order. The optimizer's weights are finite and non-negative; a
    /// library caller's NaN sorts above every number (and equal to another NaN) so that the
    /// order stays total: the standard sorts panic on an order that is not.
    pub fn cmp_total(&self, o: &Cost) -> Ordering {
        for i in 0..2 {
            let (a, b) = (self.0[i], o.0[i]);
            let ord = match a.partial_cmp(&b) {
                Some(ord) => ord,
                None => a.is_nan().cmp(&b.is_nan()),
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }
    #[inline]
    fn lt(&self, o: &Cost) -> bool {
        let (a, b) = (&self.0, &o.0);
        a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])
    }
}

/// A range of values of the dispatched word and where it goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leaf {
    pub lo: u32,
    pub hi: u32,
    pub target: NodeId,
    pub weight: Cost,
}

/// A dispatch tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    Leaf(NodeId),
    /// `jge #at`: `hi` when taken, `lo` otherwise.
    Split {
        at: u32,
        lo: Box<Tree>,
        hi: Box<Tree>,
    },
    /// `jeq #v → target` tests in order, then `rest`.
    Chain {
        tests: Vec<(u32, NodeId)>,
        rest: Box<Tree>,
    },
}

impl Tree {
    /// Number of test instructions.
    pub fn tests(&self) -> usize {
        match self {
            Tree::Leaf(_) => 0,
            Tree::Split { lo, hi, .. } => 1 + lo.tests() + hi.tests(),
            Tree::Chain { tests, rest } => tests.len() + rest.tests(),
        }
    }

    /// Number of tests on the path of `v`.
    pub fn depth_of(&self, v: u32) -> usize {
        match self {
            Tree::Leaf(_) => 0,
            Tree::Split { at, lo, hi } => 1 + if v >= *at { hi } else { lo }.depth_of(v),
            Tree::Chain { tests, rest } => match tests.iter().position(|t| t.0 == v) {
                Some(i) => i + 1,
                None => tests.len() + rest.depth_of(v),
            },
        }
    }

    /// Number of tests on the path of the values of leaf `lo..=hi` that no `jeq` picks out
    /// on the way (a wider leaf's own values may be tested one by one before it).
    pub fn depth_of_leaf(&self, lo: u32, hi: u32) -> usize {
        match self {
            Tree::Leaf(_) => 0,
            Tree::Split { at, lo: l, hi: h } => {
                1 + if lo >= *at { h } else { l }.depth_of_leaf(lo, hi)
            }
            Tree::Chain { tests, rest } => match tests.iter().position(|t| lo == hi && t.0 == lo) {
                Some(i) => i + 1,
                None => tests.len() + rest.depth_of_leaf(lo, hi),
            },
        }
    }

    /// The longest path through the tree and then a leaf's target: max over leaves of
    /// (tests on the way + `len(target)`).
    pub fn worst_path(&self, len: &dyn Fn(NodeId) -> usize) -> usize {
        match self {
            Tree::Leaf(t) => len(*t),
            Tree::Split { lo, hi, .. } => 1 + lo.worst_path(len).max(hi.worst_path(len)),
            Tree::Chain { tests, rest } => {
                let exits = tests
                    .iter()
                    .enumerate()
                    .map(|(i, &(_, t))| i + 1 + len(t))
                    .max()
                    .unwrap_or(0);
                exits.max(tests.len() + rest.worst_path(len))
            }
        }
    }

    /// Most tests on any path.
    pub fn max_depth(&self) -> usize {
        match self {
            Tree::Leaf(_) => 0,
            Tree::Split { lo, hi, .. } => 1 + lo.max_depth().max(hi.max_depth()),
            Tree::Chain { tests, rest } => tests.len().max(tests.len() + rest.max_depth()),
        }
    }

    /// Most tests on the path of any value in `lo..=hi`.
    pub fn max_depth_in(&self, lo: u32, hi: u32) -> usize {
        match self {
            Tree::Leaf(_) => 0,
            Tree::Split { at, lo: l, hi: h } => {
                let below = (lo < *at).then(|| l.max_depth_in(lo, hi.min(at - 1)));
                let above = (hi >= *at).then(|| h.max_depth_in(lo.max(*at), hi));
                1 + below.into_iter().chain(above).max().unwrap_or(0)
            }
            Tree::Chain { tests, rest } => {
                let mut tested: Vec<u32> = tests
                    .iter()
                    .map(|t| t.0)
                    .filter(|v| (lo..=hi).contains(v))
                    .collect();
                let deepest_test = tests
                    .iter()
                    .rposition(|t| (lo..=hi).contains(&t.0))
                    .map_or(0, |i| i + 1);
                tested.sort_unstable();
                tested.dedup();
                // Every value of the range is one of the tests: none reaches `rest`.
                if tested.len() as u64 == u64::from(hi - lo) + 1 {
                    return deepest_test;
                }
                tests.len() + rest.max_depth_in(lo, hi)
            }
        }
    }

    /// The value's target, by walking the tree as the emitted tests would (for tests).
    #[cfg(test)]
    pub(crate) fn target_of(&self, v: u32) -> NodeId {
        match self {
            Tree::Leaf(t) => *t,
            Tree::Split { at, lo, hi } => if v >= *at { hi } else { lo }.target_of(v),
            Tree::Chain { tests, rest } => match tests.iter().find(|t| t.0 == v) {
                Some(t) => t.1,
                None => rest.target_of(v),
            },
        }
    }

    /// The same tree with every target `t` replaced by `f(t)`.
    pub fn map_targets(&self, f: &dyn Fn(NodeId) -> NodeId) -> Tree {
        match self {
            Tree::Leaf(t) => Tree::Leaf(f(*t)),
            Tree::Split { at, lo, hi } => Tree::Split {
                at: *at,
                lo: Box::new(lo.map_targets(f)),
                hi: Box::new(hi.map_targets(f)),
            },
            Tree::Chain { tests, rest } => Tree::Chain {
                tests: tests.iter().map(|&(v, t)| (v, f(t))).collect(),
                rest: Box::new(rest.map_targets(f)),
            },
        }
    }

    /// The `jeq` tests of a hot chain at the root (none for another tree).
    fn root_chain(&self) -> &[(u32, NodeId)] {
        match self {
            Tree::Chain { tests, .. } => tests,
            _ => &[],
        }
    }

    /// The tree as DAG nodes (tests on A, which must hold the dispatched word).
    pub fn emit(&self, dag: &mut Dag) -> NodeId {
        match self {
            Tree::Leaf(t) => *t,
            Tree::Split { at, lo, hi } => {
                let (l, h) = (lo.emit(dag), hi.emit(dag));
                dag.test(Insn::jump(BPF_JMP | BPF_JGE | BPF_K, *at, 0, 0), h, l)
            }
            Tree::Chain { tests, rest } => {
                let mut node = rest.emit(dag);
                for &(v, target) in tests.iter().rev() {
                    node = dag.test(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 0), target, node);
                }
                node
            }
        }
    }
}

/// How many tests beyond the shortest possible worst path a weighted dispatch tree may use.
pub const WORST_PATH_SLACK: usize = 5;

/// Longest exception chain considered inside the tree.
const MAX_EXCEPTIONS: usize = 4;
/// Longest hot chain at the root.
const MAX_HOT: usize = 8;

/// The best tree for `leaves` (sorted, covering the word, neighbours with different targets)
/// and its cost.
pub fn best_tree(leaves: &[Leaf], hot: &[(u32, Cost)]) -> (Tree, Cost) {
    best_tree_tuned(leaves, hot, &Tuning::BALANCED)
}

/// [`best_tree`] with `tuning`'s shape of tree ([`Tuning::size_first`],
/// [`Tuning::max_exceptions`]). With `size_first` the cost returned includes the price of
/// every test; callers that need the weighted cost recompute it ([`best_tree_bounded`] does).
pub(crate) fn best_tree_tuned(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    tuning: &Tuning,
) -> (Tree, Cost) {
    let (tree, cost) = split_or_chain_tree(leaves, tuning);
    if tuning.size_first {
        // A hot chain adds tests.
        return (tree, cost);
    }
    hot_chain(leaves, hot, tree, cost)
}

/// [`best_tree`], with its worst path held near the best possible: heavy weights can push
/// rarely used leaves deep, and the longest path is a promise too. `len(target)` is the
/// longest path of a leaf's target, `h`.
///
/// By Kraft's inequality every tree has `max(depth + h) ≥ log2 Σ 2^h`; the bound used is
/// `⌈log2 Σ 2^h⌉ + 1 + ` [`WORST_PATH_SLACK`] (the slack is for the workload's sake). While the
/// tree exceeds it, every leaf gets a floor weight proportional to its tie-break weight
/// (`2^(h-1)`, see [`leaf_balance`]): 1/64, 1/8, then 1 × the average, which pulls the tree
/// towards the one that balances `depth + h`; in the end that tree (tie-break weights only) is
/// taken. The bound is a target, not a theorem for alphabetic trees (leaves keep their order),
/// hence the unconditional last step. With `balance_from_start` (weights that are not a
/// measured workload) the 1/64 floor is there from the first search.
///
/// The slack is then given back where it buys little. With a measured workload and at most
/// [`EXACT_BOUNDED_MAX_LEAVES`] leaves, `exact_give_back` finds the exact best tree under
/// every bound (behind each prefix of the hot chain) and takes the shortest bound whose tree
/// costs at most [`SLACK_TOLERANCE`] more per call than the best. Otherwise the floored
/// searches are repeated with the bound 1, 2, … tests above the balanced one, and the first
/// tree within the tolerance (and with a shorter worst path) is taken. On small filters a hot
/// syscall tested first can add a test to every other path for a negligible gain; on large
/// allow-lists the slack pays for itself and stays.
pub fn best_tree_bounded(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    len: &dyn Fn(NodeId) -> usize,
    balance_from_start: bool,
    tuning: &Tuning,
) -> (Tree, Cost) {
    if tuning.size_first {
        // The fewest tests whatever the worst path (`--max-path` bounds it where asked). With
        // exception chains Knuth's bounds are a heuristic: the exact trees under a few more
        // tests of worst path than the searched tree's may have fewer tests.
        let (mut tree, _) = best_tree_tuned(leaves, hot, tuning);
        if leaves.len() <= SIZE_EXACT_MAX_LEAVES {
            let bound = tree.worst_path(len) + SIZE_SEARCH_SLACK;
            let exact = BoundedTrees::with_candidates(leaves, Vec::new(), len, bound, tuning);
            if let Some((t, _)) = (0..=bound)
                .filter_map(|b| exact.best(b))
                .min_by_key(|(t, _)| t.tests())
            {
                if t.tests() < tree.tests() {
                    tree = t;
                }
            }
        }
        let cost = cost_with_hot(&tree, leaves, hot);
        return (tree, cost);
    }
    let kraft: f64 = leaves.iter().map(|l| (len(l.target) as f64).exp2()).sum();
    let balanced_bound = kraft.log2().ceil() as usize + 1;
    let search = |bound: usize| search_within(leaves, hot, len, balance_from_start, bound);
    let limit = balanced_bound + WORST_PATH_SLACK;
    let (tree, cost) = search(limit);
    if !balance_from_start && leaves.len() <= EXACT_BOUNDED_MAX_LEAVES {
        return exact_give_back(leaves, hot, len, (tree, cost), limit, tuning);
    }
    // Without a measured workload the repeated searches are only worth their time on small
    // dispatches (the DP is quadratic in the leaves; Docker's x86_64 has 163).
    if balance_from_start && leaves.len() > GIVE_BACK_MAX_LEAVES_WITHOUT_WORKLOAD {
        return (tree, cost);
    }
    let worst = tree.worst_path(len);
    for bound in balanced_bound + 1..worst.min(balanced_bound + WORST_PATH_SLACK) {
        let (t, c) = search(bound);
        let tolerance = if balance_from_start {
            SLACK_TOLERANCE_WITHOUT_WORKLOAD
        } else {
            tuning.slack_tolerance
        };
        if t.worst_path(len) < worst && within_tolerance(c, cost, leaves, tolerance) {
            return (t, c);
        }
    }
    (tree, cost)
}

/// With the default weights the floored searches of [`best_tree_bounded`] weigh cost against
/// the worst path by a heuristic (the exact tables of `exact_give_back` are kept for measured
/// workloads), and may keep a tree that an exact bounded tree ([`BoundedTrees`], splits and
/// exception chains) beats on everything at once: no costlier, no longer worst path, no more
/// tests, and better in one. Of those trees, the one of the shortest worst path that costs at
/// most [`SLACK_TOLERANCE_WITHOUT_WORKLOAD`] more than the cheapest of them (the give-back's
/// rule), then the smallest, then the cheapest. `None` when there is none, and on dispatches
/// of more than [`GIVE_BACK_MAX_LEAVES_WITHOUT_WORKLOAD`] leaves, as for the give-back: the
/// tables are cubic in the leaves (about 10 ms for the 121 of Docker's x86 dispatch, several
/// times the whole compilation).
///
/// Fewer tests need not mean a smaller program (the layout may add a `ja` to reach a shared
/// continuation), so the emitter uses it only when asked
/// ([`super::emit::EmitOptions::exact_dominance`]) and `optimize` keeps that layout only
/// where the whole program dominates the one without.
///
/// Worked example (test
/// `optimize_cli::the_default_layout_is_not_beaten_on_every_count_by_a_bounded_one`): an
/// allow-list of 48 names on aarch64 without a workload. The searched dispatch (77 leaves)
/// has 66 tests, a worst path of 10 and a weighted cost of 191 625; the exact tree within 9
/// also has 66 tests and costs 191 600. It is taken: the filter keeps its 72 instructions and
/// its cost with the cache (7.911 per syscall), and goes from a worst path of 13 to 12 and
/// from 9.512 to 9.509 instructions per syscall without the cache: what `--max-path 12` gave
/// before.
pub fn dominating_tree(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    len: &dyn Fn(NodeId) -> usize,
    tuning: &Tuning,
    found: &(Tree, Cost),
) -> Option<(Tree, Cost)> {
    if leaves.len() > GIVE_BACK_MAX_LEAVES_WITHOUT_WORKLOAD {
        return None;
    }
    let worst = found.0.worst_path(len);
    let tests = found.0.tests();
    let cost = cost_with_hot(&found.0, leaves, hot).0[0];
    // A rounding margin: costs are sums of weights over different orders.
    let eps = 1e-9 * cost.abs().max(1.0);
    let mut better: Vec<(Tree, Cost)> = Vec::new();
    let tables = BoundedTrees::with_candidates(leaves, Vec::new(), len, worst, tuning);
    for b in 1..=worst {
        if let Some((tree, _)) = tables.best(b) {
            let c = cost_with_hot(&tree, leaves, hot);
            let (w, n) = (tree.worst_path(len), tree.tests());
            let no_worse = c.0[0] <= cost + eps && w <= worst && n <= tests;
            if no_worse && (c.0[0] < cost - eps || w < worst || n < tests) {
                better.push((tree, c));
            }
        }
    }
    let cheapest = better.iter().map(|t| t.1).min_by(|a, b| a.cmp_total(b))?;
    better
        .into_iter()
        .filter(|t| within_tolerance(t.1, cheapest, leaves, SLACK_TOLERANCE_WITHOUT_WORKLOAD))
        .min_by(|a, b| {
            (a.0.worst_path(len), a.0.tests())
                .cmp(&(b.0.worst_path(len), b.0.tests()))
                .then(a.1.cmp_total(&b.1))
        })
}

/// [`best_tree_bounded`] with a measured workload on a dispatch small enough for
/// [`BoundedTrees`]: for every bound on the longest path up to `limit` (or that of `found`,
/// the searched tree, if longer), the exact best tree under it — behind each prefix of
/// `found`'s hot chain (the chain's tests come first, so the tree below gets the bound less
/// the prefix). Then the shortest bound whose best costs at most [`SLACK_TOLERANCE`] more
/// than the best of all.
///
/// That choice is made twice: among the trees of splits and exception chains, and among
/// those that may also test values with `jeq` inside the tree (whose best may lie beyond
/// `found`'s longest path, as the searched tree has no such tests). The second is taken only
/// where it is cheaper and has no more tests: each such test is an instruction, and the size
/// of the filter is a promise too (docs/optimizer.md §8).
fn exact_give_back(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    len: &dyn Fn(NodeId) -> usize,
    found: (Tree, Cost),
    limit: usize,
    tuning: &Tuning,
) -> (Tree, Cost) {
    let worst = found.0.worst_path(len).max(limit);
    let chain: Vec<(u32, NodeId)> = found.0.root_chain().to_vec();
    // Per class (without, with `jeq` inside) and bound b: the cheapest tree whose longest path
    // is b.
    let mut best: [Vec<Option<(Tree, Cost)>>; 2] = [vec![None; worst + 1], vec![None; worst + 1]];
    let consider = |tree: Tree, best: &mut Vec<Option<(Tree, Cost)>>| {
        let w = tree.worst_path(len);
        if w > worst {
            return;
        }
        let cost = cost_with_hot(&tree, leaves, hot);
        if best[w].as_ref().is_none_or(|b| cost.lt(&b.1)) {
            best[w] = Some((tree, cost));
        }
    };
    for class in best.iter_mut() {
        consider(found.0.clone(), class);
    }
    behind_each_chain_prefix(
        leaves,
        hot,
        (len, tuning),
        &chain,
        (worst, worst),
        None,
        |tables, r, with_chain| {
            for b in 1..=worst - r {
                if let Some((rest, _)) = tables.best_plain(b) {
                    consider(with_chain(rest), &mut best[0]);
                }
                if let Some((rest, _)) = tables.best(b) {
                    consider(with_chain(rest), &mut best[1]);
                }
            }
        },
    );
    let tolerance = tuning.slack_tolerance;
    let [plain, nested] = best.map(|class| shortest_within_tolerance(class, leaves, tolerance));
    match (plain, nested) {
        (Some(p), Some(n)) if pays_for_its_tests(&n, &p, leaves, tuning.test_price) => n,
        (Some(p), _) => p,
        (None, n) => n.unwrap_or(found),
    }
}

/// Whether `nested` (a tree that may test values with `jeq` inside) should replace `plain`
/// (splits and exception chains only): it must be cheaper, and save at least [`TEST_PRICE`]
/// instructions per call for each test it adds (per unit of weight, as in
/// `within_tolerance`: a call of the cost model optimized for, the other model's at 1/4).
///
/// Firecracker's API thread under the `common` probe list (8 calls): one more test brings the
/// dispatch from 24.75 to 22.5 tests per 8 calls, 0.28 per call: taken. seccompagent's
/// filter on aarch64 under nginx's workload: two more tests save 0.047 per call (0.023 each),
/// and would make the filter larger than libseccomp's linear one: left.
fn pays_for_its_tests(
    nested: &(Tree, Cost),
    plain: &(Tree, Cost),
    leaves: &[Leaf],
    test_price: f64,
) -> bool {
    let calls: f64 = leaves.iter().map(|l| l.weight.0[0]).sum();
    let added = nested.0.tests().saturating_sub(plain.0.tests()) as f64;
    nested.1.lt(&plain.1) && plain.1 .0[0] - nested.1 .0[0] >= test_price * added * calls
}

/// What a test added to the dispatch must save, in instructions per call, for
/// `pays_for_its_tests`: the exchange rate between the filter's size and its speed. One
/// instruction of size is worth 1/20 of an instruction on every call.
///
/// Measured on the comparison bench (`cargo bench --bench compare`, 48 rows), against the
/// rule before it (no test added at all): at 0.03 and 0.05 one row changes, Firecracker's API
/// thread without the cache (7.625 → 7.375 instructions per call, 65 → 66 instructions). At
/// 0.01 (the [`JEQ_MIN_GAIN`] of a single `jeq`) two more: seccompagent's filter on aarch64
/// under nginx grows from 42 to 44 instructions (above libseccomp's linear 43) for 5.692 →
/// 5.645, and Firecracker's vCPU thread from 88 to 90 for 7.225 → 7.135 without the cache.
/// (Measured before `jeq_candidates` ranked a hot value against its range less the heavier
/// ones. Since then seccompagent·gvisor on aarch64 also takes one test more, for 0.052 per
/// call: 6.055 → 6.003, 41 → 42 instructions; a price above 0.052 would refuse it.)
pub const TEST_PRICE: f64 = 0.05;

/// Of the cheapest trees of each longest path (`best[b]`), the one of the shortest bound whose
/// best costs at most [`SLACK_TOLERANCE`] more than the best of all.
fn shortest_within_tolerance(
    best: Vec<Option<(Tree, Cost)>>,
    leaves: &[Leaf],
    tolerance: f64,
) -> Option<(Tree, Cost)> {
    // Best so far at each bound (a tree within b is within every larger bound).
    let mut running: Option<(Tree, Cost)> = None;
    let mut by_bound: Vec<(Tree, Cost)> = Vec::with_capacity(best.len());
    for t in best.into_iter().flatten() {
        if running.as_ref().is_none_or(|r| t.1.lt(&r.1)) {
            running = Some(t);
            by_bound.push(running.clone().expect("just set"));
        }
    }
    let overall = running?;
    by_bound
        .into_iter()
        .find(|t| within_tolerance(t.1, overall.1, leaves, tolerance))
        .or(Some(overall))
}

/// [`best_tree_bounded`] held to `bound` on the longest path (`max(depth + len(target))`),
/// for a caller that promises a worst case (`--max-path`): a limit, not a new objective. That
/// tree when it fits; otherwise the cheapest tree within `bound` among the exact bounded
/// trees of [`BoundedTrees`] behind each prefix of its hot chain (on any number of leaves:
/// the cubic program is the price of the promise; docs/optimizer.md times it on Docker).
///
/// `Err(shortest)` when none of these trees fits: `shortest` is the least worst path one of
/// them reaches.
pub fn best_tree_within(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    len: &dyn Fn(NodeId) -> usize,
    balance_from_start: bool,
    tuning: &Tuning,
    bound: usize,
    cache: Option<&TablesCache>,
) -> Result<(Tree, Cost), usize> {
    let found = best_tree_bounded(leaves, hot, len, balance_from_start, tuning);
    let found_worst = found.0.worst_path(len);
    if found_worst <= bound {
        return Ok(found);
    }
    let chain = found.0.root_chain().to_vec();
    // The cheapest tree within the bound without and with `jeq` tests inside.
    let mut best: [Option<(Tree, Cost)>; 2] = [None, None];
    let mut shortest = found_worst;
    // One table per prefix (up to the searched tree's worst path), built up to the bound:
    // it answers the bound, and its least path the shortest worst path when nothing fits.
    behind_each_chain_prefix(
        leaves,
        hot,
        (len, tuning),
        &chain,
        (found_worst, bound),
        cache,
        |tables, r, with_chain| {
            let within = |b: usize| [tables.best_plain(b), tables.best(b)];
            for (class, rest) in bound
                .checked_sub(r)
                .map(within)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let Some((rest, _)) = rest else { continue };
                let tree = with_chain(rest);
                if tree.worst_path(len) <= bound {
                    let cost = cost_with_hot(&tree, leaves, hot);
                    if best[class].as_ref().is_none_or(|b| cost.lt(&b.1)) {
                        best[class] = Some((tree, cost));
                    }
                }
            }
            if best[1].is_none() {
                if let Some(least) = tables.least_path() {
                    // The prefix's tests exit on the way, and the rest starts below them.
                    let exits = chain[..r]
                        .iter()
                        .enumerate()
                        .map(|(p, &(_, t))| p + 1 + len(t));
                    shortest = shortest.min(exits.max().unwrap_or(0).max(r + least));
                }
            }
        },
    );
    // As in `exact_give_back`: `jeq` tests inside only where they pay for their size (or
    // where nothing else fits).
    match best {
        [Some(p), Some(n)] if pays_for_its_tests(&n, &p, leaves, tuning.test_price) => Ok(n),
        [Some(p), _] => Ok(p),
        [None, n] => n.ok_or(shortest),
    }
}

/// Runs `visit` behind each prefix of `chain` (a hot chain at the root, tested first), up to
/// `longest` tests of it: on the exact bounded trees of the leaves left once the prefix's
/// values are tested (bounds up to `worst` less the prefix), with the prefix's length `r` and
/// a function that puts the prefix in front of one of those trees.
fn behind_each_chain_prefix(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    (len, tuning): (&dyn Fn(NodeId) -> usize, &Tuning),
    chain: &[(u32, NodeId)],
    (longest, worst): (usize, usize),
    cache: Option<&TablesCache>,
    mut visit: impl FnMut(&BoundedTrees, usize, &dyn Fn(Tree) -> Tree),
) {
    let mut reduced = leaves.to_vec();
    let mut hot_left = hot.to_vec();
    for r in 0..=chain.len().min(longest) {
        if r > 0 {
            let v = chain[r - 1].0;
            let w = hot.iter().find(|h| h.0 == v).map_or(Cost::ZERO, |h| h.1);
            reduced = take_value(&reduced, v, w);
            hot_left.retain(|h| h.0 != v);
        }
        let bound = worst.saturating_sub(r);
        // `jeq` tests inside the tree may come first too: the class behind the empty prefix
        // holds the others' trees with `jeq` tests.
        let hot = (r == 0).then_some(hot_left.as_slice());
        let tables = match cache {
            Some(cache) => cache.tables(&reduced, hot, len, bound, tuning),
            None => Rc::new(BoundedTrees::for_hot(&reduced, hot, len, bound, tuning)),
        };
        let with_chain = |rest: Tree| {
            if r == 0 {
                rest
            } else {
                Tree::Chain {
                    tests: chain[..r].to_vec(),
                    rest: Box::new(rest),
                }
            }
        };
        visit(&tables, r, &with_chain);
    }
}

/// What [`BoundedTrees`] charges every test of the dispatch, in instructions per call: of two
/// trees within a thousandth of an instruction per call per test, the smaller wins.
///
/// Without it the program had no size term, and among trees of (nearly) equal cost kept
/// whichever it met first. Measured on the comparison bench (`cargo bench --bench compare`,
/// 96 outputs), against no price: at 0.001, 62 instructions fewer in all (up to 4 per filter:
/// seccompagent on x86_64+x86+x32 under redis 118 → 114, podman's default on aarch64 under
/// gVisor 63 → 60), no cost up by more than 0.02%, no target changed; and two rows get
/// cheaper (seccompagent on aarch64 under nginx 5.692 → 5.646 and redis 5.598 → 5.575): with
/// their smaller split trees, a tree with `jeq` tests inside now pays for its tests
/// ([`TEST_PRICE`]). With the constant changed and the bench rerun: at 0.0003, 44 fewer; at
/// 0.003, 83 fewer and those two rows keep their old cost; at 0.01, 98 fewer, but
/// seccompagent·gvisor on x86_64+x86+x32 takes a path longer than libseccomp's tree (13 → 14).
pub const SIZE_PRICE: f64 = 0.001;

/// How a dispatch with a measured workload trades its size and its worst path against its
/// expected cost (`secopt compile --favor`, [`super::Favor`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    /// How much more per call than the best tree a tree with a shorter worst path may cost
    /// and still be taken ([`SLACK_TOLERANCE`]).
    pub slack_tolerance: f64,
    /// What a `jeq` tree must save per call for each test it adds ([`TEST_PRICE`]).
    pub test_price: f64,
    /// What [`BoundedTrees`] charges each candidate's `jeq` ([`JEQ_MIN_GAIN`]).
    pub jeq_min_gain: f64,
    /// What [`BoundedTrees`] charges every test ([`SIZE_PRICE`]).
    pub size_price: f64,
    /// Most `jeq` candidates (`MAX_JEQ_CANDIDATES`).
    pub max_jeq_candidates: usize,
    /// Most states × bounds for them (`JEQ_TABLE_BUDGET`).
    pub jeq_table_budget: usize,
    /// Fewest tests first (`--favor size`): every test of the dispatch costs more than any
    /// tree's weighted cost, so the cost only decides between trees of the same size; no hot
    /// chain, and no worst-path give-back (the searched tree, or an exact bounded tree with
    /// fewer tests, see [`best_tree_bounded`]).
    pub size_first: bool,
    /// Most exceptions in one exception chain (`MAX_EXCEPTIONS`, 4; 64 for size).
    pub max_exceptions: usize,
}

impl Tuning {
    /// The default: speed, with a say for the filter's size and its worst path.
    pub const BALANCED: Tuning = Tuning {
        slack_tolerance: SLACK_TOLERANCE,
        test_price: TEST_PRICE,
        jeq_min_gain: JEQ_MIN_GAIN,
        size_price: SIZE_PRICE,
        max_jeq_candidates: MAX_JEQ_CANDIDATES,
        jeq_table_budget: JEQ_TABLE_BUDGET,
        size_first: false,
        max_exceptions: MAX_EXCEPTIONS,
    };

    /// The least expected cost the exact trees find: no tolerance for a shorter worst path
    /// (it stays within [`WORST_PATH_SLACK`] of a balanced tree), no price for a test beyond
    /// [`SIZE_PRICE`]'s tie-break, and 8 `jeq` candidates in tables of up to 2^20 cells
    /// (about 20 MB). seccompagent's filter on aarch64 under gVisor's workload, without the
    /// cache: 5.987 instructions per call in 44 instructions with a worst path of 15, against
    /// 6.003 in 42 with 13 balanced.
    pub const SPEED: Tuning = Tuning {
        slack_tolerance: 0.0,
        test_price: 0.0,
        jeq_min_gain: 0.0,
        size_price: SIZE_PRICE,
        max_jeq_candidates: 8,
        jeq_table_budget: 1 << 20,
        size_first: false,
        max_exceptions: MAX_EXCEPTIONS,
    };

    /// The fewest dispatch tests (`--favor size`): exception chains of up to
    /// `MAX_SIZE_EXCEPTIONS` (64) single values between ranges with one target (one test each,
    /// where a split tree spends two), no hot chain, no `jeq` candidates; the weights only
    /// order trees of the same size. Under `--max-path`, the exact bounded trees charge each
    /// test far more than any saving.
    pub const SIZE: Tuning = Tuning {
        slack_tolerance: 0.0,
        test_price: 1e6,
        jeq_min_gain: 1e6,
        size_price: 1e6,
        max_jeq_candidates: 0,
        jeq_table_budget: JEQ_TABLE_BUDGET,
        size_first: true,
        max_exceptions: MAX_SIZE_EXCEPTIONS,
    };
}

/// How much longer than the searched tree's worst path the exact trees of [`Tuning::SIZE`]
/// may be.
const SIZE_SEARCH_SLACK: usize = 4;

/// Most ranges [`Tuning::SIZE`] runs the exact bounded trees on: they are cubic in the ranges
/// (`cargo bench --bench compile -- "dispatch 256"`: about 0.1 s at this limit; Docker's
/// x86_64 + x32 class has 163); beyond, Knuth's program decides alone.
const SIZE_EXACT_MAX_LEAVES: usize = 256;

/// Longest exception chain with [`Tuning::SIZE`] (the chains of a range are listed for each
/// start: O(leaves × this) of them).
const MAX_SIZE_EXCEPTIONS: usize = 64;

/// Most `jeq` candidates of [`BoundedTrees`] (its table grows as `2^k`).
const MAX_JEQ_CANDIDATES: usize = 6;

/// Most states × bounds [`BoundedTrees`] adds candidates for (a cell is 20 bytes); without
/// candidates the table is as large as it needs to be.
const JEQ_TABLE_BUDGET: usize = 1 << 16;

/// Whether a tree costing `cost` is within `tolerance` of the best, `best`, in instructions per
/// call: each call also runs at least [`PATH_PREFIX`] instructions besides the dispatch's
/// tests, which every tree shares.
fn within_tolerance(cost: Cost, best: Cost, leaves: &[Leaf], tolerance: f64) -> bool {
    let shared = PATH_PREFIX * leaves.iter().map(|l| l.weight.0[0]).sum::<f64>();
    cost.0[0] + shared <= (best.0[0] + shared) * (1.0 + tolerance)
}

/// The least a call runs besides the dispatch's tests: the `arch` load, one `arch` test, the
/// `nr` load and a `ret`.
pub const PATH_PREFIX: f64 = 4.0;

/// Largest dispatch whose slack is given back when the weights are the default ones.
pub const GIVE_BACK_MAX_LEAVES_WITHOUT_WORKLOAD: usize = 100;

/// How much more a tree with a shorter worst path may cost than the best one (which may use
/// the whole [`WORST_PATH_SLACK`]) and still be preferred, in instructions per call (see
/// `within_tolerance`; see [`best_tree_bounded`]).
///
/// Measured on the comparison bench (`cargo bench --bench compare`, 48 profile × arch ×
/// workload rows), with the exact bounded trees of [`BoundedTrees`]: at 2% the worst path is
/// longer than libseccomp's binary tree on 2 rows and 5 cost pairs are above half of the
/// tree's; at 3% on 2 rows and 6 pairs; at 5% on no row, but 7 pairs and one output larger
/// than libseccomp's. (Before the exact trees, measured on the tree's own cost: 5% gave 4 rows
/// and 5 pairs.) On the two worst-path misses left no tree of this layout meets both the
/// path and the cost target: docs/benchmarks.md, "Optimizer comparison".
pub const SLACK_TOLERANCE: f64 = 0.02;

/// [`SLACK_TOLERANCE`] when the weights are the documented default rather than a measured
/// workload: their cost is a guess, so a shorter longest path (a promise for every input)
/// weighs more.
pub const SLACK_TOLERANCE_WITHOUT_WORKLOAD: f64 = 0.10;

/// The floored searches of [`best_tree_bounded`] for one `bound`.
fn search_within(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    len: &dyn Fn(NodeId) -> usize,
    balance_from_start: bool,
    bound: usize,
) -> (Tree, Cost) {
    let total: f64 = leaves.iter().map(|l| l.weight.0[0]).sum();
    let balance: f64 = leaves.iter().map(|l| l.weight.0[1]).sum();
    // Floors proportional to the tie-break weights; the first is always there, so that leaves
    // nobody calls still count a little and the common case needs one search.
    let first = if balance_from_start { 1 } else { 0 };
    for factor in [0.0, 1.0 / 64.0, 1.0 / 8.0, 1.0].into_iter().skip(first) {
        let scale = if total > 0.0 {
            total / balance * factor
        } else {
            0.0
        };
        let floored: Vec<Leaf> = leaves
            .iter()
            .map(|l| Leaf {
                weight: l.weight + Cost([l.weight.0[1] * scale, 0.0]),
                ..*l
            })
            .collect();
        let (tree, _) = best_tree(&floored, hot);
        if tree.worst_path(len) <= bound {
            let cost = cost_with_hot(&tree, leaves, hot);
            return (tree, cost);
        }
    }
    let balanced: Vec<Leaf> = leaves
        .iter()
        .map(|l| Leaf {
            weight: Cost([0.0, l.weight.0[1]]),
            ..*l
        })
        .collect();
    let (tree, _) = split_or_chain_tree(&balanced, &Tuning::BALANCED);
    let cost = cost_with_hot(&tree, leaves, hot);
    (tree, cost)
}

/// [`tree_cost`], with the weight of each `hot` value inside a wider leaf charged at that
/// value's own depth (a hot chain tests it before the rest of its leaf).
fn cost_with_hot(tree: &Tree, leaves: &[Leaf], hot: &[(u32, Cost)]) -> Cost {
    let mut cost = tree_cost(tree, leaves);
    for &(v, w) in hot {
        let i = leaves.partition_point(|l| l.hi < v);
        let Some(leaf) = leaves.get(i) else { continue };
        if leaf.lo == leaf.hi {
            continue;
        }
        let at_value = tree.depth_of(v) as f64;
        let at_leaf = tree.depth_of_leaf(leaf.lo, leaf.hi) as f64;
        cost = cost + w * (at_value - at_leaf);
    }
    cost
}

/// The tie-break weight of a leaf whose target's longest path is `h` instructions: `2^(h-1)`
/// (capped). Minimizing Σ weight × depth with these weights makes `depth + h` about equal for
/// all leaves, so the longest path through the dispatch and a body stays short.
pub fn leaf_balance(h: usize) -> f64 {
    (h.clamp(1, 48) as f64 - 1.0).exp2()
}

/// Tries `jeq` tests for heavy single values in front of the tree, greedily, while that lowers
/// the cost. Candidates are the leaves that are a single value (the tree then no longer has to
/// separate them, and their neighbours may merge) and the values of `hot` (value, weight) that
/// lie inside a wider leaf (which stays; only its weight drops).
fn hot_chain(leaves: &[Leaf], hot: &[(u32, Cost)], tree: Tree, cost: Cost) -> (Tree, Cost) {
    let total: Cost = leaves.iter().fold(Cost::ZERO, |s, l| s + l.weight);
    // The chain so far: (value, target, weight); its cost Σ weight × position.
    let mut chain: Vec<(u32, NodeId, Cost)> = Vec::new();
    let mut chain_cost = Cost::ZERO;
    let mut chain_weight = Cost::ZERO;
    let mut rest: Vec<Leaf> = leaves.to_vec();
    let (mut best_tree, mut best_cost) = (tree, cost);
    while chain.len() < MAX_HOT {
        let h = chain.len() as f64;
        let remaining = total.less(chain_weight);
        // (value, its weight)
        let mut candidates: Vec<(u32, Cost)> = rest
            .iter()
            .filter(|l| l.lo == l.hi)
            .map(|l| (l.lo, l.weight))
            .collect();
        for &(v, w) in hot {
            let i = rest.partition_point(|l| l.hi < v);
            let inside_wide = i < rest.len() && rest[i].lo != rest[i].hi;
            if inside_wide && !chain.iter().any(|c| c.0 == v) {
                candidates.push((v, w));
            }
        }
        candidates.retain(|&(v, _)| best_tree.depth_of(v) as f64 - h > 1.0);
        candidates.sort_by(|a, b| b.1.cmp_total(&a.1));
        // For pairs: the heaviest values, whether or not one alone would pay off.
        let top: Vec<(u32, Cost)> = candidates.iter().take(4).copied().collect();
        // A value pays off alone only if its weight times the tests it saves beats the one
        // test everything else gains; check that bound before running the program.
        candidates.retain(|&(v, w)| {
            let depth = best_tree.depth_of(v) as f64 - h;
            let gain = w * (depth - 1.0);
            let loss = remaining.less(w);
            loss.lt(&gain)
        });
        candidates.truncate(8);
        // Each step: try one more test; when none pays off alone, two together (a second hot
        // value may only pay off once the first has left the tree).
        let mut improved: Option<HotStep> = None;
        let consider = |picked: Vec<(u32, Cost)>, improved: &mut Option<HotStep>| {
            let mut reduced = rest.clone();
            let mut cost = chain_cost;
            let mut passed = remaining;
            for (n, &(v, w)) in picked.iter().enumerate() {
                reduced = take_value(&reduced, v, w);
                cost = cost + w * (h + 1.0 + n as f64);
                passed = passed.less(w);
            }
            let (t, c) = split_or_chain_tree(&reduced, &Tuning::BALANCED);
            let total_cost = cost + passed * (h + picked.len() as f64) + c;
            let better_than_seen = improved.as_ref().is_none_or(|b| total_cost.lt(&b.2));
            if total_cost.lt(&best_cost) && better_than_seen {
                *improved = Some((picked, t, total_cost, reduced));
            }
        };
        for &cand in &candidates {
            consider(vec![cand], &mut improved);
        }
        if improved.is_none() && chain.len() + 2 <= MAX_HOT {
            for (a, &first) in top.iter().enumerate() {
                for &second in &top[a + 1..] {
                    // Only real hot spots: the tree below gets shallower when both leave it,
                    // which no cheap bound captures, so the test is on the weights alone.
                    let hot_spot = |w: Cost| remaining.0[0] <= 64.0 * w.0[0];
                    if hot_spot(first.1) && hot_spot(second.1) {
                        consider(vec![first, second], &mut improved);
                    }
                }
            }
        }
        let Some((picked, t, c, reduced)) = improved else {
            break;
        };
        for (v, w) in picked {
            let target = rest[rest.partition_point(|l| l.hi < v)].target;
            chain_cost = chain_cost + w * (chain.len() as f64 + 1.0);
            chain_weight = chain_weight + w;
            chain.push((v, target, w));
        }
        rest = reduced;
        best_cost = c;
        best_tree = Tree::Chain {
            tests: chain.iter().map(|c| (c.0, c.1)).collect(),
            rest: Box::new(t),
        };
    }
    (best_tree, best_cost)
}

/// One step of the hot chain: the values tested (value, weight), the tree below the chain, the
/// total cost, and the leaves that tree was built from.
type HotStep = (Vec<(u32, Cost)>, Tree, Cost, Vec<Leaf>);

/// The leaves once value `v` (weight `w`) is tested in front: a single-value leaf is removed
/// (see [`without_leaf`]); a wider leaf stays, lighter by `w`.
fn take_value(leaves: &[Leaf], v: u32, w: Cost) -> Vec<Leaf> {
    let i = leaves.partition_point(|l| l.hi < v);
    if leaves[i].lo == leaves[i].hi {
        without_leaf(leaves, i)
    } else {
        let mut r = leaves.to_vec();
        r[i].weight = r[i].weight.less(w);
        r
    }
}

/// The leaves without leaf `i`, whose values no longer reach the tree: it is absorbed by a
/// neighbour, and neighbours with the same target merge.
fn without_leaf(leaves: &[Leaf], i: usize) -> Vec<Leaf> {
    let mut out: Vec<Leaf> = Vec::with_capacity(leaves.len());
    for (j, l) in leaves.iter().enumerate() {
        if j == i {
            continue;
        }
        let mut l = *l;
        if j == i + 1 || (i + 1 == leaves.len() && j + 1 == i) {
            l.lo = l.lo.min(leaves[i].lo);
            l.hi = l.hi.max(leaves[i].hi);
        }
        match out.last_mut() {
            Some(last) if last.target == l.target => {
                last.hi = l.hi;
                last.weight = last.weight + l.weight;
            }
            _ => out.push(l),
        }
    }
    out
}

/// The cost of `tree` for `leaves` (Σ weight × tests on the path of the leaf's values).
pub fn tree_cost(tree: &Tree, leaves: &[Leaf]) -> Cost {
    leaves.iter().fold(Cost::ZERO, |s, l| {
        s + l.weight * tree.depth_of_leaf(l.lo, l.hi) as f64
    })
}
