//! Random pairs of valid programs through the verifier and the diff: no panic, and every
//! counterexample and every diff example must agree with the interpreter. The first byte picks
//! how the pair is made: two programs decoded from the bytes (whole instructions, invalid
//! ones skipped), two programs of `bpf::testing`'s generator seeded from the bytes, or one
//! such program and a single-instruction change of it (the likeliest to be equal).
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::bpf::testing::{random_program, GenConfig, Rng};
use secopt::bpf::{interp, validate};
use secopt::verify::{diff, equivalent, Budget, DiffOutcome, Verdict, VerifyError, VerifyOptions};
use std::time::Duration;

#[path = "common/insns.rs"]
mod insns;

/// AddressSanitizer keeps the stack of every allocation it has seen, forever; the BDD
/// package allocates from deep recursions whose stacks are nearly all distinct, so with the
/// default the fuzzer's memory grows without bound (a normal build stays flat at ~20 MB).
#[no_mangle]
pub extern "C" fn __asan_default_options() -> *const std::ffi::c_char {
    c"malloc_context_size=0".as_ptr()
}

fn seed(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (a, b) = match mode % 3 {
        0 => {
            let (x, y) = rest.split_at(rest.len() / 2);
            (insns::decode(x), insns::decode(y))
        }
        1 => {
            let mut rng = Rng::new(seed(rest));
            let cfg = GenConfig::default();
            (
                random_program(&mut rng, &cfg),
                random_program(&mut rng, &cfg),
            )
        }
        _ => {
            let mut rng = Rng::new(seed(rest));
            let a = random_program(&mut rng, &GenConfig::default());
            let mut b = a.clone();
            let i = rng.below(b.len());
            b.insns[i].k ^= 1 << rng.below(32);
            (a, b)
        }
    };
    let valid = validate::validate(&a).is_ok() && validate::validate(&b).is_ok();
    let opts = VerifyOptions {
        budget: Budget {
            max_bdd_nodes: 1 << 16,
            time_limit: Some(Duration::from_secs(2)),
            ..Budget::default()
        },
        ..VerifyOptions::default()
    };
    match equivalent(&a, &b, &opts) {
        Ok(Verdict::Different(c)) => {
            assert_eq!(interp::eval(&a, &c.data).unwrap(), c.a);
            assert_eq!(interp::eval(&b, &c.data).unwrap(), c.b);
            assert_ne!(c.a, c.b);
        }
        Ok(Verdict::Equal) | Ok(Verdict::Unknown { .. }) => {}
        Err(VerifyError::Invalid { .. }) => assert!(!valid),
        Err(e) => panic!("{e}"),
    }
    if !valid {
        return;
    }
    if let Ok(DiffOutcome::Different(d)) = diff(&a, &b, &opts).map_err(|e| match e {
        VerifyError::Disagreement { .. } | VerifyError::Incomplete { .. } => panic!("{e}"),
        e => e,
    }) {
        for change in d
            .arches
            .iter()
            .flat_map(|g| &g.entries)
            .flat_map(|e| &e.changes)
        {
            assert_eq!(interp::eval(&a, &change.example).unwrap(), change.example_a);
            assert_eq!(interp::eval(&b, &change.example).unwrap(), change.example_b);
            assert_ne!(change.example_a, change.example_b);
        }
    }
});
