//! End to end with a real container runtime: runc (Debian's 1.1.5, linked with libseccomp
//! 2.5.4) runs a busybox container whose config carries a profile from `../shared/profiles/oci/`;
//! the test reads back the filter runc actually installed (`secopt dump`, i.e.
//! `PTRACE_SECCOMP_GET_FILTER` on the container's process) and checks that secopt's `--runc-compat` compilation of the same profile
//! decides identically.
//!
//! Needs root, `runc` and a static `busybox` (scripts/test.sh installs `runc` and
//! `busybox-static`). Without them the tests skip loudly; with `SECOPT_REQUIRE_E2E=1` (CI)
//! they fail instead.
//!
//! Docker's profile is in moby's format (`archMap`, `includes`/`excludes`), which runc does not
//! understand (Go's JSON decoder ignores the unknown fields, so runc would silently apply every
//! rule). The test converts it to plain OCI itself, following moby's rules for an amd64 host with
//! Docker's default capabilities, and feeds that to runc. One test feeds runc the moby profile
//! as it is: secopt reads a whole config.json as runc does, ignoring those fields.
//!
//! runc resolves names with its libseccomp and skips those it does not know (2.5.4 knows
//! syscalls up to Linux 6.7; Docker's profile names 8 newer ones), so secopt compiles with
//! the same table: through the library with `ResolveOptions::resolver` (always), and through
//! `secopt compile --syscall-table libseccomp` when the `libseccomp` feature is built. With
//! secopt's own Linux 6.18 tables the filters differ exactly where libseccomp lacks names,
//! which one test shows.
//!
//! Equivalence is checked by an interpreter sweep over every syscall number 0..1024, the x32
//! range, -1 and high numbers, for every arch token in the filter and one outside it, times the
//! boundary values of every argument constant of the profile, wherever either program reads an
//! argument. When the binary has a `verify` verb, `secopt verify` must also say "equal".
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "data/e2e_support.rs"]
mod support;

mod common;

use common::libseccomp_names::{libseccomp_nr, libseccomp_resolver, libseccomp_version, scmp_arch};
use libseccomp::ScmpSyscall;
use secopt::arch::Arch;
use secopt::bpf::{interp, Program, RetVal, SeccompData};
use secopt::compile::{self, CompileOptions};
use secopt::policy::{self, ResolveOptions};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use support::*;

/// Docker's default capabilities (moby oci/caps/defaults.go).
const DOCKER_DEFAULT_CAPS: [&str; 14] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
];

// include/uapi/linux/audit.h
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
const X32_BIT: u32 = 0x4000_0000;

/// Whether the ELF file at `path` has no program interpreter (is statically linked), read
/// from its program headers (ELF64 little-endian, `PT_INTERP` = 3).
fn is_static_elf(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return false;
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(54), u16_at(56));
    (0..phnum).all(|i| {
        let o = phoff + i * phentsize;
        o + 4 <= bytes.len() && u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) != 3
    })
}

/// The tools the runc tests need, or `None` after a loud skip.
struct Tools {
    runc: PathBuf,
    busybox: PathBuf,
}

fn tools(test: &str) -> Option<Tools> {
    if !is_root() {
        skip_or_fail(test, "runc and PTRACE_SECCOMP_GET_FILTER need root");
        return None;
    }
    let found = require_tools(test, &["runc", "busybox"])?;
    let busybox = found[1].clone();
    if !is_static_elf(&busybox) {
        skip_or_fail(
            test,
            &format!(
                "{} is not statically linked (install busybox-static)",
                busybox.display()
            ),
        );
        return None;
    }
    Some(Tools {
        runc: found[0].clone(),
        busybox,
    })
}

/// A running container, deleted (with `runc delete -f`) when dropped.
struct Container {
    runc: PathBuf,
    state_root: PathBuf,
    id: String,
    pid: i32,
}

impl Container {
    fn runc(&self) -> Command {
        let mut c = Command::new(&self.runc);
        c.arg("--root").arg(&self.state_root);
        c
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = self
            .runc()
            .args(["delete", "-f", &self.id])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Builds a bundle in `dir` (busybox rootfs, `runc spec` edited) whose process sleeps under
/// `seccomp`, and starts it detached.
fn start_container(tools: &Tools, dir: &Path, tag: &str, seccomp: &Value) -> Container {
    try_start_container(tools, dir, tag, seccomp, &["sleep", "30"])
        .unwrap_or_else(|log| panic!("runc run failed: {log}"))
}

/// [`start_container`], or runc's log when `runc run` fails.
fn try_start_container(
    tools: &Tools,
    dir: &Path,
    tag: &str,
    seccomp: &Value,
    args: &[&str],
) -> Result<Container, String> {
    let bundle = dir.join("bundle");
    let bin = bundle.join("rootfs/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(&tools.busybox, bin.join("busybox")).unwrap();
    for applet in ["sh", "sleep", "true", "cat"] {
        std::os::unix::fs::symlink("busybox", bin.join(applet)).unwrap();
    }
    let spec = Command::new(&tools.runc)
        .args(["spec", "--bundle"])
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(spec.status.success(), "runc spec: {}", stderr_of(&spec));
    let config_path = bundle.join("config.json");
    let mut config: Value = serde_json::from_slice(&std::fs::read(&config_path).unwrap()).unwrap();
    // No terminal (detached, no console socket); no cgroup resources (nothing here needs
    // limits, and they are what breaks runtimes on hosts with unusual cgroup set-ups).
    config["process"]["terminal"] = json!(false);
    config["process"]["args"] = json!(args);
    if let Some(linux) = config["linux"].as_object_mut() {
        linux.remove("resources");
    }
    config["linux"]["seccomp"] = seccomp.clone();
    std::fs::write(&config_path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();

    let state_root = dir.join("runc-state");
    let id = format!("secopt-{tag}-{}", std::process::id());
    let mut container = Container {
        runc: tools.runc.clone(),
        state_root,
        id: id.clone(),
        pid: 0,
    };
    let started = Instant::now();
    let log = dir.join("runc.log");
    let run = container
        .runc()
        .args(["run", "-d", "--bundle"])
        .arg(&bundle)
        .arg(&id)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .status()
        .unwrap();
    if !run.success() {
        return Err(std::fs::read_to_string(&log).unwrap_or_default());
    }
    let state = container.runc().args(["state", &id]).output().unwrap();
    assert!(state.status.success(), "runc state: {}", stderr_of(&state));
    let state: Value = serde_json::from_slice(&state.stdout).unwrap();
    assert_eq!(state["status"], "running", "{state}");
    container.pid = state["pid"].as_i64().unwrap() as i32;
    eprintln!(
        "runc run -d took {:?}; container {id} pid {}",
        started.elapsed(),
        container.pid
    );
    Ok(container)
}

/// The filter `pid` runs, read back from the kernel with `secopt dump` (the binary, as a
/// user would: `PTRACE_SECCOMP_GET_FILTER`), written to `dir`.
fn dump_filter(pid: i32, dir: &Path) -> Result<Program, String> {
    let out = dir.join("dumped.bpf");
    let run = run_secopt(&["dump", &pid.to_string(), "-o", out.to_str().unwrap()]);
    if !run.status.success() {
        return Err(stderr_of(&run));
    }
    let bytes = std::fs::read(&out).map_err(|e| e.to_string())?;
    Program::from_raw(&bytes).map_err(|e| e.to_string())
}

/// `major.minor` of the running kernel, from /proc.
fn running_kernel() -> (u32, u32) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut parts = release.trim().split(['.', '-']);
    let major = parts.next().unwrap().parse().unwrap();
    let minor = parts.next().unwrap().parse().unwrap();
    (major, minor)
}

fn parse_version(s: &str) -> (u32, u32) {
    let mut parts = s.split('.');
    (
        parts.next().unwrap().parse().unwrap(),
        parts.next().unwrap_or("0").parse().unwrap(),
    )
}

/// moby's profile → OCI conversion (moby profiles/seccomp/seccomp_linux.go `setupSeccomp`)
/// for an amd64 host with Docker's default capabilities, written independently of secopt.
fn moby_to_oci(profile: &Value, kernel: (u32, u32)) -> Value {
    let native = "SCMP_ARCH_X86_64";
    let go_arch = "amd64";
    let has = |list: &Value, item: &str| {
        list.as_array()
            .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(item)))
    };
    let mut arches = vec![json!(native)];
    for entry in profile["archMap"].as_array().into_iter().flatten() {
        if entry["architecture"] == native {
            arches.extend(
                entry["subArchitectures"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            );
        }
    }
    let mut syscalls = Vec::new();
    for rule in profile["syscalls"].as_array().unwrap() {
        let ex = &rule["excludes"];
        if DOCKER_DEFAULT_CAPS.iter().any(|c| has(&ex["caps"], c)) || has(&ex["arches"], go_arch) {
            continue;
        }
        if let Some(min) = ex["minKernel"].as_str() {
            if kernel >= parse_version(min) {
                continue;
            }
        }
        let inc = &rule["includes"];
        if let Some(caps) = inc["caps"].as_array() {
            if !caps
                .iter()
                .all(|c| DOCKER_DEFAULT_CAPS.contains(&c.as_str().unwrap()))
            {
                continue;
            }
        }
        if inc["arches"].as_array().is_some_and(|a| !a.is_empty()) && !has(&inc["arches"], go_arch)
        {
            continue;
        }
        if let Some(min) = inc["minKernel"].as_str() {
            if kernel < parse_version(min) {
                continue;
            }
        }
        let mut out = serde_json::Map::new();
        for key in ["names", "action", "errnoRet", "args"] {
            if !rule[key].is_null() {
                out.insert(key.to_string(), rule[key].clone());
            }
        }
        syscalls.push(Value::Object(out));
    }
    let mut oci = json!({
        "defaultAction": profile["defaultAction"],
        "architectures": arches,
        "syscalls": syscalls,
    });
    if !profile["defaultErrnoRet"].is_null() {
        oci["defaultErrnoRet"] = profile["defaultErrnoRet"].clone();
    }
    oci
}

/// The architectures an OCI profile's filter covers on an x86_64 host, native first.
fn profile_arches(oci: &Value) -> Vec<Arch> {
    let mut out = vec![Arch::X86_64];
    for a in oci["architectures"].as_array().into_iter().flatten() {
        let arch = match a.as_str().unwrap() {
            "SCMP_ARCH_X86_64" => continue,
            "SCMP_ARCH_X86" => Arch::X86,
            "SCMP_ARCH_X32" => Arch::X32,
            other => panic!("arch {other} not expected in this test"),
        };
        out.push(arch);
    }
    out
}

/// Every syscall name of an OCI profile.
fn profile_names(oci: &Value) -> Vec<String> {
    oci["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["names"].as_array().unwrap().iter())
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// What runc loads for `oci` on this host, as secopt compiles it through the library: names
/// resolved with the system libseccomp's table (runc's; `runc --version` names it), runc's
/// ENOSYS stub, and libseccomp's pre-2.6.1 merge of `<` rules when the library is older.
fn secopt_as_runc(oci: &Value) -> compile::CompiledFilter {
    let bytes = serde_json::to_vec(oci).unwrap();
    let policy = policy::oci::parse(&bytes, "profile.json").unwrap();
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        resolver: Some(libseccomp_resolver()),
        ..Default::default()
    };
    let resolved = policy::resolve(&policy, &resolve).unwrap();
    let options = CompileOptions {
        runc_compat: true,
        libseccomp_merge_bug: libseccomp_version() < (2, 6, 1),
        ..Default::default()
    };
    compile::compile(&resolved, &options).unwrap()
}

/// Boundary values of every argument constant of the profile, per argument index.
fn argument_boundaries(oci: &Value) -> BTreeMap<u8, Vec<u64>> {
    let mut per_index: BTreeMap<u8, BTreeSet<u64>> = BTreeMap::new();
    for rule in oci["syscalls"].as_array().unwrap() {
        for arg in rule["args"].as_array().into_iter().flatten() {
            let index = arg["index"].as_u64().unwrap() as u8;
            let value = arg["value"].as_u64().unwrap();
            let value_two = arg["valueTwo"].as_u64().unwrap_or(0);
            let set = per_index.entry(index).or_default();
            set.extend([
                0,
                1,
                0x7fff_ffff,
                0x8000_0000,
                0xffff_ffff,
                1 << 32,
                u64::MAX,
            ]);
            set.insert(0xffff_ffff_0000_0000);
            if arg["op"] == "SCMP_CMP_MASKED_EQ" {
                let (mask, target) = (value, value_two & value);
                set.extend([target, target | !mask, !mask, target | (1 << 32)]);
                for bit in 0..64 {
                    if mask & (1 << bit) != 0 {
                        set.insert(target ^ (1 << bit));
                    }
                }
            } else {
                for v in [value, value_two] {
                    set.extend([
                        v.wrapping_sub(1),
                        v,
                        v.wrapping_add(1),
                        v ^ (1 << 32),
                        v & 0xffff_ffff,
                        v | 0xffff_ffff_0000_0000,
                        (v & 0xffff_ffff) | (1 << 32),
                    ]);
                }
            }
        }
    }
    per_index
        .into_iter()
        .map(|(i, s)| (i, s.into_iter().collect()))
        .collect()
}

/// Every combination of the boundary values over the argument indices in `bounds`.
fn argument_vectors(bounds: &BTreeMap<u8, Vec<u64>>) -> Vec<[u64; 6]> {
    let mut vectors = vec![[0u64; 6]];
    for (&index, values) in bounds {
        vectors = vectors
            .into_iter()
            .flat_map(|v| {
                values.iter().map(move |&x| {
                    let mut w = v;
                    w[index as usize] = x;
                    w
                })
            })
            .collect();
    }
    vectors
}

/// Syscall numbers of the sweep: 0..1024, the same with the x32 bit, -1 and high numbers.
fn swept_numbers() -> Vec<u32> {
    let mut nrs: Vec<u32> = (0..1024).collect();
    nrs.extend((0..1024).map(|n| n | X32_BIT));
    nrs.extend([
        u32::MAX,
        u32::MAX - 1,
        0x3fff_ffff,
        X32_BIT | 0x3fff_ffff,
        0x7fff_ffff,
        0x8000_0000,
        0xbfff_ffff,
        0x0001_0000,
        4096,
        2048,
    ]);
    nrs
}

/// Inputs on which two programs differ: consecutive numbers with the same answers form one
/// entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Difference {
    token: u32,
    args: [u64; 6],
    a: RetVal,
    b: RetVal,
    first: u32,
    last: u32,
}

/// Runs two programs over the sweep; returns the number of inputs checked and where they
/// differ.
fn differences(
    a: &Program,
    b: &Program,
    tokens: &[u32],
    arg_vectors: &[[u64; 6]],
) -> (u64, Vec<Difference>) {
    // Words 0 and 1 are nr and arch; a read of any other (instruction pointer, args) means
    // the decision may depend on the arguments.
    const NOT_NR_OR_ARCH: u16 = !0b11;
    let mut checked = 0u64;
    let mut diffs: Vec<Difference> = Vec::new();
    for &token in tokens {
        for nr in swept_numbers() {
            let zero = SeccompData::new(token, nr as i32, [0; 6]);
            let ta = interp::trace(a, &zero).unwrap();
            let tb = interp::trace(b, &zero).unwrap();
            let reads_args = (ta.words_read | tb.words_read) & NOT_NR_OR_ARCH != 0;
            let vectors: &[[u64; 6]] = if reads_args { arg_vectors } else { &[[0; 6]] };
            for args in vectors {
                let data = SeccompData::new(token, nr as i32, *args);
                let (ra, rb) = (
                    interp::eval(a, &data).unwrap(),
                    interp::eval(b, &data).unwrap(),
                );
                checked += 1;
                if ra == rb {
                    continue;
                }
                match diffs.last_mut() {
                    Some(d)
                        if (d.token, d.args, d.a, d.b) == (token, *args, ra, rb)
                            && d.last.wrapping_add(1) == nr =>
                    {
                        d.last = nr;
                    }
                    _ => diffs.push(Difference {
                        token,
                        args: *args,
                        a: ra,
                        b: rb,
                        first: nr,
                        last: nr,
                    }),
                }
            }
        }
    }
    (checked, diffs)
}

/// Compares two programs over the sweep; returns the number of inputs checked, or the first
/// differences found, as text.
fn sweep(
    a: &Program,
    b: &Program,
    tokens: &[u32],
    arg_vectors: &[[u64; 6]],
) -> Result<u64, Vec<String>> {
    let (checked, diffs) = differences(a, b, tokens, arg_vectors);
    if diffs.is_empty() {
        return Ok(checked);
    }
    let total = diffs.len();
    let mut lines: Vec<String> = diffs
        .into_iter()
        .take(20)
        .map(|d| {
            let nrs = if d.first == d.last {
                format!("nr {:#x}", d.first)
            } else {
                format!("nr {:#x}..={:#x}", d.first, d.last)
            };
            format!(
                "arch {:#x} {nrs} args {:x?}: runc {:?}, secopt {:?}",
                d.token, d.args, d.a, d.b
            )
        })
        .collect();
    if total > 20 {
        lines.push(format!("... {} more", total - 20));
    }
    Err(lines)
}

/// Whether the binary has a `verify` verb.
fn has_verify_verb() -> bool {
    run_secopt(&["verify", "--help"]).status.success()
}

/// secopt's verifier proves the filter runc installed equal to secopt's.
fn assert_proved_equal(installed: &Program, compiled: &Program) {
    let verdict = secopt::verify::equivalent(
        installed,
        compiled,
        &secopt::verify::VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(verdict, secopt::verify::Verdict::Equal);
}

/// Starts a container under `oci` and returns the one filter runc installed, or `None`
/// after a loud skip.
fn runc_filter(test: &str, dir: &TempDir, oci: &Value) -> Option<Program> {
    let tools = tools(test)?;
    let container = start_container(&tools, dir.path(), test, oci);
    // Without --index, `dump -o` refuses a process with several filters: runc 1.1 installs
    // exactly one.
    let filter = dump_filter(container.pid, dir.path());
    drop(container);
    match filter {
        Ok(f) => Some(f),
        Err(e) if e.contains("CONFIG_CHECKPOINT_RESTORE") => {
            skip_or_fail(test, &format!("kernel cannot read filters back: {e}"));
            None
        }
        Err(e) => panic!("secopt dump of runc's container: {e}"),
    }
}

/// A container's workload recorded from outside, as an operator would: `secopt record --pid`
/// attaches to the container's process (another PID namespace, under runc's filter for
/// Docker's default profile), follows the children it starts, and detaches, leaving the
/// container running; the filter read back with `secopt dump` is then optimized for that
/// workload and proved equal to itself.
#[test]
fn a_containers_calls_are_recorded_from_outside_and_its_filter_optimized_for_them() {
    let test = "runc-record-pid";
    let Some(tools) = tools(test) else {
        return;
    };
    let dir = TempDir::new(test);
    let container = try_start_container(
        &tools,
        dir.path(),
        test,
        &docker_oci(),
        &[
            "sh",
            "-c",
            "while :; do cat /proc/self/status > /dev/null; done",
        ],
    )
    .unwrap_or_else(|log| panic!("runc run failed: {log}"));
    let filter = match dump_filter(container.pid, dir.path()) {
        Ok(_) => dir.join("dumped.bpf"),
        Err(e) if e.contains("CONFIG_CHECKPOINT_RESTORE") => {
            skip_or_fail(test, &format!("kernel cannot read filters back: {e}"));
            return;
        }
        Err(e) => panic!("secopt dump of runc's container: {e}"),
    };
    let workload = dir.join("workload.json");
    let record = run_secopt(&[
        "record",
        "-q",
        "--pid",
        &container.pid.to_string(),
        "--duration",
        "1",
        "--filter",
        filter.to_str().unwrap(),
        "-o",
        workload.to_str().unwrap(),
    ]);
    assert!(record.status.success(), "{}", stderr_of(&record));
    let w: Value = serde_json::from_slice(&std::fs::read(&workload).unwrap()).unwrap();
    // The shell's children were followed: each round forks and executes busybox's cat, which
    // opens and reads a file.
    for name in ["execve", "openat", "read"] {
        assert!(w[name].as_u64().unwrap_or(0) > 10, "{name}: {w}");
    }
    assert_eq!(w["$exit"], "was still running when secopt detached");
    let state = container
        .runc()
        .args(["state", &container.id])
        .output()
        .unwrap();
    let state: Value = serde_json::from_slice(&state.stdout).unwrap();
    assert_eq!(state["status"], "running", "{state}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", container.pid)).unwrap();
    assert!(status.contains("TracerPid:\t0\n"), "{status}");

    let optimized = dir.join("fast.bpf");
    let run = run_secopt(&[
        "optimize",
        filter.to_str().unwrap(),
        "--weights",
        workload.to_str().unwrap(),
        "-o",
        optimized.to_str().unwrap(),
        "--report",
    ]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    eprintln!(
        "{test}: {} calls recorded\n{}",
        w["$total_calls"],
        String::from_utf8_lossy(&run.stdout)
    );
}

const TOKENS: [u32; 4] = [AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, 0];

/// Runs the whole comparison for one OCI profile (already in runc's format): runc's filter
/// against secopt's compiled with runc's syscall table.
fn compare_with_runc(test: &str, oci: &Value) {
    let started = Instant::now();
    let dir = TempDir::new(test);
    let Some(installed) = runc_filter(test, &dir, oci) else {
        return;
    };
    let compiled = secopt_as_runc(oci);
    let secopt_file = dir.join("secopt.bpf");
    std::fs::write(&secopt_file, compiled.to_raw()).unwrap();
    let compiled = compiled.into_program();

    // The command line gives the same reference lowering when it can use libseccomp's table,
    // and by default an optimized filter that must decide like runc's too.
    #[allow(unused_mut)]
    let mut candidates = vec![("secopt's reference lowering", compiled.clone())];
    #[cfg(feature = "libseccomp")]
    {
        let profile = dir.join("profile.json");
        std::fs::write(&profile, serde_json::to_vec_pretty(oci).unwrap()).unwrap();
        let flags = ["--runc-compat", "--syscall-table", "libseccomp"];
        let plain = compile_with_cli(
            &profile,
            &dir.join("cli-plain.bpf"),
            &[&flags[..], &["--no-optimize"]].concat(),
        );
        let plain = Program::from_raw(&plain).unwrap();
        // The merge-bug emulation is not a command-line option; profiles where it matters
        // have overlapping `<` rules, which these do not have.
        assert_eq!(
            plain, compiled,
            "{test}: `secopt compile --syscall-table libseccomp --no-optimize`"
        );
        let optimized = compile_with_cli(&profile, &secopt_file, &flags);
        let optimized = Program::from_raw(&optimized).unwrap();
        assert!(
            optimized.len() < compiled.len(),
            "{test}: optimized {} vs reference {}",
            optimized.len(),
            compiled.len()
        );
        candidates.push(("`secopt compile` (optimized)", optimized));
        // The arches it covers by default, given explicitly: the same filter. `--arch` picks
        // what the filter covers; what runc's stub covers stays what the profile lists.
        let arches: Vec<&str> = profile_arches(oci).iter().map(|a| a.name()).collect();
        let explicit = compile_with_cli(
            &profile,
            &dir.join("cli-arch.bpf"),
            &[&flags[..], &["--arch", &arches.join(",")]].concat(),
        );
        candidates.push((
            "`secopt compile --arch` (the default arches)",
            Program::from_raw(&explicit).unwrap(),
        ));
        // What `secopt exec` would install for the profile with runc's table.
        let out = secopt()
            .args(["exec", "-p"])
            .arg(&profile)
            .args(flags)
            .args(["--dry-run", "--format", "json", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{test}: {}", stderr_of(&out));
        let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
        let assembly = plan["assembly"].as_str().expect("the plan's assembly");
        candidates.push((
            "`secopt exec --syscall-table libseccomp`",
            secopt::bpf::asm::assemble(assembly).unwrap(),
        ));
    }

    let vectors = argument_vectors(&argument_boundaries(oci));
    for (what, program) in &candidates {
        match sweep(&installed, program, &TOKENS, &vectors) {
            Ok(checked) => eprintln!(
                "{test}: runc's filter ({} insns) and {what} ({} insns) agree on {checked} \
                 inputs ({} argument vectors); {:?} in all",
                installed.len(),
                program.len(),
                vectors.len(),
                started.elapsed()
            ),
            Err(diffs) => panic!(
                "{test}: {what} decides differently from runc's filter:\n{}",
                diffs.join("\n")
            ),
        }
    }

    if has_verify_verb() {
        let runc_file = dir.join("runc.bpf");
        std::fs::write(&runc_file, installed.to_raw()).unwrap();
        let out = secopt()
            .arg("verify")
            .arg(&runc_file)
            .arg(&secopt_file)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "secopt verify: {}{}",
            stdout_of(&out),
            stderr_of(&out)
        );
        eprintln!("{test}: secopt verify agrees: {}", stdout_of(&out).trim());
        // The profile itself against what runc installed, in one command: compiled on the fly
        // as runc would (its stub, its libseccomp's names).
        #[cfg(feature = "libseccomp")]
        {
            let profile = dir.join("profile.json");
            let out = secopt()
                .arg("verify")
                .arg(&runc_file)
                .arg(&profile)
                .args(["--runc-compat", "--syscall-table", "libseccomp"])
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "secopt verify runc.bpf profile.json --runc-compat: {}{}",
                stdout_of(&out),
                stderr_of(&out)
            );
        }
    } else {
        eprintln!("{test}: no `secopt verify` in this build; the interpreter sweep decided");
    }
}

fn docker_oci() -> Value {
    let moby: Value =
        serde_json::from_slice(&std::fs::read(shared_profile("oci/docker-default.json")).unwrap())
            .unwrap();
    moby_to_oci(&moby, running_kernel())
}

#[test]
fn runc_installs_what_secopt_compiles_for_dockers_default_profile() {
    let oci = docker_oci();
    assert_eq!(
        oci["architectures"],
        json!(["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"])
    );
    compare_with_runc("runc-docker-default", &oci);
}

/// The same container against `secopt compile --runc-compat` with secopt's own Linux 6.18
/// tables (the default): the filters differ, and only where runc's libseccomp lacks a name
/// the profile uses (those syscalls get runc's default action instead of their rule), or
/// where that moves runc's ENOSYS threshold down (numbers between runc's highest named
/// syscall and secopt's get ENOSYS from runc only). Each such name is seen to differ.
#[test]
fn secopts_own_tables_differ_from_runc_exactly_where_libseccomp_lacks_names() {
    let test = "runc-docker-builtin-table";
    let oci = docker_oci();
    let dir = TempDir::new(test);
    let Some(installed) = runc_filter(test, &dir, &oci) else {
        return;
    };
    let profile = dir.join("profile.json");
    std::fs::write(&profile, serde_json::to_vec_pretty(&oci).unwrap()).unwrap();
    let builtin = compile_with_cli(&profile, &dir.join("builtin.bpf"), &["--runc-compat"]);
    let builtin = Program::from_raw(&builtin).unwrap();

    let names = profile_names(&oci);
    // Per arch: numbers of names only secopt's table knows, runc's highest named number,
    // and an upper bound of secopt's.
    let mut expected = Vec::new();
    let mut lacking = BTreeSet::new();
    for arch in profile_arches(&oci) {
        let mut only_secopt = BTreeSet::new();
        let (mut runc_highest, mut secopt_highest) = (0, 0);
        for name in &names {
            let ours = arch.syscalls().nr(name);
            if let (Some(n), None) = (ours, libseccomp_nr(arch, name)) {
                only_secopt.insert(n);
                lacking.insert(name.clone());
            }
            // runc's `findLastSyscalls`: libseccomp's number, where positive (its
            // pseudo-numbers, such as socket calls' on i386, never count).
            if let Ok(raw) = ScmpSyscall::from_name_by_arch(name, scmp_arch(arch)) {
                runc_highest = runc_highest.max(i32::from(raw).max(0) as u32);
            }
            secopt_highest = secopt_highest.max(ours.unwrap_or(0));
        }
        expected.push((arch, only_secopt, runc_highest, secopt_highest));
    }
    let vectors = argument_vectors(&argument_boundaries(&oci));
    let (_, diffs) = differences(&installed, &builtin, &TOKENS, &vectors);
    assert!(!diffs.is_empty(), "the tables differ on Docker's profile");
    let mut seen = BTreeSet::new();
    for d in &diffs {
        for nr in d.first..=d.last {
            let arch = Arch::of_data(d.token, nr).expect("a difference on an arch of the filter");
            let (_, only_secopt, runc_highest, secopt_highest) = expected
                .iter()
                .find(|e| e.0 == arch)
                .unwrap_or_else(|| panic!("{d:x?}: {arch} is not in the filter"));
            let threshold = nr > *runc_highest && nr <= *secopt_highest;
            assert!(
                only_secopt.contains(&nr) || threshold,
                "{arch} nr {nr:#x}: runc {} vs secopt {} is not explained by a name libseccomp lacks",
                d.a,
                d.b
            );
            if only_secopt.contains(&nr) {
                seen.insert((arch, nr));
            }
        }
    }
    for (arch, only_secopt, _, _) in &expected {
        for nr in only_secopt {
            assert!(
                seen.contains(&(*arch, *nr)),
                "{arch} nr {nr}: no difference seen"
            );
        }
    }
    eprintln!(
        "{test}: {} difference ranges, all explained by names libseccomp {:?} lacks: {lacking:?}",
        diffs.len(),
        libseccomp_version()
    );
}

fn runc_test_profile() -> Value {
    serde_json::from_slice(
        &std::fs::read(shared_profile(
            "oci/runc-integration-seccomp_syscall_test1.json",
        ))
        .unwrap(),
    )
    .unwrap()
}

/// runc's own test profile as it is: no `architectures`, so runc's ENOSYS stub covers no
/// arch at all (patchbpf `findLastSyscalls` loops over `config.Architectures` only).
#[test]
fn runc_installs_what_secopt_compiles_for_runcs_own_test_profile() {
    compare_with_runc("runc-integration-test1", &runc_test_profile());
}

/// The same profile with its native arch listed (what Docker/podman always write): the stub
/// now applies, and the argument rules (same-index ORs, MASKED_EQ with `valueTwo`, ERRNO 55)
/// are checked against runc.
#[test]
fn runc_installs_what_secopt_compiles_for_runcs_test_profile_with_architectures() {
    let mut oci = runc_test_profile();
    oci["architectures"] = json!(["SCMP_ARCH_X86_64"]);
    compare_with_runc("runc-integration-test1-arch", &oci);
}

/// An errno on an action that takes none (TRAP, ALLOW, and the default action's): the
/// runtime spec asks runtimes to refuse it, but runc converts the action without it
/// (libcontainer/seccomp `getAction`) and starts the container. secopt warns and decides
/// alike (it refused such profiles until an audit ran one under runc); runc's filter is the
/// oracle.
#[test]
fn an_errno_on_an_action_without_one_is_ignored_as_runc_ignores_it() {
    let oci = json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "defaultErrnoRet": 5,
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [
            {"names": ["ptrace"], "action": "SCMP_ACT_TRAP", "errnoRet": 13},
            {"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22},
            {"names": ["getpgid"], "action": "SCMP_ACT_KILL_PROCESS", "errnoRet": 9},
            {"names": ["mount", "umount2", "pivot_root", "chroot", "swapon", "swapoff",
                       "reboot", "sethostname", "setdomainname", "iopl", "ioperm"],
             "action": "SCMP_ACT_ERRNO"}
        ]
    });
    compare_with_runc("errno-ignored", &oci);
}

/// runc reads config.json with Go's encoding/json, which takes a key for a field when it
/// differs only in case (`"Syscalls"`, `"NAMES"`, and `"nameſ"`: U+017F folds to `S`). secopt
/// once ignored such keys with a warning, and gave a weaker filter than runc installs (a rule's
/// `Args` dropped made its ALLOW unconditional). runc's filter is the oracle.
#[test]
fn keys_that_differ_in_case_mean_to_secopt_what_they_mean_to_runc() {
    let test = "go-key-case";
    let oci = json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64"],
        "Syscalls": [
            {"Names": ["ptrace"], "Action": "SCMP_ACT_ERRNO", "ErrnoRet": 7},
            {"names": ["personality"], "action": "SCMP_ACT_ERRNO",
             "Args": [{"Index": 0, "Value": 5, "Op": "SCMP_CMP_EQ"}]},
            {"nameſ": ["getpgid"], "ACTION": "SCMP_ACT_ERRNO", "errnoret": 9}
        ]
    });
    let compiled = secopt_as_runc(&oci).into_program();
    let x86_64 = Arch::X86_64.token();
    let decide = |name: &str, a0: u64| {
        let nr = libseccomp_nr(Arch::X86_64, name).unwrap() as i32;
        interp::eval(
            &compiled,
            &SeccompData::new(x86_64, nr, [a0, 0, 0, 0, 0, 0]),
        )
        .unwrap()
    };
    assert_eq!(decide("ptrace", 0), RetVal::errno(7));
    assert_eq!(decide("personality", 5), RetVal::errno(1));
    assert_eq!(decide("personality", 6), RetVal::ALLOW);
    assert_eq!(decide("getpgid", 0), RetVal::errno(9));
    let dir = TempDir::new(test);
    let Some(installed) = runc_filter(test, &dir, &oci) else {
        return;
    };
    assert_proved_equal(&installed, &compiled);
}

/// secopt's own moby front end (archMap, includes/excludes) gives the same filter as the
/// test's independent conversion to OCI.
#[test]
fn secopt_reads_moby_profiles_as_moby_converts_them() {
    let full = docker_oci();
    let dir = TempDir::new("moby-conversion");
    let converted = dir.join("converted.json");
    std::fs::write(&converted, serde_json::to_vec(&full).unwrap()).unwrap();
    let kernel = {
        let (a, b) = running_kernel();
        format!("{a}.{b}")
    };
    let extra = ["--runc-compat", "--caps", "default", "--kernel", &kernel];
    let from_moby = compile_with_cli(
        &shared_profile("oci/docker-default.json"),
        &dir.join("moby.bpf"),
        &extra,
    );
    let from_oci = compile_with_cli(&converted, &dir.join("oci.bpf"), &extra);
    let (a, b) = (
        Program::from_raw(&from_moby).unwrap(),
        Program::from_raw(&from_oci).unwrap(),
    );
    let tokens = [AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64];
    let vectors = argument_vectors(&argument_boundaries(&full));
    if let Err(diffs) = sweep(&a, &b, &tokens, &vectors) {
        panic!(
            "moby front end differs from the conversion:\n{}",
            diffs.join("\n")
        );
    }
}

/// A whole `config.json` is read as runc reads it: Docker's profile pasted into
/// `linux.seccomp` (with a legacy `name` entry and a podman `errno` added) keeps its moby and
/// podman fields, which runc ignores, so conditional rules apply unconditionally, `archMap`
/// covers nothing, the `name` entry names nothing and the errno string is not read. secopt
/// compiles the very config.json runc ran, says so field by field, and gives runc's filter.
#[test]
fn a_config_json_is_read_as_runc_reads_it_moby_and_podman_fields_ignored() {
    let test = "config-json-extensions";
    let mut moby: Value =
        serde_json::from_slice(&std::fs::read(shared_profile("oci/docker-default.json")).unwrap())
            .unwrap();
    let names = profile_names(&moby);
    assert!(!names.iter().any(|n| n == "sysfs" || n == "uselib"));
    let syscalls = moby["syscalls"].as_array_mut().unwrap();
    syscalls.push(json!({"name": "sysfs", "action": "SCMP_ACT_ALLOW"}));
    syscalls.push(json!({"names": ["uselib"], "action": "SCMP_ACT_ERRNO", "errno": "EACCES"}));
    let dir = TempDir::new(test);
    let Some(installed) = runc_filter(test, &dir, &moby) else {
        return;
    };
    // The command line says what runc ignores, field by field.
    let config = dir.join("bundle/config.json");
    let run = secopt()
        .args(["compile", "--runc-compat", "-o"])
        .arg(dir.join("cli.bpf"))
        .arg(&config)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr_of(&run));
    for field in ["archMap", "includes", "excludes", "name", "errno"] {
        let owner = if field == "errno" {
            "podman's"
        } else {
            "Docker's (moby's)"
        };
        assert!(
            stderr_of(&run).contains(&format!(".{field}: `{field}` is a field of {owner}")),
            "{field}: {}",
            stderr_of(&run)
        );
    }
    // The filter, with runc's syscall table (the library's resolver, in every build).
    let config: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(
        config["linux"]["seccomp"], moby,
        "runc ran the profile as written"
    );
    let compiled = secopt_as_runc(&config).into_program();
    let x86_64 = Arch::X86_64.token();
    let nr = |name: &str| libseccomp_nr(Arch::X86_64, name).unwrap() as i32;
    for (what, program) in [("runc's", &installed), ("secopt's", &compiled)] {
        let decide = |name: &str, args: [u64; 6]| {
            interp::eval(program, &SeccompData::new(x86_64, nr(name), args)).unwrap()
        };
        // `mount` is allowed by an `includes` of CAP_SYS_ADMIN; `sysfs` only by a `name`
        // entry; `uselib` gets the errno runc reads (`errnoRet`'s default, EPERM).
        assert_eq!(decide("mount", [0; 6]), RetVal::ALLOW, "{what}");
        assert_eq!(decide("sysfs", [0; 6]), RetVal::errno(1), "{what}");
        assert_eq!(decide("uselib", [0; 6]), RetVal::errno(1), "{what}");
    }
    assert_proved_equal(&installed, &compiled);
}

#[test]
fn the_sweep_notices_a_difference() {
    // The comparison itself must be able to fail: one changed errno is found.
    use secopt::bpf::insn::*;
    use secopt::bpf::Insn;
    let prog = |errno: u32| {
        Program::new(vec![
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 165, 0, 3),
            Insn::ld_abs(16),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
            Insn::ret(0x0005_0000 | errno),
            Insn::ret(0x7fff_0000),
        ])
    };
    let oci = json!({"syscalls": [{"names": ["mount"], "args": [{"index": 0, "value": 7, "op": "SCMP_CMP_EQ"}]}]});
    let vectors = argument_vectors(&argument_boundaries(&oci));
    assert!(sweep(&prog(1), &prog(1), &[AUDIT_ARCH_X86_64], &vectors).is_ok());
    let diffs = sweep(&prog(1), &prog(2), &[AUDIT_ARCH_X86_64], &vectors).unwrap_err();
    assert!(diffs[0].contains("nr 0xa5"), "{diffs:?}");
}

/// `--runc-compat` promises what runc loads; for a profile runc refuses to start, that is
/// nothing, and `secopt compile --runc-compat` must fail too (exit 2); without it, such a
/// profile is refused or compiled with a `runtime_refuses` warning. Oracle: runc itself, on
/// profiles it accepts and refuses for each reason secopt knows: an errno above what its
/// libseccomp takes, `SCMP_ACT_NOTIFY` without `listenerPath`, and on `write`, an empty name
/// (an entry without names it accepts).
#[test]
fn runc_refuses_exactly_what_secopt_refuses_under_runc_compat() {
    let test = "runc-refusals";
    let Some(tools) = tools(test) else { return };
    let getppid = |action: &str, extra: Value| {
        let mut rule = json!({"names": ["getppid"], "action": action});
        rule.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"], "syscalls": [rule]})
    };
    let arches = |list: &[&str]| {
        json!({"defaultAction": "SCMP_ACT_ALLOW", "architectures": list,
               "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO"}]})
    };
    let cases = [
        (
            "errno-4094",
            getppid("SCMP_ACT_ERRNO", json!({"errnoRet": 4094})),
            None,
        ),
        (
            "errno-4095",
            getppid("SCMP_ACT_ERRNO", json!({"errnoRet": 4095})),
            Some(""),
        ),
        (
            "default-errno-4095",
            json!({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 4095,
                   "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ALLOW"}]}),
            Some(""),
        ),
        (
            "trace-65535",
            getppid("SCMP_ACT_TRACE", json!({"errnoRet": 65535})),
            None,
        ),
        (
            "no-names",
            json!({"defaultAction": "SCMP_ACT_ALLOW",
                   "syscalls": [{"names": [], "action": "SCMP_ACT_ERRNO"}]}),
            None,
        ),
        (
            "empty-name",
            json!({"defaultAction": "SCMP_ACT_ALLOW",
                   "syscalls": [{"names": ["", "getppid"], "action": "SCMP_ACT_ERRNO"}]}),
            Some("empty string is not a valid syscall"),
        ),
        (
            "notify-no-listener",
            getppid("SCMP_ACT_NOTIFY", json!({})),
            Some("listenerPath"),
        ),
        (
            "notify-write",
            json!({"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "/nonexistent/agent.sock",
                   "syscalls": [{"names": ["write"], "action": "SCMP_ACT_NOTIFY"}]}),
            Some("write"),
        ),
        // libseccomp keeps one byte order per filter (x86_64 is the native arch here).
        (
            "big-endian-s390x",
            arches(&["SCMP_ARCH_X86_64", "SCMP_ARCH_S390X"]),
            Some("architecture"),
        ),
        (
            "big-endian-s390",
            arches(&["SCMP_ARCH_X86_64", "SCMP_ARCH_S390"]),
            Some("architecture"),
        ),
        (
            "little-endian-aarch64",
            arches(&["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"]),
            None,
        ),
    ];
    let mut refused = 0;
    for (tag, profile, runc_says) in cases {
        let dir = TempDir::new(&format!("refuse-{tag}"));
        let runc =
            try_start_container(&tools, dir.path(), tag, &profile, &["sleep", "30"]).map(drop);
        assert_eq!(runc.is_err(), runc_says.is_some(), "{tag}: runc: {runc:?}");
        if let (Err(log), Some(words)) = (&runc, runc_says) {
            assert!(
                log.contains(words),
                "{tag}: runc's log lacks {words:?}: {log}"
            );
            refused += 1;
        }
        let file = dir.join("profile.json");
        std::fs::write(&file, profile.to_string()).unwrap();
        let out = secopt()
            .arg("compile")
            .arg(&file)
            .args(["--runc-compat", "-o"])
            .arg(dir.join("f.bpf"))
            .output()
            .unwrap();
        let expected = if runc.is_ok() { 0 } else { 2 };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{tag}: {}",
            stderr_of(&out)
        );
        assert_eq!(dir.join("f.bpf").exists(), runc.is_ok(), "{tag}");
        // Without --runc-compat, a profile runc refuses is refused too, or compiled with a
        // `runtime_refuses` warning; one runc starts gets no such warning.
        let out = secopt()
            .arg("compile")
            .arg(&file)
            .args(["--no-verify", "--emit", "json"])
            .output()
            .unwrap();
        let warned = out.status.success() && {
            let filter: Value = serde_json::from_slice(&out.stdout).unwrap();
            filter["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["kind"] == "runtime_refuses")
        };
        if runc.is_ok() {
            assert!(
                out.status.success() && !warned,
                "{tag}: {}",
                stderr_of(&out)
            );
        } else {
            assert!(
                warned || out.status.code() == Some(2),
                "{tag}: {}",
                stderr_of(&out)
            );
        }
    }
    assert_eq!(refused, 7);
}

/// Where libseccomp's BPF generator misses an accumulator reload, the filter runc loads
/// decides otherwise than the profile's rules (docs/kernel-facts.md), and `secopt compile`
/// warns with an input where they differ. Oracle: the filter runc really installed, read back
/// with `secopt dump`, run on each warning's input: it must return what the warning says
/// libseccomp's filter returns, and secopt's filter what the rules give. The profile is the
/// red-team audit's (session 48) `semtimedop` rules, which libseccomp miscompiles for the
/// `ipc` multiplexer on x86.
#[test]
fn runc_loads_the_missed_reload_secopt_warns_of() {
    let test = "runc-missed-reload";
    let dir = TempDir::new(test);
    let oci = json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        "syscalls": [
            {"names": ["semtimedop"], "action": "SCMP_ACT_KILL_PROCESS", "args": [
                {"index": 1, "value": 0x8000_0000u64, "op": "SCMP_CMP_NE"},
                {"index": 4, "value": 4096, "op": "SCMP_CMP_GT"}]},
            {"names": ["semtimedop"], "action": "SCMP_ACT_KILL_PROCESS", "args": [
                {"index": 0, "value": 2, "op": "SCMP_CMP_GE"},
                {"index": 1, "value": 13, "op": "SCMP_CMP_GT"}]}
        ]
    });
    let Some(warned) = reload_warnings_match_runc(test, &dir, &oci) else {
        return;
    };
    assert!(
        warned.iter().any(|w| w.contains("semtimedop")),
        "{warned:?}"
    );
}

/// libseccomp's generator keeps one copy of each block for the whole filter, so a block
/// `setdomainname`'s one rule makes is also `sethostname`'s, placed from `sethostname`'s
/// walk without a load: `setdomainname` alone is compiled right, next to `sethostname` it is
/// not. secopt warns of both, and runc's installed filter bears each warning out.
#[test]
fn runc_loads_a_missed_reload_that_comes_from_another_syscalls_block() {
    let test = "runc-shared-block-reload";
    let dir = TempDir::new(test);
    let lt = json!({"index": 1, "value": 0xffff_ffffu64, "op": "SCMP_CMP_LT"});
    let gt_then_eq = json!([
        {"index": 1, "value": 0x1_0000_0005u64, "op": "SCMP_CMP_GT"},
        {"index": 1, "value": u64::MAX, "op": "SCMP_CMP_EQ"}]);
    let shared =
        json!({"names": ["setdomainname"], "action": "SCMP_ACT_ERRNO", "args": gt_then_eq});
    let oci = json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [
            {"names": ["sethostname"], "action": "SCMP_ACT_ERRNO", "args": [lt]},
            {"names": ["sethostname"], "action": "SCMP_ACT_ERRNO", "args": gt_then_eq},
            shared
        ]
    });
    let Some(warned) = reload_warnings_match_runc(test, &dir, &oci) else {
        return;
    };
    assert!(
        warned.iter().any(|w| w.contains("for `setdomainname`")),
        "{warned:?}"
    );
    // Its rule alone: no block of another syscall, nothing missed.
    let alone = dir.join("alone.json");
    let profile = json!({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [shared]});
    std::fs::write(&alone, serde_json::to_vec(&profile).unwrap()).unwrap();
    let run = run_secopt(&["compile", alone.to_str().unwrap(), "-o", "/dev/null"]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    assert!(!stderr_of(&run).contains("misses an accumulator reload"));
}

/// Starts a container under runc with `oci`, compiles `oci` with `secopt compile
/// --runc-compat`, and checks each missed-reload warning against the filter runc installed
/// (read back with `secopt dump`): on the warning's input, runc's filter returns what the
/// warning says libseccomp's returns, and secopt's what the rules give. The warnings, or
/// `None` where runc is not usable here.
fn reload_warnings_match_runc(test: &str, dir: &TempDir, oci: &Value) -> Option<Vec<String>> {
    let installed = runc_filter(test, dir, oci)?;
    let profile = dir.join("profile.json");
    std::fs::write(&profile, serde_json::to_vec_pretty(&oci).unwrap()).unwrap();
    let out = dir.join("secopt.bpf");
    let run = run_secopt(&[
        "compile",
        profile.to_str().unwrap(),
        "--runc-compat",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    let ours = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    let stderr = stderr_of(&run);
    let warnings: Vec<String> = stderr
        .lines()
        .filter(|l| l.contains("misses an accumulator reload"))
        .map(str::to_string)
        .collect();
    assert!(!warnings.is_empty(), "{stderr}");
    for warning in &warnings {
        let between = |start: &str, end: &str| {
            let (_, rest) = warning
                .split_once(start)
                .unwrap_or_else(|| panic!("{warning}"));
            rest.split_once(end)
                .unwrap_or_else(|| panic!("{warning}"))
                .0
        };
        // "for `ipc` (which carries the rules for `semtimedop`) on x86 tests …"
        let syscall = between("for `", "`");
        let before_tests = warning.split_once(" tests ").unwrap().0;
        let arch = Arch::from_name(before_tests.rsplit(' ').next().unwrap()).unwrap();
        let args: Vec<u64> = between("with args [", "]")
            .split(", ")
            .map(|v| u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap())
            .collect();
        let nr = arch.syscalls().nr(syscall).unwrap();
        let data = SeccompData::new(arch.token(), nr as i32, args.try_into().unwrap());
        let theirs = interp::eval(&installed, &data).unwrap();
        let secopts = interp::eval(&ours, &data).unwrap();
        assert_ne!(theirs, secopts, "{warning}");
        assert!(
            warning.contains(&format!(
                "libseccomp's filter returns {theirs} where the rules give {secopts}"
            )),
            "runc's filter returns {theirs}, secopt's {secopts}: {warning}"
        );
    }
    Some(warnings)
}
