//! Arbitrary bytes through the Firecracker filter-file decoder (bincode and bitcode): nothing
//! may panic, and whatever decodes must encode to a file that decodes to the same threads
//! (as long, for bincode, whose layout is read exactly).
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::bpf::thread_filters::{decode, encode, Encoding};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = decode(data) else {
        return;
    };
    let again = encode(&file.threads, file.encoding);
    if file.encoding == Encoding::Bincode {
        // The same entries, perhaps in another order: the same length.
        assert_eq!(again.len(), data.len());
    }
    assert_eq!(decode(&again).expect("an encoded file decodes"), file);
});
