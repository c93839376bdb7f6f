//! From a lifted program to a new one: arch dispatch, then per arch class the `nr` dispatch
//! over its pieces, then the residual bodies, laid out by [`super::layout`].
//!
//! ```text
//! ld [arch]
//! <arch tree>                ; leaves: one class each (the "any other token" class included)
//! class k:  ld [nr]
//!           <nr tree>        ; leaves: the bodies of the class's pieces
//! bodies:   each residual DAG once, shared by every piece (of any class) that has it
//! ```
//!
//! Both trees come from [`super::dispatch`] with weights from the workload: per piece, the sum
//! of the counts of its syscalls, split into the two cost models. A syscall counts 0 in the
//! allow-cache model when its body is `ret ALLOW` and the kernel's bitmap covers its number:
//! the dispatch path uses only `ld [nr]`/`ld [arch]`, `jeq`/`jge` with constants and returns,
//! all of which the kernel's cache emulator follows, so such a syscall *is* cached.

use super::dag::{Dag, Node, NodeId};
use super::dispatch::{
    best_tree, best_tree_bounded, best_tree_within, dominating_tree, leaf_balance, Cost, Leaf,
    TablesCache, Tuning,
};
use super::layout::{layout, LayoutError};
use super::lift::Lifted;
use super::value_tree::ValueLayout;
use super::weights::Weights;
use super::CostModel;
use crate::arch::Arch;
use crate::bpf::action::SECCOMP_RET_ALLOW;
use crate::bpf::cache::{KernelCache, KernelVersion};
use crate::bpf::data::{OFF_ARCH, OFF_NR};
use crate::bpf::{Insn, Program};
use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;

/// How much an instruction saved in the cost model *not* being optimized counts, relative to
/// one saved in the optimized model. Not zero: with the allow cache a web server's hot
/// syscalls are all cached, and a strictly lexicographic order would let two `clone` calls
/// veto putting 100 000 `writev` calls one test closer (which the same filter pays on a
/// pre-5.11 kernel; on 5.11+ a cached syscall never runs the filter, not even its first call).
/// A power of two keeps integer weights exact.
pub const OTHER_MODEL_SHARE: f64 = 1.0 / 4.0;

/// Most heavy single values considered for `jeq` tests in front of a dispatch tree.
const HOT_CANDIDATES: usize = 16;

/// What the emitter optimizes for.
#[derive(Debug, Clone)]
pub struct EmitOptions<'a> {
    pub weights: &'a Weights,
    pub model: CostModel,
    /// Kernel whose allow cache decides which syscalls are free in the cache model.
    pub kernel: KernelVersion,
    /// The weights are the documented default, not a measured workload: keep the dispatch a
    /// little balanced from the start (see [`best_tree_bounded`]).
    pub weights_are_default: bool,
    /// A promise on the longest path of any input, in instructions
    /// ([`super::OptimizeOptions::max_path`]); `None`: the cost decides, within a slack of the
    /// shortest path (see [`best_tree_bounded`]).
    pub max_path: Option<usize>,
    /// How the dispatch trades size and worst path against cost ([`super::Favor`]; the
    /// caller gives the default weights [`Tuning::BALANCED`]).
    pub tuning: Tuning,
    /// With the default weights, replace each dispatch tree by an exact bounded tree that
    /// beats it on cost, worst path and tests at once, where there is one
    /// ([`super::dispatch::dominating_tree`]), and set the cell when one was replaced (the
    /// caller then lays the program out without them too, and compares).
    pub exact_dominance: Option<&'a Cell<bool>>,
    /// Lay long chains of value tests out as trees of chains of at most this many values
    /// ([`ValueLayout::Fit`]) instead of as `tuning` would: for a program that came out too
    /// long for the kernel. `None`: as `tuning` would.
    pub value_fit: Option<usize>,
    /// Tables of the exact bounded trees kept across this optimization's layouts (under
    /// `max_path`, see [`TablesCache`]); `None`: each layout builds its own.
    pub tables: Option<&'a TablesCache>,
}

/// One class's `nr` dispatch before it is laid out: its leaves and its hot (value, weight)s.
type ClassDispatch = (Vec<Leaf>, Vec<(u32, Cost)>);

/// The root node of the dispatch over `lifted` (built into `lifted.dag`).
///
/// The arch tree is shaped first (its leaves stand for the classes), so that with
/// [`EmitOptions::max_path`] each class's `nr` dispatch knows how many instructions the arch
/// part leaves it: `max_path − 1 (ld [arch]) − the class's arch tests − 1 (ld [nr])`.
pub fn dispatch_root(lifted: &mut Lifted, opts: &EmitOptions<'_>) -> Result<NodeId, LayoutError> {
    let allow = lifted.dag.ret(SECCOMP_RET_ALLOW);
    // The kernel's cache per kernel arch, built once (every weighted syscall asks).
    let mut kernel_caches: HashMap<Arch, Option<KernelCache>> = HashMap::default();
    let mut covered = |token: u32, nr: u32| -> bool {
        let Some(arch) = Arch::of_data(token, nr) else {
            return false;
        };
        let kernel_arch = super::cost::kernel_arch(arch);
        kernel_caches
            .entry(kernel_arch)
            .or_insert_with(|| KernelCache::for_kernel(kernel_arch, opts.kernel))
            .as_ref()
            .and_then(|k| k.target_for(token).map(|t| t.covers(nr)))
            .unwrap_or(false)
    };
    let split = |w: f64, cached: bool| -> Cost {
        let with_cache = if cached { 0.0 } else { w };
        let (main, other) = match opts.model {
            CostModel::AllowCache => (with_cache, w),
            CostModel::NoCache => (w, with_cache),
        };
        Cost([main + OTHER_MODEL_SHARE * other, 0.0])
    };
    // Per class: its leaves and hot values; per arch token: its weight (both models).
    let mut token_weight: HashMap<u32, Cost> = HashMap::default();
    let mut dispatches: Vec<ClassDispatch> = Vec::with_capacity(lifted.classes.len());
    for class in &lifted.classes {
        let mut leaves: Vec<Leaf> = class
            .pieces
            .iter()
            .map(|p| Leaf {
                lo: p.lo,
                hi: p.hi,
                target: p.body,
                weight: Cost([0.0, leaf_balance(lifted.dag.longest_path(p.body) as usize)]),
            })
            .collect();
        let mut hot: Vec<(u32, Cost)> = Vec::new();
        for &(alo, ahi) in class.arch.ranges() {
            for (token, nr, w) in opts.weights.tokens(alo, ahi) {
                if w == 0.0 {
                    continue;
                }
                let i = leaves.partition_point(|l| l.hi < nr);
                let cached = leaves[i].target == allow && covered(token, nr);
                let c = split(w, cached);
                leaves[i].weight = leaves[i].weight + c;
                hot.push((nr, c));
                let tw = token_weight.entry(token).or_insert(Cost::ZERO);
                *tw = *tw + c;
            }
        }
        hot.sort_by(|a, b| b.1.cmp_total(&a.1));
        hot.truncate(HOT_CANDIDATES);
        dispatches.push((leaves, hot));
    }
    // The arch tree, its leaves standing for class indices until the class roots exist.
    let arch_tree = (lifted.classes.len() > 1).then(|| {
        let mut leaves: Vec<Leaf> = Vec::new();
        for (c, class) in lifted.classes.iter().enumerate() {
            for &(lo, hi) in class.arch.ranges() {
                let weight = token_weight
                    .iter()
                    .filter(|(&t, _)| t >= lo && t <= hi)
                    .fold(Cost([0.0, 1.0]), |s, (_, &w)| s + w);
                leaves.push(Leaf {
                    lo,
                    hi,
                    target: c as NodeId,
                    weight,
                });
            }
        }
        leaves.sort_by_key(|l| l.lo);
        let mut hot: Vec<(u32, Cost)> = token_weight.iter().map(|(&t, &c)| (t, c)).collect();
        hot.sort_by(|a, b| b.1.cmp_total(&a.1).then(a.0.cmp(&b.0)));
        hot.truncate(HOT_CANDIDATES);
        best_tree(&leaves, &hot).0
    });
    let mut class_roots = Vec::with_capacity(lifted.classes.len());
    let mut shortest: Option<usize> = None;
    for (c, (leaves, hot)) in dispatches.iter().enumerate() {
        // Instructions before this class's `nr` tests: `ld [arch]`, the arch tests, `ld [nr]`.
        let prefix = match &arch_tree {
            Some(tree) => {
                let ranges = lifted.classes[c].arch.ranges();
                let tests = ranges.iter().map(|&(lo, hi)| tree.max_depth_in(lo, hi));
                2 + tests.max().unwrap_or(0)
            }
            None => 1,
        };
        let root = if leaves.len() == 1 {
            let body = leaves[0].target;
            if let Some(bound) = opts.max_path {
                let need = prefix - 1 + lifted.dag.longest_path(body) as usize;
                if need > bound {
                    shortest = shortest.max(Some(need));
                }
            }
            body
        } else {
            let dag = &lifted.dag;
            let len = |t: NodeId| dag.longest_path(t) as usize;
            let balance = opts.weights_are_default;
            let tuning = &opts.tuning;
            let tree = match opts.max_path {
                None => {
                    let found = best_tree_bounded(leaves, hot, &len, balance, tuning);
                    let exact = opts
                        .exact_dominance
                        .filter(|_| balance && !tuning.size_first)
                        .and_then(|replaced| {
                            let tree = dominating_tree(leaves, hot, &len, tuning, &found)?;
                            replaced.set(true);
                            Some(tree)
                        });
                    exact.unwrap_or(found).0
                }
                Some(bound) => {
                    let room = bound.saturating_sub(prefix);
                    match best_tree_within(leaves, hot, &len, balance, tuning, room, opts.tables) {
                        Ok((tree, _)) => tree,
                        Err(least) => {
                            shortest = shortest.max(Some(prefix + least));
                            continue;
                        }
                    }
                }
            };
            let node = tree.emit(&mut lifted.dag);
            lifted.dag.op(Insn::ld_abs(OFF_NR), node)
        };
        class_roots.push(root);
    }
    if let (Some(bound), Some(shortest)) = (opts.max_path, shortest) {
        return Err(LayoutError::PathBound { bound, shortest });
    }
    let Some(arch_tree) = arch_tree else {
        return Ok(class_roots[0]);
    };
    let node = arch_tree
        .map_targets(&|c| class_roots[c as usize])
        .emit(&mut lifted.dag);
    Ok(lifted.dag.op(Insn::ld_abs(OFF_ARCH), node))
}

/// Emits a lifted program (see the module documentation).
pub fn emit(lifted: &mut Lifted, opts: &EmitOptions<'_>) -> Result<Program, LayoutError> {
    drop_body_reloads(lifted);
    let values = match opts.value_fit {
        Some(per_leaf) => ValueLayout::Fit(per_leaf),
        None if opts.tuning.size_first => ValueLayout::Size,
        None => ValueLayout::Balanced,
    };
    super::value_tree::rewrite_chains(lifted, Some(opts.weights), values);
    // A shortcut lengthens its body's longest path; under a path promise the dispatch search
    // keeps every body as it is.
    // Shortcuts add instructions for speed: not when favouring size.
    if opts.max_path.is_none() && !opts.tuning.size_first {
        super::hot_args::add_shortcuts(lifted, opts.weights);
    }
    let root = dispatch_root(lifted, opts)?;
    let root = super::dag::drop_reloads(&mut lifted.dag, root);
    layout(&lifted.dag, root)
}

/// Drops reloads inside every piece's body (see [`super::dag::drop_reloads`]), so that chains of
/// tests on one word are contiguous for [`super::value_tree`].
fn drop_body_reloads(lifted: &mut Lifted) {
    let bodies: Vec<NodeId> = lifted
        .classes
        .iter()
        .flat_map(|c| c.pieces.iter().map(|p| p.body))
        .collect();
    let new = super::dag::drop_reloads_from(&mut lifted.dag, &bodies);
    let mut new = new.into_iter();
    for class in &mut lifted.classes {
        for piece in &mut class.pieces {
            piece.body = new.next().expect("one per body");
        }
    }
}

/// Whether `id` is a plain return (emitted inline wherever it is a jump target).
pub fn is_return(dag: &Dag, id: NodeId) -> bool {
    matches!(dag.node(id), Node::Ret(_) | Node::RetA)
}
