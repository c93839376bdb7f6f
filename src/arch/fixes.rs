//! The corrections that turn the `syscall-numbers` crate's tables into the kernel's (see
//! [`super::tables`]).
//!
//! This file is data, and compiled twice: into the library, where [`FIXES`] documents each
//! correction with its kernel source, and into `build.rs`, which applies them to generate the
//! finished tables at build time (so that no process pays for building them). It may use
//! nothing but `super::Arch`, which `build.rs` declares with the same variants.

use super::Arch;

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
    /// Applies the correction to a table of `(nr, name)` pairs whose numbers start at `base`.
    pub fn apply(self, base: u32, by_nr: &mut Vec<(u32, &'static str)>) {
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
