//! A model of libseccomp's BPF generator (src/gen_bpf.c, 2.5.4 and 2.6.1 alike) over the
//! rule trees of [`super::libseccomp_db`]: which blocks it makes, and which of them load the
//! word they test. It finds where the generated code tests a word the accumulator does not
//! hold (a missed reload), for the warning of [`super::reload_check`].
//!
//! The generator makes one block per tree node and level context (`_gen_bpf_node`): the
//! block loads its word only when the accumulator state it *assumes* differs, the state the
//! previous sibling on the level left (for a level's first node, its parent's). A block is
//! also reached from the nested levels under that sibling that fall through, and those may
//! have loaded another word. Blocks are kept once per content — instructions, assumed and
//! final state — in one hash table for the whole filter (`_hsh_add`), so a block is shared
//! by every syscall, of every arch, whose tree makes the same one.
//!
//! The layout (`_gen_bpf_build_bpf`) mends the state once per block: starting from the end
//! of the list of syscall tests (each arch's, in filter order; in an arch, the syscalls by
//! priority: fewest tree nodes first), it places each block right after the first block
//! found jumping to it — the backward scan makes that a depth-first walk, true side first,
//! the last syscall's tree first — and prepends the load there if *that* block's state
//! differs. A block placed after a block that agrees keeps no load, and its other
//! referrers, in the same syscall's tree or another's, may disagree. Example, the shape of
//! x86_64's tree for `a1 < 5` and `a1 < 2^64-1` (one rule each; the tests are sketched):
//!
//! ```text
//! A: hi(a1) > 0            true: C              false: B    (level 0)
//! B: lo(a1) >= 5           true: C (falls out)  false: ERRNO  (level 1, under A)
//! C: hi(a1) > 0xffffffff   ...                              (level 0, after A)
//! ```
//!
//! C assumes A's word, hi(a1), and has no load. The walk reaches it first from A's true
//! side, whose state agrees, so none is prepended; B then jumps to it holding lo(a1). Had
//! another syscall's tree, later in the list, made the same C and reached it first from a
//! block holding lo(a1), the load would have been prepended and both would be right.
//! tests/compile_libseccomp.rs checks the model against libseccomp's own filters.

use super::libseccomp_db::{Act, NodeOp, SyscallDb};
use rustc_hash::FxHashMap as HashMap;

/// What the accumulator holds in libseccomp's generated code: the word at `offset` of
/// `seccomp_data`, masked with `mask` (src/gen_bpf.c `struct acc_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct AccState {
    pub offset: u32,
    pub mask: u32,
}

impl AccState {
    /// The syscall number, as the number test leaves it.
    pub const NR: AccState = AccState {
        offset: crate::bpf::data::OFF_NR,
        mask: u32::MAX,
    };
}

/// Where a generated block's jump leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Jump {
    Block(usize),
    /// A `RET`: a rule's action, or the filter's default one (out of the syscall's tree;
    /// libseccomp's blocks for the two are one when the values agree).
    Action(u32),
}

/// The comparison a block makes. `==` and masked `==` are one `JEQ` to the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum GenCmp {
    Eq,
    Gt,
    Ge,
}

/// A block libseccomp's generator makes for a node in one level context: its content, as
/// the generator's hash table tells blocks apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct GenBlock {
    pub cmp: GenCmp,
    pub datum: u32,
    /// The state the block assumes on entry; `None` when it loads its word itself.
    pub acc_start: Option<AccState>,
    /// The state it leaves: its word, masked.
    pub acc_end: AccState,
    pub jt: Jump,
    pub jf: Jump,
}

/// Most blocks [`LibseccompGen`] makes before giving up (no answer, so no warning): a level
/// is laid out again for every place it falls through to, which grows exponentially on
/// overlapping ranges, as the lowering does (whose own limit then refuses the rules).
const MAX_GENERATED_BLOCKS: usize = 1 << 20;

/// The blocks of a whole filter: src/gen_bpf.c `_gen_bpf_chain` over each syscall's
/// [`SyscallDb`], each block made once per content (the generator's hash table).
pub(crate) struct LibseccompGen {
    /// Children before parents: a block's jumps lead to blocks with smaller indices.
    blocks: Vec<GenBlock>,
    by_content: HashMap<GenBlock, usize>,
    /// The filter's default action, where a syscall's tree decides nothing.
    default: u32,
}

/// A node whose generated block tests a word the accumulator does not hold
/// ([`LibseccompGen::missed_reload`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MissedReload {
    /// The `seccomp_data` offset of the word the tree's node tests.
    pub meant_offset: u32,
    /// The offset of the word the accumulator holds instead.
    pub held_offset: u32,
}

impl LibseccompGen {
    pub fn new(default: u32) -> Self {
        LibseccompGen {
            blocks: Vec::new(),
            by_content: HashMap::default(),
            default,
        }
    }

    pub fn blocks(&self) -> &[GenBlock] {
        &self.blocks
    }

    /// The blocks of the syscall whose tree is under `root`; the first one, which its
    /// number test jumps to. `None` on a cyclic level (the lowering refuses those) or past
    /// [`MAX_GENERATED_BLOCKS`].
    pub fn syscall(&mut self, db: &SyscallDb, root: usize) -> Option<usize> {
        let mut levels = HashMap::default();
        match self.level(
            db,
            &mut levels,
            root,
            AccState::NR,
            Jump::Action(self.default),
        )? {
            Jump::Block(head) => Some(head),
            Jump::Action(_) => None,
        }
    }

    /// The first block of the level `start` is on, entered with `entry` and falling through
    /// to `fall`. `levels` keeps the levels of this tree already made.
    fn level(
        &mut self,
        db: &SyscallDb,
        levels: &mut HashMap<(usize, AccState, Jump), Jump>,
        start: usize,
        entry: AccState,
        fall: Jump,
    ) -> Option<Jump> {
        let start = db.level_start(start);
        if let Some(&done) = levels.get(&(start, entry, fall)) {
            return Some(done);
        }
        if self.blocks.len() > MAX_GENERATED_BLOCKS {
            return None;
        }
        let mut ids = Vec::new();
        let mut next = Some(start);
        while let Some(id) = next {
            if ids.len() > db.node_count_bound() {
                return None;
            }
            ids.push(id);
            next = db.level_next(id);
        }
        // The state each node assumes: the one the node before it on the level left.
        let mut assumed = Vec::with_capacity(ids.len());
        let mut acc = entry;
        for &id in &ids {
            let node = db.node(id);
            let holds = acc.offset == node.offset && node.mask & acc.mask == node.mask;
            assumed.push(holds.then_some(acc));
            acc = AccState {
                offset: node.offset,
                mask: node.mask,
            };
        }
        let mut cont = fall;
        for (&id, &acc_start) in ids.iter().zip(&assumed).rev() {
            let node = db.node(id);
            let acc_end = AccState {
                offset: node.offset,
                mask: node.mask,
            };
            let mut side = |sub: Option<usize>, act: Act| -> Option<Jump> {
                Some(match (sub, act.get()) {
                    (Some(sub), _) => self.level(db, levels, sub, acc_end, cont)?,
                    (None, Some(a)) => Jump::Action(a),
                    (None, None) => cont,
                })
            };
            let jt = side(node.nxt_t, node.act_t)?;
            let jf = side(node.nxt_f, node.act_f)?;
            let block = GenBlock {
                cmp: gen_cmp(node.op),
                datum: node.datum,
                acc_start,
                acc_end,
                jt,
                jf,
            };
            let index = *self.by_content.entry(block).or_insert_with(|| {
                self.blocks.push(block);
                self.blocks.len() - 1
            });
            cont = Jump::Block(index);
        }
        levels.insert((start, entry, fall), cont);
        Some(cont)
    }

    /// Which blocks load their word, themselves or by the load the layout prepends, given
    /// the syscalls' first blocks in the order the layout's walk takes them: the reverse of
    /// the filter's syscall tests.
    pub fn loads(&self, walk: impl IntoIterator<Item = usize>) -> Vec<bool> {
        let blocks = &self.blocks;
        let mut loads: Vec<bool> = blocks.iter().map(|b| b.acc_start.is_none()).collect();
        let mut placed = vec![false; blocks.len()];
        for head in walk {
            // Each block placed from its first referrer, true side first.
            let mut stack = vec![(head, AccState::NR)];
            while let Some((b, from)) = stack.pop() {
                if std::mem::replace(&mut placed[b], true) {
                    continue;
                }
                if blocks[b].acc_start.is_some_and(|s| s != from) {
                    loads[b] = true;
                }
                let end = blocks[b].acc_end;
                for side in [blocks[b].jf, blocks[b].jt] {
                    if let Jump::Block(c) = side {
                        stack.push((c, end));
                    }
                }
            }
        }
        loads
    }

    /// The first block reachable from `head` that tests a word its referrer does not leave
    /// in the accumulator (it has no load, and assumes another state), with `loads` from
    /// [`LibseccompGen::loads`].
    pub fn missed_reload(&self, head: usize, loads: &[bool]) -> Option<MissedReload> {
        let blocks = &self.blocks;
        let mut seen = vec![false; blocks.len()];
        let mut stack = vec![head];
        while let Some(p) = stack.pop() {
            if std::mem::replace(&mut seen[p], true) {
                continue;
            }
            let held = blocks[p].acc_end;
            for side in [blocks[p].jf, blocks[p].jt] {
                let Jump::Block(c) = side else { continue };
                let meant = blocks[c].acc_end;
                if !loads[c]
                    && (held.offset != meant.offset || meant.mask & held.mask != meant.mask)
                {
                    return Some(MissedReload {
                        meant_offset: meant.offset,
                        held_offset: held.offset,
                    });
                }
                stack.push(c);
            }
        }
        None
    }
}

/// The generator's comparison for a tree node's.
pub(crate) fn gen_cmp(op: NodeOp) -> GenCmp {
    match op {
        NodeOp::Eq | NodeOp::MaskedEq => GenCmp::Eq,
        NodeOp::Gt => GenCmp::Gt,
        NodeOp::Ge => GenCmp::Ge,
    }
}
