//! From a resolved policy to a seccomp filter, and from a filter to the files runtimes use.
//!
//! - [`compile`] lowers a [`Resolved`] policy to the *reference* program: plain per-arch
//!   blocks whose decisions are, for every input, those of the toolchain the policy's
//!   [`Dialect`] names (libseccomp as runc drives it, or rust-vmm seccompiler). This is the
//!   meaning the optimizer is held to; the rules it reproduces are documented in
//!   `lower.rs`, `rules.rs` and `runc.rs` (`--runc-compat`).
//! - Every filter leaves this module as a [`CompiledFilter`], which can only be built by
//!   [`CompiledFilter::new`] — the one place that checks the program with
//!   [`bpf::validate`](crate::bpf::validate::validate) and the 4096-instruction limit — and
//!   [`emit()`] writes it as raw bytes, assembly, C, Rust, Go, base64 (crun's
//!   `run.oci.seccomp_bpf_data`) or JSON.
//!
//! ```
//! use secopt::arch::Arch;
//! use secopt::bpf::{interp, RetVal, SeccompData};
//! use secopt::compile::{self, CompileOptions, EmitFormat};
//! use secopt::policy::{self, ResolveOptions};
//!
//! let profile = br#"{"defaultAction": "SCMP_ACT_ERRNO",
//!     "syscalls": [{"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"}]}"#;
//! let policy = policy::oci::parse(profile, "tiny.json").unwrap();
//! let options = ResolveOptions { native: Some(Arch::X86_64), ..Default::default() };
//! let resolved = policy::resolve(&policy, &options).unwrap();
//! let filter = compile::compile(&resolved, &CompileOptions::default()).unwrap();
//!
//! let read = SeccompData::new(Arch::X86_64.token(), 0, [0; 6]);
//! assert_eq!(interp::eval(filter.program(), &read).unwrap(), RetVal::ALLOW);
//! let open = SeccompData::new(Arch::X86_64.token(), 2, [0; 6]);
//! assert_eq!(interp::eval(filter.program(), &open).unwrap(), RetVal::errno(1));
//!
//! // What crun's `run.oci.seccomp_bpf_data` annotation takes:
//! let annotation = compile::emit(&filter, EmitFormat::Base64, "tiny");
//! assert!(annotation.starts_with(b"IAAAAAQAAAA"));
//! ```

mod builder;
mod dag;
mod emit;
mod libseccomp_db;
mod libseccomp_gen;
mod lower;
mod reload_check;
mod rules;
mod runc;

pub use crate::bpf::thread_filters::Encoding;
/// What [`compile_firecracker`] and [`compile_firecracker_thread`] take (the arch and the
/// dialect of a Firecracker file), here beside them.
pub use crate::policy::firecracker::FirecrackerOptions;
/// The CLI refuses a `--name` the emitters would have to rewrite, and checks a JSON
/// document's `base64` against its instructions.
#[cfg(feature = "cli")]
pub(crate) use emit::{base64, identifier};
pub use emit::{
    emit, emit_go, emit_program, emit_program_go, emit_thread_filters, go_package_name, EmitFormat,
    ProgramOrigin, DEFAULT_GO_PACKAGE,
};
pub use reload_check::libseccomp_reload_warnings;
pub use rules::{arg_word_offsets, compares_low_words_only};
pub use runc::applies as runc_stub_applies;
pub use runc::runc_stub_threshold;

use crate::arch::Arch;
use crate::bpf::insn::BPF_MAXINSNS;
use crate::bpf::validate::{validate, ValidationError};
use crate::bpf::{Program, RetVal};
use crate::optimize::{
    self, Method, Note, OptimizeError, OptimizeOptions, Optimized, ProgramStats, Verification,
};
use crate::policy::{self, Action, Dialect, FilterFlag, KernelVersion, PolicyError, Resolved};
use serde::Serialize;

/// Syscalls in secopt's tables (Linux 6.18) that libseccomp up to 2.5.5 does not know
/// (Debian 12 ships 2.5.4 with 2.5.5's Linux 6.7 tables; upstream 2.5.6 and 2.6 know some):
/// runc linked with such a libseccomp skips rules naming them. tests/compile_libseccomp.rs
/// checks the list against the system library.
pub const NEWER_THAN_LIBSECCOMP_2_5_5: [&str; 17] = [
    "riscv_hwprobe",
    "statmount",
    "listmount",
    "lsm_get_self_attr",
    "lsm_set_self_attr",
    "lsm_list_modules",
    "mseal",
    "uretprobe",
    "setxattrat",
    "getxattrat",
    "listxattrat",
    "removexattrat",
    "open_tree_attr",
    "file_getattr",
    "file_setattr",
    "uprobe",
    "listns",
];

/// How to compile.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// Prepend runc's ENOSYS stub: on the arches the profile lists, syscall numbers above
    /// the highest one the profile names return `ERRNO(ENOSYS)` unless the default action is
    /// ALLOW, LOG or TRACE. This is what runc actually loads.
    pub runc_compat: bool,
    /// Merge overlapping `<`/`<=` rules the way libseccomp before 2.6.1 did
    /// (GHSA-4q85-33p6-j5g6) instead of the corrected way: to match a filter built by an
    /// older system libseccomp (Debian 12 ships 2.5.4). Only profiles with two such rules
    /// for one syscall, sharing the high word of their constants but not their action,
    /// are affected.
    pub libseccomp_merge_bug: bool,
    /// Extra `(name, value)` pairs recorded in the metadata and the headers of emitted
    /// files, e.g. the capability set and kernel version the policy was resolved for.
    pub settings: Vec<(String, String)>,
    /// Optimize the reference program with [`crate::optimize`] (with its self-check when
    /// `verify` is set: the output is proved equal to the reference before it is kept).
    /// `None` (the library's default) keeps the reference lowering; `secopt compile`
    /// optimizes unless given `--no-optimize`. Its `native` left `None` means the policy's
    /// native arch ([`ResolveOptions::native`](crate::policy::ResolveOptions::native)), not
    /// the host's: the filter is laid out for the machine it was resolved for.
    pub optimize: Option<OptimizeOptions>,
}

/// How an optimized filter relates to its reference lowering (in [`FilterInfo`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OptimizationInfo {
    /// Instructions of the reference lowering the output was derived from (JSON
    /// `reference_length`, as every verb names an instruction count).
    #[serde(rename = "reference_length")]
    pub reference_instructions: usize,
    pub method: Method,
    /// Whether the output was proved equal to the reference: `false` only when the self-check
    /// was turned off, or when the output is the reference itself, instruction for
    /// instruction ([`Method::Unchanged`]: nothing to prove). An output re-emitted at the
    /// same length (`Lifted`) is proved like any other.
    pub verified: bool,
    /// What that proof took, against its budget (see [`crate::optimize::Optimized::proof`]).
    pub proof: Option<crate::optimize::ProofWork>,
    /// Candidates the optimizer rejected and why (normally none), and choices the options
    /// left to it. Serialized as their texts.
    pub notes: Vec<Note>,
}

impl OptimizationInfo {
    /// Whether the self-check dropped a candidate it could not prove equal within its budget
    /// (a larger budget may keep it): the output is not the best the optimizer found.
    pub fn dropped_unproved(&self) -> bool {
        Note::any_unproved(&self.notes)
    }
}

/// Why a filter could not be produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// Reading or resolving the profile failed.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// [`compile_firecracker_thread`]: the file has no thread kind of that name.
    #[error("{file}: no thread filter named {thread:?} (the file has: {})", .threads.join(", "))]
    NoThread {
        file: String,
        thread: String,
        threads: Vec<String>,
    },
    /// The program is longer than one filter may be.
    #[error("{file}: the filter has {len} instructions{}; the kernel accepts at most {max} per filter (split the profile or drop architectures)", match .reference { Some(r) => format!(" even optimized (the plain lowering has {r})"), None => String::new() }, max = BPF_MAXINSNS)]
    TooLarge {
        file: String,
        /// The smallest size reached (by any layout: the optimizer tries the one favouring
        /// size before giving up).
        len: usize,
        /// The reference lowering's size, when optimizing was tried.
        reference: Option<usize>,
    },
    /// The plain lowering is over the kernel's limit, and the optimized programs that fit were
    /// dropped by the optimizer's checks (most often: the self-check ran out of its budget,
    /// [`OptimizeOptions::self_check_budget`]); nothing unproved is handed back.
    #[error("{file}: the filter has {reference} instructions before optimizing, over the kernel's limit of {max} per filter, and the optimized filters that fit (the smallest has {smallest} instructions) were dropped: {}", optimize::note::joined(.reasons), max = BPF_MAXINSNS)]
    Dropped {
        file: String,
        reference: usize,
        smallest: usize,
        reasons: Vec<Note>,
    },
    /// The program is not one the kernel would accept (for generated code: a secopt bug).
    #[error("{file}: the filter would be rejected by the kernel: {error}")]
    Invalid {
        file: String,
        error: ValidationError,
    },
    /// libseccomp would refuse (or never finish adding) a rule of the profile, so what builds
    /// its filter with libseccomp (runc, Firecracker's `seccompiler-bin` since 1.11) builds
    /// none: a filter that decided anything would not be "what they load".
    #[error("{file}: {origin}: libseccomp refuses this rule for {syscall} on {arch}: {reason}; what builds its filter with libseccomp (runc, Firecracker's seccompiler-bin) cannot build this one")]
    Refused {
        file: String,
        origin: String,
        arch: Arch,
        syscall: String,
        reason: String,
    },
    /// Reproducing how libseccomp merges a rule took more steps than secopt spends on one
    /// rule (libseccomp's merge is exponential in how a rule overlaps earlier ones of its
    /// syscall, and takes seconds there itself). secopt cannot tell what runc would load, so
    /// it writes nothing.
    #[error("{file}: {origin}: secopt gave up reproducing libseccomp's rule tree for {syscall} on {arch}: {reason}")]
    MergeTooLong {
        file: String,
        origin: String,
        arch: Arch,
        syscall: String,
        reason: String,
    },
    /// No equivalent program keeps every path within the requested bound
    /// ([`OptimizeOptions::max_path`]).
    #[error("{file}: no equivalent filter keeps every path within {bound} instructions: the shortest worst-case path secopt reached is {shortest}; the plain lowering's is {reference}")]
    PathBound {
        file: String,
        bound: usize,
        shortest: usize,
        reference: usize,
    },
    /// Code layout failed (a secopt bug).
    #[error("{file}: internal error laying out the filter: {message}")]
    Layout { file: String, message: String },
}

/// The seccomp return value of a policy action.
pub const fn ret_val(action: Action) -> RetVal {
    use crate::bpf::action::Action as Ret;
    match action {
        Action::KillProcess => RetVal::KILL_PROCESS,
        Action::KillThread => RetVal::KILL_THREAD,
        Action::Trap => RetVal::new(Ret::Trap, 0),
        Action::Errno(e) => RetVal::errno(e),
        Action::UserNotif => RetVal::new(Ret::UserNotif, 0),
        Action::Trace(t) => RetVal::new(Ret::Trace, t),
        Action::Log => RetVal::LOG,
        Action::Allow => RetVal::ALLOW,
    }
}

/// What the filter covers on one architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArchInfo {
    pub arch: Arch,
    /// `AUDIT_ARCH_*` token.
    pub token: u32,
    /// Syscall names of the profile this arch does not have (skipped, as runc does).
    pub unknown: Vec<String>,
    /// Of [`ArchInfo::unknown`], the names no arch's table has: a typo, or a syscall newer
    /// than the table in use (what `compile` warns about; the others are other arches'
    /// names, expected in a profile written for several).
    pub unknown_anywhere: Vec<String>,
    /// Socket and IPC calls this arch has no syscall for, applied only through
    /// `socketcall(2)`/`ipc(2)`, as libseccomp applies them (`recv` on x86).
    pub via_multiplexer: Vec<String>,
    /// Whether the profile lists this arch (runc's ENOSYS stub covers only listed arches).
    pub listed: bool,
    /// Syscall numbers with rules.
    pub syscalls_with_rules: usize,
    /// Highest syscall number the profile names (runc's ENOSYS threshold).
    pub highest_named: Option<u32>,
}

/// Where a filter comes from and how it is to be loaded: everything besides the program
/// that a runtime or a reviewer needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilterInfo {
    /// The profile file.
    pub source: String,
    /// The Firecracker thread kind (`vmm`, `api`, `vcpu`), for Firecracker filters.
    pub thread: Option<String>,
    pub dialect: Dialect,
    /// The architecture the policy was resolved for (its byte order is the raw output's).
    pub native: Arch,
    pub arches: Vec<ArchInfo>,
    /// Architectures the profile names that secopt has no table for (not in the filter).
    pub unsupported_arches: Vec<String>,
    pub default_action: RetVal,
    pub bad_arch_action: RetVal,
    /// `seccomp(2)` flags the profile asks for (`None`: it says nothing).
    pub flags: Option<Vec<FilterFlag>>,
    pub listener_path: Option<String>,
    pub listener_metadata: Option<String>,
    /// Whether runc's ENOSYS stub is part of the program (asked for, and deciding
    /// something: see `runc.rs`).
    pub runc_compat: bool,
    /// The kernel version `minKernel` conditions were checked against, if any were.
    pub kernel: Option<KernelVersion>,
    /// Caller-supplied settings (see [`CompileOptions::settings`]).
    pub settings: Vec<(String, String)>,
    /// Set when the program is the optimizer's output rather than the reference lowering.
    pub optimization: Option<OptimizationInfo>,
    /// The profile's warnings: input that was accepted but deserves a look (a misspelt
    /// field that was ignored, a syscall name no architecture has, an unknown capability
    /// name). A runtime that compiles a profile
    /// in one call ([`compile_oci`]) should show them, or refuse a profile that has any.
    pub warnings: Vec<policy::Warning>,
}

impl FilterInfo {
    /// The `seccomp(2)` flags the tool that loads this filter installs it with. For a
    /// profile, runc's: the profile's `flags`, or `SECCOMP_FILTER_FLAG_SPEC_ALLOW` when it
    /// lists none. For a Firecracker thread's filter ([`thread`](Self::thread) set, or a
    /// seccompiler dialect): none, as Firecracker installs them. A NOTIFY listener's
    /// `SECCOMP_FILTER_FLAG_NEW_LISTENER` is the installer's to add.
    pub fn seccomp_flags(&self) -> u32 {
        if self.thread.is_some() || self.dialect != Dialect::Libseccomp {
            return 0;
        }
        match &self.flags {
            Some(flags) => FilterFlag::bits(flags),
            None => FilterFlag::SpecAllow.bit(),
        }
    }

    /// The metadata of a filter compiled from `resolved`.
    pub fn of(resolved: &Resolved, options: &CompileOptions) -> FilterInfo {
        FilterInfo {
            source: resolved.source.clone(),
            thread: None,
            dialect: resolved.dialect,
            native: resolved.native,
            arches: resolved
                .arches
                .iter()
                .map(|a| {
                    let multiplexed = |name: &&String| {
                        resolved.dialect == Dialect::Libseccomp && a.multiplexer(name).is_some()
                    };
                    ArchInfo {
                        arch: a.arch,
                        token: a.arch.token(),
                        unknown: a
                            .unknown
                            .iter()
                            .filter(|n| !multiplexed(n))
                            .cloned()
                            .collect(),
                        unknown_anywhere: a
                            .unnumbered_names(resolved.dialect == Dialect::Libseccomp)
                            .nowhere
                            .into_iter()
                            .map(str::to_owned)
                            .collect(),
                        via_multiplexer: a.unknown.iter().filter(multiplexed).cloned().collect(),
                        listed: a.listed,
                        syscalls_with_rules: lower::numbers_with_rules(a, resolved.dialect),
                        highest_named: a.highest_named,
                    }
                })
                .collect(),
            unsupported_arches: resolved.unsupported_arches.clone(),
            default_action: ret_val(resolved.default_action),
            bad_arch_action: ret_val(resolved.bad_arch_action),
            flags: resolved.flags.clone(),
            listener_path: resolved.listener_path.clone(),
            listener_metadata: resolved.listener_metadata.clone(),
            runc_compat: options.runc_compat && runc::has_effect(resolved),
            kernel: resolved.kernel,
            settings: options.settings.clone(),
            optimization: None,
            warnings: profile_warnings(resolved),
        }
    }
}

/// Every warning about `resolved`'s profile, as [`FilterInfo::warnings`] lists them: the
/// profile's own ([`Resolved::warnings`]: ignored fields, rules that never apply), then the
/// [`unknown_names`], then where libseccomp's filter would not enforce the profile
/// ([`runc_unenforced`], [`libseccomp_reload_warnings`], [`truncated_constants`]).
pub fn profile_warnings(resolved: &Resolved) -> Vec<policy::Warning> {
    let mut warnings = resolved.warnings.clone();
    warnings.extend(unknown_names(resolved));
    warnings.extend(unsupported_arches(resolved));
    warnings.extend(lowering_warnings(resolved));
    warnings
}

/// What lowering the profile as libseccomp does shows: that runc refuses it for its arches'
/// byte orders ([`runc_refuses_byte_order`]), where libseccomp's filter would not enforce it
/// ([`runc_unenforced`], [`multiplexed_conditions`]), where it decides otherwise than the
/// rules ([`libseccomp_reload_warnings`]) and the constants 32-bit ABIs compare by their low
/// half ([`truncated_constants`]). Errors when the profile was resolved with
/// [`policy::ResolveOptions::strict`] ([`compile`] refuses it), as `--strict` makes them.
pub fn lowering_warnings(resolved: &Resolved) -> Vec<policy::Warning> {
    let mut warnings: Vec<policy::Warning> =
        runc_refuses_byte_order(resolved).into_iter().collect();
    warnings.extend(runc_unenforced(resolved));
    warnings.extend(libseccomp_reload_warnings(resolved));
    warnings.extend(truncated_constants(resolved));
    warnings.extend(multiplexed_conditions(resolved));
    warnings
}

/// One warning for the architectures the profile names that secopt has no syscall table for
/// ([`Resolved::unsupported_arches`], refused with [`policy::ResolveOptions::strict`]): the
/// filter does not cover them, so their calls get the bad-arch action, where runc's filter
/// would decide them by the rules.
pub fn unsupported_arches(resolved: &Resolved) -> Option<policy::Warning> {
    (!resolved.unsupported_arches.is_empty()).then(|| policy::Warning {
        kind: policy::WarningKind::UnknownName,
        path: "$".to_string(),
        message: format!(
            "not covered (secopt has no syscall table): {}; their calls get the bad-arch action \
             ({}), where runc's filter decides them by the rules",
            resolved.unsupported_arches.join(", "),
            resolved.bad_arch_action
        ),
    })
}

/// One warning per socket or IPC call whose rules have argument conditions, on the arches
/// where libseccomp multiplexes it (`socketcall(2)`, `ipc(2)`; x86, s390x, …): there it
/// applies the rule to the multiplexer, whose second argument points to the call's own
/// arguments in memory, out of a filter's reach. A condition on argument 0 is replaced by
/// `arg0 == call`, so every call through the multiplexer matches it whatever the real
/// argument 0 (Docker's `socket` rules for domains other than `AF_VSOCK`: on x86,
/// `socketcall(SYS_SOCKET, …)` is allowed for every domain); conditions on the other
/// arguments test the multiplexer's own registers. The filter decides as libseccomp's does
/// (the lowering reproduces it); the warning says the profile's conditions do not hold there.
pub fn multiplexed_conditions(resolved: &Resolved) -> Vec<policy::Warning> {
    /// What is said of one name: where, through what, and which conditions.
    struct Multiplexed {
        name: &'static str,
        arches: Vec<Arch>,
        mux: &'static str,
        call: u64,
        /// The first rule with conditions: the warning's place.
        origin: String,
        action: Action,
        on_arg0: bool,
        on_others: bool,
    }
    if resolved.dialect != Dialect::Libseccomp {
        return Vec::new();
    }
    let mut found: Vec<Multiplexed> = Vec::new();
    for arch in &resolved.arches {
        for (name, (mux, call), rules) in arch.multiplexed_rules() {
            let Some(first) = rules.iter().find(|r| !r.conditions.is_empty()) else {
                continue;
            };
            if let Some(known) = found.iter_mut().find(|m| m.name == name) {
                known.arches.push(arch.arch);
                continue;
            }
            let on = |arg0: bool| {
                rules
                    .iter()
                    .flat_map(|r| &r.conditions)
                    .any(|c| (c.index == 0) == arg0)
            };
            found.push(Multiplexed {
                name,
                arches: vec![arch.arch],
                mux,
                call,
                origin: first.origin.to_string(),
                action: first.action,
                on_arg0: on(true),
                on_others: on(false),
            });
        }
    }
    found
        .into_iter()
        .map(|m| {
            let Multiplexed {
                name, mux, call, ..
            } = m;
            let arches: Vec<String> = m.arches.iter().map(|a| a.to_string()).collect();
            let mut what = Vec::new();
            if m.on_arg0 {
                what.push(format!(
                    "their conditions on args[0] become `args[0] == {call}` (the call \
                     number), so every `{name}` call made through {mux} matches them \
                     whatever its own args[0]"
                ));
            }
            if m.on_others {
                what.push(format!(
                    "their conditions on the other arguments test {mux}'s own registers \
                     (args[1] is the address of `{name}`'s arguments), not `{name}`'s"
                ));
            }
            policy::Warning {
                kind: policy::WarningKind::NotEnforced,
                path: m.origin,
                message: format!(
                    "on {}, libseccomp (what runc and crun load) applies the rules for `{name}` \
                     (this one: {}) to calls made through {mux}(2) too, whose arguments are in \
                     memory, out of a filter's reach: {}. secopt's filter decides as \
                     libseccomp's does",
                    arches.join(", "),
                    m.action,
                    what.join("; and ")
                ),
            }
        })
        .collect()
}

/// One warning per syscall name no architecture secopt knows has (a misspelling such as
/// `ptrase`, or a name newer than the syscall table in use), at the first rule naming it:
/// runc skips such a name, so a deny rule for it denies nothing. Names of another
/// architecture only (`chown32` in an x86_64 filter) are expected in multi-arch profiles and
/// left to [`ArchInfo::unknown`].
pub fn unknown_names(resolved: &Resolved) -> Vec<policy::Warning> {
    names_no_arch_has(resolved)
        .into_iter()
        .map(|(name, origin)| policy::Warning {
            path: origin.map_or_else(|| resolved.source.clone(), str::to_string),
            // A name secopt's own tables know is no misspelling: the table in use
            // (`SyscallResolver::libseccomp`, an older library) is older than the name.
            message: if Arch::any_has_syscall(name) {
                format!(
                    "`{}` is a syscall secopt's own tables (Linux 6.18) know but the syscall \
                     table in use does not: its rule is skipped for it, as runc linked with \
                     that table skips it",
                    policy::printable(name)
                )
            } else {
                format!(
                    "`{}` is no syscall of any architecture secopt knows: its rule is \
                     skipped for it, as runc skips it (a misspelling?)",
                    policy::printable(name)
                )
            },
            kind: policy::WarningKind::UnknownName,
        })
        .collect()
}

/// The names of [`NEWER_THAN_LIBSECCOMP_2_5_5`] that matter to `resolved`'s filter: some arch
/// has rules for the name, or the name is that arch's highest (runc's ENOSYS threshold). runc
/// linked with libseccomp 2.5.5 or older skips those names, so its filter differs from one
/// resolved with secopt's tables there.
pub fn names_runc_may_skip(resolved: &Resolved) -> Vec<&'static str> {
    NEWER_THAN_LIBSECCOMP_2_5_5
        .iter()
        .copied()
        .filter(|name| {
            resolved.arches.iter().any(|a| {
                a.arch
                    .syscalls()
                    .nr(name)
                    .is_some_and(|nr| a.syscalls.contains_key(&nr) || a.highest_named == Some(nr))
            })
        })
        .collect()
}

/// Each syscall name no architecture secopt knows has, once, with the place of the first
/// rule naming it (`$.syscalls[3]`): what [`unknown_names`] warns about, and what the CLI
/// looks for typos in.
pub fn names_no_arch_has(resolved: &Resolved) -> Vec<(&str, Option<&str>)> {
    let libseccomp = resolved.dialect == Dialect::Libseccomp;
    let mut found: Vec<(&str, Option<&str>)> = Vec::new();
    for a in &resolved.arches {
        for name in a.unnumbered_names(libseccomp).nowhere {
            if found.iter().any(|(seen, _)| *seen == name) {
                continue;
            }
            let origin = a.unknown_first_named.get(name).map(|o| &**o);
            found.push((name, origin));
        }
    }
    found
}

/// Conditions whose constant is 2^32 or more, on the arches where libseccomp compares
/// only the low word of each argument (x86, x32, arm, the MIPS 32-bit ABIs, …:
/// [`compares_low_words_only`]): there `args[0] == 0x1_0000_0000` is `args[0] == 0`, which
/// is what runc's filter and secopt's decide, and almost never what the profile meant. One
/// warning per rule and condition, naming the arches. Empty outside libseccomp's dialect
/// (the Firecracker dialects' `dword`s are warned about as the file is read).
pub fn truncated_constants(resolved: &Resolved) -> Vec<policy::Warning> {
    if resolved.dialect != policy::Dialect::Libseccomp {
        return Vec::new();
    }
    let mut found: Vec<(std::sync::Arc<str>, policy::ArgCondition, Vec<Arch>)> = Vec::new();
    for a in resolved
        .arches
        .iter()
        .filter(|a| compares_low_words_only(a.arch))
    {
        let rules = a
            .syscalls
            .values()
            .chain(a.unknown_rules.values())
            .flatten();
        for rule in rules {
            for c in &rule.conditions {
                // A mask's high bits alone change nothing where the argument's high half is 0.
                let compared = match c.op {
                    policy::CmpOp::MaskedEq(mask) => c.value & mask,
                    _ => c.value,
                };
                if c.width != policy::ArgWidth::Qword || compared <= 0xFFFF_FFFF {
                    continue;
                }
                match found
                    .iter_mut()
                    .find(|(o, fc, _)| *o == rule.origin && fc == c)
                {
                    Some((_, _, arches)) if !arches.contains(&a.arch) => arches.push(a.arch),
                    Some(_) => {}
                    None => found.push((rule.origin.clone(), *c, vec![a.arch])),
                }
            }
        }
    }
    found
        .into_iter()
        .map(|(origin, c, arches)| {
            let names: Vec<String> = arches.iter().map(|a| a.to_string()).collect();
            let what = match c.op {
                policy::CmpOp::MaskedEq(mask) => format!(
                    "the mask {mask:#x} and value {:#x} are read as {:#x} and {:#x}",
                    c.value,
                    mask & 0xFFFF_FFFF,
                    c.value & mask & 0xFFFF_FFFF
                ),
                _ => format!("{:#x} is read as {:#x}", c.value, c.value & 0xFFFF_FFFF),
            };
            policy::Warning {
                kind: policy::WarningKind::NotEnforced,
                path: origin.to_string(),
                message: format!(
                    "on {} (32-bit ABIs to libseccomp) libseccomp compares args[{}] by its low \
                     32 bits, and so do runc's filter and secopt's: {what}",
                    names.join(" and "),
                    c.index
                ),
            }
        })
        .collect()
}

/// Whether runc refuses to start a container with this profile because its architectures
/// mix byte orders: libseccomp keeps one byte order per filter, and `seccomp_arch_add` of an
/// arch whose order is not the native one's fails with `EDOM` (runc: "error adding
/// architecture to seccomp filter"), so runc loads nothing. secopt's own filter has every
/// arch (each compared in its own order); this warning ([`RuntimeRefuses`]) is for who also
/// runs the profile with runc. The arches are the ones runc loads
/// ([`Resolved::arches_as_runc_loads`]), and the big-endian ones libseccomp 2.5 knows that
/// secopt has no table for (s390, parisc, parisc64) count too.
///
/// [`RuntimeRefuses`]: policy::WarningKind::RuntimeRefuses
pub fn runc_refuses_byte_order(resolved: &Resolved) -> Option<policy::Warning> {
    let native = resolved.native;
    let big = |endian| endian == crate::arch::Endian::Big;
    let other_order = runc_arches(resolved)
        .iter()
        .map(|a| a.arch)
        .find(|a| a.endian() != native.endian())
        .map(Arch::name)
        .or_else(|| {
            let unsupported = &resolved.unsupported_arches;
            (!big(native.endian()))
                .then(|| {
                    ["s390", "parisc", "parisc64"]
                        .into_iter()
                        .find(|b| unsupported.iter().any(|n| n == b))
                })
                .flatten()
        })?;
    let order = |is_big| if is_big { "big" } else { "little" };
    Some(policy::Warning {
        path: "$".to_string(),
        message: format!(
            "architecture {other_order}: runc refuses to start the container on a {} host: \
             libseccomp keeps one byte order per filter, and {other_order} is {}-endian where \
             {} is {}-endian (seccomp_arch_add fails with EDOM)",
            native.name(),
            order(!big(native.endian())),
            native.name(),
            order(big(native.endian())),
        ),
        kind: policy::WarningKind::RuntimeRefuses,
    })
}

/// Where the filter libseccomp generates for the profile — its linear layout, what runc,
/// crun and Firecracker's compiler since 1.11 load; libseccomp 2.5 and 2.6 alike — does not
/// enforce it: the arch blocks it generates without loading the syscall number, so that
/// every call of those arches gets the default action. It happens when the rule libseccomp
/// orders first in a block is for a name the arch lacks (see
/// `lower::blocks_libseccomp_leaves_without_the_syscall_load`). secopt's own filters decide
/// as the profile says; these warnings are for who also loads the profile with those tools.
/// Each is at the first rule of that name. Empty outside libseccomp's dialect. It is of the
/// profile's own architectures ([`Resolved::arches_as_runc_loads`]) where
/// [`ResolveOptions::arches`](crate::policy::ResolveOptions::arches) replaced them: runc loads
/// those. Where it
/// depends on a name that libseccomp up to 2.5.5 does not know
/// ([`NEWER_THAN_LIBSECCOMP_2_5_5`]), the warning says for which versions it holds.
pub fn runc_unenforced(resolved: &Resolved) -> Vec<policy::Warning> {
    let (arches, dialect) = (runc_arches(resolved), resolved.dialect);
    let newest = lower::blocks_libseccomp_leaves_without_the_syscall_load(arches, dialect, &[]);
    if newest.is_empty() {
        return Vec::new();
    }
    let older = lower::blocks_libseccomp_leaves_without_the_syscall_load(
        arches,
        dialect,
        &NEWER_THAN_LIBSECCOMP_2_5_5,
    );
    let quoted = |names: &[(String, std::sync::Arc<str>)]| {
        let list: Vec<String> = names.iter().map(|(n, _)| format!("`{n}`")).collect();
        match list.as_slice() {
            [one] => one.clone(),
            more => format!("one of {}", more.join(", ")),
        }
    };
    newest
        .into_iter()
        .map(|block| {
            let arches = block
                .arches
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(" and ");
            let also_older = older.iter().find(|b| b.arches == block.arches);
            let versions = match also_older {
                Some(old) if old.first == block.first => String::new(),
                Some(old) => format!(
                    " (with libseccomp 2.5.5 or older, which do not know {}: {}, which {} lacks)",
                    quoted(&block.first),
                    quoted(&old.first),
                    old.lacking
                ),
                None => format!(
                    " (with a libseccomp that knows {}: 2.5.5 and older do not, skip its rule, \
                     and their filter loads the number)",
                    quoted(&block.first)
                ),
            };
            let x32 = if block.arches.contains(&Arch::X32) && block.arches.contains(&Arch::X86_64) {
                ", or leave SCMP_ARCH_X32 out of `architectures` (x86_64 alone loads it)"
            } else {
                ""
            };
            policy::Warning {
                kind: policy::WarningKind::NotEnforced,
                path: block.first[0].1.to_string(),
                message: format!(
                    "libseccomp's filter (what runc, crun and Firecracker's compiler since 1.11 \
                     load) will not enforce this profile on {arches}: its linear layout never \
                     loads the syscall number there, because the rule it puts first is for \
                     {}, which {} lacks{versions}, and which it leaves out of the filter with \
                     the load; every {arches} call then gets the default action ({}) under \
                     those tools. secopt's filter decides as the profile says. For them to \
                     enforce it: give a syscall {arches} ha{} a rule without conditions and \
                     with another action than the default{x32}",
                    quoted(&block.first),
                    block.lacking,
                    ret_val(resolved.default_action),
                    if block.arches.len() == 1 { "s" } else { "ve" },
                ),
            }
        })
        .collect()
}

/// A syscall whose filter, as libseccomp's BPF generator makes it, tests an argument word
/// it has not loaded: its generator misses an accumulator reload where a test is reached by
/// falling through from a nested one (docs/kernel-facts.md). secopt's filters decide as the
/// rule tree says (as libseccomp's own pseudo filter code prints it); whether libseccomp's
/// decides otherwise is for the verifier to say ([`libseccomp_reload_warnings`] turns these
/// into warnings).
#[derive(Debug, Clone)]
pub struct ReloadCase {
    pub arch: Arch,
    pub nr: u32,
    /// The syscall's name (the multiplexer's, `socketcall` or `ipc`, for rules it carries).
    pub syscall: String,
    /// The name the profile wrote the rule for, where a multiplexer carries it (`semtimedop`
    /// on x86's `ipc`).
    pub written_for: Option<String>,
    /// Where the syscall's first rule with conditions is.
    pub origin: std::sync::Arc<str>,
    /// The argument (index, high word?) a test of the rule tree means...
    pub meant: (u8, bool),
    /// ...and the one the generated code holds there instead.
    pub held: (u8, bool),
    /// The syscall's decision over its arguments, as the rule tree says and as libseccomp's
    /// generated code computes it; `None` if one does not fit in a program.
    pub programs: Option<(Program, Program)>,
}

impl ReloadCase {
    /// A word of this case's arch: `args[N]` on a 32-bit ABI (libseccomp compares only the
    /// low words there), else `the high/low word of args[N]`.
    pub fn word(&self, (index, high): (u8, bool)) -> String {
        if rules::compares_low_words_only(self.arch) {
            format!("args[{index}]")
        } else {
            format!(
                "the {} word of args[{index}]",
                if high { "high" } else { "low" }
            )
        }
    }
}

/// The syscalls where libseccomp's generated filter tests a word it has not loaded
/// ([`ReloadCase`]), of the profile as runc loads it (its own architectures where `--arch`
/// replaced them, as [`runc_unenforced`]). Empty outside libseccomp's dialect.
pub fn libseccomp_reload_cases(resolved: &Resolved) -> Vec<ReloadCase> {
    let (arches, dialect) = (runc_arches(resolved), resolved.dialect);
    let mut cases = lower::libseccomp_missed_reloads(arches, dialect, resolved.default_action);
    if !cases.is_empty() {
        // An arch whose block never loads the syscall number gets the default action for
        // every call there ([`runc_unenforced`] says so): its reloads are moot.
        let unloaded =
            lower::blocks_libseccomp_leaves_without_the_syscall_load(arches, dialect, &[]);
        cases.retain(|c| !unloaded.iter().any(|b| b.arches.contains(&c.arch)));
    }
    cases
}

/// The architectures of the profile as runc loads it: its own where `--arch` replaced them
/// ([`Resolved::arches_as_runc_loads`]).
fn runc_arches(resolved: &Resolved) -> &[policy::ResolvedArch] {
    resolved
        .arches_as_runc_loads
        .as_deref()
        .unwrap_or(&resolved.arches)
}

/// A program the kernel accepts, with its metadata. The only way to make one is
/// [`CompiledFilter::new`], which validates, so every emitted filter is a valid one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledFilter {
    program: Program,
    info: FilterInfo,
}

impl CompiledFilter {
    /// What the filter costs a workload with these `weights` (per `(arch token, nr)`; from a
    /// file, `bench::workload::parse_file(…)?.weights()?`): its size, the syscalls the
    /// kernel may cache, the expected instructions per call with the allow cache of `kernel`
    /// and without any, and the longest path ([`optimize::stats`] over the filter's
    /// architectures).
    ///
    /// ```
    /// use secopt::arch::{Arch, KernelVersion};
    /// use secopt::compile::{compile_oci, CompileOptions};
    /// use secopt::optimize::Weights;
    /// use secopt::policy::ResolveOptions;
    /// let filter = compile_oci(
    ///     br#"{"defaultAction": "SCMP_ACT_ERRNO",
    ///          "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]}"#,
    ///     "p.json",
    ///     &ResolveOptions { native: Some(Arch::X86_64), ..Default::default() },
    ///     &CompileOptions::default(),
    /// ).unwrap();
    /// let mut weights = Weights::new();
    /// weights.add(Arch::X86_64.token(), 0, 1000.0).unwrap(); // read
    /// let stats = filter.stats(&weights, KernelVersion::new(6, 1));
    /// // A cacheable ALLOW: the kernel's cache answers it without the filter from then on.
    /// assert_eq!(stats.cost_with_cache, 0.0);
    /// assert!(stats.cost_without_cache >= 3.0); // at least: load arch, check it, load nr
    /// ```
    pub fn stats(&self, weights: &optimize::Weights, kernel: KernelVersion) -> ProgramStats {
        let arches: Vec<Arch> = self.info.arches.iter().map(|a| a.arch).collect();
        optimize::stats(&self.program, weights, &arches, kernel)
    }

    /// Checks `program` as the kernel would (size first, for a clear message) and wraps it.
    pub fn new(program: Program, info: FilterInfo) -> Result<CompiledFilter, CompileError> {
        if program.len() > BPF_MAXINSNS {
            return Err(CompileError::TooLarge {
                file: info.source.clone(),
                len: program.len(),
                reference: None,
            });
        }
        validate(&program).map_err(|error| CompileError::Invalid {
            file: info.source.clone(),
            error,
        })?;
        Ok(CompiledFilter { program, info })
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    pub fn info(&self) -> &FilterInfo {
        &self.info
    }

    pub fn into_program(self) -> Program {
        self.program
    }

    /// The raw filter in the byte order of the filter's native architecture
    /// ([`FilterInfo::native`]: [`policy::ResolveOptions::native`], by default this host's),
    /// what `seccomp(2)` on that machine takes: big-endian for s390x, ppc64 and mips, unlike
    /// [`Program::to_raw`], which is always little-endian (`self.program().to_raw()` is wrong
    /// for a big-endian machine).
    pub fn to_raw(&self) -> Vec<u8> {
        emit::raw_bytes(&self.program, self.info.native.endian())
    }
}

/// Lowers `resolved` to its reference program (see the module documentation), and optimizes
/// it when [`CompileOptions::optimize`] asks for it.
pub fn compile(
    resolved: &Resolved,
    options: &CompileOptions,
) -> Result<CompiledFilter, CompileError> {
    let program = reference_program(resolved, options)?;
    let info = FilterInfo::of(resolved, options);
    match &options.optimize {
        None => CompiledFilter::new(program, info),
        Some(opts) => Ok(optimize_reference(program, info, opts)?.0),
    }
}

/// Lowers `resolved` and optimizes the result with `opts` (ignoring
/// [`CompileOptions::optimize`]); also returns the optimizer's full result (its report, when
/// `opts.report` is set).
pub fn compile_optimized(
    resolved: &Resolved,
    options: &CompileOptions,
    opts: &OptimizeOptions,
) -> Result<(CompiledFilter, Optimized), CompileError> {
    let program = reference_program(resolved, options)?;
    optimize_reference(program, FilterInfo::of(resolved, options), opts)
}

/// The optimizer on a reference program, which may exceed the kernel's length limit (the
/// optimized form is what has to fit).
fn optimize_reference(
    reference: Program,
    mut info: FilterInfo,
    opts: &OptimizeOptions,
) -> Result<(CompiledFilter, Optimized), CompileError> {
    // Laid out for the machine the profile was resolved for, not the one compiling it (a
    // runtime building an aarch64 node's filter on x86_64), unless the caller said otherwise.
    let for_target;
    let opts = match opts.native {
        Some(_) => opts,
        None => {
            for_target = OptimizeOptions {
                native: Some(info.native),
                ..opts.clone()
            };
            &for_target
        }
    };
    let out = optimize::optimize(&reference, opts).map_err(|e| match e {
        OptimizeError::TooLarge { input, reached } => CompileError::TooLarge {
            file: info.source.clone(),
            len: reached.unwrap_or(input).min(input),
            reference: Some(input),
        },
        OptimizeError::Dropped {
            input,
            smallest,
            reasons,
        } => CompileError::Dropped {
            file: info.source.clone(),
            reference: input,
            smallest,
            reasons,
        },
        OptimizeError::PathBound {
            bound,
            shortest,
            input,
        } => CompileError::PathBound {
            file: info.source.clone(),
            bound,
            shortest,
            reference: input,
        },
        OptimizeError::Invalid(error) => CompileError::Invalid {
            file: info.source.clone(),
            error,
        },
    })?;
    info.optimization = Some(OptimizationInfo {
        reference_instructions: reference.len(),
        method: out.method,
        verified: out.verification == Verification::Equal,
        proof: out.proof,
        notes: out.notes.clone(),
    });
    let filter = CompiledFilter::new(out.program.clone(), info)?;
    Ok((filter, out))
}

/// The reference lowering of `resolved`: the meaning [`compile`]'s optimizer keeps, and what
/// `secopt verify` and `secopt diff` compare a profile by. Checked against the kernel's rules
/// for a program except its length limit, which it may exceed: a profile with a few thousand
/// argument values lowers to more than 4 096 instructions while its optimized filter fits,
/// and that filter is still compared with the profile's meaning. Not a filter to load
/// ([`compile`] gives one).
pub fn reference_lowering(
    resolved: &Resolved,
    options: &CompileOptions,
) -> Result<Program, CompileError> {
    let program = reference_program(resolved, options)?;
    crate::bpf::validate::validate_structure(&program).map_err(|error| CompileError::Invalid {
        file: resolved.source.clone(),
        error,
    })?;
    Ok(program)
}

/// The reference program, not yet validated (tests and [`compile`]).
fn reference_program(
    resolved: &Resolved,
    options: &CompileOptions,
) -> Result<Program, CompileError> {
    if resolved.strict {
        let warnings = lowering_warnings(resolved);
        if !warnings.is_empty() {
            return Err(PolicyError::Warnings {
                file: resolved.source.clone(),
                warnings,
            }
            .into());
        }
    }
    let mut b = builder::Builder::new();
    if options.runc_compat {
        let filter = b.label();
        runc::emit_enosys_stub(&mut b, resolved, filter);
        b.place(filter);
    }
    lower::emit_filter(&mut b, resolved, options)?;
    b.finish().map_err(|e| CompileError::Layout {
        file: resolved.source.clone(),
        message: format!("{e:?}"),
    })
}

/// Parses an OCI / Docker / podman profile, resolves it with `resolve` and compiles it:
/// the whole pipeline a runtime needs.
///
/// ```
/// use secopt::compile::{compile_oci, CompileOptions};
/// use secopt::policy::ResolveOptions;
/// use secopt::arch::Arch;
/// let filter = compile_oci(
///     br#"{"defaultAction": "SCMP_ACT_KILL_PROCESS", "syscalls": []}"#,
///     "deny.json",
///     &ResolveOptions { native: Some(Arch::Aarch64), ..Default::default() },
///     &CompileOptions::default(),
/// ).unwrap();
/// assert_eq!(filter.program().len(), 5); // ld arch; jeq; ld nr; ret default; ret bad arch
/// ```
pub fn compile_oci(
    profile: &[u8],
    source: &str,
    resolve: &policy::ResolveOptions,
    options: &CompileOptions,
) -> Result<CompiledFilter, CompileError> {
    let policy = policy::oci::parse(profile, source)?;
    let resolved = policy::resolve(&policy, resolve)?;
    compile(&resolved, options)
}

/// Parses a Firecracker seccompiler file for `firecracker.arch` and compiles one filter per
/// thread kind (sorted by name). An error names the thread it comes from (`fc.json (thread
/// vcpu): the filter has …`). For Firecracker's own filter file, pass the result to
/// [`emit_thread_filters`] with the [`Encoding`] Firecracker reads.
pub fn compile_firecracker(
    profile: &[u8],
    source: &str,
    firecracker: &policy::firecracker::FirecrackerOptions,
    options: &CompileOptions,
) -> Result<Vec<(String, CompiledFilter)>, CompileError> {
    resolve_firecracker(profile, source, firecracker)?
        .into_iter()
        .map(|(thread, resolved)| {
            let filter = compile_thread(&thread, resolved, options)?;
            Ok((thread, filter))
        })
        .collect()
}

/// [`compile_firecracker`] for the one thread kind named `thread` (`vmm`, `api`, `vcpu`):
/// [`CompileError::NoThread`] when the file has no such thread.
///
/// ```
/// use secopt::arch::Arch;
/// use secopt::compile::{compile_firecracker_thread, CompileOptions, FirecrackerOptions};
/// let file = br#"{"vcpu": {"default_action": "trap", "filter_action": "allow",
///     "filter": [{"syscall": "ioctl"}, {"syscall": "futex"}]}}"#;
/// let vcpu = compile_firecracker_thread(
///     file,
///     "fc.json",
///     &FirecrackerOptions::new(Arch::X86_64),
///     "vcpu",
///     &CompileOptions::default(),
/// )
/// .unwrap();
/// assert_eq!(vcpu.info().thread.as_deref(), Some("vcpu"));
/// ```
pub fn compile_firecracker_thread(
    profile: &[u8],
    source: &str,
    firecracker: &policy::firecracker::FirecrackerOptions,
    thread: &str,
    options: &CompileOptions,
) -> Result<CompiledFilter, CompileError> {
    let mut threads = resolve_firecracker(profile, source, firecracker)?;
    match threads.iter().position(|(t, _)| t == thread) {
        Some(i) => {
            let (thread, resolved) = threads.swap_remove(i);
            compile_thread(&thread, resolved, options)
        }
        None => Err(CompileError::NoThread {
            file: source.to_string(),
            thread: thread.to_string(),
            threads: threads.into_iter().map(|(t, _)| t).collect(),
        }),
    }
}

/// One thread's filter: its messages name the thread, its metadata the file and the thread.
fn compile_thread(
    thread: &str,
    mut resolved: Resolved,
    options: &CompileOptions,
) -> Result<CompiledFilter, CompileError> {
    let labelled = format!("{} (thread {thread})", resolved.source);
    let file = std::mem::replace(&mut resolved.source, labelled);
    let program = reference_program(&resolved, options)?;
    let mut info = FilterInfo::of(&resolved, options);
    info.thread = Some(thread.to_string());
    let mut filter = match &options.optimize {
        None => CompiledFilter::new(program, info)?,
        Some(opts) => optimize_reference(program, info, opts)?.0,
    };
    filter.info.source = file;
    Ok(filter)
}

/// Each thread of a Firecracker seccompiler file (sorted by name), parsed for
/// `firecracker.arch` and resolved: what [`compile_firecracker`] builds from, and with
/// [`reference_lowering`] what `secopt verify` compares a Firecracker file by. Each
/// [`Resolved::warnings`](policy::Resolved::warnings) holds its thread's warnings.
pub fn resolve_firecracker(
    profile: &[u8],
    source: &str,
    firecracker: &policy::firecracker::FirecrackerOptions,
) -> Result<Vec<(String, Resolved)>, CompileError> {
    let policies = policy::firecracker::parse_with(profile, source, firecracker)?;
    let resolve = policy::ResolveOptions {
        native: Some(firecracker.arch),
        ..Default::default()
    };
    policies
        .into_iter()
        .map(|(thread, policy)| Ok((thread, policy::resolve(&policy, &resolve)?)))
        .collect()
}

#[cfg(test)]
mod tests;
