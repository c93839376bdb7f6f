//! `secopt exec --denials` end to end: the calls it names as refused are the ones the kernel
//! refused. Oracles nobody here wrote: what each call returned inside the command
//! (tests/data/syscall_probe.c), the command's exit status, and `strace -f` watching the same
//! command under plain `secopt exec` (the same filter, installed the same way, not traced by
//! secopt).
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "common/cc.rs"]
#[allow(dead_code)]
mod cc;
#[path = "data/e2e_support.rs"]
mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use support::*;

// x86_64 syscall numbers (syscall_64.tbl).
const NR_GETPID: u32 = 39;
const NR_GETPPID: u32 = 110;
const NR_PERSONALITY: u32 = 135;
const NR_CLONE3: u32 = 435;
// errno values (asm-generic/errno-base.h, errno.h).
const EPERM: i32 = 1;
const ENOSYS: i32 = 38;
const EBADFD: i32 = 77;
const SIGSYS: i32 = 31;

/// The `denials` of a `--denials-json` document, by syscall name.
fn denials_by_name(doc: &Value) -> BTreeMap<String, Value> {
    doc["denials"]
        .as_array()
        .expect("denials is an array")
        .iter()
        .map(|d| (d["syscall"].as_str().unwrap_or("?").to_string(), d.clone()))
        .collect()
}

/// `secopt exec -p PROFILE`, to which each test adds its options and command.
fn exec_under(profile: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = secopt();
    cmd.arg("exec").arg("-p").arg(profile);
    cmd
}

/// Builds `source` as `dir/NAME` with the system C compiler (threads linked in).
fn build_c(dir: &TempDir, name: &str, source: &str) -> std::path::PathBuf {
    let src = dir.join(&format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let program = dir.join(name);
    cc::build_c(&src, &program, &["-pthread"]);
    program
}

/// `dir/p.json`: everything allowed but getppid, refused with EPERM.
fn getppid_refused(dir: &TempDir) -> std::path::PathBuf {
    let profile = dir.join("p.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO"}]}"#,
    )
    .unwrap();
    profile
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the JSON report was written");
    serde_json::from_str(&text).expect("the report is JSON")
}

/// Docker's default profile, the probe's calls: the report names exactly the calls the probe
/// saw fail because of the filter, with the errno it saw, and leaves the allowed ones out.
#[test]
fn the_calls_named_are_the_ones_the_program_saw_refused() {
    if !is_root() {
        return skip_or_fail(
            "exec_denials",
            "mount's answer needs root to be the filter's",
        );
    }
    let dir = TempDir::new("denials-docker");
    let probe = build_probe(dir.path());
    let target = dir.join("no-such-mountpoint");
    let mount = format!("mount:{}", target.display());
    let clone3 = format!("raw:{NR_CLONE3},0,0");
    let getpid = format!("raw:{NR_GETPID}");
    let no_randomize = format!("raw:{NR_PERSONALITY},0x40000");
    let query = format!("raw:{NR_PERSONALITY},0xffffffff");
    let report = dir.join("denials.json");
    let out = exec_under(shared_profile("oci/docker-default.json"))
        .arg("--denials-json")
        .arg(&report)
        .arg("--")
        .arg(&probe)
        .args([&mount, &clone3, &getpid, &no_randomize, &query])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let seen = parse_probe(&stdout_of(&out));
    // What the program saw (tests/e2e_exec.rs shows these differ from the kernel's answers
    // without a filter: mount ENOENT, clone3 EINVAL, personality success).
    assert!(seen[&mount].failed_with(EPERM), "{seen:?}");
    assert!(seen[&clone3].failed_with(ENOSYS), "{seen:?}");
    assert!(seen[&no_randomize].failed_with(EPERM), "{seen:?}");
    assert!(
        seen[&getpid].succeeded() && seen[&query].succeeded(),
        "{seen:?}"
    );

    let doc = read_json(&report);
    // The command line run, as `exec --dry-run` names it.
    assert_eq!(doc["argv"][0], probe.to_str().unwrap(), "{doc}");
    assert_eq!(doc["argv"][1], mount.as_str(), "{doc}");
    let denials = denials_by_name(&doc);
    assert_eq!(
        denials.keys().collect::<Vec<_>>(),
        ["clone3", "mount", "personality"],
        "{doc:#}"
    );
    for (name, errno) in [("mount", EPERM), ("clone3", ENOSYS), ("personality", EPERM)] {
        let d = &denials[name];
        assert_eq!(d["count"], 1, "{name}: {d:#}");
        assert_eq!(d["action"], format!("ERRNO({errno})"), "{name}");
        assert_eq!(d["confirmed"], 1, "{name}: the kernel returned the errno");
        assert_eq!(d["contradicted"], 0, "{name}");
        assert_eq!(d["samples"][0]["seccomp_data"]["arch_name"], "x86_64");
    }
    // Only personality's answer depends on its argument, the one the probe passed.
    let persona = &denials["personality"];
    assert_eq!(persona["depends_on_args"], true);
    assert_eq!(persona["samples"][0]["seccomp_data"]["args"][0], 0x40000);
    assert!(persona["reads"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "args[0].lo"));
    assert_eq!(denials["mount"]["depends_on_args"], false);
    // Which rules name each: mount's only rule needs CAP_SYS_ADMIN, which Docker's default
    // caps lack, so none applies (tests/e2e_exec.rs checks the profile says so); the
    // personality rules are those allowing a few values.
    assert_eq!(denials["mount"]["rules"], serde_json::json!([]));
    // ... and the rule the default caps left out is named, with the capability it needs: the
    // profile's own entry for mount whose includes.caps lists CAP_SYS_ADMIN.
    let profile: Value = serde_json::from_str(
        &std::fs::read_to_string(shared_profile("oci/docker-default.json")).unwrap(),
    )
    .unwrap();
    let admin_mount = profile["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| {
            e["names"].as_array().unwrap().iter().any(|n| n == "mount")
                && e["includes"]["caps"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c == "CAP_SYS_ADMIN"))
                && e["includes"]["arches"].is_null()
        })
        .expect("Docker's profile allows mount with CAP_SYS_ADMIN");
    assert_eq!(
        denials["mount"]["rules_not_applied"],
        serde_json::json!([{
            "place": format!("$.syscalls[{admin_mount}]"),
            "why": "needs CAP_SYS_ADMIN (includes.caps)"
        }]),
        "{doc:#}"
    );
    assert!(
        err.contains(&format!(
            "none; not applied: $.syscalls[{admin_mount}]: needs CAP_SYS_ADMIN"
        )),
        "{err}"
    );
    let persona_rules = denials["personality"]["rules"].as_array().unwrap();
    assert!(!persona_rules.is_empty(), "{persona:#}");
    assert!(persona_rules
        .iter()
        .all(|r| r.as_str().unwrap().starts_with("$.syscalls[")));
    assert_eq!(doc["denied_calls"], 3);
    assert_eq!(doc["exit"]["status"], 0);
    // The same on stderr, for a person.
    for text in [
        "did not allow 3 of",
        "mount (x86_64)",
        "ERRNO(38) ENOSYS",
        "args[0]=0x40000",
        "confirm 3 of 3 errno answers",
    ] {
        assert!(err.contains(text), "{text}: {err}");
    }
}

/// A shell's calls, judged twice: by `--denials`, and by strace watching the same command run
/// under plain `secopt exec`. The calls strace saw return the profile's unusual errno are the
/// calls the report names, as often.
#[test]
fn the_report_agrees_with_strace() {
    let Some(_) = require_tools("exec_denials strace", &["strace", "sh"]) else {
        return;
    };
    let dir = TempDir::new("denials-strace");
    let profile = dir.join("p.json");
    // EBADFD: no call here fails with it on its own.
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["mkdir", "mkdirat", "uname", "chdir"],
                          "action": "SCMP_ACT_ERRNO", "errnoRet": 77}]}"#,
    )
    .unwrap();
    let script = format!(
        "mkdir {0}/a; mkdir {0}/b {0}/c; uname; cd /; uname -r; true",
        dir.path().display()
    );
    let report = dir.join("d.json");
    let out = exec_under(&profile)
        .arg("--denials-json")
        .arg(&report)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let mut reported: BTreeMap<String, u64> = BTreeMap::new();
    for (name, d) in denials_by_name(&read_json(&report)) {
        assert_eq!(d["action"], format!("ERRNO({EBADFD})"));
        assert_eq!(d["confirmed"], d["count"], "{name}");
        reported.insert(name, d["count"].as_u64().unwrap());
    }

    let log = dir.join("strace.log");
    let traced = std::process::Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_secopt"))
        .arg("exec")
        .arg("-p")
        .arg(&profile)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(traced.status.code(), Some(0), "{}", stderr_of(&traced));
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        if !line.contains("= -1 EBADFD") {
            continue;
        }
        // "PID NAME(ARGS...) = -1 EBADFD (...)"
        let call = line.split_whitespace().nth(1).unwrap();
        let name = call.split('(').next().unwrap().to_string();
        *seen.entry(name).or_default() += 1;
    }
    assert!(!seen.is_empty(), "strace saw no refused call");
    assert_eq!(reported, seen);
}

/// A call the filter kills the process for: named, with the exit status the shell would see.
#[test]
fn a_killing_call_is_named_and_the_status_kept() {
    let dir = TempDir::new("denials-kill");
    let probe = build_probe(dir.path());
    let profile = dir.join("kill.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_KILL_PROCESS"}]}"#,
    )
    .unwrap();
    let getpid = format!("raw:{NR_GETPID}");
    let getppid = format!("raw:{NR_GETPPID}");
    let report = dir.join("d.json");
    let out = exec_under(&profile)
        .arg("--denials-json")
        .arg(&report)
        .arg("--")
        .arg(&probe)
        .args([&getpid, &getppid, &getpid])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    // Killed by SIGSYS at getppid: the kernel's own verdict.
    assert_eq!(out.status.code(), Some(128 + SIGSYS), "{err}");
    let doc = read_json(&report);
    let denials = denials_by_name(&doc);
    assert_eq!(denials.keys().collect::<Vec<_>>(), ["getppid"], "{doc:#}");
    assert_eq!(denials["getppid"]["action"], "KILL_PROCESS");
    assert_eq!(denials["getppid"]["count"], 1);
    assert_eq!(doc["exit"]["status"], 128 + SIGSYS);
    assert!(
        err.contains("getppid (x86_64)") && err.contains("KILL_PROCESS"),
        "{err}"
    );
    assert!(err.contains("killed by signal 31"), "{err}");
}

/// Only the left-out rules that would allow a refused call are named as "not applied": the
/// ALLOW rule `includes.caps` left out is (with its argument condition said), the KILL rule
/// left out the same way is not (it explains nothing about the refusal, and applying it would
/// kill the command). With the capability the ALLOW rule gives, the kernel lets the call
/// through: the probe sees getppid succeed.
#[test]
fn only_left_out_rules_that_would_allow_the_call_are_named() {
    let dir = TempDir::new("denials-not-applied");
    let probe = build_probe(dir.path());
    let profile = dir.join("caps.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
            {"names": ["getppid"], "action": "SCMP_ACT_ERRNO",
             "excludes": {"caps": ["CAP_SYS_ADMIN"]}},
            {"names": ["getppid"], "action": "SCMP_ACT_ALLOW",
             "includes": {"caps": ["CAP_SYS_ADMIN"]},
             "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]},
            {"names": ["getppid"], "action": "SCMP_ACT_KILL_PROCESS",
             "includes": {"caps": ["CAP_BPF"]}}]}"#,
    )
    .unwrap();
    let getppid = format!("raw:{NR_GETPPID},0");
    let report = dir.join("d.json");
    let out = exec_under(&profile)
        .arg("--denials-json")
        .arg(&report)
        .arg("--")
        .arg(&probe)
        .arg(&getppid)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(parse_probe(&stdout_of(&out))[&getppid].failed_with(EPERM));
    let denials = denials_by_name(&read_json(&report));
    assert_eq!(
        denials["getppid"]["rules_not_applied"],
        serde_json::json!([{
            "place": "$.syscalls[1]",
            "why": "needs CAP_SYS_ADMIN (includes.caps), and allows only some argument values"
        }])
    );
    assert!(err.contains("would allow the call"), "{err}");
    // With the capability, the first rule is left out and the second applies.
    let out = exec_under(&profile)
        .args(["--caps", "default,sys_admin", "--"])
        .arg(&probe)
        .arg(&getppid)
        .output()
        .unwrap();
    assert!(
        parse_probe(&stdout_of(&out))[&getppid].succeeded(),
        "{}",
        stderr_of(&out)
    );
}

/// Under `--runc-compat`, a number above every one the profile names is answered by runc's
/// ENOSYS stub, not by the default action, and the report says so, with the threshold: the
/// highest x86_64 number among the names of Docker's unconditional entries, as the system
/// libseccomp (runc's name resolver, used here with `--syscall-table libseccomp`) numbers them.
#[cfg(feature = "libseccomp")]
#[test]
fn a_call_runcs_stub_answers_is_named_so() {
    use libseccomp::{ScmpArch, ScmpSyscall};
    let profile = shared_profile("oci/docker-default.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    let highest = doc["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.get("includes").is_none() && e.get("excludes").is_none())
        .flat_map(|e| e["names"].as_array().unwrap())
        .filter_map(|n| ScmpSyscall::from_name_by_arch(n.as_str()?, ScmpArch::X8664).ok())
        .map(i32::from)
        .max()
        .unwrap();
    let dir = TempDir::new("denials-stub");
    let probe = build_probe(dir.path());
    let report = dir.join("d.json");
    let out = exec_under(&profile)
        .args([
            "--runc-compat",
            "--syscall-table",
            "libseccomp",
            "--denials-json",
        ])
        .arg(&report)
        .arg("--")
        .arg(&probe)
        .arg("raw:500")
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let denials = denials_by_name(&read_json(&report));
    let d = denials.values().next().expect("nr 500 was refused");
    assert_eq!(d["action"], "ERRNO(38)", "{d:#}");
    assert_eq!(d["runc_stub_above"], highest, "{d:#}");
    assert_eq!(d["confirmed"], 1, "{d:#}");
}

/// A command that installs a filter of its own (here secopt exec itself, under --denials):
/// the report says so, because those calls also meet a filter it does not judge.
#[test]
fn a_filter_installed_by_the_command_is_noted() {
    let dir = TempDir::new("denials-nested");
    let probe = build_probe(dir.path());
    let outer = dir.join("allow.json");
    std::fs::write(&outer, r#"{"defaultAction": "SCMP_ACT_ALLOW"}"#).unwrap();
    let inner = dir.join("deny.json");
    std::fs::write(
        &inner,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO"}]}"#,
    )
    .unwrap();
    let getppid = format!("raw:{NR_GETPPID}");
    let out = exec_under(&outer)
        .arg("--denials")
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_secopt"))
        .arg("exec")
        .arg("-p")
        .arg(&inner)
        .arg("--")
        .arg(&probe)
        .arg(&getppid)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The inner filter refused getppid; the outer one, the one judged, allowed everything.
    assert!(parse_probe(&stdout_of(&out))[&getppid].failed_with(EPERM));
    assert!(err.contains("allowed all"), "{err}");
    assert!(
        err.contains("the command installed filters of its own"),
        "{err}"
    );
}

/// A child started with CLONE_UNTRACED (tests/data/untraced_child.c, with `clone` and with
/// `clone3`) cannot be followed by any tracer: the filter still refuses its calls (the
/// program sees it), and the report says its calls are missing rather than counting only the
/// parent's in silence.
#[test]
fn children_no_tracer_can_follow_are_noted() {
    let Some(_) = require_tools("exec_denials cc", &["cc"]) else {
        return;
    };
    let dir = TempDir::new("denials-untraced");
    let program = build_c(&dir, "untraced", include_str!("data/untraced_child.c"));
    let profile = getppid_refused(&dir);
    for call in ["clone", "clone3"] {
        let report = dir.join(&format!("{call}.json"));
        let out = exec_under(&profile)
            .arg("--denials-json")
            .arg(&report)
            .arg("--")
            .arg(&program)
            .arg(call)
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{call}: {err}");
        let printed = stdout_of(&out);
        assert!(printed.contains("child getppid -1"), "{call}: {printed}");
        assert!(printed.contains("parent getppid -1"), "{call}: {printed}");
        let doc = read_json(&report);
        assert_eq!(
            denials_by_name(&doc)["getppid"]["count"],
            1,
            "{call}: {doc}"
        );
        assert!(err.contains("with CLONE_UNTRACED"), "{call}: {err}");
        assert!(
            doc["notes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n.as_str().unwrap().contains("started 1 process or thread")),
            "{call}: {doc}"
        );
    }
}

/// Bad uses are refused before the command runs.
#[test]
fn a_report_that_cannot_be_written_stops_the_run_before_it_starts() {
    let dir = TempDir::new("denials-bad");
    let marker = dir.join("ran");
    let out = exec_under(shared_profile("oci/docker-default.json"))
        .arg("--denials-json")
        .arg(dir.join("no/such/dir/d.json"))
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("no/such/dir"),
        "{}",
        stderr_of(&out)
    );
    assert!(!marker.exists(), "the command ran");
    let out = exec_under(shared_profile("oci/docker-default.json"))
        .args(["--denials", "--dry-run", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    // stdout is the command's: the report would be mixed into what it prints.
    let out = exec_under(shared_profile("oci/docker-default.json"))
        .args(["--denials-json", "-", "--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("/dev/fd/3"), "{}", stderr_of(&out));
    assert!(out.stdout.is_empty());
    assert!(!marker.exists(), "the command ran");
}

/// A report that cannot be written after the command ran (a full device): exit 2, and the
/// error still says how the command ended, which the exit status no longer can.
#[test]
fn a_report_write_failing_after_the_run_still_says_how_the_command_ended() {
    if !Path::new("/dev/full").exists() {
        return skip_or_fail("exec_denials", "no /dev/full");
    }
    let out = exec_under(shared_profile("oci/docker-default.json"))
        .args(["--denials-json", "/dev/full", "--", "sh", "-c", "exit 7"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // The report's own summary says it too: the error line must.
    let error = err
        .lines()
        .find(|l| l.starts_with("secopt: error:"))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(error.contains("/dev/full: cannot write"), "{err}");
    assert!(error.contains("exited with status 7"), "{err}");
}

/// Under a tracer that follows secopt's children (strace -f), the command already has a
/// tracer: the error says which, not that ptrace is forbidden.
#[test]
fn an_outer_tracer_is_named() {
    let Some(_) = require_tools("exec_denials strace", &["strace"]) else {
        return;
    };
    let dir = TempDir::new("denials-nested");
    let marker = dir.join("ran");
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null"])
        .arg(env!("CARGO_BIN_EXE_secopt"))
        .arg("exec")
        .arg("-p")
        .arg(shared_profile("oci/docker-default.json"))
        .args(["--denials", "--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("(strace) already traces it"), "{err}");
    assert!(!marker.exists(), "the command ran");
}

/// A command that leaves a process running (a background job): the report comes when the
/// command ends, as the shell would return, and says what was left untraced.
#[test]
fn processes_left_running_do_not_hold_the_report_back() {
    let dir = TempDir::new("denials-daemon");
    let profile = dir.join("allow.json");
    std::fs::write(&profile, r#"{"defaultAction": "SCMP_ACT_ALLOW"}"#).unwrap();
    let mut child = exec_under(&profile)
        .arg("--denials")
        .args(["--", "sh", "-c", "sleep 20 >/dev/null 2>&1 & echo started"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(15) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("exec --denials waited for the background job");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains("allowed all"), "{err}");
    assert!(
        err.contains("1 process or thread the command started still ran"),
        "{err}"
    );
}

/// A thread other than the main one that execs takes the main thread's task id, and its own
/// id ends without an exit report (ptrace(2)): that is no task left running, and the report
/// must not say one was (tests/data/exec_from_thread.c). Oracle: the command's exit status
/// (0 from `true`, 4 had the main thread gone on) and what the thread saw getppid return.
#[test]
fn a_thread_that_execs_leaves_nothing_running() {
    let Some(_) = require_tools("exec_denials cc", &["cc"]) else {
        return;
    };
    let dir = TempDir::new("denials-thread-exec");
    let program = build_c(
        &dir,
        "exec_from_thread",
        include_str!("data/exec_from_thread.c"),
    );
    let profile = getppid_refused(&dir);
    let report = dir.join("report.json");
    let out = exec_under(&profile)
        .arg("--denials-json")
        .arg(&report)
        .arg("--")
        .arg(&program)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        stdout_of(&out).contains("thread getppid -1"),
        "{}",
        stdout_of(&out)
    );
    let doc = read_json(&report);
    assert_eq!(denials_by_name(&doc)["getppid"]["count"], 1, "{doc}");
    assert!(!err.contains("still ran"), "{err}");
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        !notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("still ran")),
        "{doc}"
    );
}

/// The execve check judges the pointers the command's process passes, as plain exec does: a
/// rule refusing execve with a null argv (the CVE-2021-4034 mitigation) lets the command run.
#[test]
fn execve_is_judged_on_the_real_pointers() {
    let dir = TempDir::new("denials-execve");
    let profile = dir.join("argv.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["execve"], "action": "SCMP_ACT_ERRNO",
                          "args": [{"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]}]}"#,
    )
    .unwrap();
    for denials in [false, true] {
        let mut cmd = exec_under(&profile);
        if denials {
            cmd.arg("--denials");
        }
        let out = cmd.args(["--", "true"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{denials}: {}", stderr_of(&out));
    }
}

/// Under --denials secopt is the command's parent: a command that signals its parent when
/// ready (SIGUSR1, as Xorg does) must not end secopt, and with it the command and the report.
#[test]
fn a_command_signalling_its_parent_does_not_end_the_report() {
    let dir = TempDir::new("denials-usr1");
    let profile = dir.join("allow.json");
    std::fs::write(&profile, r#"{"defaultAction": "SCMP_ACT_ALLOW"}"#).unwrap();
    // The guard keeps a $PPID of 0 or -1 (a profile refusing getppid) from signalling more
    // than the parent.
    let out = exec_under(&profile)
        .arg("--denials")
        .args([
            "--",
            "sh",
            "-c",
            r#"[ "$PPID" -gt 1 ] && kill -USR1 "$PPID" && kill -USR2 "$PPID"; echo survived"#,
        ])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout_of(&out).trim(), "survived");
    assert!(err.contains("allowed all"), "{err}");
}

/// A command that cannot start exits as without --denials: 127 for a script whose
/// interpreter is missing (execve's ENOENT about a file that exists), 126 for a file that is
/// not executable.
#[test]
fn commands_that_cannot_start_exit_as_without_denials() {
    let dir = TempDir::new("denials-start");
    let orphan = dir.join("orphan.sh");
    std::fs::write(&orphan, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&orphan, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let plain = dir.join("plain.sh");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&plain, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    for (command, status) in [(&orphan, 127), (&plain, 126)] {
        for denials in [false, true] {
            let mut cmd = exec_under(shared_profile("oci/docker-default.json"));
            if denials {
                cmd.arg("--denials");
            }
            let out = cmd.arg("--").arg(command).output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(status),
                "{} (--denials: {denials}): {}",
                command.display(),
                stderr_of(&out)
            );
        }
    }
}

/// Both reports list the denials in the order their first call came (the first refusal is
/// often what made the command fail): the probe makes getppid (110) before getpid (39), and
/// the JSON, which once sorted by number, lists them as the text does.
#[test]
fn both_reports_list_denials_in_the_order_the_calls_came() {
    let dir = TempDir::new("denials-order");
    let probe = build_probe(dir.path());
    let profile = dir.join("p.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["getpid", "getppid"], "action": "SCMP_ACT_ERRNO"}]}"#,
    )
    .unwrap();
    let report = dir.join("order.json");
    let out = exec_under(&profile)
        .arg("--denials-json")
        .arg(&report)
        .arg("--")
        .arg(&probe)
        .args([format!("raw:{NR_GETPPID}"), format!("raw:{NR_GETPID}")])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc = read_json(&report);
    let listed: Vec<&str> = doc["denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["syscall"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["getppid", "getpid"], "{doc}");
    let at = |name: &str| {
        err.find(&format!(" {name} (x86_64)"))
            .unwrap_or_else(|| panic!("{name} not in the text: {err}"))
    };
    assert!(at("getppid") < at("getpid"), "{err}");
}
