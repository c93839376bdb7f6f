//! From a DAG back to an instruction array the kernel accepts.
//!
//! Order: the nodes other than returns are put in a topological order (reverse postorder of a
//! depth-first walk that visits the child best placed right after a node *last*, so it lands
//! directly behind it and needs no jump: the only child of a straight-line instruction, else a
//! child with no other parent; of two such, the one that owns less when the other owns more
//! than a conditional jump reaches, so that the jump over it needs no trampoline).
//!
//! Emission runs *backwards*, from the last instruction to the first. Because every jump goes
//! forward, when an instruction is placed all its targets are already placed and its offsets are
//! known exactly, so jump ranges are handled on the spot:
//! - a straight-line instruction whose successor is not the next instruction gets a `ja`, or
//!   a copy of the successor where that is one test whose targets the copy reaches (the same
//!   size, one instruction less at run time);
//! - a return is never jumped to from afar: each edge to a return uses the nearest copy of it
//!   within reach (255 for conditional jumps, 0 for fall-through), or a new copy is placed right
//!   behind the jump — one instruction, exactly what a `ja` to a shared return would cost, and
//!   one instruction shorter at run time;
//! - a conditional jump whose target is more than 255 instructions ahead goes through a
//!   trampoline (`ja`) placed right behind it, shared with any later jump that can reach it, so
//!   trampolines are only added where a jump cannot reach its target otherwise; a target that
//!   is one test whose own targets reach from there is copied instead (the same size, no jump
//!   at run time).
//!
//! The kernel's scratch-memory check is linear (see [`crate::bpf::validate`]): code placed right
//! after a `ret` inherits what was stored before that `ret`, though no path flows through it.
//! Where the instruction after a `ret` needs scratch words that every real path to it has
//! stored, unreachable `st` instructions ("pads") are placed between the two so the check sees
//! them. Programs without scratch memory never get pads.

use super::dag::{effects, Dag, Node, NodeId, LIVE_M_ALL};
use crate::bpf::insn::*;
use rustc_hash::FxHashMap as HashMap;

/// Why no valid layout exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "the program needs {len} instructions, more than the kernel's limit of {BPF_MAXINSNS}"
    )]
    TooLong { len: usize },
    /// The dispatch cannot keep every path within the caller's bound
    /// ([`super::OptimizeOptions::max_path`]).
    #[error("no layout keeps every path within {bound} instructions: the shortest worst-case path this layout reaches is {shortest}")]
    PathBound { bound: usize, shortest: usize },
}

/// Lays out the DAG below `root` as a program.
pub fn layout(dag: &Dag, root: NodeId) -> Result<Program, LayoutError> {
    let reachable = dag.reachable(root);
    let is_ret = |id: NodeId| matches!(dag.node(id), Node::Ret(_) | Node::RetA);
    let mut parents: HashMap<NodeId, u32> = HashMap::default();
    for &id in &reachable {
        for c in dag.children(id) {
            *parents.entry(c).or_default() += 1;
        }
    }
    let order = topological_order(dag, root, &reachable, &parents);
    let needs = scratch_needs(dag, &reachable);

    let mut em = Emitter {
        rev: Vec::new(),
        rev_needs: Vec::new(),
        start: HashMap::default(),
        rets: HashMap::default(),
        trampolines: HashMap::default(),
    };
    if is_ret(root) {
        em.push_ret(dag.node(root));
    }
    for &id in order.iter().rev() {
        match dag.node(id) {
            Node::Op { insn, next } => {
                em.fall_through_to(dag, next, &needs);
                em.push(insn, needs.get(&id).copied().unwrap_or(0));
            }
            Node::Test { insn, t, f } => {
                let (jt, jf) = em.reach_both(dag, t, f, &needs);
                let mut i = insn;
                i.jt = jt;
                i.jf = jf;
                em.push(i, needs.get(&id).copied().unwrap_or(0));
            }
            Node::Ret(_) | Node::RetA => unreachable!("returns are not in the order"),
        }
        em.start.insert(id, em.rev.len() - 1);
    }
    let mut insns = em.rev;
    insns.reverse();
    if insns.len() > BPF_MAXINSNS {
        return Err(LayoutError::TooLong { len: insns.len() });
    }
    Ok(Program::new(insns))
}

struct Emitter {
    /// Instructions from last to first.
    rev: Vec<Insn>,
    /// Scratch words the kernel's linear check must see as stored at each instruction.
    rev_needs: Vec<u16>,
    /// Position (in `rev`) of each placed node.
    start: HashMap<NodeId, usize>,
    /// Positions of the copies of each return.
    rets: HashMap<Node, Vec<usize>>,
    /// Positions of the trampolines to each node.
    trampolines: HashMap<NodeId, Vec<usize>>,
}

impl Emitter {
    fn push(&mut self, insn: Insn, needs: u16) {
        self.rev.push(insn);
        self.rev_needs.push(needs);
    }

    /// Places a return (with pads behind it if the instruction after it needs them).
    fn push_ret(&mut self, node: Node) {
        let pad = self.rev_needs.last().copied().unwrap_or(0);
        for slot in (0..16u32).rev().filter(|s| pad & (1 << s) != 0) {
            self.push(Insn::stmt(BPF_ST, slot), 0);
        }
        let insn = match node {
            Node::Ret(k) => Insn::ret(k),
            _ => Insn::stmt(BPF_RET | BPF_A, 0),
        };
        self.push(insn, 0);
        self.rets.entry(node).or_default().push(self.rev.len() - 1);
    }

    /// Makes `next` the instruction right after the one about to be placed.
    fn fall_through_to(&mut self, dag: &Dag, next: NodeId, needs: &HashMap<NodeId, u16>) {
        let last = self.rev.len().checked_sub(1);
        let node = dag.node(next);
        if matches!(node, Node::Ret(_) | Node::RetA) {
            let adjacent =
                last.is_some_and(|l| self.rets.get(&node).is_some_and(|v| v.contains(&l)));
            if !adjacent {
                self.push_ret(node);
            }
            return;
        }
        let target = self.start[&next];
        if Some(target) != last {
            let e = self.rev.len();
            let need = needs.get(&next).copied().unwrap_or(0);
            // (A shared tail `jeq #1, allow, kill` after several argument loads.)
            match self.copy_of_test(dag, next, e) {
                Some(copy) => self.push(copy, need),
                None => self.push(Insn::ja((e - target - 1) as u32), need),
            }
        }
    }

    /// A copy of `target`, to be placed at `e` instead of a `ja` to it, when `target` is one
    /// test whose two targets an instruction at `e` reaches directly: the same size as the
    /// `ja`, and one instruction less at run time.
    fn copy_of_test(&self, dag: &Dag, target: NodeId, e: usize) -> Option<Insn> {
        let Node::Test { insn, t, f } = dag.node(target) else {
            return None;
        };
        let (jt, jf) = (self.reach(dag, t, e)?, self.reach(dag, f, e)?);
        Some(Insn { jt, jf, ..insn })
    }

    /// Where a jump placed at `e` can land for `target`: an existing instruction within 255.
    fn reach(&self, dag: &Dag, target: NodeId, e: usize) -> Option<u8> {
        let in_range = |pos: usize| u8::try_from(e - pos - 1).ok();
        let node = dag.node(target);
        if matches!(node, Node::Ret(_) | Node::RetA) {
            return self
                .rets
                .get(&node)
                .and_then(|v| v.last())
                .and_then(|&p| in_range(p));
        }
        if let Some(off) = in_range(self.start[&target]) {
            return Some(off);
        }
        self.trampolines
            .get(&target)
            .and_then(|v| v.last())
            .and_then(|&p| in_range(p))
    }

    /// Offsets for a conditional jump to `t` and `f`, placing return copies and trampolines
    /// behind it where a target is out of reach.
    fn reach_both(
        &mut self,
        dag: &Dag,
        t: NodeId,
        f: NodeId,
        needs: &HashMap<NodeId, u16>,
    ) -> (u8, u8) {
        loop {
            let e = self.rev.len();
            let (rt, rf) = (self.reach(dag, t, e), self.reach(dag, f, e));
            if let (Some(a), Some(b)) = (rt, rf) {
                return (a, b);
            }
            for (target, reached) in [(f, rf), (t, rt)] {
                if reached.is_some() || self.reach(dag, target, self.rev.len()).is_some() {
                    continue;
                }
                let node = dag.node(target);
                if matches!(node, Node::Ret(_) | Node::RetA) {
                    self.push_ret(node);
                } else {
                    let e = self.rev.len();
                    let need = needs.get(&target).copied().unwrap_or(0);
                    // Later jumps may land on the copy as on a trampoline.
                    match self.copy_of_test(dag, target, e) {
                        Some(copy) => self.push(copy, need),
                        None => {
                            let dest = self.start[&target];
                            self.push(Insn::ja((e - dest - 1) as u32), need);
                        }
                    }
                    self.trampolines.entry(target).or_default().push(e);
                }
            }
        }
    }
}

/// Non-return nodes in a topological order that keeps each node's best fall-through child
/// right behind it where possible.
fn topological_order(
    dag: &Dag,
    root: NodeId,
    reachable: &[NodeId],
    parents: &HashMap<NodeId, u32>,
) -> Vec<NodeId> {
    let is_ret = |id: NodeId| matches!(dag.node(id), Node::Ret(_) | Node::RetA);
    let mut visited: HashMap<NodeId, bool> = HashMap::default();
    let mut post: Vec<NodeId> = Vec::new();
    if is_ret(root) {
        return post;
    }
    let single = |c: NodeId| parents.get(&c).copied().unwrap_or(0) == 1;
    let owned = owned_sizes(dag, reachable, &single);
    // Children in visiting order: the preferred fall-through child last.
    let kids = |id: NodeId| -> Vec<NodeId> {
        match dag.node(id) {
            Node::Op { next, .. } => vec![next],
            Node::Test { t, f, .. } => {
                let size = |c: NodeId| owned.get(&c).copied().unwrap_or(0);
                // The other child lands behind all that the fall-through child owns: when
                // that is out of a conditional jump's reach, the smaller falls through.
                let far = single(t) && single(f) && size(f) > 255 && size(t) < size(f);
                if (single(t) && !single(f)) || far {
                    vec![f, t]
                } else {
                    vec![t, f]
                }
            }
            _ => Vec::new(),
        }
        .into_iter()
        .filter(|&c| !is_ret(c))
        .collect()
    };
    // Iterative depth-first search: (node, its children, next child index).
    let mut stack: Vec<(NodeId, Vec<NodeId>, usize)> = vec![(root, kids(root), 0)];
    visited.insert(root, true);
    while let Some(top) = stack.last_mut() {
        if top.2 < top.1.len() {
            let c = top.1[top.2];
            top.2 += 1;
            if visited.insert(c, true).is_none() {
                let k = kids(c);
                stack.push((c, k, 0));
            }
        } else {
            post.push(top.0);
            stack.pop();
        }
    }
    post.reverse();
    post
}

/// Per node other than a return: how many nodes other than returns it owns, counting
/// itself: those reached only through it by single-parent edges, which the depth-first walk
/// places right behind it whatever else it shares.
fn owned_sizes(
    dag: &Dag,
    reachable: &[NodeId],
    single: &dyn Fn(NodeId) -> bool,
) -> HashMap<NodeId, usize> {
    let is_ret = |id: NodeId| matches!(dag.node(id), Node::Ret(_) | Node::RetA);
    let mut owned: HashMap<NodeId, usize> = HashMap::default();
    // Parents have larger ids than children, and `reachable` is in increasing order.
    for &id in reachable {
        if is_ret(id) {
            continue;
        }
        let below: usize = dag
            .children(id)
            .filter(|&c| !is_ret(c) && single(c))
            .map(|c| owned[&c])
            .sum();
        owned.insert(id, 1 + below);
    }
    owned
}

/// For each node that reads scratch memory ahead: the words stored on *every* path from the
/// root to it that it (or something after it) reads — what the kernel's linear check must see
/// there. Empty for programs without stores.
fn scratch_needs(dag: &Dag, reachable: &[NodeId]) -> HashMap<NodeId, u16> {
    let mut out = HashMap::default();
    let stores_any = reachable.iter().any(|&id| match dag.node(id) {
        Node::Op { insn, .. } => effects(&insn).defs & LIVE_M_ALL != 0,
        _ => false,
    });
    if !stores_any {
        return out;
    }
    // Parents have larger ids than children: decreasing id order is topological.
    let mut must: HashMap<NodeId, u32> = HashMap::default();
    let root = *reachable.last().expect("root is reachable");
    must.insert(root, 0);
    for &id in reachable.iter().rev() {
        let here = must.get(&id).copied().unwrap_or(0);
        let after = match dag.node(id) {
            Node::Op { insn, .. } => here | (effects(&insn).defs & LIVE_M_ALL),
            _ => here,
        };
        for c in dag.children(id) {
            must.entry(c).and_modify(|m| *m &= after).or_insert(after);
        }
        let needs = (here & dag.live_in(id) & LIVE_M_ALL) >> 2;
        if needs != 0 {
            out.insert(id, needs as u16);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::validate::validate;
    use crate::bpf::{interp, SeccompData};

    fn jeq(k: u32) -> Insn {
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0)
    }

    #[test]
    fn shared_returns_and_fall_through() {
        // ld [0]; jeq #1 → ALLOW : (jeq #2 → ALLOW : KILL)
        let mut dag = Dag::new();
        let (allow, kill) = (dag.ret(0x7fff_0000), dag.ret(0));
        let t2 = dag.test(jeq(2), allow, kill);
        let t1 = dag.test(jeq(1), allow, t2);
        let root = dag.op(Insn::ld_abs(0), t1);
        let p = layout(&dag, root).unwrap();
        validate(&p).unwrap();
        // 5 instructions: the load, two tests, two returns (hand count).
        assert_eq!(p.len(), 5);
        for (nr, want) in [(1, 0x7fff_0000), (2, 0x7fff_0000), (3, 0)] {
            let d = SeccompData::new(0xc000_003e, nr, [0; 6]);
            assert_eq!(interp::eval(&p, &d).unwrap().0, want);
        }
    }

    #[test]
    fn a_shared_one_test_tail_is_copied_instead_of_jumped_to() {
        // ld [0]; jeq #1 → (ld [16]; T) : (ld [24]; T), T = jeq #9 → ALLOW : KILL.
        // One of the loads cannot fall through to T; a `ja T` would take one instruction,
        // and so does a copy of T, which also runs one instruction less.
        let mut dag = Dag::new();
        let (allow, kill) = (dag.ret(0x7fff_0000), dag.ret(0));
        let tail = dag.test(jeq(9), allow, kill);
        let (a0, a1) = (
            dag.op(Insn::ld_abs(16), tail),
            dag.op(Insn::ld_abs(24), tail),
        );
        let t = dag.test(jeq(1), a0, a1);
        let root = dag.op(Insn::ld_abs(0), t);
        let p = layout(&dag, root).unwrap();
        validate(&p).unwrap();
        // ld, jeq, two loads, two copies of T, two returns (hand count; with a `ja`, the same 8).
        assert_eq!(p.len(), 8);
        assert!(!p.insns.iter().any(|i| i.is_ja()), "{p:?}");
        let mut data = SeccompData::new(0xc000_003e, 1, [0; 6]);
        for (nr, arg, slot, want) in [
            (1, 9, 0, 0x7fff_0000),
            (1, 8, 0, 0),
            (2, 9, 1, 0x7fff_0000),
            (2, 8, 1, 0),
        ] {
            data.nr = nr;
            data.args = [0; 6];
            data.args[slot] = arg;
            let run = interp::trace(&p, &data).unwrap();
            assert_eq!(run.ret.0, want, "nr {nr} arg {arg}");
            // ld [0], jeq, ld, jeq, ret: no jump on the way.
            assert_eq!(run.steps, 5, "nr {nr}");
        }
    }

    #[test]
    fn a_far_one_test_target_is_copied_instead_of_trampolined() {
        // A chain of 600 tests of `nr`: every third jumps to one shared test at the end,
        // `jeq #7 → KILL : ALLOW` (A still holds nr there; only the shape matters), the others
        // to KILL or ALLOW, so copies of both returns stay within reach all along. The first
        // jumps to the shared test are more than 255 instructions away from it: a copy of it
        // (whose returns are in reach) costs what a trampoline `ja` would and saves the jump.
        let mut dag = Dag::new();
        let (allow, kill) = (dag.ret(0x7fff_0000), dag.ret(0));
        let shared = dag.test(jeq(7), kill, allow);
        let mut node = kill;
        for v in (100..300).rev() {
            node = dag.test(jeq(v + 2000), allow, node);
            node = dag.test(jeq(v + 1000), kill, node);
            node = dag.test(jeq(v), shared, node);
        }
        let root = dag.op(Insn::ld_abs(0), node);
        let p = layout(&dag, root).unwrap();
        validate(&p).unwrap();
        assert!(
            !p.insns.iter().any(|i| i.is_ja()),
            "a trampoline was placed"
        );
        for (nr, want) in [
            (100, 0x7fff_0000),
            (299, 0x7fff_0000),
            (1100, 0),
            (2100, 0x7fff_0000),
            (99, 0),
            (3000, 0),
        ] {
            let d = SeccompData::new(0xc000_003e, nr, [0; 6]);
            assert_eq!(interp::eval(&p, &d).unwrap().0, want, "nr {nr}");
        }
        // nr 100: the load, its test, the shared test's copy, the return.
        let d = SeccompData::new(0xc000_003e, 100, [0; 6]);
        assert_eq!(interp::trace(&p, &d).unwrap().steps, 4);
    }

    #[test]
    fn long_jumps_get_one_trampoline_or_a_return_copy() {
        // A chain of 300 tests that all jump to one shared non-return body at the end:
        // the first tests are more than 255 away from it.
        let mut dag = Dag::new();
        let (allow, kill) = (dag.ret(0x7fff_0000), dag.ret(0));
        let body = {
            let t = dag.test(jeq(7), kill, allow);
            dag.op(Insn::ld_abs(16), t)
        };
        let mut node = allow;
        for v in (100..400).rev() {
            node = dag.test(jeq(v), body, node);
        }
        let root = dag.op(Insn::ld_abs(0), node);
        let p = layout(&dag, root).unwrap();
        validate(&p).unwrap();
        let jas = p.insns.iter().filter(|i| i.is_ja()).count();
        // 1 load + 300 tests + body (3: load, test, one return it falls into … ) + returns:
        // at most a handful of trampolines for the first ~45 tests.
        assert!((1..=2).contains(&jas), "{jas} trampolines");
        for nr in [99, 100, 150, 399, 400] {
            let want = if (100..400).contains(&nr) {
                0
            } else {
                0x7fff_0000
            };
            let d = SeccompData::new(0xc000_003e, nr, [7, 0, 0, 0, 0, 0]);
            assert_eq!(interp::eval(&p, &d).unwrap().0, want, "nr {nr}");
        }
    }

    #[test]
    fn the_smaller_side_of_a_test_falls_through_when_the_other_is_out_of_reach() {
        // ld [0]; jeq #1 → S : L, where S is three tests and L a chain of 300 (each to its
        // own return, copies of which stay within reach). With L right behind the `jeq`, S
        // would lie more than 255 instructions ahead and need a trampoline; with S behind it,
        // L is a few instructions ahead and reached directly.
        let mut dag = Dag::new();
        let (allow, kill) = (dag.ret(0x7fff_0000), dag.ret(0));
        let mut small = kill;
        for v in 10..13 {
            small = dag.test(jeq(v), allow, small);
        }
        let small = dag.op(Insn::ld_abs(16), small);
        let mut large = allow;
        for v in 100..400 {
            large = dag.test(jeq(v), kill, large);
        }
        let t = dag.test(jeq(1), small, large);
        let root = dag.op(Insn::ld_abs(0), t);
        let p = layout(&dag, root).unwrap();
        validate(&p).unwrap();
        assert!(
            !p.insns.iter().any(|i| i.is_ja()),
            "a trampoline was placed"
        );
        for (nr, arg, want) in [
            (1, 10, 0x7fff_0000),
            (1, 13, 0),
            (2, 0, 0x7fff_0000),
            (150, 0, 0),
            (399, 0, 0),
        ] {
            let d = SeccompData::new(0xc000_003e, nr, [arg, 0, 0, 0, 0, 0]);
            assert_eq!(interp::eval(&p, &d).unwrap().0, want, "nr {nr} arg {arg}");
        }
    }

    #[test]
    fn code_after_a_return_gets_pads_for_scratch() {
        // ld [16]; st M[0]; jeq #1 → (ret 5) : (ld [24]; jeq #2 → (ld M[0]; ret a) : ret 6)
        // Whatever the order, the `ld M[0]` block may land after a `ret`; the kernel's linear
        // check must still accept the program.
        let mut dag = Dag::new();
        let ret_a = dag.ret_a();
        let load_m = dag.op(Insn::stmt(BPF_LD | BPF_W | BPF_MEM, 0), ret_a);
        let (r5, r6) = (dag.ret(5), dag.ret(6));
        let inner = dag.test(jeq(2), load_m, r6);
        let inner = dag.op(Insn::ld_abs(24), inner);
        let t = dag.test(jeq(1), r5, inner);
        let st = dag.op(Insn::stmt(BPF_ST, 0), t);
        let root = dag.op(Insn::ld_abs(16), st);
        let p = layout(&dag, root).unwrap();
        validate(&p).unwrap();
        let d = SeccompData::new(0xc000_003e, 0, [9, 2, 0, 0, 0, 0]);
        assert_eq!(interp::eval(&p, &d).unwrap().0, 9);
    }
}
