//! The optimizer: from any valid seccomp program to a program that decides every input
//! exactly as it does, laid out for the fewest instructions run per call and, as
//! [`OptimizeOptions::favor`] weighs them, for size ([`Favor::Size`]: the fewest instructions)
//! or a shorter worst path.
//!
//! ```text
//! program ──lift──> per arch class: pieces of the nr space → residual bodies (one DAG)
//!         ──emit──> arch dispatch → weighted nr dispatch → bodies, laid out under jump limits
//!         ──check─> validate; cacheable set ⊇ input's; verify equal (secopt::verify)
//! ```
//!
//! - [`lift`] specializes the program by partial evaluation for every `(arch, nr)` range that
//!   its comparisons distinguish; what is left of each is a residual DAG ([`dag`]): argument
//!   tests, ALU, `ret`. Equal residuals are one node (hash-consing), so identical decision
//!   functions share code and neighbouring numbers with the same function form one range.
//! - [`emit`] builds the dispatch ([`dispatch`]: optimal weighted search trees over the ranges,
//!   hot syscalls first where that pays, single exceptions as `jeq`), and [`layout`] turns the
//!   DAG into instructions: shared returns copied within jump range, trampolines only where a
//!   conditional jump cannot reach, nothing the kernel's checks reject.
//! - [`hot_args`] puts in front of a body the fewest argument tests that imply the decision of
//!   the workload's hottest sampled call there (only when the weights carry argument values).
//! - When a program cannot be lifted within budget, the same DAG machinery still runs on it as
//!   one body (constant and copy propagation, redundant loads, dead code, jump threading,
//!   identical tails merged, re-layout): the lossless bytecode passes. Every candidate is
//!   validated and checked not to lose a cacheable syscall; the best one for
//!   [`OptimizeOptions::favor`] is kept, and with
//!   [`OptimizeOptions::verify`] it is proved equal to the input by [`crate::verify`] before it
//!   is returned. If nothing passes, the input is returned unchanged.
//!
//! `docs/optimizer.md` has worked examples of every step.
//!
//! ```
//! use secopt::bpf::insn::*;
//! use secopt::bpf::{Insn, Program, RetVal};
//! use secopt::optimize::{optimize, OptimizeOptions};
//!
//! // A libseccomp-style linear filter: x86_64 only, allow read (0), write (1), close (3).
//! let allow = RetVal::ALLOW.0;
//! let p = Program::new(vec![
//!     Insn::ld_abs(4),
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0xc000_003e, 1, 0),
//!     Insn::ret(0),
//!     Insn::ld_abs(0),
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0),
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 2, 0),
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 3, 1, 0),
//!     Insn::ret(RetVal::errno(1).0),
//!     Insn::ret(allow),
//! ]);
//! let out = optimize(&p, &OptimizeOptions { report: true, ..Default::default() }).unwrap();
//! // The numbers 0..=1 are one range, 2 is an exception between allowed numbers, 3 is allowed
//! // and everything above is not: `jge #4`, `jeq #2` replace the three equality tests.
//! assert_eq!(out.program.len(), 8);
//! assert_eq!(out.verification, secopt::optimize::Verification::Equal);
//! let report = out.report.unwrap();
//! assert_eq!((report.before.instructions, report.after.instructions), (9, 8));
//! ```

pub mod cost;
pub mod dag;
pub mod dispatch;
pub mod emit;
pub mod hot_args;
pub mod intervals;
pub mod layout;
pub mod lift;
pub mod note;
pub mod value_sets;
pub mod value_tree;
pub mod weights;

pub use note::{Note, NoteKind};
pub use weights::{Weights, WeightsError};

use crate::arch::Arch;
use crate::bpf::cache::KernelVersion;
use crate::bpf::insn::BPF_MAXINSNS;
use crate::bpf::validate::{validate, validate_structure, ValidationError};
use crate::bpf::{stack, Program};
use cost::Caches;
use lift::{LiftConfig, Lifted};
use serde::Serialize;
use std::cell::Cell;

/// Which cost the dispatch layout minimizes (the other one breaks ties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum CostModel {
    /// Linux 5.11+: syscalls the kernel caches cost nothing (it never runs the filter for them).
    #[default]
    AllowCache,
    /// Every syscall runs the whole filter (kernels before 5.11).
    NoCache,
}

/// How to optimize.
#[derive(Debug, Clone)]
pub struct OptimizeOptions {
    /// Syscall counts to optimize for; `None`: [`Weights::default_for`] the arches the program
    /// checks, [`OptimizeOptions::native`] first.
    pub weights: Option<Weights>,
    /// The ABI the default weights count as native (100 per syscall, the others 1), when the
    /// program checks it; `None`: the host's. A filter built for another machine (an aarch64
    /// Firecracker file that also carries its x86_64 build host's section) is laid out for
    /// the machine it runs on only when told which one that is.
    pub native: Option<Arch>,
    /// Which cost the dispatch minimizes (default: [`CostModel::AllowCache`]).
    pub cost_model: CostModel,
    /// The kernel whose allow cache the cost model and the cacheability check use (default:
    /// [`KernelVersion::MODELLED`]). Independent of
    /// [`ResolveOptions::kernel`](crate::policy::ResolveOptions::kernel), which only decides
    /// a profile's `minKernel` rules: a runtime that knows its kernel sets both.
    pub kernel: KernelVersion,
    /// Prove the output equal to the input with [`crate::verify`] and check that no cacheable
    /// syscall became uncacheable, before returning it (default: `true`).
    pub verify: bool,
    /// What that proof may spend ([`SELF_CHECK_BUDGET`] by default). A candidate whose proof
    /// runs out is dropped with a note, never kept unproved: a smaller budget trades
    /// optimization of hard programs for a bound on the time (a runtime compiling filters at
    /// container start, a fuzzer), a larger one proves more.
    pub self_check_budget: crate::verify::Budget,
    /// Compute the [`Report`] (path lengths of every weighted syscall: not free; default:
    /// `false`). [`crate::compile::compile`] keeps no report; ask
    /// [`crate::compile::compile_optimized`] for one.
    pub report: bool,
    /// The longest path any input may take through the output, in instructions (a promise
    /// for latency-bound callers). A dispatch longer than that is replaced by the cheapest
    /// one within it ([`dispatch::best_tree_within`]); a program that cannot meet it is
    /// [`OptimizeError::PathBound`], never an output that breaks it (default: none).
    pub max_path: Option<usize>,
    /// What the dispatch favours: cost against size and worst path when a measured workload
    /// leaves it a choice, or the fewest instructions ([`Favor::Size`]; default:
    /// [`Favor::Balanced`]).
    pub favor: Favor,
    /// Called as each layout and each proof starts, for a caller that shows progress: most
    /// programs take milliseconds, but one with thousands of argument values can take
    /// seconds, more under `max_path` (default: none).
    pub progress: Option<Progress>,
    /// Where each self-check proof publishes its decision diagrams' node count and steps as
    /// it runs ([`crate::verify::VerifyOptions::meter`]; they start again at each proof), for
    /// a caller that shows progress against [`OptimizeOptions::self_check_budget`] (default:
    /// none).
    pub proof_meter: Option<crate::verify::Meter>,
}

/// A callback that hears what the optimizer is doing ([`OptimizeOptions::progress`]).
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(&Stage) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// What the optimizer starts, as [`OptimizeOptions::progress`] hears it. New kinds of work
/// may be reported in later versions (a caller's `match` keeps a `_` arm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Lifting the input: for every arch and syscall number, the decision it makes over the
    /// arguments (before the first layout; seconds on a random program of thousands of
    /// instructions).
    Lift,
    /// Running the passes that keep the input's own layout (`method` is
    /// [`Method::BytecodePasses`] or [`Method::StructuralPasses`]), when lifting failed or its
    /// program lost to the input.
    Passes { method: Method },
    /// Laying out the lifted program with the dispatch favouring `favor`, within `within`
    /// instructions on every path (under [`OptimizeOptions::max_path`], less the room a
    /// retry leaves for the layout's jumps), with value tests in chains of at most
    /// `values_per_chain` when the layout is searched for one that fits the kernel's limit.
    Layout {
        favor: Favor,
        within: Option<usize>,
        values_per_chain: Option<usize>,
    },
    /// Proving the candidate `method` made equal to the input (the reference lowering of a
    /// profile, for `compile`).
    Proof { method: Method },
    /// Inside a layout under [`OptimizeOptions::max_path`], filling a table of exact trees
    /// ([`dispatch::BoundedTrees`]): heard as it starts and at each percent of its work (one of
    /// hundreds of ranges takes seconds; a table the layouts already built is not heard).
    Table(dispatch::TableFill),
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Layout {
                favor,
                within,
                values_per_chain,
            } => {
                write!(f, "laying out favouring {}", favor.name())?;
                if let Some(n) = within {
                    write!(f, " within {n} instructions per path")?;
                }
                if let Some(n) = values_per_chain {
                    write!(f, ", value chains of up to {n}")?;
                }
                Ok(())
            }
            Stage::Proof { method } => write!(
                f,
                "proving the {} equal",
                match method {
                    Method::Lifted => "re-emitted program",
                    Method::BytecodePasses => "program after the bytecode passes",
                    Method::StructuralPasses => "program after the structural passes",
                    Method::Unchanged => "input",
                }
            ),
            Stage::Table(fill) => write!(f, "filling a {fill}"),
            Stage::Lift => f.write_str("lifting the decisions of the input"),
            Stage::Passes { method } => write!(
                f,
                "running the {} passes on the input's layout",
                match method {
                    Method::StructuralPasses => "structural",
                    _ => "bytecode",
                }
            ),
        }
    }
}

/// What the dispatch favours when a measured workload leaves it a choice (without one, the
/// weights are a guess and `speed` is the same as `balanced`), or the fewest instructions
/// whatever the workload (`size`): the parameters are [`dispatch::Tuning::BALANCED`],
/// [`dispatch::Tuning::SPEED`] and [`dispatch::Tuning::SIZE`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Favor {
    /// The default: a shorter worst path where it costs at most 2% more per call, and a test
    /// added for speed only where it saves 0.05 instructions per call
    #[default]
    Balanced,
    /// The least expected cost found, for a larger filter and a longer worst path
    Speed,
    /// The fewest instructions: long exception chains, no test added for speed (a slower
    /// filter, and often a longer worst path)
    Size,
}

impl Favor {
    /// The name `--favor` takes.
    pub fn name(self) -> &'static str {
        match self {
            Favor::Balanced => "balanced",
            Favor::Speed => "speed",
            Favor::Size => "size",
        }
    }

    /// The dispatch's parameters for this choice.
    pub fn tuning(self) -> dispatch::Tuning {
        match self {
            Favor::Balanced => dispatch::Tuning::BALANCED,
            Favor::Speed => dispatch::Tuning::SPEED,
            Favor::Size => dispatch::Tuning::SIZE,
        }
    }
}

impl OptimizeOptions {
    /// The [`Favor`] the dispatch uses: the one asked for with a workload or for size, and
    /// `Balanced` for speed with the default weights, which are a guess with nothing to
    /// favour.
    pub fn favor_in_effect(&self) -> Favor {
        match (self.weights.as_ref(), self.favor) {
            // Size needs no workload: the weights only order trees of the same size.
            (_, Favor::Size) | (Some(_), _) => self.favor,
            (None, _) => Favor::Balanced,
        }
    }
}

impl Default for OptimizeOptions {
    fn default() -> Self {
        OptimizeOptions {
            weights: None,
            native: None,
            cost_model: CostModel::default(),
            kernel: KernelVersion::MODELLED,
            verify: true,
            self_check_budget: SELF_CHECK_BUDGET,
            report: false,
            max_path: None,
            favor: Favor::Balanced,
            progress: None,
            proof_meter: None,
        }
    }
}

/// How the output was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Lifted per `(arch, nr)` range and re-emitted with a new dispatch.
    Lifted,
    /// The program as one body through the DAG passes (no re-dispatch).
    BytecodePasses,
    /// Structure-only DAG passes (the program was too complex to track registers).
    StructuralPasses,
    /// Nothing better was found (or could be verified): the input itself.
    Unchanged,
}

/// Whether the output was proved equal to the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Verification {
    /// Proved equal by [`crate::verify::equivalent`].
    Equal,
    /// Not attempted (`verify: false`), or the output is the input.
    Skipped,
}

/// An optimized program.
#[derive(Debug, Clone)]
pub struct Optimized {
    pub program: Program,
    pub method: Method,
    pub verification: Verification,
    /// What the self-check's proof of the output took ([`Verification::Equal`] only): how
    /// near it came to [`OptimizeOptions::self_check_budget`], the same on every machine.
    pub proof: Option<ProofWork>,
    /// Candidates that were rejected and why, and choices the options left to the optimizer
    /// (never silent).
    pub notes: Vec<Note>,
    pub report: Option<Report>,
}

pub use crate::verify::ProofWork;

/// Numbers about one program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgramStats {
    /// The program's length (JSON `length`, as every verb names an instruction count).
    #[serde(rename = "length")]
    pub instructions: usize,
    /// Syscall numbers the program lets the kernel cache, per kernel bitmap (`name`, arch
    /// token, count); the kernel's passthroughs (`uretprobe`/`uprobe`) are not counted.
    pub cacheable: Vec<CacheCount>,
    /// Expected instructions per weighted syscall with the allow cache.
    pub cost_with_cache: f64,
    /// Expected instructions per weighted syscall without it.
    pub cost_without_cache: f64,
    /// Longest path over all inputs (JSON `max_steps`, as `analyze` names it).
    #[serde(rename = "max_steps")]
    pub worst_case_path: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheCount {
    pub bitmap: &'static str,
    pub token: u32,
    pub count: usize,
}

/// Before/after numbers of an optimization.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub before: ProgramStats,
    pub after: ProgramStats,
    pub method: Method,
    pub cost_model: CostModel,
    /// What the dispatch favoured ([`OptimizeOptions::favor_in_effect`]).
    pub favor: Favor,
    /// What the weights are (`workload` or the documented default) and their size.
    pub weights: String,
    /// How argument-dependent syscalls are charged.
    pub assumption: &'static str,
    pub kernel: String,
}

/// Why a program could not be optimized. (A valid input never fails otherwise: when no
/// candidate fits the kernel's limits or passes the checks, the input itself is returned.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptimizeError {
    #[error("the input is not a valid seccomp filter: {0}")]
    Invalid(ValidationError),
    /// The input is over the kernel's limit and no candidate came under it.
    #[error("{input} instructions before optimizing; the smallest program found has {}, over the kernel's limit of {BPF_MAXINSNS} per filter", match .reached { Some(n) => n.to_string(), None => "none could be built".to_string() })]
    TooLarge {
        input: usize,
        /// The size of the smallest candidate that was laid out, if any.
        reached: Option<usize>,
    },
    /// The input is over the kernel's limit, and the candidates that came under it were all
    /// dropped by the checks: most often the self-check ran out of
    /// [`OptimizeOptions::self_check_budget`] (a larger budget may then prove one).
    #[error("{input} instructions before optimizing, over the kernel's limit of {BPF_MAXINSNS} per filter; the optimized programs that fit (the smallest has {smallest} instructions) were dropped: {}", note::joined(.reasons))]
    Dropped {
        input: usize,
        /// The smallest candidate that fit the limit.
        smallest: usize,
        /// Why each was dropped.
        reasons: Vec<Note>,
    },
    /// No program found keeps every path within [`OptimizeOptions::max_path`].
    #[error("no equivalent filter keeps every path within {bound} instructions: the shortest worst-case path secopt reached is {shortest} (the input's is {input})")]
    PathBound {
        bound: usize,
        /// The shortest worst-case path of the candidates that fit the kernel's limit (or the
        /// one the dispatch layout proved it cannot go below, in a program that fits), and the
        /// input's.
        shortest: usize,
        input: usize,
    },
}

/// Why a stack of filters could not be optimized into one program ([`optimize_stack`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StackOptimizeError {
    #[error("filter {index} of the stack is not a valid seccomp filter: {error}")]
    Filter {
        index: usize,
        error: ValidationError,
    },
    #[error("the stack cannot be joined into one program: {0}")]
    Join(stack::StackError),
    /// No candidate passed the checks; the joined program itself is never handed back (it
    /// caches nothing).
    #[error("no single program equal to the stack of {filters} filters was found that keeps every syscall the stack caches cacheable and passes the checks{}", if .notes.is_empty() { String::new() } else { format!(" ({})", note::joined(.notes)) })]
    NotJoined { filters: usize, notes: Vec<Note> },
    #[error(transparent)]
    Optimize(OptimizeError),
}

/// What [`Report::assumption`] says when the weights carry no argument values.
pub const ASSUMPTION: &str = "syscalls whose decision depends on arguments are charged their longest path (the workload records no argument values)";
/// What [`Report::assumption`] says when some calls come with argument values.
pub const ASSUMPTION_WITH_ARGUMENTS: &str = "calls the workload gives argument values for are charged their path with those values (the longest over any argument it does not give); other calls of syscalls whose decision depends on arguments, their longest path";

/// Optimizes `prog` (see the module documentation).
///
/// `prog` may be longer than the kernel's 4096 instructions (a profile's plain lowering can
/// be): it is checked with [`validate_structure`], and the output is then one that fits, or
/// [`OptimizeError::TooLarge`] says how close the optimizer got.
pub fn optimize(prog: &Program, opts: &OptimizeOptions) -> Result<Optimized, OptimizeError> {
    optimize_input(prog, None, opts)
}

/// Optimizes a stack of filters (oldest first, as they were installed and as `secopt dump`
/// lists them) into **one** program that decides every input as the kernel decides it with
/// the whole stack attached ([`crate::bpf::stack`]): the stack is joined into one program
/// ([`stack::as_one_program`]), which is lifted, re-emitted and proved equal to the output
/// like any input. The output caches every syscall the stack lets the kernel cache (those
/// every filter allows by number alone); the joined program itself caches none, so it is
/// never handed back: when no candidate passes, [`StackOptimizeError::NotJoined`]. The
/// report's "before" is the stack as the kernel runs it: every filter on each uncached
/// call, so its instructions, costs and worst path are the sums over the filters (the worst
/// path an upper bound).
pub fn optimize_stack(
    filters: &[Program],
    opts: &OptimizeOptions,
) -> Result<Optimized, StackOptimizeError> {
    for (index, f) in filters.iter().enumerate() {
        validate(f).map_err(|error| StackOptimizeError::Filter { index, error })?;
    }
    let joined = stack::joined_any_length(filters).map_err(StackOptimizeError::Join)?;
    let mut out =
        optimize_input(&joined, Some(filters), opts).map_err(StackOptimizeError::Optimize)?;
    if out.method == Method::Unchanged {
        return Err(StackOptimizeError::NotJoined {
            filters: filters.len(),
            notes: out.notes,
        });
    }
    out.notes.extend(several_listeners(filters));
    Ok(out)
}

/// The joined filter returns what the stack returns, but a `USER_NOTIF` answer goes to the
/// listener of the filter that gave it: when several filters of the stack can notify, say
/// that the joined filter (one filter, one listener) routes them all to one agent.
fn several_listeners(filters: &[Program]) -> Option<Note> {
    use crate::bpf::action::{SECCOMP_RET_ACTION_FULL, SECCOMP_RET_USER_NOTIF};
    use crate::bpf::insn::{BPF_A, BPF_K, BPF_RET};
    let notifying: Vec<String> = filters
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.insns.iter().any(|i| {
                i.code == BPF_RET | BPF_A
                    || (i.code == BPF_RET | BPF_K
                        && i.k & SECCOMP_RET_ACTION_FULL == SECCOMP_RET_USER_NOTIF)
            })
        })
        .map(|(index, _)| index.to_string())
        .collect();
    (notifying.len() > 1).then(|| {
        Note::new(
            NoteKind::SeveralListeners,
            format!(
                "filters {} of the stack can answer USER_NOTIF: in the stack each notification \
                 goes to the listener of the filter whose answer won, while the joined filter \
                 has one listener for all of them",
                notifying.join(", ")
            ),
        )
    })
}

/// [`optimize`] of `prog`, which is the joined `stack` when there is one.
///
/// `--favor` is a preference: when the layout it asks for (balanced or speed) leaves no program
/// within the kernel's limit, the one favouring size is tried before giving up (when the
/// input could be lifted: nothing else depends on `--favor`), and a note says so. (A profile
/// near the limit: 152 syscalls with five argument checks each and every other syscall
/// allowed, on x86_64, x86 and x32, is refused balanced and fits favouring size;
/// `favouring_size_is_tried_when_the_layout_asked_for_is_too_long`.)
fn optimize_input(
    prog: &Program,
    stack: Option<&[Program]>,
    opts: &OptimizeOptions,
) -> Result<Optimized, OptimizeError> {
    // Under `max_path` layouts are tried again with less room, and again favouring size
    // below: the dispatch's tables are kept across all of them.
    let tables = match &opts.progress {
        Some(Progress(tell)) => {
            let tell = std::sync::Arc::clone(tell);
            dispatch::TablesCache::watched(Box::new(move |fill| tell(&Stage::Table(fill))))
        }
        None => dispatch::TablesCache::default(),
    };
    let lifted = Cell::new(false);
    let asked = optimize_favoring(prog, stack, opts, &tables, &lifted);
    let favor = opts.favor_in_effect();
    let Err(OptimizeError::TooLarge { input, reached }) = asked else {
        return asked;
    };
    // Only the lifted program's layout depends on `--favor`: when lifting failed, the passes
    // on the input's layout would run again to the same sizes (a profile whose plain lowering
    // has 3 million instructions spent 7 s on them twice).
    if favor == Favor::Size || !lifted.get() {
        return asked;
    }
    let size = OptimizeOptions {
        favor: Favor::Size,
        ..opts.clone()
    };
    match optimize_favoring(prog, stack, &size, &tables, &lifted) {
        Ok(mut out) => {
            let needed = match reached {
                Some(n) => format!("needs {n} instructions"),
                None => "could not be built".to_string(),
            };
            out.notes.insert(
                0,
                Note::new(
                    NoteKind::LaidOutToFit,
                    format!(
                        "the layout favouring {} {needed}, more than the kernel's limit of \
                         {BPF_MAXINSNS}; favouring size it needs {}",
                        favor.name(),
                        out.program.len()
                    ),
                ),
            );
            Ok(out)
        }
        Err(OptimizeError::TooLarge { reached: size, .. }) => Err(OptimizeError::TooLarge {
            input,
            reached: match (reached, size) {
                (Some(r), Some(n)) => Some(r.min(n)),
                (r, n) => r.or(n),
            },
        }),
        // A program that fits was found, and broke `max_path` or failed a check: that says
        // more than the sizes.
        Err(e) => Err(e),
    }
}

/// [`optimize_input`] with the layout `opts` favours, keeping the dispatch's tables in
/// `tables` under `max_path`; sets `lifted` when lifting the input succeeded.
fn optimize_favoring(
    prog: &Program,
    stack: Option<&[Program]>,
    opts: &OptimizeOptions,
    tables: &dispatch::TablesCache,
    lifted: &Cell<bool>,
) -> Result<Optimized, OptimizeError> {
    validate_structure(prog).map_err(OptimizeError::Invalid)?;
    let mut reached: Option<usize> = None;
    let arches = arches_checked_native(prog, opts.native);
    let default_weights;
    let weights = match &opts.weights {
        Some(w) => w,
        None => {
            default_weights = Weights::default_for(&arches);
            &default_weights
        }
    };
    let mut notes = Vec::new();
    if let Some(w) = &opts.weights {
        notes.extend(workload_misses_the_filter(prog, w));
    }
    if opts.favor_in_effect() != opts.favor {
        notes.push(Note::new(
            NoteKind::SpeedWithoutWorkload,
            "favouring speed needs a workload: without one the default weights are a guess, and \
             the dispatch is balanced",
        ));
    }
    let input_caches = |arches: &[Arch]| match stack {
        Some(filters) => Caches::for_stack(filters, arches, opts.kernel),
        None => Caches::new(prog, arches, opts.kernel),
    };
    let before_caches = opts.verify.then(|| input_caches(&arches));

    // Candidates, best first.
    let mut candidates: Vec<(Method, Program)> = Vec::new();
    let exact_replaced = Cell::new(false);
    let default_layout = opts.weights.is_none() && opts.max_path.is_none();
    let emit_opts = emit::EmitOptions {
        weights,
        model: opts.cost_model,
        kernel: opts.kernel,
        weights_are_default: opts.weights.is_none(),
        max_path: opts.max_path,
        tuning: opts.favor_in_effect().tuning(),
        exact_dominance: default_layout.then_some(&exact_replaced),
        value_fit: None,
        tables: opts.max_path.is_some().then_some(tables),
    };
    // The smallest candidate under the kernel's limit that the checks dropped, and why they
    // dropped each.
    let mut dropped: (Option<usize>, Vec<Note>) = (None, Vec::new());
    let mut drop = |candidate: &Program, why: Note, notes: &mut Vec<Note>| {
        if candidate.len() <= BPF_MAXINSNS {
            dropped.0 = Some(
                dropped
                    .0
                    .map_or(candidate.len(), |d| d.min(candidate.len())),
            );
            dropped.1.push(why.clone());
        }
        notes.push(why);
    };
    // The shortest worst path among candidates dropped for `max_path`.
    let mut shortest_path: Option<usize> = None;
    let mut note_size = |e: &layout::LayoutError| match e {
        layout::LayoutError::TooLong { len } => {
            reached = Some(reached.map_or(*len, |r| r.min(*len)));
        }
        layout::LayoutError::PathBound { shortest, .. } => {
            shortest_path = Some(shortest_path.map_or(*shortest, |s| s.min(*shortest)));
        }
    };
    // What the caller hears of each layout as it starts.
    let tell = |stage: Stage| {
        if let Some(Progress(f)) = &opts.progress {
            f(&stage)
        }
    };
    let laying_out = |e: &emit::EmitOptions| {
        tell(Stage::Layout {
            favor: [Favor::Balanced, Favor::Speed, Favor::Size]
                .into_iter()
                .find(|f| f.tuning() == e.tuning)
                .unwrap_or(Favor::Balanced),
            within: e.max_path,
            values_per_chain: e.value_fit,
        })
    };
    // Lifting either fails (no layout can help) or gives a program to lay out.
    tell(Stage::Lift);
    let mut lifting = lift::lift(prog, &LiftConfig::FULL);
    lifted.set(lifting.is_ok());
    let mut first = lifting.as_mut().ok().map(|l| {
        laying_out(&emit_opts);
        emit::emit(l, &emit_opts)
    });
    // A fresh lifting for another layout (emitting adds to the lifted program's DAG).
    let lay_out = |opts: &emit::EmitOptions| {
        lift::lift(prog, &LiftConfig::FULL).ok().map(|mut l| {
            laying_out(opts);
            emit::emit(&mut l, opts)
        })
    };
    // A layout that misses `max_path` names the shortest worst path its dispatch reaches; with
    // thousands of argument values in balanced trees, the layout that reaches it can be too
    // long for the kernel (and walk longer than the dispatch counts, through the jumps so long
    // a program needs). That path is then no answer: the miss counts as the layout being too
    // long, so that the fit search below finds the shortest path of a program that fits, the
    // one the error reports.
    let within_limit = |e: layout::LayoutError, tuning| match e {
        layout::LayoutError::PathBound { shortest, .. } => {
            let at_shortest = emit::EmitOptions {
                max_path: Some(shortest),
                tuning,
                ..emit_opts
            };
            match lay_out(&at_shortest) {
                Some(Err(too_long @ layout::LayoutError::TooLong { .. })) => too_long,
                _ => e,
            }
        }
        e => e,
    };
    if let Some(Err(e)) = first {
        first = Some(Err(within_limit(e, emit_opts.tuning)));
    }
    // `--max-path` is a promise and `--favor` a preference: when the size or speed layout
    // does not keep the bound, the balanced one (whose dispatch holds worst paths near the
    // shortest) may.
    if let (Some(bound), Some(attempt)) = (opts.max_path, &first) {
        let kept = matches!(attempt, Ok(p) if cost::worst_case_path(p) as usize <= bound);
        if !kept && emit_opts.tuning != dispatch::Tuning::BALANCED {
            let balanced = emit::EmitOptions {
                tuning: dispatch::Tuning::BALANCED,
                ..emit_opts
            };
            match lay_out(&balanced) {
                Some(Ok(p)) if cost::worst_case_path(&p) as usize <= bound => {
                    notes.push(Note::new(
                        NoteKind::LaidOutForPathBound,
                        format!(
                            "the layout favouring {} does not keep every path within {bound}; \
                             the balanced layout does",
                            opts.favor_in_effect().name()
                        ),
                    ));
                    first = Some(Ok(p));
                }
                Some(Err(e)) => note_size(&within_limit(e, dispatch::Tuning::BALANCED)),
                _ => {}
            }
        }
    }
    // The dispatch counts its tests and the bodies' paths, not a `ja` the layout may add to
    // reach a continuation placed elsewhere, nor the trampolines a long program's far jumps
    // go through: a layout that came out over the bound is searched again with less room, one
    // instruction at a time (up to `JUMP_ROOM`), the requested tuning then balanced; a tuning
    // with no tree within a tighter bound is not tried tighter still.
    if let Some(bound) = opts.max_path {
        let over = |p: &Program| cost::worst_case_path(p) as usize > bound;
        if matches!(&first, Some(Ok(p)) if over(p)) {
            let mut tunings = vec![emit_opts.tuning, dispatch::Tuning::BALANCED];
            tunings.dedup();
            'retry: for less in 1..=JUMP_ROOM.min(bound) {
                let mut failed = Vec::new();
                for &tuning in &tunings {
                    let tighter = emit::EmitOptions {
                        max_path: Some(bound - less),
                        tuning,
                        ..emit_opts
                    };
                    match lay_out(&tighter) {
                        Some(Ok(p)) if !over(&p) => {
                            notes.push(Note::new(
                                NoteKind::LaidOutForPathBound,
                                format!(
                                    "the layout's jumps took a path over {bound}; laid out \
                                     again within {}",
                                    bound - less
                                ),
                            ));
                            first = Some(Ok(p));
                            break 'retry;
                        }
                        Some(Err(layout::LayoutError::PathBound { .. })) => failed.push(tuning),
                        _ => {}
                    }
                }
                tunings.retain(|t| !failed.contains(t));
            }
        }
    }
    // With the default weights the dispatch replaced trees that an exact bounded tree beats
    // on every count (`emit_opts.exact_dominance`); fewer tests need not make a smaller
    // program, so that layout is kept only where it is no larger, no costlier and no longer
    // than the one without, and better in one.
    if exact_replaced.get() {
        let searched = emit::EmitOptions {
            exact_dominance: None,
            ..emit_opts
        };
        let standing = |p: &Program| Standing::of(p, weights, &arches, opts);
        match (&first, lay_out(&searched)) {
            (Some(Ok(q)), Some(Ok(p))) if standing(q).dominates(&standing(&p)) => {}
            (Some(Ok(_)), Some(Err(_))) | (_, None) => {}
            (_, other) => first = other,
        }
    }
    // Value sets laid out as balanced trees can make a program too long for the kernel where
    // the same sets as chains fit with paths thousands of tests long. Trees whose leaves test a
    // few values one after another sit between the two: the fewest values per leaf that fit.
    let mut fitted = false;
    if let Some(Err(layout::LayoutError::TooLong { len })) = &first {
        let too_long = *len;
        // Fewer values per leaf make longer programs and shorter paths: the largest step
        // first (when it does not fit, none does), then a binary search for the smallest that
        // fits. The search is on size alone (with a `max_path` bound, a layout built to the
        // bound may fail on the path instead, which says nothing of its size); the bound is
        // checked on the result, whose paths are the shortest of the steps that fit.
        let fit = |step: usize| {
            let fit = emit::EmitOptions {
                value_fit: Some(VALUE_FIT_STEPS[step]),
                max_path: None,
                ..emit_opts
            };
            match lay_out(&fit) {
                Some(Ok(p)) if p.len() <= BPF_MAXINSNS => Some(p),
                _ => None,
            }
        };
        let last = VALUE_FIT_STEPS.len() - 1;
        if let Some(mut best) = fit(last).map(|p| (last, p)) {
            let (mut lo, mut hi) = (0, last);
            while lo < hi {
                let mid = (lo + hi) / 2;
                match fit(mid) {
                    Some(p) => {
                        best = (mid, p);
                        hi = mid;
                    }
                    None => lo = mid + 1,
                }
            }
            let (step, p) = best;
            let worst = cost::worst_case_path(&p) as usize;
            if let Some(bound) = opts.max_path.filter(|&bound| worst > bound) {
                note_size(&layout::LayoutError::PathBound {
                    bound,
                    shortest: worst,
                });
            } else {
                notes.push(Note::new(
                    NoteKind::LaidOutToFit,
                    format!(
                        "the layout needs {too_long} instructions, more than the kernel's limit \
                         of {BPF_MAXINSNS}; with value tests in trees of chains of up to {} \
                         values it needs {}",
                        VALUE_FIT_STEPS[step],
                        p.len()
                    ),
                ));
                first = Some(Ok(p));
                fitted = true;
            }
        }
    }
    match (first, &lifting) {
        (Some(Ok(p)), _) => candidates.push((Method::Lifted, p)),
        (Some(Err(e)), _) => {
            note_size(&e);
            notes.push(Note::new(
                NoteKind::CandidateFailed,
                format!("lifted layout: {e}"),
            ))
        }
        (None, Err(e)) => notes.push(Note::new(
            NoteKind::CandidateFailed,
            format!("lifting: {e}"),
        )),
        (None, Ok(_)) => {}
    }
    // The passes that keep the input's dispatch only matter when lifting failed or lost.
    let lifted_won = candidates.iter().any(|(_, p)| p.len() <= prog.len());
    // With `--favor size` the input's own layout after the bytecode passes may still be
    // smaller than the lifted program (a short `jeq` chain against a tree): always compared.
    let size_first = opts.favor_in_effect() == Favor::Size;
    // A program laid out to fit is large, and its proof may run out of budget where the
    // input's own layout (often a chain the proof follows easily) does not: that one stays
    // behind it.
    let fallbacks = if lifted_won && !size_first && !fitted {
        Vec::new()
    } else {
        vec![
            (Method::BytecodePasses, LiftConfig::BODY),
            (Method::StructuralPasses, LiftConfig::PLAIN),
        ]
    };
    // Behind a lifted program no larger than the input (one laid out to fit, or with `--favor
    // size` a rival for the fewest instructions), what fails to build of the others is no
    // news.
    let reserve = lifted_won;
    for (method, cfg) in fallbacks {
        tell(Stage::Passes { method });
        match lift::lift(prog, &cfg).map(|mut l| single_body(&mut l)) {
            Ok(Ok(p)) => candidates.push((method, p)),
            Ok(Err(e)) => {
                note_size(&e);
                if !reserve {
                    notes.push(Note::new(
                        NoteKind::CandidateFailed,
                        format!("{method:?}: {e}"),
                    ))
                }
            }
            Err(e) if !reserve => notes.push(Note::new(
                NoteKind::CandidateFailed,
                format!("{method:?}: {e}"),
            )),
            Err(_) => {}
        }
        // The structural passes only matter when the richer ones failed.
        if candidates.iter().any(|c| c.0 == Method::BytecodePasses) {
            break;
        }
    }
    // When the lifted program is larger than the input (or missing), or with `--favor size`,
    // the candidates and the input itself are ranked ([`rank`]): the lifted program stays
    // first unless another dominates it; with `--favor size` the smallest comes first.
    if !lifted_won || size_first {
        candidates.push((Method::Unchanged, prog.clone()));
        rank(&mut candidates, weights, &arches, opts, &mut notes);
    }

    for (method, candidate) in candidates {
        // An input too long for the kernel is no candidate (nor its path a path reached).
        if method == Method::Unchanged && prog.len() > BPF_MAXINSNS {
            continue;
        }
        if let Some(bound) = opts.max_path {
            let worst = cost::worst_case_path(&candidate) as usize;
            if worst > bound {
                shortest_path = Some(shortest_path.map_or(worst, |s| s.min(worst)));
                continue;
            }
        }
        // The input ranked first, or a method re-made it instruction for instruction (an
        // optimized filter lifted again): nothing found is better, and the output is the input
        // itself, reported as `Unchanged` whatever made it (an input too long for the kernel,
        // or a joined stack, is never handed back).
        if method == Method::Unchanged || (stack.is_none() && candidate == *prog) {
            if prog.len() > BPF_MAXINSNS || stack.is_some() {
                continue;
            }
            break;
        }
        if let Err(e) = validate(&candidate) {
            let why = Note::new(
                NoteKind::CandidateRejected,
                format!("{method:?} output rejected by the validator (a secopt bug): {e}"),
            );
            drop(&candidate, why, &mut notes);
            continue;
        }
        let mut verification = Verification::Skipped;
        let mut proof = None;
        if let Some(before) = &before_caches {
            let after = Caches::new(&candidate, &arches, opts.kernel);
            if let Some(lost) = lost_cacheable(before, &after) {
                // The passes keep their input's layout; a joined stack's layout combines the
                // filters' answers at run time, which the cache cannot follow: expected there,
                // a bug anywhere else.
                let note = if stack.is_some() && method != Method::Lifted {
                    Note::new(
                        NoteKind::CandidateFailed,
                        format!(
                            "{method:?} output dropped: it keeps the joined stack's layout, \
                             which the allow cache cannot follow ({lost})"
                        ),
                    )
                } else {
                    Note::new(
                        NoteKind::CandidateRejected,
                        format!("{method:?} output dropped: {lost}"),
                    )
                };
                drop(&candidate, note, &mut notes);
                continue;
            }
            tell(Stage::Proof { method });
            match check_equal(prog, &candidate, opts) {
                Ok(work) => {
                    verification = Verification::Equal;
                    proof = Some(work);
                }
                Err((kind, why)) => {
                    drop(
                        &candidate,
                        Note::new(kind, format!("{method:?} output dropped: {why}")),
                        &mut notes,
                    );
                    continue;
                }
            }
        }
        let report = opts.report.then(|| {
            let before = before_stats(prog, stack, weights, &arches, opts.kernel);
            make_report(before, &candidate, method, weights, opts, &arches)
        });
        return Ok(Optimized {
            program: candidate,
            method,
            verification,
            proof,
            notes,
            report,
        });
    }
    if let Some(bound) = opts.max_path {
        // The paths of the programs within the kernel's limit that missed the bound: the
        // candidates' and the input's when it fits. When there are none (an input too long for
        // the kernel, and no layout that fits), the size is the news, below.
        let input = cost::worst_case_path(prog) as usize;
        let input_fits = prog.len() <= BPF_MAXINSNS;
        let missed = shortest_path
            .into_iter()
            .chain(input_fits.then_some(input))
            .min();
        if let Some(shortest) = missed.filter(|_| !(input_fits && input <= bound)) {
            return Err(OptimizeError::PathBound {
                bound,
                shortest,
                input,
            });
        }
    }
    if prog.len() > BPF_MAXINSNS {
        if let (Some(smallest), mut reasons) = dropped {
            // And why the others were never candidates (a lifting that gave up, say): what
            // kept the output from the better layouts.
            let failed: Vec<Note> = notes
                .iter()
                .filter(|n| n.kind == NoteKind::CandidateFailed && !reasons.contains(n))
                .cloned()
                .collect();
            reasons.extend(failed);
            return Err(OptimizeError::Dropped {
                input: prog.len(),
                smallest,
                reasons,
            });
        }
        return Err(OptimizeError::TooLarge {
            input: prog.len(),
            reached,
        });
    }
    let report = opts.report.then(|| {
        let before = before_stats(prog, stack, weights, &arches, opts.kernel);
        make_report(before, prog, Method::Unchanged, weights, opts, &arches)
    });
    Ok(Optimized {
        program: prog.clone(),
        method: Method::Unchanged,
        verification: Verification::Skipped,
        proof: None,
        notes,
        report,
    })
}

/// A program's standing in the final choice: its size, its expected instructions per syscall
/// for the weights as the layout weighs them (the cost model optimized for, plus
/// [`emit::OTHER_MODEL_SHARE`] of the other), and its longest path.
#[derive(Debug, Clone, Copy)]
struct Standing {
    len: usize,
    cost: f64,
    worst: u32,
}

impl Standing {
    fn of(prog: &Program, weights: &Weights, arches: &[Arch], opts: &OptimizeOptions) -> Self {
        let caches = Caches::new(prog, arches, opts.kernel);
        let (without, with) = cost::expected_costs(prog, weights, &caches);
        let (main, other) = match opts.cost_model {
            CostModel::AllowCache => (with, without),
            CostModel::NoCache => (without, with),
        };
        Standing {
            len: prog.len(),
            cost: main + emit::OTHER_MODEL_SHARE * other,
            worst: cost::worst_case_path(prog),
        }
    }

    /// Whether `self` is at least as good as `o` in size, cost and worst path, and better in
    /// one of them.
    fn dominates(&self, o: &Standing) -> bool {
        let no_worse = self.len <= o.len && self.cost <= o.cost && self.worst <= o.worst;
        no_worse && (self.len < o.len || self.cost < o.cost || self.worst < o.worst)
    }
}

/// Orders `candidates` (the input among them, as [`Method::Unchanged`]) best first, and notes
/// when the lifted program, the usual winner, is passed over.
///
/// The lifted program is the layout `--favor` asked for (its dispatch weighs cost, size and
/// worst path), so it stays first unless another candidate *dominates* it: no larger, no
/// costlier and no longer, and better in one. With `--favor size` the fewest instructions
/// come first instead. A smaller program is not enough: for a 31-name allow-list on three
/// ABIs, libseccomp's 105-instruction `jeq` chain costs 60 instructions per syscall where the
/// lifted tree (122) costs 7.6, and an 8-name aarch64 deny-list's 14-instruction chain runs
/// 11.9 instructions per syscall without the cache, worst path 12, where the 18-instruction
/// tree runs 6.7, worst path 10.
fn rank(
    candidates: &mut Vec<(Method, Program)>,
    weights: &Weights,
    arches: &[Arch],
    opts: &OptimizeOptions,
    notes: &mut Vec<Note>,
) {
    let favor = opts.favor_in_effect();
    let mut ranked: Vec<(Standing, (Method, Program))> = candidates
        .drain(..)
        .map(|c| (Standing::of(&c.1, weights, arches, opts), c))
        .collect();
    let lifted = ranked.iter().position(|r| r.1 .0 == Method::Lifted);
    match (favor, lifted) {
        (Favor::Size, _) | (_, None) => ranked.sort_by(|a, b| {
            (a.0.len, a.0.worst)
                .cmp(&(b.0.len, b.0.worst))
                .then(a.0.cost.total_cmp(&b.0.cost))
        }),
        (_, Some(l)) => {
            let lifted = ranked[l].0;
            // Candidates that dominate the lifted program, then it, then the rest; each
            // group cheapest first, then smallest, then shortest worst path (the bytecode
            // passes may add a `ja` to a layout the input already had: of two candidates of
            // one cost the input's own 94 instructions, not the passes' 95).
            ranked.sort_by(|a, b| {
                let class = |s: &Standing, m: Method| {
                    if m == Method::Lifted {
                        1
                    } else if s.dominates(&lifted) {
                        0
                    } else {
                        2
                    }
                };
                class(&a.0, a.1 .0)
                    .cmp(&class(&b.0, b.1 .0))
                    .then(a.0.cost.total_cmp(&b.0.cost))
                    .then((a.0.len, a.0.worst).cmp(&(b.0.len, b.0.worst)))
            });
        }
    }
    let describe = |s: &Standing| {
        format!(
            "{} instructions, {:.2} instructions per syscall, worst path {}",
            s.len, s.cost, s.worst
        )
    };
    if let (Some(first), Some(lifted)) = (
        ranked.first(),
        ranked.iter().find(|r| r.1 .0 == Method::Lifted),
    ) {
        // With `--favor size` the fewest instructions win, whichever layout has them.
        if first.1 .0 != Method::Lifted && favor != Favor::Size {
            notes.push(Note::new(
                NoteKind::Ranked,
                format!(
                    "the re-emitted program ({}) ranks below {} ({}) when favouring {}",
                    describe(&lifted.0),
                    match first.1 .0 {
                        Method::Unchanged => "the input",
                        Method::BytecodePasses => "the input's layout after the bytecode passes",
                        _ => "the input's layout after the structural passes",
                    },
                    describe(&first.0),
                    favor.name()
                ),
            ));
        }
    }
    candidates.extend(ranked.into_iter().map(|r| r.1));
}

/// Lays out a lifted program that has a single body (no re-dispatch).
fn single_body(lifted: &mut Lifted) -> Result<Program, layout::LayoutError> {
    let body = lifted.classes[0].pieces[0].body;
    let body = dag::drop_reloads(&mut lifted.dag, body);
    layout::layout(&lifted.dag, body)
}

/// The self-check's proof obligation: `a` and `b` decide every input the same; what the
/// proof took when they do.
fn check_equal(
    a: &Program,
    b: &Program,
    opts: &OptimizeOptions,
) -> Result<ProofWork, (NoteKind, String)> {
    use crate::verify::{equivalent, Verdict, VerifyOptions};
    // The caller's meter when it watches (its counts start again with each proof).
    let meter = opts.proof_meter.clone().unwrap_or_default();
    // Identical programs are equal without a proof: no counts of an earlier one.
    meter.reset();
    let opts = VerifyOptions {
        budget: opts.self_check_budget.clone(),
        meter: Some(meter.clone()),
        ..VerifyOptions::default()
    };
    match equivalent(a, b, &opts) {
        Ok(Verdict::Equal) => Ok(ProofWork::measured(&meter, &opts.budget)),
        Ok(Verdict::Different(cx)) => Err((
            NoteKind::CandidateRejected,
            format!(
                "not equal to the input (a secopt bug): on {:?} the input returns {} and the \
                 output {}",
                cx.data, cx.a, cx.b
            ),
        )),
        Ok(Verdict::Unknown { reason }) => {
            use crate::verify::UnknownReason as R;
            let ran_out = match reason {
                R::BddNodes { limit } => format!("{limit} decision-diagram nodes"),
                R::BddSteps { limit } => format!("{limit} decision-diagram steps"),
                R::Memory { limit_bytes } => format!("{} MiB", limit_bytes >> 20),
                R::Time { limit_ms } if limit_ms < 1000 => format!("{limit_ms} ms"),
                R::Time { limit_ms } => format!("{} s", limit_ms / 1000),
                R::States { limit } => format!("{limit} symbolic states"),
            };
            Err((
                NoteKind::NotProved(reason),
                format!("could not be proved equal within the self-check's budget ({ran_out})"),
            ))
        }
        Err(e) => Err((
            NoteKind::CandidateRejected,
            format!("could not be verified: {e}"),
        )),
    }
}

/// The self-check's budget: smaller than `secopt verify`'s default, so that a program the
/// proof cannot handle (a multiplication or a comparison of two input words makes decision
/// diagrams exponential) is kept as it is (1.2–1.5 s over two runs for the fuzzer's worst
/// input, `cargo bench --bench compile -- pathological`) instead of after the verifier's
/// full budget. The node, step, memory and state limits stop such a proof after the same
/// work on any machine, and there is no clock: a clock made the output depend on how busy
/// the machine was (twelve compiles at once on two cores ran a 1–2 s proof past a 10 s
/// clock, and a profile that compiles alone failed; fortieth session). A caller that must
/// bound wall time sets `time_limit` itself. Real filters need far less: libseccomp's Docker
/// filters for three ABIs are compared in ~50 ms with ~47 MiB, and no proof in the test
/// suite took more than ~620 000 steps (measured once).
///
/// The node budget is sized for the largest value sets a filter can hold: the diagrams gain
/// about 600 nodes per scattered value (each new path condition rebuilds the 96 levels of
/// `arch`, `nr` and the argument's high half above the tested word), so 3 500–3 900 `ioctl`
/// requests laid out to fit the kernel's limit (the most that fit, about 4 000) need 2–3 M
/// nodes and 1.1–1.2 s to compile with the proof. At 2^21 nodes those proofs ran out and the
/// chain was kept; at 2^22 the fuzzer's worst input still stops on steps (1.74 → 1.89 s, one
/// run each; their confidence intervals just overlap).
pub const SELF_CHECK_BUDGET: crate::verify::Budget = crate::verify::Budget {
    max_bdd_nodes: 1 << 22,
    max_bdd_steps: 1 << 24,
    max_memory_bytes: 1 << 28,
    max_states: 500_000,
    time_limit: None,
};

/// The most room a `max_path` layout that came out over its bound is searched again with
/// (the bound less 1, 2, …): the jumps the layout adds that the dispatch does not count. Two
/// were enough for Firecracker's threads; a 4 000-instruction program's trampolines took
/// three and more (`max_path_leaves_room_for_a_long_programs_jumps`).
const JUMP_ROOM: usize = 8;

/// The values per leaf chain [`value_tree::ValueLayout::Fit`] may take when the layout asked
/// for is too long for the kernel; the smallest that fits is used (a longer chain, a smaller
/// program: `n + n/k` tests for `n` scattered values, a longest path of about
/// `log2(n/k) + k`).
const VALUE_FIT_STEPS: [usize; 11] = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

/// Describes the first cacheable syscall of `before` that `after` does not cache.
fn lost_cacheable(before: &Caches, after: &Caches) -> Option<String> {
    let after_sets = after.sets();
    for (name, token, numbers) in before.sets() {
        let now = after_sets
            .iter()
            .find(|(n, t, _)| *n == name && *t == token)
            .map(|s| &s.2);
        for nr in numbers {
            if now.is_none_or(|s| s.binary_search(&nr).is_err()) {
                return Some(format!(
                    "syscall {nr} of the {name} bitmap was cacheable and would not be"
                ));
            }
        }
    }
    None
}

/// The architectures whose token the program compares `arch` with (x86_64 brings x32), the
/// host's first; the host's alone when it compares none.
pub fn arches_checked(prog: &Program) -> Vec<Arch> {
    arches_checked_native(prog, None)
}

/// [`arches_checked`] with `native` (when given) in the host's place.
pub fn arches_checked_native(prog: &Program, native: Option<Arch>) -> Vec<Arch> {
    let mut arches = arches_singled_out(prog);
    let host = native.or_else(Arch::host).unwrap_or(Arch::X86_64);
    if arches.is_empty() {
        arches.push(host);
    }
    if let Some(i) = arches.iter().position(|&a| a == host) {
        arches.swap(0, i);
    }
    arches
}

/// The architectures whose token the program compares `arch` with (x86_64 brings x32), in
/// [`Arch::ALL`]'s order; none for a program that never reads `arch`.
pub fn arches_singled_out(prog: &Program) -> Vec<Arch> {
    let cuts = lift::arch_cuts(prog);
    let mut arches: Vec<Arch> = Vec::new();
    for a in Arch::ALL {
        if token_checked(&cuts, a.token()) && !arches.contains(&a) {
            arches.push(a);
        }
    }
    arches
}

/// One arch a program's description names ([`arches_described`]): a known arch, or a token
/// secopt has no table for (`arch` is then `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArchToken {
    pub arch: Option<Arch>,
    pub token: u32,
}

/// What a program checks, for the header and JSON document that describe it: every token it
/// compares `arch` with, known arches by name in [`Arch::ALL`]'s order and then tokens secopt
/// does not know, ascending. Unlike [`arches_singled_out`], x32 is named only when the
/// program tells x32's calls from x86_64's (compares `nr` across the x32 bit under x86_64's
/// token, as libseccomp's `jge #0x40000000` does): the two share a token, and a program that
/// only compares that token decides x32's calls by x86_64's rules without checking for them.
///
/// ```
/// use secopt::bpf::asm::assemble;
/// use secopt::optimize::arches_described;
/// let only_x86_64 = assemble(
///     "ld [arch]\njeq #0xc000003e, ok\nret KILL_PROCESS\nok: ret ALLOW\n",
/// ).unwrap();
/// let names: Vec<_> = arches_described(&only_x86_64).iter().map(|a| a.arch).collect();
/// assert_eq!(names, [Some(secopt::arch::Arch::X86_64)]);
/// ```
pub fn arches_described(prog: &Program) -> Vec<ArchToken> {
    let cuts = lift::arch_cuts(prog);
    let x32_told_apart = || {
        lift::word_cuts(prog, crate::bpf::data::OFF_NR, Some(Arch::X86_64.token()))
            .iter()
            .any(|c| (X32_SYSCALL_BIT..2 * X32_SYSCALL_BIT).contains(c))
    };
    let mut out: Vec<ArchToken> = Arch::ALL
        .into_iter()
        .filter(|a| token_checked(&cuts, a.token()))
        .filter(|&a| a != Arch::X32 || x32_told_apart())
        .map(|a| ArchToken {
            arch: Some(a),
            token: a.token(),
        })
        .collect();
    out.extend(
        cuts.iter()
            .filter(|&&t| token_checked(&cuts, t) && Arch::ALL.iter().all(|a| a.token() != t))
            .map(|&token| ArchToken { arch: None, token }),
    );
    out
}

/// The bit of `nr` that marks an x32 call (`__X32_SYSCALL_BIT`).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Whether the arch comparisons cutting at `cuts` ([`lift::arch_cuts`]) single out `token`.
fn token_checked(cuts: &[u32], token: u32) -> bool {
    cuts.binary_search(&token).is_ok()
        && token
            .checked_add(1)
            .is_none_or(|t1| cuts.binary_search(&t1).is_ok())
}

/// When the filter compares the arch and none of `calls` (`(token, nr)` of a workload's
/// calls) is on an arch it singles out, the finding as a sentence (`the workload's calls are
/// all on x86_64, which this filter does not single out (it checks aarch64)`), for each
/// caller to say what follows from it. Every call then takes the filter's path for other
/// arches (a few instructions to a kill), so the workload shapes no layout and its costs say
/// nothing about the filter. The usual cause: a workload read for the host's ABI (names
/// without an arch) given to another ABI's filter.
pub fn calls_miss_the_filter(
    prog: &Program,
    calls: impl Iterator<Item = (u32, u32)>,
) -> Option<String> {
    let cuts = lift::arch_cuts(prog);
    let calls: Vec<(u32, u32)> = calls.collect();
    if cuts.is_empty() || calls.is_empty() || calls.iter().any(|&(t, _)| token_checked(&cuts, t)) {
        return None;
    }
    let mut on: Vec<String> = calls
        .iter()
        .map(|&(t, nr)| match Arch::of_data(t, nr) {
            Some(a) => a.name().to_string(),
            None => format!("arch {t:#010x}"),
        })
        .collect();
    on.sort();
    on.dedup();
    let checked: Vec<&str> = Arch::ALL
        .iter()
        .filter(|a| token_checked(&cuts, a.token()))
        .map(|a| a.name())
        .collect();
    let checked = if checked.is_empty() {
        "only arch tokens secopt does not know".to_string()
    } else {
        checked.join(", ")
    };
    Some(format!(
        "the workload's calls are all on {}, which this filter does not single out (it checks \
         {checked})",
        on.join(", ")
    ))
}

/// [`calls_miss_the_filter`] for the weights `optimize` lays the program out for, as a note.
fn workload_misses_the_filter(prog: &Program, weights: &Weights) -> Option<Note> {
    let calls = weights
        .iter()
        .filter(|&(_, _, c)| c > 0.0)
        .map(|(t, nr, _)| (t, nr));
    let finding = calls_miss_the_filter(prog, calls)?;
    Some(Note::new(
        NoteKind::WorkloadMissesFilter,
        format!(
            "{finding}: they all take its path for other arches, so the workload does not shape \
             the layout and its costs say nothing"
        ),
    ))
}

fn cache_counts(caches: &Caches) -> Vec<CacheCount> {
    caches
        .filter_sets()
        .into_iter()
        .map(|(bitmap, token, numbers)| CacheCount {
            bitmap,
            token,
            count: numbers.len(),
        })
        .collect()
}

/// Size, cacheable counts, costs and worst case of one program.
pub fn stats(
    prog: &Program,
    weights: &Weights,
    arches: &[Arch],
    kernel: KernelVersion,
) -> ProgramStats {
    let caches = Caches::new(prog, arches, kernel);
    let (without, with) = cost::expected_costs(prog, weights, &caches);
    ProgramStats {
        instructions: prog.len(),
        cacheable: cache_counts(&caches),
        cost_with_cache: with,
        cost_without_cache: without,
        worst_case_path: cost::worst_case_path(prog),
    }
}

/// [`stats`] of the input: of `prog`, or of `stack` as the kernel runs it (every filter on
/// each call it does not cache: instructions, costs and worst path summed over the filters,
/// the cache the one the whole stack leaves).
fn before_stats(
    prog: &Program,
    stack: Option<&[Program]>,
    weights: &Weights,
    arches: &[Arch],
    kernel: KernelVersion,
) -> ProgramStats {
    let Some(filters) = stack else {
        return stats(prog, weights, arches, kernel);
    };
    let caches = Caches::for_stack(filters, arches, kernel);
    let mut total = ProgramStats {
        instructions: 0,
        cacheable: cache_counts(&caches),
        cost_with_cache: 0.0,
        cost_without_cache: 0.0,
        worst_case_path: 0,
    };
    for f in filters {
        let (without, with) = cost::expected_costs(f, weights, &caches);
        total.instructions += f.len();
        total.cost_with_cache += with;
        total.cost_without_cache += without;
        total.worst_case_path += cost::worst_case_path(f);
    }
    total
}

fn make_report(
    before: ProgramStats,
    after: &Program,
    method: Method,
    weights: &Weights,
    opts: &OptimizeOptions,
    arches: &[Arch],
) -> Report {
    let what = if opts.weights.is_some() {
        format!("workload: {weights}")
    } else {
        let names: Vec<&str> = arches.iter().map(|a| a.name()).collect();
        format!(
            "default: every named syscall of {} ({} 100 each, the others 1 each)",
            names.join(", "),
            names.first().copied().unwrap_or("?")
        )
    };
    Report {
        before,
        after: stats(after, weights, arches, opts.kernel),
        method,
        cost_model: opts.cost_model,
        favor: opts.favor_in_effect(),
        weights: what,
        assumption: if weights.sampled_syscalls().next().is_some() {
            ASSUMPTION_WITH_ARGUMENTS
        } else {
            ASSUMPTION
        },
        kernel: opts.kernel.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::asm::assemble;

    fn asm(text: &str) -> Program {
        assemble(text).unwrap()
    }

    /// The proof's work is what the self-check's budget measures: a budget of exactly the
    /// nodes and steps it reports proves the output again, one node or one step fewer runs
    /// out (and the candidate is dropped, never kept unproved); without the self-check there
    /// is none.
    #[test]
    fn the_proofs_work_is_the_least_budget_that_proves_it() {
        let input = asm("ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\n\
             jeq #x86_64.read, allow\njeq #x86_64.write, allow\njeq #x86_64.close, allow\n\
             jeq #x86_64.socket, next, deny\nld [args[0].lo]\njeq #2, allow\njeq #10, allow\n\
             jeq #16, allow, deny\ndeny: ret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS\n");
        let out = optimize(&input, &OptimizeOptions::default()).unwrap();
        assert_eq!(out.verification, Verification::Equal);
        let work = out.proof.expect("the proof's work");
        assert_eq!(
            (work.max_bdd_nodes, work.max_bdd_steps),
            (
                SELF_CHECK_BUDGET.max_bdd_nodes as u64,
                SELF_CHECK_BUDGET.max_bdd_steps
            )
        );
        assert!(work.bdd_nodes > 2 && work.bdd_steps > 0, "{work:?}");
        let within = |nodes: u64, steps: u64| {
            let opts = OptimizeOptions {
                self_check_budget: crate::verify::Budget {
                    max_bdd_nodes: nodes as usize,
                    max_bdd_steps: steps,
                    ..SELF_CHECK_BUDGET.without_clock()
                },
                ..OptimizeOptions::default()
            };
            optimize(&input, &opts).unwrap()
        };
        let again = within(work.bdd_nodes, work.bdd_steps);
        assert_eq!(
            (again.program, again.verification),
            (out.program.clone(), Verification::Equal)
        );
        assert_eq!(
            again.proof.map(|w| (w.bdd_nodes, w.bdd_steps)),
            Some((work.bdd_nodes, work.bdd_steps))
        );
        for (nodes, steps) in [
            (work.bdd_nodes - 1, work.bdd_steps),
            (work.bdd_nodes, work.bdd_steps - 1),
        ] {
            let short = within(nodes, steps);
            assert_ne!(short.program, out.program, "{nodes} {steps}");
            assert!(
                short
                    .notes
                    .iter()
                    .any(|n| matches!(n.kind, NoteKind::NotProved(_))),
                "{:?}",
                short.notes
            );
        }
        let unchecked = optimize(
            &input,
            &OptimizeOptions {
                verify: false,
                ..OptimizeOptions::default()
            },
        )
        .unwrap();
        assert_eq!(
            (unchecked.verification, unchecked.proof),
            (Verification::Skipped, None)
        );
        // A caller's meter follows each proof from its start: the same instructions on both
        // sides need none, and do not report the last one's work.
        let watched = OptimizeOptions {
            proof_meter: Some(crate::verify::Meter::default()),
            ..OptimizeOptions::default()
        };
        let first = check_equal(&input, &out.program, &watched).unwrap();
        assert_eq!(
            (first.bdd_nodes, first.bdd_steps),
            (work.bdd_nodes, work.bdd_steps)
        );
        let same = check_equal(&input, &input, &watched).unwrap();
        assert_eq!((same.bdd_nodes, same.bdd_steps), (0, 0));
    }

    /// Of candidates that dominate the lifted program and cost the same, the smallest comes
    /// first (the bytecode passes once kept a `ja` the input did not have, and won on order).
    #[test]
    fn of_equally_cheap_candidates_the_smaller_ranks_first() {
        let body = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\n\
                    jeq #x86_64.read, allow\nret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS\n";
        let input = asm(body);
        // The same paths, one unreachable instruction more.
        let padded = asm(&format!("{body}ret ERRNO(2)\n"));
        // One load more on every path of x86_64: costlier, longer.
        let lifted = asm(&body.replace("ld [nr]\n", "ld [nr]\nld [nr]\n"));
        let mut candidates = vec![
            (Method::Lifted, lifted),
            (Method::BytecodePasses, padded),
            (Method::Unchanged, input.clone()),
        ];
        let weights = Weights::default_for(&[Arch::X86_64]);
        let mut notes = Vec::new();
        let opts = OptimizeOptions::default();
        rank(
            &mut candidates,
            &weights,
            &[Arch::X86_64],
            &opts,
            &mut notes,
        );
        let order: Vec<Method> = candidates.iter().map(|c| c.0).collect();
        assert_eq!(
            order,
            vec![Method::Unchanged, Method::BytecodePasses, Method::Lifted]
        );
        assert_eq!(candidates[0].1, input);
        assert!(
            notes[0].kind == NoteKind::Ranked
                && notes[0]
                    .text
                    .contains("ranks below the input (7 instructions"),
            "{notes:?}"
        );
    }
}
