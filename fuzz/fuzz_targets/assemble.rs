//! Arbitrary text through the assembler: errors are fine, panics are not; whatever assembles
//! must disassemble and assemble back to the same program.
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::bpf::{asm, disasm};

fuzz_target!(|text: &str| {
    if let Ok(prog) = asm::assemble(text) {
        let again = disasm::disassemble(&prog, &disasm::DisasmOptions::default());
        assert_eq!(asm::assemble(&again).expect("disassembly assembles"), prog);
    }
});
