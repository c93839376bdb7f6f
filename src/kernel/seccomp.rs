//! Installing seccomp filters on the calling thread and reading installed ones back.
//!
//! Thin wrappers over `prctl(PR_SET_NO_NEW_PRIVS)`, `seccomp(SECCOMP_SET_MODE_FILTER)` and
//! `ptrace(PTRACE_SECCOMP_GET_FILTER)`. Nothing here validates a program: the kernel is the
//! judge, which is what the validator is tested against.
//!
//! Index order of `PTRACE_SECCOMP_GET_FILTER`: index 0 is the *oldest* filter of the task
//! (tested below on 6.18), although the commit message that added the request and some
//! documentation describe index 0 as the most recently installed one.

use crate::bpf::{Insn, Program};
use std::io;

/// `seccomp(2)` operation that attaches a filter (`SECCOMP_SET_MODE_FILTER`).
pub const SECCOMP_SET_MODE_FILTER: u32 = 1;
/// Attach the filter to every thread of the process (`SECCOMP_FILTER_FLAG_TSYNC`).
pub const SECCOMP_FILTER_FLAG_TSYNC: u32 = 1 << 0;
/// Log every action but `ALLOW` (`SECCOMP_FILTER_FLAG_LOG`).
pub const SECCOMP_FILTER_FLAG_LOG: u32 = 1 << 1;
/// Do not force the speculative-store-bypass mitigation on (`SECCOMP_FILTER_FLAG_SPEC_ALLOW`).
pub const SECCOMP_FILTER_FLAG_SPEC_ALLOW: u32 = 1 << 2;
/// Return a user-notification listener fd (`SECCOMP_FILTER_FLAG_NEW_LISTENER`).
pub const SECCOMP_FILTER_FLAG_NEW_LISTENER: u32 = 1 << 3;
/// With `TSYNC`, fail with `ESRCH` instead of returning a thread id
/// (`SECCOMP_FILTER_FLAG_TSYNC_ESRCH`).
pub const SECCOMP_FILTER_FLAG_TSYNC_ESRCH: u32 = 1 << 4;
/// Wait killable for a notification reply (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`).
pub const SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: u32 = 1 << 5;
/// `ptrace` request that copies out a tracee's filter (`PTRACE_SECCOMP_GET_FILTER`, Linux 4.4+).
pub const PTRACE_SECCOMP_GET_FILTER: u32 = 0x420c;

/// Sets `no_new_privs` on the calling thread, which lets a process without `CAP_SYS_ADMIN`
/// install filters (and is inherited by children and kept across `execve`).
pub fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: prctl with integer arguments only; PR_SET_NO_NEW_PRIVS touches no memory.
    let r = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The program as the kernel's `struct sock_filter` array.
pub fn to_sock_filters(prog: &Program) -> Vec<libc::sock_filter> {
    prog.insns.iter().map(|i| to_sock_filter(*i)).collect()
}

fn to_sock_filter(i: Insn) -> libc::sock_filter {
    libc::sock_filter {
        code: i.code,
        jt: i.jt,
        jf: i.jf,
        k: i.k,
    }
}

/// Attaches `prog` to the calling thread (all threads with [`SECCOMP_FILTER_FLAG_TSYNC`]).
///
/// The caller needs `no_new_privs` ([`set_no_new_privs`]) or `CAP_SYS_ADMIN`. The kernel's
/// own checks decide whether the program is accepted (`EINVAL` otherwise). With
/// `TSYNC` (and without `TSYNC_ESRCH`/`NEW_LISTENER`) a thread that cannot be synchronised is
/// reported as an error naming its id. `NEW_LISTENER` is refused (`InvalidInput`) because the
/// listener fd would be lost: use [`install_filter_raw`], which returns it.
pub fn install_filter(prog: &Program, flags: u32) -> io::Result<()> {
    if flags & SECCOMP_FILTER_FLAG_NEW_LISTENER != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "install_filter cannot return the NEW_LISTENER fd; use install_filter_raw",
        ));
    }
    let filters = to_sock_filters(prog);
    let r = install_filter_raw(&filters, flags)?;
    let tsync_tid =
        flags & SECCOMP_FILTER_FLAG_TSYNC != 0 && flags & SECCOMP_FILTER_FLAG_TSYNC_ESRCH == 0;
    if tsync_tid && r > 0 {
        return Err(io::Error::other(format!(
            "seccomp TSYNC: thread {r} cannot be synchronised (it has a filter not shared with this one)"
        )));
    }
    Ok(())
}

/// Attaches a raw filter and returns the kernel's non-negative result (0, a listener fd with
/// `NEW_LISTENER`, or the id of a thread that blocked `TSYNC`).
///
/// Allocates nothing and takes no locks, so it is safe between `fork` and `exec` (the oracle
/// uses it in its children).
pub fn install_filter_raw(filter: &[libc::sock_filter], flags: u32) -> io::Result<i64> {
    let Ok(len) = u16::try_from(filter.len()) else {
        // sock_fprog.len is 16 bits: a longer array would be silently truncated.
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    let fprog = libc::sock_fprog {
        len,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points at `len` valid sock_filter entries that outlive the call; the
    // kernel only reads them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER as libc::c_ulong,
            flags as libc::c_ulong,
            &fprog as *const libc::sock_fprog,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as i64)
    }
}

/// Copies out filter `index` of process `pid` with `PTRACE_SECCOMP_GET_FILTER`.
///
/// The caller must be `pid`'s ptrace tracer with the tracee stopped, and have
/// `CAP_SYS_ADMIN`; the kernel needs `CONFIG_CHECKPOINT_RESTORE` (`EMEDIUMTYPE` otherwise).
/// Index 0 is the filter installed *first* (the oldest); `ENOENT` past the last one.
/// The kernel returns the instructions exactly as they were passed to `seccomp(2)`.
pub fn get_filter(pid: libc::pid_t, index: u32) -> io::Result<Program> {
    let request = |buf: *mut libc::sock_filter| -> io::Result<usize> {
        // SAFETY: with a null buffer the kernel only returns the count; otherwise `buf` has
        // room for the count it returned before (the tracee is stopped, so it cannot change).
        let r = unsafe {
            libc::syscall(
                libc::SYS_ptrace,
                PTRACE_SECCOMP_GET_FILTER as libc::c_long,
                pid as libc::c_long,
                index as libc::c_long,
                buf,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    };
    let count = request(std::ptr::null_mut())?;
    let empty = libc::sock_filter {
        code: 0,
        jt: 0,
        jf: 0,
        k: 0,
    };
    let mut buf = vec![empty; count];
    let got = request(buf.as_mut_ptr())?;
    buf.truncate(got.min(count));
    Ok(Program::new(
        buf.iter()
            .map(|f| Insn::new(f.code, f.jt, f.jf, f.k))
            .collect(),
    ))
}

/// Why the filters of a process could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadFiltersError {
    /// `PTRACE_SEIZE` failed: no such process (`ESRCH`), or not allowed to trace it
    /// (`EPERM`: another tracer, no `CAP_SYS_PTRACE`, Yama's `ptrace_scope`, or ourselves).
    #[error("cannot attach with ptrace: {0}")]
    Attach(io::Error),
    /// The process did not reach the ptrace stop (it exited meanwhile).
    #[error("the process did not stop for the tracer: {0}")]
    Stop(io::Error),
    /// `PTRACE_SECCOMP_GET_FILTER` refused: `EACCES` (no `CAP_SYS_ADMIN`, or the caller runs
    /// under seccomp itself), `EINVAL` (the process has no filter), `EMEDIUMTYPE` (a kernel
    /// without `CONFIG_CHECKPOINT_RESTORE`).
    #[error("PTRACE_SECCOMP_GET_FILTER failed for filter {index}: {error}")]
    Get { index: u32, error: io::Error },
}

/// Reads every filter attached to thread `pid`, oldest first, and leaves it running.
///
/// Attaches with `PTRACE_SEIZE`, stops the thread with `PTRACE_INTERRUPT` (the thread's
/// filters cannot change while it is stopped), copies each filter out with [`get_filter`]
/// until `ENOENT`, and detaches. A process without a filter gives an empty list (the kernel
/// answers `EINVAL` for index 0 when the thread is not in filter mode).
pub fn read_filters(pid: libc::pid_t) -> Result<Vec<Program>, ReadFiltersError> {
    let last = io::Error::last_os_error;
    // SAFETY: ptrace and waitpid with integer arguments; the tracee is only stopped and
    // resumed, never written to.
    unsafe {
        if libc::ptrace(libc::PTRACE_SEIZE, pid, 0usize, 0usize) != 0 {
            return Err(ReadFiltersError::Attach(last()));
        }
        if libc::ptrace(libc::PTRACE_INTERRUPT, pid, 0usize, 0usize) != 0 {
            let e = last();
            libc::ptrace(libc::PTRACE_DETACH, pid, 0usize, 0usize);
            return Err(ReadFiltersError::Stop(e));
        }
        let mut status = 0;
        if libc::waitpid(pid, &mut status, libc::__WALL) != pid {
            let e = last();
            libc::ptrace(libc::PTRACE_DETACH, pid, 0usize, 0usize);
            return Err(ReadFiltersError::Stop(e));
        }
    }
    let mut filters = Vec::new();
    let result = loop {
        let index = filters.len() as u32;
        match get_filter(pid, index) {
            Ok(p) => filters.push(p),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && index > 0 => break Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && index == 0 => break Ok(()),
            Err(error) => break Err(ReadFiltersError::Get { index, error }),
        }
    };
    // SAFETY: detaching our own tracee resumes it.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0usize, 0usize) };
    result.map(|()| filters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::insn::*;

    #[test]
    fn constants_match_the_uapi_headers() {
        // include/uapi/linux/seccomp.h and include/uapi/linux/ptrace.h.
        assert_eq!(SECCOMP_SET_MODE_FILTER, 1);
        assert_eq!(SECCOMP_FILTER_FLAG_TSYNC, 1);
        assert_eq!(SECCOMP_FILTER_FLAG_LOG, 2);
        assert_eq!(SECCOMP_FILTER_FLAG_SPEC_ALLOW, 4);
        assert_eq!(SECCOMP_FILTER_FLAG_NEW_LISTENER, 8);
        assert_eq!(SECCOMP_FILTER_FLAG_TSYNC_ESRCH, 16);
        assert_eq!(SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, 32);
        assert_eq!(PTRACE_SECCOMP_GET_FILTER, 0x420c);
    }

    #[test]
    fn a_tracer_reads_back_the_filters_it_installed_oldest_first() {
        // Two filters that allow everything the child still needs to do (stop itself).
        let first = Program::new(vec![Insn::ret(0x7fff_0000)]);
        let second = Program::new(vec![
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 9999, 0, 1),
            Insn::ret(0x0005_0001),
            Insn::stmt(BPF_LD | BPF_IMM, 0x7fff_0000),
            Insn::stmt(BPF_RET | BPF_A, 0xabcd), // k of RET A is ignored but kept
        ]);
        let (f1, f2) = (to_sock_filters(&first), to_sock_filters(&second));
        // SAFETY: the child only makes raw system calls and never returns.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", io::Error::last_os_error());
        if pid == 0 {
            // SAFETY: raw syscalls in the child; it is killed by the parent or exits.
            unsafe {
                let code = if libc::syscall(libc::SYS_ptrace, libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                    1
                } else if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0
                    || install_filter_raw(&f1, 0).is_err()
                    || install_filter_raw(&f2, 0).is_err()
                {
                    2
                } else {
                    libc::kill(libc::getpid(), libc::SIGSTOP);
                    3
                };
                libc::_exit(code);
            }
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFSTOPPED(status), "child did not stop: {status:#x}");
        let got = (get_filter(pid, 0), get_filter(pid, 1), get_filter(pid, 2));
        // SAFETY: our own stopped child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
        }
        match got {
            (Ok(a), Ok(b), Err(e)) => {
                assert_eq!(a, first, "index 0 is the oldest filter");
                assert_eq!(b, second);
                assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
            }
            (Err(e), ..)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMEDIUMTYPE | libc::EACCES | libc::EPERM)
                ) =>
            {
                eprintln!("SKIPPED: PTRACE_SECCOMP_GET_FILTER unavailable here: {e}");
            }
            other => panic!("unexpected: {other:?}"),
        }
    }
}
