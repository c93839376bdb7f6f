//! Bad input to the `secopt` binary: a clear message naming the file and the place, exit
//! code 2, no panic, and no output file left behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn secopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .expect("run secopt")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("secopt-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

/// Encodes instructions as raw little-endian `struct sock_filter`, by hand.
fn raw(insns: &[(u16, u8, u8, u32)]) -> Vec<u8> {
    let mut v = Vec::new();
    for &(code, jt, jf, k) in insns {
        v.extend_from_slice(&code.to_le_bytes());
        v.push(jt);
        v.push(jf);
        v.extend_from_slice(&k.to_le_bytes());
    }
    v
}

fn assert_bad_input(out: &Output, must_contain: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    for s in must_contain {
        assert!(stderr.contains(s), "stderr lacks {s:?}: {stderr}");
    }
    assert!(out.stdout.is_empty(), "no partial output on stdout");
}

const RET_ALLOW: (u16, u8, u8, u32) = (0x06, 0, 0, 0x7fff_0000);

#[test]
fn raw_inputs_the_kernel_would_reject() {
    let d = tmpdir("raw");
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        (
            "truncated.bpf",
            vec![0x06, 0, 0, 0, 0, 0, 0x7f, 0x7f, 0x06, 0],
            vec!["truncated.bpf", "10 bytes", "multiple of 8"],
        ),
        ("empty.bpf", vec![], vec!["empty.bpf", "empty"]),
        (
            "huge.bpf",
            raw(&vec![RET_ALLOW; 4097]),
            vec!["huge.bpf", "4097", "4096"],
        ),
        // 0x0e is RET X: not a classic opcode the kernel accepts.
        (
            "opcode.bpf",
            raw(&[(0x20, 0, 0, 0), (0x0e, 0, 0, 0), RET_ALLOW]),
            vec!["opcode.bpf", "instruction 1"],
        ),
        // JEQ at 0 with jf=5 in a 3-instruction program.
        (
            "jump.bpf",
            raw(&[(0x15, 0, 5, 0), RET_ALLOW, RET_ALLOW]),
            vec!["jump.bpf", "instruction 0", "target 6"],
        ),
        // LD W ABS 66: beyond seccomp_data.
        (
            "load.bpf",
            raw(&[(0x20, 0, 0, 66), RET_ALLOW]),
            vec!["load.bpf", "instruction 0", "multiple of 4 below 64"],
        ),
        // Last instruction is not a return.
        (
            "noret.bpf",
            raw(&[(0x20, 0, 0, 0)]),
            vec!["noret.bpf", "RET"],
        ),
        // LD M[2] before any store.
        (
            "scratch.bpf",
            raw(&[(0x60, 0, 0, 2), RET_ALLOW]),
            vec!["scratch.bpf", "M[2]"],
        ),
    ];
    for (name, bytes, expect) in cases {
        let path = write(&d, name, &bytes);
        assert_bad_input(
            &secopt(&["analyze", "--input-format", "raw", &path]),
            &expect,
        );
        // `disasm` lists what it can decode anyway (docs/asm.md: `.insn` for opcodes seccomp
        // refuses, `+N` for jumps out of the program), with the kernel's objection and exit 1.
        let out = secopt(&["disasm", "--input-format", "raw", &path]);
        if bytes.is_empty() || bytes.len() % 8 != 0 {
            assert_bad_input(&out, &expect);
            continue;
        }
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        for s in expect
            .iter()
            .chain(&["the kernel would reject", "listed anyway"])
        {
            assert!(stderr.contains(s), "{name}: stderr lacks {s:?}: {stderr}");
        }
        assert_eq!(stdout.lines().count(), bytes.len() / 8, "{name}: {stdout}");
        match name {
            "opcode.bpf" => assert!(stdout.contains(".insn 0x0e, 0, 0, 0"), "{stdout}"),
            "jump.bpf" => assert!(stdout.contains("jeq #0, next, +5"), "{stdout}"),
            _ => {}
        }
    }
}

#[test]
fn missing_file_and_bad_usage() {
    assert_bad_input(
        &secopt(&["disasm", "/nonexistent/filter.bpf"]),
        &["/nonexistent/filter.bpf"],
    );
    assert_bad_input(&secopt(&["frobnicate"]), &[]);
    // Usage errors carry the prefix every other error has.
    let out = secopt(&["compile", "--no-such-flag"]);
    assert_bad_input(&out, &["--no-such-flag"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("secopt: error: "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_bad_input(
        &secopt(&["emu", "/nonexistent.bpf", "--nr", "read"]),
        &["/nonexistent.bpf"],
    );
    // A misspelt option of the verbs that run a command is an unknown option, not the
    // command ("`--nflags`: command not found"); after `--` anything is the command.
    let dir = tmpdir("misspelt");
    let allow = write(
        &dir,
        "allow.json",
        br#"{"defaultAction": "SCMP_ACT_ALLOW"}"#,
    );
    let workload = dir.join("w.json");
    for args in [
        vec!["exec", "-p", &allow, "--nflags", "--", "true"],
        vec!["exec", "-p", &allow, "--dry-run", "--no-flag", "--", "true"],
        vec![
            "record",
            "-o",
            workload.to_str().unwrap(),
            "--nargs",
            "--",
            "true",
        ],
    ] {
        let misspelt = args.iter().find(|a| a.starts_with("--n")).unwrap();
        assert_bad_input(
            &secopt(&args),
            &[&format!("unexpected argument '{misspelt}'")],
        );
    }
    let out = secopt(&["exec", "-p", &allow, "--", "--not-a-command"]);
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    // Without `--`, the command's own options stay its own.
    let out = secopt(&["exec", "-p", &allow, "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}

#[test]
fn malformed_assembly_reports_line_and_column_and_writes_nothing() {
    let d = tmpdir("asm");
    let src = write(
        &d,
        "bad.s",
        b"ld [arch]\n  jeq #bogus_thing, a, b\nret ALLOW\n",
    );
    let out_path = d.join("out.bpf");
    let out = secopt(&["asm", &src, "-o", out_path.to_str().unwrap()]);
    assert_bad_input(&out, &["bad.s:2:"]);
    assert!(!out_path.exists(), "no output file after a failed assembly");
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "only the source remains: {leftovers:?}");
}

/// A profile given where a filter goes is named as one, with the command that makes a filter
/// of it, instead of an assembly syntax error at `{`.
#[test]
fn a_profile_where_a_filter_goes_says_to_compile_it() {
    let oci = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let fc = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json"
    );
    for verb in [
        &["analyze"][..],
        &["disasm"],
        &["emu", "--nr", "1"],
        &["optimize"],
    ] {
        let run = |file: &str| {
            let mut args = vec![verb[0], file];
            args.extend_from_slice(&verb[1..]);
            secopt(&args)
        };
        assert_bad_input(
            &run(oci),
            &["web-server.json: this is JSON", "secopt compile"],
        );
        assert_bad_input(&run(fc), &["Firecracker seccompiler file", "--thread vcpu"]);
    }
    // JSON that does not parse is not called a profile: it is reported where it breaks.
    let dir = tmpdir("json-ish");
    let broken = write(&dir, "broken.json", b"{\"defaultAction\": ");
    let out = secopt(&["analyze", &broken]);
    assert_bad_input(&out, &["broken.json:1:1"]);
}

/// The other way round: a compiled filter given to `compile` (or `exec -p`) is named as what
/// it is, with the verb that takes it, rather than JSON's "expected value" at its first byte.
#[test]
fn a_filter_where_a_profile_goes_says_to_optimize_it() {
    let dir = tmpdir("filter-as-profile");
    let bpf = write(&dir, "allow.bpf", &raw(&[RET_ALLOW]));
    let asm = write(&dir, "allow.s", b"; hand-written\nret ALLOW\n");
    let out_h = dir.join("out.h");
    for input in [&bpf, &asm] {
        let out = secopt(&["compile", input, "-o", out_h.to_str().unwrap()]);
        assert_bad_input(
            &out,
            &[
                input,
                "this is a cBPF filter, not a profile",
                "secopt optimize",
            ],
        );
        assert!(!out_h.exists());
        let out = secopt(&["exec", "-p", input, "--", "true"]);
        assert_bad_input(&out, &["this is a cBPF filter", "--bpf"]);
    }
    // A big-endian machine's filter (s390x: `struct sock_filter` with its u16 and u32
    // big-endian), which the little-endian reading refuses.
    let be = write(&dir, "allow-be.bpf", &[0x00, 0x06, 0, 0, 0x7f, 0xff, 0, 0]);
    let out = secopt(&["compile", &be]);
    assert_bad_input(&out, &["a big-endian cBPF filter", "--input-format raw-be"]);
    // Firecracker's filter file (seccompiler-bin's output, made here by compile).
    if let Some(profile) = firecracker_profile() {
        let json = write(&dir, "fc.json", &profile);
        let file = dir.join("fc.bin");
        let made = secopt(&[
            "compile",
            &json,
            "--emit",
            "firecracker",
            "-o",
            file.to_str().unwrap(),
            "-q",
        ]);
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let out = secopt(&[
            "compile",
            file.to_str().unwrap(),
            "-o",
            out_h.to_str().unwrap(),
        ]);
        assert_bad_input(&out, &["this is a Firecracker filter file", "--thread"]);
        assert!(!out_h.exists());
        let out = secopt(&["exec", "-p", file.to_str().unwrap(), "--", "true"]);
        assert_bad_input(&out, &["--bpf", "fc.bin:THREAD"]);
    }
    // Base64 of a filter (what `compile --emit base64` writes, crun's annotation) is named
    // for the verbs that read filters, not reported as an unknown instruction 12 characters
    // long and more.
    let b64 = write(&dir, "allow.b64", b"BgAAAAAA/38=\n");
    assert_bad_input(
        &secopt(&["analyze", &b64]),
        &["allow.b64: this looks like base64", "base64 -d"],
    );
    // secopt's JSON document of a filter is named too: it is read as a filter elsewhere.
    let doc = write(
        &dir,
        "allow.json",
        br#"{"instructions": [{"code": 6, "jt": 0, "jf": 0, "k": 2147418112}]}"#,
    );
    assert_bad_input(
        &secopt(&["compile", &doc]),
        &[
            "this is secopt's JSON document of a filter",
            "secopt optimize",
        ],
    );
    // Text that is neither JSON nor assembly keeps the JSON parser's place.
    let text = write(&dir, "notes.txt", b"hello\n");
    assert_bad_input(
        &secopt(&["compile", &text]),
        &["notes.txt: invalid JSON at line 1, column 1"],
    );
}

/// Stdout that cannot be written (`/dev/full`: every write fails with ENOSPC) is an output
/// failure like any other: `<stdout>: cannot write`, exit code 2, no panic backtrace. The
/// reports are printed line by line, JSON documents in one piece, and clap prints help.
#[test]
fn a_stdout_that_cannot_be_written_is_an_error_not_a_panic() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("SKIP: no /dev/full");
        return;
    }
    let dir = tmpdir("stdout-full");
    let filter = write(&dir, "allow.bpf", &raw(&[(0x06, 0, 0, 0x7fff_0000)]));
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let out = dir.join("web.bpf");
    let out = out.to_str().unwrap();
    for args in [
        &["analyze", &filter][..],
        &["analyze", &filter, "--format", "json"],
        &["emu", &filter, "--nr", "0"],
        &["disasm", &filter],
        &["compile", example, "-o", out, "--report"],
        &["--help"],
    ] {
        let run = Command::new(env!("CARGO_BIN_EXE_secopt"))
            .args(args)
            .stdout(std::fs::File::create(full).unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("<stdout>: cannot write") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}

/// Messages that say what is wrong rather than where a parser stopped: a byte-order mark, a
/// `FILE:THREAD` whose file is no Firecracker filter file, an empty name in a `--bpf` stack;
/// and `emu` names the ABI the kernel sees (`--arch x32` with a number lacking bit 30 is an
/// x86_64 call).
#[test]
fn messages_say_what_is_wrong() {
    let dir = tmpdir("messages");
    let example = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/web-server.json"
    ))
    .unwrap();
    let bom = write(
        &dir,
        "bom.json",
        &[b"\xEF\xBB\xBF".as_slice(), &example].concat(),
    );
    let out = dir.join("bom.bpf");
    assert_bad_input(
        &secopt(&["compile", &bom, "-o", out.to_str().unwrap()]),
        &["bom.json", "line 1, column 1", "byte-order mark"],
    );
    assert!(!out.exists());

    let filter = write(&dir, "allow.bpf", &raw(&[(0x06, 0, 0, 0x7fff_0000)]));
    assert_bad_input(
        &secopt(&["analyze", &format!("{filter}:vcpu")]),
        &["allow.bpf:vcpu", "not a Firecracker filter file"],
    );
    assert_bad_input(
        &secopt(&["bench", "--bpf", &format!("a={filter}+"), "--rounds", "1"]),
        &["--bpf", "a file name is empty"],
    );

    // A file that exists where no file can be made: the output is written beside it and
    // renamed over it, and it is that which fails (the OS alone says "No such file").
    assert_bad_input(
        &secopt(&["disasm", &filter, "-o", "/proc/self/status"]),
        &[
            "/proc/self/status: cannot write: cannot create a file in /proc/",
            "to replace it with",
        ],
    );

    // Assembly with a Latin-1 byte in a comment is not UTF-8, so not taken for text: the
    // verbs that also read raw filters say where the text broke, not only the odd length.
    let latin1 = write(&dir, "latin1.s", b"ld [nr]\n; caf\xe9\nret ALLOW\n");
    let l_out = dir.join("l.out");
    for args in [
        vec!["analyze", &latin1],
        vec!["optimize", &latin1, "-o", l_out.to_str().unwrap()],
    ] {
        assert_bad_input(
            &secopt(&args),
            &[
                "latin1.s",
                "not a multiple of 8",
                "it reads as text up to byte 13 (line 2), which is not UTF-8",
            ],
        );
    }

    let run = secopt(&["emu", &filter, "--arch", "x32", "--nr", "0"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.starts_with("seccomp_data: arch=0xc000003e (x86_64) nr=0 (read)"),
        "{stdout}"
    );
    let run = secopt(&["emu", &filter, "--arch", "x32", "--nr", "read"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.starts_with("seccomp_data: arch=0xc000003e (x32) nr=1073741824 (read)"),
        "{stdout}"
    );
}

/// Time limits are checked where they are parsed: a limit no `Duration` holds (`1e300`
/// seconds overflowed it and panicked `verify` before), a negative one, or no number at all.
/// The self-check's budget flags say nothing beside `--no-verify` (no self-check to budget).
#[test]
fn time_limits_and_budgets_that_cannot_be_used_are_refused() {
    let d = tmpdir("limits");
    let f = write(&d, "allow.s", b"ret ALLOW\n");
    let out = d.join("out.bpf");
    let optimize = |flags: &[&str]| {
        let mut args = vec!["optimize", &f, "-o", out.to_str().unwrap()];
        args.extend_from_slice(flags);
        secopt(&args)
    };
    for value in ["1e300", "inf", "-1", "NaN", "soon"] {
        assert_bad_input(
            &secopt(&["verify", &f, &f, &format!("--timeout={value}")]),
            &["--timeout", value],
        );
        assert_bad_input(
            &optimize(&[&format!("--self-check-timeout={value}")]),
            &["--self-check-timeout", value],
        );
    }
    assert_bad_input(
        &optimize(&["--self-check-max-steps", "0"]),
        &["--self-check-max-steps", "0"],
    );
    // The error names the flag given, not every flag of the budget.
    let both = optimize(&["--no-verify", "--self-check-max-nodes", "100"]);
    assert_bad_input(&both, &["--no-verify", "--self-check-max-nodes"]);
    let said = String::from_utf8_lossy(&both.stderr);
    assert!(!said.contains("--self-check-timeout"), "{said}");
    let profile = write(&d, "p.json", br#"{"defaultAction": "SCMP_ACT_ALLOW"}"#);
    let plain = secopt(&[
        "compile",
        &profile,
        "-o",
        out.to_str().unwrap(),
        "--no-optimize",
        "--self-check-timeout",
        "5",
    ]);
    assert_bad_input(&plain, &["--no-optimize", "--self-check-timeout"]);
    let said = String::from_utf8_lossy(&plain.stderr);
    assert!(!said.contains("--self-check-max-nodes"), "{said}");
    assert!(!out.exists(), "nothing written");
    // The limits that hold: 0 is no limit, and fractions are seconds.
    for value in ["0", "0.5", "1e6"] {
        let ok = secopt(&["verify", &f, &f, "--timeout", value]);
        assert_eq!(ok.status.code(), Some(0), "{value}: {:?}", ok);
    }
}

/// Firecracker's own x86_64 profile from the corpus beside the checkout (`None`, said, when
/// it is not there).
fn firecracker_profile() -> Option<Vec<u8>> {
    let fc = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json");
    let text = std::fs::read(fc).ok();
    if text.is_none() {
        eprintln!("SKIPPED: no ../shared/profiles");
    }
    text
}

/// An output that is one of the command's own input files (by its name, through a link, as a
/// member of a stack, a workload, or a `{thread}` pattern that expands to it) is refused
/// before it is written: the file read stays as it was, byte for byte. (Found by an audit:
/// `asm in.s -o in.s` replaced the source with raw bytes, `compile … --weights w.json -o
/// w.json` the workload with a filter.)
#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let d = tmpdir("in-place");
    let filter = raw(&[
        (0x20, 0, 0, 0),
        (0x15, 0, 1, 39),
        RET_ALLOW,
        (0x06, 0, 0, 0),
    ]);
    let f = write(&d, "f.bpf", &filter);
    let g = write(&d, "g.bpf", &filter);
    let asm = write(&d, "f.s", b"ld [nr]\nret ALLOW\n");
    let weights = write(&d, "w.json", br#"{"read": 5, "write": 3}"#);
    let link = d.join("link.bpf");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    let link = link.to_str().unwrap();
    let profile = "examples/web-server.json";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["asm", &asm, "-o", &asm], &asm),
        (vec!["disasm", &f, "-o", &f], &f),
        (vec!["optimize", &f, "-o", &f], &f),
        (vec!["optimize", &f, "-o", link], &f),
        (vec!["optimize", &f, &g, "-o", &g], &g),
        (
            vec!["compile", profile, "--weights", &weights, "-o", &weights],
            &weights,
        ),
        (
            vec!["optimize", &f, "--weights", &weights, "-o", &weights],
            &weights,
        ),
    ];
    for (args, kept) in cases {
        let before = std::fs::read(kept).unwrap();
        let out = secopt(&args);
        assert_bad_input(&out, &["an input of this command", "choose another file"]);
        assert_eq!(std::fs::read(kept).unwrap(), before, "{args:?}");
    }
    // The file redirected to stdin is an input too (a red-team audit: `asm - -o f.s < f.s`
    // replaced the source with raw bytes).
    let before = std::fs::read(&asm).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(["asm", "-", "-o", &asm])
        .stdin(std::fs::File::open(&asm).unwrap())
        .output()
        .expect("run secopt");
    assert_bad_input(&out, &["that is <stdin>, an input of this command"]);
    assert_eq!(std::fs::read(&asm).unwrap(), before);
    // A pattern that expands to the profile's own name: refused before any thread is written.
    let Some(text) = firecracker_profile() else {
        return;
    };
    let vcpu = write(&d, "vcpu.json", &text);
    let pattern = d.join("{thread}.json");
    let out = secopt(&[
        "compile",
        &vcpu,
        "-o",
        pattern.to_str().unwrap(),
        "--emit",
        "raw",
    ]);
    assert_bad_input(
        &out,
        &[
            "vcpu.json",
            "an input of this command",
            "nothing was written",
        ],
    );
    assert_eq!(std::fs::read(&vcpu).unwrap(), text);
    for thread in ["api", "vmm"] {
        assert!(!d.join(format!("{thread}.json")).exists(), "{thread}");
    }
}

/// A Firecracker profile's thread names become file names under `-o DIR/` and in a
/// `{thread}` pattern; a name that would leave the directory (`../x`), an absolute one, an
/// empty one or `..` is refused and nothing is written anywhere. (Found by an audit: a thread
/// named `../escaped` wrote `DIR/../escaped.bpf`.)
#[test]
fn a_thread_name_cannot_write_outside_the_output_directory() {
    let Some(text) = firecracker_profile() else {
        return;
    };
    let text = String::from_utf8(text).unwrap();
    let d = tmpdir("thread-names");
    let out_dir = d.join("out");
    std::fs::create_dir(&out_dir).unwrap();
    for name in ["../escaped", "/tmp/secopt-abs", "", "..", "a\u{1b}[31m"] {
        let renamed = text.replacen("\"vmm\"", &serde_json::to_string(name).unwrap(), 1);
        assert_ne!(renamed, text);
        let profile = write(&d, "fc.json", renamed.as_bytes());
        for target in [
            format!("{}/", out_dir.display()),
            format!("{}/fc-{{thread}}.bpf", out_dir.display()),
        ] {
            let out = secopt(&["compile", &profile, "-o", &target]);
            assert_bad_input(
                &out,
                &["fc.json", "cannot name a file", "nothing was written"],
            );
            assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0, "{name:?}");
            assert!(!d.join("escaped.bpf").exists() && !d.join("fc-..bpf").exists());
        }
    }
    assert!(!Path::new("/tmp/secopt-abs.bpf").exists());
}

/// A workload's misspelt syscall gets the name it is likely a typo for, as a profile's does
/// (an audit found only the profile's had it), and the command writes nothing.
#[test]
fn a_workloads_typo_gets_the_name_it_likely_means() {
    let d = tmpdir("workload-typo");
    let weights = write(&d, "w.json", br#"{"wirte": 5, "read": 3, "zzqqxx": 1}"#);
    let out_file = d.join("o.bpf");
    let o = out_file.to_str().unwrap();
    let out = secopt(&[
        "compile",
        "examples/web-server.json",
        "--weights",
        &weights,
        "-o",
        o,
    ]);
    assert_bad_input(
        &out,
        &[
            "w.json: unknown syscalls: wirte",
            "(`wirte` a typo for `write`?)",
            "--skip-unknown",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("`zzqqxx` a typo"), "{stderr}");
    assert!(!out_file.exists());
}

/// Names read from an input reach stderr with their control characters escaped: a workload
/// key or a profile's syscall name holding `ESC [31m` cannot recolour or move the cursor of
/// the terminal that shows the message (found by an audit: the bytes went out raw).
#[test]
fn control_characters_from_an_input_are_escaped_in_messages() {
    let d = tmpdir("control");
    let weights = write(&d, "w.json", br#"{"re\u001b[31mad": 5, "write": 3}"#);
    let profile = "examples/web-server.json";
    let out_file = d.join("o.bpf");
    let o = out_file.to_str().unwrap();
    let out = secopt(&["compile", profile, "--weights", &weights, "-o", o]);
    assert_bad_input(&out, &["unknown syscalls: re\\u{1b}[31mad"]);
    assert!(
        !out.stderr.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = secopt(&[
        "compile",
        profile,
        "--weights",
        &weights,
        "--skip-unknown",
        "-o",
        o,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("skipped re\\u{1b}[31mad"), "{stderr}");
    assert!(!out.stderr.contains(&0x1b), "{stderr:?}");

    let named = write(
        &d,
        "p.json",
        br#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
             {"names": ["read", "fr\u001b]0;title\u0007ob"], "action": "SCMP_ACT_ALLOW"}]}"#,
    );
    let out = secopt(&["compile", &named, "--arch", "x86_64", "-o", o]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("fr\\u{1b}]0;title\\u{7}ob"), "{stderr}");
    assert!(
        !out.stderr.iter().any(|&b| b == 0x1b || b == 0x07),
        "{stderr:?}"
    );
    // A right-to-left override or a zero-width space is no control character, but it makes
    // the name show as another one (or reorders the rest of the line): escaped too.
    let spoofed = write(
        &d,
        "spoofed.json",
        "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [
             {\"names\": [\"read\", \"daer\u{202e}\", \"exe\u{200b}cve\"], \"action\": \"SCMP_ACT_ALLOW\"}]}"
            .as_bytes(),
    );
    let out = secopt(&["compile", &spoofed, "--arch", "x86_64", "-o", o]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("daer\\u{202e}"), "{stderr}");
    assert!(stderr.contains("exe\\u{200b}cve"), "{stderr}");
    assert!(
        !stderr.contains('\u{202e}') && !stderr.contains('\u{200b}'),
        "{stderr}"
    );
    let out = secopt(&["compile", &spoofed, "--arch", "x86_64", "--strict", "-o", o]);
    assert_bad_input(&out, &["daer\\u{202e}", "exe\\u{200b}cve"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains('\u{202e}') && !stderr.contains('\u{200b}'),
        "{stderr}"
    );
    let out = secopt(&["compile", &named, "--arch", "x86_64", "--strict", "-o", o]);
    assert_bad_input(&out, &["fr\\u{1b}]0;title\\u{7}ob"]);
    assert!(!out.stderr.iter().any(|&b| b == 0x1b || b == 0x07));
    // With another warning beside it, --strict lists the name among the warnings: escaped too.
    let mixed = write(
        &d,
        "mixed.json",
        br#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
             {"names": ["read", "fr\u001b]0;title\u0007ob"], "action": "SCMP_ACT_ALLOW",
              "argz": []}]}"#,
    );
    let out = secopt(&["compile", &mixed, "--arch", "x86_64", "--strict", "-o", o]);
    assert_bad_input(&out, &["argz", "fr\\u{1b}]0;title\\u{7}ob"]);
    assert!(!out.stderr.iter().any(|&b| b == 0x1b || b == 0x07));
}

/// Options that cannot mean what they say are refused, not taken silently (found by an
/// audit): an argument given two values, a `{}` pattern with `dump --join` (one file), and
/// a bootstrap of no resamples, whose "95% intervals" would be single points.
#[test]
fn options_that_cannot_mean_what_they_say_are_refused() {
    let d = tmpdir("options");
    let f = write(&d, "f.bpf", &raw(&[RET_ALLOW]));
    let out = secopt(&[
        "emu", &f, "--arch", "x86_64", "--nr", "read", "--arg", "0=1", "--arg", "0=2",
    ]);
    assert_bad_input(&out, &["--arg 0= is given twice"]);
    let pattern = d.join("f{}.bpf");
    let out = secopt(&["dump", "1", "--join", "-o", pattern.to_str().unwrap()]);
    assert_bad_input(&out, &["a {} pattern writes one file per filter"]);
    assert!(!d.join("f{}.bpf").exists());
    for bootstrap in ["0", "99"] {
        let out = secopt(&["bench", "--probe", "getpid", "--bootstrap", bootstrap]);
        assert_bad_input(&out, &["--bootstrap"]);
    }
    // --format is --dry-run's: without it, exec would run the command and print no JSON.
    let marker = d.join("ran");
    let out = secopt(&[
        "exec",
        "--bpf",
        &f,
        "--format",
        "json",
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    assert_bad_input(&out, &["--dry-run"]);
    assert!(!marker.exists());
    // A profile no variant is made from.
    let profile = write(&d, "p.json", br#"{"defaultAction": "SCMP_ACT_ALLOW"}"#);
    let out = secopt(&[
        "bench",
        "-p",
        &profile,
        "--no-secopt",
        "--no-libseccomp",
        "--probe",
        "getpid",
    ]);
    assert_bad_input(&out, &["no variant is made from the profile"]);
}

/// `exec -p` takes an OCI profile; given Firecracker's, it says what the file is and how to
/// run under one of its threads' filters, not that `$.defaultAction` is missing (found by an
/// audit).
#[test]
fn exec_given_a_firecracker_profile_says_what_to_do_instead() {
    let Some(text) = firecracker_profile() else {
        return;
    };
    let d = tmpdir("exec-fc");
    let fc = write(&d, "fc.json", &text);
    let marker = d.join("ran");
    let out = secopt(&["exec", "-p", &fc, "--", "touch", marker.to_str().unwrap()]);
    assert_bad_input(
        &out,
        &[
            "fc.json: a Firecracker profile",
            "--thread vcpu",
            "secopt exec --bpf",
        ],
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("defaultAction"));
    assert!(!marker.exists());
}

/// A `--name` C, Rust or Go cannot declare as given is refused, with the name that would
/// work, by `compile` and `optimize` alike; nothing is written. (It was rewritten silently:
/// `my name` declared `my_name`, `linux` — a macro GCC defines — `filter_linux`, and the
/// program including the header then found no array by the name it asked for.) A usable
/// name is declared as given, as the C compiler sees it.
#[test]
fn a_name_the_array_cannot_take_is_refused_with_one_it_can() {
    let d = tmpdir("array-name");
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let filter = write(
        &d,
        "f.s",
        b"ld [nr]\njeq #39, a\nret ERRNO(1)\na: ret ALLOW\n",
    );
    let header = d.join("out.h");
    let header = header.to_str().unwrap();
    for (name, usable) in [
        ("my name", "my_name"),
        ("linux", "filter_linux"),
        ("2fast", "filter_2fast"),
        ("_x", "filter_x"),
        ("int", "filter_int"),
    ] {
        for input in [profile, filter.as_str()] {
            let verb = if input == profile {
                "compile"
            } else {
                "optimize"
            };
            let out = secopt(&[verb, input, "--name", name, "-o", header]);
            assert_bad_input(
                &out,
                &["cannot name the array", &format!("`{usable}` is one")],
            );
            assert!(!Path::new(header).exists(), "{verb} --name {name:?}");
        }
    }
    let out = secopt(&["optimize", &filter, "--name", "web_1", "-o", header, "-q"]);
    assert_eq!(out.status.code(), Some(0));
    std::fs::write(
        d.join("main.c"),
        "#include \"out.h\"\nint main(void) { return web_1[0].code == 0x20 ? 0 : 1; }\n",
    )
    .unwrap();
    // Builds and runs it: the array is declared as `web_1`, and it exits 0.
    common::cc::run_c(&d, "main");
}

/// A JSON document of a filter (docs/json.md) is read by its instructions, and only when
/// what it says holds together: an instruction edited without its `base64` (or `length`) is
/// refused, not read one way or the other, and a field out of `struct sock_filter`'s range,
/// or one it does not have, is named with its JSON path and line.
#[test]
fn a_filter_document_that_does_not_hold_together_is_refused() {
    let d = tmpdir("filter-doc");
    // `ld [nr]; jeq #39 …`: the document as compile/optimize write it, made by hand; its
    // base64 is the raw little-endian bytes of the same four instructions.
    let raw_bytes = raw(&[
        (0x20, 0, 0, 0),
        (0x15, 1, 0, 39),
        (0x06, 0, 0, 0x0005_0001),
        RET_ALLOW,
    ]);
    let b64 = String::from_utf8(
        Command::new("base64")
            .arg("-w0")
            .arg(write(&d, "f.bpf", &raw_bytes))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let insns = r#"[{"code":32,"jt":0,"jf":0,"k":0},{"code":21,"jt":1,"jf":0,"k":39},
        {"code":6,"jt":0,"jf":0,"k":327681},{"code":6,"jt":0,"jf":0,"k":2147418112}]"#;
    let good = write(
        &d,
        "good.json",
        format!(r#"{{"byte_order":"little","length":4,"instructions":{insns},"base64":"{b64}"}}"#)
            .as_bytes(),
    );
    let f = d.join("f.bpf");
    let out = secopt(&["verify", &good, f.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "edited.json",
            format!(
                r#"{{"instructions":{},"base64":"{b64}"}}"#,
                insns.replace("39}", "40}")
            ),
            vec![
                "edited.json",
                "`instructions` and its `base64` disagree",
                "remove `base64`",
            ],
        ),
        (
            "length.json",
            format!(r#"{{"length":5,"instructions":{insns}}}"#),
            vec!["length.json", "`length` disagree"],
        ),
        (
            "jt.json",
            format!(
                r#"{{"instructions":{}}}"#,
                insns.replace(r#""jt":1"#, r#""jt":300"#)
            ),
            vec![
                "jt.json",
                "JSON document of a filter: $.instructions[1].jt:",
                "300",
                "line 1",
            ],
        ),
        (
            "field.json",
            format!(
                r#"{{"instructions":{}}}"#,
                insns.replace(r#""k":39"#, r#""k":39,"x":1"#)
            ),
            vec!["field.json", "$.instructions[1].x: unknown field `x`"],
        ),
        (
            "invalid.json",
            r#"{"instructions":[{"code":153,"jt":0,"jf":0,"k":0}]}"#.to_string(),
            vec!["invalid.json", "the kernel would reject", "instruction 0"],
        ),
    ];
    for (name, text, expect) in cases {
        let path = write(&d, name, text.as_bytes());
        let outfile = d.join(format!("{name}.bpf"));
        assert_bad_input(
            &secopt(&["optimize", &path, "-o", outfile.to_str().unwrap()]),
            &expect,
        );
        assert!(!outfile.exists(), "{name}");
        assert_bad_input(&secopt(&["verify", &path, &good]), &expect);
    }
    // disasm's document reads back too, and its `index` must be each instruction's place.
    let listed = secopt(&["disasm", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(listed.status.code(), Some(0));
    let listed_path = write(&d, "listed.json", &listed.stdout);
    let out = secopt(&["verify", &listed_path, f.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut doc: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    doc["instructions"][2]["index"] = 7.into();
    let misplaced = write(&d, "misplaced.json", doc.to_string().as_bytes());
    assert_bad_input(
        &secopt(&["analyze", &misplaced]),
        &["misplaced.json", "instruction 2", "`index` 7"],
    );
    // Without its base64, the edited instruction is read: jeq #40 now, a different filter.
    let edited = write(
        &d,
        "edited-only.json",
        format!(r#"{{"instructions":{}}}"#, insns.replace("39}", "40}")).as_bytes(),
    );
    assert_eq!(secopt(&["verify", &edited, &good]).status.code(), Some(1));
}

/// Stdin can be read once: two inputs that would both read it (`-`, or `-:THREAD`, a thread
/// of the Firecracker file on stdin) are refused before either is read, and nothing written.
#[test]
fn two_inputs_on_stdin_are_refused() {
    let d = tmpdir("two-stdin");
    let out = d.join("out.bpf");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["compile", "-", "--weights", "-", "-o", o],
            "cannot both be stdin",
        ),
        (
            &["optimize", "-", "--weights", "-", "-o", o],
            "cannot both come from stdin",
        ),
        (
            &["optimize", "--weights", "-", "-o", o, "--", "-:vcpu"],
            "cannot both come from stdin",
        ),
        (
            &["analyze", "-", "--workload", "-"],
            "cannot both come from stdin",
        ),
        (
            &["analyze", "--workload", "-", "--", "-:api"],
            "cannot both come from stdin",
        ),
        (
            &["verify", "--", "-:api", "-:vcpu"],
            "both inputs read stdin",
        ),
        (
            &["optimize", "-o", o, "--", "-", "-:vcpu"],
            "can be only one of the inputs",
        ),
    ];
    for (args, message) in cases {
        assert_bad_input(&secopt(args), &[message]);
        assert!(!out.exists(), "{args:?}");
    }
}

/// A process id is a positive number as /proc names processes (`pid_t` is a signed 32-bit
/// int): `dump` and `record --pid` say so for 0, a negative number (once parsed as a flag) and
/// one past 2^31 - 1 (once answered with `pid_t`'s signed range), and write nothing.
#[test]
fn process_ids_are_positive_numbers() {
    let dir = tmpdir("pids");
    let out = dir.join("out.json");
    let out = out.to_str().unwrap();
    for pid in ["0", "-5", "99999999999", "12ab"] {
        for args in [
            vec!["dump", pid, "-o", out],
            vec!["record", "--pid", pid, "-o", out],
        ] {
            let o = secopt(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains("is not a process id"), "{args:?}: {err}");
            assert!(!err.contains("-2147483648"), "{args:?}: {err}");
            assert!(!Path::new(out).exists(), "{args:?}");
        }
    }
}
