//! Structured programs (whole instructions, biased towards valid opcodes) through the
//! validator and the interpreter: a program the validator accepts must run to a return on
//! any input, never error or panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::bpf::{interp, validate, SeccompData};

#[path = "common/insns.rs"]
mod insns;

fuzz_target!(|data: &[u8]| {
    if data.len() < 64 {
        return;
    }
    let (input, code) = data.split_at(64);
    let mut words = [0u32; 16];
    for (i, w) in words.iter_mut().enumerate() {
        *w = u32::from_le_bytes(input[4 * i..4 * i + 4].try_into().unwrap());
    }
    let prog = insns::decode(code);
    if validate::validate(&prog).is_ok() {
        let d = SeccompData::from_words(&words);
        interp::eval(&prog, &d).expect("a valid program runs to a return");
        interp::eval_words(&prog, &words).expect("a valid program runs to a return");
    }
});
