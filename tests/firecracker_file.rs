//! Firecracker's compiled filter file (`firecracker --seccomp-filter FILE`), read and written.
//!
//! The oracle is Firecracker's own compiler: `tests/data/firecracker/` holds what its
//! `seccompiler-bin` wrote for the corpus's two Firecracker profiles, in both encodings
//! (bitcode since 1.15, bincode before; provenance in that directory's README). Every program
//! secopt reads from those files must be the one Firecracker's compiler built (each proved
//! equal to secopt's own lowering of the same thread), writing them back must give
//! Firecracker's bytes, and what `secopt compile --emit firecracker` and `secopt optimize`
//! write must decide every thread's calls exactly as Firecracker's program does.

#[path = "data/e2e_support.rs"]
mod support;

use proptest::prelude::*;
use secopt::arch::Arch;
use secopt::bpf::thread_filters::{decode, encode, Encoding, ThreadFiltersError};
use secopt::bpf::{validate, Program};
use secopt::compile::{compile_firecracker, CompileOptions, CompiledFilter};
use secopt::policy::firecracker::FirecrackerOptions;
use secopt::policy::Dialect;
use secopt::verify::{equivalent, Verdict, VerifyOptions};
use std::path::{Path, PathBuf};
use support::*;

const PROFILES: [&str; 2] = [
    "firecracker-x86_64-unknown-linux-musl",
    "firecracker-unimplemented",
];

fn golden(profile: &str, encoding: Encoding) -> PathBuf {
    let ext = match encoding {
        Encoding::Bitcode => "bitcode",
        Encoding::Bincode => "bincode",
    };
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/firecracker")
        .join(format!("{profile}.{ext}"))
}

fn profile_path(profile: &str) -> PathBuf {
    shared_profile(&format!("firecracker/{profile}.json"))
}

/// Firecracker's compiler's programs, by thread, from a golden file.
fn firecracker_programs(profile: &str, encoding: Encoding) -> Vec<(String, Program)> {
    let bytes = std::fs::read(golden(profile, encoding)).unwrap();
    let file = decode(&bytes).unwrap();
    assert_eq!(file.encoding, encoding, "{profile}: detected encoding");
    file.threads
        .into_iter()
        .map(|(t, p)| (t, p.expect("seccompiler writes a program for every thread")))
        .collect()
}

fn assert_equal(a: &Program, b: &Program, what: &str) {
    let verdict = equivalent(a, b, &VerifyOptions::default()).unwrap();
    assert_eq!(verdict, Verdict::Equal, "{what}");
}

#[test]
fn firecracker_s_own_files_decode_to_the_programs_its_profile_means() {
    for profile in PROFILES {
        let bytes = std::fs::read(profile_path(profile)).unwrap();
        let ours = compile_firecracker(
            &bytes,
            profile,
            &FirecrackerOptions::new(Arch::X86_64),
            &CompileOptions::default(),
        )
        .unwrap();
        for encoding in [Encoding::Bitcode, Encoding::Bincode] {
            let theirs = firecracker_programs(profile, encoding);
            let names: Vec<&str> = theirs.iter().map(|(t, _)| t.as_str()).collect();
            assert_eq!(names, ["api", "vcpu", "vmm"], "{profile} {encoding:?}");
            for ((thread, prog), (our_thread, our_filter)) in theirs.iter().zip(&ours) {
                assert_eq!(thread, our_thread);
                validate::validate(prog).unwrap();
                assert_equal(
                    prog,
                    our_filter.program(),
                    &format!("{profile} {encoding:?} thread {thread}"),
                );
            }
        }
        // Two releases of Firecracker's compiler, one libseccomp: the same programs.
        assert_eq!(
            firecracker_programs(profile, Encoding::Bitcode),
            firecracker_programs(profile, Encoding::Bincode),
            "{profile}"
        );
    }
}

#[test]
fn writing_firecracker_s_programs_back_gives_firecracker_s_bytes() {
    for profile in PROFILES {
        for encoding in [Encoding::Bitcode, Encoding::Bincode] {
            let bytes = std::fs::read(golden(profile, encoding)).unwrap();
            let file = decode(&bytes).unwrap();
            assert_eq!(
                encode(&file.threads, encoding),
                bytes,
                "{profile} {encoding:?}"
            );
        }
    }
}

#[test]
fn broken_files_are_errors_not_panics() {
    let bytes = std::fs::read(golden(PROFILES[0], Encoding::Bincode)).unwrap();
    // Cut anywhere, or a byte appended: the exact bincode layout no longer holds, and these
    // are not bitcode either.
    for cut in [1, 7, 8, 9, 100, bytes.len() - 1] {
        assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        decode(&longer),
        Err(ThreadFiltersError::Neither { .. })
    ));
    // A count far beyond the data allocates nothing and fails.
    let mut huge = bytes.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(decode(&huge).is_err());
    // No threads at all.
    assert_eq!(decode(&0u64.to_le_bytes()), Err(ThreadFiltersError::Empty));
    // A raw filter is not a filter file.
    let raw = raw_filter(&[(0x06, 0, 0, 0x7fff_0000)]);
    assert!(decode(&raw).is_err());
    // A file cut short, given to a verb: exit 2, and the message says what it looks like.
    let dir = TempDir::new("fc-cut");
    for encoding in [Encoding::Bincode, Encoding::Bitcode] {
        let bytes = std::fs::read(golden(PROFILES[0], encoding)).unwrap();
        let cut = dir.join("cut.bin");
        std::fs::write(&cut, &bytes[..500]).unwrap();
        let run = run_secopt(&["analyze".as_ref(), cut.as_os_str()]);
        assert_eq!(run.status.code(), Some(2));
        assert!(
            stderr_of(&run).contains("it begins as Firecracker's filter file"),
            "{encoding:?}: {}",
            stderr_of(&run)
        );
        // Both decodings' reasons, in the same words in debug and release builds (the
        // bitcode crate's own message differs between them: "bitcode error" in release).
        assert!(
            stderr_of(&run).contains("as bincode (Firecracker before 1.15), ")
                && stderr_of(&run).contains("as bitcode (1.15 and later), it is not a map")
                && !stderr_of(&run).contains("bitcode error"),
            "{encoding:?}: {}",
            stderr_of(&run)
        );
    }
    // The file of no threads (bincode's is eight zero bytes, also a raw `ld #0`): verbs say
    // it holds no filter either way, rather than listing or refusing the one instruction.
    for encoding in [Encoding::Bincode, Encoding::Bitcode] {
        let empty = dir.join("empty.bin");
        std::fs::write(&empty, encode(&[], encoding)).unwrap();
        for verb in ["disasm", "analyze"] {
            let run = run_secopt(&[verb.as_ref(), empty.as_os_str()]);
            assert_eq!(run.status.code(), Some(2), "{encoding:?} {verb}");
            assert!(
                stderr_of(&run).contains("it holds no thread filters"),
                "{encoding:?} {verb}: {}",
                stderr_of(&run)
            );
            assert_eq!(stdout_of(&run), "", "{encoding:?} {verb}");
        }
    }
    // A bincode file whose one thread name is not UTF-8 (and no Firecracker thread's name):
    // its count and name length still say what it is.
    let mut odd = Vec::new();
    odd.extend_from_slice(&1u64.to_le_bytes());
    odd.extend_from_slice(&4u64.to_le_bytes());
    odd.extend_from_slice(b"\xff\xfe\x80x");
    odd.extend_from_slice(&1u64.to_le_bytes());
    odd.extend_from_slice(&raw_filter(&[(0x06, 0, 0, 0x7fff_0000)]));
    let file = dir.join("odd-name.bin");
    std::fs::write(&file, &odd).unwrap();
    let run = run_secopt(&["analyze".as_ref(), file.as_os_str()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("it begins as Firecracker's filter file")
            && stderr_of(&run).contains("not UTF-8"),
        "{}",
        stderr_of(&run)
    );
}

/// The bincode layout, written out by hand from Firecracker's deserializer's configuration
/// (fixed-size little-endian integers): one thread `t` with `ret ALLOW`.
#[test]
fn the_bincode_layout_is_the_documented_one() {
    let prog = Program::from_raw(&raw_filter(&[(0x06, 0, 0, 0x7fff_0000)])).unwrap();
    let bytes = encode(&[("t".to_string(), Some(prog.clone()))], Encoding::Bincode);
    let mut expected = Vec::new();
    expected.extend_from_slice(&1u64.to_le_bytes()); // entries
    expected.extend_from_slice(&1u64.to_le_bytes()); // name length
    expected.push(b't');
    expected.extend_from_slice(&1u64.to_le_bytes()); // instructions
    expected.extend_from_slice(&[0x06, 0, 0, 0, 0, 0, 0xff, 0x7f]); // ret #0x7fff0000
    assert_eq!(bytes, expected);
    let back = decode(&bytes).unwrap();
    assert_eq!(back.threads, [("t".to_string(), Some(prog))]);
    // An empty program is a thread without a filter.
    let none = encode(&[("vmm".to_string(), None)], Encoding::Bitcode);
    assert_eq!(decode(&none).unwrap().threads, [("vmm".to_string(), None)]);
}

proptest! {
    #[test]
    fn any_threads_round_trip_in_both_encodings(
        threads in proptest::collection::btree_map(
            "[a-z]{1,6}",
            proptest::option::of(proptest::collection::vec(any::<u64>(), 1..40)),
            1..5,
        ),
        bitcode in any::<bool>(),
    ) {
        let encoding = if bitcode { Encoding::Bitcode } else { Encoding::Bincode };
        let threads: Vec<(String, Option<Program>)> = threads
            .into_iter()
            .map(|(t, words)| {
                let prog = words.map(|w| {
                    let raw: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
                    Program::from_raw(&raw).unwrap()
                });
                (t, prog)
            })
            .collect();
        let file = decode(&encode(&threads, encoding)).unwrap();
        prop_assert_eq!(file.encoding, encoding);
        prop_assert_eq!(file.threads, threads);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode(&bytes);
    }
}

#[test]
fn compile_emit_firecracker_decides_as_firecracker_s_compiler() {
    let dir = TempDir::new("fc-emit");
    let profile = PROFILES[0];
    for (emit, encoding) in [
        ("firecracker", Encoding::Bitcode),
        ("firecracker-bincode", Encoding::Bincode),
    ] {
        let out = dir.join(&format!("{emit}.out"));
        let run = run_secopt(&[
            "compile".as_ref(),
            profile_path(profile).as_os_str(),
            "--emit".as_ref(),
            emit.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
        let file = decode(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(file.encoding, encoding);
        let theirs = firecracker_programs(profile, Encoding::Bitcode);
        assert_eq!(file.threads.len(), theirs.len());
        for ((thread, ours), (their_thread, theirs)) in file.threads.iter().zip(&theirs) {
            assert_eq!(thread, their_thread);
            let ours = ours.as_ref().unwrap();
            validate::validate(ours).unwrap();
            assert!(
                ours.len() < theirs.len(),
                "{thread}: {} vs {}",
                ours.len(),
                theirs.len()
            );
            assert_equal(ours, theirs, &format!("--emit {emit} thread {thread}"));
        }
    }
}

#[test]
fn compile_refuses_files_firecracker_would_not_load() {
    let dir = TempDir::new("fc-refuse");
    let out = dir.join("out.bin");
    // (Every arch a Firecracker dialect targets, riscv64 included, is one its compiler
    // writes files for: tests/compile_libseccomp.rs
    // `firecracker_filters_for_riscv64_decide_like_firecrackers_compiler`.)
    let cases: [(&str, &[&str], &str); 2] = [
        (
            "firecracker/firecracker-x86_64-unknown-linux-musl.json",
            &["--thread", "vcpu"],
            "exactly the threads api, vcpu, vmm",
        ),
        ("oci/docker-default.json", &[], "this is an OCI profile"),
    ];
    for (profile, extra, message) in cases {
        let profile = shared_profile(profile);
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "compile".as_ref(),
            profile.as_os_str(),
            "--emit".as_ref(),
            "firecracker".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ];
        args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
        let run = run_secopt(&args);
        assert_eq!(run.status.code(), Some(2), "{extra:?}: {}", stderr_of(&run));
        assert!(
            stderr_of(&run).contains(message),
            "{extra:?}: {}",
            stderr_of(&run)
        );
        assert!(!out.exists(), "{extra:?}: no output file");
    }
    // Firecracker up to 1.10 (the releases with a rust-vmm backend) reads bincode: a bitcode
    // file in those dialects is written (asked for) with a warning, a bincode one without.
    let profile = shared_profile("firecracker/firecracker-unimplemented.json");
    for (dialect, emit, warns) in [
        ("firecracker-1.10", "firecracker", true),
        ("firecracker-1.10", "firecracker-bincode", false),
        ("rust-vmm", "firecracker", true),
        ("libseccomp", "firecracker", false),
    ] {
        let run = run_secopt(&[
            "compile",
            profile.to_str().unwrap(),
            "--firecracker-dialect",
            dialect,
            "--arch",
            "x86_64",
            "--emit",
            emit,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
        let warned = stderr_of(&run).contains("read bincode, not bitcode");
        assert_eq!(warned, warns, "{dialect} {emit}");
    }
}

fn optimize_cli(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut all: Vec<&std::ffi::OsStr> = vec!["optimize".as_ref()];
    all.extend_from_slice(args);
    run_secopt(&all)
}

#[test]
fn optimize_rewrites_every_thread_of_firecracker_s_file_and_keeps_its_encoding() {
    let dir = TempDir::new("fc-optimize");
    let profile = PROFILES[0];
    for (input, convert, encoding) in [
        (Encoding::Bitcode, None, Encoding::Bitcode),
        (Encoding::Bincode, None, Encoding::Bincode),
        (Encoding::Bincode, Some("firecracker"), Encoding::Bitcode),
        (
            Encoding::Bitcode,
            Some("firecracker-bincode"),
            Encoding::Bincode,
        ),
    ] {
        let out = dir.join("out");
        let golden = golden(profile, input);
        let mut args: Vec<&std::ffi::OsStr> =
            vec![golden.as_os_str(), "-o".as_ref(), out.as_os_str()];
        if let Some(format) = convert {
            args.extend(["--output-format".as_ref(), std::ffi::OsStr::new(format)]);
        }
        let run = optimize_cli(&args);
        assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
        let file = decode(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(file.encoding, encoding, "{input:?} {convert:?}");
        let theirs = firecracker_programs(profile, input);
        let names: Vec<&str> = file.threads.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["api", "vcpu", "vmm"]);
        for ((thread, ours), (_, theirs)) in file.threads.iter().zip(&theirs) {
            let ours = ours.as_ref().unwrap();
            validate::validate(ours).unwrap();
            assert!(ours.len() < theirs.len(), "{thread}");
            assert_equal(ours, theirs, &format!("optimized thread {thread}"));
        }
    }
}

#[test]
fn optimize_thread_takes_one_filter_out_of_the_file() {
    let dir = TempDir::new("fc-thread");
    let out = dir.join("vcpu.bpf");
    let golden = golden(PROFILES[0], Encoding::Bitcode);
    let run = optimize_cli(&[
        golden.as_os_str(),
        "--thread".as_ref(),
        "vcpu".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
    let ours = Program::from_raw(&std::fs::read(&out).unwrap()).unwrap();
    let theirs = firecracker_programs(PROFILES[0], Encoding::Bitcode);
    assert_equal(&ours, &theirs[1].1, "vcpu");
    // A thread the file does not have, and a raw output for the whole file: refused.
    for extra in [&["--thread", "VCPU"][..], &["--output-format", "raw"][..]] {
        let mut args: Vec<&std::ffi::OsStr> = vec![golden.as_os_str(), "-o".as_ref()];
        let other = dir.join("other.bpf");
        args.push(other.as_os_str());
        args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
        let run = optimize_cli(&args);
        assert_eq!(run.status.code(), Some(2), "{extra:?}");
        assert!(!other.exists(), "{extra:?}");
    }
}

#[test]
fn a_broken_thread_is_refused_by_name_and_other_verbs_explain_the_file() {
    let dir = TempDir::new("fc-broken");
    // vcpu's program falls off its end (no return): the kernel would refuse it.
    let good = Program::from_raw(&raw_filter(&[(0x06, 0, 0, 0x7fff_0000)])).unwrap();
    let bad = Program::from_raw(&raw_filter(&[(0x20, 0, 0, 4)])).unwrap();
    let threads = [
        ("api".to_string(), Some(good.clone())),
        ("vcpu".to_string(), Some(bad)),
        ("vmm".to_string(), Some(good)),
    ];
    let input = dir.join("broken.bin");
    std::fs::write(&input, encode(&threads, Encoding::Bitcode)).unwrap();
    let out = dir.join("out.bin");
    let run = optimize_cli(&[input.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("(thread vcpu): the kernel would reject"),
        "{}",
        stderr_of(&run)
    );
    assert!(!out.exists());
    // The verbs that read the whole file say the same of vcpu's filter: emu and analyze
    // refuse it (no verdict for a filter Firecracker cannot install, no reports of the others
    // first), disasm lists it anyway and exits 1, as for one filter.
    let input_text = input.to_str().unwrap();
    for verb in ["emu", "analyze"] {
        let run = run_secopt(&[verb, input_text, "--nr", "1"][..if verb == "emu" { 4 } else { 2 }]);
        assert_eq!(run.status.code(), Some(2), "{verb}: {}", stderr_of(&run));
        assert!(
            stderr_of(&run).contains("broken.bin:vcpu: the kernel would reject this filter"),
            "{verb}: {}",
            stderr_of(&run)
        );
        assert_eq!(stdout_of(&run), "", "{verb}");
    }
    let run = run_secopt(&["disasm", input_text]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    assert!(
        stderr_of(&run).contains("broken.bin:vcpu: the kernel would reject this filter")
            && stderr_of(&run).contains("(listed anyway)"),
        "{}",
        stderr_of(&run)
    );
    assert_eq!(stdout_of(&run).matches("; thread ").count(), 3);
    // A verb that takes one filter says what the file is instead of "not a multiple of 8".
    let golden = golden(PROFILES[0], Encoding::Bincode);
    let run = run_secopt(&[
        "exec".as_ref(),
        "--bpf".as_ref(),
        golden.as_os_str(),
        "--".as_ref(),
        "true".as_ref(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("Firecracker's filter file (bincode; threads api, vcpu, vmm)"),
        "{}",
        stderr_of(&run)
    );
}

/// A thread's name comes from the file: every verb shows it escaped, so that none can clear
/// the terminal, recolour a verdict, or end a listing's `; thread` comment and start an
/// instruction of its own. The file written back keeps the names themselves.
#[test]
fn thread_names_with_control_characters_are_shown_escaped() {
    let dir = TempDir::new("fc-names");
    let allow = Program::from_raw(&raw_filter(&[(0x06, 0, 0, 0x7fff_0000)])).unwrap();
    let kill = Program::from_raw(&raw_filter(&[(0x06, 0, 0, 0)])).unwrap();
    let names = [
        "api\u{1b}[2J\u{1b}]0;title\u{7}",
        "x: 1 instructions\n    ret ALLOW\n; y",
    ];
    let file = |name: &str, prog: &Program| {
        let threads: Vec<_> = names
            .iter()
            .map(|n| (n.to_string(), Some(prog.clone())))
            .collect();
        let path = dir.join(name);
        std::fs::write(&path, encode(&threads, Encoding::Bincode)).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (a, b) = (file("a.bin", &kill), file("b.bin", &allow));
    let out = dir.join("out.bin");
    let out_text = out.to_str().unwrap();
    let no_thread = format!("{a}:nothing");
    let runs: Vec<(Vec<&str>, i32)> = vec![
        (vec!["disasm", &a], 0),
        (vec!["disasm", &a, "--format", "json"], 0),
        (vec!["analyze", &a], 0),
        (vec!["emu", &a, "--nr", "1"], 0),
        (vec!["verify", &a, &b], 1),
        (vec!["diff", &a, &b], 1),
        (vec!["optimize", &a, "-o", out_text], 0),
        (vec!["analyze", &no_thread], 2),
        (
            vec!["optimize", &a, "--thread", "nothing", "-o", "x.bpf"],
            2,
        ),
    ];
    for (args, code) in &runs {
        let run = run_secopt(args);
        assert_eq!(
            run.status.code(),
            Some(*code),
            "{args:?}: {}",
            stderr_of(&run)
        );
        for (what, text) in [("stdout", stdout_of(&run)), ("stderr", stderr_of(&run))] {
            assert!(
                !text.contains(['\u{1b}', '\u{7}']),
                "{args:?}: {what} has a raw control character: {text:?}"
            );
            assert!(
                !text.contains("\n    ret ALLOW"),
                "{args:?}: {what}: {text}"
            );
        }
        if args[0] == "disasm" && args.len() == 2 {
            // One comment per thread; every other line an instruction of the real programs.
            let text = stdout_of(&run);
            assert_eq!(text.matches("; thread ").count(), 2, "{text}");
            assert!(
                text.contains(
                    r#"; thread "x: 1 instructions\n    ret ALLOW\n; y": 1 instructions"#
                ),
                "{text}"
            );
            assert!(
                !text
                    .lines()
                    .any(|l| l.trim_start().starts_with("ret ALLOW")),
                "{text}"
            );
        }
    }
    // A name with a `:` is still one thread of `FILE:THREAD`.
    let colon = dir.join("colon.bin");
    std::fs::write(
        &colon,
        encode(
            &[("a:b".to_string(), Some(allow.clone()))],
            Encoding::Bincode,
        ),
    )
    .unwrap();
    let run = run_secopt(&["disasm", &format!("{}:a:b", colon.display())]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
    assert_eq!(
        stdout_of(&run).trim_end(),
        "    ret ALLOW                                   ; 0"
    );
    // What optimize wrote keeps the names as they were.
    let written = decode(&std::fs::read(&out).unwrap()).unwrap();
    let kept: Vec<&str> = written.threads.iter().map(|(t, _)| t.as_str()).collect();
    let mut expected = names.to_vec();
    expected.sort();
    assert_eq!(kept, expected);
}

/// `FILE:THREAD` names one thread's filter for every verb that reads a filter.
#[test]
fn every_verb_reads_one_thread_as_file_colon_thread() {
    let bitcode = golden(PROFILES[0], Encoding::Bitcode);
    let bincode = golden(PROFILES[0], Encoding::Bincode);
    let theirs = firecracker_programs(PROFILES[0], Encoding::Bitcode);
    let thread_of = |file: &Path, thread: &str| format!("{}:{thread}", file.display());
    for (thread, prog) in &theirs {
        // The same thread in both encodings: proved equal by the binary.
        let run = run_secopt(&[
            "verify",
            &thread_of(&bitcode, thread),
            &thread_of(&bincode, thread),
        ]);
        assert_eq!(run.status.code(), Some(0), "{thread}: {}", stderr_of(&run));
        // What disasm lists is that thread's program.
        let run = run_secopt(&["disasm", &thread_of(&bincode, thread)]);
        assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
        let listed = secopt::bpf::asm::assemble(&stdout_of(&run)).unwrap();
        assert_eq!(&listed, prog, "{thread}");
        // `-:THREAD` (after `--`) takes the thread of the file on stdin.
        let run = with_stdin(&["disasm", "--", &format!("-:{thread}")], &bitcode);
        assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
        let listed = secopt::bpf::asm::assemble(&stdout_of(&run)).unwrap();
        assert_eq!(&listed, prog, "{thread} from stdin");
    }
    // On stdin, a thread the file lacks, and a file that is no Firecracker file.
    let run = with_stdin(&["emu", "--nr", "read", "--", "-:vCPU"], &bitcode);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("<stdin>: no thread \"vCPU\""),
        "{}",
        stderr_of(&run)
    );
    let dir = TempDir::new("fc-stdin");
    let one = dir.join("one.bpf");
    std::fs::write(&one, theirs[0].1.to_raw()).unwrap();
    let run = with_stdin(&["emu", "--nr", "read", "--", "-:api"], &one);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("and stdin is not a Firecracker filter file"),
        "{}",
        stderr_of(&run)
    );
    // Two different threads differ, with an input both filters confirm.
    let run = run_secopt(&[
        "verify",
        &thread_of(&bitcode, "vmm"),
        &thread_of(&bitcode, "api"),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    // A thread the file lacks: the threads it has.
    let run = run_secopt(&["analyze", &thread_of(&bitcode, "vCPU")]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("no thread \"vCPU\"")
            && stderr_of(&run).contains("api, vcpu, vmm"),
        "{}",
        stderr_of(&run)
    );
    // A file whose own name has a colon is read as itself.
    let dir = TempDir::new("fc-colon");
    let colon = dir.join("allow:all.bpf");
    std::fs::write(&colon, raw_filter(&[(0x06, 0, 0, 0x7fff_0000)])).unwrap();
    let run = run_secopt(&["disasm".as_ref(), colon.as_os_str()]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
    assert!(stdout_of(&run).contains("ret ALLOW"), "{}", stdout_of(&run));
}

/// `secopt ARGS` with the file `stdin` on its standard input.
fn with_stdin(args: &[&str], stdin: &Path) -> std::process::Output {
    secopt()
        .args(args)
        .stdin(std::fs::File::open(stdin).unwrap())
        .output()
        .unwrap()
}

/// `verify` and `diff` compare Firecracker's filters thread by thread, whichever form each
/// side is in: its JSON (compiled on the fly), the file its compiler wrote, or secopt's.
#[test]
fn verify_and_diff_compare_firecracker_s_filters_thread_by_thread() {
    let json = profile_path(PROFILES[0]);
    let bitcode = golden(PROFILES[0], Encoding::Bitcode);
    let bincode = golden(PROFILES[0], Encoding::Bincode);
    let verify = |a: &Path, b: &Path, extra: &[&str]| {
        let mut args = vec!["verify", a.to_str().unwrap(), b.to_str().unwrap()];
        args.extend_from_slice(extra);
        run_secopt(&args)
    };
    // The JSON means what Firecracker's compiler wrote, in either encoding, in every thread;
    // the JSON is compiled for the arch --profile-arch names, so this holds on any host.
    for file in [&bitcode, &bincode] {
        let run = verify(
            &json,
            file,
            &["--profile-arch", "x86_64", "--format", "json"],
        );
        assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
        let v: serde_json::Value = serde_json::from_str(&stdout_of(&run)).unwrap();
        assert_eq!(v["verdict"], "equal");
        let threads: Vec<&str> = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                assert_eq!(t["verdict"], "equal", "{t}");
                t["thread"].as_str().unwrap()
            })
            .collect();
        assert_eq!(threads, ["api", "vcpu", "vmm"]);
    }
    // Threads are paired by name, not by position: the other profile's file differs in every
    // thread, and each counterexample is confirmed by running that thread's programs.
    let other = golden(PROFILES[1], Encoding::Bitcode);
    let run = verify(&bitcode, &other, &["--format", "json"]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    let v: serde_json::Value = serde_json::from_str(&stdout_of(&run)).unwrap();
    let ours = firecracker_programs(PROFILES[0], Encoding::Bitcode);
    let theirs = firecracker_programs(PROFILES[1], Encoding::Bitcode);
    for (i, t) in v["threads"].as_array().unwrap().iter().enumerate() {
        assert_eq!(t["verdict"], "different", "{t}");
        let input = &t["counterexample"]["seccomp_data"];
        let mut data = secopt::bpf::SeccompData {
            nr: input["nr"].as_i64().unwrap() as i32,
            arch: input["arch"].as_u64().unwrap() as u32,
            instruction_pointer: input["instruction_pointer"].as_u64().unwrap(),
            args: [0; 6],
        };
        for (k, a) in input["args"].as_array().unwrap().iter().enumerate() {
            data.args[k] = a.as_u64().unwrap();
        }
        let run_on = |p: &Program| secopt::bpf::interp::eval(p, &data).unwrap().0;
        assert_eq!(t["thread"], ours[i].0.as_str());
        assert_eq!(t["a"], format!("{}:{}", bitcode.display(), ours[i].0));
        assert_eq!(t["counterexample"]["a"]["value"], run_on(&ours[i].1));
        assert_eq!(t["counterexample"]["b"]["value"], run_on(&theirs[i].1));
        assert_ne!(run_on(&ours[i].1), run_on(&theirs[i].1), "{t}");
    }

    // A JSON without the vmm thread and without api's futex rule: api differs on futex
    // alone, vcpu is equal, vmm is on one side only.
    let dir = TempDir::new("fc-verify");
    let mut profile: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    profile.as_object_mut().unwrap().remove("vmm");
    let api = profile["api"]["filter"].as_array_mut().unwrap();
    let before = api.len();
    api.retain(|rule| rule["syscall"] != "futex");
    assert!(
        api.len() < before,
        "the api thread has futex rules to remove"
    );
    let edited = dir.join("edited.json");
    std::fs::write(&edited, serde_json::to_vec(&profile).unwrap()).unwrap();
    let run = verify(&edited, &bincode, &["--profile-arch", "x86_64"]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    let text = stdout_of(&run);
    let line = |prefix: &str| text.lines().find(|l| l.starts_with(prefix)).unwrap_or("");
    assert!(line("api: different:").contains("nr 202 (futex)"), "{text}");
    assert!(line("vcpu: equal").contains(":vcpu"), "{text}");
    assert!(
        line("vmm: different:").contains("has a vmm thread"),
        "{text}"
    );
    let run = run_secopt(&[
        "diff",
        edited.to_str().unwrap(),
        bincode.to_str().unwrap(),
        "--profile-arch",
        "x86_64",
        "--format",
        "json",
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    let v: serde_json::Value = serde_json::from_str(&stdout_of(&run)).unwrap();
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads[0]["thread"], "api");
    let names: Vec<&serde_json::Value> = threads[0]["arches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["entries"].as_array().unwrap())
        .flat_map(|e| e["names"].as_array().unwrap())
        .collect();
    assert_eq!(names, [&serde_json::json!("futex")], "{}", threads[0]);
    assert_eq!(threads[1]["verdict"], "equal");
    assert_eq!(threads[2]["missing_in"], "a");
    // With a budget too small for any proof, equal threads are unknown; a thread on one side
    // only still makes the answer "different".
    let tiny = ["--profile-arch", "x86_64", "--max-nodes", "3"];
    assert_eq!(verify(&json, &bincode, &tiny).status.code(), Some(3));
    assert_eq!(verify(&edited, &bincode, &tiny).status.code(), Some(1));

    // One thread of the JSON is named as FILE:THREAD, like one of a compiled file.
    let run = run_secopt(&[
        "verify",
        &format!("{}:vcpu", edited.display()),
        &format!("{}:vcpu", bitcode.display()),
        "--profile-arch",
        "x86_64",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
    let run = run_secopt(&[
        "verify",
        &format!("{}:vmm", edited.display()),
        bitcode.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("no thread \"vmm\""),
        "{}",
        stderr_of(&run)
    );

    // A thread the file gives no filter runs unfiltered: equal to `RET ALLOW`, and unlike
    // Firecracker's api filter.
    let allow = Program::from_raw(&raw_filter(&[(0x06, 0, 0, 0x7fff_0000)])).unwrap();
    let with = |api: Option<Program>| {
        let mut threads = ours
            .iter()
            .map(|(t, p)| (t.clone(), Some(p.clone())))
            .collect::<Vec<_>>();
        threads[0].1 = api;
        encode(&threads, Encoding::Bitcode)
    };
    let (none, allow_all) = (dir.join("none.bin"), dir.join("allow.bin"));
    std::fs::write(&none, with(None)).unwrap();
    std::fs::write(&allow_all, with(Some(allow))).unwrap();
    assert_eq!(verify(&none, &allow_all, &[]).status.code(), Some(0));
    let run = verify(&none, &bitcode, &[]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        stdout_of(&run).starts_with("api: different:"),
        "{}",
        stdout_of(&run)
    );
    assert!(
        stdout_of(&run).contains("vcpu: equal"),
        "{}",
        stdout_of(&run)
    );
}

/// secopt's reference lowering of a corpus profile's threads for `arch` in `dialect`.
fn lowering(profile: &str, arch: Arch, dialect: Dialect) -> Vec<(String, CompiledFilter)> {
    let json = std::fs::read(profile_path(profile)).unwrap();
    let fc = FirecrackerOptions { arch, dialect };
    compile_firecracker(&json, profile, &fc, &CompileOptions::default()).unwrap()
}

/// A golden file of a tagged Firecracker release (`v1.10`, `v1.11`).
fn golden_release(profile: &str, release: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/firecracker")
        .join(format!("{profile}.{release}.bincode"))
}

/// Before bitcode: Firecracker 1.10's seccompiler had its own BPF backend (a copy of the
/// rust-vmm crate's; no libseccomp involved), 1.11's is built on libseccomp. Their files
/// (bincode 1) decode and re-encode to the same entries, and each thread is proved equal to
/// secopt's lowering of the same JSON in that release's dialect, and unequal to the other
/// dialect's, so each file checks its dialect's semantics and not just the format.
#[test]
fn firecracker_1_10_and_1_11_files_decide_as_their_dialects() {
    for profile in PROFILES {
        let libseccomp = lowering(profile, Arch::X86_64, Dialect::Libseccomp);
        let v1_10 = lowering(profile, Arch::X86_64, Dialect::Firecracker110);
        for (release, ours, other) in [
            ("v1.10", &v1_10, &libseccomp),
            ("v1.11", &libseccomp, &v1_10),
        ] {
            let bytes = std::fs::read(golden_release(profile, release)).unwrap();
            let file = decode(&bytes).unwrap();
            assert_eq!(file.encoding, Encoding::Bincode, "{profile} {release}");
            // 1.11 wrote its threads in hash-map order (api, vmm, vcpu in this file), so the
            // bytes are compared as a set of entries: same length, same threads decoded.
            let again = encode(&file.threads, Encoding::Bincode);
            assert_eq!(again.len(), bytes.len(), "{profile} {release}");
            assert!(
                decode(&again).unwrap() == file,
                "{profile} {release}: round trip"
            );
            let names: Vec<&str> = file.threads.iter().map(|(t, _)| t.as_str()).collect();
            assert_eq!(names, ["api", "vcpu", "vmm"], "{profile} {release}");
            for ((thread, prog), (_, filter), (_, wrong)) in zip3(&file.threads, ours, other) {
                let prog = prog.as_ref().expect("a program for every thread");
                validate::validate(prog).unwrap();
                let what = format!("{profile} {release} thread {thread}");
                assert_equal(prog, filter.program(), &what);
                let verdict = equivalent(prog, wrong.program(), &VerifyOptions::default());
                assert!(
                    matches!(verdict, Ok(Verdict::Different(_))),
                    "{what}: the other dialect should differ"
                );
            }
        }
    }
    // The binary: the JSON verifies equal to the 1.10 file in 1.10's dialect (and the crate's,
    // which lowers these files alike), not in the libseccomp one.
    let json = profile_path(PROFILES[0]);
    let v110 = golden_release(PROFILES[0], "v1.10");
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", json.to_str().unwrap(), v110.to_str().unwrap()];
        args.extend_from_slice(&["--profile-arch", "x86_64"]);
        args.extend_from_slice(extra);
        run_secopt(&args).status.code()
    };
    assert_eq!(
        verify(&["--firecracker-dialect", "firecracker-1.10"]),
        Some(0)
    );
    assert_eq!(verify(&["--firecracker-dialect", "rust-vmm"]), Some(0));
    assert_eq!(verify(&[]), Some(1));
}

/// A file of the points where Firecracker 1.10's compiler and the rust-vmm crate read a file
/// differently, as `seccompiler-bin` v1.10.1 compiled it (`tests/data/firecracker/README.md`):
/// `"args": []` (an entry without conditions), a newest Linux 5.10 name, dword and qword
/// conditions on one argument, a masked constant above 32 bits. In 1.10's dialect every thread
/// is proved equal to 1.10's own program, from the library and through `compile` and `verify`;
/// the crate's reading refuses the file. The file 1.10 refuses for conflicting rules, secopt
/// refuses in 1.10's dialect (and the crate's reading takes, dropping the entry).
#[test]
fn firecracker_1_10_compiles_as_its_own_seccompiler_bin() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/firecracker");
    let json_path = data.join("v1.10-edges.json");
    let json = std::fs::read(&json_path).unwrap();
    let theirs_path = data.join("v1.10-edges.v1.10.bincode");
    let theirs = decode(&std::fs::read(&theirs_path).unwrap())
        .unwrap()
        .threads;
    let lower = |dialect| {
        let fc = FirecrackerOptions {
            arch: Arch::X86_64,
            dialect,
        };
        compile_firecracker(&json, "v1.10-edges.json", &fc, &CompileOptions::default())
    };
    let ours = lower(Dialect::Firecracker110).unwrap();
    assert_eq!((theirs.len(), ours.len()), (3, 3));
    for ((thread, prog), (name, filter)) in theirs.iter().zip(&ours) {
        assert_eq!(thread, name);
        assert_equal(prog.as_ref().unwrap(), filter.program(), thread);
    }
    let e = lower(Dialect::RustVmmSeccompiler).unwrap_err().to_string();
    assert!(e.contains("$.api.filter[0].args: empty `args`"), "{e}");

    // The command line: compiled (optimized, proved) in 1.10's dialect into a bincode file
    // Firecracker 1.10 loads, which verifies equal to 1.10's own.
    let dir = TempDir::new("fc-1.10");
    let out = dir.join("edges.bincode");
    let compile = |dialect: &str, input: &Path, emit: &[&str]| {
        let mut args = vec!["compile", input.to_str().unwrap(), "--firecracker-dialect"];
        args.extend([dialect, "--arch", "x86_64", "-o", out.to_str().unwrap()]);
        args.extend(emit);
        run_secopt(&args)
    };
    let run = compile(
        "firecracker-1.10",
        &json_path,
        &["--emit", "firecracker-bincode"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
    let run = run_secopt(&[
        "verify",
        out.to_str().unwrap(),
        theirs_path.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stdout_of(&run));

    let conflict = data.join("v1.10-conflict.json");
    std::fs::remove_file(&out).unwrap();
    let run = compile("firecracker-1.10", &conflict, &["--thread", "api"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr_of(&run).contains("$.api.filter[1]: \"read\" has an entry without conditions and another entry (also at $.api.filter[0]): Firecracker up to 1.10 refuses such conflicting rules"),
        "{}",
        stderr_of(&run)
    );
    assert!(!out.exists());
    let run = compile("rust-vmm", &conflict, &["--thread", "api"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
    assert!(
        stderr_of(&run).contains("has no effect"),
        "{}",
        stderr_of(&run)
    );
}

/// Three slices side by side.
fn zip3<'a, A, B, C>(
    a: &'a [A],
    b: &'a [B],
    c: &'a [C],
) -> impl Iterator<Item = (&'a A, &'a B, &'a C)> {
    assert_eq!((a.len(), b.len()), (c.len(), c.len()));
    a.iter().zip(b).zip(c).map(|((a, b), c)| (a, b, c))
}

/// aarch64 filters (the corpus's aarch64-clean profile), as four Firecracker compilers wrote
/// them on an x86_64 host. The one without libseccomp (1.10) checks aarch64 alone and is equal
/// to secopt's lowering in 1.10's dialect everywhere. The libseccomp-based ones (1.11, 1.15-dev,
/// 1.17-dev) also carry a section for the build host's arch, which libseccomp adds to every
/// filter: equal to secopt's lowering for aarch64 callers, different for x86_64 ones, and
/// `verify` says so with an x86_64 input.
#[test]
fn aarch64_files_cross_compiled_on_x86_64_keep_the_host_s_arch_when_built_on_libseccomp() {
    use secopt::verify::{ArchSel, Domain};
    let profile = PROFILES[1];
    let lower = |dialect| lowering(profile, Arch::Aarch64, dialect);
    let read = |suffix: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/firecracker")
            .join(format!("{profile}.aarch64.{suffix}"));
        decode(&std::fs::read(path).unwrap()).unwrap().threads
    };
    let aarch64_only = VerifyOptions {
        domain: Domain {
            arches: vec![ArchSel::Arch(Arch::Aarch64)],
            nrs: vec![],
        },
        ..VerifyOptions::default()
    };
    let v1_10 = lower(Dialect::Firecracker110);
    for ((thread, prog), (_, ours)) in read("v1.10.bincode").iter().zip(&v1_10) {
        assert_equal(
            prog.as_ref().unwrap(),
            ours.program(),
            &format!("v1.10 {thread}"),
        );
    }
    let libseccomp = lower(Dialect::Libseccomp);
    for suffix in ["v1.11.bincode", "bincode", "bitcode"] {
        let threads = read(suffix);
        assert_eq!(threads.len(), 3, "{suffix}");
        for ((thread, prog), (_, ours)) in threads.iter().zip(&libseccomp) {
            let (prog, what) = (prog.as_ref().unwrap(), format!("{suffix} {thread}"));
            let on_aarch64 = equivalent(prog, ours.program(), &aarch64_only).unwrap();
            assert_eq!(on_aarch64, Verdict::Equal, "{what}");
            match equivalent(prog, ours.program(), &VerifyOptions::default()).unwrap() {
                Verdict::Different(c) => {
                    assert_eq!(c.data.arch, Arch::X86_64.token(), "{what}: {c:?}");
                    // secopt's lowering kills a foreign arch as libseccomp's default bad-arch
                    // action does; the file runs its x86_64 section (default allow) instead.
                    assert_eq!(c.b, secopt::bpf::RetVal::KILL_THREAD, "{what}: {c:?}");
                    assert_eq!(c.a, secopt::bpf::RetVal::ALLOW, "{what}: {c:?}");
                }
                other => panic!("{what}: {other:?}"),
            }
        }
    }
}

/// Optimizing a filter for another machine: the cross-compiled aarch64 file checks x86_64
/// and aarch64. The default weights count the native ABI's syscalls 100 each, so its arch
/// test comes first; `native` says which ABI that is (the host's when not given), so an
/// aarch64 machine's calls pay one arch comparison, not two.
#[test]
fn the_native_abi_given_is_the_one_whose_arch_check_comes_first() {
    use secopt::optimize::{optimize, OptimizeOptions};
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/firecracker/firecracker-unimplemented.aarch64.bitcode");
    let file = decode(&std::fs::read(path).unwrap()).unwrap();
    let prog = file.threads[0].1.clone().unwrap();
    for native in [Arch::Aarch64, Arch::X86_64] {
        let opts = OptimizeOptions {
            native: Some(native),
            ..OptimizeOptions::default()
        };
        let out = optimize(&prog, &opts).unwrap();
        assert_equal(&prog, &out.program, &format!("native {native}"));
        let first_arch_test = out
            .program
            .insns
            .iter()
            .find(|i| i.is_conditional_jump())
            .unwrap();
        assert_eq!(first_arch_test.k, native.token(), "native {native}");
    }
}

/// `analyze` of a whole filter file: each thread's analysis in turn, the same as naming the
/// thread (`FILE:THREAD`), of the program Firecracker's compiler wrote for it; a thread
/// without a filter is said to have none.
#[test]
fn analyze_reports_every_thread_of_a_filter_file() {
    let bitcode = golden(PROFILES[0], Encoding::Bitcode);
    let theirs = firecracker_programs(PROFILES[0], Encoding::Bitcode);
    let json_of = |args: &[&str]| -> serde_json::Value {
        let run = run_secopt(args);
        assert_eq!(run.status.code(), Some(0), "{args:?}: {}", stderr_of(&run));
        serde_json::from_str(&stdout_of(&run)).unwrap()
    };
    let path = bitcode.to_str().unwrap();
    let whole = json_of(&["analyze", path, "--kernel", "6.18", "--format", "json"]);
    let threads = whole["threads"].as_array().unwrap();
    assert_eq!(threads.len(), theirs.len());
    for (doc, (thread, prog)) in threads.iter().zip(&theirs) {
        assert_eq!(doc["thread"], thread.as_str());
        assert_eq!(doc["length"], prog.len(), "{thread}");
        let alone = json_of(&[
            "analyze",
            &format!("{path}:{thread}"),
            "--kernel",
            "6.18",
            "--format",
            "json",
        ]);
        let mut doc = doc.clone();
        doc.as_object_mut().unwrap().remove("thread");
        assert_eq!(doc, alone, "{thread}");
    }
    let run = run_secopt(&["analyze", path, "--summary"]);
    let text = stdout_of(&run);
    for (thread, _) in &theirs {
        assert!(
            text.contains(&format!("filter: {path}:{thread}\n")),
            "{text}"
        );
    }
    // A thread without a filter, and a workload on stdin (read once, wanted per thread).
    let dir = TempDir::new("fc-analyze");
    let mut threads: Vec<_> = theirs
        .iter()
        .map(|(t, p)| (t.clone(), Some(p.clone())))
        .collect();
    threads[1].1 = None;
    let file = dir.join("no-vcpu.bin");
    std::fs::write(&file, encode(&threads, Encoding::Bincode)).unwrap();
    let file = file.to_str().unwrap();
    let whole = json_of(&["analyze", file, "--format", "json"]);
    assert!(
        whole["threads"][1]["filter"].is_null(),
        "{}",
        whole["threads"][1]
    );
    assert_eq!(whole["threads"][2]["thread"], "vmm");
    let run = run_secopt(&["analyze", file]);
    assert!(stdout_of(&run).contains(&format!("filter: {file}:vcpu: none")));
    let run = run_secopt(&["analyze", file, "--workload", "-"]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr_of(&run));
    // Naming that thread, as FILE:THREAD or with optimize --thread, is an error that says so.
    for args in [
        &["disasm", &format!("{file}:vcpu")][..],
        &["optimize", file, "--thread", "vcpu", "-o", "-"],
    ] {
        let run = run_secopt(args);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert!(
            stderr_of(&run).contains("thread vcpu has no filter"),
            "{}",
            stderr_of(&run)
        );
    }
}

/// `disasm` and `emu` of a whole filter file: every thread's listing, and one syscall run
/// through every thread's filter, each as its `FILE:THREAD` form gives it.
#[test]
fn disasm_and_emu_show_every_thread_of_a_filter_file() {
    let bincode = golden(PROFILES[0], Encoding::Bincode);
    let path = bincode.to_str().unwrap();
    let theirs = firecracker_programs(PROFILES[0], Encoding::Bincode);
    let run = run_secopt(&["disasm", path]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr_of(&run));
    let text = stdout_of(&run);
    let sections: Vec<&str> = text.split("; thread ").skip(1).collect();
    assert_eq!(sections.len(), theirs.len(), "{text}");
    for (section, (thread, prog)) in sections.iter().zip(&theirs) {
        let (header, listing) = section.split_once('\n').unwrap();
        assert_eq!(header, format!("{thread}: {} instructions", prog.len()));
        let listed = secopt::bpf::asm::assemble(listing).unwrap();
        assert_eq!(&listed, prog, "{thread}");
    }
    // The whole listing is several programs (labels repeat): `asm` refuses it, names the
    // threads, and the way it gives to take one (listing on stdin, the default) gives that
    // thread's program.
    let dir = TempDir::new("fc-asm");
    let listing = dir.join("all.s");
    std::fs::write(&listing, &text).unwrap();
    let out = dir.join("all.bpf");
    let run = run_secopt(&[
        "asm".as_ref(),
        listing.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr_of(&run));
    assert!(!out.exists());
    let names: Vec<&str> = theirs.iter().map(|(t, _)| t.as_str()).collect();
    let (first, _) = &theirs[0];
    assert!(
        stderr_of(&run).contains(&format!(
            "listing of {} threads' filters ({})",
            names.len(),
            names.join(", ")
        )) && stderr_of(&run).contains(&format!(
            "`secopt disasm FILE:{first} | secopt asm -o {first}.bpf`"
        )),
        "{}",
        stderr_of(&run)
    );
    let one = run_secopt(&["disasm", &format!("{path}:{first}")]);
    let mut asm = secopt()
        .args(["asm".as_ref(), "-o".as_ref(), out.as_os_str()])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    asm.stdin.take().unwrap().write_all(&one.stdout).unwrap();
    assert!(asm.wait().unwrap().success());
    assert_eq!(
        Program::from_raw(&std::fs::read(&out).unwrap()).unwrap(),
        theirs[0].1
    );
    let json_of = |args: &[&str]| -> serde_json::Value {
        let run = run_secopt(args);
        assert_eq!(run.status.code(), Some(0), "{args:?}: {}", stderr_of(&run));
        serde_json::from_str(&stdout_of(&run)).unwrap()
    };
    let whole = json_of(&["disasm", path, "--format", "json"]);
    assert_eq!(whole["encoding"], "bincode");
    for (doc, (thread, _)) in whole["threads"].as_array().unwrap().iter().zip(&theirs) {
        let alone = json_of(&["disasm", &format!("{path}:{thread}"), "--format", "json"]);
        let mut doc = doc.clone();
        assert_eq!(
            doc.as_object_mut().unwrap().remove("thread").unwrap(),
            thread.as_str()
        );
        assert_eq!(doc, alone, "{thread}");
    }

    // KVM_RUN is the vCPU thread's own ioctl: Firecracker's profile allows it there alone.
    let kvm_run = ["--arch", "x86_64", "--nr", "ioctl", "--arg", "1=0xae80"];
    let emu = |input: &str, format: &str| {
        let mut args = vec!["emu", input, "--format", format];
        args.extend(kvm_run);
        json_of(&args)
    };
    let whole = emu(path, "json");
    let threads = whole["threads"].as_array().unwrap();
    let actions: Vec<(&str, &str)> = threads
        .iter()
        .map(|t| (t["thread"].as_str().unwrap(), t["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        [("api", "TRAP"), ("vcpu", "ALLOW"), ("vmm", "TRAP")]
    );
    for (doc, (thread, _)) in threads.iter().zip(&theirs) {
        let mut alone = emu(&format!("{path}:{thread}"), "json");
        assert_eq!(alone["seccomp_data"], whole["seccomp_data"]);
        // Notes are about the call (a syscall the kernel lets through), as seccomp_data is.
        assert_eq!(alone["notes"], whole["notes"]);
        let alone = alone.as_object_mut().unwrap();
        alone.remove("input");
        alone.remove("seccomp_data");
        alone.remove("notes");
        let mut doc = doc.clone();
        doc.as_object_mut().unwrap().remove("thread");
        assert_eq!(&doc, &serde_json::Value::from(alone.clone()), "{thread}");
    }
    let mut args = vec!["emu", path];
    args.extend(kvm_run);
    let run = run_secopt(&args);
    assert!(
        stdout_of(&run).contains("per thread: api TRAP (")
            && stdout_of(&run).contains("vcpu ALLOW ("),
        "{}",
        stdout_of(&run)
    );

    // A thread without a filter runs unfiltered: ALLOW, said as such.
    let dir = TempDir::new("fc-emu");
    let mut threads: Vec<_> = theirs
        .iter()
        .map(|(t, p)| (t.clone(), Some(p.clone())))
        .collect();
    threads[0].1 = None;
    let file = dir.join("no-api.bin");
    std::fs::write(&file, encode(&threads, Encoding::Bincode)).unwrap();
    let file = file.to_str().unwrap();
    let whole = emu(file, "json");
    assert!(whole["threads"][0]["filter"].is_null(), "{whole}");
    assert_eq!(whole["threads"][1]["action"], "ALLOW");
    let run = run_secopt(&["disasm", file]);
    assert!(
        stdout_of(&run).starts_with("; thread api: no filter"),
        "{}",
        stdout_of(&run)
    );
}
