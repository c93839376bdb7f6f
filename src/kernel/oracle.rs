//! The running kernel as an oracle: which return instruction does a filter take, and what does
//! it return, for a given system call?
//!
//! Nobody here wrote the kernel's BPF interpreter or JIT, so its answers are an independent
//! check of [`crate::bpf::interp`], [`crate::bpf::validate`] and everything built on them.
//!
//! How a question is asked without letting any system call run:
//! 1. A child is forked. It installs a *rewritten* copy of the program in which the `RET` at
//!    index `i` (`RET K` or `RET A`) becomes `RET ERRNO(n_i)` with a distinct `n_i`, so every
//!    decision is an errno and no syscall body ever runs. The child issues each call and
//!    stores `rax` and the reported instruction pointer in memory shared with the parent (it
//!    cannot use `write(2)`: that call would be answered by the filter too), then ends itself
//!    with `int3` (`SIGTRAP`), which needs no system call.
//! 2. A division by `X == 0` makes the kernel's filter return 0 (`SECCOMP_RET_KILL_THREAD`),
//!    which no rewrite can intercept: the child dies of `SIGSYS`. The call it was on is
//!    recorded as killed and the batch continues in a fresh child.
//! 3. `ERRNO` data above 4095 is clamped by the kernel, so at most 4094 returns are told apart
//!    per child (4095 means "another return"); longer programs take more children.
//! 4. For calls that ended in a `RET A`, three more children run a copy in which every
//!    `RET A` jumps to an appended epilogue `RSH s; AND 0x7ff; OR ERRNO; RET A` and every
//!    `RET K` returns `ERRNO(4095)`: each child reads 11 bits of A (`s` = 0, 11, 22).
//!
//! Exclusions: recent kernels (Linux 6.11 added `uretprobe`, x86_64 nr 335; `uprobe`, nr 336,
//! came later) pass these two native syscalls through without running any filter: the allow
//! cache always marks them allowed on the native arch. The kernel would execute them, and
//! outside a uprobe trampoline that is not harmless: on 6.18, native 335 kills the caller with
//! `SIGILL` and native 336 returns `ENXIO` (test
//! `uretprobe_and_uprobe_bypass_the_filter_natively_only`). [`Oracle::run`] refuses native calls of [`NATIVE_PASSTHROUGH_NRS`]; the same
//! numbers through `int $0x80` or with the x32 bit are filtered normally.
//!
//! The oracle assumes the calling process has no seccomp filter that returns `KILL` or
//! `TRAP` for the calls asked about (a stacked filter of the caller's own that does would be
//! seen as a kill); filters returning `ERRNO`/`ALLOW` do not matter, since the most recently
//! installed filter's errno wins.

use super::child::{describe_wait_status, wait_for};
use super::entry::{issue, Entry, RawReturn};
use super::seccomp::{install_filter_raw, to_sock_filters};
use crate::bpf::action::{MAX_ERRNO, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO};
use crate::bpf::insn::*;
use crate::bpf::{RetVal, SeccompData};
use std::io;

/// Native x86_64 syscall numbers recent kernels run without consulting any filter:
/// `uretprobe` (335) and `uprobe` (336). Refusing them on older kernels costs nothing.
pub const NATIVE_PASSTHROUGH_NRS: [i32; 2] = [335, 336];

/// Returns told apart per child: errno 1..=4094; 4095 means "a return of another group".
const GROUP: usize = MAX_ERRNO as usize - 1;
const ELSEWHERE: u32 = MAX_ERRNO;
/// Bits of A read per extraction child (`ERRNO` data must stay below 4095 and leave room for
/// the "took a `RET K`" marker).
const CHUNK_BITS: u32 = 11;
/// `RSH`, `AND`, `OR`, `RET A`.
const EPILOGUE_LEN: usize = 4;
/// A child that has not finished after this long is killed by its own `alarm`.
const CHILD_TIMEOUT_SECS: u32 = 20;

/// One system call to ask about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Call {
    pub entry: Entry,
    /// The number as passed to the entry; [`Entry::X32`] adds bit 30.
    pub nr: i32,
    /// The six arguments; [`Entry::I386`] passes only their low 32 bits.
    pub args: [u64; 6],
}

impl Call {
    pub fn new(entry: Entry, nr: i32, args: [u64; 6]) -> Self {
        Call { entry, nr, args }
    }
}

/// What the kernel decided for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// Index of the return instruction the filter took; `None` when it aborted with 0
    /// because of a division by `X == 0`.
    pub ret_index: Option<usize>,
    /// What the original program returns (0 for a division by zero).
    pub value: RetVal,
    /// The `seccomp_data` the kernel evaluated, with the instruction pointer it reported.
    pub data: SeccompData,
}

/// Why the oracle could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OracleError {
    #[error("the kernel oracle is not available here: {0}")]
    Unavailable(String),
    #[error("the kernel rejected the filter: {0}")]
    Rejected(io::Error),
    #[error("call {index}: native syscall {nr} bypasses seccomp filters on recent kernels (uretprobe/uprobe), so the kernel would run it instead of asking the filter")]
    Passthrough { index: usize, nr: i32 },
    #[error("call {index} returned through RET A, but reading A out needs {EPILOGUE_LEN} more instructions and the program already has {len} (limit {BPF_MAXINSNS})")]
    NoRoomForEpilogue { index: usize, len: usize },
    #[error("call {index}: the child process {what}")]
    Child { index: usize, what: String },
    #[error("call {index}: inconsistent answers from the kernel: {what}")]
    Inconsistent { index: usize, what: String },
    #[error("oracle setup failed: {0}")]
    Io(#[from] io::Error),
}

/// Asks the running kernel how a seccomp filter decides system calls.
#[derive(Debug, Clone)]
pub struct Oracle {
    /// Instruction pointer reported for each entry (indexed by [`entry_slot`]), learned when
    /// the oracle was created; `None` for an entry this machine cannot use.
    ips: [Option<u64>; 3],
}

fn entry_slot(e: Entry) -> usize {
    match e {
        Entry::Native => 0,
        Entry::I386 => 1,
        Entry::X32 => 2,
    }
}

impl Oracle {
    /// Checks that seccomp filters can be installed (in a child) and which entries work, and
    /// learns the instruction pointer each entry reports.
    pub fn new() -> Result<Oracle, OracleError> {
        // getpid: 39 on x86_64, 20 on i386; the filter answers them anyway.
        let allow = Program::new(vec![Insn::ret(SECCOMP_RET_ALLOW)]);
        let unknown = [None; 3];
        let native = [
            Call::new(Entry::Native, 39, [0; 6]),
            Call::new(Entry::X32, 39, [0; 6]),
        ];
        // A kernel without seccomp filters (ENOSYS, EINVAL) or without no_new_privs makes
        // the oracle unavailable; anything else going wrong is a real error.
        let answers = match decide(&allow, &native, &unknown) {
            Ok(a) => a,
            Err(OracleError::Rejected(e)) => {
                return Err(OracleError::Unavailable(format!(
                    "seccomp(SECCOMP_SET_MODE_FILTER) refused the trivial filter: {e}"
                )))
            }
            Err(OracleError::Io(e)) if e.to_string().contains("PR_SET_NO_NEW_PRIVS") => {
                return Err(OracleError::Unavailable(e.to_string()))
            }
            Err(e) => return Err(e),
        };
        for a in &answers {
            if a.ret_index != Some(0) || a.value != RetVal::ALLOW {
                return Err(OracleError::Unavailable(format!(
                    "the trivial filter answered {a:?}"
                )));
            }
        }
        let mut ips = [None; 3];
        ips[entry_slot(Entry::Native)] = Some(answers[0].data.instruction_pointer);
        ips[entry_slot(Entry::X32)] = Some(answers[1].data.instruction_pointer);
        // Without IA32 emulation int $0x80 faults: the child dies and the entry is unusable.
        if let Ok(a) = decide(&allow, &[Call::new(Entry::I386, 20, [0; 6])], &unknown) {
            if a[0].ret_index == Some(0) {
                ips[entry_slot(Entry::I386)] = Some(a[0].data.instruction_pointer);
            }
        }
        Ok(Oracle { ips })
    }

    /// Whether calls through `entry` work on this machine (`int $0x80` needs IA32 emulation).
    pub fn supports(&self, entry: Entry) -> bool {
        self.ips[entry_slot(entry)].is_some()
    }

    /// The instruction pointer the kernel reports for calls through `entry`.
    pub fn ip(&self, entry: Entry) -> Option<u64> {
        self.ips[entry_slot(entry)]
    }

    /// Runs `prog` on the kernel for each call and reports which return it took and what the
    /// original program returns. The program must be one the kernel accepts.
    pub fn run(&self, prog: &Program, calls: &[Call]) -> Result<Vec<Answer>, OracleError> {
        for (index, c) in calls.iter().enumerate() {
            if !self.supports(c.entry) {
                return Err(OracleError::Unavailable(format!(
                    "call {index}: the {} entry does not work on this machine",
                    c.entry.name()
                )));
            }
        }
        decide(prog, calls, &self.ips)
    }

    /// Whether the kernel accepts `prog` exactly as given: `Ok(false)` when `seccomp(2)`
    /// fails with `EINVAL`. The child installs it and ends without making another syscall,
    /// so the filter never runs.
    pub fn accepts(&self, prog: &Program) -> Result<bool, OracleError> {
        match run_probes(&to_sock_filters(prog), 0, &|_| unreachable_probe()) {
            Ok(_) => Ok(true),
            Err(OracleError::Rejected(e)) if e.raw_os_error() == Some(libc::EINVAL) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

fn unreachable_probe() -> RawReturn {
    RawReturn { rax: 0, ip: 0 }
}

fn is_rewritable_ret(i: &Insn) -> bool {
    i.code == BPF_RET | BPF_K || i.code == BPF_RET | BPF_A
}

fn ret_errno(n: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: BPF_RET | BPF_K,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_ERRNO | n,
    }
}

/// The program with the returns of `group` answering `ERRNO(1..)` in order and every other
/// return answering `ERRNO(ELSEWHERE)`.
fn rewrite_for_group(prog: &Program, rets: &[usize], group: &[usize]) -> Vec<libc::sock_filter> {
    let mut f = to_sock_filters(prog);
    for &i in rets {
        f[i] = ret_errno(ELSEWHERE);
    }
    for (n, &i) in group.iter().enumerate() {
        f[i] = ret_errno(n as u32 + 1);
    }
    f
}

/// The program with every `RET A` jumping to an epilogue that returns bits
/// `shift..shift+11` of A as an errno, and every `RET K` answering `ERRNO(ELSEWHERE)`.
fn rewrite_for_extraction(prog: &Program, shift: u32) -> Vec<libc::sock_filter> {
    let mut f = to_sock_filters(prog);
    let end = f.len();
    for (i, insn) in prog.insns.iter().enumerate() {
        if insn.code == BPF_RET | BPF_K {
            f[i] = ret_errno(ELSEWHERE);
        } else if insn.code == BPF_RET | BPF_A {
            f[i] = libc::sock_filter {
                code: BPF_JMP | BPF_JA,
                jt: 0,
                jf: 0,
                k: (end - i - 1) as u32,
            };
        }
    }
    let stmt = |code: u16, k: u32| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    // Always four instructions (RSH 0 is a no-op) so the length check is simple.
    f.push(stmt(BPF_ALU | BPF_RSH | BPF_K, shift));
    f.push(stmt(BPF_ALU | BPF_AND | BPF_K, (1 << CHUNK_BITS) - 1));
    f.push(stmt(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO));
    f.push(stmt(BPF_RET | BPF_A, 0));
    f
}

/// The errno an `ERRNO` decision left in `rax` (`-errno`; 32 bits wide for the i386 entry).
fn errno_of(entry: Entry, raw: RawReturn) -> Option<u32> {
    let v = match entry {
        Entry::I386 => raw.rax as u32 as i32 as i64,
        Entry::Native | Entry::X32 => raw.rax as i64,
    };
    (-(MAX_ERRNO as i64)..=0)
        .contains(&v)
        .then_some((-v) as u32)
}

#[derive(Debug, Clone, Copy)]
enum Resolved {
    Killed,
    Ret { index: usize, ip: u64 },
}

fn decide(
    prog: &Program,
    calls: &[Call],
    ips: &[Option<u64>; 3],
) -> Result<Vec<Answer>, OracleError> {
    for (index, c) in calls.iter().enumerate() {
        if c.entry == Entry::Native && NATIVE_PASSTHROUGH_NRS.contains(&c.nr) {
            return Err(OracleError::Passthrough { index, nr: c.nr });
        }
    }
    let rets: Vec<usize> = (0..prog.len())
        .filter(|&i| is_rewritable_ret(&prog.insns[i]))
        .collect();
    let mut resolved: Vec<Option<Resolved>> = vec![None; calls.len()];
    let mut pending: Vec<usize> = (0..calls.len()).collect();
    // The kernel must see the program even when it has no return we could rewrite (it will
    // then reject it), so there is always at least one group.
    let groups: Vec<&[usize]> = if rets.is_empty() {
        vec![&[]]
    } else {
        rets.chunks(GROUP).collect()
    };
    for group in groups {
        if pending.is_empty() && !calls.is_empty() {
            break;
        }
        let filter = rewrite_for_group(prog, &rets, group);
        let batch: Vec<Call> = pending.iter().map(|&i| calls[i]).collect();
        let results = run_calls(&filter, &batch)?;
        let mut still = Vec::new();
        for (&ci, r) in pending.iter().zip(results) {
            let raw = match r {
                Probe::Killed => {
                    resolved[ci] = Some(Resolved::Killed);
                    continue;
                }
                Probe::Returned(raw) => raw,
            };
            let code = errno_of(calls[ci].entry, raw).ok_or_else(|| OracleError::Inconsistent {
                index: ci,
                what: format!(
                    "rax = {:#x} is not an errno: a system call body ran instead of the filter",
                    raw.rax
                ),
            })?;
            if code == ELSEWHERE {
                still.push(ci);
            } else if (1..=group.len() as u32).contains(&code) {
                let index = group[code as usize - 1];
                resolved[ci] = Some(Resolved::Ret { index, ip: raw.ip });
            } else {
                return Err(OracleError::Inconsistent {
                    index: ci,
                    what: format!("errno {code} was assigned to no return instruction"),
                });
            }
        }
        pending = still;
    }
    if let Some(&ci) = pending.first() {
        return Err(OracleError::Inconsistent {
            index: ci,
            what: "the call reached none of the return instructions".into(),
        });
    }

    let mut answers = Vec::with_capacity(calls.len());
    for (ci, (c, r)) in calls.iter().zip(&resolved).enumerate() {
        let known_ip = ips[entry_slot(c.entry)];
        let r = r.ok_or_else(|| OracleError::Inconsistent {
            index: ci,
            what: "no answer".into(),
        })?;
        let (ret_index, value, ip) = match r {
            Resolved::Killed => {
                let ip = known_ip.ok_or_else(|| OracleError::Inconsistent {
                    index: ci,
                    what: "killed before its entry's instruction pointer was known".into(),
                })?;
                (None, RetVal(0), ip)
            }
            Resolved::Ret { index, ip } => {
                if known_ip.is_some_and(|k| k != ip) {
                    return Err(OracleError::Inconsistent {
                        index: ci,
                        what: format!(
                            "instruction pointer {ip:#x}, but {:#x} when the oracle was created",
                            known_ip.unwrap_or_default()
                        ),
                    });
                }
                // RET A values are filled in below.
                (Some(index), RetVal(prog.insns[index].k), ip)
            }
        };
        answers.push(Answer {
            ret_index,
            value,
            data: c.entry.seccomp_data(c.nr, c.args, ip),
        });
    }
    extract_ret_a(prog, calls, &mut answers)?;
    Ok(answers)
}

/// Reads A out for every answer that ended in a `RET A`, 11 bits per child.
fn extract_ret_a(
    prog: &Program,
    calls: &[Call],
    answers: &mut [Answer],
) -> Result<(), OracleError> {
    let via_a: Vec<usize> = (0..answers.len())
        .filter(|&ci| {
            answers[ci]
                .ret_index
                .is_some_and(|i| prog.insns[i].code == BPF_RET | BPF_A)
        })
        .collect();
    let Some(&first) = via_a.first() else {
        return Ok(());
    };
    if prog.len() + EPILOGUE_LEN > BPF_MAXINSNS {
        return Err(OracleError::NoRoomForEpilogue {
            index: first,
            len: prog.len(),
        });
    }
    let batch: Vec<Call> = via_a.iter().map(|&ci| calls[ci]).collect();
    let mut values = vec![0u32; via_a.len()];
    for shift in (0..32).step_by(CHUNK_BITS as usize) {
        let filter = rewrite_for_extraction(prog, shift);
        let results = run_calls(&filter, &batch)?;
        for ((v, &ci), r) in values.iter_mut().zip(&via_a).zip(results) {
            let inconsistent = |what: String| OracleError::Inconsistent { index: ci, what };
            let raw = match r {
                Probe::Killed => {
                    return Err(inconsistent(
                        "killed while reading A, but not in the first run".into(),
                    ))
                }
                Probe::Returned(raw) => raw,
            };
            if raw.ip != answers[ci].data.instruction_pointer {
                return Err(inconsistent(format!(
                    "instruction pointer changed between runs ({:#x} then {:#x})",
                    answers[ci].data.instruction_pointer, raw.ip
                )));
            }
            match errno_of(calls[ci].entry, raw) {
                Some(bits) if bits < 1 << CHUNK_BITS => *v |= bits << shift,
                other => {
                    return Err(inconsistent(format!(
                        "while reading A the filter answered {other:?} (rax {:#x}): it took a RET K, not a RET A as in the first run",
                        raw.rax
                    )))
                }
            }
        }
    }
    for (&ci, v) in via_a.iter().zip(values) {
        answers[ci].value = RetVal(v);
    }
    Ok(())
}

/// What one probe in a child produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    /// The call returned (the filter answered with an errno).
    Returned(RawReturn),
    /// The child died of `SIGSYS` during the call: the filter returned a kill.
    Killed,
}

fn run_calls(filter: &[libc::sock_filter], calls: &[Call]) -> Result<Vec<Probe>, OracleError> {
    run_probes(filter, calls.len(), &|i| {
        let c = calls[i];
        // SAFETY: this runs in the child under `filter`, which answers every call with an
        // errno or a kill (only the passthrough numbers, refused by `decide`, would run).
        unsafe { issue(c.entry, c.nr, c.args) }
    })
}

/// Header and per-probe records in memory shared with the children.
#[repr(C)]
struct Header {
    /// 0, or which setup step failed in the child.
    failed_step: u32,
    errno: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Record {
    done: u64,
    rax: u64,
    ip: u64,
}

const STEP_NO_NEW_PRIVS: u32 = 1;
const STEP_INSTALL: u32 = 2;

/// The results page of one child: a [`Header`] and one [`Record`] per call.
type Shared = super::child::SharedResults<Header, Record>;

/// Runs `probe(0..n)` in forked children that have installed `filter`, and collects what each
/// returned. After a kill the remaining probes continue in a fresh child. With `n == 0` one
/// child only installs the filter (which checks that the kernel accepts it).
pub(crate) fn run_probes(
    filter: &[libc::sock_filter],
    n: usize,
    probe: &dyn Fn(usize) -> RawReturn,
) -> Result<Vec<Probe>, OracleError> {
    let shared = Shared::new(n)?;
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    loop {
        // SAFETY: zeroing the header between children; no child is running.
        unsafe {
            std::ptr::write_volatile(
                shared.header(),
                Header {
                    failed_step: 0,
                    errno: 0,
                },
            )
        };
        // SAFETY: the child runs only `child_main`, which allocates nothing, takes no locks
        // and never returns, so forking a multi-threaded process is fine.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error().into());
        }
        if pid == 0 {
            // SAFETY: see above.
            unsafe { child_main(filter, &shared, start, n, probe) }
        }
        let status = wait_for(pid)?;
        // SAFETY: the child has exited, so nothing writes the mapping any more.
        let header = unsafe { std::ptr::read_volatile(shared.header()) };
        match header.failed_step {
            0 => {}
            STEP_INSTALL => {
                return Err(OracleError::Rejected(io::Error::from_raw_os_error(
                    header.errno,
                )))
            }
            _ => {
                return Err(OracleError::Io(io::Error::new(
                    io::Error::from_raw_os_error(header.errno).kind(),
                    format!(
                        "prctl(PR_SET_NO_NEW_PRIVS) failed in the child: {}",
                        io::Error::from_raw_os_error(header.errno)
                    ),
                )))
            }
        }
        while start < n {
            // SAFETY: `start < n`; the child has exited.
            let r = unsafe { std::ptr::read_volatile(shared.record(start)) };
            if r.done == 0 {
                break;
            }
            out.push(Probe::Returned(RawReturn {
                rax: r.rax,
                ip: r.ip,
            }));
            start += 1;
        }
        let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
        match signal {
            Some(libc::SIGTRAP) if start == n => return Ok(out),
            Some(libc::SIGSYS) if start < n => {
                out.push(Probe::Killed);
                start += 1;
                if start == n {
                    return Ok(out);
                }
            }
            _ => {
                return Err(OracleError::Child {
                    index: start,
                    what: describe_wait_status(status),
                })
            }
        }
    }
}

/// The child: make it quiet and safe to kill, install the filter, run the probes, stop.
///
/// Nothing here allocates or locks (the parent may have other threads that held locks at the
/// time of `fork`), and after the filter is installed nothing makes a system call except the
/// probes: the filter would answer it with an errno.
unsafe fn child_main(
    filter: &[libc::sock_filter],
    shared: &Shared,
    start: usize,
    n: usize,
    probe: &dyn Fn(usize) -> RawReturn,
) -> ! {
    // A stuck child must not hang the caller.
    libc::alarm(CHILD_TIMEOUT_SECS);
    // SIGSYS (kill), SIGTRAP (done) and faults would dump core into the working directory.
    super::child::reset_signals_in_child();
    libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0);

    let fail = |step: u32| -> ! {
        let errno = *libc::__errno_location();
        std::ptr::write_volatile(
            shared.header(),
            Header {
                failed_step: step,
                errno,
            },
        );
        libc::_exit(1)
    };
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
        fail(STEP_NO_NEW_PRIVS);
    }
    if install_filter_raw(filter, 0).is_err() {
        fail(STEP_INSTALL);
    }
    // From here on every system call is decided by the filter.
    for i in start..n {
        let r = probe(i);
        std::ptr::write_volatile(
            shared.record(i),
            Record {
                done: 1,
                rax: r.rax,
                ip: r.ip,
            },
        );
    }
    // Ending needs no system call: the breakpoint trap kills us with SIGTRAP.
    loop {
        core::arch::asm!("int3");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;

    fn oracle() -> Oracle {
        Oracle::new().expect("seccomp must be usable on the development machine")
    }

    #[test]
    fn rewriting_keeps_everything_but_the_returns() {
        let prog = Program::new(vec![
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
            Insn::stmt(BPF_RET | BPF_A, 0),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        let rets = [2, 3];
        let f = rewrite_for_group(&prog, &rets, &rets);
        assert_eq!((f[0].code, f[0].k), (0x20, 0));
        assert_eq!((f[1].code, f[1].jt, f[1].jf, f[1].k), (0x15, 0, 1, 1));
        assert_eq!((f[2].code, f[2].k), (0x06, 0x0005_0001));
        assert_eq!((f[3].code, f[3].k), (0x06, 0x0005_0002));
        let e = rewrite_for_extraction(&prog, 11);
        assert_eq!(e.len(), 8);
        // RET A at 2 jumps over index 3 to the epilogue at 4.
        assert_eq!((e[2].code, e[2].k), (0x05, 1));
        assert_eq!((e[3].code, e[3].k), (0x06, 0x0005_0fff));
        assert_eq!((e[4].code, e[4].k), (0x74, 11));
        assert_eq!((e[5].code, e[5].k), (0x54, 0x7ff));
        assert_eq!((e[6].code, e[6].k), (0x44, 0x0005_0000));
        assert_eq!(e[7].code, 0x16);
    }

    #[test]
    fn every_word_the_kernel_sees_matches_the_entry_model() {
        // One `LD word; RET A` program per word of seccomp_data reads back exactly what the
        // kernel put there.
        let o = oracle();
        let args = [
            0x1111_2222_3333_4444,
            0xffff_ffff_ffff_fffe,
            0x8000_0000_0000_0001,
            7,
            0x0000_0001_0000_0000,
            0xdead_beef_cafe_f00d,
        ];
        let calls: Vec<Call> = Entry::ALL
            .iter()
            .filter(|e| o.supports(**e))
            .flat_map(|&e| [Call::new(e, -1, args), Call::new(e, 0x1234, args)])
            .collect();
        let mut seen = vec![[0u32; 16]; calls.len()];
        for word in 0..16u32 {
            let prog = Program::new(vec![Insn::ld_abs(4 * word), Insn::stmt(BPF_RET | BPF_A, 0)]);
            for (ci, a) in o.run(&prog, &calls).unwrap().iter().enumerate() {
                assert_eq!(a.ret_index, Some(1));
                seen[ci][word as usize] = a.value.0;
            }
        }
        for (c, words) in calls.iter().zip(&seen) {
            let ip = o.ip(c.entry).unwrap();
            assert_eq!(
                *words,
                c.entry.seccomp_data(c.nr, c.args, ip).words(),
                "{c:?}"
            );
            // Independent of the model: arch tokens from the uapi audit header.
            let token = if c.entry == Entry::I386 {
                0x4000_0003
            } else {
                0xc000_003e
            };
            assert_eq!(words[1], token);
            assert_eq!(Arch::X86_64.token(), 0xc000_003e);
        }
    }

    #[test]
    fn i386_args_keep_upper_register_halves() {
        // What a 64-bit process that leaves bits in the upper halves of rbx..rbp gets: the
        // kernel copies the full registers into seccomp_data.args (syscall_get_arguments
        // reads regs->bx etc. as unsigned long), so the filter sees non-zero hi halves.
        let o = oracle();
        if !o.supports(Entry::I386) {
            eprintln!("SKIPPED: int $0x80 does not work here");
            return;
        }
        let regs = [
            0x0000_0001_0000_0005,
            0x0000_0002_0000_0006,
            0x0000_0003_0000_0007,
            0x0000_0004_0000_0008,
            0x0000_0005_0000_0009,
            0x0000_0006_0000_000a,
        ];
        for (arg, &reg) in regs.iter().enumerate() {
            for (high, expect) in [(false, reg as u32), (true, (reg >> 32) as u32)] {
                let off = 16 + 8 * arg as u32 + if high { 4 } else { 0 };
                // SAFETY: runs in the child, where the filter answers the call.
                let r = run_probes(&errno_of_word(off), 1, &|_| unsafe {
                    super::super::entry::issue_int80_raw(0xffff_ffff_0000_0014, regs)
                })
                .unwrap();
                let Probe::Returned(raw) = r[0] else {
                    panic!("killed: {r:?}")
                };
                let got = errno_of(Entry::I386, raw).unwrap();
                assert_eq!(
                    got,
                    expect,
                    "args[{arg}].{}",
                    if high { "hi" } else { "lo" }
                );
            }
        }
    }

    /// `LD word; AND 0x7ff; OR ERRNO; RET A`: the low 11 bits of a word as the errno.
    fn errno_of_word(offset: u32) -> Vec<libc::sock_filter> {
        to_sock_filters(&Program::new(vec![
            Insn::ld_abs(offset),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 0x7ff),
            Insn::stmt(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ]))
    }

    #[test]
    fn nr_is_the_low_half_of_rax() {
        let o = oracle();
        // nr 0x123 with garbage in the upper half of rax: the filter sees 0x123.
        let rax = 0xdead_beef_0000_0123;
        // SAFETY: runs in the child, where the filter answers the call.
        let native = run_probes(&errno_of_word(0), 1, &|_| unsafe {
            super::super::entry::issue_syscall_raw(rax, [0; 6])
        })
        .unwrap();
        assert!(
            matches!(native[0], Probe::Returned(raw) if errno_of(Entry::Native, raw) == Some(0x123)),
            "{native:?}"
        );
        if o.supports(Entry::I386) {
            // SAFETY: as above.
            let i386 = run_probes(&errno_of_word(0), 1, &|_| unsafe {
                super::super::entry::issue_int80_raw(rax, [0; 6])
            })
            .unwrap();
            assert!(
                matches!(i386[0], Probe::Returned(raw) if errno_of(Entry::I386, raw) == Some(0x123)),
                "{i386:?}"
            );
        }
    }

    #[test]
    fn uretprobe_and_uprobe_bypass_the_filter_natively_only() {
        // A filter answering ERRNO(7) to everything. A filtered call returns -7; a call the
        // kernel passes through runs the real syscall, which outside a uprobe trampoline
        // kills the caller with SIGILL (or returns ENOSYS on kernels without it).
        let errno7 = vec![ret_errno(7)];
        let ask = |entry: Entry, nr: i32| -> Result<Vec<Probe>, OracleError> {
            // SAFETY: runs in the child; a passthrough call that really runs is what the test
            // looks for, and at worst kills that child.
            run_probes(&errno7, 1, &|_| unsafe { issue(entry, nr, [0; 6]) })
        };
        let filtered = |r: Result<Vec<Probe>, OracleError>, entry| match r {
            Ok(p) => matches!(p[0], Probe::Returned(raw) if errno_of(entry, raw) == Some(7)),
            Err(_) => false,
        };
        assert!(filtered(ask(Entry::Native, 334), Entry::Native));
        assert!(filtered(ask(Entry::Native, 337), Entry::Native));
        let (mut release, mut sysname) = (String::new(), String::new());
        if let Ok(u) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
            release = u.trim().to_string();
        }
        if let Ok(s) = std::fs::read_to_string("/proc/sys/kernel/ostype") {
            sysname = s.trim().to_string();
        }
        // Observed on 6.18; older kernels may still filter them, which is harmless.
        let version: Vec<u32> = release
            .split(|c: char| !c.is_ascii_digit())
            .take(2)
            .filter_map(|p| p.parse().ok())
            .collect();
        let known_to_pass = version.as_slice() >= [6, 18].as_slice();
        for nr in NATIVE_PASSTHROUGH_NRS {
            let native = ask(Entry::Native, nr);
            eprintln!("{sysname} {release}: native {nr} -> {native:?}");
            assert!(
                !known_to_pass || !filtered(native, Entry::Native),
                "native {nr} was filtered; NATIVE_PASSTHROUGH_NRS may be stale for {release}"
            );
            assert!(filtered(ask(Entry::X32, nr), Entry::X32), "x32 {nr}");
            if oracle().supports(Entry::I386) {
                assert!(filtered(ask(Entry::I386, nr), Entry::I386), "i386 {nr}");
            }
        }
    }
}
