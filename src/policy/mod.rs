//! Seccomp policies: the model, the profile front ends, and resolution to syscall numbers.
//!
//! This layer knows nothing of bytecode (it uses [`crate::arch`] for architectures and
//! syscall tables, never `crate::bpf`). The pipeline:
//!
//! 1. A front end reads a profile into a [`Policy`]: [`oci::parse`] for OCI runtime-spec /
//!    Docker / podman JSON, [`firecracker::parse`] for Firecracker's seccompiler JSON (one
//!    `Policy` per thread kind).
//! 2. [`resolve()`] evaluates what depends on the host and the container (architecture set,
//!    capabilities, kernel version), looks every syscall name up per architecture and
//!    yields a [`Resolved`] table: per arch, syscall number → ordered rule list, plus the
//!    names that arch does not have.
//!
//! ```
//! use secopt::policy::{self, Action, CapSet, ResolveOptions};
//! use secopt::arch::Arch;
//!
//! let profile = br#"{
//!     "defaultAction": "SCMP_ACT_ERRNO",
//!     "syscalls": [
//!         {"names": ["read", "write", "no_such_call"], "action": "SCMP_ACT_ALLOW"},
//!         {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}
//!     ]
//! }"#;
//! let policy = policy::oci::parse(profile, "example.json").unwrap();
//! assert_eq!(policy.default_action, Action::Errno(1)); // runc's default errno is EPERM
//!
//! let options = ResolveOptions { native: Some(Arch::X86_64), ..Default::default() };
//! let resolved = policy::resolve(&policy, &options).unwrap();
//! let x86_64 = resolved.arch(Arch::X86_64).unwrap();
//! assert_eq!(x86_64.syscalls[&0][0].action, Action::Allow); // read
//! assert_eq!(x86_64.syscalls[&435][0].action, Action::Errno(38)); // clone3
//! assert_eq!(x86_64.unknown, ["no_such_call"]);
//! ```

pub mod firecracker;
pub(crate) mod json;
mod model;
mod names;
pub mod oci;
mod resolve;

pub use model::{
    Action, Applicability, ArchMapEntry, ArchRef, Architectures, ArgCondition, ArgWidth, CapSet,
    CmpOp, Dialect, FilterFlag, HostFilter, KernelVersion, Policy, Rule, Warning, WarningKind,
    LIBSECCOMP_MAX_ERRNO,
};
pub use names::{errno_by_name, errno_name, ALL_CAPS, DOCKER_DEFAULT_CAPS};
pub use resolve::{
    resolve, ExcludedRule, Exclusion, ResolveOptions, Resolved, ResolvedArch, ResolvedRule,
    SyscallResolver, UnnumberedNames,
};

use crate::arch::Arch;
use std::collections::BTreeMap;

/// Why a profile could not be read or resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The input is not JSON.
    #[error("{file}: invalid JSON at line {line}, column {column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// The input is JSON but not a valid profile; `path` says where (`$.syscalls[3].action`).
    #[error("{file}: {path}: {message}")]
    Invalid {
        file: String,
        path: String,
        message: String,
    },
    /// Strict resolution: some syscall names are no architecture's (with a resolver: not the
    /// resolver's, for a name secopt knows), per architecture the profile covers. Names of
    /// another architecture only (`chown32` in an x86_64 filter, the multi-arch idiom) and
    /// those reached through `socketcall`/`ipc` are not among them.
    #[error(
        "{file}: unknown syscall names (strict mode): {}{}",
        format_unknown(.unknown),
        format_places(.places)
    )]
    UnknownSyscalls {
        file: String,
        unknown: BTreeMap<Arch, Vec<String>>,
        /// Each name with the JSON path of the first rule naming it (`$.syscalls[3]`).
        places: Vec<(String, String)>,
    },
    /// Strict resolution: the profile covers an architecture secopt has no table for.
    #[error("{file}: architecture {arch} is not supported by secopt (strict mode)")]
    UnsupportedArch { file: String, arch: String },
    /// Strict resolution: the profile has warnings ([`Policy::warnings`]): something the
    /// reference tools accept but ignore or read in a way the author may not mean (an
    /// unknown field, a capability name no container has, …).
    #[error(
        "{file}: {} (strict mode: a warning about the profile is an error)",
        format_warnings(.warnings)
    )]
    Warnings {
        file: String,
        warnings: Vec<Warning>,
    },
    /// The running kernel's version was needed (a rule has `minKernel`) but is unknown.
    #[error("cannot determine the running kernel version: {0}")]
    KernelVersion(String),
    /// A resolution or front-end option is invalid; the message names the option's value and
    /// why (and the file, where the option is invalid for it).
    #[error("{0}")]
    InvalidOption(String),
}

/// The first four warnings, each with its path, then how many more.
fn format_warnings(warnings: &[Warning]) -> String {
    let mut text = warnings
        .iter()
        .take(4)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    if warnings.len() > 4 {
        text.push_str(&format!("; and {} more", warnings.len() - 4));
    }
    text
}

/// `; first named at $.syscalls[3] (frobnicate), …`: where the first eight names are.
fn format_places(places: &[(String, String)]) -> String {
    if places.is_empty() {
        return String::new();
    }
    let mut listed: Vec<String> = places
        .iter()
        .take(8)
        .map(|(name, path)| format!("{path} ({})", name_listing(&[name], 1, "")))
        .collect();
    if places.len() > 8 {
        listed.push(format!("and {} more", places.len() - 8));
    }
    format!("; first named at {}", listed.join(", "))
}

fn format_unknown(unknown: &BTreeMap<Arch, Vec<String>>) -> String {
    unknown
        .iter()
        .map(|(arch, names)| format!("{arch}: {}", name_listing(names, 32, "")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Names for a message: the first `shown`, each cut to 64 characters, then "and N more"
/// and `more_suffix`. A profile may name thousands of unknown syscalls, or one name of
/// megabytes, and messages echo what they list; its control characters are written as
/// escapes (`\u{1b}`), so that a name cannot move the cursor or recolour the terminal that
/// shows the message.
pub fn name_listing<S: AsRef<str>>(names: &[S], shown: usize, more_suffix: &str) -> String {
    const LONGEST: usize = 64;
    let parts: Vec<String> = names
        .iter()
        .take(shown)
        .map(|n| {
            let n = printable(n.as_ref());
            match n.char_indices().nth(LONGEST) {
                Some((cut, _)) => format!("{}… ({} bytes)", &n[..cut], n.len()),
                None => n.to_string(),
            }
        })
        .collect();
    let mut text = parts.join(", ");
    if names.len() > shown {
        text += &format!(" and {} more{more_suffix}", names.len() - shown);
    }
    text
}

/// `text` (a name read from an input) as a message shows it: its control characters written
/// as escapes (`\u{1b}`), so that it cannot move the cursor or recolour the terminal, and so
/// are the invisible and direction-changing format characters ([`hides_text`]), so that
/// `read\u{202e}` cannot show as another name or reorder the rest of the line ("Trojan
/// Source", CVE-2021-42574).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| c.is_control() || hides_text(c);
    if !text.chars().any(escaped) {
        return text.into();
    }
    text.chars()
        .map(|c| match escaped(c) {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect::<String>()
        .into()
}

/// Format characters (Unicode category Cf) a terminal draws as nothing or that reorder the
/// text around them: the bidirectional embeddings, overrides, isolates and marks, zero-width
/// spaces and joiners, the soft hyphen, the byte-order mark, invisible operators and
/// interlinear annotations.
pub fn hides_text(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

impl PolicyError {
    /// Where in the document the error is: the JSON path of an
    /// [`Invalid`](PolicyError::Invalid) error, and the first place of an
    /// [`UnknownSyscalls`](PolicyError::UnknownSyscalls) or [`Warnings`](PolicyError::Warnings)
    /// one (each warning has its own [`Warning::path`]; an unknown name, the first rule naming
    /// it). `None` for errors of no place (a syntax error has a line and column instead).
    pub fn json_path(&self) -> Option<&str> {
        match self {
            PolicyError::Invalid { path, .. } => Some(path),
            PolicyError::UnknownSyscalls { places, .. } => places.first().map(|(_, p)| p.as_str()),
            PolicyError::Warnings { warnings, .. } => warnings.first().map(|w| w.path.as_str()),
            _ => None,
        }
    }
}
