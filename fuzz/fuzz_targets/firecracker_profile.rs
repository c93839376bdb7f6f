//! Arbitrary bytes through the Firecracker seccompiler front end: errors are fine, panics are not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::arch::Arch;
use secopt::policy::firecracker;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = firecracker::parse(data, "fuzz.json", Arch::X86_64) {
        assert!(!e.to_string().is_empty());
    }
});
