//! Issuing one system call through each x86_64 entry ABI, and what `seccomp_data` the kernel
//! builds for it.
//!
//! A 64-bit process can reach three syscall ABIs, and a seccomp filter sees each differently:
//!
//! | entry | instruction | `arch` | `nr` | `args[i]` |
//! |---|---|---|---|---|
//! | [`Entry::Native`] | `syscall`, nr in `eax` | `AUDIT_ARCH_X86_64` | `eax` as s32 | `rdi rsi rdx r10 r8 r9`, 64 bits |
//! | [`Entry::X32`] | `syscall`, `nr \| 0x40000000` | `AUDIT_ARCH_X86_64` | with bit 30 | as native |
//! | [`Entry::I386`] | `int $0x80` | `AUDIT_ARCH_I386` | `eax` as s32 | `ebx ecx edx esi edi ebp` |
//!
//! - `nr` is always the low 32 bits of `rax`, read as a signed 32-bit number (negative values
//!   such as -1 reach the filter unchanged; the upper half of `rax` is ignored, see the
//!   `nr_is_the_low_half_of_rax` test).
//! - The i386 entry passes the *whole* 64-bit `rbx…rbp` to seccomp on this kernel: a 64-bit
//!   process that leaves garbage in the upper halves makes the filter see non-zero
//!   `args[i].hi` (see the `i386_args_keep_upper_register_halves` test). [`issue`] therefore
//!   zero-extends the six 32-bit arguments, as a real 32-bit process would have them, so the
//!   filter sees `args[i].hi == 0`.
//! - `instruction_pointer` is `regs->ip`, the address right after the `syscall` or
//!   `int $0x80` instruction, with all 64 bits also for the i386 entry. [`issue`] reports it by
//!   taking the address of a label placed right after the instruction.
//! - With `CONFIG_X86_X32_ABI` off the kernel answers x32 numbers with `ENOSYS`, but only
//!   after seccomp has run the filter on them, so they are still observable.

use crate::arch::{Arch, X32_SYSCALL_BIT};
use crate::bpf::SeccompData;
use core::arch::asm;

/// A syscall entry ABI of an x86_64 kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entry {
    /// `syscall` with the number as given.
    Native,
    /// `int $0x80` from the 64-bit process: the i386 compat ABI.
    I386,
    /// `syscall` with [`X32_SYSCALL_BIT`] set in the number.
    X32,
}

/// What the kernel left in `rax` and the instruction pointer it reported to seccomp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawReturn {
    /// `rax` after the call (for an `ERRNO(e)` decision, `-e`).
    pub rax: u64,
    /// Address right after the syscall instruction (`seccomp_data.instruction_pointer`).
    pub ip: u64,
}

impl Entry {
    pub const ALL: [Entry; 3] = [Entry::Native, Entry::I386, Entry::X32];

    /// The `AUDIT_ARCH_*` token the kernel puts in `seccomp_data.arch`.
    pub const fn arch_token(self) -> u32 {
        match self {
            Entry::Native | Entry::X32 => Arch::X86_64.token(),
            Entry::I386 => Arch::X86.token(),
        }
    }

    /// The `seccomp_data.nr` a call of `nr` through this entry produces.
    pub const fn seen_nr(self, nr: i32) -> i32 {
        match self {
            Entry::X32 => (nr as u32 | X32_SYSCALL_BIT) as i32,
            Entry::Native | Entry::I386 => nr,
        }
    }

    /// The `seccomp_data.args` a call with `args` through [`issue`] produces: the i386 entry
    /// passes only the low 32 bits of each (zero-extended).
    pub fn seen_args(self, args: [u64; 6]) -> [u64; 6] {
        match self {
            Entry::I386 => args.map(|a| a & 0xffff_ffff),
            Entry::Native | Entry::X32 => args,
        }
    }

    /// The whole `seccomp_data` the kernel builds for `issue(self, nr, args)` when it reports
    /// instruction pointer `ip`.
    pub fn seccomp_data(self, nr: i32, args: [u64; 6], ip: u64) -> SeccompData {
        SeccompData {
            nr: self.seen_nr(nr),
            arch: self.arch_token(),
            instruction_pointer: ip,
            args: self.seen_args(args),
        }
    }

    /// Lower-case name (`native`, `i386`, `x32`).
    pub const fn name(self) -> &'static str {
        match self {
            Entry::Native => "native",
            Entry::I386 => "i386",
            Entry::X32 => "x32",
        }
    }
}

/// Issues system call `nr` with `args` through `entry` and returns `rax` and the reported IP.
///
/// # Safety
/// This really makes the system call: unless a seccomp filter stops it, the kernel runs
/// whatever `nr` means with these arguments (it may unmap memory, kill processes, exit…).
/// Only call it where a filter decides every call without running it, as the oracle does.
#[inline(never)]
pub unsafe fn issue(entry: Entry, nr: i32, args: [u64; 6]) -> RawReturn {
    // Native and x32 share one `syscall` instruction, so they report the same IP.
    match entry {
        Entry::Native | Entry::X32 => syscall_insn(entry.seen_nr(nr) as u32 as u64, args),
        Entry::I386 => int80(nr as u32 as u64, args.map(|a| a & 0xffff_ffff)),
    }
}

/// `int $0x80` with full 64-bit register contents: `rax` and `rbx, rcx, rdx, rsi, rdi, rbp`
/// exactly as given. For finding out what the kernel does with upper register halves.
///
/// # Safety
/// As [`issue`].
#[inline(never)]
pub unsafe fn issue_int80_raw(rax: u64, regs: [u64; 6]) -> RawReturn {
    int80(rax, regs)
}

/// `syscall` with full 64-bit register contents: `rax` and `rdi, rsi, rdx, r10, r8, r9`
/// exactly as given. For finding out what the kernel does with the upper half of `rax`.
///
/// # Safety
/// As [`issue`].
#[inline(never)]
pub unsafe fn issue_syscall_raw(rax: u64, regs: [u64; 6]) -> RawReturn {
    syscall_insn(rax, regs)
}

#[inline(always)]
unsafe fn syscall_insn(rax: u64, a: [u64; 6]) -> RawReturn {
    let ret: u64;
    let ip: u64;
    // `syscall` saves the return address in rcx and rflags in r11. The label right after the
    // instruction is the address the kernel saves as regs->ip.
    asm!(
        "syscall",
        "2:",
        "lea {ip}, [rip + 2b]",
        ip = out(reg) ip,
        inlateout("rax") rax => ret,
        in("rdi") a[0],
        in("rsi") a[1],
        in("rdx") a[2],
        in("r10") a[3],
        in("r8") a[4],
        in("r9") a[5],
        lateout("rcx") _,
        lateout("r11") _,
        options(nostack),
    );
    RawReturn { rax: ret, ip }
}

#[inline(always)]
unsafe fn int80(rax: u64, r: [u64; 6]) -> RawReturn {
    let ret: u64;
    let ip: u64;
    // rbx and rbp belong to LLVM and cannot be operands: swap the first and sixth argument in
    // around the instruction and swap the saved values back afterwards. Every operand has a
    // fixed register, because LLVM may give a `reg` operand rbx itself, which the swaps would
    // corrupt. r8-r11 are declared clobbered because older kernels zeroed them on int $0x80.
    asm!(
        "xchg r12, rbx",
        "xchg r13, rbp",
        "int 0x80",
        "2:",
        "lea r14, [rip + 2b]",
        "xchg r12, rbx",
        "xchg r13, rbp",
        inout("r12") r[0] => _,
        inout("r13") r[5] => _,
        out("r14") ip,
        inlateout("rax") rax => ret,
        in("rcx") r[1],
        in("rdx") r[2],
        in("rsi") r[3],
        in("rdi") r[4],
        lateout("r8") _,
        lateout("r9") _,
        lateout("r10") _,
        lateout("r11") _,
        options(nostack),
    );
    RawReturn { rax: ret, ip }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unfiltered_native_getpid_returns_the_pid() {
        // getpid is 39 on x86_64 (arch/x86/entry/syscalls/syscall_64.tbl) and has no side
        // effects, so it is safe to really run here. (int $0x80 is exercised only in forked
        // children by the oracle: without IA32 emulation it faults.)
        // SAFETY: getpid only reads the caller's pid.
        let native = unsafe { issue(Entry::Native, 39, [0; 6]) };
        assert_eq!(native.rax, std::process::id() as u64);
        assert_ne!(native.ip, 0);
    }

    #[test]
    fn x32_numbers_carry_bit_30_and_i386_arguments_are_32_bits() {
        assert_eq!(Entry::X32.seen_nr(1), 0x4000_0001);
        assert_eq!(Entry::X32.seen_nr(-1), -1);
        assert_eq!(Entry::Native.arch_token(), 0xc000_003e);
        assert_eq!(Entry::I386.arch_token(), 0x4000_0003);
        let d = Entry::I386.seccomp_data(-5, [u64::MAX, 1 << 32, 7, 0, 0, 0], 0x5555_0000_1234);
        assert_eq!(d.args[..3], [0xffff_ffff, 0, 7]);
        assert_eq!((d.nr, d.instruction_pointer), (-5, 0x5555_0000_1234));
    }
}
