//! secopt: an optimizing compiler, exact verifier, analyzer and benchmark for Linux
//! seccomp-bpf filters.
//!
//! # Embedding
//!
//! A runtime that loads filters needs three calls: parse and resolve its profile, compile it
//! with the optimizer on (which proves its output equal to the plain lowering before
//! returning it), and hand the raw bytes to `seccomp(2)`. [`verify::equivalent`] repeats the
//! proof on any two programs, e.g. the one the runtime loads today and secopt's.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use secopt::arch::Arch;
//! use secopt::bpf::{interp, RetVal, SeccompData};
//! use secopt::compile::{compile_oci, CompileOptions};
//! use secopt::optimize::{OptimizeOptions, Weights};
//! use secopt::policy::ResolveOptions;
//! use secopt::verify::{equivalent, Verdict, VerifyOptions};
//!
//! // A Docker-style profile: a few syscalls allowed, `socket` only for AF_INET (2).
//! let profile = br#"{
//!   "defaultAction": "SCMP_ACT_ERRNO",
//!   "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
//!   "syscalls": [
//!     {"names": ["read", "write", "close", "futex", "epoll_wait"], "action": "SCMP_ACT_ALLOW"},
//!     {"names": ["socket"], "action": "SCMP_ACT_ALLOW",
//!      "args": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"}]}
//!   ]}"#;
//! let resolve = ResolveOptions { native: Some(Arch::X86_64), ..Default::default() };
//!
//! // What the workload calls, to lay the dispatch out for (optional). `strace -c` summaries
//! // and `secopt record` captures: `bench::workload::parse_file(..)?.weights()?`.
//! let weights = Weights::from_json(r#"{"read": 5000, "write": 4000, "futex": 10}"#, Arch::X86_64)?;
//! let optimize = OptimizeOptions { weights: Some(weights), ..Default::default() };
//! let options = CompileOptions { optimize: Some(optimize), ..Default::default() };
//! let filter = compile_oci(profile, "web.json", &resolve, &options)?;
//!
//! // The optimizer's self-check proved it equal to the reference lowering (the program
//! // libseccomp would decide like), which is also what `CompileOptions::default()` gives.
//! let optimization = filter.info().optimization.as_ref().unwrap();
//! assert!(optimization.verified);
//! // What that proof took against the self-check's budget (`OptimizeOptions::
//! // self_check_budget`): room to spare for a runtime that lowers it to bound its start-up.
//! let proof = optimization.proof.unwrap();
//! assert!(proof.bdd_nodes < proof.max_bdd_nodes && proof.bdd_steps < proof.max_bdd_steps);
//! let reference = compile_oci(profile, "web.json", &resolve, &CompileOptions::default())?;
//! assert!(filter.program().len() < reference.program().len());
//! let verdict = equivalent(reference.program(), filter.program(), &VerifyOptions::default())?;
//! assert_eq!(verdict, Verdict::Equal);
//!
//! // Decisions, from secopt's interpreter of the kernel's cBPF semantics.
//! let x86_64 = Arch::X86_64.token();
//! let socket = |family| SeccompData::new(x86_64, 41, [family, 1, 0, 0, 0, 0]);
//! assert_eq!(interp::eval(filter.program(), &socket(2))?, RetVal::ALLOW);
//! assert_eq!(interp::eval(filter.program(), &socket(1))?, RetVal::errno(1));
//!
//! // `struct sock_filter` bytes in the native byte order, for seccomp(2).
//! assert_eq!(filter.to_raw().len(), 8 * filter.program().len());
//! # Ok(())
//! # }
//! ```
//!
//! # Modules
//!
//! Each depends only on those above it in this list (and never on `cli`):
//! - [`arch`]: architectures, `AUDIT_ARCH_*` tokens, syscall tables.
//! - [`bpf`]: classic-BPF programs as the kernel runs them for seccomp: decoding, validation
//!   against the kernel's rules, the interpreter, the allow-cache emulator, path analysis and
//!   the symbolic machinery the verifier is built on.
//! - [`policy`]: profiles (OCI/Docker/podman, Firecracker) parsed and resolved to per-arch rules
//!   with their toolchain's semantics. It does not know `bpf`, and `bpf` does not know it.
//! - [`kernel`]: installing filters on the running kernel and asking it for decisions (the
//!   tests' oracle, `secopt exec`).
//! - [`verify`]: exact equivalence of two programs, with a counterexample or an honest
//!   `unknown`; [`verify::diff()`] lists every difference.
//! - [`optimize`]: any valid program to a faster equivalent one, usually smaller too
//!   ([`optimize::Favor::Size`] for the fewest instructions), self-checked with [`verify`].
//! - [`compile`]: a resolved policy to its reference program, optimized on request, and the
//!   output formats (raw, assembly, C, Rust, Go, base64, JSON).
//! - [`bench`](mod@bench): timing a workload's syscalls on this kernel under several filters side by side.
//! - `cli`: the `secopt` command line (the `cli` feature, on by default; an embedder that
//!   needs only the library turns it off with `default-features = false`, which also drops
//!   `clap`).

/// The README's Rust blocks, compiled and run as doctests so that they stay true (they run
/// from the package root, where `examples/` is).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod arch;
pub mod bench;
pub mod bpf;
// The `secopt` binary's command line: public for `main.rs` and the tests, not part of the
// library's API (hidden from its docs).
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
pub mod compile;
pub mod kernel;
pub mod optimize;
pub mod policy;
pub mod verify;
