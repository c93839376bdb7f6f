//! The meaning of one syscall's rules on one architecture, as a [`Dag`].
//!
//! Argument comparisons (libseccomp src/db.c `_db_rule_gen_64`/`_db_rule_gen_32`, checked
//! against the source):
//! - On 64-bit ABIs a comparison looks at the whole 64-bit argument: the high word is
//!   compared first, then the low word (`>` is `hi > H || (hi == H && lo > L)`, and so on),
//!   with the corrected semantics of libseccomp 2.6.1.
//! - On 32-bit ABIs (x86, x32, arm, mips o32/n32, ppc) libseccomp compares only the low
//!   word with the low 32 bits of the constant; the high word is never loaded. A 64-bit
//!   kernel's compat entry can put non-zero high halves there (docs/kernel-facts.md), and
//!   such a filter ignores them; so does secopt's reference.
//! - `MASKED_EQ` masks the constant too; a half whose mask is 0 is not tested.
//! - rust-vmm's `dword` compares the low words only, on any ABI.
//!
//! How several rules of one syscall combine: for libseccomp, by its rule tree
//! ([`super::libseccomp_db`]); for rust-vmm seccompiler, the first rule whose conditions
//! all hold decides (its rules all carry the one match action, so that is their union).
//!
//! libseccomp's BPF code generator (2.5.4, unchanged in 2.6.1) can miscompile its own tree:
//! falling through from a nested low-word comparison into a sibling high-word comparison it
//! does not reload the accumulator, so the sibling compares the low word. secopt lowers
//! the tree itself, as libseccomp's pseudo filter code prints it (tests/compile_libseccomp.rs
//! `libseccomp_codegen_misses_an_accumulator_reload` shows a rule that libseccomp's BPF
//! fails to apply), and [`libseccomp_codegen_programs`] builds what the generated code
//! decides ([`super::libseccomp_gen`]), for a warning.

use super::builder::Builder;
use super::dag::{Cmp, Dag, NodeId, Test};
use super::libseccomp_db::{Conflict, NodeOp, Outcome, SyscallDb, Words};
use super::libseccomp_gen::{gen_cmp, AccState, GenCmp, Jump, LibseccompGen};
use super::ret_val;
use crate::arch::{Arch, Endian};
use crate::bpf::data::OFF_ARGS;
use crate::bpf::RetVal;
use crate::policy::{Action, ArgCondition, ArgWidth, CmpOp, Dialect, ResolvedRule};
use rustc_hash::FxHashMap as HashMap;

/// Whether libseccomp treats `arch` as a 32-bit ABI (`ARCH_SIZE_32`), comparing only the
/// low word of each argument. Note x32 and the MIPS n32 ABIs share a 64-bit audit token
/// but are 32-bit here (libseccomp src/arch-x32.c, src/arch-mips64n32.c).
pub fn compares_low_words_only(arch: Arch) -> bool {
    matches!(
        arch,
        Arch::X86
            | Arch::X32
            | Arch::Arm
            | Arch::Mips
            | Arch::Mipsel
            | Arch::Mips64n32
            | Arch::Mipsel64n32
            | Arch::Ppc
    )
}

/// Byte offsets of the low and high words of argument `index`.
pub fn arg_word_offsets(arch: Arch, index: u8) -> (u32, u32) {
    let first = OFF_ARGS + 8 * u32::from(index);
    match arch.endian() {
        Endian::Little => (first, first + 4),
        Endian::Big => (first + 4, first),
    }
}

/// How arguments are laid out and compared on one architecture, and whose rules apply.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArgLayout {
    pub arch: Arch,
    pub dialect: Dialect,
    /// Compare low words only, whatever the condition's width says.
    pub low_words_only: bool,
    /// Merge rules as libseccomp before 2.6.1 did (GHSA-4q85-33p6-j5g6).
    pub merge_bug: bool,
}

impl ArgLayout {
    pub fn new(arch: Arch, dialect: Dialect) -> Self {
        ArgLayout {
            arch,
            dialect,
            low_words_only: dialect == Dialect::Libseccomp && compares_low_words_only(arch),
            merge_bug: false,
        }
    }
}

fn word_test(offset: u32, mask: u32, cmp: Cmp, k: u32) -> Test {
    Test {
        offset,
        mask,
        cmp,
        k,
    }
}

/// The node that goes to `ok` when `cond` holds and to `fail` otherwise.
pub(crate) fn condition(
    dag: &mut Dag,
    layout: ArgLayout,
    cond: &ArgCondition,
    ok: NodeId,
    fail: NodeId,
) -> NodeId {
    let (lo_off, hi_off) = arg_word_offsets(layout.arch, cond.index);
    let both_words = !layout.low_words_only && cond.width == ArgWidth::Qword;
    let (hi, lo) = ((cond.value >> 32) as u32, cond.value as u32);
    let full = u32::MAX;
    // `>`/`>=` on the whole argument (or its low word) going to (t, f).
    let greater = |dag: &mut Dag, low_cmp: Cmp, t: NodeId, f: NodeId| {
        let low = dag.test(word_test(lo_off, full, low_cmp, lo), t, f);
        if !both_words {
            return low;
        }
        let hi_equal = dag.test(word_test(hi_off, full, Cmp::Eq, hi), low, f);
        dag.test(word_test(hi_off, full, Cmp::Gt, hi), t, hi_equal)
    };
    match cond.op {
        CmpOp::Gt => greater(dag, Cmp::Gt, ok, fail),
        CmpOp::Ge => greater(dag, Cmp::Ge, ok, fail),
        CmpOp::Le => greater(dag, Cmp::Gt, fail, ok),
        CmpOp::Lt => greater(dag, Cmp::Ge, fail, ok),
        CmpOp::Eq | CmpOp::Ne | CmpOp::MaskedEq(_) => {
            let (t, f) = if cond.op == CmpOp::Ne {
                (fail, ok)
            } else {
                (ok, fail)
            };
            let mask = match cond.op {
                CmpOp::MaskedEq(m) => m,
                _ => u64::MAX,
            };
            let (mask_hi, mask_lo) = ((mask >> 32) as u32, mask as u32);
            let low = if mask_lo == 0 {
                t
            } else {
                dag.test(word_test(lo_off, mask_lo, Cmp::Eq, lo & mask_lo), t, f)
            };
            if !both_words || mask_hi == 0 {
                return low;
            }
            dag.test(word_test(hi_off, mask_hi, Cmp::Eq, hi & mask_hi), low, f)
        }
    }
}

/// A rule libseccomp refuses (`seccomp_rule_add` fails, and runc with it), or one whose
/// merge secopt gave up reproducing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// JSON path of the rule.
    pub origin: std::sync::Arc<str>,
    /// The rule's place in runc's order ([`ResolvedRule::seq`]): of several refusals, runc
    /// meets the first.
    pub seq: usize,
    pub reason: &'static str,
    /// Not libseccomp's refusal: reproducing its merge took more than
    /// [`super::libseccomp_db::WORK_LIMIT`] steps ([`Conflict::TooLong`]).
    pub gave_up: bool,
}

/// The decision for one syscall with `rules` (in profile order) when nothing else matches
/// `fallback`.
pub(crate) fn syscall(
    dag: &mut Dag,
    layout: ArgLayout,
    rules: &[ResolvedRule],
    fallback: RetVal,
) -> Result<NodeId, Refused> {
    match layout.dialect {
        Dialect::Libseccomp => libseccomp_syscall(dag, layout, rules, fallback),
        Dialect::RustVmmSeccompiler | Dialect::Firecracker110 => {
            Ok(first_match(dag, layout, rules, fallback))
        }
    }
}

/// rust-vmm seccompiler: a syscall's rules (all with the filter's one match action) are
/// tried in order; the first whose conditions all hold decides. A rule without conditions
/// matches everything.
fn first_match(
    dag: &mut Dag,
    layout: ArgLayout,
    rules: &[ResolvedRule],
    fallback: RetVal,
) -> NodeId {
    let mut next = dag.ret(fallback);
    for rule in rules.iter().rev() {
        let mut ok = dag.ret(ret_val(rule.action));
        let mut conditions = rule.conditions.clone();
        conditions.sort_by_key(|c| c.index);
        for cond in conditions.iter().rev() {
            ok = condition(dag, layout, cond, ok, next);
        }
        next = ok;
    }
    next
}

/// libseccomp: the rules are merged into its rule tree ([`SyscallDb`]), which decides.
fn libseccomp_syscall(
    dag: &mut Dag,
    layout: ArgLayout,
    rules: &[ResolvedRule],
    fallback: RetVal,
) -> Result<NodeId, Refused> {
    let db = libseccomp_tree(layout, rules)?;
    Ok(match db.outcome() {
        Outcome::Empty => dag.ret(fallback),
        Outcome::Always(v) => dag.ret(RetVal(v)),
        Outcome::Tree(head) => {
            if db.has_cyclic_level(head) {
                // Reached only if no later rule walked the cycle; src/gen_bpf.c walks it.
                let last = rules.last();
                return Err(Refused {
                    origin: last.map_or_else(|| "$".into(), |r| r.origin.clone()),
                    // Met when the filter is generated, after every rule is added.
                    seq: usize::MAX,
                    reason: "after it, a level of libseccomp's rule tree is a cycle (libseccomp never finishes generating the filter)",
                    gave_up: false,
                });
            }
            let fall = dag.ret(fallback);
            let mut walk = LevelWalk {
                db: &db,
                done: HashMap::default(),
                grown_to: dag.len() + LOWERED_TREE_MAX_NODES,
            };
            walk.level(dag, head, fall).ok_or_else(|| Refused {
                origin: rules
                    .last()
                    .map_or_else(|| "$".into(), |r| r.origin.clone()),
                // Met when the filter is generated, after every rule is added.
                seq: usize::MAX,
                reason: "libseccomp's filter generator lays its rule tree out as more than \
                         a million tests (it repeats a subtree once for each way out of it; \
                         libseccomp itself takes minutes on such rules, long before that)",
                gave_up: true,
            })?
        }
    })
}

/// Most nodes one syscall's rule tree may add to the reference graph ([`LevelWalk`]). Real
/// profiles add hundreds (a few thousand for thousands of argument values); overlapping
/// ranges on several arguments grow libseccomp's layout exponentially: 40 `ioctl` rules of
/// three such comparisons lower to 200 000 instructions, 100 to 3 million, 300 past 4 GB of
/// memory (and libseccomp 2.5.4 takes 87 s on 20 of them).
const LOWERED_TREE_MAX_NODES: usize = 1 << 20;

/// Whether libseccomp takes `rules` for a syscall number that never reaches the filter (a
/// pseudo-syscall: another arch's name, or a multiplexed name this arch has no direct
/// number for). libseccomp merges them as any other and refuses the same conflicts; its
/// BPF generation skips the tree, so a cycle no rule walks is harmless there.
pub(crate) fn libseccomp_takes(layout: ArgLayout, rules: &[ResolvedRule]) -> Result<(), Refused> {
    libseccomp_tree(layout, rules).map(|_| ())
}

/// The number of nodes in libseccomp's rule tree for `rules` (0 when one has no
/// conditions), or `None` if libseccomp refuses one (the compile reports that).
pub(crate) fn libseccomp_node_count(layout: ArgLayout, rules: &[ResolvedRule]) -> Option<usize> {
    if rules.iter().any(|r| r.conditions.is_empty()) {
        // It replaces every conditional rule (and later ones are ignored): no tree to build.
        return Some(0);
    }
    libseccomp_tree(layout, rules)
        .ok()
        .map(|db| db.node_count())
}

/// A word of a syscall's arguments: its index, and whether it is the high word.
pub(crate) type ArgWord = (u8, bool);

/// The word of an arch's arguments at `offset` of `seccomp_data`.
pub(crate) fn arg_word_at(arch: Arch, offset: u32) -> Option<ArgWord> {
    (0..6u8).find_map(|i| {
        let (lo, hi) = arg_word_offsets(arch, i);
        (offset == lo)
            .then_some((i, false))
            .or((offset == hi).then_some((i, true)))
    })
}

/// A syscall's decision as its rule tree (under `root`) says, what secopt's filters do,
/// and as libseccomp's generated code computes it (from `head`, with each block's load
/// as `loads` says), each as a program over the arguments: a block without a load tests
/// whatever word (and mask) A holds on the way in. `None` if one does not fit in a program.
/// `default` is the filter's default action, where nothing in the tree decides.
pub(crate) fn libseccomp_codegen_programs(
    db: &SyscallDb,
    root: usize,
    gen: &LibseccompGen,
    (head, loads): (usize, &[bool]),
    default: RetVal,
) -> Option<(crate::bpf::Program, crate::bpf::Program)> {
    let mut dag = Dag::new();
    let fall = dag.ret(default);
    let mut walk = LevelWalk {
        db,
        done: HashMap::default(),
        grown_to: dag.len() + LOWERED_TREE_MAX_NODES,
    };
    let tree = walk.level(&mut dag, root, fall)?;

    // Every (block, state on the way in) the generated code reaches, children first (a
    // block's jumps lead to smaller indices).
    let blocks = gen.blocks();
    let state_after = |b: usize, held: AccState| {
        let block = &blocks[b];
        match block.acc_start {
            Some(assumed) if !loads[b] => AccState {
                offset: held.offset,
                mask: if block.acc_end.mask != assumed.mask {
                    held.mask & block.acc_end.mask
                } else {
                    held.mask
                },
            },
            _ => block.acc_end,
        }
    };
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![(head, AccState::NR)];
    while let Some((b, held)) = stack.pop() {
        if !seen.insert((b, held)) {
            continue;
        }
        let after = state_after(b, held);
        for side in [blocks[b].jt, blocks[b].jf] {
            if let Jump::Block(c) = side {
                stack.push((c, after));
            }
        }
    }
    let mut order: Vec<(usize, AccState)> = seen.into_iter().collect();
    order.sort_unstable();
    let mut built: HashMap<(usize, AccState), NodeId> = HashMap::default();
    for &(b, held) in &order {
        let after = state_after(b, held);
        let block = &blocks[b];
        let mut side = |jump: Jump| match jump {
            Jump::Block(c) => built[&(c, after)],
            Jump::Action(a) => dag.ret(RetVal(a)),
        };
        let (t, f) = (side(block.jt), side(block.jf));
        let cmp = cmp_of(block.cmp);
        let id = if after.mask == 0 {
            if constant_holds(cmp, block.datum) {
                t
            } else {
                f
            }
        } else {
            dag.test(word_test(after.offset, after.mask, cmp, block.datum), t, f)
        };
        built.insert((b, held), id);
    }
    let generated_root = built[&(head, AccState::NR)];
    let program = |root: NodeId| {
        let mut b = Builder::new();
        dag.emit(root, &mut b);
        b.finish().ok()
    };
    Some((program(tree)?, program(generated_root)?))
}

/// The comparison a tree node makes.
fn node_cmp(op: NodeOp) -> Cmp {
    cmp_of(gen_cmp(op))
}

/// The comparison a generated block makes.
fn cmp_of(cmp: GenCmp) -> Cmp {
    match cmp {
        GenCmp::Eq => Cmp::Eq,
        GenCmp::Gt => Cmp::Gt,
        GenCmp::Ge => Cmp::Ge,
    }
}

/// Whether a comparison of a word masked to 0 holds.
fn constant_holds(cmp: Cmp, k: u32) -> bool {
    match cmp {
        Cmp::Eq => k == 0,
        Cmp::Gt => false,
        Cmp::Ge => true,
    }
}

/// What decides a syscall's merged tree: the layout's arch and modes, the merge budget, and
/// each rule's action and conditions in order (not where the rules come from).
type TreeKey = (Arch, bool, bool, u64, Vec<(Action, Vec<ArgCondition>)>);

/// A merge slower than this is kept for the next call with the same rules.
const SLOW_MERGE: std::time::Duration = std::time::Duration::from_millis(20);

thread_local! {
    /// The last few trees whose merge was slow ([`SLOW_MERGE`]): the lowering, the filter's
    /// warnings and the command line's each build a syscall's tree, and adversarial rules
    /// (tests/data/slow-merge.json) take a second per merge.
    static SLOW_TREES: std::cell::RefCell<Vec<(TreeKey, SyscallDb)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `rules` merged into libseccomp's rule tree, in order, or the first it refuses.
pub(crate) fn libseccomp_tree(
    layout: ArgLayout,
    rules: &[ResolvedRule],
) -> Result<SyscallDb, Refused> {
    if rules.len() == 1 {
        // Most syscalls of a profile: one rule, whose merge is never slow. No cache to look
        // in and no clock to read (a thousand calls per compile of Docker's profile).
        return merge_tree(layout, rules);
    }
    let work_limit = SyscallDb::new().work_limit();
    // Compared in place: no key is built for the usual, fast merge.
    let same = |(arch, low, bug, limit, kept): &TreeKey| {
        (*arch, *low, *bug, *limit)
            == (
                layout.arch,
                layout.low_words_only,
                layout.merge_bug,
                work_limit,
            )
            && kept.len() == rules.len()
            && kept
                .iter()
                .zip(rules)
                .all(|((action, conditions), r)| *action == r.action && *conditions == r.conditions)
    };
    let cached = SLOW_TREES.with(|t| {
        t.borrow()
            .iter()
            .find(|(k, _)| same(k))
            .map(|(_, db)| db.clone())
    });
    if let Some(db) = cached {
        return Ok(db);
    }
    let started = std::time::Instant::now();
    let db = merge_tree(layout, rules)?;
    if started.elapsed() > SLOW_MERGE {
        let key: TreeKey = (
            layout.arch,
            layout.low_words_only,
            layout.merge_bug,
            work_limit,
            rules
                .iter()
                .map(|r| (r.action, r.conditions.clone()))
                .collect(),
        );
        SLOW_TREES.with(|t| {
            let mut t = t.borrow_mut();
            if t.len() >= 4 {
                t.remove(0);
            }
            t.push((key, db.clone()));
        });
    }
    Ok(db)
}

/// [`libseccomp_tree`] without the cache.
fn merge_tree(layout: ArgLayout, rules: &[ResolvedRule]) -> Result<SyscallDb, Refused> {
    let mut db = SyscallDb::new();
    let words = Words {
        arch: layout.arch,
        low_only: layout.low_words_only,
        merge_bug: layout.merge_bug,
    };
    for rule in rules {
        let mut seen = [false; 6];
        for c in &rule.conditions {
            let slot = seen.get_mut(usize::from(c.index)).ok_or_else(|| Refused {
                origin: rule.origin.clone(),
                seq: rule.seq,
                reason: "an argument index above 5",
                gave_up: false,
            })?;
            if std::mem::replace(slot, true) {
                return Err(Refused {
                    origin: rule.origin.clone(),
                    seq: rule.seq,
                    reason: "two conditions on one argument in one rule (EINVAL)",
                    gave_up: false,
                });
            }
        }
        db.add_rule(words, &rule.conditions, ret_val(rule.action).0)
            .map_err(|conflict| Refused {
                origin: rule.origin.clone(),
                seq: rule.seq,
                reason: match conflict {
                    Conflict::Overlap => "it overlaps an earlier rule for the same syscall that has a different action (EEXIST)",
                    Conflict::Loops => "adding it sends libseccomp's rule tree into a cycle (libseccomp 2.5.4 and 2.6.1 loop forever in seccomp_rule_add)",
                    Conflict::TooLong => "libseccomp's merge of this rule visits the earlier rules' shared subtrees once per path to them, and it takes more steps than secopt spends on one rule (libseccomp itself takes seconds here)",
                },
                gave_up: conflict == Conflict::TooLong,
            })?;
    }
    Ok(db)
}

/// The walk of a syscall's rule tree into the reference graph.
struct LevelWalk<'a> {
    db: &'a SyscallDb,
    /// The graph of each level already walked, by the level's first node and where it falls
    /// through: a subtree shared by several parents, or reached again with the same
    /// continuation, is walked once (the graph would intern the same nodes again).
    done: HashMap<(usize, NodeId), NodeId>,
    /// The graph's size at which the walk gives up ([`LOWERED_TREE_MAX_NODES`]).
    grown_to: usize,
}

impl LevelWalk<'_> {
    /// The graph for the tree level `start` is on, falling through to `fall` when nothing in
    /// it decides (libseccomp src/gen_bpf.c `_gen_bpf_chain`); `None` once the graph has
    /// grown past [`LevelWalk::grown_to`].
    fn level(&mut self, dag: &mut Dag, start: usize, fall: NodeId) -> Option<NodeId> {
        let db = self.db;
        let start = db.level_start(start);
        if let Some(&done) = self.done.get(&(start, fall)) {
            return Some(done);
        }
        if dag.len() > self.grown_to {
            return None;
        }
        let mut ids = Vec::new();
        let mut next = Some(start);
        while let Some(id) = next {
            ids.push(id);
            next = db.level_next(id);
        }
        let mut cont = fall;
        for &id in ids.iter().rev() {
            let node = db.node(id);
            let t = match (node.nxt_t, node.act_t.get()) {
                (Some(sub), _) => self.level(dag, sub, cont)?,
                (None, Some(a)) => dag.ret(RetVal(a)),
                (None, None) => cont,
            };
            let f = match (node.nxt_f, node.act_f.get()) {
                (Some(sub), _) => self.level(dag, sub, cont)?,
                (None, Some(a)) => dag.ret(RetVal(a)),
                (None, None) => cont,
            };
            let cmp = node_cmp(node.op);
            cont = if node.mask == 0 {
                // The masked word is 0 whatever the argument.
                if constant_holds(cmp, node.datum) {
                    t
                } else {
                    f
                }
            } else {
                dag.test(word_test(node.offset, node.mask, cmp, node.datum), t, f)
            };
        }
        self.done.insert((start, fall), cont);
        Some(cont)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::SeccompData;
    use crate::policy::Action;

    fn rule(action: Action, conditions: Vec<ArgCondition>) -> ResolvedRule {
        ResolvedRule {
            action,
            conditions,
            origin: "$.syscalls[0]".into(),
            seq: 0,
        }
    }

    /// Decides `args` with the graph for `rules` on `arch`.
    fn decide(arch: Arch, rules: &[ResolvedRule], args: [u64; 6]) -> RetVal {
        let mut dag = Dag::new();
        let layout = ArgLayout::new(arch, Dialect::Libseccomp);
        let root = syscall(&mut dag, layout, rules, RetVal::errno(1)).unwrap();
        dag.eval(root, &SeccompData::new(arch.token(), 0, args).words())
    }

    fn a0(v: u64) -> [u64; 6] {
        [v, 0, 0, 0, 0, 0]
    }

    #[test]
    fn sixty_four_bit_orderings_compare_the_high_word_first() {
        let deny = RetVal::errno(1);
        // Hand-computed: 0x1_0000_0000 > 0xFFFF_FFFF although its low word is 0.
        let gt = [rule(
            Action::Allow,
            vec![ArgCondition::new(0, CmpOp::Gt, 0xFFFF_FFFF)],
        )];
        assert_eq!(decide(Arch::X86_64, &gt, a0(0x1_0000_0000)), RetVal::ALLOW);
        assert_eq!(decide(Arch::X86_64, &gt, a0(0xFFFF_FFFF)), deny);
        // On 32-bit x86 only the low word counts: 0x1_0000_0000 looks like 0.
        assert_eq!(decide(Arch::X86, &gt, a0(0x1_0000_0000)), deny);
        let le = [rule(
            Action::Allow,
            vec![ArgCondition::new(0, CmpOp::Le, 0x2_0000_0005)],
        )];
        for (v, ok) in [
            (0x2_0000_0005, true),
            (0x2_0000_0006, false),
            (0x1_FFFF_FFFF, true),
            (0x3_0000_0000, false),
            (0, true),
        ] {
            let want = if ok { RetVal::ALLOW } else { deny };
            assert_eq!(decide(Arch::Aarch64, &le, a0(v)), want, "{v:#x}");
            // Big-endian s390x: the same decisions with the words swapped in memory.
            assert_eq!(decide(Arch::S390x, &le, a0(v)), want, "s390x {v:#x}");
        }
        let ne = [rule(
            Action::Allow,
            vec![ArgCondition::new(0, CmpOp::Ne, 5)],
        )];
        assert_eq!(decide(Arch::X86_64, &ne, a0(5)), deny);
        assert_eq!(decide(Arch::X86_64, &ne, a0(0x1_0000_0005)), RetVal::ALLOW);
        assert_eq!(decide(Arch::Arm, &ne, a0(0x1_0000_0005)), deny);
    }

    #[test]
    fn masked_eq_skips_halves_without_mask_bits() {
        // Docker's clone rule: (flags & 0x7E020000) == 0.
        let clone = [rule(
            Action::Allow,
            vec![ArgCondition::new(0, CmpOp::MaskedEq(0x7E02_0000), 0)],
        )];
        assert_eq!(decide(Arch::X86_64, &clone, a0(0x0001_1200)), RetVal::ALLOW);
        assert_eq!(
            decide(Arch::X86_64, &clone, a0(0xFFFF_FFFF_0001_1200)),
            RetVal::ALLOW
        );
        assert_eq!(
            decide(Arch::X86_64, &clone, a0(0x1000_0000)),
            RetVal::errno(1)
        );
        let mut dag = Dag::new();
        let root = syscall(
            &mut dag,
            ArgLayout::new(Arch::X86_64, Dialect::Libseccomp),
            &clone,
            RetVal::errno(1),
        )
        .unwrap();
        let mut b = super::super::builder::Builder::new();
        dag.emit(root, &mut b);
        // ld lo; and; jeq; ret; ret — no load of the high word.
        assert_eq!(b.finish().unwrap().len(), 5);
    }

    #[test]
    fn unconditional_rules_override_conditional_ones() {
        let rules = [
            rule(Action::Errno(9), vec![ArgCondition::new(1, CmpOp::Eq, 1)]),
            rule(Action::Trap, vec![]),
            rule(Action::Allow, vec![]),
        ];
        assert_eq!(
            decide(Arch::X86_64, &rules, [0, 1, 0, 0, 0, 0]),
            RetVal(0x3_0000)
        );
    }
}
