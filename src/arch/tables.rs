//! Syscall name tables per architecture.
//!
//! Source: the `syscall-numbers` crate (pinned in Cargo.toml), version 4.0.3, which carries the
//! syscall numbers of Linux 6.18 (its newest entries are `file_getattr`/`file_setattr` of 6.17
//! and `listns` of 6.18). Its names, however, follow the C library's headers rather than the
//! kernel's own `syscall*.tbl` files: the 32-bit-time calls are spelled `clock_gettime32`,
//! `gettimeofday_time32`, …, and numbers that the C header defines by expression
//! (`__NR_timer_create + 1`, …) are missing. Filters are written against the kernel's names
//! (that is what libseccomp, runc and Docker profiles use), so [`FIXES`] turns the crate's
//! tables into the kernel's, each correction citing the kernel file it comes from.
//! `tests/syscall_tables.rs` checks the result against the system libseccomp in both
//! directions. See [`TABLES_SOURCE`].

use super::Arch;
use rustc_hash::FxHashMap as HashMap;
use std::sync::OnceLock;
use syscall_numbers as sn;

/// Where the syscall tables come from, for reports.
pub const TABLES_SOURCE: &str =
    "syscall-numbers 4.0.3 (Linux 6.18 syscall numbers) with kernel-name corrections";

/// One architecture's syscall numbers, both ways.
#[derive(Debug)]
pub struct SyscallTable {
    arch: Arch,
    by_name: HashMap<&'static str, u32>,
    /// Sorted by number.
    by_nr: Vec<(u32, &'static str)>,
}

impl SyscallTable {
    /// The architecture of this table.
    pub fn arch(&self) -> Arch {
        self.arch
    }
    /// The number of syscall `name` as it appears in `seccomp_data.nr` (x32 numbers include
    /// `__X32_SYSCALL_BIT`, MIPS numbers their ABI base).
    pub fn nr(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
    /// The name of syscall number `nr`.
    pub fn name(&self, nr: u32) -> Option<&'static str> {
        self.by_nr
            .binary_search_by_key(&nr, |&(n, _)| n)
            .ok()
            .map(|i| self.by_nr[i].1)
    }
    /// All `(nr, name)` pairs, sorted by number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &'static str)> + '_ {
        self.by_nr.iter().copied()
    }
    /// Number of syscalls in the table.
    pub fn len(&self) -> usize {
        self.by_nr.len()
    }
    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.by_nr.is_empty()
    }
    /// The highest syscall number in the table (on ARM this is a private call at
    /// `0xf0000 + n`, see [`FIXES`]).
    pub fn max_nr(&self) -> Option<u32> {
        self.by_nr.last().map(|&(n, _)| n)
    }

    fn build(arch: Arch, base: u32, lookup: fn(core::ffi::c_long) -> Option<&'static str>) -> Self {
        // Every table in syscall-numbers is dense from its base; 2048 entries covers them all.
        let mut by_nr = Vec::new();
        for i in 0..2048u32 {
            let nr = base + i;
            if let Some(name) = lookup(nr as core::ffi::c_long) {
                if !name.is_empty() {
                    by_nr.push((nr, name));
                }
            }
        }
        for fixes in FIXES.iter().filter(|f| f.arches.contains(&arch)) {
            for fix in fixes.fixes {
                fix.apply(base, &mut by_nr);
            }
        }
        by_nr.sort_unstable_by_key(|&(n, _)| n);
        by_nr.dedup_by_key(|&mut (n, _)| n);
        let by_name = by_nr.iter().map(|&(n, name)| (name, n)).collect();
        SyscallTable {
            arch,
            by_name,
            by_nr,
        }
    }
}

/// One correction to a `syscall-numbers` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fix {
    /// The kernel calls syscall `from` `to`.
    Rename {
        from: &'static str,
        to: &'static str,
    },
    /// The kernel has syscall `name` at `base + offset` (base: 0x4000_0000 for x32, 4000/5000/6000
    /// for the MIPS ABIs, 0 elsewhere).
    Add { offset: u32, name: &'static str },
    /// The kernel's table for this ABI has no syscall `name`.
    Remove { name: &'static str },
}

impl Fix {
    fn apply(self, base: u32, by_nr: &mut Vec<(u32, &'static str)>) {
        match self {
            Fix::Rename { from, to } => {
                for entry in by_nr.iter_mut().filter(|e| e.1 == from) {
                    entry.1 = to;
                }
            }
            Fix::Add { offset, name } => {
                let nr = base + offset;
                by_nr.retain(|&(n, _)| n != nr);
                by_nr.push((nr, name));
            }
            Fix::Remove { name } => by_nr.retain(|&(_, n)| n != name),
        }
    }
}

/// A group of corrections, the arches they apply to, and the kernel source that says so.
#[derive(Debug)]
pub struct Fixes {
    pub arches: &'static [Arch],
    pub fixes: &'static [Fix],
    /// Kernel file(s) the corrected entries are taken from.
    pub source: &'static str,
}

const ARCHES_32BIT_TIME: &[Arch] = &[
    Arch::X86,
    Arch::Arm,
    Arch::Ppc,
    Arch::Mips,
    Arch::Mipsel,
    Arch::Mips64n32,
    Arch::Mipsel64n32,
];

/// Every correction applied on top of `syscall-numbers` 4.0.3.
pub const FIXES: &[Fixes] = &[
    Fixes {
        // The kernel keeps the historical names for the 32-bit-time syscalls; only their entry
        // points are called `sys_*_time32` (e.g. `265 i386 clock_gettime sys_clock_gettime32`).
        arches: ARCHES_32BIT_TIME,
        fixes: &[
            Fix::Rename { from: "gettimeofday_time32", to: "gettimeofday" },
            Fix::Rename { from: "settimeofday_time32", to: "settimeofday" },
            Fix::Rename { from: "timer_settime32", to: "timer_settime" },
            Fix::Rename { from: "timer_gettime32", to: "timer_gettime" },
            Fix::Rename { from: "clock_settime32", to: "clock_settime" },
            Fix::Rename { from: "clock_gettime32", to: "clock_gettime" },
            Fix::Rename { from: "clock_getres_time32", to: "clock_getres" },
            Fix::Rename { from: "clock_nanosleep_time32", to: "clock_nanosleep" },
            Fix::Rename { from: "timerfd_settime32", to: "timerfd_settime" },
            Fix::Rename { from: "timerfd_gettime32", to: "timerfd_gettime" },
        ],
        source: "arch/{x86/entry/syscalls/syscall_32.tbl, arm/tools/syscall.tbl, \
                 powerpc/kernel/syscalls/syscall.tbl, mips/kernel/syscalls/syscall_{o32,n32}.tbl}",
    },
    Fixes {
        // Missing from syscall-numbers' i386 table (defined by expression in the C header).
        arches: &[Arch::X86],
        fixes: &[
            Fix::Add { offset: 76, name: "getrlimit" },
            Fix::Add { offset: 260, name: "timer_settime" },
            Fix::Add { offset: 261, name: "timer_gettime" },
            Fix::Add { offset: 262, name: "timer_getoverrun" },
            Fix::Add { offset: 263, name: "timer_delete" },
            Fix::Add { offset: 264, name: "clock_settime" },
            Fix::Add { offset: 265, name: "clock_gettime" },
            Fix::Add { offset: 266, name: "clock_getres" },
            Fix::Add { offset: 267, name: "clock_nanosleep" },
            Fix::Add { offset: 278, name: "mq_unlink" },
            Fix::Add { offset: 279, name: "mq_timedsend" },
            Fix::Add { offset: 280, name: "mq_timedreceive" },
            Fix::Add { offset: 281, name: "mq_notify" },
            Fix::Add { offset: 282, name: "mq_getsetattr" },
        ],
        source: "arch/x86/entry/syscalls/syscall_32.tbl",
    },
    Fixes {
        // ARM's table spells two calls with an `arm_` prefix (the uapi header only aliases
        // `__NR_sync_file_range2` to `__NR_arm_sync_file_range`), and the ARM-private calls at
        // `__ARM_NR_BASE = 0x0f0000` are not in the table at all but are real syscalls that
        // seccomp sees with these numbers (also on arm64 in compat mode).
        arches: &[Arch::Arm],
        fixes: &[
            Fix::Rename { from: "fadvise64_64", to: "arm_fadvise64_64" },
            Fix::Rename { from: "sync_file_range2", to: "arm_sync_file_range" },
            Fix::Add { offset: 0x0f_0001, name: "breakpoint" },
            Fix::Add { offset: 0x0f_0002, name: "cacheflush" },
            Fix::Add { offset: 0x0f_0003, name: "usr26" },
            Fix::Add { offset: 0x0f_0004, name: "usr32" },
            Fix::Add { offset: 0x0f_0005, name: "set_tls" },
            Fix::Add { offset: 0x0f_0006, name: "get_tls" },
        ],
        source: "arch/arm/tools/syscall.tbl (270, 341); arch/arm/include/uapi/asm/unistd.h (__ARM_NR_*)",
    },
    Fixes {
        // `__NR_arch_specific_syscall` (244) is only the base of the arch-private range, not a
        // syscall; RISC-V defines two calls in that range.
        arches: &[Arch::Riscv64],
        fixes: &[
            Fix::Remove { name: "arch_specific_syscall" },
            Fix::Add { offset: 258, name: "riscv_hwprobe" },
            Fix::Add { offset: 259, name: "riscv_flush_icache" },
        ],
        source: "include/uapi/asm-generic/unistd.h; arch/riscv/include/uapi/asm/unistd.h; scripts/syscall.tbl",
    },
    Fixes {
        arches: &[Arch::Loongarch64],
        fixes: &[Fix::Remove { name: "arch_specific_syscall" }],
        source: "include/uapi/asm-generic/unistd.h; scripts/syscall.tbl",
    },
    Fixes {
        // `453 64 map_shadow_stack`: ABI `64`, so not part of the x32 table (x32 gets the
        // `common` and `x32` rows only).
        arches: &[Arch::X32],
        fixes: &[Fix::Remove { name: "map_shadow_stack" }],
        source: "arch/x86/entry/syscalls/syscall_64.tbl",
    },
];

pub(super) fn table(arch: Arch) -> &'static SyscallTable {
    static TABLES: OnceLock<Vec<SyscallTable>> = OnceLock::new();
    let all = TABLES.get_or_init(|| {
        Arch::ALL
            .iter()
            .map(|&a| {
                let (base, lookup) = source_table(a);
                SyscallTable::build(a, base, lookup)
            })
            .collect()
    });
    &all[Arch::ALL
        .iter()
        .position(|&a| a == arch)
        .expect("every Arch is in ALL")]
}

type Lookup = fn(core::ffi::c_long) -> Option<&'static str>;

/// The `syscall-numbers` table of `arch` and the number its syscalls start at.
fn source_table(arch: Arch) -> (u32, Lookup) {
    match arch {
        Arch::X86_64 => (0, sn::x86_64::sys_call_name),
        Arch::X86 => (0, sn::x86::sys_call_name),
        Arch::X32 => (0x4000_0000, sn::x32::sys_call_name),
        Arch::Aarch64 => (0, sn::aarch64::sys_call_name),
        Arch::Arm => (0, sn::arm::sys_call_name),
        Arch::Riscv64 => (0, sn::riscv64::sys_call_name),
        Arch::S390x => (0, sn::s390x::sys_call_name),
        Arch::Ppc64le | Arch::Ppc64 => (0, sn::powerpc64::sys_call_name),
        Arch::Ppc => (0, sn::powerpc::sys_call_name),
        Arch::Mips | Arch::Mipsel => (4000, sn::mips::sys_call_name),
        Arch::Mips64 | Arch::Mipsel64 => (5000, sn::mips64::sys_call_name),
        Arch::Mips64n32 | Arch::Mipsel64n32 => (6000, sn::mipsn32::sys_call_name),
        Arch::Loongarch64 => (0, sn::loongarch64::sys_call_name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_numbers() {
        // Numbers as in the kernel's syscall tables.
        assert_eq!(Arch::X86_64.syscalls().nr("read"), Some(0));
        assert_eq!(Arch::X86_64.syscalls().nr("clone3"), Some(435));
        assert_eq!(Arch::X86.syscalls().nr("socketcall"), Some(102));
        assert_eq!(Arch::X32.syscalls().nr("write"), Some(0x4000_0001));
        assert_eq!(Arch::Aarch64.syscalls().nr("openat"), Some(56));
        assert_eq!(Arch::Mips64.syscalls().nr("read"), Some(5000));
        assert_eq!(Arch::X86_64.syscalls().name(59), Some("execve"));
    }

    #[test]
    fn corrections_follow_the_kernel_tables() {
        // arch/x86/entry/syscalls/syscall_32.tbl: `265 i386 clock_gettime sys_clock_gettime32`.
        let x86 = Arch::X86.syscalls();
        assert_eq!(x86.nr("clock_gettime"), Some(265));
        assert_eq!(x86.name(78), Some("gettimeofday"));
        assert_eq!(x86.nr("getrlimit"), Some(76));
        assert_eq!(x86.nr("clock_gettime32"), None);
        // arch/arm/include/uapi/asm/unistd.h: __ARM_NR_BASE + 5.
        let arm = Arch::Arm.syscalls();
        assert_eq!(arm.nr("set_tls"), Some(0xf_0005));
        assert_eq!(arm.name(341), Some("arm_sync_file_range"));
        assert_eq!(arm.max_nr(), Some(0xf_0006));
        // MIPS o32 (base 4000): `263 o32 clock_gettime sys_clock_gettime32`.
        assert_eq!(Arch::Mipsel.syscalls().nr("clock_gettime"), Some(4263));
        assert_eq!(Arch::Riscv64.syscalls().nr("riscv_flush_icache"), Some(259));
        assert_eq!(Arch::Riscv64.syscalls().name(244), None);
        assert_eq!(Arch::X32.syscalls().nr("map_shadow_stack"), None);
        assert_eq!(Arch::X86_64.syscalls().nr("map_shadow_stack"), Some(453));
    }

    #[test]
    fn names_and_numbers_are_unique() {
        for a in Arch::ALL {
            let t = a.syscalls();
            assert_eq!(t.by_name.len(), t.len(), "{a}: a name appears twice");
        }
    }
}
