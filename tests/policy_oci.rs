//! The OCI / Docker / podman front end and resolution, on the real profiles in
//! ../shared/profiles/oci.
//!
//! Expected numbers were worked out independently of secopt: by reading the JSON and
//! looking names up in the kernel's uapi headers (linux-libc-dev 6.1:
//! /usr/include/x86_64-linux-gnu/asm/unistd_{64,32,x32}.h) plus the syscalls added in
//! 6.2–6.18 that the profiles name (cachestat 451, fchmodat2 452, map_shadow_stack 453,
//! futex_wake/wait/requeue 454–456, statmount 457, listmount 458, lsm_get_self_attr 459,
//! lsm_set_self_attr 460, lsm_list_modules 461, mseal 462, setxattrat 463, getxattrat 464,
//! listxattrat 465, removexattrat 466, uretprobe 335): all are in syscall_32.tbl except
//! uretprobe, and all are "common" (so x32 too) in syscall_64.tbl except map_shadow_stack
//! ("64"). The includes/excludes rules were applied by hand as moby does.

use proptest::prelude::*;
use secopt::arch::Arch;
use secopt::policy::{
    self, oci, Action, Architectures, ArgCondition, CapSet, CmpOp, KernelVersion, Policy,
    PolicyError, ResolveOptions, Resolved, WarningKind,
};
use std::path::PathBuf;

fn profile_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles/oci")
        .join(name)
}

fn load(name: &str) -> Policy {
    let bytes = std::fs::read(profile_path(name)).unwrap();
    oci::parse(&bytes, name).unwrap_or_else(|e| panic!("{e}"))
}

/// x86_64 host, Docker's default caps, a 6.18 kernel.
fn x86_64_options() -> ResolveOptions {
    ResolveOptions {
        native: Some(Arch::X86_64),
        kernel: Some(KernelVersion::new(6, 18)),
        ..Default::default()
    }
}

fn resolve(policy: &Policy, options: &ResolveOptions) -> Resolved {
    policy::resolve(policy, options).unwrap_or_else(|e| panic!("{e}"))
}

fn arches(r: &Resolved) -> Vec<Arch> {
    r.arches.iter().map(|a| a.arch).collect()
}

// x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl).
const NR_SOCKET: u32 = 41;
const NR_CLONE: u32 = 56;
const NR_FTRUNCATE: u32 = 77;
const NR_PTRACE: u32 = 101;
const NR_PERSONALITY: u32 = 135;
const NR_DUP3: u32 = 292;
const NR_PROCESS_VM_READV: u32 = 310;
const NR_PROCESS_VM_WRITEV: u32 = 311;
const NR_CLONE3: u32 = 435;

#[test]
fn every_profile_parses_and_resolves() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/profiles/oci");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let policy =
            oci::parse(&std::fs::read(&path).unwrap(), &name).unwrap_or_else(|e| panic!("{e}"));
        assert!(policy.warnings.is_empty(), "{name}: {:?}", policy.warnings);
        assert_eq!(policy.flags, None, "{name}: no profile sets flags");
        for native in [
            Arch::X86_64,
            Arch::Aarch64,
            Arch::S390x,
            Arch::Ppc64le,
            Arch::Riscv64,
        ] {
            let options = ResolveOptions {
                native: Some(native),
                ..x86_64_options()
            };
            resolve(&policy, &options);
        }
        seen += 1;
    }
    assert_eq!(seen, 7);
}

#[test]
fn docker_default_arch_sets_follow_arch_map() {
    let p = load("docker-default.json");
    assert_eq!(p.default_action, Action::Errno(1));
    assert_eq!(p.bad_arch_action, Action::KillThread);
    assert!(matches!(p.architectures, Architectures::ArchMap(ref m) if m.len() == 9));
    let on = |native| {
        resolve(
            &p,
            &ResolveOptions {
                native: Some(native),
                ..x86_64_options()
            },
        )
    };
    assert_eq!(
        arches(&on(Arch::X86_64)),
        [Arch::X86_64, Arch::X86, Arch::X32]
    );
    assert_eq!(arches(&on(Arch::Aarch64)), [Arch::Aarch64, Arch::Arm]);
    let s390x = on(Arch::S390x);
    assert_eq!(arches(&s390x), [Arch::S390x]);
    assert_eq!(s390x.unsupported_arches, ["s390"]);
    // No archMap entry for ppc64le; riscv64's has `subArchitectures: null`.
    assert_eq!(arches(&on(Arch::Ppc64le)), [Arch::Ppc64le]);
    assert_eq!(arches(&on(Arch::Riscv64)), [Arch::Riscv64]);
    // Strict mode refuses the architecture it cannot cover.
    let strict = ResolveOptions {
        native: Some(Arch::S390x),
        strict: true,
        ..x86_64_options()
    };
    assert!(matches!(
        policy::resolve(&p, &strict),
        Err(PolicyError::UnsupportedArch { ref arch, .. }) if arch == "s390"
    ));
    // The same with an explicit arch list (`compile --arch s390x`): s390 cannot be in it, but
    // the profile still covers it, so it is reported, not dropped in silence (audit 48 #1).
    let listed = ResolveOptions {
        native: Some(Arch::S390x),
        arches: Some(vec![Arch::S390x]),
        ..x86_64_options()
    };
    let s390x = resolve(&p, &listed);
    assert_eq!(arches(&s390x), [Arch::S390x]);
    assert_eq!(s390x.unsupported_arches, ["s390"]);
    assert!(matches!(
        policy::resolve(&p, &ResolveOptions { strict: true, ..listed }),
        Err(PolicyError::UnsupportedArch { ref arch, .. }) if arch == "s390"
    ));
    // A list for a native arch whose archMap entry names no such arch has nothing to report.
    let x86 = ResolveOptions {
        arches: Some(vec![Arch::X86_64]),
        strict: true,
        ..x86_64_options()
    };
    assert!(resolve(&p, &x86).unsupported_arches.is_empty());
    assert!(policy::resolve(&p, &x86).is_ok());
}

#[test]
fn docker_default_counts_with_default_caps_and_with_sys_admin() {
    let p = load("docker-default.json");
    let r = resolve(&p, &x86_64_options());
    let count = |r: &Resolved, a| r.arch(a).unwrap().syscalls.len();
    let unknown = |r: &Resolved, a| r.arch(a).unwrap().unknown.len();
    assert_eq!(count(&r, Arch::X86_64), 310);
    assert_eq!(count(&r, Arch::X86), 361);
    assert_eq!(count(&r, Arch::X32), 305);
    assert_eq!(unknown(&r, Arch::X86_64), 61);
    assert_eq!(unknown(&r, Arch::X86), 10);
    assert_eq!(unknown(&r, Arch::X32), 66);
    // removexattrat (466) is the highest number the profile names on x86_64.
    assert_eq!(r.arch(Arch::X86_64).unwrap().highest_named, Some(466));
    assert!(r
        .arch(Arch::X86_64)
        .unwrap()
        .unknown
        .contains(&"socketcall".to_owned()));
    // Of the 33 entries, 4 are for other arches (ppc64le, arm, s390, riscv64), 13 need caps
    // Docker does not grant, and one (the s390 clone rule) is both.
    let excluded = [
        10, 11, 14, 15, 16, 17, 19, 21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
    ];
    assert_eq!(r.excluded.len(), rules_of(&p, &excluded));

    let admin = ResolveOptions {
        caps: CapSet::parse("default,CAP_SYS_ADMIN").unwrap(),
        ..x86_64_options()
    };
    let r = resolve(&p, &admin);
    assert_eq!(count(&r, Arch::X86_64), 333);
    assert_eq!(count(&r, Arch::X86), 385);
    assert_eq!(count(&r, Arch::X32), 328);
    assert_eq!(unknown(&r, Arch::X86_64), 62); // + umount, an i386-only name
}

/// Number of rules (names) of the given entries of the Docker profile.
fn rules_of(p: &Policy, entries: &[usize]) -> usize {
    p.rules
        .iter()
        .filter(|r| {
            entries.iter().any(|i| {
                *r.origin == *format!("$.syscalls[{i}]")
                    || r.origin.starts_with(&format!("$.syscalls[{i}]."))
            })
        })
        .count()
}

#[test]
fn docker_clone_rules_depend_on_caps_and_arch() {
    let p = load("docker-default.json");
    // CLONE_NEWNS|CLONE_NEWCGROUP|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET
    let ns_flags = 0x0002_0000
        | 0x0200_0000
        | 0x0400_0000
        | 0x0800_0000
        | 0x1000_0000
        | 0x2000_0000
        | 0x4000_0000;
    assert_eq!(ns_flags, 2114060288);

    let r = resolve(&p, &x86_64_options());
    let x86_64 = r.arch(Arch::X86_64).unwrap();
    let clone = &x86_64.syscalls[&NR_CLONE];
    assert_eq!(clone.len(), 1);
    assert_eq!(clone[0].action, Action::Allow);
    assert_eq!(
        clone[0].conditions,
        [ArgCondition::new(0, CmpOp::MaskedEq(ns_flags), 0)]
    );
    assert!(clone[0].conditions[0].matches(0x0001_1200)); // plain fork-like flags
    assert!(!clone[0].conditions[0].matches(0x1000_0000)); // CLONE_NEWUSER
    let clone3 = &x86_64.syscalls[&NR_CLONE3];
    assert_eq!(clone3.len(), 1);
    assert_eq!(clone3[0].action, Action::Errno(38));
    assert!(clone3[0].conditions.is_empty());

    // CAP_SYS_ADMIN: clone and clone3 allowed outright, the masked rule and ENOSYS excluded.
    let admin = ResolveOptions {
        caps: CapSet::parse("default,sys_admin").unwrap(),
        ..x86_64_options()
    };
    let r = resolve(&p, &admin);
    let x86_64 = r.arch(Arch::X86_64).unwrap();
    for nr in [NR_CLONE, NR_CLONE3] {
        let rules = &x86_64.syscalls[&nr];
        assert_eq!(rules.len(), 1, "{nr}");
        assert_eq!(rules[0].action, Action::Allow);
        assert!(rules[0].conditions.is_empty());
    }

    // s390x: the argument order of clone differs, so the mask is on argument 1.
    let s390 = ResolveOptions {
        native: Some(Arch::S390x),
        ..x86_64_options()
    };
    let r = resolve(&p, &s390);
    let s390x = r.arch(Arch::S390x).unwrap();
    const S390_NR_CLONE: u32 = 120; // arch/s390/kernel/syscalls/syscall.tbl
    assert_eq!(
        s390x.syscalls[&S390_NR_CLONE][0].conditions,
        [ArgCondition::new(1, CmpOp::MaskedEq(ns_flags), 0)]
    );
}

#[test]
fn docker_arg_rules_and_min_kernel() {
    let p = load("docker-default.json");
    let r = resolve(&p, &x86_64_options());
    let x86_64 = r.arch(Arch::X86_64).unwrap();
    let socket = &x86_64.syscalls[&NR_SOCKET];
    let conds: Vec<_> = socket.iter().map(|r| r.conditions.clone()).collect();
    assert_eq!(
        conds,
        [
            vec![ArgCondition::new(0, CmpOp::Lt, 38)],
            vec![ArgCondition::new(0, CmpOp::Eq, 39)],
            vec![ArgCondition::new(0, CmpOp::Gt, 40)],
        ]
    );
    let personality: Vec<u64> = x86_64.syscalls[&NR_PERSONALITY]
        .iter()
        .map(|r| r.conditions[0].value)
        .collect();
    assert_eq!(personality, [0, 8, 0x20000, 0x20008, 0xFFFF_FFFF]);
    assert!(x86_64.syscalls.contains_key(&NR_PTRACE));

    // ptrace needs kernel 4.8 without CAP_SYS_PTRACE.
    let old = ResolveOptions {
        kernel: Some(KernelVersion::new(4, 4)),
        ..x86_64_options()
    };
    let r = resolve(&p, &old);
    assert!(!r
        .arch(Arch::X86_64)
        .unwrap()
        .syscalls
        .contains_key(&NR_PTRACE));
    assert_eq!(r.kernel, Some(KernelVersion::new(4, 4)));
    let old_with_ptrace = ResolveOptions {
        caps: CapSet::parse("default,SYS_PTRACE").unwrap(),
        ..old
    };
    let r = resolve(&p, &old_with_ptrace);
    assert!(r
        .arch(Arch::X86_64)
        .unwrap()
        .syscalls
        .contains_key(&NR_PTRACE));

    // Default options: the host (this machine is x86_64) and the running kernel.
    let r = resolve(&p, &ResolveOptions::default());
    assert_eq!(r.native, Arch::host().unwrap());
    assert_eq!(r.kernel, Some(KernelVersion::running().unwrap()));
}

#[test]
fn docker_arm_only_rules_apply_on_aarch64() {
    let p = load("docker-default.json");
    let aarch64 = ResolveOptions {
        native: Some(Arch::Aarch64),
        ..x86_64_options()
    };
    let r = resolve(&p, &aarch64);
    // arch/arm/tools/syscall.tbl: arm_fadvise64_64 270, sync_file_range2 341
    let arm = r.arch(Arch::Arm).unwrap();
    assert!(arm.syscalls.contains_key(&270));
    assert!(arm.syscalls.contains_key(&341));
    // On x86_64 the arm-only entry is excluded, so its names are not even "unknown".
    let r = resolve(&p, &x86_64_options());
    assert!(!r
        .arch(Arch::X86_64)
        .unwrap()
        .unknown
        .contains(&"arm_fadvise64_64".to_owned()));
}

#[test]
fn podman_string_errno_fields() {
    let p = load("podman-containers-common-default.json");
    // defaultErrno "ENOSYS" and defaultErrnoRet 38 agree.
    assert_eq!(p.default_action, Action::Errno(38));
    let r = resolve(&p, &x86_64_options());
    assert_eq!(arches(&r), [Arch::X86_64, Arch::X86, Arch::X32]);
    assert_eq!(r.arch(Arch::X86_64).unwrap().syscalls.len(), 353);
    assert_eq!(r.arch(Arch::X86).unwrap().syscalls.len(), 419);
    assert_eq!(r.arch(Arch::X32).unwrap().syscalls.len(), 345);
    // CAP_AUDIT_WRITE is a default cap: socket is allowed outright (the entry with
    // `"args": null`), and the EINVAL rule for AF_NETLINK/NETLINK_AUDIT is excluded.
    let socket = &r.arch(Arch::X86_64).unwrap().syscalls[&NR_SOCKET];
    assert_eq!(socket.len(), 1);
    assert_eq!(socket[0].action, Action::Allow);
    assert!(socket[0].conditions.is_empty());

    let r = resolve(
        &p,
        &ResolveOptions {
            caps: CapSet::none(),
            ..x86_64_options()
        },
    );
    let socket = &r.arch(Arch::X86_64).unwrap().syscalls[&NR_SOCKET];
    assert_eq!(socket.len(), 4);
    // "errno": "EINVAL" with errnoRet 22: AF_NETLINK (16) && NETLINK_AUDIT (9), ANDed.
    assert_eq!(socket[0].action, Action::Errno(22));
    assert_eq!(
        socket[0].conditions,
        [
            ArgCondition::new(0, CmpOp::Eq, 16),
            ArgCondition::new(2, CmpOp::Eq, 9)
        ]
    );
    assert!(socket[1..].iter().all(|r| r.action == Action::Allow));
    // The EPERM group (errno "EPERM") is kept: it differs from the ENOSYS default.
    const NR_KEXEC_LOAD: u32 = 246;
    let kexec_load = &r.arch(Arch::X86_64).unwrap().syscalls[&NR_KEXEC_LOAD];
    assert_eq!(kexec_load[0].action, Action::Errno(1));
}

#[test]
fn runc_test_profile_same_index_or_split_and_errno_ret() {
    let p = load("runc-integration-seccomp_syscall_test1.json");
    assert!(matches!(p.architectures, Architectures::NativePlus(ref v) if v.is_empty()));
    let r = resolve(&p, &x86_64_options());
    assert_eq!(arches(&r), [Arch::X86_64]);
    let x = r.arch(Arch::X86_64).unwrap();
    assert_eq!(x.syscalls.len(), 283);
    assert_eq!(x.unknown.len(), 60);

    let only = |nr: u32| -> Vec<(Action, Vec<ArgCondition>)> {
        x.syscalls[&nr]
            .iter()
            .map(|r| (r.action, r.conditions.clone()))
            .collect()
    };
    // Same index twice: one rule per condition (OR).
    assert_eq!(
        only(NR_PROCESS_VM_READV),
        [
            (Action::Allow, vec![ArgCondition::new(0, CmpOp::Eq, 100)]),
            (Action::Allow, vec![ArgCondition::new(0, CmpOp::Eq, 9001)]),
        ]
    );
    assert_eq!(
        only(NR_PROCESS_VM_WRITEV),
        [
            (
                Action::Errno(55),
                vec![ArgCondition::new(0, CmpOp::Eq, 1337)]
            ),
            (
                Action::Errno(55),
                vec![ArgCondition::new(0, CmpOp::Eq, 2020)]
            ),
        ]
    );
    // Distinct indexes: one rule, ANDed.
    assert_eq!(
        only(NR_FTRUNCATE),
        [(
            Action::Allow,
            vec![
                ArgCondition::new(0, CmpOp::Eq, 123456789),
                ArgCondition::new(1, CmpOp::Eq, 1337)
            ]
        )]
    );
    assert_eq!(
        only(NR_DUP3),
        [
            (Action::Allow, vec![ArgCondition::new(0, CmpOp::Eq, 1)]),
            (Action::Allow, vec![ArgCondition::new(0, CmpOp::Gt, 2)]),
        ]
    );
    // MASKED_EQ with valueTwo 0 and without valueTwo.
    assert_eq!(
        only(NR_SOCKET),
        [(
            Action::Allow,
            vec![ArgCondition::new(2, CmpOp::MaskedEq(3840), 0)]
        )]
    );
    assert_eq!(
        only(NR_CLONE)[0].1,
        [ArgCondition::new(0, CmpOp::MaskedEq(2114060288), 0)]
    );
}

#[test]
fn notify_profile_listener() {
    let p = load("seccompagent-notify-dangerous.json");
    assert_eq!(p.default_action, Action::Allow);
    assert_eq!(
        p.listener_path.as_deref(),
        Some("/run/seccomp-agent.socket")
    );
    assert_eq!(
        p.listener_metadata.as_deref(),
        Some("DEFAULT_ACTION=kill-container\nMIDDLEWARE=falco")
    );
    let r = resolve(&p, &x86_64_options());
    assert_eq!(arches(&r), [Arch::X86_64]);
    let x = r.arch(Arch::X86_64).unwrap();
    assert_eq!(x.syscalls.len(), 46);
    assert_eq!(x.unknown, ["stime", "umount", "vm86", "vm86old"]);
    assert!(x
        .syscalls
        .values()
        .all(|rules| rules.len() == 1 && rules[0].action == Action::UserNotif));
    // On an aarch64 host, libseccomp keeps the native arch and adds x86_64.
    let r = resolve(
        &p,
        &ResolveOptions {
            native: Some(Arch::Aarch64),
            ..x86_64_options()
        },
    );
    assert_eq!(arches(&r), [Arch::Aarch64, Arch::X86_64]);
}

#[test]
fn small_profiles() {
    let nginx = resolve(&load("spo-nginx-1.19.1.json"), &x86_64_options());
    assert_eq!(arches(&nginx), [Arch::X86_64, Arch::X86, Arch::X32]);
    assert_eq!(nginx.arch(Arch::X86_64).unwrap().syscalls.len(), 90);
    assert_eq!(nginx.arch(Arch::X86).unwrap().syscalls.len(), 89);
    assert_eq!(nginx.arch(Arch::X86).unwrap().unknown, ["newfstatat"]);
    assert_eq!(nginx.arch(Arch::X32).unwrap().syscalls.len(), 90);

    let k8s = resolve(&load("k8s-website-violation.json"), &x86_64_options());
    assert_eq!(k8s.default_action, Action::Errno(1));
    assert_eq!(arches(&k8s), [Arch::X86_64]);
    assert!(k8s.arches[0].syscalls.is_empty());
    assert_eq!(k8s.arches[0].highest_named, None);

    let deny = resolve(&load("docker-labs-deny.json"), &x86_64_options());
    assert_eq!(arches(&deny), [Arch::X86_64, Arch::X86, Arch::X32]);
    assert!(deny.arches.iter().all(|a| a.syscalls.is_empty()));
}

#[test]
fn rules_equal_to_the_default_are_dropped_but_counted_as_named() {
    let p = oci::parse(
        br#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
            {"names":["getpid"],"action":"SCMP_ACT_ERRNO"},
            {"names":["read"],"action":"SCMP_ACT_ERRNO","errnoRet":2},
            {"names":["write"],"action":"SCMP_ACT_ALLOW"}]}"#,
        "t.json",
    )
    .unwrap();
    let r = resolve(&p, &x86_64_options());
    let x = r.arch(Arch::X86_64).unwrap();
    assert_eq!(x.syscalls.keys().copied().collect::<Vec<_>>(), [0, 1]); // read, write
    assert_eq!(x.highest_named, Some(39)); // getpid still counts for runc's ENOSYS stub
    assert_eq!(r.redundant_rules, 1);
}

#[test]
fn legacy_name_and_null_args_and_arch_spellings() {
    let p = oci::parse(
        br#"{"defaultAction":"SCMP_ACT_KILL_PROCESS","syscalls":[
            {"name":"read","action":"SCMP_ACT_ALLOW","args":null},
            {"names":["write"],"action":"SCMP_ACT_LOG","includes":{"arches":["SCMP_ARCH_X86_64"]}},
            {"names":["close"],"action":"SCMP_ACT_TRAP","includes":{"arches":["x86_64"]}},
            {"names":["getpid"],"action":"SCMP_ACT_KILL","excludes":{"arches":["amd64"]}},
            {"names":["getppid"],"action":"SCMP_ACT_ALLOW","excludes":{"minKernel":"5.0"}},
            {"names":["gettid"],"action":"SCMP_ACT_ALLOW","includes":{"minKernel":"5.0"}}]}"#,
        "t.json",
    )
    .unwrap();
    let at = |kernel| {
        let r = resolve(
            &p,
            &ResolveOptions {
                kernel: Some(kernel),
                ..x86_64_options()
            },
        );
        r.arches[0]
            .syscalls
            .iter()
            .map(|(nr, rules)| (*nr, rules[0].action))
            .collect::<Vec<_>>()
    };
    // read 0, getppid 110, gettid 186; getpid (39) excluded on amd64. Docker compares
    // `includes.arches` with `amd64` only (moby's goToNative), so write's SCMP_ARCH_X86_64
    // and close's x86_64 match no host: both left out, each with a warning.
    assert_eq!(
        at(KernelVersion::new(4, 19)),
        [(0, Action::Allow), (110, Action::Allow)]
    );
    assert_eq!(
        at(KernelVersion::new(5, 0)),
        [(0, Action::Allow), (186, Action::Allow)]
    );
    let warned: Vec<&str> = p.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        warned,
        [
            "$.syscalls[1].includes.arches[0]",
            "$.syscalls[2].includes.arches[0]"
        ]
    );
}

#[test]
fn strict_mode_reports_unknown_names_per_arch() {
    let strict = ResolveOptions {
        strict: true,
        ..x86_64_options()
    };
    // spo-nginx lists `newfstatat`, which i386 does not have (it has fstatat64): a name of
    // another arch, skipped on x86 with or without --strict, not an error.
    let p = load("spo-nginx-1.19.1.json");
    let r = policy::resolve(&p, &strict).unwrap_or_else(|e| panic!("{e}"));
    let x86 = r.arch(Arch::X86).unwrap();
    assert_eq!(x86.unknown, ["newfstatat"]);
    assert!(x86.is_other_arch_name("newfstatat"));
    // A name no arch has is an error, reported for every arch of the profile.
    let text = std::fs::read_to_string(profile_path("spo-nginx-1.19.1.json")).unwrap();
    let typo = text.replacen("\"newfstatat\"", "\"newfstatat\", \"no_such_call\"", 1);
    assert_ne!(typo, text);
    let p = oci::parse(typo.as_bytes(), "spo-nginx-1.19.1.json").unwrap();
    match policy::resolve(&p, &strict) {
        Err(e @ PolicyError::UnknownSyscalls { .. }) => {
            let PolicyError::UnknownSyscalls { ref unknown, .. } = e else {
                unreachable!()
            };
            assert_eq!(unknown.len(), 3);
            for arch in [Arch::X86_64, Arch::X86, Arch::X32] {
                assert_eq!(unknown[&arch], ["no_such_call"], "{arch}");
            }
            assert!(
                e.to_string().starts_with(
                    "spo-nginx-1.19.1.json: unknown syscall names (strict mode): x86_64: no_such_call"
                ),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// A misspelt `args` is an unknown field, ignored as runc's decoder ignores it, which leaves
/// the rule unconditional: a warning by default, an error in strict mode, which lists every
/// warning of the profile (four, then how many more), each at its place.
#[test]
fn strict_mode_makes_every_warning_an_error() {
    let json = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "argz": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]},
        {"names": ["bpf"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_FLY"]}},
        {"names": ["read"], "action": "SCMP_ACT_ALLOW", "comment2": 1, "x": 2, "y": 3}]}"#;
    let p = oci::parse(json.as_bytes(), "typo.json").unwrap();
    assert_eq!(p.warnings.len(), 5, "{:?}", p.warnings);
    // Without --strict: resolved, `personality` allowed whatever its argument.
    let lax = policy::resolve(&p, &x86_64_options()).unwrap();
    let personality = &lax.arch(Arch::X86_64).unwrap().syscalls[&135];
    assert!(personality[0].conditions.is_empty(), "{personality:?}");
    assert_eq!(lax.warnings, p.warnings);
    let strict = ResolveOptions {
        strict: true,
        ..x86_64_options()
    };
    match policy::resolve(&p, &strict) {
        Err(e @ PolicyError::Warnings { .. }) => {
            let text = e.to_string();
            let PolicyError::Warnings { file, warnings } = e else {
                unreachable!()
            };
            assert_eq!((file.as_str(), &warnings), ("typo.json", &p.warnings));
            assert!(
                text.starts_with(
                    "typo.json: $.syscalls[0].argz: unknown field \"argz\" ignored; \
                     $.syscalls[1].includes.caps[0]: \"CAP_FLY\" is not a Linux capability"
                ),
                "{text}"
            );
            assert!(
                text.ends_with(
                    "; and 1 more (strict mode: a warning about the profile is an error)"
                ),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    // One error lists every kind at its place: the profile's warning, then each unknown name
    // at its first rule (`frobnicate` twice: once), then the rules that never apply; with
    // unknown names alone, their own error, which says where each is first named.
    let json = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["write", "frobnicate"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["foo_bar", "frobnicate"], "action": "SCMP_ACT_ALLOW",
         "argz": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]},
        {"names": ["read"], "action": "SCMP_ACT_KILL",
         "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]}]}"#;
    let p = oci::parse(json.as_bytes(), "mixed.json").unwrap();
    match policy::resolve(&p, &strict) {
        Err(PolicyError::Warnings { warnings, .. }) => {
            use secopt::policy::WarningKind;
            let listed: Vec<(&str, WarningKind)> =
                warnings.iter().map(|w| (w.path.as_str(), w.kind)).collect();
            assert_eq!(
                listed,
                [
                    ("$.syscalls[2].argz", WarningKind::Ignored),
                    ("$.syscalls[1]", WarningKind::UnknownName),
                    ("$.syscalls[2]", WarningKind::UnknownName),
                    ("$.syscalls[3]", WarningKind::NeverApplies),
                ],
                "{warnings:?}"
            );
            assert!(warnings[1].message.contains("`frobnicate`"), "{warnings:?}");
            assert!(warnings[2].message.contains("`foo_bar`"), "{warnings:?}");
        }
        other => panic!("{other:?}"),
    }
    let json = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["write", "frobnicate"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let p = oci::parse(json.as_bytes(), "typo.json").unwrap();
    match policy::resolve(&p, &strict) {
        Err(e @ PolicyError::UnknownSyscalls { .. }) => assert_eq!(
            e.to_string(),
            "typo.json: unknown syscall names (strict mode): x86_64: frobnicate; first named at \
             $.syscalls[1] (frobnicate)"
        ),
        other => panic!("{other:?}"),
    }
    // The strict error and the filter's warnings place a name at the same rule: the first
    // naming it, whatever its action (`baz`'s has the default one, and no other rule gives it
    // another: a red-team audit found that warning placed at the file's name).
    let json = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["baz"], "action": "SCMP_ACT_ERRNO"},
        {"names": ["read", "bar"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let p = oci::parse(json.as_bytes(), "places.json").unwrap();
    match policy::resolve(&p, &strict) {
        Err(e @ PolicyError::UnknownSyscalls { .. }) => assert!(
            e.to_string()
                .ends_with("first named at $.syscalls[0] (baz), $.syscalls[1] (bar)"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    let lax = policy::resolve(&p, &x86_64_options()).unwrap();
    let warned: Vec<(String, String)> = secopt::compile::unknown_names(&lax)
        .into_iter()
        .map(|w| (w.path, w.message.split('`').nth(1).unwrap().to_string()))
        .collect();
    assert_eq!(
        warned,
        [
            ("$.syscalls[1]".to_string(), "bar".to_string()),
            ("$.syscalls[0]".to_string(), "baz".to_string())
        ]
    );
    // A profile without warnings resolves in strict mode as without it.
    let clean = load("docker-default.json");
    assert!(clean.warnings.is_empty());
    assert_eq!(
        policy::resolve(&clean, &strict).unwrap(),
        Resolved {
            strict: true,
            ..policy::resolve(&clean, &x86_64_options()).unwrap()
        }
    );
}

/// The error for `json`, which must be an `Invalid` error at `path`.
fn invalid(json: &str, path: &str, message_part: &str) {
    let e = oci::parse(json.as_bytes(), "bad.json").unwrap_err();
    assert_eq!(e.json_path(), Some(path), "{e}");
    let text = e.to_string();
    assert!(text.starts_with(&format!("bad.json: {path}: ")), "{text}");
    assert!(
        text.contains(message_part),
        "{text:?} lacks {message_part:?}"
    );
}

const HEAD: &str = r#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":["#;

fn entry(body: &str) -> String {
    format!("{HEAD}{body}]}}")
}

#[test]
fn bad_input_is_reported_with_its_path() {
    invalid(
        &entry(
            r#"{"names":["dup3"],"action":"SCMP_ACT_ALLOW","args":[{"index":0,"value":1,"op":"SCMP_CMP_FOO"}]}"#,
        ),
        "$.syscalls[0].args[0].op",
        "unknown operator \"SCMP_CMP_FOO\"; expected one of SCMP_CMP_NE, SCMP_CMP_LT",
    );
    invalid(
        &entry(
            r#"{"names":["dup3"],"action":"SCMP_ACT_ALLOW","args":[{"index":6,"value":1,"op":"SCMP_CMP_EQ"}]}"#,
        ),
        "$.syscalls[0].args[0].index",
        "argument index 6 is out of range",
    );
    // An errno on an action without one: runc ignores it (tests/e2e_runc.rs runs one), so
    // it is a warning at its place and the action stays as it is.
    for (body, path, action, expected) in [
        (
            r#"{"names":["read"],"action":"SCMP_ACT_ALLOW","errnoRet":1}"#,
            "$.syscalls[0].errnoRet",
            "SCMP_ACT_ALLOW",
            Action::Allow,
        ),
        (
            r#"{"names":["read"],"action":"SCMP_ACT_NOTIFY","errno":"EPERM"}"#,
            "$.syscalls[0].errno",
            "SCMP_ACT_NOTIFY",
            Action::UserNotif,
        ),
    ] {
        let p = oci::parse(entry(body).as_bytes(), "bad.json").unwrap();
        let w: Vec<_> = p
            .warnings
            .iter()
            .filter(|w| w.kind != WarningKind::RuntimeRefuses)
            .collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            (w[0].kind, w[0].path.as_str()),
            (WarningKind::Ignored, path)
        );
        assert!(
            w[0].message
                .contains(&format!("not {action}: runc ignores it")),
            "{w:?}"
        );
        assert_eq!(p.rules[0].action, expected);
    }
    invalid(
        &entry(r#"{"names":["read",""],"action":"SCMP_ACT_ALLOW"}"#),
        "$.syscalls[0].names[1]",
        "empty syscall name",
    );
    invalid(
        &entry(r#"{"names":"read","action":"SCMP_ACT_ALLOW"}"#),
        "$.syscalls[0].names",
        "expected an array, found a string",
    );
    invalid(
        &entry(r#"{"names":["read", 7],"action":"SCMP_ACT_ALLOW"}"#),
        "$.syscalls[0].names[1]",
        "expected a string, found an integer",
    );
    invalid(
        &entry(r#"{"name":"read","names":["write"],"action":"SCMP_ACT_ALLOW"}"#),
        "$.syscalls[0].name",
        "both `name` and `names`",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ALLOWED"}"#),
        "$.syscalls[0].action",
        "unknown action \"SCMP_ACT_ALLOWED\"; expected one of SCMP_ACT_KILL,",
    );
    invalid(
        &entry(r#"{"names":["read"]}"#),
        "$.syscalls[0].action",
        "missing",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ERRNO","errnoRet":-1}"#),
        "$.syscalls[0].errnoRet",
        "non-negative",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ERRNO","errnoRet":65536}"#),
        "$.syscalls[0].errnoRet",
        "16-bit",
    );
    // What runc makes of it (Go's `int16(...)` conversion keeps the low 16 bits): 0, where
    // the call seems to succeed.
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ERRNO","errnoRet":65536}"#),
        "$.syscalls[0].errnoRet",
        "runc would keep its low 16 bits, 0: ERRNO(0)",
    );
    // Low bits above libseccomp's largest errno: runc refuses to start (checked with runc
    // 1.1.5: "error adding seccomp filter rule").
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ERRNO","errnoRet":70000}"#),
        "$.syscalls[0].errnoRet",
        "low 16 bits, 4464, above 4094, the largest libseccomp accepts, and so refuse to start",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ERRNO","errnoRet":65549}"#),
        "$.syscalls[0].errnoRet",
        "low 16 bits, 13, silently)",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ERRNO","errno":"EWHAT"}"#),
        "$.syscalls[0].errno",
        "unknown errno",
    );
    invalid(
        &entry(
            r#"{"names":["read"],"action":"SCMP_ACT_ALLOW","args":[{"index":0,"value":1.5,"op":"SCMP_CMP_EQ"}]}"#,
        ),
        "$.syscalls[0].args[0].value",
        "expected an integer, found 1.5",
    );
    invalid(
        &entry(
            r#"{"names":["read"],"action":"SCMP_ACT_ALLOW","args":[{"index":0,"value":18446744073709551616,"op":"SCMP_CMP_EQ"}]}"#,
        ),
        "$.syscalls[0].args[0].value",
        "expected an integer that fits in 64 bits, found a larger one",
    );
    // Whole numbers written as runc's Go decoder refuses for an integer: said as such, not
    // as numbers too large (which they were called until the thirty-sixth session).
    for (value, found) in [("1.0", "1.0"), ("1e2", "100.0"), ("-0", "-0.0")] {
        invalid(
            &entry(&format!(
                r#"{{"names":["read"],"action":"SCMP_ACT_ALLOW","args":[{{"index":0,"value":{value},"op":"SCMP_CMP_EQ"}}]}}"#
            )),
            "$.syscalls[0].args[0].value",
            &format!("expected an integer, found {found} (a number written with a decimal point"),
        );
    }
    invalid(
        &entry(
            r#"{"names":["read"],"action":"SCMP_ACT_ALLOW","args":[{"value":1,"op":"SCMP_CMP_EQ"}]}"#,
        ),
        "$.syscalls[0].args[0].index",
        "missing",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ALLOW","includes":{"arches":["amd46"]}}"#),
        "$.syscalls[0].includes.arches[0]",
        "unknown architecture \"amd46\"",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ALLOW","excludes":{"minKernel":"4.8.1"}}"#),
        "$.syscalls[0].excludes.minKernel",
        "invalid kernel version \"4.8.1\"",
    );
    invalid(
        &entry(r#"{"names":["read"],"action":"SCMP_ACT_ALLOW","includes":[]}"#),
        "$.syscalls[0].includes",
        "expected an object, found an array",
    );
    invalid(
        r#"{"defaultAction":"SCMP_ACT_ERRNO","architectures":["x86_64"]}"#,
        "$.architectures[0]",
        "expected one of SCMP_ARCH_X86, SCMP_ARCH_X86_64",
    );
    invalid(
        r#"{"defaultAction":"SCMP_ACT_ERRNO","archMap":[{"architecture":"SCMP_ARCH_X86_64","subArchitectures":["SCMP_ARCH_Z80"]}]}"#,
        "$.archMap[0].subArchitectures[0]",
        "unknown architecture \"SCMP_ARCH_Z80\"",
    );
    invalid(
        r#"{"defaultAction":"SCMP_ACT_ERRNO","architectures":["SCMP_ARCH_X86"],"archMap":[{"architecture":"SCMP_ARCH_X86_64"}]}"#,
        "$.archMap",
        "both `architectures` and `archMap`",
    );
    invalid(
        r#"{"defaultAction":"SCMP_ACT_ERRNO","flags":["SECCOMP_FILTER_FLAG_NEW_LISTENER"]}"#,
        "$.flags[0]",
        "unknown flag",
    );
    invalid(
        r#"{"defaultAction":"SCMP_ACT_ERRNO","listenerMetadata":"x"}"#,
        "$.listenerMetadata",
        "`listenerPath` is not",
    );
    invalid(
        r#"{"defaultAction":"SCMP_ACT_NOTIFY"}"#,
        "$.defaultAction",
        "cannot be the default action",
    );
    // runc ignores it there too (tests/e2e_runc.rs: the default action's errno).
    let p = oci::parse(
        br#"{"defaultAction":"SCMP_ACT_LOG","defaultErrnoRet":3}"#,
        "bad.json",
    )
    .unwrap();
    assert_eq!(p.default_action, Action::Log);
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert_eq!(p.warnings[0].path, "$.defaultErrnoRet");
    assert!(p.warnings[0]
        .message
        .contains("not SCMP_ACT_LOG: runc ignores it"));
    invalid(r#"{"flags":[]}"#, "$.defaultAction", "seccomp disabled");
    invalid(
        r#"{"syscalls":[]}"#,
        "$.defaultAction",
        "missing; expected one of",
    );
    invalid(r#"[]"#, "$", "expected an object, found an array");
    invalid(
        r#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":{}}"#,
        "$.syscalls",
        "expected an array",
    );
}

/// Which errnos a profile may give is libseccomp's call: runc (and crun) build the filter with
/// it, and a value it refuses fails the container's start. Oracle: the system libseccomp's
/// `seccomp_init` and `seccomp_rule_add`, for the default action and for a rule, against
/// whether secopt reads the profile. `SCMP_ACT_TRACE` takes any 16 bits in both.
#[test]
fn errno_limits_are_libseccomps() {
    use libseccomp::{ScmpAction, ScmpFilterContext, ScmpSyscall};
    let libseccomp_takes = |act: ScmpAction| {
        let as_default = ScmpFilterContext::new(act).is_ok();
        let mut ctx = ScmpFilterContext::new(ScmpAction::Allow).unwrap();
        let in_rule = ctx
            .add_rule(act, ScmpSyscall::from_name("getppid").unwrap())
            .is_ok();
        assert_eq!(as_default, in_rule, "{act:?}");
        in_rule
    };
    let mut refused = 0;
    for n in [0u16, 1, 4093, 4094, 4095, 4096, 32767, 65535] {
        let errno = libseccomp_takes(ScmpAction::Errno(i32::from(n)));
        refused += usize::from(!errno);
        let rule = format!(
            r#"{{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{{"names":["getppid"],"action":"SCMP_ACT_ERRNO","errnoRet":{n}}}]}}"#
        );
        let default = format!(r#"{{"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":{n}}}"#);
        for profile in [&rule, &default] {
            let parsed = oci::parse(profile.as_bytes(), "errno.json");
            assert_eq!(parsed.is_ok(), errno, "{profile}: {:?}", parsed.err());
            if let Err(e) = parsed {
                assert!(e.to_string().contains("above 4094"), "{e}");
            }
        }
        let trace = libseccomp_takes(ScmpAction::Trace(n));
        let profile = format!(
            r#"{{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{{"names":["getppid"],"action":"SCMP_ACT_TRACE","errnoRet":{n}}}]}}"#
        );
        assert_eq!(oci::parse(profile.as_bytes(), "trace.json").is_ok(), trace);
    }
    assert_eq!(refused, 4, "libseccomp refuses 4095 and above");
}

/// runc ignores an entry without names (the spec requires one): a warning, no rule; its
/// action is still checked, as runc converts it first.
#[test]
fn an_entry_without_names_has_no_effect() {
    for empty in [r#""names":[],"#, ""] {
        let body = format!(
            r#"{{{empty}"action":"SCMP_ACT_ALLOW"}},{{"names":["read"],"action":"SCMP_ACT_ALLOW"}}"#
        );
        let p = oci::parse(entry(&body).as_bytes(), "empty.json").unwrap();
        assert_eq!(p.rules.len(), 1);
        assert!(
            p.warnings.iter().any(|w| w
                .to_string()
                .contains("$.syscalls[0].names: no syscall names")),
            "{:?}",
            p.warnings
        );
    }
    invalid(
        &entry(r#"{"names":[],"action":"SCMP_ACT_ALLOWED"}"#),
        "$.syscalls[0].action",
        "unknown action",
    );
}

/// Messages list a bounded number of names, each cut short: a profile of 100 000 unknown
/// names, or one name of 10 MB, printed megabytes of warnings.
#[test]
fn name_listings_are_bounded() {
    let names: Vec<String> = (0..100).map(|i| format!("n{i}")).collect();
    let text = policy::name_listing(&names, 3, " (see the file)");
    assert_eq!(text, "n0, n1, n2 and 97 more (see the file)");
    let long = "é".repeat(100_000);
    let text = policy::name_listing(&[long.as_str(), "read"], 8, "");
    assert_eq!(text, format!("{}… (200000 bytes), read", "é".repeat(64)));
}

#[test]
fn invalid_json_reports_line_and_column() {
    let bytes = std::fs::read(profile_path("docker-default.json")).unwrap();
    let cut = &bytes[..bytes.len() / 2];
    match oci::parse(cut, "docker.json") {
        Err(PolicyError::Syntax {
            file, line, column, ..
        }) => {
            assert_eq!(file, "docker.json");
            // The document ends mid-way: the error is at the last line of the cut.
            let lines = cut.iter().filter(|&&b| b == b'\n').count() + 1;
            assert_eq!(line, lines);
            assert!(column >= 1);
        }
        other => panic!("{other:?}"),
    }
    // An empty file (or one of blanks) says so, not "EOF while parsing a value".
    for empty in [&b""[..], b" \n\t\n"] {
        match oci::parse(empty, "empty.json") {
            Err(PolicyError::Syntax { message, .. }) => {
                assert_eq!(message, "the file is empty (a profile is a JSON object)")
            }
            other => panic!("{other:?}"),
        }
    }
    let e = oci::parse(
        b"{\"defaultAction\": \"SCMP_ACT_ERRNO\",\n \"syscalls\": [,]}",
        "x.json",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("x.json: invalid JSON at line 2, column 15: "),
        "{e}"
    );
    let e = oci::parse(
        br#"{"defaultAction":"SCMP_ACT_ERRNO","defaultAction":"SCMP_ACT_ALLOW"}"#,
        "x.json",
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("duplicate key \"defaultAction\""),
        "{e}"
    );
}

#[test]
fn unknown_fields_and_odd_values_are_warnings() {
    let p = oci::parse(
        br#"{"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":1,"comment":"x","syscalls":[
            {"names":["read"],"action":"SCMP_ACT_ALLOW","errno_ret":5,
             "args":[{"index":0,"value":1,"valueTwo":9,"op":"SCMP_CMP_EQ"}],
             "includes":{"caps":["CAP_FLY"]}},
            {"names":["write"],"action":"SCMP_ACT_ERRNO","errnoRet":2,"errno":"EACCES"}]}"#,
        "t.json",
    )
    .unwrap();
    let paths: Vec<&str> = p.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "$.syscalls[0].args[0].valueTwo",
            "$.syscalls[0].includes.caps[0]",
            "$.syscalls[0].errno_ret",
            "$.syscalls[1].errno",
            "$.comment",
        ]
    );
    // podman precedence: the string wins.
    assert_eq!(p.rules[1].action, Action::Errno(13));
    // `errnoret` is no unknown field: Go's encoding/json (runc) reads it as `errnoRet`, which
    // an ALLOW rule has no use for (runc ignores it; so does secopt, with a warning there).
    let p = oci::parse(
        br#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
            {"names":["read"],"action":"SCMP_ACT_ALLOW","errnoret":5}]}"#,
        "t.json",
    )
    .unwrap();
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert_eq!(p.warnings[0].path, "$.syscalls[0].errnoret");
    assert!(p.warnings[0].message.contains("runc ignores it"));
}

/// Every node of a JSON document, as JSON pointers.
fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, item) in map {
                pointers(
                    item,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

fn replacement(i: usize) -> serde_json::Value {
    use serde_json::json;
    let choices = [
        json!(null),
        json!(true),
        json!(-1),
        json!(1.5),
        json!(7),
        json!(u64::MAX),
        json!(""),
        json!("SCMP_ACT_FOO"),
        json!("SCMP_CMP_MASKED_EQ"),
        json!("SCMP_ARCH_S390"),
        json!("4.8"),
        json!([]),
        json!({}),
        json!(["read"]),
        json!({"index": 9, "value": 1, "op": "SCMP_CMP_EQ"}),
    ];
    choices[i % choices.len()].clone()
}

/// A parse outcome is acceptable if it is a success or an error that says where.
fn check_outcome(result: Result<Policy, PolicyError>) -> Result<(), TestCaseError> {
    match result {
        Ok(policy) => {
            // Resolution of whatever parsed must not panic either.
            let _ = policy::resolve(&policy, &x86_64_options());
        }
        Err(PolicyError::Syntax { line, column, .. }) => {
            prop_assert!(line >= 1 && column <= 1 << 20);
        }
        Err(PolicyError::Invalid { path, .. }) => prop_assert!(path.starts_with('$'), "{path}"),
        Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
    }
    Ok(())
}

const PROFILES: [&str; 7] = [
    "docker-default.json",
    "podman-containers-common-default.json",
    "spo-nginx-1.19.1.json",
    "runc-integration-seccomp_syscall_test1.json",
    "k8s-website-violation.json",
    "docker-labs-deny.json",
    "seccompagent-notify-dangerous.json",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn byte_mutations_never_panic(
        which in 0..PROFILES.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = std::fs::read(profile_path(PROFILES[which])).unwrap();
        for (at, byte, kind) in edits {
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => { bytes.remove(i); }
            }
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        check_outcome(oci::parse(&bytes, PROFILES[which]))?;
    }

    #[test]
    fn value_mutations_never_panic_and_name_the_place(
        which in 0..PROFILES.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<usize>()), 1..4),
    ) {
        let bytes = std::fs::read(profile_path(PROFILES[which])).unwrap();
        let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        for (at, choice) in edits {
            let mut all = Vec::new();
            pointers(&doc, String::new(), &mut all);
            let target = &all[at.index(all.len())];
            if let Some(slot) = doc.pointer_mut(target) {
                *slot = replacement(choice);
            }
        }
        let text = serde_json::to_vec(&doc).unwrap();
        let result = oci::parse(&text, PROFILES[which]);
        if let Err(PolicyError::Syntax { .. }) = result {
            prop_assert!(false, "re-serialized JSON cannot have a syntax error");
        }
        check_outcome(result)?;
    }
}

/// In a whole config.json, moby's and podman's fields are ignored as runc ignores them, with
/// a warning only where ignoring one changes something: not for `{}`, an empty `name`, or an
/// `errno` string that names `errnoRet`'s own errno. A config is told by its `linux` section
/// even without `ociVersion`.
#[test]
fn a_config_json_warns_only_about_extensions_that_would_have_mattered() {
    let config = br#"{"linux": {"seccomp": {"defaultAction": "SCMP_ACT_TRAP", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW", "includes": {}, "excludes": {"caps": []}},
        {"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errno": "EPERM", "errnoRet": 1},
        {"names": ["mount"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}},
        {"names": ["rmdir"], "action": "SCMP_ACT_ERRNO", "errno": "EACCES", "errnoRet": 1}]}}}"#;
    let policy = oci::parse(config, "config.json").unwrap();
    let paths: Vec<&str> = policy.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "$.linux.seccomp.syscalls[2].includes",
            "$.linux.seccomp.syscalls[3].errno"
        ]
    );
    // As runc reads it: mount allowed whatever the caps, rmdir's errno from errnoRet.
    let resolved = policy::resolve(&policy, &x86_64_options()).unwrap();
    let x86_64 = resolved.arch(secopt::arch::Arch::X86_64).unwrap();
    let rules = |nr: u32| x86_64.syscalls.get(&nr).cloned().unwrap_or_default();
    assert_eq!(rules(165)[0].action, policy::Action::Allow, "mount");
    assert_eq!(rules(84)[0].action, policy::Action::Errno(1), "rmdir");
}
