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

use super::dag::{Dag, Node, NodeId};
use super::dispatch::{best_tree, leaf_balance, Cost, Leaf};
use super::lift::Lifted;
use super::value_sets::{find_cubes, Cube};
use crate::bpf::insn::*;

/// Shortest chain considered. Shorter chains (4–5 values, `futex` or `mmap` operations) would
/// gain a test or two on Firecracker's API and VMM threads (3–9% of their cost), but the
/// shorter bodies tighten the dispatch's worst-path bound, which then needs more searches:
/// Docker's compile time went from 1.95 to 2.6 ms when tried.
pub const MIN_CHAIN: usize = 6;
/// Fewest tests the longest path must lose for the (larger) tree to replace a chain.
pub const MIN_GAIN: usize = 2;

/// Rewrites every long equality chain reachable from the bodies of `lifted`.
pub fn rewrite_chains(lifted: &mut Lifted) {
    let roots: Vec<NodeId> = lifted
        .classes
        .iter()
        .flat_map(|c| c.pieces.iter().map(|p| p.body))
        .collect();
    let Some(&max_root) = roots.iter().max() else {
        return;
    };
    let dag = &mut lifted.dag;
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
                match head.then(|| chain_tree(dag, id as NodeId, &map)).flatten() {
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

/// The rewrite of the equality chain that starts at `head`, if any; children are taken
/// through `map` (the already rewritten nodes).
///
/// 1. Values are deduplicated (the first test wins) and values whose target is the chain's
///    fall-through dropped (nothing later can match them).
/// 2. Per target, the values that form cubes are tested with `jset` masks
///    ([`super::value_sets`]), before the remaining `jeq`s.
/// 3. The remaining values stay a chain, or become a search tree when there are at least
///    [`MIN_CHAIN`] of them and the tree's longest path is shorter by [`MIN_GAIN`].
///
/// `None` when none of this changes anything.
fn chain_tree(dag: &mut Dag, head: NodeId, map: &[NodeId]) -> Option<NodeId> {
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
    let len = |id: NodeId| dag.longest_path(id) as usize;

    // First test of a value wins; a value sent where the chain ends anyway needs no test.
    let mut values: Vec<(u32, NodeId)> = Vec::with_capacity(links.len());
    let mut seen = std::collections::HashSet::with_capacity(links.len());
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
    values.retain(|&(v, t)| !cubes.iter().any(|(c, ct)| *ct == t && c.contains(v)));
    if cubes.is_empty() && values.len() == links.len() && values.len() < MIN_CHAIN {
        return None;
    }

    // The values left: a chain in their original order, or a tree.
    let chain_worst = values
        .iter()
        .enumerate()
        .map(|(i, &(_, t))| i + 1 + len(t))
        .max()
        .unwrap_or(0)
        .max(values.len() + len(fallback));
    let mut tree = None;
    if values.len() >= MIN_CHAIN {
        let mut sorted = values.clone();
        sorted.sort_unstable_by_key(|&(v, _)| v);
        let leaves = value_leaves(&sorted, fallback, &len);
        let (t, _) = best_tree(&leaves, &[]);
        if t.worst_path(&len) + MIN_GAIN <= chain_worst {
            tree = Some(t);
        }
    }
    if cubes.is_empty() && tree.is_none() && values.len() == links.len() {
        return None;
    }
    let mut rest = match tree {
        Some(t) => t.emit(dag),
        None => {
            let mut node = fallback;
            for &(v, t) in values.iter().rev() {
                node = dag.test(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 0), t, node);
            }
            node
        }
    };
    for &(cube, t) in cubes.iter().rev() {
        rest = cube.emit(dag, t, rest);
    }
    Some(rest)
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
        rewrite_chains(&mut lifted);
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
}
