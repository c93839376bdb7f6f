//! End-to-end tests of the `secopt` binary on filters nobody here wrote: the system
//! libseccomp's programs for Docker's default profile, checked against independent counts.

mod common;

use common::libseccomp_profiles::docker_default;
use secopt::bpf::insn::*;
use secopt::bpf::{interp, Program, RetVal, SeccompData};
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

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("secopt-cli-analyze-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The instructions the kernel's cache emulator understands (kernel/seccomp.c,
/// `seccomp_is_const_allow`).
fn emulator_understands(insn: &secopt::bpf::Insn) -> bool {
    let c = insn.code;
    c == BPF_LD | BPF_W | BPF_ABS
        || c == BPF_RET | BPF_K
        || c == BPF_JMP | BPF_JA
        || [BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JSET].contains(&op(c)) && c == BPF_JMP | op(c) | BPF_K
        || c == BPF_ALU | BPF_AND | BPF_K
}

/// Independent count of cacheability for one syscall, by running the interpreter: libseccomp
/// decides a syscall without arguments exactly when its path reads only `nr` and `arch`, and
/// then the emulator follows the same path.
fn cacheable_by_interpreter(prog: &Program, token: u32, nr: u32) -> bool {
    let t = interp::trace(prog, &SeccompData::new(token, nr as i32, [0; 6])).unwrap();
    t.ret == RetVal::ALLOW
        && t.words_read & !0b11 == 0
        && t.path
            .iter()
            .all(|&pc| emulator_understands(&prog.insns[pc]))
}

#[test]
fn analyze_reports_libseccomps_docker_filter_like_the_interpreter() {
    for optimize in [1, 2] {
        let filter = docker_default(optimize);
        let prog = &filter.program;
        let path = temp_file(&format!("docker-o{optimize}.bpf"), &prog.to_raw());
        let (code, stdout, stderr) = secopt(&[
            "analyze",
            path.to_str().unwrap(),
            "--kernel",
            "6.18",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "stderr: {stderr}");
        let report: Value = serde_json::from_str(&stdout).expect("JSON report");
        assert_eq!(report["length"].as_u64().unwrap() as usize, prog.len());
        let arches: Vec<&str> = report["arches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["arch"].as_str().unwrap())
            .collect();
        assert_eq!(
            arches,
            ["x86_64", "x86", "x32"],
            "arches found by the arch checks"
        );

        for arch in report["arches"].as_array().unwrap() {
            let name = arch["arch"].as_str().unwrap();
            let token = arch["token"].as_u64().unwrap() as u32;
            let mut expected_cacheable = Vec::new();
            for s in arch["syscalls"].as_array().unwrap() {
                let nr = s["nr"].as_u64().unwrap() as u32;
                let bypass = s["never_filtered"].as_bool().unwrap();
                // The cache's kind agrees with `never_filtered` (a bypass is not the filter's
                // cache entry).
                let kind = &s["cache"]["kind"];
                assert_eq!(kind == "never_filtered", bypass, "{kind}");
                // x32 numbers are outside every kernel bitmap; uretprobe/uprobe bypass filters.
                let expect = name != "x32" && !bypass && cacheable_by_interpreter(prog, token, nr);
                if expect {
                    expected_cacheable.push(nr);
                }
                assert_eq!(
                    s["cached"].as_bool(),
                    Some(expect),
                    "{name} {} (nr {nr}) cacheability, optimize={optimize}",
                    s["name"]
                );
                // Steps: the interpreter with all-zero arguments runs one of the paths.
                let t = interp::trace(prog, &SeccompData::new(token, nr as i32, [0; 6])).unwrap();
                let (min, max) = (
                    s["min_steps"].as_u64().unwrap(),
                    s["max_steps"].as_u64().unwrap(),
                );
                assert!(
                    min <= t.steps as u64 && t.steps as u64 <= max,
                    "{name} nr {nr}: interpreter ran {} steps, analyze says {min}..{max}",
                    t.steps
                );
                if s["reads"].as_array().unwrap().is_empty() {
                    assert_eq!(min, max, "{name} nr {nr}: no argument read, one path");
                    assert_eq!(min, t.steps as u64);
                }
            }
            let listed: Vec<u32> = arch["cacheable"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(listed, expected_cacheable, "{name} cacheable list");
            assert_eq!(
                arch["cacheable_count"].as_u64().unwrap() as usize,
                listed.len()
            );
        }

        // Facts from the profile itself (../shared/profiles/oci/docker-default.json).
        let x86_64 = &report["arches"][0];
        let find = |n: &str| {
            x86_64["syscalls"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == n)
                .unwrap_or_else(|| panic!("{n} listed"))
                .clone()
        };
        assert_eq!(find("read")["cached"], true);
        assert_eq!(find("read")["actions"], serde_json::json!(["ALLOW"]));
        assert_eq!(find("clone3")["actions"], serde_json::json!(["ERRNO(38)"]));
        // libseccomp compares all 64 bits on x86_64: high half, then low half.
        assert_eq!(
            find("socket")["reads"],
            serde_json::json!(["args[0].lo", "args[0].hi"])
        );
        assert_eq!(find("socket")["cached"], false);
        assert_eq!(find("personality")["depends_on_args"], true);
        // mount needs CAP_SYS_ADMIN, which Docker's default set lacks: the default action.
        assert_eq!(find("mount")["actions"], serde_json::json!(["ERRNO(1)"]));
        assert!(x86_64["cacheable_count"].as_u64().unwrap() > 250);
    }
}

#[test]
fn analyze_without_the_allow_cache_marks_nothing_cacheable() {
    let prog = docker_default(1).program;
    let path = temp_file("docker-nocache.bpf", &prog.to_raw());
    let (code, stdout, stderr) = secopt(&[
        "analyze",
        path.to_str().unwrap(),
        "--kernel",
        "5.10",
        "--arch",
        "x86_64",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["allow_cache"], false);
    assert_eq!(report["arches"][0]["cacheable_count"], 0);
}

/// An older kernel's bitmap ends at its own newest syscall: on Linux 5.11 (table ending at
/// `epoll_pwait2`, 441) the Docker filter's ALLOW for `futex_waitv` (449, added in 5.16) is
/// never cached, as the kernel's `seccomp_cache_prepare_bitmap` only covers `0..NR_syscalls`; on 6.18
/// it is. The text says how many such syscalls there are.
#[test]
fn an_older_kernels_bitmap_ends_at_its_own_newest_syscall() {
    let prog = docker_default(1).program;
    let path = temp_file("docker-5.11.bpf", &prog.to_raw());
    let report = |kernel: &str| -> Value {
        let (code, stdout, stderr) = secopt(&[
            "analyze",
            path.to_str().unwrap(),
            "--kernel",
            kernel,
            "--arch",
            "x86_64",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str(&stdout).unwrap()
    };
    let futex_waitv = |r: &Value| -> Value {
        r["arches"][0]["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["nr"] == 449)
            .cloned()
            .unwrap()
    };
    let old = report("5.11");
    assert_eq!(old["arches"][0]["cache_bitmap"]["table_size"], 442, "{old}");
    assert_eq!(futex_waitv(&old)["cached"], false, "{old}");
    let new = report("6.18");
    assert_eq!(new["arches"][0]["cache_bitmap"]["table_size"], 471);
    assert_eq!(futex_waitv(&new)["cached"], true);
    let (code, text, _) = secopt(&[
        "analyze",
        path.to_str().unwrap(),
        "--kernel",
        "5.11",
        "--arch",
        "x86_64",
        "--summary",
    ]);
    assert_eq!(code, 0);
    assert!(
        text.contains("numbers 0..442")
            && text.contains("past the bitmap's end: syscalls newer than Linux 5.11"),
        "{text}"
    );
}

/// `emu` says when the kernel would not run the filter at all: x86_64's `uretprobe` (6.14)
/// and `uprobe` (6.18) pass before any filter (`seccomp_uprobe_exception`); other calls, and
/// the same numbers on another arch, get no such note. A misspelt `--nr` name is answered
/// with the name likely meant, as `asm` answers it.
#[test]
fn emu_says_which_calls_the_kernel_lets_through_unfiltered() {
    let filter = temp_file(
        "emu-notes.s",
        b"ld [nr]\njeq #0, a\nret ERRNO(1)\na: ret ALLOW\n",
    );
    let notes = |extra: &[&str]| -> Value {
        let mut args = vec!["emu", filter.to_str().unwrap(), "--format", "json"];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = secopt(&args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()["notes"].clone()
    };
    let uretprobe = notes(&["--arch", "x86_64", "--nr", "uretprobe"]);
    assert!(
        uretprobe[0]
            .as_str()
            .unwrap()
            .starts_with("Linux 6.14 and later let `uretprobe` through"),
        "{uretprobe}"
    );
    let uprobe = notes(&["--arch", "x86_64", "--nr", "336"]);
    assert!(
        uprobe[0].as_str().unwrap().starts_with("Linux 6.18"),
        "{uprobe}"
    );
    assert_eq!(
        notes(&["--arch", "x86_64", "--nr", "read"]),
        serde_json::json!([])
    );
    assert_eq!(
        notes(&["--arch", "x86", "--nr", "335"]),
        serde_json::json!([])
    );
    let (code, _, stderr) = secopt(&[
        "emu",
        filter.to_str().unwrap(),
        "--arch",
        "x86_64",
        "--nr",
        "reed",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown syscall `reed` for x86_64; did you mean `read`?"),
        "{stderr}"
    );
}

#[test]
fn worked_example_in_the_readme_runs_as_described() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.s");
    // socket(AF_INET6): arch check (2), nr load, x32 check, ten syscall compares, argument
    // load, two domain compares, RET: 18 instructions, counted by hand from the source.
    let (code, stdout, stderr) = secopt(&[
        "emu", example, "--arch", "x86_64", "--nr", "socket", "--arg", "0=10", "--format", "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let run: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(run["action"], "ALLOW");
    assert_eq!(run["steps"], 18);
    assert_eq!(
        run["reads"],
        serde_json::json!(["nr", "arch", "args[0].lo"])
    );
    // AF_UNIX (1) fails both domain compares and ends at `ret ERRNO(1)`: also 18.
    let (_, stdout, _) = secopt(&[
        "emu", example, "--arch", "x86_64", "--nr", "socket", "--arg", "0=1", "--format", "json",
    ]);
    let run: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (run["action"].as_str(), run["steps"].as_u64()),
        (Some("ERRNO(1)"), Some(18))
    );
    // `--nr -1` (as the help spells it): nr 0xffffffff is at or above 0x40000000, so the x32
    // check sends it to the default: arch (2), nr load, x32 check, RET: 5.
    let (code, stdout, stderr) = secopt(&[
        "emu", example, "--arch", "x86_64", "--nr", "-1", "--format", "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let run: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (run["action"].as_str(), run["steps"].as_u64()),
        (Some("ERRNO(1)"), Some(5))
    );

    // asm → raw → disasm → asm gives the same bytes through the CLI.
    let dir = std::env::temp_dir().join(format!("secopt-cli-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b, text) = (dir.join("a.bpf"), dir.join("b.bpf"), dir.join("a.s"));
    assert_eq!(secopt(&["asm", example, "-o", a.to_str().unwrap()]).0, 0);
    assert_eq!(
        secopt(&["disasm", a.to_str().unwrap(), "-o", text.to_str().unwrap()]).0,
        0
    );
    assert_eq!(
        secopt(&["asm", text.to_str().unwrap(), "-o", b.to_str().unwrap()]).0,
        0
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(std::fs::read(&a).unwrap().len(), 20 * 8);
}

/// x86_64 only: read, write, close allowed, the rest ERRNO(1); other arches killed. 9
/// instructions.
const STACK_OLDEST: &[u8] = b"ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\n\
    jeq #x86_64.read, allow\njeq #x86_64.write, allow\njeq #x86_64.close, allow\nret ERRNO(1)\n\
    allow: ret ALLOW\nkill: ret KILL_PROCESS\n";
/// write only to fd 1 (ERRNO(9) otherwise), openat ERRNO(13), the rest and other arches
/// allowed. 13 instructions.
const STACK_NEWEST: &[u8] = b"ld [arch]\njeq #AUDIT_ARCH_X86_64, next, allow\nld [nr]\n\
    jeq #x86_64.write, write\njeq #x86_64.openat, eacces\nret ALLOW\nwrite: ld [args[0].lo]\n\
    jeq #1, next, ebadf\nld [args[0].hi]\njeq #0, allow, ebadf\neacces: ret ERRNO(13)\n\
    ebadf: ret ERRNO(9)\nallow: ret ALLOW\n";

/// A stack of two filters analyzed as the kernel runs it; every figure worked out by hand from
/// the two programs (instruction counts include the final `ret`).
#[test]
fn a_stack_is_analyzed_as_the_kernel_runs_it() {
    let oldest = temp_file("analyze-stack-oldest.s", STACK_OLDEST);
    let newest = temp_file("analyze-stack-newest.s", STACK_NEWEST);
    let (code, out, err) = secopt(&[
        "analyze",
        oldest.to_str().unwrap(),
        newest.to_str().unwrap(),
        "--arch",
        "x86_64,x86",
        "--kernel",
        "6.18",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["length"], 9 + 13);
    assert_eq!(doc["stack"], serde_json::json!([9, 13]));
    assert_eq!(doc["limits"]["task_cost"], 9 + 4 + 13 + 4);
    let x86_64 = &doc["arches"][0];
    // Cached only where both allow by number alone: read and close (write reads an argument
    // in the newest; everything else gets an errno from one of them).
    assert_eq!(x86_64["cacheable"], serde_json::json!([0, 3]));
    let row = |name: &str| {
        x86_64["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()
            .clone()
    };
    // (min, max steps: oldest + newest, returns)
    for (name, min, max, returns) in [
        ("read", 5 + 6, 5 + 6, vec!["ALLOW"]),
        ("write", 6 + 7, 6 + 9, vec!["ERRNO(9)", "ALLOW"]),
        ("close", 7 + 6, 7 + 6, vec!["ALLOW"]),
        ("openat", 7 + 6, 7 + 6, vec!["ERRNO(13)"]),
        ("getpid", 7 + 6, 7 + 6, vec!["ERRNO(1)"]),
    ] {
        let r = row(name);
        assert_eq!(
            (r["min_steps"].clone(), r["max_steps"].clone()),
            (min.into(), max.into()),
            "{name}"
        );
        let mut got: Vec<String> = r["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let mut want: Vec<String> = returns.iter().map(|s| s.to_string()).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name}");
    }
    assert_eq!(x86_64["argument_dependent"], serde_json::json!(["write"]));
    // i386: killed by the oldest after 3 instructions, allowed by the newest after 3.
    let x86 = &doc["arches"][1];
    assert_eq!(x86["min_steps"], 6);
    assert_eq!(x86["max_steps"], 6);
    assert_eq!(x86["cacheable_count"], 0);

    // Under a workload every filter runs on each uncached call, so a call is charged the
    // filters' instructions summed (counted by hand from the two programs above):
    //   read        10 calls: 5 + 6 = 11, cached (both allow it by number);
    //   write fd 1   4 calls: 6 + 9 = 15, exact from the argument given;
    //   write        2 calls: 6 + 7..9, charged the longest, 15 (the fd is not given);
    //   openat       4 calls: 7 + 6 = 13; ERRNO(1) and ERRNO(13) are the same action, and
    //                on a tie the kernel keeps the newest filter's answer: ERRNO(13).
    let workload = temp_file(
        "analyze-stack-workload.json",
        br#"{"read": 10, "write(fd 1)": {"syscall": "write", "count": 4, "args": [1]},
             "write": 2, "openat": 4}"#,
    );
    let with_workload = [
        "analyze",
        oldest.to_str().unwrap(),
        newest.to_str().unwrap(),
        "--workload",
        workload.to_str().unwrap(),
        "--arch",
        "x86_64",
        "--kernel",
        "6.18",
    ];
    let (code, out, err) = secopt(&[&with_workload[..], &["--format", "json"]].concat());
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["length"], 9 + 13);
    assert_eq!(doc["stack"], serde_json::json!([9, 13]));
    for (label, min, max, decisions, cached, kind) in [
        ("read", 11, 11, vec!["ALLOW"], true, "no_arguments_read"),
        (
            "write(fd 1)",
            15,
            15,
            vec!["ALLOW"],
            false,
            "workload_arguments",
        ),
        (
            "write",
            13,
            15,
            vec!["ALLOW", "ERRNO(9)"],
            false,
            "longest_path",
        ),
        (
            "openat",
            13,
            13,
            vec!["ERRNO(13)"],
            false,
            "no_arguments_read",
        ),
    ] {
        let e = doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["label"] == label)
            .unwrap();
        assert_eq!(
            (&e["min_steps"], &e["max_steps"], &e["cached"]),
            (&min.into(), &max.into(), &cached.into()),
            "{label}"
        );
        let mut got: Vec<&str> = e["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        got.sort();
        assert_eq!(got, decisions, "{label}");
        assert_eq!(e["assumption"]["kind"], kind, "{label}");
    }
    // (10·11 + 4·15 + 2·15 + 4·13) / 20 without the cache; read costs 0 with it. The worst
    // paths: 7 (an unlisted x86_64 syscall) + 9 (write to fd 1).
    let totals = &doc["totals"];
    assert_eq!(totals["cost_without_cache"], 252.0 / 20.0);
    assert_eq!(totals["cost_with_cache"], 142.0 / 20.0);
    assert_eq!(totals["max_steps"], 7 + 9);
    assert_eq!(totals["cached_calls"], 10);

    // The text report says the costs are summed over a stack.
    let (code, out, err) = secopt(&with_workload);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("a stack of 2, oldest first: 9 + 13 instructions"),
        "{out}"
    );
    assert!(
        out.contains("without it (kernels before 5.11): 12.60"),
        "{out}"
    );
    assert!(
        out.contains("worst-case path of the stack (the filters' summed): 16"),
        "{out}"
    );
}

/// A deny-list caches the numbers no table names too: `analyze` gives both counts, and its
/// count of cached numbers is `optimize --report`'s. A filter that kills `execve` (59) and
/// allows everything else on x86_64: Linux 6.18's x86_64 bitmap has 471 numbers; all but
/// execve are cached, and the kernel's two passthroughs (uretprobe 335, uprobe 336), cached
/// whatever a filter says, are not the filter's doing: 471 − 1 − 2 = 468. Of the 384 named
/// syscalls, execve is the one not cached (uretprobe and uprobe, named, count as passthroughs
/// there too): 381.
/// The same two filters installed a hundred times each, alternately: 200 filters of 2,200
/// instructions, which the kernel takes (3,000 of a task's 32,768) and whose joined program
/// passes 4096 instructions. analyze reports it (every path a hundred times the pair's), and
/// optimize joins it into a filter equal to the optimized pair's.
#[test]
fn a_stack_whose_joined_program_passes_4096_instructions_is_analyzed_and_optimized() {
    let oldest = temp_file("analyze-long-stack-oldest.s", STACK_OLDEST);
    let newest = temp_file("analyze-long-stack-newest.s", STACK_NEWEST);
    let (oldest, newest) = (oldest.to_str().unwrap(), newest.to_str().unwrap());
    let stack: Vec<&str> = (0..100).flat_map(|_| [oldest, newest]).collect();
    let joined = secopt::bpf::stack::joined_any_length(
        &[STACK_OLDEST, STACK_NEWEST]
            .repeat(100)
            .iter()
            .map(|s| secopt::bpf::asm::assemble(std::str::from_utf8(s).unwrap()).unwrap())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(joined.len() > 4096, "{}", joined.len());
    let mut args = vec!["analyze"];
    args.extend(&stack);
    args.extend(["--arch", "x86_64", "--kernel", "6.18", "--format", "json"]);
    let (code, out, err) = secopt(&args);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["length"], 100 * (9 + 13));
    assert_eq!(doc["limits"]["task_cost"], 100 * (9 + 4 + 13 + 4));
    let x86_64 = &doc["arches"][0];
    assert_eq!(x86_64["cacheable"], serde_json::json!([0, 3]));
    let write = x86_64["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "write")
        .unwrap();
    assert_eq!(write["min_steps"], 100 * (6 + 7));
    assert_eq!(write["max_steps"], 100 * (6 + 9));

    let dir = std::env::temp_dir().join(format!("secopt-cli-analyze-{}", std::process::id()));
    let (long_out, pair_out) = (dir.join("long-stack.bpf"), dir.join("pair.bpf"));
    let mut args = vec!["optimize"];
    args.extend(&stack);
    args.extend(["-o", long_out.to_str().unwrap()]);
    let (code, _, err) = secopt(&args);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = secopt(&["optimize", oldest, newest, "-o", pair_out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = secopt(&[
        "verify",
        long_out.to_str().unwrap(),
        pair_out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn analyze_and_optimize_count_cached_numbers_alike() {
    let filter = temp_file(
        "deny-execve.s",
        b"ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njeq #59, kill, allow\n\
          allow:\nret ALLOW\nkill:\nret KILL_PROCESS\n",
    );
    let filter = filter.to_str().unwrap();
    let (code, stdout, stderr) = secopt(&[
        "analyze",
        filter,
        "--summary",
        "--arch",
        "x86_64",
        "--kernel",
        "6.18",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("cacheable: 381 of 384 named syscalls")
            && stdout.contains("numbers 0..471: 468 of them cached"),
        "{stdout}"
    );
    let out = temp_file("deny-execve.out.bpf", b"");
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        filter,
        "-o",
        out.to_str().unwrap(),
        "--report",
        "--format",
        "json",
        "--kernel",
        "6.18",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let reports: Value = serde_json::from_str(&stdout).unwrap();
    let before = &reports[0]["report"]["before"]["cacheable"];
    let x86_64 = before
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["bitmap"] == "x86_64")
        .unwrap_or_else(|| panic!("{before}"));
    assert_eq!(x86_64["count"], 468, "{before}");
}

/// Instructions no path reaches are reported, text and JSON: here a jumped-over `ret` and a
/// tail after the last `ret`, the shape Firecracker's libseccomp-based compiler leaves when a
/// thread's program is shorter than an earlier thread's (docs/kernel-facts.md). A program
/// without such code says nothing.
#[test]
fn unreachable_instructions_are_reported() {
    let tail = temp_file(
        "tail.s",
        b"ld [nr]\njeq #0, allow, next\nja deny\nret KILL_PROCESS\ndeny: ret ERRNO(1)\n\
          allow: ret ALLOW\nld [args[0].lo]\nret TRAP\n",
    );
    let tail = tail.to_str().unwrap();
    let (code, out, err) = secopt(&["analyze", tail]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("unreachable: 3 instructions no path reaches (3, 6..=7)"),
        "{out}"
    );
    let (code, out, err) = secopt(&["analyze", tail, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["unreachable"], serde_json::json!([[3, 3], [6, 7]]));
    let clean = temp_file(
        "clean.s",
        b"ld [nr]\njeq #0, allow, deny\ndeny: ret ERRNO(1)\nallow: ret ALLOW\n",
    );
    let clean = clean.to_str().unwrap();
    let (_, out, _) = secopt(&["analyze", clean]);
    assert!(!out.contains("unreachable"), "{out}");
    let (_, out, _) = secopt(&["analyze", clean, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["unreachable"], serde_json::json!([]));

    // A store no path reaches can still be needed: the kernel checks scratch memory in
    // program order (net/core/filter.c `check_load_and_stores`), carrying what is written
    // across a `ret` and keeping at a jump's target only what every jump to it had. Here the
    // `jeq #1` reaches `allow` before M[1] is written, so after `ret ALLOW` M[1] counts as
    // unwritten, and the store at 4 is what lets `ld M[1]` at 5 pass. That store is said to
    // be needed, not something optimize drops; the one at 3 of `dead` is not needed.
    let needed = temp_file(
        "needed-store.s",
        b"ld [nr]\njeq #1, allow, next\nst M[1]\njeq #2, next, odd\nallow: ret ALLOW\n\
          st M[1]\nodd: ld M[1]\nret a\n",
    );
    let (code, out, err) = secopt(&["analyze", needed.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "unreachable: 1 store no path reaches (5) that the kernel's linear check needs"
        ),
        "{out}"
    );
    assert!(!out.contains("drops them"), "{out}");
    let dead = temp_file(
        "dead-store.s",
        b"ld [nr]\njeq #1, allow, deny\nallow: ret ALLOW\nst M[2]\ndeny: ret KILL_PROCESS\n",
    );
    let (code, out, err) = secopt(&["analyze", dead.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("unreachable: 1 instruction no path reaches (3), loaded and counted all the same; `secopt optimize` drops them"),
        "{out}"
    );
}

/// `cache_bitmap.cached_numbers` lists every number of the kernel's bitmap the filter lets it
/// cache, unnamed ones too, so a script can rebuild the bitmap: here `and #0xff` makes 358
/// (= 102 + 256, a number x86_64's table leaves unnamed) decide as 102 does. The expected set
/// comes from the interpreter's path for each number, as the emulator would follow it.
#[test]
fn the_json_lists_every_cached_number_named_or_not() {
    let src = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\nand #0xff\n\
               jeq #102, allow, deny\nallow: ret ALLOW\ndeny: ret ERRNO(1)\n\
               kill: ret KILL_PROCESS\n";
    let prog = secopt::bpf::asm::assemble(src).unwrap();
    let path = temp_file("masked.bpf", &prog.to_raw());
    let (code, stdout, stderr) = secopt(&[
        "analyze",
        path.to_str().unwrap(),
        "--kernel",
        "6.18",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let x86_64 = &report["arches"][0];
    assert_eq!(x86_64["arch"], "x86_64");
    let bitmap = &x86_64["cache_bitmap"];
    let size = bitmap["table_size"].as_u64().unwrap() as u32;
    let want: Vec<u64> = (0..size)
        .filter(|&nr| cacheable_by_interpreter(&prog, 0xc000_003e, nr))
        .map(u64::from)
        .collect();
    assert_eq!(want, [102, 358]);
    let got: Vec<u64> = bitmap["cached_numbers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(got, want, "{bitmap}");
    // The named list has 102 (getuid) alone.
    assert_eq!(x86_64["cacheable"], serde_json::json!([102]));
}
