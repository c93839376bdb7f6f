//! `secopt record` on real programs. The expected counts come from the programs themselves
//! (small C programs that make a known number of calls), from `strace -f -c` run on the same
//! binary, and from documented constants (`<linux/prctl.h>`, `<asm/ioctls.h>`, the kernel's
//! syscall tables); none is taken from secopt's own output.
//!
//! Known difference from strace: `strace -c` counts a call when it returns, so it never lists
//! `exit`/`exit_group`; secopt counts entries, as a seccomp filter sees them.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use secopt::arch::Arch;
use secopt::bench::workload::{parse_file, Workload, WorkloadOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{forking_shell, KillOnDrop};

#[path = "common/cc.rs"]
#[allow(dead_code)]
mod cc;
#[path = "data/e2e_support.rs"]
mod support;

fn secopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .expect("run secopt")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("secopt-record-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Compiles `source` with the system C compiler into `dir/name`.
fn compile(dir: &Path, name: &str, source: &str, extra: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    let bin = dir.join(name);
    std::fs::write(&src, source).unwrap();
    cc::build_c_with(&src, &bin, &["-O1"], extra);
    bin
}

/// `secopt record -q -o DIR/NAME.json [extra] -- command`, asserting the exit code.
fn record(dir: &Path, name: &str, extra: &[&str], command: &[&str], code: i32) -> PathBuf {
    let out_file = dir.join(format!("{name}.json"));
    let mut args = vec!["record", "-q", "-o", path_str(&out_file)];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(command);
    let out = secopt(&args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out_file
}

fn workload(path: &Path) -> Workload {
    let bytes = std::fs::read(path).unwrap();
    let options = WorkloadOptions {
        native: Arch::X86_64,
        skip_unknown: false,
    };
    parse_file(&bytes, path_str(path), &options).unwrap()
}

/// Calls per (ABI, syscall name), argument patterns added up.
fn totals(w: &Workload) -> BTreeMap<(Arch, String), u64> {
    let mut m = BTreeMap::new();
    for e in &w.entries {
        *m.entry((e.arch, e.syscall.clone())).or_default() += e.count;
    }
    m
}

fn get(m: &BTreeMap<(Arch, String), u64>, arch: Arch, name: &str) -> u64 {
    m.get(&(arch, name.to_string())).copied().unwrap_or(0)
}

/// `strace -f -c -U calls,name` on `command`: calls per (ABI, name), read from strace's own
/// table (sections "System call usage summary for 32 bit mode:" / "x32 mode:").
fn strace_counts(dir: &Path, command: &[&str]) -> BTreeMap<(Arch, String), u64> {
    let table = dir.join("strace.txt");
    let out = Command::new("strace")
        .args(["-f", "-c", "-U", "calls,name", "-o", path_str(&table)])
        .args(command)
        .output()
        .expect("strace (apt-get install -y strace)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut arch = Arch::X86_64;
    let mut m = BTreeMap::new();
    for line in std::fs::read_to_string(&table).unwrap().lines() {
        if line.contains("summary for 32 bit mode") {
            arch = Arch::X86;
        } else if line.contains("summary for x32 mode") {
            arch = Arch::X32;
        }
        let cells: Vec<&str> = line.split_whitespace().collect();
        if let [calls, name] = cells[..] {
            if let Ok(n) = calls.parse::<u64>() {
                if name != "total" {
                    m.insert((arch, name.to_string()), n);
                }
            }
        }
    }
    m
}

/// 1000 getppid and 7 uname through the native entry, 3 getpid through `int $0x80` (i386
/// getpid is 20, arch/x86/entry/syscalls/syscall_32.tbl) and 2 through the x32 entry (39 |
/// bit 30: ENOSYS when x32 is off, but the call reaches the entry and seccomp).
const ABIS_C: &str = r#"
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
int main(void) {
    struct utsname u;
    for (int i = 0; i < 1000; i++) syscall(SYS_getppid);
    for (int i = 0; i < 7; i++) syscall(SYS_uname, &u);
    for (int i = 0; i < 3; i++) {
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "0"(20L) : "memory");
    }
    for (int i = 0; i < 2; i++) syscall(0x40000000L | SYS_getpid);
    return 0;
}
"#;

#[test]
fn counts_per_abi_are_exact_and_agree_with_strace() {
    let dir = tmpdir("abis");
    let bin = compile(&dir, "abis", ABIS_C, &[]);
    let file = record(&dir, "abis", &[], &[path_str(&bin)], 0);
    let w = workload(&file);
    let m = totals(&w);
    assert_eq!(get(&m, Arch::X86_64, "getppid"), 1000);
    assert_eq!(get(&m, Arch::X86_64, "uname"), 7);
    assert_eq!(get(&m, Arch::X86, "getpid"), 3);
    assert_eq!(get(&m, Arch::X32, "getpid"), 2);
    // The command's own execve, once; not the fork's plumbing before it.
    assert_eq!(get(&m, Arch::X86_64, "execve"), 1);
    let nr_of = |arch: Arch| {
        w.entries
            .iter()
            .find(|e| e.arch == arch && e.syscall == "getpid")
            .map(|e| e.nr)
    };
    assert_eq!(nr_of(Arch::X86), Some(20));
    assert_eq!(nr_of(Arch::X32), Some(0x4000_0027));

    // Every syscall strace sees, with the same count; exit_group is the one call strace -c
    // cannot count (it never returns).
    let strace = strace_counts(&dir, &[path_str(&bin)]);
    let mut mine = m.clone();
    assert_eq!(
        mine.remove(&(Arch::X86_64, "exit_group".to_string())),
        Some(1)
    );
    assert_eq!(mine, strace);

    // The strace-style output says the same.
    let table = dir.join("abis.txt");
    let out = secopt(&[
        "record",
        "-q",
        "--format",
        "strace",
        "-o",
        path_str(&table),
        "--",
        path_str(&bin),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(totals(&workload(&table)), m);
}

/// Four threads make 100 getpgrp each; three forked children 10 getsid(0) each; a vfork'd
/// child execs /bin/true.
const TASKS_C: &str = r#"
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static void *worker(void *arg) {
    for (int i = 0; i < 100; i++) syscall(SYS_getpgrp);
    return arg;
}
int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
    for (int i = 0; i < 3; i++) {
        pid_t p = fork();
        if (p == 0) {
            for (int j = 0; j < 10; j++) syscall(SYS_getsid, 0);
            _exit(0);
        }
        waitpid(p, 0, 0);
    }
    pid_t v = vfork();
    if (v == 0) {
        execl("/bin/true", "true", (char *)0);
        _exit(127);
    }
    int status;
    waitpid(v, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
"#;

#[test]
fn threads_and_children_are_followed() {
    let dir = tmpdir("tasks");
    let bin = compile(&dir, "tasks", TASKS_C, &["-pthread"]);
    let file = record(&dir, "tasks", &[], &[path_str(&bin)], 0);
    let m = totals(&workload(&file));
    assert_eq!(get(&m, Arch::X86_64, "getpgrp"), 400);
    assert_eq!(get(&m, Arch::X86_64, "getsid"), 30);
    // The command's execve and the vfork child's.
    assert_eq!(get(&m, Arch::X86_64, "execve"), 2);
    // The command, 4 threads, 3 forks and 1 vfork.
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(json["$tasks"], 9);
    // strace agrees on the calls whose number does not depend on scheduling (futex and
    // wait4 restarts do).
    let strace = strace_counts(&dir, &[path_str(&bin)]);
    for name in [
        "getpgrp", "getsid", "clone", "clone3", "vfork", "execve", "mmap", "openat",
    ] {
        let key = (Arch::X86_64, name.to_string());
        assert_eq!(m.get(&key), strace.get(&key), "{name}");
    }
}

/// 50 prctl(PR_GET_DUMPABLE) (option 3) and 20 prctl(PR_GET_NAME, buf) (option 16), from
/// <linux/prctl.h>; 6 ioctl(0, TCGETS) (0x5401, <asm-generic/ioctls.h>).
const PRCTL_C: &str = r#"
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
int main(void) {
    char name[16];
    struct termios t;
    for (int i = 0; i < 50; i++) prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    for (int i = 0; i < 20; i++) prctl(PR_GET_NAME, name, 0, 0, 0);
    /* The kernel reads the option as an int (PR_GET_DUMPABLE again); a filter sees all 64
       bits of the register. */
    for (int i = 0; i < 4; i++) syscall(SYS_prctl, 0x100000003UL, 0UL, 0UL, 0UL, 0UL);
    for (int i = 0; i < 6; i++) ioctl(0, TCGETS, &t);
    return 0;
}
"#;

/// prctl's options (args[0]) with the entries for each, by option value.
fn prctl_options(w: &Workload) -> Vec<(Option<u64>, u64)> {
    let mut v: Vec<(Option<u64>, u64)> = w
        .entries
        .iter()
        .filter(|e| e.syscall == "prctl")
        .map(|e| (e.args[0], e.count))
        .collect();
    v.sort();
    v
}

#[test]
fn argument_samples_separate_options() {
    let dir = tmpdir("prctl");
    let bin = compile(&dir, "prctl", PRCTL_C, &[]);

    let w = workload(&record(&dir, "options", &[], &[path_str(&bin)], 0));
    let all_three = [(Some(3), 50), (Some(16), 20), (Some(0x1_0000_0003), 4)];
    assert_eq!(prctl_options(&w), all_three);
    let tcgets: Vec<u64> = w
        .entries
        .iter()
        .filter(|e| e.syscall == "ioctl" && e.args[1] == Some(0x5401))
        .map(|e| e.count)
        .collect();
    assert_eq!(tcgets, [6]);
    // Descriptors, pointers and unused registers are not sampled.
    assert!(w
        .entries
        .iter()
        .filter(|e| e.syscall == "prctl" || e.syscall == "ioctl")
        .all(|e| e.args[2..].iter().all(Option::is_none)));

    // A filter that decides prctl on args[0].lo and nothing else on arguments: samples for
    // prctl only, of that argument, whole: another filter may read its high half, and the
    // file must not say it is 0 when the call passed 1 there.
    let filter = dir.join("prctl.s");
    std::fs::write(
        &filter,
        "ld [arch]\njne #AUDIT_ARCH_X86_64, allow\nld [nr]\njne #prctl, allow\n\
         ld [args[0].lo]\njeq #4, deny\nallow: ret ALLOW\ndeny: ret ERRNO(1)\n",
    )
    .unwrap();
    let w = workload(&record(
        &dir,
        "filtered",
        &["--filter", path_str(&filter)],
        &[path_str(&bin)],
        0,
    ));
    assert_eq!(prctl_options(&w), all_three);
    let sampled: Vec<&str> = w
        .entries
        .iter()
        .filter(|e| e.args.iter().any(Option::is_some))
        .map(|e| e.syscall.as_str())
        .collect();
    assert_eq!(sampled, ["prctl", "prctl", "prctl"]);

    let w = workload(&record(&dir, "plain", &["--no-args"], &[path_str(&bin)], 0));
    assert_eq!(prctl_options(&w), [(None, 74)]);

    // Past --max-patterns, the rarer options are merged into prctl(other).
    let w = workload(&record(
        &dir,
        "capped",
        &["--max-patterns", "1"],
        &[path_str(&bin)],
        0,
    ));
    assert_eq!(prctl_options(&w), [(None, 24), (Some(3), 50)]);
    assert!(w.entries.iter().any(|e| e.label == "prctl(other)"));
}

/// ioctl TCGETS (0x5401) 30 times, FIONREAD (0x541b) 10 times; fcntl F_GETFD (1) and F_GETFL
/// (3) 5 times each; getppid 20 times.
const IOCTL_C: &str = r#"
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
int main(void) {
    struct termios t;
    int n;
    for (int i = 0; i < 30; i++) ioctl(0, TCGETS, &t);
    for (int i = 0; i < 10; i++) ioctl(0, FIONREAD, &n);
    for (int i = 0; i < 5; i++) fcntl(1, F_GETFD);
    for (int i = 0; i < 5; i++) fcntl(1, F_GETFL);
    for (int i = 0; i < 20; i++) syscall(SYS_getppid);
    return 0;
}
"#;

#[test]
fn output_feeds_optimize_and_bench() {
    let dir = tmpdir("feeds");
    let bin = compile(&dir, "ioctls", IOCTL_C, &[]);
    let filter = dir.join("f.s");
    std::fs::write(
        &filter,
        "    ld [arch]\n    jne #AUDIT_ARCH_X86_64, allow\n    ld [nr]\n    jeq #ioctl, ioctl\n\
         \x20   jeq #fcntl, fcntl\n    ja allow\nioctl:\n    ld [args[1].lo]\n    jeq #0x5401, allow\n\
         \x20   ret ERRNO(25)\nfcntl:\n    ld [args[1].lo]\n    jeq #1, allow\n    jeq #3, allow\n\
         \x20   ret ERRNO(1)\nallow:\n    ret ALLOW\n",
    )
    .unwrap();
    let file = record(
        &dir,
        "ioctls",
        &["--filter", path_str(&filter)],
        &[path_str(&bin)],
        0,
    );
    let w = workload(&file);
    let mut sampled: Vec<(&str, Option<u64>, u64)> = w
        .entries
        .iter()
        .filter(|e| e.syscall == "ioctl" || e.syscall == "fcntl")
        .map(|e| (e.syscall.as_str(), e.args[1], e.count))
        .collect();
    sampled.sort();
    assert_eq!(
        sampled,
        [
            ("fcntl", Some(1), 5),
            ("fcntl", Some(3), 5),
            ("ioctl", Some(0x5401), 30),
            ("ioctl", Some(0x541b), 10),
        ]
    );
    assert_eq!(get(&totals(&w), Arch::X86_64, "getppid"), 20);

    let opt = dir.join("opt.bpf");
    let out = secopt(&[
        "optimize",
        path_str(&filter),
        "--weights",
        path_str(&file),
        "-o",
        path_str(&opt),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(opt.exists());

    let report = dir.join("bench.json");
    let out = secopt(&[
        "bench",
        "--workload",
        path_str(&file),
        "--bpf",
        &format!("f={}", path_str(&filter)),
        "--rounds",
        "3",
        "--calls",
        "10",
        "--warmup",
        "2",
        "--bootstrap",
        "100",
        "--format",
        "json",
        "-o",
        path_str(&report),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("ioctl(_, 0x541b)"), "{text}");
}

#[test]
fn bad_input_fails_before_anything_is_written() {
    let dir = tmpdir("bad");
    let out_file = dir.join("out.json");
    let marker = dir.join("ran");
    let touch = format!("touch {}", path_str(&marker));
    let not_exec = dir.join("not-executable");
    std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![], "COMMAND"),
        (
            vec!["--", "secopt-no-such-command-4711"],
            "secopt-no-such-command-4711`: command not found",
        ),
        (vec!["--", "/nonexistent/prog"], "/nonexistent/prog"),
        (vec!["--", path_str(&not_exec)], "Permission denied"),
        (
            vec!["--filter", "/nonexistent/f.bpf", "--", "sh", "-c", &touch],
            "/nonexistent/f.bpf",
        ),
        (
            vec!["--no-args", "--filter", "x", "--", "true"],
            "cannot be used with",
        ),
        (vec!["--max-patterns", "0", "--", "true"], "--max-patterns"),
    ];
    for (extra, want) in &cases {
        let mut args = vec!["record", "-o", path_str(&out_file)];
        args.extend_from_slice(extra);
        let out = secopt(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out_file.exists(), "{args:?} wrote output");
    }
    // An output directory that does not exist is refused before the command runs.
    let out = secopt(&[
        "record",
        "-o",
        "/nonexistent/dir/w.json",
        "--",
        "sh",
        "-c",
        &touch,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/dir does not exist"));
    assert!(!marker.exists(), "the command ran");
    // So is any output that could not be written after it: a directory, a file where no file
    // can be made beside it, the --filter read.
    let filter = dir.join("f.s");
    std::fs::write(&filter, "ret ALLOW\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["-o", path_str(&dir)], "that is a directory"),
        (
            &["-o", "/proc/version"],
            "cannot create a file in /proc to replace it with",
        ),
        (
            &["-o", path_str(&filter), "--filter", path_str(&filter)],
            "an input of this command",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["record"];
        args.extend_from_slice(extra);
        args.extend(["--", "sh", "-c", &touch]);
        let out = secopt(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(!marker.exists(), "{args:?}: the command ran");
    }
    assert_eq!(std::fs::read_to_string(&filter).unwrap(), "ret ALLOW\n");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("secopt-tmp") || n.starts_with("out"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_commands_exit_status_is_passed_on() {
    let dir = tmpdir("exit");
    let file = record(&dir, "seven", &[], &["sh", "-c", "exit 7"], 7);
    // The workload is written whatever the status.
    assert!(get(&totals(&workload(&file)), Arch::X86_64, "exit_group") >= 1);
    // Killed by SIGTERM (15): 128 + 15, as a shell reports it.
    record(&dir, "killed", &[], &["sh", "-c", "kill -TERM $$"], 143);
}

/// The child sleeps, writes a byte, then sends SIGCONT to the parent, which has stopped
/// itself with SIGSTOP after handling a SIGUSR1 it raised. The parent exits 0 only if the
/// handler ran (the tracer delivered the signal) and the byte is already there when it
/// resumes (the tracer left the group-stop stopped until SIGCONT).
const SIGNALS_C: &str = r#"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile sig_atomic_t handled;
static void on_usr1(int sig) { handled = sig; }
int main(void) {
    int p[2];
    if (pipe(p) != 0) return 10;
    signal(SIGUSR1, on_usr1);
    pid_t c = fork();
    if (c == 0) {
        usleep(200000);
        if (write(p[1], "x", 1) != 1) _exit(1);
        kill(getppid(), SIGCONT);
        _exit(0);
    }
    raise(SIGUSR1);
    raise(SIGSTOP);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    char b;
    int got = read(p[0], &b, 1) == 1;
    waitpid(c, 0, 0);
    if (handled != SIGUSR1) return 2;
    return got ? 0 : 3;
}
"#;

#[test]
fn signals_are_delivered_and_stops_last_until_sigcont() {
    let dir = tmpdir("signals");
    let bin = compile(&dir, "signals", SIGNALS_C, &[]);
    let file = record(&dir, "signals", &[], &[path_str(&bin)], 0);
    let m = totals(&workload(&file));
    // raise() is tgkill on glibc: SIGUSR1, SIGSTOP.
    assert_eq!(get(&m, Arch::X86_64, "tgkill"), 2);
    assert_eq!(get(&m, Arch::X86_64, "kill"), 1);
}

/// Reads bytes from stdin; for each one makes exactly 1000 `getppid` calls and writes the
/// byte back. Blocked in `read` otherwise, so it makes no call while nobody writes to it.
const ON_REQUEST: &str = r#"
#include <unistd.h>
#include <sys/syscall.h>
int main(void) {
    char c;
    while (read(0, &c, 1) == 1) {
        for (int i = 0; i < 1000; i++) syscall(SYS_getppid);
        if (write(1, &c, 1) != 1) return 1;
    }
    return 0;
}
"#;

/// A child process killed when the test ends, even by a failed assertion.
fn tracer_of(pid: u32) -> Option<u32> {
    support::proc_status_field(pid, "TracerPid:")?.parse().ok()
}

/// Writes one byte to the program and waits for it to come back.
fn request(stdin: &mut impl std::io::Write, stdout: &mut impl std::io::Read) {
    stdin.write_all(b"x").unwrap();
    stdin.flush().unwrap();
    let mut ack = [0u8; 1];
    stdout.read_exact(&mut ack).unwrap();
    assert_eq!(&ack, b"x");
}

#[test]
fn a_running_process_is_recorded_until_sigint_and_runs_on() {
    let dir = tmpdir("attach");
    let bin = compile(&dir, "on_request", ON_REQUEST, &[]);
    let mut program = Command::new(&bin)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = program.id();
    let (mut to, mut from) = (
        program.stdin.take().unwrap(),
        program.stdout.take().unwrap(),
    );
    // Before it is recorded: these calls must not be counted.
    request(&mut to, &mut from);
    let out_file = dir.join("attached.txt");
    let recorder = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(["record", "-q", "--format", "strace", "-o"])
        .arg(&out_file)
        .args(["--pid", &pid.to_string()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while tracer_of(pid) != Some(recorder.id()) {
        assert!(started.elapsed().as_secs() < 10, "secopt never attached");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Seized; secopt interrupts it next, which switches it to syscall stops (a few
    // microseconds later; wait well beyond that). The program is blocked in read, so every
    // call from here on is seen.
    std::thread::sleep(std::time::Duration::from_millis(100));
    request(&mut to, &mut from);
    request(&mut to, &mut from);
    // SAFETY: signals our own child.
    unsafe { libc::kill(recorder.id() as i32, libc::SIGINT) };
    let done = recorder.wait_with_output().unwrap();
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let table = std::fs::read_to_string(&out_file).unwrap();
    let count = |name: &str| -> u64 {
        table
            .lines()
            .find_map(|l| {
                let mut f = l.split_whitespace();
                let n = f.next()?.parse().ok()?;
                (f.next()? == name).then_some(n)
            })
            .unwrap_or(0)
    };
    // Two requests: 2000 getppid and 2 writes, exactly (the program's own loop).
    assert_eq!(count("getppid"), 2000, "{table}");
    assert_eq!(count("write"), 2, "{table}");
    assert!(count("read") >= 2, "{table}");

    // Detached: no tracer, and the program still answers.
    assert_eq!(tracer_of(pid), Some(0));
    request(&mut to, &mut from);
    drop(to);
    assert!(program.wait().unwrap().success());
}

/// `secopt record -q -o OUT --pid PID --duration SECONDS`: must succeed, and within `limit`
/// seconds (the duration plus attaching and detaching).
fn record_pid(out_file: &Path, pid: u32, seconds: &str, limit: f64) {
    let started = std::time::Instant::now();
    let out = secopt(&[
        "record",
        "-q",
        "-o",
        path_str(out_file),
        "--pid",
        &pid.to_string(),
        "--duration",
        seconds,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed().as_secs_f64() < limit,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_forking_process_is_followed_and_left_running_after_the_duration() {
    let dir = tmpdir("attach-fork");
    // A shell that starts `cat` over and over: one fork and one execve per round.
    let shell = forking_shell();
    let pid = shell.0.id();
    let record = |name: &str| -> Workload {
        let out_file = dir.join(name);
        record_pid(&out_file, pid, "0.5", 5.0);
        workload(&out_file)
    };
    for round in ["first.json", "second.json"] {
        let w = record(round);
        let t = totals(&w);
        let execs = get(&t, Arch::X86_64, "execve");
        let forks = get(&t, Arch::X86_64, "vfork")
            + get(&t, Arch::X86_64, "fork")
            + get(&t, Arch::X86_64, "clone")
            + get(&t, Arch::X86_64, "clone3");
        // The children were followed: each round forks once and executes cat once (a round
        // cut by the start or the end of the recording may count one and not the other).
        assert!(execs >= 5, "{round}: {t:?}");
        assert!(
            forks.abs_diff(execs) <= 2,
            "{round}: {forks} forks, {execs} execve"
        );
        // Nothing is left stopped or traced: the second round attaches again and sees the
        // loop still running.
        assert_eq!(tracer_of(shell.0.id()), Some(0));
    }
}

/// A process attached to was not started by secopt: its exit status is not record's, which
/// exits 0 once the workload is written (`record --help`), also when the process exits 7.
#[test]
fn a_process_that_exits_while_recorded_leaves_record_s_status_at_0() {
    let dir = tmpdir("attach-exit");
    let mut shell = KillOnDrop(
        Command::new("sh")
            .args(["-c", "read line; exit 7"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let cmdline = format!("/proc/{}/cmdline", shell.0.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !std::fs::read(&cmdline)
        .unwrap_or_default()
        .ends_with(b"exit 7\0")
    {
        assert!(std::time::Instant::now() < deadline, "sh did not start");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out_file = dir.join("exit.json");
    let pid = shell.0.id().to_string();
    let recorder = std::thread::spawn(move || {
        secopt(&[
            "record",
            "-q",
            "-o",
            path_str(&out_file),
            "--pid",
            &pid,
            "--duration",
            "20",
        ])
    });
    // Once attached (the shell is then traced), the line lets it exit.
    while tracer_of(shell.0.id()) == Some(0) {
        assert!(std::time::Instant::now() < deadline + std::time::Duration::from_secs(5));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    use std::io::Write;
    shell.0.stdin.take().unwrap().write_all(b"\n").unwrap();
    let out = recorder.join().unwrap();
    assert_eq!(shell.0.wait().unwrap().code(), Some(7));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("exit.json")).unwrap();
    assert!(text.contains("\"exit_group\""), "{text}");
}

#[test]
fn an_idle_process_is_detached_when_the_duration_ends() {
    let dir = tmpdir("attach-idle");
    let mut sleeper = KillOnDrop(Command::new("sleep").arg("60").spawn().unwrap());
    // spawn returns before the child has run execve: until then its command line is not
    // `sleep 60` yet, and that is what the capture's `$command` reads.
    let cmdline = format!("/proc/{}/cmdline", sleeper.0.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::fs::read(&cmdline).unwrap_or_default() != b"sleep\x0060\0" {
        assert!(std::time::Instant::now() < deadline, "sleep did not start");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out_file = dir.join("idle.json");
    // It makes no call to wake the tracer: the timer must.
    record_pid(&out_file, sleeper.0.id(), "0.3", 3.0);
    let text = std::fs::read_to_string(&out_file).unwrap();
    assert!(
        text.contains("\"$exit\": \"was still running when secopt detached\""),
        "{text}"
    );
    assert!(text.contains("\"$command\": [\"sleep\", \"60\"]"), "{text}");
    assert_eq!(tracer_of(sleeper.0.id()), Some(0));
    assert!(sleeper.0.try_wait().unwrap().is_none(), "sleep ended");
    // Without -q, once attached it says what it records: the process, its one thread.
    let pid = sleeper.0.id().to_string();
    let out = secopt(&[
        "record",
        "-o",
        path_str(&out_file),
        "--pid",
        &pid,
        "--duration",
        "0.2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "recording process {pid} (sleep, 1 thread) for 0.2 s"
        )),
        "{err}"
    );
}

#[test]
fn attach_errors_exit_2_and_write_nothing() {
    let dir = tmpdir("attach-errors");
    let out_file = dir.join("never.json");
    let out = secopt(&["record", "-o", path_str(&out_file), "--pid", "999999999"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no process 999999999"), "{err}");
    assert!(
        !err.contains("recording process"),
        "said before attaching: {err}"
    );
    assert!(!out_file.exists());
    for args in [
        &["record", "--pid", "1", "--", "true"][..],
        &["record", "--duration", "1", "--", "true"],
        &["record", "--pid", "1", "--duration", "0"],
        &["record", "--pid", "1", "--duration", "soon"],
    ] {
        let out = secopt(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// A child started with `CLONE_UNTRACED` (tests/data/untraced_child.c) makes 8 getppid that
/// no tracer sees; the parent makes 1. The workload counts the parent's alone, as `strace -f
/// -c` does, and its `$notes` say that a child's calls are missing (an audit found them
/// dropped without a word).
const UNTRACED_C: &str = include_str!("data/untraced_child.c");

#[test]
fn children_no_tracer_can_follow_are_noted() {
    let dir = tmpdir("untraced");
    let bin = compile(&dir, "untraced", UNTRACED_C, &[]);
    for call in ["clone", "clone3"] {
        let file = record(&dir, call, &[], &[path_str(&bin), call], 0);
        let m = totals(&workload(&file));
        assert_eq!(get(&m, Arch::X86_64, "getppid"), 1, "{call}");
        let strace = strace_counts(&dir, &[path_str(&bin), call]);
        let key = (Arch::X86_64, "getppid".to_string());
        assert_eq!(strace.get(&key), Some(&1), "{call}: strace");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let notes = json["$notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n
                .as_str()
                .unwrap()
                .contains("started 1 process or thread with CLONE_UNTRACED")),
            "{call}: {json}"
        );
    }
    // A plain fork is followed: no such note.
    let file = record(
        &dir,
        "fork",
        &[],
        &["/bin/sh", "-c", "/bin/true; /bin/true"],
        0,
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(
        !json["$notes"].to_string().contains("CLONE_UNTRACED"),
        "{json}"
    );
}
