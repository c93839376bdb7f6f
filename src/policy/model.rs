//! The policy model: what a profile says, independent of any bytecode.
//!
//! A [`Policy`] is what a front end produces from one profile (or one Firecracker thread
//! filter). It still names syscalls by name and may carry host-dependent conditions
//! (Docker's `includes`/`excludes`); [`resolve`](super::resolve()) turns it into a
//! [`Resolved`](super::Resolved) table of syscall numbers per architecture.

use super::names::{ALL_CAPS, DOCKER_DEFAULT_CAPS};
use super::PolicyError;
use crate::arch::Arch;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;

/// What a filter does with a system call, with its 16 bits of data where the kernel takes any.
///
/// `SCMP_ACT_KILL` is `KillThread` (libseccomp defines it so, and runc maps it so).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    KillProcess,
    KillThread,
    Trap,
    /// Fail the call with this errno.
    Errno(u16),
    /// Hand the call to a user-space listener (`SECCOMP_RET_USER_NOTIF`).
    UserNotif,
    /// Notify a ptrace tracer, passing it this value.
    Trace(u16),
    Log,
    Allow,
}

/// The largest errno libseccomp accepts in `SCMP_ACT_ERRNO` (2.5.4 and 2.6: `seccomp_init` and
/// `seccomp_rule_add` refuse 4095 and above with EINVAL; `SCMP_ACT_TRACE` takes any 16 bits).
/// runc, crun and Firecracker's seccompiler build their filters with libseccomp, so a profile
/// above it is one they refuse to load: runc fails the container's start with "error adding
/// seccomp filter rule" or "could not create filter".
pub const LIBSECCOMP_MAX_ERRNO: u16 = 4094;

impl Action {
    /// Whether the action carries data (and so accepts `errnoRet`).
    pub const fn takes_data(self) -> bool {
        matches!(self, Action::Errno(_) | Action::Trace(_))
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::KillProcess => f.write_str("KILL_PROCESS"),
            Action::KillThread => f.write_str("KILL_THREAD"),
            Action::Trap => f.write_str("TRAP"),
            Action::Errno(e) => write!(f, "ERRNO({e})"),
            Action::UserNotif => f.write_str("USER_NOTIF"),
            Action::Trace(t) => write!(f, "TRACE({t})"),
            Action::Log => f.write_str("LOG"),
            Action::Allow => f.write_str("ALLOW"),
        }
    }
}

/// A comparison of one syscall argument with a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `(arg & mask) == (value & mask)`.
    ///
    /// Every reference masks the constant too: libseccomp (src/db.c,
    /// `_db_node_mask_fixup`) and rust-vmm seccompiler (src/backend/condition.rs,
    /// `into_masked_eq_bpf`). So a profile bit outside the mask is ignored, not "never
    /// matches".
    MaskedEq(u64),
}

/// How many bits of the argument a comparison looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgWidth {
    /// All 64 bits (what libseccomp does on 64-bit arches; on 32-bit arches the lowering
    /// compares the low halves only, as libseccomp does).
    Qword,
    /// Only the low 32 bits of the argument, against the low 32 bits of the constant; the
    /// high half of the argument is ignored. This is rust-vmm seccompiler's `dword`
    /// (src/backend/condition.rs emits no load of the high word for `Dword`).
    Dword,
}

/// One argument condition: `args[index] <op> value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ArgCondition {
    /// Argument index, 0..=5.
    pub index: u8,
    pub width: ArgWidth,
    pub op: CmpOp,
    pub value: u64,
}

impl ArgCondition {
    /// A full-width condition.
    pub const fn new(index: u8, op: CmpOp, value: u64) -> Self {
        ArgCondition {
            index,
            width: ArgWidth::Qword,
            op,
            value,
        }
    }

    /// What is odd about the condition, when part of it is ignored or its outcome does not
    /// depend on the argument: almost always a slip in the profile (a mask and value swapped,
    /// a signed reading of an unsigned argument, a 64-bit constant in a 32-bit comparison),
    /// and one that widens or empties the rule without a word. The front ends warn with it.
    ///
    /// ```
    /// use secopt::policy::{ArgCondition, CmpOp};
    /// // Docker's clone rule: fine. The same with mask and value swapped: always true.
    /// assert_eq!(ArgCondition::new(0, CmpOp::MaskedEq(0x7E02_0000), 0).slip(), None);
    /// let swapped = ArgCondition::new(0, CmpOp::MaskedEq(0), 0x7E02_0000).slip().unwrap();
    /// assert!(swapped.starts_with("holds for every argument"));
    /// ```
    pub fn slip(&self) -> Option<String> {
        let (max, width) = match self.width {
            ArgWidth::Qword => (u64::MAX, "64-bit"),
            ArgWidth::Dword => (0xFFFF_FFFF, "32-bit (dword)"),
        };
        if self.width == ArgWidth::Dword && self.value > max {
            return Some(format!(
                "compares the low 32 bits only (dword): the value {:#x} is read as {:#x}",
                self.value,
                self.value & max
            ));
        }
        // A dword compares the low halves: its mask is the mask's low half.
        let op = match self.op {
            CmpOp::MaskedEq(mask) => CmpOp::MaskedEq(mask & max),
            op => op,
        };
        match (op, self.value) {
            (CmpOp::MaskedEq(0), _) => Some(
                "holds for every argument: the mask is 0, so both sides of \
                 `(arg & mask) == (value & mask)` are 0"
                    .to_string(),
            ),
            (CmpOp::MaskedEq(mask), v) if v & !mask & max != 0 => Some(format!(
                "compares only the bits of the mask {mask:#x}: libseccomp and Firecracker's \
                 compilers mask the value too, so the value's bits {:#x} outside it are ignored \
                 and the condition is `(arg & {mask:#x}) == {:#x}`",
                v & !mask & max,
                v & mask
            )),
            (CmpOp::Lt, 0) => Some("never holds: arguments are unsigned, none is below 0".into()),
            (CmpOp::Ge, 0) => {
                Some("holds for every argument: arguments are unsigned, all are 0 or more".into())
            }
            (CmpOp::Gt, v) if v >= max => Some(format!(
                "never holds: no {width} argument is above {max:#x}"
            )),
            (CmpOp::Le, v) if v >= max => Some(format!(
                "holds for every argument: every {width} argument is at most {max:#x}"
            )),
            _ => None,
        }
    }

    /// Whether argument value `arg` satisfies the condition (as on a 64-bit architecture;
    /// 32-bit arches see only the low half of every argument).
    ///
    /// ```
    /// use secopt::policy::{ArgCondition, CmpOp};
    /// // Docker's clone rule: no namespace flags.
    /// let c = ArgCondition::new(0, CmpOp::MaskedEq(0x7E02_0000), 0);
    /// assert!(c.matches(0x0001_1200)); // CLONE_VM|CLONE_FS|... without CLONE_NEW*
    /// assert!(!c.matches(0x1000_0000)); // CLONE_NEWUSER
    /// ```
    pub fn matches(&self, arg: u64) -> bool {
        let (arg, value) = match self.width {
            ArgWidth::Qword => (arg, self.value),
            ArgWidth::Dword => (arg & 0xFFFF_FFFF, self.value & 0xFFFF_FFFF),
        };
        match self.op {
            CmpOp::Eq => arg == value,
            CmpOp::Ne => arg != value,
            CmpOp::Lt => arg < value,
            CmpOp::Le => arg <= value,
            CmpOp::Gt => arg > value,
            CmpOp::Ge => arg >= value,
            CmpOp::MaskedEq(mask) => arg & mask == value & mask,
        }
    }
}

/// An architecture as a profile names it: one secopt has a syscall table for, or one
/// libseccomp knows but secopt does not (e.g. `SCMP_ARCH_S390`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum ArchRef {
    Supported(Arch),
    /// libseccomp's name of an architecture without a secopt table.
    Unsupported(&'static str),
}

impl fmt::Display for ArchRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchRef::Supported(a) => write!(f, "{a}"),
            ArchRef::Unsupported(n) => f.write_str(n),
        }
    }
}

/// One `archMap` entry: when the native arch is `arch`, the filter also covers `sub_arches`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArchMapEntry {
    pub arch: ArchRef,
    pub sub_arches: Vec<ArchRef>,
}

/// Which architectures the filter covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Architectures {
    /// Exactly these (a Firecracker filter is built for its one target arch).
    Exactly(Vec<Arch>),
    /// The native arch plus these (OCI `architectures`; libseccomp's filter always holds
    /// the native arch, runc only adds to it). Empty: the native arch alone.
    NativePlus(Vec<ArchRef>),
    /// moby's `archMap`: the native arch plus the sub-architectures of its entry (moby
    /// profiles seccomp/seccomp_linux.go; no entry for the native arch: native alone).
    ArchMap(Vec<ArchMapEntry>),
}

/// A kernel version as moby compares them: major and minor only.
pub use crate::arch::KernelVersion;

/// A rule's conditions on the host and container (moby's `Filter`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostFilter {
    /// Capability names exactly as the profile spells them (`CAP_SYS_ADMIN`).
    pub caps: Vec<String>,
    pub arches: Vec<ArchRef>,
    pub min_kernel: Option<KernelVersion>,
}

impl HostFilter {
    pub fn is_empty(&self) -> bool {
        self.caps.is_empty() && self.arches.is_empty() && self.min_kernel.is_none()
    }
}

/// When a rule is part of the filter (moby semantics): `includes` needs *all* listed caps,
/// the native arch among its arches and kernel >= its `minKernel`; `excludes` drops the
/// rule on *any* listed cap, the native arch among its arches, or kernel >= its `minKernel`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Applicability {
    pub includes: HostFilter,
    pub excludes: HostFilter,
}

impl Applicability {
    /// Whether the rule always applies.
    pub fn is_unconditional(&self) -> bool {
        self.includes.is_empty() && self.excludes.is_empty()
    }
}

/// One rule: for syscall `syscall`, when every condition holds, take `action`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub syscall: String,
    pub action: Action,
    /// A conjunction; empty means "always".
    pub conditions: Vec<ArgCondition>,
    pub applies: Applicability,
    /// Where in the profile the rule comes from (a JSON path), for reports.
    pub origin: std::sync::Arc<str>,
}

/// Flags passed to `seccomp(SECCOMP_SET_MODE_FILTER, flags, ...)`, as the runtime spec
/// lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum FilterFlag {
    Tsync,
    Log,
    SpecAllow,
    WaitKillableRecv,
}

impl FilterFlag {
    pub const ALL: [FilterFlag; 4] = [
        FilterFlag::Tsync,
        FilterFlag::Log,
        FilterFlag::SpecAllow,
        FilterFlag::WaitKillableRecv,
    ];

    /// The runtime spec's name (`SECCOMP_FILTER_FLAG_LOG`).
    pub const fn spec_name(self) -> &'static str {
        match self {
            FilterFlag::Tsync => "SECCOMP_FILTER_FLAG_TSYNC",
            FilterFlag::Log => "SECCOMP_FILTER_FLAG_LOG",
            FilterFlag::SpecAllow => "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
            FilterFlag::WaitKillableRecv => "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
        }
    }

    /// The bits of `flags` together, as `seccomp(2)` takes them.
    pub fn bits(flags: &[FilterFlag]) -> u32 {
        flags.iter().fold(0, |bits, f| bits | f.bit())
    }

    /// The flag's bit (include/uapi/linux/seccomp.h).
    pub const fn bit(self) -> u32 {
        match self {
            FilterFlag::Tsync => 1 << 0,
            FilterFlag::Log => 1 << 1,
            FilterFlag::SpecAllow => 1 << 2,
            FilterFlag::WaitKillableRecv => 1 << 5,
        }
    }

    pub fn from_spec_name(name: &str) -> Option<FilterFlag> {
        FilterFlag::ALL.into_iter().find(|f| f.spec_name() == name)
    }
}

/// Which tool's conventions define the meaning of the policy beyond its rules; the
/// lowering must reproduce them. Non-exhaustive: a compiler may be added (Firecracker 1.10
/// was, in the thirty-third session).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Dialect {
    /// libseccomp, as runc/crun/Docker/podman and Firecracker's in-tree seccompiler drive it:
    /// x32 told apart by bit 30, nr `-1` reaching the rules, 32-bit arches comparing low
    /// halves, socketcall/ipc multiplexing, rules equal to the default action dropped.
    Libseccomp,
    /// rust-vmm's `seccompiler` crate with its own BPF backend: one arch-token check, then
    /// syscall numbers compared as they are (no x32 special case, no multiplexing).
    RustVmmSeccompiler,
    /// Firecracker's own `seccompiler-bin` up to release 1.10, a copy of the rust-vmm backend:
    /// lowered exactly as [`Dialect::RustVmmSeccompiler`]; it reads the file differently (see
    /// [`crate::policy::firecracker`]).
    #[serde(rename = "firecracker_1_10")]
    Firecracker110,
}

/// A diagnostic about input that was accepted but deserves a look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// JSON path of the place concerned.
    pub path: String,
    pub message: String,
    /// What it is about, for a caller that refuses some kinds and shows the others.
    pub kind: WarningKind,
}

/// What a [`Warning`] is about. A runtime may refuse a profile with an
/// [`Ignored`](Self::Ignored) or [`UnknownName`](Self::UnknownName) warning (what is enforced
/// is less than what the text says) and only show a [`NeverApplies`](Self::NeverApplies) one
/// (podman's default profile has some).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningKind {
    /// Input the reference tools ignore: an unknown field (a misspelt `args` leaves its rule
    /// unconditional), another format's field, an operand the operator does not use, an
    /// entry they drop.
    Ignored,
    /// A name no table has (a syscall, a capability; an architecture secopt has no syscall
    /// table for, which the filter then leaves to the bad-arch action): its rule is skipped or
    /// never matches, so a deny rule for it denies nothing. (An architecture name libseccomp
    /// does not know at all is an error, as runc refuses it.)
    UnknownName,
    /// A rule that never applies or narrows nothing (another rule decides its syscall, or it
    /// names none): the filter is as if it were not there.
    NeverApplies,
    /// The filter the reference tools build would not enforce the profile as written there
    /// (libseccomp's dropped syscall load, constants compared by their low 32 bits).
    NotEnforced,
    /// Accepted and enforced as the reference tools do, but likely not what was meant
    /// (errno 0, two errno fields that disagree, a condition that cannot hold, conditions on
    /// one argument that runc joins with OR).
    Suspicious,
    /// The runtime refuses to start with it (runc and NOTIFY without a listener, or on
    /// `write`; arches of both byte orders, where libseccomp keeps one per filter).
    RuntimeRefuses,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A seccomp policy as a profile states it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// The file (or other name) the policy was read from, for messages.
    pub source: String,
    pub default_action: Action,
    /// What a syscall from an architecture outside the filter gets.
    pub bad_arch_action: Action,
    pub architectures: Architectures,
    /// In profile order.
    pub rules: Vec<Rule>,
    /// `None`: the profile says nothing, and runc then applies SPEC_ALLOW where supported
    /// (libcontainer/specconv/spec_linux.go); `Some(vec![])`: explicitly no flags.
    pub flags: Option<Vec<FilterFlag>>,
    /// Unix socket to send the notify fd to (OCI `listenerPath`).
    pub listener_path: Option<String>,
    /// Opaque data for the agent (OCI `listenerMetadata`).
    pub listener_metadata: Option<String>,
    pub dialect: Dialect,
    /// Things the front end accepted but flags for attention.
    pub warnings: Vec<Warning>,
}

/// The container's capability set, against which `includes.caps`/`excludes.caps` are checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapSet {
    caps: BTreeSet<String>,
}

impl Default for CapSet {
    /// Docker's default set.
    fn default() -> Self {
        CapSet::docker_default()
    }
}

impl CapSet {
    /// Docker's 14 default capabilities.
    pub fn docker_default() -> Self {
        CapSet {
            caps: DOCKER_DEFAULT_CAPS.iter().map(|c| c.to_string()).collect(),
        }
    }

    /// Every Linux capability (a privileged container).
    pub fn all() -> Self {
        CapSet {
            caps: ALL_CAPS.iter().map(|c| c.to_string()).collect(),
        }
    }

    /// No capabilities.
    pub fn none() -> Self {
        CapSet {
            caps: BTreeSet::new(),
        }
    }

    /// Parses a comma-separated list. Items are capability names with or without `CAP_`,
    /// any case (`sys_admin`, `CAP_NET_RAW`), or `default` (Docker's 14) or `all`.
    ///
    /// ```
    /// use secopt::policy::CapSet;
    /// let caps = CapSet::parse("default,sys_admin").unwrap();
    /// assert!(caps.contains("CAP_SYS_ADMIN") && caps.contains("CAP_CHOWN"));
    /// assert_eq!(caps.len(), 15);
    /// assert!(CapSet::parse("CAP_FLY").is_err());
    /// ```
    pub fn parse(list: &str) -> Result<CapSet, PolicyError> {
        let mut set = CapSet::none();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item.to_ascii_lowercase().as_str() {
                "default" => set.caps.extend(CapSet::docker_default().caps),
                "all" => set.caps.extend(CapSet::all().caps),
                _ => {
                    set.insert(item)?;
                }
            }
        }
        Ok(set)
    }

    /// Adds one capability (`SYS_ADMIN`, `cap_sys_admin`, ...).
    ///
    /// Profiles' cap names are compared exactly as written (moby does), so `CapSet` always
    /// stores the canonical `CAP_...` upper-case spelling.
    pub fn insert(&mut self, cap: &str) -> Result<&mut Self, PolicyError> {
        let upper = cap.trim().to_ascii_uppercase();
        let name = if upper.starts_with("CAP_") {
            upper
        } else {
            format!("CAP_{upper}")
        };
        if !ALL_CAPS.contains(&name.as_str()) {
            return Err(PolicyError::InvalidOption(format!(
                "unknown capability {cap:?}; expected a name such as CAP_SYS_ADMIN, or `default` or `all`"
            )));
        }
        self.caps.insert(name);
        Ok(self)
    }

    /// Whether `cap` (spelled exactly, e.g. `CAP_SYS_ADMIN`) is in the set.
    pub fn contains(&self, cap: &str) -> bool {
        self.caps.contains(cap)
    }

    pub fn len(&self) -> usize {
        self.caps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.caps.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.caps.iter().map(String::as_str)
    }
}

impl std::str::FromStr for CapSet {
    type Err = PolicyError;

    /// Same as [`CapSet::parse`].
    fn from_str(s: &str) -> Result<Self, PolicyError> {
        CapSet::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_eq_masks_the_constant_too() {
        // libseccomp: datum &= mask, so a constant bit outside the mask is ignored.
        let c = ArgCondition::new(2, CmpOp::MaskedEq(0xF0), 0x1F);
        assert!(c.matches(0x10));
        assert!(c.matches(0x1_0013));
        assert!(!c.matches(0x20));
    }

    #[test]
    fn dword_ignores_the_high_half() {
        let c = ArgCondition {
            index: 0,
            width: ArgWidth::Dword,
            op: CmpOp::Gt,
            value: 5,
        };
        assert!(c.matches(6));
        assert!(!c.matches(0xFFFF_FFFF_0000_0001)); // low half 1
        let q = ArgCondition::new(0, CmpOp::Gt, 5);
        assert!(q.matches(0xFFFF_FFFF_0000_0001));
    }

    #[test]
    fn unsigned_comparisons_on_64_bits() {
        let lt = ArgCondition::new(1, CmpOp::Lt, 0x1_0000_0000);
        assert!(lt.matches(0xFFFF_FFFF));
        assert!(!lt.matches(0x1_0000_0000));
        assert!(!lt.matches(u64::MAX));
        assert!(ArgCondition::new(1, CmpOp::Ge, 0).matches(0));
        assert!(ArgCondition::new(1, CmpOp::Le, u64::MAX).matches(u64::MAX));
    }

    #[test]
    fn kernel_release_parsing() {
        let k = |s| KernelVersion::parse_release(s);
        assert_eq!(k("6.18.0"), Some(KernelVersion::new(6, 18)));
        assert_eq!(k("3.12.25-gentoo"), Some(KernelVersion::new(3, 12)));
        assert_eq!(k("4"), None);
        assert_eq!(k(".4"), None);
        assert!(KernelVersion::new(4, 8) < KernelVersion::new(4, 10));
        assert!(KernelVersion::new(5, 0) > KernelVersion::new(4, 20));
        assert_eq!(
            "5.15".parse::<KernelVersion>(),
            Ok(KernelVersion::new(5, 15))
        );
        assert!("five".parse::<KernelVersion>().is_err());
        // The running kernel: the machine's own /proc agrees with uname.
        let running = KernelVersion::running().unwrap();
        let proc = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        assert_eq!(KernelVersion::parse_release(&proc), Some(running));
    }

    #[test]
    fn flag_bits_match_uapi() {
        // include/uapi/linux/seccomp.h
        assert_eq!(
            FilterFlag::Tsync.bit(),
            libc::SECCOMP_FILTER_FLAG_TSYNC as u32
        );
        assert_eq!(FilterFlag::Log.bit(), libc::SECCOMP_FILTER_FLAG_LOG as u32);
        assert_eq!(
            FilterFlag::SpecAllow.bit(),
            libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW as u32
        );
        assert_eq!(FilterFlag::WaitKillableRecv.bit(), 32);
    }

    #[test]
    fn capset_parsing() {
        assert_eq!(CapSet::default().len(), 14);
        assert_eq!(CapSet::parse("all").unwrap().len(), 41);
        assert_eq!(CapSet::parse("").unwrap().len(), 0);
        let s = CapSet::parse("net_admin, CAP_BPF").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), ["CAP_BPF", "CAP_NET_ADMIN"]);
    }
}
