//! Talking to the running kernel: installing filters and observing its decisions.
//!
//! - [`seccomp`] (any Linux): `no_new_privs`, attaching a filter, reading a tracee's filters
//!   back with `PTRACE_SECCOMP_GET_FILTER`.
//! - [`entry`] (x86_64 Linux): issuing a system call through the native, i386 (`int $0x80`)
//!   and x32 entries, and the `seccomp_data` each produces.
//! - [`oracle`] (x86_64 Linux): asking the kernel which return instruction a program takes
//!   for given calls, without letting any call run.
//! - [`notify`] (any Linux): a NOTIFY listener fd and its hand-off to a seccomp agent.
//! - [`child`] (any Linux): waiting for filter-installing children and describing how they
//!   ended (shared by the oracle and the benchmark).
//! - [`trace`] (any Linux): running a command under ptrace and counting its system calls per
//!   arch token and number, with argument samples (`secopt record`), optionally under
//!   filters it installs and watching each call (`secopt exec --denials`).

#[cfg(target_os = "linux")]
pub mod child;
#[cfg(target_os = "linux")]
pub mod notify;
#[cfg(target_os = "linux")]
pub mod seccomp;
#[cfg(target_os = "linux")]
pub mod trace;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub mod entry;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub mod oracle;

#[cfg(target_os = "linux")]
pub use seccomp::{
    get_filter, install_filter, install_filter_raw, read_filters, set_no_new_privs,
    ReadFiltersError,
};

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub use entry::Entry;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub use oracle::{Answer, Call, Oracle, OracleError};
