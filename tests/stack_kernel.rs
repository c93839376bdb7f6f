//! The kernel is the oracle for stacked filters: random stacks of two to four filters are
//! installed, oldest first, in a forked child, which then makes one system call; what the
//! call did (the child died of `SIGSYS`, the call failed with an errno, or it ran) must be
//! what `bpf::stack::eval_stack` predicts, and what the single program
//! `bpf::stack::as_one_program` writes for the stack does when installed alone.
//!
//! The filters' returns are drawn from what a child can observe without running arbitrary
//! system calls: `ERRNO(1..150)` (the errno says which filter's answer won, ties included),
//! `TRAP`, `KILL_THREAD`, `KILL_PROCESS` (death by `SIGSYS`), and `ALLOW`, `LOG`, `TRACE`,
//! `USER_NOTIF` (with no tracer and no listener the call runs or fails with `ENOSYS`). The
//! calls are `getpid` (harmless when it runs) and numbers no kernel has (`ENOSYS` when they
//! run). Each filter starts with a guard that lets `exit_group` and `seccomp` through, so the
//! child can install the next filter and report.
//!
//! Without seccomp (another OS or architecture) the test skips loudly, or fails under
//! `SECOPT_REQUIRE_KERNEL_ORACLE=1`.

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod x86_64 {
    use secopt::bpf::action::*;
    use secopt::bpf::insn::*;
    use secopt::bpf::stack::{as_one_program, eval_stack, StackError};
    use secopt::bpf::testing::{random_program, GenConfig, Rng};
    use secopt::bpf::{interp, RetVal, SeccompData};

    const NR_GETPID: i64 = 39;
    const NR_EXIT: u32 = 60;
    const NR_EXIT_GROUP: u32 = 231;
    const NR_SECCOMP: u32 = 317;
    const ENOSYS: i32 = 38;
    /// Exit codes the child uses beyond errno values.
    const RAN: i32 = 250;
    const SETUP_FAILED: i32 = 251;

    /// What a call did, as the parent sees it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Outcome {
        /// The child died of SIGSYS (KILL_*, TRAP without a handler, unknown actions).
        Killed,
        /// The call failed with this errno (ERRNO(e), or ENOSYS for an allowed unknown call).
        Errno(i32),
        /// The call ran and returned a non-negative value (getpid allowed).
        Ran,
    }

    /// What the kernel does with a decision `ret` for syscall `nr` in the child.
    fn predicted(ret: RetVal, nr: i64) -> Outcome {
        let allowed = if nr == NR_GETPID {
            Outcome::Ran
        } else {
            Outcome::Errno(ENOSYS)
        };
        match ret.0 & SECCOMP_RET_ACTION_FULL {
            SECCOMP_RET_ERRNO => Outcome::Errno((ret.0 & SECCOMP_RET_DATA) as i32),
            SECCOMP_RET_ALLOW | SECCOMP_RET_LOG => allowed,
            // No tracer, no listener: the call fails with ENOSYS without running.
            SECCOMP_RET_TRACE | SECCOMP_RET_USER_NOTIF => Outcome::Errno(ENOSYS),
            _ => Outcome::Killed,
        }
    }

    fn sock_filters(p: &Program) -> Vec<libc::sock_filter> {
        p.insns
            .iter()
            .map(|i| libc::sock_filter {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect()
    }

    /// Installs `filters` (oldest first) in a child, makes syscall `nr` with `args`, and
    /// reports what happened.
    fn on_kernel(filters: &[Program], nr: i64, args: [u64; 6]) -> Outcome {
        let raw: Vec<Vec<libc::sock_filter>> = filters.iter().map(sock_filters).collect();
        let progs: Vec<libc::sock_fprog> = raw
            .iter()
            .map(|f| libc::sock_fprog {
                len: f.len() as u16,
                filter: f.as_ptr() as *mut libc::sock_filter,
            })
            .collect();
        // SAFETY: the child only makes raw system calls and ends with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
        if pid == 0 {
            // SAFETY: raw system calls on memory allocated before the fork.
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    libc::_exit(SETUP_FAILED);
                }
                for p in &progs {
                    if libc::syscall(libc::SYS_seccomp, 1, 0, p as *const libc::sock_fprog) != 0 {
                        libc::_exit(SETUP_FAILED);
                    }
                }
                let r = libc::syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
                if r < 0 {
                    libc::_exit(*libc::__errno_location());
                }
                libc::_exit(RAN);
            }
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        if libc::WIFSIGNALED(status) {
            assert_eq!(libc::WTERMSIG(status), libc::SIGSYS, "child died otherwise");
            return Outcome::Killed;
        }
        match libc::WEXITSTATUS(status) {
            RAN => Outcome::Ran,
            SETUP_FAILED => panic!("the kernel refused a filter of the stack"),
            e => Outcome::Errno(e),
        }
    }

    /// A random filter whose first instructions let `exit`, `exit_group` and `seccomp` (the
    /// next filter's installation) through, then start the random part from `A = 0`.
    fn guarded(rng: &mut Rng, cfg: &GenConfig) -> Program {
        let mut insns = vec![
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, NR_EXIT_GROUP, 2, 0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, NR_SECCOMP, 1, 0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, NR_EXIT, 0, 1),
            Insn::ret(SECCOMP_RET_ALLOW),
            Insn::stmt(BPF_LD | BPF_IMM, 0),
        ];
        insns.extend(random_program(rng, cfg).insns);
        Program::new(insns)
    }

    #[test]
    fn the_kernel_decides_random_stacks_as_eval_stack_and_the_joined_program() {
        let probe = Program::new(vec![Insn::ret(SECCOMP_RET_ALLOW)]);
        // A kernel that refuses even this makes the test skip.
        let works = std::panic::catch_unwind(|| on_kernel(&[probe], NR_GETPID, [0; 6]));
        if !matches!(works, Ok(Outcome::Ran)) {
            let msg = format!("seccomp filters cannot be installed here ({works:?})");
            assert!(
                std::env::var_os("SECOPT_REQUIRE_KERNEL_ORACLE").is_none(),
                "{msg}"
            );
            eprintln!("\n******** SKIPPED: {msg} ********\n");
            return;
        }
        let errno = |e| SECCOMP_RET_ERRNO | e;
        let cfg = GenConfig {
            max_len: 25,
            ret_a: false,
            constants: vec![0, 1, 39, 1000, 1001, 1002, 0x8000_0000, 0xffff_ffff],
            returns: vec![
                errno(1),
                errno(5),
                errno(13),
                errno(99),
                errno(149),
                SECCOMP_RET_TRAP,
                SECCOMP_RET_KILL_THREAD,
                SECCOMP_RET_KILL_PROCESS,
                SECCOMP_RET_ALLOW,
                SECCOMP_RET_LOG,
                SECCOMP_RET_TRACE,
                SECCOMP_RET_USER_NOTIF,
            ],
            ..GenConfig::default()
        };
        let mut rng = Rng::new(0x5eed_57ac);
        let nrs = [NR_GETPID, 1000, 1001, 1002];
        let (mut calls, mut outcomes) = (0, std::collections::BTreeSet::new());
        for stack in 0..250 {
            let filters: Vec<Program> = (0..2 + rng.below(3))
                .map(|_| guarded(&mut rng, &cfg))
                .collect();
            let joined = match as_one_program(&filters) {
                Ok(p) => Some(p),
                Err(StackError::DivisionByX { .. } | StackError::NoScratch { .. }) => None,
                Err(e) => panic!("{e}"),
            };
            for _ in 0..6 {
                let nr = rng.pick(&nrs);
                let args: [u64; 6] = std::array::from_fn(|_| {
                    if rng.chance(1, 2) {
                        u64::from(rng.pick(&cfg.constants))
                    } else {
                        rng.next_u64()
                    }
                });
                let data = SeccompData {
                    nr: nr as i32,
                    arch: 0xc000_003e,
                    instruction_pointer: 0,
                    args,
                };
                // The filters may read the instruction pointer; the kernel's is not this
                // one, so calls whose decision would depend on it are not compared.
                let at_ip = |ip| SeccompData {
                    instruction_pointer: ip,
                    ..data
                };
                let want = eval_stack(&filters, &data).unwrap();
                if eval_stack(&filters, &at_ip(u64::MAX)).unwrap() != want
                    || eval_stack(&filters, &at_ip(0x7f00_0000_1234)).unwrap() != want
                {
                    continue;
                }
                let kernel = on_kernel(&filters, nr, args);
                assert_eq!(
                    kernel,
                    predicted(want, nr),
                    "stack {stack}: nr {nr} args {args:x?}: eval_stack says {want:?}\n{filters:?}"
                );
                if let Some(joined) = &joined {
                    assert_eq!(interp::eval(joined, &data).unwrap(), want, "stack {stack}");
                    assert_eq!(
                        on_kernel(std::slice::from_ref(joined), nr, args),
                        kernel,
                        "stack {stack}: the joined program alone"
                    );
                }
                calls += 1;
                outcomes.insert(format!("{kernel:?}"));
            }
        }
        assert!(calls > 800, "only {calls} calls compared");
        assert!(
            outcomes.len() >= 6,
            "too few kinds of outcome: {outcomes:?}"
        );
    }
}
