//! The rust-vmm dialect (`--firecracker-dialect rust-vmm`) against the rust-vmm `seccompiler`
//! crate itself: random Firecracker-style JSON filters go through the crate's
//! `compile_from_json` and through secopt's front end and reference lowering in that dialect.
//! Both must take or refuse the same files, and the programs both build must be proved equal
//! (`verify::equivalent`; a difference comes with an input both programs were run on).
//!
//! The crate is an oracle nobody here wrote, and its quirks are what the dialect reproduces:
//! `dword` compares the low words alone for every operator, `masked_eq` masks both sides, an
//! entry without `args` is dropped when its syscall also has entries with `args`, `"args": []`
//! and equal actions are refused. The one documented difference, errno/trace data above
//! 65535 (the crate keeps the low 16 bits, secopt refuses), is checked on its own.

use seccompiler::TargetArch;
use secopt::arch::Arch;
use secopt::bpf::testing::Rng;
use secopt::bpf::validate::validate;
use secopt::bpf::{Insn, Program};
use secopt::compile::{compile_firecracker, CompileOptions};
use secopt::policy::firecracker::FirecrackerOptions;
use secopt::policy::Dialect;
use secopt::verify::{equivalent, Verdict, VerifyOptions};
use serde_json::{json, Value};

/// Names both arches have (and one neither has), so one generator serves both.
const NAMES: [&str; 12] = [
    "read",
    "write",
    "openat",
    "close",
    "ioctl",
    "mmap",
    "futex",
    "clone",
    "socket",
    "madvise",
    "exit_group",
    "ppoll",
];

/// Constants around the edges the comparisons care about: zero, the word boundary, the top.
fn value(rng: &mut Rng) -> u64 {
    match rng.below(6) {
        0 => rng.below(4) as u64,
        1 => 0xffff_ffff,
        2 => 1 << 32,
        3 => u64::MAX - rng.below(2) as u64,
        4 => u64::from(rng.next_u32()),
        _ => rng.next_u64(),
    }
}

fn action(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => json!("allow"),
        1 => json!({ "errno": rng.below(3) as u64 + 1 }),
        2 => json!("trap"),
        3 => json!("kill_thread"),
        4 => json!("kill_process"),
        5 => json!("log"),
        _ => json!({ "trace": rng.below(3) as u64 }),
    }
}

fn condition(rng: &mut Rng) -> Value {
    let op = match rng.below(7) {
        0 => json!("eq"),
        1 => json!("ne"),
        2 => json!("lt"),
        3 => json!("le"),
        4 => json!("gt"),
        5 => json!("ge"),
        _ => json!({ "masked_eq": value(rng) }),
    };
    json!({
        "index": rng.below(6),
        "type": if rng.chance(1, 2) { "dword" } else { "qword" },
        "op": op,
        "val": value(rng),
    })
}

/// What a file is refused for: each random file has at most one such fault, so both
/// compilers must refuse it for the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    EqualActions,
    ArgumentIndex,
    EmptyArgs,
    UnknownName,
    /// A key the format does not have (the crate denies unknown fields).
    UnknownField,
    /// A `comment` that is not a string.
    CommentNotString,
}

/// The fault an error message names.
fn fault_named(message: &str) -> Option<Fault> {
    let m = message.to_lowercase();
    if m.contains("are equal") || m.contains("equals the default action") {
        Some(Fault::EqualActions)
    } else if m.contains("argument index") {
        Some(Fault::ArgumentIndex)
    } else if m.contains("cannot be empty") || m.contains("empty `args`") {
        Some(Fault::EmptyArgs)
    } else if m.contains("no_such_syscall") {
        Some(Fault::UnknownName)
    } else if m.contains("unknown field") {
        Some(Fault::UnknownField)
    } else if m.contains("expected a string") {
        Some(Fault::CommentNotString)
    } else {
        None
    }
}

/// One random filter file (one or two threads, each with a few entries on a few names) and
/// the fault put in it, if any.
fn random_file(rng: &mut Rng) -> (Value, Option<Fault>) {
    let fault = match rng.below(18) {
        0 => Some(Fault::EqualActions),
        1 => Some(Fault::ArgumentIndex),
        2 => Some(Fault::EmptyArgs),
        3 => Some(Fault::UnknownName),
        4 => Some(Fault::UnknownField),
        5 => Some(Fault::CommentNotString),
        _ => None,
    };
    let threads = 1 + rng.below(2);
    let faulty_thread = rng.below(threads);
    let mut file = serde_json::Map::new();
    for (t, thread) in ["main", "vcpu"].iter().take(threads).enumerate() {
        let mut entries = Vec::new();
        for _ in 0..rng.below(7) {
            // The first four names most often, so that entries meet on a syscall.
            let among = 4 + rng.below(NAMES.len() - 3);
            let mut entry = json!({ "syscall": NAMES[rng.below(among)] });
            if rng.below(5) > 0 {
                let n = 1 + rng.below(3);
                entry["args"] = Value::Array((0..n).map(|_| condition(rng)).collect());
            }
            if rng.chance(1, 4) {
                entry["comment"] = json!("why");
            }
            entries.push(entry);
        }
        let mismatch = action(rng);
        let mut matched = action(rng);
        while matched == mismatch {
            matched = action(rng);
        }
        if t == faulty_thread {
            let at = rng.below(entries.len() + 1);
            match fault {
                Some(Fault::EqualActions) => matched = mismatch.clone(),
                Some(Fault::ArgumentIndex) => {
                    let mut c = condition(rng);
                    c["index"] = json!(6 + rng.below(250));
                    entries.insert(at, json!({ "syscall": "read", "args": [c] }));
                }
                Some(Fault::EmptyArgs) => {
                    entries.insert(at, json!({ "syscall": "write", "args": [] }));
                }
                Some(Fault::UnknownName) => {
                    entries.insert(at, json!({ "syscall": "no_such_syscall" }));
                }
                // In an entry, or in one of its conditions.
                Some(Fault::UnknownField) => {
                    let mut entry = json!({ "syscall": "close", "args": [condition(rng)] });
                    if rng.chance(1, 2) {
                        entry["action"] = json!("allow");
                    } else {
                        entry["args"][0]["mask"] = json!(1);
                    }
                    entries.insert(at, entry);
                }
                Some(Fault::CommentNotString) => {
                    entries.insert(at, json!({ "syscall": "close", "comment": 7 }));
                }
                None => {}
            }
        }
        let (mismatch_key, match_key) = if rng.chance(1, 2) {
            ("mismatch_action", "match_action")
        } else {
            ("default_action", "filter_action")
        };
        file.insert(
            thread.to_string(),
            json!({ mismatch_key: mismatch, match_key: matched, "filter": entries }),
        );
    }
    (Value::Object(file), fault)
}

fn target(arch: Arch) -> TargetArch {
    match arch {
        Arch::X86_64 => TargetArch::x86_64,
        Arch::Aarch64 => TargetArch::aarch64,
        _ => unreachable!(),
    }
}

/// The crate's program for each thread, sorted by thread, or its error.
fn crate_programs(json: &[u8], arch: Arch) -> Result<Vec<(String, Program)>, String> {
    let map = seccompiler::compile_from_json(json, target(arch)).map_err(|e| e.to_string())?;
    let mut threads: Vec<(String, Program)> = map
        .into_iter()
        .map(|(thread, prog)| {
            let insns = prog
                .iter()
                .map(|f| Insn::new(f.code, f.jt, f.jf, f.k))
                .collect();
            (thread, Program::new(insns))
        })
        .collect();
    threads.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(threads)
}

/// secopt's reference lowering for each thread in the rust-vmm dialect, or its error.
fn secopt_programs(json: &[u8], arch: Arch) -> Result<Vec<(String, Program)>, String> {
    let fc = FirecrackerOptions {
        arch,
        dialect: Dialect::RustVmmSeccompiler,
    };
    let mut threads: Vec<(String, Program)> =
        compile_firecracker(json, "random.json", &fc, &CompileOptions::default())
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(thread, filter)| (thread, filter.into_program()))
            .collect();
    threads.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(threads)
}

#[test]
fn random_filters_compile_as_the_rust_vmm_crate_compiles_them() {
    let mut rng = Rng::new(0x5ecc_0301);
    let (mut compared, mut refused_by_both) = (0, 0);
    for round in 0..3000 {
        let arch = if round % 3 == 2 {
            Arch::Aarch64
        } else {
            Arch::X86_64
        };
        let (file, fault) = random_file(&mut rng);
        let bytes = serde_json::to_vec(&file).unwrap();
        let theirs = crate_programs(&bytes, arch);
        let ours = secopt_programs(&bytes, arch);
        let (theirs, ours) = match (theirs, ours) {
            (Err(t), Err(o)) => {
                // Both refuse it for the fault it was given.
                assert_eq!(
                    (fault_named(&t), fault_named(&o)),
                    (fault, fault),
                    "round {round}: the crate: {t}; secopt: {o}\n{file:#}"
                );
                refused_by_both += 1;
                continue;
            }
            (Ok(t), Ok(o)) => {
                assert_eq!(
                    fault, None,
                    "round {round}: both take a faulty file\n{file:#}"
                );
                (t, o)
            }
            (t, o) => panic!(
                "round {round} ({arch}): the crate {} and secopt {}\n{file:#}",
                t.map_or_else(|e| format!("refuses ({e})"), |_| "takes it".into()),
                o.map_or_else(|e| format!("refuses ({e})"), |_| "takes it".into()),
            ),
        };
        assert_eq!(
            theirs.iter().map(|t| &t.0).collect::<Vec<_>>(),
            ours.iter().map(|t| &t.0).collect::<Vec<_>>(),
            "round {round}: threads"
        );
        for ((thread, a), (_, b)) in theirs.iter().zip(&ours) {
            validate(a).unwrap_or_else(|e| panic!("round {round}: the crate's {thread}: {e}"));
            match equivalent(a, b, &VerifyOptions::default()).unwrap() {
                Verdict::Equal => compared += 1,
                other => panic!("round {round} ({arch}), thread {thread}: {other:?}\n{file:#}"),
            }
        }
    }
    // Enough of each kind for the comparison to mean something.
    assert!(
        compared > 3000 && refused_by_both > 500,
        "{compared} {refused_by_both}"
    );
    eprintln!("{compared} thread filters proved equal, {refused_by_both} files refused by both");
}

/// The dialect's one documented difference: errno and trace data above 65535. The crate
/// keeps the low 16 bits (`{"errno": 65537}` returns ERRNO(1)); secopt refuses the file
/// rather than compile a different errno than the one written.
#[test]
fn errno_data_above_16_bits_is_refused_where_the_crate_truncates_it() {
    for (action, kept) in [
        (json!({ "errno": 65537 }), 0x0005_0001),
        (json!({ "trace": 65538 }), 0x7ff0_0002),
    ] {
        let file = json!({ "main": {
            "mismatch_action": "allow",
            "match_action": action,
            "filter": [{ "syscall": "read" }],
        }});
        let bytes = serde_json::to_vec(&file).unwrap();
        let theirs = crate_programs(&bytes, Arch::X86_64).unwrap();
        let rets: Vec<u32> = theirs[0]
            .1
            .insns
            .iter()
            .filter(|i| i.code == 0x06)
            .map(|i| i.k)
            .collect();
        assert!(rets.contains(&kept), "{rets:x?}");
        let err = secopt_programs(&bytes, Arch::X86_64).unwrap_err();
        assert!(err.contains("65535"), "{err}");
    }
}
