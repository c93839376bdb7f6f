//! End to end with bubblewrap: `bwrap --seccomp FD` loads a filter compiled by
//! `secopt compile` (through the binary) from a small profile; an allowed program runs and a
//! denied syscall fails with the profile's errno, while the same run without the filter
//! succeeds.
//!
//! Needs `bwrap` (scripts/test.sh installs `bubblewrap`) and a C compiler for the probe.
//! Without bwrap the test skips loudly; with `SECOPT_REQUIRE_E2E=1` (CI) it fails instead.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "data/e2e_support.rs"]
mod support;

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;
use support::*;

/// The fd number bwrap reads the filter from.
const FILTER_FD: i32 = 9;
/// x86_64 `getpid` (arch/x86/entry/syscalls/syscall_64.tbl).
const NR_GETPID: u32 = 39;
/// The errno the test profile gives `mkdir` (EACCES), distinct from what a read-only or
/// missing directory would give (EROFS 30, ENOENT 2).
const EACCES: i32 = 13;

/// Runs `bwrap --ro-bind / / --bind DIR DIR [--seccomp 9] -- ARGV` with `filter` (if any) on
/// fd 9.
fn bwrap(bwrap: &Path, dir: &Path, filter: Option<&Path>, argv: &[&std::ffi::OsStr]) -> Output {
    let mut cmd = Command::new(bwrap);
    cmd.args(["--ro-bind", "/", "/", "--bind"])
        .arg(dir)
        .arg(dir)
        .args(["--die-with-parent"]);
    let file = filter.map(|f| std::fs::File::open(f).unwrap());
    if let Some(file) = &file {
        cmd.args(["--seccomp", &FILTER_FD.to_string()]);
        let raw = file.as_raw_fd();
        // SAFETY: dup2 is async-signal-safe; it runs in the child between fork and exec, and
        // leaves fd 9 without close-on-exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(raw, FILTER_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    cmd.arg("--").args(argv);
    let out = cmd.output().expect("run bwrap");
    drop(file);
    out
}

#[test]
fn bwrap_enforces_a_secopt_compiled_filter() {
    let test = "bwrap-seccomp";
    let Some(found) = require_tools(test, &["bwrap"]) else {
        return;
    };
    let bwrap_path = &found[0];
    let started = Instant::now();
    let dir = TempDir::new(test);
    let probe = build_probe(dir.path());

    // Default ALLOW; mkdir (and mkdirat, which some libcs use for mkdir) fail with EACCES.
    let profile = dir.join("deny-mkdir.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}"#,
    )
    .unwrap();
    let filter = dir.join("deny-mkdir.bpf");
    let bytes = compile_with_cli(&profile, &filter, &[]);
    assert_eq!(bytes.len() % 8, 0);

    let made = dir.join("made");
    let mkdir = format!("mkdir:{}", made.display());
    let getpid = format!("raw:{NR_GETPID}");
    let argv = [probe.as_os_str(), mkdir.as_ref(), getpid.as_ref()];

    // Without the filter the same sandbox can make the directory.
    let base = bwrap(bwrap_path, dir.path(), None, &argv);
    if !base.status.success() {
        // bwrap needs user namespaces or root to set up its mounts.
        skip_or_fail(
            test,
            &format!("bwrap cannot run here: {}", stderr_of(&base)),
        );
        return;
    }
    let got = parse_probe(&stdout_of(&base));
    assert!(got[mkdir.as_str()].succeeded(), "without a filter: {got:?}");
    assert!(made.is_dir());
    std::fs::remove_dir(&made).unwrap();

    // With it: the program runs (getpid allowed) and mkdir fails with the profile's errno.
    let out = bwrap(bwrap_path, dir.path(), Some(&filter), &argv);
    assert_eq!(out.status.code(), Some(0), "bwrap: {}", stderr_of(&out));
    let got = parse_probe(&stdout_of(&out));
    assert!(got[getpid.as_str()].succeeded(), "{got:?}");
    assert!(got[mkdir.as_str()].failed_with(EACCES), "{got:?}");
    assert!(!made.exists());

    // An ordinary tool runs too (exec, dynamic loading, write to stdout are all allowed).
    let echo = bwrap(
        bwrap_path,
        dir.path(),
        Some(&filter),
        &["/bin/echo".as_ref(), "hello from bwrap".as_ref()],
    );
    assert_eq!(echo.status.code(), Some(0), "{}", stderr_of(&echo));
    assert_eq!(stdout_of(&echo), "hello from bwrap\n");
    eprintln!("{test}: {:?}", started.elapsed());
}
