//! A stack shaped like systemd's, built by the system libseccomp, joined by
//! `optimize::optimize_stack`.
//!
//! systemd installs one filter per hardening option and per ABI (`SECCOMP_FOREACH_LOCAL_ARCH`
//! in src/shared/seccomp-util.c: each filter covers one arch and allows every other one, its
//! bad-arch action being ALLOW). Here four options — a deny-list like `SystemCallFilter=~@mount
//! @module @reboot @swap`, `RestrictNamespaces=yes`, `MemoryDenyWriteExecute=yes`,
//! `RestrictRealtime=yes` — for x86_64, x86 and x32: twelve filters from libseccomp's own code
//! generator, each run on every call the cache does not skip.
//!
//! The joined output must be proved equal (the self-check), decide every swept input as the
//! kernel's stack rule does over libseccomp's programs (`eval_stack`, which
//! `tests/stack_kernel.rs` checks against the kernel), and keep every syscall the stack lets
//! the kernel cache cached. On x86_64 the kernel itself also answers the output as it
//! answers the joined stack.

use libseccomp::{
    ScmpAction, ScmpArch, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall,
};
use secopt::arch::Arch;
use secopt::bpf::stack::{as_one_program, eval_stack};
use secopt::bpf::testing::Rng;
use secopt::bpf::{interp, Program, SeccompData};
use secopt::optimize::cost::Caches;
use secopt::optimize::{optimize_stack, OptimizeOptions, Verification};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::FromRawFd;

const EPERM: i32 = 1;
const NAMESPACE_FLAGS: [u64; 7] = [
    0x0002_0000, // CLONE_NEWNS
    0x0200_0000, // CLONE_NEWCGROUP
    0x0400_0000, // CLONE_NEWUTS
    0x0800_0000, // CLONE_NEWIPC
    0x1000_0000, // CLONE_NEWUSER
    0x2000_0000, // CLONE_NEWPID
    0x4000_0000, // CLONE_NEWNET
];
const PROT_WRITE: u64 = 2;
const PROT_EXEC: u64 = 4;
const DENIED: [&str; 14] = [
    "mount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsmount",
    "move_mount",
    "open_tree",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "kexec_load",
    "swapon",
    "swapoff",
];

fn export(ctx: &ScmpFilterContext) -> Program {
    // SAFETY: memfd_create with a static name; the descriptor is owned by the File.
    let fd = unsafe { libc::memfd_create(c"secopt-test-stack".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: a fresh descriptor nobody else owns.
    let mut file = unsafe { File::from_raw_fd(fd) };
    ctx.export_bpf(&file).unwrap();
    let mut raw = Vec::new();
    file.seek(SeekFrom::Start(0)).unwrap();
    file.read_to_end(&mut raw).unwrap();
    Program::from_raw(&raw).unwrap()
}

/// A filter for `arch` alone, as systemd's `seccomp_init_for_arch`: default ALLOW, other
/// arches ALLOW; `rules` adds the option's rules.
fn for_arch(arch: ScmpArch, rules: impl Fn(&mut ScmpFilterContext, ScmpArch)) -> Program {
    let mut ctx = ScmpFilterContext::new(ScmpAction::Allow).unwrap();
    ctx.set_act_badarch(ScmpAction::Allow).unwrap();
    let native = ScmpArch::native();
    if arch != native {
        ctx.add_arch(arch).unwrap();
        ctx.remove_arch(native).unwrap();
    }
    rules(&mut ctx, arch);
    export(&ctx)
}

/// `name` as libseccomp's rules take it (resolved for the host, translated by name into the
/// filter's ABI), if `arch` has that syscall (libseccomp answers a negative pseudo number for
/// a name an ABI lacks, such as `mmap2` on x86_64).
fn syscall(name: &str, arch: ScmpArch) -> Option<ScmpSyscall> {
    ScmpSyscall::from_name_by_arch(name, arch)
        .ok()
        .filter(|s| s.as_raw_syscall() >= 0)?;
    ScmpSyscall::from_name(name).ok()
}

fn deny(ctx: &mut ScmpFilterContext, arch: ScmpArch, name: &str, conds: &[ScmpArgCompare]) {
    if let Some(s) = syscall(name, arch) {
        ctx.add_rule_conditional(ScmpAction::Errno(EPERM), s, conds)
            .unwrap();
    }
}

/// The twelve filters, in the order systemd installs them (option by option, each for every
/// ABI).
fn systemd_like_stack() -> Vec<Program> {
    let arches = [ScmpArch::X8664, ScmpArch::X86, ScmpArch::X32];
    let masked =
        |arg: u32, mask: u64| ScmpArgCompare::new(arg, ScmpCompareOp::MaskedEqual(mask), mask);
    let mut stack = Vec::new();
    for arch in arches {
        stack.push(for_arch(arch, |ctx, arch| {
            for name in DENIED {
                deny(ctx, arch, name, &[]);
            }
        }));
    }
    for arch in arches {
        stack.push(for_arch(arch, |ctx, arch| {
            for flag in NAMESPACE_FLAGS {
                deny(ctx, arch, "unshare", &[masked(0, flag)]);
                deny(ctx, arch, "clone", &[masked(0, flag)]);
                deny(ctx, arch, "setns", &[masked(1, flag)]);
            }
        }));
    }
    for arch in arches {
        stack.push(for_arch(arch, |ctx, arch| {
            for mmap in ["mmap", "mmap2"] {
                deny(ctx, arch, mmap, &[masked(2, PROT_WRITE | PROT_EXEC)]);
            }
            for name in ["mprotect", "pkey_mprotect"] {
                deny(ctx, arch, name, &[masked(2, PROT_EXEC)]);
            }
        }));
    }
    for arch in arches {
        stack.push(for_arch(arch, |ctx, arch| {
            for policy in [1, 2, 6] {
                let eq = ScmpArgCompare::new(1, ScmpCompareOp::Equal, policy);
                deny(ctx, arch, "sched_setscheduler", &[eq]);
            }
        }));
    }
    stack
}

#[test]
fn a_systemd_like_stack_joins_into_one_filter_that_decides_as_the_stack() {
    let stack = systemd_like_stack();
    assert_eq!(stack.len(), 12);
    let out = optimize_stack(&stack, &OptimizeOptions::default()).unwrap();
    assert_eq!(out.verification, Verification::Equal);
    let total: usize = stack.iter().map(Program::len).sum();
    eprintln!(
        "systemd-like stack: {} filters, {total} instructions in all -> {}",
        stack.len(),
        out.program.len()
    );

    // Every syscall number of the three ABIs (and some past them), with argument values
    // around the flags the rules test.
    let values = [0, 1, 2, 6, PROT_WRITE | PROT_EXEC, PROT_EXEC, u64::MAX]
        .into_iter()
        .chain(NAMESPACE_FLAGS)
        .chain(NAMESPACE_FLAGS.map(|f| f | 1 << 32));
    let values: Vec<u64> = values.collect();
    let mut checked = 0;
    for token in [0xc000_003e, 0x4000_0003, 0xc000_00b7] {
        for nr in (0..560).chain(0x4000_0000..0x4000_0230) {
            for &v in &values {
                let d = SeccompData::new(token, nr, [v; 6]);
                assert_eq!(
                    interp::eval(&out.program, &d).unwrap(),
                    eval_stack(&stack, &d).unwrap(),
                    "{d:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 50_000);

    let arches = [Arch::X86_64, Arch::X86, Arch::X32];
    let kernel = secopt::bpf::cache::KernelVersion::MODELLED;
    let (before, after) = (
        Caches::for_stack(&stack, &arches, kernel),
        Caches::new(&out.program, &arches, kernel),
    );
    let mut cached = 0;
    for (name, token, numbers) in before.sets() {
        for nr in numbers {
            assert!(
                after.is_cached(token, nr),
                "{name} {nr} is no longer cached"
            );
            cached += 1;
        }
    }
    // Most of each ABI is allowed outright by every filter.
    assert!(cached > 600, "only {cached} cached");

    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    on_the_kernel(&stack, &out.program, &values);
}

/// The kernel answers the output as it answers the joined stack, on every number of the
/// three x86_64 entries.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn on_the_kernel(stack: &[Program], output: &Program, values: &[u64]) {
    use secopt::kernel::oracle::NATIVE_PASSTHROUGH_NRS;
    use secopt::kernel::{Call, Entry, Oracle, OracleError};
    let oracle = match Oracle::new() {
        Ok(o) => o,
        Err(OracleError::Unavailable(why)) => {
            assert!(
                std::env::var_os("SECOPT_REQUIRE_KERNEL_ORACLE").is_none(),
                "kernel oracle unavailable: {why}"
            );
            eprintln!("\n******** SKIPPED (kernel part): {why} ********\n");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let joined = as_one_program(stack).unwrap();
    let mut calls = Vec::new();
    for entry in Entry::ALL.into_iter().filter(|e| oracle.supports(*e)) {
        for nr in 0..560 {
            if entry == Entry::Native && NATIVE_PASSTHROUGH_NRS.contains(&nr) {
                continue;
            }
            calls.extend(values.iter().map(|&v| Call::new(entry, nr, [v; 6])));
        }
    }
    let want = oracle.run(&joined, &calls).unwrap();
    let got = oracle.run(output, &calls).unwrap();
    for ((c, w), g) in calls.iter().zip(&want).zip(&got) {
        assert_eq!(w.value, g.value, "{c:?}");
    }
}

/// Sixteen filters of forty denied syscalls each (five errno values), as a service with
/// many hardening options and syscall-filter lines gets: the stack's filters cut `nr` into
/// hundreds of ranges, and the lifting walks every later filter once per range. It joins into
/// one filter that decides every swept input as the stack does (the lifting's first bound,
/// 200,000 contexts, refused it, and nothing was written).
#[test]
fn a_stack_of_sixteen_syscall_lists_joins_into_one_filter() {
    let mut rng = Rng::new(0x5eed);
    let stack: Vec<Program> = (0..16)
        .map(|_| {
            let mut text = String::from(
                "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njge #0x40000000, kill\n",
            );
            for i in 0..40 {
                text += &format!("jeq #{}, e{}, next\n", rng.below(450), i % 5);
            }
            text += "ret ALLOW\n";
            for e in 0..5 {
                text += &format!("e{e}:\nret ERRNO({})\n", 10 + e);
            }
            text += "kill:\nret KILL_PROCESS\n";
            secopt::bpf::asm::assemble(&text).unwrap()
        })
        .collect();
    let out = optimize_stack(&stack, &OptimizeOptions::default()).unwrap();
    assert_eq!(out.verification, Verification::Equal);
    for token in [0xc000_003e, 0x4000_0003] {
        for nr in (0..560).chain(0x4000_0000..0x4000_0230) {
            let d = SeccompData::new(token, nr, [0; 6]);
            assert_eq!(
                interp::eval(&out.program, &d).unwrap(),
                eval_stack(&stack, &d).unwrap(),
                "{d:?}"
            );
        }
    }
}

/// Sixty-four small filters (ten syscalls each, some with argument checks, thirty errno
/// values): the join passes 4096 instructions, the lifting gives up, and the passes' program
/// that fits keeps the joined layout, which loses the cache. The error says all of it: why
/// the program that fits was dropped, and why the lifting made no candidate.
#[test]
fn a_stack_no_candidate_fits_says_why_each_was_missing() {
    use secopt::optimize::{NoteKind, OptimizeError, StackOptimizeError};
    let mut rng = Rng::new(0xfee1);
    let stack: Vec<Program> = (0..64)
        .map(|i| {
            let mut text = String::from(
                "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njge #0x40000000, kill\n",
            );
            let mut bodies = String::new();
            for j in 0..10 {
                let nr = rng.below(335);
                if j % 3 == 0 {
                    text += &format!("jeq #{nr}, a{j}, next\n");
                    bodies += &format!(
                        "a{j}:\nld [args[{}].lo]\njset #{}, e{}, next\njeq #{}, e{}, allow\n",
                        j % 6,
                        1u32 << j,
                        i % 30 + 1,
                        rng.below(1000),
                        i % 30 + 1
                    );
                } else {
                    text += &format!("jeq #{nr}, e{}, next\n", j % 5 + 1);
                }
            }
            text += "ja allow\n";
            text += &bodies;
            for e in 1..=30 {
                text += &format!("e{e}:\nret ERRNO({e})\n");
            }
            text += "kill:\nret KILL_PROCESS\nallow:\nret ALLOW\n";
            secopt::bpf::asm::assemble(&text).unwrap()
        })
        .collect();
    match optimize_stack(&stack, &OptimizeOptions::default()) {
        Err(StackOptimizeError::Optimize(e @ OptimizeError::Dropped { .. })) => {
            let OptimizeError::Dropped { reasons, .. } = &e else {
                unreachable!()
            };
            assert!(
                reasons
                    .iter()
                    .any(|n| n.kind == NoteKind::CandidateFailed && n.text.starts_with("lifting:")),
                "{e}"
            );
            assert!(e.to_string().contains("allow cache cannot follow"), "{e}");
        }
        other => panic!("{:?}", other.map(|o| o.program.len())),
    }
}
