//! Random stacks of valid programs: joined (`bpf::stack::as_one_program`), the joined program
//! is valid and decides sampled inputs as the kernel's rule (`eval_stack`); optimized
//! (`optimize::optimize_stack`), the output is valid, proved equal, caches every syscall the
//! stack caches, and the interpreter confirms it on sampled inputs. Refusals are the
//! documented ones (division by X, no free scratch words, no passing candidate).
#![no_main]
use libfuzzer_sys::fuzz_target;
#[path = "common/generated.rs"]
mod generated;
use secopt::arch::Arch;
use secopt::bpf::cache::KernelVersion;
use secopt::bpf::stack::{as_one_program, eval_stack, StackError};
use secopt::bpf::testing::{random_data, random_program, GenConfig};
use secopt::bpf::{interp, validate, Program};
use secopt::optimize::cost::Caches;
use secopt::optimize::{optimize_stack, StackOptimizeError, Verification};

fuzz_target!(|data: &[u8]| {
    let mut rng = generated::rng_from(data);
    // As the optimize target: the whole instruction set only now and then (its self-checks
    // can spend their budget), cache-friendly filters most often (the cache rule matters).
    let config = match data.first().map(|b| b % 4) {
        Some(0) => GenConfig::default(),
        Some(1) => GenConfig {
            alu: false,
            x_register: false,
            ..GenConfig::default()
        },
        _ => GenConfig::cache_friendly(),
    };
    let filters: Vec<Program> = (0..2 + rng.below(3))
        .map(|_| random_program(&mut rng, &config))
        .collect();
    if filters.iter().any(|f| validate::validate(f).is_err()) {
        return;
    }
    let joined = match as_one_program(&filters) {
        Ok(p) => p,
        Err(StackError::DivisionByX { .. } | StackError::NoScratch { .. }) => return,
        Err(e) => panic!("{e}"),
    };
    validate::validate(&joined).expect("the joined program is valid");
    let samples: Vec<_> = (0..64)
        .map(|i| {
            random_data(
                &mut rng,
                &filters[i % filters.len()],
                &[0xc000_003e, 0x4000_0003, 0],
            )
        })
        .collect();
    for d in &samples {
        assert_eq!(
            interp::eval(&joined, d).ok(),
            eval_stack(&filters, d).ok(),
            "{d:?}"
        );
    }
    let opts = generated::quick_options();
    let out = match optimize_stack(&filters, &opts) {
        Ok(out) => out,
        Err(StackOptimizeError::NotJoined { .. }) => return,
        Err(e) => panic!("{e}"),
    };
    validate::validate(&out.program).expect("the output is valid");
    assert_eq!(out.verification, Verification::Equal);
    for d in &samples {
        assert_eq!(
            interp::eval(&out.program, d).ok(),
            eval_stack(&filters, d).ok(),
            "{d:?}"
        );
    }
    let arches = [Arch::X86_64, Arch::X86];
    let stack_caches = Caches::for_stack(&filters, &arches, KernelVersion::MODELLED);
    let out_caches = Caches::new(&out.program, &arches, KernelVersion::MODELLED);
    for (name, token, numbers) in stack_caches.sets() {
        for nr in numbers {
            assert!(
                out_caches.is_cached(token, nr),
                "{name} {nr} cached by the stack, not by the output"
            );
        }
    }
});
