//! Other seccomp compilers as oracles: Kafel (nsjail's policy language), minijail (its C
//! compiler in libminijail, and the Python compiler ChromeOS precompiles its policies with,
//! linear and binary-tree, with and without frequency files) and gVisor's (`pkg/seccomp`, what
//! the gVisor Sentry builds its own filter with, rules and bytecode optimized) compiled the
//! same policies as `tests/data/peers/*.json`; their programs are in `tests/data/peers/`
//! (provenance in that directory's README).
//!
//! Five compilers nobody here wrote, from their own policy languages, must decide every input
//! exactly as secopt's compilation of the equivalent OCI profile does (libseccomp semantics:
//! x86_64 only, x32 numbers to the bad-arch action); and secopt's optimizer, given their
//! programs, must prove its output equal to each and keep every cacheable syscall cacheable.
//! The kernel's view of the same outputs is in `tests/optimize_foreign.rs`.

use secopt::arch::Arch;
use secopt::bpf::cache::{CacheBitmap, KernelCache};
use secopt::bpf::{validate, Program};
use secopt::compile::{compile_oci, CompileOptions};
use secopt::optimize::{optimize, OptimizeOptions, Verification};
use secopt::policy::{KernelVersion, ResolveOptions};
use secopt::verify::{equivalent, Verdict, VerifyOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/peers")
        .join(name)
}

fn program(name: &str) -> Program {
    let bytes = std::fs::read(data(name)).unwrap();
    let prog = Program::from_raw(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    validate::validate(&prog).unwrap_or_else(|e| panic!("{name}: the kernel would reject it: {e}"));
    prog
}

/// secopt's reference lowering of an OCI profile of `tests/data/peers`, for x86_64 alone (the
/// peers compiled for this x86_64 host and check that arch alone).
fn secopt_lowering(profile: &str) -> Program {
    let bytes = std::fs::read(data(profile)).unwrap();
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        arches: Some(vec![Arch::X86_64]),
        kernel: Some(KernelVersion::new(6, 18)),
        ..Default::default()
    };
    compile_oci(&bytes, profile, &resolve, &CompileOptions::default())
        .unwrap()
        .into_program()
}

/// (the OCI profile, the peer programs compiled from the same policy in the peer's language)
const PEERS: [(&str, &[&str]); 2] = [
    (
        "docker-allow.json",
        &[
            "docker-allow.kafel.bpf",
            "docker-allow.minijail-c.bpf",
            "docker-allow.minijail-py-linear.bpf",
            "docker-allow.minijail-py-bst.bpf",
            "docker-allow.minijail-py-bst.gvisor-sentry-postgres.bpf",
            "docker-allow.minijail-py-bst.nginx-wrk.bpf",
            "docker-allow.minijail-py-bst.redis-benchmark.bpf",
            "docker-allow.gvisor.bpf",
        ],
    ),
    (
        "small.json",
        &[
            "small.kafel.bpf",
            "small.minijail-c.bpf",
            "small.minijail-py-linear.bpf",
            "small.minijail-py-bst.bpf",
            "small.gvisor.bpf",
        ],
    ),
];

#[test]
fn kafel_minijail_and_gvisor_decide_every_input_as_secopt_compiles_the_same_policy() {
    for (profile, peers) in PEERS {
        let ours = secopt_lowering(profile);
        for peer in peers {
            let theirs = program(peer);
            let verdict = equivalent(&theirs, &ours, &VerifyOptions::default()).unwrap();
            assert_eq!(verdict, Verdict::Equal, "{peer} against {profile}");
        }
    }
}

/// Each peer's program optimized: proved equal to it (the optimizer's self-check, repeated
/// here), no cacheable syscall lost, and never larger than the peer's.
#[test]
fn secopt_optimizes_kafel_minijail_and_gvisor_programs_into_equal_ones() {
    let kernel =
        CacheBitmap::new(KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(6, 18)).unwrap());
    for (_, peers) in PEERS {
        for peer in peers {
            let theirs = program(peer);
            let out = optimize(&theirs, &OptimizeOptions::default()).unwrap();
            assert_eq!(out.verification, Verification::Equal, "{peer}");
            validate::validate(&out.program).unwrap();
            let verdict = equivalent(&theirs, &out.program, &VerifyOptions::default()).unwrap();
            assert_eq!(verdict, Verdict::Equal, "{peer}");
            let (before, after) = (kernel.attach(&theirs), kernel.attach(&out.program));
            for arch in [Arch::X86_64, Arch::X86] {
                let kept = after.cached_numbers(arch.token());
                let lost: Vec<u32> = before
                    .cached_numbers(arch.token())
                    .into_iter()
                    .filter(|nr| !kept.contains(nr))
                    .collect();
                assert!(
                    lost.is_empty(),
                    "{peer}: {arch} numbers no longer cached: {lost:?}"
                );
            }
            assert!(
                out.program.len() <= theirs.len(),
                "{peer}: {} -> {}",
                theirs.len(),
                out.program.len()
            );
        }
    }
}

/// Kafel sends x32 numbers (and the x86_64 token's numbers from 0x80000000 up) to the policy's
/// default action, where libseccomp, and so runc, sends them to the bad-arch action: with
/// `DEFAULT ERRNO(1)` the two differ exactly there, and agree on every other input. (With
/// `DEFAULT KILL` the two actions are the same, and the programs are equal everywhere.)
#[test]
fn kafel_differs_from_libseccomp_only_on_numbers_no_x86_64_syscall_has() {
    let dir = std::env::temp_dir().join(format!("secopt-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut oci: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data("docker-allow.json")).unwrap()).unwrap();
    oci["defaultAction"] = "SCMP_ACT_ERRNO".into();
    oci["defaultErrnoRet"] = 1.into();
    let profile = dir.join("docker-allow-errno.json");
    std::fs::write(&profile, oci.to_string()).unwrap();
    let kafel = data("docker-allow-errno.kafel.bpf");
    let verify = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
            .arg("verify")
            .arg(&kafel)
            .arg(&profile)
            .args(["--profile-arch", "x86_64"])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = verify(&[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("returns ERRNO(1)") && out.contains("returns KILL_THREAD"),
        "{out}"
    );
    // Every real x86_64 syscall number: equal.
    let (code, out) = verify(&["--arch", "x86_64", "--nr", "0..=0x3fffffff"]);
    assert_eq!(code, Some(0), "{out}");
    // Every other arch token: both kill.
    let (code, out) = verify(&["--arch", "x86,aarch64,0x12345678"]);
    assert_eq!(code, Some(0), "{out}");
    // The differences: all of x32, and the x86_64 token's numbers 0x80000000..=0xbfffffff.
    for nr in ["0x40000000..=0x7fffffff", "0xc0000000..=0xffffffff"] {
        let (code, out) = verify(&["--arch", "0xc000003e", "--nr", nr]);
        assert_eq!(code, Some(1), "{nr}: {out}");
    }
    let (code, out) = verify(&["--arch", "x86_64", "--nr", "0x80000000..=0xbfffffff"]);
    assert_eq!(code, Some(1), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
