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

mod common;

use common::firecracker_random::{random_file, secopt_threads, Fault};
use seccompiler::TargetArch;
use secopt::arch::Arch;
use secopt::bpf::testing::Rng;
use secopt::bpf::validate::validate;
use secopt::bpf::{Insn, Program};
use secopt::policy::Dialect;
use secopt::verify::{equivalent, Verdict, VerifyOptions};
use serde_json::json;

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
        let (file, fault) = random_file(&mut rng, Dialect::RustVmmSeccompiler);
        let bytes = serde_json::to_vec(&file).unwrap();
        let theirs = crate_programs(&bytes, arch);
        let ours = secopt_threads(&bytes, arch, Dialect::RustVmmSeccompiler);
        let (theirs, ours) = match (theirs, ours) {
            (Err(t), Err(o)) => {
                // Both refuse it for the fault it was given.
                assert_eq!(
                    (Fault::named(&t), Fault::named(&o)),
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

/// Firecracker 1.10's dialect (`--firecracker-dialect firecracker-1.10`) lowers as the crate
/// its backend was copied from: random files 1.10 takes (no fault; no entry without `args`
/// beside another of its syscall, which 1.10 refuses) are proved equal, thread by thread, to
/// the crate's programs for the same file in the crate's spelling, where `"args": []`
/// (1.10: no conditions; the crate refuses it) is written without `args`. (1.10's own
/// `seccompiler-bin` is the oracle of `tests/firecracker_seccompiler_bin.rs`, where one can
/// be built.)
#[test]
fn firecracker_1_10_files_lower_as_the_crate_lowers_them() {
    let mut rng = Rng::new(0x5ecc_0310);
    let mut compared = 0;
    for round in 0..1500 {
        let arch = if round % 3 == 2 {
            Arch::Aarch64
        } else {
            Arch::X86_64
        };
        let (file, fault) = random_file(&mut rng, Dialect::Firecracker110);
        if fault.is_some() {
            continue;
        }
        let ours = secopt_threads(
            &serde_json::to_vec(&file).unwrap(),
            arch,
            Dialect::Firecracker110,
        )
        .unwrap_or_else(|e| panic!("round {round}: {e}\n{file:#}"));
        let mut spelt = file.clone();
        for filter in spelt.as_object_mut().unwrap().values_mut() {
            for entry in filter["filter"].as_array_mut().unwrap() {
                if entry["args"].as_array().is_some_and(Vec::is_empty) {
                    entry.as_object_mut().unwrap().remove("args");
                }
            }
        }
        let theirs = crate_programs(&serde_json::to_vec(&spelt).unwrap(), arch)
            .unwrap_or_else(|e| panic!("round {round}: the crate: {e}\n{spelt:#}"));
        assert_eq!(theirs.len(), ours.len(), "round {round}");
        for ((thread, a), (_, b)) in theirs.iter().zip(&ours) {
            match equivalent(a, b, &VerifyOptions::default()).unwrap() {
                Verdict::Equal => compared += 1,
                other => panic!("round {round} ({arch}), thread {thread}: {other:?}\n{file:#}"),
            }
        }
    }
    assert!(compared > 1000, "{compared}");
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
        let err = secopt_threads(&bytes, Arch::X86_64, Dialect::RustVmmSeccompiler).unwrap_err();
        assert!(err.contains("65535"), "{err}");
    }
}
