//! What the targets that generate programs from a seed (rather than decode them) share: the
//! random generator, seeded by the whole input hashed (FNV-1a) so every byte changes the
//! programs, and the optimizer's options with a self-check budget fit for a sanitized build.
use secopt::bpf::testing::Rng;
use secopt::optimize::{self, OptimizeOptions};

pub fn rng_from(data: &[u8]) -> Rng {
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    Rng::new(seed)
}

/// No report; 1/16 of the self-check's steps (2^20: more than the ~620 000 of the largest
/// proof in the test suite, measured once) and a 2 s clock, because sanitized builds run ~13
/// times slower and a few generated programs make the proof's diagrams exponential (the
/// optimizer then keeps its input, as it should; see the `optimize` target).
pub fn quick_options() -> OptimizeOptions {
    OptimizeOptions {
        report: false,
        self_check_budget: secopt::verify::Budget {
            max_bdd_steps: optimize::SELF_CHECK_BUDGET.max_bdd_steps / 16,
            time_limit: Some(std::time::Duration::from_secs(2)),
            ..optimize::SELF_CHECK_BUDGET
        },
        ..OptimizeOptions::default()
    }
}
