//! Random valid programs (ALU, X, scratch memory, `ret a`, jumps everywhere) through the
//! optimizer without its own verifier: the output must be valid and decide exactly like the
//! input on random inputs, on inputs built from the program's constants, and on every `nr`
//! near those constants; cache-friendly programs must keep every cacheable syscall.

use secopt::arch::Arch;
use secopt::bpf::cache::{CacheBitmap, KernelCache};
use secopt::bpf::insn::*;
use secopt::bpf::testing::{random_data, random_program, GenConfig, Rng};
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Program, SeccompData};
use secopt::optimize::{optimize, Method, OptimizeOptions};

const TOKENS: [u32; 3] = [0xc000_003e, 0x4000_0003, 0xc000_00b7];

fn options() -> OptimizeOptions {
    OptimizeOptions {
        verify: false,
        report: false,
        ..OptimizeOptions::default()
    }
}

/// Inputs that drive `prog` down many paths: random ones, and for every constant the program
/// uses (±1), `nr` and `arch` set to it with random other words.
fn inputs(rng: &mut Rng, prog: &Program) -> Vec<SeccompData> {
    let mut out: Vec<SeccompData> = (0..300).map(|_| random_data(rng, prog, &TOKENS)).collect();
    let consts: Vec<u32> = prog
        .insns
        .iter()
        .filter(|i| i.is_conditional_jump() || class(i.code) == BPF_ALU)
        .map(|i| i.k)
        .chain([0, 1, u32::MAX, 0x4000_0000])
        .collect();
    for &c in &consts {
        for v in [c.wrapping_sub(1), c, c.wrapping_add(1)] {
            let mut d = random_data(rng, prog, &TOKENS);
            d.nr = v as i32;
            out.push(d);
            let mut d = random_data(rng, prog, &TOKENS);
            d.arch = v;
            out.push(d);
            let mut d = random_data(rng, prog, &TOKENS);
            d.nr = v as i32;
            d.arch = TOKENS[rng.below(3)];
            out.push(d);
        }
    }
    out
}

fn check(seed: u64, cfg: &GenConfig, rounds: usize) -> (usize, usize, usize) {
    let mut rng = Rng::new(seed);
    let (mut lifted, mut total_in, mut total_out) = (0, 0, 0);
    for round in 0..rounds {
        let prog = random_program(&mut rng, cfg);
        validate(&prog).expect("generator makes valid programs");
        let out =
            optimize(&prog, &options()).unwrap_or_else(|e| panic!("round {round}: {e}\n{prog:?}"));
        validate(&out.program).unwrap_or_else(|e| {
            panic!(
                "round {round}: invalid output {e}\nin {prog:?}\nout {:?}",
                out.program
            )
        });
        if out.method == Method::Lifted {
            lifted += 1;
        }
        total_in += prog.len();
        total_out += out.program.len();
        for d in inputs(&mut rng, &prog) {
            let (a, b) = (
                interp::eval(&prog, &d).unwrap(),
                interp::eval(&out.program, &d).unwrap(),
            );
            assert_eq!(
                a, b,
                "round {round}: on {d:?}\nin {prog:?}\nout {:?} ({:?})",
                out.program, out.method
            );
        }
    }
    (lifted, total_in, total_out)
}

#[test]
fn random_programs_keep_their_decisions() {
    let (lifted, a, b) = check(11, &GenConfig::default(), 3000);
    eprintln!("general: {lifted} of 3000 lifted; {a} -> {b} instructions");
    assert!(
        b <= a,
        "the optimizer never returns something bigger in total"
    );
    assert!(
        lifted > 2000,
        "most random programs can be lifted: {lifted}"
    );
}

#[test]
fn long_random_programs_keep_their_decisions() {
    let cfg = GenConfig {
        max_len: 400,
        ..GenConfig::default()
    };
    let (lifted, a, b) = check(12, &cfg, 300);
    eprintln!("long: {lifted} of 300 lifted; {a} -> {b} instructions");
}

#[test]
fn cache_friendly_programs_keep_every_cached_syscall() {
    let mut rng = Rng::new(13);
    let cfg = GenConfig {
        max_len: 60,
        ..GenConfig::cache_friendly()
    };
    let kernel = KernelCache::for_arch(Arch::X86_64).unwrap();
    for round in 0..1500 {
        let prog = random_program(&mut rng, &cfg);
        let out = optimize(&prog, &options()).unwrap();
        let before = CacheBitmap::new(kernel.clone()).attach(&prog);
        let after = CacheBitmap::new(kernel.clone()).attach(&out.program);
        for token in [0xc000_003e, 0x4000_0003] {
            let (b, a) = (before.cached_numbers(token), after.cached_numbers(token));
            let lost: Vec<&u32> = b.iter().filter(|n| a.binary_search(n).is_err()).collect();
            assert!(
                lost.is_empty(),
                "round {round}: lost {lost:?} for {token:#x}\nin {prog:?}\nout {:?}",
                out.program
            );
        }
        for nr in 0..64 {
            for token in TOKENS {
                let d = SeccompData::new(token, nr, [0; 6]);
                assert_eq!(
                    interp::eval(&prog, &d).unwrap(),
                    interp::eval(&out.program, &d).unwrap(),
                    "round {round}"
                );
            }
        }
    }
}

/// With its self-check on, the optimizer proves every output equal (or returns the input):
/// the verifier never finds a difference.
#[test]
fn self_check_never_finds_a_difference() {
    let mut rng = Rng::new(14);
    let cfg = GenConfig {
        max_len: 30,
        ..GenConfig::default()
    };
    for round in 0..300 {
        let prog = random_program(&mut rng, &cfg);
        let out = optimize(
            &prog,
            &OptimizeOptions {
                report: false,
                ..OptimizeOptions::default()
            },
        )
        .unwrap();
        for note in &out.notes {
            assert!(
                !note.text.contains("not equal"),
                "round {round}: {note}\n{prog:?}"
            );
        }
    }
}
