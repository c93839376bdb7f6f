//! Timing system calls under a filter in fresh child processes (x86_64 Linux).
//!
//! One child per (round, variant): it pins itself to one CPU, sets `no_new_privs`, installs
//! the variant's bench program (nothing for `none`), and then for every probe, in an order
//! rotated by the round number, makes the call `warmup` times and times `calls` more with
//! the time-stamp counter. After the filter is installed the child makes no system call but
//! the probes: the filter would answer any other call too. Results go to memory shared with
//! the parent, and the child ends itself with `int3` (`SIGTRAP`), which needs no syscall.
//!
//! Why the TSC: `clock_gettime` is a vDSO function only while the kernel's clock source
//! allows it; otherwise it falls back to a real syscall, which the filter under test would
//! see (and might deny). `rdtsc` never enters the kernel. The parent converts cycles to
//! nanoseconds with a frequency it measures against `CLOCK_MONOTONIC`.
//!
//! Nothing here allocates or takes a lock in the child (the parent may be multi-threaded).

use super::BenchError;
use crate::kernel::entry::{issue, Entry};
use crate::kernel::seccomp::install_filter_raw;
use std::io;

/// One call as the child makes it.
#[derive(Debug, Clone, Copy)]
pub struct ChildProbe {
    pub nr: u32,
    pub regs: [u64; 6],
    /// Bit `i`: argument `i` is the child's pid / thread id.
    pub pid_slots: u8,
    pub tid_slots: u8,
}

/// What the parent learns from one child.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildResult {
    /// Per probe (in probe order): the first call's raw return and the cycles the timed
    /// calls took.
    pub first_rax: Vec<u64>,
    pub cycles: Vec<u64>,
}

/// How one child runs.
#[derive(Debug, Clone, Copy)]
pub struct ChildConfig {
    pub warmup: usize,
    pub calls: usize,
    pub cpu: Option<usize>,
    /// Probe `(k + rotate) % n` runs `k`-th.
    pub rotate: usize,
    pub timeout_secs: u32,
}

/// 8-byte aligned so the records after it are too.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct Header {
    failed_step: u32,
    errno: i32,
    /// Index of the probe being run, plus one (0: none started).
    current: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Record {
    done: u64,
    first_rax: u64,
    cycles: u64,
}

const STEP_AFFINITY: u32 = 1;
const STEP_NO_NEW_PRIVS: u32 = 2;
const STEP_INSTALL: u32 = 3;

/// The results page of one child.
type Shared = crate::kernel::child::SharedResults<Header, Record>;

/// Private pages the probes point into: a writable scratch page, a read-only page of zeros
/// and a read-only page of `0xff` bytes. Created before any child is forked, so every child
/// sees them at the same addresses.
pub struct Scratch {
    base: *mut u8,
    page: usize,
}

impl Scratch {
    pub fn new() -> io::Result<Scratch> {
        // SAFETY: sysconf has no memory effects.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        // SAFETY: a fresh private anonymous mapping of three pages.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                3 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = base as *mut u8;
        let scratch = Scratch { base, page };
        // SAFETY: the third page is ours; fill it, then make the last two read-only.
        unsafe {
            std::ptr::write_bytes(base.add(2 * page), 0xff, page);
            if libc::mprotect(
                base.add(page) as *mut libc::c_void,
                2 * page,
                libc::PROT_READ,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(scratch)
    }
    /// The writable scratch page.
    pub fn out_buf(&self) -> u64 {
        self.base as u64
    }
    /// The read-only zero page.
    pub fn zeros(&self) -> u64 {
        self.base as u64 + self.page as u64
    }
    /// The read-only all-ones page.
    pub fn ones(&self) -> u64 {
        self.base as u64 + 2 * self.page as u64
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, 3 * self.page) };
    }
}

/// The time-stamp counter, ordered after earlier instructions.
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: lfence and rdtsc have no memory effects; every x86_64 CPU has both.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        let t = core::arch::x86_64::_rdtsc();
        core::arch::x86_64::_mm_lfence();
        t
    }
}

/// Measures the TSC frequency in GHz against `CLOCK_MONOTONIC` (median of 5 × 20 ms).
pub fn tsc_ghz() -> f64 {
    let mut samples = Vec::new();
    for _ in 0..5 {
        let t0 = std::time::Instant::now();
        let c0 = tsc();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let c1 = tsc();
        let ns = t0.elapsed().as_nanos() as f64;
        samples.push((c1.wrapping_sub(c0)) as f64 / ns);
    }
    super::stats::median(&samples)
}

/// The CPU this thread runs on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no arguments.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

/// Runs one child with `filters` installed (oldest first; none for the baseline) over
/// `probes` and returns what it measured. `variant` names the filter in errors.
pub fn run_child(
    variant: &str,
    filters: &[Vec<libc::sock_filter>],
    probes: &[ChildProbe],
    cfg: &ChildConfig,
) -> Result<ChildResult, BenchError> {
    let fail = |message: String| BenchError::Measure {
        variant: variant.to_string(),
        message,
    };
    let shared = Shared::new(probes.len()).map_err(|e| fail(format!("mmap: {e}")))?;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child runs only `child_main`, which allocates nothing, takes no locks and
    // never returns, so forking a multi-threaded process is fine.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(fail(format!("fork: {}", io::Error::last_os_error())));
    }
    if pid == 0 {
        // SAFETY: see above; prctl and getppid are async-signal-safe. The child dies with
        // this thread (`kill PID` of secopt, an OOM kill): left behind, it would go on
        // calling its syscalls until its alarm, up to an hour. A parent already gone before
        // the prctl is seen as a new parent.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            child_main(filters, probes, &shared, cfg)
        }
    }
    let status = crate::kernel::child::wait_for(pid).map_err(|e| fail(format!("waitpid: {e}")))?;
    // SAFETY: the child has exited; nothing writes the mapping any more.
    let header = unsafe { std::ptr::read_volatile(shared.header()) };
    let errno = io::Error::from_raw_os_error(header.errno);
    match header.failed_step {
        0 => {}
        STEP_INSTALL => {
            // A marker errno: an older filter of the stack (rewritten as bench programs
            // are) answered the seccomp(2) that installs the next with a denial.
            let marked =
                u32::try_from(header.errno).is_ok_and(|e| e >= super::variant::MARKER_BASE);
            return Err(BenchError::Install {
                variant: variant.to_string(),
                error: if marked {
                    "an older filter of the stack denies seccomp(2), which installs the next \
                     one: every filter but the newest must allow it; or join the stack into \
                     one filter (`secopt optimize OLDEST … NEWEST -o one.bpf`, proved equal to \
                     the stack) and measure that"
                        .to_string()
                } else {
                    errno.to_string()
                },
            });
        }
        STEP_AFFINITY => {
            return Err(fail(format!(
                "cannot pin the child to cpu {}: {errno}",
                cfg.cpu.unwrap_or(0)
            )))
        }
        _ => return Err(fail(format!("prctl(PR_SET_NO_NEW_PRIVS): {errno}"))),
    }
    let mut first_rax = Vec::with_capacity(probes.len());
    let mut cycles = Vec::with_capacity(probes.len());
    for i in 0..probes.len() {
        // SAFETY: i < probes.len(); the child has exited.
        let r = unsafe { std::ptr::read_volatile(shared.record(i)) };
        if r.done == 0 {
            break;
        }
        first_rax.push(r.first_rax);
        cycles.push(r.cycles);
    }
    let finished = libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGTRAP;
    if !finished || first_rax.len() != probes.len() {
        let during = match header.current {
            0 => "before its first probe".to_string(),
            c => format!(
                "during probe {} (syscall {})",
                c - 1,
                probes[c as usize - 1].nr
            ),
        };
        return Err(fail(format!(
            "the benchmark child {} {during}",
            crate::kernel::child::describe_wait_status(status)
        )));
    }
    Ok(ChildResult { first_rax, cycles })
}

/// The child (see the module docs). Never returns.
unsafe fn child_main(
    filters: &[Vec<libc::sock_filter>],
    probes: &[ChildProbe],
    shared: &Shared,
    cfg: &ChildConfig,
) -> ! {
    libc::alarm(cfg.timeout_secs);
    crate::kernel::child::reset_signals_in_child();
    let fail = |step: u32| -> ! {
        let errno = *libc::__errno_location();
        std::ptr::write_volatile(
            shared.header(),
            Header {
                failed_step: step,
                errno,
                current: 0,
            },
        );
        libc::_exit(1)
    };
    if let Some(cpu) = cfg.cpu {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            fail(STEP_AFFINITY);
        }
    }
    let pid = libc::getpid() as u64;
    let tid = libc::syscall(libc::SYS_gettid) as u64;
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
        fail(STEP_NO_NEW_PRIVS);
    }
    // A stack's older filters decide whether the newer ones may be installed (seccomp(2)
    // is a system call like any other).
    for f in filters {
        if install_filter_raw(f, 0).is_err() {
            fail(STEP_INSTALL);
        }
    }
    // From here on every system call is decided by the filter.
    let n = probes.len();
    for k in 0..n {
        let i = (k + cfg.rotate) % n;
        let p = probes[i];
        let mut regs = p.regs;
        for (slot, r) in regs.iter_mut().enumerate() {
            if p.pid_slots & (1 << slot) != 0 {
                *r = pid;
            }
            if p.tid_slots & (1 << slot) != 0 {
                *r = tid;
            }
        }
        let h = shared.header();
        std::ptr::write_volatile(std::ptr::addr_of_mut!((*h).current), i as u32 + 1);
        let nr = p.nr as i32;
        let first = issue(Entry::Native, nr, regs).rax;
        for _ in 1..cfg.warmup {
            issue(Entry::Native, nr, regs);
        }
        let t0 = tsc();
        for _ in 0..cfg.calls {
            issue(Entry::Native, nr, regs);
        }
        let t1 = tsc();
        std::ptr::write_volatile(
            shared.record(i),
            Record {
                done: 1,
                first_rax: first,
                cycles: t1.wrapping_sub(t0),
            },
        );
    }
    loop {
        core::arch::asm!("int3");
    }
}
