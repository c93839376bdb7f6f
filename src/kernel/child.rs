//! Waiting for the short-lived children that install filters (the kernel oracle, the
//! benchmark), and saying in words how one ended.

use std::io;

/// `waitpid` for our own child `pid`, retried on `EINTR`; returns the wait status.
pub fn wait_for(pid: libc::pid_t) -> io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child; `status` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// How a child with wait status `status` ended, with the usual reason for each signal a
/// filter-installing child dies of.
pub fn describe_wait_status(status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let why = match sig {
            libc::SIGILL => " (SIGILL: e.g. a uretprobe/uprobe syscall that really ran)",
            libc::SIGSEGV => " (SIGSEGV: e.g. int $0x80 without IA32 emulation)",
            libc::SIGALRM => " (SIGALRM: it timed out; a call blocked?)",
            libc::SIGTRAP => " (SIGTRAP: it ended before all calls were made)",
            libc::SIGSYS => " (SIGSYS: a filter killed it)",
            _ => "",
        };
        format!("died of signal {sig}{why}")
    } else if libc::WIFEXITED(status) {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    } else {
        format!("ended with wait status {status:#x}")
    }
}
