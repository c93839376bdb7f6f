//! examples/embed.rs, run: the library path a container runtime takes (compile an OCI profile,
//! prove it, install it with the profile's flags between fork and exec) must work as the
//! example's doc says, not only build. The kernel is the oracle: a small C program
//! (tests/data/syscall_probe.c) reports from inside what its calls returned.
//!
//! Expected values: Docker's default profile allows `getpid` and `personality(0xffffffff)` and
//! not `personality(ADDR_NO_RANDOMIZE)` (tests/e2e_exec.rs checks this from the profile's JSON),
//! with errno 1 for what it denies; examples/web-server.json does not allow `execve` and denies
//! with errno 1 (its `defaultErrnoRet`, checked below). Syscall numbers: x86_64's
//! syscall_64.tbl.
//!
//! `cargo test` builds examples only as test harnesses, so scripts/test.sh (the README's test
//! command) builds them as programs first. Without that build, or with sources newer than it,
//! the tests skip loudly (fail under `SECOPT_REQUIRE_E2E=1`) rather than run old code.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

#[path = "data/e2e_support.rs"]
mod support;

use std::path::PathBuf;
use std::process::{Command, Output};
use support::*;

const NR_GETPID: u32 = 39;
const PERSONALITY_QUERY: &str = "raw:135,0xffffffff";
const PERSONALITY_NO_RANDOMIZE: &str = "raw:135,0x40000";
const EPERM: i32 = 1;

/// The example's binary, built by cargo beside this test's (`target/PROFILE/examples/embed`).
fn embed_binary(test: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    // target/PROFILE/deps/example_embed-HASH -> target/PROFILE/examples/embed
    let path = exe.parent()?.parent()?.join("examples").join("embed");
    let release = if cfg!(debug_assertions) {
        ""
    } else {
        " --release"
    };
    let build = format!("cargo build --all-features --examples{release}");
    let why = match std::fs::metadata(&path).and_then(|m| m.modified()) {
        Err(_) => format!("{} is not built ({build} builds it)", path.display()),
        Ok(built) => match newest_source_after(built) {
            None => return Some(path),
            Some(source) => format!(
                "{} is older than {} ({build} rebuilds it)",
                path.display(),
                source.display()
            ),
        },
    };
    skip_or_fail(test, &why);
    None
}

/// A source of the example (the library's, the example's own, Cargo.lock) changed after
/// `built`: running the binary would test old code.
fn newest_source_after(built: std::time::SystemTime) -> Option<PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pending = vec![root.join("src")];
    let mut files = vec![root.join("examples/embed.rs"), root.join("Cargo.lock")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.into_iter().find(|f| {
        std::fs::metadata(f)
            .and_then(|m| m.modified())
            .is_ok_and(|m| m > built)
    })
}

fn embed(binary: &PathBuf, profile: &std::path::Path, command: &[&str]) -> Output {
    Command::new(binary)
        .arg(profile)
        .args(command)
        .output()
        .unwrap()
}

#[test]
fn a_program_run_by_the_example_sees_the_docker_default_decisions() {
    let test = "a_program_run_by_the_example_sees_the_docker_default_decisions";
    let Some(binary) = embed_binary(test) else {
        return;
    };
    let dir = TempDir::new("example-embed");
    let probe = build_probe(dir.path());
    let getpid = format!("raw:{NR_GETPID}");
    let probes = [getpid.as_str(), PERSONALITY_QUERY, PERSONALITY_NO_RANDOMIZE];

    // Without a filter, every probe succeeds: the denial below is the filter's.
    let base = Command::new(&probe).args(probes).output().unwrap();
    assert!(base.status.success());
    let base = parse_probe(&stdout_of(&base));
    assert!(base.values().all(|r| r.succeeded()), "{base:?}");

    let mut command = vec![probe.to_str().unwrap()];
    command.extend(probes);
    let out = embed(
        &binary,
        &shared_profile("oci/docker-default.json"),
        &command,
    );
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let got = parse_probe(&stdout_of(&out));
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[getpid.as_str()].succeeded(), "{got:?}");
    assert!(got[PERSONALITY_QUERY].succeeded(), "{got:?}");
    assert!(got[PERSONALITY_NO_RANDOMIZE].failed_with(EPERM), "{got:?}");
    // The example says what it installed: the optimized filter, proved equal.
    assert!(stderr.contains("optimized, proved equal"), "{stderr}");
    // It shows the profile's warnings: on x86 Docker's `socket` domain rules do not hold for
    // calls made through socketcall (compile::multiplexed_conditions); nothing else.
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("$.syscalls[2]: on x86,") && warnings[0].contains("socketcall(2)"),
        "{stderr}"
    );
}

#[test]
fn a_profile_without_execve_stops_the_command_before_it_starts() {
    let test = "a_profile_without_execve_stops_the_command_before_it_starts";
    let Some(binary) = embed_binary(test) else {
        return;
    };
    let profile = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/web-server.json"
    ));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    assert_eq!(json["defaultAction"], "SCMP_ACT_ERRNO");
    assert_eq!(json["defaultErrnoRet"], EPERM);
    assert!(!json.to_string().contains("\"execve\""));

    let out = embed(&binary, &profile, &["/bin/true"]);
    let stderr = stderr_of(&out);
    // The example's error: the exec the filter refused, with the kernel's errno 1 text.
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("/bin/true under") && stderr.contains("Operation not permitted"),
        "{stderr}"
    );
}

#[test]
fn a_missing_profile_is_named() {
    let Some(binary) = embed_binary("a_missing_profile_is_named") else {
        return;
    };
    let out = embed(
        &binary,
        std::path::Path::new("/nonexistent/profile.json"),
        &["/bin/true"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr_of(&out).contains("/nonexistent/profile.json"),
        "{}",
        stderr_of(&out)
    );
}
