//! The platform a filter targets: architectures (`AUDIT_ARCH_*` tokens, names, byte order,
//! syscall tables) and kernel versions.
//!
//! This module sits at the very bottom of secopt: both `bpf` (which names syscalls in
//! disassembly and emulates the kernel's per-arch allow cache) and `policy` (which resolves
//! syscall names in profiles) use it, and it uses neither.

mod fixes;
mod kernel;
mod name_hash;
mod tables;

pub use kernel::{KernelVersion, ParseKernelVersionError};

pub use tables::{Fix, Fixes, SyscallTable, FIXES, TABLES_SOURCE};

use serde::{Deserialize, Serialize};
use std::fmt;

/// Byte order of the machine a filter runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    Little,
    Big,
}

/// `__AUDIT_ARCH_64BIT`.
pub const AUDIT_ARCH_64BIT: u32 = 0x8000_0000;
/// `__AUDIT_ARCH_LE`.
pub const AUDIT_ARCH_LE: u32 = 0x4000_0000;
/// `__AUDIT_ARCH_CONVENTION_MIPS64_N32`.
pub const AUDIT_ARCH_CONVENTION_MIPS64_N32: u32 = 0x2000_0000;
/// `__X32_SYSCALL_BIT`: x32 syscall numbers carry this bit and share x86_64's arch token.
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Whether `nr`, under x86_64's arch token, is an x32 call: [`X32_SYSCALL_BIT`] set and bit
/// 31 clear. The kernel runs x32's table only for `nr - X32_SYSCALL_BIT` below its size;
/// a number with bit 31 set (`-1`, what a tracer sets to skip a call, among them) is no
/// x32 call, and is counted as x86_64's, whose table has no name for it either.
pub const fn is_x32_nr(nr: u32) -> bool {
    nr & 0xC000_0000 == X32_SYSCALL_BIT
}

const EM_386: u32 = 3;
const EM_MIPS: u32 = 8;
const EM_PPC: u32 = 20;
const EM_PPC64: u32 = 21;
const EM_S390: u32 = 22;
const EM_ARM: u32 = 40;
const EM_X86_64: u32 = 62;
const EM_AARCH64: u32 = 183;
const EM_RISCV: u32 = 243;
const EM_LOONGARCH: u32 = 258;

/// An architecture (ABI) a seccomp filter can be written for.
///
/// `X32` is an ABI of x86_64 kernels: it shares `AUDIT_ARCH_X86_64` and is told apart by
/// [`X32_SYSCALL_BIT`] in the syscall number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    X86_64,
    X86,
    X32,
    Aarch64,
    Arm,
    Riscv64,
    S390x,
    Ppc64le,
    Ppc64,
    Ppc,
    Mips,
    Mipsel,
    Mips64,
    Mipsel64,
    Mips64n32,
    Mipsel64n32,
    Loongarch64,
}

impl Arch {
    /// libseccomp's name for this arch (the `libseccomp` feature: runc's name resolution and
    /// the `bench` peers use the linked library).
    #[cfg(feature = "libseccomp")]
    pub fn libseccomp(self) -> libseccomp::ScmpArch {
        use libseccomp::ScmpArch;
        match self {
            Arch::X86_64 => ScmpArch::X8664,
            Arch::X86 => ScmpArch::X86,
            Arch::X32 => ScmpArch::X32,
            Arch::Aarch64 => ScmpArch::Aarch64,
            Arch::Arm => ScmpArch::Arm,
            Arch::Riscv64 => ScmpArch::Riscv64,
            Arch::S390x => ScmpArch::S390X,
            Arch::Ppc64le => ScmpArch::Ppc64Le,
            Arch::Ppc64 => ScmpArch::Ppc64,
            Arch::Ppc => ScmpArch::Ppc,
            Arch::Mips => ScmpArch::Mips,
            Arch::Mipsel => ScmpArch::Mipsel,
            Arch::Mips64 => ScmpArch::Mips64,
            Arch::Mipsel64 => ScmpArch::Mipsel64,
            Arch::Mips64n32 => ScmpArch::Mips64N32,
            Arch::Mipsel64n32 => ScmpArch::Mipsel64N32,
            Arch::Loongarch64 => ScmpArch::Loongarch64,
        }
    }

    /// Every architecture secopt knows.
    pub const ALL: [Arch; 17] = [
        Arch::X86_64,
        Arch::X86,
        Arch::X32,
        Arch::Aarch64,
        Arch::Arm,
        Arch::Riscv64,
        Arch::S390x,
        Arch::Ppc64le,
        Arch::Ppc64,
        Arch::Ppc,
        Arch::Mips,
        Arch::Mipsel,
        Arch::Mips64,
        Arch::Mipsel64,
        Arch::Mips64n32,
        Arch::Mipsel64n32,
        Arch::Loongarch64,
    ];

    /// The `AUDIT_ARCH_*` token the kernel puts in `seccomp_data.arch`.
    pub const fn token(self) -> u32 {
        const LE: u32 = AUDIT_ARCH_LE;
        const B64: u32 = AUDIT_ARCH_64BIT;
        const N32: u32 = AUDIT_ARCH_CONVENTION_MIPS64_N32;
        match self {
            Arch::X86_64 | Arch::X32 => EM_X86_64 | B64 | LE,
            Arch::X86 => EM_386 | LE,
            Arch::Aarch64 => EM_AARCH64 | B64 | LE,
            Arch::Arm => EM_ARM | LE,
            Arch::Riscv64 => EM_RISCV | B64 | LE,
            Arch::S390x => EM_S390 | B64,
            Arch::Ppc64le => EM_PPC64 | B64 | LE,
            Arch::Ppc64 => EM_PPC64 | B64,
            Arch::Ppc => EM_PPC,
            Arch::Mips => EM_MIPS,
            Arch::Mipsel => EM_MIPS | LE,
            Arch::Mips64 => EM_MIPS | B64,
            Arch::Mipsel64 => EM_MIPS | B64 | LE,
            Arch::Mips64n32 => EM_MIPS | B64 | N32,
            Arch::Mipsel64n32 => EM_MIPS | B64 | LE | N32,
            Arch::Loongarch64 => EM_LOONGARCH | B64 | LE,
        }
    }

    /// libseccomp's name (`seccomp_arch_resolve_name`), also secopt's canonical name.
    pub const fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::X86 => "x86",
            Arch::X32 => "x32",
            Arch::Aarch64 => "aarch64",
            Arch::Arm => "arm",
            Arch::Riscv64 => "riscv64",
            Arch::S390x => "s390x",
            Arch::Ppc64le => "ppc64le",
            Arch::Ppc64 => "ppc64",
            Arch::Ppc => "ppc",
            Arch::Mips => "mips",
            Arch::Mipsel => "mipsel",
            Arch::Mips64 => "mips64",
            Arch::Mipsel64 => "mipsel64",
            Arch::Mips64n32 => "mips64n32",
            Arch::Mipsel64n32 => "mipsel64n32",
            Arch::Loongarch64 => "loongarch64",
        }
    }

    /// Byte order (which half of a 64-bit `seccomp_data` field comes first).
    pub const fn endian(self) -> Endian {
        if self.token() & AUDIT_ARCH_LE != 0 {
            Endian::Little
        } else {
            Endian::Big
        }
    }

    /// Whether the arch token carries `__AUDIT_ARCH_64BIT`. This is *not* whether a filter should
    /// compare 64-bit arguments: x32 shares x86_64's 64-bit token, yet libseccomp (and so runc)
    /// compares only the low 32 bits of x32 arguments, as on every 32-bit ABI
    /// (`compile::compares_low_words_only` is that rule).
    pub const fn is_64bit(self) -> bool {
        self.token() & AUDIT_ARCH_64BIT != 0
    }

    /// Looks an architecture up by any common spelling: libseccomp (`x86_64`, `x86`),
    /// OCI (`SCMP_ARCH_X86_64`), Go (`amd64`, `386`, `arm64`, `mips64le`, `loong64`),
    /// or kernel/uname (`i386`, `i686`, `armv7l`, `ppc64el`).
    pub fn from_name(name: &str) -> Option<Arch> {
        let lower = name.trim().to_ascii_lowercase();
        let n = lower.strip_prefix("scmp_arch_").unwrap_or(&lower);
        Some(match n {
            "x86_64" | "amd64" | "x86-64" => Arch::X86_64,
            "x86" | "i386" | "i486" | "i586" | "i686" | "386" => Arch::X86,
            "x32" => Arch::X32,
            "aarch64" | "arm64" => Arch::Aarch64,
            "arm" | "armv7l" | "armv6l" | "armhf" | "armel" => Arch::Arm,
            "riscv64" => Arch::Riscv64,
            "s390x" => Arch::S390x,
            "ppc64le" | "ppc64el" => Arch::Ppc64le,
            "ppc64" => Arch::Ppc64,
            "ppc" | "powerpc" => Arch::Ppc,
            "mips" => Arch::Mips,
            "mipsel" | "mipsle" => Arch::Mipsel,
            "mips64" => Arch::Mips64,
            "mipsel64" | "mips64el" | "mips64le" => Arch::Mipsel64,
            "mips64n32" | "mipsn32" => Arch::Mips64n32,
            "mipsel64n32" | "mips64eln32" | "mipsn32el" | "mips64len32" => Arch::Mipsel64n32,
            "loongarch64" | "loong64" => Arch::Loongarch64,
            _ => return None,
        })
    }

    /// The architectures whose `seccomp_data.arch` is `token` (x86_64 and x32 share one).
    pub fn from_token(token: u32) -> &'static [Arch] {
        const X86_64_X32: [Arch; 2] = [Arch::X86_64, Arch::X32];
        if token == Arch::X86_64.token() {
            return &X86_64_X32;
        }
        for (i, a) in Arch::ALL.iter().enumerate() {
            if a.token() == token {
                return std::slice::from_ref(&Arch::ALL[i]);
            }
        }
        &[]
    }

    /// The architecture a syscall with `seccomp_data` `(token, nr)` belongs to (x32 vs x86_64
    /// decided by [`is_x32_nr`]).
    pub fn of_data(token: u32, nr: u32) -> Option<Arch> {
        match Arch::from_token(token) {
            [Arch::X86_64, Arch::X32] => Some(if is_x32_nr(nr) {
                Arch::X32
            } else {
                Arch::X86_64
            }),
            [a] => Some(*a),
            _ => None,
        }
    }

    /// The architecture of a call with `seccomp_data` `(token, nr)` ([`Arch::of_data`]) and
    /// the syscall's name there, each where known.
    pub fn call_of_data(token: u32, nr: u32) -> (Option<Arch>, Option<&'static str>) {
        let arch = Arch::of_data(token, nr);
        (arch, arch.and_then(|a| a.syscalls().name(nr)))
    }

    /// The architecture this program runs as (the host).
    pub fn host() -> Option<Arch> {
        Some(match std::env::consts::ARCH {
            "x86_64" => Arch::X86_64,
            "x86" => Arch::X86,
            "aarch64" => Arch::Aarch64,
            "arm" => Arch::Arm,
            "riscv64" => Arch::Riscv64,
            "s390x" => Arch::S390x,
            "powerpc64" if cfg!(target_endian = "little") => Arch::Ppc64le,
            "powerpc64" => Arch::Ppc64,
            "powerpc" => Arch::Ppc,
            "mips" if cfg!(target_endian = "little") => Arch::Mipsel,
            "mips" => Arch::Mips,
            "mips64" if cfg!(target_endian = "little") => Arch::Mipsel64,
            "mips64" => Arch::Mips64,
            "loongarch64" => Arch::Loongarch64,
            _ => return None,
        })
    }

    /// This architecture's syscall table.
    pub fn syscalls(self) -> &'static SyscallTable {
        tables::table(self)
    }

    /// Whether any architecture's table (secopt's own) has syscall `name`: a name none has
    /// is a typo or newer than Linux 6.18; one some has is another arch's, or newer than an
    /// older table in use (`--syscall-table libseccomp`).
    pub fn any_has_syscall(name: &str) -> bool {
        Arch::ALL.iter().any(|a| a.syscalls().nr(name).is_some())
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name [`Arch::from_name`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown architecture `{0}` (secopt knows {known})", known = known_arches())]
pub struct UnknownArch(pub String);

fn known_arches() -> String {
    Arch::ALL
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `"aarch64".parse::<Arch>()`: any spelling [`Arch::from_name`] takes.
impl std::str::FromStr for Arch {
    type Err = UnknownArch;

    fn from_str(s: &str) -> Result<Arch, UnknownArch> {
        Arch::from_name(s).ok_or_else(|| UnknownArch(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `str::parse` takes every spelling `from_name` does, and says what it knows otherwise.
    #[test]
    fn arches_parse_from_their_spellings() {
        assert_eq!("SCMP_ARCH_AARCH64".parse::<Arch>(), Ok(Arch::Aarch64));
        assert_eq!("amd64".parse::<Arch>(), Ok(Arch::X86_64));
        let e = "sparc".parse::<Arch>().unwrap_err();
        assert_eq!(e, UnknownArch("sparc".into()));
        assert!(e.to_string().contains("x86_64, x86, x32"), "{e}");
    }

    #[test]
    fn tokens_match_uapi_audit_h() {
        // Values as spelled in include/uapi/linux/audit.h.
        assert_eq!(Arch::X86_64.token(), 0xc000_003e);
        assert_eq!(Arch::X86.token(), 0x4000_0003);
        assert_eq!(Arch::Aarch64.token(), 0xc000_00b7);
        assert_eq!(Arch::Arm.token(), 0x4000_0028);
        assert_eq!(Arch::S390x.token(), 0x8000_0016);
        assert_eq!(Arch::Ppc64le.token(), 0xc000_0015);
        assert_eq!(Arch::Mipsel64n32.token(), 0xe000_0008);
        assert_eq!(Arch::Loongarch64.token(), 0xc000_0102);
        assert_eq!(Arch::Riscv64.token(), 0xc000_00f3);
    }

    #[test]
    fn names_round_trip() {
        for a in Arch::ALL {
            assert_eq!(Arch::from_name(a.name()), Some(a));
            assert_eq!(
                Arch::from_name(&format!("SCMP_ARCH_{}", a.name().to_uppercase())),
                Some(a)
            );
        }
        assert_eq!(Arch::of_data(0xc000_003e, 0x4000_0001), Some(Arch::X32));
        assert_eq!(Arch::of_data(0xc000_003e, 1), Some(Arch::X86_64));
        // x32's part ends where bit 31 starts: the kernel's x32 dispatch takes
        // `nr - 0x40000000` below its table's size, so -1 (a tracer's "skip this call") and
        // every number with bit 31 set are no x32 call.
        assert_eq!(Arch::of_data(0xc000_003e, 0x7fff_ffff), Some(Arch::X32));
        for nr in [0xffff_ffff, 0x8000_0000, 0xc000_0001] {
            assert_eq!(
                Arch::of_data(0xc000_003e, nr),
                Some(Arch::X86_64),
                "{nr:#x}"
            );
        }
    }
}
