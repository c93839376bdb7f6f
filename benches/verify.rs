//! Benchmark of `secopt::verify` on the real-world case it exists for: libseccomp's linear
//! (1001 instructions) and binary-tree (1246 instructions) filters for Docker's default
//! profile on x86_64 with x86 and x32 (Docker's archMap), proved equal; and the same with one
//! rule changed, proved different and diffed. Target: under 1 s and 1 GiB.
//!
//! `cargo bench --bench verify`; the peak resident set of the whole run is printed at the end
//! (getrusage), which bounds the memory of one verification from above.

#[path = "../tests/common/libseccomp_profiles.rs"]
#[allow(dead_code)]
mod libseccomp_profiles;

use criterion::{criterion_group, Criterion};
use secopt::bpf::Program;
use secopt::verify::{diff, equivalent, DiffOutcome, Verdict, VerifyOptions};
use std::hint::black_box;
use std::time::Duration;

fn docker(optimize: u32) -> Program {
    libseccomp_profiles::docker_default(optimize).program
}

fn bench_verify(c: &mut Criterion) {
    let (linear, tree) = (docker(1), docker(2));
    assert_eq!(
        (linear.len(), tree.len()),
        (1001, 1246),
        "libseccomp 2.5.4's layouts"
    );
    let opts = VerifyOptions::default();
    assert_eq!(equivalent(&linear, &tree, &opts).unwrap(), Verdict::Equal);
    // socket (41) denied outright on x86_64 in the tree: a real difference.
    let mut changed = tree.clone();
    let at = changed
        .insns
        .iter()
        .position(|i| i.is_conditional_jump() && i.k == 41)
        .expect("the tree compares nr with 41");
    changed.insns[at].k = 0xffff;
    assert!(matches!(
        equivalent(&linear, &changed, &opts).unwrap(),
        Verdict::Different(_)
    ));
    assert!(matches!(
        diff(&linear, &changed, &opts).unwrap(),
        DiffOutcome::Different(_)
    ));

    let mut g = c.benchmark_group("docker-default x86_64+x86+x32");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("verify linear vs tree (equal)", |b| {
        b.iter(|| equivalent(black_box(&linear), black_box(&tree), &opts).unwrap())
    });
    g.bench_function("verify linear vs changed tree (different)", |b| {
        b.iter(|| equivalent(black_box(&linear), black_box(&changed), &opts).unwrap())
    });
    g.bench_function("diff linear vs changed tree", |b| {
        b.iter(|| diff(black_box(&linear), black_box(&changed), &opts).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_verify);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0 {
        println!(
            "peak resident set of the whole benchmark process: {:.1} MiB",
            usage.ru_maxrss as f64 / 1024.0
        );
    }
}
