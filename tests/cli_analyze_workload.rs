//! `secopt analyze FILTER --workload W`: the workload-weighted cost model, checked against
//! costs counted by hand, the interpreter's step counts, an independent account of what the
//! kernel's allow cache keeps, and `secopt::optimize::stats` (separately tested code).

mod common;

use common::libseccomp_profiles::docker_default;
use secopt::arch::Arch;
use secopt::bpf::cache::KernelVersion;
use secopt::bpf::insn::*;
use secopt::bpf::{interp, Program, RetVal, Words};
use secopt::optimize::{stats, Weights};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
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
    let dir = std::env::temp_dir().join(format!(
        "secopt-cli-analyze-workload-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Runs `secopt analyze FILTER --workload W --format json EXTRA…` and parses the report.
fn analyze_json(filter: &Path, workload: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "analyze",
        filter.to_str().unwrap(),
        "--workload",
        workload.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = secopt(&args);
    assert_eq!(code, 0, "secopt {args:?}: {stderr}");
    serde_json::from_str(&stdout).expect("JSON report")
}

fn entry<'a>(report: &'a Value, label: &str) -> &'a Value {
    report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["label"] == label)
        .unwrap_or_else(|| panic!("entry {label} in {report}"))
}

/// x86_64: getpid allowed; ioctl allowed only for `args[1] == 0xae80` (all 64 bits, high half
/// first, as libseccomp compares); x32 killed; everything else ERRNO(1). i386: getpid
/// allowed, the rest ERRNO(1). Other arches killed. Instruction indices in the comments.
const HAND_FILTER: &str = "\
    ld [arch]                              ; 0
    jeq #AUDIT_ARCH_X86_64, x64, next      ; 1
    jeq #AUDIT_ARCH_I386, i386, kill       ; 2
x64:
    ld [nr]                                ; 3
    jge #0x40000000, kill                  ; 4
    jeq #x86_64.getpid, allow              ; 5
    jeq #x86_64.ioctl, next, errno         ; 6
    ld [args[1].hi]                        ; 7
    jeq #0, next, errno                    ; 8
    ld [args[1].lo]                        ; 9
    jeq #0xae80, allow, errno              ; 10
i386:
    ld [nr]                                ; 11
    jeq #x86.getpid, allow, errno          ; 12
kill:
    ret KILL_PROCESS                       ; 13
allow:
    ret ALLOW                              ; 14
errno:
    ret ERRNO(1)                           ; 15
";

// Paths of HAND_FILTER, counted by hand (instructions executed, the `ret` included):
//   x86_64 getpid                      0 1 3 4 5 14                 6  ALLOW (cached: only
//                                      nr/arch loads, jeq/jge, RET ALLOW)
//   x86_64 ioctl, args[1] = 0xae80     0 1 3 4 5 6 7 8 9 10 14     11  ALLOW
//   x86_64 ioctl, args[1].hi != 0      0 1 3 4 5 6 7 8 15           9  ERRNO(1)
//   x86_64 ioctl, args[1] unknown      9..11, charged 11, ALLOW or ERRNO(1)
//   x86_64 read                        0 1 3 4 5 6 15               7  ERRNO(1)
//   x86 getpid                         0 1 2 11 12 14               6  ALLOW (cached, ia32)
//   x86 read                           0 1 2 11 12 15               6  ERRNO(1)
//   x32 read (nr 0x40000000)           0 1 3 4 13                   5  KILL_PROCESS
//   any other arch                     0 1 2 13                     4
// Worst case over every input: 11.

fn hand_filter() -> PathBuf {
    temp_file("hand.s", HAND_FILTER.as_bytes())
}

const HAND_JSON: &str = r#"{
  "$comment": "1000 calls",
  "getpid": 500,
  "ioctl(KVM_RUN)": {"syscall": "ioctl", "count": 300, "args": [null, "0xae80"]},
  "ioctl(high)": {"syscall": "ioctl", "count": 100, "args": [3, "0x10000ae80"]},
  "ioctl(all)": {"syscall": "ioctl", "count": 0, "args": [1, 44672, 2, 3, 4, 5]},
  "ioctl": 60,
  "read": 40
}"#;

/// label, min and max path, decisions, cached, cost with and without the cache, assumption.
type ExpectedEntry = (&'static str, u64, u64, Value, bool, u64, u64, &'static str);

#[test]
fn hand_written_filter_and_json_workload_cost_what_was_counted_by_hand() {
    let filter = hand_filter();
    let workload = temp_file("hand.json", HAND_JSON.as_bytes());
    let r = analyze_json(
        &filter,
        &workload,
        &["--kernel", "6.18", "--arch", "x86_64"],
    );
    assert_eq!(r["allow_cache"], true);
    assert_eq!(r["workload"]["calls"], 1000);
    // label, min and max path, decisions, cached, cost with the cache, cost without,
    // assumption kind.
    #[rustfmt::skip]
    let expect: [ExpectedEntry; 6] = [
        ("getpid", 6, 6, json!(["ALLOW"]), true, 0, 6, "no_arguments_read"),
        ("ioctl(KVM_RUN)", 11, 11, json!(["ALLOW"]), false, 11, 11, "workload_arguments"),
        ("ioctl(high)", 9, 9, json!(["ERRNO(1)"]), false, 9, 9, "workload_arguments"),
        // 44672 = 0xae80, all six arguments given.
        ("ioctl(all)", 11, 11, json!(["ALLOW"]), false, 11, 11, "workload_arguments"),
        ("ioctl", 9, 11, json!(["ERRNO(1)", "ALLOW"]), false, 11, 11, "longest_path"),
        ("read", 7, 7, json!(["ERRNO(1)"]), false, 7, 7, "no_arguments_read"),
    ];
    for (label, min, max, decisions, cached, with, without, kind) in expect {
        let e = entry(&r, label);
        assert_eq!(
            (
                e["min_steps"].as_u64().unwrap(),
                e["max_steps"].as_u64().unwrap(),
                &e["actions"],
                e["cached"].as_bool().unwrap(),
                e["cost_with_cache"].as_u64().unwrap(),
                e["cost_without_cache"].as_u64().unwrap(),
                e["assumption"]["kind"].as_str().unwrap(),
            ),
            (min, max, &decisions, cached, with, without, kind),
            "{label}: {e}"
        );
    }
    assert_eq!(entry(&r, "getpid")["cache"]["kind"], "cached");
    assert_eq!(entry(&r, "read")["cache"]["kind"], "not_allow");
    // The emulator stops at the first argument load, instruction 7.
    let ioctl = entry(&r, "ioctl");
    assert_eq!(ioctl["cache"]["kind"], "reads_arguments");
    assert!(
        ioctl["cache"]["text"]
            .as_str()
            .unwrap()
            .contains("args[1].hi at instruction 7"),
        "{ioctl}"
    );
    assert_eq!(
        ioctl["assumption"]["unknown_fields"],
        json!(["args[1].lo", "args[1].hi"])
    );
    assert_eq!(
        ioctl["assumption"]["text"],
        "no argument values: charged the longest path (max over args[1].lo, args[1].hi)"
    );
    assert_eq!(entry(&r, "ioctl(KVM_RUN)")["args"][1], "0xae80");
    assert_eq!(entry(&r, "getpid")["share"], 0.5);

    // Without the cache: (500·6 + 300·11 + 100·9 + 0·11 + 60·11 + 40·7) / 1000 = 8140 / 1000.
    // With it getpid costs 0: 5140 / 1000.
    let t = &r["totals"];
    assert_close(t["cost_without_cache"].as_f64().unwrap(), 8.14, "without");
    assert_close(t["cost_with_cache"].as_f64().unwrap(), 5.14, "with");
    assert_eq!(t["max_steps"], 11);
    // ioctl's decision depends on args[1]: 300 + 100 + 0 + 60 calls.
    assert_eq!(t["argument_dependent_calls"], 460);
    assert_eq!(
        t["argument_dependent_syscalls"],
        json!(["ioctl(KVM_RUN)", "ioctl(high)", "ioctl(all)", "ioctl"])
    );
    assert_eq!(t["longest_path_calls"], 60);
    assert_eq!(t["cached_calls"], 500);

    // The text report says the same, and states the assumption once in its header.
    let (code, text, stderr) = secopt(&[
        "analyze",
        filter.to_str().unwrap(),
        "--workload",
        workload.to_str().unwrap(),
        "--kernel",
        "6.18",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(text.matches("assumption: ").count(), 1, "{text}");
    assert!(text.contains("60 of 1000 calls charged that way"), "{text}");
    assert!(
        text.contains("with the allow cache (Linux 6.18): 5.14"),
        "{text}"
    );
    assert!(text.contains("(kernels before 5.11): 8.14"), "{text}");
    assert!(
        text.contains("worst-case path of the program: 11 instructions"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("ioctl(high)"))
        .unwrap();
    assert!(row.contains("arguments from the workload: exact"), "{row}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("read "))
        .unwrap();
    assert!(row.contains("no (not ALLOW: ERRNO(1))"), "{row}");
}

#[test]
fn compat_sections_and_kernels_without_the_cache() {
    let filter = hand_filter();
    let strace = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 50.00    0.000050           1        10           getpid
 50.00    0.000050           1        30           ioctl
------ ----------- ----------- --------- --------- ----------------
100.00    0.000100           1        40           total
System call usage summary for 32 bit mode:
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 60.00    0.000060           1        20           getpid
 40.00    0.000040           1        40           read
------ ----------- ----------- --------- --------- ----------------
100.00    0.000100           1        60           total
System call usage summary for x32 mode:
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
100.00    0.000100           1       100           read
------ ----------- ----------- --------- --------- ----------------
100.00    0.000100           1       100           total
";
    let workload = temp_file("hand.strace-c.txt", strace.as_bytes());
    let r = analyze_json(
        &filter,
        &workload,
        &["--kernel", "6.18", "--arch", "x86_64"],
    );
    // 200 calls. Without the cache: 10·6 + 30·11 + 20·6 + 40·6 + 100·5 = 1250 → 6.25. With
    // it x86_64 getpid and x86 getpid (ia32 bitmap) cost 0: 1250 − 60 − 120 = 1070 → 5.35.
    assert_close(
        r["totals"]["cost_without_cache"].as_f64().unwrap(),
        6.25,
        "without",
    );
    assert_close(
        r["totals"]["cost_with_cache"].as_f64().unwrap(),
        5.35,
        "with",
    );
    let abi_cached: Vec<(&str, &str, bool, u64)> = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["label"].as_str().unwrap(),
                e["abi"].as_str().unwrap(),
                e["cached"].as_bool().unwrap(),
                e["max_steps"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        abi_cached,
        [
            ("getpid", "x86_64", true, 6),
            ("ioctl", "x86_64", false, 11),
            ("getpid/x86", "x86", true, 6),
            ("read/x86", "x86", false, 6),
            ("read/x32", "x32", false, 5),
        ]
    );
    // x32 numbers carry bit 30: outside every bitmap.
    assert_eq!(entry(&r, "read/x32")["nr"], 0x4000_0000u64);
    assert_eq!(entry(&r, "read/x32")["cache"]["kind"], "outside_table");
    assert_eq!(entry(&r, "read/x32")["actions"], json!(["KILL_PROCESS"]));

    // Linux 5.10 has no allow cache: with == without, nothing cached, for either workload.
    for w in [
        workload.clone(),
        temp_file("hand2.json", HAND_JSON.as_bytes()),
    ] {
        for kernel in ["5.10", "none"] {
            let r = analyze_json(&filter, &w, &["--kernel", kernel, "--arch", "x86_64"]);
            assert_eq!(r["allow_cache"], false);
            assert_eq!(
                r["totals"]["cost_with_cache"],
                r["totals"]["cost_without_cache"]
            );
            assert_eq!(r["totals"]["cached_calls"], 0);
            for e in r["entries"].as_array().unwrap() {
                assert_eq!(e["cached"], false);
                assert_eq!(e["cache"]["kind"], "no_allow_cache");
                assert_eq!(e["cost_with_cache"], e["cost_without_cache"]);
            }
        }
    }
}

/// Constants a filter compares argument words with, per word (by index): each with its
/// neighbours, the masks ANDed in, 0 and `u32::MAX`. Found by walking the program in order and
/// remembering which word A was last loaded from (libseccomp reloads before each comparison
/// block, so this sees every comparison of an argument word).
fn boundary_values(prog: &Program) -> BTreeMap<usize, BTreeSet<u32>> {
    let mut out: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
    let mut word: Option<usize> = None;
    for insn in &prog.insns {
        let c = insn.code;
        if c == BPF_LD | BPF_W | BPF_ABS {
            let w = (insn.k / 4) as usize;
            word = (w >= 2).then_some(w);
            continue;
        }
        let Some(w) = word else { continue };
        let jump_k = class(c) == BPF_JMP && op(c) != BPF_JA && src(c) == BPF_K;
        if jump_k || c == BPF_ALU | BPF_AND | BPF_K {
            let k = insn.k;
            out.entry(w)
                .or_default()
                .extend([k, k.wrapping_add(1), k.wrapping_sub(1)]);
        } else if class(c) != BPF_JMP && class(c) != BPF_RET {
            word = None;
        }
    }
    for set in out.values_mut() {
        set.extend([0, u32::MAX]);
    }
    out
}

/// Every interpreter run of `(token, nr)` over the boundary values of the argument words the
/// runs read (all combinations; words not read stay 0). Grows the set of words until no run
/// reads a new one.
fn boundary_runs(
    prog: &Program,
    values: &BTreeMap<usize, BTreeSet<u32>>,
    token: u32,
    nr: u32,
) -> Vec<(Words, interp::Trace)> {
    let mut read: BTreeSet<usize> = BTreeSet::new();
    loop {
        let words: Vec<usize> = read.iter().copied().collect();
        let choices: Vec<Vec<u32>> = words
            .iter()
            .map(|w| {
                values
                    .get(w)
                    .map(|s| s.iter().copied().collect())
                    .unwrap_or_else(|| vec![0, u32::MAX])
            })
            .collect();
        let total: usize = choices.iter().map(Vec::len).product();
        assert!(total <= 200_000, "{token:#x}/{nr}: {total} combinations");
        let mut runs = Vec::with_capacity(total);
        let mut seen = 0u16;
        for mut i in 0..total {
            let mut input: Words = [0; 16];
            input[0] = nr;
            input[1] = token;
            for (w, c) in words.iter().zip(&choices) {
                input[*w] = c[i % c.len()];
                i /= c.len();
            }
            let t = interp::trace_words(prog, &input).unwrap();
            seen |= t.words_read;
            runs.push((input, t));
        }
        let now: BTreeSet<usize> = (2..16).filter(|w| seen & (1 << w) != 0).collect();
        if now.is_subset(&read) {
            return runs;
        }
        read.extend(now);
    }
}

/// The instructions the kernel's cache emulator follows (kernel/seccomp.c,
/// `seccomp_is_const_allow`): `LD W ABS`, `RET K`, `JA`, `JEQ/JGE/JGT/JSET K`, `AND K`.
fn emulator_follows(insn: &secopt::bpf::Insn) -> bool {
    let c = insn.code;
    c == BPF_LD | BPF_W | BPF_ABS
        || c == BPF_RET | BPF_K
        || c == BPF_JMP | BPF_JA
        || [BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JSET].contains(&op(c)) && c == BPF_JMP | op(c) | BPF_K
        || c == BPF_ALU | BPF_AND | BPF_K
}

/// Linux 6.18's allow bitmaps cover numbers 0..471 (`NR_syscalls`: listns = 470 is the highest
/// number of both x86 tables).
const TABLE_SIZE_6_18: u32 = 471;

/// Every named syscall of x86_64, x86 and x32 as an `strace -c` summary with sections, one
/// call each.
fn every_syscall_strace() -> String {
    let mut s = String::new();
    for (title, arch) in [
        (None, Arch::X86_64),
        (Some("32 bit"), Arch::X86),
        (Some("x32"), Arch::X32),
    ] {
        if let Some(t) = title {
            s += &format!("System call usage summary for {t} mode:\n");
        }
        s += "    calls syscall\n--------- ----------------\n";
        for (_, name) in arch.syscalls().iter() {
            s += &format!("        1 {name}\n");
        }
    }
    s
}

/// For libseccomp's programs for Docker's default profile (linear and tree), on every named
/// syscall of the three ABIs with no argument values: the path range is exactly the range of
/// the interpreter's step counts over boundary argument values (the cost model's longest path
/// is an upper bound for any filter, and exact for these, which never test contradicting
/// conditions); the decisions are the interpreter's; and the entries marked cached are
/// exactly the syscalls the kernel caches, computed independently:
///
/// the kernel (5.11+) caches `(arch, nr)` iff `nr` is inside the arch's bitmap (x32 numbers,
/// with bit 30, never are) and its emulation of the filter with only `nr` and `arch` known
/// reaches `RET ALLOW`, following only instructions it understands. If the interpreter, over
/// every boundary argument value, always returns ALLOW and never loads an argument or the IP,
/// the path does not depend on the unknown words, so it is the one the emulator follows, and
/// it ends in `RET ALLOW`: cached iff every instruction on it is one the emulator follows. If
/// some run loads an argument word, the emulator stops there (it cannot load it); if some run
/// returns something else without loading one, the emulator follows that path. Either way: not
/// cached. Besides, Linux 6.14+/6.18+ let x86_64 `uretprobe` (335) and `uprobe` (336) through
/// before any filter runs: cached whatever the filter says.
#[test]
fn docker_default_paths_decisions_and_cache_agree_with_the_interpreter() {
    let workload = temp_file("every.strace-c.txt", every_syscall_strace().as_bytes());
    for optimize in [1, 2] {
        let prog = docker_default(optimize).program;
        let filter = temp_file(&format!("docker-o{optimize}.bpf"), &prog.to_raw());
        let r = analyze_json(
            &filter,
            &workload,
            &["--kernel", "6.18", "--arch", "x86_64"],
        );
        let values = boundary_values(&prog);
        let mut dependent_calls = 0;
        let mut cached_count = BTreeMap::<&str, usize>::new();
        for e in r["entries"].as_array().unwrap() {
            let abi = Arch::from_name(e["abi"].as_str().unwrap()).unwrap();
            let nr = e["nr"].as_u64().unwrap() as u32;
            let token = abi.token();
            let what = format!("o{optimize} {} {}", abi, e["syscall"]);
            let runs = boundary_runs(&prog, &values, token, nr);
            let steps: Vec<u64> = runs.iter().map(|r| r.1.steps as u64).collect();
            let (min, max) = (steps.iter().min().unwrap(), steps.iter().max().unwrap());
            assert_eq!(
                e["max_steps"].as_u64().unwrap(),
                *max,
                "{what}: longest path"
            );
            assert_eq!(
                e["min_steps"].as_u64().unwrap(),
                *min,
                "{what}: shortest path"
            );
            assert_eq!(e["cost_without_cache"].as_u64().unwrap(), *max, "{what}");
            let decisions: BTreeSet<RetVal> = runs.iter().map(|r| r.1.ret).collect();
            let listed: Vec<String> = decisions.iter().map(|d| d.to_string()).collect();
            assert_eq!(e["actions"], json!(listed), "{what}: decisions");
            if decisions.len() > 1 {
                dependent_calls += 1;
            }
            assert_eq!(
                e["depends_on_args"].as_bool().unwrap(),
                decisions.len() > 1,
                "{what}"
            );
            let reads_args = runs.iter().any(|r| r.1.words_read & !0b11 != 0);
            let kind = e["assumption"]["kind"].as_str().unwrap();
            assert_eq!(
                kind,
                if reads_args {
                    "longest_path"
                } else {
                    "no_arguments_read"
                },
                "{what}"
            );

            let passthrough = abi == Arch::X86_64 && (nr == 335 || nr == 336);
            let emulated_allow = abi != Arch::X32
                && nr < TABLE_SIZE_6_18
                && !reads_args
                && decisions == BTreeSet::from([RetVal::ALLOW])
                && runs[0]
                    .1
                    .path
                    .iter()
                    .all(|&pc| emulator_follows(&prog.insns[pc]));
            let expect_cached = passthrough || emulated_allow;
            assert_eq!(
                e["cached"].as_bool().unwrap(),
                expect_cached,
                "{what}: cached"
            );
            assert_eq!(
                e["cost_with_cache"].as_u64().unwrap(),
                if expect_cached { 0 } else { *max },
                "{what}"
            );
            if expect_cached {
                *cached_count.entry(abi.name()).or_default() += 1;
            }
        }
        assert_eq!(r["totals"]["argument_dependent_calls"], dependent_calls);
        // Docker's default allows ~300 syscalls on each non-x32 ABI; x32 none.
        assert!(cached_count["x86_64"] > 250 && cached_count["x86"] > 250);
        assert!(!cached_count.contains_key("x32"));
    }
}

/// Entries with every argument known: one path, exactly as long as the interpreter's run on
/// that input, with its decision. The inputs are boundary values of libseccomp's Docker filter
/// for every syscall whose decision reads arguments, on x86_64 and x86 (the workload's native
/// ABI chosen with --arch).
#[test]
fn known_arguments_give_the_interpreters_path() {
    for optimize in [1, 2] {
        let prog = docker_default(optimize).program;
        let filter = temp_file(&format!("docker-known-o{optimize}.bpf"), &prog.to_raw());
        let values = boundary_values(&prog);
        for abi in [Arch::X86_64, Arch::X86] {
            let token = abi.token();
            // label → (input words, trace)
            let mut cases: BTreeMap<String, (Words, interp::Trace)> = BTreeMap::new();
            let mut json_entries = serde_json::Map::new();
            for (nr, name) in abi.syscalls().iter() {
                let runs = boundary_runs(&prog, &values, token, nr);
                if runs.iter().all(|r| r.1.words_read & !0b11 == 0) {
                    continue;
                }
                // Every 7th run, and the last: a spread of paths without thousands of entries.
                let picked = runs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % 7 == 0 || *i + 1 == runs.len());
                for (i, (words, trace)) in picked {
                    let label = format!("{name}#{i}");
                    // Little-endian: args[i] = words[4 + 2i] | words[5 + 2i] << 32.
                    let args: Vec<String> = (0..6)
                        .map(|a| {
                            let v = words[4 + 2 * a] as u64 | (words[5 + 2 * a] as u64) << 32;
                            format!("{v:#x}")
                        })
                        .collect();
                    json_entries.insert(
                        label.clone(),
                        json!({"syscall": name, "count": 1, "args": args}),
                    );
                    cases.insert(label, (*words, trace.clone()));
                }
            }
            assert!(cases.len() >= 10, "{abi}: {} cases", cases.len());
            let workload = temp_file(
                &format!("known-o{optimize}-{abi}.json"),
                serde_json::to_string(&Value::Object(json_entries))
                    .unwrap()
                    .as_bytes(),
            );
            let r = analyze_json(
                &filter,
                &workload,
                &["--kernel", "6.18", "--arch", abi.name()],
            );
            for e in r["entries"].as_array().unwrap() {
                let label = e["label"].as_str().unwrap();
                let (_, trace) = &cases[label];
                let what = format!("o{optimize} {abi} {label}");
                assert_eq!(e["abi"], abi.name());
                assert_eq!(
                    e["min_steps"].as_u64().unwrap(),
                    trace.steps as u64,
                    "{what}"
                );
                assert_eq!(
                    e["max_steps"].as_u64().unwrap(),
                    trace.steps as u64,
                    "{what}"
                );
                assert_eq!(e["actions"], json!([trace.ret.to_string()]), "{what}");
                assert_eq!(e["assumption"]["kind"], "workload_arguments", "{what}");
                assert_eq!(e["assumption"]["unknown_fields"], json!([]), "{what}");
            }
        }
    }
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        "{what}: {got} != {want}"
    );
}

/// Weights from a shared `strace -c` file, through the benchmark's parser.
fn shared_workload(file: &str) -> (PathBuf, Weights) {
    let wl = common::workloads::read_shared_workload(file);
    (
        common::workloads::shared_workload_path(file),
        common::workloads::weights_of(&wl),
    )
}

/// The three shared workloads against libseccomp's Docker default (linear and tree, x86_64 +
/// x86 + x32): the totals equal `secopt::optimize::stats` for the same counts, with and
/// without the cache. Prints the figures.
#[test]
fn shared_workloads_match_optimize_stats() {
    let arches = [Arch::X86_64, Arch::X86, Arch::X32];
    for optimize in [1, 2] {
        let prog = docker_default(optimize).program;
        let layout = if optimize == 1 { "linear" } else { "tree" };
        let filter = temp_file(&format!("docker-shared-o{optimize}.bpf"), &prog.to_raw());
        for file in [
            "nginx-wrk.strace-c.txt",
            "redis-benchmark.strace-c.txt",
            "gvisor-sentry-postgres.strace-c.txt",
        ] {
            let (path, weights) = shared_workload(file);
            for kernel in [KernelVersion::new(6, 18), KernelVersion::new(5, 10)] {
                let k = kernel.to_string();
                let r = analyze_json(
                    &filter,
                    &path,
                    &["--kernel", &k, "--arch", "x86_64", "--skip-unknown"],
                );
                let s = stats(&prog, &weights, &arches, kernel);
                let t = &r["totals"];
                let with = t["cost_with_cache"].as_f64().unwrap();
                let without = t["cost_without_cache"].as_f64().unwrap();
                // Equal up to the last bit serde_json's float parser may lose.
                assert_close(with, s.cost_with_cache, &format!("{layout} {file} {k}"));
                assert_close(
                    without,
                    s.cost_without_cache,
                    &format!("{layout} {file} {k}"),
                );
                assert_eq!(
                    t["max_steps"].as_u64().unwrap(),
                    s.worst_case_path as u64,
                    "{layout} {file}"
                );
                assert_eq!(t["calls"].as_f64().unwrap(), weights.total());
                if kernel == KernelVersion::new(5, 10) {
                    assert_eq!(t["cost_with_cache"], t["cost_without_cache"]);
                    continue;
                }
                eprintln!(
                    "docker-default libseccomp {layout} ({} insns), {file}: with cache {with:.4}, \
                     without {without:.4}, worst path {}, argument-dependent calls {} of {} ({})",
                    prog.len(),
                    t["max_steps"],
                    t["argument_dependent_calls"],
                    t["calls"],
                    t["argument_dependent_syscalls"],
                );
            }
        }
    }
}

fn expect_input_error(args: &[&str], wanted: &[&str]) {
    let (code, stdout, stderr) = secopt(args);
    assert_eq!(code, 2, "secopt {args:?}: stdout {stdout} stderr {stderr}");
    assert!(stdout.is_empty(), "no partial output: {stdout}");
    for w in wanted {
        assert!(
            stderr.contains(w),
            "secopt {args:?}: want {w:?} in {stderr}"
        );
    }
}

#[test]
fn bad_workloads_are_errors_naming_the_file_and_place() {
    let filter = hand_filter();
    let f = filter.to_str().unwrap();
    let garbage = temp_file("garbage.txt", b"this is not a workload\n");
    expect_input_error(
        &["analyze", f, "--workload", garbage.to_str().unwrap()],
        &["garbage.txt: line 1", "header"],
    );
    let broken = temp_file("broken.json", b"{\"read\": 1,\n \"write\": }");
    expect_input_error(
        &["analyze", f, "--workload", broken.to_str().unwrap()],
        &["broken.json: line 2"],
    );
    let unknown = temp_file(
        "unknown.json",
        br#"{"read": 1, "frobnicate": 2, "nosuch": 3}"#,
    );
    let u = unknown.to_str().unwrap();
    expect_input_error(
        &["analyze", f, "--workload", u, "--arch", "x86_64"],
        &[
            "unknown.json",
            "frobnicate (x86_64, $.frobnicate)",
            "nosuch (x86_64, $.nosuch)",
            "--skip-unknown",
        ],
    );
    // --skip-unknown: the rest is analyzed and the names become notes.
    let r = analyze_json(&filter, &unknown, &["--arch", "x86_64", "--skip-unknown"]);
    assert_eq!(r["workload"]["entries"], 1);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("frobnicate") && notes.contains("nosuch"),
        "{notes}"
    );
    let negative_json = temp_file("negative.json", br#"{"read": 1, "write": -4}"#);
    expect_input_error(
        &["analyze", f, "--workload", negative_json.to_str().unwrap()],
        &["negative.json: $.write", "negative"],
    );
    // A JSON array is JSON (not an strace summary without its header); `{}` names nothing.
    let array = temp_file("array.json", b"[1, 2]");
    expect_input_error(
        &["analyze", f, "--workload", array.to_str().unwrap()],
        &["array.json: $: expected an object"],
    );
    let empty = temp_file("empty-object.json", b"{}");
    expect_input_error(
        &["analyze", f, "--workload", empty.to_str().unwrap()],
        &["empty-object.json: whole file: the workload names no syscall"],
    );
    let negative_strace = temp_file(
        "negative.txt",
        b"% time     seconds  usecs/call     calls    errors syscall\n  1.00    0.000001           1        -3           read\n",
    );
    expect_input_error(
        &[
            "analyze",
            f,
            "--workload",
            negative_strace.to_str().unwrap(),
        ],
        &["negative.txt: line 2", "negative"],
    );
    let bad_args = temp_file(
        "args.json",
        br#"{"x": {"syscall": "ioctl", "count": 1, "args": [null, "KVM"]}}"#,
    );
    expect_input_error(
        &["analyze", f, "--workload", bad_args.to_str().unwrap()],
        &["args.json: $.x.args[1]"],
    );
    expect_input_error(
        &["analyze", f, "--workload", "/nonexistent/w.json"],
        &["/nonexistent/w.json"],
    );
    let ok = temp_file("ok.json", br#"{"read": 1}"#);
    let ok = ok.to_str().unwrap();
    expect_input_error(
        &["analyze", f, "--workload", ok, "--summary"],
        &["--summary"],
    );
    expect_input_error(&["analyze", f, "--skip-unknown"], &["--workload"]);
    expect_input_error(
        &["analyze", f, "--workload", ok, "--arch", "x86_64,x86"],
        &["native ABI"],
    );
}

/// A workload of one ABI against a filter for another: each call costs the filter's few
/// instructions to its other-arch kill, which says nothing about the filter. The report notes
/// it; read for the filter's ABI, the workload gets no such note.
#[test]
fn a_workload_on_an_arch_the_filter_does_not_check_is_noted() {
    let filter = temp_file(
        "aarch64-only.s",
        b"ld [arch]\njeq #AUDIT_ARCH_AARCH64, next, kill\nld [nr]\n\
          jeq #aarch64.read, allow\nret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS\n",
    );
    let workload = temp_file("read-write.json", br#"{"read": 1000, "write": 10}"#);
    let notes = |arch: &str| -> Vec<String> {
        let report = analyze_json(&filter, &workload, &["--arch", arch]);
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let x86 = notes("x86_64");
    assert!(
        x86.iter()
            .any(|n| n.contains("all on x86_64") && n.contains("checks aarch64")),
        "{x86:?}"
    );
    let native = notes("aarch64");
    assert!(
        !native.iter().any(|n| n.contains("single out")),
        "{native:?}"
    );
}
