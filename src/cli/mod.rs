//! The `secopt` command line.
//!
//! Exit codes (DESIGN.md §7): 0 success, 1 a found difference or failed check, 3 unknown
//! (verify/diff out of budget), 2 bad usage or
//! bad input. Errors go to stderr as `secopt: error: FILE:PLACE: message`.

mod analyze;
mod asm_cmd;
mod bench;
mod compile;
mod denials;
mod dump;
mod emu;
mod exec;
mod hints;
pub mod io;
mod optimize;
mod record;
mod recorded;
mod self_check;
mod status;
mod verify;

use crate::bpf::cache::KernelVersion;
use clap::{Parser, Subcommand};
use std::fmt;

/// Exit code for success.
pub const EXIT_OK: i32 = 0;
/// Exit code for a found difference or a failed check.
pub const EXIT_DIFFERENT: i32 = 1;
/// Exit code for bad usage or bad input.
pub const EXIT_BAD_INPUT: i32 = 2;

/// Why a command stopped; carries its exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    /// Bad usage or bad input (exit 2).
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            code: EXIT_BAD_INPUT,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// `--kernel` of `analyze` and `optimize`: a version, or `none` for a kernel without the
/// allow cache (what 5.10 and older do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelModel {
    NoCache,
    Version(KernelVersion),
}

impl KernelModel {
    /// The version whose allow cache to model (the optimizer's setting): `none` is 5.10, the
    /// last kernel without the allow cache.
    pub fn version(self) -> KernelVersion {
        match self {
            KernelModel::NoCache => KernelVersion::new(5, 10),
            KernelModel::Version(v) => v,
        }
    }

    /// The kernel the analysis charges the allow cache of (`None`: every call runs the
    /// program).
    pub fn allow_cache_kernel(self) -> Option<KernelVersion> {
        match self {
            KernelModel::NoCache => None,
            KernelModel::Version(v) => Some(v),
        }
    }
}

/// Parses `--kernel`: `6.18`, a `uname -r` string, or `none`.
pub fn parse_kernel_model(s: &str) -> Result<KernelModel, String> {
    if s == "none" {
        return Ok(KernelModel::NoCache);
    }
    s.parse()
        .map(KernelModel::Version)
        .map_err(|e: crate::arch::ParseKernelVersionError| format!("{e}, or `none`"))
}

/// Parses a process id (`dump PID`, `record --pid`): a positive number as /proc names
/// processes, so `0`, `-5` and a number past `pid_t` get one message that says what is wanted
/// (clap's own would give `pid_t`'s signed range, negative numbers included).
pub fn parse_pid(s: &str) -> Result<libc::pid_t, String> {
    match s.trim().parse::<i64>() {
        Ok(pid) if pid > 0 => libc::pid_t::try_from(pid)
            .map_err(|_| format!("{s} is not a process id (at most {})", libc::pid_t::MAX)),
        Ok(_) => Err(format!(
            "{s} is not a process id (a positive number, as in /proc)"
        )),
        Err(_) => Err(format!(
            "{s:?} is not a process id (a positive number, as in /proc)"
        )),
    }
}

/// Parses a time limit in seconds (`--timeout`, `--self-check-timeout`): a number from 0 (no
/// limit) up that a [`std::time::Duration`] can hold, so turning it into one cannot panic.
pub fn parse_time_limit(s: &str) -> Result<f64, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if secs.is_nan() || secs < 0.0 {
        return Err(format!(
            "`{s}`: give a number of seconds from 0 (no limit) up"
        ));
    }
    if std::time::Duration::try_from_secs_f64(secs).is_err() {
        // The most a time limit holds is u64::MAX seconds, which a float rounds up to 2^64,
        // past it: the bound said is the largest whole number that is read back as one.
        return Err(format!(
            "`{s}`: more seconds than a time limit can hold (at most {:.0})",
            (std::time::Duration::MAX.as_secs() as f64).next_down()
        ));
    }
    Ok(secs)
}

/// Output format of reporting verbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Aligned text for people.
    #[default]
    Text,
    /// One JSON document for machines.
    Json,
}

#[derive(Parser, Debug)]
#[command(
    name = "secopt",
    version,
    about = "Optimizing compiler, verifier and analyzer for Linux seccomp-bpf filters",
    long_about = "secopt compiles seccomp profiles (OCI/Docker/podman, Firecracker) into optimized \
filters and optimizes the filters other tools wrote, each output proved to decide every syscall \
exactly as its reference before it is written; it verifies and diffs any two filters exactly, \
shows what a filter costs per call and which syscalls the kernel can cache, and measures filters \
side by side on this kernel.\n\n\
Inputs: FILE or `-` for stdin. Raw filters are arrays of 8-byte little-endian struct sock_filter \
(bwrap --seccomp, crun's run.oci.seccomp_bpf_data, PTRACE_SECCOMP_GET_FILTER dumps); anything that \
is UTF-8 text without NUL bytes is read as assembly, and secopt's JSON document of a filter \
(compile --emit json, disasm --format json) by its instructions, unless --input-format says otherwise.\n\n\
Exit codes: 0 success, 1 a difference or failed check, 2 bad usage or bad input, 3 unknown \
(verify/diff: a budget ran out before a proof).",
    after_help = "Examples:\n  \
secopt compile docker.json -o docker.bpf --report   a profile to an optimized filter, proved equal\n  \
secopt optimize runc.bpf -o fast.bpf --report       any filter, laid out anew, proved equal\n  \
secopt verify runc.bpf fast.bpf                     equal on every input, or a counterexample\n  \
secopt diff old.bpf new.bpf                         what changed, per arch and syscall\n  \
secopt analyze filter.bpf --workload app.json       cacheable syscalls, path lengths, cost per call\n  \
secopt record -o app.json -- ./app                  the syscalls a program makes, as a workload\n  \
secopt dump 1234 -o ctr.bpf                         the filter a running process has\n  \
secopt emu filter.bpf --nr openat --arg 2=0x80000   run one syscall through a filter\n  \
secopt disasm filter.bpf                            a raw filter as assembly with syscall names\n\n\
Each command's --help has its own examples."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile an OCI/Docker/podman profile or a Firecracker seccompiler file into a filter
    /// that decides exactly as runc+libseccomp (or Firecracker) would, as raw cBPF,
    /// assembly, C, Rust, Go, base64 (crun's run.oci.seccomp_bpf_data) or JSON.
    Compile(compile::CompileArgs),
    /// Optimize any valid filter: an equivalent program laid out for the workload's speed and
    /// for size as --favor weighs them, proved equal to the input before it is written.
    Optimize(optimize::OptimizeArgs),
    /// Decide whether two filters return the same value for every seccomp_data (exactly, not
    /// by sampling); a confirmed counterexample when they do not.
    Verify(verify::VerifyArgs),
    /// Show how two filters differ, per architecture and syscall, with argument conditions.
    Diff(verify::DiffArgs),
    /// Report a filter's size and limits, per-arch cacheable syscalls, per-syscall path lengths
    /// and which syscalls read which arguments.
    Analyze(analyze::AnalyzeArgs),
    /// Run a command under ptrace (with its threads and children) and write the system calls
    /// it makes, per ABI and with argument samples, as a workload for optimize/bench/analyze.
    Record(record::RecordArgs),
    /// Time a workload's syscalls on this kernel under several filters (none, RET ALLOW,
    /// libseccomp, secopt, files), with medians, 95% intervals and instruction counts.
    Bench(bench::BenchArgs),
    /// Run a command under a filter compiled from a profile (or a raw filter), as a
    /// container runtime would install it: no_new_privs, the profile's flags, NOTIFY
    /// listener handed to the agent, then execve.
    Exec(exec::ExecArgs),
    /// Read the seccomp filters a running process has from the kernel (as assembly, JSON, or
    /// one of them as a raw filter for optimize/analyze/verify).
    #[command(long_about = dump::LONG_ABOUT)]
    Dump(dump::DumpArgs),
    /// Show a filter as assembly text (syscall, field and action names resolved per arch).
    Disasm(asm_cmd::DisasmArgs),
    /// Assemble text into a raw filter (validated as the kernel would before it is written).
    Asm(asm_cmd::AsmArgs),
    /// Run a filter on one seccomp_data with the kernel's semantics and show the path taken.
    Emu(emu::EmuArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    restore_default_sigpipe();
    exit_cleanly_when_stdout_fails();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_BAD_INPUT
            } else {
                EXIT_OK
            };
            if e.use_stderr() {
                // Usage errors carry the same `secopt: ` prefix as every other error, so a
                // wrapper script can tell secopt's messages from the command's.
                eprint!("secopt: {}", e.render());
                return code;
            }
            if let Err(write) = e.print() {
                eprintln!("secopt: error: <stdout>: cannot write: {write}");
                return EXIT_BAD_INPUT;
            }
            return code;
        }
    };
    let result = match cli.command {
        Command::Disasm(a) => asm_cmd::disasm(a),
        Command::Asm(a) => asm_cmd::asm(a),
        Command::Emu(a) => emu::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Compile(a) => compile::run(a),
        Command::Verify(a) => verify::run_verify(a),
        Command::Diff(a) => verify::run_diff(a),
        Command::Exec(a) => exec::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Optimize(a) => optimize::run(a),
        Command::Record(a) => record::run(a),
        Command::Dump(a) => dump::run(a),
    };
    match result {
        Ok(code) => code,
        Err(f) => {
            eprintln!("secopt: error: {f}");
            f.code
        }
    }
}

/// Prints a JSON value to stdout.
fn print_json(value: &serde_json::Value) -> Result<(), Failure> {
    print!("{}", json_text(value)?);
    Ok(())
}

/// A JSON document as every verb prints it: pretty, with a final newline.
pub(super) fn json_text(value: &serde_json::Value) -> Result<String, Failure> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Failure::input(format!("cannot encode JSON: {e}")))?;
    text.push('\n');
    Ok(text)
}

/// A report that cannot be written (`secopt analyze f.bpf > /dev/full`: ENOSPC, EIO) ends with
/// `secopt: error: <stdout>: cannot write: …` and exit code 2, as every other output failure
/// does, instead of the backtrace of `println!`'s panic. The reports are printed line by line
/// from many places; this catches that one panic, by std's message for it, for all of them.
/// Any other panic keeps the default report.
fn exit_cleanly_when_stdout_fails() {
    const STDOUT_FAILED: &str = "failed printing to stdout: ";
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        if let Some(error) = message.and_then(|m| m.strip_prefix(STDOUT_FAILED)) {
            eprintln!("secopt: error: <stdout>: cannot write: {error}");
            std::process::exit(EXIT_BAD_INPUT);
        }
        default(info);
    }));
}

/// Dies quietly on a closed stdout (`secopt analyze f.bpf | head`), as Unix tools do, instead of
/// panicking in `println!`: Rust ignores SIGPIPE by default. `secopt exec` resets it again for
/// the command it starts; sockets that must not raise it use `MSG_NOSIGNAL`.
fn restore_default_sigpipe() {
    // SAFETY: setting a signal disposition to SIG_DFL has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
