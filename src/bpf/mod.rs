//! Classic BPF as the kernel runs it for seccomp: instructions, raw I/O, the validator, the
//! reference interpreter, assembly text, and the allow-cache emulator.
//!
//! Nothing here knows about policies; `compile` and `verify` meet at [`Program`].

pub mod action;
pub mod analysis;
pub mod asm;
pub mod cache;
pub mod data;
pub mod disasm;
pub mod insn;
pub mod interp;
pub mod stack;
pub mod symbolic;
// Random programs for the tests, benchmarks and fuzz targets: public for them, not part of
// the library's API (hidden from its docs).
#[doc(hidden)]
pub mod testing;
pub mod thread_filters;
pub mod validate;

pub use action::{Action, RetVal};
pub use data::{Field, SeccompData, Words};
pub use insn::{Insn, Program};
