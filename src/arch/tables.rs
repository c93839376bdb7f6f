//! Syscall name tables per architecture.
//!
//! Source: the `syscall-numbers` crate (pinned in Cargo.toml), which is generated from the
//! kernel's own `syscall*.tbl` / `unistd.h` files. Version 4.0.3 carries the tables of
//! Linux 6.18 (its newest entries are `file_getattr`/`file_setattr` of 6.17 and `listns` of
//! 6.18). See [`TABLES_SOURCE`].

use super::Arch;
use std::collections::HashMap;
use std::sync::OnceLock;
use syscall_numbers as sn;

/// Where the syscall tables come from, for reports.
pub const TABLES_SOURCE: &str = "syscall-numbers 4.0.3 (Linux 6.18 syscall tables)";

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
    /// The highest syscall number in the table.
    pub fn max_nr(&self) -> Option<u32> {
        self.by_nr.last().map(|&(n, _)| n)
    }

    fn build(arch: Arch, base: u32, lookup: fn(core::ffi::c_long) -> Option<&'static str>) -> Self {
        // Every table in syscall-numbers is dense from its base; 2048 entries covers them all.
        let mut by_nr = Vec::new();
        for i in 0..2048u32 {
            let nr = base + i;
            if let Some(name) = lookup(nr as core::ffi::c_long) {
                by_nr.push((nr, name));
            }
        }
        let by_name = by_nr.iter().map(|&(n, name)| (name, n)).collect();
        SyscallTable {
            arch,
            by_name,
            by_nr,
        }
    }
}

pub(super) fn table(arch: Arch) -> &'static SyscallTable {
    static TABLES: OnceLock<Vec<SyscallTable>> = OnceLock::new();
    let all = TABLES.get_or_init(|| {
        Arch::ALL
            .iter()
            .map(|&a| {
                let (base, lookup): (u32, fn(core::ffi::c_long) -> Option<&'static str>) = match a {
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
                };
                SyscallTable::build(a, base, lookup)
            })
            .collect()
    });
    &all[Arch::ALL.iter().position(|&a| a == arch).expect("every Arch is in ALL")]
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
}
