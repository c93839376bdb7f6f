//! Resolution: from a [`Policy`] to syscall numbers per architecture, for one host and one
//! container (native arch, capabilities, kernel version).

use super::model::{
    Action, ArchRef, Architectures, ArgCondition, CapSet, Dialect, FilterFlag, KernelVersion,
    Policy, Rule,
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
    /// Replaces the policy's own architecture set when given.
    pub arches: Option<Vec<Arch>>,
    /// The container's capabilities (default: Docker's 14).
    pub caps: CapSet,
    /// The kernel version `minKernel` is compared with. `None`: the running kernel, asked
    /// only if some rule has a `minKernel`.
    pub kernel: Option<KernelVersion>,
    /// Turn unknown syscall names and architectures without a table into errors instead of
    /// skipping them (runc skips unknown names).
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
    pub origin: String,
}

/// The rules for one architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedArch {
    pub arch: Arch,
    /// Syscall number → its rules in profile order. How overlapping rules combine is the
    /// policy's [`Dialect`]'s business (the lowering reproduces it). Rules whose action is
    /// the default action are left out, as runc does.
    pub syscalls: BTreeMap<u32, Vec<ResolvedRule>>,
    /// Names used by applicable rules that this arch has no syscall for (sorted). They were
    /// skipped, as runc skips them.
    pub unknown: Vec<String>,
    /// The highest syscall number named by any applicable rule on this arch, counting rules
    /// left out for equalling the default (runc's ENOSYS stub starts above it:
    /// libcontainer/seccomp/patchbpf/enosys_linux.go `findLastSyscalls`).
    pub highest_named: Option<u32>,
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
    /// Rules left out by `includes`/`excludes` for this host and container.
    pub excluded_rules: usize,
    /// Applicable rules left out because their action is the default action.
    pub redundant_rules: usize,
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

    let (arches, unsupported_arches) = arch_set(policy, options, native)?;

    let mut host = Host {
        native,
        caps: &options.caps,
        kernel: options.kernel,
        kernel_used: false,
    };
    let mut applicable: Vec<&Rule> = Vec::new();
    let mut excluded_rules = 0;
    for rule in &policy.rules {
        if host.admits(rule)? {
            applicable.push(rule);
        } else {
            excluded_rules += 1;
        }
    }
    let redundant_rules = applicable
        .iter()
        .filter(|r| r.action == policy.default_action)
        .count();

    let tables = SyscallResolver::tables();
    let resolver = options.resolver.as_ref().unwrap_or(&tables);
    let mut resolved_arches = Vec::with_capacity(arches.len());
    for arch in arches {
        let mut syscalls: BTreeMap<u32, Vec<ResolvedRule>> = BTreeMap::new();
        let mut unknown = BTreeSet::new();
        let mut highest_named = None;
        for rule in &applicable {
            let Some(nr) = resolver.lookup(arch, &rule.syscall) else {
                unknown.insert(rule.syscall.clone());
                continue;
            };
            highest_named = highest_named.max(Some(nr));
            if rule.action == policy.default_action {
                continue;
            }
            syscalls.entry(nr).or_default().push(ResolvedRule {
                action: rule.action,
                conditions: rule.conditions.clone(),
                origin: rule.origin.clone(),
            });
        }
        resolved_arches.push(ResolvedArch {
            arch,
            syscalls,
            unknown: unknown.into_iter().collect(),
            highest_named,
        });
    }

    if options.strict {
        let unknown: BTreeMap<Arch, Vec<String>> = resolved_arches
            .iter()
            .filter(|a| !a.unknown.is_empty())
            .map(|a| (a.arch, a.unknown.clone()))
            .collect();
        if !unknown.is_empty() {
            return Err(PolicyError::UnknownSyscalls {
                file: policy.source.clone(),
                unknown,
            });
        }
    }

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
        excluded_rules,
        redundant_rules,
    })
}

/// The architectures the filter covers (deduplicated, in order) and the names of those
/// without a secopt table.
fn arch_set(
    policy: &Policy,
    options: &ResolveOptions,
    native: Arch,
) -> Result<(Vec<Arch>, Vec<String>), PolicyError> {
    let refs: Vec<ArchRef> = match (&options.arches, &policy.architectures) {
        (Some(list), _) => list.iter().map(|&a| ArchRef::Supported(a)).collect(),
        (None, Architectures::Exactly(list)) => {
            list.iter().map(|&a| ArchRef::Supported(a)).collect()
        }
        (None, Architectures::NativePlus(extra)) => std::iter::once(ArchRef::Supported(native))
            .chain(extra.iter().copied())
            .collect(),
        (None, Architectures::ArchMap(map)) => {
            let subs = map
                .iter()
                .find(|entry| entry.arch == ArchRef::Supported(native))
                .map(|entry| entry.sub_arches.as_slice())
                .unwrap_or_default();
            std::iter::once(ArchRef::Supported(native))
                .chain(subs.iter().copied())
                .collect()
        }
    };
    let mut arches = Vec::new();
    let mut unsupported = Vec::new();
    for r in refs {
        match r {
            ArchRef::Supported(a) => {
                if !arches.contains(&a) {
                    arches.push(a);
                }
            }
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
    Ok((arches, unsupported))
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

    /// moby profiles seccomp/seccomp_linux.go `setupSeccomp`: excludes first (any match
    /// drops), then includes (every listed condition must hold).
    fn admits(&mut self, rule: &Rule) -> Result<bool, PolicyError> {
        let native = ArchRef::Supported(self.native);
        let ex = &rule.applies.excludes;
        if ex.arches.contains(&native) || ex.caps.iter().any(|c| self.caps.contains(c)) {
            return Ok(false);
        }
        if let Some(min) = ex.min_kernel {
            if self.kernel()? >= min {
                return Ok(false);
            }
        }
        let inc = &rule.applies.includes;
        if !inc.arches.is_empty() && !inc.arches.contains(&native) {
            return Ok(false);
        }
        if !inc.caps.iter().all(|c| self.caps.contains(c)) {
            return Ok(false);
        }
        if let Some(min) = inc.min_kernel {
            if self.kernel()? < min {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
