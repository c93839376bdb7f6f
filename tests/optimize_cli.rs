//! `secopt optimize` end to end: libseccomp's Docker filter in, a smaller filter out that the
//! interpreter cannot tell apart from the input; reports; weights files; bad input.

mod common;

use common::cc::run_c;
use common::libseccomp_profiles::docker_default;
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Program, RetVal, SeccompData};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn secopt(args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .expect("run secopt");
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("secopt-cli-optimize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let p = temp_dir().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// Runs secopt with `args`, which must succeed.
fn secopt_ok(args: &[&str]) {
    let (code, _, stderr) = secopt(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
}

fn same_on_sweep(a: &Program, b: &Program) {
    for token in [0xc000_003e, 0x4000_0003, 0xc000_00b7] {
        for nr in (0..520).chain(0x4000_0000..0x4000_0220).chain([u32::MAX]) {
            for args in [[0u64; 6], [1, 2, 3, 4, 5, 6], [u64::MAX; 6]] {
                let d = SeccompData::new(token, nr as i32, args);
                assert_eq!(interp::eval(a, &d), interp::eval(b, &d), "{d:?}");
            }
        }
    }
}

#[test]
fn optimizes_dockers_filter_with_a_report() {
    let input = docker_default(1).program;
    let inp = temp_file("docker.bpf", &input.to_raw());
    let out = temp_dir().join("docker.opt.bpf");
    let (code, stdout, stderr) = secopt(&["optimize", s(&inp), "-o", s(&out), "--report"]);
    assert_eq!(code, 0, "{stderr}");
    // Progress is for a terminal (`--progress auto`); stderr here is a pipe.
    assert!(!stderr.contains("laying out"), "{stderr}");
    let text = String::from_utf8(stdout).unwrap();
    assert!(text.contains("proved equal to the input"), "{text}");
    assert!(
        text.contains("instructions") && text.contains("1001 ->"),
        "{text}"
    );
    assert!(text.contains("lifted and re-emitted"), "{text}");
    // The before/after columns line up: every figure's `->` in the same column, one line
    // per kernel bitmap (libseccomp's filter covers x86_64, ia32 and x32).
    let arrows: Vec<usize> = text.lines().filter_map(|l| l.find(" -> ")).collect();
    assert_eq!(arrows.len(), 6, "{text}");
    assert!(arrows.iter().all(|&c| c == arrows[0]), "{text}");
    assert!(text.contains("\n  cacheable x86_64 "), "{text}");
    let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    validate(&opt).unwrap();
    assert!(opt.len() * 100 <= 35 * 1001, "{}", opt.len());
    same_on_sweep(&input, &opt);
}

/// Optimizing secopt's own output again re-makes it instruction for instruction (its dispatch
/// is already the one the lifter lays out): the output file is the input's bytes, and both
/// reports say the input was kept rather than "lifted and re-emitted, proved equal".
#[test]
fn an_output_that_is_the_input_is_reported_unchanged() {
    let input = docker_default(1).program;
    let inp = temp_file("unchanged-in.bpf", &input.to_raw());
    let once = temp_dir().join("unchanged-once.bpf");
    let twice = temp_dir().join("unchanged-twice.bpf");
    secopt_ok(&["optimize", s(&inp), "-o", s(&once)]);
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&once),
        "-o",
        s(&twice),
        "--report",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (a, b) = (
        std::fs::read(&once).unwrap(),
        std::fs::read(&twice).unwrap(),
    );
    // The claim below rests on this: the second run wrote its input back.
    assert_eq!(a, b, "the second optimization changed the program");
    let doc: Value = the_report(&stdout);
    assert_eq!(doc["method"], "unchanged", "{doc}");
    assert_eq!(doc["verification"]["status"], "skipped", "{doc}");
    assert!(stderr.contains("the input unchanged"), "{stderr}");
    let (code, stdout, stderr) = secopt(&["optimize", s(&once), "-o", s(&twice), "--report"]);
    assert_eq!(code, 0, "{stderr}");
    let text = String::from_utf8(stdout).unwrap();
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.ends_with(": unchanged, the output is the input")),
        "{text}"
    );
}

#[test]
fn json_report_and_weights_file() {
    let input = docker_default(2).program;
    let inp = temp_file("docker-tree.bpf", &input.to_raw());
    let weights = common::workloads::shared_workload_path("redis-benchmark.strace-c.txt");
    let out = temp_dir().join("docker-tree.opt.bpf");
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        s(&out),
        // compile's spelling, which implies --report as it does there.
        "--report-format",
        "json",
        "--weights",
        s(&weights),
        "--cost-model",
        "no-cache",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = the_report(&stdout);
    assert_eq!(doc["method"], "lifted");
    assert_eq!(doc["verification"]["status"], "equal");
    let r = &doc["report"];
    assert_eq!(r["before"]["length"], 1246);
    assert_eq!(r["cost_model"], "no_cache");
    assert!(r["weights"].as_str().unwrap().starts_with("workload"));
    let before = r["before"]["cost_without_cache"].as_f64().unwrap();
    let after = r["after"]["cost_without_cache"].as_f64().unwrap();
    assert!(after * 2.0 <= before, "{after} vs {before}");
    // The cacheable counts are the filter's, as `secopt analyze` counts them: the numbers of
    // x86_64's bitmap whose path reads only `nr` and `arch` and returns ALLOW (by the
    // interpreter), not the kernel's passthroughs uretprobe (335) and uprobe (336).
    let x86_64 = 0xc000_003e_u32;
    let by_interpreter = (0..471u32)
        .filter(|nr| ![335, 336].contains(nr))
        .filter(|&nr| {
            let t = interp::trace(&input, &SeccompData::new(x86_64, nr as i32, [0; 6])).unwrap();
            t.ret == secopt::bpf::RetVal::ALLOW && t.words_read & !0b11 == 0
        })
        .count();
    for side in ["before", "after"] {
        let counts = r[side]["cacheable"].as_array().unwrap();
        let bitmap = counts.iter().find(|c| c["bitmap"] == "x86_64").unwrap();
        assert_eq!(bitmap["count"], by_interpreter, "{side}");
    }
    let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    same_on_sweep(&input, &opt);
}

/// `--kernel none` (as `analyze` spells it) models a kernel without the allow cache, where every
/// call runs the filter: the report's cost with the cache is then the cost without it, which
/// Docker's filter on Linux 6.18 (most calls cached) is far from.
#[test]
fn kernel_none_models_no_allow_cache() {
    let inp = temp_file("docker-nocache.bpf", &docker_default(2).program.to_raw());
    let out = temp_dir().join("docker-nocache.opt.bpf");
    let report = |kernel: &str| {
        let (code, stdout, stderr) = secopt(&[
            "optimize",
            s(&inp),
            "-o",
            s(&out),
            "--report",
            "--format",
            "json",
            "--kernel",
            kernel,
        ]);
        assert_eq!(code, 0, "{stderr}");
        let doc: Value = the_report(&stdout);
        doc["report"].clone()
    };
    let none = report("none");
    assert_eq!(none["kernel"], "5.10");
    for side in ["before", "after"] {
        assert_eq!(
            none[side]["cost_with_cache"], none[side]["cost_without_cache"],
            "{side}: {none}"
        );
    }
    let cached = report("6.18");
    let with = cached["before"]["cost_with_cache"].as_f64().unwrap();
    let without = cached["before"]["cost_without_cache"].as_f64().unwrap();
    assert!(with * 2.0 < without, "{cached}");
    let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(&out), "--kernel", "nine"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("`none`"), "{stderr}");
}

#[test]
fn assembly_in_and_out_through_stdin_and_stdout() {
    let src = "ld [nr]\njeq #0, a\njeq #1, a\njeq #2, a\nret ERRNO(1)\na: ret ALLOW\n";
    let inp = temp_file("small.s", src.as_bytes());
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        "-",
        "--output-format",
        "asm",
        "--report",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // 0..=2 is one range: ld [nr]; jge #3 → ERRNO : ALLOW — 4 instructions (hand count).
    let out = secopt::bpf::asm::assemble(&String::from_utf8(stdout).unwrap()).unwrap();
    assert_eq!(out.len(), 4);
    // The report goes to stderr when the filter goes to stdout.
    assert!(stderr.contains("6 -> 4"), "{stderr}");
}

/// The output's format follows its extension when `--output-format` is not given: `.s` is
/// assembly (the assembler reads it back to the same program as the raw output), `.bpf`
/// raw (and so is an extension no format has).
#[test]
fn output_format_follows_the_extension() {
    let src = "ld [nr]\njeq #0, a\njeq #1, a\njeq #2, a\nret ERRNO(1)\na: ret ALLOW\n";
    let inp = temp_file("ext.s", src.as_bytes());
    let (asm_out, raw_out) = (temp_dir().join("ext.opt.s"), temp_dir().join("ext.opt.bpf"));
    for out in [&asm_out, &raw_out] {
        let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(out)]);
        assert_eq!(code, 0, "{stderr}");
        // One summary line, as `compile` writes it: 6 instructions in, 4 out (checked below).
        assert_eq!(
            stderr.trim_end(),
            format!(
                "secopt: {}: 4 instructions, optimized from 6, proved equal -> {}",
                inp.display(),
                out.display()
            ),
        );
    }
    // -q, as compile's: the same file, nothing said.
    let quiet = temp_dir().join("ext.quiet.bpf");
    let (code, _, stderr) = secopt(&["optimize", "-q", s(&inp), "-o", s(&quiet)]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        std::fs::read(&quiet).unwrap(),
        std::fs::read(&raw_out).unwrap()
    );
    let text = std::fs::read_to_string(&asm_out).expect("assembly is text");
    let from_asm = secopt::bpf::asm::assemble(&text).unwrap();
    let from_raw = Program::from_raw(&std::fs::read(&raw_out).unwrap()).unwrap();
    assert_eq!(from_asm, from_raw);
    assert_eq!(from_raw.len(), 4);
    // An explicit format wins over the extension.
    let forced = temp_dir().join("forced.s");
    let (code, _, stderr) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        s(&forced),
        "--output-format",
        "raw",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        Program::from_raw(&std::fs::read(&forced).unwrap()).unwrap(),
        from_raw
    );
}

/// The source and text formats `compile` writes, from `optimize`: each holds exactly the raw
/// output's program, as independent readers see it (the C compiler with the kernel's
/// `struct sock_filter`, coreutils' base64, serde_json), named after the input's file.
#[test]
fn source_and_text_outputs_hold_the_raw_output() {
    let src = "ld [nr]\njeq #0, a\njeq #1, a\njeq #2, a\nret ERRNO(1)\na: ret ALLOW\n";
    let inp = temp_file("emit-src.s", src.as_bytes());
    let dir = temp_dir();
    let out = |name: &str| -> PathBuf {
        let path = dir.join(name);
        secopt_ok(&["optimize", "-q", s(&inp), "-o", s(&path)]);
        path
    };
    let raw = std::fs::read(out("emit.bpf")).unwrap();
    assert_eq!(Program::from_raw(&raw).unwrap().len(), 4);

    // C: the array is named after the input (emit-src.s -> emit_src), with its length.
    let header = out("emit.h");
    std::fs::write(
        dir.join("emit-main.c"),
        "#include <stdio.h>\n#include \"emit.h\"\n\
         int main(void) {\n\
         fwrite(emit_src, sizeof(struct sock_filter), EMIT_SRC_LEN, stdout);\n\
         return sizeof emit_src / sizeof emit_src[0] != EMIT_SRC_LEN;\n}\n",
    )
    .unwrap();
    assert_eq!(run_c(&dir, "emit-main"), raw);
    let text = std::fs::read_to_string(&header).unwrap();
    assert!(
        text.contains("Optimized from 6 instructions; proved equal to the input."),
        "{text}"
    );

    // base64, as coreutils decodes it.
    let decoded = Command::new("base64")
        .arg("-d")
        .arg(out("emit.b64"))
        .output()
        .unwrap();
    assert!(decoded.status.success());
    assert_eq!(decoded.stdout, raw);

    // JSON: the instructions, their base64 and what was done.
    let doc: Value = serde_json::from_slice(&std::fs::read(out("emit.json")).unwrap()).unwrap();
    assert_eq!(doc["length"], 4);
    let insns: Vec<(u16, u8, u8, u32)> = doc["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let n = |k: &str| i[k].as_u64().unwrap();
            (
                n("code") as u16,
                n("jt") as u8,
                n("jf") as u8,
                n("k") as u32,
            )
        })
        .collect();
    let from_raw: Vec<(u16, u8, u8, u32)> = Program::from_raw(&raw)
        .unwrap()
        .insns
        .iter()
        .map(|i| (i.code, i.jt, i.jf, i.k))
        .collect();
    assert_eq!(insns, from_raw);
    assert_eq!(
        doc["description"][0],
        "Optimized from 6 instructions; proved equal to the input."
    );
    // The same for machines: 6 instructions in (the source above), proved equal.
    assert_eq!(doc["optimization"]["reference_length"], 6);
    assert_eq!(doc["optimization"]["verified"], true);
    // The program checks no arch: none listed.
    assert_eq!(doc["arches"], serde_json::json!([]));
    // The document is read back as a filter, by its instructions: the raw output's program.
    let listing = |path: &std::path::Path| {
        let (code, stdout, stderr) = secopt(&["disasm", s(path)]);
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    assert_eq!(
        listing(&dir.join("emit.json")),
        listing(&dir.join("emit.bpf"))
    );

    // --name is for source output only, and nothing is written when it is refused.
    let refused = dir.join("emit-named.bpf");
    let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(&refused), "--name", "x"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--name names the array of C, Rust and Go output"),
        "{stderr}"
    );
    assert!(!refused.exists());
}

/// A weights file's argument values reach the optimizer: with 1000 `ioctl` calls carrying
/// request 0xae70 (the 17th of 18 allowed), that request is the first test after the load of
/// args[1]; the report says how such calls are charged.
#[test]
fn argument_values_in_the_weights_file_order_the_argument_check() {
    let requests: Vec<u32> = (0..18).map(|i| 0xae00 + 7 * i).collect();
    let mut src = String::from(
        "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njeq #16, next, deny\nld [args[1].lo]\n",
    );
    for r in &requests {
        src.push_str(&format!("jeq #{r}, allow\n"));
    }
    src.push_str("deny: ret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS\n");
    let inp = temp_file("ioctl18.s", src.as_bytes());
    let weights = temp_file(
        "ioctl18.json",
        br#"{"ioctl(_, 0xae70)": {"syscall": "ioctl", "count": 1000, "args": [null, "0xae70"]}, "ioctl": 1}"#,
    );
    let out = temp_dir().join("ioctl18.opt.s");
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        s(&out),
        "--arch",
        "x86_64",
        "--weights",
        s(&weights),
        "--report",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(requests[16], 0xae70);
    let prog = secopt::bpf::asm::assemble(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let load = prog
        .insns
        .iter()
        .position(|i| *i == secopt::bpf::Insn::ld_abs(24))
        .unwrap();
    assert_eq!(prog.insns[load + 1].k, 0xae70, "{prog:?}");
    let report = String::from_utf8(stdout).unwrap();
    assert!(
        report.contains("calls the workload gives argument values for are charged their path"),
        "{report}"
    );
}

#[test]
fn no_verify_says_so() {
    let inp = temp_file("tiny.s", b"ld [nr]\njeq #5, a, a\na: ret ALLOW\n");
    let out = temp_dir().join("tiny.bpf");
    let (code, stdout, _) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        s(&out),
        "--no-verify",
        "--report",
    ]);
    assert_eq!(code, 0);
    assert!(String::from_utf8(stdout).unwrap().contains("not verified"));
    assert_eq!(
        std::fs::read(&out).unwrap().len(),
        8,
        "one instruction: ret ALLOW"
    );
}

/// A program the fuzzer found (`optimize` target, input 0xa6): its lifted form is smaller,
/// but proving it equal multiplies two words derived from the arguments, and the decision
/// diagrams grow slowly while the operation cache thrashes. The node budget is not reached
/// in 10 s; the step budget stops the proof after a fixed amount of work, so the input is
/// kept, with the same note on every machine.
#[test]
fn a_proof_the_diagrams_cannot_finish_keeps_the_input_on_the_step_budget() {
    let inp = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/product-proof.s");
    let out = temp_dir().join("slow-proof.bpf");
    let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("could not be proved equal within the self-check's budget")
            && stderr.contains("decision-diagram steps")
            && stderr.contains(
                ": 40 instructions, the input unchanged (nothing better was proved equal \
                 within the self-check's budget)"
            ),
        "{stderr}"
    );
    // What to do about it, with the flag of the budget that ran out.
    assert!(
        stderr.contains("raise --self-check-max-steps to prove it")
            && stderr.contains("`--no-verify` writes it unproved"),
        "{stderr}"
    );
    let (code, assembled, stderr) = secopt(&["asm", s(&inp), "-o", "-"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        assembled,
        "the input, unchanged"
    );
}

/// The self-check's budget is the caller's: each `--self-check-*` limit reaches the proof.
/// Docker's filter is proved smaller with the defaults and with no clock at all; one step,
/// or the fewest nodes a proof may have, drops every smaller candidate, so the input is
/// written unchanged (never the smaller program unproved), and the note names the flag of
/// the limit that ran out. `compile` takes the same flags: too small a budget writes the
/// reference lowering, as `--no-optimize` does.
#[test]
fn the_self_checks_budget_reaches_the_proof() {
    let input = docker_default(1).program;
    let inp = temp_file("docker-budget.bpf", &input.to_raw());
    let out = temp_dir().join("docker-budget.opt.bpf");
    for no_clock in [&[][..], &["--self-check-timeout", "0"]] {
        let mut args = vec!["optimize", s(&inp), "-o", s(&out)];
        args.extend_from_slice(no_clock);
        let (code, _, stderr) = secopt(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(!stderr.contains("could not be proved"), "{stderr}");
        let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
        assert!(opt.len() < input.len() / 2, "{} {no_clock:?}", opt.len());
    }
    for (flag, value) in [
        ("--self-check-max-steps", "1"),
        ("--self-check-max-nodes", "3"),
    ] {
        let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(&out), flag, value]);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains("could not be proved equal within the self-check's budget")
                && stderr.contains(&format!("raise {flag} to prove it")),
            "{flag}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            input.to_raw(),
            "{flag}: the input, unchanged"
        );
    }

    let profile = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles/oci/docker-default.json");
    let reference = temp_dir().join("docker-reference.bpf");
    let compiled = temp_dir().join("docker-budget.bpf");
    let (code, _, stderr) = secopt(&[
        "compile",
        s(&profile),
        "--arch",
        "x86_64",
        "--no-optimize",
        "-o",
        s(&reference),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = secopt(&[
        "compile",
        s(&profile),
        "--arch",
        "x86_64",
        "-o",
        s(&compiled),
        "--self-check-max-steps",
        "1",
        "--progress",
        "always",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("raise --self-check-max-steps to prove it"),
        "{stderr}"
    );
    // The proof that ran out, as `--progress always` logged it.
    assert!(
        stderr.contains("docker-default.json: proving the re-emitted program equal"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&compiled).unwrap(),
        std::fs::read(&reference).unwrap(),
        "the reference lowering"
    );
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    // Not a valid filter (a jump out of range): the validator's message, the file named.
    let valid = temp_file("valid.s", b"ld [nr]\nret ALLOW\n");
    let bad_raw = temp_file(
        "bad.bpf",
        &[0x15, 0, 9, 9, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0xff, 0x7f],
    );
    let out = temp_dir().join("never.bpf");
    let (code, _, stderr) = secopt(&["optimize", s(&bad_raw), "-o", s(&out)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.bpf"), "{stderr}");
    assert!(!out.exists(), "no output file on failure");
    // Weights naming a syscall x86_64 does not have, and a negative count.
    for (name, body) in [
        ("unknown.json", &br#"{"nosuchsyscall": 5}"#[..]),
        ("negative.json", &br#"{"read": -5}"#[..]),
        ("broken.json", &b"{ not json"[..]),
    ] {
        let w = temp_file(name, body);
        let (code, _, stderr) = secopt(&[
            "optimize",
            s(&valid),
            "-o",
            s(&out),
            "--weights",
            s(&w),
            "--arch",
            "x86_64",
        ]);
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(stderr.contains(name), "{name}: {stderr}");
        assert!(!out.exists());
    }
    // A raw filter on a terminal is refused; here stdout is a pipe, so it is written.
    let (code, stdout, _) = secopt(&["optimize", s(&valid)]);
    assert_eq!(code, 0);
    assert_eq!(stdout.len() % 8, 0);
}

/// The longest path through `p` counted on its instructions alone (every branch of every jump
/// taken as possible): an upper bound on what any input runs, independent of the optimizer's
/// own path analysis.
fn syntactic_longest_path(p: &Program) -> usize {
    use secopt::bpf::insn::{BPF_JA, BPF_JMP, BPF_RET};
    let n = p.len();
    let mut longest = vec![0usize; n + 1];
    for i in (0..n).rev() {
        let insn = p.insns[i];
        let at = |off: usize| longest[(i + 1 + off).min(n)];
        longest[i] = 1 + match (insn.code & 0x07, insn.code & 0xf0) {
            (BPF_RET, _) => 0,
            (BPF_JMP, BPF_JA) => at(insn.k as usize),
            (BPF_JMP, _) => at(insn.jt as usize).max(at(insn.jf as usize)),
            _ => at(0),
        };
    }
    longest[0]
}

/// `--max-path N` is a promise: the output runs at most N instructions on any input, still
/// decides exactly like the input, and when no program found can keep the promise nothing is
/// written and the error says so (exit 2).
#[test]
fn max_path_is_a_promise_on_every_input() {
    let weights = common::workloads::shared_workload_path("nginx-wrk.strace-c.txt");
    let input = docker_default(2).program;
    let inp = temp_file("docker-tree-max-path.bpf", &input.to_raw());
    let run = |out: &PathBuf, extra: &[&str]| {
        let mut args = vec!["optimize", s(&inp), "-o", s(out), "--weights", s(&weights)];
        args.extend_from_slice(extra);
        secopt(&args)
    };
    let free = temp_dir().join("free.bpf");
    let (code, _, stderr) = run(&free, &[]);
    assert_eq!(code, 0, "{stderr}");
    let free = Program::from_raw(&std::fs::read(&free).unwrap()).unwrap();
    // Two instructions below the longest path the workload's layout has on its own.
    let bound = syntactic_longest_path(&free) - 2;
    let held = temp_dir().join("held.bpf");
    let n = bound.to_string();
    let (code, _, stderr) = run(&held, &["--max-path", &n]);
    assert_eq!(code, 0, "{stderr}");
    let held = Program::from_raw(&std::fs::read(&held).unwrap()).unwrap();
    validate(&held).unwrap();
    assert!(syntactic_longest_path(&held) <= bound, "{held:?}");
    same_on_sweep(&input, &held);

    // Three instructions (ld arch, one test, ret) cannot decide Docker's profile.
    let refused = temp_dir().join("refused.bpf");
    let (code, _, stderr) = run(&refused, &["--max-path", "3"]);
    assert_eq!(code, 2, "{stderr}");
    // The library's message, worded as compile's (README's table of refusals gives one),
    // and the flag it answers (which the library does not name).
    assert!(
        stderr.contains("no equivalent filter keeps every path within 3 instructions: ")
            && stderr.ends_with("(raise --max-path)\n"),
        "{stderr}"
    );
    assert!(
        !refused.exists(),
        "no output is written when the promise cannot be kept"
    );
}

/// The instructions per call `secopt analyze` measures for `filter` under `workload` (aarch64,
/// without the allow cache), the filter's length and its worst path: the measurement walks the
/// program's paths, not the optimizer's own estimate.
fn measured_without_cache(filter: &std::path::Path, workload: &str) -> (f64, u64, u64) {
    let (code, stdout, stderr) = secopt(&[
        "analyze",
        s(filter),
        "--workload",
        workload,
        "--arch",
        "aarch64",
        "--skip-unknown",
        "--kernel",
        "none",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_slice(&stdout).unwrap();
    let t = &v["totals"];
    (
        t["cost_without_cache"].as_f64().unwrap(),
        v["length"].as_u64().unwrap(),
        t["max_steps"].as_u64().unwrap(),
    )
}

/// `secopt optimize` of libseccomp's binary tree for Docker's profile with `--favor FAVOR`
/// and a JSON report (no workload): the report, stderr and the output file.
fn optimize_docker_tree(tag: &str, favor: &str) -> (Value, String, PathBuf) {
    let inp = temp_file(
        &format!("docker-{tag}.bpf"),
        &docker_default(2).program.to_raw(),
    );
    let out = temp_dir().join(format!("docker-{tag}-{favor}.bpf"));
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        s(&out),
        "--favor",
        favor,
        "--report",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    (the_report(&stdout), stderr, out)
}

/// Without a workload there is nothing to favour (the default weights are a guess): `--favor
/// speed` writes the same bytes as the default, says so, and the report names what was used.
#[test]
fn favor_speed_without_a_workload_is_balanced_and_says_so() {
    let mut outputs = Vec::new();
    for favor in ["balanced", "speed"] {
        let (doc, stderr, out) = optimize_docker_tree("favor", favor);
        assert_eq!(doc["report"]["favor"], "balanced", "{favor}");
        assert_eq!(
            stderr.contains("favouring speed needs a workload")
                && stderr.contains("(give one with --weights)"),
            favor == "speed",
            "{stderr}"
        );
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
}

/// `--favor size` needs no workload: on libseccomp's binary tree for Docker's profile it
/// writes a smaller program than the default, without the warning `speed` gives, the report
/// names it, and `secopt verify` proves it equal to libseccomp's linear program (another
/// layout of the same profile, by the reference library).
#[test]
fn favor_size_without_a_workload_is_smaller_and_equal() {
    let linear = temp_file(
        "docker-size-linear.bpf",
        &docker_default(1).program.to_raw(),
    );
    let mut lengths = Vec::new();
    for favor in ["balanced", "size"] {
        let (doc, stderr, out) = optimize_docker_tree("size", favor);
        assert!(!stderr.contains("warning"), "{stderr}");
        assert_eq!(doc["report"]["favor"], favor);
        let (code, _, stderr) = secopt(&["verify", s(&linear), s(&out)]);
        assert_eq!(code, 0, "{favor}: {stderr}");
        lengths.push(std::fs::read(&out).unwrap().len() / 8);
    }
    assert!(lengths[1] < lengths[0], "{lengths:?}");
}

/// `--favor speed` buys cost with size and worst path: on the corpus's aarch64 filters under
/// the shared workloads (without the cache, the model optimized for) it never costs more per
/// call than the default `balanced` (as `secopt analyze` measures both), it costs less
/// somewhere, and where it does its worst path or size is what paid. Both outputs are proved
/// equal to the profile by the self-check; here also to each other by `secopt verify`.
#[test]
fn favor_speed_trades_size_and_worst_path_for_cost() {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let dir = temp_dir();
    let mut cheaper = 0;
    for profile in [
        "docker-default",
        "seccompagent-notify-dangerous",
        "spo-nginx-1.19.1",
    ] {
        for workload in ["nginx-wrk", "gvisor-sentry-postgres"] {
            let profile_path = shared.join(format!("profiles/oci/{profile}.json"));
            let workload_path = shared.join(format!("workloads/{workload}.strace-c.txt"));
            let mut measured = Vec::new();
            for favor in ["balanced", "speed"] {
                let out = dir.join(format!("{profile}.{workload}.{favor}.bpf"));
                let (code, _, stderr) = secopt(&[
                    "compile",
                    s(&profile_path),
                    "--arch",
                    "aarch64",
                    "--weights",
                    s(&workload_path),
                    "--skip-unknown",
                    "--cost-model",
                    "no-cache",
                    "--favor",
                    favor,
                    "-o",
                    s(&out),
                ]);
                assert_eq!(code, 0, "{stderr}");
                measured.push((measured_without_cache(&out, s(&workload_path)), out));
            }
            let context = format!("{profile} · {workload}: {measured:?}");
            let [((balanced, b_len, b_path), b_out), ((speed, s_len, s_path), s_out)] =
                <[_; 2]>::try_from(measured).unwrap();
            assert!(speed <= balanced + 1e-9, "{context}");
            if speed < balanced - 1e-3 {
                cheaper += 1;
                assert!(s_len > b_len || s_path > b_path, "{context}");
            }
            let (code, _, stderr) = secopt(&["verify", s(&b_out), s(&s_out)]);
            assert_eq!(code, 0, "{context}: {stderr}");
        }
    }
    assert!(cheaper >= 2, "{cheaper}");
}

/// An OCI profile with one rule: `names` (space-separated) get `rule` (the rule's action
/// fields), everything else `default`, on `arches`.
fn list_profile(default: &str, arches: &[&str], names: &str, rule: Value) -> Value {
    let mut rule = rule;
    rule["names"] = names.split_whitespace().collect::<Vec<_>>().into();
    serde_json::json!({
        "defaultAction": default,
        "architectures": arches,
        "syscalls": [rule],
    })
}

const THREE_ABIS: &[&str] = &["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"];

/// libseccomp's linear program for `profile` (optimize=1, runc's layout).
fn libseccomp_linear(profile: &Value) -> Program {
    use common::libseccomp_profiles::{build_filter, ProfileOptions};
    let opts = ProfileOptions {
        optimize: 1,
        ..ProfileOptions::default()
    };
    build_filter(profile, &opts)
        .expect("libseccomp builds it")
        .program
}

/// A small allow-list on three ABIs: libseccomp's linear chain (one `jeq` per name) is
/// *smaller* than any search tree over the same scattered numbers, so the lifted program is
/// larger than its input here, but runs a few instructions per syscall instead of a scan of
/// the list. The optimizer used to drop it for size alone (for 31 names but not 30), keep the
/// chain, and then refuse `--max-path 20` with "the shortest worst-case path reached is 66".
#[test]
fn a_larger_but_much_cheaper_program_wins_and_keeps_a_path_bound() {
    let profile = list_profile(
        "SCMP_ACT_ERRNO",
        THREE_ABIS,
        "read write close exit_group exit futex mmap mprotect munmap brk openat newfstatat \
         fstat getpid getppid rt_sigaction rt_sigprocmask rt_sigreturn epoll_wait epoll_ctl \
         accept4 recvfrom sendto writev readv clock_gettime nanosleep execve arch_prctl \
         set_tid_address getrandom",
        serde_json::json!({ "action": "SCMP_ACT_ALLOW" }),
    );
    let linear = libseccomp_linear(&profile);
    let inp = temp_file("allow31.bpf", &linear.to_raw());
    let run = |tag: &str, extra: &[&str]| {
        let out = temp_dir().join(format!("allow31-{tag}.bpf"));
        let mut args = vec![
            "optimize",
            s(&inp),
            "-o",
            s(&out),
            "--report",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = secopt(&args);
        assert_eq!(code, 0, "{tag}: {stderr}");
        let v: Value = the_report(&stdout);
        let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
        validate(&opt).unwrap();
        same_on_sweep(&linear, &opt);
        (v, opt)
    };
    let (v, opt) = run("balanced", &[]);
    let (before, after) = (&v["report"]["before"], &v["report"]["after"]);
    let cost = |s: &Value| s["cost_with_cache"].as_f64().unwrap();
    // The chain tests the names one by one: the syscalls behind it cost tens of instructions.
    assert!(cost(before) > 30.0, "{v}");
    assert_eq!(v["method"], "lifted", "{v}");
    assert!(
        opt.len() > linear.len(),
        "the premise: the tree is larger ({v})"
    );
    assert!(cost(after) * 4.0 < cost(before), "{v}");
    // The header does not call a larger program "optimized from" the input.
    let listing = temp_dir().join("allow31.s");
    let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(&listing)]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&listing).unwrap();
    assert!(
        text.contains(&format!(
            "; Re-laid out from {} instructions (larger, for fewer instructions run per \
             syscall or a shorter worst path); proved equal to the input.",
            linear.len()
        )),
        "{text}"
    );
    assert!(
        stderr.contains(&format!("re-laid out from {} (larger", linear.len())),
        "{stderr}"
    );
    // A tree over 2 × 31 + 1 ranges per ABI is about 6 tests deep: 20 is easily kept.
    let (_, bounded) = run("max-path", &["--max-path", "20"]);
    assert!(syntactic_longest_path(&bounded) <= 20);
    // `--favor size` never trades instructions for speed: nothing larger than the input.
    let (v, small) = run("size", &["--favor", "size"]);
    assert!(small.len() <= linear.len(), "{v}");
}

/// The other side of the ranking: a deny-list whose syscalls the workload never makes costs
/// 0 per call with the cache in any layout, so a smaller `jeq` chain ties the tree there; it
/// must not win on size alone, since every syscall after the list pays the whole chain
/// without the cache, and the worst path grows with the list. 29 names on three ABIs with
/// redis' workload: the chain is 95 instructions with a worst path of 62 (it was taken until
/// the ranking weighed both cost models and the worst path); the tree, 115 and 12.
#[test]
fn a_smaller_chain_does_not_win_a_cost_tie() {
    let profile = list_profile(
        "SCMP_ACT_ALLOW",
        THREE_ABIS,
        "unlinkat timerfd_gettime readv signalfd4 exit_group waitid setresuid getgid \
         perf_event_open getxattr rt_tgsigqueueinfo gettid ioctl writev setfsuid fallocate \
         sched_getparam io_uring_setup fchdir sched_yield membarrier timer_create prctl mremap \
         pidfd_open openat2 sched_setattr tee add_key",
        serde_json::json!({ "action": "SCMP_ACT_ERRNO", "errnoRet": 1 }),
    );
    let inp = temp_file("deny29.json", profile.to_string().as_bytes());
    let workload = common::workloads::shared_workload_path("redis-benchmark.strace-c.txt");
    let out = temp_dir().join("deny29.bpf");
    let (code, stdout, stderr) = secopt(&[
        "compile",
        s(&inp),
        "--weights",
        s(&workload),
        "-o",
        s(&out),
        "--report",
        "--report-format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_slice(&stdout).unwrap();
    let after = &v[0]["report"]["after"];
    assert_eq!(v[0]["method"], "lifted", "{v}");
    // A search tree over 2 × 29 + 1 ranges per ABI is about 6 tests deep after the arch
    // checks; a chain runs 29.
    let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    assert!(syntactic_longest_path(&opt) <= 16, "{v}");
    assert!(after["cost_without_cache"].as_f64().unwrap() < 10.0, "{v}");
}

/// Without a workload the dispatch gives its worst-path slack back by a heuristic; it used to
/// keep layouts that its own `--max-path` output beat on every count (an audit found 53 of
/// 1 267 sweep rows). This 48-name aarch64 allow-list was one: 72 instructions, 7.911 and
/// 9.512 instructions per syscall with and without the cache, worst path 13, against 72,
/// 7.911, 9.509 and 12 with `--max-path 12`. The default layout must not be dominated by the
/// bounded ones (no larger, no costlier in either model, no longer, better in one).
#[test]
fn the_default_layout_is_not_beaten_on_every_count_by_a_bounded_one() {
    let profile = list_profile(
        "SCMP_ACT_ERRNO",
        &["SCMP_ARCH_AARCH64"],
        "unlinkat timerfd_gettime readv signalfd4 exit_group waitid setresuid getgid \
         perf_event_open getxattr rt_tgsigqueueinfo gettid ioctl writev setfsuid fallocate \
         sched_getparam io_uring_setup fchdir sched_yield membarrier timer_create prctl mremap \
         pidfd_open openat2 sched_setattr tee add_key epoll_ctl truncate pidfd_send_signal \
         lsetxattr fstatfs getresgid clock_adjtime msync memfd_create move_mount \
         sched_getscheduler fsync setsid splice sigaltstack prlimit64 times pkey_free \
         delete_module",
        serde_json::json!({ "action": "SCMP_ACT_ALLOW" }),
    );
    let inp = temp_file("allow48-aarch64.json", profile.to_string().as_bytes());
    // (instructions, cost with the cache, cost without, worst path) of the filter written.
    let run = |extra: &[&str]| {
        let out = temp_dir().join(format!("allow48-{}.bpf", extra.join("")));
        let mut args = vec![
            "compile",
            s(&inp),
            "-o",
            s(&out),
            "--report",
            "--report-format",
            "json",
            "--arch",
            "aarch64",
        ];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = secopt(&args);
        if code != 0 && stderr.contains("no equivalent filter keeps every path") {
            return None;
        }
        assert_eq!(code, 0, "{extra:?}: {stderr}");
        let v: Value = serde_json::from_slice(&stdout).unwrap();
        assert_eq!(v[0]["verification"]["status"], "equal", "{v}");
        let a = &v[0]["report"]["after"];
        let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(a["length"].as_u64(), Some(opt.len() as u64), "{v}");
        let f = |k: &str| a[k].as_f64().unwrap();
        let worst = a["max_steps"].as_u64().unwrap();
        Some((
            opt.len(),
            f("cost_with_cache"),
            f("cost_without_cache"),
            worst,
        ))
    };
    let default = run(&[]).expect("no bound to miss");
    let dominates = |b: (usize, f64, f64, u64), d: (usize, f64, f64, u64)| {
        let eps = 1e-9;
        let no_worse = b.0 <= d.0 && b.1 <= d.1 + eps && b.2 <= d.2 + eps && b.3 <= d.3;
        no_worse && (b.0 < d.0 || b.1 < d.1 - eps || b.2 < d.2 - eps || b.3 < d.3)
    };
    let mut kept = 0;
    for less in 1..=2 {
        let bound = (default.3 - less).to_string();
        let Some(bounded) = run(&["--max-path", &bound]) else {
            continue;
        };
        kept += 1;
        assert!(
            !dominates(bounded, default),
            "--max-path {bound}: {bounded:?} beats the default {default:?} on every count"
        );
    }
    assert!(kept > 0, "the premise: a tighter bound can be kept");
}

/// `--max-path` is a promise, `--favor` a preference: when the size layout's worst path is
/// above the bound but the balanced layout's is not, a filter within the bound exists and is
/// written (Firecracker's vCPU thread: size 29, balanced 16; it was refused with "the
/// shortest worst-case path secopt reached is 27" when size's was 27). The bound is the
/// balanced layout's own worst path, which the size layout cannot keep (it can keep one
/// short of its own: a worst path of 29 is a choice among trees of equal size).
#[test]
fn max_path_falls_back_to_the_balanced_layout_when_favor_cannot_keep_it() {
    let fc = common::libseccomp_profiles::profile_path(
        "firecracker/firecracker-x86_64-unknown-linux-musl.json",
    );
    let compile = |tag: &str, extra: &[&str]| -> (i32, String, Option<Program>) {
        let out = temp_dir().join(format!("fc-vcpu-{tag}.bpf"));
        let _ = std::fs::remove_file(&out);
        let mut args = vec!["compile", s(&fc), "--thread", "vcpu", "-o", s(&out)];
        args.extend_from_slice(extra);
        let (code, _, stderr) = secopt(&args);
        let prog = std::fs::read(&out)
            .ok()
            .map(|b| Program::from_raw(&b).unwrap());
        (code, stderr, prog)
    };
    let longest = |p: &Option<Program>| syntactic_longest_path(p.as_ref().unwrap());
    let (_, _, size) = compile("size", &["--favor", "size"]);
    let (_, _, balanced) = compile("balanced", &[]);
    let (s_path, b_path) = (longest(&size), longest(&balanced));
    assert!(
        b_path < s_path,
        "the premise: balanced {b_path} < size {s_path}"
    );
    let bound = b_path.to_string();
    let (code, stderr, bounded) = compile("bounded", &["--favor", "size", "--max-path", &bound]);
    assert_eq!(code, 0, "{stderr}");
    assert!(longest(&bounded) < s_path);
    assert!(stderr.contains("the balanced layout does"), "{stderr}");
}

/// `--favor size` is never beaten by libseccomp's linear chain: for short lists the input's
/// own `jeq` chain (after the bytecode passes) can be smaller than any tree, and it is now
/// always a candidate (a 9-name allow-list on x86_64 came out 18 instructions, one more than
/// libseccomp's 17).
#[test]
fn favor_size_is_no_larger_than_libseccomps_linear_chain() {
    let mut profile = list_profile(
        "SCMP_ACT_ERRNO",
        &["SCMP_ARCH_X86_64"],
        "unlinkat timerfd_gettime readv signalfd4 exit_group waitid setresuid getgid \
         perf_event_open",
        serde_json::json!({ "action": "SCMP_ACT_ALLOW" }),
    );
    profile["defaultErrnoRet"] = 1.into();
    let linear = libseccomp_linear(&profile);
    let inp = temp_file("allow9.json", profile.to_string().as_bytes());
    let out = temp_dir().join("allow9-size.bpf");
    let (code, _, stderr) = secopt(&["compile", s(&inp), "--favor", "size", "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    let small = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    assert!(
        small.len() <= linear.len(),
        "{} > libseccomp's {}",
        small.len(),
        linear.len()
    );
}

/// The dispatch search counts tests and bodies, not a `ja` the layout adds to reach a
/// continuation placed elsewhere; a layout that comes out over `--max-path` is searched again
/// with less room. Firecracker's API thread (default 14): `--max-path 13` was refused ("the
/// shortest worst-case path secopt reached is 14") while a 13-path filter exists.
#[test]
fn max_path_counts_the_layouts_jumps() {
    let fc = common::libseccomp_profiles::profile_path(
        "firecracker/firecracker-x86_64-unknown-linux-musl.json",
    );
    let out = temp_dir().join("fc-api-13.bpf");
    let (code, _, stderr) = secopt(&[
        "compile",
        s(&fc),
        "--thread",
        "api",
        "--max-path",
        "13",
        "-o",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let prog = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    assert!(syntactic_longest_path(&prog) <= 13);
    assert!(stderr.contains("proved equal"), "{stderr}");
}

/// A workload read for one ABI given to a filter for another: every call takes the filter's
/// other-arch path, so the workload cannot shape the layout. optimize says so (on stderr and
/// in the JSON notes), and says nothing once the workload is read for the filter's ABI.
#[test]
fn a_workload_on_an_arch_the_filter_does_not_check_is_flagged() {
    let filter = temp_file(
        "aarch64-only.s",
        b"ld [arch]\njeq #AUDIT_ARCH_AARCH64, next, kill\nld [nr]\n\
          jeq #aarch64.read, allow\njeq #aarch64.write, allow\njeq #aarch64.futex, allow\n\
          ret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS\n",
    );
    let weights = temp_file("rw.json", br#"{"read": 1000, "write": 10, "futex": 500}"#);
    let out = temp_dir().join("aarch64-only.opt.bpf");
    let run = |arch: &str| {
        let (code, stdout, stderr) = secopt(&[
            "optimize",
            s(&filter),
            "-o",
            s(&out),
            "--weights",
            s(&weights),
            "--arch",
            arch,
            "--report",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{stderr}");
        let doc: Value = the_report(&stdout);
        let notes: Vec<String> = doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        (notes, stderr)
    };
    let (notes, stderr) = run("x86_64");
    let flagged: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("does not single out"))
        .collect();
    assert_eq!(flagged.len(), 1, "{notes:?}");
    assert!(flagged[0].contains("all on x86_64") && flagged[0].contains("checks aarch64"));
    assert!(
        stderr.contains(&format!(
            "warning: {}: the workload's calls are all on x86_64",
            s(&filter)
        )),
        "{stderr}"
    );
    let (notes, stderr) = run("aarch64");
    assert!(
        !notes.iter().any(|n| n.contains("single out")) && !stderr.contains("single out"),
        "{notes:?} {stderr}"
    );
}

/// The oldest filter of the stack tests: x86_64 only; read, write and close allowed, the rest
/// `ERRNO(1)`.
const STACK_OLDEST: &str = "ld [arch]
jeq #AUDIT_ARCH_X86_64, next, kill
ld [nr]
jeq #x86_64.read, allow
jeq #x86_64.write, allow
jeq #x86_64.close, allow
ret ERRNO(1)
allow: ret ALLOW
kill: ret KILL_PROCESS
";

/// The newest: `write` only to fd 1 (`ERRNO(9)` otherwise), `openat` `ERRNO(13)`, the rest
/// allowed, other arches too.
const STACK_NEWEST: &str = "ld [arch]
jeq #AUDIT_ARCH_X86_64, next, allow
ld [nr]
jeq #x86_64.write, write
jeq #x86_64.openat, eacces
ret ALLOW
write: ld [args[0].lo]
jeq #1, next, ebadf
ld [args[0].hi]
jeq #0, allow, ebadf
eacces: ret ERRNO(13)
ebadf: ret ERRNO(9)
allow: ret ALLOW
";

fn stack_data(token: u32, name: &str, fd: u64) -> SeccompData {
    let nr = match name {
        "read" => 0,
        "write" => 1,
        "close" => 3,
        "getpid" => 39,
        "openat" => 257,
        other => panic!("{other}"),
    };
    SeccompData::new(token, nr, [fd, 0, 0, 0, 0, 0])
}

#[test]
fn a_stack_of_filters_becomes_one_that_decides_as_the_kernel_does() {
    use secopt::bpf::stack::eval_stack;
    let oldest = temp_file("stack-oldest.s", STACK_OLDEST.as_bytes());
    let newest = temp_file("stack-newest.s", STACK_NEWEST.as_bytes());
    let filters = [
        secopt::bpf::asm::assemble(STACK_OLDEST).unwrap(),
        secopt::bpf::asm::assemble(STACK_NEWEST).unwrap(),
    ];
    let out = temp_dir().join("stack.bpf");
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&oldest),
        s(&newest),
        "-o",
        s(&out),
        "--report",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("joined from 2 filters of"), "{stderr}");
    let merged = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    validate(&merged).unwrap();

    // What the kernel's rule gives, worked out by hand: the lowest action wins, the newest
    // filter's on a tie (openat: ERRNO(1) from the oldest, ERRNO(13) from the newest).
    let (x86_64, i386) = (0xc000_003e, 0x4000_0003);
    let expected = [
        (stack_data(x86_64, "read", 7), RetVal::ALLOW),
        (stack_data(x86_64, "write", 1), RetVal::ALLOW),
        (stack_data(x86_64, "write", 2), RetVal(0x0005_0009)),
        (
            stack_data(x86_64, "write", 1 << 32 | 1),
            RetVal(0x0005_0009),
        ),
        (stack_data(x86_64, "openat", 0), RetVal(0x0005_000d)),
        (stack_data(x86_64, "getpid", 0), RetVal(0x0005_0001)),
        (stack_data(i386, "read", 0), RetVal::KILL_PROCESS),
    ];
    for (d, want) in &expected {
        assert_eq!(interp::eval(&merged, d).unwrap(), *want, "{d:?}");
    }
    for token in [x86_64, i386, 0xc000_00b7] {
        for nr in (0..520).chain(0x4000_0000..0x4000_0220).chain([u32::MAX]) {
            for fd in [0, 1, 2, 1 << 32 | 1] {
                let d = SeccompData::new(token, nr as i32, [fd, 0, 0, 0, 0, 0]);
                assert_eq!(
                    interp::eval(&merged, &d).unwrap(),
                    eval_stack(&filters, &d).unwrap(),
                    "{d:?}"
                );
            }
        }
    }

    // The report's "before" is the stack as the kernel runs it: both filters' instructions;
    // cached only what both allow by number (read and close: write depends on an argument
    // in the newest), and the output caches the same.
    let report: Value = the_report(&stdout);
    let before = &report["report"]["before"];
    assert_eq!(before["length"], filters[0].len() + filters[1].len());
    let x86_64_cached = |side: &Value| {
        side["cacheable"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["token"] == x86_64)
            .unwrap()["count"]
            .clone()
    };
    assert_eq!(x86_64_cached(before), 2, "{report}");
    assert_eq!(x86_64_cached(&report["report"]["after"]), 2, "{report}");
    assert_eq!(report["stack"].as_array().unwrap().len(), 2);

    // The text report says its "before" is the stack's.
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&oldest),
        s(&newest),
        "-o",
        s(&out),
        "--report",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let text = String::from_utf8(stdout).unwrap();
    assert!(text.contains("stack: 2 filters, oldest first"), "{text}");

    // The order is the installation order: reversed, the tie on openat goes the other way.
    let (code, _, stderr) = secopt(&["optimize", s(&newest), s(&oldest), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    let reversed = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    let openat = stack_data(x86_64, "openat", 0);
    assert_eq!(
        interp::eval(&reversed, &openat).unwrap(),
        RetVal(0x0005_0001)
    );
    assert!(!stderr.contains("longer than the stack"), "{stderr}");

    // A computed answer (`ret a`) leaves the kernel's choice to the joined program at run
    // time, which can make it longer than the stack: the summary says so, and that the
    // stack as it is may run fewer instructions.
    let computed = temp_file(
        "stack-computed.s",
        b"ld [args[0].lo]\nor #0x50000\nand #0x5ffff\nret a\n",
    );
    let kill = temp_file(
        "stack-kill.s",
        b"ld [nr]\njeq #1, next, k\nret ALLOW\nk: ret KILL_PROCESS\n",
    );
    let (code, _, stderr) = secopt(&["optimize", s(&kill), s(&computed), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    let joined = std::fs::read(&out).unwrap().len() / 8;
    assert!(joined > 4 + 4, "{joined} instructions: {stderr}");
    assert!(
        stderr.contains("longer than the stack")
            && stderr.contains("installing the stack as it is may run fewer instructions"),
        "{stderr}"
    );
}

#[test]
fn a_stack_that_cannot_be_joined_is_refused_with_exit_2() {
    let oldest = temp_file("stack-oldest2.s", STACK_OLDEST.as_bytes());
    let div = temp_file("stack-div.s", b"ldx #0\nld #7\ndiv x\nret ALLOW\n");
    let out = temp_dir().join("stack-refused.bpf");
    let (code, _, stderr) = secopt(&["optimize", s(&oldest), s(&div), "-o", s(&out)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("filter 1 divides by X"), "{stderr}");
    assert!(!out.exists());
    let (code, _, stderr) = secopt(&["optimize", "-", "-", "-o", s(&out)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("only one of the inputs"), "{stderr}");
}

#[test]
fn a_stack_whose_filters_both_notify_says_the_joined_one_has_one_listener() {
    let notify_getpid =
        "ld [nr]\njeq #x86_64.getpid, next, allow\nret USER_NOTIF\nallow: ret ALLOW\n";
    let notify_getppid =
        "ld [nr]\njeq #x86_64.getppid, next, allow\nret USER_NOTIF\nallow: ret ALLOW\n";
    let a = temp_file("notify-a.s", notify_getpid.as_bytes());
    let b = temp_file("notify-b.s", notify_getppid.as_bytes());
    let out = temp_dir().join("notify-joined.bpf");
    let (code, _, stderr) = secopt(&["optimize", s(&a), s(&b), "-o", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("filters 0, 1 of the stack can answer USER_NOTIF")
            && stderr.contains("each notification goes to the listener of the filter"),
        "{stderr}"
    );
    // One sentence, not a source line's indentation inside it.
    assert!(!stderr.contains("   "), "{stderr}");
    // One notifying filter: nothing to say.
    let (code, _, stderr) = secopt(&[
        "optimize",
        s(&a),
        s(&temp_file("plain.s", STACK_OLDEST.as_bytes())),
        "-o",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("USER_NOTIF"), "{stderr}");
}

/// A filter of `n` scattered `ioctl` requests (x86_64), each tested as `jeq #v; ret ALLOW`:
/// two instructions a request, as a generator that does not share returns writes it.
fn request_chain(n: usize, seed: u64) -> (Program, Vec<u32>) {
    use secopt::bpf::insn::*;
    let mut rng = secopt::bpf::testing::Rng::new(seed);
    let mut requests: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    requests.sort_unstable();
    requests.dedup();
    let errno = RetVal::errno(1).0;
    let mut insns = vec![
        Insn::ld_abs(4),
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0xc000_003e, 1, 0),
        Insn::ret(RetVal::KILL_THREAD.0),
        Insn::ld_abs(0),
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 16, 1, 0),
        Insn::ret(errno),
        Insn::ld_abs(28),
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
        Insn::ret(errno),
        Insn::ld_abs(24),
    ];
    for &v in &requests {
        insns.push(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 1));
        insns.push(Insn::ret(RetVal::ALLOW.0));
    }
    insns.push(Insn::ret(errno));
    (Program::new(insns), requests)
}

/// On a terminal (a pseudo-terminal `script` gives, 60 columns), `--progress auto` draws
/// one status line while the 3 000-request filter is optimized (about a second here), redrawn
/// in place, never wider than the terminal, and cleared before the notes print; `never` draws
/// nothing. The line appears only once the optimization has run half a second, so a machine
/// that finishes sooner shows none: the test insists on it when the run took a second.
#[test]
fn a_terminal_sees_the_status_line_drawn_and_cleared() {
    use common::terminal::{run_on_a_terminal, DRAW};
    let (long, _) = request_chain(3000, 11);
    let inp = temp_file("tty-long.bpf", &long.to_raw());
    let out = temp_dir().join("tty-long.opt.bpf");
    let on_a_terminal = |progress: &str| {
        let args = format!(
            "optimize {} -o {} --self-check-timeout 0 --progress {progress}",
            s(&inp),
            s(&out)
        );
        let (screen, code, took) = run_on_a_terminal(&args)?;
        assert_eq!(code, Some(0), "{screen:?}");
        Some((screen, took))
    };
    let Some((screen, took)) = on_a_terminal("auto") else {
        return;
    };
    assert!(
        screen.contains("4046 instructions, optimized from 6011"),
        "{screen:?}"
    );
    let draws: Vec<&str> = screen.split(DRAW).skip(1).collect();
    if took >= std::time::Duration::from_secs(1) {
        assert!(draws.len() >= 2, "{took:?}: {screen:?}");
    }
    if let Some((last, drawn)) = draws.split_last() {
        for line in drawn {
            assert!(line.starts_with("secopt: "), "{line:?}");
            assert!(line.chars().count() <= 59, "{line:?}");
            assert!(!line.contains('\n'), "{line:?}");
        }
        // The last one cleared the line: the notes follow on a line of their own.
        assert!(last.starts_with("secopt: warning: "), "{last:?}");
        assert!(last.contains("the layout needs"), "{last:?}");
    }
    let (screen, _) = on_a_terminal("never").unwrap();
    assert!(!screen.contains('\x1b'), "{screen:?}");
    assert!(screen.starts_with("secopt: warning: "), "{screen:?}");
}

/// A filter the kernel refuses only for its length (3 000 requests in 6 011 instructions,
/// as a generator without an optimizer writes them) is optimized into one that fits, proved
/// equal, and `verify` compares the two; 5 000 requests cannot fit, and the error says so
/// with the sizes, writing nothing.
#[test]
fn a_filter_over_the_kernel_limit_is_optimized_to_fit() {
    let (long, requests) = request_chain(3000, 11);
    assert!(long.len() > 4096 && validate(&long).is_err());
    let inp = temp_file("long.bpf", &long.to_raw());
    let out = temp_dir().join("long.opt.bpf");
    // Proved within the self-check's deterministic limits only: on a loaded machine its
    // clock could drop the candidates this test is about.
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        s(&out),
        "--report",
        "--self-check-timeout",
        "0",
        "--progress",
        "always",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let text = String::from_utf8(stdout).unwrap();
    assert!(text.contains("proved equal to the input"), "{text}");
    assert!(stderr.contains("long.bpf: the layout needs"), "{stderr}");
    // `--progress always` logged the lifting, the search for a layout that fits (value tests
    // in chains) and the proof of the one kept.
    assert!(
        stderr.contains("long.bpf: lifting the decisions of the input...")
            && stderr.contains("long.bpf: laying out favouring balanced...")
            && stderr.contains(", value chains of up to ")
            && stderr.contains("long.bpf: proving the re-emitted program equal..."),
        "{stderr}"
    );
    let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    validate(&opt).unwrap();
    for &v in &requests {
        for probe in [v, v.wrapping_add(1)] {
            let d = SeccompData::new(0xc000_003e, 16, [0, u64::from(probe), 0, 0, 0, 0]);
            assert_eq!(
                interp::eval(&opt, &d),
                interp::eval(&long, &d),
                "{probe:#x}"
            );
        }
    }
    let (code, stdout, stderr) = secopt(&["verify", s(&inp), s(&out), "--timeout", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(String::from_utf8_lossy(&stdout).starts_with("equal"));
    // The verbs that refuse it say what takes it; not for a program with another fault too.
    let (code, _, stderr) = secopt(&["analyze", s(&inp)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("more than the kernel's limit")
            && stderr.contains("nothing else is wrong with it: `secopt optimize` makes it fit"),
        "{stderr}"
    );
    // Its listing (disasm lists it, exit 1) is read as its bytes are: compared, and refused
    // by analyze at its line, with the same hint.
    let (code, listing, _) = secopt(&["disasm", s(&inp)]);
    assert_eq!(code, 1);
    let listing = temp_file("long.s", &listing);
    let (code, stdout, stderr) = secopt(&["verify", s(&listing), s(&out), "--timeout", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(String::from_utf8_lossy(&stdout).starts_with("equal"));
    let (code, _, stderr) = secopt(&["analyze", s(&listing)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("long.s:") && stderr.contains("nothing else is wrong with it"),
        "{stderr}"
    );
    let mut no_ret = long.clone();
    no_ret.insns.push(secopt::bpf::insn::Insn::ld_abs(0));
    let no_ret = temp_file("long-no-ret.bpf", &no_ret.to_raw());
    let (code, _, stderr) = secopt(&["analyze", s(&no_ret)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the kernel would reject this filter")
            && !stderr.contains("nothing else is wrong"),
        "{stderr}"
    );

    let (too_many, _) = request_chain(5000, 12);
    let inp = temp_file("too-many.bpf", &too_many.to_raw());
    let out = temp_dir().join("too-many.opt.bpf");
    let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(&out)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("too-many.bpf") && stderr.contains("over the kernel's limit"),
        "{stderr}"
    );
    assert!(!out.exists());
    // With a path bound too, the size is the news: no program that fits was found, so there
    // is no path of one to name (the input's own, thousands long, is none).
    let (code, _, stderr) = secopt(&["optimize", s(&inp), "-o", s(&out), "--max-path", "30"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("over the kernel's limit") && !stderr.contains("keeps every path"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// The system libseccomp's own filter for a profile with 3 000 `ioctl` requests (its binary
/// tree layout) fits in 3 026 instructions, but tests the requests one after another.
/// `secopt optimize` cannot lay them out as balanced trees within the kernel's limit, so it
/// lays them out as trees of short chains: a larger filter (still within the limit) whose
/// longest path is a few dozen instructions, proved equal to libseccomp's program; and
/// `secopt verify` finds it equal to the profile as secopt compiles it: two independent
/// readings of one profile agree.
#[test]
fn libseccomps_long_request_chain_is_laid_out_as_trees_that_fit() {
    use common::libseccomp_profiles::{build_filter, ProfileOptions};
    let mut rng = secopt::bpf::testing::Rng::new(21);
    let rules: Vec<Value> = (0..3000)
        .map(|_| {
            serde_json::json!({"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
                "args": [{"index": 1, "value": rng.next_u32(), "op": "SCMP_CMP_EQ"}]})
        })
        .collect();
    let profile = serde_json::json!({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": rules});
    let libseccomp = build_filter(
        &profile,
        &ProfileOptions {
            optimize: 2,
            native: Some("SCMP_ARCH_X86_64".into()),
            arches: Some(vec![]),
            ..Default::default()
        },
    )
    .unwrap()
    .program;
    assert!(libseccomp.len() <= 4096, "{}", libseccomp.len());
    assert!(syntactic_longest_path(&libseccomp) > 3000);
    let inp = temp_file("libseccomp-ioctls.bpf", &libseccomp.to_raw());
    let out = temp_dir().join("libseccomp-ioctls.opt.bpf");
    let (code, stdout, stderr) = secopt(&[
        "optimize",
        s(&inp),
        "-o",
        s(&out),
        "--report",
        "--self-check-timeout",
        "0",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        String::from_utf8(stdout)
            .unwrap()
            .contains("proved equal to the input"),
        "{stderr}"
    );
    assert!(stderr.contains("trees of chains"), "{stderr}");
    let opt = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    validate(&opt).unwrap();
    assert!(syntactic_longest_path(&opt) < 100);
    let json = temp_file("ioctls.json", profile.to_string().as_bytes());
    let (code, stdout, stderr) = secopt(&[
        "verify",
        s(&json),
        s(&out),
        "--profile-arch",
        "x86_64",
        "--timeout",
        "0",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(String::from_utf8_lossy(&stdout).starts_with("equal"));
}

/// The one document of `optimize --format json`'s report on one filter: an array of one, as
/// compile's is.
fn the_report(stdout: &[u8]) -> Value {
    let docs: Value = serde_json::from_slice(stdout).unwrap();
    let docs = docs.as_array().expect("an array of documents");
    assert_eq!(docs.len(), 1, "{docs:?}");
    docs[0].clone()
}

/// One thread of a Firecracker filter file as a C header is named after the thread, however
/// the thread is picked (`FILE:THREAD` or `--thread`), so two threads' headers go in one
/// program (the C compiler is the judge; each array's length is its raw output's). The whole
/// file under a name whose extension asks for one filter is refused, not written as a binary
/// file under that name; and --thread with Firecracker's file format says to leave --thread
/// out (found by an audit).
#[test]
fn firecracker_threads_as_headers_are_named_by_thread() {
    let fc = common::libseccomp_profiles::profile_path(
        "firecracker/firecracker-x86_64-unknown-linux-musl.json",
    );
    let dir = temp_dir().join("fc-headers");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("fc.bin");
    secopt_ok(&[
        "compile",
        s(&fc),
        "--emit",
        "firecracker",
        "-o",
        s(&file),
        "-q",
    ]);
    let api = format!("{}:api", s(&file));
    secopt_ok(&["optimize", &api, "-o", s(&dir.join("api.h")), "-q"]);
    secopt_ok(&[
        "optimize",
        s(&file),
        "--thread",
        "vcpu",
        "-o",
        s(&dir.join("vcpu.h")),
        "-q",
    ]);
    secopt_ok(&["optimize", &api, "-o", s(&dir.join("api.bpf")), "-q"]);
    secopt_ok(&[
        "optimize",
        s(&file),
        "--thread",
        "vcpu",
        "-o",
        s(&dir.join("vcpu.bpf")),
        "-q",
    ]);
    std::fs::write(
        dir.join("both.c"),
        "#include <stdio.h>\n#include \"api.h\"\n#include \"vcpu.h\"\n\
         int main(void) {\n\
         printf(\"%zu %zu\\n\", sizeof fc_api / sizeof fc_api[0], sizeof fc_vcpu / sizeof fc_vcpu[0]);\n\
         return 0;\n}\n",
    )
    .unwrap();
    let printed = run_c(&dir, "both");
    let len = |f: &str| std::fs::metadata(dir.join(f)).unwrap().len() / 8;
    assert_eq!(
        String::from_utf8(printed).unwrap().trim(),
        format!("{} {}", len("api.bpf"), len("vcpu.bpf"))
    );
    assert_ne!(
        len("api.bpf"),
        len("vcpu.bpf"),
        "the threads' filters differ"
    );

    let all = dir.join("all.h");
    let (code, _, stderr) = secopt(&["optimize", s(&file), "-o", s(&all)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("pick a thread with --thread"), "{stderr}");
    assert!(!all.exists());
    let (code, _, stderr) = secopt(&[
        "optimize",
        s(&file),
        "--thread",
        "vcpu",
        "--output-format",
        "firecracker",
        "-o",
        s(&dir.join("v.bin")),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("leave out --thread vcpu"), "{stderr}");
}

/// Assembly has no byte order, so a listing of a big-endian machine's filter (s390x: every arch
/// it checks is big-endian) comes out in that machine's order, as the raw input it was made
/// from did (found by an audit: it came back little-endian, with no way to ask for big).
/// `ld [arch]` is opcode 0x0020 (BPF_LD|BPF_W|BPF_ABS, linux/filter.h): big-endian bytes
/// start 00 20.
#[test]
fn a_big_endian_filter_as_assembly_stays_big_endian() {
    let profile = common::libseccomp_profiles::profile_path("oci/docker-default.json");
    let dir = temp_dir().join("be-asm");
    std::fs::create_dir_all(&dir).unwrap();
    let raw = dir.join("s390x.bpf");
    secopt_ok(&[
        "compile",
        s(&profile),
        "--arch",
        "s390x",
        "--no-optimize",
        "-o",
        s(&raw),
        "-q",
    ]);
    let listing = dir.join("s390x.s");
    secopt_ok(&[
        "optimize",
        "--input-format",
        "raw-be",
        s(&raw),
        "-o",
        s(&listing),
        "-q",
    ]);
    for out in ["again.bpf", "again.b64"] {
        let path = dir.join(out);
        secopt_ok(&["optimize", s(&listing), "-o", s(&path), "-q"]);
        let mut bytes = std::fs::read(&path).unwrap();
        if out.ends_with("b64") {
            let decoded = Command::new("base64")
                .arg("-d")
                .arg(&path)
                .output()
                .unwrap();
            bytes = decoded.stdout;
        }
        assert_eq!(bytes[..2], [0x00, 0x20], "{out}");
        let program = Program::from_raw_in(&bytes, secopt::arch::Endian::Big).expect("big-endian");
        assert!(validate(&program).is_ok(), "{out}");
    }
    // `asm` writes what it is told (little-endian unless --big-endian), but says when the
    // listing is a big-endian machine's: s390x's kernel refuses those bytes (audit P8).
    let le = dir.join("asm-le.bpf");
    let (code, _, stderr) = secopt(&["asm", s(&listing), "-o", s(&le)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("a big-endian machine's filter") && stderr.contains("add --big-endian"),
        "{stderr}"
    );
    let be = dir.join("asm-be.bpf");
    let (code, _, stderr) = secopt(&["asm", s(&listing), "--big-endian", "-o", s(&be)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(std::fs::read(&be).unwrap()[..2], [0x00, 0x20]);
}

/// The header's sentence about what became of the input follows the lengths: a program
/// nothing can shorten (one `ret`) comes back as it went in and says so; libseccomp's
/// Docker chain comes back shorter, "optimized from" its own length (counted here from the
/// file's bytes, 8 per instruction).
#[test]
fn the_header_says_what_became_of_the_input() {
    let dir = temp_dir().join("outcome");
    std::fs::create_dir_all(&dir).unwrap();
    let one = temp_file("one.s", b"ret ALLOW\n");
    let (code, _, stderr) = secopt(&["optimize", s(&one), "-o", s(&dir.join("one.s"))]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(dir.join("one.s")).unwrap();
    assert!(
        text.contains("; The input unchanged (no better equivalent program was found and proved)."),
        "{text}"
    );
    assert!(!text.contains("from 1 instructions"), "{text}");
    assert!(
        stderr.contains("1 instructions, the input unchanged"),
        "{stderr}"
    );

    let docker = temp_file("outcome-docker.bpf", &docker_default(1).program.to_raw());
    let input_len = std::fs::read(&docker).unwrap().len() / 8;
    secopt_ok(&["optimize", s(&docker), "-o", s(&dir.join("docker.h")), "-q"]);
    let text = std::fs::read_to_string(dir.join("docker.h")).unwrap();
    assert!(
        text.contains(&format!(
            " * Optimized from {input_len} instructions; proved equal to the input."
        )),
        "{text}"
    );
}

/// The header and JSON document name the arch tokens the output compares `arch` with: one
/// secopt has no table for as hex (it was dropped, leaving "none"), and x32 only where the
/// program tells x32's calls (`nr` with bit 30 set) from x86_64's, which share its token.
/// libseccomp's three-ABI Docker filter tells them apart (libseccomp's own x32 handling);
/// a program comparing only x86_64's token does not.
#[test]
fn the_header_names_the_arch_tokens_the_program_compares() {
    let dir = temp_dir().join("arch-tokens");
    std::fs::create_dir_all(&dir).unwrap();
    let described = |name: &str, src: &[u8]| -> (String, Value) {
        let inp = temp_file(name, src);
        let h = dir.join(format!("{name}.h"));
        let json = dir.join(format!("{name}.json"));
        secopt_ok(&["optimize", s(&inp), "-o", s(&h), "-q"]);
        secopt_ok(&["optimize", s(&inp), "-o", s(&json), "-q"]);
        let text = std::fs::read_to_string(&h).unwrap();
        let line = text
            .lines()
            .find(|l| l.contains("arches checked:"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string();
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (line, doc["arches"].clone())
    };
    let x86_64_only = b"ld [arch]\njeq #0xc000003e, ok\nret KILL_PROCESS\n\
                        ok: ld [nr]\njeq #39, allow\nret ERRNO(1)\nallow: ret ALLOW\n";
    let (line, arches) = described("x86_64-only.s", x86_64_only);
    assert!(line.ends_with("arches checked: x86_64."), "{line}");
    assert_eq!(
        arches,
        serde_json::json!([{"arch": "x86_64", "token": 0xc000_003e_u32}])
    );

    let with_x32 = b"ld [arch]\njeq #0xc000003e, ok\nret KILL_PROCESS\n\
                     ok: ld [nr]\njge #0x40000000, kill\njeq #39, allow\nret ERRNO(1)\n\
                     allow: ret ALLOW\nkill: ret KILL_PROCESS\n";
    let (line, arches) = described("with-x32.s", with_x32);
    assert!(line.ends_with("arches checked: x86_64 x32."), "{line}");
    assert_eq!(arches.as_array().unwrap().len(), 2, "{arches}");
    assert_eq!(arches[1]["arch"], "x32");

    let unknown = b"ld [arch]\njeq #0x12345678, a\nret KILL_PROCESS\na: ret ALLOW\n";
    let (line, arches) = described("unknown.s", unknown);
    assert!(line.ends_with("arches checked: 0x12345678."), "{line}");
    assert_eq!(
        arches,
        serde_json::json!([{"arch": null, "token": 0x1234_5678_u32}])
    );

    let (line, _) = described("docker.bpf", &docker_default(1).program.to_raw());
    assert!(line.ends_with("arches checked: x86_64 x86 x32."), "{line}");
}

/// A stack's header is named after every filter in it (`a.s b.s` → `a_b`), so it and the
/// header of its first filter alone can be included together: both were `a`, under one
/// include guard, and the program silently got the first one's array (found by an audit).
/// cc builds a program including both; each array's length is the raw output's.
#[test]
fn a_stacks_header_is_not_named_after_its_first_filter_alone() {
    let dir = temp_dir().join("stack-header");
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.s");
    let b = dir.join("b.s");
    std::fs::write(&a, "ld [nr]\njeq #39, ok\nret ERRNO(1)\nok: ret ALLOW\n").unwrap();
    std::fs::write(&b, "ld [nr]\njeq #40, no\nret ALLOW\nno: ret ERRNO(2)\n").unwrap();
    secopt_ok(&["optimize", s(&a), "-o", s(&dir.join("a.h")), "-q"]);
    secopt_ok(&["optimize", s(&a), s(&b), "-o", s(&dir.join("ab.h")), "-q"]);
    secopt_ok(&["optimize", s(&a), "-o", s(&dir.join("a.bpf")), "-q"]);
    secopt_ok(&["optimize", s(&a), s(&b), "-o", s(&dir.join("ab.bpf")), "-q"]);
    std::fs::write(
        dir.join("both.c"),
        "#include <stdio.h>\n#include \"a.h\"\n#include \"ab.h\"\n\
         int main(void) { printf(\"%d %d\\n\", A_LEN, A_B_LEN); return a[0].code != a_b[0].code; }\n",
    )
    .unwrap();
    let printed = String::from_utf8(run_c(&dir, "both")).unwrap();
    let len = |f: &str| std::fs::read(dir.join(f)).unwrap().len() / 8;
    assert_eq!(printed, format!("{} {}\n", len("a.bpf"), len("ab.bpf")));
}

/// `--favor size` reads the rules, not their layout: libseccomp's linear chain and its binary
/// tree of the same random rules (`scripts/random-libseccomp-filter.c`, libseccomp itself
/// lays both out; seeds 1–8: three arches, many actions, neighbouring syscalls with different
/// actions) are optimized to the same length. Until exception chains took neighbouring single
/// values (`X s1 s2 X`), 7 of these 8 seeds differed (seed 1: 223 instructions from the linear
/// chain, whose bytecode passes kept its `jeq` run, and 231 from the tree).
#[test]
fn favor_size_gives_both_libseccomp_layouts_of_the_same_rules_one_length() {
    let dir = temp_dir().join("random-libseccomp");
    std::fs::create_dir_all(&dir).unwrap();
    let generator = dir.join("gen");
    let source =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/random-libseccomp-filter.c");
    common::cc::build_c_with(&source, &generator, &["-O2"], &["-lseccomp"]);
    for seed in 1..=8 {
        let lengths: Vec<usize> = [1, 2]
            .iter()
            .map(|layout| {
                let input = dir.join(format!("s{seed}-{layout}.bpf"));
                let made = Command::new(&generator)
                    .arg(seed.to_string())
                    .arg(&input)
                    .arg(layout.to_string())
                    .status()
                    .unwrap();
                assert!(made.success(), "seed {seed}");
                let out = dir.join(format!("s{seed}-{layout}-size.bpf"));
                let (code, _, stderr) =
                    secopt(&["optimize", s(&input), "--favor", "size", "-o", s(&out)]);
                assert_eq!(code, 0, "{stderr}");
                assert!(stderr.contains("proved equal"), "{stderr}");
                std::fs::read(&out).unwrap().len() / 8
            })
            .collect();
        assert_eq!(lengths[0], lengths[1], "seed {seed}: linear vs tree");
    }
}
