//! `secopt dump PID`: the filters a running process has, read back from the kernel.
//!
//! The oracle is the process itself: a child installs two filters with raw `seccomp(2)`
//! calls (not through secopt) and execs `sleep`; `secopt dump` must hand back exactly those
//! bytes, in installation order, and leave the process running. Then the cases it must
//! explain instead of answering: no such process, a process without a filter, an index past
//! the last, several filters and no `--index` for a raw output.
//!
//! Reading filters needs root (`CAP_SYS_ADMIN`); without it the tests skip loudly, or fail
//! under `SECOPT_REQUIRE_E2E=1`.
#![cfg(target_os = "linux")]

#[path = "data/e2e_support.rs"]
mod support;

use secopt::bpf::{interp, Program, RetVal, SeccompData};
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_RET_K: u16 = 0x06;
const BPF_RET_A: u16 = 0x16;
const BPF_LD_IMM: u16 = 0x00;
const ALLOW: u32 = 0x7fff_0000;
const ERRNO: u32 = 0x0005_0000;

/// First filter: `nr == 9999` fails with errno 7, everything else is allowed.
const FIRST: &[(u16, u8, u8, u32)] = &[
    (BPF_LD_W_ABS, 0, 0, 0),
    (BPF_JEQ_K, 0, 1, 9999),
    (BPF_RET_K, 0, 0, ERRNO | 7),
    (BPF_RET_K, 0, 0, ALLOW),
];

/// Second filter: `nr == 9998` fails with errno 8; the rest is allowed through `RET A`
/// (whose `k`, ignored by the kernel, must come back as it was given).
const SECOND: &[(u16, u8, u8, u32)] = &[
    (BPF_LD_W_ABS, 0, 0, 0),
    (BPF_JEQ_K, 0, 1, 9998),
    (BPF_RET_K, 0, 0, ERRNO | 8),
    (BPF_LD_IMM, 0, 0, ALLOW),
    (BPF_RET_A, 0, 0, 0x1234),
];

fn install(filter: &[u8]) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: (filter.len() / 8) as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog) reads `prog` and the filter it
    // points to, both alive for the call.
    let r = unsafe { libc::syscall(libc::SYS_seccomp, 1, 0, &prog as *const libc::sock_fprog) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `sleep 60` with `filters` installed, oldest first, once it has exec'd.
fn sleeper(filters: Vec<Vec<u8>>) -> Child {
    let mut cmd = Command::new("sleep");
    cmd.arg("60").stdout(Stdio::null());
    // SAFETY: prctl and seccomp are async-signal-safe; the buffers were allocated before fork.
    unsafe {
        cmd.pre_exec(move || {
            if !filters.is_empty() && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for f in &filters {
                install(f)?;
            }
            Ok(())
        });
    }
    let child = cmd.spawn().expect("start sleep");
    // Wait for the exec: the parent's name until then.
    let started = Instant::now();
    let comm = format!("/proc/{}/comm", child.id());
    while std::fs::read_to_string(&comm).unwrap_or_default().trim() != "sleep" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "sleep did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

/// A forked child in seccomp strict mode, blocked reading a pipe nobody writes (strict mode
/// allows read); the caller kills and reaps it.
fn strict_mode_child() -> libc::pid_t {
    let mut fds = [0; 2];
    // SAFETY: pipe fills the two fds; the child only makes async-signal-safe calls (prctl,
    // read, _exit) before it is killed.
    let pid = unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        let pid = libc::fork();
        if pid == 0 {
            libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_STRICT, 0, 0, 0);
            let mut byte = 0u8;
            libc::read(fds[0], (&mut byte as *mut u8).cast(), 1);
            libc::_exit(0);
        }
        // The child keeps its own copy of the write end, so its read still blocks.
        libc::close(fds[0]);
        libc::close(fds[1]);
        pid
    };
    assert!(pid > 0);
    let started = Instant::now();
    let status = format!("/proc/{pid}/status");
    while !std::fs::read_to_string(&status)
        .unwrap_or_default()
        .contains("Seccomp:\t1")
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the child did not enter strict mode"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    pid
}

/// The process state letter from `/proc/PID/stat` (`S` sleeping, `t` stopped by a tracer).
fn state(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.chars().next().unwrap()
}

fn root_or_skip(test: &str) -> bool {
    if !is_root() {
        skip_or_fail(test, "reading another process's filters needs root");
        return false;
    }
    true
}

#[test]
fn dump_reads_back_the_filters_a_process_installed() {
    if !root_or_skip("dump-reads-back") {
        return;
    }
    let dir = TempDir::new("dump-reads-back");
    let (first, second) = (raw_filter(FIRST), raw_filter(SECOND));
    let mut child = sleeper(vec![first.clone(), second.clone()]);
    let pid = child.id().to_string();

    for (index, want) in [(0, &first), (1, &second)] {
        let out = dir.join(&format!("f{index}.bpf"));
        let run = run_secopt(&[
            "dump",
            &pid,
            "--index",
            &index.to_string(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr_of(&run));
        assert_eq!(&std::fs::read(&out).unwrap(), want, "filter index {index}");
    }

    // Two filters and a raw output without --index: refused, nothing written.
    let out = dir.join("both.bpf");
    let run = run_secopt(&["dump", &pid, "-o", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    let err = stderr_of(&run);
    assert!(
        err.contains("has 2 filters") && err.contains("--index"),
        "{err}"
    );
    assert!(!out.exists());

    // A `{}` in the path writes each, oldest first, byte for byte what was installed.
    let pattern = dir.join("each-{}.bpf");
    let run = run_secopt(&["dump", &pid, "-o", pattern.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    for (index, want) in [(0, &first), (1, &second)] {
        let written = dir.join(&format!("each-{index}.bpf"));
        assert_eq!(
            &std::fs::read(&written).unwrap(),
            want,
            "{}",
            written.display()
        );
    }
    assert!(!dir.join("each-2.bpf").exists());

    // A pattern one of whose files cannot be written (its directory is missing) writes none
    // and leaves a file that was there as it was.
    std::fs::create_dir(dir.join("s0")).unwrap();
    std::fs::write(dir.join("s0/f.bpf"), "precious").unwrap();
    let pattern = dir.join("s{}/f.bpf");
    let run = run_secopt(&["dump", &pid, "-o", pattern.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr_of(&run));
    let err = stderr_of(&run);
    assert!(
        err.contains("s1 does not exist") && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("s0/f.bpf")).unwrap(), b"precious");

    let json = run_secopt(&["dump", &pid, "--format", "json"]);
    assert!(json.status.success(), "{}", stderr_of(&json));
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["filter_count"], 2);
    assert_eq!(doc["name"], "sleep");
    for (f, want) in doc["filters"]
        .as_array()
        .unwrap()
        .iter()
        .zip([FIRST, SECOND])
    {
        // In the order docs/json.md lists them.
        let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["index", "length", "instructions", "assembly"]);
        let got: Vec<(u64, u64, u64, u64)> = f["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let n = |k: &str| i[k].as_u64().unwrap();
                (n("code"), n("jt"), n("jf"), n("k"))
            })
            .collect();
        let want: Vec<(u64, u64, u64, u64)> = want
            .iter()
            .map(|&(c, t, f, k)| (c.into(), t.into(), f.into(), k.into()))
            .collect();
        assert_eq!(got, want);
    }

    let text = run_secopt(&["dump", &pid]);
    assert!(text.status.success(), "{}", stderr_of(&text));
    let text = stdout_of(&text);
    assert!(
        text.contains("filter index 0, the oldest: 4 instructions"),
        "{text}"
    );
    assert!(
        text.contains("filter index 1, the newest: 5 instructions"),
        "{text}"
    );
    assert!(
        text.contains("ERRNO(7)") && text.contains("ERRNO(8)"),
        "{text}"
    );

    // --join: one program deciding as the stack (worked out by hand: each filter's errno on
    // its own number, ALLOW elsewhere); `secopt optimize` of the two files proves equal to it.
    let joined = dir.join("joined.bpf");
    let run = run_secopt(&["dump", &pid, "--join", "-o", joined.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    assert!(
        stderr_of(&run).contains("its 2 filters"),
        "{}",
        stderr_of(&run)
    );
    let program = Program::from_raw(&std::fs::read(&joined).unwrap()).unwrap();
    for (nr, want) in [
        (9999, ERRNO | 7),
        (9998, ERRNO | 8),
        (1, ALLOW),
        (-1, ALLOW),
    ] {
        let d = SeccompData::new(0xc000_003e, nr, [0; 6]);
        assert_eq!(interp::eval(&program, &d).unwrap(), RetVal(want), "nr {nr}");
    }
    let optimized = dir.join("optimized.bpf");
    let f0 = dir.join("f0.bpf");
    let f1 = dir.join("f1.bpf");
    let run = run_secopt(&[
        "optimize",
        f0.to_str().unwrap(),
        f1.to_str().unwrap(),
        "-o",
        optimized.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    let run = run_secopt(&[
        "verify",
        joined.to_str().unwrap(),
        optimized.to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}{}",
        stdout_of(&run),
        stderr_of(&run)
    );

    // The process was only stopped for the reading: it sleeps on, and still under both filters.
    assert_eq!(state(child.id()), 'S');
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.contains("Seccomp:\t2"), "{status}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn dump_explains_what_it_cannot_read() {
    if !root_or_skip("dump-explains") {
        return;
    }
    let mut plain = sleeper(Vec::new());
    let mut filtered = sleeper(vec![raw_filter(FIRST)]);
    // No filter is an answer (exit 1); the others are bad input (exit 2).
    let cases = [
        (plain.id().to_string(), vec![], "has no seccomp filter", 1),
        (
            filtered.id().to_string(),
            vec!["--index", "1"],
            "has 1 filter (index 0: 4 instructions); --index 1 is past the last",
            2,
        ),
        // Beyond the kernel's default pid_max and every configurable one (2^22).
        ("4194305".to_string(), vec![], "no process 4194305", 2),
    ];
    for (pid, extra, message, code) in cases {
        let mut args = vec!["dump", pid.as_str()];
        args.extend(extra);
        let run = run_secopt(&args);
        assert_eq!(run.status.code(), Some(code), "{args:?}");
        let err = stderr_of(&run);
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(stdout_of(&run).is_empty(), "{args:?}");
    }
    for c in [&mut plain, &mut filtered] {
        c.kill().unwrap();
        c.wait().unwrap();
    }

    // Seccomp strict mode has no filter either: exit 1, saying which mode it is.
    let strict = strict_mode_child();
    let run = run_secopt(&["dump", &strict.to_string()]);
    // SAFETY: kill and waitpid on the child forked above, which nothing else reaps.
    unsafe {
        libc::kill(strict, libc::SIGKILL);
        libc::waitpid(strict, std::ptr::null_mut(), 0);
    }
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    assert!(stderr_of(&run).contains("seccomp strict mode"));
    // A process that has exited and is not reaped yet (a zombie) cannot be traced, even by
    // root: said as such, not as a missing permission.
    let mut zombie = sleeper(vec![raw_filter(FIRST)]);
    zombie.kill().unwrap();
    let pid = zombie.id();
    while state(pid) != 'Z' {
        std::thread::sleep(Duration::from_millis(5));
    }
    let run = run_secopt(&["dump", &pid.to_string()]);
    let err = stderr_of(&run);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("it has exited") && !err.contains("needs root"),
        "{err}"
    );
    zombie.wait().unwrap();
}

/// Seccomp filters are per thread: in a process whose threads installed different filters
/// (tests/data/thread_filters.c: the main thread one filter, two workers two, a third none),
/// `dump PID` lists PID's own stack and says which threads have another number of filters,
/// and which `dump` reads them, without stopping them.
#[test]
fn dump_says_which_threads_have_other_filters() {
    if !root_or_skip("dump-threads") {
        return;
    }
    let dir = TempDir::new("dump-threads");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/thread_filters.c");
    let exe = dir.join("thread_filters");
    let status = Command::new("cc")
        .args(["-O1", "-Wall", "-pthread", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on {}", src.display());
    /// Kills the process however the test ends (a panic must not leave it running).
    struct Killed(Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Killed(
        Command::new(&exe)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start thread_filters"),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.0.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    let pid = child.0.id();
    let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().parse().unwrap())
        .collect();
    tids.sort_unstable();
    // Threads are numbered in creation order: the main thread, two with B twice, one with none.
    let [main, b1, b2, none] = tids[..] else {
        panic!("{tids:?}")
    };

    let run = run_secopt(&["dump", &main.to_string(), "--format", "json"]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    let doc: Value = serde_json::from_str(&stdout_of(&run)).unwrap();
    assert_eq!(doc["filter_count"], 1);
    assert_eq!(doc["filters"][0]["length"], 1);
    let notes: Vec<&str> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with(&format!(
            "threads {b1} (thread_filters), {b2} (thread_filters) of this process have 2 filters, not 1"
        )) && notes[0].contains(&format!("`secopt dump {b1}` reads the first's")),
        "{notes:?}"
    );
    assert!(
        notes[1].starts_with(&format!(
            "thread {none} (thread_filters) of this process has no filter, not 1"
        )),
        "{notes:?}"
    );
    // The same notes on stderr, whatever the output.
    assert!(stderr_of(&run).contains("secopt: note: "));

    // From a worker: the main thread and the one without, not the sibling with as many.
    let run = run_secopt(&["dump", &b1.to_string()]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    let err = stderr_of(&run);
    assert!(
        err.contains(&format!(
            "thread {main} (thread_filters) of this process has 1 filter, not 2"
        )),
        "{err}"
    );
    assert!(!err.contains(&format!("{b2} (")), "{err}");

    // A thread without a filter: exit 1, and where the filters are.
    let run = run_secopt(&["dump", &none.to_string()]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    assert!(
        stderr_of(&run).contains(&format!("`secopt dump {main}` reads them")),
        "{}",
        stderr_of(&run)
    );
}

/// Reading the filters stops the thread; a sleep it was in resumes through `restart_syscall`,
/// and a filter that denies that call makes the sleep fail. `sleep 60` (clock_nanosleep)
/// under such a filter: dump warns that the process saw an error, and `sleep` does end early.
#[test]
fn dump_warns_when_the_reading_made_a_sleep_fail() {
    if !root_or_skip("dump-restart") {
        return;
    }
    // (The number only builds the filter; the oracle is what `sleep` does.)
    let restart_syscall = secopt::arch::Arch::host()
        .and_then(|a| a.syscalls().nr("restart_syscall"))
        .expect("the host's restart_syscall");
    let denies_restart = raw_filter(&[
        (BPF_LD_W_ABS, 0, 0, 0),
        (BPF_JEQ_K, 0, 1, restart_syscall),
        (BPF_RET_K, 0, 0, ERRNO | 1),
        (BPF_RET_K, 0, 0, ALLOW),
    ]);
    let mut child = sleeper(vec![denies_restart]);
    // Until it sleeps in clock_nanosleep (state S), not still starting.
    let started = Instant::now();
    while state(child.id()) != 'S' {
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(5));
    }
    let run = run_secopt(&["dump", &child.id().to_string()]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    let err = stderr_of(&run);
    assert!(
        err.contains("secopt: warning:")
            && err
                .contains("`clock_nanosleep`, which the kernel resumes through `restart_syscall`")
            && err.contains("ERRNO(1)"),
        "{err}"
    );
    // The oracle: `sleep` got the error and stopped well before its 60 seconds.
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(!status.success(), "{status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "sleep slept on"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // A filter that allows restart_syscall: no warning, and the sleep goes on.
    let mut child = sleeper(vec![raw_filter(FIRST)]);
    while state(child.id()) != 'S' {
        std::thread::sleep(Duration::from_millis(5));
    }
    let run = run_secopt(&["dump", &child.id().to_string()]);
    assert!(!stderr_of(&run).contains("warning"), "{}", stderr_of(&run));
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none());
    child.kill().unwrap();
    child.wait().unwrap();
}
