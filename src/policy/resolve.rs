//! Resolution: from a [`Policy`] to syscall numbers per architecture, for one host and one
//! container (native arch, capabilities, kernel version).

use super::model::{
    Action, ArchRef, Architectures, ArgCondition, CapSet, Dialect, FilterFlag, KernelVersion,
    Policy, Rule, Warning, WarningKind,
};
use super::PolicyError;
use crate::arch::Arch;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

/// Maps a syscall name to its number on an architecture (as in `seccomp_data.nr`).
///
/// The default uses secopt's own tables ([`Arch::syscalls`], Linux 6.18). A test that
/// compares with a particular libseccomp can plug in that library's table instead, since
/// runc skips names its libseccomp does not know.
#[derive(Clone)]
pub struct SyscallResolver(Arc<LookupFn>);

type LookupFn = dyn Fn(Arch, &str) -> Option<u32> + Send + Sync;

impl SyscallResolver {
    pub fn new(lookup: impl Fn(Arch, &str) -> Option<u32> + Send + Sync + 'static) -> Self {
        SyscallResolver(Arc::new(lookup))
    }

    /// secopt's built-in tables.
    pub fn tables() -> Self {
        SyscallResolver::new(|arch, name| arch.syscalls().nr(name))
    }

    pub fn lookup(&self, arch: Arch, name: &str) -> Option<u32> {
        (self.0)(arch, name)
    }

    /// The table of the libseccomp this secopt is linked with: what runc, linked with the
    /// same library, resolves. A name libseccomp does not know on an arch (it answers
    /// with an error, or with a pseudo-number at or below -10000) is unknown there.
    /// libseccomp's multiplexed socket and IPC pseudo-numbers (-101…-120, -201…-224) stand
    /// for the direct syscall where the arch has one; its number comes from secopt's table
    /// (tests/syscall_tables.rs checks the two agree), otherwise the name is unknown and
    /// reached only through the multiplexer ([`ResolvedArch::multiplexer`]).
    #[cfg(feature = "libseccomp")]
    pub fn libseccomp() -> Self {
        SyscallResolver::new(|arch, name| {
            let nr = i32::from(
                libseccomp::ScmpSyscall::from_name_by_arch(name, arch.libseccomp()).ok()?,
            );
            if nr >= 0 {
                u32::try_from(nr).ok()
            } else if (-120..=-101).contains(&nr) || (-224..=-201).contains(&nr) {
                arch.syscalls().nr(name)
            } else {
                None
            }
        })
    }

    /// The version of the linked libseccomp (`2.5.4`), for messages.
    #[cfg(feature = "libseccomp")]
    pub fn libseccomp_version() -> String {
        libseccomp::ScmpVersion::current()
            .map(|v| format!("{}.{}.{}", v.major, v.minor, v.micro))
            .unwrap_or_else(|_| "(unknown version)".into())
    }
}

impl fmt::Debug for SyscallResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SyscallResolver(..)")
    }
}

/// What to resolve a policy for.
#[derive(Debug, Clone, Default)]
pub struct ResolveOptions {
    /// The native architecture: the one `includes.arches`/`excludes.arches` are matched
    /// against and whose `archMap` entry is used. `None`: the host's.
    pub native: Option<Arch>,
    /// Replaces the policy's own architecture set when given (which arches the filter covers;
    /// whether each is *listed*, for runc's stub, stays the policy's on `native`).
    pub arches: Option<Vec<Arch>>,
    /// The container's capabilities (default: Docker's 14).
    pub caps: CapSet,
    /// The kernel version `minKernel` is compared with. `None`: the running kernel, asked
    /// only if some rule has a `minKernel`.
    pub kernel: Option<KernelVersion>,
    /// Turn syscall names no architecture has (a misspelling; with a [`resolver`](Self::resolver),
    /// also a name secopt knows for the arch and the resolver does not:
    /// [`PolicyError::UnknownSyscalls`]) and architectures without a table into errors
    /// instead of skipping them (runc skips unknown names; a name of another architecture
    /// only, `chown32` in an x86_64 filter, stays skipped: multi-arch profiles list them on
    /// purpose), and the profile's warnings
    /// ([`Policy::warnings`]: an unknown field such as a misspelt `args`, which would leave a
    /// rule unconditional, …) into an error ([`PolicyError::Warnings`]).
    pub strict: bool,
    /// Syscall name lookup; `None`: secopt's tables.
    pub resolver: Option<SyscallResolver>,
}

/// One rule of a resolved syscall.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedRule {
    pub action: Action,
    /// A conjunction; empty means "always".
    pub conditions: Vec<ArgCondition>,
    /// JSON path of the profile entry (or condition) the rule comes from.
    pub origin: std::sync::Arc<str>,
    /// Position among the policy's rules (one per name and condition group): the order in
    /// which runc adds rules to libseccomp, whose merging of overlapping rules depends on
    /// it. Several names of one profile entry share an `origin` but not a `seq`.
    pub seq: usize,
}

/// A rule `includes`/`excludes` left out for this host and container, with why: what
/// `secopt exec --denials` says of a call the profile names but whose rule did not apply
/// (Docker's `clone` with namespace flags is allowed only with `CAP_SYS_ADMIN`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExcludedRule {
    pub syscall: String,
    pub action: Action,
    /// The rule's conditions (empty: it would decide every call of the syscall).
    pub conditions: Vec<ArgCondition>,
    /// JSON path of the profile entry.
    pub origin: std::sync::Arc<str>,
    /// Why; it displays as a phrase naming the profile's field: `needs CAP_SYS_ADMIN
    /// (includes.caps)`.
    pub why: Exclusion,
}

/// Why `includes`/`excludes` left a rule out, in moby's order (`setupSeccomp`: excludes
/// first, then includes). Kept as data and written only when shown: every compile resolves,
/// few callers ask why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Exclusion {
    /// `excludes.arches` names the native arch.
    ExcludedOn(ArchRef),
    /// `excludes.caps` names a capability the container has.
    ExcludedWith(String),
    /// `excludes.minKernel` is at or below the kernel.
    ExcludedFrom {
        min: KernelVersion,
        kernel: KernelVersion,
    },
    /// `includes.arches` does not name the native arch.
    OnlyOn(Vec<ArchRef>),
    /// `includes.caps` names capabilities the container lacks (these).
    Needs(Vec<String>),
    /// `includes.minKernel` is above the kernel.
    NeedsKernel {
        min: KernelVersion,
        kernel: KernelVersion,
    },
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An arch as the profile names it: the runtimes' name for the host (`amd64`), or a
        // spelling no host has (`"x86_64"`, which the profile's reader warned about).
        let shown = |a: &ArchRef| match a {
            ArchRef::Unsupported(spelling) => format!("{spelling:?} (no host's name)"),
            supported => super::names::host_arch_name(*supported)
                .map_or_else(|| supported.to_string(), str::to_string),
        };
        match self {
            Exclusion::ExcludedOn(arch) => {
                write!(f, "excluded on {} (excludes.arches)", shown(arch))
            }
            Exclusion::ExcludedWith(cap) => write!(f, "excluded with {cap} (excludes.caps)"),
            Exclusion::ExcludedFrom { min, kernel } => write!(
                f,
                "excluded from kernel {min} (excludes.minKernel, checked against {kernel})"
            ),
            Exclusion::OnlyOn(arches) => {
                let only: Vec<String> = arches.iter().map(shown).collect();
                write!(f, "only on {} (includes.arches)", only.join(", "))
            }
            Exclusion::Needs(caps) => write!(f, "needs {} (includes.caps)", caps.join(" and ")),
            Exclusion::NeedsKernel { min, kernel } => write!(
                f,
                "needs kernel {min} (includes.minKernel, checked against {kernel})"
            ),
        }
    }
}

/// The rules for one architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedArch {
    pub arch: Arch,
    /// Syscall number → its rules in profile order. How overlapping rules combine is the
    /// policy's [`Dialect`]'s business (the lowering reproduces it). Rules whose action is
    /// the default action are left out, as runc does.
    pub syscalls: BTreeMap<u32, Vec<ResolvedRule>>,
    /// Names used by applicable rules that this arch has no syscall number for (sorted).
    /// runc skips them, except the socket and SysV IPC calls that libseccomp reaches through
    /// `socketcall(2)`/`ipc(2)` on this arch ([`ResolvedArch::multiplexer`]), such as `recv`
    /// or `semop` on x86: their rules are in [`unknown_rules`](Self::unknown_rules).
    pub unknown: Vec<String>,
    /// The rules of the names in `unknown` (left out as the default's are), by name, in
    /// profile order: the lowering applies the multiplexed ones as libseccomp does.
    pub unknown_rules: BTreeMap<String, Vec<ResolvedRule>>,
    /// Where each name of `unknown` is first named: the first applicable rule naming it,
    /// whatever its action (`$.syscalls[3]`), as warnings and `--strict`'s error place it.
    #[serde(skip)]
    pub unknown_first_named: BTreeMap<String, Arc<str>>,
    /// The highest syscall number named by any applicable rule on this arch, counting rules
    /// left out for equalling the default, as runc's ENOSYS stub computes it
    /// (libcontainer/seccomp/patchbpf/enosys_linux.go `findLastSyscalls`). In the libseccomp
    /// dialect the multiplexed socket and IPC calls never count on the arches that
    /// multiplex them: libseccomp resolves their names to negative pseudo-numbers there
    /// (src/syscalls.c `abi_syscall_resolve_name_munge`), which runc's `sysno >
    /// largestSyscall` never takes, even where a direct syscall exists (`socket`, 359 on x86).
    pub highest_named: Option<u32>,
    /// Whether the profile itself lists this arch: in OCI `architectures`, through moby's
    /// `archMap` (moby writes the native arch and its sub-architectures into the OCI
    /// config), or by the caller's explicit arch set. runc's ENOSYS stub covers only these
    /// (`findLastSyscalls` loops over the config's `Architectures`); the native arch is in
    /// every libseccomp filter but, when not listed, gets no stub section.
    pub listed: bool,
}

/// The `call` argument of `socketcall(2)` for each socket syscall (include/uapi/linux/net.h).
const SOCKETCALL: [(&str, u64); 20] = [
    ("socket", 1),
    ("bind", 2),
    ("connect", 3),
    ("listen", 4),
    ("accept", 5),
    ("getsockname", 6),
    ("getpeername", 7),
    ("socketpair", 8),
    ("send", 9),
    ("recv", 10),
    ("sendto", 11),
    ("recvfrom", 12),
    ("shutdown", 13),
    ("setsockopt", 14),
    ("getsockopt", 15),
    ("sendmsg", 16),
    ("recvmsg", 17),
    ("accept4", 18),
    ("recvmmsg", 19),
    ("sendmmsg", 20),
];

/// The `call` argument of `ipc(2)` for each SysV IPC syscall (include/uapi/linux/ipc.h).
const IPC: [(&str, u64); 12] = [
    ("semop", 1),
    ("semget", 2),
    ("semctl", 3),
    ("semtimedop", 4),
    ("msgsnd", 11),
    ("msgrcv", 12),
    ("msgget", 13),
    ("msgctl", 14),
    ("shmat", 21),
    ("shmdt", 22),
    ("shmget", 23),
    ("shmctl", 24),
];

/// The arches where libseccomp also reaches socket and SysV IPC calls through the
/// `socketcall`/`ipc` multiplexers (src/arch-*.c with `.rule_add = abi_rule_add`, the same
/// set in 2.5.4 and 2.6.1 apart from arches secopt does not support).
fn multiplexes(arch: Arch) -> bool {
    matches!(
        arch,
        Arch::X86
            | Arch::S390x
            | Arch::Ppc
            | Arch::Ppc64
            | Arch::Ppc64le
            | Arch::Mips
            | Arch::Mipsel
    )
}

impl ResolvedArch {
    /// Every name's rules: the numbered syscalls' (named by secopt's table for this arch)
    /// and those this arch has no number for ([`ResolvedArch::unknown_rules`]).
    pub fn rules_by_name(&self) -> impl Iterator<Item = (&str, &Vec<ResolvedRule>)> {
        let table = self.arch.syscalls();
        let numbered = self
            .syscalls
            .iter()
            .filter_map(move |(&nr, rules)| Some((table.name(nr)?, rules)));
        let unnumbered = self
            .unknown_rules
            .iter()
            .map(|(name, rules)| (name.as_str(), rules));
        numbered.chain(unnumbered)
    }

    /// Whether libseccomp multiplexes socket and IPC calls on this arch (`socketcall(2)`,
    /// `ipc(2)`; its arch backend has `abi_rule_add`).
    pub fn multiplexes(&self) -> bool {
        multiplexes(self.arch)
    }

    /// The multiplexer (`"socketcall"` or `"ipc"`) and its call number through which
    /// libseccomp also applies a rule for `name` on this arch, replacing any condition on
    /// argument 0 by `arg0 == call` (libseccomp src/syscalls.c `abi_rule_add`). `None` for
    /// other names and on arches that do not multiplex.
    pub fn multiplexer(&self, name: &str) -> Option<(&'static str, u64)> {
        if !multiplexes(self.arch) {
            return None;
        }
        let find = |table: &[(&str, u64)]| table.iter().find(|(n, _)| *n == name).map(|e| e.1);
        find(&SOCKETCALL)
            .map(|call| ("socketcall", call))
            .or_else(|| find(&IPC).map(|call| ("ipc", call)))
    }

    /// The rules libseccomp also applies through a multiplexer on this arch: each name
    /// [`multiplexer`](Self::multiplexer) maps, with its rules as
    /// [`rules_by_name`](Self::rules_by_name) gives them (numbered, or not), and its
    /// multiplexer and call number. Looked up from the thirty-odd multiplexed names rather
    /// than by testing every name of the profile (the lowering asks this several times).
    pub fn multiplexed_rules(
        &self,
    ) -> impl Iterator<Item = (&'static str, (&'static str, u64), &Vec<ResolvedRule>)> {
        let table = self.arch.syscalls();
        let names = multiplexes(self.arch)
            .then(|| {
                let socket = SOCKETCALL.iter().map(|&(n, c)| (n, ("socketcall", c)));
                socket.chain(IPC.iter().map(|&(n, c)| (n, ("ipc", c))))
            })
            .into_iter()
            .flatten();
        names.flat_map(move |(name, mux)| {
            // Where `rules_by_name` finds the name: under the number the table gives it (if
            // the table names that number so), and among the names without a number.
            let numbered = table
                .nr(name)
                .filter(|&nr| table.name(nr) == Some(name))
                .and_then(|nr| self.syscalls.get(&nr));
            let unnumbered = self.unknown_rules.get(name);
            numbered
                .into_iter()
                .chain(unnumbered)
                .map(move |rules| (name, mux, rules))
        })
    }

    /// Whether a rule for syscall `name` on this arch hands the call to a NOTIFY listener (the
    /// runtimes must not notify the calls they hand the listener over with).
    pub fn notifies(&self, name: &str) -> bool {
        self.arch
            .syscalls()
            .nr(name)
            .and_then(|nr| self.syscalls.get(&nr))
            .is_some_and(|rules| rules.iter().any(|r| r.action == Action::UserNotif))
    }

    /// Whether any rule on this arch (multiplexed socket and IPC calls included) notifies.
    pub fn has_notify(&self) -> bool {
        self.syscalls
            .values()
            .chain(self.unknown_rules.values())
            .flatten()
            .any(|r| r.action == Action::UserNotif)
    }

    /// Whether `name`, skipped here, is a syscall of another architecture (Docker's profiles
    /// list `chown32` and `_llseek` for arm and i386 on every arch): expected, not a typo.
    /// With a resolver other than secopt's tables, a name secopt knows for this arch is not
    /// (the resolver is older than the table or disagrees with it).
    pub fn is_other_arch_name(&self, name: &str) -> bool {
        self.arch.syscalls().nr(name).is_none() && Arch::any_has_syscall(name)
    }

    /// The profile's names this arch has no number for, sorted as a user is told of them:
    /// what `secopt compile` and `secopt exec` report. `multiplexed` only with `libseccomp`
    /// semantics (the dialect of OCI profiles), which applies them through `socketcall`/`ipc`.
    pub fn unnumbered_names(&self, libseccomp: bool) -> UnnumberedNames<'_> {
        let mut names = UnnumberedNames::default();
        for name in self.unknown.iter().map(String::as_str) {
            if libseccomp && self.multiplexer(name).is_some() {
                names.multiplexed.push(name);
            } else if self.is_other_arch_name(name) {
                names.other_arch.push(name);
            } else {
                names.nowhere.push(name);
            }
        }
        names
    }
}

/// [`ResolvedArch::unnumbered_names`].
#[derive(Debug, Default, PartialEq, Eq)]
pub struct UnnumberedNames<'a> {
    /// Another arch's syscalls (`chown32` on x86_64): expected in multi-arch profiles, skipped.
    pub other_arch: Vec<&'a str>,
    /// No table names them: a typo, or newer than the table in use; skipped, as runc does.
    pub nowhere: Vec<&'a str>,
    /// Not syscalls of this arch, but libseccomp applies their rules through
    /// `socketcall`/`ipc`: not skipped.
    pub multiplexed: Vec<&'a str>,
}

/// A policy resolved for one host and container: what the lowering consumes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    pub source: String,
    pub default_action: Action,
    pub bad_arch_action: Action,
    pub dialect: Dialect,
    pub flags: Option<Vec<FilterFlag>>,
    pub listener_path: Option<String>,
    pub listener_metadata: Option<String>,
    /// The native arch the policy was resolved for.
    pub native: Arch,
    /// The kernel version `minKernel` conditions were checked against, if any were.
    pub kernel: Option<KernelVersion>,
    /// The architectures the filter covers, native first (for OCI profiles).
    pub arches: Vec<ResolvedArch>,
    /// Architectures the profile names that secopt has no table for (skipped).
    pub unsupported_arches: Vec<String>,
    /// Rules left out by `includes`/`excludes` for this host and container, in profile order.
    pub excluded: Vec<ExcludedRule>,
    /// Applicable rules left out because their action is the default action.
    pub redundant_rules: usize,
    /// The profile's warnings ([`Policy::warnings`]: unknown fields, unknown capability
    /// names, …), carried along so that a caller holding only the compiled filter sees them;
    /// then the [`shadowed`](Self::shadowed) rules'.
    pub warnings: Vec<Warning>,
    /// Rules that never apply (an earlier rule without conditions decides their syscall with
    /// another action): warnings, errors with [`ResolveOptions::strict`].
    pub shadowed: Vec<Warning>,
    /// When [`ResolveOptions::arches`] replaced the profile's own architecture set: the
    /// profile's own set, resolved alike. It is what runc hands libseccomp whatever secopt
    /// compiles, so what `compile::runc_unenforced` says of runc's filter is said of it.
    /// `None` when the set was the profile's (or the same arches, in the same order), or
    /// resolving it failed.
    #[serde(skip)]
    pub arches_as_runc_loads: Option<Vec<ResolvedArch>>,
    /// Resolved with [`ResolveOptions::strict`]: the warnings the lowering finds (where
    /// libseccomp's filter would not enforce the profile, …) are errors too, and compiling
    /// refuses the profile.
    pub strict: bool,
}

impl Resolved {
    /// The rules for `arch`, if the filter covers it.
    pub fn arch(&self, arch: Arch) -> Option<&ResolvedArch> {
        self.arches.iter().find(|a| a.arch == arch)
    }
}

/// Resolves `policy` for the host and container described by `options`.
///
/// ```
/// use secopt::arch::Arch;
/// use secopt::policy::{self, CapSet, KernelVersion, ResolveOptions};
/// let profile = br#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
///     {"names": ["bpf"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_BPF"]}},
///     {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4.8"}}]}"#;
/// let policy = policy::oci::parse(profile, "p.json").unwrap();
/// let mut options = ResolveOptions {
///     native: Some(Arch::X86_64),
///     kernel: Some(KernelVersion::new(4, 4)),
///     ..Default::default()
/// };
/// assert!(policy::resolve(&policy, &options).unwrap().arches[0].syscalls.is_empty());
/// options.caps = CapSet::parse("default,bpf").unwrap();
/// options.kernel = Some(KernelVersion::new(6, 1));
/// assert_eq!(policy::resolve(&policy, &options).unwrap().arches[0].syscalls.len(), 2);
/// ```
pub fn resolve(policy: &Policy, options: &ResolveOptions) -> Result<Resolved, PolicyError> {
    let native = match options.native {
        Some(a) => a,
        None => Arch::host().ok_or_else(|| {
            PolicyError::InvalidOption(format!(
                "secopt has no syscall table for this host's architecture ({}); choose one",
                std::env::consts::ARCH
            ))
        })?,
    };

    let ArchSet {
        covered: arches,
        unsupported: unsupported_arches,
    } = arch_set(policy, options, native)?;
    // runc hands libseccomp the profile's own set whatever the caller's list: resolved again
    // below, only where the two differ.
    let own = options.arches.as_ref().map(|_| ResolveOptions {
        arches: None,
        ..options.clone()
    });
    let runc_loads_other_arches = own
        .as_ref()
        .is_some_and(|own| arch_set(policy, own, native).map_or(true, |set| set.covered != arches));
    let libseccomp = policy.dialect == Dialect::Libseccomp;

    let mut host = Host {
        native,
        caps: &options.caps,
        kernel: options.kernel,
        kernel_used: false,
    };
    let mut applicable: Vec<&Rule> = Vec::new();
    let mut excluded = Vec::new();
    for rule in &policy.rules {
        match host.exclusion(rule)? {
            None => applicable.push(rule),
            Some(why) => excluded.push(ExcludedRule {
                syscall: rule.syscall.clone(),
                action: rule.action,
                conditions: rule.conditions.clone(),
                origin: rule.origin.clone(),
                why,
            }),
        }
    }
    let redundant_rules = applicable
        .iter()
        .filter(|r| r.action == policy.default_action)
        .count();

    let tables = SyscallResolver::tables();
    let resolver = options.resolver.as_ref().unwrap_or(&tables);
    let mut resolved_arches = Vec::with_capacity(arches.len());
    for (arch, listed) in arches {
        let mut resolved = ResolvedArch {
            arch,
            syscalls: BTreeMap::new(),
            unknown: Vec::new(),
            unknown_rules: BTreeMap::new(),
            unknown_first_named: BTreeMap::new(),
            highest_named: None,
            listed,
        };
        let mut unknown: BTreeMap<String, Arc<str>> = BTreeMap::new();
        for (seq, rule) in applicable.iter().enumerate() {
            let nr = resolver.lookup(arch, &rule.syscall);
            let multiplexed = libseccomp && resolved.multiplexer(&rule.syscall).is_some();
            if !multiplexed {
                resolved.highest_named = resolved.highest_named.max(nr);
            }
            let list = match nr {
                Some(nr) => resolved.syscalls.entry(nr).or_default(),
                None => {
                    unknown
                        .entry(rule.syscall.clone())
                        .or_insert_with(|| rule.origin.clone());
                    resolved
                        .unknown_rules
                        .entry(rule.syscall.clone())
                        .or_default()
                }
            };
            if rule.action != policy.default_action {
                list.push(ResolvedRule {
                    action: rule.action,
                    conditions: rule.conditions.clone(),
                    origin: rule.origin.clone(),
                    seq,
                });
            }
        }
        // A name whose every rule equals the default leaves no entry behind.
        resolved.syscalls.retain(|_, rules| !rules.is_empty());
        resolved.unknown_rules.retain(|_, rules| !rules.is_empty());
        resolved.unknown = unknown.keys().cloned().collect();
        resolved.unknown_first_named = unknown;
        resolved_arches.push(resolved);
    }

    let mut shadowed = shadowed_rules(&resolved_arches, policy.dialect);
    let defaults: Vec<&Rule> = applicable
        .iter()
        .copied()
        .filter(|r| r.action == policy.default_action)
        .collect();
    shadowed.extend(exceptions_left_out(&resolved_arches, &defaults, resolver));
    if options.strict {
        strict_check(policy, &applicable, &resolved_arches, &shadowed)?;
    }
    let mut warnings = policy.warnings.clone();
    warnings.extend(shadowed.iter().cloned());
    // A list without the native arch is a filter that, loaded there, decides no call by the
    // profile (an empty list is refused above; the command line's native arch is the first
    // of its list, so only a library caller meets this).
    if let Some(list) = options.arches.as_ref().filter(|l| !l.contains(&native)) {
        let covered: Vec<&str> = list.iter().map(|a| a.name()).collect();
        warnings.push(Warning {
            path: "$".to_string(),
            message: format!(
                "the filter covers {} but not {native}, the native arch it is resolved for \
                 (`ResolveOptions::native`): loaded there, every call gets the bad-arch action \
                 ({})",
                covered.join(", "),
                policy.bad_arch_action
            ),
            kind: WarningKind::Suspicious,
        });
    }
    let arches_as_runc_loads = own
        .filter(|_| runc_loads_other_arches)
        .and_then(|own| resolve(policy, &own).ok())
        .map(|r| r.arches);

    Ok(Resolved {
        source: policy.source.clone(),
        default_action: policy.default_action,
        bad_arch_action: policy.bad_arch_action,
        dialect: policy.dialect,
        flags: policy.flags.clone(),
        listener_path: policy.listener_path.clone(),
        listener_metadata: policy.listener_metadata.clone(),
        native,
        kernel: host.kernel.filter(|_| host.kernel_used),
        arches: resolved_arches,
        unsupported_arches,
        excluded,
        redundant_rules,
        warnings,
        shadowed,
        arches_as_runc_loads,
        strict: options.strict,
    })
}

/// Strict resolution: every warning about the profile is an error, and so is a syscall name
/// an arch it covers does not have (names libseccomp reaches through a multiplexer are not
/// skipped, and names of other architectures are expected in multi-arch profiles: neither
/// counts). One error lists them all: the profile's warnings, a warning per unknown name at
/// the first rule naming it, the rules that never apply. With unknown names alone it is
/// [`PolicyError::UnknownSyscalls`], which lists them per arch.
fn strict_check(
    policy: &Policy,
    applicable: &[&Rule],
    arches: &[ResolvedArch],
    shadowed: &[Warning],
) -> Result<(), PolicyError> {
    let libseccomp = policy.dialect == Dialect::Libseccomp;
    let unknown: BTreeMap<Arch, Vec<String>> = arches
        .iter()
        .map(|a| {
            let skipped = a
                .unknown
                .iter()
                .filter(|n| !libseccomp || a.multiplexer(n).is_none())
                .filter(|n| !a.is_other_arch_name(n))
                .cloned()
                .collect::<Vec<_>>();
            (a.arch, skipped)
        })
        .filter(|(_, names)| !names.is_empty())
        .collect();
    // Each unknown name once, at the first rule naming it, with the arches that lack it.
    let mut places: Vec<(String, String, Vec<Arch>)> = Vec::new();
    for rule in applicable {
        let lacking: Vec<Arch> = unknown
            .iter()
            .filter(|(_, names)| names.contains(&rule.syscall))
            .map(|(&arch, _)| arch)
            .collect();
        if !lacking.is_empty() && !places.iter().any(|(name, ..)| *name == rule.syscall) {
            places.push((rule.syscall.clone(), rule.origin.to_string(), lacking));
        }
    }
    if policy.warnings.is_empty() && shadowed.is_empty() {
        if unknown.is_empty() {
            return Ok(());
        }
        return Err(PolicyError::UnknownSyscalls {
            file: policy.source.clone(),
            unknown,
            places: places
                .into_iter()
                .map(|(name, path, _)| (name, path))
                .collect(),
        });
    }
    let unknown_names = places.into_iter().map(|(name, path, lacking)| {
        let arches: Vec<&str> = lacking.iter().map(|a| a.name()).collect();
        Warning {
            path,
            message: format!(
                "`{}` is no syscall of {}: runc skips the name (a misspelling?)",
                super::name_listing(&[&name], 1, ""),
                arches.join(", ")
            ),
            kind: WarningKind::UnknownName,
        }
    });
    Err(PolicyError::Warnings {
        file: policy.source.clone(),
        warnings: policy
            .warnings
            .iter()
            .cloned()
            .chain(unknown_names)
            .chain(shadowed.iter().cloned())
            .collect(),
    })
}

/// Rules that never apply because of a rule without conditions for the same syscall, with
/// another action:
/// - a later rule: libseccomp keeps the first (a syscall whose rule has no conditions takes
///   no more rules), so runc drops it silently; the rust-vmm and Firecracker compilers stop
///   at the first rule that matches (there every rule has the filter's one action, so this
///   never fires);
/// - in libseccomp's dialect, an earlier rule with conditions: the rule without them
///   replaces the syscall's whole tree.
///
/// Names an arch reaches only through `socketcall`/`ipc` ([`ResolvedArch::unknown_rules`])
/// are checked as the others. One warning per rule, at its origin (not once per arch).
fn shadowed_rules(arches: &[ResolvedArch], dialect: Dialect) -> Vec<Warning> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for arch in arches {
        for (name, rules) in arch.rules_by_name() {
            let Some(first) = rules.iter().position(|r| r.conditions.is_empty()) else {
                continue;
            };
            let decided = &rules[first];
            let earlier = if dialect == Dialect::Libseccomp {
                &rules[..first]
            } else {
                &[]
            };
            for (rule, later) in earlier
                .iter()
                .map(|r| (r, false))
                .chain(rules[first + 1..].iter().map(|r| (r, true)))
            {
                // The same action: a rule with conditions then narrows nothing (the author
                // added `socket` for AF_UNIX and left `socket` in the allow list); a plain
                // repeat is harmless.
                if rule.action == decided.action {
                    if !rule.conditions.is_empty() && seen.insert(rule.seq) {
                        out.push(Warning {
                            path: rule.origin.to_string(),
                            message: format!(
                                "this {} rule for {name} has no effect: the rule at {} has no \
                                 conditions and gives every {name} call the same action, so \
                                 these conditions narrow nothing (to narrow {name}, remove \
                                 {name} from the rule at {})",
                                rule.action, decided.origin, decided.origin
                            ),
                            kind: WarningKind::NeverApplies,
                        });
                    }
                    continue;
                }
                if !seen.insert(rule.seq) {
                    continue;
                }
                let why = if later {
                    format!(
                        "the earlier rule at {} has no conditions and decides every {name} call \
                         first ({})",
                        decided.origin, decided.action
                    )
                } else {
                    format!(
                        "the later rule at {} has no conditions and replaces it, deciding every \
                         {name} call ({}), as libseccomp does",
                        decided.origin, decided.action
                    )
                };
                out.push(Warning {
                    path: rule.origin.to_string(),
                    message: format!("this {} rule for {name} never applies: {why}", rule.action),
                    kind: WarningKind::NeverApplies,
                });
            }
        }
    }
    out
}

/// Rules with the profile's default action for a syscall that another rule, without
/// conditions, gives another action: meant as an exception to that rule (`socket` allowed,
/// but not `socket(AF_NETLINK)`), they never apply. A rule with the default action is left
/// out of the filter (runc drops it before libseccomp sees it), so the other rule decides
/// every call. One warning per rule, at its origin.
fn exceptions_left_out(
    arches: &[ResolvedArch],
    defaults: &[&Rule],
    resolver: &SyscallResolver,
) -> Vec<Warning> {
    let mut out = Vec::new();
    for &rule in defaults {
        let decided = arches.iter().find_map(|arch| {
            let rules = match resolver.lookup(arch.arch, &rule.syscall) {
                Some(nr) => arch.syscalls.get(&nr),
                None => arch.unknown_rules.get(&rule.syscall),
            }?;
            rules.iter().find(|r| r.conditions.is_empty())
        });
        if let Some(decided) = decided {
            let name = &rule.syscall;
            out.push(Warning {
                path: rule.origin.to_string(),
                message: format!(
                    "this {} rule for {name} never applies: a rule with the default action \
                     is left out of the filter (runc drops it), so the rule at {}, which has \
                     no conditions, gives every {name} call {} (to except some calls, give \
                     that rule conditions that leave them out)",
                    rule.action, decided.origin, decided.action
                ),
                kind: WarningKind::NeverApplies,
            });
        }
    }
    out
}

/// The architectures the profile itself puts in the OCI config on `native`, each with whether
/// it is listed there (runc's stub covers listed arches only).
fn profile_arches(policy: &Policy, native: Arch) -> Vec<(ArchRef, bool)> {
    match &policy.architectures {
        Architectures::Exactly(list) => list
            .iter()
            .map(|&a| (ArchRef::Supported(a), true))
            .collect(),
        // libseccomp's filter always holds the native arch; the OCI config lists only what
        // the profile lists (runc libcontainer/specconv `SetupSeccomp`).
        Architectures::NativePlus(extra) => std::iter::once((ArchRef::Supported(native), false))
            .chain(extra.iter().map(|&a| (a, true)))
            .collect(),
        // moby (profiles/seccomp `setupSeccomp`) writes the native arch and its
        // sub-architectures into the OCI config when the map has an entry for it, and
        // nothing otherwise.
        Architectures::ArchMap(map) => {
            match map
                .iter()
                .find(|entry| entry.arch == ArchRef::Supported(native))
            {
                Some(entry) => std::iter::once((ArchRef::Supported(native), true))
                    .chain(entry.sub_arches.iter().map(|&a| (a, true)))
                    .collect(),
                None => vec![(ArchRef::Supported(native), false)],
            }
        }
    }
}

/// The architectures a filter covers.
struct ArchSet {
    /// Deduplicated, in order, each with whether the profile lists it (on the native arch).
    covered: Vec<(Arch, bool)>,
    /// The names of listed architectures secopt has no table for.
    unsupported: Vec<String>,
}

/// The architectures the filter covers for `policy` on `native`.
fn arch_set(
    policy: &Policy,
    options: &ResolveOptions,
    native: Arch,
) -> Result<ArchSet, PolicyError> {
    let profile_refs = profile_arches(policy, native);
    let refs: Vec<(ArchRef, bool)> = match &options.arches {
        // The caller's list decides which arches the filter covers; whether one is *listed*
        // (runc's stub covers it) is still the profile's: runc stubs what the config lists, and
        // `--arch x86_64` on an x86_64 host must not add a stub the profile does not get there.
        // No arch at all would be a filter that kills every call, whatever the profile says.
        Some(list) if list.is_empty() => {
            return Err(PolicyError::InvalidOption(
                "an empty list of architectures (`ResolveOptions::arches`): the filter would \
                 cover none and kill every system call; give at least one, or `None` for the \
                 profile's own"
                    .to_string(),
            ))
        }
        // An arch the profile lists and secopt has no table for cannot be in the caller's
        // list; it is still one the reference covers, so it is warned about (or refused
        // under `strict`) as it is without a list, not dropped in silence.
        Some(list) => list
            .iter()
            .map(|&a| {
                let listed = profile_refs
                    .iter()
                    .any(|(r, listed)| *listed && *r == ArchRef::Supported(a));
                (ArchRef::Supported(a), listed)
            })
            .chain(
                profile_refs
                    .iter()
                    .filter(|(r, _)| matches!(r, ArchRef::Unsupported(_)))
                    .cloned(),
            )
            .collect(),
        None => profile_refs,
    };
    let mut arches: Vec<(Arch, bool)> = Vec::new();
    let mut unsupported = Vec::new();
    for (r, listed) in refs {
        match r {
            ArchRef::Supported(a) => match arches.iter_mut().find(|(x, _)| *x == a) {
                Some(entry) => entry.1 |= listed,
                None => arches.push((a, listed)),
            },
            ArchRef::Unsupported(name) => {
                if options.strict {
                    return Err(PolicyError::UnsupportedArch {
                        file: policy.source.clone(),
                        arch: name.to_owned(),
                    });
                }
                if !unsupported.iter().any(|n| n == name) {
                    unsupported.push(name.to_owned());
                }
            }
        }
    }
    Ok(ArchSet {
        covered: arches,
        unsupported,
    })
}

/// The host and container facts `includes`/`excludes` are checked against.
struct Host<'a> {
    native: Arch,
    caps: &'a CapSet,
    kernel: Option<KernelVersion>,
    kernel_used: bool,
}

impl Host<'_> {
    fn kernel(&mut self) -> Result<KernelVersion, PolicyError> {
        self.kernel_used = true;
        match self.kernel {
            Some(k) => Ok(k),
            None => {
                let k = KernelVersion::running().map_err(|e| {
                    PolicyError::KernelVersion(format!(
                        "cannot read the running kernel's version: {e}"
                    ))
                })?;
                self.kernel = Some(k);
                Ok(k)
            }
        }
    }

    /// Why `rule` does not apply here, if it does not. moby profiles
    /// seccomp/seccomp_linux.go `setupSeccomp`: excludes first (any match drops), then
    /// includes (every listed condition must hold).
    fn exclusion(&mut self, rule: &Rule) -> Result<Option<Exclusion>, PolicyError> {
        let native = ArchRef::Supported(self.native);
        let ex = &rule.applies.excludes;
        if ex.arches.contains(&native) {
            return Ok(Some(Exclusion::ExcludedOn(native)));
        }
        if let Some(cap) = ex.caps.iter().find(|c| self.caps.contains(c)) {
            return Ok(Some(Exclusion::ExcludedWith(cap.clone())));
        }
        if let Some(min) = ex.min_kernel {
            let kernel = self.kernel()?;
            if kernel >= min {
                return Ok(Some(Exclusion::ExcludedFrom { min, kernel }));
            }
        }
        let inc = &rule.applies.includes;
        if !inc.arches.is_empty() && !inc.arches.contains(&native) {
            return Ok(Some(Exclusion::OnlyOn(inc.arches.clone())));
        }
        let missing: Vec<String> = inc
            .caps
            .iter()
            .filter(|c| !self.caps.contains(c))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Ok(Some(Exclusion::Needs(missing)));
        }
        if let Some(min) = inc.min_kernel {
            let kernel = self.kernel()?;
            if kernel < min {
                return Ok(Some(Exclusion::NeedsKernel { min, kernel }));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::oci;

    fn resolve_on(profile: &str, native: Arch, strict: bool) -> Result<Resolved, PolicyError> {
        let policy = oci::parse(profile.as_bytes(), "t.json").unwrap();
        let options = ResolveOptions {
            native: Some(native),
            strict,
            kernel: Some(KernelVersion::new(6, 18)),
            ..Default::default()
        };
        resolve(&policy, &options)
    }

    fn listed(r: &Resolved) -> Vec<(Arch, bool)> {
        r.arches.iter().map(|a| (a.arch, a.listed)).collect()
    }

    /// Each rule `includes`/`excludes` leaves out is kept with the first reason moby's
    /// `setupSeccomp` drops it for (excludes before includes), and one that applies is not.
    #[test]
    fn excluded_rules_say_why() {
        let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
            {"names": ["read"], "action": "SCMP_ACT_ALLOW", "excludes": {"arches": ["amd64"]}},
            {"names": ["write"], "action": "SCMP_ACT_ALLOW", "excludes": {"caps": ["CAP_CHOWN"]}},
            {"names": ["open"], "action": "SCMP_ACT_ALLOW", "excludes": {"minKernel": "5.0"}},
            {"names": ["close"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["arm64", "x86_64"]}},
            {"names": ["mount", "umount2"], "action": "SCMP_ACT_ALLOW",
             "includes": {"caps": ["CAP_SYS_ADMIN", "CAP_CHOWN", "CAP_BPF"]}},
            {"names": ["bpf"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "7.1"}},
            {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4.8"}}]}"#;
        let r = resolve_on(profile, Arch::X86_64, false).unwrap();
        let said: Vec<String> = r.excluded.iter().map(|e| e.why.to_string()).collect();
        let why: Vec<(&str, &str, &str)> = r
            .excluded
            .iter()
            .zip(&said)
            .map(|(e, said)| (e.syscall.as_str(), &*e.origin, said.as_str()))
            .collect();
        assert_eq!(
            why,
            [
                (
                    "read",
                    "$.syscalls[0]",
                    "excluded on amd64 (excludes.arches)"
                ),
                (
                    "write",
                    "$.syscalls[1]",
                    "excluded with CAP_CHOWN (excludes.caps)"
                ),
                (
                    "open",
                    "$.syscalls[2]",
                    "excluded from kernel 5.0 (excludes.minKernel, checked against 6.18)"
                ),
                (
                    "close",
                    "$.syscalls[3]",
                    "only on arm64, \"x86_64\" (no host's name) (includes.arches)"
                ),
                (
                    "mount",
                    "$.syscalls[4]",
                    "needs CAP_SYS_ADMIN and CAP_BPF (includes.caps)"
                ),
                (
                    "umount2",
                    "$.syscalls[4]",
                    "needs CAP_SYS_ADMIN and CAP_BPF (includes.caps)"
                ),
                (
                    "bpf",
                    "$.syscalls[5]",
                    "needs kernel 7.1 (includes.minKernel, checked against 6.18)"
                ),
            ]
        );
        assert!(r.arch(Arch::X86_64).unwrap().syscalls.contains_key(&101)); // ptrace
    }

    /// runc's stub covers the config's `architectures` only (libcontainer/specconv copies
    /// the profile's list without adding the native arch); moby (profiles/seccomp
    /// `setupSeccomp`) writes the native arch's archMap entry, with its sub-architectures,
    /// into that list, and nothing when the map has no entry for it.
    #[test]
    fn records_which_arches_the_profile_lists() {
        let none = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": []}"#;
        let r = resolve_on(none, Arch::X86_64, false).unwrap();
        assert_eq!(listed(&r), [(Arch::X86_64, false)]);
        let some = r#"{"defaultAction": "SCMP_ACT_ERRNO",
            "architectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X86_64"], "syscalls": []}"#;
        let r = resolve_on(some, Arch::X86_64, false).unwrap();
        assert_eq!(listed(&r), [(Arch::X86_64, true), (Arch::X86, true)]);
        let map = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [], "archMap": [
            {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]}]}"#;
        let r = resolve_on(map, Arch::Aarch64, false).unwrap();
        assert_eq!(listed(&r), [(Arch::Aarch64, true), (Arch::Arm, true)]);
        let r = resolve_on(map, Arch::X86_64, false).unwrap();
        assert_eq!(listed(&r), [(Arch::X86_64, false)]);
        // A caller's empty list is refused: it would give a filter that kills every call.
        let options = ResolveOptions {
            native: Some(Arch::X86_64),
            arches: Some(Vec::new()),
            ..Default::default()
        };
        let policy = oci::parse(some.as_bytes(), "t.json").unwrap();
        match resolve(&policy, &options) {
            Err(PolicyError::InvalidOption(why)) => assert!(why.contains("kill every"), "{why}"),
            other => panic!("{other:?}"),
        }
        // A list without the native arch resolves, with a warning that the native arch's
        // calls all get the bad-arch action; with the native arch in it, none.
        let without = ResolveOptions {
            native: Some(Arch::X86_64),
            arches: Some(vec![Arch::Aarch64]),
            ..Default::default()
        };
        let resolved = resolve(&policy, &without).unwrap();
        let said: Vec<&Warning> = resolved
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::Suspicious)
            .collect();
        assert_eq!(said.len(), 1, "{:?}", resolved.warnings);
        assert!(
            said[0].message.contains("covers aarch64 but not x86_64")
                && said[0].message.contains("KILL_THREAD"),
            "{}",
            said[0].message
        );
        let with = ResolveOptions {
            arches: Some(vec![Arch::Aarch64, Arch::X86_64]),
            ..without
        };
        let resolved = resolve(&policy, &with).unwrap();
        assert!(
            !resolved
                .warnings
                .iter()
                .any(|w| w.message.contains("but not")),
            "{:?}",
            resolved.warnings
        );
    }

    /// `multiplexed_rules` finds exactly what testing every name of `rules_by_name` with
    /// `multiplexer` finds (its definition), on every arch, for every multiplexed name and a
    /// few others, numbered or not.
    #[test]
    fn multiplexed_rules_are_the_multiplexed_names_among_all_rules() {
        let names: Vec<&str> = SOCKETCALL
            .iter()
            .chain(&IPC)
            .map(|e| e.0)
            .chain(["read", "socketcall", "ipc", "chown32", "arch_prctl"])
            .collect();
        let profile = format!(
            r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
                {{"names": {}, "action": "SCMP_ACT_ALLOW"}}]}}"#,
            serde_json::to_string(&names).unwrap()
        );
        let mut multiplexing = 0;
        for arch in Arch::ALL {
            let r = resolve_on(&profile, arch, false).unwrap();
            let a = &r.arches[0];
            let mut by_definition: Vec<_> = a
                .rules_by_name()
                .filter_map(|(name, rules)| Some((name, a.multiplexer(name)?, rules)))
                .collect();
            let mut found: Vec<_> = a.multiplexed_rules().collect();
            by_definition.sort_by_key(|e| e.0);
            found.sort_by_key(|e| e.0);
            assert_eq!(found, by_definition, "{arch}");
            multiplexing += usize::from(!found.is_empty());
            // Both a numbered name (`socket` on x86) and an unnumbered one (`send`) are found.
            if arch == Arch::X86 {
                assert!(
                    found.iter().any(|e| e.0 == "socket") && found.iter().any(|e| e.0 == "send")
                );
            }
        }
        assert!(multiplexing >= 4, "{multiplexing}");
    }

    /// runc hands libseccomp the profile's own arches: a caller's list that differs keeps
    /// them resolved beside it, one equal to them (Docker's x86_64 + x86 + x32 on x86_64)
    /// needs no second copy.
    #[test]
    fn the_profiles_own_arches_are_kept_only_where_the_callers_list_differs() {
        let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO",
            "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
            "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"}]}"#;
        let policy = oci::parse(profile.as_bytes(), "t.json").unwrap();
        let with = |arches: &[Arch]| {
            let options = ResolveOptions {
                native: Some(Arch::X86_64),
                arches: Some(arches.to_vec()),
                ..Default::default()
            };
            resolve(&policy, &options).unwrap()
        };
        let own = |r: &Resolved| {
            r.arches_as_runc_loads
                .as_ref()
                .map(|list| list.iter().map(|a| a.arch).collect::<Vec<_>>())
        };
        assert_eq!(own(&with(&[Arch::X86_64, Arch::X86, Arch::X32])), None);
        let all = Some(vec![Arch::X86_64, Arch::X86, Arch::X32]);
        assert_eq!(own(&with(&[Arch::X86_64])), all);
        assert_eq!(own(&with(&[Arch::Aarch64])), all);
        // The same arches in another order are another filter for runc to load.
        assert_eq!(own(&with(&[Arch::X86, Arch::X86_64, Arch::X32])), all);
    }

    /// A rule an earlier unconditional one shadows is warned about once (not once per arch),
    /// at its own path, and is an error in strict mode; a later rule with the same action is
    /// redundant, not shadowed.
    #[test]
    fn rules_that_never_apply_are_warned_about_once() {
        let profile = r#"{"defaultAction": "SCMP_ACT_TRAP",
            "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"], "syscalls": [
            {"names": ["mkdir", "read"], "action": "SCMP_ACT_ERRNO"},
            {"names": ["read"], "action": "SCMP_ACT_ERRNO"},
            {"names": ["mkdir"], "action": "SCMP_ACT_ALLOW",
             "args": [{"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]}]}"#;
        let r = resolve_on(profile, Arch::X86_64, false).unwrap();
        let paths: Vec<&str> = r.shadowed.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(paths, ["$.syscalls[2]"]);
        assert!(r.warnings.contains(&r.shadowed[0]));
        match resolve_on(profile, Arch::X86_64, true) {
            Err(PolicyError::Warnings { warnings, .. }) => assert_eq!(warnings, r.shadowed),
            other => panic!("{other:?}"),
        }
        // A name x86 reaches only through socketcall is checked too.
        let recv = r#"{"defaultAction": "SCMP_ACT_TRAP", "syscalls": [
            {"names": ["recv"], "action": "SCMP_ACT_KILL"},
            {"names": ["recv"], "action": "SCMP_ACT_ALLOW",
             "args": [{"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]}]}"#;
        let r = resolve_on(recv, Arch::X86, false).unwrap();
        let paths: Vec<&str> = r.shadowed.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(paths, ["$.syscalls[1]"]);
    }

    /// i386 has no `recv` or `semop` syscall (arch/x86/entry/syscalls/syscall_32.tbl); it
    /// has `socket` (359) and `read` (3).
    #[test]
    fn multiplexed_names_keep_their_rules_and_never_set_the_threshold() {
        let profile = r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
            {"names": ["read", "socket", "recv"], "action": "SCMP_ACT_ALLOW"},
            {"names": ["semop"], "action": "SCMP_ACT_ERRNO"},
            {"names": ["no_such_call"], "action": "SCMP_ACT_TRAP"}]}"#;
        let r = resolve_on(profile, Arch::X86, false).unwrap();
        let x86 = r.arch(Arch::X86).unwrap();
        assert_eq!(x86.unknown, ["no_such_call", "recv", "semop"]);
        // semop's one rule equals the default: dropped, as for known names.
        let names: Vec<&str> = x86.unknown_rules.keys().map(String::as_str).collect();
        assert_eq!(names, ["no_such_call", "recv"]);
        assert_eq!(x86.unknown_rules["recv"][0].seq, 2);
        assert_eq!(x86.syscalls[&359][0].seq, 1);
        assert_eq!(x86.highest_named, Some(3));
        assert_eq!(x86.multiplexer("recv"), Some(("socketcall", 10)));
        assert_eq!(x86.multiplexer("semop"), Some(("ipc", 1)));
        assert_eq!(x86.multiplexer("read"), None);
        // How compile and exec tell of them: applied through socketcall/ipc, or not a
        // syscall anywhere; with another dialect, nothing is multiplexed.
        let names = x86.unnumbered_names(true);
        assert_eq!(names.multiplexed, ["recv", "semop"]);
        assert_eq!(names.nowhere, ["no_such_call"]);
        assert!(names.other_arch.is_empty());
        let names = x86.unnumbered_names(false);
        assert!(names.multiplexed.is_empty());
        assert_eq!(names.other_arch, ["recv", "semop"]);
        // Strict mode: only the name nothing applies is an error.
        match resolve_on(profile, Arch::X86, true) {
            Err(PolicyError::UnknownSyscalls { unknown, .. }) => {
                assert_eq!(unknown[&Arch::X86], ["no_such_call"]);
            }
            other => panic!("{other:?}"),
        }
        // x86_64 does not multiplex: socket (41) counts.
        let r = resolve_on(profile, Arch::X86_64, false).unwrap();
        let x86_64 = r.arch(Arch::X86_64).unwrap();
        assert_eq!(x86_64.highest_named, Some(65)); // semop
        assert_eq!(x86_64.multiplexer("recv"), None);
    }
}
