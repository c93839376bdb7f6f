//! The allow-cache emulator (`secopt::bpf::cache`) against hand-computed examples, the
//! reference interpreter on thousands of random programs, and filters the system libseccomp
//! generates, whose cacheable sets are known independently of secopt.

use libseccomp::{
    ScmpAction, ScmpArch, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall,
};
use secopt::arch::Arch;
use secopt::bpf::action::{
    SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_LOG,
};
use secopt::bpf::cache::{
    is_const_allow, CacheBitmap, CacheStatus, ConstAllow, KernelCache, KernelVersion, NotCacheable,
};
use secopt::bpf::insn::*;
use secopt::bpf::testing::{random_data, random_program, GenConfig, Rng};
use secopt::bpf::{interp, validate, Program, RetVal, SeccompData};
use std::collections::BTreeSet;
use std::io::{Read, Seek};
use std::os::fd::FromRawFd;

const X86_64: u32 = 0xc000_003e; // AUDIT_ARCH_X86_64
const I386: u32 = 0x4000_0003; // AUDIT_ARCH_I386
const AARCH64: u32 = 0xc000_00b7;
const ARM: u32 = 0x4000_0028;

fn jmp(op: u16, k: u32, jt: u8, jf: u8) -> Insn {
    Insn::jump(BPF_JMP | op | BPF_K, k, jt, jf)
}

fn kernel_6_18() -> KernelCache {
    KernelCache::for_arch(Arch::X86_64).expect("x86_64 has the cache")
}

// ---------------------------------------------------------------------------------------------
// Hand-computed examples, one per instruction kind the emulator understands.

#[test]
fn jge_jgt_jset_and_ja() {
    // 0: ld nr
    // 1: jge 100      ? 2 : 5
    // 2: jgt 200      ? 3 : 7      (100..=200 → allow at 7)
    // 3: jset 1       ? 4 : 6      (odd > 200 → ja → allow; even > 200 → errno)
    // 4: ja 2         → 7
    // 5: ret KILL_PROCESS          (< 100)
    // 6: ret ERRNO(13)
    // 7: ret ALLOW
    let p = Program::new(vec![
        Insn::ld_abs(0),
        jmp(BPF_JGE, 100, 0, 3),
        jmp(BPF_JGT, 200, 0, 4),
        jmp(BPF_JSET, 1, 0, 2),
        Insn::ja(2),
        Insn::ret(SECCOMP_RET_KILL_PROCESS),
        Insn::ret(SECCOMP_RET_ERRNO | 13),
        Insn::ret(SECCOMP_RET_ALLOW),
    ]);
    validate::validate(&p).expect("valid");
    let allow = ConstAllow::Allow { pc: 7 };
    assert_eq!(is_const_allow(&p, X86_64, 100), allow);
    assert_eq!(is_const_allow(&p, X86_64, 200), allow);
    assert_eq!(is_const_allow(&p, X86_64, 201), allow); // odd: JSET taken, JA to 7
    assert_eq!(
        is_const_allow(&p, X86_64, 202),
        ConstAllow::No(NotCacheable::Return {
            pc: 6,
            value: RetVal(SECCOMP_RET_ERRNO | 13)
        })
    );
    assert_eq!(
        is_const_allow(&p, X86_64, 99),
        ConstAllow::No(NotCacheable::Return {
            pc: 5,
            value: RetVal(SECCOMP_RET_KILL_PROCESS)
        })
    );
}

#[test]
fn alu_and_k_and_arch_loads() {
    // Allow i386 syscalls whose number has bits 0-1 clear; everything else LOG.
    let p = Program::new(vec![
        Insn::ld_abs(4),
        jmp(BPF_JEQ, I386, 0, 3),
        Insn::ld_abs(0),
        Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 3),
        jmp(BPF_JEQ, 0, 1, 0),
        Insn::ret(SECCOMP_RET_LOG),
        Insn::ret(SECCOMP_RET_ALLOW),
    ]);
    validate::validate(&p).expect("valid");
    assert_eq!(is_const_allow(&p, I386, 8), ConstAllow::Allow { pc: 6 });
    assert!(!is_const_allow(&p, I386, 9).is_allow());
    assert_eq!(
        is_const_allow(&p, X86_64, 8),
        ConstAllow::No(NotCacheable::Return {
            pc: 5,
            value: RetVal(SECCOMP_RET_LOG)
        })
    );
}

#[test]
fn allow_with_data_and_other_allowing_actions_are_not_cached() {
    // The kernel caches `k == SECCOMP_RET_ALLOW` only: ALLOW(1) and LOG allow the call too.
    for k in [
        SECCOMP_RET_ALLOW | 1,
        SECCOMP_RET_ALLOW | 0xffff,
        SECCOMP_RET_LOG,
    ] {
        let p = Program::new(vec![Insn::ret(k)]);
        let bitmap = CacheBitmap::new(kernel_6_18()).attach(&p);
        assert_eq!(bitmap.cached_numbers(X86_64), vec![335, 336], "k={k:#x}");
        assert!(bitmap.cached_numbers(I386).is_empty(), "k={k:#x}");
        assert_eq!(
            bitmap.status(X86_64, 0).to_string(),
            format!("not cached: filter 0 reaches RET {} at 0", RetVal(k))
        );
    }
}

#[test]
fn table_edges_and_numbers_outside_the_bitmap() {
    // Allow everything: every number in the bitmap is cached, nothing outside it is.
    let allow_all = Program::new(vec![Insn::ret(SECCOMP_RET_ALLOW)]);
    let b = CacheBitmap::new(kernel_6_18()).attach(&allow_all);
    // x86_64 and i386 6.18 tables end with listns = 470: NR_syscalls = 471.
    assert!(b.is_cached(X86_64, 470));
    assert!(!b.is_cached(X86_64, 471));
    assert!(b.is_cached(I386, 470));
    assert!(!b.is_cached(I386, 471));
    assert_eq!(b.cached_numbers(X86_64).len(), 471);
    // x32 numbers carry bit 30 and the x86_64 token: never cached.
    let x32_read = 0x4000_0000;
    assert_eq!(
        b.status(X86_64, x32_read),
        CacheStatus::OutsideTable { table_size: 471 }
    );
    // nr -1 (what a ptrace skip leaves) is negative: never cached.
    assert!(!b.is_cached(X86_64, u32::MAX));
    // A token that is neither native nor compat on a compat-capable kernel.
    assert_eq!(b.status(AARCH64, 0), CacheStatus::NoBitmap);

    // arm64 with its arm compat bitmap: ARM-private calls (0xf0000 + n) are outside it.
    let arm64 = CacheBitmap::new(KernelCache::for_arch(Arch::Aarch64).unwrap()).attach(&allow_all);
    let set_tls = Arch::Arm.syscalls().nr("set_tls").unwrap();
    assert_eq!(set_tls, 0xf_0005);
    assert!(arm64.is_cached(ARM, 470));
    assert!(!arm64.is_cached(ARM, set_tls));
    assert!(arm64.is_cached(AARCH64, 470));
    assert!(!arm64.is_cached(AARCH64, 471));

    // The last number is cached only if the filter allows it: `nr >= 470` → allow.
    let high = Program::new(vec![
        Insn::ld_abs(0),
        jmp(BPF_JGE, 470, 0, 1),
        Insn::ret(SECCOMP_RET_ALLOW),
        Insn::ret(SECCOMP_RET_ERRNO | 1),
    ]);
    let b = CacheBitmap::new(kernel_6_18().without_compat()).attach(&high);
    assert_eq!(b.cached_numbers(X86_64), vec![335, 336, 470]);
}

#[test]
fn uretprobe_and_uprobe_pass_through_on_x86_64_native_only() {
    let deny_all = Program::new(vec![Insn::ret(SECCOMP_RET_ERRNO | 1)]);
    let status = |v: KernelVersion, token: u32, nr: u32| {
        let k = KernelCache::for_kernel(Arch::X86_64, v).unwrap();
        CacheBitmap::new(k).attach(&deny_all).status(token, nr)
    };
    let pass = CacheStatus::Cached {
        how: ConstAllow::Passthrough,
    };
    assert_eq!(status(KernelVersion::new(6, 18), X86_64, 335), pass);
    assert_eq!(status(KernelVersion::new(6, 18), X86_64, 336), pass);
    assert_eq!(status(KernelVersion::new(6, 14), X86_64, 335), pass);
    assert!(!status(KernelVersion::new(6, 14), X86_64, 336).is_cached());
    assert!(!status(KernelVersion::new(6, 11), X86_64, 335).is_cached());
    // Only for the native arch: i386 335/336 are ordinary numbers.
    assert!(!status(KernelVersion::new(6, 18), I386, 335).is_cached());
    // No such exception on other kernels.
    let arm64 = CacheBitmap::new(KernelCache::for_arch(Arch::Aarch64).unwrap()).attach(&deny_all);
    assert!(arm64.cached_numbers(AARCH64).is_empty());
}

#[test]
fn no_cache_before_5_11_and_on_mips() {
    assert!(KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(5, 10)).is_none());
    assert!(KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(5, 11)).is_some());
    for a in [
        Arch::Mips,
        Arch::Mipsel,
        Arch::Mips64,
        Arch::Mipsel64,
        Arch::Mips64n32,
    ] {
        assert!(KernelCache::for_arch(a).is_none(), "{a}");
    }
}

#[test]
fn new_filter_bitmap_is_the_and_with_the_previous_one() {
    // Filter A allows 0..10 unconditionally; filter B allows even numbers, checks args of 4.
    let a = Program::new(vec![
        Insn::ld_abs(0),
        jmp(BPF_JGE, 10, 1, 0),
        Insn::ret(SECCOMP_RET_ALLOW),
        Insn::ret(SECCOMP_RET_ERRNO | 1),
    ]);
    let b = Program::new(vec![
        Insn::ld_abs(0),
        jmp(BPF_JEQ, 4, 3, 0),
        jmp(BPF_JSET, 1, 1, 0),
        Insn::ret(SECCOMP_RET_ALLOW),
        Insn::ret(SECCOMP_RET_ERRNO | 2),
        Insn::ld_abs(16),
        Insn::ret(SECCOMP_RET_ALLOW),
    ]);
    let k = KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(6, 1)).unwrap();
    let after_a = CacheBitmap::new(k.clone()).attach(&a);
    assert_eq!(after_a.cached_numbers(X86_64), (0..10).collect::<Vec<_>>());
    let after_ab = after_a.attach(&b);
    assert_eq!(after_ab.cached_numbers(X86_64), vec![0, 2, 6, 8]);
    // Order does not matter for the bits; the reasons name the filter that cleared them.
    let after_ba = CacheBitmap::new(k).attach(&b).attach(&a);
    assert_eq!(after_ba.cached_numbers(X86_64), vec![0, 2, 6, 8]);
    assert_eq!(
        after_ab.status(X86_64, 12).to_string(),
        "not cached: filter 0 reaches RET ERRNO(1) at 3"
    );
    assert_eq!(
        after_ba.status(X86_64, 12).to_string(),
        "not cached: filter 1 reaches RET ERRNO(1) at 3"
    );
    assert_eq!(
        after_ab.status(X86_64, 4).to_string(),
        "not cached: filter 1 loads args[0].lo at 5"
    );
    assert_eq!(
        after_ab.status(X86_64, 3).to_string(),
        "not cached: filter 1 reaches RET ERRNO(2) at 4"
    );
}

// ---------------------------------------------------------------------------------------------
// Random programs against the interpreter.

/// Instructions the kernel's emulator follows (and `is_const_allow` claims to handle alone).
fn emulator_understands(insn: &Insn) -> bool {
    match insn.code {
        c if c == BPF_LD | BPF_W | BPF_ABS => insn.k == 0 || insn.k == 4,
        c if c == BPF_RET | BPF_K => true,
        c if c == BPF_JMP | BPF_JA => true,
        c if c == BPF_ALU | BPF_AND | BPF_K => true,
        c => class(c) == BPF_JMP && src(c) == BPF_K,
    }
}

fn data_with(rng: &mut Rng, prog: &Program, token: u32, nr: u32) -> SeccompData {
    let mut d = random_data(rng, prog, &[token]);
    d.arch = token;
    d.nr = nr as i32;
    d
}

fn interesting_numbers(rng: &mut Rng, prog: &Program) -> Vec<u32> {
    let mut nrs: Vec<u32> = prog
        .insns
        .iter()
        .filter(|i| i.is_conditional_jump())
        .flat_map(|i| [i.k, i.k.wrapping_add(1), i.k.wrapping_sub(1)])
        .filter(|&k| k < 471)
        .collect();
    nrs.extend([0, 470, rng.below(471) as u32]);
    nrs
}

#[test]
fn emulator_agrees_with_the_interpreter_on_random_programs() {
    let mut rng = Rng::new(0x5ecc_0a11);
    let configs = [GenConfig::cache_friendly(), GenConfig::default()];
    let mut counts = [0usize; 3]; // allow, exact non-allow return, other
    for round in 0..6000 {
        let cfg = &configs[round % 2];
        let prog = random_program(&mut rng, cfg);
        validate::validate(&prog).expect("the generator makes valid programs");
        for token in [X86_64, I386] {
            for nr in interesting_numbers(&mut rng, &prog) {
                let verdict = is_const_allow(&prog, token, nr);
                match verdict {
                    ConstAllow::Allow { .. } => counts[0] += 1,
                    ConstAllow::No(NotCacheable::Return { .. }) => counts[1] += 1,
                    _ => counts[2] += 1,
                }
                for _ in 0..4 {
                    let d = data_with(&mut rng, &prog, token, nr);
                    let t = interp::trace(&prog, &d).expect("valid programs run");
                    // Soundness: a constant verdict holds for every argument and IP.
                    match verdict {
                        ConstAllow::Allow { pc } => {
                            assert_eq!(t.ret, RetVal::ALLOW, "{prog:?} nr={nr} {d:?}");
                            assert_eq!(t.path.last(), Some(&pc));
                        }
                        ConstAllow::No(NotCacheable::Return { pc, value }) => {
                            assert_eq!(
                                (t.ret, t.path.last()),
                                (value, Some(&pc)),
                                "{prog:?} nr={nr}"
                            );
                        }
                        _ => {}
                    }
                    // Completeness: a path through understood instructions only is decided
                    // exactly as the interpreter decides it.
                    if t.path
                        .iter()
                        .all(|&pc| emulator_understands(&prog.insns[pc]))
                    {
                        let expected = if t.ret == RetVal::ALLOW {
                            ConstAllow::Allow {
                                pc: *t.path.last().unwrap(),
                            }
                        } else {
                            ConstAllow::No(NotCacheable::Return {
                                pc: *t.path.last().unwrap(),
                                value: t.ret,
                            })
                        };
                        assert_eq!(verdict, expected, "{prog:?} nr={nr} {d:?}");
                    } else {
                        // The first instruction it does not understand is the reason given.
                        let first = t
                            .path
                            .iter()
                            .copied()
                            .find(|&pc| !emulator_understands(&prog.insns[pc]))
                            .unwrap();
                        match verdict {
                            ConstAllow::No(NotCacheable::Load { pc, .. })
                            | ConstAllow::No(NotCacheable::Unsupported { pc, .. }) => {
                                assert_eq!(pc, first, "{prog:?} nr={nr}")
                            }
                            other => panic!("{other:?} although the path uses {first}: {prog:?}"),
                        }
                    }
                }
            }
        }
    }
    // The generator reaches every kind of verdict often.
    assert!(counts.iter().all(|&c| c > 1000), "{counts:?}");
}

#[test]
fn cached_syscalls_are_allowed_by_every_stacked_filter() {
    let mut rng = Rng::new(77);
    let kernel = KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(6, 6)).unwrap();
    let cfg = GenConfig::cache_friendly();
    let mut cached_seen = 0;
    for _ in 0..300 {
        let progs: Vec<Program> = (0..1 + rng.below(3))
            .map(|_| random_program(&mut rng, &cfg))
            .collect();
        let mut bitmap = CacheBitmap::new(kernel.clone());
        for p in &progs {
            bitmap = bitmap.attach(p);
        }
        for token in [X86_64, I386] {
            for nr in 0..471u32 {
                // Linux 6.6's tables end at map_shadow_stack (453): numbers past them are
                // never cached.
                let expected = nr <= 453
                    && progs
                        .iter()
                        .all(|p| is_const_allow(p, token, nr).is_allow());
                assert_eq!(bitmap.is_cached(token, nr), expected, "nr {nr}");
                if expected && rng.chance(1, 8) {
                    cached_seen += 1;
                    for p in &progs {
                        let d = data_with(&mut rng, p, token, nr);
                        assert_eq!(interp::eval(p, &d).unwrap(), RetVal::ALLOW);
                    }
                }
            }
        }
    }
    assert!(cached_seen > 100, "{cached_seen}");
}

// ---------------------------------------------------------------------------------------------
// Filters generated by the system libseccomp.

const UNCONDITIONAL: &[&str] = &[
    "read",
    "write",
    "close",
    "getpid",
    "exit_group",
    "brk",
    "futex",
    "clock_gettime",
];

/// Exports `ctx` as raw BPF through a memfd (libseccomp 2.5 has no in-memory export).
fn export(ctx: &ScmpFilterContext) -> Program {
    // SAFETY: memfd_create returns a fresh descriptor that the File then owns.
    let fd = unsafe { libc::memfd_create(c"secopt-test".as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create failed");
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    ctx.export_bpf(&file).expect("export_bpf");
    file.rewind().unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    let prog = Program::from_raw(&bytes).expect("whole instructions");
    validate::validate(&prog).expect("libseccomp output is valid");
    prog
}

fn libseccomp_filter(optimize: Option<u32>) -> Program {
    let mut ctx = ScmpFilterContext::new(ScmpAction::Errno(libc::EPERM)).unwrap();
    ctx.add_arch(ScmpArch::X86).unwrap();
    ctx.add_arch(ScmpArch::X32).unwrap();
    if let Some(level) = optimize {
        ctx.set_ctl_optimize(level).unwrap();
    }
    for name in UNCONDITIONAL {
        ctx.add_rule(ScmpAction::Allow, ScmpSyscall::from_name(name).unwrap())
            .unwrap();
    }
    // Conditional allows: never cacheable.
    let eq = |arg: u32, v: u64| ScmpArgCompare::new(arg, ScmpCompareOp::Equal, v);
    ctx.add_rule_conditional(
        ScmpAction::Allow,
        ScmpSyscall::from_name("ioctl").unwrap(),
        &[eq(1, 0x5401)],
    )
    .unwrap();
    ctx.add_rule_conditional(
        ScmpAction::Allow,
        ScmpSyscall::from_name("openat").unwrap(),
        &[ScmpArgCompare::new(2, ScmpCompareOp::MaskedEqual(3), 0)],
    )
    .unwrap();
    ctx.add_rule_conditional(
        ScmpAction::Allow,
        ScmpSyscall::from_name("kill").unwrap(),
        &[eq(0, 0)],
    )
    .unwrap();
    // A different action without conditions: not cacheable either.
    ctx.add_rule(
        ScmpAction::Errno(libc::ENOSYS),
        ScmpSyscall::from_name("ptrace").unwrap(),
    )
    .unwrap();
    export(&ctx)
}

/// The unconditionally allowed syscalls' numbers on `arch`, as libseccomp resolves them.
fn unconditional_numbers(arch: ScmpArch) -> BTreeSet<u32> {
    UNCONDITIONAL
        .iter()
        .map(|n| {
            let nr = i32::from(ScmpSyscall::from_name_by_arch(n, arch).unwrap());
            u32::try_from(nr).expect("a real syscall on this arch")
        })
        .collect()
}

#[test]
fn libseccomp_filters_cache_exactly_their_unconditional_allows() {
    let native = unconditional_numbers(ScmpArch::X8664);
    let i386 = unconditional_numbers(ScmpArch::X86);
    assert_eq!(native.len(), UNCONDITIONAL.len());
    // Optimize level 1 (libseccomp's default, linear per arch) and 2 (binary tree).
    let linear = libseccomp_filter(None);
    let tree = libseccomp_filter(Some(2));
    assert_ne!(
        linear, tree,
        "the binary-tree layout differs from the linear one"
    );
    for (optimize, prog) in [(None, linear), (Some(2), tree)] {
        // Without passthrough (a 6.6 kernel): exactly the unconditional allows.
        let k66 = KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(6, 6)).unwrap();
        let b = CacheBitmap::new(k66).attach(&prog);
        let got: BTreeSet<u32> = b.cached_numbers(X86_64).into_iter().collect();
        assert_eq!(got, native, "x86_64, optimize {optimize:?}");
        let got: BTreeSet<u32> = b.cached_numbers(I386).into_iter().collect();
        assert_eq!(got, i386, "i386, optimize {optimize:?}");
        // x32: nothing, though the filter allows x32 read.
        let x32_read =
            i32::from(ScmpSyscall::from_name_by_arch("read", ScmpArch::X32).unwrap()) as u32;
        assert_eq!(x32_read, 0x4000_0000);
        assert!(!b.is_cached(X86_64, x32_read));

        // On 6.18 uretprobe and uprobe join on the native arch only.
        let b = CacheBitmap::new(kernel_6_18()).attach(&prog);
        let mut expected = native.clone();
        expected.extend([335, 336]);
        let got: BTreeSet<u32> = b.cached_numbers(X86_64).into_iter().collect();
        assert_eq!(got, expected, "x86_64 on 6.18, optimize {optimize:?}");
        assert_eq!(
            b.cached_numbers(I386).into_iter().collect::<BTreeSet<_>>(),
            i386
        );

        // The reasons for the conditional ones point at argument loads.
        let ioctl =
            i32::from(ScmpSyscall::from_name_by_arch("ioctl", ScmpArch::X8664).unwrap()) as u32;
        match b.status(X86_64, ioctl) {
            CacheStatus::NotCached {
                filter: 0,
                reason: NotCacheable::Load { field: Some(f), .. },
            } => {
                assert!(f.name().starts_with("args[1]"), "{f:?}")
            }
            other => panic!("ioctl: {other}"),
        }
        let ptrace =
            i32::from(ScmpSyscall::from_name_by_arch("ptrace", ScmpArch::X8664).unwrap()) as u32;
        match b.status(X86_64, ptrace) {
            CacheStatus::NotCached {
                filter: 0,
                reason: NotCacheable::Return { value, .. },
            } => {
                assert_eq!(value, RetVal::errno(libc::ENOSYS as u16))
            }
            other => panic!("ptrace: {other}"),
        }
    }
}

#[test]
fn libseccomp_default_allow_filter_caches_everything_but_its_rules() {
    // Default ALLOW with a few denials: every other number of both bitmaps is cached.
    let mut ctx = ScmpFilterContext::new(ScmpAction::Allow).unwrap();
    ctx.add_arch(ScmpArch::X86).unwrap();
    ctx.add_rule(
        ScmpAction::Errno(libc::EPERM),
        ScmpSyscall::from_name("ptrace").unwrap(),
    )
    .unwrap();
    ctx.add_rule_conditional(
        ScmpAction::KillProcess,
        ScmpSyscall::from_name("personality").unwrap(),
        &[ScmpArgCompare::new(0, ScmpCompareOp::NotEqual, 0)],
    )
    .unwrap();
    let prog = export(&ctx);
    let k = KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(6, 1)).unwrap();
    let b = CacheBitmap::new(k).attach(&prog);
    for (token, arch) in [(X86_64, ScmpArch::X8664), (I386, ScmpArch::X86)] {
        let denied: BTreeSet<u32> = ["ptrace", "personality"]
            .iter()
            .map(|n| i32::from(ScmpSyscall::from_name_by_arch(n, arch).unwrap()) as u32)
            .collect();
        // Linux 6.1's tables end at set_mempolicy_home_node (450).
        let expected: Vec<u32> = (0..451).filter(|nr| !denied.contains(nr)).collect();
        assert_eq!(b.cached_numbers(token), expected);
    }
}

// ---------------------------------------------------------------------------------------------
// The real kernel: the passthrough is the one cache effect a filter can observe.

/// Runs syscall `nr` in a child under a filter that returns `ERRNO(77)` for everything except
/// `exit_group`; true if the filter did not decide it (the call ran, or died in the kernel).
#[cfg(target_arch = "x86_64")]
fn bypasses_filter(nr: i64) -> bool {
    const EXIT_GROUP: u32 = 231;
    let filter = Program::new(vec![
        Insn::ld_abs(0),
        jmp(BPF_JEQ, EXIT_GROUP, 0, 1),
        Insn::ret(SECCOMP_RET_ALLOW),
        Insn::ret(SECCOMP_RET_ERRNO | 77),
    ]);
    let raw = filter.to_raw();
    let fprog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: raw.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: the child only makes raw syscalls and exits; the parent waits for it.
    unsafe {
        let pid = libc::fork();
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog) != 0
            {
                libc::_exit(100);
            }
            let r = libc::syscall(nr, 0, 0, 0);
            let errno = *libc::__errno_location();
            libc::_exit(if r < 0 { errno & 0xff } else { 0 });
        }
        let mut status = 0;
        assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
        assert!(
            !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 100),
            "could not install the filter"
        );
        !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 77)
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn passthrough_model_matches_the_running_kernel() {
    // SAFETY: uname fills the struct it is given.
    let release = unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        assert_eq!(libc::uname(&mut u), 0);
        std::ffi::CStr::from_ptr(u.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    };
    let Ok(version) = release.parse::<KernelVersion>() else {
        eprintln!("cannot parse kernel release {release:?}; skipped");
        return;
    };
    assert!(
        !bypasses_filter(110),
        "getppid must be decided by the filter"
    );
    let observed: Vec<u32> = [335u32, 336]
        .into_iter()
        .filter(|&nr| bypasses_filter(nr as i64))
        .collect();
    eprintln!("kernel {release}: syscalls passing an ERRNO-everything filter: {observed:?}");
    // Stable backports blur the boundaries, so only versions the model is sure about.
    if version >= KernelVersion::MODELLED || version < KernelVersion::new(6, 11) {
        let model: Vec<u32> = KernelCache::for_kernel(Arch::X86_64, version)
            .map(|k| k.passthrough.iter().map(|p| p.nr).collect())
            .unwrap_or_default();
        assert_eq!(observed, model, "kernel {release}");
    }
}
