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
//!
//! Chromium's sandbox filter (its `bpf_dsl` code generator) is read from a live headless
//! Chromium's renderer with `secopt dump` and checked the same way; `scripts/test.sh` installs
//! `chromium`.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "data/e2e_support.rs"]
mod support;

use secopt::bpf::insn::*;
use secopt::kernel::oracle::NATIVE_PASSTHROUGH_NRS;
use secopt::kernel::{Call, Entry, Oracle, OracleError};
use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
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
    let Some((lib, oracle)) = firejail_and_oracle(test) else {
        return;
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
        let before = read_program(input);
        let after = optimize_with_cli(
            std::slice::from_ref(input),
            &dir.join(&format!("out{n}.bpf")),
        );
        let calls = calls(&oracle, &argument_values(&[&before, &after]));
        same_on_kernel(&oracle, name, &before, &after, &calls);
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

/// Runs `secopt optimize INPUTS… -o OUT` and returns the output.
fn optimize_with_cli(inputs: &[PathBuf], out: &Path) -> Program {
    let mut args: Vec<&std::ffi::OsStr> = vec!["optimize".as_ref()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend(["-o".as_ref(), out.as_os_str()]);
    let run = run_secopt(&args);
    assert!(
        run.status.success(),
        "secopt optimize {inputs:?} failed: {}",
        stderr_of(&run)
    );
    read_program(out)
}

/// Asks the kernel about `calls` under `a` and `b` and requires the same answers.
fn same_on_kernel(oracle: &Oracle, what: &str, a: &Program, b: &Program, calls: &[Call]) {
    let want = oracle
        .run(a, calls)
        .unwrap_or_else(|e| panic!("{what}: the kernel on the reference: {e}"));
    let got = oracle
        .run(b, calls)
        .unwrap_or_else(|e| panic!("{what}: the kernel on the output: {e}"));
    for ((call, w), g) in calls.iter().zip(&want).zip(&got) {
        assert_eq!(
            w.value, g.value,
            "{what}: {call:?} is {:?} under the reference and {:?} under secopt's output",
            w.value, g.value
        );
    }
}

/// firejail's helper directory and the kernel oracle, or `None` after a loud skip (a
/// failure where they are required).
fn firejail_and_oracle(test: &str) -> Option<(PathBuf, Oracle)> {
    let Some(lib) = firejail_lib_dir() else {
        skip_or_fail(
            test,
            "firejail's fseccomp is not installed (scripts/test.sh installs `firejail`)",
        );
        return None;
    };
    Some((lib, oracle_or_skip(test)?))
}

/// The kernel oracle, or `None` after a loud skip (a failure where the oracle is required).
fn oracle_or_skip(test: &str) -> Option<Oracle> {
    match Oracle::new() {
        Ok(o) => Some(o),
        Err(OracleError::Unavailable(why)) => {
            assert!(
                std::env::var_os("SECOPT_REQUIRE_KERNEL_ORACLE").is_none(),
                "kernel oracle unavailable: {why}"
            );
            skip_or_fail(test, &format!("kernel oracle unavailable: {why}"));
            None
        }
        Err(e) => panic!("kernel oracle failed to start: {e}"),
    }
}

/// Kafel's, minijail's and gVisor's programs (`tests/data/peers/`, written by those compilers
/// from their own policy languages) and secopt's optimization of each: the kernel answers every
/// call of all three x86_64 entries alike under both.
#[test]
fn optimized_peer_programs_decide_as_theirs_on_the_kernel() {
    let test = "optimize-peers";
    let Some(oracle) = oracle_or_skip(test) else {
        return;
    };
    let dir = TempDir::new(test);
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/peers");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&peers)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bpf"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 14, "{inputs:?}");
    for (n, input) in inputs.iter().enumerate() {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let before = read_program(input);
        let after = optimize_with_cli(
            std::slice::from_ref(input),
            &dir.join(&format!("out{n}.bpf")),
        );
        let calls = calls(&oracle, &argument_values(&[&before, &after]));
        same_on_kernel(&oracle, &name, &before, &after, &calls);
        eprintln!(
            "{name}: {} -> {} instructions, {} calls agree",
            before.len(),
            after.len(),
            calls.len()
        );
    }
}

/// firejail stacks one filter per feature (`--seccomp` for each ABI,
/// `--memory-deny-write-execute`, `--protocol`, `--restrict-namespaces`): `secopt optimize`
/// of such a stack is one program, which the kernel must answer exactly as it answers the
/// joined stack (`bpf::stack::as_one_program`, itself checked against the kernel's own
/// stacking by `tests/stack_kernel.rs`).
#[test]
fn an_optimized_stack_of_firejail_filters_decides_as_the_stack_on_the_kernel() {
    let test = "optimize-firejail-stack";
    let Some((lib, oracle)) = firejail_and_oracle(test) else {
        return;
    };
    let dir = TempDir::new(test);
    let tool = lib.join("fseccomp");
    fseccomp(
        &tool,
        dir.path(),
        &["protocol", "build", "unix,inet,inet6", "protocol.bpf"],
    );
    fseccomp(
        &tool,
        dir.path(),
        &[
            "restrict-namespaces",
            "namespaces.bpf",
            "cgroup,ipc,net,mnt,pid,time,user,uts",
        ],
    );
    let stack: Vec<PathBuf> = [
        lib.join("seccomp"),
        lib.join("seccomp.32"),
        lib.join("seccomp.mdwx"),
        dir.join("protocol.bpf"),
        dir.join("namespaces.bpf"),
    ]
    .into();
    let filters: Vec<Program> = stack.iter().map(|p| read_program(p)).collect();
    let joined = secopt::bpf::stack::as_one_program(&filters).expect("firejail's filters join");
    let merged = optimize_with_cli(&stack, &dir.join("merged.bpf"));
    let total: usize = filters.iter().map(Program::len).sum();
    let calls = calls(&oracle, &argument_values(&[&joined, &merged]));
    same_on_kernel(&oracle, "firejail stack", &joined, &merged, &calls);
    eprintln!(
        "firejail stack of {}: {total} instructions in all -> {}, {} calls agree",
        filters.len(),
        merged.len(),
        calls.len()
    );
}

/// The whole way a user takes: firejail sandboxes `sleep` with several features, `secopt
/// dump` reads the stack back from the kernel, `secopt optimize` joins it, and the kernel
/// answers the output as it answers the joined stack. firejail needs namespaces a container
/// may not grant; when it cannot start its sandbox here, this test skips loudly (even under
/// `SECOPT_REQUIRE_E2E=1`: the stack test above covers the same filters without it).
#[test]
fn a_firejail_sandbox_s_filters_dumped_and_joined_decide_as_the_sandbox_on_the_kernel() {
    let test = "firejail-sandbox-dump";
    if which("firejail").is_none() {
        skip_or_fail(
            test,
            "firejail is not installed (scripts/test.sh installs it)",
        );
        return;
    }
    if !is_root() {
        skip_or_fail(test, "reading a process's filters needs root");
        return;
    }
    let Some(oracle) = oracle_or_skip(test) else {
        return;
    };
    let dir = TempDir::new(test);
    // A duration no other process uses, to find the sandboxed sleep by its command line.
    let marker = format!("3{}.25", std::process::id());
    let mut firejail = Command::new("firejail")
        .args([
            "--noprofile",
            "--quiet",
            "--seccomp",
            "--memory-deny-write-execute",
            "--protocol=unix,inet,inet6",
            "--restrict-namespaces",
            "sleep",
            &marker,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start firejail");
    let started = std::time::Instant::now();
    let sleeper = loop {
        if let Some(pid) = find_process(&["sleep", &marker]) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            if status.contains("Seccomp:\t2") {
                break Some(pid);
            }
        }
        if firejail.try_wait().unwrap().is_some() || started.elapsed().as_secs() > 15 {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let Some(pid) = sleeper else {
        let _ = firejail.kill();
        let out = firejail.wait_with_output().unwrap();
        eprintln!(
            "\n*** SKIPPED {test}: firejail did not start its sandbox here: {} ***\n",
            stderr_of(&out).trim()
        );
        return;
    };
    let listing = run_secopt(&["dump", &pid.to_string(), "--format", "json"]);
    assert!(listing.status.success(), "{}", stderr_of(&listing));
    let count = serde_json::from_slice::<serde_json::Value>(&listing.stdout).unwrap()
        ["filter_count"]
        .as_u64()
        .unwrap() as usize;
    assert!(count >= 3, "firejail installed {count} filters");
    // Each filter to its own file, f0.bpf the oldest.
    let pattern = dir.join("f{}.bpf");
    let run = run_secopt(&["dump", &pid.to_string(), "-o", pattern.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    let files: Vec<PathBuf> = (0..count).map(|i| dir.join(&format!("f{i}.bpf"))).collect();
    let _ = firejail.kill();
    let _ = firejail.wait();
    let filters: Vec<Program> = files.iter().map(|p| read_program(p)).collect();
    let joined = secopt::bpf::stack::as_one_program(&filters).expect("firejail's filters join");
    let merged = optimize_with_cli(&files, &dir.join("merged.bpf"));
    let calls = calls(&oracle, &argument_values(&[&joined, &merged]));
    same_on_kernel(&oracle, "firejail sandbox", &joined, &merged, &calls);
    let total: usize = filters.iter().map(Program::len).sum();
    eprintln!(
        "firejail sandbox: {count} filters, {total} instructions in all -> {}, {} calls agree",
        merged.len(),
        calls.len()
    );
}

/// The pid of a process whose command line is exactly `argv`.
fn find_process(argv: &[&str]) -> Option<u32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        (std::fs::read(e.path().join("cmdline")).ok()? == want).then_some(pid)
    })
}

/// Chromium's own sandbox: its seccomp-bpf policies are compiled by its `bpf_dsl` (search
/// trees of `jge` over the numbers, `jset` to turn away x32, `TRAP` to its SIGSYS handler,
/// argument checks on `clone`, `mmap`, `fcntl`, `ioctl`, …). A headless Chromium started as an
/// unprivileged user installs that filter in its renderers; `secopt dump` reads one back, and
/// `secopt optimize`'s output must get every answer from the kernel that Chromium's own does.
#[test]
fn chromium_s_renderer_filter_dumped_and_optimized_decides_as_chromium_on_the_kernel() {
    let test = "chromium-renderer";
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(which)
    else {
        skip_or_fail(
            test,
            "Chromium is not installed (scripts/test.sh installs `chromium`)",
        );
        return;
    };
    if !is_root() || which("setpriv").is_none() {
        skip_or_fail(
            test,
            "needs root and setpriv (to start Chromium as nobody and read its filter)",
        );
        return;
    }
    let Some(oracle) = oracle_or_skip(test) else {
        return;
    };
    let dir = TempDir::new(test);
    // Chromium refuses to sandbox itself as root: run it as nobody, in a directory it owns.
    const NOBODY: u32 = 65534;
    std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).unwrap();
    let log = std::fs::File::create(dir.join("chromium.log")).unwrap();
    let mut browser = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&chromium)
        .args(["--headless=new", "--disable-gpu", "--no-first-run"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("about:blank")
        .env("HOME", dir.path())
        .current_dir(dir.path())
        .process_group(0)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start chromium");
    let group = browser.id() as i32;
    let started = std::time::Instant::now();
    let renderer = loop {
        if let Some(pid) = sandboxed_renderer(group) {
            break Some(pid);
        }
        if browser.try_wait().unwrap().is_some() || started.elapsed().as_secs() > 30 {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let input = dir.join("renderer.bpf");
    let dumped =
        renderer.map(|pid| run_secopt(&["dump", &pid.to_string(), "-o", input.to_str().unwrap()]));
    // SAFETY: signals the process group this test started.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = browser.wait();
    let Some(dumped) = dumped else {
        eprintln!(
            "\n*** SKIPPED {test}: Chromium started no sandboxed renderer here (no user \
             namespaces?): {} ***\n",
            std::fs::read_to_string(dir.join("chromium.log"))
                .unwrap_or_default()
                .trim()
        );
        return;
    };
    assert!(dumped.status.success(), "{}", stderr_of(&dumped));
    let before = read_program(&input);
    let after = optimize_with_cli(std::slice::from_ref(&input), &dir.join("out.bpf"));
    let calls = calls(&oracle, &argument_values(&[&before, &after]));
    same_on_kernel(
        &oracle,
        "Chromium's renderer filter",
        &before,
        &after,
        &calls,
    );
    eprintln!(
        "Chromium renderer: {} -> {} instructions, {} calls agree",
        before.len(),
        after.len(),
        calls.len()
    );
}

/// A process of process group `group` that runs as a Chromium renderer and has its seccomp
/// filter (`Seccomp: 2`). Chromium rewrites its children's command lines into one string.
fn sandboxed_renderer(group: i32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        // pid (comm) state ppid pgrp …: comm may hold spaces, so count from its `)`.
        let pgrp: i32 = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(2)?
            .parse()
            .ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let status = std::fs::read_to_string(e.path().join("status")).ok()?;
        (pgrp == group
            && String::from_utf8_lossy(&cmdline).contains("--type=renderer")
            && status.contains("Seccomp:\t2"))
        .then_some(pid)
    })
}
