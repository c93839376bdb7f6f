//! secopt: an optimizing compiler, exact verifier, analyzer and benchmark for Linux
//! seccomp-bpf filters.
//!
//! Module layering (each depends only on those listed before it):
//! - [`arch`]: architectures, `AUDIT_ARCH_*` tokens, syscall tables.
//! - [`bpf`]: classic-BPF programs as the kernel runs them for seccomp.
//! - [`kernel`]: installing filters on the running kernel and asking it for decisions.

pub mod arch;
pub mod bench;
pub mod bpf;
pub mod cli;
pub mod compile;
pub mod kernel;
pub mod optimize;
pub mod policy;
pub mod verify;
