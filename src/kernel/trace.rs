//! Tracing a command's system calls with ptrace, as `secopt record` does: every syscall entry
//! of the command, its threads and all its descendants (like `strace -f`), counted per
//! `(seccomp_data.arch, seccomp_data.nr)` with a bounded sample of argument values.
//!
//! # How
//!
//! The command is forked and waits on a pipe while the tracer attaches (`PTRACE_SEIZE`, then
//! `PTRACE_INTERRUPT` to switch it to syscall stops), then `execve`s. Syscall stops come from
//! `PTRACE_SYSCALL` with `PTRACE_O_TRACESYSGOOD`; at each one `PTRACE_GET_SYSCALL_INFO`
//! (Linux 5.3+) says whether it is an entry and gives the arch token, number and six
//! arguments exactly as a seccomp filter sees them: an `int $0x80` call from a 64-bit program
//! carries the i386 token, an x32 call bit 30 in its number.
//! Calls made before the command's own `execve` (the fork's plumbing) are not counted; the
//! `execve` that starts the command is, once, as a filter installed before it would see it.
//!
//! Signals reach the tracees as they would without the tracer: a signal-delivery stop
//! re-injects the signal, and a group-stop (`SIGSTOP`, `SIGTSTP`, ...) is left stopped with
//! `PTRACE_LISTEN` until a `SIGCONT` arrives, which `PTRACE_SEIZE` (rather than
//! `PTRACE_TRACEME`) makes possible. `PTRACE_O_EXITKILL` kills every tracee if the tracer
//! dies. Tracing ends when no tracee is left (`waitpid` says `ECHILD`), so a command that
//! leaves a daemon behind is traced until the daemon exits, as with `strace -f` — unless
//! [`CommandOptions::until_command_exits`] asks to stop when the command's own process ends
//! and detach from the rest.
//!
//! # Under a filter, call by call
//!
//! With [`CommandOptions::filters`] the command's process installs seccomp filters on itself
//! (after `no_new_privs`) once the tracer is attached and just before its `execve`, as
//! `secopt exec` does without a tracer; a failure there is reported as
//! [`TraceError::FilterRefused`]. [`TraceOptions::on_syscall`] sees every entry and exit
//! counted. An entry stop comes before seccomp runs (`syscall_trace_enter` reports it first),
//! so the entry carries what the filters are about to judge, and the exit what the call
//! returned after they did (`secopt exec --denials`).
//!
//! # Attaching to a running process
//!
//! [`trace_process`] seizes every thread of a running process instead (listing
//! `/proc/PID/task` until no new thread shows up; `PTRACE_O_TRACECLONE` catches the ones
//! started after that), without `PTRACE_O_EXITKILL`, so the process outlives the tracer. It
//! records until its time is up or `SIGINT`/`SIGTERM`/`SIGHUP` reaches the tracer (an interval
//! timer interrupts `waitpid` to look), then stops every tracee with `PTRACE_INTERRUPT` and
//! detaches each at whatever stop it reports first, passing on a signal it was about to get:
//! the process runs on as before.
//!
//! # Costs
//!
//! Every syscall stops the tracee twice (entry and exit) and costs a few context switches;
//! the tracer does one hash-map update per call and keeps argument samples only for the
//! argument bits the caller asks for ([`TraceOptions::arg_masks`]).

use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

// Requests, options and events of include/uapi/linux/ptrace.h (the libc crate types them
// differently per C library, so they are spelled out here).
const PTRACE_SYSCALL: u32 = 24;
const PTRACE_DETACH: u32 = 17;
const PTRACE_GETEVENTMSG: u32 = 0x4201;
const PTRACE_SEIZE: u32 = 0x4206;
const PTRACE_INTERRUPT: u32 = 0x4207;
const PTRACE_LISTEN: u32 = 0x4208;
const PTRACE_GET_SYSCALL_INFO: u32 = 0x420e;

const PTRACE_O_TRACESYSGOOD: u64 = 0x1;
const PTRACE_O_TRACEFORK: u64 = 0x2;
const PTRACE_O_TRACEVFORK: u64 = 0x4;
const PTRACE_O_TRACECLONE: u64 = 0x8;
const PTRACE_O_TRACEEXEC: u64 = 0x10;
const PTRACE_O_EXITKILL: u64 = 0x10_0000;

const PTRACE_EVENT_FORK: i32 = 1;
const PTRACE_EVENT_VFORK: i32 = 2;
const PTRACE_EVENT_CLONE: i32 = 3;
const PTRACE_EVENT_EXEC: i32 = 4;
const PTRACE_EVENT_STOP: i32 = 128;

const PTRACE_SYSCALL_INFO_ENTRY: u8 = 1;
const PTRACE_SYSCALL_INFO_EXIT: u8 = 2;

/// `struct ptrace_syscall_info` (include/uapi/linux/ptrace.h), large enough for its biggest
/// member (the seccomp one); the kernel copies at most this many bytes.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SyscallInfo {
    op: u8,
    pad: [u8; 3],
    arch: u32,
    instruction_pointer: u64,
    stack_pointer: u64,
    /// `entry.nr` (the exit member's `rval` shares these bytes).
    nr: u64,
    /// `entry.args` (the exit member's `is_error` is the byte at offset 32, the first of
    /// `args[0]`).
    args: [u64; 6],
    ret_data: u32,
    pad2: u32,
}

/// What the tracer kept for one `(arch token, nr)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyscallCounts {
    /// Calls made.
    pub count: u64,
    /// Per argument, the bits kept in `samples` (0: that argument is not sampled).
    pub masks: [u64; 6],
    /// Distinct argument tuples (each argument ANDed with its mask) and how many calls had
    /// each; empty when no mask bit is set.
    pub samples: HashMap<[u64; 6], u64>,
    /// Calls whose tuple was not kept because [`TraceOptions::max_samples`] distinct tuples
    /// already were.
    pub unsampled: u64,
}

/// How the traced command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// `exit(code)`.
    Code(i32),
    /// Killed by a signal.
    Signal { signal: i32, core_dumped: bool },
}

impl Exit {
    /// The status a shell would report: the code, or 128 + the signal number.
    pub fn shell_status(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal { signal, .. } => 128 + signal,
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exited with status {c}"),
            Exit::Signal {
                signal,
                core_dumped,
            } => write!(
                f,
                "was killed by signal {signal}{}",
                if *core_dumped { " (core dumped)" } else { "" }
            ),
        }
    }
}

/// How a trace ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The command (the first process), or the process attached to, ended.
    Exited(Exit),
    /// Recording stopped ([`trace_process`]: its time was up, or the tracer was asked to
    /// stop) and the tracer detached: the process runs on.
    Detached,
}

impl End {
    /// The status a shell would report for the command; 0 after detaching.
    pub fn shell_status(self) -> i32 {
        match self {
            End::Exited(e) => e.shell_status(),
            End::Detached => 0,
        }
    }
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Exited(e) => e.fmt(f),
            End::Detached => f.write_str("was still running when secopt detached"),
        }
    }
}

/// Everything a trace found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Per `(seccomp_data.arch, seccomp_data.nr)`.
    pub calls: HashMap<(u32, u32), SyscallCounts>,
    /// How the trace ended.
    pub end: End,
    /// Processes and threads traced, the command included.
    pub tasks: u64,
    /// Tasks still running when tracing stopped and the tracer detached from them
    /// ([`CommandOptions::until_command_exits`]; [`trace_process`] counts none).
    pub left_running: usize,
    /// Processes and threads the tracees started with `CLONE_UNTRACED`, which no tracer
    /// follows: their calls are not in [`Trace::calls`] (nor in `strace -f`'s counts).
    pub untraced_children: u64,
}

impl Trace {
    /// Total number of calls.
    pub fn total_calls(&self) -> u64 {
        self.calls.values().map(|c| c.count).sum()
    }
}

/// What to record, for [`trace_command`] and [`trace_process`] alike.
pub struct TraceOptions<'a> {
    /// Most distinct argument tuples kept per `(arch, nr)`; later new tuples are only counted
    /// in [`SyscallCounts::unsampled`].
    pub max_samples: usize,
    /// Called once per `(arch token, nr)`, at its first call: the bits of each argument to
    /// sample. All zeros (the common case) keeps no samples and costs nothing per call.
    pub arg_masks: &'a mut dyn FnMut(u32, u32) -> [u64; 6],
    /// Called at every system-call stop counted (entries and their exits), in the order the
    /// tracees reach them; for a caller that looks at each call, as `secopt exec --denials`
    /// does.
    pub on_syscall: Option<&'a mut dyn FnMut(SyscallStop)>,
}

/// How [`trace_command`] starts the command and when it stops tracing it. The default is
/// `strace -f`'s: no filter, the caller's signal handling left alone, traced until every
/// process has ended, and no check before the `execve`.
#[derive(Default, Clone, Copy)]
pub struct CommandOptions<'a> {
    /// While tracing, ignore `SIGINT` and `SIGQUIT` (a terminal sends them to the command as
    /// well, which then ends and lets the trace finish) and pass `SIGTERM` and `SIGHUP` on to
    /// the command. For command-line tools; a library caller may have its own handlers.
    pub forward_signals: bool,
    /// Filters the command's process installs on itself (after `no_new_privs`) once the
    /// tracer is attached, just before its `execve`, which is thus the first call they
    /// decide, as when `secopt exec` installs them.
    pub filters: Option<&'a ChildFilters>,
    /// Stop tracing when the command's own process ends, detaching from the processes it
    /// leaves running (a daemon, a background job), as a shell returns when the command ends.
    /// Otherwise (like `strace -f`) tracing goes on until every process has ended.
    pub until_command_exits: bool,
    /// Asked before anything runs, with the three arguments the command's `execve` will pass
    /// (path, argv and envp pointers, valid in the child as in the caller): why that `execve`
    /// must not be made, if it must not (a filter that refuses it). The answer is the message
    /// of [`TraceError::CannotExecute`].
    pub check_exec: Option<&'a dyn Fn([u64; 3]) -> Option<String>>,
}

extern "C" {
    /// The C library's environment, which `execv` passes on.
    static environ: *const *const libc::c_char;
}

/// The `envp` pointer `execv` passes: this process's `environ`.
pub fn environ_pointer() -> u64 {
    // SAFETY: reads the pointer's value only; the C library initialises it before main.
    unsafe { environ as u64 }
}

/// Filters for [`CommandOptions::filters`], in the form the child installs them without
/// allocating (it runs between `fork` and `execve`).
#[derive(Debug, Clone)]
pub struct ChildFilters {
    /// Installed in this order (oldest first), each with one `seccomp(2)` call.
    pub filters: Vec<Vec<libc::sock_filter>>,
    /// `SECCOMP_FILTER_FLAG_*` bits for every one of them.
    pub flags: u32,
}

/// One system-call stop of a tracee, for [`TraceOptions::on_syscall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyscallStop {
    /// A call is about to be made: what a seccomp filter sees of it (the tracer stops it
    /// before seccomp runs).
    Entry {
        tid: libc::pid_t,
        /// `seccomp_data.arch`.
        arch: u32,
        /// `seccomp_data.nr`.
        nr: u32,
        instruction_pointer: u64,
        args: [u64; 6],
    },
    /// The call of the tracee's last `Entry` returned (a call a filter kills has none).
    Exit {
        tid: libc::pid_t,
        /// The return value: `-errno` when `is_error`.
        rval: i64,
        is_error: bool,
    },
}

/// Why a command could not be traced.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("no command given")]
    NoCommand,
    /// No such program (`in_path`: it was looked up on `PATH`).
    #[error("`{program}`: {}", if *.in_path { "command not found in PATH" } else { "No such file or directory" })]
    NotFound { program: String, in_path: bool },
    /// `missing`: `execve` failed with `ENOENT` although the program exists (its `#!`
    /// interpreter or ELF loader is missing), which shells report with status 127.
    #[error("`{program}`: {message}")]
    CannotExecute {
        program: String,
        message: String,
        missing: bool,
    },
    #[error("{0}")]
    Unsupported(String),
    #[error("{what}: {error}")]
    System { what: String, error: io::Error },
    /// The command's process could not install [`CommandOptions::filters`]`[index]`
    /// (`index`: `None` for `prctl(PR_SET_NO_NEW_PRIVS)`).
    #[error("{}: {error}", match .index { Some(i) => format!("seccomp(2) refused filter {}", i + 1), None => "prctl(PR_SET_NO_NEW_PRIVS)".to_string() })]
    FilterRefused {
        index: Option<usize>,
        error: io::Error,
    },
}

fn system(what: impl Into<String>) -> impl FnOnce(io::Error) -> TraceError {
    let what = what.into();
    move |error| TraceError::System { what, error }
}

/// `execve`'s error for `program`, explained where the kernel's text misleads: `ENOENT` for a
/// file that exists means its `#!` interpreter or its ELF loader is missing.
pub fn exec_error_message(e: &io::Error, program: &Path) -> String {
    if e.raw_os_error() == Some(libc::ENOENT) && program.exists() {
        format!(
            "{e}: the file exists, so its interpreter (the `#!` line) or its ELF loader is missing"
        )
    } else {
        e.to_string()
    }
}

/// glibc's `execvp` search path when `PATH` is unset.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Finds `program` as `execvp(3)` would: a name with a `/` is taken as is, anything else is
/// looked up on `PATH`. Checked before forking so that "not found" is a clear error rather
/// than a failed `execve` inside the traced child.
pub fn find_program(program: &OsStr) -> Result<PathBuf, TraceError> {
    let shown = program.to_string_lossy().into_owned();
    if program.is_empty() {
        return Err(TraceError::NotFound {
            program: shown,
            in_path: false,
        });
    }
    let cannot = |e: io::Error| TraceError::CannotExecute {
        program: shown.clone(),
        message: e.to_string(),
        missing: false,
    };
    if program.as_bytes().contains(&b'/') {
        let path = PathBuf::from(program);
        return match executable(&path) {
            Ok(()) => Ok(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(TraceError::NotFound {
                program: shown.clone(),
                in_path: false,
            }),
            Err(e) => Err(cannot(e)),
        };
    }
    let search = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let mut refused = None;
    for dir in std::env::split_paths(&search) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                refused.get_or_insert(e);
            }
        }
    }
    Err(match refused {
        Some(e) => cannot(e),
        None => TraceError::NotFound {
            program: shown,
            in_path: true,
        },
    })
}

/// Whether `path` is a file this process may execute.
fn executable(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other("the path contains a NUL byte"))?;
    // SAFETY: `c` is a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // root passes `access(X_OK)` on a file with no execute bit for anyone; execve does not.
    if std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 == 0 {
        return Err(io::Error::from_raw_os_error(libc::EACCES));
    }
    Ok(())
}

/// `ptrace(request, pid, addr, data)`.
fn ptrace(request: u32, pid: libc::pid_t, addr: usize, data: usize) -> io::Result<libc::c_long> {
    // SAFETY: every request used here either takes no pointer or gets one to a live,
    // correctly sized buffer from its caller.
    let r = unsafe {
        libc::ptrace(
            request as _,
            pid,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The command's pid while a trace runs, for the signal forwarder (0: none).
static TRACED_PID: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_signal(signal: libc::c_int) {
    let pid = TRACED_PID.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Signal dispositions changed for the duration of a trace, restored on drop.
struct SignalGuard {
    saved: Vec<(libc::c_int, libc::sigaction)>,
}

impl SignalGuard {
    fn install(pid: libc::pid_t) -> SignalGuard {
        TRACED_PID.store(pid, Ordering::Relaxed);
        let forward: extern "C" fn(libc::c_int) = forward_signal;
        // The handler only calls kill(2).
        let saved = set_handlers(&[
            (libc::SIGINT, libc::SIG_IGN),
            (libc::SIGQUIT, libc::SIG_IGN),
            (libc::SIGTERM, forward as libc::sighandler_t),
            (libc::SIGHUP, forward as libc::sighandler_t),
            // The tracer is the command's parent: a command that signals its parent when
            // ready (Xorg's SIGUSR1) would otherwise end the tracer, and itself with it.
            (libc::SIGUSR1, libc::SIG_IGN),
            (libc::SIGUSR2, libc::SIG_IGN),
        ]);
        SignalGuard { saved }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        restore_handlers(&self.saved);
        TRACED_PID.store(0, Ordering::Relaxed);
    }
}

/// Installs each `(signal, handler)` (no flags: a blocking call the signal interrupts fails
/// with `EINTR` rather than restarting) and returns the dispositions it replaced. The handlers
/// must be async-signal-safe.
fn set_handlers(
    handlers: &[(libc::c_int, libc::sighandler_t)],
) -> Vec<(libc::c_int, libc::sigaction)> {
    let mut saved = Vec::new();
    for &(signal, handler) in handlers {
        // SAFETY: zeroed sigaction structs are valid; the caller vouches for the handlers.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler;
            libc::sigemptyset(&mut new.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &new, &mut old) == 0 {
                saved.push((signal, old));
            }
        }
    }
    saved
}

/// Puts back the dispositions [`set_handlers`] returned.
fn restore_handlers(saved: &[(libc::c_int, libc::sigaction)]) {
    for (signal, old) in saved {
        // SAFETY: restores a disposition sigaction(2) returned earlier.
        unsafe {
            libc::sigaction(*signal, old, std::ptr::null_mut());
        }
    }
}

/// A pipe's two ends, closed on drop.
struct Pipe {
    read: libc::c_int,
    write: libc::c_int,
}

impl Pipe {
    fn new() -> io::Result<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Pipe {
            read: fds[0],
            write: fds[1],
        })
    }

    fn close_read(&mut self) {
        close_fd(&mut self.read);
    }

    fn close_write(&mut self) {
        close_fd(&mut self.write);
    }
}

fn close_fd(fd: &mut libc::c_int) {
    if *fd >= 0 {
        // SAFETY: closes a descriptor this process opened and still owns.
        unsafe {
            libc::close(*fd);
        }
        *fd = -1;
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        self.close_read();
        self.close_write();
    }
}

/// What the child reports on its `failed` pipe: the step that failed and its errno.
/// `STEP_EXEC` for `execve`, `STEP_NO_NEW_PRIVS`, or the index of the filter refused.
const STEP_EXEC: i32 = -1;
const STEP_NO_NEW_PRIVS: i32 = -2;

/// The child side of the fork: wait for the tracer, install `filters` (if any), then exec.
/// Runs between `fork` and `execve` of a possibly multi-threaded parent, so it only makes
/// async-signal-safe calls and allocates nothing.
fn child_after_fork(
    go: &Pipe,
    failed: &Pipe,
    path: &CString,
    argv: &[*const libc::c_char],
    filters: Option<&ChildFilters>,
) -> ! {
    let report = |step: i32, errno: i32| -> ! {
        let message = [step.to_ne_bytes(), errno.to_ne_bytes()];
        // SAFETY: writes 8 bytes from a live buffer, then ends this (child) process.
        unsafe {
            libc::write(failed.write, message.as_ptr().cast(), 8);
            libc::_exit(127)
        }
    };
    // SAFETY: plain system calls on descriptors and buffers owned by this (child) process.
    unsafe {
        libc::close(go.write);
        libc::close(failed.read);
        // The command gets the default SIGPIPE whatever the tracer's disposition is.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut byte = 0u8;
        loop {
            let r = libc::read(go.read, (&mut byte as *mut u8).cast(), 1);
            if r == 1 {
                break;
            }
            if r == 0 || *libc::__errno_location() != libc::EINTR {
                // The tracer went away without attaching: do not run untraced.
                libc::_exit(127);
            }
        }
        libc::close(go.read);
    }
    if let Some(filters) = filters {
        if let Err(e) = super::seccomp::set_no_new_privs() {
            report(STEP_NO_NEW_PRIVS, e.raw_os_error().unwrap_or(0));
        }
        for (i, filter) in filters.filters.iter().enumerate() {
            if let Err(e) = super::seccomp::install_filter_raw(filter, filters.flags) {
                report(i as i32, e.raw_os_error().unwrap_or(0));
            }
        }
    }
    // SAFETY: `path` and the NUL-terminated `argv` outlive the call.
    unsafe { libc::execv(path.as_ptr(), argv.as_ptr()) };
    report(
        STEP_EXEC,
        io::Error::last_os_error().raw_os_error().unwrap_or(0),
    )
}

/// The wait status's stop signal and ptrace event (`status >> 16`).
fn stop_parts(status: libc::c_int) -> (i32, i32) {
    (libc::WSTOPSIG(status), (status >> 16) & 0xff)
}

fn is_stop_signal(signal: i32) -> bool {
    matches!(
        signal,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// Counting state of a running trace.
struct Recorder<'o, 'a> {
    options: &'o mut TraceOptions<'a>,
    calls: HashMap<(u32, u32), SyscallCounts>,
    untraced: UntracedChildren,
}

impl<'o, 'a> Recorder<'o, 'a> {
    fn new(options: &'o mut TraceOptions<'a>) -> Self {
        Recorder {
            options,
            calls: HashMap::new(),
            untraced: UntracedChildren::default(),
        }
    }

    fn observe(&mut self, stop: SyscallStop) {
        self.untraced.observe(stop, read_tracee_u64);
        if let Some(on_syscall) = self.options.on_syscall.as_mut() {
            on_syscall(stop);
        }
    }

    fn record(&mut self, token: u32, nr: u32, args: &[u64; 6]) {
        let masks = &mut self.options.arg_masks;
        let counts = self
            .calls
            .entry((token, nr))
            .or_insert_with(|| SyscallCounts {
                masks: masks(token, nr),
                ..SyscallCounts::default()
            });
        counts.count += 1;
        if counts.masks == [0; 6] {
            return;
        }
        let mut tuple = [0u64; 6];
        for (t, (a, m)) in tuple.iter_mut().zip(args.iter().zip(&counts.masks)) {
            *t = a & m;
        }
        let cap = self.options.max_samples;
        let len = counts.samples.len();
        match counts.samples.get_mut(&tuple) {
            Some(n) => *n += 1,
            None if len < cap => {
                counts.samples.insert(tuple, 1);
            }
            None => counts.unsampled += 1,
        }
    }
}

/// `CLONE_UNTRACED` (include/uapi/linux/sched.h): no tracer may follow the new task.
const CLONE_UNTRACED: u64 = 0x0080_0000;

/// Counts the tasks the tracees start with `CLONE_UNTRACED`, which no tracer follows (their
/// calls are missing from a trace, which must say so): a `clone` or `clone3` entry asking for
/// it, then its exit in the parent returning the new task's id.
#[derive(Debug, Default)]
struct UntracedChildren {
    /// Threads whose current call is such a `clone`.
    starting: HashSet<libc::pid_t>,
    count: u64,
}

impl UntracedChildren {
    /// `read_memory` reads a word of a stopped tracee (`clone3`'s flags are the first word of
    /// the `struct clone_args` its first argument points at, on every ABI).
    fn observe(&mut self, stop: SyscallStop, read_memory: fn(libc::pid_t, u64) -> Option<u64>) {
        match stop {
            SyscallStop::Entry {
                tid,
                arch,
                nr,
                args,
                ..
            } => {
                self.starting.remove(&tid);
                let asks = match crate::arch::Arch::call_of_data(arch, nr) {
                    // `clone`'s flags are its first argument, except on s390x (the second).
                    (Some(abi), Some("clone")) => {
                        let flags = if abi == crate::arch::Arch::S390x {
                            args[1]
                        } else {
                            args[0]
                        };
                        flags & CLONE_UNTRACED != 0
                    }
                    (_, Some("clone3")) => {
                        read_memory(tid, args[0]).is_some_and(|flags| flags & CLONE_UNTRACED != 0)
                    }
                    _ => false,
                };
                if asks {
                    self.starting.insert(tid);
                }
            }
            // The parent's return: the new task's id.
            SyscallStop::Exit { tid, rval, .. } => {
                if self.starting.remove(&tid) && rval > 0 {
                    self.count += 1;
                }
            }
        }
    }
}

/// Runs `command` (program and arguments) under the tracer until it and every process it
/// started have ended (or, with [`CommandOptions::until_command_exits`], until its own process
/// has), and returns what they called.
///
/// Tracees that are not this process's children (grandchildren, threads) can only be waited
/// for with `waitpid(-1, __WALL)`, which also reaps any other child of the calling process: do
/// not run other children concurrently (the `secopt` binary has none).
pub fn trace_command(
    command: &[OsString],
    options: &mut TraceOptions<'_>,
    launch: CommandOptions<'_>,
) -> Result<Trace, TraceError> {
    let program = command.first().ok_or(TraceError::NoCommand)?;
    let path = find_program(program)?;
    let shown = program.to_string_lossy().into_owned();
    let nul = |_| TraceError::CannotExecute {
        program: shown.clone(),
        message: "an argument contains a NUL byte".into(),
        missing: false,
    };
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(nul)?;
    let c_args: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(nul)?;
    let mut argv: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());

    if let Some(check) = launch.check_exec {
        let pointers = [
            c_path.as_ptr() as u64,
            argv.as_ptr() as u64,
            environ_pointer(),
        ];
        if let Some(message) = check(pointers) {
            return Err(TraceError::CannotExecute {
                program: shown,
                message,
                missing: false,
            });
        }
    }
    let mut go = Pipe::new().map_err(system("pipe"))?;
    let mut failed = Pipe::new().map_err(system("pipe"))?;
    // SAFETY: the child only runs `child_after_fork`, which is async-signal-safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(system("fork")(io::Error::last_os_error()));
    }
    if pid == 0 {
        child_after_fork(&go, &failed, &c_path, &argv, launch.filters);
    }
    go.close_read();
    failed.close_write();

    let seize_options = PTRACE_O_TRACESYSGOOD
        | PTRACE_O_TRACEFORK
        | PTRACE_O_TRACEVFORK
        | PTRACE_O_TRACECLONE
        | PTRACE_O_TRACEEXEC
        | PTRACE_O_EXITKILL;
    if let Err(e) = ptrace(PTRACE_SEIZE, pid, 0, seize_options as usize) {
        // A tracer of ours (`strace -f secopt …`, a debugger following forks) took the child
        // first: a process has one tracer only.
        let what = match tracer_of(pid) {
            Some(tracer) if e.raw_os_error() == Some(libc::EPERM) => format!(
                "cannot trace the command: process {tracer} ({}) already traces it, as it \
                 traces secopt (strace -f, a debugger following forks); a process has one \
                 tracer only, so run secopt outside that tracer",
                command_name(tracer).unwrap_or_else(|| "?".into())
            ),
            _ => "cannot trace the command: ptrace(PTRACE_SEIZE) failed (is ptrace forbidden \
                  here, by a seccomp filter, kernel.yama.ptrace_scope or a container runtime?)"
                .into(),
        };
        // SAFETY: our own child, which is blocked before exec.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        let _ = super::child::wait_for(pid);
        return Err(TraceError::System { what, error: e });
    }
    // Seizing does not stop the child: interrupt it (it is blocked reading the pipe) and
    // resume it in syscall-stop mode, so that its execve is seen too.
    if let Err(e) = start_syscall_stops(pid) {
        kill_all(&HashSet::from([pid]));
        return Err(system("cannot trace the command")(e));
    }
    let guard = launch.forward_signals.then(|| SignalGuard::install(pid));
    // SAFETY: writes one byte from a live buffer to our pipe.
    let sent = unsafe { libc::write(go.write, [1u8].as_ptr().cast(), 1) };
    go.close_write();
    if sent != 1 {
        let e = io::Error::last_os_error();
        kill_all(&HashSet::from([pid]));
        return Err(system("cannot start the command")(e));
    }

    let mut recorder = Recorder::new(options);
    let mut live = HashSet::from([pid]);
    let outcome = run_loop(
        pid,
        &mut recorder,
        &mut live,
        false,
        &|| false,
        launch.until_command_exits,
    );
    drop(guard);
    let left_running = live.len();
    let (exit, tasks, stopped) = match outcome {
        Ok(done) => done,
        Err(e) => {
            kill_all(&live);
            return Err(e);
        }
    };

    let mut message = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer; every writer has exited by now.
    let got = unsafe { libc::read(failed.read, message.as_mut_ptr().cast(), 8) };
    if got == 8 {
        let word = |i: usize| i32::from_ne_bytes(message[i..i + 4].try_into().expect("4 bytes"));
        let error = io::Error::from_raw_os_error(word(4));
        return Err(match word(0) {
            STEP_EXEC => TraceError::CannotExecute {
                message: exec_error_message(&error, Path::new(&shown)),
                program: shown,
                missing: error.raw_os_error() == Some(libc::ENOENT),
            },
            STEP_NO_NEW_PRIVS => TraceError::FilterRefused { index: None, error },
            i => TraceError::FilterRefused {
                index: Some(i as usize),
                error,
            },
        });
    }
    let exit = exit.ok_or_else(|| {
        TraceError::Unsupported("the command's exit status was never reported".into())
    })?;
    if stopped {
        // The command ended; what it left running runs on, untraced.
        detach_all(&mut live);
    }
    Ok(Trace {
        calls: recorder.calls,
        end: End::Exited(exit),
        tasks,
        left_running: if stopped { left_running } else { 0 },
        untraced_children: recorder.untraced.count,
    })
}

/// Why process `pid` cannot be traced by anyone, when that is so: it has exited and waits
/// to be reaped (a zombie), or it is a kernel thread. Both make `PTRACE_SEIZE` fail with
/// `EPERM`, which otherwise means a permission is missing (`/proc/PID/stat`: the state, and
/// `PF_KTHREAD` among the flags).
pub fn untraceable(pid: libc::pid_t) -> Option<&'static str> {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields start after the last `)`.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let flags: u64 = fields.get(6)?.parse().ok()?;
    if flags & PF_KTHREAD != 0 {
        return Some("it is a kernel thread: it makes no system calls and has no seccomp filter");
    }
    match *fields.first()? {
        "Z" | "X" => Some("it has exited (a zombie its parent has not reaped yet)"),
        _ => None,
    }
}

/// The 8 bytes at `addr` in thread `tid`'s memory, in this machine's byte order: for a
/// tracee stopped at a call, a word the call will read (`clone3`'s `clone_args.flags`).
/// `None` when the address is not mapped or the thread is gone. The tracee may change the
/// word before the kernel reads it: what this says is a guess about the call, for reports.
pub fn read_tracee_u64(tid: libc::pid_t, addr: u64) -> Option<u64> {
    let mut word = [0u8; 8];
    let local = libc::iovec {
        iov_base: word.as_mut_ptr().cast(),
        iov_len: word.len(),
    };
    let remote = libc::iovec {
        iov_base: usize::try_from(addr).ok()? as *mut libc::c_void,
        iov_len: word.len(),
    };
    // SAFETY: `local` points at `word`, 8 writable bytes that outlive the call; `remote` is
    // only read by the kernel, from the other process, which checks it.
    let read = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    (read == 8).then(|| u64::from_ne_bytes(word))
}

/// The process tracing `pid`, if one does (`TracerPid` in `/proc/PID/status`).
fn tracer_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let tracer: libc::pid_t = status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))?
        .trim()
        .parse()
        .ok()?;
    (tracer != 0).then_some(tracer)
}

/// Process `pid`'s command name (`/proc/PID/comm`).
fn command_name(pid: libc::pid_t) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim_end().to_string())
}

/// Why a running process could not be attached to.
fn attach_error(pid: libc::pid_t, e: io::Error) -> TraceError {
    let what = match (e.raw_os_error(), untraceable(pid)) {
        (Some(libc::ESRCH), _) => format!("no process {pid}"),
        (Some(libc::EPERM), Some(why)) => format!("cannot trace process {pid}: {why}"),
        (Some(libc::EPERM), None) => match tracer_of(pid) {
            Some(tracer) => format!(
                "cannot trace process {pid}: process {tracer} ({}) already traces it, and a \
                 process has one tracer only",
                command_name(tracer).unwrap_or_else(|| "?".into())
            ),
            None => format!(
                "cannot trace process {pid}: not allowed (no CAP_SYS_PTRACE over it (run as \
                 root), kernel.yama.ptrace_scope, or a seccomp filter on secopt itself)"
            ),
        },
        _ => format!("cannot trace process {pid}"),
    };
    TraceError::System { what, error: e }
}

/// The threads of process `pid` (`/proc/PID/task`).
fn threads_of(pid: libc::pid_t) -> io::Result<Vec<libc::pid_t>> {
    let mut tids = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        if let Some(tid) = entry?.file_name().to_str().and_then(|n| n.parse().ok()) {
            tids.push(tid);
        }
    }
    Ok(tids)
}

/// Attaches to the running process `pid` (all its threads, and the children it starts from
/// then on, like `strace -f -p`), records its calls until `duration` has passed (`None`: no
/// limit), until `SIGINT`, `SIGTERM` or `SIGHUP` reaches this process, or until every tracee
/// has ended, and detaches, leaving the process running (see the module documentation).
///
/// The same `waitpid(-1, __WALL)` caveat as [`trace_command`]: run no other children meanwhile.
/// The signal handlers and the `ITIMER_REAL` timer it uses are restored before it returns.
///
/// `on_attached` is called once every thread of the process is attached, with their number,
/// before recording starts (so a caller can say "recording" only once it is).
pub fn trace_process(
    pid: libc::pid_t,
    duration: Option<Duration>,
    options: &mut TraceOptions<'_>,
    on_attached: Option<&mut dyn FnMut(usize)>,
) -> Result<Trace, TraceError> {
    if pid <= 0 {
        return Err(TraceError::Unsupported(format!(
            "{pid} is not a process id"
        )));
    }
    // SAFETY: getpid has no preconditions.
    if pid == unsafe { libc::getpid() } {
        return Err(TraceError::Unsupported("secopt cannot trace itself".into()));
    }
    let seize_options = PTRACE_O_TRACESYSGOOD
        | PTRACE_O_TRACEFORK
        | PTRACE_O_TRACEVFORK
        | PTRACE_O_TRACECLONE
        | PTRACE_O_TRACEEXEC;
    let mut live: HashSet<libc::pid_t> = HashSet::new();
    // Threads may start while we attach: list again until no new one shows up.
    loop {
        let tids = match threads_of(pid) {
            Ok(t) => t,
            Err(e) if live.is_empty() && e.kind() == io::ErrorKind::NotFound => {
                return Err(attach_error(pid, io::Error::from_raw_os_error(libc::ESRCH)))
            }
            Err(e) => {
                detach_all(&mut live);
                return Err(system(format!("cannot list the threads of process {pid}"))(
                    e,
                ));
            }
        };
        let new: Vec<libc::pid_t> = tids.into_iter().filter(|t| !live.contains(t)).collect();
        if new.is_empty() {
            break;
        }
        for tid in new {
            match ptrace(PTRACE_SEIZE, tid, 0, seize_options as usize) {
                Ok(_) => {
                    live.insert(tid);
                    // Its stop resumes it in syscall-stop mode (the run loop's first stop).
                    let _ = ptrace(PTRACE_INTERRUPT, tid, 0, 0);
                }
                // A thread that ended after the listing.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) && tid != pid => {}
                Err(e) => {
                    detach_all(&mut live);
                    return Err(attach_error(pid, e));
                }
            }
        }
    }
    if let Some(attached) = on_attached {
        attached(live.len());
    }
    let mut recorder = Recorder::new(options);
    let stop = StopGuard::install();
    let deadline = duration.map(|d| Instant::now() + d);
    let should_stop =
        || STOP_REQUESTED.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d);
    let tasks_at_start = live.len() as u64;
    let outcome = run_loop(pid, &mut recorder, &mut live, true, &should_stop, false);
    drop(stop);
    let (exit, tasks, stopped) = match outcome {
        Ok(done) => done,
        Err(e) => {
            detach_all(&mut live);
            return Err(e);
        }
    };
    let end = match exit {
        Some(exit) if !stopped => End::Exited(exit),
        _ => {
            detach_all(&mut live);
            End::Detached
        }
    };
    Ok(Trace {
        calls: recorder.calls,
        end,
        // run_loop counts one task to start with and one per fork/clone.
        tasks: tasks - 1 + tasks_at_start,
        left_running: 0,
        untraced_children: recorder.untraced.count,
    })
}

/// Set by the handlers [`StopGuard`] installs: recording should end.
static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn request_stop(_: libc::c_int) {
    STOP_REQUESTED.store(true, Ordering::Relaxed);
}

/// Only there to interrupt `waitpid` (a handler, not `SIG_IGN`, and no `SA_RESTART`).
extern "C" fn wake_up(_: libc::c_int) {}

/// While attached: `SIGINT`/`SIGTERM`/`SIGHUP` ask the trace to stop, and a 50 ms timer
/// signals this thread alone (`SIGEV_THREAD_ID`) with `SIGALRM` so that its `waitpid` sees
/// the request, or the end of the duration, even when no tracee makes a call. Restored on
/// drop: the timer is deleted first, so a `SIGALRM` still pending reaches this thread (on
/// that syscall's return) while the no-op handler is still in place; a process-wide timer
/// could deliver it to another thread after the default action, termination, is back.
struct StopGuard {
    saved: Vec<(libc::c_int, libc::sigaction)>,
    timer: Option<libc::timer_t>,
}

impl StopGuard {
    fn install() -> StopGuard {
        STOP_REQUESTED.store(false, Ordering::Relaxed);
        let stop: extern "C" fn(libc::c_int) = request_stop;
        let wake: extern "C" fn(libc::c_int) = wake_up;
        // The handlers only store an atomic, or nothing.
        let saved = set_handlers(&[
            (libc::SIGINT, stop as libc::sighandler_t),
            (libc::SIGTERM, stop as libc::sighandler_t),
            (libc::SIGHUP, stop as libc::sighandler_t),
            (libc::SIGALRM, wake as libc::sighandler_t),
        ]);
        // SAFETY: a zeroed sigevent is valid; the fields set are the ones SIGEV_THREAD_ID
        // reads, and timer_create writes the id into a live timer_t.
        let timer = unsafe {
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = libc::SIGALRM;
            event.sigev_notify_thread_id = libc::gettid();
            let mut id: libc::timer_t = std::mem::zeroed();
            let tick = libc::timespec {
                tv_sec: 0,
                tv_nsec: 50_000_000,
            };
            let every = libc::itimerspec {
                it_interval: tick,
                it_value: tick,
            };
            (libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut id) == 0).then(|| {
                libc::timer_settime(id, 0, &every, std::ptr::null_mut());
                id
            })
        };
        StopGuard { saved, timer }
    }
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        if let Some(id) = self.timer {
            // SAFETY: deletes the timer created in `install`.
            unsafe { libc::timer_delete(id) };
        }
        restore_handlers(&self.saved);
    }
}

/// The task a fork, vfork or clone event stop of `tid` reports (already traced: the seize
/// options follow children), or `None` for any other stop.
fn new_task(tid: libc::pid_t, event: i32) -> Option<libc::pid_t> {
    if !matches!(
        event,
        PTRACE_EVENT_FORK | PTRACE_EVENT_VFORK | PTRACE_EVENT_CLONE
    ) {
        return None;
    }
    event_message(tid)
}

/// `PTRACE_GETEVENTMSG` of an event stop of `tid`, as a task id: the new task of a fork,
/// vfork or clone event, the task id the thread had before its exec event.
fn event_message(tid: libc::pid_t) -> Option<libc::pid_t> {
    let mut message: libc::c_ulong = 0;
    ptrace(
        PTRACE_GETEVENTMSG,
        tid,
        0,
        &mut message as *mut libc::c_ulong as usize,
    )
    .ok()
    .map(|_| message as libc::pid_t)
}

/// The signal of a signal-delivery stop, to pass on when resuming or detaching the tracee;
/// 0 for every other stop (syscall and event stops carry `SIGTRAP`, not a signal to deliver).
fn delivered_signal(signal: i32, event: i32) -> i32 {
    if event == 0 && signal != libc::SIGTRAP | 0x80 {
        signal
    } else {
        0
    }
}

/// The next tracee (or child) state change, `waitpid(-1, __WALL)` retried on `EINTR`;
/// `None` once none is left (`ECHILD`) or on another error.
fn wait_any() -> Option<(libc::pid_t, libc::c_int)> {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer.
        let tid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
        if tid >= 0 {
            return Some((tid, status));
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Detaches from every tracee in `live` and from any task they started meanwhile, leaving
/// each running (or stopped, if a job-control stop had it stopped): stops each with
/// `PTRACE_INTERRUPT` and detaches it at the first stop it reports, passing on the signal of
/// a signal-delivery stop.
fn detach_all(live: &mut HashSet<libc::pid_t>) {
    live.retain(|&tid| ptrace(PTRACE_INTERRUPT, tid, 0, 0).is_ok());
    while !live.is_empty() {
        let Some((tid, status)) = wait_any() else {
            return;
        };
        if !libc::WIFSTOPPED(status) {
            live.remove(&tid);
            continue;
        }
        let (signal, event) = stop_parts(status);
        if let Some(new_tid) = new_task(tid, event) {
            // Attached by the kernel already; it reports a stop of its own.
            live.insert(new_tid);
        }
        let inject = delivered_signal(signal, event);
        let _ = ptrace(PTRACE_DETACH, tid, 0, inject as usize);
        live.remove(&tid);
    }
}

/// Stops the freshly seized `pid` with `PTRACE_INTERRUPT` and resumes it with
/// `PTRACE_SYSCALL`.
fn start_syscall_stops(pid: libc::pid_t) -> io::Result<()> {
    ptrace(PTRACE_INTERRUPT, pid, 0, 0)?;
    loop {
        let status = super::child::wait_for(pid)?;
        if !libc::WIFSTOPPED(status) {
            return Err(io::Error::other(format!(
                "the child {} before it could be traced",
                super::child::describe_wait_status(status)
            )));
        }
        let (signal, event) = stop_parts(status);
        if event == PTRACE_EVENT_STOP {
            break;
        }
        // A signal arrived first: deliver it and wait for the interrupt's stop.
        let inject = delivered_signal(signal, event);
        ptrace(PTRACE_SYSCALL, pid, 0, inject as usize)?;
    }
    ptrace(PTRACE_SYSCALL, pid, 0, 0).map(|_| ())
}

/// Kills every tracee still around and reaps them (after an error, so that none is left
/// stopped forever in a library caller's process).
fn kill_all(live: &HashSet<libc::pid_t>) {
    for &tid in live {
        // SAFETY: signals a task we traced (SIGKILL ends its whole thread group).
        unsafe {
            libc::kill(tid, libc::SIGKILL);
        }
    }
    while let Some((tid, status)) = wait_any() {
        if libc::WIFSTOPPED(status) {
            // SAFETY: a tracee of ours.
            unsafe {
                libc::kill(tid, libc::SIGKILL);
            }
            let _ = ptrace(PTRACE_SYSCALL, tid, 0, 0);
        }
    }
}

/// Waits for tracee stops until none is left, `stop` says so, or (`until_main_exits`) `main`
/// has ended while others run on; returns how `main` ended, how many tasks were traced (one
/// plus the forks and clones seen) and whether it returned with tracees left.
/// `live` holds the tasks not known to have ended (new ones are added at their parent's
/// fork/clone event, so an error can kill or detach them all).
fn run_loop(
    main: libc::pid_t,
    recorder: &mut Recorder<'_, '_>,
    live: &mut HashSet<libc::pid_t>,
    mut started: bool,
    stop: &dyn Fn() -> bool,
    until_main_exits: bool,
) -> Result<(Option<Exit>, u64, bool), TraceError> {
    let mut exit = None;
    let mut tasks = 1u64;
    // Unless `started` (an attached process), the command has not exec'd yet: its calls are
    // the fork's plumbing, except the last entry before the exec event, which is the execve
    // that starts the command.
    let mut last_entry: Option<SyscallStop> = None;
    loop {
        // Every stop handled so far has been resumed: the tracees can be left as they are.
        if stop() {
            return Ok((exit, tasks, true));
        }
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer.
        let tid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
        if tid < 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ECHILD) => return Ok((exit, tasks, false)),
                _ => return Err(system("waitpid")(e)),
            }
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            live.remove(&tid);
            if tid == main {
                // Its pid may be reused from now on: forward no more signals to it.
                let _ = TRACED_PID.compare_exchange(main, 0, Ordering::Relaxed, Ordering::Relaxed);
                exit = Some(if libc::WIFEXITED(status) {
                    Exit::Code(libc::WEXITSTATUS(status))
                } else {
                    Exit::Signal {
                        signal: libc::WTERMSIG(status),
                        core_dumped: libc::WCOREDUMP(status),
                    }
                });
                if until_main_exits && !live.is_empty() {
                    // The others were resumed when they last stopped: they may be detached.
                    return Ok((exit, tasks, true));
                }
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        let (signal, event) = stop_parts(status);
        let mut inject = 0;
        if signal == libc::SIGTRAP | 0x80 {
            let mut info = SyscallInfo::default();
            match ptrace(
                PTRACE_GET_SYSCALL_INFO,
                tid,
                std::mem::size_of::<SyscallInfo>(),
                &mut info as *mut SyscallInfo as usize,
            ) {
                Ok(_) if info.op == PTRACE_SYSCALL_INFO_ENTRY => {
                    // seccomp_data.nr is the low 32 bits of the number register.
                    let nr = info.nr as u32;
                    let entry = SyscallStop::Entry {
                        tid,
                        arch: info.arch,
                        nr,
                        instruction_pointer: info.instruction_pointer,
                        args: info.args,
                    };
                    if started {
                        recorder.record(info.arch, nr, &info.args);
                        recorder.observe(entry);
                    } else if tid == main {
                        last_entry = Some(entry);
                    }
                }
                Ok(_) if info.op == PTRACE_SYSCALL_INFO_EXIT && started => {
                    recorder.observe(SyscallStop::Exit {
                        tid,
                        rval: info.nr as i64,
                        is_error: info.args[0].to_ne_bytes()[0] != 0,
                    });
                }
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EIO) => {
                    return Err(TraceError::Unsupported(format!(
                        "this kernel has no PTRACE_GET_SYSCALL_INFO (Linux 5.3 or later is needed): {e}"
                    )))
                }
                Err(e) => return Err(system("ptrace(PTRACE_GET_SYSCALL_INFO)")(e)),
            }
        } else if event == PTRACE_EVENT_STOP {
            if is_stop_signal(signal) {
                // A group-stop: stay stopped, but report the SIGCONT that ends it.
                if ptrace(PTRACE_LISTEN, tid, 0, 0).is_ok() {
                    continue;
                }
            }
            // Otherwise the new-task stop or the re-trap after SIGCONT: just go on.
        } else if event == PTRACE_EVENT_EXEC {
            // A thread other than the leader that execs takes the leader's task id, and its
            // own id ends without an exit report (ptrace(2), "execve(2) under ptrace"): it is
            // no task left running.
            if let Some(former) = event_message(tid).filter(|&former| former != tid) {
                live.remove(&former);
            }
            if tid == main && !started {
                started = true;
                if let Some(entry) = last_entry.take() {
                    if let SyscallStop::Entry { arch, nr, args, .. } = entry {
                        recorder.record(arch, nr, &args);
                    }
                    recorder.observe(entry);
                }
            }
        } else if let Some(new_tid) = new_task(tid, event) {
            tasks += 1;
            live.insert(new_tid);
        } else if event == 0 {
            // A signal-delivery stop: deliver it.
            inject = signal;
        }
        // ESRCH: the tracee was killed meanwhile; its exit is reported next.
        let _ = ptrace(PTRACE_SYSCALL, tid, 0, inject as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;

    /// `clone`'s flags are its first argument except on s390x (CONFIG_CLONE_BACKWARDS2: the
    /// second); `clone3`'s are read from memory; a call that fails starts nothing.
    #[test]
    fn untraced_children_are_counted_from_the_flags_where_each_abi_passes_them() {
        let nr = |arch: Arch, name: &str| arch.syscalls().nr(name).unwrap();
        let entry = |tid, arch: Arch, name: &str, args: [u64; 6]| SyscallStop::Entry {
            tid,
            arch: arch.token(),
            nr: nr(arch, name),
            instruction_pointer: 0,
            args,
        };
        let exit = |tid, rval| SyscallStop::Exit {
            tid,
            rval,
            is_error: rval < 0,
        };
        // Flags at 0x1000 in the tracee's memory: CLONE_UNTRACED; anywhere else: none.
        let memory =
            |_: libc::pid_t, addr: u64| Some(if addr == 0x1000 { CLONE_UNTRACED } else { 0 });
        let mut u = UntracedChildren::default();
        let untraced = CLONE_UNTRACED | libc::SIGCHLD as u64;
        let cases = [
            (
                entry(1, Arch::X86_64, "clone", [untraced, 0, 0, 0, 0, 0]),
                100,
                1,
            ),
            (
                entry(
                    1,
                    Arch::X86_64,
                    "clone",
                    [libc::SIGCHLD as u64, 0, 0, 0, 0, 0],
                ),
                101,
                1,
            ),
            // s390x: the flags are the second argument; its first is the new stack.
            (
                entry(2, Arch::S390x, "clone", [untraced, 0, 0, 0, 0, 0]),
                102,
                1,
            ),
            (
                entry(2, Arch::S390x, "clone", [0, untraced, 0, 0, 0, 0]),
                103,
                2,
            ),
            (
                entry(3, Arch::X86_64, "clone3", [0x1000, 88, 0, 0, 0, 0]),
                104,
                3,
            ),
            (
                entry(3, Arch::X86_64, "clone3", [0x2000, 88, 0, 0, 0, 0]),
                105,
                3,
            ),
            // Failed: no task started.
            (
                entry(4, Arch::Aarch64, "clone", [untraced, 0, 0, 0, 0, 0]),
                -11,
                3,
            ),
            (
                entry(4, Arch::Aarch64, "getpid", [untraced, 0, 0, 0, 0, 0]),
                4,
                3,
            ),
        ];
        for (i, (call, rval, want)) in cases.into_iter().enumerate() {
            let SyscallStop::Entry { tid, .. } = call else {
                unreachable!()
            };
            u.observe(call, memory);
            u.observe(exit(tid, rval), memory);
            assert_eq!(u.count, want, "case {i}");
        }
        // The child's own return (0) is not the parent's.
        u.observe(
            entry(5, Arch::X86_64, "clone", [untraced, 0, 0, 0, 0, 0]),
            memory,
        );
        u.observe(exit(5, 0), memory);
        assert_eq!(u.count, 3);
    }

    #[test]
    fn syscall_info_has_the_kernel_layout() {
        // include/uapi/linux/ptrace.h: 24 bytes of header, then nr and six args at offset 24
        // (entry), and the seccomp member's ret_data after them: 88 bytes with padding.
        assert_eq!(std::mem::size_of::<SyscallInfo>(), 88);
        let info = SyscallInfo::default();
        let base = &info as *const SyscallInfo as usize;
        assert_eq!(&info.arch as *const u32 as usize - base, 4);
        assert_eq!(&info.nr as *const u64 as usize - base, 24);
        assert_eq!(&info.args as *const [u64; 6] as usize - base, 32);
    }

    #[test]
    fn programs_are_found_like_execvp() {
        assert!(matches!(
            find_program(OsStr::new("secopt-no-such-program-7f3a")),
            Err(TraceError::NotFound { in_path: true, .. })
        ));
        assert!(matches!(
            find_program(OsStr::new("/nonexistent/prog")),
            Err(TraceError::NotFound { in_path: false, .. })
        ));
        assert!(matches!(
            find_program(OsStr::new("/")),
            Err(TraceError::CannotExecute { .. })
        ));
        assert_eq!(
            find_program(OsStr::new("/bin/sh")).unwrap(),
            PathBuf::from("/bin/sh")
        );
        assert!(find_program(OsStr::new("sh")).is_ok());
    }

    #[test]
    fn shell_status_of_a_signal_is_128_plus_it() {
        assert_eq!(Exit::Code(3).shell_status(), 3);
        let killed = Exit::Signal {
            signal: libc::SIGTERM,
            core_dumped: false,
        };
        assert_eq!(killed.shell_status(), 143);
    }
}
