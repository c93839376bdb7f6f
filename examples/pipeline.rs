//! The library pipeline on Docker's default profile for x86_64, x86 and x32, `N` times: what
//! the criterion `pipeline` bench times, as a program to count instructions with (a busy host
//! changes times, not instruction counts).
//!
//! ```text
//! cargo build --release --example pipeline
//! valgrind --tool=callgrind target/release/examples/pipeline 1             # Ir(1)
//! valgrind --tool=callgrind target/release/examples/pipeline 3             # Ir(3)
//! valgrind --tool=callgrind target/release/examples/pipeline 3 --self-check
//! ```
//!
//! One compile is `(Ir(3) - Ir(1)) / 2`: the difference leaves out what is done once (the
//! process, the syscall tables). The profile is `../shared/profiles/oci/docker-default.json`
//! beside the crate unless a path is given with `--profile PATH`.

use secopt::arch::Arch;
use secopt::compile::{compile_oci, CompileOptions};
use secopt::optimize::OptimizeOptions;
use secopt::policy::{KernelVersion, ResolveOptions};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut times = 1usize;
    let mut self_check = false;
    let mut profile = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/profiles/oci/docker-default.json"
    )
    .to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--self-check" => self_check = true,
            "--profile" => match args.next() {
                Some(p) => profile = p,
                None => return usage("--profile needs a path"),
            },
            n => match n.parse() {
                Ok(n) => times = n,
                Err(_) => return usage(&format!("{n:?} is not a number of compiles")),
            },
        }
    }
    let bytes = match std::fs::read(&profile) {
        Ok(b) => b,
        Err(e) => return usage(&format!("{profile}: {e}")),
    };
    let resolve = ResolveOptions {
        arches: Some(vec![Arch::X86_64, Arch::X86, Arch::X32]),
        native: Some(Arch::X86_64),
        kernel: Some(KernelVersion::new(6, 18)),
        ..Default::default()
    };
    let options = CompileOptions {
        optimize: Some(OptimizeOptions {
            verify: self_check,
            report: false,
            ..Default::default()
        }),
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let faults_before = minor_faults();
    let mut first = None;
    for _ in 0..times {
        if let Err(e) = compile_oci(std::hint::black_box(&bytes), &profile, &resolve, &options) {
            eprintln!("pipeline: {profile}: {e}");
            return ExitCode::from(2);
        }
        first.get_or_insert_with(|| (start.elapsed(), minor_faults() - faults_before));
    }
    let each = start.elapsed() / times.max(1) as u32;
    eprintln!("pipeline: {times} compiles of {profile}, {each:?} each");
    if let Some((took, faults)) = first {
        // What a runtime that compiles once per container start pays: the first compile
        // touches its memory for the first time (page faults) and runs cold caches.
        eprintln!("pipeline: the first took {took:?}, with {faults} page faults");
    }
    ExitCode::SUCCESS
}

/// The process's minor page faults so far (first touches of memory).
fn minor_faults() -> i64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_minflt
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("pipeline: {problem}\nusage: pipeline [N] [--self-check] [--profile PATH]");
    ExitCode::from(2)
}
