//! Every verb's JSON speaks one vocabulary (docs/json.md): the same thing has the same name and
//! shape in each document, and the names it replaced are gone. The test runs each verb that
//! writes JSON on the shipped examples and a Firecracker file and walks every key of every
//! document, so a new field named the old way, or a shared name given another shape, fails
//! here rather than in a user's script.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
const EXAMPLE_V2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server-v2.json");
const FIRECRACKER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json"
);
const WORKLOAD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/workloads/nginx-wrk.strace-c.txt"
);

/// Names docs/json.md retired, each with the one that replaced it.
const RETIRED: &[(&str, &str)] = &[
    ("source", "input"),
    ("reference_instructions", "reference_length"),
    ("bench_instructions", "bench_length"),
    ("worst_case_path", "max_steps"),
    ("min_path", "min_steps"),
    ("max_path", "max_steps"),
    ("insns", "steps"),
    ("insns_range", "steps_range"),
    ("returns", "actions"),
    ("returns_complete", "actions_complete"),
    ("decisions", "actions"),
    ("decisions_complete", "actions_complete"),
    ("decision", "action"),
    ("decision_depends_on_args", "depends_on_args"),
    ("expected_with_cache", "cost_with_cache"),
    ("expected_without_cache", "cost_without_cache"),
    ("with_cache", "cost_with_cache"),
    ("without_cache", "cost_without_cache"),
    ("work", "proof"),
    ("return", "value"),
    ("words_read", "reads"),
    ("syscall table", "syscall-table"),
];

const SECCOMP_DATA_KEYS: &[&str] = &[
    "arch",
    "arch_name",
    "args",
    "byte_order",
    "instruction_pointer",
    "nr",
    "syscall",
];
const PROOF_KEYS: &[&str] = &["bdd_nodes", "bdd_steps", "max_bdd_nodes", "max_bdd_steps"];

fn secopt(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .expect("run secopt");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {stderr}"
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is no JSON document ({e}); {stderr}"))
}

fn keys_of(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

fn is_count(v: &Value) -> bool {
    v.is_u64() || v.is_null()
}

/// Checks every key of `v` (at `at`, for messages) against the vocabulary; counts the shared
/// names it met in `seen`.
fn check(v: &Value, at: &str, seen: &mut Vec<String>) {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check(item, &format!("{at}[{i}]"), seen);
            }
        }
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{at}.{key}");
                if let Some((_, now)) = RETIRED.iter().find(|(old, _)| old == key) {
                    panic!("{here}: `{key}` is now `{now}` (docs/json.md)");
                }
                let ok = match key.as_str() {
                    "input" => value.is_string(),
                    "length" | "reference_length" | "bench_length" => value.is_u64(),
                    "instructions" => value.as_array().is_some_and(|a| {
                        a.iter()
                            .all(|i| ["code", "jt", "jf", "k"].iter().all(|f| i[f].is_u64()))
                    }),
                    "steps" | "min_steps" | "max_steps" => is_count(value),
                    "action" => value.is_string(),
                    "actions" => value
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_string)),
                    "actions_complete" | "depends_on_args" | "cached" => value.is_boolean(),
                    "seccomp_data" => keys_of(value) == SECCOMP_DATA_KEYS,
                    "proof" => value.is_null() || keys_of(value) == PROOF_KEYS,
                    "cache" => keys_of(value) == ["kind", "text"] && value["kind"].is_string(),
                    "cost_with_cache" | "cost_without_cache" => value.is_number(),
                    "reads" => value
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_string)),
                    _ => true,
                };
                assert!(ok, "{here}: {value} is not shaped as docs/json.md says");
                // A filter's answer as a number sits beside it in words.
                if key == "value" && map.contains_key("action") {
                    assert!(value.is_u64(), "{here}: {value}");
                }
                seen.push(key.clone());
                check(value, &here, seen);
            }
        }
        _ => {}
    }
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn path(d: &Path, name: &str) -> String {
    d.join(name).to_str().unwrap().to_string()
}

#[test]
fn every_verb_names_the_same_things_alike() {
    let dir = Dir(std::env::temp_dir().join(format!("secopt-json-vocab-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let d = dir.0.as_path();
    let (bpf, v2, fc_file) = (path(d, "w.bpf"), path(d, "v2.bpf"), path(d, "fc.bin"));
    let mut documents: Vec<(String, Value)> = Vec::new();
    let mut run = |label: &str, args: &[&str]| documents.push((label.to_string(), secopt(args)));

    run(
        "compile --report-format json",
        &[
            "compile",
            EXAMPLE,
            "-o",
            &bpf,
            "--report-format",
            "json",
            "--weights",
            WORKLOAD,
            "-q",
        ],
    );
    run(
        "compile --emit json",
        &["compile", EXAMPLE, "--emit", "json", "-o", "-", "-q"],
    );
    run(
        "compile --report-format json (Firecracker)",
        &[
            "compile",
            FIRECRACKER,
            "--emit",
            "firecracker",
            "-o",
            &fc_file,
            "--report-format",
            "json",
            "-q",
        ],
    );
    run(
        "compile v2",
        &[
            "compile",
            EXAMPLE_V2,
            "-o",
            &v2,
            "--report-format",
            "json",
            "-q",
        ],
    );
    run(
        "optimize --format json",
        &[
            "optimize",
            &bpf,
            "-o",
            &path(d, "o.bpf"),
            "--format",
            "json",
            "-q",
        ],
    );
    run(
        "optimize --output-format json",
        &["optimize", &bpf, "--output-format", "json", "-o", "-", "-q"],
    );
    run(
        "verify equal",
        &["verify", &bpf, EXAMPLE, "--format", "json"],
    );
    run(
        "verify different",
        &["verify", &bpf, &v2, "--format", "json"],
    );
    run(
        "verify threads",
        &["verify", FIRECRACKER, &fc_file, "--format", "json"],
    );
    run("diff", &["diff", &bpf, &v2, "--format", "json"]);
    run("analyze", &["analyze", &bpf, "--format", "json"]);
    // A kernel without the allow cache: still `cached` false and a `cache` saying why.
    run(
        "analyze --kernel 5.10",
        &["analyze", &bpf, "--kernel", "5.10", "--format", "json"],
    );
    run(
        "analyze --kernel none",
        &["analyze", &bpf, "--kernel", "none", "--format", "json"],
    );
    run(
        "analyze --workload",
        &["analyze", &bpf, "--workload", WORKLOAD, "--format", "json"],
    );
    run(
        "analyze threads",
        &["analyze", &fc_file, "--format", "json"],
    );
    run(
        "emu",
        &[
            "emu", &bpf, "--arch", "x86_64", "--nr", "socket", "--arg", "0=10", "--format", "json",
        ],
    );
    run(
        "emu threads",
        &["emu", &fc_file, "--nr", "read", "--format", "json"],
    );
    run("disasm", &["disasm", &bpf, "--format", "json"]);
    run(
        "exec --dry-run",
        &[
            "exec",
            "-p",
            EXAMPLE,
            "--dry-run",
            "--format",
            "json",
            "--",
            "/bin/true",
        ],
    );
    // A call refused: the report has a denial with its samples.
    let refusing = path(d, "no-mkdir.json");
    std::fs::write(
        &refusing,
        r#"{"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}"#,
    )
    .unwrap();
    let refused_dir = path(d, "never/made");
    run(
        "exec --denials-json",
        &[
            "exec",
            "-p",
            &refusing,
            // mkdir prints nothing on stdout: the document is all of it.
            "--denials-json",
            "/dev/stdout",
            "--",
            "mkdir",
            "-p",
            &refused_dir,
        ],
    );
    run(
        "bench",
        &[
            "bench",
            "--bpf",
            &format!("w={bpf}"),
            "--probe",
            "getpid",
            "--rounds",
            "1",
            "--calls",
            "10",
            "--warmup",
            "0",
            "--format",
            "json",
        ],
    );

    let mut seen = Vec::new();
    for (label, doc) in &documents {
        check(doc, label, &mut seen);
    }
    // The walk met every shared name (a verb that stopped writing one would not be checked).
    for name in [
        "input",
        "length",
        "instructions",
        "steps",
        "min_steps",
        "max_steps",
        "action",
        "actions",
        "actions_complete",
        "value",
        "seccomp_data",
        "reads",
        "depends_on_args",
        "cache",
        "cost_with_cache",
        "cost_without_cache",
        "proof",
        "reference_length",
        "bench_length",
    ] {
        assert!(seen.iter().any(|s| s == name), "no document has `{name}`");
    }
}
