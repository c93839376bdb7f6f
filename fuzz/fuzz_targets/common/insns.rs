//! The fuzz targets' structured decoding of instructions, shared with `#[path]` (each target
//! is its own binary crate).
use secopt::bpf::{Insn, Program};

/// Seven bytes per instruction: the opcode from the low byte only (so most instructions are
/// real ones), jump offsets below 8 (so most jumps stay in the program), a little-endian `k`.
pub fn decode(bytes: &[u8]) -> Program {
    Program::new(
        bytes
            .chunks_exact(7)
            .map(|c| {
                Insn::new(
                    c[0] as u16,
                    c[1] % 8,
                    c[2] % 8,
                    u32::from_le_bytes([c[3], c[4], c[5], c[6]]),
                )
            })
            .collect(),
    )
}
