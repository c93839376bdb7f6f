//! The exact bounded tables ([`BoundedTrees`]): the best tree under every bound on the longest
//! path, with `jeq` tests of a few heavy values anywhere in the tree, for `--max-path`, the
//! give-back of the worst-path slack and `--favor size`. Cubic in the leaves, so only for
//! dispatches of at most [`EXACT_BOUNDED_MAX_LEAVES`] leaves (and the size search's limit).

use super::chains::{exception_chains, may_chain_somewhere, Chains};
use super::split::CHAIN;
use super::*;

/// The exact optimal trees of splits, exception chains and `jeq` tests of a few heavy values
/// placed anywhere in the tree, under every bound `b ≤ max_bound` on the longest path
/// (`max(depth + len(target))`), from one dynamic program. Used on dispatches of at most
/// [`EXACT_BOUNDED_MAX_LEAVES`] leaves, and on any dispatch held to a worst path
/// ([`best_tree_within`]).
///
/// Without `jeq` candidates the program is
/// `cost[i..=j][b] = w(i..=j) + min over k of cost[i..k][b - 1] + cost[k..=j][b - 1]`, or an
/// exception chain of the range if its longest exit fits in `b`: O(m³ · max_bound).
///
/// Worked example (test `bounded_trees_trade_cost_for_the_bound`): six leaves of weights
/// 16, 4, 1, 1, 1, 1 whose bodies are one `ret`. Unbounded, the best tree costs 40: the heavy
/// leaf after 1 test, the next after 2, the light four after 4 (a longest path of 4 + 1).
/// Held to paths of 4 (3 tests), it costs 52: (16 + 4) · 2 + 4 · 3. Held to 3, no tree exists
/// (2 tests separate at most 4 leaves).
///
/// **`jeq` inside the tree.** A value heavy within its part of the tree, but not heavy enough
/// to be tested first by every call (the hot chain of [`best_tree`]), may be tested with `jeq`
/// at the top of that part. The candidates are the heaviest single-value leaves and the
/// heaviest `hot` values inside wider leaves (`jeq_candidates`). Once a single-value leaf is
/// tested, the rest of that subtree no longer has to separate it: its neighbours, when they
/// share a target, become one leaf. A value inside a wider leaf only leaves its weight behind.
/// The program's state is a range and the set `S` of candidates inside it already tested on
/// the way down: `cost[i..=j, S][b]` is 0 when the range's leaves outside `S` share a target
/// whose body fits in `b`; otherwise `w(i..=j) − w(S)` plus the least of the splits (each side
/// keeps the part of `S` inside it), of a `jeq` of a candidate `x` of the range outside `S`
/// (`cost[i..=j, S ∪ {x}][b - 1]`, when `x`'s exit fits in `b`), and, with `S` empty, the
/// exception chain. Test `a_jeq_inside_the_tree_merges_its_neighbours` works a small case by
/// hand; `scripts/dispatch-bound.py` searches the same class with every workload value as a
/// candidate (seccompagent's filter on aarch64 under gVisor's workload is the case it was
/// built for: docs/benchmarks.md).
///
/// **Size.** Every test (split, `jeq`, each test of a chain) is charged [`SIZE_PRICE`] per call
/// on top of the weight below it, so the program minimizes cost + price × tests: of two trees
/// within the price, the smaller (`of_two_trees_within_the_size_price_the_smaller_wins`).
/// [`BoundedTrees::best`] reports the cost without the prices.
pub struct BoundedTrees {
    pub(super) leaves: Vec<Leaf>,
    pub(super) chains: Chains,
    pub(super) max_bound: usize,
    pub(super) candidates: Vec<JeqCandidate>,
    /// What the program charges a candidate's `jeq` on top of its tests (see
    /// [`JEQ_MIN_GAIN`]).
    pub(super) jeq_price: Cost,
    /// What the program charges every test (see [`SIZE_PRICE`]).
    pub(super) test_price: Cost,
    /// The candidates of leaves before leaf `i` are bits `0..below[i]` (they are sorted by
    /// leaf), so a range's candidates are a run of bits.
    pub(super) below: Vec<u32>,
    /// Per range `(i, j)` (index `i * m + j`): where its states start, one per subset of its
    /// candidates.
    pub(super) offset: Vec<usize>,
    /// Per state: the one target of its leaves outside the set ([`NO_TARGET`] when none is
    /// left, [`MIXED`] when there are several).
    pub(super) target: Vec<NodeId>,
    /// Per state and bound: the best cost.
    pub(super) cost: Vec<Cost>,
    /// The tables without `jeq` candidates, when there are some ([`BoundedTrees::best_plain`]).
    pub(super) plain: Option<Box<BoundedTrees>>,
    /// Per state and bound: the first leaf of the right part of the best split, [`CHAIN`],
    /// [`JEQ`] with the candidate's bit, or [`LEAF`].
    pub(super) choice: Vec<u32>,
    /// Per state: the least bound with a tree (it may exceed `max_bound`), so that the
    /// splits skip the bounds where a side has none ([`BoundedTrees::least_path`]).
    pub(super) least: Vec<u32>,
}

/// The tables of [`BoundedTrees`] built during one optimization, for the layouts that ask
/// again with a bound no larger: under `--max-path` a layout whose jumps took it over the
/// bound is laid out again with one instruction less room at a time (`optimize::JUMP_ROOM`),
/// and each time the same dispatch asked for the same tables one bound lower, which a table
/// already answers (it holds every bound up to its own). One table of a few hundred ranges
/// takes a few tenths of a second (`cargo bench --bench compile -- "within a bound"`: 512
/// ranges), one of 779 several seconds, and a bound may take up to eight retries.
///
/// A table is reused only where one built afresh would be the same: the same leaves, hot
/// values, longest paths of the leaves' bodies and tuning, and the same `jeq` candidates
/// (they depend on the bound through [`Tuning::jeq_table_budget`]). At most
/// `TABLES_CACHE_MAX_CELLS` (2^24, about 340 MB) cells are kept (the oldest tables go first).
#[derive(Default)]
pub struct TablesCache {
    kept: RefCell<Vec<(TablesKey, Rc<BoundedTrees>)>>,
    /// Hears how far each table it builds is filled ([`TablesCache::watched`]).
    watch: Option<Box<dyn Fn(TableFill)>>,
}

/// How far a table of [`BoundedTrees`] is filled, for a caller that shows progress
/// ([`TablesCache::watched`]): one of 779 ranges takes seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFill {
    /// The dispatch's ranges (leaves).
    pub ranges: usize,
    /// The largest bound on the longest path the table answers, in instructions.
    pub within: usize,
    /// The share of its work done, in percent: the splits priced so far among all it
    /// prices (a range of `n` leaves has `n - 1` splits per set of tested candidates).
    pub percent: u8,
}

impl std::fmt::Display for TableFill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "table of {} ranges {}%", self.ranges, self.percent)
    }
}

/// Counts the work of filling one table (with its tables without candidates) and tells its
/// watcher each time another percent of it is done.
pub(super) struct FillProgress<'a> {
    tell: &'a dyn Fn(TableFill),
    ranges: usize,
    within: usize,
    done: u64,
    total: u64,
    told: Option<u8>,
}

impl FillProgress<'_> {
    /// `work` more done (told as it starts too, with `work` 0).
    fn advance(&mut self, work: u64) {
        self.done += work;
        debug_assert!(self.done <= self.total, "{} of {}", self.done, self.total);
        let percent = (self.done * 100 / self.total.max(1)).min(100) as u8;
        if self.told.is_none_or(|t| percent > t) {
            self.told = Some(percent);
            (self.tell)(TableFill {
                ranges: self.ranges,
                within: self.within,
                percent,
            });
        }
    }
}

/// What [`BoundedTrees`] are built from, but the bound.
#[derive(PartialEq)]
struct TablesKey {
    leaves: Vec<Leaf>,
    hot: Option<Vec<(u32, Cost)>>,
    lens: Vec<usize>,
    tuning: Tuning,
}

/// Most table cells a [`TablesCache`] keeps: about 340 MB (a cell is 20 bytes); a table of
/// 779 ranges up to a bound of 41 has 12.7 million.
const TABLES_CACHE_MAX_CELLS: usize = 1 << 24;

impl std::fmt::Debug for TablesCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.borrow();
        let cells: usize = kept.iter().map(|(_, t)| t.cells()).sum();
        write!(f, "TablesCache({} tables, {cells} cells)", kept.len())
    }
}

impl TablesCache {
    /// A cache that tells `watch` how far each table it builds is filled, as it fills it (at
    /// each percent, from 0 to 100; a kept table answers without a word).
    pub fn watched(watch: Box<dyn Fn(TableFill)>) -> TablesCache {
        TablesCache {
            kept: RefCell::default(),
            watch: Some(watch),
        }
    }

    /// The tables for `leaves` (with `hot` values, else without `jeq` candidates) up to at
    /// least `max_bound`: kept ones where they answer the same, else new ones.
    pub(super) fn tables(
        &self,
        leaves: &[Leaf],
        hot: Option<&[(u32, Cost)]>,
        len: &dyn Fn(NodeId) -> usize,
        max_bound: usize,
        tuning: &Tuning,
    ) -> Rc<BoundedTrees> {
        let key = TablesKey {
            leaves: leaves.to_vec(),
            hot: hot.map(<[_]>::to_vec),
            lens: leaves.iter().map(|l| len(l.target)).collect(),
            tuning: *tuning,
        };
        let values = |c: &[JeqCandidate]| c.iter().map(|c| (c.leaf, c.value)).collect::<Vec<_>>();
        // Chosen once: compared with each kept table's, and on a miss built with.
        let candidates = hot.map(|hot| jeq_candidates(leaves, hot, max_bound + 1, tuning));
        let wanted = values(candidates.as_deref().unwrap_or_default());
        let mut kept = self.kept.borrow_mut();
        let same = |(k, t): &&(TablesKey, Rc<BoundedTrees>)| {
            *k == key && t.max_bound >= max_bound && values(&t.candidates) == wanted
        };
        if let Some((_, tables)) = kept.iter().find(same) {
            return Rc::clone(tables);
        }
        let mut tables =
            BoundedTrees::unfilled(leaves, candidates.unwrap_or_default(), max_bound, tuning);
        // Filled as `BoundedTrees::new_with_candidates` does, telling the watcher.
        let mut plain = (!tables.candidates.is_empty())
            .then(|| BoundedTrees::unfilled(leaves, Vec::new(), max_bound, tuning));
        let mut progress = self.watch.as_deref().map(|tell| FillProgress {
            tell,
            ranges: leaves.len(),
            within: max_bound,
            done: 0,
            total: tables.work() + plain.as_ref().map_or(0, BoundedTrees::work),
            told: None,
        });
        if let Some(p) = &mut progress {
            p.advance(0);
        }
        if let Some(plain) = &mut plain {
            plain.fill(len, fill_order(leaves.len()), progress.as_mut());
        }
        tables.fill(len, fill_order(leaves.len()), progress.as_mut());
        tables.plain = plain.map(Box::new);
        let tables = Rc::new(tables);
        let cells = tables.cells();
        if cells <= TABLES_CACHE_MAX_CELLS {
            let mut total: usize = kept.iter().map(|(_, t)| t.cells()).sum::<usize>() + cells;
            while total > TABLES_CACHE_MAX_CELLS {
                total -= kept.remove(0).1.cells();
            }
            kept.push((key, Rc::clone(&tables)));
        }
        tables
    }
}

/// A value [`BoundedTrees`] may test with `jeq` anywhere in the tree.
#[derive(Debug, Clone, Copy)]
pub(super) struct JeqCandidate {
    pub(super) leaf: usize,
    pub(super) value: u32,
    pub(super) weight: Cost,
    /// The value is its leaf's only one: once tested, the leaf is gone.
    pub(super) whole_leaf: bool,
    /// What ranks it among the candidates (see `jeq_candidates`).
    pub(super) rank: f64,
}

/// Largest dispatch [`BoundedTrees`] is built for (the program is cubic in the leaves).
pub const EXACT_BOUNDED_MAX_LEAVES: usize = 128;

/// The least a `jeq` of a candidate inside the tree must save, in tests per call, to be
/// placed: each is one more instruction, and the size of the filter matters too (the gain of
/// the smallest of them is a few thousandths of an instruction per call).
pub const JEQ_MIN_GAIN: f64 = 0.01;

pub(super) const INFEASIBLE: Cost = Cost([f64::INFINITY, f64::INFINITY]);

/// Marks a state of [`BoundedTrees`] whose best tree starts with a `jeq` of the candidate in
/// the low bits.
const JEQ: u32 = 1 << 30;
/// Marks a state of [`BoundedTrees`] that is one leaf.
pub(super) const LEAF: u32 = u32::MAX;
/// A range all of whose leaves were tested above it (no value reaches it).
pub(super) const NO_TARGET: NodeId = NodeId::MAX;
/// A range whose leaves have several targets.
const MIXED: NodeId = NodeId::MAX - 1;

/// The `jeq` candidates of [`BoundedTrees`]: the heaviest single-value leaves and `hot` values
/// inside wider leaves, as many as fit in [`MAX_JEQ_CANDIDATES`] and [`JEQ_TABLE_BUDGET`]
/// (with `bounds` table cells per state), sorted by leaf.
pub(super) fn jeq_candidates(
    leaves: &[Leaf],
    hot: &[(u32, Cost)],
    bounds: usize,
    tuning: &Tuning,
) -> Vec<JeqCandidate> {
    let m = leaves.len();
    // A single-value leaf ranks by its weight: once tested, no call of it goes further.
    let mut all: Vec<JeqCandidate> = leaves
        .iter()
        .enumerate()
        .filter(|(_, l)| l.lo == l.hi && l.weight.0[0] > 0.0)
        .map(|(i, l)| JeqCandidate {
            leaf: i,
            value: l.lo,
            weight: l.weight,
            whole_leaf: true,
            rank: l.weight.0[0],
        })
        .collect();
    // A value inside a wider leaf gains little from its own test when the rest of its leaf
    // outweighs it: those calls stay where they were, one test further down. It ranks by its
    // weight less that rest, where the rest leaves out the leaf's heavier hot values (the
    // tree may test them first). gVisor's aarch64 mix: nanosleep (275 649 calls) shares an
    // allowed range with futex (870 063); against the whole range it would rank negative.
    let inside: Vec<(usize, u32, Cost)> = hot
        .iter()
        .filter(|h| h.1 .0[0] > 0.0)
        .map(|&(v, w)| (leaves.partition_point(|l| l.hi < v), v, w))
        .filter(|&(i, _, _)| i < m && leaves[i].lo != leaves[i].hi)
        .collect();
    // Heavier: more calls, or as many and a lower number (the ranking's own tie-break).
    let heavier = |a: (f64, u32), b: (f64, u32)| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
    for &(i, v, weight) in &inside {
        let w = weight.0[0];
        let rest: f64 = leaves[i].weight.0[0]
            - inside
                .iter()
                .filter(|&&(j, u, x)| j == i && heavier((x.0[0], u), (w, v)))
                .map(|h| h.2 .0[0])
                .sum::<f64>();
        all.push(JeqCandidate {
            leaf: i,
            value: v,
            weight,
            whole_leaf: false,
            rank: 2.0 * w - rest,
        });
    }
    all.retain(|c| c.rank > 0.0);
    all.sort_by(|a, b| b.rank.total_cmp(&a.rank).then(a.value.cmp(&b.value)));
    all.truncate(tuning.max_jeq_candidates);
    all.sort_by_key(|c| (c.leaf, c.value));
    // Fewer candidates while the table is too large: drop the lowest-ranked.
    while !all.is_empty() && states(m, &all) * bounds > tuning.jeq_table_budget {
        let last = (0..all.len())
            .min_by(|&a, &b| {
                all[a]
                    .rank
                    .total_cmp(&all[b].rank)
                    .then(all[b].value.cmp(&all[a].value))
            })
            .expect("not empty");
        all.remove(last);
    }
    all
}

/// Σ over ranges of leaves of 2^(candidates in the range).
pub(super) fn states(m: usize, candidates: &[JeqCandidate]) -> usize {
    let below = candidates_below(m, candidates);
    (0..m)
        .flat_map(|i| (i..m).map(move |j| (i, j)))
        .map(|(i, j)| 1usize << (below[j + 1] - below[i]))
        .sum()
}

/// Per leaf index `i` (up to `m`), how many of `candidates` (sorted by leaf) lie in leaves
/// before `i`.
fn candidates_below(m: usize, candidates: &[JeqCandidate]) -> Vec<u32> {
    let mut below = vec![0u32; m + 1];
    for c in candidates {
        below[c.leaf + 1] += 1;
    }
    for i in 0..m {
        below[i + 1] += below[i];
    }
    below
}

/// Columns of ranges [`BoundedTrees`] fills together (see [`fill_order`]).
pub(super) const FILL_BLOCK: usize = 8;

/// The ranges `(i, j)` of `m` leaves in the order [`BoundedTrees::fill`] fills them: each
/// after the ranges its splits read, `(i, k - 1)` and `(k, j)` for `i < k ≤ j`, and laid out
/// for the memory those reads touch. The tables hold a range's states by `i`, then `j`
/// (`offset`), a row of bounds each, and the splits of `(i, j)` read every row `(i, i..j)`
/// and `(i+1..=j, j)`: hundreds of kilobytes for a few hundred leaves. Filled `FILL_BLOCK`
/// columns `j` at a time, `i` running down from the block's last column to 0, a row `(i, ·)`
/// is read for the block's columns together, and the rows `(·, j)` of its columns were
/// written moments before. (By increasing span, each split read a row last touched a whole
/// diagonal earlier, from main memory.)
/// On the 779 ranges of the profile near the kernel's limit (docs/optimizer.md, `--max-path`)
/// this fills the table in well under half the time that filling by increasing span took,
/// from the same values in every cell.
pub(super) fn fill_order(m: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..m).step_by(FILL_BLOCK).flat_map(move |j0| {
        let j1 = (j0 + FILL_BLOCK).min(m) - 1;
        (0..=j1)
            .rev()
            .flat_map(move |i| (i.max(j0)..=j1).map(move |j| (i, j)))
    })
}

impl BoundedTrees {
    /// The tables for `leaves` (and `hot` values inside them, see `jeq_candidates`) up to
    /// `max_bound`.
    pub fn new(
        leaves: &[Leaf],
        hot: &[(u32, Cost)],
        len: &dyn Fn(NodeId) -> usize,
        max_bound: usize,
        tuning: &Tuning,
    ) -> Self {
        let candidates = jeq_candidates(leaves, hot, max_bound + 1, tuning);
        Self::new_with_candidates(leaves, candidates, len, max_bound, tuning)
    }

    /// [`BoundedTrees::new`] given its `jeq` candidates (chosen by [`jeq_candidates`] for the
    /// same leaves, bound and tuning, as [`TablesCache`] has them to compare): the tables with
    /// them and, beside, those without (`plain`).
    fn new_with_candidates(
        leaves: &[Leaf],
        candidates: Vec<JeqCandidate>,
        len: &dyn Fn(NodeId) -> usize,
        max_bound: usize,
        tuning: &Tuning,
    ) -> Self {
        let plain = (!candidates.is_empty()).then(|| {
            Box::new(Self::with_candidates(
                leaves,
                Vec::new(),
                len,
                max_bound,
                tuning,
            ))
        });
        let mut tables = Self::with_candidates(leaves, candidates, len, max_bound, tuning);
        tables.plain = plain;
        tables
    }

    /// [`BoundedTrees::new`] with `hot`, else the tables without `jeq` candidates.
    pub(super) fn for_hot(
        leaves: &[Leaf],
        hot: Option<&[(u32, Cost)]>,
        len: &dyn Fn(NodeId) -> usize,
        max_bound: usize,
        tuning: &Tuning,
    ) -> Self {
        match hot {
            Some(hot) => Self::new(leaves, hot, len, max_bound, tuning),
            None => Self::with_candidates(leaves, Vec::new(), len, max_bound, tuning),
        }
    }

    /// Cells of the tables (with those without candidates).
    fn cells(&self) -> usize {
        self.cost.len() + self.plain.as_ref().map_or(0, |p| p.cells())
    }

    /// The tables with these `jeq` candidates.
    pub(super) fn with_candidates(
        leaves: &[Leaf],
        candidates: Vec<JeqCandidate>,
        len: &dyn Fn(NodeId) -> usize,
        max_bound: usize,
        tuning: &Tuning,
    ) -> Self {
        let mut tables = Self::unfilled(leaves, candidates, max_bound, tuning);
        tables.fill(len, fill_order(leaves.len()), None);
        tables
    }

    /// The tables with these `jeq` candidates, every cell still to be filled
    /// ([`BoundedTrees::fill`]).
    fn unfilled(
        leaves: &[Leaf],
        candidates: Vec<JeqCandidate>,
        max_bound: usize,
        tuning: &Tuning,
    ) -> Self {
        let m = leaves.len();
        let nb = max_bound + 1;
        let chains = if may_chain_somewhere(leaves) {
            exception_chains(leaves, tuning.max_exceptions, Cost::ZERO)
        } else {
            Chains::default()
        };
        let below = candidates_below(m, &candidates);
        let mut offset = vec![0usize; m * m];
        let mut total = 0;
        for i in 0..m {
            for j in i..m {
                offset[i * m + j] = total;
                total += 1 << (below[j + 1] - below[i]);
            }
        }
        let calls: f64 = leaves.iter().map(|l| l.weight.0[0]).sum();
        BoundedTrees {
            leaves: leaves.to_vec(),
            chains,
            max_bound,
            candidates,
            jeq_price: Cost([calls * tuning.jeq_min_gain, 0.0]),
            test_price: Cost([calls * tuning.size_price, 0.0]),
            below,
            offset,
            target: vec![NO_TARGET; total],
            cost: vec![INFEASIBLE; total * nb],
            choice: vec![LEAF; total * nb],
            plain: None,
            least: vec![0; total],
        }
    }

    /// The work [`BoundedTrees::fill`] does, as [`TableFill::percent`] counts it: per range,
    /// its states times its leaves (the splits it prices, and one).
    pub(super) fn work(&self) -> u64 {
        let m = self.leaves.len();
        (0..m)
            .flat_map(|i| (i..m).map(move |j| (i, j)))
            .map(|(i, j)| self.states(i, j) as u64 * (j - i + 1) as u64)
            .sum()
    }

    /// How many states range `i..=j` has: one per subset of its candidates.
    fn states(&self, i: usize, j: usize) -> usize {
        1 << (self.below[j + 1] - self.below[i])
    }

    /// The state of range `i..=j` with the candidates of `set` (a set of all candidates) that
    /// lie inside it.
    pub(super) fn state(&self, i: usize, j: usize, set: usize) -> usize {
        let (first, end) = (self.below[i], self.below[j + 1]);
        let local = (set >> first) & ((1 << (end - first)) - 1);
        self.offset[i * self.leaves.len() + j] + local
    }

    /// The candidates inside range `i..=j`, as a set.
    fn inside(&self, i: usize, j: usize) -> usize {
        ((1 << self.below[j + 1]) - 1) & !((1 << self.below[i]) - 1)
    }

    /// Whether leaf `i` is gone once the candidates of `set` are tested.
    fn tested_away(&self, i: usize, set: usize) -> bool {
        (self.below[i]..self.below[i + 1])
            .any(|b| set & (1 << b) != 0 && self.candidates[b as usize].whole_leaf)
    }

    /// Fills the tables, range by range in `order` (each range after those its splits read:
    /// [`fill_order`]), telling `progress` the work of each range as it is done.
    pub(super) fn fill(
        &mut self,
        len: &dyn Fn(NodeId) -> usize,
        order: impl Iterator<Item = (usize, usize)>,
        mut progress: Option<&mut FillProgress>,
    ) {
        let m = self.leaves.len();
        let nb = self.max_bound + 1;
        let mut prefix = vec![Cost::ZERO; m + 1];
        for i in 0..m {
            prefix[i + 1] = prefix[i] + self.leaves[i].weight;
        }
        let mut best = vec![INFEASIBLE; nb];
        let mut arg = vec![LEAF; nb];
        for (i, j) in order {
            let span = j - i + 1;
            let range = self.inside(i, j);
            // Every subset of the range's candidates, supersets first (a `jeq` reads the
            // state with one more candidate tested).
            let mut set = range;
            loop {
                let cell = self.state(i, j, set);
                let last = if self.tested_away(j, set) {
                    NO_TARGET
                } else {
                    self.leaves[j].target
                };
                self.target[cell] = if span == 1 {
                    last
                } else {
                    match (self.target[self.state(i, j - 1, set)], last) {
                        (t, NO_TARGET) | (NO_TARGET, t) => t,
                        (t, u) if t == u => t,
                        _ => MIXED,
                    }
                };
                let least = match self.body(i, cell) {
                    Some(body) => {
                        for b in len(body).min(nb)..nb {
                            self.cost[cell * nb + b] = Cost::ZERO;
                        }
                        len(body)
                    }
                    None => self.fill_mixed((i, j, set), &prefix, len, (&mut best, &mut arg)),
                };
                self.least[cell] = least.min(u32::MAX as usize) as u32;
                if set == 0 {
                    break;
                }
                set = (set - 1) & range;
            }
            if let Some(p) = progress.as_deref_mut() {
                p.advance(self.states(i, j) as u64 * span as u64);
            }
        }
    }

    /// The body a state's tree is when its leaves outside the set share one target (none
    /// reached: the first leaf's, which no value takes); `None` when they have several.
    fn body(&self, i: usize, cell: usize) -> Option<NodeId> {
        match self.target[cell] {
            MIXED => None,
            NO_TARGET => Some(self.leaves[i].target),
            t => Some(t),
        }
    }

    /// The state of range `i..=j` with `set` tested when its leaves have several targets: its
    /// costs, and the least bound with a tree (exact whatever `max_bound`: from the same
    /// choices, one more than the longer side of a split or than the rest below a `jeq`, or a
    /// chain's longest exit), which it returns.
    fn fill_mixed(
        &mut self,
        (i, j, set): (usize, usize, usize),
        prefix: &[Cost],
        len: &dyn Fn(NodeId) -> usize,
        (best, arg): (&mut [Cost], &mut [u32]),
    ) -> usize {
        let nb = self.max_bound + 1;
        let cell = self.state(i, j, set);
        let mut least = usize::MAX;
        best.fill(INFEASIBLE);
        // A bound no split reaches keeps `LEAF`, not the previous state's choice: never read
        // (no tree is built where the cost is infinite), but the tables then depend on nothing
        // but the ranges' own states, whatever order fills them.
        arg.fill(LEAF);
        for k in i + 1..=j {
            let (l, r) = (self.state(i, k - 1, set), self.state(k, j, set));
            // Bounds below either side's least feasible one stay infeasible: skipped.
            let from = self.least[l].max(self.least[r]) as usize;
            least = least.min(from + 1);
            if from >= nb - 1 {
                continue;
            }
            let (l, r) = (l * nb, r * nb);
            // Bound b takes both sides within b - 1 (the hot loop of the program: zipped
            // slices, no index checks).
            let sides = self.cost[l + from..l + nb - 1]
                .iter()
                .zip(&self.cost[r + from..r + nb - 1]);
            let out = best[from + 1..].iter_mut().zip(&mut arg[from + 1..]);
            for ((lc, rc), (bb, ab)) in sides.zip(out) {
                let c = *lc + *rc;
                if c.lt(bb) {
                    *bb = c;
                    *ab = k as u32;
                }
            }
        }
        let range = self.inside(i, j);
        let mut w = prefix[j + 1] + prefix[i] * -1.0;
        for (bit, c) in self.candidates.iter().enumerate() {
            if set & (1 << bit) != 0 {
                w = w + c.weight * -1.0;
            }
        }
        for (bit, c) in self.candidates.iter().enumerate() {
            if range & (1 << bit) == 0 || set & (1 << bit) != 0 {
                continue;
            }
            let exit = 1 + len(self.leaves[c.leaf].target);
            let rest = self.state(i, j, set | 1 << bit);
            least = least.min(exit.max(1 + self.least[rest] as usize));
            for b in exit.max(1)..nb {
                let c = self.cost[rest * nb + b - 1] + self.jeq_price;
                if c.lt(&best[b]) {
                    best[b] = c;
                    arg[b] = JEQ | bit as u32;
                }
            }
        }
        for b in 1..nb {
            self.cost[cell * nb + b] = best[b] + w + self.test_price;
            self.choice[cell * nb + b] = arg[b];
        }
        // The range's exception chains, only with no candidate of the range tested (at most
        // one per rest target; with a bound, a dearer one may have the shorter longest path).
        let untouched = set & range == 0;
        for (at, chain) in self.chains.over(i, j).filter(|_| untouched) {
            let need = self.chains.longest_path(chain, &self.leaves, len);
            least = least.min(need.max(1));
            let cc = chain.cost + self.test_price * chain.tests() as f64;
            for b in need.max(1)..nb {
                if cc.lt(&self.cost[cell * nb + b]) {
                    self.cost[cell * nb + b] = cc;
                    self.choice[cell * nb + b] = CHAIN | at;
                }
            }
        }
        least
    }

    /// The shortest longest path of any tree of the class (splits, exception chains, `jeq`
    /// tests of the candidates), whatever the table's `max_bound`; `None` without leaves.
    pub fn least_path(&self) -> Option<usize> {
        let m = self.leaves.len();
        (m > 0).then(|| self.least[self.state(0, m - 1, 0)] as usize)
    }

    /// The best tree without `jeq` tests of candidates inside (splits and exception chains)
    /// whose longest path is at most `bound`, and its cost; `None` if there is none.
    pub fn best_plain(&self, bound: usize) -> Option<(Tree, Cost)> {
        match &self.plain {
            Some(plain) => plain.best(bound),
            None => self.best(bound),
        }
    }

    /// The best tree of the class (splits, exception chains, `jeq` tests of the candidates)
    /// whose longest path is at most `bound`, and its cost (with the weight of the `hot` values
    /// the tree tests charged at their own depth); `None` if there is none (a body alone is
    /// longer).
    pub fn best(&self, bound: usize) -> Option<(Tree, Cost)> {
        let m = self.leaves.len();
        if m == 0 {
            return None;
        }
        let b = bound.min(self.max_bound);
        let c = self.cost[self.state(0, m - 1, 0) * (self.max_bound + 1) + b];
        if !c.0[0].is_finite() {
            return None;
        }
        let mut jeqs = 0;
        let tree = self.build(0, m - 1, 0, b, &mut jeqs);
        let priced = self.jeq_price * jeqs as f64 + self.test_price * tree.tests() as f64;
        Some((tree, c + priced * -1.0))
    }

    /// The tree of a state, counting the candidates' `jeq` tests in `jeqs`.
    fn build(&self, i: usize, j: usize, set: usize, b: usize, jeqs: &mut usize) -> Tree {
        let cell = self.state(i, j, set);
        match self.choice[cell * (self.max_bound + 1) + b] {
            LEAF => Tree::Leaf(match self.target[cell] {
                NO_TARGET => self.leaves[i].target,
                t => t,
            }),
            s if s & CHAIN != 0 => {
                let chain = &self.chains.by_start[i][(s & !CHAIN) as usize];
                self.chains.tree(chain, &self.leaves)
            }
            s if s & JEQ != 0 => {
                let bit = (s & !JEQ) as usize;
                let c = &self.candidates[bit];
                let test = (c.value, self.leaves[c.leaf].target);
                *jeqs += 1;
                match self.build(i, j, set | 1 << bit, b - 1, jeqs) {
                    Tree::Chain { mut tests, rest } => {
                        tests.insert(0, test);
                        Tree::Chain { tests, rest }
                    }
                    rest => Tree::Chain {
                        tests: vec![test],
                        rest: Box::new(rest),
                    },
                }
            }
            k => {
                let k = k as usize;
                Tree::Split {
                    at: self.leaves[k].lo,
                    lo: Box::new(self.build(i, k - 1, set, b - 1, jeqs)),
                    hi: Box::new(self.build(k, j, set, b - 1, jeqs)),
                }
            }
        }
    }
}
