//! End-to-end tests of `secopt verify` and `secopt diff`: exit codes (0 equal, 1 different,
//! 2 bad input, 3 unknown), the stated domain, text and JSON output, on libseccomp's filters
//! for Docker's default profile and on small hand-written filters whose differences are
//! worked out by hand.

mod common;

use common::libseccomp_profiles::docker_default;
use secopt::bpf::{interp, RetVal, SeccompData};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn secopt(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .expect("run secopt");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("secopt-verify-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p: PathBuf = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

/// Allows read, write and socket(AF_INET | AF_INET6) on x86_64.
const A: &str = "
    ld [arch]
    jeq #AUDIT_ARCH_X86_64, next, kill
    ld [nr]
    jge #0x40000000, deny
    jeq #x86_64.read, allow
    jeq #x86_64.write, allow
    jeq #x86_64.socket, next, deny
    ld [args[0].lo]
    jeq #2, allow
    jeq #10, allow, deny
deny:
    ret ERRNO(1)
kill:
    ret KILL_PROCESS
allow:
    ret ALLOW
";

/// The same as a range test, plus AF_NETLINK (16) for socket.
const B: &str = "
    ld [arch]
    jeq #AUDIT_ARCH_X86_64, next, kill
    ld [nr]
    jge #0x40000000, deny
    jeq #x86_64.socket, sock
    jgt #x86_64.write, deny
    jmp allow
sock:
    ld [args[0].lo]
    jeq #2, allow
    jeq #10, allow
    jeq #16, allow, deny
deny:
    ret ERRNO(1)
kill:
    ret KILL_PROCESS
allow:
    ret ALLOW
";

#[test]
fn libseccomp_layouts_verify_equal_and_a_change_is_found() {
    let linear = temp_file("linear.bpf", &docker_default(1).program.to_raw());
    let tree = docker_default(2).program;
    let tree_path = temp_file("tree.bpf", &tree.to_raw());
    let (code, out, err) = secopt(&["verify", &linear, &tree_path]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("equal: "), "{out}");
    assert!(out.contains("domain: all of seccomp_data"), "{out}");

    // The tree's first `ret ALLOW` becomes KILL_PROCESS: whatever reaches it now differs.
    let mut changed = tree.clone();
    let ret_allow: Vec<usize> = (0..changed.len())
        .filter(|&i| changed.insns[i].is_ret() && changed.insns[i].k == RetVal::ALLOW.0)
        .collect();
    changed.insns[ret_allow[0]].k = RetVal::KILL_PROCESS.0;
    let changed_path = temp_file("changed.bpf", &changed.to_raw());
    let (code, out, err) = secopt(&["verify", &linear, &changed_path, "--format", "json"]);
    assert_eq!(code, 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"], "different");
    let input = &v["counterexample"]["seccomp_data"];
    let data = SeccompData {
        nr: input["nr"].as_i64().unwrap() as i32,
        arch: input["arch"].as_u64().unwrap() as u32,
        instruction_pointer: input["instruction_pointer"].as_u64().unwrap(),
        args: std::array::from_fn(|i| input["args"][i].as_u64().unwrap()),
    };
    assert_eq!(
        interp::eval(&docker_default(1).program, &data).unwrap().0 as u64,
        v["counterexample"]["a"]["value"].as_u64().unwrap()
    );
    assert_eq!(
        interp::eval(&changed, &data).unwrap().0 as u64,
        v["counterexample"]["b"]["value"].as_u64().unwrap()
    );
    assert_eq!(v["counterexample"]["b"]["action"], "KILL_PROCESS");
}

#[test]
fn verify_text_states_the_counterexample_and_the_domain() {
    let (a, b) = (
        temp_file("a.s", A.as_bytes()),
        temp_file("b.s", B.as_bytes()),
    );
    let (code, out, _) = secopt(&["verify", &a, &b]);
    assert_eq!(code, 1, "{out}");
    // The only difference: socket(16) on x86_64 (smallest such input: all else 0).
    assert!(
        out.starts_with(
            "different: arch x86_64 (0xc000003e), nr 41 (socket), ip 0, args [16, 0, 0, 0, 0, 0]\n"
        ),
        "{out}"
    );
    assert!(out.contains("returns ERRNO(1) (0x00050001)"), "{out}");
    assert!(out.contains("returns ALLOW (0x7fff0000)"), "{out}");
    // Restricted to everything but socket, they are equal, and the output says so.
    let (code, out, _) = secopt(&[
        "verify",
        &a,
        &b,
        "--arch",
        "x86_64",
        "--nr",
        "0..=40,42-1000",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("domain: only arch in {x86_64} and nr in {0..=40, 42..=1000}"),
        "{out}"
    );
    let (code, out, _) = secopt(&["verify", &a, &b, "--arch", "x86_64", "--nr", "socket"]);
    assert_eq!(code, 1, "{out}");
}

/// On an arch without `__AUDIT_ARCH_LE` (s390x) the kernel lays each 64-bit field out high
/// word first, so `[16]` is the high half of `args[0]`: the counterexample carries the value
/// there, and says which layout it is in (a reader replaying it little-endian would find no
/// difference).
#[test]
fn a_big_endian_counterexample_says_so() {
    let a = temp_file(
        "be-a.s",
        b"ld [arch]\njeq #0x80000016, next, allow\nld [16]\njeq #5, next, allow\nret KILL_PROCESS\nallow:\nret ALLOW\n",
    );
    let b = temp_file("be-b.s", b"ret ALLOW\n");
    let (code, out, _) = secopt(&["verify", &a, &b, "--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let input = &v["counterexample"]["seccomp_data"];
    assert_eq!(input["arch"], 0x8000_0016u32, "{v}");
    assert_eq!(input["byte_order"], "big", "{v}");
    assert_eq!(input["args"][0].as_u64().unwrap() >> 32, 5, "{v}");
    let (_, text, _) = secopt(&["verify", &a, &b]);
    assert!(text.contains("has no __AUDIT_ARCH_LE bit"), "{text}");
    let (_, le, _) = secopt(&["verify", &a, &temp_file("le-b.s", b"ret KILL_PROCESS\n")]);
    assert!(!le.contains("__AUDIT_ARCH_LE"), "{le}");
}

#[test]
fn diff_lists_the_change_per_syscall() {
    let (a, b) = (
        temp_file("a.s", A.as_bytes()),
        temp_file("b.s", B.as_bytes()),
    );
    let (code, out, _) = secopt(&["diff", &a, &b]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[2], "x86_64 socket: ERRNO(1) -> ALLOW when args[0].lo == 16",
        "{out}"
    );
    assert_eq!(lines.len(), 4, "{out}");
    let (code, out, _) = secopt(&["diff", &a, &b, "--format", "json"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    let groups = v["arches"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["arch"], "x86_64");
    let entry = &groups[0]["entries"][0];
    assert_eq!(entry["names"], serde_json::json!(["socket"]));
    assert_eq!(
        (entry["first"].as_u64(), entry["last"].as_u64()),
        (Some(41), Some(41))
    );
    let change = &entry["changes"][0];
    assert_eq!(change["when"], "args[0].lo == 16");
    assert_eq!(change["example"]["seccomp_data"]["args"][0], 16);
    // As verify's: how the difference was found.
    assert_eq!(v["found_by"], "proof", "{v}");
    let (code, out, _) = secopt(&["diff", &a, &a]);
    assert_eq!(code, 0);
    assert!(out.starts_with("no differences"), "{out}");
    // Equal filters have the keys of a difference, empty (they were missing).
    let (code, out, _) = secopt(&["diff", &a, &a, "--format", "json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"], "equal");
    assert_eq!(v["arches"], serde_json::json!([]));
    assert!(v.as_object().unwrap().contains_key("truncated"), "{v}");
    assert!(v["truncated"].is_null(), "{v}");
    // An equality over a narrowed domain says so on its first line, not only on the next.
    let (code, out, _) = secopt(&["verify", &a, &a, "--arch", "x86_64", "--nr", "0..=40"]);
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.ends_with("on every input in the domain below"),
        "{out}"
    );
    let (_, out, _) = secopt(&["verify", &a, &a]);
    assert!(
        out.lines()
            .next()
            .unwrap_or_default()
            .ends_with("on every input"),
        "{out}"
    );
}

/// A change over a whole ABI is one line, not one per gap in its syscall table: gVisor's
/// program for Firecracker's API thread traps every x86_64-token number from 0x40000000 up
/// (it checks only the arch token), where libseccomp's bad-arch action kills the thread
/// (tests/peer_compilers.rs proves that is the only difference). A short run of named numbers
/// is still listed name by name (`diff_lists_the_change_per_syscall`).
#[test]
fn a_change_over_a_whole_abi_is_one_entry() {
    let root = env!("CARGO_MANIFEST_DIR");
    let gvisor = format!("{root}/tests/data/peers/firecracker-api.gvisor.bpf");
    let thread = format!(
        "{root}/../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json:api"
    );
    let args = ["diff", &gvisor, &thread, "--profile-arch", "x86_64"];
    let (code, out, err) = secopt(&args);
    assert_eq!(code, 1, "{out}{err}");
    let changes: Vec<&str> = out
        .lines()
        .filter(|l| l.ends_with(": TRAP -> KILL_THREAD"))
        .collect();
    // x32's numbers are 0x40000000..=0x7fffffff; those with bit 31 set are x86_64's (no
    // x32 call: the kernel's x32 table takes nr - 0x40000000 below its size), up to
    // 0xfffffffe: -1 is no change.
    assert_eq!(changes.len(), 2, "{out}");
    assert_eq!(
        changes[0],
        "x86_64 (nr 0x80000000..=0xfffffffe): TRAP -> KILL_THREAD"
    );
    assert!(
        changes[1].starts_with("x32 (nr 0x40000000..=0x7fffffff, every number: ")
            && changes[1].contains(" named syscalls among them)"),
        "{out}"
    );
    let (code, out, _) = secopt(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    let x32 = v["arches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["arch"] == "x32")
        .unwrap();
    let whole = &x32["entries"][0];
    assert_eq!(whole["unnamed_numbers"], true);
    // A run of numbers no table names holds unnamed numbers too (it said false: only mixed
    // runs were flagged, found by an audit).
    let x86_64 = v["arches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["arch"] == "x86_64")
        .unwrap();
    let unnamed = &x86_64["entries"][0];
    assert_eq!(unnamed["first"], 0x8000_0000_u32, "{unnamed}");
    assert_eq!(unnamed["names"], serde_json::json!([]));
    assert_eq!(unnamed["unnamed_numbers"], true);
    assert_eq!(
        (whole["first"].as_u64(), whole["last"].as_u64()),
        (Some(0x4000_0000), Some(0x7fff_ffff))
    );
    let names: Vec<&str> = whole["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for name in ["read", "ioctl", "openat", "exit_group"] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
}

#[test]
fn unknown_and_bad_input_exit_codes() {
    // A product of two arguments compared with a constant: far beyond 1000 nodes.
    let product = temp_file(
        "product.s",
        b"ld [args[0].lo]\ntax\nld [args[1].lo]\nmul x\njeq #12345, allow\nret ERRNO(1)\nallow: ret ALLOW\n",
    );
    let allow = temp_file("allow.s", b"ret ALLOW\n");
    // The same product with the factors swapped: equal, but beyond the budgets, and no input
    // differs (the sampling after the proof runs out finds nothing, so the answer stays
    // unknown). Byte-identical filters are equal without a proof.
    let same = temp_file(
        "product-again.s",
        b"ld [args[1].lo]\ntax\nld [args[0].lo]\nmul x\njeq #12345, allow\nret ERRNO(1)\nallow: ret ALLOW\n",
    );
    // The node budget, and the step budget (the same verdict on any machine): each named in
    // text and JSON.
    for (flag, limit, unit, budget) in [
        ("--max-nodes", 1000, "nodes", "bdd_nodes"),
        ("--max-steps", 5000, "steps", "bdd_steps"),
    ] {
        let n = limit.to_string();
        let (code, out, _) = secopt(&["verify", &product, &same, flag, &n]);
        assert_eq!(code, 3, "{out}");
        // What ran out, and the flag that raises it (the one this run lowered).
        let said = format!(
            "unknown: the decision diagrams needed more than {limit} {unit} (raise {flag})"
        );
        assert!(out.starts_with(&said), "{out}");
        let (code, out, _) = secopt(&["verify", &product, &same, flag, &n, "--format", "json"]);
        assert_eq!(code, 3);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (
                v["verdict"].as_str(),
                v["budget"]["budget"].as_str(),
                v["budget"]["limit"].as_u64()
            ),
            (Some("unknown"), Some(budget), Some(limit))
        );
    }

    // Against `ret ALLOW` the proof runs out too, but an input made of the constants
    // (args[0] * args[1] != 12345, e.g. all zero) tells them apart: different, exit 1, and
    // the output says how it was found. Checked here by hand from the input.
    let sampled = |verb: &str| -> Value {
        let (code, out, _) = secopt(&[
            verb,
            &product,
            &allow,
            "--max-nodes",
            "1000",
            "--format",
            "json",
        ]);
        assert_eq!(code, 1, "{verb}: {out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (v["verdict"].as_str(), v["found_by"].as_str()),
            (Some("different"), Some("sampling")),
            "{verb}"
        );
        v
    };
    let v = sampled("verify");
    assert!(v["reason"].as_str().unwrap().contains("1000 nodes"), "{v}");
    // `[args[i].lo]` is the word at 16 + 8i: the low half when the arch token says
    // little-endian (bit 30), the high half otherwise.
    let input = &v["counterexample"]["seccomp_data"];
    let little = input["arch"].as_u64().unwrap() & 0x4000_0000 != 0;
    let word = |i: usize| {
        let arg = input["args"][i].as_u64().unwrap();
        if little {
            arg as u32
        } else {
            (arg >> 32) as u32
        }
    };
    assert_ne!(word(0).wrapping_mul(word(1)), 12345, "{v}");
    assert_eq!(v["counterexample"]["a"]["action"], "ERRNO(1)");
    assert_eq!(v["counterexample"]["b"]["action"], "ALLOW");

    // `diff` likewise: it cannot list where they differ, but says that they do (exit 1),
    // with an input both filters were run on; against itself it stays unknown (exit 3).
    let (code, out, _) = secopt(&["diff", &product, &allow, "--max-nodes", "1000"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the filters differ, but where cannot be listed"),
        "{out}"
    );
    assert!(
        out.contains(": ERRNO(1)") && out.contains("-> ALLOW"),
        "{out}"
    );
    sampled("diff");
    let (code, out, _) = secopt(&["diff", &product, &same, "--max-nodes", "1000"]);
    assert_eq!(code, 3, "{out}");

    // Invalid filter (load offset 2): rejected with the validator's message, exit 2.
    let bad = temp_file(
        "bad.bpf",
        &[0x20, 0, 0, 0, 2, 0, 0, 0, 0x06, 0, 0, 0, 0, 0, 0xff, 0x7f],
    );
    let (code, _, err) = secopt(&["verify", &allow, &bad]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.bpf: the kernel would reject this filter"),
        "{err}"
    );
    assert!(err.contains("multiple of 4"), "{err}");
    // A node budget below the two constants and one test is a usage error.
    let (code, _, err) = secopt(&["verify", &allow, &allow, "--max-nodes", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--max-nodes"), "{err}");
    // A syscall name without an arch to resolve it.
    let (code, _, err) = secopt(&["verify", &allow, &allow, "--nr", "socket"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("needs an architecture") && err.contains("--arch"),
        "{err}"
    );
    // x32's numbers have bit 30 set: 39 selects no x32 input, and a vacuous "equal" would
    // mislead; x32's getpid (0x40000027) is a domain.
    let (code, _, err) = secopt(&["verify", &allow, &allow, "--arch", "x32", "--nr", "39"]);
    assert_eq!(code, 2);
    assert!(err.contains("no input is in the domain"), "{err}");
    for nr in ["getpid", "0x40000027"] {
        let (code, out, err) = secopt(&["verify", &allow, &allow, "--arch", "x32", "--nr", nr]);
        assert_eq!(code, 0, "{nr}: {out} {err}");
    }
    let (code, _, err) = secopt(&["diff", &allow, "/nonexistent/x.bpf"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/x.bpf: cannot read"), "{err}");
}

/// A profile on stdin is compiled like a profile file (`-` is any input), and one stdin
/// cannot be both inputs.
#[test]
fn a_profile_on_stdin_is_read_as_a_profile() {
    use std::io::Write;
    let profile = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/web-server.json");
    let compiled = temp_file("web-server.bpf", b"");
    let (code, _, err) = secopt(&["compile", profile.to_str().unwrap(), "-o", &compiled]);
    assert_eq!(code, 0, "{err}");
    for verb in ["verify", "diff"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_secopt"))
            .args([verb, "-", &compiled])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let json = std::fs::read(&profile).unwrap();
        child.stdin.take().unwrap().write_all(&json).unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{verb}: {stdout} {:?}",
            out.stderr
        );
        assert!(stdout.contains("<stdin> and"), "{verb}: {stdout}");
    }
    for pair in [["-", "-"], ["-:api", "-:vcpu"], ["-", "-:vcpu"]] {
        let (code, _, err) = secopt(&["verify", "--", pair[0], pair[1]]);
        assert_eq!(code, 2);
        assert!(err.contains("both inputs read stdin"), "{err}");
    }
    // A Firecracker file holds a filter per thread, and `compiled` one: the error says how to
    // name one thread.
    let fc = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json");
    let (code, _, err) = secopt(&["verify", fc.to_str().unwrap(), &compiled]);
    assert_eq!(code, 2);
    assert!(
        err.contains("threads api, vcpu, vmm") && err.contains(&format!("`{}:api`", fc.display())),
        "{err}"
    );
}

/// `--progress always` logs each stage of the comparison on stderr (for a CI log: the files
/// compared, thread by thread for Firecracker's, with the decision diagrams' nodes and steps
/// against the budgets) and its last line says what the comparison took; the report on
/// stdout and the exit code are the same with `never` and with the default, which on a pipe
/// (not a terminal) says nothing.
#[test]
fn progress_is_logged_on_stderr_when_asked_and_changes_nothing_else() {
    let (a, b) = (
        temp_file("progress-a.s", A.as_bytes()),
        temp_file("progress-b.s", B.as_bytes()),
    );
    for verb in ["verify", "diff"] {
        let run = |progress: Option<&str>| {
            let mut args = vec![verb, &a, &b, "--max-nodes", "100000"];
            if let Some(p) = progress {
                args.extend(["--progress", p]);
            }
            secopt(&args)
        };
        let (code, stdout, stderr) = run(Some("always"));
        assert_eq!(code, 1, "{verb}: {stdout}{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 4, "{verb}: {stderr}");
        for (line, stage) in lines
            .iter()
            .zip(["exploring A", "exploring B", "comparing A and B"])
        {
            assert!(
                line.starts_with(&format!("secopt: {stage}: ")),
                "{verb}: {stderr}"
            );
            assert!(line.contains("/100.0k nodes, "), "{verb}: {stderr}");
        }
        assert!(lines[3].starts_with("secopt: done: "), "{verb}: {stderr}");
        assert!(lines[3].contains("/100.0k nodes, "), "{verb}: {stderr}");
        for quiet in [Some("never"), None] {
            assert_eq!(
                run(quiet),
                (1, stdout.clone(), String::new()),
                "{verb} {quiet:?}"
            );
        }
    }
    // Firecracker's file: each thread's comparison is labelled with its thread.
    let fc = common::libseccomp_profiles::profile_path(
        "firecracker/firecracker-x86_64-unknown-linux-musl.json",
    );
    let fc = fc.to_str().unwrap();
    let compiled = temp_file("progress-fc.out", b"");
    let (code, _, stderr) = secopt(&["compile", fc, "--emit", "firecracker", "-o", &compiled]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = secopt(&["verify", fc, &compiled, "--progress", "always"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    for thread in ["api", "vcpu", "vmm"] {
        for stage in ["exploring A", "exploring B", "comparing A and B", "done"] {
            let line = format!("secopt: {thread}: {stage}: ");
            assert_eq!(stderr.matches(&line).count(), 1, "{line}: {stderr}");
        }
    }
    // And the JSON report gives each thread's work.
    let (code, stdout, _) = secopt(&["verify", fc, &compiled, "--format", "json"]);
    assert_eq!(code, 0, "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 3, "{v}");
    for t in threads {
        assert!(t["proof"]["bdd_nodes"].as_u64().unwrap() > 2, "{t}");
    }
}

/// The JSON report says what the proof took: the decision diagrams' nodes and steps, which
/// reach `--max-nodes` exactly where that budget ran out, and are 0 for the same
/// instructions on both sides (nothing explored).
#[test]
fn the_json_report_gives_the_work_the_proof_took() {
    // Products of argument words: more nodes than any small budget.
    let (p7, p8) = (
        temp_file("work-7.s", product_filter(7).as_bytes()),
        temp_file("work-8.s", product_filter(8).as_bytes()),
    );
    let work = |args: &[&str]| {
        let (code, stdout, stderr) = secopt(args);
        let v: Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
        let n = |k: &str| v["proof"][k].as_u64().unwrap_or_else(|| panic!("{k}: {v}"));
        // The budget the work is measured against, as the flags gave it.
        let max_nodes = args
            .iter()
            .position(|&a| a == "--max-nodes")
            .map_or(1 << 24, |i| args[i + 1].parse().unwrap());
        assert_eq!(
            (n("max_bdd_nodes"), n("max_bdd_steps")),
            (max_nodes, 1 << 28),
            "{v}"
        );
        (code, n("bdd_nodes"), n("bdd_steps"))
    };
    let (code, nodes, steps) = work(&[
        "verify",
        &p7,
        &p8,
        "--max-nodes",
        "5000",
        "--format",
        "json",
    ]);
    assert_eq!((code, nodes), (3, 5000));
    assert!(steps > 0);
    assert_eq!(work(&["verify", &p7, &p7, "--format", "json"]), (0, 0, 0));
    // Filters that differ only in how they test: explored, within the budgets.
    let (a, b) = (
        temp_file("work-a.s", A.as_bytes()),
        temp_file("work-b.s", B.as_bytes()),
    );
    for verb in ["verify", "diff"] {
        let (code, nodes, steps) = work(&[verb, &a, &b, "--format", "json"]);
        assert_eq!(code, 1);
        assert!(
            nodes > 2 && nodes < 1 << 24 && steps > 0,
            "{verb}: {nodes} {steps}"
        );
    }
}

/// On a terminal (a pseudo-terminal `script` gives, 60 columns), `verify` draws one status
/// line while a comparison the decision diagrams cannot finish runs (products of argument
/// words, until 5 million steps: over a second here), redrawn in place with the nodes and
/// steps against the budgets, never wider than the terminal (the time left out to keep
/// both counts), and cleared before the verdict
/// prints. The line appears only once the work has run half a second, so a machine that
/// finishes sooner shows none: the test insists on it when the run took a second.
#[test]
fn a_terminal_sees_a_long_comparison_drawn_with_its_counts_and_cleared() {
    use common::terminal::{run_on_a_terminal, DRAW};
    let (a, b) = (
        temp_file("tty-7.s", product_filter(7).as_bytes()),
        temp_file("tty-8.s", product_filter(8).as_bytes()),
    );
    let Some((screen, code, took)) =
        run_on_a_terminal(&format!("verify {a} {b} --max-steps 5000000"))
    else {
        return;
    };
    assert_eq!(code, Some(3), "{screen:?}");
    let draws: Vec<&str> = screen.split(DRAW).skip(1).collect();
    if took >= std::time::Duration::from_secs(1) {
        assert!(draws.len() >= 2, "{took:?}: {screen:?}");
    }
    if let Some((last, drawn)) = draws.split_last() {
        for line in drawn {
            assert!(line.starts_with("secopt: exploring A: "), "{line:?}");
            // Both counts, though the whole line is wider than the terminal: the time gives way.
            assert!(line.contains("/16.8M nodes, "), "{line:?}");
            assert!(line.contains("/5.0M steps"), "{line:?}");
            assert!(line.chars().count() <= 59, "{line:?}");
            assert!(!line.contains('\n'), "{line:?}");
        }
        // The last one cleared the line: the verdict follows.
        assert!(
            last.starts_with("unknown: the decision diagrams needed more than 5000000 steps"),
            "{last:?}"
        );
    }
}

/// A filter that multiplies two argument words and allows one value of the sum: decision
/// diagrams that no small budget holds (`verify` answers unknown on two of them).
fn product_filter(k: u32) -> String {
    format!(
        "ld [args[0].lo]\nmul #2654435769\ntax\nld [args[1].lo]\nmul #40503\nadd x\n\
         jeq #{k}, allow, next\nret ERRNO(1)\nallow:\nret ALLOW\n"
    )
}

/// `--input-format` given twice is each input's (a big-endian file beside a listing), given
/// once both inputs'; an input it does not fit is refused with that said (an audit could
/// compare no big-endian file with a listing or a little-endian one). The big-endian bytes are
/// swapped here by hand from the little-endian ones `secopt asm` writes (`struct sock_filter`:
/// u16 code, u8 jt, u8 jf, u32 k, each in the machine's order).
#[test]
fn input_format_twice_is_one_per_input() {
    let listing = temp_file("fmt-a.s", A.as_bytes());
    let le = temp_file("fmt-a.bpf", b"");
    let (code, _, err) = secopt(&["asm", &listing, "-o", &le]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&le).unwrap();
    let be: Vec<u8> = bytes
        .chunks(8)
        .flat_map(|i| [i[1], i[0], i[2], i[3], i[7], i[6], i[5], i[4]])
        .collect();
    let be = temp_file("fmt-a.be.bpf", &be);
    let (code, out, err) = secopt(&[
        "verify",
        &be,
        &listing,
        "--input-format",
        "raw-be",
        "--input-format",
        "asm",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // The listing's own format for both: the big-endian file is not text.
    let (code, _, err) = secopt(&["verify", &be, &listing, "--input-format", "raw-be"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("fmt-a.s") && err.contains("applies to both inputs"),
        "{err}"
    );
    // Swapped, the formats misread both inputs.
    let (code, _, _) = secopt(&[
        "verify",
        &be,
        &listing,
        "--input-format",
        "asm",
        "--input-format",
        "raw-be",
    ]);
    assert_eq!(code, 2);
    // The little-endian file read as big-endian is another program, not this one.
    let (code, _, err) = secopt(&[
        "verify",
        &le,
        &listing,
        "--input-format",
        "raw-be",
        "--input-format",
        "asm",
    ]);
    assert_ne!(code, 0, "{err}");
    let (code, _, err) = secopt(&[
        "diff",
        &be,
        &listing,
        "--input-format",
        "raw-be",
        "--input-format",
        "asm",
        "--input-format",
        "raw",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("given 3 times"), "{err}");
}
