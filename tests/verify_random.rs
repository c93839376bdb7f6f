//! The verifier on random valid programs from `bpf::testing` (ALU with K and X, MUL/DIV/shifts
//! by X, NEG, scratch memory, TAX/TXA, `RET A`), checked against the interpreter:
//! - independent random pairs and single random mutations: every `different` counterexample
//!   must reproduce; every `equal` is run on random and boundary inputs and must agree;
//! - a program and a rewrite of it that is equal by construction (no-op instructions inserted
//!   with the jumps fixed up, `RET K` turned into `LD #K; RET A`, double negation): the
//!   verdict must be `equal` (or `unknown` with a reason, counted and bounded).

use secopt::bpf::insn::*;
use secopt::bpf::testing::{random_data, random_program, GenConfig, Rng};
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Insn, Program, SeccompData};
use secopt::verify::{equivalent, Budget, Verdict, VerifyOptions};
use std::time::{Duration, Instant};

const TOKENS: [u32; 3] = [0xc000_003e, 0x4000_0003, 0xc000_00b7];

fn options() -> VerifyOptions {
    VerifyOptions {
        budget: Budget {
            max_bdd_nodes: 1 << 18,
            time_limit: Some(Duration::from_secs(5)),
            ..Budget::default()
        },
        ..VerifyOptions::default()
    }
}

/// Inputs mixing the programs' own constants (±1), boundary values and random words.
fn inputs(rng: &mut Rng, a: &Program, b: &Program, count: usize) -> Vec<SeccompData> {
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let prog = if i % 2 == 0 { a } else { b };
        let mut d = random_data(rng, prog, &TOKENS);
        if i % 5 == 0 {
            // Boundary values everywhere.
            let pick = |rng: &mut Rng| rng.pick(&[0u64, 1, 0xffff_ffff, 0x1_0000_0000, u64::MAX]);
            for arg in &mut d.args {
                *arg = pick(rng);
            }
        }
        out.push(d);
    }
    out
}

fn show(p: &Program) -> String {
    secopt::bpf::disasm::disassemble(p, &Default::default())
}

#[derive(Debug, Default)]
struct Tally {
    equal: usize,
    different: usize,
    unknown: usize,
}

/// Verifies `a` against `b` and checks the verdict with the interpreter.
fn check(rng: &mut Rng, a: &Program, b: &Program, tally: &mut Tally) -> Verdict {
    let v = equivalent(a, b, &options()).unwrap_or_else(|e| panic!("{e}\n{a:?}\n{b:?}"));
    match &v {
        Verdict::Different(c) => {
            let (ra, rb) = (
                interp::eval(a, &c.data).unwrap(),
                interp::eval(b, &c.data).unwrap(),
            );
            assert_eq!((ra, rb), (c.a, c.b), "{a:?}\n{b:?}\n{c:?}");
            assert_ne!(ra, rb);
            tally.different += 1;
        }
        Verdict::Equal => {
            for d in inputs(rng, a, b, 400) {
                assert_eq!(
                    interp::eval(a, &d).unwrap(),
                    interp::eval(b, &d).unwrap(),
                    "wrong `equal` on {d:?}\n{a:?}\n{b:?}"
                );
            }
            tally.equal += 1;
        }
        Verdict::Unknown { reason } => {
            // A reason is part of the verdict; it must name a budget.
            assert!(!reason.to_string().is_empty());
            if std::env::var_os("VERIFY_SHOW_UNKNOWN").is_some() {
                eprintln!("unknown ({reason}):\n{}\n{}", show(a), show(b));
            }
            tally.unknown += 1;
        }
    }
    // The verdict does not depend on the order of the two programs.
    let back = equivalent(b, a, &options()).unwrap();
    match (&v, &back) {
        (Verdict::Equal, w) | (w, Verdict::Equal) => {
            assert!(
                matches!(w, Verdict::Equal | Verdict::Unknown { .. }),
                "asymmetric: {v:?} / {back:?}\n{a:?}\n{b:?}"
            );
        }
        _ => {}
    }
    v
}

#[test]
fn random_pairs_and_mutants() {
    let mut rng = Rng::new(42);
    let cfg = GenConfig::default();
    let mut pairs = Tally::default();
    let mut mutants = Tally::default();
    let start = Instant::now();
    for round in 0..1200 {
        let a = random_program(&mut rng, &cfg);
        if round % 2 == 0 {
            let b = random_program(&mut rng, &cfg);
            check(&mut rng, &a, &b, &mut pairs);
        } else if let Some(b) = mutate(&mut rng, &a) {
            check(&mut rng, &a, &b, &mut mutants);
        }
    }
    eprintln!(
        "pairs {pairs:?}, mutants {mutants:?} in {:?}",
        start.elapsed()
    );
    // Many random mutations hit dead code; both verdicts must still be common.
    assert!(pairs.equal > 10 && pairs.different > 400, "{pairs:?}");
    assert!(mutants.equal > 300 && mutants.different > 50, "{mutants:?}");
    // Products and quotients of input words can exceed the budget: rare.
    assert!(
        pairs.unknown + mutants.unknown < 60,
        "{pairs:?} {mutants:?}"
    );
}

/// `diff` lists every pair of return values the two filters give on some input: each
/// input on which the interpreter finds them differ must have its pair of values among the
/// changes listed (a side that is `RET A` of a value too varied to list counts as any value).
#[test]
fn diff_lists_every_pair_of_values_the_interpreter_finds() {
    use secopt::verify::{diff, DiffOutcome, Ret};
    let mut rng = Rng::new(0xd1ff);
    let (mut checked, mut inputs_seen) = (0, 0);
    for round in 0..600 {
        let cfg = if round % 2 == 0 {
            GenConfig::cache_friendly()
        } else {
            GenConfig::default()
        };
        let a = random_program(&mut rng, &cfg);
        let Some(b) = (if round % 3 == 0 {
            Some(random_program(&mut rng, &cfg))
        } else {
            mutate(&mut rng, &a)
        }) else {
            continue;
        };
        let DiffOutcome::Different(d) = diff(&a, &b, &options()).unwrap() else {
            continue;
        };
        if d.truncated.is_some() {
            continue;
        }
        let listed: Vec<(Ret, Ret)> = d
            .arches
            .iter()
            .flat_map(|g| &g.entries)
            .flat_map(|e| &e.changes)
            .map(|c| (c.a, c.b))
            .collect();
        let covers = |side: Ret, v| side == Ret::Computed || side == Ret::Value(v);
        for input in inputs(&mut rng, &a, &b, 200) {
            let (va, vb) = (
                interp::eval(&a, &input).unwrap(),
                interp::eval(&b, &input).unwrap(),
            );
            if va != vb {
                inputs_seen += 1;
                assert!(
                    listed
                        .iter()
                        .any(|&(ra, rb)| covers(ra, va) && covers(rb, vb)),
                    "{va} -> {vb} on {input:?} is not listed in {listed:?}\n{}\n{}",
                    show(&a),
                    show(&b)
                );
            }
        }
        checked += 1;
    }
    assert!(
        checked > 200 && inputs_seen > 5000,
        "{checked} {inputs_seen}"
    );
}

/// Filters that return many values (an errno per syscall, as Chromium's and systemd's
/// give): `diff` lists, for every syscall number, exactly the change the interpreter sees
/// on it, and nothing where the two agree.
#[test]
fn diff_of_many_return_values_lists_each_syscall_s_change() {
    use secopt::verify::{diff, DiffOutcome, Ret};
    let mut rng = Rng::new(0xe770);
    let chain = |picks: &[(u32, u32)]| {
        let mut insns = vec![Insn::ld_abs(0)];
        for &(nr, errno) in picks {
            insns.push(Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
            insns.push(Insn::ret(0x0005_0000 | errno));
        }
        insns.push(Insn::ret(0x7fff_0000));
        Program::new(insns)
    };
    for _ in 0..40 {
        let a_picks: Vec<(u32, u32)> = (0..60)
            .map(|_| (rng.below(120) as u32, 1 + rng.below(40) as u32))
            .collect();
        let b_picks: Vec<(u32, u32)> = a_picks
            .iter()
            .map(|&(nr, e)| match rng.below(6) {
                0 => (nr, 1 + rng.below(40) as u32),
                1 => (rng.below(120) as u32, e),
                _ => (nr, e),
            })
            .collect();
        let (a, b) = (chain(&a_picks), chain(&b_picks));
        let DiffOutcome::Different(d) = diff(&a, &b, &options()).unwrap() else {
            continue;
        };
        assert!(d.truncated.is_none());
        // Every arch token decides alike here (no arch test): take the first group's entries.
        let entries = &d.arches[0].entries;
        for nr in 0..128u32 {
            let input = SeccompData::new(0xc000_003e, nr as i32, [0; 6]);
            let (va, vb) = (
                interp::eval(&a, &input).unwrap(),
                interp::eval(&b, &input).unwrap(),
            );
            let listed: Vec<(Ret, Ret)> = entries
                .iter()
                .filter(|e| e.first <= nr && nr <= e.last)
                .flat_map(|e| e.changes.iter().map(|c| (c.a, c.b)))
                .collect();
            if va == vb {
                assert!(
                    listed.is_empty(),
                    "nr {nr}: {listed:?}\n{}\n{}",
                    show(&a),
                    show(&b)
                );
            } else {
                assert_eq!(
                    listed,
                    [(Ret::Value(va), Ret::Value(vb))],
                    "nr {nr}\n{}\n{}",
                    show(&a),
                    show(&b)
                );
            }
        }
    }
}

#[test]
fn rewrites_that_keep_the_meaning_verify_equal() {
    let mut rng = Rng::new(7);
    let cfg = GenConfig::default();
    let mut tally = Tally::default();
    let start = Instant::now();
    for _ in 0..1500 {
        let a = random_program(&mut rng, &cfg);
        let Some(b) = rewrite(&mut rng, &a) else {
            continue;
        };
        match check(&mut rng, &a, &b, &mut tally) {
            Verdict::Different(c) => panic!("a rewrite that keeps the meaning differs: {c:?}"),
            Verdict::Equal | Verdict::Unknown { .. } => {}
        }
    }
    eprintln!("rewrites {tally:?} in {:?}", start.elapsed());
    assert_eq!(tally.different, 0);
    assert!(tally.equal > 1300, "{tally:?}");
    // Quotients by large constants and products of words can exceed the budget: rare.
    assert!(tally.unknown < 40, "{tally:?}");
}

/// Inserts `new` before index `at`; jumps that went past `at` keep their targets, jumps to
/// `at` now land on the first inserted instruction. `None` when an 8-bit offset would
/// overflow or the result is invalid.
fn insert(prog: &Program, at: usize, new: &[Insn]) -> Option<Program> {
    let k = new.len();
    let mut insns = prog.insns.clone();
    for (j, x) in insns.iter_mut().enumerate().take(at) {
        let fix8 = |off: u8| -> Option<u8> {
            if j + 1 + off as usize > at {
                u8::try_from(off as usize + k).ok()
            } else {
                Some(off)
            }
        };
        if x.is_conditional_jump() {
            x.jt = fix8(x.jt)?;
            x.jf = fix8(x.jf)?;
        } else if x.is_ja() && j + 1 + x.k as usize > at {
            x.k += k as u32;
        }
    }
    insns.splice(at..at, new.iter().copied());
    let p = Program::new(insns);
    validate(&p).ok().map(|_| p)
}

/// A rewrite of `prog` with the same meaning.
fn rewrite(rng: &mut Rng, prog: &Program) -> Option<Program> {
    let n = prog.len();
    let at = rng.below(n);
    let no_ops = [
        Insn::ja(0),
        Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 0),
        Insn::stmt(BPF_ALU | BPF_OR | BPF_K, 0),
        Insn::stmt(BPF_ALU | BPF_XOR | BPF_K, 0),
        Insn::stmt(BPF_ALU | BPF_LSH | BPF_K, 0),
        Insn::stmt(BPF_ALU | BPF_MUL | BPF_K, 1),
        Insn::stmt(BPF_ALU | BPF_DIV | BPF_K, 1),
        Insn::stmt(BPF_ALU | BPF_AND | BPF_K, u32::MAX),
        // Never taken: A & 0 is 0.
        Insn::jump(BPF_JMP | BPF_JSET | BPF_K, 0, 0, 0),
    ];
    match rng.below(4) {
        0 | 1 => insert(prog, at, &[rng.pick(&no_ops)]),
        2 => insert(
            prog,
            at,
            &[
                Insn::stmt(BPF_ALU | BPF_NEG, 0),
                Insn::stmt(BPF_ALU | BPF_NEG, 0),
            ],
        ),
        _ => {
            // RET k  ->  LD #k; RET A.
            let rets: Vec<usize> = (0..n)
                .filter(|&i| prog.insns[i].code == BPF_RET | BPF_K)
                .collect();
            if rets.is_empty() {
                return None;
            }
            let i = rng.pick(&rets);
            let mut p = insert(prog, i, &[Insn::stmt(BPF_LD | BPF_IMM, prog.insns[i].k)])?;
            // Everything that reached the RET now reaches the load; the RET becomes RET A.
            p.insns[i + 1] = Insn::stmt(BPF_RET | BPF_A, 0);
            validate(&p).ok().map(|_| p)
        }
    }
}

/// One random single change: a constant, a jump target, an operation.
fn mutate(rng: &mut Rng, prog: &Program) -> Option<Program> {
    for _ in 0..20 {
        let mut p = prog.clone();
        let i = rng.below(p.len());
        let x = &mut p.insns[i];
        match rng.below(3) {
            0 => {
                let flip = 1 << rng.below(32);
                x.k = rng.pick(&[x.k.wrapping_add(1), x.k.wrapping_sub(1), x.k ^ flip]);
            }
            1 if x.is_conditional_jump() => std::mem::swap(&mut x.jt, &mut x.jf),
            _ if class(x.code) == BPF_ALU && x.code != BPF_ALU | BPF_NEG => {
                let ops = [BPF_ADD, BPF_SUB, BPF_MUL, BPF_OR, BPF_AND, BPF_XOR];
                x.code = BPF_ALU | rng.pick(&ops) | src(x.code);
            }
            _ => continue,
        }
        if p != *prog && validate(&p).is_ok() {
            return Some(p);
        }
    }
    None
}
