//! The verifier on libseccomp's own filters: the linear and binary-tree layouts libseccomp
//! builds for one profile must verify `equal` (layout is irrelevant, DESIGN.md §3), and a
//! profile with one rule removed must verify `different`, with `diff` naming exactly the
//! syscall whose rule was removed. The expected return values come from the profile text
//! (default `SCMP_ACT_ERRNO` with `defaultErrnoRet` 1, rules `SCMP_ACT_ALLOW`), not from secopt.

mod common;

use common::libseccomp_profiles::{build_filter, load_profile, ProfileOptions};
use secopt::arch::Arch;
use secopt::bpf::{interp, Program, RetVal};
use secopt::verify::{diff, equivalent, ArchGroup, DiffOutcome, Verdict, VerifyOptions};
use serde_json::Value;
use std::time::Instant;

const PROFILES: [&str; 7] = [
    "oci/docker-default.json",
    "oci/podman-containers-common-default.json",
    "oci/docker-labs-deny.json",
    "oci/k8s-website-violation.json",
    "oci/runc-integration-seccomp_syscall_test1.json",
    "oci/seccompagent-notify-dangerous.json",
    "oci/spo-nginx-1.19.1.json",
];

/// The arch sets the profiles are built with: the profile's own (Docker's archMap gives
/// x86_64 + x86 + x32 on this host), and lists set in place of it.
const ARCH_SETS: [Option<&[&str]>; 3] = [
    None,
    Some(&["SCMP_ARCH_X86_64"]),
    Some(&[
        "SCMP_ARCH_X86_64",
        "SCMP_ARCH_X86",
        "SCMP_ARCH_AARCH64",
        "SCMP_ARCH_ARM",
    ]),
];

/// `profile` with its architectures replaced by `arches`.
fn with_arches(mut profile: Value, arches: Option<&[&str]>) -> Value {
    if let Some(list) = arches {
        let obj = profile.as_object_mut().expect("a profile is an object");
        obj.remove("archMap");
        obj.insert(
            "architectures".into(),
            list.iter().map(|&a| Value::from(a)).collect(),
        );
    }
    profile
}

fn build(profile: &Value, optimize: u32) -> Program {
    let opts = ProfileOptions {
        optimize,
        ..ProfileOptions::default()
    };
    build_filter(profile, &opts)
        .unwrap_or_else(|e| panic!("libseccomp: {e}"))
        .program
}

#[test]
fn linear_and_binary_tree_layouts_are_equal() {
    let mut checked = 0;
    for name in PROFILES {
        for arches in ARCH_SETS {
            let profile = with_arches(load_profile(name).unwrap(), arches);
            let (linear, tree) = (build(&profile, 1), build(&profile, 2));
            let t = Instant::now();
            let v = equivalent(&linear, &tree, &VerifyOptions::default()).unwrap();
            assert_eq!(v, Verdict::Equal, "{name} {arches:?}");
            eprintln!(
                "{name} {arches:?}: {} vs {} instructions, equal in {:?}",
                linear.len(),
                tree.len(),
                t.elapsed()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, PROFILES.len() * ARCH_SETS.len());
}

/// `profile` without syscall `name` in the group at `index` (and without that group if it
/// becomes empty).
fn without(profile: &Value, predicate: impl Fn(&Value) -> bool, name: &str) -> Value {
    let mut p = profile.clone();
    let calls = p["syscalls"].as_array_mut().unwrap();
    let mut removed = false;
    for call in calls.iter_mut() {
        if !predicate(call) {
            continue;
        }
        let names = call["names"].as_array_mut().unwrap();
        let before = names.len();
        names.retain(|n| n != name);
        removed |= names.len() != before;
    }
    assert!(removed, "{name} is in the profile");
    calls.retain(|c| !c["names"].as_array().unwrap().is_empty());
    p
}

/// The diff as `(group, subject, change)` lines.
fn diff_lines(a: &Program, b: &Program) -> Vec<(String, String, String)> {
    let DiffOutcome::Different(d) = diff(a, b, &VerifyOptions::default()).unwrap() else {
        panic!("the filters differ");
    };
    let mut lines = Vec::new();
    for g in &d.arches {
        for e in &g.entries {
            for c in &e.changes {
                assert_eq!(interp::eval(a, &c.example).unwrap(), c.example_a);
                assert_eq!(interp::eval(b, &c.example).unwrap(), c.example_b);
                lines.push((g.group.to_string(), e.subject(), c.to_string()));
            }
        }
    }
    lines
}

#[test]
fn removing_a_rule_shows_exactly_that_syscall() {
    let profile = load_profile("oci/docker-default.json").unwrap();
    let is_allow = |c: &Value| c["action"] == "SCMP_ACT_ALLOW" && c.get("args").is_none();
    let reduced = without(&profile, is_allow, "getpid");
    for optimize in [1, 2] {
        let (full, less) = (build(&profile, optimize), build(&reduced, 2));
        let Verdict::Different(c) = equivalent(&full, &less, &VerifyOptions::default()).unwrap()
        else {
            panic!("removing getpid must make a difference");
        };
        let arch = Arch::of_data(c.data.arch, c.data.nr as u32).unwrap();
        assert_eq!(arch.syscalls().name(c.data.nr as u32), Some("getpid"));
        assert_eq!((c.a, c.b), (RetVal::ALLOW, RetVal::errno(1)));
        // Docker's archMap on x86_64: x86_64, x86 and x32 (x32 inside the x86_64 block).
        let expected: Vec<(String, String, String)> = ["x86_64", "x86", "x32"]
            .iter()
            .map(|a| (a.to_string(), "getpid".into(), "ALLOW -> ERRNO(1)".into()))
            .collect();
        assert_eq!(diff_lines(&full, &less), expected);
    }
}

#[test]
fn removing_an_argument_rule_shows_the_argument_value() {
    // personality(8) (PER_LINUX32) is allowed by its own rule; without it, that one value
    // falls to the default action. libseccomp compares both halves of a 64-bit argument on
    // x86_64 and only the low half on the ABIs it declares 32-bit: x86, and x32
    // (`arch_def_x32.size = ARCH_SIZE_32` in libseccomp's arch-x32.c).
    let profile = load_profile("oci/docker-default.json").unwrap();
    let mut reduced = profile.clone();
    let calls = reduced["syscalls"].as_array_mut().unwrap();
    let before = calls.len();
    calls.retain(|c| {
        !(c["names"] == serde_json::json!(["personality"]) && c["args"][0]["value"] == 8)
    });
    assert_eq!(calls.len(), before - 1);
    let (full, less) = (build(&profile, 1), build(&reduced, 1));
    let lines = diff_lines(&full, &less);
    let line = |arch: &str, cond: &str| {
        (
            arch.to_string(),
            "personality".to_string(),
            format!("ALLOW -> ERRNO(1) when {cond}"),
        )
    };
    assert_eq!(
        lines,
        [
            line("x86_64", "args[0] == 8"),
            line("x86", "args[0].lo == 8"),
            line("x32", "args[0].lo == 8"),
        ]
    );
    // Only those groups: no other arch token is affected.
    let DiffOutcome::Different(d) = diff(&full, &less, &VerifyOptions::default()).unwrap() else {
        unreachable!()
    };
    assert!(d
        .arches
        .iter()
        .all(|g| !matches!(g.group, ArchGroup::Other { .. })));
}
