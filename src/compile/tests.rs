//! Unit tests of the lowering rules, with expectations computed by hand from the rules as
//! libseccomp, runc and rust-vmm state them (see the module docs for the sources).

use super::*;
use crate::bpf::{interp, Insn, SeccompData};
use crate::policy::firecracker::FirecrackerOptions;
use crate::policy::{CapSet, ResolveOptions};
use std::collections::BTreeSet;

/// Resolve options covering exactly `arch`, as the native arch.
fn only(arch: Arch) -> ResolveOptions {
    ResolveOptions {
        native: Some(arch),
        arches: Some(vec![arch]),
        ..Default::default()
    }
}

/// Compiles an OCI profile for exactly `arches` (the first is native).
fn oci(profile: &str, arches: &[Arch], runc_compat: bool) -> CompiledFilter {
    let resolve = ResolveOptions {
        native: Some(arches[0]),
        arches: Some(arches.to_vec()),
        caps: CapSet::docker_default(),
        kernel: Some(KernelVersion::new(6, 18)),
        ..Default::default()
    };
    let options = CompileOptions {
        runc_compat,
        ..Default::default()
    };
    compile_oci(profile.as_bytes(), "test.json", &resolve, &options).unwrap()
}

fn run(f: &CompiledFilter, token: u32, nr: u32, args: [u64; 6]) -> RetVal {
    interp::eval(f.program(), &SeccompData::new(token, nr as i32, args)).unwrap()
}

const X86_64: u32 = 0xc000_003e;
const I386: u32 = 0x4000_0003;
const AARCH64: u32 = 0xc000_00b7;
const S390X: u32 = 0x8000_0016;
const EPERM: RetVal = RetVal::errno(1);
const KILL_THREAD: RetVal = RetVal::KILL_THREAD;

/// read (x86_64 0, x32 0x40000000) allowed, everything else EPERM.
const READ_ONLY: &str = r#"{"defaultAction": "SCMP_ACT_ERRNO",
    "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]}"#;

#[test]
fn x86_64_alone_sends_x32_numbers_to_the_bad_arch_action_except_minus_one() {
    let f = oci(READ_ONLY, &[Arch::X86_64], false);
    assert_eq!(run(&f, X86_64, 0, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&f, X86_64, 1, [0; 6]), EPERM);
    assert_eq!(run(&f, X86_64, 0x4000_0000, [0; 6]), KILL_THREAD);
    assert_eq!(run(&f, X86_64, 0x4000_0001, [0; 6]), KILL_THREAD);
    assert_eq!(run(&f, X86_64, 0xffff_fffe, [0; 6]), KILL_THREAD);
    assert_eq!(
        run(&f, X86_64, 0xffff_ffff, [0; 6]),
        EPERM,
        "-1 gets the default"
    );
    assert_eq!(
        run(&f, I386, 3, [0; 6]),
        KILL_THREAD,
        "i386 is not in the filter"
    );
    assert_eq!(run(&f, 0x1234, 0, [0; 6]), KILL_THREAD);
}

#[test]
fn x32_alone_sends_x86_64_numbers_to_the_bad_arch_action() {
    let f = oci(READ_ONLY, &[Arch::X32], false);
    assert_eq!(run(&f, X86_64, 0x4000_0000, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&f, X86_64, 0x4000_0001, [0; 6]), EPERM);
    assert_eq!(run(&f, X86_64, 0, [0; 6]), KILL_THREAD);
    assert_eq!(run(&f, X86_64, 0x3fff_ffff, [0; 6]), KILL_THREAD);
    assert_eq!(run(&f, X86_64, 0xffff_ffff, [0; 6]), EPERM);
}

#[test]
fn x86_64_with_x32_is_one_block_split_by_number() {
    let f = oci(READ_ONLY, &[Arch::X86_64, Arch::X32], false);
    assert_eq!(run(&f, X86_64, 0, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&f, X86_64, 0x4000_0000, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&f, X86_64, 0x4000_0001, [0; 6]), EPERM);
    assert_eq!(run(&f, X86_64, 0xffff_ffff, [0; 6]), EPERM);
    assert_eq!(run(&f, X86_64, 0x7fff_ffff, [0; 6]), EPERM);
    // Only one arch check for the shared token.
    let arch_checks = f
        .program()
        .insns
        .iter()
        .filter(|i| i.k == X86_64 && i.is_conditional_jump())
        .count();
    assert_eq!(arch_checks, 1);
}

#[test]
fn thirty_two_bit_arches_compare_only_the_low_word() {
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]}"#;
    let f = oci(profile, &[Arch::X86_64, Arch::X86, Arch::X32], false);
    // personality: x86_64 135, i386 136, x32 0x40000087.
    let hi = 0x1_0000_0008;
    assert_eq!(run(&f, X86_64, 135, [8, 0, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(&f, X86_64, 135, [hi, 0, 0, 0, 0, 0]), EPERM);
    assert_eq!(run(&f, I386, 136, [hi, 0, 0, 0, 0, 0]), RetVal::ALLOW);
    // x32 is a 32-bit ABI for libseccomp even though it shares x86_64's token.
    assert_eq!(
        run(&f, X86_64, 0x4000_0087, [hi, 0, 0, 0, 0, 0]),
        RetVal::ALLOW
    );
    assert_eq!(run(&f, X86_64, 0x4000_0087, [9, 0, 0, 0, 0, 0]), EPERM);
}

#[test]
fn socket_rules_are_also_socketcall_rules_with_the_call_number_in_arg0() {
    // socket(AF_INET=2, SOCK_STREAM=1): on i386 also socketcall(SYS_SOCKET=1, ...) where
    // the arg0 condition is replaced and the arg1 condition stays on arg1 (which for
    // socketcall is the pointer to the real arguments).
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["socket"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"},
                  {"index": 1, "value": 1, "op": "SCMP_CMP_EQ"}]},
        {"names": ["accept4"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}"#;
    let f = oci(profile, &[Arch::X86, Arch::S390x], false);
    let (socketcall, socket, accept4) = (102, 359, 364);
    assert_eq!(run(&f, I386, socket, [2, 1, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(&f, I386, socket, [3, 1, 0, 0, 0, 0]), EPERM);
    assert_eq!(run(&f, I386, socketcall, [1, 1, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(&f, I386, socketcall, [1, 2, 0, 0, 0, 0]), EPERM);
    assert_eq!(run(&f, I386, socketcall, [2, 1, 0, 0, 0, 0]), EPERM);
    // accept4 (SYS_ACCEPT4 = 18) without conditions: socketcall(18, anything).
    assert_eq!(run(&f, I386, accept4, [0; 6]), RetVal::errno(13));
    assert_eq!(
        run(&f, I386, socketcall, [18, 7, 7, 0, 0, 0]),
        RetVal::errno(13)
    );
    assert_eq!(run(&f, I386, socketcall, [17, 0, 0, 0, 0, 0]), EPERM);
    // s390x multiplexes too (socketcall 102), comparing all 64 bits of arg0.
    assert_eq!(run(&f, S390X, 102, [18, 0, 0, 0, 0, 0]), RetVal::errno(13));
    assert_eq!(run(&f, S390X, 102, [0x1_0000_0012, 0, 0, 0, 0, 0]), EPERM);
    assert_eq!(run(&f, S390X, 102, [1, 1, 0, 0, 0, 0]), RetVal::ALLOW);
    // aarch64 has no socketcall: nothing extra there.
    let g = oci(profile, &[Arch::Aarch64], false);
    assert_eq!(run(&g, AARCH64, 198, [2, 1, 0, 0, 0, 0]), RetVal::ALLOW); // socket
}

/// `FilterInfo`'s count of numbers with rules (computed without building the rules) is the
/// number of keys of the multiplexed rule map the lowering uses: i386 and s390x add
/// socketcall for socket and accept4 and ipc for semop (which neither has as a syscall:
/// read, socket, accept4, socketcall, ipc), aarch64 adds nothing (its four direct numbers).
#[test]
fn numbers_with_rules_counts_the_multiplexed_rule_map() {
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["socket", "accept4", "read", "semop"], "action": "SCMP_ACT_ALLOW"}]}"#;
    for (arch, expected) in [(Arch::X86, 5), (Arch::S390x, 5), (Arch::Aarch64, 4)] {
        let policy = policy::oci::parse(profile.as_bytes(), "p.json").unwrap();
        let resolve = only(arch);
        let resolved = policy::resolve(&policy, &resolve).unwrap();
        let a = &resolved.arches[0];
        let keys = lower::rules_with_multiplexing(a, resolved.dialect).len();
        assert_eq!(
            lower::numbers_with_rules(a, resolved.dialect),
            keys,
            "{arch}"
        );
        assert_eq!(keys, expected, "{arch}");
    }
}

#[test]
fn unconditional_rule_beats_conditional_ones_and_the_first_unconditional_wins() {
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["uname"], "action": "SCMP_ACT_ERRNO", "errnoRet": 5,
         "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]},
        {"names": ["uname"], "action": "SCMP_ACT_TRAP"},
        {"names": ["uname"], "action": "SCMP_ACT_LOG"}]}"#;
    let f = oci(profile, &[Arch::Aarch64], false);
    assert_eq!(run(&f, AARCH64, 160, [0; 6]), RetVal(0x0003_0000));
}

#[test]
fn overlapping_rules_follow_libseccomps_tree_not_profile_order() {
    // Two rules on different arguments, both matching when a0 == 1 && a1 == 1. libseccomp
    // tries the higher argument index first: the a1 rule decides.
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["uname"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}]},
        {"names": ["uname"], "action": "SCMP_ACT_TRAP",
         "args": [{"index": 1, "value": 1, "op": "SCMP_CMP_EQ"}]}]}"#;
    let f = oci(profile, &[Arch::Aarch64], false);
    assert_eq!(
        run(&f, AARCH64, 160, [1, 1, 0, 0, 0, 0]),
        RetVal(0x0003_0000)
    );
    assert_eq!(run(&f, AARCH64, 160, [1, 0, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(&f, AARCH64, 160, [0, 0, 0, 0, 0, 0]), EPERM);
    // The same argument twice with different actions where one rule ends where the other
    // continues: libseccomp refuses (EEXIST), and so does secopt.
    let conflict = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["uname"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"},
                  {"index": 1, "value": 1, "op": "SCMP_CMP_EQ"}]},
        {"names": ["uname"], "action": "SCMP_ACT_TRAP",
         "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}]}]}"#;
    let policy = policy::oci::parse(conflict.as_bytes(), "c.json").unwrap();
    let resolved = policy::resolve(
        &policy,
        &ResolveOptions {
            native: Some(Arch::Aarch64),
            ..Default::default()
        },
    )
    .unwrap();
    let err = compile(&resolved, &CompileOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("c.json: $.syscalls[1]") && text.contains("uname") && text.contains("EEXIST"),
        "{text}"
    );
}

#[test]
fn runc_stub_returns_enosys_above_the_highest_named_syscall() {
    // read (0) and clone3 (435 on x86_64 and i386, 0x40000000+435 on x32).
    let profile = r#"{"defaultAction": "SCMP_ACT_KILL",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"], "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["clone3"], "action": "SCMP_ACT_KILL"}]}"#;
    let f = oci(profile, &[Arch::X86_64, Arch::X86, Arch::X32], true);
    let enosys = RetVal::errno(38);
    assert!(f.info().runc_compat);
    assert_eq!(run(&f, X86_64, 0, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&f, X86_64, 435, [0; 6]), KILL_THREAD, "clone3 is named");
    assert_eq!(run(&f, X86_64, 436, [0; 6]), enosys);
    assert_eq!(run(&f, X86_64, 0x4000_0000 + 435, [0; 6]), KILL_THREAD);
    assert_eq!(run(&f, X86_64, 0x4000_0000 + 436, [0; 6]), enosys);
    assert_eq!(
        run(&f, X86_64, 0xffff_ffff, [0; 6]),
        enosys,
        "-1 has bit 30 set"
    );
    assert_eq!(run(&f, I386, 436, [0; 6]), enosys);
    assert_eq!(run(&f, I386, 0xffff_ffff, [0; 6]), enosys);
    assert_eq!(run(&f, I386, 3, [0; 6]), RetVal::ALLOW); // read is 3 on i386
    assert_eq!(run(&f, I386, 4, [0; 6]), KILL_THREAD);
    // Without x32 in the filter, x32 numbers (and -1) go to the filter.
    let g = oci(profile, &[Arch::X86_64], true);
    assert_eq!(run(&g, X86_64, 0x4000_0000 + 500, [0; 6]), KILL_THREAD);
    assert_eq!(
        run(&g, X86_64, 0xffff_ffff, [0; 6]),
        KILL_THREAD,
        "-1: the default"
    );
    assert_eq!(run(&g, X86_64, 436, [0; 6]), enosys);
    // Not for an allowing default action.
    let permissive = r#"{"defaultAction": "SCMP_ACT_LOG", "syscalls": [
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO"}]}"#;
    let h = oci(permissive, &[Arch::X86_64], true);
    assert!(!h.info().runc_compat);
    assert_eq!(run(&h, X86_64, 436, [0; 6]), RetVal::LOG);
    // s390x: nr 0 (the kernel's "unknown large syscall" marker) also gets ENOSYS.
    let listing_s390x = profile.replace(
        r#""SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32""#,
        r#""SCMP_ARCH_S390X""#,
    );
    let s = oci(&listing_s390x, &[Arch::S390x], true);
    assert_eq!(run(&s, S390X, 0, [0; 6]), enosys);
    assert_eq!(run(&s, S390X, 3, [0; 6]), RetVal::ALLOW); // read is 3 on s390x
}

#[test]
fn rust_vmm_dialect_compares_dwords_and_has_no_x32_case() {
    let file = br#"{"vcpu": {"mismatch_action": "trap", "match_action": "allow", "filter": [
        {"syscall": "ioctl", "args": [{"index": 1, "type": "dword", "op": "gt", "val": 10}]},
        {"syscall": "ioctl", "args": [{"index": 1, "type": "qword", "op": "eq", "val": 4294967296}]}]}}"#;
    let options = FirecrackerOptions {
        arch: Arch::X86_64,
        dialect: Dialect::RustVmmSeccompiler,
    };
    let filters =
        compile_firecracker(file, "fc.json", &options, &CompileOptions::default()).unwrap();
    let (thread, f) = &filters[0];
    assert_eq!(thread, "vcpu");
    let trap = RetVal(0x0003_0000);
    assert_eq!(run(f, X86_64, 16, [0, 11, 0, 0, 0, 0]), RetVal::ALLOW);
    // dword: the high word is ignored, 0x1_0000_0005 is 5 (not > 10)...
    assert_eq!(run(f, X86_64, 16, [0, 0x1_0000_0005, 0, 0, 0, 0]), trap);
    // ...and 0x1_0000_0000 matches the qword rule.
    assert_eq!(
        run(f, X86_64, 16, [0, 0x1_0000_0000, 0, 0, 0, 0]),
        RetVal::ALLOW
    );
    assert_eq!(
        run(f, X86_64, 0x4000_0010, [0; 6]),
        trap,
        "x32 numbers: default"
    );
    assert_eq!(run(f, I386, 16, [0; 6]), RetVal::KILL_PROCESS, "bad arch");
}

#[test]
fn oversized_and_invalid_programs_are_never_wrapped() {
    let info = FilterInfo::of(
        &policy::resolve(
            &policy::oci::parse(READ_ONLY.as_bytes(), "big.json").unwrap(),
            &ResolveOptions {
                native: Some(Arch::Aarch64),
                ..Default::default()
            },
        )
        .unwrap(),
        &CompileOptions::default(),
    );
    let big = Program::new(vec![Insn::ret(0); 4097]);
    let err = CompiledFilter::new(big, info.clone()).unwrap_err();
    assert_eq!(
        err,
        CompileError::TooLarge {
            file: "big.json".into(),
            len: 4097,
            reference: None,
        }
    );
    assert!(err.to_string().contains("4097 instructions"), "{err}");
    let no_ret = Program::new(vec![Insn::ld_abs(0)]);
    assert!(matches!(
        CompiledFilter::new(no_ret, info),
        Err(CompileError::Invalid { .. })
    ));
}

/// emit_program writes only what the kernel would take, as `CompiledFilter::new` wraps only
/// that; and its raw output is in the origin's byte order (`struct sock_filter`'s `code` is
/// the first u16: `ret` is 0x0006).
#[test]
fn programs_no_profile_describes_are_emitted_only_when_valid() {
    let origin = |endian| ProgramOrigin {
        source: "hand.s".into(),
        endian,
        notes: vec!["Written by hand.".into()],
        optimization: None,
    };
    let little = origin(crate::arch::Endian::Little);
    let big = Program::new(vec![Insn::ret(0); 4097]);
    assert!(matches!(
        emit_program(&big, &little, EmitFormat::C, "x"),
        Err(CompileError::TooLarge { len: 4097, ref file, .. }) if file == "hand.s"
    ));
    let no_ret = Program::new(vec![Insn::ld_abs(0)]);
    for format in [EmitFormat::Raw, EmitFormat::Go, EmitFormat::Json] {
        assert!(matches!(
            emit_program(&no_ret, &little, format, "x"),
            Err(CompileError::Invalid { ref file, .. }) if file == "hand.s"
        ));
    }
    assert!(emit_program_go(&no_ret, &little, "x", "filters").is_err());

    let allow = Program::new(vec![Insn::ret(0x7fff_0000)]);
    let raw = |o: &ProgramOrigin| emit_program(&allow, o, EmitFormat::Raw, "x").unwrap();
    assert_eq!(raw(&little), [0x06, 0, 0, 0, 0, 0, 0xff, 0x7f]);
    assert_eq!(
        raw(&origin(crate::arch::Endian::Big)),
        [0, 0x06, 0, 0, 0x7f, 0xff, 0, 0]
    );
    let asm = String::from_utf8(emit_program(&allow, &little, EmitFormat::Asm, "x").unwrap());
    let asm = asm.unwrap();
    assert!(asm.starts_with("; Generated by secopt"), "{asm}");
    assert!(asm.contains("; 1 instructions; arches checked: none.\n; Written by hand.\n"));
}

#[test]
fn a_profile_too_big_for_one_filter_reports_the_size() {
    // 400 syscalls × 3 conditions with distinct constants on x86_64: far over 4096.
    let table = Arch::X86_64.syscalls();
    let rules: Vec<String> = table
        .iter()
        .take(400)
        .map(|(_, name)| {
            format!(
                r#"{{"names": ["{name}"], "action": "SCMP_ACT_ALLOW", "args": [
                    {{"index": 0, "value": 1, "op": "SCMP_CMP_GT"}},
                    {{"index": 1, "value": 2, "op": "SCMP_CMP_LT"}},
                    {{"index": 2, "value": 3, "op": "SCMP_CMP_NE"}}]}}"#
            )
        })
        .collect();
    let profile = format!(
        r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
        rules.join(",")
    );
    let resolve = only(Arch::X86_64);
    let err = compile_oci(
        profile.as_bytes(),
        "huge.json",
        &resolve,
        &CompileOptions::default(),
    )
    .unwrap_err();
    match err {
        CompileError::TooLarge { file, len, .. } => {
            assert_eq!(file, "huge.json");
            assert!(len > 4096, "{len}");
        }
        other => panic!("{other}"),
    }
}

/// A profile whose plain lowering is over the kernel's limit while its optimized form fits:
/// when the self-check cannot prove the optimized form (a budget of one step), the error says
/// that, with the size that fits, instead of calling the filter too large; with the default
/// budget it compiles, proved.
#[test]
fn an_unproved_fitting_filter_is_reported_as_dropped_not_too_large() {
    // 40 syscalls × 10 argument rules: a long plain lowering of repeated checks.
    let rules: Vec<String> = Arch::X86_64
        .syscalls()
        .iter()
        .take(40)
        .enumerate()
        .flat_map(|(i, (_, name))| {
            (0..10u64).map(move |j| {
                format!(
                    r#"{{"names": ["{name}"], "action": "SCMP_ACT_ALLOW", "args": [
                        {{"index": {}, "value": {}, "op": "SCMP_CMP_MASKED_EQ", "valueTwo": {}}},
                        {{"index": 1, "value": {}, "op": "SCMP_CMP_GT"}}]}}"#,
                    j % 6,
                    0xff << (j % 5),
                    (i as u64 * 7 + j) & 0xff,
                    j * 1000 + i as u64
                )
            })
        })
        .collect();
    let profile = format!(
        r#"{{"defaultAction": "SCMP_ACT_ERRNO",
             "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
             "syscalls": [{}]}}"#,
        rules.join(",")
    );
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        ..Default::default()
    };
    let reference = compile(
        &policy::resolve(
            &policy::oci::parse(profile.as_bytes(), "p.json").unwrap(),
            &resolve,
        )
        .unwrap(),
        &CompileOptions::default(),
    );
    assert!(
        matches!(reference, Err(CompileError::TooLarge { len, .. }) if len > 4096),
        "{:?}",
        reference.map(|f| f.program().len())
    );
    let with_budget = |budget: crate::verify::Budget| CompileOptions {
        optimize: Some(OptimizeOptions {
            self_check_budget: budget,
            report: false,
            ..Default::default()
        }),
        ..Default::default()
    };
    let tiny = crate::verify::Budget {
        max_bdd_steps: 1,
        ..optimize::SELF_CHECK_BUDGET
    };
    match compile_oci(profile.as_bytes(), "p.json", &resolve, &with_budget(tiny)) {
        Err(
            e @ CompileError::Dropped {
                reference,
                smallest,
                ..
            },
        ) => {
            assert!(reference > 4096 && smallest <= 4096, "{e}");
            assert!(e.to_string().contains("budget"), "{e}");
        }
        other => panic!("{:?}", other.map(|f| f.program().len())),
    }
    let proved = compile_oci(
        profile.as_bytes(),
        "p.json",
        &resolve,
        &with_budget(optimize::SELF_CHECK_BUDGET),
    )
    .unwrap();
    assert!(proved.program().len() <= 4096);
    assert!(proved.info().optimization.as_ref().unwrap().verified);
}

/// A runtime that compiles in one call still sees what the profile's reader warned about: a
/// misspelt `syscalls` (ignored, as Go's encoding/json ignores unknown fields, leaving a
/// deny-everything filter) is in the filter's metadata and in its JSON document.
#[test]
fn compile_oci_keeps_the_profiles_warnings() {
    let profile = br#"{"defaultAction": "SCMP_ACT_ERRNO",
        "sycalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        ..Default::default()
    };
    for options in [
        CompileOptions::default(),
        CompileOptions {
            optimize: Some(OptimizeOptions::default()),
            ..Default::default()
        },
    ] {
        let filter = compile_oci(profile, "typo.json", &resolve, &options).unwrap();
        let paths: Vec<&str> = filter
            .info()
            .warnings
            .iter()
            .map(|w| w.path.as_str())
            .collect();
        assert_eq!(paths, ["$.sycalls"]);
        let doc: serde_json::Value =
            serde_json::from_slice(&emit::emit(&filter, emit::EmitFormat::Json, "typo")).unwrap();
        assert_eq!(doc["warnings"][0]["path"], "$.sycalls", "{doc}");
    }
    let clean = compile_oci(
        br#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": []}"#,
        "clean.json",
        &resolve,
        &CompileOptions::default(),
    )
    .unwrap();
    assert!(clean.info().warnings.is_empty());
}

/// A deny rule for a misspelt name (`ptrase`) denies nothing, as in runc, which skips the
/// name: an embedder that refuses profiles with warnings, as `FilterInfo::warnings` advises,
/// must see it there. A name of another architecture (`chown32` for x86_64) is the
/// multi-arch idiom, not a warning; nor is anything in Docker's default profile.
#[test]
fn a_name_no_architecture_has_is_a_warning() {
    let profile = br#"{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
        {"names": ["chown32", "kexec_load"], "action": "SCMP_ACT_ERRNO"},
        {"names": ["ptrase"], "action": "SCMP_ACT_ERRNO"}]}"#;
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        ..Default::default()
    };
    let filter = compile_oci(profile, "deny.json", &resolve, &CompileOptions::default()).unwrap();
    // ptrace (101 on x86_64) is allowed: the rule was skipped.
    let ptrace = SeccompData::new(Arch::X86_64.token(), 101, [0; 6]);
    assert_eq!(
        crate::bpf::interp::eval(filter.program(), &ptrace).unwrap(),
        RetVal::ALLOW
    );
    let warnings: Vec<(&str, &str)> = filter
        .info()
        .warnings
        .iter()
        .map(|w| (w.path.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].0, "$.syscalls[1]");
    assert!(warnings[0].1.contains("`ptrase`"), "{warnings:?}");
    assert_eq!(
        filter.info().warnings[0].kind,
        policy::WarningKind::UnknownName
    );

    let docker = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/profiles/oci/docker-default.json"),
    )
    .expect("../shared/profiles beside the checkout");
    let filter = compile_oci(&docker, "docker.json", &resolve, &CompileOptions::default()).unwrap();
    assert!(
        !filter
            .info()
            .warnings
            .iter()
            .any(|w| w.message.contains("is no syscall")),
        "{:?}",
        filter.info().warnings
    );
}

/// A filter resolved for aarch64 is laid out for aarch64 wherever it is compiled: the same
/// program as when the optimizer is told so itself, and its aarch64 calls cost what they
/// cost in a filter that only has aarch64 to check.
#[test]
fn an_optimized_filter_is_laid_out_for_the_arch_it_was_resolved_for() {
    let profile = br#"{"defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"],
        "syscalls": [{"names": ["read", "write", "openat", "close", "mmap", "futex",
                                "epoll_pwait", "getpid", "clone", "exit_group"],
                      "action": "SCMP_ACT_ALLOW"}]}"#;
    let resolve = ResolveOptions {
        native: Some(Arch::Aarch64),
        ..Default::default()
    };
    let optimized = |native: Option<Arch>| {
        let options = CompileOptions {
            optimize: Some(OptimizeOptions {
                native,
                ..Default::default()
            }),
            ..Default::default()
        };
        compile_oci(profile, "two.json", &resolve, &options).unwrap()
    };
    let told = optimized(Some(Arch::Aarch64));
    assert_eq!(optimized(None).program(), told.program());
    // And not the layout for the other arch, which checks x86_64 first.
    let other = optimized(Some(Arch::X86_64));
    assert_ne!(other.program(), told.program());
    let first_check = |f: &CompiledFilter| {
        f.program()
            .insns
            .iter()
            .find(|i| {
                i.code
                    == (crate::bpf::insn::BPF_JMP
                        | crate::bpf::insn::BPF_JEQ
                        | crate::bpf::insn::BPF_K)
            })
            .map(|i| i.k)
    };
    assert_eq!(first_check(&told), Some(Arch::Aarch64.token()));
}

/// Each warning says what kind it is, so that a runtime can refuse a profile whose text is
/// not what is enforced (an ignored field, an unknown name) and only show a rule that never
/// applies (podman's default profile has those); the JSON document carries the kind too.
#[test]
fn warnings_have_kinds_to_act_on() {
    let profile = br#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["read"], "action": "SCMP_ACT_ERRNO", "errnoRet": 0},
        {"names": ["write"], "action": "SCMP_ACT_ALLOW", "argz": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}]},
        {"names": ["chmod"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMN"]}},
        {"names": ["ptrase"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        ..Default::default()
    };
    let filter = compile_oci(profile, "p.json", &resolve, &CompileOptions::default()).unwrap();
    let kind_at = |path: &str| {
        filter
            .info()
            .warnings
            .iter()
            .filter(|w| w.path.starts_with(path))
            .map(|w| w.kind)
            .collect::<BTreeSet<_>>()
    };
    use policy::WarningKind::*;
    assert_eq!(
        kind_at("$.syscalls[1]"),
        BTreeSet::from([NeverApplies, Suspicious])
    );
    assert_eq!(kind_at("$.syscalls[2]"), BTreeSet::from([Ignored]));
    assert_eq!(kind_at("$.syscalls[3]"), BTreeSet::from([UnknownName]));
    assert_eq!(kind_at("$.syscalls[4]"), BTreeSet::from([UnknownName]));
    let doc: serde_json::Value =
        serde_json::from_slice(&emit::emit(&filter, emit::EmitFormat::Json, "p")).unwrap();
    let kinds: BTreeSet<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["ignored", "never_applies", "suspicious", "unknown_name"])
    );
}

/// The flags a runtime installs a filter with (include/uapi/linux/seccomp.h: LOG 2,
/// SPEC_ALLOW 4): the profile's, runc's SPEC_ALLOW when it lists none, and none for a
/// Firecracker thread (Firecracker installs its filters with flags 0).
#[test]
fn seccomp_flags_are_the_loaders() {
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        ..Default::default()
    };
    let flags_of = |profile: &[u8]| {
        compile_oci(profile, "p.json", &resolve, &CompileOptions::default())
            .unwrap()
            .info()
            .seccomp_flags()
    };
    assert_eq!(flags_of(br#"{"defaultAction": "SCMP_ACT_ALLOW"}"#), 4);
    assert_eq!(
        flags_of(br#"{"defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_LOG"]}"#),
        2
    );
    assert_eq!(
        flags_of(br#"{"defaultAction": "SCMP_ACT_ALLOW", "flags": []}"#),
        0
    );
    let file = br#"{"vcpu": {"default_action": "trap", "filter_action": "allow",
                             "filter": [{"syscall": "read"}]}}"#;
    let options = FirecrackerOptions {
        arch: Arch::X86_64,
        dialect: Dialect::Libseccomp,
    };
    let vcpu = compile_firecracker_thread(
        file,
        "fc.json",
        &options,
        "vcpu",
        &CompileOptions::default(),
    )
    .unwrap();
    assert_eq!(vcpu.info().seccomp_flags(), 0);
}

/// One thread of a Firecracker file is the same filter as in the whole file's list, with its
/// metadata; a thread the file lacks is an error listing those it has; a thread too large to
/// be a filter is named in the error.
#[test]
fn one_firecracker_thread_compiles_alone_and_errors_name_the_thread() {
    let file = br#"{"vmm": {"default_action": "trap", "filter_action": "allow",
                            "filter": [{"syscall": "read"}, {"syscall": "write"}]},
                   "vcpu": {"default_action": "trap", "filter_action": "allow",
                            "filter": [{"syscall": "ioctl"}]}}"#;
    let options = FirecrackerOptions {
        arch: Arch::X86_64,
        dialect: Dialect::Libseccomp,
    };
    let compile = CompileOptions::default();
    let all = compile_firecracker(file, "fc.json", &options, &compile).unwrap();
    let vmm = compile_firecracker_thread(file, "fc.json", &options, "vmm", &compile).unwrap();
    let listed = &all.iter().find(|(t, _)| t == "vmm").unwrap().1;
    assert_eq!(vmm.program(), listed.program());
    assert_eq!(vmm.info().thread.as_deref(), Some("vmm"));
    assert_eq!(vmm.info().source, "fc.json");
    let missing =
        compile_firecracker_thread(file, "fc.json", &options, "api", &compile).unwrap_err();
    assert!(
        matches!(&missing, CompileError::NoThread { thread, threads, .. }
            if thread == "api" && threads.len() == 2),
        "{missing:?}"
    );
    assert!(missing.to_string().contains("vcpu, vmm"), "{missing}");
    // The file for emitting takes compile_firecracker's list as it is.
    let bytes = emit::emit_thread_filters(&all, crate::bpf::thread_filters::Encoding::Bitcode);
    assert!(!bytes.is_empty());

    // 5,000 argument values of one syscall: over 4096 instructions in the plain lowering.
    let values: Vec<String> = (0..5000)
        .map(|v| format!(r#"{{"syscall": "ioctl", "args": [{{"index": 1, "type": "dword", "op": "eq", "val": {v}}}]}}"#))
        .collect();
    let big = format!(
        r#"{{"vmm": {{"default_action": "trap", "filter_action": "allow", "filter": [{{"syscall": "read"}}]}},
            "vcpu": {{"default_action": "trap", "filter_action": "allow", "filter": [{}]}}}}"#,
        values.join(",")
    );
    let error = compile_firecracker(big.as_bytes(), "big.json", &options, &compile).unwrap_err();
    assert!(matches!(error, CompileError::TooLarge { .. }), "{error:?}");
    assert!(
        error.to_string().starts_with("big.json (thread vcpu): "),
        "{error}"
    );
}

/// Two `clone` rules on which libseccomp 2.5.4 and 2.6.1 never return from
/// `seccomp_rule_add` (its tree's level links become a cycle; runc hangs in `runc init`,
/// found by an adversarial review and checked with libseccomp's C API): secopt, which
/// builds libseccomp's tree to decide like it, refuses the profile instead of hanging with
/// it.
#[test]
fn a_rule_that_sends_libseccomps_tree_into_a_cycle_is_refused() {
    let profile = br#"{"defaultAction": "SCMP_ACT_KILL_PROCESS", "syscalls": [
        {"names": ["clone"], "action": "SCMP_ACT_TRAP", "args": [
            {"index": 1, "value": 255, "op": "SCMP_CMP_NE"},
            {"index": 2, "value": 127, "valueTwo": 128, "op": "SCMP_CMP_MASKED_EQ"}]},
        {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 2, "args": [
            {"index": 1, "value": 255, "op": "SCMP_CMP_NE"},
            {"index": 5, "value": 128, "op": "SCMP_CMP_EQ"}]}]}"#;
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let resolve = only(arch);
        let err =
            compile_oci(profile, "loop.json", &resolve, &CompileOptions::default()).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, CompileError::Refused { .. })
                && text.contains("$.syscalls[1]")
                && text.contains("cycle"),
            "{arch:?}: {text}"
        );
    }
}

/// A conflict libseccomp refuses on x86's `socketcall`, which carries `socket` there, names
/// the syscall as the profile wrote it (runc's error says `socket` too); on x86_64 `socket`
/// is a syscall of its own and the same rules are taken (the conditional one first).
#[test]
fn a_refused_rule_on_a_multiplexer_is_named_as_the_profile_wrote_it() {
    let profile = br#"{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
        {"names": ["socket"], "action": "SCMP_ACT_ERRNO",
         "args": [{"index": 0, "value": 16, "op": "SCMP_CMP_EQ"}]},
        {"names": ["socket"], "action": "SCMP_ACT_KILL"}]}"#;
    let err = compile_oci(
        profile,
        "s.json",
        &only(Arch::X86),
        &CompileOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "$.syscalls[1]: libseccomp refuses this rule for socket on x86: through socketcall, \
             which carries it there, it overlaps an earlier rule"
        ),
        "{err}"
    );
    compile_oci(
        profile,
        "s.json",
        &only(Arch::X86_64),
        &CompileOptions::default(),
    )
    .unwrap();
}

/// Three `recv` rules on which libseccomp 2.5.4 and 2.6.1 never return from
/// `seccomp_rule_add` on s390x and ppc64le, where `recv` has no direct number and is
/// multiplexed: libseccomp adds each rule twice, rewritten on `socketcall` and as written
/// on its pseudo-number, and it is the pseudo-number's tree that loops (found by an
/// adversarial review; checked with libseccomp's C API, which finishes the same rules on
/// x86). The pseudo-number's rules never reach the filter, but secopt merges them to refuse
/// what libseccomp cannot take.
#[test]
fn a_cycle_in_the_tree_of_a_multiplexed_name_s_pseudo_number_is_refused() {
    let profile = br#"{"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 99, "syscalls": [
        {"names": ["recv", "recv"], "action": "SCMP_ACT_ALLOW", "args": [
            {"index": 1, "value": 0, "op": "SCMP_CMP_LT"}]},
        {"names": ["recv"], "action": "SCMP_ACT_KILL_PROCESS", "args": [
            {"index": 0, "value": 21474836480, "op": "SCMP_CMP_LE"},
            {"index": 5, "value": 18446744069414584320, "op": "SCMP_CMP_GT"}]},
        {"names": ["recv"], "action": "SCMP_ACT_TRAP", "args": [
            {"index": 5, "value": 2147483648, "op": "SCMP_CMP_EQ"},
            {"index": 0, "value": 21474836480, "op": "SCMP_CMP_LE"}]}]}"#;
    for (arch, loops) in [
        (Arch::S390x, true),
        (Arch::Ppc64le, true),
        (Arch::X86, false),
    ] {
        let resolve = only(arch);
        let compiled = compile_oci(profile, "recv.json", &resolve, &CompileOptions::default());
        match compiled {
            Err(err @ CompileError::Refused { .. }) if loops => {
                let text = err.to_string();
                assert!(
                    text.contains("$.syscalls[2]")
                        && text.contains("recv")
                        && text.contains("cycle"),
                    "{arch:?}: {text}"
                );
            }
            Ok(_) if !loops => {}
            other => panic!("{arch:?}: {other:?}"),
        }
    }
}

/// Rules that libseccomp 2.5.4 merges slowly but finishes (0.34 s, found by an adversarial
/// run of random profiles): its merge visits the subtrees earlier rules share once per path
/// to them, and reproducing it takes secopt more than 2^24 steps. secopt used to stop every
/// rule at 2^24 steps and call that a cycle; a cycle is now what a walk along
/// one level shows (more steps than nodes), and running out of the step limit is a separate
/// answer, which names secopt's limit and never libseccomp.
#[test]
fn a_merge_that_is_only_slow_is_not_taken_for_a_cycle() {
    let profile = include_bytes!("../../tests/data/slow-merge.json");
    let resolve = only(Arch::X86_64);
    compile_oci(
        profile,
        "slow-merge.json",
        &resolve,
        &CompileOptions::default(),
    )
    .expect("libseccomp takes these rules");
    // The same rules with a step limit below what they need (for this test's thread: each
    // test runs on its own). The rule tree is not taken...
    super::libseccomp_db::TEST_WORK_LIMIT.with(|l| l.set(Some(1 << 20)));
    let policy = crate::policy::oci::parse(profile, "slow-merge.json").unwrap();
    let resolved = crate::policy::resolve(&policy, &resolve).unwrap();
    let read = &resolved.arches[0].syscalls[&0];
    let layout = super::rules::ArgLayout::new(Arch::X86_64, Dialect::Libseccomp);
    let refused = super::rules::libseccomp_takes(layout, read).unwrap_err();
    assert!(
        refused.gave_up && refused.reason.contains("more steps than secopt spends"),
        "{refused:?}"
    );
    // ...and through the whole compile, secopt's own limit is its own error, never
    // "libseccomp refuses" (which would tell the user runc cannot start the container).
    let limited = compile_oci(
        profile,
        "slow-merge.json",
        &resolve,
        &CompileOptions::default(),
    );
    let e = limited.expect_err("over the lowered limit");
    assert!(
        matches!(&e, CompileError::MergeTooLong { arch: Arch::X86_64, syscall, .. } if syscall == "read"),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with("slow-merge.json: ")
            && text.contains("secopt gave up reproducing libseccomp's rule tree")
            && !text.contains("libseccomp refuses"),
        "{text}"
    );
}

/// Rules of three overlapping range comparisons each, with different actions
/// (`args[0] > i && args[1] <= 3i && args[2] != i`, ALLOW/LOG/TRAP in turn): libseccomp's
/// generator repeats a shared subtree once for each way out of it, so the layout grows
/// exponentially (libseccomp 2.5.4 takes 87 s on 20 such rules here). Forty are taken (a
/// reference of 200 333 instructions, optimized to about a hundred); three hundred, which
/// ran past 4 GB of memory before the graph had a limit, are refused at once as secopt
/// giving up (`MergeTooLong`, naming the last rule), never as libseccomp refusing them.
#[test]
fn a_rule_tree_laid_out_past_a_million_tests_is_refused_not_run_out_of_memory() {
    let profile = |n: usize| {
        let actions = ["SCMP_ACT_ALLOW", "SCMP_ACT_LOG", "SCMP_ACT_TRAP"];
        let rules: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"names": ["ioctl"], "action": "{}", "args": [
                        {{"index": 0, "value": {i}, "op": "SCMP_CMP_GT"}},
                        {{"index": 1, "value": {}, "op": "SCMP_CMP_LE"}},
                        {{"index": 2, "value": {i}, "op": "SCMP_CMP_NE"}}]}}"#,
                    actions[i % 3],
                    3 * i
                )
            })
            .collect();
        format!(
            r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
            rules.join(",")
        )
    };
    let options = CompileOptions {
        optimize: Some(OptimizeOptions {
            ..Default::default()
        }),
        ..Default::default()
    };
    let forty = compile_oci(
        profile(40).as_bytes(),
        "ranges.json",
        &only(Arch::X86_64),
        &options,
    )
    .unwrap();
    let info = forty.info().optimization.as_ref().unwrap();
    assert!(info.reference_instructions > 100_000, "{info:?}");
    assert!(forty.program().len() < 200 && info.verified);
    let e = compile_oci(
        profile(300).as_bytes(),
        "ranges.json",
        &only(Arch::X86_64),
        &options,
    )
    .expect_err("laid out past the limit");
    assert!(
        matches!(&e, CompileError::MergeTooLong { syscall, origin, .. }
            if syscall == "ioctl" && origin == "$.syscalls[299]"),
        "{e:?}"
    );
    assert!(e.to_string().contains("more than a million tests"), "{e}");
}

/// `includes`/`excludes` arches are compared as Docker compares them (moby/profiles
/// `goToNative[runtime.GOARCH]`: `amd64` on x86_64, `x86` on i386, `arm64` on aarch64, one
/// exact string per host; podman uses the same names): `x86_64`, `SCMP_ARCH_X86_64`, `386` or
/// `aarch64` match no host, with a warning (the moby conversion itself, run by an adversarial
/// review, dropped the `includes` group and kept the `excludes` one).
#[test]
fn include_and_exclude_arches_match_only_the_names_docker_compares() {
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["x86_64"]}},
        {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "excludes": {"arches": ["SCMP_ARCH_X86_64"]}},
        {"names": ["getpid"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["amd64"]}},
        {"names": ["getppid"], "action": "SCMP_ACT_ALLOW", "excludes": {"arches": ["amd64"]}},
        {"names": ["chroot"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["386", "x86"]}}]}"#;
    let f = oci(profile, &[Arch::X86_64], false);
    assert_eq!(
        run(&f, X86_64, 135, [0; 6]),
        EPERM,
        "personality: never included"
    );
    assert_eq!(
        run(&f, X86_64, 101, [0; 6]),
        RetVal::ALLOW,
        "ptrace: never excluded"
    );
    assert_eq!(run(&f, X86_64, 39, [0; 6]), RetVal::ALLOW, "getpid: amd64");
    assert_eq!(
        run(&f, X86_64, 110, [0; 6]),
        EPERM,
        "getppid: amd64 excluded"
    );
    assert_eq!(run(&f, X86_64, 161, [0; 6]), EPERM, "chroot: an i386 rule");
    let paths: Vec<&str> = f.info().warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "$.syscalls[0].includes.arches[0]",
            "$.syscalls[1].excludes.arches[0]",
            "$.syscalls[4].includes.arches[0]"
        ]
    );
    let x86 = oci(profile, &[Arch::X86], false);
    assert_eq!(
        run(&x86, I386, 61, [0; 6]),
        RetVal::ALLOW,
        "chroot: x86 is i386's name"
    );
}

#[test]
fn raw_output_uses_the_native_byte_order() {
    let f = oci(READ_ONLY, &[Arch::S390x], false);
    let raw = f.to_raw();
    // ld [arch]: code 0x0020, k 4 — big-endian on s390x.
    assert_eq!(&raw[..8], &[0x00, 0x20, 0, 0, 0, 0, 0, 4]);
    let g = oci(READ_ONLY, &[Arch::Aarch64], false);
    assert_eq!(&g.to_raw()[..8], &[0x20, 0x00, 0, 0, 4, 0, 0, 0]);
}

#[test]
fn base64_matches_rfc_4648_vectors() {
    for (input, want) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(emit::base64(input.as_bytes()), want);
    }
}

#[test]
fn identifiers_for_source_formats() {
    assert_eq!(emit::identifier("docker-default"), "docker_default");
    assert_eq!(emit::identifier("9p"), "filter_9p");
    assert_eq!(emit::identifier(""), "filter_");
    // Keywords of the languages emitted (C's `int`, Rust's `fn`, Go's `func`).
    assert_eq!(emit::identifier("int"), "filter_int");
    assert_eq!(emit::identifier("fn"), "filter_fn");
    assert_eq!(emit::identifier("linux"), "filter_linux");
    assert_eq!(emit::identifier("BPF_K"), "filter_BPF_K");
    assert_eq!(emit::identifier("func"), "filter_func");
    assert_eq!(emit::identifier("internal"), "internal");
    // Never a leading `_`: Go would not export it, C reserves `_` + capital and `__`.
    assert_eq!(emit::identifier("-lead"), "filter_lead");
    assert_eq!(emit::identifier("_"), "filter_");
    assert_eq!(emit::identifier("__"), "filter__");
    assert_eq!(emit::identifier("Ωmega"), "filter_mega");
}

/// Compiles an OCI profile for a `native` host with the profile's own architecture set.
fn oci_on(profile: &str, native: Arch, runc_compat: bool) -> CompiledFilter {
    let resolve = ResolveOptions {
        native: Some(native),
        kernel: Some(KernelVersion::new(6, 18)),
        ..Default::default()
    };
    let options = CompileOptions {
        runc_compat,
        ..Default::default()
    };
    compile_oci(profile.as_bytes(), "test.json", &resolve, &options).unwrap()
}

/// runc libcontainer/seccomp/patchbpf/enosys_linux.go `findLastSyscalls` loops over the
/// config's `Architectures` only, and libcontainer/specconv copies the profile's list
/// without adding the native arch.
#[test]
fn runc_stub_covers_only_the_arches_the_profile_lists() {
    let enosys = RetVal::errno(38);
    // No `architectures`: the filter covers x86_64, but runc's stub has no section.
    let f = oci_on(READ_ONLY, Arch::X86_64, true);
    assert!(!f.info().runc_compat);
    assert!(!f.info().arches[0].listed);
    assert_eq!(run(&f, X86_64, 1000, [0; 6]), EPERM);
    assert_eq!(
        run(&f, X86_64, 0x8000_0000, [0; 6]),
        KILL_THREAD,
        "bad arch"
    );
    assert_eq!(
        f.program(),
        oci_on(READ_ONLY, Arch::X86_64, false).program(),
        "nothing prepended"
    );

    // Only i386 listed: x86_64 (native, in the filter) has no section; i386 has one
    // (write, 4 on i386, is its highest number).
    let x86_only = r#"{"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86"],
        "syscalls": [{"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let g = oci_on(x86_only, Arch::X86_64, true);
    assert!(g.info().runc_compat);
    let listed: Vec<(Arch, bool)> = g.info().arches.iter().map(|a| (a.arch, a.listed)).collect();
    assert_eq!(listed, [(Arch::X86_64, false), (Arch::X86, true)]);
    assert_eq!(run(&g, X86_64, 1000, [0; 6]), EPERM);
    assert_eq!(run(&g, I386, 5, [0; 6]), enosys);
    assert_eq!(run(&g, I386, 4, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&g, I386, 3, [0; 6]), RetVal::ALLOW);

    // Only x32 listed on an x86_64 host: x86_64 numbers (no bit 30) go to the filter, x32
    // numbers above x32's write (0x40000001) get ENOSYS.
    let x32_only = x86_only.replace("SCMP_ARCH_X86\"", "SCMP_ARCH_X32\"");
    let h = oci_on(&x32_only, Arch::X86_64, true);
    assert_eq!(run(&h, X86_64, 1000, [0; 6]), EPERM);
    assert_eq!(run(&h, X86_64, 0x4000_0002, [0; 6]), enosys);
    assert_eq!(run(&h, X86_64, 0x4000_0001, [0; 6]), RetVal::ALLOW);

    // The native arch listed explicitly, or through moby's archMap (which moby writes
    // into the OCI config with its sub-architectures), gets its section. (With `read`
    // alone, x86_64's highest number would be 0: no section, as in runc.)
    let listed_native = r#"{"defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [{"names": ["write"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let l = oci_on(listed_native, Arch::X86_64, true);
    assert_eq!(run(&l, X86_64, 2, [0; 6]), enosys);
    assert_eq!(run(&l, X86_64, 0, [0; 6]), EPERM);
    let arch_map = r#"{"defaultAction": "SCMP_ACT_ERRNO",
        "archMap": [{"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86"]},
                    {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]}],
        "syscalls": [{"names": ["write"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let m = oci_on(arch_map, Arch::X86_64, true);
    assert_eq!(run(&m, X86_64, 2, [0; 6]), enosys);
    assert_eq!(run(&m, I386, 5, [0; 6]), enosys);
    assert_eq!(run(&m, I386, 4, [0; 6]), RetVal::ALLOW);
    // No archMap entry for the native arch: moby writes no architectures, so no stub.
    let n = oci_on(arch_map, Arch::S390x, true);
    assert!(!n.info().runc_compat);
    assert_eq!(run(&n, S390X, 5, [0; 6]), EPERM);
}

/// libseccomp resolves socket and IPC names to negative pseudo-numbers on the arches that
/// multiplex them (src/syscalls.c `abi_syscall_resolve_name_munge`), so runc's
/// `findLastSyscalls` (`sysno > largestSyscall`) never counts them, even `socket`, which
/// i386 also has as syscall 359.
#[test]
fn runc_stub_threshold_skips_multiplexed_names() {
    // getpid's rule equals the default: dropped from the filter, but it still counts for the
    // threshold (runc's config keeps it; only libseccomp's rule adding drops it).
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86", "SCMP_ARCH_AARCH64"],
        "syscalls": [{"names": ["read", "socket", "accept4", "semop"], "action": "SCMP_ACT_ALLOW"},
                     {"names": ["getpid"], "action": "SCMP_ACT_ERRNO"}]}"#;
    let enosys = RetVal::errno(38);
    let f = oci_on(profile, Arch::X86, true);
    let info = &f.info().arches;
    assert_eq!(info[0].arch, Arch::X86);
    // getpid is 20 on i386 (read 3): the threshold.
    assert_eq!(info[0].highest_named, Some(20));
    assert_eq!(run(&f, I386, 3, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&f, I386, 4, [0; 6]), EPERM);
    assert_eq!(run(&f, I386, 20, [0; 6]), EPERM);
    assert_eq!(run(&f, I386, 21, [0; 6]), enosys);
    // socket (359) and accept4 (364) are above it: ENOSYS, as runc's stub answers first;
    // so is socketcall (102).
    assert_eq!(run(&f, I386, 359, [0; 6]), enosys);
    assert_eq!(run(&f, I386, 102, [1, 0, 0, 0, 0, 0]), enosys);
    // aarch64 does not multiplex: socket 198, accept4 242, semop 193 count there.
    assert_eq!(info[1].highest_named, Some(242));
    assert_eq!(run(&f, AARCH64, 242, [0; 6]), RetVal::ALLOW);
    assert_eq!(run(&f, AARCH64, 243, [0; 6]), enosys);
    // Without the stub, the socketcall/ipc rules decide.
    let g = oci_on(profile, Arch::X86, false);
    assert_eq!(run(&g, I386, 102, [1, 0, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(&g, I386, 102, [18, 0, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(&g, I386, 117, [1, 0, 0, 0, 0, 0]), RetVal::ALLOW);
    assert_eq!(run(&g, I386, 117, [2, 0, 0, 0, 0, 0]), EPERM);
}

/// Names i386 has no syscall for but libseccomp reaches through `socketcall`/`ipc`
/// (src/syscalls.c `abi_rule_add`, which libseccomp 2.5.4 and 2.6.1 share): `recv` is
/// `socketcall(SYS_RECV = 10, ...)`, `semtimedop` is `ipc(SEMTIMEDOP = 4, ...)`
/// (include/uapi/linux/net.h, ipc.h). Conditions on other arguments stay where they are.
#[test]
fn names_only_multiplexed_on_an_arch_still_get_multiplexer_rules() {
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["recv", "send"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
         "args": [{"index": 0, "value": 7, "op": "SCMP_CMP_EQ"},
                  {"index": 2, "value": 64, "op": "SCMP_CMP_GT"}]},
        {"names": ["semtimedop"], "action": "SCMP_ACT_TRAP"}]}"#;
    let f = oci(profile, &[Arch::X86, Arch::S390x], false);
    let info = &f.info().arches[0];
    assert_eq!(info.via_multiplexer, ["recv", "semtimedop", "send"]);
    assert!(info.unknown.is_empty(), "{:?}", info.unknown);
    let (socketcall, ipc) = (102, 117);
    let trap = RetVal(0x0003_0000);
    // arg0 == 7 is replaced by the call number; arg2 > 64 stays on arg2.
    assert_eq!(
        run(&f, I386, socketcall, [10, 0, 65, 0, 0, 0]),
        RetVal::errno(13)
    );
    assert_eq!(
        run(&f, I386, socketcall, [9, 0, 65, 0, 0, 0]),
        RetVal::errno(13)
    );
    assert_eq!(run(&f, I386, socketcall, [10, 0, 64, 0, 0, 0]), EPERM);
    assert_eq!(run(&f, I386, socketcall, [7, 0, 65, 0, 0, 0]), EPERM);
    assert_eq!(run(&f, I386, ipc, [4, 0, 0, 0, 0, 0]), trap);
    assert_eq!(run(&f, I386, ipc, [1, 0, 0, 0, 0, 0]), EPERM);
    // s390x (socketcall 102, ipc 117) has no direct recv or send either; semtimedop is a
    // syscall there (392) and also ipc call 4.
    assert_eq!(run(&f, S390X, 102, [10, 0, 65, 0, 0, 0]), RetVal::errno(13));
    assert_eq!(run(&f, S390X, 392, [0; 6]), trap);
    assert_eq!(run(&f, S390X, 117, [4, 0, 0, 0, 0, 0]), trap);
    // The rust-vmm dialect does not multiplex (no arch of its own has socketcall anyway).
}

/// The profile of `rules` (x86_64, default EPERM) and its filter, which must come from the
/// lifted program laid out to fit the kernel's limit (the note says so), proved equal to a
/// reference lowering over that limit.
fn compiled_to_fit(rules: &[String]) -> (String, CompiledFilter) {
    let profile = format!(
        r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
        rules.join(",")
    );
    let options = CompileOptions {
        optimize: Some(OptimizeOptions {
            report: false,
            ..Default::default()
        }),
        ..Default::default()
    };
    let f = compile_oci(
        profile.as_bytes(),
        "fit.json",
        &only(Arch::X86_64),
        &options,
    )
    .unwrap();
    assert_laid_out_to_fit(&f, &[]);
    (profile, f)
}

/// Checks that `f` is the lifted program laid out to fit the kernel's limit, proved equal to a
/// reference lowering over that limit, with a note that says so and contains `words`.
fn assert_laid_out_to_fit(f: &CompiledFilter, words: &[&str]) {
    let info = f.info().optimization.as_ref().unwrap();
    assert!(info.reference_instructions > 4096);
    assert_eq!((info.method, info.verified), (Method::Lifted, true));
    assert!(
        info.notes
            .iter()
            .any(|n| n.kind == crate::optimize::note::NoteKind::LaidOutToFit
                && words.iter().all(|w| n.text.contains(w))),
        "{:?}",
        info.notes
    );
    assert!(f.program().len() <= 4096);
}

/// A profile near the kernel's limit, on x86_64, x86 and x32: every other syscall (by x86_64
/// number) allowed outright, which the size tuning's exception chains dispatch in fewer tests
/// than balanced splits, and 152 of the others each allowed for five values of `args[0]` when
/// `args[1]` is above a bound (`value(i, j)`, `bound(i, j)` for the `i`th checked syscall's
/// `j`th rule). Also `scripts/value-sets.py`'s last row.
struct NearTheLimit {
    profile: String,
    allowed: Vec<&'static str>,
    checked: Vec<&'static str>,
}

impl NearTheLimit {
    fn new() -> Self {
        let names: Vec<&str> = Arch::X86_64
            .syscalls()
            .iter()
            .map(|(_, name)| name)
            .collect();
        let allowed: Vec<&str> = names.iter().copied().step_by(2).collect();
        let checked: Vec<&str> = names.iter().copied().skip(1).step_by(2).take(152).collect();
        let mut rules = vec![format!(
            r#"{{"names": {}, "action": "SCMP_ACT_ALLOW"}}"#,
            serde_json::to_string(&allowed).unwrap()
        )];
        for (i, name) in checked.iter().enumerate() {
            for j in 0..5 {
                rules.push(format!(
                    r#"{{"names": ["{name}"], "action": "SCMP_ACT_ALLOW", "args": [
                        {{"index": 0, "value": {}, "op": "SCMP_CMP_EQ"}},
                        {{"index": 1, "value": {}, "op": "SCMP_CMP_GT"}}]}}"#,
                    Self::value(i, j),
                    Self::bound(i, j)
                ));
            }
        }
        let profile = format!(
            r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
            rules.join(",")
        );
        NearTheLimit {
            profile,
            allowed,
            checked,
        }
    }

    fn value(i: usize, j: usize) -> u64 {
        (i * 100 + j * 7) as u64
    }

    fn bound(i: usize, j: usize) -> u64 {
        (i + j + 1) as u64
    }

    fn compile(&self, max_path: Option<usize>) -> Result<CompiledFilter, CompileError> {
        self.compile_heard(max_path, None)
    }

    /// [`NearTheLimit::compile`], telling `progress` the optimizer's stages.
    fn compile_heard(
        &self,
        max_path: Option<usize>,
        progress: Option<crate::optimize::Progress>,
    ) -> Result<CompiledFilter, CompileError> {
        let arches = ResolveOptions {
            native: Some(Arch::X86_64),
            arches: Some(vec![Arch::X86_64, Arch::X86, Arch::X32]),
            ..Default::default()
        };
        let options = CompileOptions {
            optimize: Some(OptimizeOptions {
                report: false,
                max_path,
                progress,
                ..Default::default()
            }),
            ..Default::default()
        };
        compile_oci(self.profile.as_bytes(), "near.json", &arches, &options)
    }

    /// Checks `f`'s decisions on x86_64 and x32 against the profile's meaning.
    fn check_decisions(&self, f: &CompiledFilter) {
        let (value, bound) = (Self::value, Self::bound);
        for arch in [Arch::X86_64, Arch::X32] {
            let table = arch.syscalls();
            for name in &self.allowed {
                if let Some(nr) = table.nr(name) {
                    assert_eq!(run(f, X86_64, nr, [7; 6]), RetVal::ALLOW, "{arch} {name}");
                }
            }
            for (i, name) in self.checked.iter().enumerate() {
                let Some(nr) = table.nr(name) else { continue };
                for j in 0..5 {
                    for a0 in [value(i, j), value(i, j) + 1] {
                        for a1 in [bound(i, j), bound(i, j) + 1] {
                            let expected = if a0 == value(i, j) && a1 > bound(i, j) {
                                RetVal::ALLOW
                            } else {
                                EPERM
                            };
                            let args = [a0, a1, 0, 0, 0, 0];
                            assert_eq!(run(f, X86_64, nr, args), expected, "{arch} {name}");
                        }
                    }
                }
            }
        }
    }
}

/// `--favor` is a preference: a profile whose balanced layout is too long for the kernel, and
/// whose layout favouring size fits ([`NearTheLimit`]), is compiled favouring size, with a
/// note, instead of being refused. The filter is checked against the profile's meaning.
#[test]
fn favouring_size_is_tried_when_the_layout_asked_for_is_too_long() {
    let near = NearTheLimit::new();
    let f = near.compile(None).unwrap();
    assert_laid_out_to_fit(&f, &["favouring balanced", "favouring size"]);
    near.check_decisions(&f);
}

/// A layout built to `--max-path` can come out over it: the dispatch counts tests, not the
/// `ja`s and trampolines of a 4 000-instruction program. It is searched again with less room
/// until it keeps the bound (`optimize::JUMP_ROOM`). Bound 44 on [`NearTheLimit`] takes five
/// less (laid out within 39); with two less at most (before the thirtieth session) it was
/// refused. (The bound was 67 until the thirty-first session's layout gave the unbounded
/// layout a path of 67.)
///
/// The layouts fill tables of exact trees, the x86_64 dispatch's of 779 ranges among them
/// (seconds of work): a caller watching the progress hears each new table filled from 0% to
/// 100%, inside a layout.
#[test]
fn max_path_leaves_room_for_a_long_programs_jumps() {
    use crate::optimize::{Progress, Stage};
    let near = NearTheLimit::new();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let progress = Progress(std::sync::Arc::new({
        let heard = std::sync::Arc::clone(&heard);
        move |stage: &Stage| heard.lock().unwrap().push(*stage)
    }));
    let f = near.compile_heard(Some(44), Some(progress)).unwrap();
    assert!(f.program().len() <= 4096);
    let worst = crate::optimize::cost::worst_case_path(f.program());
    assert!(worst <= 44, "{worst}");
    assert!(f.info().optimization.as_ref().unwrap().verified);
    near.check_decisions(&f);

    let heard = heard.lock().unwrap();
    // The lifting of the reference, then its first layout.
    assert!(matches!(heard[0], Stage::Lift), "{:?}", heard[0]);
    assert!(matches!(heard[1], Stage::Layout { .. }), "{:?}", heard[1]);
    // Each table's fill: from 0, rising, to 100, before the next stage or table.
    let mut largest = 0;
    for (k, stage) in heard.iter().enumerate() {
        let Stage::Table(fill) = stage else { continue };
        largest = largest.max(fill.ranges);
        let next = heard.get(k + 1);
        match next {
            Some(Stage::Table(after)) if after.percent > 0 => {
                assert!(after.percent > fill.percent, "{fill:?} then {after:?}");
                assert_eq!((after.ranges, after.within), (fill.ranges, fill.within));
            }
            _ => assert_eq!(fill.percent, 100, "{fill:?} then {next:?}"),
        }
        if fill.percent == 0 {
            assert!(k > 0 && !matches!(heard[k - 1], Stage::Proof { .. }));
        }
    }
    assert!(largest >= 700, "{largest}");
}

/// 3 800 scattered `ioctl` requests (near the most a filter can hold): laid out as balanced
/// trees the program is over the kernel's limit, as the input's chain it fits with a longest
/// path over 3 800 instructions. The optimizer lays the requests out in trees of short chains
/// instead: the filter fits, is proved within the self-check's deterministic limits, says so in a note, and
/// its longest path is a few dozen instructions. Its decisions are checked here against the
/// profile's meaning (ALLOW exactly for the listed requests).
#[test]
fn a_value_set_too_long_as_trees_is_laid_out_to_fit() {
    let mut rng = crate::bpf::testing::Rng::new(3800);
    let mut requests: Vec<u32> = (0..3800).map(|_| rng.next_u32()).collect();
    requests.sort_unstable();
    requests.dedup();
    let rules: Vec<String> = requests
        .iter()
        .map(|v| {
            format!(
                r#"{{"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
                     "args": [{{"index": 1, "value": {v}, "op": "SCMP_CMP_EQ"}}]}}"#
            )
        })
        .collect();
    let (profile, f) = compiled_to_fit(&rules);
    let worst = crate::optimize::cost::worst_case_path(f.program());
    assert!(worst < 100, "longest path {worst}");
    // A path bound is kept by the layout laid out to fit, or refused; never broken.
    let bounded = |bound: usize| CompileOptions {
        optimize: Some(OptimizeOptions {
            report: false,
            max_path: Some(bound),
            ..Default::default()
        }),
        ..Default::default()
    };
    let within = |bound| {
        compile_oci(
            profile.as_bytes(),
            "ioctls.json",
            &only(Arch::X86_64),
            &bounded(bound),
        )
    };
    let kept = within(worst as usize).map(|f| f.into_program());
    assert!(
        matches!(&kept, Ok(p) if p.len() <= 4096 && crate::optimize::cost::worst_case_path(p) <= worst),
        "{:?}",
        kept.map(|p| p.len())
    );
    // Below it, the error names the shortest path a filter that fits reaches (this one's), not
    // the shorter one the dispatch counts in balanced trees too long for the kernel: raising
    // `--max-path` to the path named is enough.
    for bound in [worst as usize - 1, 20, 8] {
        let refused = within(bound);
        assert!(
            matches!(&refused, Err(CompileError::PathBound { shortest, .. }) if *shortest == worst as usize),
            "bound {bound}: {refused:?}"
        );
    }
    let ioctl = Arch::X86_64.syscalls().nr("ioctl").unwrap();
    for &v in &requests {
        for probe in [v, v.wrapping_add(1), v.wrapping_sub(1)] {
            let expected = if requests.binary_search(&probe).is_ok() {
                RetVal::ALLOW
            } else {
                EPERM
            };
            assert_eq!(
                run(&f, X86_64, ioctl, [0, u64::from(probe), 0, 0, 0, 0]),
                expected,
                "request {probe:#x}"
            );
        }
    }
}

/// 370 syscalls, each allowed for six values of its first argument when the second is above
/// a bound: as balanced trees the program needs about 4 580 instructions and the input's own
/// layout after the bytecode passes about 4 150, both over the kernel's limit. Without the
/// layout to fit, `compile` refused it (`TooLarge`, with `--favor size`'s 3 843 as the hint);
/// now it compiles by default, proved, and decides as the profile says (checked here from the
/// rules, on every value of every syscall and its neighbours).
#[test]
fn many_short_value_sets_too_long_as_trees_are_laid_out_to_fit() {
    let names: Vec<&str> = Arch::X86_64
        .syscalls()
        .iter()
        .map(|(_, name)| name)
        .take(370)
        .collect();
    let value = |i: usize, j: usize| (i * 100 + j * 7) as u64;
    let rules: Vec<String> = names
        .iter()
        .enumerate()
        .flat_map(|(i, name)| {
            (0..6).map(move |j| {
                format!(
                    r#"{{"names": ["{name}"], "action": "SCMP_ACT_ALLOW", "args": [
                        {{"index": 0, "value": {}, "op": "SCMP_CMP_EQ"}},
                        {{"index": 1, "value": {}, "op": "SCMP_CMP_GT"}}]}}"#,
                    value(i, j),
                    j + 1
                )
            })
        })
        .collect();
    let (_, f) = compiled_to_fit(&rules);
    for (i, name) in names.iter().enumerate() {
        let nr = Arch::X86_64.syscalls().nr(name).unwrap();
        for j in 0..6 {
            for a0 in [value(i, j), value(i, j) + 1] {
                for a1 in [j as u64 + 1, j as u64 + 2] {
                    let allowed = a0 == value(i, j) && a1 > j as u64 + 1;
                    let expected = if allowed { RetVal::ALLOW } else { EPERM };
                    assert_eq!(
                        run(&f, X86_64, nr, [a0, a1, 0, 0, 0, 0]),
                        expected,
                        "{name}"
                    );
                }
            }
        }
    }
}

/// `socket` allowed for AF_INET only, and `read`/`write`.
const SOCKET_INET_ONLY: &str = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
    {"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
    {"names": ["socket"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"}]}]}"#;

/// The `socketcall` warnings of `f`'s profile.
fn socketcall_warnings(f: &CompiledFilter) -> Vec<&policy::Warning> {
    f.info()
        .warnings
        .iter()
        .filter(|w| w.message.contains("socketcall(2)"))
        .collect()
}

/// On i386 libseccomp applies `socket`'s rule to `socketcall(SYS_SOCKET, …)` with the
/// domain condition replaced by the call number (the lowering reproduces it; the oracle
/// test `conditions_libseccomp_drops_through_socketcall_are_warned_about` shows libseccomp's
/// own filter doing it): every domain is allowed there, which the profile does not say, so
/// the filter's info warns, where x86_64 (no `socketcall`) does not.
#[test]
fn a_socket_condition_dropped_through_socketcall_is_warned_about() {
    let f = oci(SOCKET_INET_ONLY, &[Arch::X86], false);
    // socketcall is 102 on i386, SYS_SOCKET = 1; the domain is in memory at args[1].
    assert_eq!(run(&f, I386, 102, [1, 0x1000, 0, 0, 0, 0]), RetVal::ALLOW);
    let warned = socketcall_warnings(&f);
    assert_eq!(warned.len(), 1, "{:?}", f.info().warnings);
    assert_eq!(warned[0].kind, policy::WarningKind::NotEnforced);
    assert_eq!(warned[0].path, "$.syscalls[1]");
    assert!(
        warned[0].message.contains("on x86,"),
        "{}",
        warned[0].message
    );
    assert!(
        warned[0].message.contains("args[0] == 1"),
        "{}",
        warned[0].message
    );
    let f = oci(SOCKET_INET_ONLY, &[Arch::X86_64], false);
    assert!(
        socketcall_warnings(&f).is_empty(),
        "{:?}",
        f.info().warnings
    );
    // Unconditional, the rule means the same through socketcall: nothing to say.
    let plain = SOCKET_INET_ONLY.replace(
        r#",
     "args": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"}]"#,
        "",
    );
    assert_ne!(plain, SOCKET_INET_ONLY);
    let f = oci(&plain, &[Arch::X86], false);
    assert!(
        socketcall_warnings(&f).is_empty(),
        "{:?}",
        f.info().warnings
    );
}

/// With `ResolveOptions::strict`, compiling refuses what the lowering warns about, as
/// `secopt compile --strict` does: the embedder's `strict` means no warning gets through.
#[test]
fn strict_refuses_the_lowerings_warnings_too() {
    let resolve = ResolveOptions {
        strict: true,
        ..only(Arch::X86)
    };
    let err = compile_oci(
        SOCKET_INET_ONLY.as_bytes(),
        "test.json",
        &resolve,
        &CompileOptions::default(),
    )
    .unwrap_err();
    match err {
        CompileError::Policy(e @ PolicyError::Warnings { .. }) => {
            // Where the first warning is, for a caller that shows one place.
            assert_eq!(e.json_path(), Some("$.syscalls[1]"));
            let PolicyError::Warnings { file, warnings } = e else {
                unreachable!()
            };
            assert_eq!(file, "test.json");
            assert_eq!(warnings.len(), 1, "{warnings:?}");
            assert_eq!(warnings[0].kind, policy::WarningKind::NotEnforced);
        }
        other => panic!("{other:?}"),
    }
    // Without the socket condition there is nothing to refuse.
    let ok = compile_oci(
        READ_ONLY.as_bytes(),
        "test.json",
        &resolve,
        &CompileOptions::default(),
    );
    assert!(ok.is_ok(), "{ok:?}");
}

/// An architecture the profile names that secopt has no table for is a warning in the
/// filter's info (the command line printed it; an embedder saw only `unsupported_arches`).
#[test]
fn an_arch_without_a_table_is_a_warning_in_the_info() {
    let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_PARISC64"],
        "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]}"#;
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        ..Default::default()
    };
    let f = compile_oci(
        profile.as_bytes(),
        "test.json",
        &resolve,
        &CompileOptions::default(),
    )
    .unwrap();
    assert_eq!(f.info().unsupported_arches, ["parisc64"]);
    let warned: Vec<_> = f
        .info()
        .warnings
        .iter()
        .filter(|w| w.kind == policy::WarningKind::UnknownName)
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", f.info().warnings);
    assert!(
        warned[0].message.contains("parisc64"),
        "{}",
        warned[0].message
    );
}
