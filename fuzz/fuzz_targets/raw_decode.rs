//! Arbitrary bytes through the raw decoder (both byte orders), the disassembler, the
//! validator and (when valid) the interpreter and the assembler: nothing may panic, and a
//! valid program must survive encode/decode and disassemble/assemble unchanged.
#![no_main]
use libfuzzer_sys::fuzz_target;
use secopt::arch::Endian;
use secopt::bpf::{asm, disasm, interp, testing, validate, Program};

fuzz_target!(|data: &[u8]| {
    let Ok(prog) = Program::from_raw(data) else {
        return;
    };
    assert_eq!(prog.to_raw(), data);
    let big_endian = Program::from_raw_in(data, Endian::Big).expect("same framing");
    assert_eq!(big_endian.to_raw_in(Endian::Big), data);
    // `secopt disasm` lists invalid programs too.
    let text = disasm::disassemble(&prog, &disasm::DisasmOptions::default());
    if validate::validate(&prog).is_err() {
        return;
    }
    let mut rng = testing::Rng::new(data.len() as u64);
    for _ in 0..4 {
        let d = testing::random_data(&mut rng, &prog, &[0xc000_003e, 0x4000_0003]);
        interp::eval(&prog, &d).expect("a valid program runs to a return");
    }
    let back = asm::assemble(&text).expect("disassembly assembles");
    assert_eq!(back, prog);
});
