//! Syscall names as the system libseccomp resolves them: what runc, linked with the same
//! library, turns a profile's names into. Tests resolve secopt's policies with this table
//! (`ResolveOptions::resolver`) to compare with filters libseccomp or runc built, since runc
//! skips the names its libseccomp does not know (2.5.4 stops at Linux 6.7) while secopt's
//! own tables are Linux 6.18's.

use libseccomp::{ScmpArch, ScmpSyscall};
use secopt::arch::Arch;
use secopt::policy::SyscallResolver;

/// libseccomp's name for one of secopt's arches.
pub fn scmp_arch(a: Arch) -> ScmpArch {
    match a {
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

/// libseccomp's number for `name` on `arch` (as in `seccomp_data.nr`), as runc sees it.
///
/// libseccomp resolves the socket and IPC calls to negative pseudo-numbers on the arches
/// that multiplex them (-101…-120, -201…-224) and then compares the real number where the
/// arch has one; for those the number comes from secopt's table, which
/// tests/syscall_tables.rs checks against libseccomp. Without one (`recv` on x86) the name
/// has no number: secopt then applies it through `socketcall`/`ipc` only, as libseccomp
/// does. Pseudo-numbers at or below -10000 mean "not on this arch".
pub fn libseccomp_nr(arch: Arch, name: &str) -> Option<u32> {
    let n = i32::from(ScmpSyscall::from_name_by_arch(name, scmp_arch(arch)).ok()?);
    if n >= 0 {
        Some(n as u32)
    } else if (-120..=-101).contains(&n) || (-224..=-201).contains(&n) {
        arch.syscalls().nr(name)
    } else {
        None
    }
}

/// [`libseccomp_nr`] as a resolver for `secopt::policy::resolve`.
pub fn libseccomp_resolver() -> SyscallResolver {
    SyscallResolver::new(libseccomp_nr)
}

/// The system libseccomp's version, `(major, minor, micro)`.
pub fn libseccomp_version() -> (u32, u32, u32) {
    let v = libseccomp::ScmpVersion::current().expect("libseccomp version");
    (v.major, v.minor, v.micro)
}
