//! `secopt dump`: the filters a running process has, read from the kernel.
//!
//! The user's question is "what filter does my container (sandbox, service) actually run?":
//! the runtime's own output, after its defaults, ABI handling and any filter stacked on top.
//! The kernel hands a tracer with `CAP_SYS_ADMIN` each filter exactly as it was passed to
//! `seccomp(2)` (`kernel::read_filters`); this verb lists them as assembly or JSON, or
//! writes one as a raw filter for `optimize`, `analyze`, `verify` and `bench --bpf`.

use super::io::write_output;
use super::{print_json, Failure, Format, EXIT_DIFFERENT, EXIT_OK};
use crate::arch::Endian;
use crate::bpf::{disasm, validate, Program};
use crate::kernel::trace::untraceable;
use std::path::PathBuf;

/// `secopt dump --help`'s description (set on the subcommand in `cli`: a variant's doc
/// comment there would override one given here).
pub const LONG_ABOUT: &str =
    "Read the seccomp filters attached to a running process (a thread id, as in \
/proc/PID/task) from the kernel, with ptrace (PTRACE_SECCOMP_GET_FILTER: needs root, i.e. \
CAP_SYS_PTRACE and CAP_SYS_ADMIN, and a secopt not itself under seccomp). The process is \
stopped for the moment it takes and then resumes (a sleep it was in resumes through \
restart_syscall: where the filter denies that, the sleep fails, and secopt warns).\n\n\
Without -o the filters are listed as assembly (or JSON), oldest first. A process can have \
several: the kernel runs every one on each system call and acts on the most restrictive \
answer. -o writes one as a raw filter (the bytes the program passed to seccomp(2)).\n\n\
Filters are per thread: those of the thread named are read, and a note names the threads of \
its process that have another number of filters, with the `secopt dump TID` that reads them. \
Threads with as many filters but other ones (Firecracker's API, VMM and vCPU threads have one \
each) are not told apart: that would stop each of them. `ls /proc/PID/task` lists them.";

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt dump 1234                          list the filters of process 1234 as assembly\n  \
secopt dump 1234 -o ctr.bpf               write its filter (one filter) as raw cBPF\n  \
secopt dump 1234 --index 1 -o f1.bpf      the second-oldest of several\n  \
secopt dump 1234 -o 'f{}.bpf'             each of several: f0.bpf (the oldest), f1.bpf, …\n  \
secopt dump 1234 --join -o all.bpf        all of them as one program, for verify/diff/emu\n  \
secopt dump $(pidof nginx) -o n.bpf && secopt optimize n.bpf -o n.opt.bpf --report\n\n\
Exit status: 0 the filters were read; 1 the process has no seccomp filter (none at all, or \
seccomp strict mode); 2 no such process, not allowed to read them, or bad usage.")]
pub struct DumpArgs {
    /// The process (or thread) id.
    #[arg(value_parser = super::parse_pid, allow_negative_numbers = true)]
    pub pid: libc::pid_t,
    /// Only the filter at this index (0 is the oldest, installed first).
    #[arg(long)]
    pub index: Option<usize>,
    /// Write the filter here as raw cBPF (atomically); with several filters, --index picks
    /// one, or a `{}` in the path writes each, `{}` replaced by its index (`f{}.bpf`: f0.bpf
    /// the oldest, f1.bpf, …, ready for `secopt optimize f*.bpf` in that order up to ten).
    #[arg(short, long, conflicts_with = "format", value_parser = super::io::output_path)]
    pub output: Option<PathBuf>,
    /// How the listing on stdout is written: `text` (assembly) or `json`.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Join all the filters into one program that decides every call as the kernel decides
    /// with the whole stack (each filter in turn, the most restrictive answer kept), for
    /// `verify`, `diff` and `emu`. (`secopt optimize` of the filters themselves gives a fast
    /// one; this one is exact but uses scratch memory, so the kernel would cache nothing
    /// for it.)
    #[arg(long, conflicts_with = "index")]
    pub join: bool,
}

/// The fields of `/proc/PID/status` this verb reads.
struct ProcStatus {
    name: String,
    /// 0 disabled, 1 strict, 2 filter.
    seccomp_mode: Option<u32>,
    tracer: i32,
}

fn proc_status(pid: libc::pid_t) -> Result<ProcStatus, Failure> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Failure::input(format!("no process {pid} ({path} does not exist)"))
        } else {
            Failure::input(format!("cannot read {path}: {e}"))
        }
    })?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    Ok(ProcStatus {
        name: field("Name").unwrap_or("?").to_string(),
        seccomp_mode: field("Seccomp").and_then(|v| v.parse().ok()),
        tracer: field("TracerPid").and_then(|v| v.parse().ok()).unwrap_or(0),
    })
}

pub(super) fn process_name(pid: i32) -> String {
    proc_status(pid).map_or_else(|_| "?".to_string(), |s| s.name)
}

/// What the other threads of `pid`'s process have, where their number of filters is not
/// `count` (that of `pid` itself, 0 when it has none): seccomp is per thread, and a process
/// whose threads installed different filters shows one stack per thread, while `dump PID`
/// reads only the thread PID names. One note per other count, naming its threads and the
/// `dump` that reads one of them. Only `/proc` is read: the other threads are not stopped
/// (reading filters stops a thread, which can make its sleep fail: [`interrupted_sleep`]),
/// so threads with as many filters as `pid` but other ones go unnamed.
fn other_threads(pid: libc::pid_t, count: usize) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tids: Vec<libc::pid_t> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&t| t != pid)
        .collect();
    tids.sort_unstable();
    // Each other count, with the threads that have it.
    let mut groups: Vec<(usize, Vec<libc::pid_t>)> = Vec::new();
    for tid in tids {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")) else {
            continue;
        };
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse::<usize>().ok())
        };
        let theirs = match (field("Seccomp"), field("Seccomp_filters")) {
            (Some(2), Some(c)) => c,
            (Some(0), _) => 0,
            _ => continue,
        };
        if theirs == count {
            continue;
        }
        match groups.iter_mut().find(|(c, _)| *c == theirs) {
            Some((_, members)) => members.push(tid),
            None => groups.push((theirs, vec![tid])),
        }
    }
    groups
        .into_iter()
        .map(|(theirs, members)| {
            let named: Vec<String> = members
                .iter()
                .take(8)
                .map(|&t| format!("{t} ({})", process_name(t)))
                .collect();
            let more = members.len().saturating_sub(8);
            let (what, dump) = match theirs {
                0 => ("no filter".to_string(), String::new()),
                n => (
                    format!("{n} filter{}", if n == 1 { "" } else { "s" }),
                    format!(
                        ", and `secopt dump {}` reads {}",
                        members[0],
                        if members.len() == 1 {
                            "them"
                        } else {
                            "the first's"
                        }
                    ),
                ),
            };
            format!(
                "{} {}{} of this process {} {what}, not {count}; seccomp filters are per \
                 thread{dump}",
                if members.len() == 1 {
                    "thread"
                } else {
                    "threads"
                },
                named.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
                if members.len() == 1 { "has" } else { "have" },
            )
        })
        .collect()
}

/// The syscall `pid` is blocked in, by name, when the kernel resumes it through
/// `restart_syscall` after a stop (`ERESTART_RESTARTBLOCK`): `nanosleep`; `clock_nanosleep`
/// without `TIMER_ABSTIME`; `poll` with a timeout; a `futex` wait with a timeout. Other calls
/// (and these otherwise) restart themselves. Read from `/proc/PID/syscall` before the reading
/// stops the thread, and only for a process of the host's own ABI (a 32-bit process's numbers
/// are of another table).
fn blocked_in_restartable(pid: libc::pid_t) -> Option<&'static str> {
    let host = crate::arch::Arch::host()?;
    // ELF class and machine of the process's executable: 64-bit and the host's.
    let mut head = [0u8; 20];
    std::io::Read::read_exact(
        &mut std::fs::File::open(format!("/proc/{pid}/exe")).ok()?,
        &mut head,
    )
    .ok()?;
    let machine = u16::from_le_bytes([head[18], head[19]]);
    let native = match host {
        crate::arch::Arch::X86_64 => 62,
        crate::arch::Arch::Aarch64 => 183,
        _ => return None,
    };
    if head[4] != 2 || machine != native {
        return None;
    }
    let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok()?;
    let mut fields = text.split_whitespace();
    let nr: u32 = fields.next()?.parse().ok()?;
    let args: Vec<u64> = fields
        .take(6)
        .filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .collect();
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    let name = host.syscalls().name(nr)?;
    const TIMER_ABSTIME: u64 = 1;
    const FUTEX_CMD_MASK: u64 = !(128 | 256); // FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME
    let restarts_through_block = match name {
        "nanosleep" => true,
        "clock_nanosleep" => arg(1) & TIMER_ABSTIME == 0,
        "poll" => (arg(2) as i32) >= 0,
        // FUTEX_WAIT (0) or FUTEX_WAIT_BITSET (9), with a timeout.
        "futex" => matches!(arg(1) & FUTEX_CMD_MASK, 0 | 9) && arg(3) != 0,
        _ => false,
    };
    restarts_through_block.then_some(name)
}

/// When the reading interrupted such a sleep (`blocked`) and the thread's filters deny
/// `restart_syscall`, through which the kernel resumes it: the sleep has then failed, with the
/// filters' errno or worse. Said so the user knows the process saw an error (a debugger or
/// `strace -p` attaching would have done the same).
fn interrupted_sleep(blocked: Option<&str>, filters: &[Program]) -> Option<String> {
    let blocked = blocked?;
    let arch = crate::arch::Arch::host()?;
    let nr = arch.syscalls().nr("restart_syscall")?;
    let data = crate::bpf::SeccompData::new(arch.token(), nr as i32, [0; 6]);
    let answer = crate::bpf::stack::eval_stack(filters, &data).ok()?;
    use crate::bpf::action::Action;
    if matches!(answer.action(), Some(Action::Allow | Action::Log)) {
        return None;
    }
    Some(format!(
        "reading the filters stopped the thread in `{blocked}`, which the kernel resumes through \
         `restart_syscall`, and its filters answer that with {answer}: the `{blocked}` has \
         returned an error to the process instead of sleeping on"
    ))
}

/// A process without a filter is an answer, not bad input: exit 1, as a failed check, so a
/// script can tell it from a wrong pid or missing privileges (exit 2).
fn no_filter(who: &str) -> Failure {
    Failure {
        code: EXIT_DIFFERENT,
        message: format!("{who} has no seccomp filter"),
    }
}

/// The filters of `pid`, with an error that says what to do when they cannot be read.
fn read(pid: libc::pid_t, who: &str) -> Result<Vec<Program>, Failure> {
    use crate::kernel::ReadFiltersError as E;
    let status = proc_status(pid)?;
    match status.seccomp_mode {
        Some(0) => return Err(no_filter(who)),
        // No filter either, so the same exit status as `Some(0)`.
        Some(1) => {
            return Err(Failure {
                code: EXIT_DIFFERENT,
                message: format!(
                    "{who} is in seccomp strict mode (read, write, _exit and sigreturn only): \
                     there is no filter to read"
                ),
            })
        }
        _ => {}
    }
    if status.tracer != 0 {
        return Err(Failure::input(format!(
            "{who} is already traced by process {} ({}); a process has one tracer at a time",
            status.tracer,
            process_name(status.tracer)
        )));
    }
    let filters = crate::kernel::read_filters(pid).map_err(|e| match &e {
        E::Attach(io) if io.raw_os_error() == Some(libc::ESRCH) => {
            Failure::input(format!("no process {pid} (it may have exited)"))
        }
        E::Attach(io) if io.raw_os_error() == Some(libc::EPERM) => {
            if let Some(why) = untraceable(pid) {
                return Failure::input(format!("cannot read the filters of {who}: {why}"));
            }
            let yama = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
                .map(|s| format!(" (kernel.yama.ptrace_scope is {})", s.trim()))
                .unwrap_or_default();
            Failure::input(format!(
                "not allowed to trace {who}: reading filters needs root (CAP_SYS_PTRACE and \
                 CAP_SYS_ADMIN){yama}"
            ))
        }
        E::Get { error, .. } if error.raw_os_error() == Some(libc::EACCES) => {
            let own = proc_status(std::process::id() as i32).ok();
            if own.and_then(|s| s.seccomp_mode).is_some_and(|m| m != 0) {
                Failure::input(
                    "secopt itself runs under a seccomp filter, and the kernel hands filters \
                     only to a tracer without one: run it outside the container or sandbox",
                )
            } else {
                Failure::input(format!(
                    "the kernel refused to hand out the filters of {who}: \
                     PTRACE_SECCOMP_GET_FILTER needs CAP_SYS_ADMIN"
                ))
            }
        }
        E::Get { error, .. } if error.raw_os_error() == Some(libc::EMEDIUMTYPE) => {
            Failure::input(format!(
                "the kernel cannot hand out the filters of {who}: it was built without \
                 CONFIG_CHECKPOINT_RESTORE"
            ))
        }
        _ => Failure::input(format!("cannot read the filters of {who}: {e}")),
    })?;
    if filters.is_empty() {
        return Err(no_filter(who));
    }
    for (i, f) in filters.iter().enumerate() {
        if let Err(e) = validate::validate(f) {
            eprintln!(
                "secopt: warning: filter {i} of {who}, which the kernel accepted, fails secopt's \
                 validator ({e}); please report this"
            );
        }
    }
    Ok(filters)
}

fn list(filters: &[Program]) -> String {
    filters
        .iter()
        .enumerate()
        .map(|(i, f)| format!("index {i}: {}", instructions(f)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn run(args: DumpArgs) -> Result<i32, Failure> {
    let pattern = args
        .output
        .as_ref()
        .filter(|o| o.to_string_lossy().contains("{}"));
    if let (true, Some(out)) = (args.join, pattern) {
        return Err(Failure::input(format!(
            "-o {}: a {{}} pattern writes one file per filter; --join writes the stack as one \
             program to one file",
            out.display()
        )));
    }
    let pid = args.pid;
    if pid as u32 == std::process::id() {
        return Err(Failure::input(
            "secopt cannot read its own filters (a process cannot trace itself)",
        ));
    }
    let who = format!("process {pid} ({})", process_name(pid));
    let blocked = blocked_in_restartable(pid);
    let filters = match read(pid, &who) {
        Ok(f) => f,
        // A thread without a filter may share its process with threads that have some.
        Err(e) if e.code == EXIT_DIFFERENT => {
            let others = other_threads(pid, 0);
            return Err(Failure {
                message: std::iter::once(e.message)
                    .chain(others)
                    .collect::<Vec<_>>()
                    .join("; "),
                ..e
            });
        }
        Err(e) => return Err(e),
    };
    let count = filters.len();
    let warning = interrupted_sleep(blocked, &filters);
    if let Some(w) = &warning {
        eprintln!("secopt: warning: {who}: {w}");
    }
    let notes = other_threads(pid, count);
    for note in &notes {
        eprintln!("secopt: note: {who}: {note}");
    }
    if args.join {
        return write_joined(&args, &who, &filters);
    }
    let selected: Vec<(usize, &Program)> = match args.index {
        Some(i) if i >= count => {
            return Err(Failure::input(format!(
                "{who} has {count} filter{} ({}); --index {i} is past the last",
                if count == 1 { "" } else { "s" },
                list(&filters)
            )))
        }
        Some(i) => vec![(i, &filters[i])],
        None => filters.iter().enumerate().collect(),
    };
    if let Some(out) = &args.output {
        let pattern = out.to_str().filter(|p| p.contains("{}"));
        if selected.len() > 1 && pattern.is_none() {
            return Err(Failure::input(format!(
                "{who} has {count} filters ({}, 0 the oldest); the kernel runs them all and acts \
                 on the most restrictive answer. Pick one to write with --index N, or write \
                 each with a `{{}}` in the path for its index (-o 'f{{}}.bpf')",
                list(&filters)
            )));
        }
        // Every file is checked before the first is written, and a failure leaves none
        // behind (a pattern whose directory exists for some indexes only).
        let planned: Vec<(usize, &Program, PathBuf, Vec<u8>)> = selected
            .iter()
            .map(|&(i, f)| {
                let path = match pattern {
                    Some(p) => PathBuf::from(p.replace("{}", &i.to_string())),
                    None => out.clone(),
                };
                (i, f, path, f.to_raw_in(native_endian()))
            })
            .collect();
        let outputs: Vec<(&std::path::Path, &[u8])> = planned
            .iter()
            .map(|(_, _, path, bytes)| (path.as_path(), bytes.as_slice()))
            .collect();
        super::io::write_all_or_none(&outputs)?;
        for (i, f, path, _) in &planned {
            eprintln!(
                "secopt: {who}: filter index {i} of {count} ({}) -> {}",
                instructions(f),
                path.display()
            );
        }
        return Ok(EXIT_OK);
    }
    match args.format.unwrap_or_default() {
        Format::Json => {
            let filters: Vec<serde_json::Value> = selected
                .iter()
                .map(|&(i, f)| {
                    // `index` first, as docs/json.md lists the keys.
                    let mut doc = serde_json::json!({ "index": i });
                    if let (Some(doc), serde_json::Value::Object(program)) =
                        (doc.as_object_mut(), program_json(f))
                    {
                        doc.extend(program);
                    }
                    doc
                })
                .collect();
            print_json(&serde_json::json!({
                "pid": pid,
                "name": process_name(pid),
                "filter_count": count,
                "filters": filters,
                "notes": notes,
                "warnings": warning.iter().collect::<Vec<_>>(),
            }))?;
        }
        Format::Text => {
            if count > 1 {
                println!(
                    "; {who} has {count} filters, oldest first; the kernel runs them all on \
                     each system call and acts on the most restrictive answer"
                );
            }
            for (n, &(i, f)) in selected.iter().enumerate() {
                if n > 0 {
                    println!();
                }
                let age = match (i, count) {
                    (_, 1) => String::new(),
                    (0, _) => ", the oldest".to_string(),
                    (i, c) if i + 1 == c => ", the newest".to_string(),
                    _ => String::new(),
                };
                println!("; {who}, filter index {i}{age}: {}", instructions(f));
                print!("{}", assembly(f));
            }
        }
    }
    Ok(EXIT_OK)
}

fn assembly(f: &Program) -> String {
    disasm::disassemble(
        f,
        &disasm::DisasmOptions {
            index_comments: true,
            arch: None,
        },
    )
}

/// A program as JSON: its length, raw instructions and assembly.
/// `1 instruction`, `12 instructions`.
fn instructions(f: &Program) -> String {
    crate::bench::report::counted(f.len() as u64, "instruction", "instructions")
}

fn program_json(f: &Program) -> serde_json::Value {
    let insns: Vec<serde_json::Value> = f
        .insns
        .iter()
        .map(|n| serde_json::json!({"code": n.code, "jt": n.jt, "jf": n.jf, "k": n.k}))
        .collect();
    serde_json::json!({
        "length": f.len(),
        "instructions": insns,
        "assembly": assembly(f),
    })
}

fn native_endian() -> Endian {
    if cfg!(target_endian = "big") {
        Endian::Big
    } else {
        Endian::Little
    }
}

/// `--join`: the whole stack as one program ([`crate::bpf::stack::as_one_program`]; a lone
/// filter as it is), written raw with `-o` or listed.
fn write_joined(args: &DumpArgs, who: &str, filters: &[Program]) -> Result<i32, Failure> {
    let count = filters.len();
    let joined = if count == 1 {
        filters[0].clone()
    } else {
        crate::bpf::stack::as_one_program(filters).map_err(|e| {
            Failure::input(format!(
                "the {count} filters of {who} cannot be joined: {e}"
            ))
        })?
    };
    let what = if count == 1 {
        format!("its one filter ({})", instructions(&joined))
    } else {
        format!(
            "its {count} filters ({}) joined into one program of {} instructions",
            list(filters),
            joined.len()
        )
    };
    if let Some(out) = &args.output {
        write_output(out, &joined.to_raw_in(native_endian()))?;
        eprintln!("secopt: {who}: {what} -> {}", out.display());
        return Ok(EXIT_OK);
    }
    match args.format.unwrap_or_default() {
        Format::Json => print_json(&serde_json::json!({
            "pid": args.pid,
            "name": process_name(args.pid),
            "filter_count": count,
            "joined": program_json(&joined),
        }))?,
        Format::Text => {
            if count == 1 {
                println!("; {who}: {what}");
            } else {
                println!(
                    "; {who}: {what}, deciding every call as the kernel does with all of them"
                );
            }
            print!("{}", assembly(&joined));
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    /// The description is the subcommand's own, not the one-line summary in its place (a
    /// variant's doc comment overrode it, and `--help` never said that reading needs root).
    #[test]
    fn help_describes_what_reading_needs_and_does() {
        use clap::CommandFactory;
        let mut cli = super::super::Cli::command();
        let help = cli
            .find_subcommand_mut("dump")
            .unwrap()
            .render_long_help()
            .to_string();
        for says in ["needs root", "restart_syscall", "Filters are per thread"] {
            assert!(help.contains(says), "{says}: {help}");
        }
    }
}
