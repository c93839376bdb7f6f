//! Other seccomp compilers as oracles: Kafel (nsjail's policy language), minijail (its C
//! compiler in libminijail, and the Python compiler ChromeOS precompiles its policies with,
//! linear and binary-tree, with and without frequency files) and gVisor's (`pkg/seccomp`, what
//! the gVisor Sentry builds its own filter with, rules and bytecode optimized) compiled the
//! same policies as `tests/data/peers/*.json`, and gVisor's also Docker's argument rules
//! (`docker-args.json`) and Firecracker's production filter file; their programs are in
//! `tests/data/peers/` (provenance in that directory's README).
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

/// `peer`'s program and secopt's optimization of it, after checking the optimization: proved
/// equal by the optimizer's self-check and again here, valid, and no x86_64 or x86 number the
/// kernel caches for the peer's program left uncached.
fn optimized_and_checked(
    peer: &str,
    options: &OptimizeOptions,
) -> (Program, secopt::optimize::Optimized) {
    let kernel =
        CacheBitmap::new(KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(6, 18)).unwrap());
    let theirs = program(peer);
    let out = optimize(&theirs, options).unwrap();
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
    (theirs, out)
}

/// Each peer's program optimized: proved equal to it (the optimizer's self-check, repeated
/// here), no cacheable syscall lost, and never larger than the peer's.
#[test]
fn secopt_optimizes_kafel_minijail_and_gvisor_programs_into_equal_ones() {
    for (_, peers) in PEERS {
        for peer in peers {
            let (theirs, out) = optimized_and_checked(peer, &OptimizeOptions::default());
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

/// gVisor's programs for the three threads of Firecracker's production filter file
/// (`scripts/peers/gvisor/main.go -firecracker THREAD`, with and without `HotSyscalls`): the
/// argument-heavy policy of the corpus (the `ioctl` requests, `mmap` without `PROT_EXEC`,
/// `futex` operations, all `dword` conditions).
const FIRECRACKER_GVISOR: [(&str, &str); 6] = [
    ("vmm", "firecracker-vmm.gvisor.bpf"),
    ("vmm", "firecracker-vmm.gvisor-hot.bpf"),
    ("api", "firecracker-api.gvisor.bpf"),
    ("api", "firecracker-api.gvisor-hot.bpf"),
    ("vcpu", "firecracker-vcpu.gvisor.bpf"),
    ("vcpu", "firecracker-vcpu.gvisor-hot.bpf"),
];

/// secopt's reference lowering of each thread of Firecracker's file (libseccomp semantics, as
/// Firecracker's own compiler since 1.11), for x86_64.
fn secopt_firecracker_threads() -> Vec<(String, Program)> {
    use secopt::compile::compile_firecracker;
    use secopt::policy::firecracker::FirecrackerOptions;
    let file = "firecracker/firecracker-x86_64-unknown-linux-musl.json";
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles")
        .join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    compile_firecracker(
        &bytes,
        file,
        &FirecrackerOptions::new(Arch::X86_64),
        &CompileOptions::default(),
    )
    .unwrap()
    .into_iter()
    .map(|(thread, filter)| (thread, filter.into_program()))
    .collect()
}

/// `ours` behind a guard that returns `default` for the x86_64 token's numbers from 0x40000000
/// up: what a compiler that checks only the arch token (gVisor) does with x32's numbers, where
/// libseccomp sends them, except -1, to its bad-arch action (and -1, which no rule names, to
/// the default action).
fn x32_to(default: u32, ours: &Program) -> Program {
    use secopt::bpf::insn::{Insn, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K};
    // `ours` starts at index 5.
    let mut guarded = vec![
        Insn::ld_abs(4), // arch
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, Arch::X86_64.token(), 0, 3),
        Insn::ld_abs(0), // nr
        Insn::jump(BPF_JMP | BPF_JGE | BPF_K, 0x4000_0000, 0, 1),
        Insn::ret(default),
    ];
    guarded.extend(ours.insns.iter().copied());
    let guarded = Program::new(guarded);
    validate::validate(&guarded).unwrap();
    guarded
}

/// `theirs` is exactly `ours` behind [`x32_to`]`(default)` on every input, every argument value
/// included, and the guard is needed.
fn equal_but_for_x32(theirs: &Program, ours: &Program, default: u32, what: &str) {
    let verdict = equivalent(theirs, &x32_to(default, ours), &VerifyOptions::default()).unwrap();
    assert_eq!(verdict, Verdict::Equal, "{what}");
    let verdict = equivalent(theirs, ours, &VerifyOptions::default()).unwrap();
    assert!(
        matches!(verdict, Verdict::Different(_)),
        "{what}: {verdict:?}"
    );
}

/// gVisor compiled Firecracker's argument rules from its own rule model (per-argument
/// matchers, `MaskedEqual(0xffffffff, v)` for a `dword` `eq`), with its own rule and bytecode
/// optimizations. It checks the arch token only, so the x86_64 token's numbers from 0x40000000
/// up (x32's, and no syscall's) reach its syscall dispatch and get the default action, TRAP,
/// where libseccomp kills the thread. Otherwise each program must be exactly secopt's lowering.
#[test]
fn gvisor_compiles_firecracker_threads_as_libseccomp_does_except_the_x32_numbers() {
    use secopt::bpf::action::SECCOMP_RET_TRAP;
    let threads = secopt_firecracker_threads();
    for (thread, peer) in FIRECRACKER_GVISOR {
        let ours = &threads.iter().find(|(t, _)| t == thread).unwrap().1;
        equal_but_for_x32(&program(peer), ours, SECCOMP_RET_TRAP, peer);
    }
}

/// The same for Docker's argument rules (`docker-args.json`: `socket` by `<`, `==` and `>` on
/// the address family, `personality`'s five values, `clone` without namespace flags as a
/// masked comparison, `clone3` answered `ENOSYS`, default `EPERM`): gVisor's program is
/// secopt's lowering but for x32's numbers, which it answers with the default `EPERM`.
/// `docker-args.json` is Docker's default profile on x86_64 with Docker's default capabilities
/// (kernel 6.18) but for the 14 syscalls newer than the peers' syscall tables, which it denies:
/// `secopt diff` of the two over x86_64's numbers names those and nothing else.
#[test]
fn docker_args_is_docker_s_default_profile_less_the_newest_syscalls() {
    let docker =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/profiles/oci/docker-default.json");
    let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .arg("diff")
        .arg(data("docker-args.json"))
        .arg(&docker)
        .args(["--profile-arch", "x86_64", "--kernel", "6.18"])
        .args(["--arch", "x86_64", "--nr", "0..=0x3fffffff"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut changed: Vec<&str> = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("x86_64 ")) {
        let (names, change) = line["x86_64 ".len()..].split_once(": ").unwrap();
        assert_eq!(change, "ERRNO(1) -> ALLOW", "{text}");
        changed.extend(names.split(", "));
    }
    changed.sort_unstable();
    let mut newest = [
        "uretprobe",
        "cachestat",
        "fchmodat2",
        "map_shadow_stack",
        "futex_wake",
        "futex_wait",
        "futex_requeue",
        "statmount",
        "listmount",
        "mseal",
        "setxattrat",
        "getxattrat",
        "listxattrat",
        "removexattrat",
    ];
    newest.sort_unstable();
    assert_eq!(changed, newest, "{text}");
}

#[test]
fn gvisor_compiles_docker_s_argument_rules_as_libseccomp_does_except_the_x32_numbers() {
    let ours = secopt_lowering("docker-args.json");
    let theirs = program("docker-args.gvisor.bpf");
    equal_but_for_x32(
        &theirs,
        &ours,
        secopt::bpf::RetVal::errno(1).0,
        "docker-args",
    );
}

/// Each gVisor program with argument rules (Firecracker's, Docker's) optimized by secopt: proved equal to it, no cacheable
/// syscall lost, and no larger unless it is cheaper under both cost models and no longer in
/// its worst path (docs/optimizer.md: a larger lifted program is kept only when the input does
/// not dominate it). gVisor's vCPU program is the case: 89 instructions with a worst path of
/// 30 (its `ioctl` requests tested one after another), which secopt's search tree over the
/// request values makes 92 with a worst path of 17.
#[test]
fn secopt_optimizes_gvisor_firecracker_programs_into_equal_ones() {
    let options = OptimizeOptions {
        report: true,
        ..Default::default()
    };
    let peers = FIRECRACKER_GVISOR.iter().map(|(_, p)| *p);
    for peer in peers.chain(["docker-args.gvisor.bpf"]) {
        let (theirs, out) = optimized_and_checked(peer, &options);
        let report = out.report.as_ref().unwrap();
        let (b, a) = (&report.before, &report.after);
        assert_eq!(
            (b.instructions, a.instructions),
            (theirs.len(), out.program.len())
        );
        assert!(
            a.instructions <= b.instructions
                || (a.cost_with_cache < b.cost_with_cache
                    && a.cost_without_cache < b.cost_without_cache
                    && a.worst_case_path <= b.worst_case_path),
            "{peer}: larger and not better: {b:?} -> {a:?}"
        );
    }
}
