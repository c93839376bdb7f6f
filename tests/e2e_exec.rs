//! `secopt exec` end to end: the real kernel enforces the filter secopt installs, and a small
//! C program (tests/data/syscall_probe.c, built here with `cc`) reports what its system calls
//! returned from inside.
//!
//! Expected values come from the profiles' JSON (checked by the tests themselves), the kernel's
//! uapi constants and x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl), and a
//! baseline run of the same probes without any filter.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "data/e2e_support.rs"]
mod support;

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;

// x86_64 syscall numbers (syscall_64.tbl).
const NR_GETPID: u32 = 39;
const NR_GETPPID: u32 = 110;
const NR_MKDIR: u32 = 83;
const NR_MKDIRAT: u32 = 258;
const NR_CLONE3: u32 = 435;
// include/uapi/linux/seccomp.h, include/uapi/linux/filter.h, include/uapi/linux/audit.h.
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_USER_NOTIF: u32 = 0x7fc0_0000;
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const RET_K: u16 = 0x06;
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
// errno values (asm-generic/errno-base.h, errno.h).
const EPERM: i32 = 1;
const ENOENT: i32 = 2;
const EINVAL: i32 = 22;
const ENOSYS: i32 = 38;
const ENOMEDIUM: i32 = 123;
/// `personality(0xffffffff)` (x86_64 nr 135) only queries; Docker allows it (and 0, 8, 0x20000, 0x20008).
const PERSONALITY_QUERY: &str = "raw:135,0xffffffff";
/// `personality(ADDR_NO_RANDOMIZE)` (0x0040000): a value Docker's profile does not allow.
const PERSONALITY_NO_RANDOMIZE: &str = "raw:135,0x40000";

fn docker_default() -> std::path::PathBuf {
    shared_profile("oci/docker-default.json")
}

fn probes_of(out: &Output) -> std::collections::BTreeMap<String, ProbeResult> {
    parse_probe(&stdout_of(out))
}

/// What Docker's default profile says about the syscalls these tests use, read from the JSON:
/// the tests' expectations rest on these facts, not on secopt.
#[test]
fn docker_default_profile_says_what_the_tests_expect() {
    let text = std::fs::read_to_string(docker_default()).unwrap();
    let p: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(p["defaultAction"], "SCMP_ACT_ERRNO");
    assert_eq!(p["defaultErrnoRet"], 1);
    let rules = p["syscalls"].as_array().unwrap();
    let naming = |name: &str| -> Vec<&serde_json::Value> {
        rules
            .iter()
            .filter(|r| r["names"].as_array().unwrap().iter().any(|n| n == name))
            .collect()
    };
    // mount is allowed only with CAP_SYS_ADMIN, which Docker's default caps lack.
    let mount = naming("mount");
    assert!(!mount.is_empty());
    for r in mount {
        assert_eq!(r["action"], "SCMP_ACT_ALLOW");
        assert!(r["includes"]["caps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "CAP_SYS_ADMIN"));
    }
    // clone3 fails with ENOSYS (38) unless CAP_SYS_ADMIN is held.
    let clone3: Vec<_> = naming("clone3")
        .into_iter()
        .filter(|r| r["action"] == "SCMP_ACT_ERRNO")
        .collect();
    assert_eq!(clone3.len(), 1);
    assert_eq!(clone3[0]["errnoRet"], 38);
    assert_eq!(clone3[0]["excludes"]["caps"][0], "CAP_SYS_ADMIN");
    // getpid is unconditionally allowed; personality only for some values.
    assert!(naming("getpid")
        .iter()
        .any(|r| r["action"] == "SCMP_ACT_ALLOW" && r.get("includes").is_none()));
    let persona: Vec<u64> = naming("personality")
        .iter()
        .map(|r| r["args"][0]["value"].as_u64().unwrap())
        .collect();
    assert!(persona.contains(&0xffff_ffff) && !persona.contains(&0x40000));
}

#[test]
fn true_runs_under_the_docker_default_profile() {
    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(docker_default())
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));
}

#[test]
fn a_program_sees_the_docker_default_decisions() {
    let dir = TempDir::new("exec-docker");
    let probe = build_probe(dir.path());
    let target = dir.join("no-such-mountpoint");
    let mount = format!("mount:{}", target.display());
    let clone3 = format!("raw:{NR_CLONE3},0,0");
    let getpid = format!("raw:{NR_GETPID}");
    let probes = [
        mount.as_str(),
        clone3.as_str(),
        getpid.as_str(),
        PERSONALITY_QUERY,
        PERSONALITY_NO_RANDOMIZE,
    ];

    // Without a filter: the kernel's own answers, which differ from the filter's.
    let base = std::process::Command::new(&probe)
        .args(probes)
        .output()
        .unwrap();
    assert!(base.status.success());
    let base = probes_of(&base);
    assert!(
        base[clone3.as_str()].failed_with(EINVAL),
        "clone3(NULL, 0): {base:?}"
    );
    assert!(base[getpid.as_str()].succeeded());
    assert!(base[PERSONALITY_NO_RANDOMIZE].succeeded());
    if is_root() {
        assert!(base[mount.as_str()].failed_with(ENOENT), "{base:?}");
    } else {
        eprintln!("note: not root, so mount fails with EPERM even without a filter");
    }

    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(docker_default())
        .arg("--")
        .arg(&probe)
        .args(probes)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));
    let got = probes_of(&out);
    assert!(got[mount.as_str()].failed_with(EPERM), "mount: {got:?}");
    assert!(got[clone3.as_str()].failed_with(ENOSYS), "clone3: {got:?}");
    assert!(got[getpid.as_str()].succeeded(), "getpid: {got:?}");
    assert!(got[PERSONALITY_QUERY].succeeded(), "{got:?}");
    assert!(got[PERSONALITY_NO_RANDOMIZE].failed_with(EPERM), "{got:?}");
    assert!(!target.exists());
}

#[test]
fn capabilities_change_the_filter() {
    // With CAP_SYS_ADMIN in the container's set, clone3 and mount are allowed by the
    // profile: the kernel's own answers come back.
    let dir = TempDir::new("exec-caps");
    let probe = build_probe(dir.path());
    let clone3 = format!("raw:{NR_CLONE3},0,0");
    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(docker_default())
        .args(["--caps", "default,sys_admin", "--"])
        .arg(&probe)
        .arg(&clone3)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));
    assert!(probes_of(&out)[clone3.as_str()].failed_with(EINVAL));
}

#[test]
fn bpf_runs_a_command_under_a_raw_filter() {
    let dir = TempDir::new("exec-bpf");
    let probe = build_probe(dir.path());
    let filter = dir.join("f.bpf");
    std::fs::write(&filter, errno_filter(77, None)).unwrap();
    let getppid = format!("raw:{NR_GETPPID}");
    let getpid = format!("raw:{NR_GETPID}");
    let out = secopt()
        .arg("exec")
        .arg("--bpf")
        .arg(&filter)
        .arg("--")
        .arg(&probe)
        .args([&getppid, &getpid])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));
    let got = probes_of(&out);
    assert!(got[getppid.as_str()].failed_with(77), "{got:?}");
    assert!(got[getpid.as_str()].succeeded(), "{got:?}");

    // The command's own exit status is passed through.
    let out = secopt()
        .arg("exec")
        .arg("--bpf")
        .arg(&filter)
        .args(["--", "sh", "-c", "exit 7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "stderr: {}", stderr_of(&out));
}

/// `secopt exec --bpf F … -- touch MARKER`: whether the command ran shows in `marker`.
fn exec_touch(filters: &[&Path], marker: &Path) -> Output {
    let mut cmd = secopt();
    cmd.arg("exec");
    for f in filters {
        cmd.arg("--bpf").arg(f);
    }
    cmd.args(["--", "touch"]).arg(marker).output().unwrap()
}

/// A raw filter written by hand: `getppid` fails with errno `on_getppid` and, if given,
/// `getpid` with `on_getpid`; everything else is allowed.
fn errno_filter(on_getppid: u32, on_getpid: Option<u32>) -> Vec<u8> {
    let mut insns = vec![
        (LD_W_ABS, 0, 0, 4), // arch
        (JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (RET_K, 0, 0, RET_ALLOW),
        (LD_W_ABS, 0, 0, 0), // nr
        (JEQ_K, 0, 1, NR_GETPPID),
        (RET_K, 0, 0, RET_ERRNO | on_getppid),
    ];
    if let Some(errno) = on_getpid {
        insns.push((JEQ_K, 0, 1, NR_GETPID));
        insns.push((RET_K, 0, 0, RET_ERRNO | errno));
    }
    insns.push((RET_K, 0, 0, RET_ALLOW));
    raw_filter(&insns)
}

#[test]
fn bpf_repeated_installs_a_stack_in_the_order_given() {
    let dir = TempDir::new("exec-stack");
    let probe = build_probe(dir.path());
    let older = dir.join("older.bpf");
    let newer = dir.join("newer.bpf");
    std::fs::write(&older, errno_filter(77, Some(1))).unwrap();
    std::fs::write(&newer, errno_filter(5, None)).unwrap();
    let getppid = format!("raw:{NR_GETPPID}");
    let getpid = format!("raw:{NR_GETPID}");
    let run = |first: &Path, second: &Path| {
        let out = secopt()
            .arg("exec")
            .arg("--bpf")
            .arg(first)
            .arg("--bpf")
            .arg(second)
            .arg("--")
            .arg(&probe)
            .args([&getppid, &getpid, PERSONALITY_QUERY])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));
        probes_of(&out)
    };
    // The kernel runs every filter and keeps the lowest action, the newest filter's answer
    // when the actions are equal (kernel/seccomp.c, seccomp_run_filters): getppid gets both
    // filters' ERRNO and so the newest's; getpid the older one's ERRNO over the newer's ALLOW.
    let got = run(&older, &newer);
    assert!(got[getppid.as_str()].failed_with(5), "{got:?}");
    assert!(got[getpid.as_str()].failed_with(EPERM), "{got:?}");
    assert!(got[PERSONALITY_QUERY].succeeded(), "{got:?}");
    // Given the other way round, the other filter is the newest.
    let got = run(&newer, &older);
    assert!(got[getppid.as_str()].failed_with(77), "{got:?}");
    assert!(got[getpid.as_str()].failed_with(EPERM), "{got:?}");

    // The dry run lists both, in order.
    let out = secopt()
        .args(["exec", "--dry-run", "--bpf"])
        .arg(&older)
        .arg("--bpf")
        .arg(&newer)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.contains("filters:  2 installed in this order"),
        "{text}"
    );
    let (a, b) = (
        text.find("--- filter ").unwrap(),
        text.rfind("--- filter ").unwrap(),
    );
    assert!(
        text[a..].starts_with(&format!("--- filter {}", older.display())),
        "{text}"
    );
    assert!(
        text[b..].starts_with(&format!("--- filter {}", newer.display())),
        "{text}"
    );
    // Its JSON lists each program in `stack`, each a program `asm` takes back, and no pasted
    // whole (the two programs' labels would repeat); no filter gets a listener.
    let out = secopt()
        .args(["exec", "--dry-run", "--format", "json", "--bpf"])
        .arg(&older)
        .arg("--bpf")
        .arg(&newer)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["assembly"].is_null(), "{doc}");
    assert!(doc["listener"].is_null(), "{doc}");
    let stack = doc["stack"].as_array().unwrap();
    for (entry, file) in stack.iter().zip([&older, &newer]) {
        assert_eq!(entry["gets_listener"], false, "{entry}");
        let listed = secopt::bpf::asm::assemble(entry["assembly"].as_str().unwrap()).unwrap();
        let raw = std::fs::read(file).unwrap();
        assert_eq!(listed.to_raw(), raw, "{}", file.display());
    }
}

#[test]
fn a_stack_that_cannot_be_installed_is_refused_before_anything_runs() {
    let dir = TempDir::new("exec-stack-refused");
    let allow = dir.join("allow.bpf");
    std::fs::write(&allow, raw_filter(&[(RET_K, 0, 0, RET_ALLOW)])).unwrap();
    // seccomp(2) is 317 on x86_64: a filter denying it stops the next one being installed.
    let no_seccomp = dir.join("no-seccomp.bpf");
    std::fs::write(
        &no_seccomp,
        raw_filter(&[
            (LD_W_ABS, 0, 0, 0),
            (JEQ_K, 0, 1, 317),
            (RET_K, 0, 0, RET_ERRNO | EPERM as u32),
            (RET_K, 0, 0, RET_ALLOW),
        ]),
    )
    .unwrap();
    let marker = dir.join("ran");
    let out = exec_touch(&[&no_seccomp, &allow], &marker);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("no-seccomp.bpf") && err.contains("secopt optimize"),
        "{err}"
    );
    assert!(!marker.exists(), "the command must not run");
    // What the check cannot see: a filter refusing seccomp(2) by its pointer argument
    // (args[2].lo at offset 32; exec checks with a null pointer, the real one is not). The
    // kernel refuses the second filter; the error says where in the stack, and nothing runs.
    let by_pointer = dir.join("by-pointer.bpf");
    std::fs::write(
        &by_pointer,
        raw_filter(&[
            (LD_W_ABS, 0, 0, 0),
            (JEQ_K, 0, 3, 317),
            (LD_W_ABS, 0, 0, 32),
            (JEQ_K, 1, 0, 0),
            (RET_K, 0, 0, RET_ERRNO | EPERM as u32),
            (RET_K, 0, 0, RET_ALLOW),
        ]),
    )
    .unwrap();
    let out = exec_touch(&[&by_pointer, &allow], &marker);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("allow.bpf") && err.contains("filter 2 of 2"),
        "{err}"
    );
    assert!(!marker.exists(), "the command must not run");
    // Last, it is the filter the command runs under; nothing follows it.
    let out = exec_touch(&[&allow, &no_seccomp], &marker);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(marker.exists());

    // Two filters that can notify would need two listeners; a process has one.
    let notify = |name: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            raw_filter(&[
                (LD_W_ABS, 0, 0, 0),
                (JEQ_K, 0, 1, NR_GETPPID),
                (RET_K, 0, 0, RET_USER_NOTIF),
                (RET_K, 0, 0, RET_ALLOW),
            ]),
        )
        .unwrap();
        path
    };
    let out = secopt()
        .args([
            "exec",
            "--dry-run",
            "--listener-path",
            "/nonexistent.sock",
            "--bpf",
        ])
        .arg(notify("n1.bpf"))
        .arg("--bpf")
        .arg(notify("n2.bpf"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("one NOTIFY listener"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn the_command_gets_default_signal_dispositions() {
    // The Rust runtime ignores SIGPIPE; `yes | head` must still end yes with SIGPIPE. The
    // command's ignored-signal mask (/proc/self/status SigIgn) must not have SIGPIPE (13,
    // bit 12).
    let dir = TempDir::new("exec-signals");
    let filter = dir.join("allow.bpf");
    std::fs::write(&filter, raw_filter(&[(RET_K, 0, 0, RET_ALLOW)])).unwrap();
    let out = secopt()
        .arg("exec")
        .arg("--bpf")
        .arg(&filter)
        .args(["--", "grep", "SigIgn", "/proc/self/status"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let mask = u64::from_str_radix(text.trim().trim_start_matches("SigIgn:").trim(), 16).unwrap();
    assert_eq!(
        mask & (1 << (libc::SIGPIPE - 1)),
        0,
        "SIGPIPE ignored: {text}"
    );
}

#[test]
fn a_filter_the_kernel_would_reject_is_not_installed() {
    let dir = TempDir::new("exec-badbpf");
    let filter = dir.join("bad.bpf");
    // Jumps past the end.
    std::fs::write(
        &filter,
        raw_filter(&[(JEQ_K, 5, 0, 1), (RET_K, 0, 0, RET_ALLOW)]),
    )
    .unwrap();
    let marker = dir.join("ran");
    let out = exec_touch(&[&filter], &marker);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("bad.bpf"), "{}", stderr_of(&out));
    assert!(!marker.exists(), "the command must not run");
}

#[test]
fn missing_and_unexecutable_commands_exit_127_and_126() {
    let dir = TempDir::new("exec-missing");
    let filter = dir.join("allow.bpf");
    std::fs::write(&filter, raw_filter(&[(RET_K, 0, 0, RET_ALLOW)])).unwrap();
    let run = |cmd: &str| {
        secopt()
            .arg("exec")
            .arg("--bpf")
            .arg(&filter)
            .args(["--", cmd])
            .output()
            .unwrap()
    };
    let out = run("secopt-no-such-command");
    assert_eq!(out.status.code(), Some(127));
    assert!(stderr_of(&out).contains("secopt-no-such-command"));
    assert!(stderr_of(&out).contains("not found"), "{}", stderr_of(&out));

    let out = run("/nonexistent/dir/prog");
    assert_eq!(out.status.code(), Some(127));
    assert!(
        stderr_of(&out).contains("No such file"),
        "{}",
        stderr_of(&out)
    );

    let plain = dir.join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    let out = run(plain.to_str().unwrap());
    assert_eq!(out.status.code(), Some(126));
    assert!(
        stderr_of(&out).contains("ermission denied"),
        "{}",
        stderr_of(&out)
    );

    let out = run(dir.path().to_str().unwrap());
    assert_eq!(out.status.code(), Some(126), "a directory");

    // A script whose interpreter is missing: execve says ENOENT about a file that exists.
    let script = dir.join("orphan.sh");
    std::fs::write(&script, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = run(script.to_str().unwrap());
    assert_eq!(out.status.code(), Some(127));
    let err = stderr_of(&out);
    assert!(err.contains("interpreter (the `#!` line)"), "{err}");
    assert!(!err.contains("exec: exec:"), "{err}");
    assert!(!err.contains("filter itself"), "{err}");

    // A profile that denies execve itself (the web-server example allows a server's calls,
    // not execve) is refused before anything is installed, with the filter's answer. The
    // kernel is the oracle for that answer: its run of the compiled filter on execve. A
    // profile that also denies write, mmap and exit_group (k8s-website-violation allows a
    // handful of calls) crashed the process with SIGSEGV once it was installed.
    let oracle = secopt::kernel::oracle::Oracle::new().unwrap();
    let execve = libc::SYS_execve as i32;
    let violation = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/profiles/oci/k8s-website-violation.json"
    );
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    for profile in [example, violation] {
        let out = secopt()
            .args(["exec", "-p", profile, "--", "/bin/true"])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(126), "{profile}: {err}");
        let filter = dir.join("denies-execve.bpf");
        let compiled = secopt()
            .args(["compile", profile, "-o"])
            .arg(&filter)
            .output()
            .unwrap();
        assert!(compiled.status.success(), "{}", stderr_of(&compiled));
        let prog = secopt::bpf::Program::from_raw(&std::fs::read(&filter).unwrap()).unwrap();
        let call =
            secopt::kernel::oracle::Call::new(secopt::kernel::entry::Entry::Native, execve, [0; 6]);
        let kernel = oracle.run(&prog, &[call]).unwrap()[0].value;
        assert!(
            err.contains(&format!("the filter answers execve with {kernel} ("))
                && err.contains("nothing was installed"),
            "{profile}: kernel {kernel}: {err}"
        );
    }
}

/// Writes `profile` as `dir/name` and runs `touch dir/ran` under it with `secopt exec -p`:
/// the run, and the marker that exists when the command ran.
fn touch_under_profile(dir: &TempDir, name: &str, profile: &str) -> (Output, PathBuf) {
    let path = dir.join(name);
    std::fs::write(&path, profile).unwrap();
    let marker = dir.join("ran");
    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(&path)
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    (out, marker)
}

#[test]
fn a_bad_profile_exits_2_naming_the_json_path() {
    let dir = TempDir::new("exec-badprofile");
    let (out, marker) = touch_under_profile(
        &dir,
        "bad.json",
        r#"{"defaultAction": "SCMP_ACT_ERRNO",
            "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"},
                         {"names": ["write"], "action": "SCMP_ACT_FROB"}]}"#,
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.json"), "{err}");
    assert!(err.contains("$.syscalls[1].action"), "{err}");
    assert!(!err.contains("panicked"));
    assert!(!marker.exists());

    let missing = secopt()
        .args(["exec", "-p", "/nonexistent/profile.json", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr_of(&missing).contains("/nonexistent/profile.json"));
}

/// A profile runc would run with parts silently ignored (a misspelt syscall name, a misspelt
/// `args`) runs under exec too, as runc runs it, but not silently: each is warned about on
/// stderr before the command starts. The notes that are expected of any multi-arch profile
/// stay behind -v.
#[test]
fn a_profile_s_likely_mistakes_are_warned_about_and_the_command_still_runs() {
    let dir = TempDir::new("exec-mistakes");
    let (out, marker) = touch_under_profile(
        &dir,
        "typo.json",
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
            "syscalls": [{"names": ["opne", "chown32", "getppid"], "action": "SCMP_ACT_ERRNO",
                          "argz": []}]}"#,
    );
    let profile = dir.join("typo.json");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(marker.exists());
    for warning in [
        "secopt: warning: ",
        "1 name is no syscall of any architecture secopt knows, skipped as runc skips \
         it: opne (`opne` a typo for `open`?)",
        "$.syscalls[0].argz: unknown field \"argz\" ignored",
    ] {
        assert!(err.contains(warning), "{warning}: {err}");
    }
    // chown32 is i386's: skipped on x86_64 as expected, said only with -v.
    assert!(!err.contains("chown32"), "{err}");
    let verbose = secopt()
        .arg("exec")
        .arg("-v")
        .arg("-p")
        .arg(&profile)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(
        stderr_of(&verbose).contains("chown32"),
        "{}",
        stderr_of(&verbose)
    );
    // --dry-run gives the same warnings in its document.
    let plan = secopt()
        .arg("exec")
        .arg("-p")
        .arg(&profile)
        .args(["--dry-run", "--format", "json", "--", "true"])
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let warnings = plan["warnings"].to_string();
    assert!(
        warnings.contains("opne") && warnings.contains("argz"),
        "{plan}"
    );
}

/// A profile whose reference lowering is over the kernel's 4096 instructions (1,500 `ioctl`
/// requests; runc's libseccomp tree fits such a profile) runs under the optimized filter,
/// which the self-check proved equal to that lowering and `secopt verify` proves equal to the
/// profile again; the note says which was installed.
#[test]
fn a_profile_whose_reference_lowering_is_too_long_runs_under_its_optimized_filter() {
    let dir = TempDir::new("exec-long-reference");
    let rules: Vec<String> = (0..1500u64)
        .map(|i| {
            format!(
                r#"{{"names": ["ioctl"], "action": "SCMP_ACT_ERRNO",
                    "args": [{{"index": 1, "value": {}, "op": "SCMP_CMP_EQ"}}]}}"#,
                0x5400 + 7 * i
            )
        })
        .collect();
    let profile = format!(
        r#"{{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
            "syscalls": [{}]}}"#,
        rules.join(",")
    );
    let path = dir.join("long.json");
    std::fs::write(&path, &profile).unwrap();
    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(&path)
        .args(["--dry-run", "--format", "json", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let len = v["length"].as_u64().unwrap();
    assert!(len <= 4096, "{len}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("over the kernel's 4096: installing the optimized filter")
            && notes.contains(&format!("({len} instructions), proved equal to it")),
        "{notes}"
    );
    let listing = dir.join("installed.s");
    std::fs::write(&listing, v["assembly"].as_str().unwrap()).unwrap();
    let verify = secopt()
        .arg("verify")
        .arg(&path)
        .arg(&listing)
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{}", stderr_of(&verify));
    // The kernel takes it and the command runs.
    let (out, marker) = touch_under_profile(&dir, "long.json", &profile);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(marker.exists());
}

#[test]
fn usage_errors_exit_2() {
    let out = run_secopt(&["exec", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "no filter given");
    assert!(stderr_of(&out).contains("--bpf"), "{}", stderr_of(&out));
    let out = run_secopt(&["exec", "--bpf", "x.bpf"]);
    assert_eq!(out.status.code(), Some(2), "no command given");
    let out = run_secopt(&["exec", "--bpf", "x.bpf", "--flag", "bogus", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("bogus"));
}

#[test]
fn dry_run_reports_and_runs_nothing() {
    let dir = TempDir::new("exec-dry");
    let filter = dir.join("f.bpf");
    std::fs::write(&filter, errno_filter(77, None)).unwrap();
    let marker = dir.join("ran");
    let out = secopt()
        .arg("exec")
        .arg("--bpf")
        .arg(&filter)
        .args([
            "--flag",
            "log",
            "--flag",
            "spec_allow",
            "--dry-run",
            "--format",
            "json",
            "--",
        ])
        .arg("touch")
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(!marker.exists());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["length"], 7);
    // SECCOMP_FILTER_FLAG_LOG (2) | SECCOMP_FILTER_FLAG_SPEC_ALLOW (4).
    assert_eq!(v["flag_bits"], 6);
    assert!(v["command"].as_str().unwrap().ends_with("/touch"));

    // A profile without `flags` gets SPEC_ALLOW, as runc gives it.
    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(docker_default())
        .args(["--dry-run", "--format", "json", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["flags"],
        serde_json::json!(["SECCOMP_FILTER_FLAG_SPEC_ALLOW"])
    );
    assert_eq!(v["arches"], serde_json::json!(["x86_64", "x86", "x32"]));
    let notes = v["notes"].to_string();
    assert!(notes.contains("SPEC_ALLOW, as runc does"), "{notes}");
    // Docker's profile names i386's chown32 for every arch: on x86_64 a name of another
    // architecture, not an unknown one (as `compile` says).
    assert!(
        notes.contains("x86_64: names of other architectures skipped: _llseek"),
        "{notes}"
    );
    assert!(!notes.contains("unknown"), "{notes}");
    // i386 has no `recv` or `semop` (arch/x86/entry/syscalls/syscall_32.tbl), but libseccomp
    // applies their rules through socketcall/ipc: not skipped, and said so.
    assert!(
        notes.contains(
            "x86: only through socketcall/ipc, as libseccomp applies them: accept, recv, semop"
        ),
        "{notes}"
    );
    let skipped_on_x86 = notes
        .split("x86: names of other architectures skipped: ")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default();
    assert!(!skipped_on_x86.contains("recv"), "{notes}");

    // `--flag` replaces the profile's flags and runc's default: no SPEC_ALLOW, and no note
    // claiming it.
    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(docker_default())
        .args([
            "--flag",
            "tsync",
            "--dry-run",
            "--format",
            "json",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["flags"], serde_json::json!(["SECCOMP_FILTER_FLAG_TSYNC"]));
    assert!(!v["notes"].to_string().contains("SPEC_ALLOW"), "{v}");
}

#[test]
fn filter_flags_are_passed_to_the_kernel() {
    // LOG and TSYNC are accepted and the command runs; an unknown bit would be EINVAL.
    let dir = TempDir::new("exec-flags");
    let filter = dir.join("f.bpf");
    std::fs::write(&filter, errno_filter(77, None)).unwrap();
    let out = secopt()
        .arg("exec")
        .arg("--bpf")
        .arg(&filter)
        .args(["--flag", "log", "--flag", "tsync", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
}

// ---- NOTIFY -------------------------------------------------------------------------------

/// What the test's seccomp agent saw.
#[derive(Debug)]
struct AgentReport {
    state: serde_json::Value,
    fds_received: usize,
    notified_nr: i32,
    notified_pid: u32,
}

/// Receives one message and its `SCM_RIGHTS` fds with raw `recvmsg`, then reads to EOF.
fn receive_state(stream: &mut std::os::unix::net::UnixStream) -> (Vec<u8>, Vec<OwnedFd>) {
    let mut buf = vec![0u8; 65536];
    let mut control = [0u64; 16];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut fds = Vec::new();
    // SAFETY: recvmsg into buffers alive for the call; CMSG_* only walk `control`.
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = libc::recvmsg(stream.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        assert!(n >= 0, "recvmsg: {}", std::io::Error::last_os_error());
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                let data = libc::CMSG_DATA(cmsg).cast::<libc::c_int>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        n as usize
    };
    buf.truncate(n);
    // The spec allows the document to span several messages; fds come with the first.
    stream.read_to_end(&mut buf).unwrap();
    (buf, fds)
}

/// A one-shot seccomp agent: accepts one connection, takes the state and the listener, and
/// answers the first notification with `-reply_errno`.
/// Gives up when `gave_up` is set (the client exited) or after 20 s.
fn agent(
    listener: UnixListener,
    reply_errno: i32,
    gave_up: &AtomicBool,
) -> Result<AgentReport, String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    listener.set_nonblocking(true).unwrap();
    let mut stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() > deadline || gave_up.load(Ordering::SeqCst) {
                    return Err("nobody connected to the agent".into());
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    };
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let (payload, fds) = receive_state(&mut stream);
    let state: serde_json::Value =
        serde_json::from_slice(&payload).map_err(|e| format!("state JSON: {e}"))?;
    let Some(seccomp_fd) = fds.first() else {
        return Err(format!("no fd received with {state}"));
    };
    let mut pfd = libc::pollfd {
        fd: seccomp_fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let ready = unsafe { libc::poll(&mut pfd, 1, 20_000) };
    if ready != 1 || pfd.revents & libc::POLLIN == 0 {
        return Err(format!(
            "no notification arrived (poll {ready}, revents {:#x})",
            pfd.revents
        ));
    }
    // SAFETY: zeroed request/response structs are valid for the ioctls.
    let (nr, pid) = unsafe {
        let mut req: libc::seccomp_notif = std::mem::zeroed();
        if libc::ioctl(
            seccomp_fd.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV,
            &mut req,
        ) != 0
        {
            return Err(format!("NOTIF_RECV: {}", std::io::Error::last_os_error()));
        }
        let mut resp: libc::seccomp_notif_resp = std::mem::zeroed();
        resp.id = req.id;
        resp.error = -reply_errno;
        if libc::ioctl(
            seccomp_fd.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp,
        ) != 0
        {
            return Err(format!("NOTIF_SEND: {}", std::io::Error::last_os_error()));
        }
        (req.data.nr, req.pid)
    };
    Ok(AgentReport {
        state,
        fds_received: fds.len(),
        notified_nr: nr,
        notified_pid: pid,
    })
}

/// Runs `secopt exec ARGS -- probe mkdir:DIR/made raw:getpid` against a test agent that
/// answers the mkdir with ENOMEDIUM, and checks both sides; returns secopt's stderr.
fn exec_with_agent(
    dir: &TempDir,
    socket: &Path,
    secopt_args: &[&std::ffi::OsStr],
    metadata: &str,
) -> String {
    let probe = build_probe(dir.path());
    let listener = UnixListener::bind(socket).unwrap();
    let client_exited = Arc::new(AtomicBool::new(false));
    let agent = {
        let client_exited = Arc::clone(&client_exited);
        std::thread::spawn(move || agent(listener, ENOMEDIUM, &client_exited))
    };
    let made = dir.join("made");
    let mkdir = format!("mkdir:{}", made.display());
    let getpid = format!("raw:{NR_GETPID}");
    let child = secopt()
        .arg("exec")
        .args(secopt_args)
        .arg("--")
        .arg(&probe)
        .args([&mkdir, &getpid])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    client_exited.store(true, Ordering::SeqCst);
    let report = agent.join().unwrap();
    let report =
        report.unwrap_or_else(|e| panic!("agent: {e}; secopt stderr: {}", stderr_of(&out)));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr_of(&out));

    // The program saw the agent's answer; the directory was never made.
    let got = probes_of(&out);
    assert!(got[mkdir.as_str()].failed_with(ENOMEDIUM), "{got:?}");
    assert!(got[getpid.as_str()].succeeded());
    assert!(!made.exists());
    assert!(
        [NR_MKDIR as i32, NR_MKDIRAT as i32].contains(&report.notified_nr),
        "{report:?}"
    );
    assert_eq!(
        report.notified_pid, pid,
        "the notifying task is the exec'd process"
    );

    // The container process state, shaped as runtime-spec config-linux.md describes it.
    let s = &report.state;
    assert_eq!(report.fds_received, 1);
    assert_eq!(s["fds"], serde_json::json!(["seccompFd"]));
    assert_eq!(s["pid"], pid);
    assert_eq!(s["metadata"], metadata);
    assert!(s["ociVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("1.")));
    let st = &s["state"];
    assert!(st["ociVersion"].is_string());
    assert!(st["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(st["status"].is_string());
    assert!(st["bundle"].as_str().is_some_and(|b| b.starts_with('/')));
    assert_eq!(st["pid"], pid);
    stderr_of(&out)
}

/// A profile without `listenerPath` takes `--listener-path`: the agent gets the listener,
/// and the profile's "no `listenerPath`" warning, which that option answers, is not said.
/// `--listener-metadata` with no listener at all is said to be ignored, as a listener
/// without NOTIFY rules is.
#[test]
fn listener_path_answers_a_profile_without_one() {
    let dir = TempDir::new("exec-notify-option");
    let socket = dir.join("agent.sock");
    let profile = dir.join("notify.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}"#,
    )
    .unwrap();
    let said = exec_with_agent(
        &dir,
        &socket,
        &[
            "-p".as_ref(),
            profile.as_os_str(),
            "--listener-path".as_ref(),
            socket.as_os_str(),
            "--listener-metadata".as_ref(),
            "m=2".as_ref(),
        ],
        "m=2",
    );
    assert!(!said.contains("listenerPath"), "{said}");
    assert!(!said.contains("ignored"), "{said}");
    // Without the option the warning is the refusal's reason (tested below); with neither a
    // listener nor NOTIFY rules, the metadata alone is ignored, and said to be.
    let allow = dir.join("allow.json");
    std::fs::write(&allow, r#"{"defaultAction": "SCMP_ACT_ALLOW"}"#).unwrap();
    let out = secopt()
        .args(["exec", "--dry-run", "--listener-metadata", "m=3", "-p"])
        .arg(&allow)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let shown = format!("{}{}", stdout_of(&out), stderr_of(&out));
    assert!(
        shown.contains("--listener-metadata ignored: there is no listener"),
        "{shown}"
    );
}

#[test]
fn notify_rules_reach_the_agent_at_listener_path() {
    let dir = TempDir::new("exec-notify");
    let socket = dir.join("agent.sock");
    let profile = dir.join("notify.json");
    let metadata = "DEFAULT_ACTION=kill-container\nMIDDLEWARE=test";
    let doc = serde_json::json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "listenerPath": socket,
        "listenerMetadata": metadata,
        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]
    });
    std::fs::write(&profile, doc.to_string()).unwrap();
    exec_with_agent(
        &dir,
        &socket,
        &["-p".as_ref(), profile.as_os_str()],
        metadata,
    );
}

#[test]
fn a_raw_filter_with_notify_uses_listener_path_option() {
    let dir = TempDir::new("exec-notify-bpf");
    let socket = dir.join("agent.sock");
    let filter = dir.join("notify.bpf");
    std::fs::write(
        &filter,
        raw_filter(&[
            (LD_W_ABS, 0, 0, 0),
            (JEQ_K, 2, 0, NR_MKDIR),
            (JEQ_K, 1, 0, NR_MKDIRAT),
            (RET_K, 0, 0, RET_ALLOW),
            (RET_K, 0, 0, RET_USER_NOTIF),
        ]),
    )
    .unwrap();
    exec_with_agent(
        &dir,
        &socket,
        &[
            "--bpf".as_ref(),
            filter.as_os_str(),
            "--listener-path".as_ref(),
            socket.as_os_str(),
            "--listener-metadata".as_ref(),
            "m=1".as_ref(),
        ],
        "m=1",
    );
}

#[test]
fn notify_without_a_listener_is_refused_not_dropped() {
    let dir = TempDir::new("exec-notify-none");
    let marker = dir.join("ran");
    let filter = dir.join("notify.bpf");
    std::fs::write(
        &filter,
        raw_filter(&[
            (LD_W_ABS, 0, 0, 0),
            (JEQ_K, 0, 1, NR_MKDIR),
            (RET_K, 0, 0, RET_USER_NOTIF),
            (RET_K, 0, 0, RET_ALLOW),
        ]),
    )
    .unwrap();
    let out = exec_touch(&[&filter], &marker);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("NOTIFY") && err.contains("--listener-path"),
        "{err}"
    );
    // A raw filter has no profile to give a `listenerPath`.
    assert!(!err.contains("listenerPath"), "{err}");
    assert!(!marker.exists());

    let profile = dir.join("notify.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]}"#,
    )
    .unwrap();
    let out = secopt()
        .arg("exec")
        .arg("-p")
        .arg(&profile)
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("listenerPath"),
        "{}",
        stderr_of(&out)
    );
    assert!(!marker.exists());
}

#[test]
fn notify_set_ups_that_would_hang_are_refused() {
    let dir = TempDir::new("exec-notify-hang");
    let socket = dir.join("agent.sock");
    let cases = [
        (
            serde_json::json!({"defaultAction": "SCMP_ACT_NOTIFY", "listenerPath": socket}),
            "default action",
        ),
        (
            serde_json::json!({"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": socket,
                "syscalls": [{"names": ["write"], "action": "SCMP_ACT_NOTIFY"}]}),
            "the write syscall",
        ),
        (
            serde_json::json!({"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": socket,
                "syscalls": [{"names": ["sendmsg"], "action": "SCMP_ACT_NOTIFY"}]}),
            "the sendmsg syscall",
        ),
    ];
    for (doc, expected) in cases {
        let profile = dir.join("p.json");
        std::fs::write(&profile, doc.to_string()).unwrap();
        let out = secopt()
            .arg("exec")
            .arg("-p")
            .arg(&profile)
            .args(["--", "true"])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{doc}: {err}");
        assert!(err.contains(expected), "{doc}: {err}");
    }
}

#[test]
fn an_absent_agent_is_an_error_before_anything_runs() {
    let dir = TempDir::new("exec-noagent");
    let marker = dir.join("ran");
    let filter = dir.join("notify.bpf");
    std::fs::write(
        &filter,
        raw_filter(&[
            (LD_W_ABS, 0, 0, 0),
            (JEQ_K, 0, 1, NR_MKDIR),
            (RET_K, 0, 0, RET_USER_NOTIF),
            (RET_K, 0, 0, RET_ALLOW),
        ]),
    )
    .unwrap();
    let out = secopt()
        .arg("exec")
        .arg("--bpf")
        .arg(&filter)
        .arg("--listener-path")
        .arg(dir.join("nobody.sock"))
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("nobody.sock"),
        "{}",
        stderr_of(&out)
    );
    assert!(!marker.exists());
}

/// A constant of 2^32 or more on an ABI that libseccomp compares in 32 bits (x86 here) reads
/// as its low word in runc's filter and in secopt's: exec warns as compile does, and under
/// --strict refuses to run, as compile refuses to write.
#[test]
fn a_constant_libseccomp_truncates_is_warned_about_and_refused_under_strict() {
    let dir = TempDir::new("exec-truncated");
    let profile = dir.join("wide.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
            "syscalls": [{"names": ["personality"], "action": "SCMP_ACT_ERRNO",
                          "args": [{"index": 0, "value": 4294967296, "op": "SCMP_CMP_EQ"}]}]}"#,
    )
    .unwrap();
    let plan = secopt()
        .arg("exec")
        .arg("-p")
        .arg(&profile)
        .args(["--dry-run", "--format", "json", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(plan.status.code(), Some(0), "{}", stderr_of(&plan));
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert!(
        plan["warnings"]
            .to_string()
            .contains("0x100000000 is read as 0x0"),
        "{plan}"
    );
    let marker = dir.join("ran");
    let strict = secopt()
        .arg("exec")
        .arg("--strict")
        .arg("-p")
        .arg(&profile)
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(2), "{}", stderr_of(&strict));
    assert!(stderr_of(&strict).contains("0x100000000 is read as 0x0"));
    assert!(!marker.exists());
}
