//! Long chains of equality tests on one word become search trees.
//!
//! Compilers lower "allow `ioctl` when the request is one of these 18 values" as one rule per
//! value, so after lifting the residual body is a chain
//!
//! ```text
//! jeq #v1 → T1 : jeq #v2 → T2 : … : jeq #vn → Tn : F        (A unchanged along the chain)
//! ```
//!
//! whose longest path is `n` tests. The same decision is a dispatch over the values of A,
//! exactly the problem the syscall-number dispatch solves: sorted values become leaves
//! (`[v, v] → T`, the gaps between them `→ F`, equal neighbours merged), and
//! [`super::dispatch::best_tree`] lays them out with splits (`jge`) and short exception
//! chains. With no weights for argument values the tree balances `depth + longest path of the
//! target`, so the longest path drops from `n` to about `log2 n` tests, at the price of up to
//! `n` more instructions. The rewrite is kept only where it shortens the longest path by at
//! least [`MIN_GAIN`] tests, so short chains (where a tree saves nothing) stay as they are.
//!
//! Worked example: Firecracker's vCPU filter allows `ioctl` for 18 KVM requests. The chain's
//! longest path is 18 tests plus the return; the tree's is 6 tests (`jge` splits down to
//! ranges of two or three values, then `jeq`s) plus the return.
//!
//! The first test of a value wins in a chain, so a value repeated later is dropped. The
//! rewrite preserves meaning exactly (every value of A reaches the same target as before);
//! the optimizer's self-check proves that anyway.

use super::dag::{held_words, taken, Dag, Held, Node, NodeId};
use super::dispatch::{best_tree, best_tree_tuned, leaf_balance, Cost, Leaf, Tree, Tuning};
use super::lift::Lifted;
use super::value_sets::{find_cubes, Cube};
use super::weights::Weights;
use crate::bpf::data::SeccompData;
use crate::bpf::insn::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Shortest chain considered. Shorter chains (4–5 values, `futex` or `mmap` operations) would
/// gain a test or two on Firecracker's API and VMM threads (3–9% of their cost), but the
/// shorter bodies tighten the dispatch's worst-path bound, which then needs more searches:
/// Docker's compile time went from 1.95 to 2.6 ms when tried.
pub const MIN_CHAIN: usize = 6;
/// Fewest tests the longest path must lose for the (larger) tree to replace a chain.
pub const MIN_GAIN: usize = 2;

/// How [`rewrite_chains`] lays out a chain of equality tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueLayout {
    /// A search tree where it shortens the longest path by [`MIN_GAIN`] (up to `n` more
    /// instructions for `n` values); with sampled argument values, the layout those calls
    /// run fastest.
    Balanced,
    /// The fewest tests (`--favor size`): masks, or a tree over runs of consecutive values.
    Size,
    /// A tree whose leaves test up to this many values one after another: `n + n/k` tests
    /// for `n` scattered values and a longest path of about `log2(n/k) + k`, between the
    /// balanced tree (`2n` tests, `log2 n`) and the chain (`n`, `n`). For a program the
    /// balanced trees make too long for the kernel (the optimizer searches `k` from 2 to 64
    /// for the smallest that fits).
    ///
    /// Worked example: 3 000 scattered `ioctl` requests (`scripts/value-sets.py`). Balanced,
    /// the program needs 5 034 instructions, over the limit; as a chain it fits (3 026) with a
    /// longest path of 3 009. With `k` = 3, 3 000 `jeq`s in chains of three under 999 splits:
    /// 4 048 instructions,
    /// and a longest path of 25 (10 splits, 3 `jeq`s, the loads and tests before them).
    Fit(usize),
}

/// Rewrites every equality chain reachable from the bodies of `lifted` (see the module
/// documentation). With `weights` that carry argument values, chains whose values the sampled
/// calls hit are laid out for those calls (`chain_value_counts`). Another `layout` than
/// [`ValueLayout::Balanced`] ignores the samples.
pub fn rewrite_chains(lifted: &mut Lifted, weights: Option<&Weights>, layout: ValueLayout) {
    let roots: Vec<NodeId> = lifted
        .classes
        .iter()
        .flat_map(|c| c.pieces.iter().map(|p| p.body))
        .collect();
    let Some(&max_root) = roots.iter().max() else {
        return;
    };
    let dag = &lifted.dag;
    // Children have smaller ids than their parents: one pass down marks what is reachable,
    // one pass up rebuilds it.
    let n = max_root as usize + 1;
    let mut reachable = vec![false; n];
    for &r in &roots {
        reachable[r as usize] = true;
    }
    for id in (0..n).rev() {
        if reachable[id] {
            for c in dag.children(id as NodeId) {
                reachable[c as usize] = true;
            }
        }
    }
    // Links inside a chain (the fall-through of an equality test that is itself one) are
    // rebuilt with their chain's head, not as chains of their own: every suffix of a long
    // chain would otherwise run the dynamic program again.
    let is_jeq = |node: Node| matches!(node, Node::Test { insn, .. } if insn.code == BPF_JMP | BPF_JEQ | BPF_K);
    let mut interior = vec![false; n];
    for (id, _) in reachable.iter().enumerate().filter(|(_, r)| **r) {
        let node = dag.node(id as NodeId);
        if let Node::Test { f, .. } = node {
            if is_jeq(node) && is_jeq(dag.node(f)) {
                interior[f as usize] = true;
            }
        }
    }
    let counts = match weights {
        Some(w) if w.sampled_syscalls().next().is_some() => {
            let heads = |id: NodeId| reachable[id as usize] && !interior[id as usize];
            chain_value_counts(lifted, w, &roots, &heads)
        }
        _ => HashMap::default(),
    };
    let dag = &mut lifted.dag;
    let mut map: Vec<NodeId> = (0..n as NodeId).collect();
    let mut changed = false;
    for id in 0..n {
        if !reachable[id] {
            continue;
        }
        let head = !interior[id];
        let new = match dag.node(id as NodeId) {
            Node::Ret(_) | Node::RetA => id as NodeId,
            Node::Op { insn, next } => dag.op(insn, map[next as usize]),
            Node::Test { insn, t, f } => {
                let counts = counts.get(&(id as NodeId)).map(Vec::as_slice);
                match head
                    .then(|| chain_tree(dag, id as NodeId, &map, counts, layout))
                    .flatten()
                {
                    Some(tree) => {
                        changed = true;
                        tree
                    }
                    None => dag.test(insn, map[t as usize], map[f as usize]),
                }
            }
        };
        map[id] = new;
    }
    if !changed {
        return;
    }
    for class in &mut lifted.classes {
        for piece in &mut class.pieces {
            piece.body = map[piece.body as usize];
        }
    }
}

/// Per chain head: how often the workload's sampled calls test each value there.
///
/// A head's value is the `seccomp_data` word A holds on every path into it
/// ([`held_words`]); a sampled call counts for every head its syscall's body can reach when the
/// call's argument holding that word is known. Calls that leave the body before the head are
/// counted too: the counts only order a chain's tests, and every order decides the same.
fn chain_value_counts(
    lifted: &Lifted,
    weights: &Weights,
    roots: &[NodeId],
    is_head: &dyn Fn(NodeId) -> bool,
) -> HashMap<NodeId, Vec<(u32, f64)>> {
    let dag = &lifted.dag;
    let held = held_words(dag, roots);
    let mut heads_of: HashMap<NodeId, Vec<NodeId>> = HashMap::default();
    let mut counts: HashMap<NodeId, HashMap<u32, f64>> = HashMap::default();
    for (token, nr) in weights.sampled_syscalls() {
        let Some(body) = lifted.body(token, nr) else {
            continue;
        };
        let heads = heads_of.entry(body).or_insert_with(|| {
            let mut seen = HashSet::default();
            let mut stack = vec![body];
            let mut heads = Vec::new();
            while let Some(id) = stack.pop() {
                if !seen.insert(id) {
                    continue;
                }
                if is_head(id) && matches!(dag.node(id), Node::Test { .. }) {
                    heads.push(id);
                }
                stack.extend(dag.children(id));
            }
            heads
        });
        for &head in heads.iter() {
            let Some(&Held::Word(offset)) = held.get(head as usize) else {
                continue;
            };
            if !(16..64).contains(&offset) {
                continue;
            }
            let arg = (offset as usize - 16) / 8;
            for &(args, count) in weights.samples(token, nr) {
                if args[arg].is_none() {
                    continue;
                }
                let data = SeccompData::new(token, nr as i32, args.map(|a| a.unwrap_or(0)));
                let value = data.words()[offset as usize / 4];
                *counts.entry(head).or_default().entry(value).or_default() += count;
            }
        }
    }
    counts
        .into_iter()
        .map(|(head, values)| {
            let mut v: Vec<(u32, f64)> = values.into_iter().collect();
            v.sort_unstable_by_key(|e| e.0);
            (head, v)
        })
        .collect()
}

/// Tests run from `node` with A = `v` until one of `stop` (the chain's targets) is reached.
fn tests_until(dag: &Dag, mut node: NodeId, v: u32, stop: &HashSet<NodeId>) -> usize {
    let mut n = 0;
    while !stop.contains(&node) {
        let Node::Test { insn, t, f } = dag.node(node) else {
            break;
        };
        let Some(go) = taken(insn, v) else {
            break;
        };
        n += 1;
        node = if go { t } else { f };
    }
    n
}

/// A chain of `jeq` over `values` (in this order), falling through to `fallback`.
fn jeq_chain(dag: &mut Dag, values: &[(u32, NodeId)], fallback: NodeId) -> NodeId {
    let mut node = fallback;
    for &(v, t) in values.iter().rev() {
        node = dag.test(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 0), t, node);
    }
    node
}

/// The layout of a chain for sampled values: the candidates are the chain as it was, the
/// chain with the most frequent values first, the search tree weighted by the counts (hot
/// values tested before it), and masks first with the rest by frequency. The one with the
/// fewest expected tests per sampled call is taken, then the smallest longest path plus size;
/// none may have a longer worst path than the chain as it was.
fn weighted_chain(
    dag: &mut Dag,
    links: &[(u32, NodeId)],
    values: &[(u32, NodeId)],
    cubes: &[(Cube, NodeId)],
    fallback: NodeId,
    counts: &[(u32, f64)],
) -> NodeId {
    let count_of = |v: u32| {
        counts
            .binary_search_by_key(&v, |e| e.0)
            .map_or(0.0, |i| counts[i].1)
    };
    let mut stop: HashSet<NodeId> = values.iter().map(|e| e.1).collect();
    stop.insert(fallback);
    let mut candidates: Vec<(NodeId, usize)> = Vec::new();
    // As it was (the first test of a repeated value still wins).
    candidates.push((jeq_chain(dag, links, fallback), links.len()));
    // Most frequent first.
    let mut by_count = values.to_vec();
    by_count.sort_by(|a, b| count_of(b.0).total_cmp(&count_of(a.0)));
    candidates.push((jeq_chain(dag, &by_count, fallback), by_count.len()));
    // A tree weighted by the counts.
    if values.len() >= 2 {
        let mut sorted = values.to_vec();
        sorted.sort_unstable_by_key(|&(v, _)| v);
        let len = |id: NodeId| dag.longest_path(id) as usize;
        let mut leaves = value_leaves(&sorted, fallback, &len);
        for leaf in &mut leaves {
            let lo = counts.partition_point(|e| e.0 < leaf.lo);
            let hi = counts.partition_point(|e| e.0 <= leaf.hi);
            let w: f64 = counts[lo..hi].iter().map(|e| e.1).sum();
            leaf.weight = leaf.weight + Cost([w, 0.0]);
        }
        let mut hot: Vec<(u32, Cost)> = counts.iter().map(|&(v, c)| (v, Cost([c, 0.0]))).collect();
        hot.sort_by(|a, b| b.1.cmp_total(&a.1).then(a.0.cmp(&b.0)));
        hot.truncate(8);
        let (tree, _) = best_tree(&leaves, &hot);
        let tests = tree.tests();
        candidates.push((tree.emit(dag), tests));
    }
    // Masks, the most frequent first, then the rest by frequency.
    if !cubes.is_empty() {
        let mut ordered = cubes.to_vec();
        let cube_count =
            |c: &Cube| -> f64 { counts.iter().filter(|e| c.contains(e.0)).map(|e| e.1).sum() };
        ordered.sort_by(|a, b| cube_count(&b.0).total_cmp(&cube_count(&a.0)));
        let rest: Vec<(u32, NodeId)> = by_count
            .iter()
            .copied()
            .filter(|&(v, t)| !cubes.iter().any(|(c, ct)| *ct == t && c.contains(v)))
            .collect();
        let mut node = jeq_chain(dag, &rest, fallback);
        let mut tests = rest.len();
        for &(cube, t) in ordered.iter().rev() {
            node = cube.emit(dag, t, node);
            tests += cube.tests();
        }
        candidates.push((node, tests));
    }
    let original_worst = dag.longest_path(candidates[0].0);
    let expected = |dag: &Dag, node: NodeId| -> f64 {
        counts
            .iter()
            .map(|&(v, c)| c * tests_until(dag, node, v, &stop) as f64)
            .sum()
    };
    let mut best = candidates[0];
    let mut best_key = (expected(dag, best.0), original_worst as usize + best.1);
    for &(node, tests) in &candidates[1..] {
        let worst = dag.longest_path(node);
        if worst > original_worst {
            continue;
        }
        let key = (expected(dag, node), worst as usize + tests);
        if key.0 < best_key.0 - 1e-9 || (key.0 <= best_key.0 + 1e-9 && key.1 < best_key.1) {
            best = (node, tests);
            best_key = key;
        }
    }
    best.0
}

/// The rewrite of the equality chain that starts at `head`, if any; children are taken
/// through `map` (the already rewritten nodes).
///
/// 1. Values are deduplicated (the first test wins) and values whose target is the chain's
///    fall-through dropped (nothing later can match them).
/// 2. The values become a search tree when there are at least [`MIN_CHAIN`] of them and the
///    tree's longest path is shorter by [`MIN_GAIN`], else they stay a chain.
/// 3. Alternatively, per target, the values that form cubes are tested with `jset` masks
///    ([`super::value_sets`]) first, and the rest as in 2. This one is taken when its longest
///    path plus its number of tests is smaller (masks can break runs of consecutive values
///    that a tree tests as one range).
///
/// `None` when none of this changes anything.
fn chain_tree(
    dag: &mut Dag,
    head: NodeId,
    map: &[NodeId],
    counts: Option<&[(u32, f64)]>,
    layout: ValueLayout,
) -> Option<NodeId> {
    let mut links: Vec<(u32, NodeId)> = Vec::new();
    let mut node = head;
    while let Node::Test { insn, t, f } = dag.node(node) {
        if insn.code != BPF_JMP | BPF_JEQ | BPF_K {
            break;
        }
        links.push((insn.k, map[t as usize]));
        node = f;
    }
    if links.len() < 2 {
        return None;
    }
    let fallback = map[node as usize];

    // First test of a value wins; a value sent where the chain ends anyway needs no test.
    let mut values: Vec<(u32, NodeId)> = Vec::with_capacity(links.len());
    let mut seen = HashSet::with_capacity_and_hasher(links.len(), Default::default());
    for &(v, t) in &links {
        if seen.insert(v) && t != fallback {
            values.push((v, t));
        }
    }
    // Cubes per target, in order of first appearance.
    let mut cubes: Vec<(Cube, NodeId)> = Vec::new();
    let mut targets: Vec<NodeId> = Vec::new();
    for &(_, t) in &values {
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    for &t in &targets {
        let group: Vec<u32> = values.iter().filter(|e| e.1 == t).map(|e| e.0).collect();
        cubes.extend(find_cubes(&group).into_iter().map(|c| (c, t)));
    }
    let unchanged = values.len() == links.len();
    // Trees laid out to fit take the sampled values' counts for their front tests only.
    let sampled = counts
        .filter(|_| matches!(layout, ValueLayout::Fit(_)))
        .unwrap_or(&[]);
    let counts = counts.filter(|_| layout == ValueLayout::Balanced);
    if let Some(counts) = counts.filter(|c| c.iter().any(|e| e.1 > 0.0)) {
        return Some(weighted_chain(
            dag, &links, &values, &cubes, fallback, counts,
        ));
    }

    // Without cubes: the values as a chain, or a tree.
    let (plain, plain_tests, plain_tree) = tree_or_chain(dag, &values, fallback, layout, sampled);
    let plain_worst = dag.longest_path(plain) as usize;
    if cubes.is_empty() {
        return (!unchanged || plain_tree).then_some(plain);
    }
    // With cubes first, then the values no cube covers.
    let rest: Vec<(u32, NodeId)> = values
        .iter()
        .copied()
        .filter(|&(v, t)| !cubes.iter().any(|(c, ct)| *ct == t && c.contains(v)))
        .collect();
    let (mut masked, mut masked_tests, _) = tree_or_chain(dag, &rest, fallback, layout, sampled);
    for &(cube, t) in cubes.iter().rev() {
        masked = cube.emit(dag, t, masked);
        masked_tests += cube.tests();
    }
    let masked_worst = dag.longest_path(masked) as usize;
    // A value tree over ranges of consecutive values can beat masks that break the ranges
    // apart (x86 `socketcall`'s call numbers): keep the one with the smaller worst path plus
    // size, the shorter worst path on a tie.
    // With `ValueLayout::Size`, the fewer tests.
    let score = |worst: usize, tests: usize| {
        if layout == ValueLayout::Size {
            (tests, worst)
        } else {
            (worst + tests, worst)
        }
    };
    if score(masked_worst, masked_tests) < score(plain_worst, plain_tests) {
        Some(masked)
    } else {
        (!unchanged || plain_tree).then_some(plain)
    }
}

/// `values` (each to its target, anything else to `fallback`) as a chain of `jeq` in their
/// order, or as a search tree when there are at least [`MIN_CHAIN`] of them and the tree's
/// longest path is shorter by [`MIN_GAIN`] (with [`ValueLayout::Size`]: when the tree of
/// fewest tests has fewer than the chain, as runs of consecutive values make it; with
/// [`ValueLayout::Fit`]: [`fit_tree`], behind `jeq`s for the values `sampled` (value, count;
/// sorted by value) shows hot enough ([`fit_front`]), when its longest path is shorter).
/// Returns the node, its number of tests and whether it is a tree.
fn tree_or_chain(
    dag: &mut Dag,
    values: &[(u32, NodeId)],
    fallback: NodeId,
    layout: ValueLayout,
    sampled: &[(u32, f64)],
) -> (NodeId, usize, bool) {
    let len = |id: NodeId| dag.longest_path(id) as usize;
    let size_first = layout == ValueLayout::Size;
    if size_first && values.len() >= 2 {
        let mut sorted = values.to_vec();
        sorted.sort_unstable_by_key(|&(v, _)| v);
        let leaves = value_leaves(&sorted, fallback, &len);
        let (tree, _) = best_tree_tuned(&leaves, &[], &Tuning::SIZE);
        let tests = tree.tests();
        if tests < values.len() {
            return (tree.emit(dag), tests, true);
        }
    }
    let chain_worst = values
        .iter()
        .enumerate()
        .map(|(i, &(_, t))| i + 1 + len(t))
        .max()
        .unwrap_or(0)
        .max(values.len() + len(fallback));
    if let (ValueLayout::Fit(per_leaf), true) = (layout, values.len() >= MIN_CHAIN) {
        let mut sorted = values.to_vec();
        sorted.sort_unstable_by_key(|&(v, _)| v);
        let whole = fit_tree(&value_leaves(&sorted, fallback, &len), per_leaf);
        let front = fit_front(&sorted, sampled, &whole);
        let rest: Vec<(u32, NodeId)> = sorted
            .iter()
            .copied()
            .filter(|e| !front.contains(e))
            .collect();
        let tree = if front.is_empty() {
            whole
        } else {
            fit_tree(&value_leaves(&rest, fallback, &len), per_leaf)
        };
        if front.len() + tree.worst_path(&len) + MIN_GAIN <= chain_worst {
            let tests = front.len() + tree.tests();
            let mut node = tree.emit(dag);
            for &(v, t) in front.iter().rev() {
                node = dag.test(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 0), t, node);
            }
            return (node, tests, true);
        }
    }
    if values.len() >= MIN_CHAIN && layout == ValueLayout::Balanced {
        let mut sorted = values.to_vec();
        sorted.sort_unstable_by_key(|&(v, _)| v);
        let leaves = value_leaves(&sorted, fallback, &len);
        let (tree, _) = best_tree(&leaves, &[]);
        if tree.worst_path(&len) + MIN_GAIN <= chain_worst {
            let tests = tree.tests();
            return (tree.emit(dag), tests, true);
        }
    }
    let mut node = fallback;
    for &(v, t) in values.iter().rev() {
        node = dag.test(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 0), t, node);
    }
    (node, values.len(), false)
}

/// The tree of [`ValueLayout::Fit`]: `leaves` cut, left to right, into the longest runs one
/// chain decides ([`fit_group`]), under splits balanced by the number of runs. For `n`
/// scattered values that is `n` `jeq`s and `ceil(n / per_leaf) − 1` splits. (The dispatch's
/// dynamic program, which [`ValueLayout::Size`] uses, searches exception chains only within
/// the bounds that are exact for split trees; on 3 000 scattered values with chains of up to 8
/// it spent 4 010 tests, this 3 374.)
fn fit_tree(leaves: &[Leaf], per_leaf: usize) -> Tree {
    let mut runs: Vec<(u32, Tree)> = Vec::new();
    let mut start = 0;
    while start < leaves.len() {
        let (len, chain) = fit_group(&leaves[start..], per_leaf);
        runs.push((leaves[start].lo, chain));
        start += len;
    }
    balanced_splits(runs)
}

/// The longest run at the start of `leaves` (at least one leaf) that one chain decides: the
/// ranges wider than one value all have one target `x`, and at most `per_leaf` single values
/// have another; the chain tests those with `jeq` (in value order) and sends the rest of the
/// run to `x`. Returns the run's length and the chain.
fn fit_group(leaves: &[Leaf], per_leaf: usize) -> (usize, Tree) {
    let mut x: Option<NodeId> = None;
    let mut singles: Vec<&Leaf> = Vec::new();
    let others = |singles: &[&Leaf], t: NodeId| singles.iter().filter(|l| l.target != t).count();
    // Before a wide range fixes `x`: the fewest exceptions any target would leave.
    let fewest = |singles: &[&Leaf]| {
        singles
            .iter()
            .map(|l| others(singles, l.target))
            .min()
            .unwrap_or(0)
    };
    let mut len = 0;
    for l in leaves {
        if l.lo != l.hi {
            match x {
                Some(t) if t != l.target => break,
                Some(_) => {}
                None if others(&singles, l.target) > per_leaf => break,
                None => x = Some(l.target),
            }
        } else {
            singles.push(l);
            let exceptions = match x {
                Some(t) => others(&singles, t),
                None => fewest(&singles),
            };
            if exceptions > per_leaf {
                singles.pop();
                break;
            }
        }
        len += 1;
    }
    // Without a wide range: the target most singles share (the first such on a tie).
    let x = x.unwrap_or_else(|| {
        let mut best = singles[0].target;
        for l in &singles {
            if others(&singles, l.target) < others(&singles, best) {
                best = l.target;
            }
        }
        best
    });
    let tests: Vec<(u32, NodeId)> = singles
        .iter()
        .filter(|l| l.target != x)
        .map(|l| (l.lo, l.target))
        .collect();
    let chain = if tests.is_empty() {
        Tree::Leaf(x)
    } else {
        Tree::Chain {
            tests,
            rest: Box::new(Tree::Leaf(x)),
        }
    };
    (len.max(1), chain)
}

/// Most values [`fit_front`] tests in front of a tree laid out to fit.
const FIT_FRONT: usize = 4;

/// The values of `sorted` (value, target) to test with `jeq` in front of `tree` (their fit
/// tree), most sampled first: while a value's count times the tests it would skip in the
/// tree exceeds the one test every later call pays, at most [`FIT_FRONT`]. Each value is still
/// tested once (it leaves the tree), so the program keeps its size within a test.
///
/// Example: 3 000 requests in trees of chains of 3 (longest path 13 tests); the workload's
/// `ioctl` calls are 90% `KVM_RUN`. `KVM_RUN` in front: its calls take 1 test instead of up to
/// 13, the other 10% take one more.
fn fit_front(sorted: &[(u32, NodeId)], sampled: &[(u32, f64)], tree: &Tree) -> Vec<(u32, NodeId)> {
    let count_of = |v: u32| {
        sampled
            .binary_search_by_key(&v, |e| e.0)
            .map_or(0.0, |i| sampled[i].1)
    };
    let mut hot: Vec<(u32, NodeId, f64)> = sorted
        .iter()
        .map(|&(v, t)| (v, t, count_of(v)))
        .filter(|e| e.2 > 0.0)
        .collect();
    hot.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let mut remaining: f64 = sampled.iter().map(|e| e.1).sum();
    let mut front = Vec::new();
    for (v, t, count) in hot.into_iter().take(FIT_FRONT) {
        let skipped = tree.depth_of(v) as f64 - (front.len() + 1) as f64;
        remaining -= count;
        if count * skipped <= remaining {
            break;
        }
        front.push((v, t));
    }
    front
}

/// `runs` (each from its first value up to the next run's) under a split tree balanced by
/// their number.
fn balanced_splits(mut runs: Vec<(u32, Tree)>) -> Tree {
    if runs.len() == 1 {
        return runs.pop().expect("one run").1;
    }
    let upper = runs.split_off(runs.len() / 2);
    Tree::Split {
        at: upper[0].0,
        lo: Box::new(balanced_splits(runs)),
        hi: Box::new(balanced_splits(upper)),
    }
}

/// Leaves covering every 32-bit value: each listed value to its target, the values between
/// them to `fallback`, neighbours with the same target merged. Weights are only the
/// tie-breaker that balances `depth + longest path of the target`.
fn value_leaves(
    values: &[(u32, NodeId)],
    fallback: NodeId,
    len: &dyn Fn(NodeId) -> usize,
) -> Vec<Leaf> {
    let mut leaves: Vec<Leaf> = Vec::with_capacity(2 * values.len() + 1);
    let mut push = |lo: u32, hi: u32, target: NodeId| {
        let weight = Cost([0.0, leaf_balance(len(target))]);
        match leaves.last_mut() {
            Some(last) if last.target == target => {
                last.hi = hi;
                last.weight = last.weight + weight;
            }
            _ => leaves.push(Leaf {
                lo,
                hi,
                target,
                weight,
            }),
        }
    };
    let mut next: u64 = 0;
    for &(v, t) in values {
        if u64::from(v) > next {
            push(next as u32, v - 1, fallback);
        }
        push(v, v, t);
        next = u64::from(v) + 1;
    }
    if next <= u64::from(u32::MAX) {
        push(next as u32, u32::MAX, fallback);
    }
    leaves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{interp, Insn, Program, RetVal, SeccompData};
    use crate::optimize::layout::layout;

    /// `ld [args[1].lo]`, then `jeq` for each of `values` (ALLOW), else ERRNO(1).
    fn chain_program(values: &[u32]) -> Program {
        let n = values.len();
        let mut insns = vec![Insn::ld_abs(24)];
        for (i, &v) in values.iter().enumerate() {
            // ALLOW is at n + 2, ERRNO at n + 1; from instruction i + 1.
            insns.push(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, (n - i) as u8, 0));
        }
        insns.push(Insn::ret(RetVal::errno(1).0));
        insns.push(Insn::ret(RetVal::ALLOW.0));
        Program::new(insns)
    }

    fn rewritten(prog: &Program) -> Program {
        let mut lifted =
            crate::optimize::lift::lift(prog, &crate::optimize::lift::LiftConfig::FULL)
                .expect("lifts");
        rewrite_chains(&mut lifted, None, ValueLayout::Balanced);
        let body = lifted.classes[0].pieces[0].body;
        assert_eq!(lifted.classes.len(), 1);
        layout(&lifted.dag, body).expect("lays out")
    }

    #[test]
    fn eighteen_values_become_a_tree_with_the_same_decisions() {
        // Firecracker-like: 18 sparse request codes.
        let values: Vec<u32> = (0..18).map(|i| 0xae00 + 7 * i + (i % 3)).collect();
        let prog = chain_program(&values);
        let out = rewritten(&prog);
        // The chain runs 1 load + up to 18 tests + 1 return = 20 instructions; a balanced tree
        // over 37 leaves (18 values, 19 gaps) needs ⌈log2 37⌉ = 6 levels, plus load and return.
        let worst = crate::optimize::cost::worst_case_path(&out);
        assert!(worst <= 9, "worst path {worst}\n{out:?}");
        for probe in values
            .iter()
            .flat_map(|&v| [v.wrapping_sub(1), v, v + 1])
            .chain([0, u32::MAX])
        {
            let d = SeccompData::new(0xc000_003e, 16, [0, probe as u64, 0, 0, 0, 0]);
            assert_eq!(
                interp::eval(&prog, &d).unwrap(),
                interp::eval(&out, &d).unwrap(),
                "{probe:#x}"
            );
        }
    }

    #[test]
    fn short_chains_and_repeated_values_are_handled() {
        // Three values: below MIN_CHAIN, left alone.
        let prog = chain_program(&[1, 20, 300]);
        assert_eq!(rewritten(&prog).len(), prog.len());
        // A repeated value: the first test wins (both go to ALLOW here, and 9 once more).
        let prog = chain_program(&[9, 40, 9, 70, 100, 130, 160, 190, 220]);
        let out = rewritten(&prog);
        for v in [9u32, 40, 70, 8, 10, 221, 0] {
            let d = SeccompData::new(0xc000_003e, 16, [0, v as u64, 0, 0, 0, 0]);
            assert_eq!(
                interp::eval(&prog, &d).unwrap(),
                interp::eval(&out, &d).unwrap()
            );
        }
    }

    #[test]
    fn leaves_cover_the_word_and_merge_neighbours() {
        let len = |_: NodeId| 1usize;
        let l = value_leaves(&[(0, 5), (1, 5), (7, 6), (u32::MAX, 6)], 9, &len);
        let spans: Vec<(u32, u32, NodeId)> = l.iter().map(|l| (l.lo, l.hi, l.target)).collect();
        assert_eq!(
            spans,
            [
                (0, 1, 5),
                (2, 6, 9),
                (7, 7, 6),
                (8, u32::MAX - 1, 9),
                (u32::MAX, u32::MAX, 6)
            ]
        );
    }

    #[test]
    fn masks_do_not_replace_a_range_the_tree_tests_at_once() {
        // 1..=12 all allowed: `jge #1`, `jge #13` decide it; cubes ({4..7}, {8..11}, …)
        // would take more tests.
        let values: Vec<u32> = (1..=12).collect();
        let prog = chain_program(&values);
        let out = rewritten(&prog);
        let tests = out.insns.iter().filter(|i| i.is_conditional_jump()).count();
        assert!(tests <= 3, "{out:?}");
        // Submasks of 0x81 plus 0x89 (futex): masks win.
        let prog = chain_program(&[0, 1, 0x80, 0x81, 0x89]);
        let out = rewritten(&prog);
        assert!(
            out.insns
                .iter()
                .any(|i| i.code == BPF_JMP | BPF_JSET | BPF_K),
            "{out:?}"
        );
        assert_eq!(crate::optimize::cost::worst_case_path(&out), 4, "{out:?}");
        for v in (0..300).chain([u32::MAX, 0x8000_0081]) {
            for prog_values in [&values[..], &[0, 1, 0x80, 0x81, 0x89][..]] {
                let prog = chain_program(prog_values);
                let out = rewritten(&prog);
                let d = SeccompData::new(0xc000_003e, 16, [0, u64::from(v), 0, 0, 0, 0]);
                assert_eq!(
                    interp::eval(&prog, &d).unwrap(),
                    interp::eval(&out, &d).unwrap(),
                    "{v:#x}"
                );
            }
        }
    }

    /// [`fit_tree`] on random value sets (one to three targets, runs of consecutive values
    /// and one-value gaps among scattered values): every value reaches its leaf's target, no
    /// chain tests more than `per_leaf` values, and the splits over the runs are balanced.
    /// For scattered values of one target (gaps of at least two values) the count of tests is
    /// the documented `n + ceil(n / per_leaf) − 1`. (A one-value gap between two values of
    /// one target lets a chain test the gap instead of the values: fewer.)
    #[test]
    fn fit_trees_decide_every_value_with_short_chains() {
        let mut rng = crate::bpf::testing::Rng::new(5);
        let fallback: NodeId = 100;
        for round in 0..200 {
            let n = 1 + rng.below(300);
            let targets = 1 + rng.below(3) as NodeId;
            let scattered = round % 2 == 0;
            let mut values: Vec<(u32, NodeId)> = Vec::new();
            let mut v = rng.below(4) as u32;
            for _ in 0..n {
                let t = if scattered {
                    1
                } else {
                    1 + rng.below(targets as usize) as NodeId
                };
                values.push((v, t));
                v += if scattered {
                    3 + rng.below(1000) as u32
                } else {
                    1 + rng.below(3) as u32
                };
            }
            let leaves = value_leaves(&values, fallback, &|_| 1);
            for per_leaf in [1, 2, 3, 5, 8, 64] {
                let tree = fit_tree(&leaves, per_leaf);
                let target_of = |x: u32| {
                    values
                        .binary_search_by_key(&x, |e| e.0)
                        .map_or(fallback, |i| values[i].1)
                };
                for l in &leaves {
                    for x in [l.lo, l.hi, l.lo + (l.hi - l.lo) / 2] {
                        assert_eq!(tree.target_of(x), target_of(x), "round {round}: {x}");
                    }
                }
                // Chains and the splits above them.
                fn walk(t: &Tree, splits: usize, out: &mut Vec<(usize, usize)>) {
                    match t {
                        Tree::Leaf(_) => out.push((splits, 0)),
                        Tree::Chain { tests, rest } => {
                            assert!(matches!(**rest, Tree::Leaf(_)));
                            out.push((splits, tests.len()));
                        }
                        Tree::Split { lo, hi, .. } => {
                            walk(lo, splits + 1, out);
                            walk(hi, splits + 1, out);
                        }
                    }
                }
                let mut runs = Vec::new();
                walk(&tree, 0, &mut runs);
                assert!(runs.iter().all(|r| r.1 <= per_leaf), "round {round}");
                let depth = runs.iter().map(|r| r.0).max().unwrap();
                let balanced = (usize::BITS - (runs.len() - 1).leading_zeros()) as usize;
                assert_eq!(depth, balanced, "round {round}: {} runs", runs.len());
                if scattered {
                    let expected = n + n.div_ceil(per_leaf) - 1;
                    assert_eq!(tree.tests(), expected, "round {round}, {per_leaf} per leaf");
                }
            }
        }
    }

    /// With sampled values, a tree laid out to fit tests the value that dominates the samples
    /// first (a `jeq` in front, the value out of the tree), not one whose few calls would
    /// not repay the test every other call then pays; every value still decides as before,
    /// and the program is no larger than the tree without the front test.
    #[test]
    fn a_fit_tree_tests_the_dominant_sampled_value_first() {
        let mut dag = Dag::new();
        let allow = dag.ret(RetVal::ALLOW.0);
        let errno = dag.ret(RetVal::errno(1).0);
        let mut rng = crate::bpf::testing::Rng::new(9);
        let mut set: Vec<u32> = (0..300).map(|_| rng.next_u32()).collect();
        set.sort_unstable();
        set.dedup();
        let values: Vec<(u32, NodeId)> = set.iter().map(|&v| (v, allow)).collect();
        let (hot, rare) = (set[17], set[200]);
        let absent = (0..)
            .map(|d| set[40] + d)
            .find(|v| set.binary_search(v).is_err())
            .unwrap();
        let mut sampled = vec![(hot, 900.0), (rare, 5.0), (absent, 95.0)];
        sampled.sort_unstable_by_key(|e| e.0);
        let (plain, plain_tests, _) =
            tree_or_chain(&mut dag, &values, errno, ValueLayout::Fit(3), &[]);
        let (node, tests, is_tree) =
            tree_or_chain(&mut dag, &values, errno, ValueLayout::Fit(3), &sampled);
        assert!(is_tree);
        assert!(tests <= plain_tests + 1, "{tests} against {plain_tests}");
        let Node::Test { insn, t, f } = dag.node(node) else {
            panic!("a test first")
        };
        assert_eq!(
            (insn.code, insn.k, t),
            (BPF_JMP | BPF_JEQ | BPF_K, hot, allow)
        );
        assert!(!matches!(dag.node(f), Node::Test { insn, .. } if insn.k == rare));
        // Every value and its neighbours decide as the set says, in both layouts.
        let decide = |dag: &Dag, mut n: NodeId, v: u32| loop {
            match dag.node(n) {
                Node::Test { insn, t, f } => n = if taken(insn, v).unwrap() { t } else { f },
                _ => return n,
            }
        };
        for &v in &set {
            for probe in [v, v.wrapping_add(1), v.wrapping_sub(1)] {
                let expected = if set.binary_search(&probe).is_ok() {
                    allow
                } else {
                    errno
                };
                assert_eq!(decide(&dag, node, probe), expected, "{probe:#x}");
                assert_eq!(decide(&dag, plain, probe), expected, "{probe:#x}");
            }
        }
    }
}
