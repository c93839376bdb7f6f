//! Name tables the front ends need: architecture spellings, errno names, capabilities.

use super::model::ArchRef;
use crate::arch::Arch;

/// The `SCMP_ARCH_*` constants of the runtime spec (libseccomp 2.6), as `architectures` and
/// `archMap` spell them; runc accepts exactly these (libcontainer/seccomp/config.go). Some
/// are libseccomp architectures secopt has no syscall table for ([`ArchRef::Unsupported`]);
/// profiles use them (Docker's `archMap` lists `SCMP_ARCH_S390` under s390x), so they must
/// parse.
const SCMP_ARCHES: [(&str, ArchRef); 23] = [
    ("SCMP_ARCH_X86", ArchRef::Supported(Arch::X86)),
    ("SCMP_ARCH_X86_64", ArchRef::Supported(Arch::X86_64)),
    ("SCMP_ARCH_X32", ArchRef::Supported(Arch::X32)),
    ("SCMP_ARCH_ARM", ArchRef::Supported(Arch::Arm)),
    ("SCMP_ARCH_AARCH64", ArchRef::Supported(Arch::Aarch64)),
    ("SCMP_ARCH_MIPS", ArchRef::Supported(Arch::Mips)),
    ("SCMP_ARCH_MIPS64", ArchRef::Supported(Arch::Mips64)),
    ("SCMP_ARCH_MIPS64N32", ArchRef::Supported(Arch::Mips64n32)),
    ("SCMP_ARCH_MIPSEL", ArchRef::Supported(Arch::Mipsel)),
    ("SCMP_ARCH_MIPSEL64", ArchRef::Supported(Arch::Mipsel64)),
    (
        "SCMP_ARCH_MIPSEL64N32",
        ArchRef::Supported(Arch::Mipsel64n32),
    ),
    ("SCMP_ARCH_PPC", ArchRef::Supported(Arch::Ppc)),
    ("SCMP_ARCH_PPC64", ArchRef::Supported(Arch::Ppc64)),
    ("SCMP_ARCH_PPC64LE", ArchRef::Supported(Arch::Ppc64le)),
    ("SCMP_ARCH_S390", ArchRef::Unsupported("s390")),
    ("SCMP_ARCH_S390X", ArchRef::Supported(Arch::S390x)),
    ("SCMP_ARCH_PARISC", ArchRef::Unsupported("parisc")),
    ("SCMP_ARCH_PARISC64", ArchRef::Unsupported("parisc64")),
    ("SCMP_ARCH_RISCV64", ArchRef::Supported(Arch::Riscv64)),
    (
        "SCMP_ARCH_LOONGARCH64",
        ArchRef::Supported(Arch::Loongarch64),
    ),
    ("SCMP_ARCH_M68K", ArchRef::Unsupported("m68k")),
    ("SCMP_ARCH_SH", ArchRef::Unsupported("sh")),
    ("SCMP_ARCH_SHEB", ArchRef::Unsupported("sheb")),
];

/// Other spellings of an arch seen in `includes.arches` / `excludes.arches` (besides
/// `SCMP_ARCH_*` and [`HOST_ARCH_NAMES`]): Go's GOARCH names (`386`, `mips64le`), kernel and
/// distribution names (`x86_64`, `aarch64`, `i686`). Known, so that the warning can say
/// which arch was meant and what to write; they match no host.
const OTHER_ARCH_SPELLINGS: [(&str, ArchRef); 14] = [
    ("x86_64", ArchRef::Supported(Arch::X86_64)),
    ("386", ArchRef::Supported(Arch::X86)),
    ("i386", ArchRef::Supported(Arch::X86)),
    ("i686", ArchRef::Supported(Arch::X86)),
    ("aarch64", ArchRef::Supported(Arch::Aarch64)),
    ("mipsle", ArchRef::Supported(Arch::Mipsel)),
    ("mips64le", ArchRef::Supported(Arch::Mipsel64)),
    ("mips64el", ArchRef::Supported(Arch::Mipsel64)),
    ("mips64p32", ArchRef::Supported(Arch::Mips64n32)),
    ("mips64p32le", ArchRef::Supported(Arch::Mipsel64n32)),
    ("ppc64el", ArchRef::Supported(Arch::Ppc64le)),
    ("m68k", ArchRef::Unsupported("m68k")),
    ("sh", ArchRef::Unsupported("sh")),
    ("sheb", ArchRef::Unsupported("sheb")),
];

/// Looks up an `SCMP_ARCH_*` name (exact spelling, as runc requires).
pub(crate) fn scmp_arch(name: &str) -> Option<ArchRef> {
    SCMP_ARCHES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, a)| a)
}

/// The `SCMP_ARCH_*` names, for "expected one of" messages.
pub(crate) fn scmp_arch_names() -> Vec<&'static str> {
    SCMP_ARCHES.iter().map(|&(n, _)| n).collect()
}

/// The names `includes.arches`/`excludes.arches` are compared with, one host each: Docker's
/// (moby/profiles seccomp_linux.go `goToNative[runtime.GOARCH]`, an exact string comparison)
/// and podman's (containers/common: libseccomp-golang's `ScmpArch.String()` of the native
/// arch). They differ only on LoongArch (`loongarch64` / `loong64`), MIPS little-endian n32
/// (`mips3l64n32` / `mipsel64n32`) and x32 (podman's only). Any other spelling
/// ([`filter_arch`] knows many) matches no host under either.
const HOST_ARCH_NAMES: [(&str, ArchRef); 22] = [
    ("amd64", ArchRef::Supported(Arch::X86_64)),
    ("x86", ArchRef::Supported(Arch::X86)),
    ("x32", ArchRef::Supported(Arch::X32)),
    ("arm", ArchRef::Supported(Arch::Arm)),
    ("arm64", ArchRef::Supported(Arch::Aarch64)),
    ("loongarch64", ArchRef::Supported(Arch::Loongarch64)),
    ("loong64", ArchRef::Supported(Arch::Loongarch64)),
    ("mips", ArchRef::Supported(Arch::Mips)),
    ("mipsel", ArchRef::Supported(Arch::Mipsel)),
    ("mips64", ArchRef::Supported(Arch::Mips64)),
    ("mipsel64", ArchRef::Supported(Arch::Mipsel64)),
    ("mips64n32", ArchRef::Supported(Arch::Mips64n32)),
    ("mips3l64n32", ArchRef::Supported(Arch::Mipsel64n32)),
    ("mipsel64n32", ArchRef::Supported(Arch::Mipsel64n32)),
    ("ppc", ArchRef::Supported(Arch::Ppc)),
    ("ppc64", ArchRef::Supported(Arch::Ppc64)),
    ("ppc64le", ArchRef::Supported(Arch::Ppc64le)),
    ("riscv64", ArchRef::Supported(Arch::Riscv64)),
    ("s390", ArchRef::Unsupported("s390")),
    ("s390x", ArchRef::Supported(Arch::S390x)),
    ("parisc", ArchRef::Unsupported("parisc")),
    ("parisc64", ArchRef::Unsupported("parisc64")),
];

/// The host `name` matches in `includes`/`excludes` arches ([`HOST_ARCH_NAMES`]), if any.
pub(crate) fn host_arch(name: &str) -> Option<ArchRef> {
    HOST_ARCH_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, a)| a)
}

/// The name Docker matches on host `arch` (for "write … instead").
pub(crate) fn host_arch_name(arch: ArchRef) -> Option<&'static str> {
    HOST_ARCH_NAMES
        .iter()
        .find(|(_, a)| *a == arch)
        .map(|&(n, _)| n)
}

/// Looks up an architecture as `includes`/`excludes` spell it: Go, libseccomp or SCMP names
/// (what the author meant; [`host_arch`] says whether the runtimes agree).
pub(crate) fn filter_arch(name: &str) -> Option<ArchRef> {
    filter_arches()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| a)
        .or_else(|| scmp_arch(name))
}

/// [`HOST_ARCH_NAMES`], then [`OTHER_ARCH_SPELLINGS`].
fn filter_arches() -> impl Iterator<Item = (&'static str, ArchRef)> {
    HOST_ARCH_NAMES.iter().chain(&OTHER_ARCH_SPELLINGS).copied()
}

/// `name` as the tables spell it (a `&'static str` for [`ArchRef::Unsupported`]), if
/// [`filter_arch`] knows it.
pub(crate) fn filter_arch_spelling(name: &str) -> Option<&'static str> {
    filter_arches()
        .map(|(n, _)| n)
        .chain(SCMP_ARCHES.iter().map(|&(n, _)| n))
        .find(|n| *n == name)
}

pub(crate) fn filter_arch_names() -> Vec<&'static str> {
    filter_arches().map(|(n, _)| n).collect()
}

/// Errno names as podman's `errno`/`defaultErrno` fields spell them, with the values of
/// asm-generic/errno-base.h and errno.h (the table podman itself compiles in on x86, arm,
/// riscv, s390 and ppc hosts: containers/common pkg/seccomp/errno_list.go takes them from
/// golang.org/x/sys/unix for the build target). MIPS, SPARC, Alpha and PA-RISC number many
/// of these differently; secopt always uses the generic numbers.
pub(crate) const ERRNO_NAMES: [(&str, u16); 134] = [
    ("EPERM", 1),
    ("ENOENT", 2),
    ("ESRCH", 3),
    ("EINTR", 4),
    ("EIO", 5),
    ("ENXIO", 6),
    ("E2BIG", 7),
    ("ENOEXEC", 8),
    ("EBADF", 9),
    ("ECHILD", 10),
    ("EAGAIN", 11),
    ("EWOULDBLOCK", 11),
    ("ENOMEM", 12),
    ("EACCES", 13),
    ("EFAULT", 14),
    ("ENOTBLK", 15),
    ("EBUSY", 16),
    ("EEXIST", 17),
    ("EXDEV", 18),
    ("ENODEV", 19),
    ("ENOTDIR", 20),
    ("EISDIR", 21),
    ("EINVAL", 22),
    ("ENFILE", 23),
    ("EMFILE", 24),
    ("ENOTTY", 25),
    ("ETXTBSY", 26),
    ("EFBIG", 27),
    ("ENOSPC", 28),
    ("ESPIPE", 29),
    ("EROFS", 30),
    ("EMLINK", 31),
    ("EPIPE", 32),
    ("EDOM", 33),
    ("ERANGE", 34),
    ("EDEADLK", 35),
    ("EDEADLOCK", 35),
    ("ENAMETOOLONG", 36),
    ("ENOLCK", 37),
    ("ENOSYS", 38),
    ("ENOTEMPTY", 39),
    ("ELOOP", 40),
    ("ENOMSG", 42),
    ("EIDRM", 43),
    ("ECHRNG", 44),
    ("EL2NSYNC", 45),
    ("EL3HLT", 46),
    ("EL3RST", 47),
    ("ELNRNG", 48),
    ("EUNATCH", 49),
    ("ENOCSI", 50),
    ("EL2HLT", 51),
    ("EBADE", 52),
    ("EBADR", 53),
    ("EXFULL", 54),
    ("ENOANO", 55),
    ("EBADRQC", 56),
    ("EBADSLT", 57),
    ("EBFONT", 59),
    ("ENOSTR", 60),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("ENOSR", 63),
    ("ENONET", 64),
    ("ENOPKG", 65),
    ("EREMOTE", 66),
    ("ENOLINK", 67),
    ("EADV", 68),
    ("ESRMNT", 69),
    ("ECOMM", 70),
    ("EPROTO", 71),
    ("EMULTIHOP", 72),
    ("EDOTDOT", 73),
    ("EBADMSG", 74),
    ("EOVERFLOW", 75),
    ("ENOTUNIQ", 76),
    ("EBADFD", 77),
    ("EREMCHG", 78),
    ("ELIBACC", 79),
    ("ELIBBAD", 80),
    ("ELIBSCN", 81),
    ("ELIBMAX", 82),
    ("ELIBEXEC", 83),
    ("EILSEQ", 84),
    ("ERESTART", 85),
    ("ESTRPIPE", 86),
    ("EUSERS", 87),
    ("ENOTSOCK", 88),
    ("EDESTADDRREQ", 89),
    ("EMSGSIZE", 90),
    ("EPROTOTYPE", 91),
    ("ENOPROTOOPT", 92),
    ("EPROTONOSUPPORT", 93),
    ("ESOCKTNOSUPPORT", 94),
    ("EOPNOTSUPP", 95),
    ("ENOTSUP", 95),
    ("EPFNOSUPPORT", 96),
    ("EAFNOSUPPORT", 97),
    ("EADDRINUSE", 98),
    ("EADDRNOTAVAIL", 99),
    ("ENETDOWN", 100),
    ("ENETUNREACH", 101),
    ("ENETRESET", 102),
    ("ECONNABORTED", 103),
    ("ECONNRESET", 104),
    ("ENOBUFS", 105),
    ("EISCONN", 106),
    ("ENOTCONN", 107),
    ("ESHUTDOWN", 108),
    ("ETOOMANYREFS", 109),
    ("ETIMEDOUT", 110),
    ("ECONNREFUSED", 111),
    ("EHOSTDOWN", 112),
    ("EHOSTUNREACH", 113),
    ("EALREADY", 114),
    ("EINPROGRESS", 115),
    ("ESTALE", 116),
    ("EUCLEAN", 117),
    ("ENOTNAM", 118),
    ("ENAVAIL", 119),
    ("EISNAM", 120),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
    ("ENOMEDIUM", 123),
    ("EMEDIUMTYPE", 124),
    ("ECANCELED", 125),
    ("ENOKEY", 126),
    ("EKEYEXPIRED", 127),
    ("EKEYREVOKED", 128),
    ("EKEYREJECTED", 129),
    ("EOWNERDEAD", 130),
    ("ENOTRECOVERABLE", 131),
    ("ERFKILL", 132),
    ("EHWPOISON", 133),
];

/// The name of errno `value` (generic Linux numbering; the first of aliases such as
/// `EAGAIN`/`EWOULDBLOCK`).
pub fn errno_name(value: u16) -> Option<&'static str> {
    ERRNO_NAMES
        .iter()
        .find(|&&(_, v)| v == value)
        .map(|&(n, _)| n)
}

/// The number of errno `name` (generic Linux numbering).
pub fn errno_by_name(name: &str) -> Option<u16> {
    ERRNO_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, v)| v)
}

/// Every Linux capability, in bit order (`CAP_CHOWN` = 0 ... `CAP_CHECKPOINT_RESTORE` = 40).
pub const ALL_CAPS: [&str; 41] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
];

/// The capabilities Docker gives a container by default (moby
/// daemon/pkg/oci/caps/defaults.go): the set `includes.caps`/`excludes.caps` are checked
/// against unless told otherwise.
pub const DOCKER_DEFAULT_CAPS: [&str; 14] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Expands to `(name, libc::NAME)` pairs so every entry is checked against libc.
    macro_rules! libc_errnos {
        ($($name:ident),* $(,)?) => { [$((stringify!($name), libc::$name)),*] };
    }

    #[test]
    fn errno_table_matches_libc() {
        // libc's constants come from the C headers of this (x86_64) target, which use the
        // asm-generic numbering.
        let from_libc = libc_errnos![
            EPERM,
            ENOENT,
            ESRCH,
            EINTR,
            EIO,
            ENXIO,
            E2BIG,
            ENOEXEC,
            EBADF,
            ECHILD,
            EAGAIN,
            EWOULDBLOCK,
            ENOMEM,
            EACCES,
            EFAULT,
            ENOTBLK,
            EBUSY,
            EEXIST,
            EXDEV,
            ENODEV,
            ENOTDIR,
            EISDIR,
            EINVAL,
            ENFILE,
            EMFILE,
            ENOTTY,
            ETXTBSY,
            EFBIG,
            ENOSPC,
            ESPIPE,
            EROFS,
            EMLINK,
            EPIPE,
            EDOM,
            ERANGE,
            EDEADLK,
            EDEADLOCK,
            ENAMETOOLONG,
            ENOLCK,
            ENOSYS,
            ENOTEMPTY,
            ELOOP,
            ENOMSG,
            EIDRM,
            ECHRNG,
            EL2NSYNC,
            EL3HLT,
            EL3RST,
            ELNRNG,
            EUNATCH,
            ENOCSI,
            EL2HLT,
            EBADE,
            EBADR,
            EXFULL,
            ENOANO,
            EBADRQC,
            EBADSLT,
            EBFONT,
            ENOSTR,
            ENODATA,
            ETIME,
            ENOSR,
            ENONET,
            ENOPKG,
            EREMOTE,
            ENOLINK,
            EADV,
            ESRMNT,
            ECOMM,
            EPROTO,
            EMULTIHOP,
            EDOTDOT,
            EBADMSG,
            EOVERFLOW,
            ENOTUNIQ,
            EBADFD,
            EREMCHG,
            ELIBACC,
            ELIBBAD,
            ELIBSCN,
            ELIBMAX,
            ELIBEXEC,
            EILSEQ,
            ERESTART,
            ESTRPIPE,
            EUSERS,
            ENOTSOCK,
            EDESTADDRREQ,
            EMSGSIZE,
            EPROTOTYPE,
            ENOPROTOOPT,
            EPROTONOSUPPORT,
            ESOCKTNOSUPPORT,
            EOPNOTSUPP,
            ENOTSUP,
            EPFNOSUPPORT,
            EAFNOSUPPORT,
            EADDRINUSE,
            EADDRNOTAVAIL,
            ENETDOWN,
            ENETUNREACH,
            ENETRESET,
            ECONNABORTED,
            ECONNRESET,
            ENOBUFS,
            EISCONN,
            ENOTCONN,
            ESHUTDOWN,
            ETOOMANYREFS,
            ETIMEDOUT,
            ECONNREFUSED,
            EHOSTDOWN,
            EHOSTUNREACH,
            EALREADY,
            EINPROGRESS,
            ESTALE,
            EUCLEAN,
            ENOTNAM,
            ENAVAIL,
            EISNAM,
            EREMOTEIO,
            EDQUOT,
            ENOMEDIUM,
            EMEDIUMTYPE,
            ECANCELED,
            ENOKEY,
            EKEYEXPIRED,
            EKEYREVOKED,
            EKEYREJECTED,
            EOWNERDEAD,
            ENOTRECOVERABLE,
            ERFKILL,
            EHWPOISON,
        ];
        assert_eq!(from_libc.len(), ERRNO_NAMES.len());
        for (name, v) in from_libc {
            assert_eq!(errno_by_name(name), Some(v as u16), "{name}");
        }
        assert_eq!(errno_by_name("EFOO"), None);
    }

    #[test]
    fn every_scmp_arch_of_the_runtime_spec_parses() {
        // The list in runtime-spec config-linux.md ("valid list of constants as of
        // libseccomp v2.6.0").
        for name in [
            "SCMP_ARCH_X86",
            "SCMP_ARCH_X86_64",
            "SCMP_ARCH_X32",
            "SCMP_ARCH_ARM",
            "SCMP_ARCH_AARCH64",
            "SCMP_ARCH_MIPS",
            "SCMP_ARCH_MIPS64",
            "SCMP_ARCH_MIPS64N32",
            "SCMP_ARCH_MIPSEL",
            "SCMP_ARCH_MIPSEL64",
            "SCMP_ARCH_MIPSEL64N32",
            "SCMP_ARCH_PPC",
            "SCMP_ARCH_PPC64",
            "SCMP_ARCH_PPC64LE",
            "SCMP_ARCH_S390",
            "SCMP_ARCH_S390X",
            "SCMP_ARCH_PARISC",
            "SCMP_ARCH_PARISC64",
            "SCMP_ARCH_RISCV64",
            "SCMP_ARCH_LOONGARCH64",
            "SCMP_ARCH_M68K",
            "SCMP_ARCH_SH",
            "SCMP_ARCH_SHEB",
        ] {
            let a = scmp_arch(name).unwrap_or_else(|| panic!("{name}"));
            if let ArchRef::Supported(arch) = a {
                // The SCMP name and secopt's canonical name agree.
                assert_eq!(name, format!("SCMP_ARCH_{}", arch.name().to_uppercase()));
            }
        }
        assert_eq!(scmp_arch("x86_64"), None);
        assert_eq!(filter_arch("amd64"), Some(ArchRef::Supported(Arch::X86_64)));
        assert_eq!(filter_arch("s390"), Some(ArchRef::Unsupported("s390")));
        assert_eq!(
            filter_arch("SCMP_ARCH_X32"),
            Some(ArchRef::Supported(Arch::X32))
        );
        assert_eq!(filter_arch("amd46"), None);
    }

    #[test]
    fn capability_list_is_complete_for_this_kernel() {
        // /proc/sys/kernel/cap_last_cap is the kernel's own highest capability number.
        if let Ok(s) = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap") {
            let last: usize = s.trim().parse().unwrap();
            assert!(ALL_CAPS.len() > last, "kernel knows cap {last}");
        }
        // linux/capability.h
        assert_eq!(ALL_CAPS[21], "CAP_SYS_ADMIN");
        assert_eq!(ALL_CAPS[38], "CAP_PERFMON");
        assert_eq!(ALL_CAPS[40], "CAP_CHECKPOINT_RESTORE");
        for c in DOCKER_DEFAULT_CAPS {
            assert!(ALL_CAPS.contains(&c), "{c}");
        }
    }
}
