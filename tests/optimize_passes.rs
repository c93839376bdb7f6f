//! One hand-written example per optimization, with the expected output worked out by hand
//! (the reasoning is in the comments and in docs/optimizer.md). Every output is also checked
//! against the input with the interpreter on all inputs built from the program's constants.

use secopt::arch::Arch;
use secopt::bpf::asm::assemble;
use secopt::bpf::disasm::{disassemble, DisasmOptions};
use secopt::bpf::insn::*;
use secopt::bpf::testing::{random_data, Rng};
use secopt::bpf::{interp, Program, SeccompData};
use secopt::optimize::{
    optimize, CostModel, Method, NoteKind, OptimizeOptions, Verification, Weights,
};
use secopt::verify::UnknownReason;

fn asm(src: &str) -> Program {
    assemble(src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn text(p: &Program) -> String {
    disassemble(
        p,
        &DisasmOptions {
            arch: Some(Arch::X86_64),
            ..DisasmOptions::default()
        },
    )
}

fn same_decisions(a: &Program, b: &Program) {
    let mut rng = Rng::new(1);
    let consts: Vec<u32> = a
        .insns
        .iter()
        .filter(|i| i.is_conditional_jump())
        .map(|i| i.k)
        .chain([0, 1, u32::MAX])
        .collect();
    for &c in &consts {
        for v in [c.wrapping_sub(1), c, c.wrapping_add(1)] {
            for word in 0..16 {
                let mut w = SeccompData::new(0xc000_003e, 0, [0; 6]).words();
                w[word] = v;
                let d = SeccompData::from_words(&w);
                assert_eq!(interp::eval(a, &d), interp::eval(b, &d), "{d:?}");
            }
        }
    }
    for _ in 0..2000 {
        let d = random_data(&mut rng, a, &[0xc000_003e]);
        assert_eq!(interp::eval(a, &d), interp::eval(b, &d), "{d:?}");
    }
}

/// Optimizes with the self-check and checks the result against `expected` (assembly).
fn check(input: &str, expected: &str, opts: OptimizeOptions) -> Program {
    let (p, want) = (asm(input), asm(expected));
    let out = optimize(&p, &opts).unwrap();
    assert_eq!(out.verification, Verification::Equal, "{:?}", out.notes);
    assert_eq!(
        text(&out.program),
        text(&want),
        "\n--- got ---\n{}\n--- expected ---\n{}",
        text(&out.program),
        text(&want)
    );
    same_decisions(&p, &out.program);
    out.program
}

fn default_opts() -> OptimizeOptions {
    OptimizeOptions::default()
}

/// Jump threading (`ja` → `ja` → `ret`), dead code (the last `ret`), and identical returns:
/// the DAG has no `ja` at all, so every edge goes straight to its final target.
#[test]
fn jump_threading_and_dead_code() {
    check(
        "
            ld [args[0].lo]
            jeq #1, a, b
        a:  ja c
        b:  ja d
        c:  ja e
        d:  ret ERRNO(1)
        e:  ret ALLOW
            ret KILL_PROCESS
        ",
        // The test's targets are returns: placed right behind it (taken first).
        "
            ld [args[0].lo]
            jeq #1, next, e
            ret ALLOW
        e:  ret ERRNO(1)
        ",
        default_opts(),
    );
}

/// A conditional jump whose two targets are the same is no test at all, `ja 0` is no jump, and
/// the load that only fed the test is then dead: one instruction is left.
#[test]
fn same_target_conditional_and_ja_zero() {
    check(
        "
            ld [nr]
            jeq #5, x, x
        x:  ja next
            ret ALLOW
        ",
        "ret ALLOW",
        default_opts(),
    );
}

/// Two tests of `args[0].lo`, the second after a load of the word A already holds.
const RELOADS_ARG0: &str = "
    ld [args[0].lo]
    jeq #1, a, next
    ld [args[0].lo]
    jeq #2, a, b
a:  ret ALLOW
b:  ret ERRNO(1)
";

/// A load of the word A already holds on every path is dropped (the second `ld`): after
/// `jeq #1` fails, A still holds `args[0].lo`.
#[test]
fn redundant_load() {
    check(
        RELOADS_ARG0,
        "
            ld [args[0].lo]
            jeq #1, a, next
            jeq #2, a, b
        a:  ret ALLOW
        b:  ret ERRNO(1)
        ",
        default_opts(),
    );
}

/// The self-check's budget is the caller's: with too few decision-diagram steps to prove the
/// smaller program above equal, the optimizer keeps the input and says why; it never returns
/// a candidate it could not prove. The note says which budget ran out as data a caller can act
/// on, in words that name no command-line flag (an embedder has none).
#[test]
fn a_self_check_out_of_budget_keeps_the_input() {
    let input = asm(RELOADS_ARG0);
    let opts = OptimizeOptions {
        self_check_budget: secopt::verify::Budget {
            max_bdd_steps: 2,
            ..secopt::optimize::SELF_CHECK_BUDGET
        },
        ..default_opts()
    };
    let out = optimize(&input, &opts).unwrap();
    assert_eq!(out.method, Method::Unchanged);
    assert_eq!(out.verification, Verification::Skipped);
    assert_eq!(out.program, input);
    assert!(
        out.notes.iter().any(|n| n.kind
            == NoteKind::NotProved(UnknownReason::BddSteps { limit: 2 })
            && n.text.contains("2 decision-diagram steps")),
        "{:?}",
        out.notes
    );
    for n in &out.notes {
        assert!(!n.text.contains("--"), "{n}");
    }
}

/// libseccomp checks a 64-bit argument one rule at a time, each rule loading and testing the
/// high half again. Lifting knows the high half is 0 after the first rule's test, so the
/// other rules' high-half tests fold away: the halves are split and the high one is shared.
/// The low-half values {0, 8} are the submasks of 8: one `jset` (the bits outside 8 set: not
/// one of them); 0xffffffff keeps its `jeq`.
#[test]
fn sixty_four_bit_rules_share_their_high_half_and_value_sets_become_masks() {
    check(
        "
            ld [args[0].hi]
            jeq #0, next, r2
            ld [args[0].lo]
            jeq #0, allow, r2
        r2: ld [args[0].hi]
            jeq #0, next, r3
            ld [args[0].lo]
            jeq #8, allow, r3
        r3: ld [args[0].hi]
            jeq #0, next, deny
            ld [args[0].lo]
            jeq #0xffffffff, allow, deny
        allow: ret ALLOW
        deny: ret ERRNO(1)
        ",
        "
            ld [args[0].hi]
            jeq #0, next, deny
            ld [args[0].lo]
            jset #0xfffffff7, next, allow
            jeq #0xffffffff, allow, deny
        allow: ret ALLOW
        deny: ret ERRNO(1)
        ",
        default_opts(),
    );
}

/// gVisor's futex example: five allowed operations, four of which are every submask of 0x81.
#[test]
fn futex_operations_become_one_jset_and_one_jeq() {
    check(
        "
            ld [args[1].lo]
            jeq #0, allow, next
            jeq #1, allow, next
            jeq #0x80, allow, next
            jeq #0x89, allow, next
            jeq #0x81, allow, deny
        allow: ret ALLOW
        deny: ret TRAP
        ",
        "
            ld [args[1].lo]
            jset #0xffffff7e, next, allow
            jeq #0x89, allow, deny
        allow: ret ALLOW
        deny: ret TRAP
        ",
        default_opts(),
    );
}

/// "Masked equal" as libseccomp and Firecracker lower it (`and`, then `jeq`) is one `jset`
/// when nothing reads the masked value afterwards.
#[test]
fn masked_equality_becomes_jset() {
    check(
        "
            ld [args[2].lo]
            and #4
            jeq #0, next, deny
            ld [args[3].lo]
            jeq #34, allow, deny
        allow: ret ALLOW
        deny: ret TRAP
        ",
        "
            ld [args[2].lo]
            jset #4, deny, next
            ld [args[3].lo]
            jeq #34, allow, deny
        allow: ret ALLOW
        deny: ret TRAP
        ",
        default_opts(),
    );
}

/// A test repeated on a path where its outcome is known is folded: on the taken side of
/// `jeq #1`, `args[0].lo == 1`, so the second `jeq #1` always goes to `ret ALLOW`; on the other
/// side `jgt #0` is still open.
#[test]
fn known_outcome_is_folded() {
    check(
        "
            ld [args[0].lo]
            jeq #1, a, b
        a:  ld [args[0].lo]
            jeq #1, allow, errno
        b:  jgt #0, errno, allow
        allow: ret ALLOW
        errno: ret ERRNO(1)
        ",
        // Layout: returns are placed behind the test that needs them, the false side's first
        // (so it ends up last): `jgt` gets ERRNO right behind it and ALLOW after that, which
        // `jeq #1` still reaches.
        "
            ld [args[0].lo]
            jeq #1, allow, next
            jgt #0, next, allow
            ret ERRNO(1)
        allow: ret ALLOW
        ",
        default_opts(),
    );
}

/// Identical tails are one node: both sides of `jeq #1` run the same check, so the test (and
/// the load feeding it) disappears.
#[test]
fn identical_tails_merge() {
    check(
        "
            ld [args[0].lo]
            jeq #1, p, q
        p:  ld [args[1].lo]
            jeq #7, allow1, deny1
        q:  ld [args[1].lo]
            jeq #7, allow2, deny2
        allow1: ret ALLOW
        deny1:  ret ERRNO(1)
        allow2: ret ALLOW
        deny2:  ret ERRNO(1)
        ",
        "
            ld [args[1].lo]
            jeq #7, next, e
            ret ALLOW
        e:  ret ERRNO(1)
        ",
        default_opts(),
    );
}

/// Constants are propagated through scratch memory and X: `jgt x` with X = 5 is `jgt #5`, and
/// then the constant load, the store, and the `ldx` are dead.
#[test]
fn constants_through_scratch_and_x() {
    check(
        "
            ld #5
            st M[0]
            ld [args[0].lo]
            ldx M[0]
            jgt x, big, small
        big:   ret ERRNO(1)
        small: ret ALLOW
        ",
        "
            ld [args[0].lo]
            jgt #5, next, s
            ret ERRNO(1)
        s:  ret ALLOW
        ",
        default_opts(),
    );
}

/// The lift: a libseccomp-style linear filter becomes ranges. With weights read (0) = 100 and
/// exit (60) = 1 and the no-cache model, the `nr` pieces are [0..3] → ALLOW (100), [4..59] →
/// ERRNO (0), {60} → ALLOW (1), [61..] → ERRNO (0). Splitting at 4 puts read at depth 1 (100);
/// the rest is `X s X`, one `jeq #60` (exit at depth 2: 2) — 102 in total, against 103 for the
/// best tree of splits alone (exit at depth 3). The arch check is one `jeq` (`X s X` again).
#[test]
fn lifted_dispatch_uses_ranges_and_exceptions() {
    let mut w = Weights::new();
    w.add_named(Arch::X86_64, "read", 100.0).unwrap();
    w.add_named(Arch::X86_64, "exit", 1.0).unwrap();
    let opts = OptimizeOptions {
        weights: Some(w),
        cost_model: CostModel::NoCache,
        report: true,
        ..OptimizeOptions::default()
    };
    let input = "
            ld [arch]
            jeq #AUDIT_ARCH_X86_64, next, kill
            ld [nr]
            jeq #0, allow
            jeq #1, allow
            jeq #2, allow
            jeq #3, allow
            jeq #60, allow
            ret ERRNO(1)
        allow: ret ALLOW
        kill:  ret KILL_PROCESS
        ";
    check(
        input,
        "
            ld [arch]
            jeq #AUDIT_ARCH_X86_64, L, next
            ret KILL_PROCESS
        L:  ld [nr]
            jge #4, next, allow
            jeq #60, allow, errno
        allow: ret ALLOW
        errno: ret ERRNO(1)
        ",
        opts.clone(),
    );
    // The report, by hand: without the cache read runs ld, jeq, ld, jge, ret = 5 and exit 6:
    // (100×5 + 6)/101; the input runs 5 for read and 9 for exit (four failed jeq first):
    // (100×5 + 9)/101. Both are cached on x86_64 (ALLOW from nr alone): 0 with the cache.
    let out = optimize(&asm(input), &opts).unwrap();
    let r = out.report.unwrap();
    assert_eq!((r.before.instructions, r.after.instructions), (11, 8));
    assert!((r.after.cost_without_cache - 506.0 / 101.0).abs() < 1e-9);
    assert!((r.before.cost_without_cache - 509.0 / 101.0).abs() < 1e-9);
    assert_eq!(
        (r.before.cost_with_cache, r.after.cost_with_cache),
        (0.0, 0.0)
    );
    // Worst case: nr in 4..=60 (or above) runs 7 (ld, jeq, ld, jge, jeq, ret) … the longest is 6
    // here; the input's longest is a number that fails all five jeq tests: 3 + 5 + 1 = 9.
    assert_eq!((r.before.worst_case_path, r.after.worst_case_path), (9, 6));
}

/// A heavy syscall inside a wide range gets its own `jeq` right after `ld [nr]`, ahead of the
/// search tree (which would need several tests to reach it).
#[test]
fn hot_syscall_is_tested_first() {
    // Allow 0..=9 one by one and 20, 30, …, 90; weight 1 each, but 50 weighs 10 000.
    let mut src = String::from("ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\n");
    let mut w = Weights::new();
    for nr in (0..10).chain((20..100).step_by(10)) {
        src.push_str(&format!("jeq #{nr}, allow\n"));
        w.add(0xc000_003e, nr, if nr == 50 { 10_000.0 } else { 1.0 })
            .unwrap();
    }
    src.push_str("ret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS\n");
    let p = asm(&src);
    let out = optimize(
        &p,
        &OptimizeOptions {
            weights: Some(w),
            cost_model: CostModel::NoCache,
            ..OptimizeOptions::default()
        },
    )
    .unwrap();
    assert_eq!(out.method, Method::Lifted);
    same_decisions(&p, &out.program);
    let ld_nr = out
        .program
        .insns
        .iter()
        .position(|i| *i == Insn::ld_abs(0))
        .unwrap();
    let first = out.program.insns[ld_nr + 1];
    assert_eq!(
        (first.code, first.k),
        (BPF_JMP | BPF_JEQ | BPF_K, 50),
        "\n{}",
        text(&out.program)
    );
}

/// With argument values in the weights, an argument check tests the frequent value first:
/// `ioctl` allowed for 18 requests (a chain that would otherwise become a balanced tree),
/// 1000 calls with the 17th request and one with the first. The first test after the load of
/// the request is `jeq` on the hot one, and its calls run fewer instructions than without the
/// values; every decision stays the same.
#[test]
fn hot_argument_value_is_tested_first() {
    let requests: Vec<u32> = (0..18).map(|i| 0xae00 + 7 * i).collect();
    let hot = requests[16];
    let mut src = String::from(
        "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njeq #16, next, deny\nld [args[1].lo]\n",
    );
    for r in &requests {
        src.push_str(&format!("jeq #{r}, allow\n"));
    }
    src.push_str("deny: ret ERRNO(1)\nallow: ret ALLOW\nkill: ret KILL_PROCESS\n");
    let p = asm(&src);
    let with_values = |hot_args: [Option<u64>; 6]| {
        let mut w = Weights::new();
        w.add_call(0xc000_003e, 16, 1000.0, hot_args).unwrap();
        w.add_call(
            0xc000_003e,
            16,
            1.0,
            [None, Some(u64::from(requests[0])), None, None, None, None],
        )
        .unwrap();
        let out = optimize(
            &p,
            &OptimizeOptions {
                weights: Some(w),
                ..OptimizeOptions::default()
            },
        )
        .unwrap();
        assert_eq!(out.verification, Verification::Equal, "{:?}", out.notes);
        same_decisions(&p, &out.program);
        out.program
    };
    let hot_args = [None, Some(u64::from(hot)), None, None, None, None];
    let weighted = with_values(hot_args);
    let load = weighted
        .insns
        .iter()
        .position(|i| *i == Insn::ld_abs(24))
        .unwrap();
    let first = weighted.insns[load + 1];
    assert_eq!(
        (first.code, first.k),
        (BPF_JMP | BPF_JEQ | BPF_K, hot),
        "\n{}",
        text(&weighted)
    );
    // The hot calls without their request (only the rare call keeps its value): the hot
    // request is not favoured, and its path is longer.
    let unweighted = with_values([None; 6]);
    let path =
        |prog: &Program| secopt::optimize::cost::evaluate(prog, 0xc000_003e, 16, &hot_args).max;
    assert!(
        path(&weighted) < path(&unweighted),
        "{} vs {}\n{}\n{}",
        path(&weighted),
        path(&unweighted),
        text(&weighted),
        text(&unweighted)
    );
}

/// runc's x32 test (`jset #0x40000000`) splits the number space in four ranges; the lifted
/// program dispatches with comparisons only and is exact on every edge of those ranges. Here
/// it is 11 instructions with a worst path of 7 against the input's 9 and 6, so the
/// optimizer keeps the input's layout: it dominates (no larger, no costlier, no longer).
#[test]
fn x32_bit_test_becomes_ranges() {
    use secopt::optimize::{emit, lift};
    let p = asm("
            ld [arch]
            jeq #AUDIT_ARCH_X86_64, next, kill
            ld [nr]
            jset #0x40000000, enosys, next
            jeq #0, allow, next
            ret ERRNO(1)
        enosys: ret ERRNO(38)
        allow:  ret ALLOW
        kill:   ret KILL_PROCESS
        ");
    let weights = Weights::default_for(&[Arch::X86_64, Arch::X32]);
    let mut lifted = lift::lift(&p, &lift::LiftConfig::FULL).unwrap();
    let opts = emit::EmitOptions {
        weights: &weights,
        model: CostModel::AllowCache,
        kernel: OptimizeOptions::default().kernel,
        weights_are_default: true,
        max_path: None,
        tuning: secopt::optimize::dispatch::Tuning::BALANCED,
        exact_dominance: None,
        value_fit: None,
        tables: None,
    };
    let ranges = emit::emit(&mut lifted, &opts).unwrap();
    assert!(
        !ranges
            .insns
            .iter()
            .any(|i| i.code == BPF_JMP | BPF_JSET | BPF_K),
        "{}",
        text(&ranges)
    );
    let out = optimize(&p, &default_opts()).unwrap();
    assert_eq!(out.verification, Verification::Equal);
    assert!(out.program.len() <= p.len(), "{}", text(&out.program));
    for nr in [
        0u32,
        1,
        0x3fff_ffff,
        0x4000_0000,
        0x7fff_ffff,
        0x8000_0000,
        0xbfff_ffff,
        0xc000_0000,
        u32::MAX,
    ] {
        let d = SeccompData::new(0xc000_003e, nr as i32, [0; 6]);
        assert_eq!(interp::eval(&p, &d), interp::eval(&ranges, &d), "{nr:#x}");
        assert_eq!(
            interp::eval(&p, &d),
            interp::eval(&out.program, &d),
            "{nr:#x}"
        );
    }
}

/// Re-layout shrinks offsets and adds trampolines only where a conditional jump cannot reach:
/// 300 syscalls with 300 *different* argument checks (bodies that cannot be shared) put the
/// bodies far from the dispatch; the output is valid and exact.
#[test]
fn far_bodies_need_few_trampolines() {
    // The input reaches its bodies through `ja` (a conditional jump cannot reach that far).
    let mut src = String::from("ld [nr]\n");
    for nr in 0..300 {
        src.push_str(&format!("jeq #{nr}, next, n{nr}\nja b{nr}\nn{nr}:\n"));
    }
    src.push_str("ret ALLOW\n");
    for nr in 0..300 {
        src.push_str(&format!(
            "b{nr}: ld [args[0].lo]\njeq #{nr}, next, d{nr}\nret ALLOW\nd{nr}: ret ERRNO(1)\n"
        ));
    }
    let p = asm(&src);
    let out = optimize(&p, &default_opts()).unwrap();
    assert_eq!(out.method, Method::Lifted);
    assert_eq!(out.verification, Verification::Equal);
    let jas = out.program.insns.iter().filter(|i| i.is_ja()).count();
    // 300 bodies of 2 instructions behind a tree of ~300 tests: most tests are more than 255
    // away from their body; far fewer trampolines than bodies are needed because bodies are
    // placed next to the part of the tree that jumps to them.
    assert!(
        out.program.len() < p.len(),
        "{} vs {}",
        out.program.len(),
        p.len()
    );
    assert!(jas <= 8, "{jas} ja instructions");
    same_decisions(&p, &out.program);
}

/// A caller showing progress hears the lifting, each layout as it starts, with the options it
/// is laid out under, the passes on the input's own layout when they run, and each proof, the
/// last one of the program handed back; without the self-check no proof at all.
#[test]
fn progress_hears_the_layouts_and_the_proofs() {
    use secopt::optimize::{Favor, Progress, Stage};
    use std::sync::{Arc, Mutex};
    let input = asm("
            ld [arch]
            jeq #0xc000003e, x86_64, kill
        x86_64:
            ld [nr]
            jeq #0, allow, n1
        n1: jeq #1, allow, n2
        n2: jeq #3, allow, n3
        n3: jeq #60, allow, n4
        n4: jeq #231, allow, deny
        deny: ret ERRNO(1)
        kill: ret KILL_PROCESS
        allow: ret ALLOW
        ");
    let heard = |opts: OptimizeOptions| {
        let stages = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stages);
        let opts = OptimizeOptions {
            progress: Some(Progress(Arc::new(move |s: &Stage| {
                sink.lock().unwrap().push(*s)
            }))),
            ..opts
        };
        let out = optimize(&input, &opts).unwrap();
        let stages = stages.lock().unwrap().clone();
        (out, stages)
    };

    let (out, stages) = heard(default_opts());
    assert_eq!(out.method, Method::Lifted);
    assert_eq!(
        stages,
        vec![
            Stage::Lift,
            Stage::Layout {
                favor: Favor::Balanced,
                within: None,
                values_per_chain: None
            },
            Stage::Proof {
                method: Method::Lifted
            }
        ]
    );
    same_decisions(&input, &out.program);

    let (_, stages) = heard(OptimizeOptions {
        verify: false,
        ..default_opts()
    });
    assert!(
        stages
            .iter()
            .all(|s| matches!(s, Stage::Lift | Stage::Layout { .. })),
        "{stages:?}"
    );

    let (out, stages) = heard(OptimizeOptions {
        favor: Favor::Size,
        max_path: Some(20),
        ..default_opts()
    });
    assert_eq!(
        stages.get(1),
        Some(&Stage::Layout {
            favor: Favor::Size,
            within: Some(20),
            values_per_chain: None
        }),
        "{stages:?}"
    );
    // Favouring size, the input's own layout after the bytecode passes is always a rival.
    assert!(
        stages.contains(&Stage::Passes {
            method: Method::BytecodePasses
        }),
        "{stages:?}"
    );
    assert_eq!(
        stages.last(),
        Some(&Stage::Proof { method: out.method }),
        "{stages:?}"
    );
}

/// Only the lifted program's layout depends on `--favor`: when lifting fails, the layout asked
/// for is not tried again favouring size (the passes on the input's own layout would run
/// again to the same sizes). Twenty `jset` tests of an argument's bits before a chain of
/// 2 100 argument values (4 223 instructions) make the lifting give up (2^20 contexts, past
/// its bound of a million); the passes leave it over the kernel's limit.
#[test]
fn a_lifting_that_failed_is_not_tried_again_favouring_size() {
    use secopt::optimize::{Favor, OptimizeError, Progress, Stage};
    use std::sync::{Arc, Mutex};
    let mut insns = vec![Insn::ld_abs(24)];
    insns.extend((0..20).map(|i| Insn::jump(BPF_JMP | BPF_JSET | BPF_K, 1 << i, 0, 0)));
    insns.push(Insn::ld_abs(16));
    for v in 0..2100 {
        insns.push(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 1));
        insns.push(Insn::ret(0x0005_0000 | (v + 1)));
    }
    insns.push(Insn::ret(0x7fff_0000));
    let input = Program::new(insns);
    let run = |favor| {
        let stages = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stages);
        let opts = OptimizeOptions {
            favor,
            progress: Some(Progress(Arc::new(move |s: &Stage| {
                sink.lock().unwrap().push(*s)
            }))),
            ..default_opts()
        };
        let result = optimize(&input, &opts);
        let stages = stages.lock().unwrap().clone();
        (result, stages)
    };
    let (balanced, stages) = run(Favor::Balanced);
    match &balanced {
        Err(OptimizeError::TooLarge {
            input: 4223,
            reached: Some(n),
        }) => assert!(*n > 4096, "{n}"),
        other => panic!("{other:?}"),
    }
    // Lifted once, no layout (it failed), the passes once each.
    assert_eq!(
        stages,
        [
            Stage::Lift,
            Stage::Passes {
                method: Method::BytecodePasses
            },
            Stage::Passes {
                method: Method::StructuralPasses
            }
        ]
    );
    // What favouring size would have found: the same.
    assert_eq!(run(Favor::Size).0.unwrap_err(), balanced.unwrap_err());
}
