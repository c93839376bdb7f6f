//! Harmless invocations: for each x86_64 syscall, arguments that make the call reach the
//! seccomp filter with representative values and then fail fast or only query the kernel.
//!
//! The filter runs at syscall entry, before the syscall body looks at any argument, so its
//! cost does not depend on the call succeeding. What must not happen is that a call changes
//! the machine or the benchmark child: every invocation here either fails on an argument
//! checked first (a descriptor that is never open, a NULL pointer the kernel must copy
//! from, a zero length, invalid flags) or only reads state (queries with a NULL "new value"),
//! or operates on memory the child owns and never uses (a private scratch page, a
//! read-only page of zeros).
//!
//! Argument kinds ([`Arg`]):
//! - [`Arg::Choose`]: a representative default a workload may replace (an `ioctl` request,
//!   `mmap` protections, a `futex` operation): every value is harmless there because a check
//!   of another argument fails first, or the call only queries.
//! - everything else is fixed: the value is what makes the call harmless.
//!
//! Each invocation states what the unfiltered call returns ([`Outcome`]); the tests run every
//! one of them on the real kernel without a filter and check it (`tests/bench_invoke.rs`).
//!
//! Syscalls that cannot be made harmless, or are not worth the risk, are listed by
//! [`not_harmless`] with the reason; they are reported as skipped, never dropped silently.

use serde::Serialize;

/// A descriptor that is never open: fds are below `fs.nr_open` (at most `i32::MAX` rounded
/// down to a multiple of the word size), so `i32::MAX` always gives `EBADF`, and it is
/// non-negative like a real fd (filters that test `fd >= 0` take their normal path).
pub const CLOSED_FD: u64 = i32::MAX as u64;

/// `AT_FDCWD` as a 64-bit register holds it (`int` -100 sign-extended).
pub const AT_FDCWD: u64 = -100i64 as u64;

/// How one argument is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Arg {
    /// A representative value a workload may replace.
    Choose(u64),
    /// A value that keeps the call harmless.
    Fixed(u64),
    /// [`CLOSED_FD`].
    ClosedFd,
    /// A NULL pointer.
    Null,
    /// A private writable scratch buffer (4 KiB) for results of query calls.
    OutBuf,
    /// A read-only page of zeros: zero timeouts, a futex word that is 0, empty input.
    Zeros,
    /// A path: the empty string (in the zero page), which every lookup refuses with
    /// `ENOENT` without touching the filesystem (and without the page fault a NULL costs).
    Path,
    /// A read-only page of `0xff` bytes: timespecs with negative fields (`EINVAL`).
    Invalid,
    /// The calling process's pid.
    SelfPid,
    /// The calling thread's id.
    SelfTid,
}

impl Arg {
    /// Whether a workload may replace this argument.
    pub fn is_choosable(self) -> bool {
        matches!(self, Arg::Choose(_))
    }

    /// Why a workload may not replace this argument.
    pub fn why_fixed(self) -> &'static str {
        match self {
            Arg::Choose(_) => "",
            Arg::Fixed(_) => "its value is what keeps the call harmless",
            Arg::ClosedFd => "it is a file descriptor and stays one that is never open",
            Arg::Null => "it is a pointer and stays NULL so the kernel fails on it",
            Arg::OutBuf => "it is an output pointer into a scratch buffer",
            Arg::Zeros => "it points at a read-only page of zeros",
            Arg::Path => "it is a path and stays the empty string",
            Arg::Invalid => "it points at an invalid (all-ones) value",
            Arg::SelfPid | Arg::SelfTid => "it names the benchmark child itself",
        }
    }
}

/// What a call returns when it runs without a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// Any non-negative return value is expected.
    pub success: bool,
    /// These errnos are expected.
    pub errnos: &'static [i32],
}

impl Outcome {
    /// Whether `rax` (the raw return) is one of the expected results.
    pub fn accepts(&self, rax: u64) -> bool {
        let v = rax as i64;
        if (-4095..0).contains(&v) {
            self.errnos.contains(&(-v as i32))
        } else {
            self.success
        }
    }
}

const OK: Outcome = Outcome {
    success: true,
    errnos: &[],
};
const fn fails(errnos: &'static [i32]) -> Outcome {
    Outcome {
        success: false,
        errnos,
    }
}
const fn ok_or(errnos: &'static [i32]) -> Outcome {
    Outcome {
        success: true,
        errnos,
    }
}

// errno values of asm-generic/errno-base.h and errno.h (x86_64 uses the generic ones).
const ENOENT: i32 = 2;
const EINTR: i32 = 4;
const EBADF: i32 = 9;
const ECHILD: i32 = 10;
const EAGAIN: i32 = 11;
const EFAULT: i32 = 14;
const EINVAL: i32 = 22;
const ERANGE: i32 = 34;
const ENOSYS: i32 = 38;
const ESRCH: i32 = 3;
const EPERM: i32 = 1;
const EOPNOTSUPP: i32 = 95;

const BADF: Outcome = fails(&[EBADF]);
const NOENT: Outcome = fails(&[ENOENT]);
const FAULT: Outcome = fails(&[EFAULT]);
const INVAL: Outcome = fails(&[EINVAL]);

use Arg::{ClosedFd as Fd, Invalid, Null, OutBuf as Out, Path, SelfPid, SelfTid, Zeros};
const Z: Arg = Arg::Fixed(0);
const fn c(v: u64) -> Arg {
    Arg::Choose(v)
}
const fn f(v: u64) -> Arg {
    Arg::Fixed(v)
}

/// A harmless way to make one syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Invocation {
    /// The kernel's name of the syscall (x86_64 table).
    pub name: &'static str,
    pub args: [Arg; 6],
    /// What the unfiltered call returns.
    pub expect: Outcome,
}

const fn inv(name: &'static str, args: [Arg; 6], expect: Outcome) -> Invocation {
    Invocation { name, args, expect }
}

/// `-1` as a 32-bit `int`/`uid_t` argument in a 64-bit register (zero-extended, as the C
/// calling convention leaves it for a `u32`).
const U32_MAX: u64 = 0xffff_ffff;
/// `-1` as a `long`/`pid_t` promoted to 64 bits.
const MINUS_ONE: u64 = u64::MAX;

/// The x86_64 invocations, by syscall name.
const X86_64: &[Invocation] = &[
    // File descriptors: a never-open fd fails in fdget before anything else.
    inv("read", [Fd, Out, Z, Z, Z, Z], BADF),
    inv("write", [Fd, Zeros, Z, Z, Z, Z], BADF),
    inv("close", [Fd, Z, Z, Z, Z, Z], BADF),
    inv("fstat", [Fd, Out, Z, Z, Z, Z], BADF),
    inv("lseek", [Fd, c(0), c(0), Z, Z, Z], BADF),
    inv("pread64", [Fd, Out, Z, c(0), Z, Z], BADF),
    inv("pwrite64", [Fd, Zeros, Z, c(0), Z, Z], BADF),
    inv("readv", [Fd, Null, Z, Z, Z, Z], BADF),
    inv("writev", [Fd, Null, Z, Z, Z, Z], BADF),
    inv("preadv", [Fd, Null, Z, c(0), Z, Z], BADF),
    inv("pwritev", [Fd, Null, Z, c(0), Z, Z], BADF),
    inv(
        "preadv2",
        [Fd, Null, Z, c(0), Z, c(0)],
        fails(&[EBADF, EOPNOTSUPP]),
    ),
    inv(
        "pwritev2",
        [Fd, Null, Z, c(0), Z, c(0)],
        fails(&[EBADF, EOPNOTSUPP]),
    ),
    inv("fsync", [Fd, Z, Z, Z, Z, Z], BADF),
    inv("fdatasync", [Fd, Z, Z, Z, Z, Z], BADF),
    inv("syncfs", [Fd, Z, Z, Z, Z, Z], BADF),
    inv(
        "sync_file_range",
        [Fd, Z, Z, c(0), Z, Z],
        fails(&[EBADF, EINVAL]),
    ),
    inv("ftruncate", [Fd, c(0), Z, Z, Z, Z], fails(&[EBADF, EINVAL])),
    inv("fallocate", [Fd, c(0), Z, Z, Z, Z], fails(&[EBADF, EINVAL])),
    inv("fadvise64", [Fd, Z, Z, c(0), Z, Z], fails(&[EBADF, EINVAL])),
    inv("getdents64", [Fd, Out, Z, Z, Z, Z], BADF),
    inv("getdents", [Fd, Out, Z, Z, Z, Z], BADF),
    inv("fcntl", [Fd, c(3), Z, Z, Z, Z], BADF), // F_GETFL
    inv("ioctl", [Fd, c(0x541b), c(0), Z, Z, Z], BADF), // FIONREAD
    inv("dup", [Fd, Z, Z, Z, Z, Z], BADF),
    inv("dup2", [Fd, Fd, Z, Z, Z, Z], BADF),
    inv("dup3", [Fd, Fd, Z, Z, Z, Z], INVAL),
    inv("flock", [Fd, c(1), Z, Z, Z, Z], fails(&[EBADF, EINVAL])),
    inv("fchmod", [Fd, c(0o644), Z, Z, Z, Z], BADF),
    inv("fchown", [Fd, f(U32_MAX), f(U32_MAX), Z, Z, Z], BADF),
    inv("fchdir", [Fd, Z, Z, Z, Z, Z], BADF),
    inv("fstatfs", [Fd, Out, Z, Z, Z, Z], BADF),
    inv(
        "fgetxattr",
        [Fd, Null, Null, Z, Z, Z],
        fails(&[EBADF, EFAULT]),
    ),
    inv("flistxattr", [Fd, Null, Z, Z, Z, Z], BADF),
    inv("timerfd_gettime", [Fd, Out, Z, Z, Z, Z], BADF),
    inv("sendfile", [Fd, Fd, Null, Z, Z, Z], BADF),
    inv(
        "splice",
        [Fd, Null, Fd, Null, Z, c(0)],
        // A zero length returns 0 before the descriptors are looked at.
        ok_or(&[EBADF, EINVAL]),
    ),
    inv("tee", [Fd, Fd, Z, c(0), Z, Z], ok_or(&[EBADF, EINVAL])),
    inv(
        "vmsplice",
        [Fd, Null, Z, c(0), Z, Z],
        fails(&[EBADF, EINVAL]),
    ),
    inv(
        "copy_file_range",
        [Fd, Null, Fd, Null, Z, Z],
        fails(&[EBADF, EINVAL]),
    ),
    inv(
        "io_uring_enter",
        [Fd, Z, Z, c(0), Null, Z],
        fails(&[EBADF, EINVAL]),
    ),
    inv("pidfd_send_signal", [Fd, Z, Null, Z, Z, Z], BADF),
    inv("utimensat", [Fd, Null, Null, Z, Z, Z], BADF),
    // Paths: the empty path fails in the lookup with ENOENT.
    inv(
        "open",
        [Path, c(0o2000000), c(0), Z, Z, Z],
        fails(&[ENOENT, EINVAL]),
    ),
    inv(
        "openat",
        [c(AT_FDCWD), Path, c(0o2000000), c(0), Z, Z],
        fails(&[ENOENT, EINVAL]),
    ),
    inv(
        "openat2",
        [c(AT_FDCWD), Null, Null, Z, Z, Z],
        fails(&[EINVAL, EFAULT]),
    ),
    inv("creat", [Path, c(0o644), Z, Z, Z, Z], NOENT),
    inv("stat", [Path, Out, Z, Z, Z, Z], NOENT),
    inv("lstat", [Path, Out, Z, Z, Z, Z], NOENT),
    inv("newfstatat", [c(AT_FDCWD), Path, Out, Z, Z, Z], NOENT),
    inv("statx", [c(AT_FDCWD), Path, Z, c(0x7ff), Out, Z], NOENT),
    inv("statfs", [Path, Out, Z, Z, Z, Z], NOENT),
    inv("access", [Path, c(0), Z, Z, Z, Z], NOENT),
    inv("faccessat", [c(AT_FDCWD), Path, c(0), Z, Z, Z], NOENT),
    inv("faccessat2", [c(AT_FDCWD), Path, c(0), Z, Z, Z], NOENT),
    inv("readlink", [Path, Out, f(64), Z, Z, Z], NOENT),
    inv("readlinkat", [c(AT_FDCWD), Path, Out, f(64), Z, Z], NOENT),
    inv("mkdir", [Path, c(0o755), Z, Z, Z, Z], NOENT),
    inv("mkdirat", [c(AT_FDCWD), Path, c(0o755), Z, Z, Z], NOENT),
    inv("mknod", [Path, Z, Z, Z, Z, Z], NOENT),
    inv("mknodat", [c(AT_FDCWD), Path, Z, Z, Z, Z], NOENT),
    inv("unlink", [Path, Z, Z, Z, Z, Z], NOENT),
    inv(
        "unlinkat",
        [c(AT_FDCWD), Path, c(0), Z, Z, Z],
        fails(&[ENOENT, EINVAL]),
    ),
    inv("rmdir", [Path, Z, Z, Z, Z, Z], NOENT),
    inv("rename", [Path, Path, Z, Z, Z, Z], NOENT),
    inv(
        "renameat",
        [c(AT_FDCWD), Path, c(AT_FDCWD), Path, Z, Z],
        NOENT,
    ),
    inv(
        "renameat2",
        [c(AT_FDCWD), Path, c(AT_FDCWD), Path, Z, Z],
        NOENT,
    ),
    inv("link", [Path, Path, Z, Z, Z, Z], NOENT),
    inv(
        "linkat",
        [c(AT_FDCWD), Path, c(AT_FDCWD), Path, Z, Z],
        NOENT,
    ),
    inv("symlink", [Path, Path, Z, Z, Z, Z], NOENT),
    inv("symlinkat", [Path, c(AT_FDCWD), Path, Z, Z, Z], NOENT),
    inv("chdir", [Path, Z, Z, Z, Z, Z], NOENT),
    inv("chroot", [Path, Z, Z, Z, Z, Z], NOENT),
    inv("chmod", [Path, c(0o644), Z, Z, Z, Z], NOENT),
    inv("fchmodat", [c(AT_FDCWD), Path, c(0o644), Z, Z, Z], NOENT),
    inv("chown", [Path, f(U32_MAX), f(U32_MAX), Z, Z, Z], NOENT),
    inv("lchown", [Path, f(U32_MAX), f(U32_MAX), Z, Z, Z], NOENT),
    inv(
        "fchownat",
        [c(AT_FDCWD), Path, f(U32_MAX), f(U32_MAX), Z, Z],
        NOENT,
    ),
    inv("truncate", [Path, c(0), Z, Z, Z, Z], NOENT),
    inv("getxattr", [Null, Null, Null, Z, Z, Z], FAULT),
    inv("lgetxattr", [Null, Null, Null, Z, Z, Z], FAULT),
    inv("listxattr", [Null, Null, Z, Z, Z, Z], FAULT),
    inv("setxattr", [Null, Null, Null, Z, Z, Z], FAULT),
    inv("execve", [Path, Null, Null, Z, Z, Z], NOENT),
    inv(
        "execveat",
        [Fd, Null, Null, Null, Z, Z],
        fails(&[EFAULT, EBADF]),
    ),
    inv("memfd_create", [Null, Z, Z, Z, Z, Z], FAULT),
    inv("mount", [Null, Null, Null, Z, Null, Z], FAULT),
    inv("umount2", [Path, Z, Z, Z, Z, Z], NOENT),
    inv("getcwd", [Out, Z, Z, Z, Z, Z], fails(&[ERANGE])),
    // Memory: zero lengths.
    inv(
        "mmap",
        [Null, Z, c(3), c(0x22), f(MINUS_ONE), Z],
        fails(&[EINVAL, EBADF]),
    ),
    inv("munmap", [Null, Z, Z, Z, Z, Z], INVAL),
    inv("mprotect", [Null, Z, c(1), Z, Z, Z], ok_or(&[EINVAL])),
    inv("madvise", [Null, Z, c(4), Z, Z, Z], ok_or(&[EINVAL])),
    inv("mremap", [Null, Z, Z, c(0), Null, Z], INVAL),
    inv("msync", [Null, Z, c(1), Z, Z, Z], ok_or(&[EINVAL])),
    inv("mlock", [Null, Z, Z, Z, Z, Z], OK),
    inv("munlock", [Null, Z, Z, Z, Z, Z], OK),
    inv("mincore", [Null, Z, Out, Z, Z, Z], OK),
    inv("brk", [Z, Z, Z, Z, Z, Z], OK),
    inv("membarrier", [Z, Z, Z, Z, Z, Z], OK), // MEMBARRIER_CMD_QUERY
    inv("get_mempolicy", [Null, Null, Z, Null, Z, Z], OK),
    // Synchronisation and time: a futex word of 0 in a read-only page, `val` 1 (so a WAIT
    // returns EAGAIN at once and PI operations fault), zero timeouts, NULL requests.
    inv(
        "futex",
        [Zeros, c(0x81), f(1), Null, Null, Z],
        ok_or(&[EAGAIN, EFAULT, EINVAL, ENOSYS]),
    ),
    inv("nanosleep", [Invalid, Null, Z, Z, Z, Z], INVAL),
    inv("clock_nanosleep", [c(1), c(0), Invalid, Null, Z, Z], INVAL),
    inv("sched_yield", [Z, Z, Z, Z, Z, Z], OK),
    inv("poll", [Null, Z, Z, Z, Z, Z], OK),
    inv("ppoll", [Null, Z, Zeros, Null, f(8), Z], OK),
    inv("select", [Z, Null, Null, Null, Zeros, Z], OK),
    inv("pselect6", [Z, Null, Null, Null, Zeros, Null], OK),
    inv("epoll_wait", [Fd, Out, f(1), Z, Z, Z], BADF),
    inv("epoll_pwait", [Fd, Out, f(1), Z, Null, f(8)], BADF),
    inv("epoll_pwait2", [Fd, Out, f(1), Zeros, Null, f(8)], BADF),
    inv(
        "epoll_ctl",
        [Fd, c(1), Fd, Null, Z, Z],
        fails(&[EFAULT, EBADF, EINVAL]),
    ),
    inv("epoll_create", [Z, Z, Z, Z, Z, Z], INVAL),
    inv("epoll_create1", [f(U32_MAX), Z, Z, Z, Z, Z], INVAL),
    inv("eventfd2", [Z, f(U32_MAX), Z, Z, Z, Z], INVAL),
    inv("timerfd_create", [f(U32_MAX), Z, Z, Z, Z, Z], INVAL),
    inv(
        "timerfd_settime",
        [Fd, c(0), Null, Null, Z, Z],
        fails(&[EFAULT, EBADF]),
    ),
    inv(
        "signalfd4",
        [Fd, Null, f(8), Z, Z, Z],
        fails(&[EFAULT, EINVAL]),
    ),
    inv("inotify_init1", [f(U32_MAX), Z, Z, Z, Z, Z], INVAL),
    inv("pipe", [Null, Z, Z, Z, Z, Z], FAULT),
    inv("pipe2", [Null, f(U32_MAX), Z, Z, Z, Z], INVAL),
    inv("clock_gettime", [c(1), Out, Z, Z, Z, Z], OK),
    inv("clock_getres", [c(1), Out, Z, Z, Z, Z], OK),
    inv("gettimeofday", [Out, Null, Z, Z, Z, Z], OK),
    inv("time", [Null, Z, Z, Z, Z, Z], OK),
    inv("getitimer", [c(0), Out, Z, Z, Z, Z], OK),
    inv("setitimer", [c(0), Zeros, Null, Z, Z, Z], OK),
    inv(
        "timer_settime",
        [f(U32_MAX), Z, Null, Null, Z, Z],
        fails(&[EINVAL, EFAULT]),
    ),
    inv("timer_gettime", [f(U32_MAX), Out, Z, Z, Z, Z], INVAL),
    inv("timer_delete", [f(U32_MAX), Z, Z, Z, Z, Z], INVAL),
    inv("io_getevents", [Z, Z, Z, Null, Null, Z], INVAL),
    inv(
        "io_uring_setup",
        [Z, Null, Z, Z, Z, Z],
        fails(&[EFAULT, EINVAL, EPERM]),
    ),
    // Networking: invalid socket types, never-open descriptors.
    inv("socket", [c(2), f(U32_MAX), c(0), Z, Z, Z], INVAL),
    inv("socketpair", [c(1), f(U32_MAX), c(0), Null, Z, Z], INVAL),
    inv("connect", [Fd, Null, Z, Z, Z, Z], BADF),
    inv("bind", [Fd, Null, Z, Z, Z, Z], BADF),
    inv("listen", [Fd, c(128), Z, Z, Z, Z], BADF),
    inv("accept", [Fd, Null, Null, Z, Z, Z], BADF),
    inv(
        "accept4",
        [Fd, Null, Null, c(0x80000), Z, Z],
        fails(&[EBADF, EINVAL]),
    ),
    inv("recvfrom", [Fd, Out, Z, c(0), Null, Null], BADF),
    inv("sendto", [Fd, Zeros, Z, c(0), Null, Z], BADF),
    inv("recvmsg", [Fd, Null, c(0), Z, Z, Z], BADF),
    inv("sendmsg", [Fd, Null, c(0), Z, Z, Z], BADF),
    inv("recvmmsg", [Fd, Null, Z, c(0), Null, Z], BADF),
    inv("sendmmsg", [Fd, Null, Z, c(0), Z, Z], BADF),
    inv("shutdown", [Fd, c(2), Z, Z, Z, Z], BADF),
    inv("setsockopt", [Fd, c(1), c(2), Zeros, f(4), Z], BADF),
    inv(
        "getsockopt",
        [Fd, c(1), c(2), Out, Null, Z],
        fails(&[EBADF, EFAULT]),
    ),
    inv("getsockname", [Fd, Null, Null, Z, Z, Z], BADF),
    inv("getpeername", [Fd, Null, Null, Z, Z, Z], BADF),
    // Process queries.
    inv("getpid", [Z, Z, Z, Z, Z, Z], OK),
    inv("getppid", [Z, Z, Z, Z, Z, Z], OK),
    inv("gettid", [Z, Z, Z, Z, Z, Z], OK),
    inv("getuid", [Z, Z, Z, Z, Z, Z], OK),
    inv("geteuid", [Z, Z, Z, Z, Z, Z], OK),
    inv("getgid", [Z, Z, Z, Z, Z, Z], OK),
    inv("getegid", [Z, Z, Z, Z, Z, Z], OK),
    inv("getpgrp", [Z, Z, Z, Z, Z, Z], OK),
    inv("getpgid", [Z, Z, Z, Z, Z, Z], OK),
    inv("getsid", [Z, Z, Z, Z, Z, Z], OK),
    inv("getresuid", [Out, Out, Out, Z, Z, Z], OK),
    inv("getresgid", [Out, Out, Out, Z, Z, Z], OK),
    inv("getgroups", [Z, Null, Z, Z, Z, Z], OK),
    inv("uname", [Out, Z, Z, Z, Z, Z], OK),
    inv("sysinfo", [Out, Z, Z, Z, Z, Z], OK),
    inv("getrandom", [Out, Z, c(0), Z, Z, Z], OK),
    inv("getrusage", [c(0), Out, Z, Z, Z, Z], OK),
    inv("times", [Out, Z, Z, Z, Z, Z], OK),
    inv("getrlimit", [c(7), Out, Z, Z, Z, Z], OK),
    inv(
        "setrlimit",
        [c(7), Null, Z, Z, Z, Z],
        fails(&[EFAULT, EINVAL]),
    ),
    inv("prlimit64", [Z, c(7), Null, Out, Z, Z], ok_or(&[EINVAL])),
    inv("getpriority", [c(0), Z, Z, Z, Z, Z], OK),
    inv("setpriority", [f(99), Z, Z, Z, Z, Z], INVAL),
    inv("ioprio_get", [c(1), Z, Z, Z, Z, Z], ok_or(&[EINVAL])),
    inv("sched_getaffinity", [Z, f(128), Out, Z, Z, Z], OK),
    inv("sched_setaffinity", [Z, Z, Null, Z, Z, Z], INVAL),
    inv("sched_getparam", [Z, Out, Z, Z, Z, Z], OK),
    inv("sched_getscheduler", [Z, Z, Z, Z, Z, Z], OK),
    inv("getcpu", [Out, Null, Null, Z, Z, Z], OK),
    inv("capget", [Null, Null, Z, Z, Z, Z], FAULT),
    inv("capset", [Null, Null, Z, Z, Z, Z], FAULT),
    inv("personality", [f(U32_MAX), Z, Z, Z, Z, Z], OK),
    inv("umask", [c(0o022), Z, Z, Z, Z, Z], OK),
    inv("arch_prctl", [f(0x1003), Out, Z, Z, Z, Z], OK), // ARCH_GET_FS
    inv("prctl", [f(3), Z, Z, Z, Z, Z], OK),             // PR_GET_DUMPABLE
    inv("set_tid_address", [Out, Z, Z, Z, Z, Z], OK),
    inv("set_robust_list", [Null, Z, Z, Z, Z, Z], INVAL),
    inv("get_robust_list", [Z, Out, Out, Z, Z, Z], OK),
    inv("rseq", [Null, Z, Z, Z, Z, Z], INVAL),
    inv("seccomp", [f(2), Z, Zeros, Z, Z, Z], OK), // SECCOMP_GET_ACTION_AVAIL
    inv("restart_syscall", [Z, Z, Z, Z, Z, Z], fails(&[EINTR])),
    // Identity changes with values that change nothing (-1 = "keep") or are invalid.
    inv("setuid", [f(U32_MAX), Z, Z, Z, Z, Z], INVAL),
    inv("setgid", [f(U32_MAX), Z, Z, Z, Z, Z], INVAL),
    inv("setreuid", [f(U32_MAX), f(U32_MAX), Z, Z, Z, Z], OK),
    inv("setregid", [f(U32_MAX), f(U32_MAX), Z, Z, Z, Z], OK),
    inv(
        "setresuid",
        [f(U32_MAX), f(U32_MAX), f(U32_MAX), Z, Z, Z],
        OK,
    ),
    inv(
        "setresgid",
        [f(U32_MAX), f(U32_MAX), f(U32_MAX), Z, Z, Z],
        OK,
    ),
    inv("setfsuid", [f(U32_MAX), Z, Z, Z, Z, Z], OK),
    inv("setfsgid", [f(U32_MAX), Z, Z, Z, Z, Z], OK),
    inv("setgroups", [f(U32_MAX), Null, Z, Z, Z, Z], INVAL),
    // Signals: queries (NULL new value) and signal 0 to itself (a permission check only).
    inv(
        "rt_sigaction",
        [c(10), Null, Out, f(8), Z, Z],
        ok_or(&[EINVAL]),
    ),
    inv(
        "rt_sigprocmask",
        [c(0), Null, Out, f(8), Z, Z],
        ok_or(&[EINVAL]),
    ),
    inv("rt_sigpending", [Out, f(8), Z, Z, Z, Z], OK),
    inv("sigaltstack", [Null, Out, Z, Z, Z, Z], OK),
    inv("rt_sigsuspend", [Null, Z, Z, Z, Z, Z], INVAL),
    inv("rt_sigtimedwait", [Null, Null, Null, Z, Z, Z], INVAL),
    inv("rt_sigqueueinfo", [SelfPid, c(10), Null, Z, Z, Z], FAULT),
    inv("kill", [SelfPid, Z, Z, Z, Z, Z], OK),
    inv("tkill", [SelfTid, Z, Z, Z, Z, Z], OK),
    inv("tgkill", [SelfPid, SelfTid, Z, Z, Z, Z], OK),
    inv("pidfd_open", [SelfPid, f(U32_MAX), Z, Z, Z, Z], INVAL),
    inv("kcmp", [SelfPid, SelfPid, f(U32_MAX), Z, Z, Z], INVAL),
    inv("process_vm_readv", [SelfPid, Null, Z, Null, Z, Z], OK),
    inv("ptrace", [f(2), Z, Z, Z, Z, Z], fails(&[ESRCH])), // PTRACE_PEEKDATA on pid 0
    // Children: none exist, WNOHANG; clone with flags the kernel refuses up front.
    inv(
        "wait4",
        [f(MINUS_ONE), Null, f(1), Null, Z, Z],
        fails(&[ECHILD]),
    ),
    inv("waitid", [Z, Z, Out, f(5), Null, Z], fails(&[ECHILD])),
    // CLONE_SIGHAND without CLONE_VM: EINVAL before anything is copied (and no namespace
    // flags, so filters that test for them take their allow path).
    inv("clone", [f(0x800), Z, Null, Null, Z, Z], INVAL),
    inv("clone3", [Null, Z, Z, Z, Z, Z], INVAL),
    inv(
        "bpf",
        [f(U32_MAX), Null, Z, Z, Z, Z],
        fails(&[EINVAL, EPERM]),
    ),
    inv(
        "perf_event_open",
        [Null, Z, f(MINUS_ONE), f(MINUS_ONE), Z, Z],
        FAULT,
    ),
    inv(
        "userfaultfd",
        [f(U32_MAX), Z, Z, Z, Z, Z],
        fails(&[EINVAL, EPERM]),
    ),
    inv("close_range", [f(CLOSED_FD), f(CLOSED_FD), Z, Z, Z, Z], OK),
];

/// Syscalls secopt does not attempt, with the reason.
const NOT_HARMLESS: &[(&str, &str)] = &[
    ("exit", "ends the calling thread"),
    ("exit_group", "ends the process"),
    ("fork", "creates a process"),
    ("vfork", "creates a process"),
    ("rt_sigreturn", "restores a signal frame from the stack"),
    ("pause", "blocks until a signal arrives"),
    (
        "alarm",
        "would replace the benchmark child's watchdog timer",
    ),
    (
        "eventfd",
        "creates a descriptor on every call (no flags argument to make it fail)",
    ),
    ("inotify_init", "creates a descriptor on every call"),
    ("sync", "flushes every filesystem"),
    ("vhangup", "hangs up the controlling terminal"),
    ("reboot", "changes system state"),
    ("kexec_load", "changes system state"),
    ("kexec_file_load", "changes system state"),
    ("init_module", "changes system state"),
    ("finit_module", "changes system state"),
    ("delete_module", "changes system state"),
    ("swapon", "changes system state"),
    ("swapoff", "changes system state"),
    ("settimeofday", "changes system state"),
    ("clock_settime", "changes system state"),
    ("clock_adjtime", "changes system state"),
    ("adjtimex", "changes system state"),
    ("acct", "changes system state"),
    ("sethostname", "changes system state"),
    ("setdomainname", "changes system state"),
    ("uretprobe", "the kernel runs it without consulting seccomp"),
    ("uprobe", "the kernel runs it without consulting seccomp"),
];

/// The harmless invocation of x86_64 syscall `name`.
pub fn harmless(name: &str) -> Option<&'static Invocation> {
    X86_64.iter().find(|i| i.name == name)
}

/// Every syscall with a harmless invocation, in table order.
pub fn harmless_names() -> impl Iterator<Item = &'static str> {
    X86_64.iter().map(|i| i.name)
}

/// Why `name` is not attempted; `None` if it has an invocation or is simply unknown here.
pub fn not_harmless(name: &str) -> Option<&'static str> {
    NOT_HARMLESS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, w)| *w)
}

/// Why a syscall of a workload is not measured.
pub fn skip_reason(name: &str) -> String {
    match not_harmless(name) {
        Some(why) => format!("not attempted: {why}"),
        None => "no harmless invocation known for it".to_string(),
    }
}

/// Addresses and ids an invocation's arguments refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgContext {
    pub out_buf: u64,
    pub zeros: u64,
    pub ones: u64,
    pub pid: u64,
    pub tid: u64,
}

impl Invocation {
    /// The argument values known before the call is made: [`Arg::Choose`] defaults, fixed
    /// numbers, [`CLOSED_FD`] and NULL. Addresses and ids (known only in the child) are `None`.
    /// A probe list's entry carries these, so its cost is charged on the path the measured call
    /// takes rather than on the longest argument check.
    pub fn known_values(&self) -> [Option<u64>; 6] {
        self.args.map(|arg| match arg {
            Arg::Choose(v) | Arg::Fixed(v) => Some(v),
            Arg::ClosedFd => Some(CLOSED_FD),
            Arg::Null => Some(0),
            Arg::OutBuf | Arg::Zeros | Arg::Path | Arg::Invalid | Arg::SelfPid | Arg::SelfTid => {
                None
            }
        })
    }

    /// The argument registers, with `chosen` replacing [`Arg::Choose`] defaults.
    pub fn registers(&self, chosen: &[Option<u64>; 6], cx: &ArgContext) -> [u64; 6] {
        let mut regs = [0u64; 6];
        for (i, (arg, pick)) in self.args.iter().zip(chosen).enumerate() {
            regs[i] = match *arg {
                Arg::Choose(default) => pick.unwrap_or(default),
                Arg::Fixed(v) => v,
                Arg::ClosedFd => CLOSED_FD,
                Arg::Null => 0,
                Arg::OutBuf => cx.out_buf,
                Arg::Zeros | Arg::Path => cx.zeros,
                Arg::Invalid => cx.ones,
                Arg::SelfPid => cx.pid,
                Arg::SelfTid => cx.tid,
            };
        }
        regs
    }

    /// Checks that `chosen` only sets arguments a workload may choose.
    pub fn check_choices(&self, chosen: &[Option<u64>; 6]) -> Result<(), String> {
        for (i, (arg, pick)) in self.args.iter().zip(chosen).enumerate() {
            if let Some(v) = pick {
                // A recorded value equal to the one the invocation fixes is no substitution.
                let same = match arg {
                    Arg::Fixed(f) => f == v,
                    Arg::Null => *v == 0,
                    Arg::ClosedFd => *v == CLOSED_FD,
                    _ => false,
                };
                if !arg.is_choosable() && !same {
                    return Err(format!(
                        "{}: args[{i}] = {v:#x} cannot be chosen: {}",
                        self.name,
                        arg.why_fixed()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether the arguments name the calling process (they differ per child).
    pub fn uses_self_ids(&self) -> bool {
        self.args
            .iter()
            .any(|a| matches!(a, Arg::SelfPid | Arg::SelfTid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;

    #[test]
    fn every_name_is_an_x86_64_syscall_and_listed_once() {
        let table = Arch::X86_64.syscalls();
        let mut seen = std::collections::BTreeSet::new();
        for i in X86_64 {
            assert!(
                table.nr(i.name).is_some(),
                "{} is not an x86_64 syscall",
                i.name
            );
            assert!(seen.insert(i.name), "{} listed twice", i.name);
            assert!(
                not_harmless(i.name).is_none(),
                "{} is in both lists",
                i.name
            );
        }
        for (n, _) in NOT_HARMLESS {
            assert!(table.nr(n).is_some(), "{n} is not an x86_64 syscall");
        }
    }

    #[test]
    fn choices_only_where_allowed() {
        let ioctl = harmless("ioctl").unwrap();
        let mut pick = [None; 6];
        pick[1] = Some(0xae80);
        assert!(ioctl.check_choices(&pick).is_ok());
        let cx = ArgContext {
            out_buf: 0x1000,
            zeros: 0x2000,
            ones: 0x3000,
            pid: 7,
            tid: 8,
        };
        assert_eq!(ioctl.registers(&pick, &cx), [CLOSED_FD, 0xae80, 0, 0, 0, 0]);
        pick[0] = Some(3);
        let e = ioctl.check_choices(&pick).unwrap_err();
        assert!(
            e.contains("args[0]") && e.contains("file descriptor"),
            "{e}"
        );
        let tgkill = harmless("tgkill").unwrap();
        assert_eq!(tgkill.registers(&[None; 6], &cx)[..3], [7, 8, 0]);
    }

    #[test]
    fn outcomes_read_raw_returns() {
        assert!(BADF.accepts((-9i64) as u64));
        assert!(!BADF.accepts(0));
        assert!(!BADF.accepts((-14i64) as u64));
        assert!(OK.accepts(12345));
        assert!(!OK.accepts((-1i64) as u64));
    }
}
