//! Unit tests of the verifier on hand-written filters whose (in)equivalence is worked out by
//! hand; every `Different` is also checked against the interpreter by the library itself.

use super::*;
use crate::arch::Arch;
use crate::bpf::asm::assemble;

fn asm(text: &str) -> Program {
    assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn check(a: &str, b: &str) -> Verdict {
    equivalent(&asm(a), &asm(b), &VerifyOptions::default()).unwrap()
}

fn different(a: &str, b: &str) -> Counterexample {
    match check(a, b) {
        Verdict::Different(c) => {
            assert_ne!(c.a, c.b);
            assert_eq!(interp::eval(&asm(a), &c.data).unwrap(), c.a);
            assert_eq!(interp::eval(&asm(b), &c.data).unwrap(), c.b);
            c
        }
        v => panic!("expected a difference, got {v:?}"),
    }
}

#[test]
fn ret_a_is_compared_by_value() {
    // The same constant returned through A and directly.
    assert_eq!(check("ld #ALLOW\nret a", "ret ALLOW"), Verdict::Equal);
    // A masked argument returned: masks 0xff and 0x1ff differ exactly when bit 8 is set.
    let a = "ld [args[1].lo]\nand #0xff\nret a";
    let b = "ld [args[1].lo]\nand #0x1ff\nret a";
    let c = different(a, b);
    // The counterexample is on the host's arch when it can be (little-endian here).
    assert_eq!(c.data.arch, Arch::host().unwrap().token());
    assert_eq!(c.data.args[1] & 0x100, 0x100);
    assert_eq!(
        (c.a.0, c.b.0),
        (0, 0x100),
        "the smallest input: only bit 8 set"
    );
    // Two ways of computing the same value: (x << 3) + x == x * 9.
    let shifted = "ld [args[0].lo]\nst M[3]\nlsh #3\ntax\nld M[3]\nadd x\nret a";
    assert_eq!(
        check(shifted, "ld [args[0].lo]\nmul #9\nret a"),
        Verdict::Equal
    );
}

#[test]
fn division_by_x_zero_returns_zero() {
    // The kernel returns 0 (KILL_THREAD) from the whole filter when X == 0 at a DIV.
    let div = "ld [args[0].lo]\ntax\nld #10\ndiv x\nret ALLOW";
    let explicit = "ld [args[0].lo]\njeq #0, kill, allow\nkill: ret KILL_THREAD\nallow: ret ALLOW";
    assert_eq!(check(div, explicit), Verdict::Equal);
    let c = different(div, "ret ALLOW");
    assert_eq!((c.data.args[0], c.a, c.b), (0, RetVal(0), RetVal::ALLOW));
}

#[test]
fn shifts_by_x_use_the_low_five_bits() {
    let by_x = "ld [args[0].lo]\ntax\nld #1\nlsh x\nret a";
    let masked = "ld [args[0].lo]\nand #31\ntax\nld #1\nlsh x\nret a";
    assert_eq!(check(by_x, masked), Verdict::Equal);
    let unmasked_rsh = "ld [args[0].lo]\ntax\nld #0x80000000\nrsh x\nret a";
    let c = different(by_x, unmasked_rsh);
    assert_eq!(c.data.args[0], 0, "1 << 0 = 1 but 0x80000000 >> 0 differs");
}

#[test]
fn neg_sub_xor_and_txa_identities() {
    // -a == 0 - a; a ^ 0xffffffff == ~a == -a - 1.
    assert_eq!(
        check("ld [nr]\nneg\nret a", "ld [nr]\ntax\nld #0\nsub x\nret a"),
        Verdict::Equal
    );
    assert_eq!(
        check(
            "ld [nr]\nxor #0xffffffff\nret a",
            "ld [nr]\nneg\nsub #1\nret a"
        ),
        Verdict::Equal
    );
    assert_eq!(
        check("ld [nr]\ntax\ntxa\nret a", "ld [nr]\nret a"),
        Verdict::Equal
    );
}

#[test]
fn high_halves_are_not_assumed_zero_on_i386() {
    // The int $0x80 entry of a 64-bit process can pass non-zero high halves: a filter that
    // checks only the low half and one that checks both differ there.
    let low_only = "ld [arch]\njeq #AUDIT_ARCH_I386, next, allow\nld [args[0].lo]\njeq #40, deny, allow\ndeny: ret ERRNO(1)\nallow: ret ALLOW";
    let both = "ld [arch]\njeq #AUDIT_ARCH_I386, next, allow\nld [args[0].hi]\njeq #0, next, allow\nld [args[0].lo]\njeq #40, deny, allow\ndeny: ret ERRNO(1)\nallow: ret ALLOW";
    let c = different(low_only, both);
    assert_eq!(c.data.arch, Arch::X86.token());
    assert_eq!(c.data.args[0] as u32, 40);
    assert_ne!(c.data.args[0] >> 32, 0);
    assert_eq!((c.a, c.b), (RetVal::errno(1), RetVal::ALLOW));
}

#[test]
fn domain_restrictions_are_honoured() {
    // The two differ only for x86 (i386) syscalls and for numbers above 1000 on x86_64.
    let a = "ld [arch]\njeq #AUDIT_ARCH_I386, deny\nld [nr]\njgt #1000, deny\nret ALLOW\ndeny: ret ERRNO(1)";
    let b = "ret ALLOW";
    let restricted = |arches: Vec<ArchSel>, nrs: Vec<NrSel>| VerifyOptions {
        domain: Domain { arches, nrs },
        ..VerifyOptions::default()
    };
    let (pa, pb) = (asm(a), asm(b));
    let only = restricted(
        vec![ArchSel::Arch(Arch::X86_64)],
        vec![NrSel::Range(0, 1000)],
    );
    assert_eq!(equivalent(&pa, &pb, &only).unwrap(), Verdict::Equal);
    let with_1001 = restricted(
        vec![ArchSel::Arch(Arch::X86_64)],
        vec![NrSel::Range(0, 1001)],
    );
    let Verdict::Different(c) = equivalent(&pa, &pb, &with_1001).unwrap() else {
        panic!("1001 differs");
    };
    assert_eq!((c.data.arch, c.data.nr), (Arch::X86_64.token(), 1001));
    // x86_64 excludes x32's half: 0x40000000 + 5 > 1000, but it is x32's.
    let x86_64_low = restricted(
        vec![ArchSel::Arch(Arch::X86_64)],
        vec![NrSel::Range(0, 1000)],
    );
    assert_eq!(equivalent(&pa, &pb, &x86_64_low).unwrap(), Verdict::Equal);
    let x86 = restricted(
        vec![ArchSel::Arch(Arch::X86)],
        vec![NrSel::Name("socket".into())],
    );
    let Verdict::Different(c) = equivalent(&pa, &pb, &x86).unwrap() else {
        panic!("x86 differs");
    };
    assert_eq!((c.data.arch, c.data.nr), (Arch::X86.token(), 359));
    // A name needs an arch.
    let bad = restricted(vec![], vec![NrSel::Name("socket".into())]);
    assert!(matches!(
        equivalent(&pa, &pb, &bad),
        Err(VerifyError::Domain(DomainError::NameWithoutArch(_)))
    ));
}

#[test]
fn budgets_give_unknown_with_the_reason() {
    // Comparing a product of two arguments needs exponentially many nodes.
    let product = "ld [args[0].lo]\ntax\nld [args[1].lo]\nmul x\njeq #12345, allow\nret ERRNO(1)\nallow: ret ALLOW";
    // The node budget, and the step budget, which stops the same proof whatever the node
    // budget, on every machine (no clock).
    let nodes = Budget {
        max_bdd_nodes: 5000,
        ..Budget::default()
    };
    let steps = Budget {
        max_bdd_steps: 5000,
        time_limit: None,
        ..Budget::default()
    };
    for (budget, reason, field) in [
        (
            nodes,
            UnknownReason::BddNodes { limit: 5000 },
            "max_bdd_nodes",
        ),
        (
            steps,
            UnknownReason::BddSteps { limit: 5000 },
            "max_bdd_steps",
        ),
    ] {
        let opts = VerifyOptions {
            budget,
            ..VerifyOptions::default()
        };
        let v = equivalent(&asm(product), &asm("ret ALLOW"), &opts).unwrap();
        assert_eq!(v, Verdict::Unknown { reason });
        // The field to raise is the one lowered; the message is the library's, so it names
        // no command-line flag.
        assert_eq!(reason.budget_field(), field);
        assert!(!reason.to_string().contains("--"), "{reason}");
    }
    let no_time = VerifyOptions {
        budget: Budget {
            time_limit: Some(Duration::ZERO),
            ..Budget::default()
        },
        ..VerifyOptions::default()
    };
    // (Two different programs: identical ones are equal without exploring.)
    let v = equivalent(&asm("ret ALLOW"), &asm("ld [nr]\nret ALLOW"), &no_time).unwrap();
    assert!(matches!(
        v,
        Verdict::Unknown {
            reason: UnknownReason::Time { .. }
        }
    ));
}

#[test]
fn invalid_programs_are_rejected_first() {
    let bad = Program::new(vec![crate::bpf::Insn::ld_abs(2), crate::bpf::Insn::ret(0)]);
    let err = equivalent(&asm("ret ALLOW"), &bad, &VerifyOptions::default()).unwrap_err();
    assert!(
        matches!(err, VerifyError::Invalid { side: Side::B, .. }),
        "{err}"
    );
}

fn diff_text(a: &str, b: &str, opts: &VerifyOptions) -> String {
    match diff(&asm(a), &asm(b), opts).unwrap() {
        DiffOutcome::Different(d) => d.to_string(),
        other => panic!("expected differences, got {other:?}"),
    }
}

#[test]
fn diff_names_syscalls_and_argument_values() {
    let a = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njeq #x86_64.socket, next, allow\nld [args[0].hi]\njeq #0, next, allow\nld [args[0].lo]\njeq #40, deny, allow\ndeny: ret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS";
    let b = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nret ALLOW\nkill: ret KILL_PROCESS";
    let text = diff_text(b, a, &VerifyOptions::default());
    assert_eq!(
        text,
        "x86_64 socket: ALLOW -> ERRNO(1) when args[0] == 40\n"
    );
}

#[test]
fn diff_groups_unnamed_number_ranges_and_other_arches() {
    // i386 numbers 500..=600 (above the table) change from ERRNO(1) to ERRNO(38).
    let a = "ld [arch]\njeq #AUDIT_ARCH_I386, next, kill\nret ERRNO(1)\nkill: ret KILL_PROCESS";
    let b = "ld [arch]\njeq #AUDIT_ARCH_I386, next, kill\nld [nr]\njge #500, next, e1\njgt #600, e1, e38\ne1: ret ERRNO(1)\ne38: ret ERRNO(38)\nkill: ret KILL_PROCESS";
    let text = diff_text(a, b, &VerifyOptions::default());
    assert_eq!(text, "x86 (nr 500..=600): ERRNO(1) -> ERRNO(38)\n");
    // Killing unknown arches with a different action.
    let c = "ld [arch]\njeq #AUDIT_ARCH_I386, next, kill\nret ERRNO(1)\nkill: ret KILL_THREAD";
    let text = diff_text(a, c, &VerifyOptions::default());
    assert_eq!(
        text,
        "other arch tokens (any nr): KILL_PROCESS -> KILL_THREAD\n"
    );
}

/// Filters that never look at the arch decide every arch alike: the change is on "any arch",
/// not "other arch tokens" (which read as if the host's were not among them; an audit's
/// finding), and its example is the host's call.
#[test]
fn diff_of_filters_without_an_arch_check_is_on_any_arch() {
    let a = "ld [nr]\njeq #39, e\nret ALLOW\ne: ret ERRNO(1)";
    let b = "ret ALLOW";
    let text = diff_text(a, b, &VerifyOptions::default());
    assert_eq!(
        text,
        "any arch (neither filter checks the arch) (nr 39): ERRNO(1) -> ALLOW\n"
    );
    let diff = match super::diff(
        &crate::bpf::asm::assemble(a).unwrap(),
        &crate::bpf::asm::assemble(b).unwrap(),
        &VerifyOptions::default(),
    )
    .unwrap()
    {
        super::DiffOutcome::Different(d) => d,
        other => panic!("{other:?}"),
    };
    let example = diff.arches[0].entries[0].changes[0].example;
    if let Some(host) = Arch::host() {
        assert_eq!(example.arch, host.token());
    }
    assert_eq!(example.nr, 39);
}

#[test]
fn diff_runs_of_named_syscalls_with_the_same_change() {
    // read (0), write (1), open (2) move from ALLOW to ERRNO(1) on x86_64.
    let a = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nret ALLOW\nkill: ret KILL_PROCESS";
    let b = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njgt #2, allow\nret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS";
    let opts = VerifyOptions {
        domain: Domain {
            arches: vec![ArchSel::Arch(Arch::X86_64)],
            nrs: vec![],
        },
        ..VerifyOptions::default()
    };
    let text = diff_text(a, b, &opts);
    assert_eq!(text, "x86_64 read, write, open: ALLOW -> ERRNO(1)\n");
}

#[test]
fn dead_values_are_never_computed() {
    // The product is never read: no BDD is built for it, so a tiny budget suffices.
    let tiny = VerifyOptions {
        budget: Budget {
            max_bdd_nodes: 2000,
            ..Budget::default()
        },
        ..VerifyOptions::default()
    };
    let dead = asm("ld [nr]\nmul #0xbfe6c971\nld [args[0].lo]\ntax\nmul x\nret ALLOW");
    assert_eq!(
        equivalent(&dead, &asm("ret ALLOW"), &tiny).unwrap(),
        Verdict::Equal
    );
    // States that differ only in a dead register merge: both branches leave a different
    // value in A and then return a constant.
    let branches = "ld [nr]\njeq #1, one, two\none: ld #1\nja out\ntwo: ld #2\nout: ret ALLOW";
    assert_eq!(check(branches, "ret ALLOW"), Verdict::Equal);
}

#[test]
fn diff_with_fragmented_numbers_shows_nr_in_the_condition() {
    // A bit test on nr cuts the numbers into 2^31 runs: shown as one condition instead.
    let a = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njset #1, odd\nret ALLOW\nodd: ret ERRNO(1)\nkill: ret KILL_PROCESS";
    let b = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nret ALLOW\nkill: ret KILL_PROCESS";
    let opts = VerifyOptions {
        domain: Domain {
            arches: vec![ArchSel::Arch(Arch::X86_64)],
            nrs: vec![],
        },
        ..VerifyOptions::default()
    };
    // x86_64's numbers are those with bit 30 clear or bit 31 set (x32's are
    // 0x40000000..=0x7fffffff): the odd ones among them.
    let text = diff_text(a, b, &opts);
    assert_eq!(
        text,
        "x86_64 (the numbers the condition gives): ERRNO(1) -> ALLOW when (nr & 0xc0000001 == 1 \
         or nr & 0x80000001 == 0x80000001)\n"
    );
}

#[test]
fn diff_of_values_computed_from_the_arch_stays_small() {
    // 64 return values, each on arch tokens with given low bits: too fragmented to list per
    // token, so one entry whose conditions name the arch (found by fuzzing).
    let a = asm("ld [arch]\nand #63\nret a");
    let b = asm("ret ALLOW");
    let start = std::time::Instant::now();
    let DiffOutcome::Different(d) = diff(&a, &b, &VerifyOptions::default()).unwrap() else {
        panic!("they differ");
    };
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(d.truncated, None);
    assert_eq!(d.arches.len(), 1);
    let entry = &d.arches[0].entries[0];
    assert!(entry.nr_in_condition);
    assert_eq!(entry.changes.len(), 64);
    let c = &entry.changes[5];
    assert_eq!(
        (c.a, c.b),
        (Ret::Value(RetVal(5)), Ret::Value(RetVal::ALLOW))
    );
    assert_eq!(c.when, "arch & 0x3f == 5");
    assert_eq!(c.example.arch & 63, 5);
}

/// A test whose two targets are the same instruction decides nothing, so it builds no
/// condition: comparing two input words (`nr == arch`) would need about 2^32 decision-diagram
/// nodes under the input-bit order, far over this budget.
#[test]
fn a_test_with_equal_targets_builds_no_condition() {
    let a = "ld [arch]\ntax\nld [nr]\njeq x, same, same\nsame: ld [args[0].lo]\nret a";
    let b = "ld [args[0].lo]\nret a";
    let mut opts = VerifyOptions::default();
    opts.budget.max_bdd_nodes = 100_000;
    assert_eq!(equivalent(&asm(a), &asm(b), &opts).unwrap(), Verdict::Equal);
}

/// The sampling fallback finds a difference the constants make (args[0] == 7), minimizes the
/// other words to 0, and takes a domain nobody checked (`lo > hi`) without panicking.
#[test]
fn sampling_finds_a_constant_difference_and_survives_unchecked_domains() {
    let a = asm("ld [args[0].lo]\njeq #7, e, next\nret ALLOW\ne: ret ERRNO(1)");
    let b = asm("ret ALLOW");
    let c = sample_difference(&a, &b, &Domain::all()).expect("7 is in the pool");
    assert_eq!((c.a, c.b), (RetVal::errno(1), RetVal::ALLOW));
    assert_eq!(c.data.words()[4], 7);
    assert_eq!(
        c.data.words().iter().filter(|&&w| w != 0).count(),
        1,
        "{c:?}"
    );
    let backwards = Domain {
        arches: vec![],
        nrs: vec![NrSel::Range(5, 3)],
    };
    assert_eq!(sample_difference(&a, &b, &backwards), None);
}

/// A filter against itself is equal without a proof, whatever the budget (the product above
/// runs out of nodes against anything else); an invalid one is still refused.
#[test]
fn a_filter_is_equal_to_itself_within_any_budget() {
    let product = asm(
        "ld [args[0].lo]\ntax\nld [args[1].lo]\nmul x\njeq #12345, allow\nret ERRNO(1)\nallow: ret ALLOW",
    );
    let opts = VerifyOptions {
        budget: Budget {
            max_bdd_nodes: 5000,
            ..Budget::default()
        },
        ..VerifyOptions::default()
    };
    assert_eq!(
        equivalent(&product, &product, &opts).unwrap(),
        Verdict::Equal
    );
    assert_eq!(diff(&product, &product, &opts).unwrap(), DiffOutcome::Equal);
    // (The premise: against a copy with one more unreachable instruction, the budget runs out.)
    let mut twin = product.clone();
    twin.insns.push(crate::bpf::Insn::ret(0));
    assert!(matches!(
        equivalent(&product, &twin, &opts),
        Ok(Verdict::Unknown { .. })
    ));
    assert!(matches!(
        diff(&product, &twin, &opts),
        Ok(DiffOutcome::Unknown { .. })
    ));
    let invalid = Program::new(vec![crate::bpf::Insn::ld_abs(64)]);
    assert!(matches!(
        equivalent(&invalid, &invalid, &opts),
        Err(VerifyError::Invalid { side: Side::A, .. })
    ));
    assert!(matches!(
        diff(&invalid, &invalid, &opts),
        Err(VerifyError::Invalid { side: Side::A, .. })
    ));
}

/// A verdict reads as a sentence with the syscall named (x86_64's write is 1, EPERM 1).
#[test]
fn verdicts_display_with_the_syscall_named() {
    let c = Counterexample {
        data: SeccompData::new(crate::arch::Arch::X86_64.token(), 1, [1, 0, 0, 0, 0, 0]),
        a: RetVal::ALLOW,
        b: RetVal(0x0005_0001),
    };
    let text = Verdict::Different(c).to_string();
    assert!(
        text.starts_with("different on write (x86_64, arch 0xc000003e, nr 1)"),
        "{text}"
    );
    assert!(text.contains("args=[0x1, 0x0"), "{text}");
    assert!(
        text.ends_with("the first returns ALLOW, the second ERRNO(1)"),
        "{text}"
    );
    assert_eq!(Verdict::Equal.to_string(), "equal");
    let unknown = Verdict::Unknown {
        reason: UnknownReason::Time { limit_ms: 5 },
    };
    assert_eq!(
        unknown.to_string(),
        "unknown: the time budget of 5 ms ran out"
    );
}

/// Exploring each arch token on its own ([`cases_by_token`]) is a way of computing the same
/// answer: on random programs (which test the arch word, the syscall number and arguments with
/// arch tokens and syscall numbers among their constants; half of them first kill every arch
/// but one, as filters do), the verdict and the counterexample are the ones the single
/// exploration of the whole domain gives. Pairs: a program and itself behind a `ja 0` (equal
/// but not identical), with one return value changed (different on some paths only), and two
/// unrelated programs.
#[test]
fn arch_cases_give_the_verdict_and_counterexample_of_one_exploration() {
    use crate::bpf::insn::{BPF_A, BPF_JEQ, BPF_JMP, BPF_K};
    use crate::bpf::testing::{random_program, GenConfig, Rng};
    use crate::bpf::Insn;
    let mut rng = Rng::new(53);
    let cfg = GenConfig::default();
    let budget = Budget {
        max_bdd_nodes: 200_000,
        max_bdd_steps: 2_000_000,
        time_limit: None,
        ..Budget::default()
    };
    // Every input, and domains restricted by arch (the cases' domains are the domain's
    // cofactors) and by number.
    let domains = [
        Domain::default(),
        Domain {
            arches: vec![ArchSel::Arch(Arch::X86_64), ArchSel::Token(0x4000_0003)],
            nrs: Vec::new(),
        },
        Domain {
            arches: vec![ArchSel::Arch(Arch::X32), ArchSel::Arch(Arch::Aarch64)],
            nrs: vec![NrSel::Range(1, 59)],
        },
    ];
    let random = |rng: &mut Rng| {
        let p = random_program(rng, &cfg);
        if rng.chance(1, 2) {
            return p;
        }
        let token = rng.pick(&[0xc000_003e, 0x4000_0003, 0xc000_00b7]);
        let check = [
            Insn::ld_abs(4),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, token, 1, 0),
            Insn::ret(RetVal::KILL_PROCESS.0),
        ];
        Program::new(check.into_iter().chain(p.insns).collect())
    };
    let (mut split, mut equal, mut different) = (0, 0, 0);
    for round in 0..600 {
        let a = random(&mut rng);
        let b = match round % 3 {
            0 => Program::new([Insn::ja(0)].into_iter().chain(a.insns.clone()).collect()),
            1 => {
                let mut b = a.clone();
                let rets: Vec<usize> = (0..b.len())
                    .filter(|&i| b.insns[i].is_ret() && b.insns[i].code & BPF_A == 0)
                    .collect();
                if let Some(&i) = rets.get(rng.below(rets.len().max(1))) {
                    b.insns[i].k = rng.pick(&cfg.returns);
                }
                b
            }
            _ => random(&mut rng),
        };
        let opts = VerifyOptions {
            domain: domains[round % 5 % 3].clone(),
            budget: budget.clone(),
            meter: None,
        };
        let whole = equivalent_in_cases(&a, &b, &opts, &[ArchCase::Any]).unwrap();
        if matches!(whole, Verdict::Unknown { .. }) {
            continue;
        }
        // Every token's case, whatever their overlap: that is what is tested here.
        let cases = cases_by_token(&a, &b);
        split += usize::from(cases.len() > 1);
        let by_arch = equivalent_in_cases(&a, &b, &opts, &cases).unwrap();
        assert_eq!(by_arch, whole, "round {round}: {cases:?}\n{a:?}\n{b:?}");
        assert_eq!(equivalent(&a, &b, &opts).unwrap(), whole, "round {round}");
        match whole {
            Verdict::Equal => equal += 1,
            _ => different += 1,
        }
    }
    // The sample exercises what it claims to.
    assert!(
        split >= 300 && equal >= 150 && different >= 150,
        "{split} {equal} {different}"
    );
}

/// A difference on an arch token neither filter names is in the last case (every other
/// token), and its counterexample is the smallest input, arch token 0, as before.
#[test]
fn a_difference_on_an_unnamed_arch_is_found() {
    let a = "ld [arch]\njeq #AUDIT_ARCH_X86_64, ok\nret KILL_PROCESS\nok: ret ALLOW";
    let b = "ld [arch]\njeq #AUDIT_ARCH_X86_64, ok\nld [nr]\njeq #5, ok\nret KILL_PROCESS\nok: ret ALLOW";
    let cx = different(a, b);
    assert_eq!((cx.data.arch, cx.data.nr), (0, 5));
    assert_eq!((cx.a, cx.b), (RetVal::KILL_PROCESS, RetVal::ALLOW));
}

/// Arches with code of their own are explored apart; arches that share one body behind their
/// tokens are explored together, where each case would run the whole body again (audit 54:
/// ten tokens before an argument check with divisions took ten times the steps split).
#[test]
fn arch_cases_are_split_only_where_the_arches_have_code_of_their_own() {
    let body =
        "ld [args[0].lo]\ndiv #214\njeq #380, allow, deny\ndeny: ret ERRNO(1)\nallow: ret ALLOW";
    let tokens = ["X86_64", "I386", "AARCH64", "ARM", "PPC64LE", "S390X"];
    let tests: String = tokens
        .iter()
        .map(|t| format!("jeq #AUDIT_ARCH_{t}, body\n"))
        .collect();
    let shared = asm(&format!("ld [arch]\n{tests}ret KILL_PROCESS\nbody: {body}"));
    let other = asm(&format!(
        "ja start\nstart: ld [arch]\n{tests}ret KILL_PROCESS\nbody: {body}"
    ));
    assert_eq!(arch_cases(&shared, &other), vec![ArchCase::Any]);
    // The same tests, each arch with its own check of the argument.
    let mut own = String::from("ld [arch]\n");
    for (i, t) in tokens.iter().enumerate() {
        own += &format!("jeq #AUDIT_ARCH_{t}, a{i}\n");
    }
    own += "ret KILL_PROCESS\n";
    for i in 0..tokens.len() {
        own += &format!("a{i}: ld [args[0].lo]\njeq #{i}, allow, deny\n");
    }
    own += "deny: ret ERRNO(1)\nallow: ret ALLOW";
    let own = asm(&own);
    let cases = arch_cases(&own, &own);
    assert!(cases.len() > tokens.len(), "{cases:?}");
    assert_eq!(cases.last(), Some(&ArchCase::Rest));
    let checked = crate::bpf::analysis::arch_tokens_checked(&own);
    assert_eq!(checked.len(), tokens.len());
    for t in checked {
        assert!(cases.contains(&ArchCase::Token(t)), "{t:#x}: {cases:?}");
    }
    // Either way the verdict is the proof's.
    let opts = VerifyOptions::default();
    assert_eq!(equivalent(&shared, &other, &opts).unwrap(), Verdict::Equal);
}
