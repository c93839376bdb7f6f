//! Random argument checks of the shapes compilers emit — rule-by-rule `jeq` chains on one
//! word, 64-bit checks split in halves, "masked equal" as `and` + `jeq`, reloads of the same
//! word — through the optimizer, with and without argument values in the weights. The output
//! must be valid and decide exactly like the input (the interpreter, on every constant ±1 of
//! the input, on the values of every mask, and on random words); the optimizer's own proof is
//! off here so that the interpreter is the only judge.

use secopt::bpf::asm::assemble;
use secopt::bpf::insn::*;
use secopt::bpf::testing::Rng;
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Program, SeccompData};
use secopt::optimize::{optimize, OptimizeOptions, Weights};

const X86_64: u32 = 0xc000_003e;

/// A value from a small domain (so that sets form cubes and repeat), or any word.
fn value(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => rng.below(16) as u32,
        1 => 0x80 | rng.below(16) as u32,
        2 => (rng.below(4) as u32) << 16 | rng.below(8) as u32,
        _ => rng.next_u32(),
    }
}

/// A filter for x86_64 where syscalls 1..=3 each run a random argument check, and the values
/// it compares with.
fn random_filter(rng: &mut Rng) -> (String, Vec<u32>) {
    let mut src = String::from(
        "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njeq #1, s1\njeq #2, s2\njeq #3, s3\nret ALLOW\n",
    );
    let mut consts = Vec::new();
    let targets = ["allow", "errno", "trap", "next"];
    for s in 1..=3 {
        src.push_str(&format!("s{s}:\n"));
        let arg = rng.below(6);
        let rules = 1 + rng.below(9);
        for r in 0..rules {
            let half = if rng.below(4) == 0 { "hi" } else { "lo" };
            let value = value(rng);
            consts.push(value);
            let target = targets[rng.below(targets.len())];
            let next = format!("s{s}r{}", r + 1);
            match rng.below(6) {
                // A set of values with one target, often all of a cube {base | s : s ⊆ free}
                // (sometimes one short of it, which must not become a mask).
                5 => {
                    let base = [0, 0x80, 0x1_0000, 0x40][rng.below(4)];
                    let free = [0x3, 0x5, 0x101, 0x7, 0x1_0008][rng.below(5)] & !base;
                    let mut values: Vec<u32> = (0..=free)
                        .filter(|s| s & !free == 0)
                        .map(|s| base | s)
                        .collect();
                    if rng.below(3) == 0 {
                        values.remove(rng.below(values.len()));
                    }
                    let t = if target == "next" { "allow" } else { target };
                    src.push_str(&format!("ld [args[{arg}].{half}]\n"));
                    for v in values {
                        consts.push(v);
                        src.push_str(&format!("jeq #{v}, {t}\n"));
                    }
                    src.push_str(&format!("ja {next}\n"));
                }
                // libseccomp's 64-bit equality: high half, then low half.
                0 => {
                    src.push_str(&format!(
                        "ld [args[{arg}].hi]\njeq #0, next, {next}\nld [args[{arg}].lo]\njeq #{value}, {t}, {next}\n",
                        t = if target == "next" { "allow" } else { target }
                    ));
                }
                // Masked equality.
                1 => {
                    let mask = value | rng.below(256) as u32;
                    consts.push(mask);
                    src.push_str(&format!(
                        "ld [args[{arg}].{half}]\nand #{mask}\njeq #{}, {t}, {next}\n",
                        if rng.below(2) == 0 { 0 } else { value & mask },
                        t = if target == "next" { "errno" } else { target }
                    ));
                }
                // A plain test, reloading the word each time (as rule-by-rule lowering does).
                _ => {
                    let t = if target == "next" {
                        next.as_str()
                    } else {
                        target
                    };
                    src.push_str(&format!(
                        "ld [args[{arg}].{half}]\njeq #{value}, {t}, {next}\n"
                    ));
                }
            }
            src.push_str(&format!("{next}:\n"));
        }
        src.push_str(&format!(
            "ret {}\n",
            ["ERRNO(1)", "ALLOW", "TRAP"][rng.below(3)]
        ));
    }
    src.push_str("allow: ret ALLOW\nerrno: ret ERRNO(1)\ntrap: ret TRAP\nkill: ret KILL_PROCESS\n");
    (src, consts)
}

fn args_with(rng: &mut Rng, consts: &[u32]) -> [u64; 6] {
    let mut args = [0u64; 6];
    for a in &mut args {
        let lo = match rng.below(3) {
            0 => consts[rng.below(consts.len())],
            1 => consts[rng.below(consts.len())].wrapping_add(1),
            _ => value(rng),
        };
        let hi = if rng.below(5) == 0 { value(rng) } else { 0 };
        *a = u64::from(hi) << 32 | u64::from(lo);
    }
    args
}

#[test]
fn argument_checks_keep_their_decisions_with_and_without_argument_values() {
    let mut rng = Rng::new(2026);
    // How many outputs use a `jset` (masks, masked equality): the generator must reach them.
    let mut with_jset = 0;
    for round in 0..400 {
        let (src, consts) = random_filter(&mut rng);
        let prog: Program = assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        validate(&prog).expect("valid input");
        // Weights: none, counts only, or counts with argument values (hot values included).
        let weights = match round % 3 {
            0 => None,
            1 => {
                let mut w = Weights::new();
                for nr in 1..=3 {
                    w.add(X86_64, nr, 10.0).unwrap();
                }
                Some(w)
            }
            _ => {
                let mut w = Weights::new();
                for _ in 0..12 {
                    let nr = 1 + rng.below(3) as u32;
                    let args =
                        args_with(&mut rng, &consts).map(|a| (rng.below(4) != 0).then_some(a));
                    w.add_call(X86_64, nr, (1 + rng.below(1000)) as f64, args)
                        .unwrap();
                }
                Some(w)
            }
        };
        let out = optimize(
            &prog,
            &OptimizeOptions {
                weights,
                verify: false,
                report: false,
                ..OptimizeOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("round {round}: {e}\n{src}"));
        validate(&out.program).unwrap_or_else(|e| panic!("round {round}: {e}\n{src}"));
        if out
            .program
            .insns
            .iter()
            .any(|i| i.code == BPF_JMP | BPF_JSET | BPF_K)
        {
            with_jset += 1;
        }
        for nr in 0..=4 {
            for _ in 0..60 {
                let d = SeccompData::new(X86_64, nr, args_with(&mut rng, &consts));
                assert_eq!(
                    interp::eval(&prog, &d).unwrap(),
                    interp::eval(&out.program, &d).unwrap(),
                    "round {round}: {d:?}\n{src}\nout {:?}",
                    out.program
                );
            }
        }
    }
    eprintln!("{with_jset} of 400 outputs test with jset");
    assert!(with_jset > 100, "{with_jset}");
}

/// Firecracker's `mmap` rule shape (one rule `prot == 3 && flags == 17`, then `prot` without
/// PROT_EXEC and `flags` in a set), with the workload's hot call `prot = 3, flags = 0x22`. That
/// call's decision reads both words, so no filter runs fewer than 9 instructions for it: `ld
/// [arch]`, its test, `ld [nr]`, one test of `nr`, a load and a test for each of the two
/// words, and the return. The input runs 13. With the call's argument values in the weights
/// the output reaches the bound, and still decides everything as the input does.
#[test]
fn the_hot_calls_argument_values_get_the_shortest_path_their_decision_allows() {
    let src = "ld [arch]\njeq #AUDIT_ARCH_X86_64, next, kill\nld [nr]\njeq #9, next, allow\n\
               ld [args[2].lo]\njeq #3, next, l1\nld [args[3].lo]\njeq #17, allow, next\n\
               l1: ld [args[2].lo]\njset #4, trap, next\nld [args[3].lo]\njeq #34, allow, next\n\
               jeq #0x8001, allow, next\njeq #50, allow, trap\n\
               allow: ret ALLOW\ntrap: ret TRAP\nkill: ret KILL_PROCESS\n";
    let prog = assemble(src).unwrap();
    let hot = |prot: u64, flags: u64| [None, None, Some(prot), Some(flags), None, None];
    let steps = |p: &Program, prot: u64, flags: u64| {
        let d = SeccompData::new(X86_64, 9, [0, 0, prot, flags, 0, 0]);
        interp::trace(p, &d).unwrap()
    };
    let run = |weights: Weights| {
        optimize(
            &prog,
            &OptimizeOptions {
                weights: Some(weights),
                ..OptimizeOptions::default()
            },
        )
        .unwrap()
    };
    assert_eq!(steps(&prog, 3, 0x22).steps, 13);
    // Counts only: the body keeps the rules' order (the PROT_EXEC test is skipped once
    // `prot == 3` is known, but `flags == 17` is still tested first): more than the bound.
    let mut counts = Weights::new();
    counts.add(X86_64, 9, 100.0).unwrap();
    let plain = run(counts);
    assert!(steps(&plain.program, 3, 0x22).steps > 9);
    // The same calls with their argument values.
    let mut sampled = Weights::new();
    sampled.add_call(X86_64, 9, 100.0, hot(3, 0x22)).unwrap();
    let out = run(sampled);
    assert_eq!(out.verification, secopt::optimize::Verification::Equal);
    let t = steps(&out.program, 3, 0x22);
    assert_eq!((t.steps, t.ret), (9, secopt::bpf::RetVal::ALLOW));
    // A hot call the rules trap (PROT_EXEC) gets its own shortcut: one word read.
    let mut trapped = Weights::new();
    trapped.add_call(X86_64, 9, 100.0, hot(7, 0x22)).unwrap();
    let t = steps(&run(trapped).program, 7, 0x22);
    assert_eq!(
        (t.steps, t.ret),
        (
            7,
            secopt::bpf::RetVal(secopt::bpf::action::SECCOMP_RET_TRAP)
        )
    );
    // Every combination of the rules' constants, their neighbours and high halves decides as
    // the input does (the interpreter judges, not the optimizer's proof).
    let words = [
        0u64,
        1,
        2,
        3,
        4,
        5,
        7,
        16,
        17,
        18,
        33,
        34,
        35,
        49,
        50,
        0x8001,
        0xffff_ffff,
    ];
    for nr in [8, 9, 10] {
        for &prot in &words {
            for &flags in &words {
                for hi in [0u64, 1 << 32] {
                    let d = SeccompData::new(X86_64, nr, [0, 0, prot | hi, flags, 0, 0]);
                    assert_eq!(
                        interp::eval(&prog, &d).unwrap(),
                        interp::eval(&out.program, &d).unwrap(),
                        "{d:x?}"
                    );
                }
            }
        }
    }
}
