//! Issue 5's comparison in one run: secopt against the system libseccomp's linear
//! (`SCMP_FLTATR_CTL_OPTIMIZE=1`) and binary-tree (`=2`) programs, on every OCI profile of
//! ../shared/profiles for the arch sets x86_64+x86+x32 and aarch64, and on Firecracker's
//! filters per thread, with the workloads of ../shared/workloads.
//!
//! Every figure is a deterministic instruction count (`secopt::optimize::stats`: size, the
//! workload-weighted instructions executed with and without the kernel's allow cache, the
//! longest path, the cacheable syscalls), so this is a plain program, not a timing harness.
//! It prints a markdown table and a summary line per target, and writes every number to
//! `target/secopt-compare.json`. docs/benchmarks.md ("Optimizer comparison") explains the
//! columns and has the table of the last run.
//!
//! What is compared, per row:
//! - **libseccomp**: the filter runc builds for the profile (the independent conversion in
//!   tests/common/libseccomp_profiles.rs), or Firecracker's compiler
//!   (tests/common/libseccomp_firecracker.rs), in both layouts.
//! - **secopt**: secopt's own pipeline from the profile: `compile` (reference lowering), then
//!   `optimize` with the row's workload as weights, once per cost model (the program
//!   optimized for the allow cache gives every column but "cost without cache", which is the
//!   program optimized for `CostModel::NoCache`; the JSON has each program under both models).
//!   Names are resolved with libseccomp's table on both sides, so both decide the same rules.
//! - **secopt without workload**: the same pipeline with the default weights (what
//!   `secopt compile` writes without `--weights`).
//! - **secopt(libseccomp tree)**: `optimize` applied to libseccomp's tree program.
//!
//! `cargo bench --bench compare`.

#[path = "../tests/common/floors.rs"]
mod floors;
#[path = "../tests/common/libseccomp_firecracker.rs"]
#[allow(dead_code)]
mod libseccomp_firecracker;
#[path = "../tests/common/libseccomp_names.rs"]
#[allow(dead_code)]
mod libseccomp_names;
#[path = "../tests/common/libseccomp_profiles.rs"]
#[allow(dead_code)]
mod libseccomp_profiles;
#[path = "../tests/common/workloads.rs"]
#[allow(dead_code)]
mod workloads;

use libseccomp_profiles::{build_filter, load_profile, profile_path, ProfileOptions};
use secopt::arch::Arch;
use secopt::bench::workload::{probe_list, Workload};
use secopt::bpf::analysis::{Analyzer, Budget, NrSet};
use secopt::bpf::cache::{KernelCache, KernelVersion};
use secopt::bpf::{Program, RetVal, SeccompData};
use secopt::compile::{compile_firecracker, compile_oci, CompileOptions};
use secopt::optimize::cost::{kernel_arch, path_lengths, Caches};
use secopt::optimize::{
    optimize, stats, CostModel, OptimizeError, OptimizeOptions, ProgramStats, Verification, Weights,
};
use secopt::policy::firecracker::FirecrackerOptions;
use secopt::policy::{CapSet, KernelVersion as PolicyKernel, ResolveOptions};
use secopt::verify::{self, Verdict, VerifyOptions};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Issue 5: at most 35% of libseccomp linear's 1001 instructions for Docker's default profile
/// on x86_64+x86+x32.
const DOCKER_SIZE_SHARE: f64 = 0.35;
/// Cost pairs where both figures are at most this are too cheap to hold to the ratio.
const COST_NOISE_FLOOR: f64 = 5.0;
/// Filters this small may already be optimal (docker-labs-deny: arch check, two returns).
const TINY: usize = 8;

const WORKLOADS: [(&str, &str); 3] = [
    ("nginx", "nginx-wrk.strace-c.txt"),
    ("redis", "redis-benchmark.strace-c.txt"),
    ("gvisor", "gvisor-sentry-postgres.strace-c.txt"),
];

/// One arch set: how it is named, secopt's arches (native first) and the OCI names for
/// libseccomp.
struct ArchSet {
    label: &'static str,
    arches: &'static [Arch],
}

const ARCH_SETS: [ArchSet; 2] = [
    ArchSet {
        label: "x86_64+x86+x32",
        arches: &[Arch::X86_64, Arch::X86, Arch::X32],
    },
    ArchSet {
        label: "aarch64",
        arches: &[Arch::Aarch64],
    },
];

/// A workload's weights for one arch set, and what had to be changed to get them.
struct Weighted {
    weights: Weights,
    notes: Vec<String>,
}

/// Weights of `wl` (recorded on x86_64) for a filter whose native arch is `native`: as
/// recorded on x86_64; on another arch the native calls by name (see `workloads::AARCH64_EQUIVALENTS`;
/// names with no equivalent, and compat-ABI calls, are dropped with a note).
fn weights_for(wl: &Workload, native: Arch) -> Weighted {
    let mut weights = Weights::new();
    let mut notes = Vec::new();
    let table = native.syscalls();
    for e in &wl.entries {
        let count = e.count as f64;
        if native == Arch::X86_64 {
            weights.add(e.arch.token(), e.nr, count).expect("counts");
            continue;
        }
        if e.arch != Arch::X86_64 {
            notes.push(format!(
                "{} ({}) dropped: not a native call",
                e.label, e.arch
            ));
            continue;
        }
        let mapped = match table.nr(&e.syscall) {
            Some(nr) => Some((e.syscall.as_str(), nr)),
            None => workloads::aarch64_equivalent(&e.syscall)
                .and_then(|to| table.nr(to).map(|nr| (to, nr))),
        };
        match mapped {
            Some((name, nr)) => {
                if name != e.syscall {
                    notes.push(format!("{} ×{} → {name}", e.syscall, e.count));
                }
                weights.add(native.token(), nr, count).expect("counts");
            }
            None => notes.push(format!(
                "{} ×{} dropped (no {native} equivalent)",
                e.syscall, e.count
            )),
        }
    }
    Weighted { weights, notes }
}

fn read_workload(file: &str) -> Workload {
    workloads::read_shared_workload(file)
}

/// The weights of a Firecracker thread: the vCPU thread's KVM_RUN-dominated probe list; for
/// the VMM and API threads, which no recorded workload represents, the "common" probe list
/// without the calls the thread's filter never allows (a Firecracker thread that makes one
/// gets SIGSYS and dies, so real traffic has none of them).
fn firecracker_weights(thread: &str, filter: &Program) -> (&'static str, Weighted) {
    let list = if thread == "vcpu" {
        "firecracker-vcpu"
    } else {
        "common"
    };
    let wl = probe_list(list, Arch::X86_64).expect("built-in probe list");
    let analyzer = Analyzer::new(filter).expect("valid program");
    let mut weights = Weights::new();
    let mut notes = Vec::new();
    for e in &wl.entries {
        let paths = analyzer.syscall(e.arch.token(), e.nr, &Budget::default());
        if paths.returns.contains(&RetVal::ALLOW) {
            weights
                .add_call(e.arch.token(), e.nr, e.count as f64, e.args)
                .expect("counts");
        } else {
            notes.push(format!("{} dropped: never allowed", e.label));
        }
    }
    let label = if thread == "vcpu" {
        list
    } else {
        "common (allowed)"
    };
    (label, Weighted { weights, notes })
}

fn oci_name(a: Arch) -> String {
    format!("SCMP_ARCH_{}", a.name().to_ascii_uppercase())
}

/// One kernel bitmap's semantic upper bound of caching: the numbers whose decision is ALLOW
/// whatever the arguments (exact analysis), plus the kernel's passthrough calls (it skips the
/// filter for them, as the cache emulator models).
struct Bound {
    bitmap: &'static str,
    token: u32,
    numbers: Vec<u32>,
    /// Numbers the analysis could not decide exactly (left out of the bound).
    unknown: usize,
}

/// The bounds of every bitmap of the kernels that run `arches`, from `prog`'s semantics.
fn cache_bounds(prog: &Program, arches: &[Arch]) -> Vec<Bound> {
    let analyzer = Analyzer::new(prog).expect("valid program");
    let budget = Budget::default();
    let mut kernels: Vec<Arch> = arches.iter().map(|&a| kernel_arch(a)).collect();
    kernels.sort();
    kernels.dedup();
    let mut out = Vec::new();
    for k in kernels {
        let Some(kernel) = KernelCache::for_kernel(k, KernelVersion::MODELLED) else {
            continue;
        };
        for target in kernel.targets() {
            let mut bound = Bound {
                bitmap: target.name,
                token: target.token,
                numbers: Vec::new(),
                unknown: 0,
            };
            for nr in 0..target.table_size {
                let passthrough = kernel
                    .passthrough
                    .iter()
                    .any(|p| p.token == target.token && p.nr == nr);
                let p = analyzer.syscall(target.token, nr, &budget);
                if !passthrough && !p.exact {
                    bound.unknown += 1;
                }
                if passthrough || (p.exact && p.returns.iter().copied().eq([RetVal::ALLOW])) {
                    bound.numbers.push(nr);
                }
            }
            out.push(bound);
        }
    }
    out
}

/// `prog`'s cached syscalls against the bounds.
fn cacheability(prog: &Program, arches: &[Arch], bounds: &[Bound]) -> CacheFigures {
    let sets = Caches::new(prog, arches, KernelVersion::MODELLED).sets();
    let mut out = CacheFigures::default();
    for b in bounds {
        let cached = sets
            .iter()
            .find(|(name, token, _)| *name == b.bitmap && *token == b.token)
            .map(|s| s.2.clone())
            .unwrap_or_default();
        out.cached += cached.len();
        out.bound += b.numbers.len();
        out.unknown += b.unknown;
        out.exact &= cached == b.numbers;
        out.per_bitmap
            .push((b.bitmap.to_string(), cached.len(), b.numbers.len()));
    }
    out
}

#[derive(Debug, Clone, Serialize)]
struct CacheFigures {
    cached: usize,
    bound: usize,
    /// Syscalls the analysis could not decide exactly (counted outside the bound).
    unknown: usize,
    /// Cached set equal to the bound on every bitmap.
    exact: bool,
    per_bitmap: Vec<(String, usize, usize)>,
}

impl Default for CacheFigures {
    fn default() -> Self {
        CacheFigures {
            cached: 0,
            bound: 0,
            unknown: 0,
            exact: true,
            per_bitmap: Vec::new(),
        }
    }
}

/// What the verifier says about two programs.
fn verdict(a: &Program, b: &Program) -> String {
    match verify::equivalent(a, b, &VerifyOptions::default()) {
        Ok(Verdict::Equal) => EQUAL.into(),
        Ok(Verdict::Different(cx)) => format!("DIFFERENT on {:?}: {} vs {}", cx.data, cx.a, cx.b),
        Ok(Verdict::Unknown { reason }) => format!("unknown: {reason:?}"),
        Err(e) => format!("error: {e}"),
    }
}

const EQUAL: &str = "equal";

/// One program of secopt's and what was measured about it for one row.
#[derive(Debug, Clone, Serialize)]
struct Measured {
    /// Under the row's workload.
    stats: ProgramStats,
    /// The optimizer's own proof that the output equals its input.
    self_check_equal: bool,
    /// `secopt::verify::equivalent` against libseccomp's tree.
    verify_vs_tree: String,
    cache: CacheFigures,
    /// Candidates the optimizer rejected (normally none).
    notes: Vec<secopt::optimize::Note>,
}

impl Measured {
    fn verified(&self) -> bool {
        self.self_check_equal && self.verify_vs_tree == EQUAL
    }
}

/// An optimizer output, before it is measured for a row.
struct Optimized {
    program: Program,
    self_check_equal: bool,
    notes: Vec<secopt::optimize::Note>,
}

fn run_optimizer(input: &Program, weights: Option<&Weights>, model: CostModel) -> Optimized {
    run_optimizer_within(input, weights, model, None).expect("valid input")
}

/// [`run_optimizer`] with `--max-path`; `None` when no program meets it.
fn run_optimizer_within(
    input: &Program,
    weights: Option<&Weights>,
    model: CostModel,
    max_path: Option<usize>,
) -> Option<Optimized> {
    let opts = OptimizeOptions {
        weights: weights.cloned(),
        cost_model: model,
        report: false,
        max_path,
        ..OptimizeOptions::default()
    };
    let out = match optimize(input, &opts) {
        Ok(out) => out,
        Err(OptimizeError::PathBound { .. }) => return None,
        Err(e) => panic!("valid input: {e}"),
    };
    // An output that is the input (nothing better was found; the optimizer then skips the
    // proof) is equal to it as it stands.
    let unchanged = out.program == *input;
    Some(Optimized {
        program: out.program,
        self_check_equal: out.verification == Verification::Equal || unchanged,
        notes: out.notes,
    })
}

/// Whether each target holds for a row (`None`: does not apply). Every program secopt's
/// pipeline made for the row (optimized for either cost model, and without a workload) is
/// held to the size, worst-path, cacheability and verification targets.
#[derive(Debug, Clone, Serialize)]
struct Targets {
    /// Docker x86_64+x86+x32 only: at most 35% of libseccomp linear.
    docker_size_share: Option<bool>,
    /// Smaller than libseccomp's best layout (a filter of at most 8 may tie).
    smaller_than_libseccomp: bool,
    /// With the allow cache (the program optimized for it): at most half the tree's; `None`
    /// when both are at most 5.
    cost_with_cache: Option<CostTarget>,
    /// Without it (the program optimized for that model).
    cost_without_cache: Option<CostTarget>,
    /// Longest path no longer than the tree's.
    worst_case_path: bool,
    /// Cached set equal to the semantic bound.
    cacheable: bool,
    /// Proved equal to its input and to libseccomp's tree.
    verified: bool,
}

/// How a cost pair fares against "at most half of the tree's".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum CostTarget {
    Holds,
    /// Missed, and no program can reach it: half the tree's is below a proved floor (the
    /// 5-instruction floor, or for an allow-list without the cache `floors::allow_list_floor`).
    BelowFloor,
    Missed,
}

/// One weighted syscall's path in each program.
#[derive(Debug, Clone, Serialize)]
struct SyscallPath {
    name: String,
    token: u32,
    nr: u32,
    /// Share of the workload's calls.
    share: f64,
    /// Longest path: libseccomp linear, tree, secopt (allow-cache model), secopt (no-cache).
    linear: u32,
    tree: u32,
    secopt: u32,
    secopt_no_cache: u32,
    cached_in_tree: bool,
    cached_in_secopt: bool,
}

#[derive(Debug, Clone, Serialize)]
struct Row {
    filter: String,
    arches: String,
    workload: String,
    weight_notes: Vec<String>,
    libseccomp_linear: ProgramStats,
    libseccomp_tree: ProgramStats,
    cache_tree: CacheFigures,
    secopt_reference_instructions: usize,
    /// secopt's pipeline, optimized for the allow cache with the row's workload.
    secopt: Measured,
    /// secopt's pipeline, optimized for `CostModel::NoCache` with the row's workload.
    secopt_no_cache: Measured,
    /// secopt's pipeline with no workload (what `secopt compile` writes without `--weights`).
    secopt_unweighted: Measured,
    /// `optimize` on libseccomp's tree (allow-cache model, the row's workload).
    secopt_on_tree: Measured,
    /// Every weighted syscall, hottest first.
    paths: Vec<SyscallPath>,
    /// Proved floors of the cost `(with the cache, without)`: [`five_instruction_floor`], and
    /// without the cache the larger `floors::allow_list_floor` where it applies.
    cost_floors: Option<(f64, f64)>,
    targets: Targets,
    /// On rows whose worst path is longer than the tree's: the pipeline held to the tree's
    /// worst path with `--max-path` (what that promise costs), for the allow-cache and the
    /// no-cache model; `None` inside when no program meets it.
    held_to_tree_path: Option<[Option<Measured>; 2]>,
}

/// The programs of one filter on one arch set, shared by its workloads.
struct Subject<'a> {
    filter: String,
    arches_label: &'a str,
    arches: &'a [Arch],
    linear: Program,
    tree: Program,
    reference: Program,
    /// The cacheable upper bound, from the tree's semantics.
    bounds: Vec<Bound>,
    /// secopt's pipeline without a workload.
    unweighted: Optimized,
    /// Per arch token: how many different sets of return values its numbers have (1: `nr`
    /// does not matter there).
    decision_kinds: Vec<(u32, usize)>,
}

impl<'a> Subject<'a> {
    fn new(
        filter: String,
        arches_label: &'a str,
        arches: &'a [Arch],
        [linear, tree, reference]: [Program; 3],
    ) -> Self {
        let bounds = cache_bounds(&tree, arches);
        let unweighted = run_optimizer(&reference, None, CostModel::AllowCache);
        let analyzer = Analyzer::new(&tree).expect("valid program");
        let budget = Budget::default();
        let mut kinds: BTreeMap<u32, BTreeSet<Vec<RetVal>>> = BTreeMap::new();
        for &arch in arches {
            let set = kinds.entry(arch.token()).or_default();
            for (nr, _) in arch.syscalls().iter() {
                let p = analyzer.syscall(arch.token(), nr, &budget);
                set.insert(p.returns.into_iter().collect());
            }
            let p = analyzer.analyze(arch.token(), NrSet::Unnamed(arch), &budget);
            set.insert(p.returns.into_iter().collect());
        }
        let decision_kinds = kinds.into_iter().map(|(t, k)| (t, k.len())).collect();
        Subject {
            decision_kinds,
            filter,
            arches_label,
            arches,
            linear,
            tree,
            reference,
            bounds,
            unweighted,
        }
    }

    fn measure(&self, out: &Optimized, weights: &Weights, against_tree: bool) -> Measured {
        Measured {
            stats: stats(&out.program, weights, self.arches, KernelVersion::MODELLED),
            self_check_equal: out.self_check_equal,
            verify_vs_tree: if against_tree {
                verdict(&out.program, &self.tree)
            } else {
                // The input is the tree: the self-check is that proof.
                (if out.self_check_equal {
                    EQUAL
                } else {
                    "not proved"
                })
                .into()
            },
            cache: cacheability(&out.program, self.arches, &self.bounds),
            notes: out.notes.clone(),
        }
    }
}

fn syscall_name(token: u32, nr: u32) -> String {
    Arch::of_data(token, nr)
        .and_then(|a| Some(format!("{}.{}", a.name(), a.syscalls().name(nr)?)))
        .unwrap_or_else(|| format!("{token:#x}/{nr}"))
}

/// The 5-instruction floor: a path that must test both `arch` and `nr` runs at least two
/// loads, two tests and a return. That holds for a weighted syscall when its decision is
/// never the bad-arch one (so `arch` decides) and some number of its token is decided
/// otherwise (so `nr` does). Returns the floors of the expected cost `(with the cache,
/// without)`, cached syscalls costing 0 with it; `None` when some weighted syscall escapes the
/// argument. (tests/optimize_targets.rs proves tighter floors for allow-lists.)
fn five_instruction_floor(subject: &Subject, weights: &Weights) -> Option<(f64, f64)> {
    let tree = &subject.tree;
    let analyzer = Analyzer::new(tree).ok()?;
    let budget = Budget::default();
    let bad_arch = secopt::bpf::interp::eval(tree, &SeccompData::new(0, 0, [0; 6])).ok()?;
    let total = weights.total();
    let (mut uncached, mut all) = (0.0, 0.0);
    for (token, nr, w) in weights.iter() {
        let p = analyzer.syscall(token, nr, &budget);
        let nr_decides = subject
            .decision_kinds
            .iter()
            .any(|&(t, kinds)| t == token && kinds >= 2);
        if p.returns.contains(&bad_arch) || !nr_decides {
            return None;
        }
        all += w / total;
        let cacheable = subject
            .bounds
            .iter()
            .any(|b| b.token == token && b.numbers.binary_search(&nr).is_ok());
        if !cacheable {
            uncached += w / total;
        }
    }
    Some((5.0 * uncached, 5.0 * all))
}

fn compare(subject: &Subject, workload: &str, weights: &Weighted) -> Row {
    let arches = subject.arches;
    let w = &weights.weights;
    let measure = |p: &Program| stats(p, w, arches, KernelVersion::MODELLED);
    let (linear, tree) = (measure(&subject.linear), measure(&subject.tree));
    let allow_cache = run_optimizer(&subject.reference, Some(w), CostModel::AllowCache);
    let no_cache = run_optimizer(&subject.reference, Some(w), CostModel::NoCache);
    let on_tree = run_optimizer(&subject.tree, Some(w), CostModel::AllowCache);

    let caches = |p: &Program| Caches::new(p, arches, KernelVersion::MODELLED);
    let (tree_caches, ours_caches) = (caches(&subject.tree), caches(&allow_cache.program));
    let longest = |p: &Program, t: u32, n: u32| path_lengths(p, t, n).1;
    let total = w.total();
    let mut paths: Vec<SyscallPath> = w
        .iter()
        .map(|(token, nr, count)| SyscallPath {
            name: syscall_name(token, nr),
            token,
            nr,
            share: count / total,
            linear: longest(&subject.linear, token, nr),
            tree: longest(&subject.tree, token, nr),
            secopt: longest(&allow_cache.program, token, nr),
            secopt_no_cache: longest(&no_cache.program, token, nr),
            cached_in_tree: tree_caches.is_cached(token, nr),
            cached_in_secopt: ours_caches.is_cached(token, nr),
        })
        .collect();
    paths.sort_by(|a, b| b.share.total_cmp(&a.share));

    let secopt = subject.measure(&allow_cache, w, true);
    let secopt_no_cache = subject.measure(&no_cache, w, true);
    let secopt_unweighted = subject.measure(&subject.unweighted, w, true);
    let secopt_on_tree = subject.measure(&on_tree, w, false);
    let pipeline = [&secopt, &secopt_no_cache, &secopt_unweighted];

    let best = linear.instructions.min(tree.instructions);
    let largest = pipeline
        .iter()
        .map(|m| m.stats.instructions)
        .max()
        .unwrap_or(0);
    let floors = five_instruction_floor(subject, w).map(|(with, without)| {
        let allow_list = floors::allow_list_floor(&subject.tree, arches[0], w);
        (with, allow_list.map_or(without, |f| f.max(without)))
    });
    let half = |ours: f64, theirs: f64, floor: Option<f64>| {
        (ours > COST_NOISE_FLOOR || theirs > COST_NOISE_FLOOR).then(|| {
            if ours * 2.0 <= theirs {
                CostTarget::Holds
            } else if floor.is_some_and(|f| f > theirs / 2.0) {
                CostTarget::BelowFloor
            } else {
                CostTarget::Missed
            }
        })
    };
    let is_docker_x86 =
        subject.filter == "docker-default" && subject.arches_label == "x86_64+x86+x32";
    let targets = Targets {
        docker_size_share: is_docker_x86
            .then_some(largest as f64 <= DOCKER_SIZE_SHARE * linear.instructions as f64),
        smaller_than_libseccomp: largest < best || (best <= TINY && largest <= best),
        cost_with_cache: half(
            secopt.stats.cost_with_cache,
            tree.cost_with_cache,
            floors.map(|f| f.0),
        ),
        cost_without_cache: half(
            secopt_no_cache.stats.cost_without_cache,
            tree.cost_without_cache,
            floors.map(|f| f.1),
        ),
        worst_case_path: pipeline
            .iter()
            .all(|m| m.stats.worst_case_path <= tree.worst_case_path),
        cacheable: pipeline.iter().all(|m| m.cache.exact),
        verified: pipeline.iter().all(|m| m.verified()) && secopt_on_tree.verified(),
    };
    let held_to_tree_path = (!targets.worst_case_path).then(|| {
        [CostModel::AllowCache, CostModel::NoCache].map(|model| {
            let bound = Some(tree.worst_case_path as usize);
            run_optimizer_within(&subject.reference, Some(w), model, bound)
                .map(|out| subject.measure(&out, w, true))
        })
    });
    Row {
        held_to_tree_path,
        filter: subject.filter.clone(),
        arches: subject.arches_label.to_string(),
        workload: workload.to_string(),
        weight_notes: weights.notes.clone(),
        libseccomp_linear: linear,
        libseccomp_tree: tree,
        cache_tree: cacheability(&subject.tree, arches, &subject.bounds),
        secopt_reference_instructions: subject.reference.len(),
        secopt,
        secopt_no_cache,
        secopt_unweighted,
        secopt_on_tree,
        paths,
        cost_floors: floors,
        targets,
    }
}

fn oci_profiles() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(profile_path("oci"))
        .expect("../shared/profiles/oci")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// libseccomp's and secopt's programs for an OCI profile on one arch set.
fn oci_subject<'a>(name: &str, set: &'a ArchSet) -> Subject<'a> {
    let relative = format!("oci/{name}");
    let json = load_profile(&relative).expect("profile");
    let libseccomp = |optimize| {
        let opts = ProfileOptions {
            optimize,
            native: Some(oci_name(set.arches[0])),
            arches: Some(set.arches.iter().map(|&a| oci_name(a)).collect()),
            ..ProfileOptions::default()
        };
        build_filter(&json, &opts)
            .unwrap_or_else(|e| panic!("{name}: libseccomp: {e}"))
            .program
    };
    let bytes = std::fs::read(profile_path(&relative)).expect("profile");
    let resolve = ResolveOptions {
        native: Some(set.arches[0]),
        arches: Some(set.arches.to_vec()),
        caps: CapSet::docker_default(),
        kernel: Some(PolicyKernel::new(6, 18)),
        strict: false,
        resolver: Some(libseccomp_names::libseccomp_resolver()),
    };
    let reference = compile_oci(&bytes, name, &resolve, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .into_program();
    Subject::new(
        name.trim_end_matches(".json").to_string(),
        set.label,
        set.arches,
        [libseccomp(1), libseccomp(2), reference],
    )
}

/// Firecracker's filters per thread: `(file label, thread, subject)`.
fn firecracker_subjects(file: &str) -> Vec<Subject<'static>> {
    let path = profile_path(file);
    let bytes = std::fs::read(&path).expect("firecracker filter");
    let json: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    let linear = libseccomp_firecracker::firecracker_with_libseccomp_at(&json, Some(1));
    let tree = libseccomp_firecracker::firecracker_with_libseccomp_at(&json, Some(2));
    let ours = compile_firecracker(
        &bytes,
        file,
        &FirecrackerOptions::new(Arch::X86_64),
        &CompileOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{file}: {e}"));
    let short = file
        .rsplit('/')
        .next()
        .unwrap_or(file)
        .trim_end_matches(".json")
        .trim_end_matches("-x86_64-unknown-linux-musl");
    ours.into_iter()
        .map(|(thread, filter)| {
            Subject::new(
                format!("{short}:{thread}"),
                "x86_64",
                &[Arch::X86_64],
                [
                    linear[&thread].0.clone(),
                    tree[&thread].0.clone(),
                    filter.into_program(),
                ],
            )
        })
        .collect()
}

fn mark(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "✓",
        Some(false) => "✗",
        None => "–",
    }
}

fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    s.push_str(
        "| filter | arches | workload | instructions: linear / tree / **secopt** / secopt without workload / secopt(tree) | cost with cache: linear / tree / **secopt** | cost without cache: linear / tree / **secopt** | worst path: tree / **secopt** | cacheable: tree / **secopt** / bound | verify | size · cost · worst · cache |\n",
    );
    s.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let t = &r.targets;
        let size = mark(Some(
            t.smaller_than_libseccomp && t.docker_size_share.unwrap_or(true),
        ));
        let outcomes = [t.cost_with_cache, t.cost_without_cache];
        let cost = if outcomes.iter().all(Option::is_none) {
            "–"
        } else if outcomes.contains(&Some(CostTarget::Missed)) {
            "✗"
        } else if outcomes.contains(&Some(CostTarget::BelowFloor)) {
            "floor"
        } else {
            "✓"
        };
        let worst = r
            .secopt
            .stats
            .worst_case_path
            .max(r.secopt_no_cache.stats.worst_case_path);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} / {} / **{}** / {} / {} | {:.2} / {:.2} / **{:.2}** | {:.2} / {:.2} / **{:.2}** | {} / **{}** | {} / **{}** / {} | {} | {} {} {} {} |",
            r.filter,
            r.arches,
            r.workload,
            r.libseccomp_linear.instructions,
            r.libseccomp_tree.instructions,
            r.secopt.stats.instructions,
            r.secopt_unweighted.stats.instructions,
            r.secopt_on_tree.stats.instructions,
            r.libseccomp_linear.cost_with_cache,
            r.libseccomp_tree.cost_with_cache,
            r.secopt.stats.cost_with_cache,
            r.libseccomp_linear.cost_without_cache,
            r.libseccomp_tree.cost_without_cache,
            r.secopt_no_cache.stats.cost_without_cache,
            r.libseccomp_tree.worst_case_path,
            worst,
            r.cache_tree.cached,
            r.secopt.cache.cached,
            r.secopt.cache.bound,
            if t.verified { "equal" } else { "**NOT PROVED**" },
            size,
            cost,
            mark(Some(t.worst_case_path)),
            mark(Some(t.cacheable)),
        );
    }
    s
}

/// One summary line per target, listing every row that misses it.
fn summary(rows: &[Row]) -> String {
    let mut s = String::new();
    let sizes = |r: &Row| {
        format!(
            "{} / {} / {}",
            r.secopt.stats.instructions,
            r.secopt_no_cache.stats.instructions,
            r.secopt_unweighted.stats.instructions
        )
    };
    for r in rows
        .iter()
        .filter(|r| r.targets.docker_size_share.is_some())
    {
        let largest = [&r.secopt, &r.secopt_no_cache, &r.secopt_unweighted]
            .iter()
            .map(|m| m.stats.instructions)
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            s,
            "- Size, Docker default x86_64+x86+x32, {}: {} instructions (allow-cache / no-cache / no workload), at most {:.1}% of libseccomp linear's {} (target ≤ 35%): {}",
            r.workload,
            sizes(r),
            100.0 * largest as f64 / r.libseccomp_linear.instructions as f64,
            r.libseccomp_linear.instructions,
            if r.targets.docker_size_share == Some(true) {
                "holds"
            } else {
                "MISSED"
            }
        );
    }
    let list = |what: &str, failed: Vec<String>, total: usize, s: &mut String| {
        if failed.is_empty() {
            let _ = writeln!(s, "- {what}: holds on all {total}");
        } else {
            let _ = writeln!(
                s,
                "- {what}: MISSED on {} of {total}: {}",
                failed.len(),
                failed.join("; ")
            );
        }
    };
    let id = |r: &Row| format!("{} {} {}", r.filter, r.arches, r.workload);
    list(
        "Size below libseccomp's best layout (filters of ≤ 8 may tie; allow-cache / no-cache / no workload vs linear / tree)",
        rows.iter()
            .filter(|r| !r.targets.smaller_than_libseccomp)
            .map(|r| {
                format!(
                    "{}: {} vs {} / {}",
                    id(r),
                    sizes(r),
                    r.libseccomp_linear.instructions,
                    r.libseccomp_tree.instructions
                )
            })
            .collect(),
        rows.len(),
        &mut s,
    );
    let mut pairs = 0;
    let (mut missed, mut floored) = (Vec::new(), Vec::new());
    for r in rows {
        let floors = r.cost_floors.unwrap_or((0.0, 0.0));
        for (model, outcome, ours, theirs, floor) in [
            (
                "with cache",
                r.targets.cost_with_cache,
                r.secopt.stats.cost_with_cache,
                r.libseccomp_tree.cost_with_cache,
                floors.0,
            ),
            (
                "without cache",
                r.targets.cost_without_cache,
                r.secopt_no_cache.stats.cost_without_cache,
                r.libseccomp_tree.cost_without_cache,
                floors.1,
            ),
        ] {
            let Some(outcome) = outcome else { continue };
            pairs += 1;
            let line = format!(
                "{} {model}: {ours:.2} vs tree {theirs:.2} ({:.0}%)",
                id(r),
                100.0 * ours / theirs
            );
            match outcome {
                CostTarget::Holds => {}
                CostTarget::BelowFloor => floored.push(format!("{line}, floor {floor:.2}")),
                CostTarget::Missed => missed.push(line),
            }
        }
    }
    list(
        "Cost ≤ ½ of libseccomp tree's, for the model optimized for (pairs where either is above 5)",
        missed,
        pairs,
        &mut s,
    );
    if !floored.is_empty() {
        let _ = writeln!(
            s,
            "- Cost pairs where ½ of the tree's is below a proved floor of any filter (unreachable; the 5-instruction floor, or the allow-list floor of tests/common/floors.rs): {}",
            floored.join("; ")
        );
    }
    list(
        "Worst-case path ≤ libseccomp tree's (allow-cache / no-cache / no workload vs tree)",
        rows.iter()
            .filter(|r| !r.targets.worst_case_path)
            .map(|r| {
                format!(
                    "{}: {} / {} / {} vs {}",
                    id(r),
                    r.secopt.stats.worst_case_path,
                    r.secopt_no_cache.stats.worst_case_path,
                    r.secopt_unweighted.stats.worst_case_path,
                    r.libseccomp_tree.worst_case_path
                )
            })
            .collect(),
        rows.len(),
        &mut s,
    );
    let held: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let [with, without] = r.held_to_tree_path.as_ref()?;
            let tree = &r.libseccomp_tree;
            let figure = |m: &Option<Measured>, ours: fn(&ProgramStats) -> f64| match m {
                Some(m) if m.verified() => {
                    let (a, b) = (ours(&m.stats), ours(tree));
                    let share = if b > 0.0 {
                        format!(" ({:.0}%)", 100.0 * a / b)
                    } else {
                        String::new()
                    };
                    format!("{a:.2} vs {b:.2}{share}")
                }
                Some(_) => "not proved equal".into(),
                None => "no program found".into(),
            };
            Some(format!(
                "{}: within {}: with cache {}, without cache {}",
                id(r),
                tree.worst_case_path,
                figure(with, |s| s.cost_with_cache),
                figure(without, |s| s.cost_without_cache)
            ))
        })
        .collect();
    if !held.is_empty() {
        let _ = writeln!(
            s,
            "- Those rows held to the tree's worst path (`--max-path`; cost with the workload, proved equal): {}",
            held.join("; ")
        );
    }
    list(
        "Every argument-independent ALLOW is cacheable (cached set = bound)",
        rows.iter()
            .filter(|r| !r.targets.cacheable)
            .map(|r| format!("{}: {:?}", id(r), r.secopt.cache.per_bitmap))
            .collect(),
        rows.len(),
        &mut s,
    );
    list(
        "Proved equal (optimizer self-check, and secopt::verify against libseccomp's tree)",
        rows.iter()
            .filter(|r| !r.targets.verified)
            .map(|r| {
                format!(
                    "{}: {} / {} / {} / {}",
                    id(r),
                    r.secopt.verify_vs_tree,
                    r.secopt_no_cache.verify_vs_tree,
                    r.secopt_unweighted.verify_vs_tree,
                    r.secopt_on_tree.verify_vs_tree
                )
            })
            .collect(),
        rows.len(),
        &mut s,
    );
    s
}

#[derive(Serialize)]
struct Output<'a> {
    libseccomp_version: (u32, u32, u32),
    kernel_modelled: String,
    cost_assumption: &'static str,
    rows: &'a [Row],
}

fn main() {
    let start = Instant::now();
    let mut rows = Vec::new();
    let workloads: Vec<(&str, Workload)> = WORKLOADS
        .iter()
        .map(|&(label, file)| (label, read_workload(file)))
        .collect();
    for set in &ARCH_SETS {
        let weighted: Vec<(&str, Weighted)> = workloads
            .iter()
            .map(|(label, wl)| (*label, weights_for(wl, set.arches[0])))
            .collect();
        for (label, w) in &weighted {
            for note in &w.notes {
                eprintln!("workload {label} on {}: {note}", set.label);
            }
        }
        for name in oci_profiles() {
            let subject = oci_subject(&name, set);
            for (label, w) in &weighted {
                rows.push(compare(&subject, label, w));
            }
        }
    }
    // Firecracker per thread, with the probe lists of `firecracker_weights`.
    for file in [
        "firecracker/firecracker-x86_64-unknown-linux-musl.json",
        "firecracker/firecracker-unimplemented.json",
    ] {
        for subject in firecracker_subjects(file) {
            let thread = subject.filter.rsplit(':').next().unwrap_or_default();
            let (label, w) = firecracker_weights(thread, &subject.tree);
            for note in &w.notes {
                eprintln!("workload {label} on {}: {note}", subject.filter);
            }
            rows.push(compare(&subject, label, &w));
        }
    }

    println!("{}", table(&rows));
    println!("{}", summary(&rows));
    println!(
        "{} rows in {:.1} s",
        rows.len(),
        start.elapsed().as_secs_f64()
    );
    let v = libseccomp_names::libseccomp_version();
    let out = Output {
        libseccomp_version: v,
        kernel_modelled: format!("{:?}", KernelVersion::MODELLED),
        cost_assumption: secopt::optimize::ASSUMPTION,
        rows: &rows,
    };
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let path = dir.join("secopt-compare.json");
    let json = serde_json::to_string_pretty(&out).expect("serializable");
    match std::fs::write(&path, json) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
}
