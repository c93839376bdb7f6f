//! The kernel's seccomp allow cache ("constant action bitmaps", Linux 5.11+), emulated exactly.
//!
//! When a filter is attached (`seccomp_attach_filter` → `seccomp_cache_prepare` in
//! `kernel/seccomp.c`), the kernel runs a tiny emulator, `seccomp_is_const_allow`, over the
//! filter *as the user wrote it* (`orig_prog`) once for every syscall number below the table
//! size of its native arch and, if it has one, of its compat arch — with only `nr` and `arch`
//! known. A number is marked in that arch's bitmap iff its path reaches `RET K` with
//! `k == SECCOMP_RET_ALLOW` exactly (so `ALLOW` with non-zero data is *not* cached). The
//! emulator understands only `LD W ABS` of `nr`/`arch`, `JA`, `JEQ/JGE/JGT/JSET` with K,
//! `ALU AND K` and `RET K`; anything else on the path (an argument or IP load, the X register,
//! scratch memory, `LD LEN`/`LD IMM`, other ALU operations, `RET A`) leaves the bit clear. The
//! new filter's bitmap starts as a copy of the previous filter's (all set for the first
//! filter), so a number stays cached only while every attached filter allows it constantly.
//!
//! At syscall time (`seccomp_cache_check_allow`) only the newest filter's bitmap is consulted:
//! a set bit returns ALLOW without running *any* filter. Numbers `< 0` or `>=` the table size
//! are never cached — that includes every x32 number (they carry bit 30 and share x86_64's
//! arch token). On an arch with a compat ABI an arch token that is neither native nor compat is
//! never cached; on a native-only arch the token is not looked at.
//!
//! Since Linux 6.14 the emulator lets `uretprobe` through on x86_64 without looking at the
//! filter (`seccomp_uprobe_exception`), and since 6.18 also `uprobe`; both were also
//! backported to stable series (uretprobe to 6.12.y/6.13.y, uprobe to 6.17.y). Measured on this
//! project's 6.18 VM: a filter returning `ERRNO` for everything but `exit_group` does not stop
//! syscalls 335 and 336.
//!
//! Table sizes follow the kernel version asked for (up to 6.18, [`KernelVersion::MODELLED`]):
//! an older kernel's table ends at its own newest syscall, so the numbers of syscalls it does
//! not have are outside its bitmap. Those calls fail with `ENOSYS` there, but only after the
//! filters ran for them: on Linux 5.11 a filter allowing `mseal` (462) is run for it.

use super::action::SECCOMP_RET_ALLOW;
use super::data::{Endian, Field, OFF_ARCH, OFF_NR};
use super::insn::*;
use super::{Program, RetVal};
use crate::arch::Arch;
use std::fmt;

pub use crate::arch::{KernelVersion, ParseKernelVersionError};

/// The kernel versions where the allow cache changed.
impl KernelVersion {
    /// First version with the allow cache (the "seccomp/cache" series).
    pub const ALLOW_CACHE: KernelVersion = KernelVersion::new(5, 11);
    /// `uretprobe` passes `seccomp_is_const_allow` unconditionally on x86_64 (mainline; also
    /// in 6.12.y and 6.13.y stable kernels).
    pub const URETPROBE_PASSTHROUGH: KernelVersion = KernelVersion::new(6, 14);
    /// `uprobe` joins the passthrough (mainline; also in 6.17.y stable kernels).
    pub const UPROBE_PASSTHROUGH: KernelVersion = KernelVersion::new(6, 18);
    /// s390 compat (31-bit) support, and with it the s390 compat bitmap, is gone.
    pub const S390_COMPAT_REMOVED: KernelVersion = KernelVersion::new(6, 19);
    /// The version whose syscall table sizes this module carries, and the default model.
    pub const MODELLED: KernelVersion = KernelVersion::new(6, 18);

    /// Whether this kernel has the allow cache at all.
    pub fn has_allow_cache(self) -> bool {
        self >= Self::ALLOW_CACHE
    }
}

/// One allow bitmap the kernel keeps per filter: syscalls made with `seccomp_data.arch ==
/// token` and `nr < table_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CacheTarget {
    /// The `AUDIT_ARCH_*` token (`SECCOMP_ARCH_NATIVE` / `SECCOMP_ARCH_COMPAT`).
    pub token: u32,
    /// `SECCOMP_ARCH_{NATIVE,COMPAT}_NR`: the bitmap covers numbers `0..table_size`.
    pub table_size: u32,
    /// The kernel's name for it (`SECCOMP_ARCH_*_NAME`, as `/proc/<pid>/seccomp_cache` prints).
    pub name: &'static str,
    /// secopt's architecture with this token and numbering, if it has one (the s390 and
    /// little-endian 32-bit PowerPC compat ABIs have none).
    pub arch: Option<Arch>,
}

impl CacheTarget {
    /// Whether `nr` (as `seccomp_data.nr`, reinterpreted as unsigned) is inside the bitmap.
    pub fn covers(&self, nr: u32) -> bool {
        nr < self.table_size
    }
}

/// A syscall the kernel reports as constant-allow without emulating the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Passthrough {
    pub token: u32,
    pub nr: u32,
    pub name: &'static str,
    pub since: KernelVersion,
}

const TOKEN_X86_64: u32 = Arch::X86_64.token();
const TOKEN_I386: u32 = Arch::X86.token();

/// `uretprobe`/`uprobe` on x86_64: the only syscalls `seccomp_uprobe_exception` knows
/// (`__NR_uretprobe`/`__NR_uprobe` exist only in x86_64's table, and only the native arch
/// token qualifies).
const PASSTHROUGHS: [Passthrough; 2] = [
    Passthrough {
        token: TOKEN_X86_64,
        nr: 335,
        name: "uretprobe",
        since: KernelVersion::URETPROBE_PASSTHROUGH,
    },
    Passthrough {
        token: TOKEN_X86_64,
        nr: 336,
        name: "uprobe",
        since: KernelVersion::UPROBE_PASSTHROUGH,
    },
];

/// What the allow cache looks like on one kernel: its bitmaps and passthrough syscalls.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KernelCache {
    pub version: KernelVersion,
    pub native: CacheTarget,
    /// Present when the kernel runs a compat ABI with its own bitmap (`CONFIG_COMPAT`,
    /// `CONFIG_IA32_EMULATION` on x86_64).
    pub compat: Option<CacheTarget>,
    pub passthrough: Vec<Passthrough>,
}

/// The newest syscall number of each kernel since the allow cache (5.11), on every arch here:
/// since 5.1 (`io_uring_setup` = 425 on) new syscalls take the same number on every arch, so
/// a table ends at the same number everywhere (numbers an arch does not wire, such as
/// `map_shadow_stack` off x86, are holes inside it). Each row is the kernel that added the
/// syscall at that number (its `syscall.tbl` / `asm-generic/unistd.h`). `NR_syscalls` and the
/// compat counts, the bitmaps' sizes, are one past it (`scripts/syscallhdr.sh --emit-nr`).
const NEWEST_SYSCALL: &[(KernelVersion, u32)] = &[
    (KernelVersion::new(5, 11), 441), // epoll_pwait2
    (KernelVersion::new(5, 12), 442), // mount_setattr
    (KernelVersion::new(5, 13), 446), // landlock_restrict_self (443 held quotactl_path)
    (KernelVersion::new(5, 14), 447), // memfd_secret
    (KernelVersion::new(5, 15), 448), // process_mrelease
    (KernelVersion::new(5, 16), 449), // futex_waitv
    (KernelVersion::new(5, 17), 450), // set_mempolicy_home_node
    (KernelVersion::new(6, 5), 451),  // cachestat
    (KernelVersion::new(6, 6), 453),  // map_shadow_stack (and fchmodat2, 452)
    (KernelVersion::new(6, 7), 456),  // futex_requeue (futex_wake, futex_wait)
    (KernelVersion::new(6, 8), 461),  // lsm_list_modules (statmount, listmount, lsm_*_self_attr)
    (KernelVersion::new(6, 10), 462), // mseal
    (KernelVersion::new(6, 13), 466), // removexattrat (setxattrat, getxattrat, listxattrat)
    (KernelVersion::new(6, 15), 467), // open_tree_attr
    (KernelVersion::new(6, 17), 469), // file_setattr (file_getattr)
    (KernelVersion::new(6, 18), 470), // listns
];

/// The size of `version`'s bitmaps: one past its newest syscall (kernels after 6.18 as
/// 6.18, the newest modelled). 32-bit ARM rounds its `__NR_syscalls` up to a multiple of 4
/// (`arch/arm/tools/syscallnr.sh`), which `round_to_4` asks for.
fn table_size(version: KernelVersion, round_to_4: bool) -> u32 {
    let newest = NEWEST_SYSCALL
        .iter()
        .rev()
        .find(|(since, _)| *since <= version)
        .map_or(NEWEST_SYSCALL[0].1, |&(_, nr)| nr);
    let size = newest + 1;
    if round_to_4 {
        size.next_multiple_of(4)
    } else {
        size
    }
}

fn target(token: u32, table_size: u32, name: &'static str, arch: Option<Arch>) -> CacheTarget {
    CacheTarget {
        token,
        table_size,
        name,
        arch,
    }
}

impl KernelCache {
    /// The cache of a Linux 6.18 kernel running on `arch`, in its common configuration (compat
    /// bitmaps where distributions enable the compat ABI). `None` where the kernel has no allow
    /// cache: MIPS does not declare `SECCOMP_ARCH_NATIVE` (its numbering starts at
    /// 4000/5000/6000 and it has two compat ABIs).
    ///
    /// `Arch::X32` gives the x86_64 kernel's cache (x32 is an ABI of x86_64 kernels, and none of
    /// its numbers is ever cached); `Arch::X86` and `Arch::Arm` give 32-bit kernels.
    pub fn for_arch(arch: Arch) -> Option<KernelCache> {
        Self::for_kernel(arch, KernelVersion::MODELLED)
    }

    /// The cache of kernel `version` running on `arch` (see [`KernelCache::for_arch`]); `None`
    /// before 5.11, which has no allow cache.
    pub fn for_kernel(arch: Arch, version: KernelVersion) -> Option<KernelCache> {
        if !version.has_allow_cache() {
            return None;
        }
        let n = table_size(version, false);
        let (native, compat) = match arch {
            Arch::X86_64 | Arch::X32 => (
                target(TOKEN_X86_64, n, "x86_64", Some(Arch::X86_64)),
                // IA32_NR_syscalls, with CONFIG_IA32_EMULATION.
                Some(target(TOKEN_I386, n, "ia32", Some(Arch::X86))),
            ),
            Arch::X86 => (target(TOKEN_I386, n, "ia32", Some(Arch::X86)), None),
            Arch::Aarch64 => (
                target(Arch::Aarch64.token(), n, "aarch64", Some(Arch::Aarch64)),
                // __NR_compat32_syscalls, with CONFIG_COMPAT.
                Some(target(Arch::Arm.token(), n, "arm", Some(Arch::Arm))),
            ),
            Arch::Arm => (
                target(
                    Arch::Arm.token(),
                    table_size(version, true),
                    "arm",
                    Some(Arch::Arm),
                ),
                None,
            ),
            // RISC-V declares no SECCOMP_ARCH_COMPAT, and its syscall_get_arch() reports
            // AUDIT_ARCH_RISCV64 even for rv32 compat tasks: they share the native bitmap.
            Arch::Riscv64 => (
                target(Arch::Riscv64.token(), n, "riscv64", Some(Arch::Riscv64)),
                None,
            ),
            Arch::S390x => (
                target(Arch::S390x.token(), n, "s390x", Some(Arch::S390x)),
                // AUDIT_ARCH_S390 with the same NR_syscalls, until compat support was removed.
                (version < KernelVersion::S390_COMPAT_REMOVED)
                    .then(|| target(0x16, n, "s390", None)),
            ),
            // PowerPC's compat bitmap (AUDIT_ARCH_PPC | LE bit, NR_syscalls) needs
            // CONFIG_COMPAT, which defaults to off on little-endian kernels.
            Arch::Ppc64le => (
                target(Arch::Ppc64le.token(), n, "ppc64", Some(Arch::Ppc64le)),
                None,
            ),
            Arch::Ppc64 => (
                target(Arch::Ppc64.token(), n, "ppc64", Some(Arch::Ppc64)),
                Some(target(Arch::Ppc.token(), n, "powerpc", Some(Arch::Ppc))),
            ),
            Arch::Ppc => (
                target(Arch::Ppc.token(), n, "powerpc", Some(Arch::Ppc)),
                None,
            ),
            Arch::Loongarch64 => (
                target(
                    Arch::Loongarch64.token(),
                    n,
                    "loongarch64",
                    Some(Arch::Loongarch64),
                ),
                None,
            ),
            Arch::Mips
            | Arch::Mipsel
            | Arch::Mips64
            | Arch::Mipsel64
            | Arch::Mips64n32
            | Arch::Mipsel64n32 => return None,
        };
        let passthrough = PASSTHROUGHS
            .iter()
            .filter(|p| p.token == native.token && version >= p.since)
            .copied()
            .collect();
        Some(KernelCache {
            version,
            native,
            compat,
            passthrough,
        })
    }

    /// The same kernel built without its compat ABI.
    pub fn without_compat(mut self) -> Self {
        self.compat = None;
        self
    }

    /// The bitmaps: native first.
    pub fn targets(&self) -> impl Iterator<Item = &CacheTarget> + '_ {
        std::iter::once(&self.native).chain(self.compat.as_ref())
    }

    /// The bitmap the kernel consults for a syscall with arch token `token`. A native-only
    /// kernel does not look at the token (`seccomp_cache_check_allow` without
    /// `SECCOMP_ARCH_COMPAT`), so every token maps to the native bitmap there.
    pub fn target_for(&self, token: u32) -> Option<&CacheTarget> {
        match &self.compat {
            None => Some(&self.native),
            Some(c) if token == c.token => Some(c),
            Some(_) => (token == self.native.token).then_some(&self.native),
        }
    }

    /// `seccomp_is_const_allow` for one number of one bitmap, with this kernel's passthrough.
    pub fn is_const_allow(&self, prog: &Program, token: u32, nr: u32) -> ConstAllow {
        if self
            .passthrough
            .iter()
            .any(|p| p.token == token && p.nr == nr)
        {
            return ConstAllow::Passthrough;
        }
        is_const_allow(prog, token, nr)
    }
}

/// Why one filter's emulation leaves a syscall number out of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum NotCacheable {
    /// `LD W ABS` of a word other than `nr` and `arch` at instruction `pc`.
    Load {
        pc: usize,
        offset: u32,
        field: Option<Field>,
    },
    /// Reaches a return value other than exactly `SECCOMP_RET_ALLOW` (including `ALLOW` with
    /// non-zero data).
    Return { pc: usize, value: RetVal },
    /// An instruction the emulator does not understand.
    Unsupported { pc: usize, insn: Insn },
    /// Control leaves the program (only possible for programs the kernel rejects).
    RunsOff { pc: usize },
}

impl NotCacheable {
    /// The instruction index the reason refers to.
    pub fn pc(&self) -> usize {
        match *self {
            NotCacheable::Load { pc, .. }
            | NotCacheable::Return { pc, .. }
            | NotCacheable::Unsupported { pc, .. }
            | NotCacheable::RunsOff { pc } => pc,
        }
    }
}

impl fmt::Display for NotCacheable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotCacheable::Load {
                pc,
                field: Some(field),
                ..
            } => {
                write!(f, "loads {} at {pc}", field.name())
            }
            NotCacheable::Load {
                pc,
                offset,
                field: None,
            } => {
                write!(f, "loads offset {offset} at {pc}")
            }
            NotCacheable::Return { pc, value } => write!(f, "reaches RET {value} at {pc}"),
            NotCacheable::Unsupported { pc, insn } => write!(
                f,
                "uses {} at {pc}, which the cache emulator does not understand",
                mnemonic(insn)
            ),
            NotCacheable::RunsOff { pc } => write!(f, "runs past the end of the program at {pc}"),
        }
    }
}

/// The result of emulating one filter for one `(arch token, nr)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "result")]
pub enum ConstAllow {
    /// Reaches `RET ALLOW` at instruction `pc` using only `nr` and `arch`: cacheable.
    Allow { pc: usize },
    /// Allowed without looking at the filter (`uretprobe`/`uprobe` on x86_64).
    Passthrough,
    /// Not cacheable.
    No(NotCacheable),
}

impl ConstAllow {
    /// Whether the kernel sets the bit.
    pub fn is_allow(&self) -> bool {
        !matches!(self, ConstAllow::No(_))
    }
}

impl fmt::Display for ConstAllow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstAllow::Allow { pc } => write!(f, "constant ALLOW (RET at {pc})"),
            ConstAllow::Passthrough => f.write_str("allowed by the kernel without filtering"),
            ConstAllow::No(reason) => write!(f, "not cacheable: {reason}"),
        }
    }
}

/// The kernel's `seccomp_is_const_allow`: runs `prog` for `seccomp_data` with only `nr` and
/// `arch = token` known. No passthrough (see [`KernelCache::is_const_allow`]).
///
/// Meant for programs the kernel accepts; anything else gets a reason, never a panic.
pub fn is_const_allow(prog: &Program, token: u32, nr: u32) -> ConstAllow {
    let insns = &prog.insns;
    let mut a: u32 = 0;
    let mut pc = 0usize;
    while let Some(&insn) = insns.get(pc) {
        let k = insn.k;
        const LD_ABS: u16 = BPF_LD | BPF_W | BPF_ABS;
        const RET_K: u16 = BPF_RET | BPF_K;
        const JA: u16 = BPF_JMP | BPF_JA;
        const JEQ: u16 = BPF_JMP | BPF_JEQ | BPF_K;
        const JGE: u16 = BPF_JMP | BPF_JGE | BPF_K;
        const JGT: u16 = BPF_JMP | BPF_JGT | BPF_K;
        const JSET: u16 = BPF_JMP | BPF_JSET | BPF_K;
        const AND: u16 = BPF_ALU | BPF_AND | BPF_K;
        match insn.code {
            LD_ABS => match k {
                OFF_NR => a = nr,
                OFF_ARCH => a = token,
                _ => {
                    let field = Field::at_offset(k, Endian::of_arch_token(token));
                    return ConstAllow::No(NotCacheable::Load {
                        pc,
                        offset: k,
                        field,
                    });
                }
            },
            RET_K if k == SECCOMP_RET_ALLOW => return ConstAllow::Allow { pc },
            RET_K => {
                return ConstAllow::No(NotCacheable::Return {
                    pc,
                    value: RetVal(k),
                })
            }
            JA => match pc.checked_add(k as usize) {
                Some(t) => pc = t,
                None => return ConstAllow::No(NotCacheable::RunsOff { pc }),
            },
            JEQ | JGE | JGT | JSET => {
                let taken = match insn.code {
                    JEQ => a == k,
                    JGE => a >= k,
                    JGT => a > k,
                    _ => a & k != 0,
                };
                pc += if taken { insn.jt } else { insn.jf } as usize;
            }
            AND => a &= k,
            _ => return ConstAllow::No(NotCacheable::Unsupported { pc, insn }),
        }
        pc += 1;
    }
    ConstAllow::No(NotCacheable::RunsOff { pc })
}

/// Whether a syscall skips the filters, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum CacheStatus {
    /// Cached: every attached filter is constant-allow; `how` is the newest filter's result.
    Cached { how: ConstAllow },
    /// Filter number `filter` (0 = the first attached) is not constant-allow.
    NotCached { filter: usize, reason: NotCacheable },
    /// The number is outside the bitmap (negative numbers, x32 numbers, `>= table_size`).
    OutsideTable { table_size: u32 },
    /// The kernel has no bitmap for this arch token.
    NoBitmap,
    /// No filter is attached yet (the kernel's starting point, `bitmap_fill`: nothing runs).
    NoFilter,
}

impl CacheStatus {
    /// Whether no filter runs for the syscall.
    pub fn is_cached(&self) -> bool {
        matches!(self, CacheStatus::Cached { .. } | CacheStatus::NoFilter)
    }
}

impl fmt::Display for CacheStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Not "cached": the filter's decision plays no part (`analyze` counts it apart).
            CacheStatus::Cached {
                how: ConstAllow::Passthrough,
            } => f.write_str("never filtered: the kernel allows it without running any filter"),
            CacheStatus::Cached { how } => write!(f, "cached: {how}"),
            CacheStatus::NotCached { filter, reason } => {
                write!(f, "not cached: filter {filter} {reason}")
            }
            CacheStatus::OutsideTable { table_size } => write!(
                f,
                "not cached: outside the kernel's bitmap (numbers 0..{table_size})"
            ),
            CacheStatus::NoBitmap => {
                f.write_str("not cached: the kernel keeps no bitmap for this arch")
            }
            CacheStatus::NoFilter => f.write_str("no filter attached"),
        }
    }
}

/// The allow bitmaps of the newest filter of a task, with the reason for every clear bit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheBitmap {
    kernel: KernelCache,
    filters: usize,
    /// One slot per number of each target (native first), as in `kernel.targets()`.
    slots: Vec<Vec<CacheStatus>>,
}

impl CacheBitmap {
    /// The state before any filter is attached (`bitmap_fill`): every number set.
    pub fn new(kernel: KernelCache) -> Self {
        let slots = kernel
            .targets()
            .map(|t| vec![CacheStatus::NoFilter; t.table_size as usize])
            .collect();
        CacheBitmap {
            kernel,
            filters: 0,
            slots,
        }
    }

    /// The bitmaps after attaching `prog` on top of this state (`seccomp_cache_prepare`):
    /// clear bits stay clear, set bits stay set iff `prog` is constant-allow for them.
    pub fn attach(&self, prog: &Program) -> CacheBitmap {
        let mut next = self.clone();
        let filter = self.filters;
        let targets: Vec<CacheTarget> = self.kernel.targets().copied().collect();
        for (t, slots) in targets.iter().zip(next.slots.iter_mut()) {
            for (nr, slot) in slots.iter_mut().enumerate() {
                if !slot.is_cached() {
                    continue;
                }
                *slot = match self.kernel.is_const_allow(prog, t.token, nr as u32) {
                    ConstAllow::No(reason) => CacheStatus::NotCached { filter, reason },
                    how => CacheStatus::Cached { how },
                };
            }
        }
        next.filters += 1;
        next
    }

    /// The kernel this bitmap models.
    pub fn kernel(&self) -> &KernelCache {
        &self.kernel
    }

    /// Number of filters attached.
    pub fn filters(&self) -> usize {
        self.filters
    }

    /// Whether a syscall with `seccomp_data.arch == token` and `seccomp_data.nr == nr` (as
    /// unsigned, so `-1` is `0xffff_ffff`) returns ALLOW without running any filter.
    pub fn is_cached(&self, token: u32, nr: u32) -> bool {
        self.status(token, nr).is_cached()
    }

    /// Whether the syscall is cached, and if not, which filter and instruction prevent it.
    pub fn status(&self, token: u32, nr: u32) -> CacheStatus {
        let Some(index) = self.target_index(token) else {
            return CacheStatus::NoBitmap;
        };
        match self.slots[index].get(nr as usize) {
            Some(s) => *s,
            None => CacheStatus::OutsideTable {
                table_size: self.slots[index].len() as u32,
            },
        }
    }

    /// The cached numbers of the bitmap for `token`, ascending.
    pub fn cached_numbers(&self, token: u32) -> Vec<u32> {
        self.target_index(token)
            .map(|i| {
                (0..self.slots[i].len() as u32)
                    .filter(|&nr| self.slots[i][nr as usize].is_cached())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// [`cached_numbers`](Self::cached_numbers) without the kernel's passthroughs
    /// (`uretprobe`/`uprobe` on x86_64, set whatever the filter does): the numbers the
    /// filter itself lets the kernel cache, as `analyze` and `optimize --report` count them.
    pub fn cached_by_filter(&self, token: u32) -> Vec<u32> {
        let mut numbers = self.cached_numbers(token);
        numbers.retain(|&nr| {
            !matches!(
                self.status(token, nr),
                CacheStatus::Cached {
                    how: ConstAllow::Passthrough
                }
            )
        });
        numbers
    }

    fn target_index(&self, token: u32) -> Option<usize> {
        let t = self.kernel.target_for(token)?;
        Some(usize::from(t.token != self.kernel.native.token))
    }
}

/// A short name for an instruction, for reasons (`ALU ADD K`, `RET A`, `LDX M[3]`).
fn mnemonic(insn: &Insn) -> String {
    let c = insn.code;
    let src_name = |c: u16| if src(c) == BPF_X { "X" } else { "K" };
    let alu_op = |c: u16| match op(c) {
        BPF_ADD => "ADD",
        BPF_SUB => "SUB",
        BPF_MUL => "MUL",
        BPF_DIV => "DIV",
        BPF_OR => "OR",
        BPF_AND => "AND",
        BPF_LSH => "LSH",
        BPF_RSH => "RSH",
        BPF_NEG => "NEG",
        BPF_MOD => "MOD",
        BPF_XOR => "XOR",
        _ => "?",
    };
    let load = |reg: &str| match mode(c) {
        BPF_IMM => format!("{reg} IMM"),
        BPF_MEM => format!("{reg} M[{}]", insn.k),
        BPF_LEN => format!("{reg} LEN"),
        BPF_ABS => format!("{reg} ABS (size 0x{:02x})", size(c)),
        BPF_IND => format!("{reg} IND"),
        BPF_MSH => format!("{reg} MSH"),
        _ => format!("opcode 0x{c:02x}"),
    };
    match class(c) {
        BPF_LD => load("LD"),
        BPF_LDX => load("LDX"),
        BPF_ST => format!("ST M[{}]", insn.k),
        BPF_STX => format!("STX M[{}]", insn.k),
        BPF_ALU if op(c) == BPF_NEG => "ALU NEG".into(),
        BPF_ALU => format!("ALU {} {}", alu_op(c), src_name(c)),
        BPF_JMP => {
            let name = match op(c) {
                BPF_JEQ => "JEQ",
                BPF_JGT => "JGT",
                BPF_JGE => "JGE",
                BPF_JSET => "JSET",
                _ => return format!("opcode 0x{c:02x}"),
            };
            format!("{name} {}", src_name(c))
        }
        BPF_RET if rval(c) == BPF_A => "RET A".into(),
        BPF_RET if rval(c) == BPF_X => "RET X".into(),
        BPF_MISC if miscop(c) == BPF_TAX => "TAX".into(),
        BPF_MISC if miscop(c) == BPF_TXA => "TXA".into(),
        _ => format!("opcode 0x{c:02x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::action::{SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS};

    const X86_64: u32 = 0xc000_003e;
    const I386: u32 = 0x4000_0003;

    fn jeq(k: u32, jt: u8, jf: u8) -> Insn {
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf)
    }

    /// arch check, then allow `read` (0) and `write` (1), ERRNO otherwise.
    fn small_allowlist() -> Program {
        Program::new(vec![
            Insn::ld_abs(4),                  // 0
            jeq(X86_64, 0, 4),                // 1
            Insn::ld_abs(0),                  // 2
            jeq(0, 2, 0),                     // 3
            jeq(1, 1, 0),                     // 4
            Insn::ret(SECCOMP_RET_ERRNO | 1), // 5
            Insn::ret(SECCOMP_RET_ALLOW),     // 6
        ])
    }

    #[test]
    fn allow_list_is_cached_per_number_and_arch() {
        let p = small_allowlist();
        assert_eq!(is_const_allow(&p, X86_64, 0), ConstAllow::Allow { pc: 6 });
        assert_eq!(is_const_allow(&p, X86_64, 1), ConstAllow::Allow { pc: 6 });
        assert_eq!(
            is_const_allow(&p, X86_64, 2),
            ConstAllow::No(NotCacheable::Return {
                pc: 5,
                value: RetVal(0x0005_0001)
            })
        );
        // The i386 path jumps from 1 to 6 directly: allowed for every i386 number.
        assert_eq!(is_const_allow(&p, I386, 200), ConstAllow::Allow { pc: 6 });
        assert_eq!(
            is_const_allow(&p, X86_64, 2).to_string(),
            "not cacheable: reaches RET ERRNO(1) at 5"
        );
    }

    #[test]
    fn argument_loads_name_the_field_in_the_arch_byte_order() {
        let p = Program::new(vec![Insn::ld_abs(20), Insn::ret(SECCOMP_RET_ALLOW)]);
        let r = is_const_allow(&p, X86_64, 0);
        assert_eq!(r.to_string(), "not cacheable: loads args[0].hi at 0");
        // s390x is big-endian: offset 20 is the low half of args[0].
        let r = is_const_allow(&p, Arch::S390x.token(), 0);
        assert_eq!(r.to_string(), "not cacheable: loads args[0].lo at 0");
        let ip = Program::new(vec![Insn::ld_abs(8), Insn::ret(SECCOMP_RET_ALLOW)]);
        assert_eq!(
            is_const_allow(&ip, X86_64, 3).to_string(),
            "not cacheable: loads ip.lo at 0"
        );
    }

    #[test]
    fn allow_with_data_is_not_cached() {
        // 0x7fff0001 acts as ALLOW but is not `k == SECCOMP_RET_ALLOW`.
        let p = Program::new(vec![Insn::ret(SECCOMP_RET_ALLOW | 1)]);
        assert_eq!(
            is_const_allow(&p, X86_64, 0),
            ConstAllow::No(NotCacheable::Return {
                pc: 0,
                value: RetVal(0x7fff_0001)
            })
        );
    }

    #[test]
    fn unsupported_instructions_are_named() {
        let cases: [(Insn, &str); 6] = [
            (Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 1), "ALU ADD K"),
            (Insn::stmt(BPF_ALU | BPF_AND | BPF_X, 0), "ALU AND X"),
            (Insn::stmt(BPF_LD | BPF_W | BPF_LEN, 0), "LD LEN"),
            (Insn::stmt(BPF_LD | BPF_IMM, 0), "LD IMM"),
            (Insn::stmt(BPF_MISC | BPF_TAX, 0), "TAX"),
            (Insn::stmt(BPF_RET | BPF_A, 0), "RET A"),
        ];
        for (insn, name) in cases {
            let p = Program::new(vec![Insn::ld_abs(0), insn, Insn::ret(SECCOMP_RET_ALLOW)]);
            let r = is_const_allow(&p, X86_64, 0);
            assert_eq!(r, ConstAllow::No(NotCacheable::Unsupported { pc: 1, insn }));
            assert!(r.to_string().contains(name), "{r}");
        }
        let jx = Insn::jump(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 0);
        let p = Program::new(vec![jx, Insn::ret(SECCOMP_RET_ALLOW)]);
        assert!(is_const_allow(&p, X86_64, 0)
            .to_string()
            .contains("JEQ X at 0"));
    }

    #[test]
    fn invalid_programs_give_reasons_not_panics() {
        let fall = Program::new(vec![Insn::ld_abs(0)]);
        assert_eq!(
            is_const_allow(&fall, X86_64, 0),
            ConstAllow::No(NotCacheable::RunsOff { pc: 1 })
        );
        let far = Program::new(vec![Insn::ja(u32::MAX), Insn::ret(SECCOMP_RET_ALLOW)]);
        assert!(!is_const_allow(&far, X86_64, 0).is_allow());
        let empty = Program::new(vec![]);
        assert!(!is_const_allow(&empty, X86_64, 0).is_allow());
    }

    #[test]
    fn kernel_models() {
        let k = KernelCache::for_arch(Arch::X86_64).unwrap();
        assert_eq!((k.native.token, k.native.table_size), (X86_64, 471));
        assert_eq!(k.compat.map(|c| (c.token, c.table_size)), Some((I386, 471)));
        assert_eq!(k.passthrough.len(), 2);
        assert!(KernelCache::for_arch(Arch::Mips64).is_none());
        assert!(KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(5, 10)).is_none());
        let k513 = KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(5, 13)).unwrap();
        assert!(k513.passthrough.is_empty());
        // Each kernel's bitmap ends at its own newest syscall (the kernel's syscall_64.tbl
        // of that release): 5.11 at epoll_pwait2 (441), 5.13 at landlock_restrict_self
        // (446), 6.8 at lsm_list_modules (461); a later kernel is modelled as 6.18.
        let size = |arch, major, minor| {
            KernelCache::for_kernel(arch, KernelVersion::new(major, minor))
                .unwrap()
                .native
                .table_size
        };
        assert_eq!(size(Arch::X86_64, 5, 11), 442);
        assert_eq!(k513.native.table_size, 447);
        assert_eq!(k513.compat.unwrap().table_size, 447);
        assert_eq!(size(Arch::Aarch64, 6, 8), 462);
        assert_eq!(size(Arch::X86_64, 6, 19), 471);
        // 32-bit ARM rounds up to a multiple of 4: 442 -> 444.
        assert_eq!(size(Arch::Arm, 5, 11), 444);
        let k614 = KernelCache::for_kernel(Arch::X86_64, KernelVersion::new(6, 14)).unwrap();
        assert_eq!(
            k614.passthrough.iter().map(|p| p.nr).collect::<Vec<_>>(),
            vec![335]
        );
        assert!(
            KernelCache::for_kernel(Arch::S390x, KernelVersion::new(6, 19))
                .unwrap()
                .compat
                .is_none()
        );
        assert_eq!(
            KernelCache::for_arch(Arch::Arm).unwrap().native.table_size,
            472
        );
        // A native-only kernel consults the native bitmap whatever the token.
        let rv = KernelCache::for_arch(Arch::Riscv64).unwrap();
        assert_eq!(rv.target_for(0x1234).map(|t| t.name), Some("riscv64"));
        assert!(k.target_for(0x1234).is_none());
        assert_eq!(
            "6.18.44-fc-v669".parse::<KernelVersion>(),
            Ok(KernelVersion::new(6, 18))
        );
        assert!("six".parse::<KernelVersion>().is_err());
    }

    #[test]
    fn bitmap_and_of_filters_with_reasons() {
        let k = KernelCache::for_arch(Arch::X86_64).unwrap();
        let first = CacheBitmap::new(k).attach(&small_allowlist());
        assert_eq!(first.cached_numbers(X86_64), vec![0, 1, 335, 336]);
        assert_eq!(first.cached_numbers(I386).len(), 471);
        // A second filter that kills i386 and loads args for `write`.
        let second = Program::new(vec![
            Insn::ld_abs(4),
            jeq(X86_64, 1, 0),
            Insn::ret(SECCOMP_RET_KILL_PROCESS),
            Insn::ld_abs(0),
            jeq(1, 0, 1),
            Insn::ld_abs(16),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        let both = first.attach(&second);
        assert_eq!(both.filters(), 2);
        assert_eq!(both.cached_numbers(X86_64), vec![0, 335, 336]);
        assert!(both.cached_numbers(I386).is_empty());
        assert_eq!(
            both.status(X86_64, 1).to_string(),
            "not cached: filter 1 loads args[0].lo at 5"
        );
        assert_eq!(
            both.status(X86_64, 2).to_string(),
            "not cached: filter 0 reaches RET ERRNO(1) at 5"
        );
        assert_eq!(
            both.status(X86_64, 0x4000_0000),
            CacheStatus::OutsideTable { table_size: 471 }
        );
        assert_eq!(
            both.status(X86_64, u32::MAX),
            CacheStatus::OutsideTable { table_size: 471 }
        );
        assert_eq!(both.status(0xdead, 0), CacheStatus::NoBitmap);
        assert_eq!(
            both.status(X86_64, 335),
            CacheStatus::Cached {
                how: ConstAllow::Passthrough
            }
        );
    }
}
