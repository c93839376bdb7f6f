//! Acceptance: for every OCI profile of the shared corpus (and Firecracker's filters) and the
//! arch sets x86_64(+x86+x32), aarch64(+arm), s390x, ppc64le and riscv64, secopt's reference
//! program decides exactly like the program the system libseccomp builds for the same rules
//! (the oracle in tests/common/libseccomp_profiles.rs, which never uses secopt's parser).
//!
//! Both sides resolve names with libseccomp's own syscall table, so they skip the same
//! unknown names. For the corpus, secopt's verifier (`secopt::verify::equivalent`) proves the
//! two programs equal over all of `seccomp_data`; independently of it, both programs also
//! run in the interpreter over a sweep: every syscall number up to past the highest one,
//! the x32 range, -1 and a few high numbers, × the boundary values (v-1, v, v+1, masks;
//! high and low halves independently) of every argument condition of the syscall, for every
//! token in the filter and some outside it. Random profiles with overlapping rules, runc's
//! ENOSYS stub and Firecracker's compiler are checked over the same sweep.

mod common;

use common::libseccomp_firecracker::firecracker_with_libseccomp;
use common::libseccomp_names::{libseccomp_nr, libseccomp_resolver, libseccomp_version, scmp_arch};
use common::libseccomp_profiles::{
    build_filter, load_profile, profile_path, LibseccompFilter, Pfc, ProfileOptions,
};
use libseccomp::{ScmpCompareOp, ScmpSyscall};
use secopt::arch::{Arch, X32_SYSCALL_BIT};
use secopt::bpf::testing::Rng;
use secopt::bpf::{interp, Program, RetVal, SeccompData};
use secopt::compile::{self, CompileOptions};
use secopt::policy::{self, CapSet, KernelVersion, ResolveOptions};
use secopt::verify::{self, Verdict, VerifyOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// The arch sets of the acceptance criteria: native first.
const ARCH_SETS: [&[Arch]; 5] = [
    &[Arch::X86_64, Arch::X86, Arch::X32],
    &[Arch::Aarch64, Arch::Arm],
    &[Arch::S390x],
    &[Arch::Ppc64le],
    &[Arch::Riscv64],
];

fn oci_name(a: Arch) -> String {
    format!("SCMP_ARCH_{}", a.name().to_ascii_uppercase())
}

/// Boundary values of a 64-bit constant: around it, and its halves independently.
fn boundaries(v: u64, out: &mut BTreeSet<u64>) {
    let (hi, lo) = ((v >> 32) as u32, v as u32);
    let near = |x: u32| [x.wrapping_sub(1), x, x.wrapping_add(1), 0, u32::MAX];
    for h in near(hi) {
        for l in near(lo) {
            out.insert(u64::from(h) << 32 | u64::from(l));
        }
    }
}

/// The argument values to try per argument index for one syscall.
use common::sweep::{each_combination, ArgValues};

/// Per arch and syscall number: the argument values worth trying, from the oracle's rules.
fn sweep_values(filter: &LibseccompFilter, arches: &[Arch]) -> BTreeMap<(Arch, u32), ArgValues> {
    let mut out: BTreeMap<(Arch, u32), ArgValues> = BTreeMap::new();
    let socket_family = [
        "socket",
        "bind",
        "connect",
        "listen",
        "accept",
        "getsockname",
        "getpeername",
        "socketpair",
        "send",
        "recv",
        "sendto",
        "recvfrom",
        "shutdown",
        "setsockopt",
        "getsockopt",
        "sendmsg",
        "recvmsg",
        "accept4",
        "recvmmsg",
        "sendmmsg",
    ];
    let ipc_family = [
        "semop",
        "semget",
        "semctl",
        "semtimedop",
        "msgsnd",
        "msgrcv",
        "msgget",
        "msgctl",
        "shmat",
        "shmdt",
        "shmget",
        "shmctl",
    ];
    for &arch in arches {
        for (name, _, conds) in &filter.rules {
            let mut targets: Vec<u32> = libseccomp_nr(arch, name).into_iter().collect();
            // The multiplexers see the same conditions (and arg0 = call number).
            for (family, mux) in [(&socket_family[..], "socketcall"), (&ipc_family[..], "ipc")] {
                if family.contains(&name.as_str()) {
                    targets.extend(arch.syscalls().nr(mux));
                }
            }
            for nr in targets {
                let values = out.entry((arch, nr)).or_default();
                for c in conds {
                    let set = values.entry(c.index).or_default();
                    boundaries(c.value, set);
                    if let ScmpCompareOp::MaskedEqual(_) = c.op {
                        // value is the mask, value_two the constant.
                        let (mask, want) = (c.value, c.value_two);
                        for v in [want, want & mask, want | !mask, mask, !mask, want ^ mask] {
                            boundaries(v, set);
                        }
                    }
                    set.insert(0);
                }
            }
        }
        for mux in ["socketcall", "ipc"] {
            if let Some(nr) = arch.syscalls().nr(mux) {
                let set = out.entry((arch, nr)).or_default().entry(0).or_default();
                set.extend(0..=25u64);
                set.insert(0x1_0000_0001);
            }
        }
    }
    out
}

/// Every syscall number worth trying on the token of `arches[i]`.
fn numbers(arch: Arch) -> Vec<u32> {
    let max = arch.syscalls().max_nr().unwrap_or(0).min(0x1_0000);
    let mut v: Vec<u32> = (0..=max + 20).collect();
    if arch == Arch::Arm {
        v.extend(0xf_0000..0xf_0010); // ARM private calls
    }
    if matches!(arch, Arch::X86_64 | Arch::X32) {
        v.extend(X32_SYSCALL_BIT..X32_SYSCALL_BIT + 600);
        v.extend([X32_SYSCALL_BIT - 1, 0x7fff_ffff, 0x8000_0000]);
    }
    v.extend([u32::MAX, u32::MAX - 1, 0x3fff_ffff, 0x1000, 0xdead_beef]);
    v
}

/// Runs both programs on one input; panics with the input on disagreement.
fn same(what: &str, ours: &Program, theirs: &Program, data: &SeccompData) {
    let a = interp::eval(ours, data).expect("secopt program runs");
    let b = interp::eval(theirs, data).expect("libseccomp program runs");
    assert_eq!(
        a, b,
        "{what}: secopt and libseccomp disagree on nr={} ({:#x}) arch={:#x} args={:x?}",
        data.nr, data.nr as u32, data.arch, data.args
    );
}

/// Calls `check` on every input of the sweep; returns how many there were.
fn sweep(
    arches: &[Arch],
    values: &BTreeMap<(Arch, u32), ArgValues>,
    check: &mut dyn FnMut(&SeccompData),
) -> usize {
    const FILLER: u64 = 0xdead_beef_0000_0001;
    let mut rng = Rng::new(0x5ec0_0c0f);
    let mut count = 0;
    let mut tokens: Vec<u32> = Arch::ALL.iter().map(|a| a.token()).collect();
    tokens.push(0x1234_5678);
    tokens.dedup();
    for token in tokens {
        // Numbers of every arch sharing the token (x86_64 and x32), or a plain range.
        let members: Vec<Arch> = arches
            .iter()
            .copied()
            .filter(|a| a.token() == token)
            .collect();
        let in_filter = !members.is_empty();
        let nrs: BTreeSet<u32> = if in_filter {
            members.iter().flat_map(|&a| numbers(a)).collect()
        } else {
            [0, 1, 59, 231, u32::MAX, X32_SYSCALL_BIT]
                .into_iter()
                .collect()
        };
        for nr in nrs {
            let base = [FILLER; 6];
            for args in [[0; 6], base] {
                check(&SeccompData::new(token, nr as i32, args));
                count += 1;
            }
            let owner = Arch::of_data(token, nr);
            let Some(vals) = owner
                .and_then(|a| values.get(&(a, nr)))
                .filter(|_| in_filter)
            else {
                continue;
            };
            // Cross product over the conditioned argument indexes (sampled when huge).
            each_combination(vals, base, 30_000, &mut rng, |args| {
                check(&SeccompData::new(token, nr as i32, args));
                count += 1;
            });
        }
    }
    count
}

fn resolve_options(arches: &[Arch], caps: CapSet) -> ResolveOptions {
    ResolveOptions {
        native: Some(arches[0]),
        arches: Some(arches.to_vec()),
        caps,
        kernel: Some(KernelVersion::new(6, 18)),
        strict: false,
        resolver: Some(libseccomp_resolver()),
    }
}

fn oracle_options(arches: &[Arch], caps: &[&str], optimize: u32) -> ProfileOptions {
    ProfileOptions {
        caps: caps.iter().map(|c| c.to_string()).collect(),
        kernel: (6, 18, 0),
        optimize,
        native: Some(oci_name(arches[0])),
        arches: Some(arches.iter().map(|&a| oci_name(a)).collect()),
    }
}

fn oci_profiles() -> Vec<String> {
    common::libseccomp_profiles::oci_profile_names()
}

fn compare_profile(
    name: &str,
    arches: &[Arch],
    caps: &[&str],
    capset: CapSet,
) -> (usize, usize, usize) {
    let relative = format!("oci/{name}");
    let json = load_profile(&relative).unwrap();
    let bytes = std::fs::read(profile_path(&relative)).unwrap();
    compare_json(name, &json, &bytes, arches, caps, capset)
}

/// secopt's program for the profile `bytes` (parsed as `json` for the oracle) against
/// libseccomp's, by the verifier and by the interpreter sweep; returns the number of
/// inputs swept and both lengths.
fn compare_json(
    name: &str,
    json: &serde_json::Value,
    bytes: &[u8],
    arches: &[Arch],
    caps: &[&str],
    capset: CapSet,
) -> (usize, usize, usize) {
    let optimize = if arches[0] == Arch::X86_64 { 1 } else { 2 };
    let theirs = build_filter(json, &oracle_options(arches, caps, optimize))
        .unwrap_or_else(|e| panic!("{name}: libseccomp: {e}"));
    let policy = policy::oci::parse(bytes, name).unwrap();
    let resolved = policy::resolve(&policy, &resolve_options(arches, capset)).unwrap();
    let ours = compile::compile(&resolved, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        ours.info().default_action,
        RetVal(theirs.default_action),
        "{name}: default action"
    );
    // Exact: secopt's verifier over all of seccomp_data.
    let verdict = verify::equivalent(ours.program(), &theirs.program, &VerifyOptions::default())
        .unwrap_or_else(|e| panic!("{name} {arches:?}: verifier: {e}"));
    match verdict {
        Verdict::Equal => {}
        Verdict::Different(cx) => panic!(
            "{name} on {arches:?}: secopt returns {} and libseccomp {} for {:x?}",
            cx.a, cx.b, cx.data
        ),
        other => panic!("{name} on {arches:?}: no verdict: {other:?}"),
    }
    // And the interpreter over the boundary sweep, independently of the verifier.
    let values = sweep_values(&theirs, arches);
    let what = format!("{name} on {arches:?}");
    let n = sweep(arches, &values, &mut |data| {
        same(&what, ours.program(), &theirs.program, data)
    });
    (n, ours.program().len(), theirs.program.len())
}

#[test]
fn oci_profiles_decide_like_libseccomp_on_every_arch_set() {
    let default_caps: Vec<&str> = common::libseccomp_profiles::DOCKER_DEFAULT_CAPS.to_vec();
    for arches in ARCH_SETS {
        for name in oci_profiles() {
            let start = Instant::now();
            let (n, ours, theirs) =
                compare_profile(&name, arches, &default_caps, CapSet::docker_default());
            eprintln!(
                "{name} {arches:?}: {n} inputs agree; secopt {ours} insns, libseccomp {theirs}; {:?}",
                start.elapsed()
            );
        }
    }
}

#[test]
fn privileged_docker_and_podman_profiles_decide_like_libseccomp() {
    let all: Vec<&str> = policy::ALL_CAPS.to_vec();
    for arches in [ARCH_SETS[0], ARCH_SETS[1]] {
        for name in [
            "docker-default.json",
            "podman-containers-common-default.json",
        ] {
            let (n, _, _) = compare_profile(name, arches, &all, CapSet::all());
            eprintln!("{name} {arches:?} all caps: {n} inputs agree");
        }
    }
}

/// A random OCI profile over a few syscalls with overlapping conditional rules.
fn random_profile(rng: &mut Rng) -> String {
    let names = ["read", "write", "mmap"];
    let actions = [
        "\"action\": \"SCMP_ACT_ALLOW\"",
        "\"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 2",
        "\"action\": \"SCMP_ACT_TRAP\"",
        "\"action\": \"SCMP_ACT_LOG\"",
    ];
    let ops = [
        "SCMP_CMP_EQ",
        "SCMP_CMP_NE",
        "SCMP_CMP_LT",
        "SCMP_CMP_LE",
        "SCMP_CMP_GT",
        "SCMP_CMP_GE",
        "SCMP_CMP_MASKED_EQ",
    ];
    let values: [u64; 8] = [
        0,
        1,
        5,
        6,
        0xFFFF_FFFF,
        0x1_0000_0005,
        0x5_0000_0000,
        u64::MAX,
    ];
    let mut rules = Vec::new();
    for _ in 0..1 + rng.below(5) {
        let spread = 1 + rng.below(3);
        let name = rng.pick(&names[..spread]);
        let kinds = if rng.chance(1, 2) { 2 } else { 4 };
        let action = actions[rng.below(kinds)];
        let mut args = Vec::new();
        for _ in 0..rng.below(3) {
            let op = rng.pick(&ops);
            args.push(format!(
                "{{\"index\": {}, \"value\": {}, \"valueTwo\": {}, \"op\": \"{op}\"}}",
                rng.below(2),
                rng.pick(&values),
                rng.pick(&values)
            ));
        }
        rules.push(format!(
            "{{\"names\": [\"{name}\"], {action}, \"args\": [{}]}}",
            args.join(", ")
        ));
    }
    format!(
        "{{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 99, \"syscalls\": [{}]}}",
        rules.join(",\n")
    )
}

/// Random profiles whose rules for one syscall overlap with different actions: libseccomp
/// decides by the shape of its rule tree, not by rule order, and secopt must follow.
///
/// The system library is 2.5.4, so secopt is compared in its `libseccomp_merge_bug` mode
/// (GHSA-4q85-33p6-j5g6); the default mode (2.6.1's corrected merge) is compared with
/// that, and the inputs where they differ are counted.
///
/// libseccomp's BPF code generator sometimes compiles its own tree wrongly: falling through
/// from a nested comparison of an argument's low word to a sibling comparison of its high
/// word, it does not reload the high word (the accumulator still holds the low one). Where
/// libseccomp's BPF and secopt disagree, the input is therefore also run through
/// libseccomp's pseudo filter code (its rule tree printed as `if`/`else`, without that code
/// generator); secopt must agree with that, and such filters are counted.
/// The rules secopt warns "never apply" change nothing in libseccomp's filter: taking their
/// syscall out of the entry gives a filter libseccomp builds to the same decisions. A rule
/// it does not warn about does change the filter (the check can fail). Podman's default
/// profile has one: `setns` is allowed without conditions by its entry 1, so entry 16's
/// ERRNO(1) for containers without CAP_SYS_ADMIN never applies.
#[test]
fn rules_secopt_says_never_apply_change_nothing_in_libseccomps_filter() {
    let arches = [Arch::X86_64];
    let synthetic = |rules: &str| -> serde_json::Value {
        serde_json::from_str(&format!(
            r#"{{"defaultAction": "SCMP_ACT_TRAP", "syscalls": [{rules}]}}"#
        ))
        .unwrap()
    };
    let arg1_is =
        |v: u64| format!(r#""args": [{{"index": 1, "value": {v}, "op": "SCMP_CMP_EQ"}}]"#);
    let podman = load_profile("oci/podman-containers-common-default.json").unwrap();
    // (profile, the entry and name to take out, whether secopt warns it never applies)
    let cases = [
        (podman, 16, "setns", true),
        (
            synthetic(
                r#"{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"},
                         {"names": ["mkdir"], "action": "SCMP_ACT_KILL"}"#,
            ),
            1,
            "mkdir",
            true,
        ),
        (
            synthetic(&format!(
                r#"{{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"}},
                   {{"names": ["mkdir"], "action": "SCMP_ACT_ALLOW", {}}}"#,
                arg1_is(0)
            )),
            1,
            "mkdir",
            true,
        ),
        (
            synthetic(
                r#"{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"},
                         {"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 2}"#,
            ),
            1,
            "mkdir",
            true,
        ),
        // A rule with the default action (TRAP) meant as an exception to a rule without
        // conditions, after it or before it: runc leaves it out (so removing it changes
        // nothing, as the oracle confirms), and the other rule decides every call.
        (
            synthetic(&format!(
                r#"{{"names": ["mkdir"], "action": "SCMP_ACT_ALLOW"}},
                   {{"names": ["mkdir"], "action": "SCMP_ACT_TRAP", {}}}"#,
                arg1_is(0)
            )),
            1,
            "mkdir",
            true,
        ),
        (
            synthetic(
                r#"{"names": ["mkdir"], "action": "SCMP_ACT_TRAP"},
                         {"names": ["mkdir"], "action": "SCMP_ACT_ALLOW"}"#,
            ),
            0,
            "mkdir",
            true,
        ),
        // An earlier rule with conditions, replaced by a later one without.
        (
            synthetic(&format!(
                r#"{{"names": ["mkdir"], "action": "SCMP_ACT_ALLOW", {}}},
                   {{"names": ["mkdir"], "action": "SCMP_ACT_KILL"}}"#,
                arg1_is(0)
            )),
            0,
            "mkdir",
            true,
        ),
        (
            synthetic(&format!(
                r#"{{"names": ["mkdir"], "action": "SCMP_ACT_ALLOW", {}}},
                   {{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", {}}}"#,
                arg1_is(0),
                arg1_is(1)
            )),
            1,
            "mkdir",
            false,
        ),
    ];
    for (i, (profile, entry, name, warned)) in cases.into_iter().enumerate() {
        let bytes = serde_json::to_vec(&profile).unwrap();
        let policy = policy::oci::parse(&bytes, "p.json").unwrap();
        let resolved =
            policy::resolve(&policy, &resolve_options(&arches, CapSet::default())).unwrap();
        let path = format!("$.syscalls[{entry}]");
        let warnings: Vec<_> = resolved
            .shadowed
            .iter()
            .filter(|w| {
                w.path == path
                    && w.message
                        .contains(&format!(" rule for {name} never applies"))
            })
            .collect();
        assert_eq!(
            warnings.len(),
            usize::from(warned),
            "case {i}: {:?}",
            resolved.shadowed
        );
        let mut without = profile.clone();
        let names = without["syscalls"][entry]["names"].as_array_mut().unwrap();
        names.retain(|n| n != name);
        if names.is_empty() {
            without["syscalls"].as_array_mut().unwrap().remove(entry);
        }
        let options = oracle_options(&arches, &[], 1);
        let with = build_filter(&profile, &options).unwrap();
        let without = build_filter(&without, &options).unwrap();
        let verdict =
            verify::equivalent(&with.program, &without.program, &VerifyOptions::default()).unwrap();
        assert_eq!(verdict == Verdict::Equal, warned, "case {i}: {verdict:?}");
    }
}

#[test]
fn random_overlapping_rules_decide_like_libseccomp() {
    let mut rng = Rng::new(42);
    let (mut agree, mut refused_both, mut codegen_bug_cases, mut ghsa_cases) = (0, 0, 0, 0);
    let mut warned_cases = 0;
    let as_254 = CompileOptions {
        libseccomp_merge_bug: true,
        ..Default::default()
    };
    for case in 0..500 {
        let text = random_profile(&mut rng);
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        // A third arch set in turn: x32 beside x86_64 (one arch token, split by number),
        // 64-bit arm, big-endian s390x, ppc64le, 32-bit arm.
        let others: [&[Arch]; 5] = [
            &[Arch::X86_64, Arch::X32],
            &[Arch::Aarch64],
            &[Arch::S390x],
            &[Arch::Ppc64le],
            &[Arch::Arm],
        ];
        for arches in [&[Arch::X86_64][..], &[Arch::X86][..], others[case % 5]] {
            let policy = policy::oci::parse(text.as_bytes(), "random.json").unwrap();
            let resolved =
                policy::resolve(&policy, &resolve_options(arches, CapSet::none())).unwrap();
            let ours = compile::compile(&resolved, &as_254);
            let fixed = compile::compile(&resolved, &CompileOptions::default());
            let theirs = match build_filter(&json, &oracle_options(arches, &[], 1)) {
                Ok(f) => f,
                Err(e) => {
                    // libseccomp refused a rule (EEXIST): secopt must refuse it too.
                    assert!(
                        matches!(ours, Err(compile::CompileError::Refused { .. })),
                        "case {case} {arches:?}: libseccomp refused ({e}) but secopt compiled:\n{text}"
                    );
                    refused_both += 1;
                    continue;
                }
            };
            let ours = ours.unwrap_or_else(|e| panic!("case {case} {arches:?}: {e}\n{text}"));
            let fixed = fixed.unwrap_or_else(|e| panic!("case {case} {arches:?}: {e}\n{text}"));
            let pfc = Pfc::parse(&theirs.pfc).unwrap();
            let values = sweep_values(&theirs, arches);
            let (mut codegen_bug, mut ghsa) = (false, false);
            sweep(arches, &values, &mut |data| {
                let a = interp::eval(ours.program(), data).unwrap();
                let b = interp::eval(&theirs.program, data).unwrap();
                if a != b {
                    assert_eq!(
                        Some(a.0),
                        pfc.decide(data),
                        "case {case} {arches:?}: secopt {a} differs from libseccomp's BPF {b} and from its PFC on {data:x?}\n{text}\n{}",
                        theirs.pfc
                    );
                    codegen_bug = true;
                }
                ghsa |= interp::eval(fixed.program(), data).unwrap() != a;
            });
            // secopt warns where libseccomp's BPF misses a reload: its model of libseccomp's
            // generator is checked here against the real one (on 2.6.1's merged tree, so
            // where 2.5.4's merge made another tree the two need not match).
            // Of the arches compared here (the warnings are of runc's: the profile lists
            // none, and runc would load the native arch alone).
            let compared = policy::Resolved {
                arches_as_runc_loads: None,
                ..resolved.clone()
            };
            let warned = compile::libseccomp_reload_warnings(&compared)
                .iter()
                .any(|w| w.message.contains("misses an accumulator reload"));
            // (Where libseccomp also drops the arch block's `ld [nr]`, the other warning,
            // `runc_unenforced`, is the one that explains the difference.)
            if !ghsa && compile::runc_unenforced(&compared).is_empty() {
                assert_eq!(
                    warned,
                    codegen_bug,
                    "case {case} {arches:?}: warned {warned}, libseccomp's BPF differs from its \
                     tree {codegen_bug}\n{text}\n{}\n{}",
                    theirs.pfc,
                    secopt::bpf::disasm::disassemble(&theirs.program, &Default::default())
                );
            }
            agree += usize::from(!codegen_bug);
            codegen_bug_cases += usize::from(codegen_bug);
            ghsa_cases += usize::from(ghsa);
            warned_cases += usize::from(warned);
        }
    }
    eprintln!(
        "{agree} filters agree with libseccomp 2.5.4's BPF; {refused_both} refused by both; \
         {codegen_bug_cases} where libseccomp's BPF miscompiles its own rule tree (secopt = \
         its PFC; {warned_cases} warned of it); {ghsa_cases} where 2.6.1's corrected merge \
         decides differently"
    );
    assert!(agree > 1300 && refused_both > 0 && codegen_bug_cases > 10);
}

/// A name the native arch lacks but another has (`chown32` on x86_64, `arch_prctl` on
/// aarch64) is a pseudo-syscall in libseccomp's rule database: its rules never reach the
/// filter, but two that conflict are refused (EEXIST) as anywhere, and runc fails to start.
/// That holds on the arches whose libseccomp backend has no `rule_add` of its own; on those
/// with `abi_rule_add` (the ones that multiplex socket calls: x86, s390x, ppc64le) a rule on
/// such a pseudo-number is dropped, so the conflict goes unnoticed (src/arch.c,
/// src/syscalls.c). secopt refuses exactly the profiles libseccomp refuses.
#[test]
fn conflicts_on_another_arch_s_names_are_refused_as_libseccomp_refuses_them() {
    let mut refusals = 0;
    for (arches, name, kept) in [
        (&[Arch::X86_64][..], "chown32", true),
        (&[Arch::X86_64, Arch::X86, Arch::X32][..], "chown32", true),
        (&[Arch::Aarch64][..], "arch_prctl", true),
        (&[Arch::Riscv64][..], "open", true),
        (&[Arch::S390x][..], "arch_prctl", false),
        (&[Arch::Ppc64le][..], "arch_prctl", false),
        (&[Arch::X86][..], "newfstatat", false),
    ] {
        for second in ["SCMP_ACT_KILL", "SCMP_ACT_ALLOW"] {
            let text = format!(
                r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
                    {{"names": ["read", "{name}"], "action": "SCMP_ACT_ALLOW",
                      "args": [{{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}}]}},
                    {{"names": ["{name}"], "action": "{second}",
                      "args": [{{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}}]}}]}}"#
            );
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            let theirs = build_filter(&json, &oracle_options(arches, &[], 1));
            let policy = policy::oci::parse(text.as_bytes(), "pseudo.json").unwrap();
            let resolved =
                policy::resolve(&policy, &resolve_options(arches, CapSet::none())).unwrap();
            let ours = compile::compile(&resolved, &CompileOptions::default());
            let conflict = kept && second == "SCMP_ACT_KILL";
            match (&theirs, &ours) {
                (Err(_), Err(compile::CompileError::Refused { syscall, .. })) if conflict => {
                    assert_eq!(syscall, name, "{arches:?}");
                    refusals += 1;
                }
                (Ok(_), Ok(_)) if !conflict => {}
                _ => panic!(
                    "{arches:?} {name} {second}: libseccomp {:?}, secopt {:?}",
                    theirs.as_ref().err(),
                    ours.as_ref().err()
                ),
            }
        }
    }
    assert_eq!(refusals, 4);
}

/// Random rules on names some arches lack (another arch's syscalls, and socket calls that
/// multiplexing arches reach only through `socketcall`): libseccomp keeps, drops, rewrites
/// or duplicates them depending on the arch's backend, and refuses conflicts, or loops, in
/// whatever it keeps. secopt must refuse exactly the profiles libseccomp refuses, name the
/// syscall it fails on, and decide like it on the others. libseccomp is run on a thread with
/// a deadline: a profile it never finishes must be one secopt refuses as a loop.
#[test]
fn random_rules_on_names_an_arch_lacks_are_refused_as_libseccomp_refuses_them() {
    let names = ["recv", "send", "arch_prctl", "chown32", "read"];
    let actions = [
        "\"action\": \"SCMP_ACT_ALLOW\"",
        "\"action\": \"SCMP_ACT_KILL\"",
        "\"action\": \"SCMP_ACT_TRAP\"",
    ];
    let ops = ["SCMP_CMP_EQ", "SCMP_CMP_NE", "SCMP_CMP_GT"];
    let values: [u64; 3] = [0, 1, 0x1_0000_0000];
    let arch_sets: [&[Arch]; 5] = [
        &[Arch::S390x],
        &[Arch::Ppc64le],
        &[Arch::X86],
        &[Arch::X86_64],
        &[Arch::Aarch64],
    ];
    let mut rng = Rng::new(7);
    let (mut accepted, mut refused, mut loops) = (0, 0, 0);
    for case in 0..300 {
        // One or two names per profile, so that rules meet.
        let picked = [rng.pick(&names), rng.pick(&names)];
        let mut rules = Vec::new();
        for _ in 0..2 + rng.below(4) {
            let mut args = Vec::new();
            for (index, odds) in [(0, 3), (1, 1)] {
                if rng.chance(odds, 4) {
                    args.push(format!(
                        "{{\"index\": {index}, \"value\": {}, \"op\": \"{}\"}}",
                        rng.pick(&values),
                        rng.pick(&ops)
                    ));
                }
            }
            rules.push(format!(
                "{{\"names\": [\"{}\"], {}, \"args\": [{}]}}",
                rng.pick(&picked),
                rng.pick(&actions),
                args.join(", ")
            ));
        }
        let text = format!(
            "{{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{}]}}",
            rules.join(",\n")
        );
        let arches = arch_sets[case % arch_sets.len()];
        let policy = policy::oci::parse(text.as_bytes(), "random.json").unwrap();
        let resolved = policy::resolve(&policy, &resolve_options(arches, CapSet::none())).unwrap();
        let as_254 = CompileOptions {
            libseccomp_merge_bug: true,
            ..Default::default()
        };
        let ours = compile::compile(&resolved, &as_254);
        let (tx, rx) = std::sync::mpsc::channel();
        let (json, options) = (
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            oracle_options(arches, &[], 1),
        );
        std::thread::spawn(move || tx.send(build_filter(&json, &options)));
        let Ok(theirs) = rx.recv_timeout(std::time::Duration::from_secs(20)) else {
            // libseccomp does not finish (the thread spins on until the process ends).
            assert!(
                matches!(&ours, Err(compile::CompileError::Refused { reason, .. }) if reason.contains("cycle")),
                "case {case} {arches:?}: libseccomp never finishes, secopt: {:?}\n{text}",
                ours.as_ref().err()
            );
            loops += 1;
            continue;
        };
        match (theirs, ours) {
            (Err(e), Err(compile::CompileError::Refused { syscall, .. })) => {
                // Both name the syscall as the profile wrote it (also where a multiplexer,
                // `socketcall`, carries its rules).
                assert!(
                    e.starts_with(&format!("{syscall}:")),
                    "case {case} {arches:?}: libseccomp {e}, secopt {syscall}\n{text}"
                );
                refused += 1;
            }
            (Ok(theirs), Ok(ours)) => {
                let pfc = Pfc::parse(&theirs.pfc).unwrap();
                let values = sweep_values(&theirs, arches);
                sweep(arches, &values, &mut |data| {
                    let a = interp::eval(ours.program(), data).unwrap();
                    if a != interp::eval(&theirs.program, data).unwrap() {
                        assert_eq!(
                            Some(a.0),
                            pfc.decide(data),
                            "case {case} {arches:?} {data:x?}\n{text}"
                        );
                    }
                });
                accepted += 1;
            }
            (theirs, ours) => panic!(
                "case {case} {arches:?}: libseccomp {:?}, secopt {:?}\n{text}",
                theirs.err(),
                ours.err()
            ),
        }
    }
    eprintln!("{accepted} taken by both, {refused} refused by both, {loops} libseccomp loops on");
    assert!(accepted > 50 && refused > 20, "{accepted} {refused}");
}

/// runc adds the rules in the profile's order and stops at the first libseccomp refuses;
/// secopt merges each syscall's rules on its own, and of several refusals reports the one
/// runc meets first, whichever tree it is in (here a pseudo-syscall's, which secopt merges
/// after the real ones).
#[test]
fn of_several_refusals_the_one_runc_meets_first_is_reported() {
    let conflict = |name: &str| {
        format!(
            r#"{{"names": ["{name}"], "action": "SCMP_ACT_ALLOW", "args": [{{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}}]}},
               {{"names": ["{name}"], "action": "SCMP_ACT_KILL", "args": [{{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}}]}}"#
        )
    };
    let arches = [Arch::X86_64];
    for (first, second) in [("chown32", "read"), ("read", "chown32")] {
        let text = format!(
            r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}, {}]}}"#,
            conflict(first),
            conflict(second)
        );
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let theirs = build_filter(&json, &oracle_options(&arches, &[], 1)).unwrap_err();
        let policy = policy::oci::parse(text.as_bytes(), "two.json").unwrap();
        let resolved = policy::resolve(&policy, &resolve_options(&arches, CapSet::none())).unwrap();
        match compile::compile(&resolved, &CompileOptions::default()) {
            Err(compile::CompileError::Refused {
                syscall, origin, ..
            }) => {
                assert!(
                    theirs.starts_with(&format!("{first}:")),
                    "libseccomp: {theirs}"
                );
                assert_eq!(
                    (syscall.as_str(), origin.as_str()),
                    (first, "$.syscalls[1]")
                );
            }
            other => panic!("{first} then {second}: {other:?}"),
        }
    }
}

/// Rules libseccomp 2.5.4 merges slowly but takes (tests/data/slow-merge.json: its merge
/// visits shared subtrees once per path to them; secopt needs more than 2^24 steps to
/// reproduce it, and used to stop there and call that a cycle): secopt compiles them and
/// decides like libseccomp (its BPF, or its PFC where its BPF miscompiles its own tree; see
/// `random_overlapping_rules_decide_like_libseccomp`). Both times are printed (with
/// `--release -- --nocapture`, the figures docs/kernel-facts.md quotes).
#[test]
fn rules_libseccomp_merges_slowly_decide_like_libseccomp() {
    let text = std::fs::read_to_string("tests/data/slow-merge.json").unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let arches = [Arch::X86_64];
    let started = Instant::now();
    let theirs =
        build_filter(&json, &oracle_options(&arches, &[], 1)).expect("libseccomp takes them");
    let libseccomp_time = started.elapsed();
    let policy = policy::oci::parse(text.as_bytes(), "slow-merge.json").unwrap();
    let resolved = policy::resolve(&policy, &resolve_options(&arches, CapSet::none())).unwrap();
    let as_254 = CompileOptions {
        libseccomp_merge_bug: true,
        ..Default::default()
    };
    let started = Instant::now();
    let ours = compile::compile(&resolved, &as_254).unwrap_or_else(|e| panic!("{e}"));
    let (major, minor, micro) = libseccomp_version();
    eprintln!(
        "libseccomp {major}.{minor}.{micro} builds the filter in {libseccomp_time:.2?}; \
         secopt compiles it (optimized, with its proof) in {:.2?}",
        started.elapsed()
    );
    let pfc = Pfc::parse(&theirs.pfc).unwrap();
    let values = sweep_values(&theirs, &arches);
    let (mut differ, mut decided_by_read_rules) = (0, BTreeSet::new());
    let n = sweep(&arches, &values, &mut |data| {
        let a = interp::eval(ours.program(), data).unwrap();
        let b = interp::eval(&theirs.program, data).unwrap();
        if a != b {
            assert_eq!(Some(a.0), pfc.decide(data), "{data:x?}\n{}", theirs.pfc);
            differ += 1;
        }
        if data.arch == Arch::X86_64.token() && data.nr == 0 {
            decided_by_read_rules.insert(a);
        }
    });
    eprintln!("{n} inputs; {differ} where libseccomp's BPF miscompiles its tree");
    // Not a vacuous tree: `read` gets several of the rules' actions.
    assert!(
        decided_by_read_rules.len() >= 3,
        "{decided_by_read_rules:?}"
    );
}

/// The PFC oracle applies the bit-30 split libseccomp's BPF makes between the x86_64 and x32
/// blocks (which share a token, and which its PFC prints as two `if ($arch == …)` blocks):
/// it agrees with libseccomp's own BPF on both ABIs' numbers and on -1.
#[test]
fn the_pfc_oracle_tells_x32_numbers_from_x86_64_ones() {
    let text = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["write"], "action": "SCMP_ACT_TRAP"}]}"#;
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    for arches in [&[Arch::X86_64, Arch::X32][..], &[Arch::X86_64][..]] {
        let theirs = build_filter(&json, &oracle_options(arches, &[], 1)).unwrap();
        let pfc = Pfc::parse(&theirs.pfc).unwrap();
        for nr in [
            0u32,
            1,
            2,
            X32_SYSCALL_BIT,
            X32_SYSCALL_BIT | 1,
            X32_SYSCALL_BIT | 2,
            u32::MAX,
        ] {
            let data = SeccompData::new(Arch::X86_64.token(), nr as i32, [0; 6]);
            let bpf = interp::eval(&theirs.program, &data).unwrap();
            assert_eq!(
                pfc.decide(&data),
                Some(bpf.0),
                "{arches:?} nr {nr:#x}\n{}",
                theirs.pfc
            );
        }
    }
}

/// GHSA-4q85-33p6-j5g6, by hand: two `<` rules on one argument whose constants share the
/// high word (1), the less specific one first. For `args[0] = 0` (high word 0 < 1) both
/// match. libseccomp 2.6.1 keeps the more specific rule's action, ERRNO(2); 2.5.4 (the
/// system library) keeps the first rule's, ALLOW. Where the high word equals 1, the low
/// words decide and both versions agree: below 5 ERRNO(2), from 5 to 6 ALLOW.
#[test]
fn ghsa_4q85_merge_of_two_less_than_rules() {
    let text = r#"{"defaultAction": "SCMP_ACT_KILL_PROCESS", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 4294967303, "op": "SCMP_CMP_LT"}]},
        {"names": ["read"], "action": "SCMP_ACT_ERRNO", "errnoRet": 2,
         "args": [{"index": 0, "value": 4294967301, "op": "SCMP_CMP_LT"}]}]}"#;
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let arches = [Arch::X86_64];
    let theirs = build_filter(&json, &oracle_options(&arches, &[], 1)).unwrap();
    let policy = policy::oci::parse(text.as_bytes(), "ghsa.json").unwrap();
    let resolved = policy::resolve(&policy, &resolve_options(&arches, CapSet::none())).unwrap();
    let fixed = compile::compile(&resolved, &CompileOptions::default()).unwrap();
    let old = compile::compile(
        &resolved,
        &CompileOptions {
            libseccomp_merge_bug: true,
            ..Default::default()
        },
    )
    .unwrap();
    let run = |p: &Program, a0: u64| {
        interp::eval(
            p,
            &SeccompData::new(Arch::X86_64.token(), 0, [a0, 0, 0, 0, 0, 0]),
        )
        .unwrap()
    };
    let errno2 = RetVal::errno(2);
    for (a0, want_fixed, want_old) in [
        (0, errno2, RetVal::ALLOW),
        (0xFFFF_FFFF, errno2, RetVal::ALLOW),
        (0x1_0000_0004, errno2, errno2),
        (0x1_0000_0005, RetVal::ALLOW, RetVal::ALLOW),
        (0x1_0000_0006, RetVal::ALLOW, RetVal::ALLOW),
        (0x1_0000_0007, RetVal::KILL_PROCESS, RetVal::KILL_PROCESS),
    ] {
        assert_eq!(
            run(fixed.program(), a0),
            want_fixed,
            "2.6.1 semantics, a0={a0:#x}"
        );
        assert_eq!(
            run(old.program(), a0),
            want_old,
            "2.5.4 semantics, a0={a0:#x}"
        );
        assert_eq!(
            run(&theirs.program, a0),
            want_old,
            "system libseccomp, a0={a0:#x}"
        );
    }
}

/// A libseccomp (2.5.4; the code is unchanged in 2.6.1) code-generation bug, by hand: two
/// ORed `<` rules on one argument (runc turns `a1 < 5 && a1 < 2^64-1` into two rules).
/// The tree says: for `a1 = 0xffffffff` (high word 0), `a1 < 5` fails, then
/// `a1 < 0xffffffffffffffff` holds: ERRNO(1). libseccomp's BPF falls from the low-word test
/// of the first rule into the high-word test of the second without reloading the high
/// word, compares the low word 0xffffffff instead, and ALLOWs. secopt follows the tree
/// (libseccomp's own pseudo filter code agrees).
#[test]
fn libseccomp_codegen_misses_an_accumulator_reload() {
    let text = r#"{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
        {"names": ["write"], "action": "SCMP_ACT_ERRNO",
         "args": [{"index": 1, "value": 18446744073709551615, "op": "SCMP_CMP_LT"},
                  {"index": 1, "value": 5, "op": "SCMP_CMP_LT"}]}]}"#;
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let arches = [Arch::X86_64];
    let theirs = build_filter(&json, &oracle_options(&arches, &[], 1)).unwrap();
    let pfc = Pfc::parse(&theirs.pfc).unwrap();
    let policy = policy::oci::parse(text.as_bytes(), "reload.json").unwrap();
    let resolved = policy::resolve(&policy, &resolve_options(&arches, CapSet::none())).unwrap();
    let ours = compile::compile(&resolved, &CompileOptions::default()).unwrap();
    let data = |a1: u64| SeccompData::new(Arch::X86_64.token(), 1, [0, a1, 0, 0, 0, 0]);
    let eperm = RetVal::errno(1);
    assert_eq!(
        interp::eval(&theirs.program, &data(0xFFFF_FFFF)).unwrap(),
        RetVal::ALLOW
    );
    assert_eq!(pfc.decide(&data(0xFFFF_FFFF)), Some(eperm.0));
    assert_eq!(
        interp::eval(ours.program(), &data(0xFFFF_FFFF)).unwrap(),
        eperm
    );
    // Elsewhere all three agree.
    for (a1, want) in [
        (4, eperm),
        (5, eperm),
        (u64::MAX, RetVal::ALLOW),
        (0x1_0000_0000, eperm),
    ] {
        assert_eq!(
            interp::eval(&theirs.program, &data(a1)).unwrap(),
            want,
            "{a1:#x}"
        );
        assert_eq!(
            interp::eval(ours.program(), &data(a1)).unwrap(),
            want,
            "{a1:#x}"
        );
    }
    // secopt says so, with an input on which libseccomp's real filter and secopt's differ.
    let warnings = compile::libseccomp_reload_warnings(&resolved);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // The compiled filter's metadata carries it (`--emit json`'s `warnings`).
    assert!(ours.info().warnings.contains(&warnings[0]));
    let message = &warnings[0].message;
    assert!(
        message.contains(
            "for `write` on x86_64 tests the low word of args[1] where its rules \
                          test the high word of args[1]"
        ),
        "{message}"
    );
    let listed = message
        .split_once("with args [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .unwrap_or_else(|| panic!("no input in: {message}"));
    let args: Vec<u64> = listed
        .split(", ")
        .map(|v| u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap())
        .collect();
    let input = SeccompData::new(Arch::X86_64.token(), 1, args.try_into().unwrap());
    assert_eq!(
        interp::eval(&theirs.program, &input).unwrap(),
        RetVal::ALLOW
    );
    assert_eq!(interp::eval(ours.program(), &input).unwrap(), eperm);
    assert!(
        message.contains("libseccomp's filter returns ALLOW where the rules give ERRNO(1)"),
        "{message}"
    );
}

/// Socket and IPC names that an arch has no syscall for (`recv`, `send`, `accept`, `semop`
/// on i386; `recv`, `send`, `accept`, `semop` on s390x; `semop` on ppc64le): libseccomp
/// resolves them to pseudo-numbers and still adds their rules to `socketcall`/`ipc` with
/// `arg0 == call` (src/syscalls.c `abi_rule_add`, 2.5.4 and 2.6.1 alike), so secopt must
/// too. The unconditional `read`/`write` rule keeps libseccomp's code generator away from
/// the missing-load bug shown in the next test.
#[test]
fn names_reached_only_through_socketcall_or_ipc_decide_like_libseccomp() {
    let text = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["recv", "send"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
         "args": [{"index": 0, "value": 7, "op": "SCMP_CMP_EQ"},
                  {"index": 2, "value": 64, "op": "SCMP_CMP_GT"}]},
        {"names": ["accept", "recvfrom"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["semop", "semtimedop"], "action": "SCMP_ACT_TRAP",
         "args": [{"index": 1, "value": 3, "op": "SCMP_CMP_LE"}]},
        {"names": ["socketcall"], "action": "SCMP_ACT_LOG",
         "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}]}]}"#;
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    for arches in [ARCH_SETS[0], &[Arch::X86][..], ARCH_SETS[2], ARCH_SETS[3]] {
        let (n, ours, theirs) = compare_json(
            "multiplexed.json",
            &json,
            text.as_bytes(),
            arches,
            &[],
            CapSet::none(),
        );
        eprintln!("multiplexed.json {arches:?}: {n} inputs agree; secopt {ours} insns, libseccomp {theirs}");
    }
    // Spot checks on i386 from the uapi numbers: socketcall 102 with SYS_RECV = 10 and the
    // arg2 condition kept; ipc 117 with SEMOP = 1, SEMTIMEDOP = 4.
    let policy = policy::oci::parse(text.as_bytes(), "multiplexed.json").unwrap();
    let resolved =
        policy::resolve(&policy, &resolve_options(&[Arch::X86], CapSet::none())).unwrap();
    let ours = compile::compile(&resolved, &CompileOptions::default()).unwrap();
    let run = |nr: i32, args: [u64; 6]| {
        interp::eval(
            ours.program(),
            &SeccompData::new(Arch::X86.token(), nr, args),
        )
        .unwrap()
    };
    assert_eq!(run(102, [10, 0, 65, 0, 0, 0]), RetVal::errno(13));
    assert_eq!(run(102, [10, 0, 64, 0, 0, 0]), RetVal::errno(1));
    assert_eq!(run(102, [5, 0, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(117, [4, 3, 0, 0, 0, 0]), RetVal(0x0003_0000));
    assert_eq!(run(117, [1, 4, 0, 0, 0, 0]), RetVal::errno(1));
}

/// What `compile::multiplexed_conditions` warns about, shown on libseccomp's own filter: a
/// `socket` rule allowing AF_INET (2) only, on i386, is also applied to `socketcall(SYS_SOCKET
/// = 1, …)` (102) with its domain condition replaced by the call number, so libseccomp's
/// program allows socket creation through socketcall whatever the domain (which is in memory,
/// at the address in args[1]). secopt's filter decides alike (`compare_json`) and says so in a
/// warning at the rule; on x86_64, where there is no socketcall, neither happens.
#[test]
fn conditions_libseccomp_drops_through_socketcall_are_warned_about() {
    let text = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["socket"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"}]}]}"#;
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let theirs = build_filter(&json, &oracle_options(&[Arch::X86], &[], 2)).unwrap();
    for address in [0u64, 0x1000, 0xffff_f000] {
        let data = SeccompData::new(Arch::X86.token(), 102, [1, address, 0, 0, 0, 0]);
        assert_eq!(interp::eval(&theirs.program, &data).unwrap(), RetVal::ALLOW);
    }
    compare_json(
        "socket.json",
        &json,
        text.as_bytes(),
        &[Arch::X86],
        &[],
        CapSet::none(),
    );
    let warnings = |arches: &[Arch]| {
        let policy = policy::oci::parse(text.as_bytes(), "socket.json").unwrap();
        let resolved = policy::resolve(&policy, &resolve_options(arches, CapSet::none())).unwrap();
        compile::lowering_warnings(&resolved)
    };
    let on_x86 = warnings(&[Arch::X86]);
    assert_eq!(on_x86.len(), 1, "{on_x86:?}");
    assert_eq!(on_x86[0].kind, policy::WarningKind::NotEnforced);
    assert_eq!(on_x86[0].path, "$.syscalls[1]");
    assert!(
        on_x86[0].message.contains("socketcall(2)"),
        "{}",
        on_x86[0].message
    );
    assert_eq!(warnings(&[Arch::X86_64]), []);
}

/// A libseccomp (2.5.4; the code is unchanged in 2.6.1) code-generation bug: with the
/// linear layout, the `ld [nr]` of an arch block belongs to the first syscall in priority
/// order (src/gen_bpf.c `_gen_bpf_syscalls` passes `acc_reset` only for `s_head`), but
/// pseudo-syscalls are left out of the BPF (`_skip_syscall`). When the first one is a
/// pseudo-syscall — here `accept` on i386 (pseudo-number -105, unconditional, so of the
/// highest priority, ahead of the conditional `personality` and `socketcall` rules) — the
/// block has no `ld [nr]`: it compares the arch token with syscall numbers, and every
/// i386 call gets the default action. secopt follows libseccomp's rule tree (its pseudo
/// filter code); with the binary-tree layout, which loads `nr` itself, libseccomp's BPF
/// agrees. An x86_64 or x32 block alone loads `nr` for its x32-bit check and is not hit;
/// x86_64 with x32 share a block that is (`runc_unenforced_names_exactly_the_blocks_…`).
#[test]
fn libseccomp_codegen_drops_the_syscall_load_after_a_pseudo_syscall() {
    let text = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["accept"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]}"#;
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let arches = [Arch::X86_64, Arch::X86];
    let linear = build_filter(&json, &oracle_options(&arches, &[], 1)).unwrap();
    let tree = build_filter(&json, &oracle_options(&arches, &[], 2)).unwrap();
    let pfc = Pfc::parse(&linear.pfc).unwrap();
    let policy = policy::oci::parse(text.as_bytes(), "pseudo.json").unwrap();
    let resolved = policy::resolve(&policy, &resolve_options(&arches, CapSet::none())).unwrap();
    let ours = compile::compile(&resolved, &CompileOptions::default()).unwrap();
    let i386 = |nr: i32, a0: u64| SeccompData::new(Arch::X86.token(), nr, [a0, 0, 0, 0, 0, 0]);
    // socketcall(SYS_ACCEPT = 5) and personality(8) (136 on i386).
    for data in [i386(102, 5), i386(136, 8)] {
        assert_eq!(
            interp::eval(&linear.program, &data).unwrap(),
            RetVal::errno(1),
            "libseccomp's linear BPF: {data:x?}"
        );
        assert_eq!(
            pfc.decide(&data),
            Some(RetVal::ALLOW.0),
            "its PFC: {data:x?}"
        );
        assert_eq!(interp::eval(&tree.program, &data).unwrap(), RetVal::ALLOW);
        assert_eq!(interp::eval(ours.program(), &data).unwrap(), RetVal::ALLOW);
    }
    // The load is really missing: the i386 block's first instruction after the arch test
    // is a comparison, not `ld [nr]`.
    let loads_nr = linear
        .program
        .insns
        .iter()
        .filter(|i| i.code == 0x20 && i.k == 0)
        .count();
    assert_eq!(loads_nr, 1, "only the x86_64 block loads nr");
    // Elsewhere they agree.
    let values = sweep_values(&linear, &arches);
    sweep(&arches, &values, &mut |data| {
        let a = interp::eval(ours.program(), data).unwrap();
        let b = interp::eval(&tree.program, data).unwrap();
        assert_eq!(a, b, "{data:x?}");
    });
}

/// `compile::NEWER_THAN_LIBSECCOMP_2_5_5` (the names `secopt compile` warns runc may skip)
/// against the system library, when it is such a libseccomp: none of the names resolves on
/// any arch, and every other name of secopt's x86_64 and aarch64 tables does.
#[test]
fn names_newer_than_libseccomp_2_5_5_are_the_ones_it_does_not_know() {
    let version = libseccomp_version();
    if version > (2, 5, 5) {
        eprintln!("system libseccomp {version:?} is newer than 2.5.5: nothing to check");
        return;
    }
    for name in compile::NEWER_THAN_LIBSECCOMP_2_5_5 {
        for arch in Arch::ALL {
            assert_eq!(libseccomp_nr(arch, name), None, "{name} on {arch}");
        }
    }
    for arch in [Arch::X86_64, Arch::Aarch64] {
        for (nr, name) in arch.syscalls().iter() {
            if !compile::NEWER_THAN_LIBSECCOMP_2_5_5.contains(&name) {
                assert_eq!(libseccomp_nr(arch, name), Some(nr), "{name} on {arch}");
            }
        }
    }
}

/// `secopt compile --syscall-table libseccomp` resolves as this test suite's independent
/// resolver does, on every arch and name either table has.
#[cfg(feature = "libseccomp")]
#[test]
fn the_librarys_libseccomp_table_is_the_tests_one() {
    let library = policy::SyscallResolver::libseccomp();
    let mut checked = 0;
    for arch in Arch::ALL {
        let names = Arch::ALL
            .iter()
            .flat_map(|a| a.syscalls().iter().map(|(_, n)| n))
            .chain(["recv", "send", "semop", "no_such_call"]);
        for name in names {
            assert_eq!(
                library.lookup(arch, name),
                libseccomp_nr(arch, name),
                "{name} on {arch}"
            );
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked}");
}

/// runc's ENOSYS stub as libcontainer/seccomp/patchbpf/enosys_linux.go describes it, for
/// one input: `Some(ENOSYS)` when the stub answers, `None` when the filter does. `highest`
/// is, per arch, the largest number libseccomp gives any of the profile's names (negative
/// pseudo-numbers never count, as in `findLastSyscalls`).
fn runc_stub(highest: &BTreeMap<Arch, u32>, data: &SeccompData) -> Option<RetVal> {
    let nr = data.nr as u32;
    let enosys = Some(RetVal::errno(38));
    let max = |a: Arch| highest.get(&a).copied().filter(|&m| m != 0);
    let above = |m: u32| if nr > m { enosys } else { None };
    let bit30 = nr & X32_SYSCALL_BIT != 0;
    if data.arch == Arch::X86_64.token() {
        return match (max(Arch::X86_64), max(Arch::X32)) {
            (Some(x64), Some(x32)) => above(if bit30 { x32 } else { x64 }),
            (Some(x64), None) if !bit30 => above(x64),
            (None, Some(x32)) if bit30 => above(x32),
            _ => None,
        };
    }
    let arch = Arch::from_token(data.arch).first().copied()?;
    let m = max(arch)?;
    if arch == Arch::S390x && nr == 0 {
        return enosys;
    }
    above(m)
}

/// The OCI config's `architectures` for a profile on `native`, as runc gets them: the
/// profile's own list, or moby's `archMap` entry for the native arch with its
/// sub-architectures (libcontainer/specconv; moby profiles/seccomp `setupSeccomp`).
fn config_architectures(profile: &serde_json::Value, native: Arch) -> Vec<String> {
    let names = |v: Option<&serde_json::Value>| -> Vec<String> {
        v.and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let mut listed = names(profile.get("architectures"));
    for entry in profile
        .get("archMap")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
    {
        if entry
            .get("architecture")
            .and_then(serde_json::Value::as_str)
            == Some(&oci_name(native))
        {
            listed.push(oci_name(native));
            listed.extend(names(entry.get("subArchitectures")));
        }
    }
    listed
}

/// `--runc-compat`: secopt's program equals runc's stub in front of libseccomp's program.
#[test]
fn runc_compat_adds_runcs_enosys_stub() {
    let caps: Vec<&str> = common::libseccomp_profiles::DOCKER_DEFAULT_CAPS.to_vec();
    let with_stub = CompileOptions {
        runc_compat: true,
        ..Default::default()
    };
    let mut stubbed = 0;
    for arches in [
        ARCH_SETS[0],
        &[Arch::X86_64][..],
        ARCH_SETS[1],
        ARCH_SETS[2],
    ] {
        for name in oci_profiles() {
            let relative = format!("oci/{name}");
            let json = load_profile(&relative).unwrap();
            let opts = oracle_options(arches, &caps, 2);
            let theirs = build_filter(&json, &opts).unwrap();
            // runc's stub covers the arches the OCI config lists; the filter's arches (the
            // `--arch` list here) do not add to them.
            let listed = config_architectures(&json, arches[0]);
            let mut highest = BTreeMap::new();
            for n in common::libseccomp_profiles::applicable_names(&json, &opts).unwrap() {
                for &a in arches.iter().filter(|&&a| listed.contains(&oci_name(a))) {
                    if let Ok(s) = ScmpSyscall::from_name_by_arch(&n, scmp_arch(a)) {
                        let v = i32::from(s);
                        if v > 0 {
                            let e = highest.entry(a).or_insert(0u32);
                            *e = (*e).max(v as u32);
                        }
                    }
                }
            }
            let default_allows = matches!(
                json["defaultAction"].as_str(),
                Some("SCMP_ACT_ALLOW" | "SCMP_ACT_LOG" | "SCMP_ACT_TRACE")
            );
            let bytes = std::fs::read(profile_path(&relative)).unwrap();
            let policy = policy::oci::parse(&bytes, &name).unwrap();
            let resolved =
                policy::resolve(&policy, &resolve_options(arches, CapSet::docker_default()))
                    .unwrap();
            let ours = compile::compile(&resolved, &with_stub).unwrap();
            // The stub is there when it decides something: a non-allowing default and
            // some arch with a threshold (an empty profile gets none).
            let has_section = highest.values().any(|&m| m != 0);
            assert_eq!(
                ours.info().runc_compat,
                !default_allows && has_section,
                "{name}"
            );
            let values = sweep_values(&theirs, arches);
            sweep(arches, &values, &mut |data| {
                let filter = interp::eval(&theirs.program, data).unwrap();
                let want = match runc_stub(&highest, data) {
                    Some(enosys) if !default_allows => {
                        stubbed += 1;
                        enosys
                    }
                    _ => filter,
                };
                let got = interp::eval(ours.program(), data).unwrap();
                assert_eq!(got, want, "{name} {arches:?} {data:x?}");
            });
        }
    }
    assert!(stubbed > 1000, "{stubbed}");

    // Spot checks on Docker's profile, from the text of runc's stub: -1 has bit 30 set
    // and with x32 in the filter is compared with x32's highest number; without x32 it
    // goes to the filter, which gives it the default; on aarch64 -1 is above everything.
    let docker = |arches: &[Arch]| {
        let bytes = std::fs::read(profile_path("oci/docker-default.json")).unwrap();
        let policy = policy::oci::parse(&bytes, "docker-default.json").unwrap();
        let resolved =
            policy::resolve(&policy, &resolve_options(arches, CapSet::docker_default())).unwrap();
        compile::compile(&resolved, &with_stub).unwrap()
    };
    let run = |f: &compile::CompiledFilter, arch: Arch, nr: i32| {
        interp::eval(f.program(), &SeccompData::new(arch.token(), nr, [0; 6])).unwrap()
    };
    let enosys = RetVal::errno(38);
    assert_eq!(run(&docker(ARCH_SETS[0]), Arch::X86_64, -1), enosys);
    assert_eq!(
        run(&docker(&[Arch::X86_64]), Arch::X86_64, -1),
        RetVal::errno(1)
    );
    assert_eq!(run(&docker(ARCH_SETS[1]), Arch::Aarch64, -1), enosys);
    assert_eq!(run(&docker(ARCH_SETS[1]), Arch::Aarch64, 5000), enosys);
    assert_eq!(run(&docker(ARCH_SETS[1]), Arch::Aarch64, 0), RetVal::ALLOW); // io_setup
    assert_eq!(run(&docker(&[Arch::S390x]), Arch::S390x, 0), enosys);
}

/// A Firecracker file whose third rule sends libseccomp's rule tree into a cycle
/// (`tests/data/firecracker-loop.json`, cut down from a random file on which Firecracker's
/// `seccompiler-bin` 1.11.0 and 1.17.0-dev never finished: `tests/firecracker_seccompiler_bin.rs`).
/// Firecracker's compiler steps with the system libseccomp finish the first two rules and never
/// the three; secopt refuses the file at the third rule, through the Firecracker front end.
#[test]
fn a_firecracker_file_libseccomp_loops_on_is_refused_at_the_rule() {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/firecracker-loop.json"),
    )
    .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let run = |json: serde_json::Value| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(firecracker_with_libseccomp(&json)));
        // Microseconds when it finishes; a thread that does not spins on until the process ends.
        rx.recv_timeout(std::time::Duration::from_secs(3)).is_ok()
    };
    let mut two = json.clone();
    two["main"]["filter"].as_array_mut().unwrap().truncate(2);
    assert!(run(two), "libseccomp takes the first two rules");
    assert!(!run(json), "libseccomp never finishes the third");
    let err = compile::compile_firecracker(
        &bytes,
        "firecracker-loop.json",
        &policy::firecracker::FirecrackerOptions::new(Arch::X86_64),
        &CompileOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, compile::CompileError::Refused { origin, syscall, reason, .. }
            if origin == "$.main.filter[2]" && syscall == "openat" && reason.contains("cycle")),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("Firecracker's seccompiler-bin"),
        "{err}"
    );
}

/// Firecracker's filters (its production x86_64 file and its placeholder file), per thread:
/// Firecracker's compiler since 1.11 also targets riscv64 (src/seccompiler/src/types.rs
/// `TargetArch::Riscv64`): built here for it, as `seccompiler-bin --target-arch riscv64` on this
/// x86_64 host builds it (the host's arch stays in, as for aarch64), every thread decides on
/// riscv64 exactly as secopt's filter for it, proved over every riscv64 input.
#[test]
fn firecracker_filters_for_riscv64_decide_like_firecrackers_compiler() {
    use secopt::verify::{equivalent, ArchSel, Domain, Verdict, VerifyOptions};
    let file = "firecracker/firecracker-x86_64-unknown-linux-musl.json";
    let bytes = std::fs::read(profile_path(file)).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let theirs = common::libseccomp_firecracker::firecracker_with_libseccomp_for(
        &json,
        libseccomp::ScmpArch::Riscv64,
    );
    let ours = compile::compile_firecracker(
        &bytes,
        file,
        &policy::firecracker::FirecrackerOptions::new(Arch::Riscv64),
        &CompileOptions::default(),
    )
    .unwrap();
    assert_eq!(ours.len(), theirs.len());
    let on_riscv64 = VerifyOptions {
        domain: Domain {
            arches: vec![ArchSel::Arch(Arch::Riscv64)],
            nrs: vec![],
        },
        ..VerifyOptions::default()
    };
    for (thread, filter) in &ours {
        let (program, _) = &theirs[thread];
        let verdict = equivalent(filter.program(), program, &on_riscv64).unwrap();
        assert_eq!(verdict, Verdict::Equal, "{thread}");
    }
}

/// secopt decides like Firecracker's libseccomp-based compiler on this x86_64 host. A third
/// file names syscalls of other architectures, which that compiler accepts (libseccomp
/// resolves them to pseudo-numbers, and their rules have no effect) and secopt skips.
#[test]
fn firecracker_filters_decide_like_firecrackers_compiler() {
    let other_arches = serde_json::json!({
        "t": {"default_action": "allow", "filter_action": {"errno": 13}, "filter": [
            {"syscall": "chown32"},
            {"syscall": "getppid"},
            {"syscall": "umount"},
            {"syscall": "fcntl64", "args": [{"index": 0, "type": "dword", "op": "eq", "val": 3}]},
            {"syscall": "fcntl", "args": [{"index": 1, "type": "qword", "op": "gt", "val": 1024}]}
        ]}
    });
    let files = [
        "firecracker/firecracker-x86_64-unknown-linux-musl.json",
        "firecracker/firecracker-unimplemented.json",
    ]
    .map(|file| (file, std::fs::read(profile_path(file)).unwrap()))
    .into_iter()
    .chain([("other-arches.json", other_arches.to_string().into_bytes())]);
    for (file, bytes) in files {
        let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let theirs = firecracker_with_libseccomp(&json);
        let ours = compile::compile_firecracker(
            &bytes,
            file,
            &policy::firecracker::FirecrackerOptions::new(Arch::X86_64),
            &CompileOptions::default(),
        )
        .unwrap();
        assert_eq!(ours.len(), theirs.len(), "{file}: one filter per thread");
        for (thread, filter) in &ours {
            let (program, pfc) = &theirs[thread];
            let pfc = Pfc::parse(pfc).unwrap();
            assert_eq!(filter.info().thread.as_deref(), Some(thread.as_str()));
            // Sweep values from the file's own conditions, for every syscall of the thread.
            let mut values: BTreeMap<(Arch, u32), ArgValues> = BTreeMap::new();
            for rule in json[thread]["filter"].as_array().unwrap() {
                let Some(nr) = libseccomp_nr(Arch::X86_64, rule["syscall"].as_str().unwrap())
                else {
                    continue;
                };
                let entry = values.entry((Arch::X86_64, nr)).or_default();
                for a in rule["args"].as_array().into_iter().flatten() {
                    let set = entry
                        .entry(a["index"].as_u64().unwrap() as u32)
                        .or_default();
                    let val = a["val"].as_u64().unwrap();
                    boundaries(val, set);
                    if let Some(m) = a["op"].get("masked_eq").and_then(|m| m.as_u64()) {
                        for v in [val & m, val | !m, m, !m] {
                            boundaries(v, set);
                        }
                    }
                }
            }
            let (mut n, mut codegen_bugs) = (0, 0);
            sweep(&[Arch::X86_64], &values, &mut |data| {
                let a = interp::eval(filter.program(), data).unwrap();
                let b = interp::eval(program, data).unwrap();
                if a != b {
                    // Only where libseccomp's BPF leaves its own rule tree (see above).
                    assert_eq!(
                        Some(a.0),
                        pfc.decide(data),
                        "{file} {thread}: {data:x?}: secopt {a}, libseccomp {b}"
                    );
                    codegen_bugs += 1;
                }
                n += 1;
            });
            eprintln!(
                "{file} {thread}: {n} inputs, {codegen_bugs} where libseccomp's BPF leaves its tree; secopt {} insns, libseccomp {}",
                filter.program().len(),
                program.len()
            );
        }
    }
}

/// The arch tokens of the blocks in libseccomp's linear program that have syscall tests but
/// do not start with `ld [nr]`. A block starts after the comparison of the arch token that
/// opens it (the first after `ld [arch]`, or the one the previous block's mismatch jumps
/// to, A still holding the token there).
fn blocks_without_the_syscall_load(program: &Program) -> Vec<u32> {
    let insns = &program.insns;
    let is_ret = |i: usize| insns[i].code & 0x07 == 0x06;
    let mut out = Vec::new();
    let mut at = 1; // after `ld [arch]`
    while at < insns.len() && insns[at].code == 0x15 {
        let token = insns[at].k;
        let body = at + 1 + usize::from(insns[at].jt);
        let loads_nr = insns[body].code == 0x20 && insns[body].k == 0;
        if !is_ret(body) && !loads_nr {
            out.push(token);
        }
        at = at + 1 + usize::from(insns[at].jf);
    }
    out
}

/// `compile::runc_unenforced` warns exactly where libseccomp's linear layout (runc's) gives
/// an arch block no `ld [nr]` (the code-generation bug of
/// `libseccomp_codegen_drops_the_syscall_load_after_a_pseudo_syscall`, found for x86_64 with
/// x32 by a red-team audit: a rule for `send` first, and every x86_64 call got the default).
/// Random profiles mix names each arch has and names it lacks, with and without conditions,
/// over arch sets where the bug can and cannot happen; the oracle is the shape of the
/// program the system libseccomp generates. Both outcomes must occur often.
#[test]
fn runc_unenforced_names_exactly_the_blocks_libseccomp_leaves_without_the_syscall_load() {
    let mut rng = Rng::new(7);
    let real = ["read", "write", "getpid", "close"];
    let lacking = ["send", "recv", "accept", "chown32", "_llseek"];
    let arch_sets: [&[Arch]; 5] = [
        &[Arch::X86_64, Arch::X32],
        &[Arch::X86],
        &[Arch::X86_64, Arch::X86, Arch::X32],
        &[Arch::X86_64],
        &[Arch::Aarch64, Arch::Arm],
    ];
    let (mut dropped, mut kept) = (0, 0);
    for case in 0..400 {
        let mut rules = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let name = if rng.chance(1, 2) {
                rng.pick(&real)
            } else {
                rng.pick(&lacking)
            };
            let args = (0..rng.below(3))
                .map(|i| {
                    let op = rng.pick(&[
                        "SCMP_CMP_EQ",
                        "SCMP_CMP_NE",
                        "SCMP_CMP_GT",
                        "SCMP_CMP_LE",
                        "SCMP_CMP_MASKED_EQ",
                    ]);
                    let value = rng.pick(&[1000u64, 1001, 0x1_0000_0000, u64::MAX]);
                    format!(r#"{{"index": {i}, "value": {value}, "valueTwo": 1000, "op": "{op}"}}"#)
                })
                .collect::<Vec<_>>()
                .join(", ");
            let action = rng.pick(&[
                r#""action": "SCMP_ACT_ERRNO", "errnoRet": 13"#,
                r#""action": "SCMP_ACT_ALLOW""#,
            ]);
            rules.push(format!(
                r#"{{"names": ["{name}"], {action}, "args": [{args}]}}"#
            ));
        }
        for arches in arch_sets {
            // The arch set is the profile's own: the warning is of what runc loads, the
            // profile's `architectures` whatever secopt compiles for.
            let listed: Vec<String> = arches
                .iter()
                .map(|a| format!(r#""SCMP_ARCH_{}""#, a.name().to_uppercase()))
                .collect();
            let text = format!(
                r#"{{"defaultAction": "SCMP_ACT_LOG", "architectures": [{}], "syscalls": [{}]}}"#,
                listed.join(", "),
                rules.join(", ")
            );
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            let Ok(theirs) = build_filter(&json, &oracle_options(arches, &[], 1)) else {
                continue; // refused (EEXIST): runc loads nothing
            };
            let policy = policy::oci::parse(text.as_bytes(), "random.json").unwrap();
            let resolved =
                policy::resolve(&policy, &resolve_options(arches, CapSet::none())).unwrap();
            // "… will not enforce this profile on x86_64 and x32: …"
            let warned: BTreeSet<u32> = compile::runc_unenforced(&resolved)
                .iter()
                .flat_map(|w| {
                    let on = w.message.split_once(" profile on ").unwrap().1;
                    let on = on.split_once(':').unwrap().0.to_string();
                    on.split(" and ")
                        .map(|name| {
                            Arch::ALL
                                .into_iter()
                                .find(|a| a.to_string() == name)
                                .unwrap_or_else(|| panic!("{name:?} in {w}"))
                                .token()
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            let unloaded: BTreeSet<u32> = blocks_without_the_syscall_load(&theirs.program)
                .into_iter()
                .collect();
            assert_eq!(
                warned, unloaded,
                "case {case} {arches:?}: secopt warns for tokens {warned:x?}, libseccomp's \
                 blocks without `ld [nr]` are {unloaded:x?}\n{text}"
            );
            if unloaded.is_empty() {
                kept += 1;
            } else {
                dropped += 1;
            }
        }
    }
    eprintln!("{dropped} filters where libseccomp drops a block's syscall load (all warned); {kept} where it does not (none warned)");
    assert!(dropped >= 20 && kept >= 200, "{dropped} {kept}");
}

/// Where libseccomp's block for an arch never loads the syscall number (`runc_unenforced`
/// warns: every call there gets the default action), a missed reload on that arch is moot
/// and not warned of; on the other arch of the filter it still is. The profile is the
/// red-team audit's (session 49, F5): x86's block is left without `ld [nr]`, and `clone`
/// misses a reload on both arches.
#[test]
fn no_reload_warning_on_an_arch_whose_syscall_load_is_dropped() {
    let text = r#"{"defaultAction": "SCMP_ACT_TRACE", "architectures": ["SCMP_ARCH_X86"],
      "syscalls": [
        {"names": ["clone"], "action": "SCMP_ACT_KILL_PROCESS", "args": [
          {"index": 2, "value": 3860636427, "op": "SCMP_CMP_LE"},
          {"index": 4, "value": 2147483649, "op": "SCMP_CMP_LT"}]},
        {"names": ["getsockopt", "semtimedop"], "action": "SCMP_ACT_ERRNO", "args": [
          {"index": 1, "value": 18446744071562067968, "op": "SCMP_CMP_LT"}]},
        {"names": ["sendto"], "action": "SCMP_ACT_KILL_THREAD", "args": [
          {"index": 1, "value": 2868965259, "op": "SCMP_CMP_NE"},
          {"index": 2, "value": 4294967296, "op": "SCMP_CMP_GE"}]},
        {"names": ["getsockopt"], "action": "SCMP_ACT_ERRNO", "args": [
          {"index": 0, "value": 3096893434, "op": "SCMP_CMP_GE"}]},
        {"names": ["clone"], "action": "SCMP_ACT_KILL", "args": [
          {"index": 2, "value": 1727077764, "op": "SCMP_CMP_GE"}]}]}"#;
    let policy = policy::oci::parse(text.as_bytes(), "dropped.json").unwrap();
    let options = ResolveOptions {
        native: Some(Arch::X86_64),
        ..Default::default()
    };
    let resolved = policy::resolve(&policy, &options).unwrap();
    let unenforced = compile::runc_unenforced(&resolved);
    assert!(
        unenforced
            .iter()
            .any(|w| w.message.contains("will not enforce this profile on x86:")),
        "{unenforced:?}"
    );
    let cases = compile::libseccomp_reload_cases(&resolved);
    let arches: Vec<Arch> = cases.iter().map(|c| c.arch).collect();
    assert_eq!(arches, [Arch::X86_64], "{cases:?}");
}

/// Random profiles whose syscalls share rules: libseccomp's generator makes each block once
/// per content across the whole filter, so a block one syscall's tree reaches can be laid
/// out (and given its load or not) from another's. Per arch and syscall, secopt warns of a
/// missed reload exactly where libseccomp's BPF decides otherwise than its rule tree.
#[test]
fn reload_warnings_follow_blocks_libseccomp_shares_between_syscalls() {
    let mut rng = Rng::new(7);
    let names = ["read", "write", "mmap", "close", "dup"];
    let ops = [
        "SCMP_CMP_EQ",
        "SCMP_CMP_NE",
        "SCMP_CMP_LT",
        "SCMP_CMP_GT",
        "SCMP_CMP_GE",
        "SCMP_CMP_MASKED_EQ",
    ];
    let values: [u64; 5] = [0, 5, 0xFFFF_FFFF, 0x1_0000_0005, u64::MAX];
    let actions = [
        "\"action\": \"SCMP_ACT_ALLOW\"",
        "\"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 2",
        "\"action\": \"SCMP_ACT_TRAP\"",
    ];
    let as_254 = CompileOptions {
        libseccomp_merge_bug: true,
        ..Default::default()
    };
    let (mut pairs, mut deviating, mut warned_pairs) = (0, 0, 0);
    for case in 0..600 {
        // A few rule shapes, each syscall a random run of them: identical subtrees abound.
        let shapes: Vec<String> = (0..2 + rng.below(3))
            .map(|_| {
                let args: Vec<String> = (0..1 + rng.below(2))
                    .map(|_| {
                        format!(
                            "{{\"index\": {}, \"value\": {}, \"valueTwo\": {}, \"op\": \"{}\"}}",
                            rng.below(2),
                            rng.pick(&values),
                            rng.pick(&values),
                            rng.pick(&ops)
                        )
                    })
                    .collect();
                format!("{}, \"args\": [{}]", rng.pick(&actions), args.join(", "))
            })
            .collect();
        let mut rules = Vec::new();
        for name in &names[..2 + rng.below(4)] {
            for _ in 0..1 + rng.below(3) {
                rules.push(format!(
                    "{{\"names\": [\"{name}\"], {}}}",
                    shapes[rng.below(shapes.len())]
                ));
            }
        }
        let text = format!(
            "{{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{}]}}",
            rules.join(",\n")
        );
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Blocks are shared across the arches of a filter too (x86_64 with x86 or x32).
        let others: [&[Arch]; 6] = [
            &[Arch::X86_64, Arch::X86],
            &[Arch::Aarch64],
            &[Arch::S390x],
            &[Arch::X86_64, Arch::X32],
            &[Arch::Ppc64le],
            &[Arch::Aarch64, Arch::Arm],
        ];
        for arches in [&[Arch::X86_64][..], others[case % 6]] {
            let policy = policy::oci::parse(text.as_bytes(), "random.json").unwrap();
            let resolved =
                policy::resolve(&policy, &resolve_options(arches, CapSet::none())).unwrap();
            // Refusals are compared elsewhere; libseccomp loops forever on some of these.
            let Ok(ours) = compile::compile(&resolved, &as_254) else {
                continue;
            };
            let theirs = build_filter(&json, &oracle_options(arches, &[], 1))
                .unwrap_or_else(|e| panic!("case {case} {arches:?}: {e}\n{text}"));
            let fixed = compile::compile(&resolved, &CompileOptions::default()).unwrap();
            // Per (arch, nr): whether libseccomp's BPF deviates from the tree, and whether
            // 2.5.4's merge made another tree there (those are not compared).
            let (mut deviates, mut ghsa) = (BTreeSet::new(), BTreeSet::new());
            sweep(arches, &sweep_values(&theirs, arches), &mut |data| {
                let Some(arch) = Arch::of_data(data.arch, data.nr as u32) else {
                    return;
                };
                let a = interp::eval(ours.program(), data).unwrap();
                if interp::eval(&theirs.program, data).unwrap() != a {
                    deviates.insert((arch, data.nr as u32));
                }
                if interp::eval(fixed.program(), data).unwrap() != a {
                    ghsa.insert((arch, data.nr as u32));
                }
            });
            let compared = policy::Resolved {
                arches_as_runc_loads: None,
                ..resolved.clone()
            };
            if !compile::runc_unenforced(&compared).is_empty() {
                continue;
            }
            let warned: BTreeSet<(Arch, u32)> = compile::libseccomp_reload_warnings(&compared)
                .iter()
                .map(|w| {
                    let name = w.message.split('`').nth(1).unwrap();
                    let arch = w.message.split(" on ").nth(1).unwrap();
                    let arch = Arch::from_name(arch.split(' ').next().unwrap()).unwrap();
                    (arch, arch.syscalls().nr(name).unwrap())
                })
                .collect();
            for &arch in arches {
                for name in names {
                    let Some(nr) = arch.syscalls().nr(name) else {
                        continue;
                    };
                    if ghsa.contains(&(arch, nr)) {
                        continue;
                    }
                    pairs += 1;
                    let (d, w) = (deviates.contains(&(arch, nr)), warned.contains(&(arch, nr)));
                    assert_eq!(
                        w,
                        d,
                        "case {case} {arches:?} {name} on {arch}: warned {w}, libseccomp's BPF \
                         differs from its tree {d}\n{text}\n{}\n{}",
                        theirs.pfc,
                        secopt::bpf::disasm::disassemble(&theirs.program, &Default::default())
                    );
                    deviating += usize::from(d);
                    warned_pairs += usize::from(w);
                }
            }
        }
    }
    eprintln!("{pairs} (arch, syscall) pairs; {deviating} deviate, {warned_pairs} warned");
    assert!(deviating > 10, "{deviating}");
}
