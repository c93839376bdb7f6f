//! Workload helpers shared by the optimizer's target tests and `benches/compare.rs`.

/// Names the x86_64 workloads use that aarch64 (the asm-generic numbering) does not have, and
/// the call glibc and musl make there instead. Names with no equivalent (`arch_prctl`) have
/// none.
pub const AARCH64_EQUIVALENTS: [(&str, &str); 22] = [
    ("open", "openat"),
    ("creat", "openat"),
    ("stat", "newfstatat"),
    ("lstat", "newfstatat"),
    ("access", "faccessat"),
    ("poll", "ppoll"),
    ("select", "pselect6"),
    ("epoll_wait", "epoll_pwait"),
    ("epoll_create", "epoll_create1"),
    ("pipe", "pipe2"),
    ("dup2", "dup3"),
    ("mkdir", "mkdirat"),
    ("rmdir", "unlinkat"),
    ("unlink", "unlinkat"),
    ("rename", "renameat"),
    ("chown", "fchownat"),
    ("lchown", "fchownat"),
    ("chmod", "fchmodat"),
    ("readlink", "readlinkat"),
    ("getdents", "getdents64"),
    ("fork", "clone"),
    ("eventfd", "eventfd2"),
];

/// The call aarch64 makes for the x86_64-only syscall `name`, if there is one.
pub fn aarch64_equivalent(name: &str) -> Option<&'static str> {
    AARCH64_EQUIVALENTS
        .iter()
        .find(|(from, _)| *from == name)
        .map(|&(_, to)| to)
}
