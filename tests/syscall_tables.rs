//! secopt's syscall tables (syscall-numbers 4.0.3 plus the kernel-name corrections in
//! `src/arch/tables.rs`, Linux 6.18) against the resolver of the system libseccomp, in both
//! directions, on every architecture both know:
//!
//! - forward: every name in our table resolves in libseccomp to the same number;
//! - reverse: every number libseccomp has a name for (probed over each ABI's whole range and
//!   ARM's private range) has the same name in our table.
//!
//! libseccomp answers a name it knows but that does not exist on an arch with a negative
//! pseudo-syscall number; those names count as "not known" there. Every remaining difference
//! must be one of the explained, named exceptions below, and (for the libseccomp version these
//! were written against) every exception must actually occur, so the lists cannot go stale.

mod common;

use common::libseccomp_names::scmp_arch;
use libseccomp::{ScmpArch, ScmpSyscall, ScmpVersion};
use secopt::arch::Arch;
use std::collections::BTreeSet;

/// Syscalls added to Linux after the newest tables in the installed libseccomp 2.5.4 (Debian
/// 12's package knows syscalls up to Linux 6.7's `futex_requeue`). The kernel version that
/// added each one is from the commit that assigned its number.
const NEWER_THAN_LIBSECCOMP: &[(&str, &str)] = &[
    ("riscv_hwprobe", "6.4"),
    ("statmount", "6.8"),
    ("listmount", "6.8"),
    ("lsm_get_self_attr", "6.8"),
    ("lsm_set_self_attr", "6.8"),
    ("lsm_list_modules", "6.8"),
    ("mseal", "6.10"),
    ("uretprobe", "6.11"),
    ("setxattrat", "6.13"),
    ("getxattrat", "6.13"),
    ("listxattrat", "6.13"),
    ("removexattrat", "6.13"),
    ("open_tree_attr", "6.15"),
    ("file_getattr", "6.17"),
    ("file_setattr", "6.17"),
    ("uprobe", "6.18"),
    ("listns", "6.18"),
];

/// Arches whose kernel also routes the socket and SysV IPC calls through the `socketcall(2)`
/// and `ipc(2)` multiplexers. libseccomp 2.5.4 resolves the direct calls' names there to its
/// pseudo-syscall numbers (`__PNR_socket` = -101 …, `__PNR_semop` = -201 …) so that one rule
/// covers both the direct syscall and the multiplexed form; it still names the direct numbers
/// correctly in the reverse direction, which the test checks.
const MULTIPLEXED_ARCHES: &[Arch] = &[
    Arch::X86,
    Arch::S390x,
    Arch::Ppc,
    Arch::Ppc64,
    Arch::Ppc64le,
    Arch::Mips,
    Arch::Mipsel,
];

/// The direct socket and IPC calls that libseccomp multiplexes (see [`MULTIPLEXED_ARCHES`]).
const MULTIPLEXED_NAMES: &[&str] = &[
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

/// Rows of the kernel's MIPS tables that are placeholders (`sys_ni_syscall`, or the legacy
/// `unused59` → `sys_olduname`) with names libseccomp does not carry
/// (`arch/mips/kernel/syscalls/syscall_{o32,n64,n32}.tbl`).
const KERNEL_PLACEHOLDERS: &[(&[Arch], &str)] = &[
    (O32, "unused18"),
    (O32, "unused28"),
    (O32, "unused59"),
    (O32, "reserved82"),
    (O32, "unused84"),
    (O32, "unused109"),
    (O32, "unused150"),
    (O32, "reserved221"),
    (N64_N32, "reserved177"),
    (N64_N32, "reserved193"),
];
const O32: &[Arch] = &[Arch::Mips, Arch::Mipsel];
const N64_N32: &[Arch] = &[
    Arch::Mips64,
    Arch::Mipsel64,
    Arch::Mips64n32,
    Arch::Mipsel64n32,
];

/// The libseccomp version the exception lists above were checked against exactly.
const CHECKED_LIBSECCOMP: (u32, u32, u32) = (2, 5, 4);

/// Where the syscall numbers of `a` start as `seccomp_data.nr` sees them.
fn base(a: Arch) -> u32 {
    match a {
        Arch::X32 => 0x4000_0000,
        Arch::Mips | Arch::Mipsel => 4000,
        Arch::Mips64 | Arch::Mipsel64 => 5000,
        Arch::Mips64n32 | Arch::Mipsel64n32 => 6000,
        _ => 0,
    }
}

/// The number libseccomp gives `name` on `arch`: `Some(n >= 0)` a real syscall, `Some(n < 0)`
/// a pseudo-syscall (a name it knows but not on this arch), `None` an unknown name.
fn scmp_nr(name: &str, arch: ScmpArch) -> Option<i32> {
    ScmpSyscall::from_name_by_arch(name, arch)
        .ok()
        .map(i32::from)
}

fn scmp_name(nr: u32, arch: ScmpArch) -> Option<String> {
    ScmpSyscall::from(nr as i32).get_name_by_arch(arch).ok()
}

/// Which explained exception, if any, covers `name` on `arch`.
fn exception(arch: Arch, name: &str) -> Option<&'static str> {
    if NEWER_THAN_LIBSECCOMP.iter().any(|&(n, _)| n == name) {
        return Some("newer than libseccomp");
    }
    if MULTIPLEXED_ARCHES.contains(&arch) && MULTIPLEXED_NAMES.contains(&name) {
        return Some("multiplexed");
    }
    if KERNEL_PLACEHOLDERS
        .iter()
        .any(|&(arches, n)| n == name && arches.contains(&arch))
    {
        return Some("kernel placeholder");
    }
    None
}

#[derive(Default)]
struct Outcome {
    agree: usize,
    excepted: usize,
    reverse_checked: usize,
}

fn compare_arch(
    arch: Arch,
    used: &mut BTreeSet<(&'static str, String)>,
    failures: &mut Vec<String>,
) -> Outcome {
    let sa = scmp_arch(arch);
    let table = arch.syscalls();
    let mut out = Outcome::default();

    // Forward: our names → libseccomp numbers.
    for (nr, name) in table.iter() {
        let theirs = scmp_nr(name, sa);
        if theirs == Some(nr as i32) {
            out.agree += 1;
            continue;
        }
        let why = exception(arch, name);
        let explained = match (why, theirs) {
            // Unknown name to libseccomp, and it has no name for our number either.
            (Some("newer than libseccomp") | Some("kernel placeholder"), None) => {
                scmp_name(nr, sa).is_none()
            }
            // A pseudo-syscall, while the reverse lookup names our number correctly.
            (Some("multiplexed"), Some(n)) if n < 0 => scmp_name(nr, sa).as_deref() == Some(name),
            _ => false,
        };
        if explained {
            out.excepted += 1;
            used.insert((
                why.expect("explained implies an exception"),
                name.to_string(),
            ));
        } else {
            failures.push(format!(
                "{arch}: `{name}` is {nr} in our table, libseccomp says {theirs:?} (reverse: {:?})",
                scmp_name(nr, sa)
            ));
        }
    }

    // Reverse: every number libseccomp can name → our name for it.
    let b = base(arch);
    // __ARM_NR_BASE: the ARM-private calls.
    let arm_private = if arch == Arch::Arm {
        0x0f_0000..0x0f_0800
    } else {
        0..0
    };
    for nr in (b..b + 1024).chain(arm_private) {
        if let Some(theirs) = scmp_name(nr, sa) {
            out.reverse_checked += 1;
            if table.name(nr) != Some(theirs.as_str()) {
                failures.push(format!(
                    "{arch}: libseccomp names {nr:#x} `{theirs}`, our table says {:?}",
                    table.name(nr)
                ));
            }
        }
    }
    out
}

#[test]
fn tables_agree_with_libseccomp_on_every_shared_arch() {
    let v = ScmpVersion::current().expect("libseccomp version");
    let exact = (v.major, v.minor, v.micro) == CHECKED_LIBSECCOMP;
    let mut failures = Vec::new();
    let mut used = BTreeSet::new();
    let mut compared = Vec::new();
    for arch in Arch::ALL {
        let sa = scmp_arch(arch);
        if !matches!(scmp_nr("read", sa), Some(n) if n >= 0) {
            // libseccomp gained loongarch64 in 2.6.0; any other arch must be supported.
            assert!(
                arch == Arch::Loongarch64 && (v.major, v.minor) < (2, 6),
                "libseccomp {}.{}.{} cannot resolve `read` on {arch}",
                v.major,
                v.minor,
                v.micro
            );
            eprintln!(
                "{arch}: not supported by libseccomp {}.{}.{}, skipped",
                v.major, v.minor, v.micro
            );
            continue;
        }
        let out = compare_arch(arch, &mut used, &mut failures);
        eprintln!(
            "{arch}: {} names agree, {} explained differences, {} libseccomp-named numbers checked back",
            out.agree, out.excepted, out.reverse_checked
        );
        // Not vacuous: every table is large and mostly shared.
        assert!(out.agree >= 300, "{arch}: only {} names agree", out.agree);
        assert!(
            out.reverse_checked >= out.agree,
            "{arch}: reverse probe missed numbers"
        );
        compared.push(arch);
    }
    assert!(
        failures.is_empty(),
        "unexplained differences:\n{}",
        failures.join("\n")
    );
    assert!(compared.len() >= 16, "compared only {compared:?}");

    if exact {
        // Every listed exception occurs with the libseccomp version the lists were made for.
        let used_names: BTreeSet<&str> = used.iter().map(|(_, n)| n.as_str()).collect();
        let mut stale: Vec<&str> = NEWER_THAN_LIBSECCOMP.iter().map(|&(n, _)| n).collect();
        stale.extend(KERNEL_PLACEHOLDERS.iter().map(|&(_, n)| n));
        stale.retain(|n| !used_names.contains(n));
        assert!(
            stale.is_empty(),
            "exceptions that no longer occur: {stale:?}"
        );
        for arch in MULTIPLEXED_ARCHES {
            assert!(
                used.iter()
                    .any(|(why, n)| *why == "multiplexed" && arch.syscalls().nr(n).is_some()),
                "{arch}: no multiplexed difference seen"
            );
        }
    }
}

#[test]
fn multiplexed_arches_really_have_the_multiplexers() {
    // The MULTIPLEXED exception is only honest where the kernel has socketcall(2) or ipc(2).
    for arch in MULTIPLEXED_ARCHES {
        let t = arch.syscalls();
        assert!(
            t.nr("socketcall").is_some() || t.nr("ipc").is_some(),
            "{arch} has neither socketcall nor ipc"
        );
    }
}

#[test]
fn kernel_corrections_match_libseccomp() {
    // The entries tables.rs adds or renames relative to syscall-numbers, checked one by one
    // against libseccomp (which generates its tables from the kernel's headers).
    let cases: &[(Arch, &str, u32)] = &[
        (Arch::X86, "clock_gettime", 265),
        (Arch::X86, "getrlimit", 76),
        (Arch::X86, "mq_getsetattr", 282),
        (Arch::Arm, "cacheflush", 0xf_0002),
        (Arch::Arm, "set_tls", 0xf_0005),
        (Arch::Arm, "breakpoint", 0xf_0001),
        (Arch::Arm, "arm_fadvise64_64", 270),
        (Arch::Arm, "arm_sync_file_range", 341),
        (Arch::Riscv64, "riscv_flush_icache", 259),
        (Arch::Mips, "gettimeofday", 4078),
        (Arch::Mips64n32, "timerfd_gettime", 6285),
        (Arch::Ppc, "clock_nanosleep", 248),
    ];
    for &(arch, name, nr) in cases {
        assert_eq!(arch.syscalls().nr(name), Some(nr), "{arch} {name}");
        assert_eq!(
            scmp_nr(name, scmp_arch(arch)),
            Some(nr as i32),
            "libseccomp {arch} {name}"
        );
    }
    // x32 has no map_shadow_stack (ABI `64` in syscall_64.tbl); libseccomp agrees.
    assert_eq!(Arch::X32.syscalls().nr("map_shadow_stack"), None);
    assert!(scmp_nr("map_shadow_stack", ScmpArch::X32).is_some_and(|n| n < 0));
}
