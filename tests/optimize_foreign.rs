//! `secopt optimize` on filters another generator wrote, checked by the running kernel.
//!
//! firejail builds its filters with its own cBPF emitter, `fseccomp` (not libseccomp): linear
//! chains per arch, `jge`/`jeq` pairs, argument masks with `and` + `jeq`, both ABIs of x86_64
//! and i386. The package ships some (`seccomp`, `seccomp.32`, `seccomp.mdwx`, …) and
//! `fseccomp` writes the rest on demand (allow-lists, deny-lists, socket families, namespace
//! flags). Each one is optimized through the binary, and then the kernel (`kernel::Oracle`,
//! every return rewritten into a distinct errno so no syscall runs) decides the input and the
//! output on every syscall number of all three x86_64 entries (native, i386, x32) with
//! argument values made of the programs' own constants: every answer must be the same. The
//! verifier already proved them equal inside `optimize`; this is the independent check of
//! that proof on a real generator's output, by an oracle nobody here wrote.
//!
//! Needs firejail (`scripts/test.sh` installs it) and a kernel with seccomp: without them the
//! test skips loudly, or fails under `SECOPT_REQUIRE_E2E=1` / `SECOPT_REQUIRE_KERNEL_ORACLE=1`.
//! `SECOPT_FOREIGN_FILTERS=a.bpf:b.bpf` adds raw filters of your own to the same check.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "data/e2e_support.rs"]
mod support;

use secopt::bpf::insn::*;
use secopt::kernel::oracle::NATIVE_PASSTHROUGH_NRS;
use secopt::kernel::{Call, Entry, Oracle, OracleError};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::*;

/// Where distributions install firejail's helpers (Debian's multiarch path first).
const FIREJAIL_LIB_DIRS: [&str; 4] = [
    "/usr/lib/x86_64-linux-gnu/firejail",
    "/usr/lib64/firejail",
    "/usr/lib/firejail",
    "/usr/libexec/firejail",
];

/// Highest syscall number asked about per entry: past the end of each table (x86_64 462+,
/// i386 462+, x32 547), so the filters' "any other number" paths are asked too.
const LAST_NR: i32 = 560;

fn firejail_lib_dir() -> Option<PathBuf> {
    FIREJAIL_LIB_DIRS
        .iter()
        .map(PathBuf::from)
        .find(|d| d.join("fseccomp").is_file())
}

/// Runs `fseccomp ARGS` in `dir`; panics with its output when it fails.
fn fseccomp(fseccomp: &Path, dir: &Path, args: &[&str]) {
    let out = Command::new(fseccomp)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run fseccomp");
    assert!(
        out.status.success(),
        "fseccomp {args:?} failed: {}{}",
        stdout_of(&out),
        stderr_of(&out)
    );
}

/// The filters under test: the ones the package ships, then the ones `fseccomp` generates
/// for other options (`(name, path)`).
fn firejail_filters(lib: &Path, dir: &Path) -> Vec<(String, PathBuf)> {
    let mut filters: Vec<(String, PathBuf)> = std::fs::read_dir(lib)
        .expect("read the firejail directory")
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("seccomp"))
                && p.is_file()
        })
        .map(|p| {
            (
                format!("shipped {}", p.file_name().unwrap().to_str().unwrap()),
                p,
            )
        })
        .collect();
    filters.sort();
    let tool = lib.join("fseccomp");
    let generated: [(&str, &[&str]); 10] = [
        ("default.bpf", &["default", "default.bpf"]),
        ("default32.bpf", &["default32", "default32.bpf"]),
        (
            "keep.bpf",
            &[
                "keep",
                "keep.bpf",
                "keep-post.bpf",
                "read,write,openat,close,fstat,mmap,munmap,brk,exit_group,rt_sigaction,futex,epoll_wait,accept4,sendfile,writev,socket",
            ],
        ),
        (
            "keep32.bpf",
            &["keep32", "keep32.bpf", "keep32-post.bpf", "read,write,open,close,exit_group,mmap2"],
        ),
        (
            "drop.bpf",
            &["drop", "drop.bpf", "drop-post.bpf", "mount,umount2,ptrace,kexec_load,@clock"],
        ),
        (
            "default-drop.bpf",
            &["default", "drop", "default-drop.bpf", "default-drop-post.bpf", "chown,chmod"],
        ),
        ("protocol.bpf", &["protocol", "build", "unix,inet,inet6", "protocol.bpf"]),
        ("namespaces.bpf", &["restrict-namespaces", "namespaces.bpf", "cgroup,ipc,net,user"]),
        ("namespaces32.bpf", &["restrict-namespaces.32", "namespaces32.bpf", "mnt,pid,uts"]),
        ("secondary-block.bpf", &["secondary", "block", "secondary-block.bpf"]),
    ];
    for (file, args) in generated {
        fseccomp(&tool, dir, args);
        filters.push((format!("fseccomp {}", args.join(" ")), dir.join(file)));
    }
    filters.extend(extra_filters());
    filters
}

/// Raw filters named in `SECOPT_FOREIGN_FILTERS` (paths separated by `:`), checked the same
/// way: for filters taken from elsewhere, e.g. with `secopt dump` from a running sshd.
fn extra_filters() -> Vec<(String, PathBuf)> {
    std::env::var_os("SECOPT_FOREIGN_FILTERS")
        .map(|v| {
            std::env::split_paths(&v)
                .map(|p| (p.display().to_string(), p))
                .collect()
        })
        .unwrap_or_default()
}

fn read_program(path: &Path) -> Program {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Program::from_raw(&bytes).unwrap_or_else(|e| panic!("decode {}: {e}", path.display()))
}

/// Argument values worth asking about: 0, all ones, and every constant compared with or
/// masked into a loaded argument word (alone, one less, and with the upper half set).
fn argument_values(programs: &[&Program]) -> Vec<u64> {
    let mut values: BTreeSet<u64> = [0, u64::MAX, 0xffff_ffff, 1 << 32].into();
    for p in programs {
        let mut a_holds_argument = false;
        for i in &p.insns {
            let class = i.code & 0x07;
            if class == BPF_LD {
                // seccomp_data: nr at 0, arch at 4, ip at 8, args from 16.
                a_holds_argument = i.code == BPF_LD | BPF_W | BPF_ABS && i.k >= 16;
            } else if a_holds_argument
                && (class == BPF_JMP || class == BPF_ALU)
                && i.code & BPF_X == 0
                && i.code != BPF_JMP | BPF_JA
            {
                let k = u64::from(i.k);
                values.extend([k, k.wrapping_sub(1) & 0xffff_ffff, k | 1 << 32]);
            }
        }
    }
    values.into_iter().collect()
}

/// Every number of every entry with every argument value in all six arguments.
fn calls(oracle: &Oracle, values: &[u64]) -> Vec<Call> {
    let mut calls = Vec::new();
    for entry in Entry::ALL.into_iter().filter(|e| oracle.supports(*e)) {
        for nr in 0..=LAST_NR {
            if entry == Entry::Native && NATIVE_PASSTHROUGH_NRS.contains(&nr) {
                continue;
            }
            calls.extend(values.iter().map(|&v| Call::new(entry, nr, [v; 6])));
        }
    }
    calls
}

#[test]
fn optimized_firejail_filters_decide_every_call_as_the_originals_on_the_kernel() {
    let test = "optimize-firejail";
    let Some(lib) = firejail_lib_dir() else {
        skip_or_fail(
            test,
            "firejail's fseccomp is not installed (scripts/test.sh installs `firejail`)",
        );
        return;
    };
    let oracle = match Oracle::new() {
        Ok(o) => o,
        Err(OracleError::Unavailable(why)) => {
            assert!(
                std::env::var_os("SECOPT_REQUIRE_KERNEL_ORACLE").is_none(),
                "kernel oracle unavailable: {why}"
            );
            skip_or_fail(test, &format!("kernel oracle unavailable: {why}"));
            return;
        }
        Err(e) => panic!("kernel oracle failed to start: {e}"),
    };
    let dir = TempDir::new(test);
    let filters = firejail_filters(&lib, dir.path());
    assert!(
        filters.len() >= 12,
        "only {} firejail filters",
        filters.len()
    );
    let mut asked = 0;
    for (n, (name, input)) in filters.iter().enumerate() {
        let output = dir.join(&format!("out{n}.bpf"));
        let run = run_secopt(&[
            "optimize".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            output.as_os_str(),
        ]);
        assert!(
            run.status.success(),
            "{name}: secopt optimize failed: {}",
            stderr_of(&run)
        );
        let (before, after) = (read_program(input), read_program(&output));
        let values = argument_values(&[&before, &after]);
        let calls = calls(&oracle, &values);
        let want = oracle
            .run(&before, &calls)
            .unwrap_or_else(|e| panic!("{name}: the kernel on the input: {e}"));
        let got = oracle
            .run(&after, &calls)
            .unwrap_or_else(|e| panic!("{name}: the kernel on the output: {e}"));
        for ((call, w), g) in calls.iter().zip(&want).zip(&got) {
            assert_eq!(
                w.value, g.value,
                "{name}: {call:?} is {:?} under the input and {:?} under secopt's output",
                w.value, g.value
            );
        }
        asked += calls.len();
        eprintln!(
            "{name}: {} -> {} instructions, {} calls agree",
            before.len(),
            after.len(),
            calls.len()
        );
    }
    assert!(asked > 100_000, "only {asked} calls asked");
}
