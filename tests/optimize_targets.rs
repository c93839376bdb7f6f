//! Issue 5's targets for secopt's own pipeline (compile the profile, then optimize with the
//! workload's weights) on the filters tests/optimize_profiles.rs does not cover: every OCI
//! profile of the shared corpus on aarch64, and Firecracker's x86_64 filters per thread.
//! libseccomp's programs are the independent reference (tests/common: runc's conversion, and
//! Firecracker's own compiler). `cargo bench --bench compare` prints the same figures for
//! every arch set as a table (docs/benchmarks.md, "Optimizer comparison").
//!
//! Per filter, workload and cost model the output must be proved equal by the optimizer's
//! self-check, decide like libseccomp's program on an interpreter sweep (independent of the
//! verifier), cache exactly the syscalls whose decision is ALLOW whatever the arguments, be
//! smaller than libseccomp's linear and tree programs, have a worst-case path no longer than
//! the tree's, and cost at most half the tree's instructions per syscall where either is above
//! 5 (the model optimized for). The program written without a workload is held to the same
//! size, path and equality targets.
//!
//! Workloads: the x86_64 `strace -c` files of ../shared/workloads, mapped onto aarch64 by
//! name (`common::workloads::AARCH64_EQUIVALENTS`); Firecracker's vCPU thread uses the built-in KVM_RUN-heavy
//! probe list, its VMM and API threads the "common" list less the calls the thread's filter
//! never allows (a Firecracker thread making one gets SIGSYS; real traffic has none).

mod common;

use common::floors::allow_list_floor;
use common::libseccomp_firecracker::firecracker_with_libseccomp_at;
use common::libseccomp_names::{libseccomp_nr, libseccomp_resolver};
use common::libseccomp_profiles::{
    build_filter, load_profile, profile_path, ProfileOptions, DOCKER_DEFAULT_CAPS,
};
use libseccomp::ScmpCompareOp;
use secopt::arch::Arch;
use secopt::bench::workload::{probe_list, Workload};
use secopt::bpf::analysis::{Analyzer, Budget};
use secopt::bpf::cache::{KernelCache, KernelVersion};
use secopt::bpf::testing::Rng;
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Program, RetVal, SeccompData};
use secopt::compile::{compile_firecracker, compile_oci, CompileOptions};
use secopt::optimize::cost::Caches;
use secopt::optimize::{optimize, stats, CostModel, Favor, OptimizeOptions, Verification, Weights};
use secopt::policy::firecracker::FirecrackerOptions;
use secopt::policy::{CapSet, KernelVersion as PolicyKernel, ResolveOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

const WORKLOADS: [&str; 3] = [
    "nginx-wrk.strace-c.txt",
    "redis-benchmark.strace-c.txt",
    "gvisor-sentry-postgres.strace-c.txt",
];

fn read_workload(file: &str) -> Workload {
    common::workloads::read_shared_workload(file)
}

/// An x86_64 workload's calls as aarch64 makes them (by name, see `common::workloads::AARCH64_EQUIVALENTS`).
fn aarch64_weights(file: &str) -> Weights {
    let table = Arch::Aarch64.syscalls();
    let mut w = Weights::new();
    for e in read_workload(file).entries {
        assert_eq!(e.arch, Arch::X86_64, "{file}: only native calls recorded");
        let nr = table
            .nr(&e.syscall)
            .or_else(|| table.nr(common::workloads::aarch64_equivalent(&e.syscall)?));
        match nr {
            Some(nr) => w.add(Arch::Aarch64.token(), nr, e.count as f64).unwrap(),
            None => assert_eq!(e.syscall, "arch_prctl", "{file}: unmapped name"),
        }
    }
    w
}

#[test]
fn workloads_map_onto_aarch64_by_name() {
    // Hand-checked against the files: redis's epoll_wait becomes epoll_pwait (22 on aarch64,
    // include/uapi/asm-generic/unistd.h); read 63 and write 64 keep their names.
    let w = aarch64_weights("redis-benchmark.strace-c.txt");
    let token = Arch::Aarch64.token();
    assert_eq!(w.get(token, 22), 8802.0);
    assert_eq!(w.get(token, 63), 175_926.0);
    assert_eq!(w.get(token, 64), 175_611.0);
    assert_eq!(w.total(), 361_331.0);
    // nginx: every call but arch_prctl (1 call) survives.
    let nginx = aarch64_weights("nginx-wrk.strace-c.txt");
    let recorded = read_workload("nginx-wrk.strace-c.txt").total_calls() as f64;
    assert_eq!(nginx.total(), recorded - 1.0);
}

/// The argument values worth trying per argument index of one syscall.
use common::sweep::{each_combination, ArgValues};

/// Boundary values of a 64-bit constant: around it, and its halves independently.
fn boundaries(v: u64, out: &mut BTreeSet<u64>) {
    let (hi, lo) = ((v >> 32) as u32, v as u32);
    let near = |x: u32| [x.wrapping_sub(1), x, x.wrapping_add(1), 0, u32::MAX];
    for h in near(hi) {
        for l in near(lo) {
            out.insert(u64::from(h) << 32 | u64::from(l));
        }
    }
}

/// One filter: libseccomp's programs, secopt's reference lowering and optimized outputs.
struct Case {
    label: String,
    arches: &'static [Arch],
    linear: Program,
    tree: Program,
    /// secopt's reference lowering, the optimizer's input.
    reference: Program,
    /// Per `(token, nr)`: argument values from the rules, for the sweep.
    values: BTreeMap<(u32, u32), ArgValues>,
    /// Without a workload.
    unweighted: Output,
    /// `--favor size`, without a workload.
    smallest: Output,
    /// Per workload: the weights, the output optimized for the allow cache and for no cache.
    workloads: Vec<(String, Weights, [Output; 2])>,
}

struct Output {
    program: Program,
    verification: Verification,
    notes: Vec<secopt::optimize::Note>,
}

fn optimized(reference: &Program, weights: Option<&Weights>, model: CostModel) -> Output {
    optimized_within(reference, weights, model, None)
}

fn optimized_within(
    reference: &Program,
    weights: Option<&Weights>,
    model: CostModel,
    max_path: Option<usize>,
) -> Output {
    optimized_with(
        reference,
        OptimizeOptions {
            weights: weights.cloned(),
            cost_model: model,
            report: false,
            max_path,
            ..OptimizeOptions::default()
        },
    )
}

fn optimized_with(reference: &Program, options: OptimizeOptions) -> Output {
    let out = optimize(reference, &options).unwrap();
    Output {
        program: out.program,
        verification: out.verification,
        notes: out.notes,
    }
}

impl Case {
    fn new(
        label: String,
        arches: &'static [Arch],
        [linear, tree, reference]: [Program; 3],
        values: BTreeMap<(u32, u32), ArgValues>,
        workloads: Vec<(String, Weights)>,
    ) -> Case {
        let workloads = workloads
            .into_iter()
            .map(|(name, w)| {
                let outputs = [CostModel::AllowCache, CostModel::NoCache]
                    .map(|model| optimized(&reference, Some(&w), model));
                (name, w, outputs)
            })
            .collect();
        Case {
            label,
            arches,
            linear,
            tree,
            values,
            unweighted: optimized(&reference, None, CostModel::AllowCache),
            smallest: optimized_with(
                &reference,
                OptimizeOptions {
                    favor: Favor::Size,
                    report: false,
                    ..OptimizeOptions::default()
                },
            ),
            workloads,
            reference,
        }
    }

    /// Every output with a label saying which.
    fn outputs(&self) -> Vec<(String, &Output)> {
        let mut v = vec![(format!("{} (no workload)", self.label), &self.unweighted)];
        for (name, _, [cache, no_cache]) in &self.workloads {
            v.push((format!("{} {name} allow-cache", self.label), cache));
            v.push((format!("{} {name} no-cache", self.label), no_cache));
        }
        v
    }
}

const AARCH64: &[Arch] = &[Arch::Aarch64];

fn oci_profiles() -> Vec<String> {
    common::libseccomp_profiles::oci_profile_names()
}

/// Every OCI profile on aarch64 alone (the profile's own arch list replaced, as
/// tests/compile_libseccomp.rs does), built once for all tests of this file.
fn aarch64_cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let workloads: Vec<(String, Weights)> = WORKLOADS
            .iter()
            .map(|f| (f.split('-').next().unwrap().to_string(), aarch64_weights(f)))
            .collect();
        oci_profiles()
            .into_iter()
            .map(|name| {
                let relative = format!("oci/{name}");
                let json = load_profile(&relative).unwrap();
                let build = |optimize| {
                    let opts = ProfileOptions {
                        caps: DOCKER_DEFAULT_CAPS.iter().map(|c| c.to_string()).collect(),
                        kernel: (6, 18, 0),
                        optimize,
                        native: Some("SCMP_ARCH_AARCH64".into()),
                        arches: Some(vec!["SCMP_ARCH_AARCH64".into()]),
                    };
                    build_filter(&json, &opts).unwrap()
                };
                let (linear, tree) = (build(1), build(2));
                let mut values: BTreeMap<(u32, u32), ArgValues> = BTreeMap::new();
                for (syscall, _, conds) in &tree.rules {
                    let Some(nr) = libseccomp_nr(Arch::Aarch64, syscall) else {
                        continue;
                    };
                    let entry = values.entry((Arch::Aarch64.token(), nr)).or_default();
                    for c in conds {
                        let set = entry.entry(c.index).or_default();
                        boundaries(c.value, set);
                        if let ScmpCompareOp::MaskedEqual(_) = c.op {
                            // value is the mask, value_two the constant.
                            let (mask, want) = (c.value, c.value_two);
                            for v in [want, want & mask, want | !mask, !mask] {
                                boundaries(v, set);
                            }
                        }
                    }
                }
                let bytes = std::fs::read(profile_path(&relative)).unwrap();
                let resolve = ResolveOptions {
                    native: Some(Arch::Aarch64),
                    arches: Some(AARCH64.to_vec()),
                    caps: CapSet::docker_default(),
                    kernel: Some(PolicyKernel::new(6, 18)),
                    strict: false,
                    resolver: Some(libseccomp_resolver()),
                };
                let reference = compile_oci(&bytes, &name, &resolve, &CompileOptions::default())
                    .unwrap()
                    .into_program();
                Case::new(
                    name.trim_end_matches(".json").to_string(),
                    AARCH64,
                    [linear.program, tree.program, reference],
                    values,
                    workloads.clone(),
                )
            })
            .collect()
    })
}

/// Firecracker's production x86_64 filters and its placeholder file, per thread.
fn firecracker_cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut cases = Vec::new();
        for file in [
            "firecracker/firecracker-x86_64-unknown-linux-musl.json",
            "firecracker/firecracker-unimplemented.json",
        ] {
            let bytes = std::fs::read(profile_path(file)).unwrap();
            let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let linear = firecracker_with_libseccomp_at(&json, Some(1));
            let tree = firecracker_with_libseccomp_at(&json, Some(2));
            let ours = compile_firecracker(
                &bytes,
                file,
                &FirecrackerOptions::new(Arch::X86_64),
                &CompileOptions::default(),
            )
            .unwrap();
            for (thread, filter) in ours {
                let mut values: BTreeMap<(u32, u32), ArgValues> = BTreeMap::new();
                for rule in json[&thread]["filter"].as_array().unwrap() {
                    let name = rule["syscall"].as_str().unwrap();
                    let nr = libseccomp_nr(Arch::X86_64, name).unwrap();
                    let entry = values.entry((Arch::X86_64.token(), nr)).or_default();
                    for a in rule["args"].as_array().into_iter().flatten() {
                        let set = entry
                            .entry(a["index"].as_u64().unwrap() as u32)
                            .or_default();
                        let val = a["val"].as_u64().unwrap();
                        boundaries(val, set);
                        if let Some(m) = a["op"].get("masked_eq").and_then(|m| m.as_u64()) {
                            for v in [val & m, val | !m, m, !m] {
                                boundaries(v, set);
                            }
                        }
                    }
                }
                let tree = tree[&thread].0.clone();
                let weights = firecracker_weights(&thread, &tree);
                let short = if file.contains("unimplemented") {
                    "firecracker-unimplemented"
                } else {
                    "firecracker"
                };
                cases.push(Case::new(
                    format!("{short}:{thread}"),
                    &[Arch::X86_64],
                    [linear[&thread].0.clone(), tree, filter.into_program()],
                    values,
                    vec![weights],
                ));
            }
        }
        cases
    })
}

/// See the module documentation: the vCPU probe list, or "common" less what the thread's
/// filter never allows, with the argument values the probes are made with (as the compare
/// bench and `secopt bench` charge them).
fn firecracker_weights(thread: &str, tree: &Program) -> (String, Weights) {
    let list = if thread == "vcpu" {
        "firecracker-vcpu"
    } else {
        "common"
    };
    let analyzer = Analyzer::new(tree).unwrap();
    let mut w = Weights::new();
    for e in probe_list(list, Arch::X86_64).unwrap().entries {
        let paths = analyzer.syscall(e.arch.token(), e.nr, &Budget::default());
        if paths.returns.contains(&RetVal::ALLOW) {
            w.add_call(e.arch.token(), e.nr, e.count as f64, e.args)
                .unwrap();
        }
    }
    assert!(w.total() > 0.0, "{thread}");
    (list.to_string(), w)
}

/// Runs `a` and `b` on the sweep: every arch token in the filter and some outside it; every
/// number of the native table and 20 past it, `-1`, the x32 range and a few high numbers;
/// zero and filler arguments; and for each syscall with argument rules, the cross product of
/// the boundary values of its rules' constants (sampled past 20 000). Returns the inputs run.
fn assert_same_decisions(label: &str, case: &Case, b: &Program) -> usize {
    const FILLER: u64 = 0xdead_beef_0000_0001;
    let a = &case.tree;
    let mut rng = Rng::new(0x007a_26e7);
    let mut checked = 0;
    let mut check = |data: &SeccompData| {
        let (ra, rb) = (
            interp::eval(a, data).unwrap(),
            interp::eval(b, data).unwrap(),
        );
        assert_eq!(ra, rb, "{label}: libseccomp and secopt differ on {data:x?}");
        checked += 1;
    };
    let native = case.arches[0];
    let mut tokens: Vec<u32> = case.arches.iter().map(|a| a.token()).collect();
    tokens.extend([
        Arch::X86_64.token(),
        Arch::X86.token(),
        Arch::Aarch64.token(),
        Arch::Arm.token(),
        0,
        u32::MAX,
        0x1234_5678,
    ]);
    tokens.sort_unstable();
    tokens.dedup();
    let mut nrs: BTreeSet<u32> = (0..=native.syscalls().max_nr().unwrap() + 20).collect();
    nrs.extend(0x4000_0000..0x4000_0000 + 600);
    nrs.extend([
        u32::MAX,
        u32::MAX - 1,
        0x3fff_ffff,
        0x7fff_ffff,
        0x8000_0000,
    ]);
    for token in tokens {
        for &nr in &nrs {
            for args in [[0; 6], [FILLER; 6]] {
                check(&SeccompData::new(token, nr as i32, args));
            }
            let Some(vals) = case.values.get(&(token, nr)) else {
                continue;
            };
            each_combination(vals, [FILLER; 6], 20_000, &mut rng, |args| {
                check(&SeccompData::new(token, nr as i32, args));
            });
        }
    }
    checked
}

/// Per kernel bitmap: the numbers whose decision is ALLOW whatever the arguments (exact
/// analysis of libseccomp's tree), plus the kernel's passthrough calls, which the cache
/// emulator reports as cached because the kernel never runs the filter for them.
fn cache_bounds(case: &Case) -> Vec<(&'static str, u32, Vec<u32>)> {
    let analyzer = Analyzer::new(&case.tree).unwrap();
    let budget = Budget::default();
    let native = case.arches[0];
    let kernel = KernelCache::for_kernel(native, KernelVersion::MODELLED).unwrap();
    kernel
        .targets()
        .map(|t| {
            let bound = (0..t.table_size)
                .filter(|&nr| {
                    if kernel
                        .passthrough
                        .iter()
                        .any(|p| p.token == t.token && p.nr == nr)
                    {
                        return true;
                    }
                    let p = analyzer.syscall(t.token, nr, &budget);
                    assert!(p.exact, "{}: {:#x}/{nr}", case.label, t.token);
                    p.returns.iter().copied().eq([RetVal::ALLOW])
                })
                .collect();
            (t.name, t.token, bound)
        })
        .collect()
}

/// Proved equal, valid, decides like libseccomp on the sweep, caches exactly the bound: every
/// output, and the `--favor size` one.
fn check_equality_and_caching(cases: &[Case]) {
    let mut swept = 0;
    for case in cases {
        let bounds = cache_bounds(case);
        let smallest = (format!("{} (favor size)", case.label), &case.smallest);
        for (label, out) in case.outputs().into_iter().chain([smallest]) {
            assert_eq!(
                out.verification,
                Verification::Equal,
                "{label}: {:?}",
                out.notes
            );
            assert!(out.notes.is_empty(), "{label}: {:?}", out.notes);
            validate(&out.program).unwrap();
            swept += assert_same_decisions(&label, case, &out.program);
            let sets = Caches::new(&out.program, case.arches, KernelVersion::MODELLED).sets();
            for (bitmap, token, bound) in &bounds {
                let cached = &sets
                    .iter()
                    .find(|(n, t, _)| n == bitmap && t == token)
                    .unwrap()
                    .2;
                assert_eq!(cached, bound, "{label}: {bitmap} bitmap");
            }
        }
    }
    assert!(swept > 100_000, "only {swept} inputs");
}

/// Filters this small can be optimal already (docker-labs-deny: load arch, test it, load nr,
/// two returns).
const TINY: usize = 8;

/// Smaller than both libseccomp layouts; worst-case path no longer than the tree's. Returns
/// every miss.
fn size_and_path_misses(cases: &[Case]) -> Vec<String> {
    let mut misses = Vec::new();
    for case in cases {
        let best = case.linear.len().min(case.tree.len());
        let tree_worst = secopt::optimize::cost::worst_case_path(&case.tree);
        for (label, out) in case.outputs() {
            let n = out.program.len();
            if !(n < best || (best <= TINY && n <= best)) {
                misses.push(format!(
                    "{label}: {n} instructions, libseccomp linear {} / tree {}",
                    case.linear.len(),
                    case.tree.len()
                ));
            }
            let worst = secopt::optimize::cost::worst_case_path(&out.program);
            if worst > tree_worst {
                misses.push(format!(
                    "{label}: worst-case path {worst}, libseccomp tree {tree_worst}"
                ));
            }
        }
    }
    misses
}

/// Cost at most half the tree's where either is above 5, for the model optimized for; pairs
/// where [`allow_list_floor`] proves half unreachable are held to within 1% of that floor
/// instead (it is a lower bound, not always attainable). Returns every miss.
fn cost_misses(cases: &[Case]) -> Vec<String> {
    let kernel = KernelVersion::MODELLED;
    let mut misses = Vec::new();
    for case in cases {
        for (workload, w, outputs) in &case.workloads {
            let theirs = stats(&case.tree, w, case.arches, kernel);
            for (model, out) in [CostModel::AllowCache, CostModel::NoCache]
                .into_iter()
                .zip(outputs)
            {
                let ours = stats(&out.program, w, case.arches, kernel);
                let (ours, theirs) = match model {
                    CostModel::AllowCache => (ours.cost_with_cache, theirs.cost_with_cache),
                    CostModel::NoCache => (ours.cost_without_cache, theirs.cost_without_cache),
                };
                if (ours <= 5.0 && theirs <= 5.0) || ours * 2.0 <= theirs {
                    continue;
                }
                let floor = (model == CostModel::NoCache)
                    .then(|| allow_list_floor(&case.tree, case.arches[0], w))
                    .flatten()
                    .filter(|&f| f > theirs / 2.0);
                match floor {
                    Some(f) if ours <= f * 1.01 => eprintln!(
                        "{} {workload} {model:?}: {ours:.3}, half of the tree's {theirs:.3} is \
                         below the floor {f:.3}",
                        case.label
                    ),
                    _ => misses.push(format!(
                        "{} {workload} {model:?}: {ours:.3} vs libseccomp tree {theirs:.3} \
                         ({:.1}%; floor {})",
                        case.label,
                        100.0 * ours / theirs,
                        floor.map_or("none proved".to_string(), |f| format!("{f:.3}"))
                    )),
                }
            }
        }
    }
    misses
}

#[test]
fn aarch64_outputs_are_proved_equal_decide_like_libseccomp_and_cache_all_they_can() {
    check_equality_and_caching(aarch64_cases());
}

/// The targets this optimizer still misses, exactly as the checks word them (see the issue 5
/// note and docs/benchmarks.md, "Optimizer comparison"). Any other miss fails, and so does a
/// listed one that no longer happens, so the list stays true.
fn assert_only_known_misses(misses: &[String], known: &[&str]) {
    let new: Vec<&String> = misses
        .iter()
        .filter(|m| !known.contains(&m.as_str()))
        .collect();
    let gone: Vec<&&str> = known
        .iter()
        .filter(|k| !misses.iter().any(|m| m == *k))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "new misses: {new:#?}\nlisted misses that no longer happen (remove them): {gone:#?}"
    );
}

/// The dispatch takes the shortest longest path whose exact best tree
/// (`optimize::dispatch::BoundedTrees`) costs at most `SLACK_TOLERANCE` (2%) more per call than
/// the best tree of all. On these two rows no tree of the layout meets both targets (the
/// figures are those exact trees', docs/benchmarks.md "Optimizer comparison"; `--max-path`
/// reproduces them, and `aarch64_path_misses_are_met_when_the_path_is_promised` holds the
/// rows to libseccomp's path):
/// - seccompagent-notify-dangerous with gvisor: within libseccomp's 12 the best costs 6.15
///   (51% of the tree's), 2.5% more than the 6.00 taken; and no tree of any depth reaches half
///   (5.992: the best, with `jeq` tests inside the tree, is 5.994).
/// - spo-nginx-1.19.1 with gvisor: within libseccomp's 13 the best costs 6.40 (51%); half
///   (6.26) needs a longest path of 14, which is taken.
const AARCH64_SIZE_AND_PATH_MISSES: &[&str] = &[
    "seccompagent-notify-dangerous gvisor allow-cache: worst-case path 13, libseccomp tree 12",
    "seccompagent-notify-dangerous gvisor no-cache: worst-case path 13, libseccomp tree 12",
    "spo-nginx-1.19.1 gvisor allow-cache: worst-case path 14, libseccomp tree 13",
    "spo-nginx-1.19.1 gvisor no-cache: worst-case path 14, libseccomp tree 13",
];

#[test]
fn aarch64_outputs_are_smaller_than_libseccomps_with_no_longer_worst_path() {
    let misses = size_and_path_misses(aarch64_cases());
    assert_only_known_misses(&misses, AARCH64_SIZE_AND_PATH_MISSES);
}

/// The worst-path misses above are the default trade-off, not a limit of the optimizer: held
/// to libseccomp's worst path (`max_path`, `--max-path`), each of those outputs meets it,
/// is proved equal, and decides like libseccomp's tree on the sweep.
#[test]
fn aarch64_path_misses_are_met_when_the_path_is_promised() {
    let mut held = Vec::new();
    for case in aarch64_cases() {
        let tree_worst = secopt::optimize::cost::worst_case_path(&case.tree);
        for (name, w, outputs) in &case.workloads {
            for (out, model) in outputs
                .iter()
                .zip([CostModel::AllowCache, CostModel::NoCache])
            {
                if secopt::optimize::cost::worst_case_path(&out.program) <= tree_worst {
                    continue;
                }
                let label = format!("{} {name} {model:?} within {tree_worst}", case.label);
                let bound = Some(tree_worst as usize);
                let within = optimized_within(&case.reference, Some(w), model, bound);
                assert_eq!(within.verification, Verification::Equal, "{label}");
                let worst = secopt::optimize::cost::worst_case_path(&within.program);
                assert!(worst <= tree_worst, "{label}: {worst}");
                assert_same_decisions(&label, case, &within.program);
                held.push(label);
            }
        }
    }
    assert_eq!(held.len(), AARCH64_SIZE_AND_PATH_MISSES.len(), "{held:#?}");
}

#[test]
fn aarch64_workload_costs_are_at_most_half_of_libseccomps_tree() {
    let misses = cost_misses(aarch64_cases());
    assert_only_known_misses(
        &misses,
        &[
            "seccompagent-notify-dangerous gvisor NoCache: 6.003 vs libseccomp tree 11.984 (50.1%; floor none proved)",
            "spo-nginx-1.19.1 redis NoCache: 5.577 vs libseccomp tree 10.489 (53.2%; floor 5.513)",
        ],
    );
}

#[test]
fn firecracker_outputs_are_proved_equal_decide_like_firecrackers_compiler_and_cache_all_they_can() {
    let cases = firecracker_cases();
    assert_eq!(cases.len(), 6, "three threads in each of two files");
    check_equality_and_caching(cases);
}

#[test]
fn firecracker_outputs_are_smaller_than_libseccomps_with_no_longer_worst_path() {
    let misses = size_and_path_misses(firecracker_cases());
    assert!(misses.is_empty(), "{misses:#?}");
}

/// `--favor size` (without a workload) is never larger than any other output of its filter
/// (with or without a workload, either cost model), and smaller than all of them on
/// `at_least` filters.
fn assert_favor_size_is_smallest(cases: &[Case], at_least: usize) {
    let mut smaller = 0;
    let mut sizes = Vec::new();
    for case in cases {
        let n = case.smallest.program.len();
        let others: Vec<usize> = case
            .outputs()
            .iter()
            .map(|(_, o)| o.program.len())
            .collect();
        let least = *others.iter().min().unwrap();
        assert!(n <= least, "{}: size {n}, others {others:?}", case.label);
        if n < least {
            smaller += 1;
        }
        sizes.push(format!("{}: {n} (others {others:?})", case.label));
    }
    assert!(smaller >= at_least, "{smaller} smaller: {sizes:#?}");
}

#[test]
fn aarch64_favor_size_is_never_larger_and_usually_smaller() {
    // Smaller on docker-default, podman, runc's test profile, seccompagent and spo-nginx.
    assert_favor_size_is_smallest(aarch64_cases(), 5);
}

#[test]
fn firecracker_favor_size_is_never_larger_and_usually_smaller() {
    // Smaller on the three production threads.
    assert_favor_size_is_smallest(firecracker_cases(), 3);
}

/// The api and vmm threads with the "common" mix, the probes' argument values included (so
/// `mmap` and `futex` are charged the path their probe takes). The vmm thread meets the target
/// since `mmap`'s hot call got its shortcut (7.778 before, 7.333 now); the api thread's `mmap`
/// check is already the shortest, and no tree of `jge` splits and `jeq` tests over the
/// numbers brings its dispatch below 20 tests for these eight calls (an exact search over that
/// class, `scripts/dispatch-bound.py`): 7.25 at best, above half the tree's 7.125. Ours is at
/// 7.375 (21 tests; 7.625 before a `jeq` test inside the tree was allowed to add a test that
/// pays for itself, `dispatch::TEST_PRICE`).
#[test]
fn firecracker_workload_costs_are_at_most_half_of_libseccomps_tree() {
    let misses = cost_misses(firecracker_cases());
    assert_only_known_misses(
        &misses,
        &["firecracker:api common NoCache: 7.375 vs libseccomp tree 14.250 (51.8%; floor none proved)"],
    );
}

/// The floor argument by hand on small allow-lists, so the function is checked against
/// independent figures. x86_64 only, deny everything but the two numbers allowed; weights 3
/// and 1 (the hotter one first).
#[test]
fn allow_list_floor_by_hand() {
    use secopt::bpf::insn::*;
    use secopt::bpf::Insn;
    let jeq = |k, jt, jf| Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf);
    let x86_64 = Arch::X86_64.token();
    let weights = |a: u32, b: u32| {
        let mut w = Weights::new();
        w.add(x86_64, a, 3.0).unwrap();
        w.add(x86_64, b, 1.0).unwrap();
        w
    };
    let cost = |p: &Program, w: &Weights| {
        stats(p, w, &[Arch::X86_64], KernelVersion::MODELLED).cost_without_cache
    };
    let head = [
        Insn::ld_abs(4),
        jeq(x86_64, 1, 0),
        Insn::ret(0),
        Insn::ld_abs(0),
    ];
    let (errno, allow) = (Insn::ret(RetVal::errno(1).0), Insn::ret(RetVal::ALLOW.0));

    // Allow 2 and 3: 0 and 1 are denied and every submask set of 2 or 3 holds 0, so only one
    // can take 5 steps (`jeq`), the other 6: (3 × 5 + 1 × 6) / 4 = 5.25, which this attains.
    let mut insns = head.to_vec();
    insns.extend([jeq(2, 2, 0), jeq(3, 1, 0), errno, allow]);
    let p = Program::new(insns);
    let w = weights(2, 3);
    assert_eq!(allow_list_floor(&p, Arch::X86_64, &w), Some(5.25));
    assert_eq!(cost(&p, &w), 5.25);

    // Allow 0 and 1: both lie below the first denied number, and `jge #2` decides both in one
    // test: the floor is 5, attained.
    let mut insns = head.to_vec();
    insns.extend([Insn::jump(BPF_JMP | BPF_JGE | BPF_K, 2, 0, 1), errno, allow]);
    let p = Program::new(insns);
    let w = weights(0, 1);
    assert_eq!(allow_list_floor(&p, Arch::X86_64, &w), Some(5.0));
    assert_eq!(cost(&p, &w), 5.0);

    // A default-ALLOW filter is no allow-list: the argument does not apply.
    let mut insns = head.to_vec();
    insns.extend([jeq(2, 2, 0), jeq(3, 1, 0), allow, errno]);
    assert_eq!(
        allow_list_floor(&Program::new(insns), Arch::X86_64, &weights(2, 3)),
        None
    );
}

/// The sweep is sharp enough to notice a one-constant change in an argument check: KVM_RUN
/// (`ioctl` request 0xae80, include/uapi/linux/kvm.h) compared with 0xae81 in the vCPU
/// filter's output.
#[test]
fn the_sweep_notices_a_changed_argument_constant() {
    const KVM_RUN: u32 = 0xae80;
    let case = firecracker_cases()
        .iter()
        .find(|c| c.label == "firecracker:vcpu")
        .unwrap();
    let mut broken = case.unweighted.program.clone();
    let changed = broken
        .insns
        .iter_mut()
        .filter(|i| i.is_conditional_jump() && i.k == KVM_RUN)
        .map(|i| i.k = KVM_RUN + 1)
        .count();
    assert_eq!(changed, 1, "one comparison with KVM_RUN");
    let caught = std::panic::catch_unwind(|| assert_same_decisions("broken", case, &broken));
    assert!(caught.is_err(), "the sweep missed the change");
}
