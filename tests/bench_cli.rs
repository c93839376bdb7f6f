//! `secopt bench` from the command line: bad input fails with exit 2, a clear message, and no
//! output file written; a short real run (few rounds) produces well-formed text, JSON and SVG.
//! Structure only: no assertion here looks at a timing value.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn secopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .expect("run secopt")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("secopt-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn shared(rel: &str) -> String {
    format!("{}/../shared/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `secopt bench ARGS -o DIR/out --plot DIR/out.svg` and checks it fails with exit 2,
/// a message containing `must_contain`, and neither output file.
fn assert_refused(dir: &Path, args: &[&str], must_contain: &[&str]) {
    let out_file = dir.join("out.txt");
    let svg = dir.join("out.svg");
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    let (o, s) = (out_file.to_str().unwrap(), svg.to_str().unwrap());
    all.extend_from_slice(&["--rounds", "2", "--calls", "5", "-o", o, "--plot", s]);
    let out = secopt(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.starts_with("secopt: error: "), "{stderr}");
    for m in must_contain {
        assert!(stderr.contains(m), "{args:?}: {stderr} lacks {m:?}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !out_file.exists() && !svg.exists(),
        "{args:?} left output behind"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("secopt-tmp") || n.starts_with("out"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let dir = tmpdir("bad");
    let missing = dir.join("no-such-workload.txt");
    let missing = missing.to_str().unwrap();
    assert_refused(&dir, &["-w", missing], &[missing, "cannot read"]);
    assert_refused(
        &dir,
        &["-p", "/nonexistent/profile.json", "--probe", "getpid"],
        &["/nonexistent/profile.json"],
    );
    let unknown = write(
        &dir,
        "unknown.json",
        r#"{"read": 10, "frobnicate": 3, "nosuchcall": 1}"#,
    );
    assert_refused(
        &dir,
        &["-w", &unknown],
        &[
            "unknown syscalls",
            "frobnicate",
            "nosuchcall",
            "--skip-unknown",
        ],
    );
    let negative = write(
        &dir,
        "negative.txt",
        "% time     seconds  usecs/call     calls    errors syscall\n\
         ------ ----------- ----------- --------- --------- ----------------\n  \
         1.00    0.000001           1        -3           read\n",
    );
    assert_refused(
        &dir,
        &["-w", &negative],
        &["negative.txt: line 3", "negative"],
    );
    // A filter the kernel would reject (a load at an unaligned offset).
    let bad = write(&dir, "bad.s", "ld [3]\nret ALLOW\n");
    let spec = format!("mine={bad}");
    assert_refused(
        &dir,
        &["--probe", "getpid", "--bpf", &spec],
        &["bad.s", "reject"],
    );
    assert_refused(
        &dir,
        &["--probe", "nope"],
        &["unknown probe list", "getpid"],
    );
    assert_refused(
        &dir,
        &["--probe", "getpid", "--bpf", "noequals"],
        &["NAME=FILE"],
    );
    // Counts past any sensible run: refused as bad input, not an allocation failure (4 GiB
    // rounds aborted) or a child that times out (2^64 - 1 warm-up calls).
    assert_refused(
        &dir,
        &["--probe", "getpid", "--warmup", "18446744073709551615"],
        &["--warmup", "0..=1000000"],
    );
    for (flag, value) in [("--rounds", "4294967297"), ("--calls", "99999999999")] {
        let out = secopt(&["bench", "--probe", "getpid", flag, value]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(flag));
    }
    // An output that cannot be written is said before the measuring, and the plot that
    // could be is not written either.
    let svg = dir.join("plot.svg");
    let out = secopt(&[
        "bench",
        "--probe",
        "getpid",
        "--rounds",
        "2",
        "--calls",
        "5",
        "--plot",
        svg.to_str().unwrap(),
        "-o",
        "/proc/version",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot create a file in /proc"));
    assert!(!svg.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The measuring child dies with secopt: killed (not by its terminal's Ctrl-C, which reaches
/// the whole group), secopt leaves no child calling syscalls until its alarm.
#[test]
fn the_measuring_child_does_not_outlive_secopt() {
    let mut bench = std::process::Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args([
            "bench",
            "--probe",
            "common",
            "--no-secopt",
            "--calls",
            "1000000",
        ])
        .args([
            "--warmup",
            "1000000",
            "--rounds",
            "10000",
            "--no-kernel-check",
        ])
        .args(["-o", "/dev/null"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let running = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    };
    // A measuring child: each runs a million warm-up and a million timed calls of dozens of
    // syscalls (seconds), while the checks before the measuring fork children that end at
    // once. So the child taken is one still running 100 ms after it was first seen.
    let child = loop {
        if let Some(&c) = children(bench.id()).first() {
            std::thread::sleep(std::time::Duration::from_millis(100));
            if running(c) && children(bench.id()).contains(&c) {
                break c;
            }
        }
        assert!(std::time::Instant::now() < deadline, "no measuring child");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    bench.kill().unwrap();
    bench.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while running(child) {
        assert!(
            std::time::Instant::now() < deadline,
            "child {child} still runs after secopt was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn a_filter_the_kernel_refuses_to_install_is_a_clear_error() {
    // Run secopt under a filter that answers seccomp(2) (317 on x86_64) with EPERM, as a
    // sandbox that forbids stacking filters would: the bench's install check must fail
    // with the variant's name and the kernel's error, and write nothing.
    let dir = tmpdir("install");
    let out_file = dir.join("out.txt");
    let deny_seccomp: [libc::sock_filter; 4] = [
        libc::sock_filter {
            code: 0x20,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: 0x15,
            jt: 0,
            jf: 1,
            k: 317,
        },
        libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0x0005_0001,
        },
        libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0x7fff_0000,
        },
    ];
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_secopt"));
    cmd.args([
        "bench", "--probe", "getpid", "--rounds", "2", "--calls", "5", "-o",
    ])
    .arg(&out_file);
    // SAFETY: only prctl and seccomp, both async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let prog = libc::sock_fprog {
                len: deny_seccomp.len() as u16,
                filter: deny_seccomp.as_ptr() as *mut libc::sock_filter,
            };
            if libc::syscall(libc::SYS_seccomp, 1, 0, &prog as *const libc::sock_fprog) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("variant allow: the kernel refused to install the filter")
            && stderr.contains("Operation not permitted"),
        "{stderr}"
    );
    assert!(!out_file.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_short_real_run_produces_well_formed_reports() {
    let dir = tmpdir("smoke");
    let mine = write(
        &dir,
        "mine.s",
        "ld [nr]\njeq #39, deny, allow\ndeny: ret ERRNO(1)\nallow: ret ALLOW\n",
    );
    let spec = format!("mine={mine}");
    let json = dir.join("r.json");
    let svg = dir.join("r.svg");
    let out = secopt(&[
        "bench",
        "-p",
        &shared("profiles/oci/docker-default.json"),
        "--no-libseccomp",
        "-w",
        &shared("workloads/redis-benchmark.strace-c.txt"),
        "--bpf",
        &spec,
        "--rounds",
        "3",
        "--calls",
        "10",
        "--warmup",
        "2",
        "--format",
        "json",
        "-o",
        json.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let names: Vec<&str> = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    // secopt's optimized program, and the reference lowering it was proved equal to.
    assert_eq!(names, ["none", "allow", "secopt", "secopt-ref", "mine"]);
    // redis: 12 syscalls, all with a harmless invocation.
    let rows = r["syscalls"].as_array().unwrap();
    assert_eq!(rows.len(), 12);
    assert!(r["skipped"].as_array().unwrap().is_empty());
    assert_eq!(r["total_calls"], 361_331);
    for row in rows {
        let cells = row["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 5);
        for c in cells {
            for k in ["ns", "vs_none", "vs_allow"] {
                let e = &c["timing"][k];
                assert!(e["lo"].is_number() && e["median"].is_number() && e["hi"].is_number());
                assert!(e["lo"].as_f64() <= e["median"].as_f64());
                assert!(e["median"].as_f64() <= e["hi"].as_f64());
            }
        }
    }
    // `mine` denies getpid only; redis makes no getpid, so every decision is ALLOW.
    assert!(rows
        .iter()
        .all(|row| row["cells"][4]["action"] == "ALLOW" && row["cells"][4]["steps"] == 3));
    for k in [
        "kernel",
        "bpf_jit_enable",
        "cpu_model",
        "mitigations",
        "hypervisor_flag",
    ] {
        assert!(r["environment"].get(k).is_some(), "environment lacks {k}");
    }
    assert_eq!(r["options"]["rounds"], 3);
    // Three medians make no 95% interval: the report says its findings are not evidence.
    assert!(
        r["notes"]
            .to_string()
            .contains("3 rounds and 2000 bootstrap resamples")
            && r["notes"].to_string().contains("not evidence"),
        "{}",
        r["notes"]
    );
    assert!(r["command"]
        .as_str()
        .unwrap()
        .starts_with("secopt bench -p "));
    assert!(!r["findings"].as_array().unwrap().is_empty());
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">secopt</text>") && svg.contains(">aggregate</text>"));

    // The text form carries the environment header and one row per syscall.
    let out = secopt(&[
        "bench", "--probe", "getpid", "--rounds", "2", "--calls", "5", "--warmup", "1",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "kernel:",
        "BPF JIT:",
        "CPU:",
        "hypervisor:",
        "mitigations:",
        "workload:",
    ] {
        assert!(text.contains(line), "{text}");
    }
    assert!(text.lines().any(|l| l.starts_with("getpid ")), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn probe_lists_are_listed() {
    let out = secopt(&["bench", "--list-probes"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for name in ["getpid", "common", "firecracker-vcpu", "harmless-all"] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{text}");
    }
    // The same lists as JSON, for scripts.
    let out = secopt(&["bench", "--list-probes", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let lists: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = lists
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["getpid", "common", "firecracker-vcpu", "harmless-all"]
    );
}

/// One list's calls, as a table and as a workload file `analyze --workload` reads back: the
/// vCPU list's `ioctl` probes carry `KVM_RUN` = `_IO(KVMIO, 0x80)` = 0xae80 and `KVM_IRQFD` =
/// `_IOW(KVMIO, 0x76, struct kvm_irqfd)` = 0x4020ae76 (include/uapi/linux/kvm.h, a 32-byte
/// struct), in the list's order with its counts.
#[test]
fn one_probe_list_is_listed_as_a_workload_file() {
    let out = secopt(&["bench", "--list-probes", "--probe", "firecracker-vcpu"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let kvm_run = text
        .lines()
        .find(|l| l.starts_with("ioctl(KVM_RUN)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        kvm_run.contains(" 900 ") && kvm_run.contains(" 0xae80 "),
        "{kvm_run}"
    );

    let out = secopt(&[
        "bench",
        "--list-probes",
        "--probe",
        "firecracker-vcpu",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let json = String::from_utf8(out.stdout).unwrap();
    let dir = tmpdir("probe-workload");
    let workload = write(&dir, "vcpu.json", &json);
    // Read back by analyze, against a filter that reads ioctl's request: the entries keep their
    // labels, counts and order, and the request value decides each ioctl's path.
    let filter = write(
        &dir,
        "f.s",
        "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njeq #ioctl, next, allow\n\
         ld [args[1].lo]\njeq #0xae80, allow, next\nld [args[1].hi]\njeq #0, allow, allow\n\
         kill: ret KILL\nallow: ret ALLOW\n",
    );
    let out = secopt(&[
        "analyze",
        &filter,
        "--workload",
        &workload,
        "--kernel",
        "6.18",
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries: Vec<(String, u64, u64)> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["label"].as_str().unwrap().to_string(),
                e["count"].as_u64().unwrap(),
                e["max_steps"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("ioctl(KVM_RUN)".to_string(), 900, 7),
            ("write".to_string(), 60, 5),
            ("futex(WAKE_PRIVATE)".to_string(), 30, 5),
            ("ioctl(KVM_IRQFD)".to_string(), 5, 9),
            ("sched_yield".to_string(), 5, 5),
        ]
    );
    let args = &report["entries"][3]["args"];
    assert_eq!(args[1], "0x4020ae76", "{args}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A profile whose libseccomp filter (what runc loads, and bench's libseccomp variants) does
/// not enforce it on x86_64 (`compile::runc_unenforced`) is said so among the report's notes.
#[test]
fn a_profile_libseccomp_would_not_enforce_is_noted() {
    let dir = tmpdir("unenforced");
    let profile = write(
        &dir,
        "send-first.json",
        r#"{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X32"],
            "syscalls": [{"names": ["send"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
                         {"names": ["write"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
                          "args": [{"index": 0, "value": 1000, "op": "SCMP_CMP_EQ"}]}]}"#,
    );
    let workload = write(&dir, "w.json", r#"{"getppid": 10}"#);
    let json = dir.join("r.json");
    let out = secopt(&[
        "bench",
        "-p",
        &profile,
        "--no-libseccomp",
        "-w",
        &workload,
        "--rounds",
        "3",
        "--calls",
        "10",
        "--warmup",
        "2",
        "--format",
        "json",
        "-o",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("will not enforce this profile on x86_64 and x32")
            && notes.contains("first is for `send`, which x86_64 lacks"),
        "{notes}"
    );
}

/// A denied call returns ERRNO before the syscall does its work, so its time is no overhead
/// of the filter (a denied `openat` measured 60 ns below no filter): the cell says so, and the
/// aggregate and the per-instruction fit leave it out.
#[test]
fn denied_calls_are_marked_and_left_out_of_the_overheads() {
    let dir = tmpdir("denied");
    // getpid (39) and openat (257) denied; everything else allowed.
    let deny = write(
        &dir,
        "deny.s",
        "ld [nr]\njeq #39, deny, next\njeq #257, deny, allow\ndeny: ret ERRNO(1)\nallow: ret ALLOW\n",
    );
    let spec = format!("deny={deny}");
    let run = |format: &str| {
        let out = secopt(&[
            "bench",
            "--bpf",
            &spec,
            "--probe",
            "common",
            "--no-cache",
            "--rounds",
            "2",
            "--calls",
            "5",
            "--warmup",
            "1",
            "--format",
            format,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    let r: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let names: Vec<&str> = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["none", "allow", "deny"]);
    let rows = r["syscalls"].as_array().unwrap();
    let mut denied = Vec::new();
    for row in rows {
        for (v, c) in row["cells"].as_array().unwrap().iter().enumerate() {
            let is_denied = c["action"] != "ALLOW" && c["action"] != "(no filter)";
            assert_eq!(c["denied"], is_denied, "{row}");
            if is_denied {
                assert_eq!(v, 2, "{row}");
                denied.push(row["syscall"].as_str().unwrap());
            }
        }
    }
    denied.sort_unstable();
    assert_eq!(denied, ["getpid", "openat"]);
    // Under --no-cache every filter cell is uncached: the fit takes the two filter variants'
    // cells on every syscall but the two denied ones.
    let fit = &r["per_instruction"];
    assert_eq!(fit["cells"], 2 * rows.len() - 2, "{fit}");
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("over the syscalls every variant allows") && notes.contains("getpid"),
        "{notes}"
    );
    // The text marks the denied cells and says what the columns under --no-cache are.
    let text = run("text");
    let getpid = text.lines().find(|l| l.starts_with("getpid ")).unwrap();
    assert!(getpid.trim_end().ends_with('d'), "{getpid}");
    let read = text.lines().find(|l| l.starts_with("read ")).unwrap();
    assert!(!read.trim_end().ends_with('d'), "{read}");
    assert!(text.contains("of the filters as produced"), "{text}");
    assert!(
        text.contains(&format!("over {} uncached cells", 2 * rows.len() - 2)),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// When no allowed syscall has weight, or every one is denied, the weighted times must include
/// denied calls, and the note says which of the two it is.
#[test]
fn the_note_tells_no_weight_from_every_call_denied() {
    let dir = tmpdir("denied-weights");
    let deny = write(
        &dir,
        "deny.s",
        "ld [nr]\njeq #39, deny, allow\ndeny: ret ERRNO(1)\nallow: ret ALLOW\n",
    );
    let spec = format!("deny={deny}");
    let report_for = |workload: &str| {
        let w = write(&dir, "w.json", workload);
        let out = secopt(&[
            "bench",
            "--bpf",
            &spec,
            "--workload",
            &w,
            "--rounds",
            "1",
            "--calls",
            "5",
            "--warmup",
            "0",
            "--format",
            "json",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    // Whether a finding says filters cost more than none: not made from denied calls' times.
    let judges_overhead = |r: &serde_json::Value| {
        r["findings"].as_array().unwrap().iter().any(|f| {
            f["claim"]
                .as_str()
                .unwrap()
                .starts_with("every filter costs more")
        })
    };
    assert!(judges_overhead(&report_for(
        r#"{"getpid": 10, "getppid": 5}"#
    )));
    // getppid is allowed but has no weight: not "every syscall is denied".
    let r = report_for(r#"{"getpid": 10, "getppid": 0}"#);
    assert!(!judges_overhead(&r), "{r}");
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("every variant allows have no weight") && notes.contains("getpid"),
        "{notes}"
    );
    assert!(
        !notes.contains("every measured syscall is denied"),
        "{notes}"
    );
    let r = report_for(r#"{"getpid": 10}"#);
    assert!(!judges_overhead(&r), "{r}");
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("every measured syscall is denied") && notes.contains("is not judged"),
        "{notes}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A filter that decides on `instruction_pointer` is predicted with the address the bench
/// child's calls really come from: of two filters that deny getpid for opposite answers to
/// "is the IP's high word 0?", exactly one denies it, and neither run fails its decision
/// check (an audit found every such run aborted: the prediction assumed IP 0).
#[test]
fn a_filter_that_checks_the_instruction_pointer_is_predicted_with_the_real_one() {
    let dir = tmpdir("ip");
    let mut denied = Vec::new();
    for (name, branches) in [("hi0", "deny, allow"), ("hinot0", "allow, deny")] {
        let filter = write(
            &dir,
            &format!("{name}.s"),
            &format!(
                "ld [nr]\njeq #39, next, allow\nld [ip.hi]\njeq #0, {branches}\n\
                 deny: ret ERRNO(3)\nallow: ret ALLOW\n"
            ),
        );
        let out = secopt(&[
            "bench",
            "--bpf",
            &format!("{name}={filter}"),
            "--probe",
            "getpid",
            "--rounds",
            "1",
            "--calls",
            "2",
            "--warmup",
            "0",
            "--format",
            "json",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let cell = &r["syscalls"][0]["cells"][2];
        if cell["denied"] == true {
            denied.push(name);
        }
    }
    assert_eq!(denied.len(), 1, "{denied:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--list-probes` writes where `-o` says, the same bytes it prints; a filter given as
/// `--profile` is refused with the `--bpf NAME=FILE` that measures it (found by an audit:
/// `-o` was ignored, and a filter read as a profile was "invalid JSON").
#[test]
fn probe_lists_follow_o_and_a_filter_given_as_a_profile_says_to_use_bpf() {
    let dir = tmpdir("list-o");
    for extra in [&[][..], &["--probe", "common", "--format", "json"][..]] {
        let mut args = vec!["bench", "--list-probes"];
        args.extend_from_slice(extra);
        let printed = secopt(&args);
        assert_eq!(printed.status.code(), Some(0));
        let file = dir.join("list.out");
        let _ = std::fs::remove_file(&file);
        args.extend(["-o", file.to_str().unwrap()]);
        let written = secopt(&args);
        assert_eq!(written.status.code(), Some(0), "{extra:?}");
        assert!(written.stdout.is_empty(), "{extra:?}");
        assert!(!printed.stdout.is_empty(), "{extra:?}");
        assert_eq!(std::fs::read(&file).unwrap(), printed.stdout, "{extra:?}");
    }
    let filter = write(&dir, "deny.s", "ret ERRNO(1)\n");
    let out = secopt(&["bench", "-p", &filter]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("--bpf deny={filter} measures it")),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// RET ALLOW runs one instruction on every call, and the kernel caches every call it allows:
/// per call exactly 1 instruction without the cache and a cached share of exactly 1 (shares
/// summed call by call once printed 0.9999999999999991 for nginx's workload).
#[test]
fn ret_allow_costs_exactly_one_instruction_per_call() {
    let workload = shared("workloads/nginx-wrk.strace-c.txt");
    let out = secopt(&[
        "bench", "-w", &workload, "--rounds", "1", "--calls", "1", "--warmup", "0", "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let allow = &r["variants"][1];
    assert_eq!(allow["name"], "allow");
    assert_eq!(allow["deterministic"]["cost_without_cache"], 1.0, "{allow}");
    assert_eq!(allow["deterministic"]["cached_share"], 1.0, "{allow}");
}

/// A stack whose older filter denies seccomp(2) cannot be installed: the error says so and
/// how to measure it, not the bench program's marker errno ("Unknown error 1024").
#[test]
fn a_stack_whose_older_filter_denies_seccomp_says_so() {
    let dir = tmpdir("stack-seccomp");
    let older = write(
        &dir,
        "older.s",
        "ld [nr]\njeq #x86_64.seccomp, deny, allow\ndeny: ret ERRNO(1)\nallow: ret ALLOW\n",
    );
    let newer = write(&dir, "newer.s", "ret ALLOW\n");
    let out = secopt(&[
        "bench",
        "--bpf",
        &format!("s={older}+{newer}"),
        "--probe",
        "getpid",
        "--rounds",
        "1",
        "--calls",
        "1",
        "--warmup",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("an older filter of the stack denies seccomp(2)") && !err.contains("1024"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `LOG` lets the call run, so the text does not call it a denial: a filter that logs getpid
/// and denies getppid lists the two apart, each on its own line (an audit found LOG among
/// "denied … the syscall itself never ran").
#[test]
fn a_logged_call_is_not_listed_as_denied() {
    let dir = tmpdir("log");
    let filter = write(
        &dir,
        "log.s",
        "ld [nr]\njeq #39, log, next\njeq #110, deny, allow\n\
         log: ret LOG\ndeny: ret ERRNO(3)\nallow: ret ALLOW\n",
    );
    let out = secopt(&[
        "bench",
        "--bpf",
        &format!("logs={filter}"),
        "-w",
        &write(&dir, "w.json", r#"{"getpid": 5, "getppid": 5}"#),
        "--rounds",
        "1",
        "--calls",
        "2",
        "--warmup",
        "0",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start:?}: {text}"))
            .to_string()
    };
    let denied = line("denied, ");
    assert!(denied.contains("getppid under logs: ERRNO(3)"), "{text}");
    assert!(!denied.contains("getpid under"), "{text}");
    let logged = line("LOG, which lets the call run");
    assert!(logged.contains("getpid under logs: LOG"), "{text}");
    assert!(!logged.contains("getppid"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
