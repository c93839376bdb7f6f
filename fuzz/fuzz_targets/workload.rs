//! Arbitrary bytes through the workload reader (strace -c summaries, JSON counts, `secopt
//! record` captures): errors are fine, panics are not, and every entry that is read back
//! names a syscall of its ABI with a count.
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::arch::Arch;
use secopt::bench::workload::{parse_file, WorkloadOptions};

fuzz_target!(|data: &[u8]| {
    for skip_unknown in [false, true] {
        let opts = WorkloadOptions {
            native: Arch::X86_64,
            skip_unknown,
        };
        match parse_file(data, "fuzz.txt", &opts) {
            Ok(w) => {
                for e in &w.entries {
                    let table_nr = e.nr & !secopt::arch::X32_SYSCALL_BIT;
                    assert!(
                        e.arch.syscalls().name(table_nr).is_some()
                            || e.syscall.starts_with("syscall_"),
                        "{e:?}"
                    );
                }
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
});
