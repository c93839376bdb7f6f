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

/// In a forked child that installs filters: a child killed by SIGSYS, ended by SIGTRAP or
/// dead of a fault dumps no core into the working directory, the signals its parent reads
/// from the wait status (and SIGALRM, its timeout) have their default action, and none is
/// blocked (the parent may have blocked some).
///
/// # Safety
/// Only libc calls that are async-signal-safe, so it may run between `fork` and `_exit` in a
/// multithreaded parent's child.
pub unsafe fn reset_signals_in_child() {
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    libc::setrlimit(libc::RLIMIT_CORE, &no_core);
    for sig in [
        libc::SIGSYS,
        libc::SIGTRAP,
        libc::SIGILL,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGALRM,
    ] {
        libc::signal(sig, libc::SIG_DFL);
    }
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
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

/// A shared anonymous mapping in which a forked child leaves its results for the parent: one
/// header `H` followed by `records` records `R`. Anonymous mappings start zeroed, so an all-zero
/// `H`/`R` must mean "nothing written yet". The child writes through the raw pointers (it may
/// not allocate or make system calls once its filter is installed); the parent reads them after
/// `waitpid`.
pub struct SharedResults<H, R> {
    base: *mut u8,
    len: usize,
    records: usize,
    _types: std::marker::PhantomData<(H, R)>,
}

impl<H, R> SharedResults<H, R> {
    /// Maps room for the header and `records` records (at least one).
    pub fn new(records: usize) -> io::Result<Self> {
        let records = records.max(1);
        let len = std::mem::size_of::<H>() + records * std::mem::size_of::<R>();
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SharedResults {
            base: p as *mut u8,
            len,
            records,
            _types: std::marker::PhantomData,
        })
    }

    /// The header.
    pub fn header(&self) -> *mut H {
        self.base as *mut H
    }

    /// Record `i`; panics if `i` is beyond the mapping (a caller bug, never input-driven).
    pub fn record(&self, i: usize) -> *mut R {
        assert!(i < self.records, "record {i} of {}", self.records);
        // SAFETY: `i < records`, so the offset stays inside the mapping.
        unsafe { (self.base.add(std::mem::size_of::<H>()) as *mut R).add(i) }
    }
}

impl<H, R> Drop for SharedResults<H, R> {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}
