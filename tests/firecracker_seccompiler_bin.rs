//! A Firecracker release's own `seccompiler-bin` as the oracle, on random filter files, when
//! one is given:
//!
//! ```console
//! SECOPT_SECCOMPILER_BIN=/path/to/seccompiler-bin cargo test --release --test firecracker_seccompiler_bin
//! ```
//!
//! (`SECOPT_SECCOMPILER_ROUNDS` files, default 500.) Its `--version` picks the dialect: 1.10
//! and older have their own BPF backend (`--firecracker-dialect firecracker-1.10`), 1.11 and
//! later build on the system libseccomp (the default dialect). Both compilers must refuse each
//! faulty file for its fault, and every thread filter of the file the release writes must be
//! proved equal to secopt's lowering in that dialect. Building `seccompiler-bin` needs the
//! Firecracker sources, which CI cannot download: without the variable the test says so and
//! passes. `tests/data/firecracker/README.md` says how the releases were built.

mod common;

use common::firecracker_random::{random_file, secopt_threads, Fault};
use common::libseccomp_firecracker::firecracker_with_libseccomp;
use common::libseccomp_profiles::Pfc;
use secopt::arch::Arch;
use secopt::bpf::testing::{random_data, Rng};
use secopt::bpf::thread_filters::decode;
use secopt::bpf::{interp, Program, SeccompData};
use secopt::policy::Dialect;
use secopt::verify::{equivalent, Verdict, VerifyOptions};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The dialect of the release whose `--version` is `version` ("Seccompiler-bin v1.10.1",
/// "seccompiler v1.17.0-dev").
fn dialect_of(version: &str) -> Dialect {
    let minor = version
        .split_once("v1.")
        .and_then(|(_, rest)| rest.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no 1.x version in {version:?}"));
    if minor <= 10 {
        Dialect::Firecracker110
    } else {
        Dialect::Libseccomp
    }
}

/// What a release says when it has not finished after [`PATIENCE`]: libseccomp's rule
/// tree has a cycle, and `seccomp_rule_add` never returns (docs/kernel-facts.md).
const NEVER_FINISHES: &str = "seccompiler-bin did not finish";

/// How long a release may take on one small file (it takes milliseconds).
const PATIENCE: Duration = Duration::from_secs(10);

/// The release's programs for `json`, by thread, or its error output.
fn theirs(bin: &Path, json: &Path, out: &Path) -> Result<Vec<(String, Program)>, String> {
    let mut child = Command::new(bin)
        .args(["--target-arch", "x86_64", "--input-file"])
        .arg(json)
        .arg("--output-file")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > PATIENCE {
            child.kill().unwrap();
            child.wait().unwrap();
            return Err(NEVER_FINISHES.into());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let run = child.wait_with_output().unwrap();
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned()
            + &String::from_utf8_lossy(&run.stdout));
    }
    let file = decode(&std::fs::read(out).unwrap()).unwrap();
    let mut threads: Vec<(String, Program)> = file
        .threads
        .into_iter()
        .map(|(t, p)| (t, p.unwrap_or_default()))
        .collect();
    threads.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(threads)
}

/// Where a libseccomp-based release's program and secopt's differ, the difference must be
/// libseccomp's code generator leaving its own rule tree (docs/kernel-facts.md): the release's
/// program is the one the same libseccomp calls give here (`firecracker_with_libseccomp`, the
/// compiler's steps), and on the counterexample and on 2,000 inputs made of both programs'
/// constants, wherever the two programs differ, libseccomp's pseudo filter code (its tree)
/// decides as secopt does.
fn libseccomp_left_its_tree(
    file: &Value,
    thread: &str,
    release: &Program,
    secopt: &Program,
    counterexample: &SeccompData,
    rng: &mut Rng,
) {
    let one = json!({ thread: file[thread].clone() });
    let (program, pfc) = &firecracker_with_libseccomp(&one)[thread];
    assert_eq!(
        program.insns,
        release.insns[..program.len()],
        "{thread}: the release's libseccomp calls\n{file:#}"
    );
    let pfc = Pfc::parse(pfc).unwrap();
    let mut inputs = vec![*counterexample];
    for _ in 0..2000 {
        inputs.push(random_data(rng, release, &[Arch::X86_64.token()]));
        inputs.push(random_data(rng, secopt, &[Arch::X86_64.token()]));
    }
    for data in inputs {
        let ours = interp::eval(secopt, &data).unwrap();
        if ours != interp::eval(release, &data).unwrap() {
            assert_eq!(
                pfc.decide(&data),
                Some(ours.0),
                "{thread}: {data:x?}: libseccomp's tree sides with neither\n{file:#}"
            );
        }
    }
}

/// The libseccomp-based releases export every thread's program into one memfd, in thread
/// name order, rewinding it but never truncating it (src/seccompiler/src/lib.rs
/// `compile_bpf`), and read back the file's whole size: a thread whose program is shorter
/// than an earlier thread's carries the rest of that program after its own last `ret`
/// (unreachable, so harmless to what the filter decides, but loaded and counted against the
/// kernel's limits). Checks that every thread's filter is exactly that: its own program (the
/// same libseccomp calls here) followed by the memfd's stale bytes. Returns how many threads
/// carry a tail.
fn releases_reuse_one_memfd(file: &Value, release: &[(String, Program)]) -> usize {
    let own = firecracker_with_libseccomp(file);
    let mut memfd: Vec<secopt::bpf::Insn> = Vec::new();
    let mut tails = 0;
    for (thread, program) in release {
        let ours = &own[thread].0.insns;
        let rest = memfd.get(ours.len()..).unwrap_or_default().to_vec();
        memfd = ours.iter().copied().chain(rest).collect();
        assert_eq!(
            program.insns, memfd,
            "{thread}: not its program and the memfd's rest"
        );
        tails += usize::from(program.len() > ours.len());
    }
    tails
}

/// The faults a release's error can stand for. The libseccomp-based releases name only the
/// libseccomp call that failed: `seccomp_rule_add` refuses a rule whose action is the default
/// one (EACCES), an argument index above 5 and two conditions on one argument (EINVAL).
fn release_faults(message: &str) -> Vec<Fault> {
    if message.contains("LibSeccompRule") {
        vec![
            Fault::EqualActions,
            Fault::ArgumentIndex,
            Fault::RepeatedArgument,
        ]
    } else if message.contains("LibSeccompSycall") {
        vec![Fault::UnknownName]
    } else {
        Fault::named(message).into_iter().collect()
    }
}

#[test]
fn random_filters_compile_as_a_firecracker_release_compiles_them() {
    let Some(bin) = std::env::var_os("SECOPT_SECCOMPILER_BIN") else {
        eprintln!("SKIPPED: set SECOPT_SECCOMPILER_BIN to a Firecracker release's seccompiler-bin");
        return;
    };
    let bin = Path::new(&bin);
    let version = Command::new(bin).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let dialect = dialect_of(&version);
    let rounds: usize = std::env::var("SECOPT_SECCOMPILER_ROUNDS").map_or(500, |r| {
        r.parse().expect("SECOPT_SECCOMPILER_ROUNDS: a number")
    });
    let dir = std::env::temp_dir().join(format!("secopt-seccompiler-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json_path, out_path) = (dir.join("random.json"), dir.join("random.out"));
    let mut rng = Rng::new(0x5ecc_0302);
    let (mut compared, mut refused_by_both, mut left_the_tree, mut stale_tails) = (0, 0, 0, 0);
    let mut never_finishes = 0;
    for round in 0..rounds {
        let (file, fault) = random_file(&mut rng, dialect);
        let bytes = serde_json::to_vec(&file).unwrap();
        std::fs::write(&json_path, &bytes).unwrap();
        let (release, secopt) = (
            theirs(bin, &json_path, &out_path),
            secopt_threads(&bytes, Arch::X86_64, dialect),
        );
        match (release, secopt) {
            // The file the committed loop test was cut down from was found so.
            (Err(t), Err(o)) if t == NEVER_FINISHES => {
                assert!(
                    o.contains("into a cycle"),
                    "round {round}: {version} never finishes; secopt: {o}\n{file:#}"
                );
                never_finishes += 1;
                refused_by_both += 1;
            }
            (Err(t), Err(o)) => {
                let fault = fault.expect("a fault");
                assert!(
                    release_faults(&t).contains(&fault) && Fault::named(&o) == Some(fault),
                    "round {round}: {fault:?}: {version}: {t}\nsecopt: {o}\n{file:#}"
                );
                refused_by_both += 1;
            }
            (Ok(t), Ok(o)) => {
                assert_eq!(
                    fault, None,
                    "round {round}: both take a faulty file\n{file:#}"
                );
                assert_eq!(
                    t.iter().map(|t| &t.0).collect::<Vec<_>>(),
                    o.iter().map(|t| &t.0).collect::<Vec<_>>(),
                    "round {round}: threads"
                );
                if dialect == Dialect::Libseccomp {
                    stale_tails += releases_reuse_one_memfd(&file, &t);
                }
                for ((thread, a), (_, b)) in t.iter().zip(&o) {
                    match equivalent(a, b, &VerifyOptions::default()).unwrap() {
                        Verdict::Equal => compared += 1,
                        Verdict::Different(c) if dialect == Dialect::Libseccomp => {
                            left_the_tree += 1;
                            libseccomp_left_its_tree(&file, thread, a, b, &c.data, &mut rng)
                        }
                        other => panic!("round {round}, thread {thread}: {other:?}\n{file:#}"),
                    }
                }
            }
            (t, o) => panic!(
                "round {round}: {version} {} and secopt {}\n{file:#}",
                t.map_or_else(|e| format!("refuses ({e})"), |_| "takes it".into()),
                o.map_or_else(|e| format!("refuses ({e})"), |_| "takes it".into()),
            ),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{}: {compared} thread filters proved equal, {left_the_tree} where libseccomp's BPF \
         leaves its rule tree, {refused_by_both} files refused by both ({never_finishes} that the \
         release never finishes); {stale_tails} thread \
         filters carry an earlier thread's stale tail",
        version.trim()
    );
}
