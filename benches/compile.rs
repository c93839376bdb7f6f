//! Compile-time numbers for the corpus in ../shared/profiles: how long secopt takes to turn a
//! profile into a filter (parse + resolve + lower + validate), how long the system libseccomp
//! takes for the same profile (linear and tree), how long the optimizer takes on libseccomp's
//! Docker filter, and how long the analyses behind `secopt analyze` and `secopt bench` take
//! (the allow-cache bitmap and the per-syscall path analysis of every syscall of every arch).
//!
//! Groups: `compile` (secopt: parse + resolve + lower + validate, host x86_64 with the
//! profile's sub-architectures; libseccomp-1/-2: the same rules through the system libseccomp,
//! linear and tree, including its export), `optimize` (the optimizer with its verification, on
//! libseccomp's Docker filters for x86_64+x86+x32), `analysis docker libseccomp-1` (the
//! allow-cache bitmap of x86_64 + ia32, and the path analysis of every syscall of an arch).
//!
//! `pipeline docker x86_64+x86+x32` is what `secopt compile` does by default: bytes to an
//! optimized filter, with and without the optimizer's self-check (issue 5's 2 ms / 50 ms);
//! `pipeline phases` splits the first into its parts.
//!
//! `dispatch 128 random ranges` is the largest dispatch the exact bounded trees take, with a
//! measured workload, under `--favor balanced` and `--favor speed` (whose `jeq` tables may
//! have 2^20 cells): the worst case of the dispatch search, not a real filter.
//!
//! `worst-case path` times `cost::worst_case_path` beside the one run per range of `(arch,
//! nr)` values it replaced (the same figure on these filters, asserted before timing).
//!
//! `pathological product` is the worst input the fuzzer found for the decision diagrams:
//! what the step budgets (docs/design-notes.md) cost on it.
//!
//! `value sets` compiles profiles with 1 500 and 3 000 scattered `ioctl` requests: the large
//! dispatches (`dispatch::divided_tree`) and the layout to fit the kernel's limit
//! (docs/optimizer.md, "Too long for the kernel").
//!
//! `cargo bench --bench compile`. Figures are in docs/benchmarks.md.

#[path = "../tests/common/libseccomp_profiles.rs"]
#[allow(dead_code)]
mod libseccomp_profiles;
#[path = "../tests/common/ranges.rs"]
mod ranges;

use criterion::{criterion_group, BatchSize, Criterion, SamplingMode};
use secopt::arch::Arch;
use secopt::bpf::analysis::{Analyzer, Budget};
use secopt::bpf::cache::{CacheBitmap, KernelCache};
use secopt::compile::{compile_firecracker, compile_oci, CompileOptions};
use secopt::optimize::dispatch;
use secopt::policy::firecracker::FirecrackerOptions;
use secopt::policy::{KernelVersion, ResolveOptions};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

fn profile(rel: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const OCI: [&str; 4] = [
    "oci/docker-default.json",
    "oci/podman-containers-common-default.json",
    "oci/runc-integration-seccomp_syscall_test1.json",
    "oci/spo-nginx-1.19.1.json",
];
const FIRECRACKER: &str = "firecracker/firecracker-x86_64-unknown-linux-musl.json";

/// `oci/docker-default.json` → `docker-default` (criterion truncates long ids).
fn short(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_suffix(".json").unwrap_or(name)
}

fn resolve_options() -> ResolveOptions {
    ResolveOptions {
        native: Some(Arch::X86_64),
        kernel: Some(KernelVersion::new(6, 18)),
        ..Default::default()
    }
}

fn bench_compile(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    let options = CompileOptions::default();
    for rel in OCI {
        let bytes = profile(rel);
        g.bench_function(format!("secopt {}", short(rel)), |b| {
            b.iter(|| compile_oci(black_box(&bytes), rel, &resolve_options(), &options).unwrap())
        });
    }
    let fc = profile(FIRECRACKER);
    g.bench_function("secopt firecracker (3 threads)", |b| {
        b.iter(|| {
            compile_firecracker(
                black_box(&fc),
                FIRECRACKER,
                &FirecrackerOptions::new(Arch::X86_64),
                &options,
            )
            .unwrap()
        })
    });
    for rel in OCI {
        let json = libseccomp_profiles::load_profile(rel).unwrap();
        for optimize in [1, 2] {
            let opts = libseccomp_profiles::ProfileOptions {
                optimize,
                ..Default::default()
            };
            g.bench_function(format!("libseccomp-{optimize} {}", short(rel)), |b| {
                b.iter(|| libseccomp_profiles::build_filter(black_box(&json), &opts).unwrap())
            });
        }
    }
    g.finish();
}

/// Docker's default profile (its path, bytes) and the resolve options for x86_64 + x86 + x32:
/// the input of both `pipeline` groups.
fn docker_three_arches() -> (&'static str, Vec<u8>, ResolveOptions) {
    let rel = "oci/docker-default.json";
    let resolve = ResolveOptions {
        arches: Some(vec![Arch::X86_64, Arch::X86, Arch::X32]),
        ..resolve_options()
    };
    (rel, profile(rel), resolve)
}

/// Issue 5's compile-time targets: Docker's default profile for x86_64 + x86 + x32 from
/// bytes to an optimized filter (parse, resolve, lower, optimize, validate), without the
/// self-check (target: under 2 ms) and with it (under 50 ms).
/// What `secopt compile` does by default, with or without the self-check (no report).
fn optimizing(verify: bool) -> CompileOptions {
    CompileOptions {
        optimize: Some(secopt::optimize::OptimizeOptions {
            verify,
            report: false,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn bench_pipeline(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipeline docker x86_64+x86+x32");
    g.sample_size(30).measurement_time(Duration::from_secs(5));
    let (rel, bytes, resolve) = docker_three_arches();
    for (name, verify) in [
        ("optimized, no self-check", false),
        ("optimized + self-check", true),
    ] {
        let options = optimizing(verify);
        g.bench_function(name, |b| {
            b.iter(|| compile_oci(black_box(&bytes), rel, &resolve, &options).unwrap())
        });
    }
    g.finish();
}

/// Where the no-self-check pipeline's time goes, phase by phase on the same input: parse,
/// resolve, the reference lowering (+ validation), and lifting that reference (the optimizer's
/// first step; the rest of `pipeline` is the dispatch, layout and validation).
fn bench_pipeline_phases(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipeline phases docker x86_64+x86+x32");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    let (rel, bytes, resolve) = docker_three_arches();
    let policy = secopt::policy::oci::parse(&bytes, rel).unwrap();
    let resolved = secopt::policy::resolve(&policy, &resolve).unwrap();
    let plain = CompileOptions::default();
    let reference = secopt::compile::compile(&resolved, &plain)
        .unwrap()
        .into_program();
    g.bench_function("parse", |b| {
        b.iter(|| secopt::policy::oci::parse(black_box(&bytes), rel).unwrap())
    });
    g.bench_function("resolve", |b| {
        b.iter(|| secopt::policy::resolve(black_box(&policy), &resolve).unwrap())
    });
    g.bench_function("lower + validate", |b| {
        b.iter(|| secopt::compile::compile(black_box(&resolved), &plain).unwrap())
    });
    g.bench_function("lift the reference", |b| {
        b.iter(|| {
            secopt::optimize::lift::lift(
                black_box(&reference),
                &secopt::optimize::lift::LiftConfig::FULL,
            )
            .unwrap()
        })
    });
    g.finish();
}

fn bench_optimize(c: &mut Criterion) {
    let mut g = c.benchmark_group("optimize");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for optimize in [1, 2] {
        let prog = libseccomp_profiles::docker_default(optimize).program;
        let opts = secopt::optimize::OptimizeOptions::default();
        g.bench_function(
            format!("docker libseccomp-{optimize} ({} insns)", prog.len()),
            |b| b.iter(|| secopt::optimize::optimize(black_box(&prog), &opts).unwrap()),
        );
    }
    g.finish();
}

fn bench_analysis(c: &mut Criterion) {
    let mut g = c.benchmark_group("analysis docker libseccomp-1");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    let prog = libseccomp_profiles::docker_default(1).program;
    let kernel = KernelCache::for_arch(Arch::X86_64).unwrap();
    g.bench_function("allow-cache bitmap", |b| {
        b.iter(|| CacheBitmap::new(kernel.clone()).attach(black_box(&prog)))
    });
    let budget = Budget::default();
    for arch in [Arch::X86_64, Arch::X86, Arch::X32] {
        // A fresh analyzer per iteration: one analyzer's step budget spans all its analyses
        // (`Budget::max_total_bdd_steps`), so a reused one would starve after enough runs.
        g.bench_function(format!("paths of every {arch} syscall"), |b| {
            b.iter_batched(
                || Analyzer::new(&prog).unwrap(),
                |analyzer| analyzer.arch_summary(black_box(arch), &budget),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

/// `cost::worst_case_path` (one exploration splitting the values of `nr` and `arch` at each
/// test) beside the one run per range it replaced (`tests/common/ranges.rs`), on libseccomp's
/// Docker filters and secopt's optimization of the linear one.
fn bench_worst_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("worst-case path docker x86_64+x86+x32");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    let linear = libseccomp_profiles::docker_default(1).program;
    let tree = libseccomp_profiles::docker_default(2).program;
    let optimized = secopt::optimize::optimize(&linear, &Default::default())
        .unwrap()
        .program;
    for (name, prog) in [
        ("libseccomp-1", &linear),
        ("libseccomp-2", &tree),
        ("secopt", &optimized),
    ] {
        assert_eq!(
            secopt::optimize::cost::worst_case_path(prog),
            ranges::worst_by_ranges(prog)
        );
        g.bench_function(format!("{name}: one pass"), |b| {
            b.iter(|| secopt::optimize::cost::worst_case_path(black_box(prog)))
        });
        g.bench_function(format!("{name}: one run per range"), |b| {
            b.iter(|| ranges::worst_by_ranges(black_box(prog)))
        });
    }
    g.finish();
}

/// The `optimize` fuzz target's input 0xa6 (tests/data/product-proof.s): a product of
/// argument words whose proof the decision diagrams cannot finish. The self-check gives up
/// on its step budget and keeps the input; `secopt analyze` settles for sound
/// approximations once its analyzer's total step budget is spent.
fn bench_pathological(c: &mut Criterion) {
    let mut g = c.benchmark_group("pathological product (fuzz input 0xa6)");
    // Iterations of about a second: flat sampling, ten of them.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(15));
    let prog = secopt::bpf::asm::assemble(include_str!("../tests/data/product-proof.s")).unwrap();
    let opts = secopt::optimize::OptimizeOptions {
        report: false,
        ..Default::default()
    };
    g.bench_function("optimize (the self-check stops on steps)", |b| {
        b.iter(|| {
            let out = secopt::optimize::optimize(black_box(&prog), &opts).unwrap();
            assert_eq!(out.method, secopt::optimize::Method::Unchanged);
        })
    });
    let budget = Budget::default();
    // The program checks no arch: `secopt analyze` on an x86_64 host analyses x86_64.
    g.bench_function("paths of every x86_64 syscall (secopt analyze)", |b| {
        b.iter_batched(
            || Analyzer::new(&prog).unwrap(),
            |analyzer| analyzer.arch_summary(black_box(Arch::X86_64), &budget),
            BatchSize::SmallInput,
        )
    });
    // What `secopt verify` adds when the proof of this program against itself runs out: the
    // whole search for a difference by constant-made inputs (finds none; all of it runs).
    let all = secopt::verify::Domain::all();
    g.bench_function("verify's sampling after an unknown (against itself)", |b| {
        b.iter(|| {
            assert!(secopt::verify::sample_difference(black_box(&prog), &prog, &all).is_none())
        })
    });
    g.finish();
}

/// A profile allowing `ioctl` for `n` scattered requests (one rule each; deterministic
/// pseudo-random 32-bit values) on x86_64 alone.
fn ioctl_requests(n: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    let rules: Vec<String> = (0..n)
        .map(|_| {
            // xorshift32
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            format!(
                r#"{{"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
                     "args": [{{"index": 1, "value": {x}, "op": "SCMP_CMP_EQ"}}]}}"#
            )
        })
        .collect();
    format!(
        r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
        rules.join(",")
    )
    .into_bytes()
}

/// `secopt compile` of the largest value sets a filter holds: 1 500 requests (balanced value
/// trees fit), 3 000 (laid out to fit the kernel's limit as trees of short chains); with the
/// self-check, which is most of the time.
fn bench_value_sets(c: &mut Criterion) {
    let mut g = c.benchmark_group("value sets (x86_64 ioctl requests)");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(10));
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        arches: Some(vec![Arch::X86_64]),
        ..Default::default()
    };
    for n in [1500, 3000] {
        let bytes = ioctl_requests(n);
        for (name, verify) in [("without self-check", false), ("with self-check", true)] {
            let options = optimizing(verify);
            g.bench_function(format!("{n} requests, {name}"), |b| {
                b.iter(|| {
                    let f = compile_oci(black_box(&bytes), "ioctls.json", &resolve, &options);
                    assert!(f.unwrap().program().len() <= 4096);
                })
            });
        }
    }
    g.finish();
}

/// A deterministic dispatch of `m` ranges (half single numbers, half up to 20 wide) with
/// weights from 0 to 10^5, alternating among 12 targets whose own paths are 1 to 4
/// instructions long, and 20 hot values inside the wide ranges.
fn random_dispatch(m: usize) -> (Vec<dispatch::Leaf>, Vec<(u32, dispatch::Cost)>) {
    use dispatch::{Cost, Leaf};
    let mut rng = secopt::bpf::testing::Rng::new(1);
    let mut leaves: Vec<Leaf> = Vec::with_capacity(m);
    let mut lo = 0u32;
    for i in 0..m {
        let width = if rng.below(2) == 0 {
            1
        } else {
            1 + rng.below(20) as u32
        };
        let hi = if i + 1 == m { u32::MAX } else { lo + width - 1 };
        let w = [0.0, 1.0, 10.0, 1000.0, 100_000.0][rng.below(5)];
        let mut target = rng.below(12) as u32;
        if leaves.last().is_some_and(|l| l.target == target) {
            target = (target + 1) % 12;
        }
        leaves.push(Leaf {
            lo,
            hi,
            target,
            weight: Cost([w, w]),
        });
        lo = hi.wrapping_add(1);
    }
    let mut hot: Vec<(u32, Cost)> = Vec::new();
    while hot.len() < 20 {
        let l = &leaves[rng.below(m - 1)];
        if l.hi > l.lo {
            let v = l.lo + rng.below((l.hi - l.lo) as usize) as u32;
            let w = [10.0, 1000.0, 50_000.0][rng.below(3)];
            if !hot.iter().any(|h| h.0 == v) {
                hot.push((v, Cost([w, w])));
            }
        }
    }
    hot.sort_by_key(|h| h.0);
    (leaves, hot)
}

/// The dispatch search's worst cases: 128 ranges, the most the exact bounded trees take with
/// a workload ([`dispatch::EXACT_BOUNDED_MAX_LEAVES`]), under every `--favor`; and 256, the
/// most `--favor size` runs them on whatever the workload (their cost is cubic).
fn bench_dispatch(c: &mut Criterion) {
    let len = |t: u32| 1 + t as usize % 4;
    let groups: [(usize, &[(&str, dispatch::Tuning)]); 2] = [
        (
            dispatch::EXACT_BOUNDED_MAX_LEAVES,
            &[
                ("balanced", dispatch::Tuning::BALANCED),
                ("speed", dispatch::Tuning::SPEED),
                ("size", dispatch::Tuning::SIZE),
            ],
        ),
        (256, &[("size", dispatch::Tuning::SIZE)]),
    ];
    for (m, tunings) in groups {
        let mut g = c.benchmark_group(format!("dispatch {m} random ranges"));
        g.sample_size(10).measurement_time(Duration::from_secs(5));
        let (leaves, hot) = random_dispatch(m);
        for (name, tuning) in tunings {
            g.bench_function(*name, |b| {
                b.iter(|| {
                    dispatch::best_tree_bounded(black_box(&leaves), &hot, &len, false, tuning)
                })
            });
        }
        g.finish();
    }
    // `--max-path` on a dispatch past the size tuning's exact trees: one table of the exact
    // bounded trees, built up to a bound the searched tree misses by four.
    let mut g = c.benchmark_group("dispatch 512 random ranges within a bound");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    let (leaves, hot) = random_dispatch(512);
    for (name, tuning) in [
        ("balanced", dispatch::Tuning::BALANCED),
        ("size", dispatch::Tuning::SIZE),
    ] {
        let (searched, _) = dispatch::best_tree_bounded(&leaves, &hot, &len, false, &tuning);
        let bound = searched.worst_path(&len) - 4;
        g.bench_function(name, |b| {
            b.iter(|| {
                let within = dispatch::best_tree_within(
                    black_box(&leaves),
                    &hot,
                    &len,
                    false,
                    &tuning,
                    bound,
                    None,
                );
                assert!(within.is_ok(), "no tree within {bound}");
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_dispatch,
    bench_compile,
    bench_pipeline,
    bench_pipeline_phases,
    bench_optimize,
    bench_analysis,
    bench_worst_path,
    bench_pathological,
    bench_value_sets
);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
