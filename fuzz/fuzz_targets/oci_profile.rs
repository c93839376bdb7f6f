//! Arbitrary bytes through the OCI/Docker profile front end and resolution: errors are fine
//! (and must name a place), panics are not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::arch::Arch;
use secopt::policy::{oci, resolve, ResolveOptions};

fuzz_target!(|data: &[u8]| {
    match oci::parse(data, "fuzz.json") {
        Ok(policy) => {
            let opts = ResolveOptions {
                native: Some(Arch::X86_64),
                ..ResolveOptions::default()
            };
            let _ = resolve(&policy, &opts);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
