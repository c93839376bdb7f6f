//! What one syscall does on one architecture, as a decision graph over 32-bit words of
//! `seccomp_data`, and its lowering to straight-line code.
//!
//! Each test loads one word, optionally masks it, and compares it with a constant; every
//! path ends in a return value. Nodes are created children first, so every edge goes from
//! a newer node to an older one and emitting nodes newest-first gives forward jumps only.

use super::builder::{Builder, Label};
use crate::bpf::insn::{BPF_JEQ, BPF_JGE, BPF_JGT};
use crate::bpf::RetVal;
use rustc_hash::FxHashMap as HashMap;

/// Index of a node in a [`Dag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct NodeId(usize);

/// An unsigned comparison of the (masked) word with a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Cmp {
    Eq,
    Gt,
    Ge,
}

impl Cmp {
    fn opcode(self) -> u16 {
        match self {
            Cmp::Eq => BPF_JEQ,
            Cmp::Gt => BPF_JGT,
            Cmp::Ge => BPF_JGE,
        }
    }

    #[cfg(test)]
    pub fn holds(self, a: u32, k: u32) -> bool {
        match self {
            Cmp::Eq => a == k,
            Cmp::Gt => a > k,
            Cmp::Ge => a >= k,
        }
    }
}

/// One word test: `(word(offset) & mask) <cmp> k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Test {
    /// Byte offset of the word in `seccomp_data`.
    pub offset: u32,
    /// `u32::MAX` means no masking.
    pub mask: u32,
    pub cmp: Cmp,
    pub k: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    Ret(RetVal),
    Test { test: Test, t: NodeId, f: NodeId },
}

/// A hash-consed decision graph: equal nodes are shared, and a test whose two branches are
/// the same node is that node.
#[derive(Debug, Default, Clone)]
pub(crate) struct Dag {
    nodes: Vec<Node>,
    interned: HashMap<Node, NodeId>,
}

impl Dag {
    pub fn new() -> Self {
        Dag::default()
    }

    /// How many distinct nodes the graph holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    fn intern(&mut self, node: Node) -> NodeId {
        if let Some(&id) = self.interned.get(&node) {
            return id;
        }
        let id = NodeId(self.nodes.len());
        self.nodes.push(node);
        self.interned.insert(node, id);
        id
    }

    pub fn ret(&mut self, value: RetVal) -> NodeId {
        self.intern(Node::Ret(value))
    }

    pub fn test(&mut self, test: Test, t: NodeId, f: NodeId) -> NodeId {
        if t == f {
            return t;
        }
        self.intern(Node::Test { test, t, f })
    }

    /// The return value if `id` decides without looking at anything.
    pub fn constant(&self, id: NodeId) -> Option<RetVal> {
        match self.nodes[id.0] {
            Node::Ret(v) => Some(v),
            Node::Test { .. } => None,
        }
    }

    /// Runs the graph from `root` on the 16 words of a `seccomp_data`.
    #[cfg(test)]
    pub fn eval(&self, root: NodeId, words: &[u32; 16]) -> RetVal {
        let mut id = root;
        loop {
            match self.nodes[id.0] {
                Node::Ret(v) => return v,
                Node::Test { test, t, f } => {
                    let a = words[(test.offset / 4) as usize] & test.mask;
                    id = if test.cmp.holds(a, test.k) { t } else { f };
                }
            }
        }
    }

    /// Emits the nodes reachable from `root`, starting at the current position of `b`.
    /// Every path ends in a `RET`, so nothing falls through past the emitted code.
    pub fn emit(&self, root: NodeId, b: &mut Builder) {
        let mut reachable = vec![false; self.nodes.len()];
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut reachable[id.0], true) {
                continue;
            }
            if let Node::Test { t, f, .. } = self.nodes[id.0] {
                stack.push(t);
                stack.push(f);
            }
        }
        let labels: HashMap<usize, Label> = (0..self.nodes.len())
            .filter(|&i| reachable[i])
            .map(|i| (i, b.label()))
            .collect();
        // Newest first: parents before children, so all jumps go forward. The root is the
        // newest reachable node (everything reachable from it is older).
        for i in (0..self.nodes.len()).rev().filter(|&i| reachable[i]) {
            b.place(labels[&i]);
            match self.nodes[i] {
                Node::Ret(v) => b.ret(v.0),
                Node::Test { test, t, f } => {
                    b.load(test.offset);
                    if test.mask != u32::MAX {
                        b.and(test.mask);
                    }
                    b.cond(test.cmp.opcode(), test.k, labels[&t.0], labels[&f.0]);
                }
            }
        }
        debug_assert!(
            (root.0 + 1..self.nodes.len()).all(|i| !reachable[i]),
            "the root must be the newest reachable node"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{interp, validate, Program};

    #[test]
    fn emitted_code_decides_like_the_graph() {
        let mut dag = Dag::new();
        let allow = dag.ret(RetVal::ALLOW);
        let deny = dag.ret(RetVal::errno(1));
        // args[0].lo > 5 && args[0].lo < 10 (little endian), hand-built.
        let lt10 = Test {
            offset: 16,
            mask: u32::MAX,
            cmp: Cmp::Ge,
            k: 10,
        };
        let upper = dag.test(lt10, deny, allow);
        let gt5 = Test {
            offset: 16,
            mask: u32::MAX,
            cmp: Cmp::Gt,
            k: 5,
        };
        let root = dag.test(gt5, upper, deny);
        assert_eq!(dag.test(gt5, deny, deny), deny, "same branches collapse");
        let mut b = Builder::new();
        dag.emit(root, &mut b);
        let prog: Program = b.finish().unwrap();
        validate::validate(&prog).unwrap();
        for (a0, expect) in [(5, deny), (6, allow), (9, allow), (10, deny)] {
            let mut words = [0u32; 16];
            words[4] = a0;
            assert_eq!(dag.eval(root, &words), dag.constant(expect).unwrap());
            assert_eq!(
                interp::eval_words(&prog, &words).unwrap(),
                dag.constant(expect).unwrap()
            );
        }
    }
}
