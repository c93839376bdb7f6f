//! Arbitrary bytes through the Firecracker seccompiler front end, in each dialect and for each
//! target it knows (the first byte picks them): errors are fine, panics are not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::arch::Arch;
use secopt::policy::firecracker::{self, FirecrackerOptions};
use secopt::policy::Dialect;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else {
        return;
    };
    let dialect = match pick % 3 {
        0 => Dialect::Libseccomp,
        1 => Dialect::RustVmmSeccompiler,
        _ => Dialect::Firecracker110,
    };
    let arch = [Arch::X86_64, Arch::Aarch64, Arch::Riscv64][usize::from(pick / 3 % 3)];
    if let Err(e) =
        firecracker::parse_with(json, "fuzz.json", &FirecrackerOptions { arch, dialect })
    {
        assert!(!e.to_string().is_empty());
    }
});
