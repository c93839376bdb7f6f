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

/// `../shared/workloads/FILE` (an x86_64 `strace -c` file) through the benchmark's reader.
pub fn read_shared_workload(file: &str) -> secopt::bench::workload::Workload {
    let path = shared_workload_path(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let opts = secopt::bench::workload::WorkloadOptions {
        native: secopt::arch::Arch::X86_64,
        skip_unknown: true,
    };
    secopt::bench::workload::parse_file(&bytes, file, &opts)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Where `../shared/workloads/FILE` is.
pub fn shared_workload_path(file: &str) -> std::path::PathBuf {
    super::libseccomp_profiles::profile_path("")
        .join("../workloads")
        .join(file)
}

/// A workload's calls as optimizer weights, as they are (x86_64 and its compat ABIs).
pub fn weights_of(wl: &secopt::bench::workload::Workload) -> secopt::optimize::Weights {
    let mut w = secopt::optimize::Weights::new();
    for e in &wl.entries {
        w.add_call(e.arch.token(), e.nr, e.count as f64, e.args)
            .expect("counts");
    }
    w
}
