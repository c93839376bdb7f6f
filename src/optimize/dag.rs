//! Filters as hash-consed decision DAGs.
//!
//! Every optimization in this module works on this form instead of on instruction arrays:
//! a node is a return, a straight-line instruction followed by one node, or a conditional jump
//! to two nodes. Nodes are *hash-consed*: building a node that already exists returns the
//! existing one, so two structurally equal subprograms are always the same node (identical
//! returns and identical tails are merged for free), and a node's children always have smaller
//! ids than the node (the DAG is built bottom-up).
//!
//! Three simplifications are applied whenever a node is built, so every DAG is already
//! normalized:
//! - a conditional jump whose two targets are the same node *is* that node;
//! - a straight-line instruction whose results are never read (register liveness, computed
//!   exactly from the children) and that has no side effect *is* its successor (dead code);
//! - instruction fields the kernel ignores are zeroed, so equal behaviour means equal bits.
//!
//! Jumps (`ja`) do not exist here: they are only edges, and [`super::layout`] decides where an
//! edge needs a jump instruction when the DAG becomes an instruction array again.

use crate::bpf::insn::*;
use rustc_hash::FxHashMap;

/// Index of a node in a [`Dag`].
pub type NodeId = u32;

/// One node of a filter DAG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    /// `ret #k`.
    Ret(u32),
    /// `ret a`.
    RetA,
    /// A straight-line instruction (load, store, ALU, `tax`, `txa`), then `next`.
    Op { insn: Insn, next: NodeId },
    /// A conditional jump (`jt`/`jf` of `insn` are zero): `t` when taken, else `f`.
    Test { insn: Insn, t: NodeId, f: NodeId },
}

/// Liveness bit of register A.
pub const LIVE_A: u32 = 1;
/// Liveness bit of register X.
pub const LIVE_X: u32 = 2;
/// Liveness bit of scratch word `M[i]`.
pub const fn live_m(i: u32) -> u32 {
    4 << i
}
/// All scratch-word liveness bits.
pub const LIVE_M_ALL: u32 = 0xffff << 2;

/// What an instruction reads and writes, as liveness bits, and whether it has an effect beyond
/// its writes (`div x` returns 0 from the whole filter when X is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    pub uses: u32,
    pub defs: u32,
    pub side_effect: bool,
}

/// The [`Effects`] of a seccomp instruction (jumps and returns included).
pub fn effects(insn: &Insn) -> Effects {
    let code = insn.code;
    let m = || live_m(insn.k & 15);
    let (uses, defs, side_effect) = match class(code) {
        BPF_LD if mode(code) == BPF_MEM => (m(), LIVE_A, false),
        BPF_LD => (0, LIVE_A, false),
        BPF_LDX if mode(code) == BPF_MEM => (m(), LIVE_X, false),
        BPF_LDX => (0, LIVE_X, false),
        BPF_ST => (LIVE_A, m(), false),
        BPF_STX => (LIVE_X, m(), false),
        BPF_ALU if op(code) == BPF_NEG => (LIVE_A, LIVE_A, false),
        BPF_ALU if src(code) == BPF_X => (LIVE_A | LIVE_X, LIVE_A, op(code) == BPF_DIV),
        BPF_ALU => (LIVE_A, LIVE_A, false),
        BPF_JMP if op(code) == BPF_JA => (0, 0, false),
        BPF_JMP if src(code) == BPF_X => (LIVE_A | LIVE_X, 0, false),
        BPF_JMP => (LIVE_A, 0, false),
        BPF_RET if rval(code) == BPF_A => (LIVE_A, 0, false),
        BPF_RET => (0, 0, false),
        _ if miscop(code) == BPF_TXA => (LIVE_X, LIVE_A, false),
        _ => (LIVE_A, LIVE_X, false), // TAX
    };
    Effects {
        uses,
        defs,
        side_effect,
    }
}

/// The instruction with the fields the kernel ignores for its opcode set to zero.
pub fn canonical(insn: Insn) -> Insn {
    let code = insn.code;
    let k_ignored = match class(code) {
        BPF_RET => rval(code) == BPF_A,
        BPF_MISC => true,
        BPF_ALU => op(code) == BPF_NEG || src(code) == BPF_X,
        BPF_LD | BPF_LDX => mode(code) == BPF_LEN,
        BPF_JMP => src(code) == BPF_X && op(code) != BPF_JA,
        _ => false,
    };
    Insn {
        code,
        jt: 0,
        jf: 0,
        k: if k_ignored { 0 } else { insn.k },
    }
}

/// Whether the conditional jump `insn` is taken for A = `v`; `None` unless it compares A with
/// a constant (`jeq`, `jge`, `jgt`, `jset` with `K`).
pub fn taken(insn: Insn, v: u32) -> Option<bool> {
    match insn.code {
        c if c == BPF_JMP | BPF_JEQ | BPF_K => Some(v == insn.k),
        c if c == BPF_JMP | BPF_JGE | BPF_K => Some(v >= insn.k),
        c if c == BPF_JMP | BPF_JGT | BPF_K => Some(v > insn.k),
        c if c == BPF_JMP | BPF_JSET | BPF_K => Some(v & insn.k != 0),
        _ => None,
    }
}

/// A hash-consed filter DAG (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Dag {
    nodes: Vec<Node>,
    /// Registers and scratch words read before being written on some path from each node.
    live: Vec<u32>,
    /// Most instructions executed from each node to a return, including the return.
    longest: Vec<u32>,
    index: FxHashMap<Node, NodeId>,
}

impl Dag {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of nodes ever built (reachable or not).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, id: NodeId) -> Node {
        self.nodes[id as usize]
    }

    /// Liveness bits on entry to `id`.
    pub fn live_in(&self, id: NodeId) -> u32 {
        self.live[id as usize]
    }

    /// Most instructions executed from `id` to a return (a `div x` may stop earlier).
    pub fn longest_path(&self, id: NodeId) -> u32 {
        self.longest[id as usize]
    }

    fn intern(&mut self, node: Node, live: u32, longest: u32) -> NodeId {
        if let Some(&id) = self.index.get(&node) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(node);
        self.live.push(live);
        self.longest.push(longest);
        self.index.insert(node, id);
        id
    }

    /// `ret #k`.
    pub fn ret(&mut self, k: u32) -> NodeId {
        self.intern(Node::Ret(k), 0, 1)
    }

    /// `ret a`.
    pub fn ret_a(&mut self) -> NodeId {
        self.intern(Node::RetA, LIVE_A, 1)
    }

    /// A straight-line instruction followed by `next`; just `next` when the instruction is dead.
    pub fn op(&mut self, insn: Insn, next: NodeId) -> NodeId {
        let insn = canonical(insn);
        if let Some(test) = self.and_into_test(insn, next) {
            return test;
        }
        let e = effects(&insn);
        let live_next = self.live_in(next);
        if e.defs & live_next == 0 && !e.side_effect {
            return next;
        }
        let live = (live_next & !e.defs) | e.uses;
        let longest = self.longest_path(next) + 1;
        self.intern(Node::Op { insn, next }, live, longest)
    }

    /// An `and #m` whose result is read by one test and then dead is that test on the unmasked
    /// word, one instruction shorter and leaving A as it was (libseccomp and Firecracker lower
    /// "masked equal" as `and` + `jeq`):
    /// - `and #m; jeq #0, t, f` is `jset #m, f, t`;
    /// - `and #m; jeq #m, t, f` with `m` a single bit is `jset #m, t, f`;
    /// - `and #m; jset #k, t, f` is `jset #(m & k), t, f` (just `f` when `m & k` is 0).
    fn and_into_test(&mut self, insn: Insn, next: NodeId) -> Option<NodeId> {
        if insn.code != BPF_ALU | BPF_AND | BPF_K {
            return None;
        }
        let Node::Test { insn: test, t, f } = self.node(next) else {
            return None;
        };
        if (self.live_in(t) | self.live_in(f)) & LIVE_A != 0 {
            return None;
        }
        let m = insn.k;
        let jset = |k: u32| Insn::jump(BPF_JMP | BPF_JSET | BPF_K, k, 0, 0);
        if test.code == BPF_JMP | BPF_JSET | BPF_K {
            return Some(if m & test.k == 0 {
                f
            } else {
                self.test(jset(m & test.k), t, f)
            });
        }
        if test.code != BPF_JMP | BPF_JEQ | BPF_K {
            return None;
        }
        if test.k == 0 {
            Some(if m == 0 { t } else { self.test(jset(m), f, t) })
        } else if test.k == m && m.count_ones() == 1 {
            Some(self.test(jset(m), t, f))
        } else {
            None
        }
    }

    /// A conditional jump; just `t` when both targets are the same node.
    pub fn test(&mut self, insn: Insn, t: NodeId, f: NodeId) -> NodeId {
        if t == f {
            return t;
        }
        let insn = canonical(insn);
        let live = self.live_in(t) | self.live_in(f) | effects(&insn).uses;
        let longest = self.longest_path(t).max(self.longest_path(f)) + 1;
        self.intern(Node::Test { insn, t, f }, live, longest)
    }

    /// Rebuilds `node` (whose children already exist) through the simplifying constructors.
    pub fn make(&mut self, node: Node) -> NodeId {
        match node {
            Node::Ret(k) => self.ret(k),
            Node::RetA => self.ret_a(),
            Node::Op { insn, next } => self.op(insn, next),
            Node::Test { insn, t, f } => self.test(insn, t, f),
        }
    }

    /// The children of a node: none, `next`, or `(t, f)`.
    pub fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> {
        let (a, b) = match self.node(id) {
            Node::Ret(_) | Node::RetA => (None, None),
            Node::Op { next, .. } => (Some(next), None),
            Node::Test { t, f, .. } => (Some(t), Some(f)),
        };
        a.into_iter().chain(b)
    }

    /// The nodes reachable from `root`, in increasing id order (children before parents).
    pub fn reachable(&self, root: NodeId) -> Vec<NodeId> {
        let mut seen = vec![false; root as usize + 1];
        seen[root as usize] = true;
        let mut out = Vec::new();
        for id in (0..=root).rev() {
            if !seen[id as usize] {
                continue;
            }
            out.push(id);
            for c in self.children(id) {
                seen[c as usize] = true;
            }
        }
        out.reverse();
        out
    }

    /// Number of instructions `root` needs if every node were emitted once (no jumps, no
    /// duplicated returns): a lower bound on the size of any layout.
    pub fn reachable_count(&self, root: NodeId) -> usize {
        self.reachable(root).len()
    }
}

/// `root` without the loads of a word A already holds on every path that reaches them.
///
/// Lifting leaves such loads behind: a residual body starts where the input program loaded
/// a word, even when the test before it (now the only way in) left that very word in A.
/// Example, Docker's `socket` rules after lifting:
///
/// ```text
/// ld [args[0].lo]; jeq #39, allow, next; ld [args[0].lo]; jge #38, …
/// ```
///
/// The second load goes. A forward pass computes, per node, which absolute word A holds on
/// every path into it (or none); then the DAG is rebuilt bottom-up with those loads replaced
/// by their successors.
pub fn drop_reloads(dag: &mut Dag, root: NodeId) -> NodeId {
    drop_reloads_from(dag, &[root])[0]
}

/// What A holds on entry to a node, over every path from the roots (see [`held_words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Not reachable from the roots.
    Unseen,
    /// Different things on different paths, or something other than a loaded word.
    Unknown,
    /// The `seccomp_data` word at this byte offset, on every path.
    Word(u32),
    /// That word AND a mask (`ld [k]; and #m`), on every path: what a masked comparison
    /// tests. Chromium's bpf_dsl reloads and re-masks the word before every value it compares.
    Masked(u32, u32),
}

/// Per node id up to the largest root: the absolute word A holds on entry on every path from
/// `roots` (each entered with A unknown). A forward pass: parents have larger ids than their
/// children, so decreasing ids visit every parent first.
pub fn held_words(dag: &Dag, roots: &[NodeId]) -> Vec<Held> {
    let Some(&max_root) = roots.iter().max() else {
        return Vec::new();
    };
    let n = max_root as usize + 1;
    let mut held = vec![Held::Unseen; n];
    for &r in roots {
        held[r as usize] = Held::Unknown;
    }
    let meet = |slot: &mut Held, v: Held| {
        *slot = if *slot == Held::Unseen || *slot == v {
            v
        } else {
            Held::Unknown
        };
    };
    for id in (0..n).rev() {
        let state = held[id];
        if state == Held::Unseen {
            continue;
        }
        match dag.node(id as NodeId) {
            Node::Ret(_) | Node::RetA => {}
            Node::Op { insn, next } => {
                let out = if is_abs_load(&insn) {
                    Held::Word(insn.k)
                } else if insn.code == BPF_ALU | BPF_AND | BPF_K {
                    match state {
                        Held::Word(k) => Held::Masked(k, insn.k),
                        Held::Masked(k, m) => Held::Masked(k, m & insn.k),
                        _ => Held::Unknown,
                    }
                } else if effects(&insn).defs & LIVE_A != 0 {
                    Held::Unknown
                } else {
                    state
                };
                meet(&mut held[next as usize], out);
            }
            Node::Test { t, f, .. } => {
                meet(&mut held[t as usize], state);
                meet(&mut held[f as usize], state);
            }
        }
    }
    held
}

/// The mask and successor of `id` when it is `and #m`.
fn and_after(dag: &Dag, id: NodeId) -> Option<(u32, NodeId)> {
    match dag.node(id) {
        Node::Op { insn, next } if insn.code == BPF_ALU | BPF_AND | BPF_K => Some((insn.k, next)),
        _ => None,
    }
}

fn is_abs_load(insn: &Insn) -> bool {
    insn.code == BPF_LD | BPF_W | BPF_ABS
}

/// [`drop_reloads`] for several roots at once (each entered with A unknown); returns the new
/// roots in the same order.
pub fn drop_reloads_from(dag: &mut Dag, roots: &[NodeId]) -> Vec<NodeId> {
    let held = held_words(dag, roots);
    let n = held.len();
    let mut map: Vec<NodeId> = (0..n as NodeId).collect();
    let mut changed = false;
    for id in 0..n {
        if held[id] == Held::Unseen {
            continue;
        }
        map[id] = match dag.node(id as NodeId) {
            Node::Ret(_) | Node::RetA => id as NodeId,
            Node::Op { insn, next } if is_abs_load(&insn) && held[id] == Held::Word(insn.k) => {
                changed = true;
                map[next as usize]
            }
            Node::Op { insn, next } => match and_after(dag, next) {
                // `ld [k]; and #m` where A holds `[k] & m` on every path in: both go.
                Some((m, after)) if is_abs_load(&insn) && held[id] == Held::Masked(insn.k, m) => {
                    changed = true;
                    map[after as usize]
                }
                _ => dag.op(insn, map[next as usize]),
            },
            Node::Test { insn, t, f } => dag.test(insn, map[t as usize], map[f as usize]),
        };
    }
    if changed {
        roots.iter().map(|&r| map[r as usize]).collect()
    } else {
        roots.to_vec()
    }
}

/// Builds the DAG of a program as it is: one node per reachable instruction, `ja` turned into
/// edges, then the simplifications of [`Dag`] (dead code, same-target jumps, identical tails).
/// The program's initial register values (A = X = 0) are made explicit where they are read.
///
/// `prog` must be valid (jumps in range, ending in a return).
pub fn from_program(dag: &mut Dag, prog: &Program) -> NodeId {
    let n = prog.len();
    let mut ids: Vec<NodeId> = vec![0; n];
    for pc in (0..n).rev() {
        let insn = prog.insns[pc];
        let at = |t: usize| ids[t];
        ids[pc] = if insn.is_ret() {
            if rval(insn.code) == BPF_A {
                dag.ret_a()
            } else {
                dag.ret(insn.k)
            }
        } else if insn.is_ja() {
            at(pc + 1 + insn.k as usize)
        } else if insn.is_conditional_jump() {
            let (t, f) = (at(pc + 1 + insn.jt as usize), at(pc + 1 + insn.jf as usize));
            dag.test(insn, t, f)
        } else {
            dag.op(insn, at(pc + 1))
        };
    }
    with_initial_registers(dag, ids[0])
}

/// `root` preceded by `ld #0` / `ldx #0` where it reads A or X before writing them: a filter
/// starts with both registers zero, but a node placed after other code may not.
pub fn with_initial_registers(dag: &mut Dag, root: NodeId) -> NodeId {
    let mut id = root;
    if dag.live_in(id) & LIVE_X != 0 {
        id = dag.op(Insn::stmt(BPF_LDX | BPF_W | BPF_IMM, 0), id);
    }
    if dag.live_in(id) & LIVE_A != 0 {
        id = dag.op(Insn::stmt(BPF_LD | BPF_W | BPF_IMM, 0), id);
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_tails_and_returns_are_one_node() {
        let mut dag = Dag::new();
        let allow = dag.ret(0x7fff_0000);
        let again = dag.ret(0x7fff_0000);
        assert_eq!(allow, again);
        let kill = dag.ret(0);
        let jeq = Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 0);
        let t1 = dag.test(jeq, allow, kill);
        // The same test with stray jt/jf bits is the same node.
        let t2 = dag.test(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 5, 7, 9), allow, kill);
        assert_eq!(t1, t2);
        // Same-target conditional is its target.
        assert_eq!(dag.test(jeq, kill, kill), kill);
    }

    #[test]
    fn dead_instructions_vanish() {
        let mut dag = Dag::new();
        let allow = dag.ret(0x7fff_0000);
        // ld [16]; ret ALLOW: the load is dead.
        assert_eq!(dag.op(Insn::ld_abs(16), allow), allow);
        // ld [16]; ret A: it is not.
        let ret_a = dag.ret_a();
        let n = dag.op(Insn::ld_abs(16), ret_a);
        assert_ne!(n, ret_a);
        assert_eq!(dag.live_in(n), 0);
        assert_eq!(dag.longest_path(n), 2);
        // div x has a side effect (X == 0 returns 0) and stays even when A is dead.
        let div = Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0);
        let d = dag.op(div, allow);
        assert_ne!(d, allow);
        assert_eq!(dag.live_in(d), LIVE_A | LIVE_X);
    }

    #[test]
    fn program_lift_threads_jumps_and_needs_initial_registers() {
        // 0: ja +1; 1: ret 0 (dead); 2: txa; 3: ret a  -> reads X = 0 at entry.
        let p = Program::new(vec![
            Insn::ja(1),
            Insn::ret(0),
            Insn::stmt(BPF_MISC | BPF_TXA, 0),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ]);
        let mut dag = Dag::new();
        let root = from_program(&mut dag, &p);
        assert_eq!(dag.live_in(root), 0);
        match dag.node(root) {
            Node::Op { insn, .. } => assert_eq!(insn, Insn::stmt(BPF_LDX | BPF_W | BPF_IMM, 0)),
            other => panic!("expected ldx #0 first, got {other:?}"),
        }
        assert_eq!(dag.reachable_count(root), 3);
    }

    /// Lays `root` out and checks it decides like `reference` for args[0].lo (`ld [16]`)
    /// equal to every probe, with nr 0 and 1 and args[0].hi 0 and 7; returns the laid-out
    /// program.
    fn same_decisions(dag: &Dag, root: NodeId, reference: &Program, probes: &[u32]) -> Program {
        use crate::bpf::{interp, SeccompData};
        let out = super::super::layout::layout(dag, root).expect("lays out");
        for &v in probes {
            for (nr, hi) in [(0, 0), (1, 0), (0, 7), (1, 7)] {
                let d = SeccompData::new(0xc000_003e, nr, [u64::from(v) | hi << 32, 0, 0, 0, 0, 0]);
                assert_eq!(
                    interp::eval(reference, &d).unwrap(),
                    interp::eval(&out, &d).unwrap(),
                    "nr {nr}, args[0] {hi:#x}:{v:#x}\n{out:?}"
                );
            }
        }
        out
    }

    fn probes() -> Vec<u32> {
        let mut v: Vec<u32> = (0..64).collect();
        v.extend((0..32).map(|i| 1u32 << i));
        v.extend((0..32).map(|i| !(1u32 << i)));
        v.extend([u32::MAX, 0x7e02_0000, 0x7e02_0001, 0x0002_0000]);
        v
    }

    #[test]
    fn a_mask_and_a_test_become_one_jset() {
        let jeq = BPF_JMP | BPF_JEQ | BPF_K;
        let jset = BPF_JMP | BPF_JSET | BPF_K;
        // (mask, test code, test k, expected instructions after) for
        // ld [16]; and #mask; <test> #k, ret ALLOW, ret ERRNO: 5 instructions before.
        for (mask, code, k, after) in [
            (0x7e02_0000, jeq, 0, 4), // Docker's clone flags: jset #mask, errno, allow
            (4, jeq, 4, 4),           // a single bit that must be set
            (0xf0, jset, 0x3c, 4),    // jset of a mask: the common bits
            (0xf0, jset, 0x0f, 1),    // no common bits: never set, ERRNO
            (0, jeq, 0, 1),           // and #0: always equal, ALLOW
            (6, jeq, 6, 5),           // two bits that must both be set: kept
            (6, jeq, 2, 5),           // a value under the mask: kept
        ] {
            let p = Program::new(vec![
                Insn::ld_abs(16),
                Insn::stmt(BPF_ALU | BPF_AND | BPF_K, mask),
                Insn::jump(code, k, 0, 1),
                Insn::ret(0x7fff_0000),
                Insn::ret(0x0005_0001),
            ]);
            let mut dag = Dag::new();
            let root = from_program(&mut dag, &p);
            let out = same_decisions(&dag, root, &p, &probes());
            assert_eq!(
                out.len(),
                after,
                "and #{mask:#x}, {code:#x} #{k:#x}\n{out:?}"
            );
        }
        // A read after the test: the `and` stays.
        let p = Program::new(vec![
            Insn::ld_abs(16),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 4),
            Insn::jump(jeq, 0, 0, 1),
            Insn::stmt(BPF_RET | BPF_A, 0),
            Insn::ret(0x0005_0001),
        ]);
        let mut dag = Dag::new();
        let root = from_program(&mut dag, &p);
        assert_eq!(same_decisions(&dag, root, &p, &probes()).len(), 5);
    }

    #[test]
    fn loads_of_the_word_already_in_a_are_dropped() {
        let jeq = BPF_JMP | BPF_JEQ | BPF_K;
        let jge = BPF_JMP | BPF_JGE | BPF_K;
        // `p` through the DAG and `drop_reloads`, checked against `p`; the loads of [16] left.
        let loads_left = |p: &Program| {
            let mut dag = Dag::new();
            let root = from_program(&mut dag, p);
            let root = drop_reloads(&mut dag, root);
            let out = same_decisions(&dag, root, p, &probes());
            out.insns.iter().filter(|i| **i == Insn::ld_abs(16)).count()
        };
        let (allow, errno) = (Insn::ret(0x7fff_0000), Insn::ret(0x0005_0001));
        // Docker's socket residual: the second `ld [16]` reloads what A holds.
        let p = Program::new(vec![
            Insn::ld_abs(16),
            Insn::jump(jeq, 39, 3, 0),
            Insn::ld_abs(16),
            Insn::jump(jge, 38, 0, 1),
            allow,
            errno,
        ]);
        assert_eq!(loads_left(&p), 1);
        // Two ways into the last load, one with another word in A: it stays.
        let p = Program::new(vec![
            Insn::ld_abs(0),
            Insn::jump(jeq, 1, 0, 2),
            Insn::ld_abs(16),
            Insn::jump(jeq, 5, 2, 5),
            Insn::ld_abs(20),
            Insn::jump(jeq, 7, 0, 3),
            Insn::ld_abs(16),
            Insn::jump(jge, 38, 0, 1),
            allow,
            errno,
        ]);
        assert_eq!(loads_left(&p), 2);
        // An ALU result in A is not the word: the load after it stays.
        let p = Program::new(vec![
            Insn::ld_abs(16),
            Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 1),
            Insn::jump(jeq, 40, 3, 0),
            Insn::ld_abs(16),
            Insn::jump(jge, 38, 0, 1),
            allow,
            errno,
        ]);
        assert_eq!(loads_left(&p), 2);
    }

    /// Chromium's masked comparisons: `ld [w]; and #m; jeq #v` for every value. Where A holds
    /// `[w] & m` on every path in, the reload and the re-mask go; with another mask, or another
    /// word on one path in, they stay.
    #[test]
    fn a_reload_and_remask_of_what_a_holds_is_dropped() {
        let jeq = BPF_JMP | BPF_JEQ | BPF_K;
        let and = |m: u32| Insn::stmt(BPF_ALU | BPF_AND | BPF_K, m);
        let (allow, errno) = (Insn::ret(0x7fff_0000), Insn::ret(0x0005_0016));
        // (loads of [16], `and`s) left after the DAG and `drop_reloads`, checked against `p`.
        let left = |p: &Program| {
            let mut dag = Dag::new();
            let root = from_program(&mut dag, p);
            let root = drop_reloads(&mut dag, root);
            let out = same_decisions(&dag, root, p, &probes());
            let count = |want: &dyn Fn(&Insn) -> bool| out.insns.iter().filter(|i| want(i)).count();
            (
                count(&|i| *i == Insn::ld_abs(16)),
                count(&|i| i.code == BPF_ALU | BPF_AND | BPF_K),
            )
        };
        let chain = |second_mask: u32| {
            Program::new(vec![
                Insn::ld_abs(16),
                and(0xff),
                Insn::jump(jeq, 1, 5, 0),
                Insn::ld_abs(16),
                and(second_mask),
                Insn::jump(jeq, 3, 2, 0),
                errno,
                errno,
                allow,
            ])
        };
        assert_eq!(left(&chain(0xff)), (1, 1));
        assert_eq!(left(&chain(0xf0f)), (2, 2));
        // Two ways into the second load (from 4 with `[16] & 0xff` in A, from 6 with `[20]`):
        // it stays.
        let p = Program::new(vec![
            Insn::ld_abs(0),
            Insn::jump(jeq, 1, 0, 3),
            Insn::ld_abs(16),
            and(0xff),
            Insn::jump(jeq, 1, 6, 2),
            Insn::ld_abs(20),
            Insn::jump(jeq, 7, 0, 4),
            Insn::ld_abs(16),
            and(0xff),
            Insn::jump(jeq, 3, 1, 0),
            errno,
            allow,
        ]);
        assert_eq!(left(&p), (2, 2));
    }
}
