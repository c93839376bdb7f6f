//! The optimizer on the programs the system libseccomp builds for every OCI profile of the
//! shared corpus (linear and binary-tree layouts): the output decides exactly like the input
//! (interpreter sweep, independent of the verifier the optimizer's self-check uses), is valid,
//! caches at least what the input caches (the kernel's emulator, run on both), and is smaller
//! than both libseccomp layouts. Docker's default profile on x86_64+x86+x32 is measured against
//! the targets of issue 5.

mod common;

use common::libseccomp_profiles::{build_filter, docker_default, load_profile, ProfileOptions};
use secopt::arch::Arch;
use secopt::bpf::cache::{CacheBitmap, KernelCache};
use secopt::bpf::insn::*;
use secopt::bpf::testing::{random_data, Rng};
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Program, SeccompData};
use secopt::optimize::{
    optimize, stats, CostModel, Method, OptimizeOptions, Verification, Weights,
};

const X86_64: u32 = 0xc000_003e;
const I386: u32 = 0x4000_0003;
const AARCH64: u32 = 0xc000_00b7;

/// Every constant a program compares with or masks by, for argument boundary values.
fn constants(prog: &Program) -> Vec<u32> {
    let mut c: Vec<u32> = prog
        .insns
        .iter()
        .filter(|i| {
            (i.is_conditional_jump() && src(i.code) == BPF_K) || i.code == BPF_ALU | BPF_AND | BPF_K
        })
        .map(|i| i.k)
        .collect();
    c.extend([0, 1, u32::MAX, 0x8000_0000]);
    c.sort_unstable();
    c.dedup();
    c
}

/// The syscall numbers every check sweeps: 0..600, the x32 range, -1, and the edges of the
/// number space, plus random high numbers.
fn numbers(rng: &mut Rng) -> Vec<u32> {
    let mut n: Vec<u32> = (0..600).collect();
    n.extend((0..600).map(|i| 0x4000_0000 + i));
    n.extend([
        u32::MAX,
        u32::MAX - 1,
        0x3fff_ffff,
        0x7fff_ffff,
        0x8000_0000,
        0xbfff_ffff,
        0xc000_0000,
    ]);
    n.extend((0..20).map(|_| rng.next_u32()));
    n
}

/// Asserts that `a` and `b` decide the same on the sweep: every number × every arch token
/// (the program's, a bogus one, random ones) × zero arguments, random ones, and, where the
/// input reads arguments, every argument word at every boundary of every constant.
fn assert_same_decisions(label: &str, a: &Program, b: &Program) {
    let mut rng = Rng::new(0x5ec0);
    let consts = constants(a);
    let mut tokens = vec![X86_64, I386, AARCH64, 0, u32::MAX];
    tokens.extend((0..3).map(|_| rng.next_u32()));
    let nrs = numbers(&mut rng);
    let mut checked = 0usize;
    let mut check = |data: &SeccompData| {
        let (ra, rb) = (
            interp::eval(a, data).unwrap(),
            interp::eval(b, data).unwrap(),
        );
        assert_eq!(ra, rb, "{label}: decisions differ on {data:?}");
        checked += 1;
    };
    for &token in &tokens {
        for &nr in &nrs {
            let base = SeccompData::new(token, nr as i32, [0; 6]);
            check(&base);
            let reads_args = interp::trace(a, &base).unwrap().words_read & !0b11 != 0;
            let mut random = random_data(&mut rng, a, &[token]);
            random.arch = token;
            random.nr = nr as i32;
            check(&random);
            if !reads_args {
                continue;
            }
            for _ in 0..8 {
                let mut d = random_data(&mut rng, a, &[token]);
                d.arch = token;
                d.nr = nr as i32;
                check(&d);
            }
            // One word at a time at every boundary, then 64-bit values with common high halves.
            for word in 2..16usize {
                for &c in &consts {
                    for v in [c.wrapping_sub(1), c, c.wrapping_add(1)] {
                        let mut w = base.words();
                        w[word] = v;
                        check(&SeccompData::from_words(&w));
                    }
                }
            }
            for i in 0..6 {
                for hi in [0u64, 1, 0xffff_ffff] {
                    for &c in &consts {
                        let mut d = base;
                        d.args[i] = (hi << 32) | c as u64;
                        check(&d);
                    }
                }
            }
        }
    }
    assert!(checked > 10_000, "{label}: only {checked} inputs checked");
}

/// The kernel cache of an x86_64 kernel (native x86_64 and compat ia32 bitmaps).
fn cached_sets(prog: &Program) -> Vec<(u32, Vec<u32>)> {
    let bitmap = CacheBitmap::new(KernelCache::for_arch(Arch::X86_64).unwrap()).attach(prog);
    [X86_64, I386]
        .iter()
        .map(|&t| (t, bitmap.cached_numbers(t)))
        .collect()
}

fn assert_cache_superset(label: &str, before: &Program, after: &Program) {
    for ((t, b), (_, a)) in cached_sets(before).into_iter().zip(cached_sets(after)) {
        let lost: Vec<u32> = b
            .iter()
            .filter(|n| a.binary_search(n).is_err())
            .copied()
            .collect();
        assert!(
            lost.is_empty(),
            "{label}: token {t:#x} lost cached numbers {lost:?}"
        );
    }
}

fn optimized(label: &str, prog: &Program) -> Program {
    let out = optimize(prog, &OptimizeOptions::default()).unwrap();
    // A filter the lifter re-makes instruction for instruction (libseccomp's 5-instruction
    // chain for a profile of one rule) is reported as the input itself, with nothing to prove;
    // no candidate was dropped (no notes) either way.
    if out.method == Method::Unchanged && out.program == *prog {
        assert_eq!(out.verification, Verification::Skipped, "{label}");
    } else {
        assert_eq!(out.method, Method::Lifted, "{label}: {:?}", out.notes);
        assert_eq!(out.verification, Verification::Equal, "{label}");
    }
    assert!(out.notes.is_empty(), "{label}: {:?}", out.notes);
    validate(&out.program).unwrap();
    out.program
}

#[test]
fn every_oci_profile_optimizes_exactly() {
    for name in common::libseccomp_profiles::oci_profile_names() {
        let profile = load_profile(&format!("oci/{name}")).unwrap();
        let build = |optimize| {
            let opts = ProfileOptions {
                optimize,
                ..ProfileOptions::default()
            };
            build_filter(&profile, &opts)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .program
        };
        let (linear, tree) = (build(1), build(2));
        for (layout, input) in [("linear", &linear), ("tree", &tree)] {
            let label = format!("{name} ({layout}, {} insns)", input.len());
            let out = optimized(&label, input);
            assert_same_decisions(&label, input, &out);
            assert_cache_superset(&label, input, &out);
            // Tiny filters can be optimal already (docker-labs-deny: 5 instructions for two arch
            // tokens and two actions cannot be beaten); everything else must shrink.
            let best = linear.len().min(tree.len());
            assert!(
                out.len() < best || (best <= 8 && out.len() <= best),
                "{label}: {} instructions, libseccomp has {} / {}",
                out.len(),
                linear.len(),
                tree.len()
            );
            eprintln!(
                "{label}: {} -> {} instructions (libseccomp linear {}, tree {})",
                input.len(),
                out.len(),
                linear.len(),
                tree.len()
            );
        }
    }
}

/// The semantic upper bound of caching: a number of a kernel bitmap can be cached only if its
/// decision is ALLOW for every argument value. The exact per-syscall analysis of the *input*
/// gives that set; the output must cache exactly it (more would be unsound, less is a lost
/// opportunity).
#[test]
fn docker_default_reaches_the_cacheable_upper_bound() {
    use secopt::bpf::analysis::{Analyzer, Budget};
    use secopt::bpf::RetVal;
    for optimize_level in [1, 2] {
        let input = docker_default(optimize_level).program;
        let out = optimized("docker", &input);
        let analyzer = Analyzer::new(&input).unwrap();
        let budget = Budget::default();
        let kernel = KernelCache::for_arch(Arch::X86_64).unwrap();
        for (token, cached) in cached_sets(&out) {
            // uretprobe/uprobe pass the cache without looking at any filter (6.18).
            let passthrough = |nr: u32| {
                kernel
                    .passthrough
                    .iter()
                    .any(|p| p.token == token && p.nr == nr)
            };
            let bound: Vec<u32> = (0..471u32)
                .filter(|&nr| {
                    if passthrough(nr) {
                        return true;
                    }
                    let p = analyzer.syscall(token, nr, &budget);
                    assert!(p.exact, "{token:#x}/{nr}");
                    p.returns.iter().copied().collect::<Vec<_>>() == [RetVal::ALLOW]
                })
                .collect();
            assert_eq!(cached, bound, "token {token:#x}");
        }
    }
}

/// Workload weights from a shared `strace -c` file (through the benchmark's parser).
fn workload(file: &str) -> Weights {
    common::workloads::weights_of(&common::workloads::read_shared_workload(file))
}

/// Issue 5's targets for Docker's default profile on x86_64 + x86 + x32, measured: size at most
/// 35% of libseccomp's linear program, smaller than both layouts; workload cost at most half of
/// the binary tree's under both cost models (where either is above 5 instructions); worst-case
/// path no longer than the tree's; and no cacheable syscall lost.
#[test]
fn docker_default_meets_the_issue_targets() {
    let linear = docker_default(1).program;
    let tree = docker_default(2).program;
    assert_eq!(
        (linear.len(), tree.len()),
        (1001, 1246),
        "libseccomp 2.5.4 sizes"
    );
    let arches = [Arch::X86_64, Arch::X86, Arch::X32];
    let kernel = secopt::bpf::cache::KernelVersion::MODELLED;
    for file in ["nginx-wrk.strace-c.txt", "redis-benchmark.strace-c.txt"] {
        let w = workload(file);
        for model in [CostModel::AllowCache, CostModel::NoCache] {
            let opts = OptimizeOptions {
                weights: Some(w.clone()),
                cost_model: model,
                ..OptimizeOptions::default()
            };
            let out = optimize(&linear, &opts).unwrap();
            assert_eq!(out.verification, Verification::Equal);
            let ours = stats(&out.program, &w, &arches, kernel);
            let lin = stats(&linear, &w, &arches, kernel);
            let tr = stats(&tree, &w, &arches, kernel);
            eprintln!(
                "{file} optimizing {model:?}: size {} (linear {}, tree {}); cost with cache {:.2} \
                 (linear {:.2}, tree {:.2}); without {:.2} (linear {:.2}, tree {:.2}); worst path \
                 {} (linear {}, tree {}); cached {:?} (tree {:?})",
                ours.instructions,
                lin.instructions,
                tr.instructions,
                ours.cost_with_cache,
                lin.cost_with_cache,
                tr.cost_with_cache,
                ours.cost_without_cache,
                lin.cost_without_cache,
                tr.cost_without_cache,
                ours.worst_case_path,
                lin.worst_case_path,
                tr.worst_case_path,
                ours.cacheable.iter().map(|c| c.count).collect::<Vec<_>>(),
                tr.cacheable.iter().map(|c| c.count).collect::<Vec<_>>(),
            );
            assert!(
                ours.instructions * 100 <= 35 * 1001,
                "size {}",
                ours.instructions
            );
            for (ours_cost, tree_cost) in [
                (ours.cost_with_cache, tr.cost_with_cache),
                (ours.cost_without_cache, tr.cost_without_cache),
            ] {
                if ours_cost > 5.0 || tree_cost > 5.0 {
                    assert!(
                        ours_cost * 2.0 <= tree_cost,
                        "{file} {model:?}: {ours_cost} vs {tree_cost}"
                    );
                }
            }
            assert!(ours.worst_case_path <= tr.worst_case_path);
            for (a, b) in ours.cacheable.iter().zip(&tr.cacheable) {
                assert!(a.count >= b.count);
            }
        }
    }
}

/// Issue 5's cost targets on every profile of the corpus and every shared workload: for the
/// model optimized for, cost at most half of libseccomp's binary tree where either is above 5
/// instructions; under the other model at most 60% of the tree's; worst-case path no longer
/// than the tree's.
///
/// One pair cannot reach half: spo-nginx (an allow-list) with the nginx workload, whose two
/// hottest syscalls (writev, recvfrom, 47% each) are separate allowed numbers. Every path runs
/// `ld [arch]`, one `jeq`, `ld [nr]` and a `ret` (4); two single numbers need one and two
/// tests at best, so ≥ 0.47 × 5 + 0.47 × 6 + 0.06 × 7 = 5.59 > 11.05 / 2. There the bound is
/// that optimum (+ 0.02).
#[test]
fn every_profile_and_workload_meets_the_cost_targets() {
    let arches = [Arch::X86_64, Arch::X86, Arch::X32];
    let kernel = secopt::bpf::cache::KernelVersion::MODELLED;
    let dir = common::libseccomp_profiles::profile_path("oci");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    let mut failures = Vec::new();
    for name in names {
        let profile = load_profile(&format!("oci/{name}")).unwrap();
        let opts = ProfileOptions {
            optimize: 2,
            ..ProfileOptions::default()
        };
        let tree = build_filter(&profile, &opts).unwrap().program;
        for file in [
            "nginx-wrk.strace-c.txt",
            "redis-benchmark.strace-c.txt",
            "gvisor-sentry-postgres.strace-c.txt",
        ] {
            let w = workload(file);
            let theirs = stats(&tree, &w, &arches, kernel);
            for model in [CostModel::AllowCache, CostModel::NoCache] {
                let out = optimize(
                    &tree,
                    &OptimizeOptions {
                        weights: Some(w.clone()),
                        cost_model: model,
                        report: false,
                        ..OptimizeOptions::default()
                    },
                )
                .unwrap();
                // Proved equal, or the input itself (a tree the lifter re-makes as it is).
                if out.program != tree {
                    assert_eq!(out.verification, Verification::Equal, "{name} {file}");
                }
                let ours = stats(&out.program, &w, &arches, kernel);
                let line = format!(
                    "{name} {file} {model:?}: with cache {:.2} vs {:.2}, without {:.2} vs {:.2}, worst {} vs {}",
                    ours.cost_with_cache,
                    theirs.cost_with_cache,
                    ours.cost_without_cache,
                    theirs.cost_without_cache,
                    ours.worst_case_path,
                    theirs.worst_case_path
                );
                eprintln!("{line}");
                let (main, other) = match model {
                    CostModel::AllowCache => (
                        (ours.cost_with_cache, theirs.cost_with_cache),
                        (ours.cost_without_cache, theirs.cost_without_cache),
                    ),
                    CostModel::NoCache => (
                        (ours.cost_without_cache, theirs.cost_without_cache),
                        (ours.cost_with_cache, theirs.cost_with_cache),
                    ),
                };
                let above_5 = |(a, b): (f64, f64)| a > 5.0 || b > 5.0;
                let floor = if name.starts_with("spo-nginx") && file.starts_with("nginx") {
                    5.61
                } else {
                    0.0
                };
                let main_ok = !above_5(main) || main.0 <= (main.1 * 0.5).max(floor);
                let other_ok = !above_5(other) || other.0 <= (other.1 * 0.6).max(floor);
                if !main_ok || !other_ok || ours.worst_case_path > theirs.worst_case_path {
                    failures.push(line);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
