//! Random valid programs through the optimizer: no panic; the output is valid and, when it is
//! not the input, proved equal by the self-check, which the interpreter must confirm on
//! sampled inputs. Then the same with weights whose calls carry argument values (the hot
//! calls' shortcuts, `optimize::hot_args`), and under a random `max_path`: an output within
//! it (no sampled input runs longer than its worst path), or a refusal.
#![no_main]
use libfuzzer_sys::fuzz_target;
#[path = "common/generated.rs"]
mod generated;
use secopt::bpf::testing::{random_data, random_program, GenConfig, Rng};
use secopt::bpf::{interp, validate, Program};
use secopt::optimize::{
    self, optimize, Favor, Method, OptimizeError, OptimizeOptions, Verification, Weights,
};

fuzz_target!(|data: &[u8]| {
    let mut rng = generated::rng_from(data);
    // One input in three gets the whole instruction set. A multiplication by a large
    // constant, or a comparison of two input words (`jeq x` with X = arch, A = nr), can make
    // the self-check's decision diagrams exponential: the optimizer then spends its
    // self-check budget and keeps the input, as it should (docs/optimizer.md). The default
    // budget (`optimize::SELF_CHECK_BUDGET`) takes ~1.5 s in a release build on the worst
    // input known (0xa6) and over 10 s in this sanitized one, ~13 times slower. So the target
    // gives it 1/16 of the steps (2^20: more than the ~620 000 of the largest proof in the
    // test suite, measured once) and a 2 s clock; 0xa6 then runs in ~7 s, not ~60 s.
    // The other two thirds avoid those cases so the fuzzer spends its time on the passes: no
    // ALU beyond `and` and no X register (scratch memory and `ret a` stay), or cache-friendly
    // programs.
    let config = match data.first().map(|b| b % 3) {
        Some(0) => GenConfig::cache_friendly(),
        Some(1) => GenConfig::default(),
        _ => GenConfig {
            alu: false,
            x_register: false,
            ..GenConfig::default()
        },
    };
    let prog = random_program(&mut rng, &config);
    if validate::validate(&prog).is_err() {
        return;
    }
    let opts = generated::quick_options();
    let out = optimize(&prog, &opts).expect("a valid program optimizes");
    validate::validate(&out.program).expect("the output is valid");
    if out.method != Method::Unchanged {
        assert_eq!(out.verification, Verification::Equal);
    }
    // The interpreter agrees with `prog` on sampled inputs.
    let same_on_samples = |other: &Program, rng: &mut Rng| {
        for _ in 0..64 {
            let d = random_data(rng, &prog, &[0xc000_003e, 0x4000_0003, 0]);
            assert_eq!(
                interp::eval(&prog, &d).ok(),
                interp::eval(other, &d).ok(),
                "{d:?}"
            );
        }
    };
    same_on_samples(&out.program, &mut rng);
    // Weights whose calls carry argument values: some of the sampled inputs, hot and cold.
    let mut weights = Weights::new();
    for _ in 0..1 + rng.below(4) {
        let d = random_data(&mut rng, &prog, &[0xc000_003e, 0x4000_0003, 0]);
        let args = d.args.map(|a| (rng.below(5) != 0).then_some(a));
        let count = [1.0, 10.0, 1000.0][rng.below(3)];
        weights.add_call(d.arch, d.nr as u32, count, args).unwrap();
    }
    // Any setting of `--favor`: `speed` and `size` take other trees, held to the same rules.
    let favor = [Favor::Balanced, Favor::Speed, Favor::Size][rng.below(3)];
    let sampled = OptimizeOptions {
        weights: Some(weights),
        favor,
        ..opts.clone()
    };
    let out = optimize(&prog, &sampled).expect("a valid program optimizes");
    validate::validate(&out.program).expect("the output is valid");
    if out.method != Method::Unchanged {
        assert_eq!(out.verification, Verification::Equal);
    }
    same_on_samples(&out.program, &mut rng);
    // `max_path` is a promise: an output within it (and still equal), or `PathBound`.
    let longest = optimize::cost::worst_case_path(&out.program) as usize;
    let bound = 2 + rng.below(longest + 2);
    let held = OptimizeOptions {
        max_path: Some(bound),
        ..opts
    };
    match optimize(&prog, &held) {
        Ok(out) => {
            validate::validate(&out.program).expect("the output is valid");
            let worst = optimize::cost::worst_case_path(&out.program) as usize;
            assert!(
                worst <= bound,
                "worst path {worst} over the promised {bound}"
            );
            same_on_samples(&out.program, &mut rng);
            // The promise as the interpreter counts it, independent of the cost model.
            for _ in 0..64 {
                let d = random_data(&mut rng, &out.program, &[0xc000_003e, 0x4000_0003, 0]);
                let steps = interp::trace(&out.program, &d)
                    .expect("a valid program runs")
                    .steps;
                assert!(
                    steps <= worst,
                    "{d:?} runs {steps} instructions, worst path {worst}"
                );
            }
        }
        Err(OptimizeError::PathBound { shortest, .. }) => assert!(shortest > bound),
        Err(e) => panic!("{e}"),
    }
});
