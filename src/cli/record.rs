//! `secopt record`: run a command under ptrace ([`crate::kernel::trace`]) and write the system
//! calls it made, per ABI and with a sample of argument values, as a workload file that
//! `secopt optimize --weights`, `secopt bench --workload` and `secopt analyze --workload` read
//! ([`crate::bench::workload`]).
//!
//! Argument samples: the tracer keeps, per `(arch, nr)`, the distinct values of the argument
//! bits chosen at the syscall's first call, and this module turns the most frequent patterns
//! into labelled entries (`ioctl(_, 0x5401)`), the rest into one `name(other)` entry without
//! arguments. Which bits:
//! - with `--filter F`: the arguments `F` reads a word of on some path (the whole argument,
//!   so that the file stays true for other filters), for the syscalls whose decision under
//!   `F` depends on arguments ([`crate::bpf::analysis`]), and nothing else;
//! - otherwise the arguments that are by their meaning a small set of codes — options,
//!   request codes, commands, flags, families ([`option_arguments`]). Counting distinct values
//!   alone cannot find them: registers past a syscall's arity, pointers and descriptors are
//!   just as constant in a loop as a flag is.

use super::io::{check_can_write, check_output_dir, display_name, write_output, InputFormat};
use super::Failure;
use crate::arch::{Arch, X32_SYSCALL_BIT};
use crate::bench::report::counted;
use crate::bpf::analysis::{Analyzer, Budget};
use crate::bpf::data::Endian;
use crate::bpf::Field;
use crate::kernel::trace::{self, Trace, TraceError, TraceOptions};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

/// How the workload is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RecordFormat {
    /// The JSON workload format, with argument samples.
    #[default]
    Json,
    /// An `strace -c`-style table of calls per syscall and ABI (no arguments).
    Strace,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt record -o ls.json -- ls -l /tmp          calls of ls, with option/flag samples\n  \
secopt record -o nginx.json --filter docker.bpf -- nginx -g 'daemon off;'\n      \
sample only the argument words docker.bpf decides on\n  \
secopt record --no-args --format strace -o make.txt -- make -j2\n  \
secopt optimize docker.bpf --weights ls.json -o fast.bpf\n  \
secopt bench --profile docker-default.json --workload ls.json\n  \
secopt record --pid 4242 --duration 10 -o srv.json   attach to a running process for 10 s\n\n\
The command runs under ptrace with all its threads and children (like strace -f); calls \
through the i386 (int $0x80) and x32 entries are counted separately, as a seccomp filter sees \
them. The calls secopt makes to start the command are not counted, its execve is. With --pid, \
secopt attaches to every thread of a running process (and follows the children it starts), \
records until --duration has passed, Ctrl-C (SIGINT), SIGTERM or the process ends, then \
detaches and leaves it running.\n\n\
Exit status: the command's own (128 + N when a signal N killed it), after the workload is \
written (0 with --pid); 2 when the command cannot be found or run, the process cannot be \
traced, or for a bad option or filter.")]
pub struct RecordArgs {
    /// Write the workload here (`-`: stdout). The command's own output also goes to stdout, so
    /// prefer a file when it prints anything.
    #[arg(
        short = 'o',
        long,
        value_name = "FILE",
        default_value = "-",
        value_parser = super::io::output_path
    )]
    pub output: PathBuf,
    /// `json` (a workload with argument samples) or `strace` (a `strace -c`-style table).
    #[arg(long, value_enum, default_value_t = RecordFormat::Json)]
    pub format: RecordFormat,
    /// Sample arguments as this filter (raw cBPF, assembly, a JSON filter document or
    /// `FILE:THREAD`) needs them: only for syscalls whose decision under it depends on
    /// arguments, and only the arguments it reads (each whole, also when it reads one half).
    #[arg(long, value_name = "FILTER")]
    pub filter: Option<PathBuf>,
    /// How the --filter file is encoded.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto, requires = "filter")]
    pub filter_format: InputFormat,
    /// Record counts only, no argument samples.
    #[arg(long, conflicts_with = "filter")]
    pub no_args: bool,
    /// Most argument patterns listed per syscall; the rest are merged into `NAME(other)`.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub max_patterns: u16,
    /// No summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Record a running process instead of starting a command: every thread of process PID
    /// (and the children it starts while recorded). Needs the right to ptrace it (root, or
    /// the same user where kernel.yama.ptrace_scope allows).
    #[arg(
        long,
        value_name = "PID",
        conflicts_with = "command",
        value_parser = super::parse_pid,
        allow_negative_numbers = true
    )]
    pub pid: Option<i32>,
    /// With --pid: stop recording after this many seconds (fractions allowed). Without it,
    /// recording lasts until Ctrl-C, SIGTERM, SIGHUP, or the process ends.
    // `run` refuses it without --pid: `requires = "pid"` did not hold here, next to the
    // trailing command.
    #[arg(long, value_name = "SECONDS", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// The command and its arguments (after `--`).
    #[arg(
        required_unless_present = "pid",
        trailing_var_arg = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

/// `--duration`: a time limit as `verify --timeout` takes one ([`super::parse_time_limit`]),
/// but not 0 (a trace of no time at all).
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let positive = || format!("`{s}`: give a positive number of seconds");
    // Its errors, but for the lower bound: 0 is no limit there, and no time here.
    let secs = super::parse_time_limit(s).map_err(|e| {
        if s.trim().starts_with('-') || e.contains("from 0") {
            positive()
        } else {
            e
        }
    })?;
    if secs == 0.0 {
        return Err(positive());
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Distinct argument tuples kept per syscall while tracing.
const MAX_SAMPLES: usize = 4096;

/// The arguments of syscall `name` on `arch` that are, by their meaning, one of a small set of
/// codes: options, request codes, commands, flags, address families, `how`/`which`/`whence`
/// selectors, signal numbers. These are what seccomp profiles condition on (Docker's
/// `clone`/`personality`/`socket` rules, Firecracker's `ioctl`/`fcntl`/`futex`/`mmap` ones).
/// Positions from the syscalls' man pages and the kernel's `SYSCALL_DEFINE`s.
pub fn option_arguments(arch: Arch, name: &str) -> &'static [usize] {
    // Where an ABI lays the arguments out differently from the generic signature.
    match (arch, name) {
        // i386's `mmap` is old_mmap(struct mmap_arg_struct *).
        (Arch::X86, "mmap") => return &[],
        // 64-bit offsets and lengths take two registers each on i386.
        (Arch::X86, "fadvise64") => return &[4],
        (Arch::X86, "fadvise64_64" | "sync_file_range") => return &[5],
        // s390's clone takes the stack first.
        (Arch::S390x, "clone") => return &[1],
        _ => {}
    }
    OPTION_ARGUMENTS
        .binary_search_by_key(&name, |&(n, _)| n)
        .map_or(&[], |i| OPTION_ARGUMENTS[i].1)
}

/// Sorted by name (checked by a test).
const OPTION_ARGUMENTS: &[(&str, &[usize])] = &[
    ("_llseek", &[4]),
    ("accept4", &[3]),
    ("access", &[1]),
    ("arch_prctl", &[0]),
    ("bpf", &[0]),
    ("clock_getres", &[0]),
    ("clock_getres_time64", &[0]),
    ("clock_gettime", &[0]),
    ("clock_gettime64", &[0]),
    ("clock_nanosleep", &[0, 1]),
    ("clock_nanosleep_time64", &[0, 1]),
    ("clone", &[0]),
    ("close_range", &[2]),
    ("dup3", &[2]),
    ("epoll_create1", &[0]),
    ("epoll_ctl", &[1]),
    ("eventfd2", &[1]),
    ("execveat", &[4]),
    ("faccessat", &[2]),
    ("faccessat2", &[2, 3]),
    ("fadvise64", &[3]),
    ("fallocate", &[1]),
    ("fanotify_init", &[0, 1]),
    ("fanotify_mark", &[1]),
    ("fchmodat2", &[3]),
    ("fchownat", &[4]),
    ("fcntl", &[1]),
    ("fcntl64", &[1]),
    ("flock", &[1]),
    ("fsconfig", &[1]),
    ("fsmount", &[1, 2]),
    ("fsopen", &[1]),
    ("fspick", &[2]),
    ("fstatat64", &[3]),
    ("futex", &[1]),
    ("futex_time64", &[1]),
    ("futex_waitv", &[2]),
    ("get_mempolicy", &[4]),
    ("getitimer", &[0]),
    ("getpriority", &[0]),
    ("getrandom", &[2]),
    ("getrlimit", &[0]),
    ("getrusage", &[0]),
    ("getsockopt", &[1, 2]),
    ("inotify_add_watch", &[2]),
    ("inotify_init1", &[0]),
    ("io_uring_enter", &[3]),
    ("io_uring_register", &[1]),
    ("ioctl", &[1]),
    ("ioprio_get", &[0]),
    ("ioprio_set", &[0]),
    ("ipc", &[0]),
    ("kcmp", &[2]),
    ("keyctl", &[0]),
    ("kill", &[1]),
    ("landlock_add_rule", &[1]),
    ("landlock_create_ruleset", &[2]),
    ("landlock_restrict_self", &[1]),
    ("linkat", &[4]),
    ("lseek", &[2]),
    ("madvise", &[2]),
    ("mbind", &[2, 5]),
    ("membarrier", &[0, 1]),
    ("memfd_create", &[1]),
    ("mlock2", &[2]),
    ("mlockall", &[0]),
    ("mmap", &[2, 3]),
    ("mmap2", &[2, 3]),
    ("modify_ldt", &[0]),
    ("mount", &[3]),
    ("mount_setattr", &[2]),
    ("move_mount", &[4]),
    ("mprotect", &[2]),
    ("mremap", &[3]),
    ("msgctl", &[1]),
    ("msgget", &[1]),
    ("msync", &[2]),
    ("name_to_handle_at", &[4]),
    ("newfstatat", &[3]),
    ("open", &[1]),
    ("open_by_handle_at", &[2]),
    ("open_tree", &[2]),
    ("openat", &[2]),
    ("perf_event_open", &[4]),
    ("personality", &[0]),
    ("pidfd_open", &[1]),
    ("pidfd_send_signal", &[1, 3]),
    ("pipe2", &[1]),
    ("pkey_mprotect", &[2]),
    ("prctl", &[0]),
    ("preadv2", &[5]),
    ("prlimit64", &[1]),
    ("process_madvise", &[3]),
    ("ptrace", &[0]),
    ("pwritev2", &[5]),
    ("quotactl", &[0]),
    ("quotactl_fd", &[1]),
    ("reboot", &[2]),
    ("recvfrom", &[3]),
    ("recvmmsg", &[3]),
    ("recvmmsg_time64", &[3]),
    ("recvmsg", &[2]),
    ("renameat2", &[4]),
    ("rseq", &[2]),
    ("rt_sigaction", &[0]),
    ("rt_sigprocmask", &[0]),
    ("rt_sigqueueinfo", &[1]),
    ("rt_tgsigqueueinfo", &[2]),
    ("sched_setscheduler", &[1]),
    ("seccomp", &[0, 1]),
    ("semctl", &[2]),
    ("semget", &[2]),
    ("sendmmsg", &[3]),
    ("sendmsg", &[2]),
    ("sendto", &[3]),
    ("setitimer", &[0]),
    ("setns", &[1]),
    ("setpriority", &[0]),
    ("setrlimit", &[0]),
    ("setsockopt", &[1, 2]),
    ("shmctl", &[1]),
    ("shmget", &[2]),
    ("shutdown", &[1]),
    ("sigaction", &[0]),
    ("signal", &[0]),
    ("signalfd4", &[3]),
    ("sigprocmask", &[0]),
    ("socket", &[0, 1, 2]),
    ("socketcall", &[0]),
    ("socketpair", &[0, 1, 2]),
    ("splice", &[5]),
    ("statx", &[2]),
    ("sync_file_range", &[3]),
    ("syslog", &[0]),
    ("tee", &[3]),
    ("tgkill", &[2]),
    ("timer_create", &[0]),
    ("timerfd_create", &[0, 1]),
    ("tkill", &[1]),
    ("ugetrlimit", &[0]),
    ("umount2", &[1]),
    ("unlinkat", &[2]),
    ("unshare", &[0]),
    ("userfaultfd", &[0]),
    ("utimensat", &[3]),
    ("vmsplice", &[3]),
    ("wait4", &[2]),
    ("waitid", &[0, 3]),
    ("waitpid", &[2]),
];

/// The bits of an argument `arch` passes: 32-bit ABIs (and x32, whose `long` is 32 bits) pass
/// 32-bit values, and the upper halves of the registers are whatever the caller left there.
fn argument_width(arch: Arch) -> u64 {
    if arch.is_64bit() && arch != Arch::X32 {
        u64::MAX
    } else {
        0xffff_ffff
    }
}

/// Which argument bits to sample.
enum Sampling<'p> {
    /// None (`--no-args`).
    Off,
    /// [`option_arguments`].
    Options,
    /// The words a filter reads where its decision depends on them.
    Filter(Analyzer<'p>),
}

impl Sampling<'_> {
    fn masks(&self, token: u32, nr: u32) -> [u64; 6] {
        let mut masks = [0u64; 6];
        match self {
            Sampling::Off => {}
            Sampling::Options => {
                let Some(arch) = Arch::of_data(token, nr) else {
                    return masks;
                };
                let Some(name) = arch.syscalls().name(nr) else {
                    return masks;
                };
                for &i in option_arguments(arch, name) {
                    masks[i] = argument_width(arch);
                }
            }
            Sampling::Filter(analyzer) => {
                let paths = analyzer.syscall(token, nr, &Budget::default());
                if !paths.depends_on_args {
                    return masks;
                }
                // The whole argument, when the filter reads either half: the file has no way
                // to say "high half not sampled", and a zero written there would be taken
                // for the value by anyone reading the file for another filter. All 64 bits
                // of what the kernel hands filters (a 32-bit ABI's are zero-extended; x32's
                // registers are 64 bits wide, and a filter may read their high halves).
                for field in paths.argument_fields_read(Endian::of_arch_token(token)) {
                    if let Field::Arg { index, .. } = field {
                        masks[usize::from(index)] = u64::MAX;
                    }
                }
            }
        }
        masks
    }

    fn describe(&self, filter: Option<&str>) -> String {
        match self {
            Sampling::Off => "none (--no-args)".into(),
            Sampling::Options => "option, request, command, flag and family arguments (docs/record.md); other positions are null".into(),
            Sampling::Filter(_) => format!(
                "the arguments {} reads a word of, whole, for the syscalls whose decision under it depends on arguments; other positions are null",
                filter.unwrap_or("the filter")
            ),
        }
    }
}

/// One line of the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    label: String,
    /// The kernel's name, or strace's `syscall_0x1b6` for numbers no table names.
    syscall: String,
    arch: Arch,
    nr: u32,
    count: u64,
    args: [Option<u64>; 6],
}

/// The name a workload gives `nr` on `arch`: the table's, else strace's `syscall_0x…` (without
/// the x32 bit, as strace prints it and the workload reader expects).
fn syscall_name(arch: Arch, nr: u32) -> String {
    match arch.syscalls().name(nr) {
        Some(n) => n.to_string(),
        None if arch == Arch::X32 => format!("syscall_{:#x}", nr & !X32_SYSCALL_BIT),
        None => format!("syscall_{nr:#x}"),
    }
}

fn arch_suffix(arch: Arch, native: Arch) -> String {
    if arch == native {
        String::new()
    } else {
        format!("/{arch}")
    }
}

/// `name(_, 0x5401)`: the sampled positions up to the last one, `_` for the others.
fn pattern_label(name: &str, args: &[Option<u64>; 6]) -> String {
    let last = args.iter().rposition(Option::is_some).unwrap_or(0);
    let shown: Vec<String> = args[..=last]
        .iter()
        .map(|a| a.map_or_else(|| "_".to_string(), |v| format!("{v:#x}")))
        .collect();
    format!("{name}({})", shown.join(", "))
}

/// Turns a trace into workload entries, most frequent first; notes say what was left out.
fn entries_of(trace: &Trace, native: Arch, max_patterns: usize) -> (Vec<Entry>, Vec<String>) {
    let mut entries = Vec::new();
    let mut notes = Vec::new();
    let mut unknown_tokens: BTreeMap<u32, u64> = BTreeMap::new();
    for (&(token, nr), counts) in &trace.calls {
        let Some(arch) = Arch::of_data(token, nr) else {
            *unknown_tokens.entry(token).or_default() += counts.count;
            continue;
        };
        let name = syscall_name(arch, nr);
        let suffix = arch_suffix(arch, native);
        let mut patterns: Vec<(&[u64; 6], u64)> =
            counts.samples.iter().map(|(t, &n)| (t, n)).collect();
        if counts.masks == [0; 6] || patterns.is_empty() {
            entries.push(Entry {
                label: format!("{name}{suffix}"),
                syscall: name,
                arch,
                nr,
                count: counts.count,
                args: [None; 6],
            });
            continue;
        }
        patterns.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let kept = patterns.len().min(max_patterns);
        let mut rest = counts.unsampled;
        for &(_, n) in &patterns[kept..] {
            rest += n;
        }
        for &(tuple, n) in &patterns[..kept] {
            let mut args = [None; 6];
            for (i, a) in args.iter_mut().enumerate() {
                if counts.masks[i] != 0 {
                    *a = Some(tuple[i]);
                }
            }
            entries.push(Entry {
                label: format!("{}{suffix}", pattern_label(&name, &args)),
                syscall: name.clone(),
                arch,
                nr,
                count: n,
                args,
            });
        }
        if rest > 0 {
            entries.push(Entry {
                label: format!("{name}(other){suffix}"),
                syscall: name.clone(),
                arch,
                nr,
                count: rest,
                args: [None; 6],
            });
            notes.push(format!(
                "{name}{suffix}: the {rest} calls outside the {kept} most frequent of {}{} argument patterns are listed as {name}(other){suffix}",
                patterns.len(),
                if counts.unsampled > 0 { "+" } else { "" },
            ));
        }
    }
    for (token, n) in unknown_tokens {
        notes.push(format!(
            "skipped {n} calls with arch token {token:#010x}, an ABI secopt does not know"
        ));
    }
    entries.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(a.arch.cmp(&b.arch))
            .then(a.nr.cmp(&b.nr))
            .then(a.label.cmp(&b.label))
    });
    notes.sort();
    (entries, notes)
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (bench's report writes the same date
/// with a space and no zone).
fn iso_date(secs: u64) -> String {
    format!(
        "{}Z",
        crate::bench::report::utc_timestamp(secs).replacen(' ', "T", 1)
    )
}

/// What the JSON header says about the run.
struct Meta<'a> {
    command: &'a [OsString],
    date: String,
    end: trace::End,
    total: u64,
    tasks: u64,
    sampling: String,
    notes: &'a [String],
}

/// The workload as JSON, keys in count order, one entry per line.
fn render_json(entries: &[Entry], native: Arch, meta: &Meta<'_>) -> String {
    let mut lines = vec![
        format!(
            "  \"$comment\": {}",
            json_string(
                "secopt record: system calls per ABI, most frequent first; keys are labels, objects give \"syscall\", \"arch\" (when not the native ABI), \"count\" and sampled \"args\" (see docs/record.md)"
            )
        ),
        format!(
            "  \"$command\": [{}]",
            meta.command
                .iter()
                .map(|a| json_string(&a.to_string_lossy()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!("  \"$date\": {}", json_string(&meta.date)),
        format!("  \"$native\": {}", json_string(native.name())),
        format!("  \"$exit\": {}", json_string(&meta.end.to_string())),
        format!("  \"$total_calls\": {}", meta.total),
        format!("  \"$tasks\": {}", meta.tasks),
        format!("  \"$args\": {}", json_string(&meta.sampling)),
    ];
    if !meta.notes.is_empty() {
        lines.push(format!(
            "  \"$notes\": [{}]",
            meta.notes
                .iter()
                .map(|n| json_string(n))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for e in entries {
        let member = crate::bench::workload::json_member(
            &e.label, &e.syscall, e.arch, native, e.count, &e.args,
        );
        lines.push(format!("  {member}"));
    }
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

/// How strace's summary heads the section of `arch`, if the workload reader knows it.
fn strace_section(arch: Arch, native: Arch) -> Option<&'static str> {
    match (native, arch) {
        (n, a) if n == a => Some(""),
        (Arch::X86_64, Arch::X86) | (Arch::Aarch64, Arch::Arm) | (Arch::Ppc64, Arch::Ppc) => {
            Some("System call usage summary for 32 bit mode:\n")
        }
        (Arch::X86_64, Arch::X32) => Some("System call usage summary for x32 mode:\n"),
        _ => None,
    }
}

/// An `strace -c`-style table (calls column only), one section per ABI, native first.
fn render_strace(entries: &[Entry], native: Arch, notes: &mut Vec<String>) -> String {
    let mut per_arch: BTreeMap<(bool, Arch), BTreeMap<&str, u64>> = BTreeMap::new();
    for e in entries {
        *per_arch
            .entry((e.arch != native, e.arch))
            .or_default()
            .entry(e.syscall.as_str())
            .or_default() += e.count;
    }
    let rule = "--------- ----------------\n";
    let mut out = String::new();
    for ((_, arch), calls) in per_arch {
        let Some(heading) = strace_section(arch, native) else {
            notes.push(format!(
                "{arch} calls left out: an strace table has no section for them beside {native}"
            ));
            continue;
        };
        let mut rows: Vec<(&str, u64)> = calls.into_iter().collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out += heading;
        out += "    calls syscall\n";
        out += rule;
        for (name, n) in &rows {
            out += &format!("{n:>9} {name}\n");
        }
        out += rule;
        out += &format!("{:>9} total\n", rows.iter().map(|r| r.1).sum::<u64>());
    }
    out
}

/// The stderr summary: totals, syscalls per ABI, the top five.
fn summary(trace: &Trace, entries: &[Entry], native: Arch) -> String {
    let total = trace.total_calls();
    let mut per_arch: BTreeMap<Arch, BTreeMap<&str, u64>> = BTreeMap::new();
    for e in entries {
        *per_arch
            .entry(e.arch)
            .or_default()
            .entry(e.syscall.as_str())
            .or_default() += e.count;
    }
    let abis: Vec<String> = per_arch
        .iter()
        .map(|(a, calls)| {
            format!(
                "{a}: {} syscall{}",
                calls.len(),
                if calls.len() == 1 { "" } else { "s" }
            )
        })
        .collect();
    let mut top: Vec<(String, u64)> = per_arch
        .iter()
        .flat_map(|(a, calls)| {
            calls
                .iter()
                .map(move |(n, c)| (format!("{n}{}", arch_suffix(*a, native)), *c))
        })
        .collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let top: Vec<String> = top
        .iter()
        .take(5)
        .map(|(n, c)| format!("{n} {c} ({:.1}%)", 100.0 * *c as f64 / total.max(1) as f64))
        .collect();
    format!(
        "secopt record: {} from {} ({}); the {} {}\n  most frequent: {}",
        counted(total, "system call", "system calls"),
        counted(trace.tasks, "task", "tasks"),
        if abis.is_empty() {
            "none".to_string()
        } else {
            abis.join(", ")
        },
        if matches!(trace.end, trace::End::Detached) {
            "process"
        } else {
            "command"
        },
        trace.end,
        if top.is_empty() {
            "-".to_string()
        } else {
            top.join(", ")
        }
    )
}

/// What a workload misses when the command started tasks with `CLONE_UNTRACED`: no tracer
/// follows them (strace neither), so their calls are not counted.
fn untraced_note(children: u64) -> Option<String> {
    let n = children;
    (n > 0).then(|| {
        format!(
            "the command started {n} process{} or thread{} with CLONE_UNTRACED, which no \
             tracer follows: {} calls are not counted here",
            if n == 1 { "" } else { "es" },
            if n == 1 { "" } else { "s" },
            if n == 1 { "its" } else { "their" },
        )
    })
}

pub fn run(args: RecordArgs) -> Result<i32, Failure> {
    if args.duration.is_some() && args.pid.is_none() {
        return Err(Failure::input(
            "--duration is for --pid: a command is recorded until it ends",
        ));
    }
    check_output_dir(&args.output)?;
    let native = Arch::host()
        .ok_or_else(|| Failure::input("secopt record does not know this host's architecture"))?;
    let program;
    let filter_name = args.filter.as_deref().map(display_name);
    let sampling = match &args.filter {
        Some(path) => {
            program =
                super::io::load_program_with_flag(path, args.filter_format, "--filter-format")?;
            let analyzer = Analyzer::new(&program).map_err(|e| {
                Failure::input(format!("{}: {e}", filter_name.as_deref().unwrap_or("")))
            })?;
            Sampling::Filter(analyzer)
        }
        None if args.no_args => Sampling::Off,
        None => Sampling::Options,
    };
    // Before the command runs (its effects cannot be undone) or hours of a process are
    // recorded: an output that cannot be written is said now, not after.
    check_can_write(&args.output)?;
    let mut masks = |token: u32, nr: u32| sampling.masks(token, nr);
    // Attaching to a running process: say so once every thread is attached (a process that
    // cannot be attached gets the error alone).
    let mut announce = |threads: usize| {
        if let (Some(pid), false) = (args.pid, args.quiet) {
            eprintln!(
                "secopt: recording process {pid} ({}, {} thread{}) {}",
                super::dump::process_name(pid),
                threads,
                if threads == 1 { "" } else { "s" },
                match args.duration {
                    Some(d) => format!("for {} s", d.as_secs_f64()),
                    None => "until Ctrl-C (SIGINT), SIGTERM or SIGHUP".to_string(),
                }
            );
        }
    };
    let mut options = TraceOptions {
        max_samples: MAX_SAMPLES,
        arg_masks: &mut masks,
        on_syscall: None,
    };
    // The process's own command line stands for the command when attaching (read
    // before: it may end while recorded).
    let command: Vec<OsString> = match args.pid {
        Some(pid) => std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| {
                b.split(|&c| c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| OsString::from(String::from_utf8_lossy(a).into_owned()))
                    .collect()
            })
            .unwrap_or_default(),
        None => args.command.clone(),
    };
    let traced = match args.pid {
        Some(pid) => trace::trace_process(pid, args.duration, &mut options, Some(&mut announce)),
        None => trace::trace_command(
            &args.command,
            &mut options,
            trace::CommandOptions {
                forward_signals: true,
                ..Default::default()
            },
        ),
    };
    let trace = traced.map_err(|e| match e {
        TraceError::NoCommand => {
            Failure::input("no command given (secopt record [OPTIONS] -- COMMAND [ARGS...])")
        }
        other => Failure::input(format!("record: {other}")),
    })?;

    let (entries, mut notes) = entries_of(&trace, native, usize::from(args.max_patterns));
    if let Some(note) = untraced_note(trace.untraced_children) {
        notes.push(note);
    }
    let text = match args.format {
        RecordFormat::Json => {
            let date = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let meta = Meta {
                command: &command,
                date: iso_date(date),
                end: trace.end,
                total: trace.total_calls(),
                tasks: trace.tasks,
                sampling: sampling.describe(filter_name.as_deref()),
                notes: &notes,
            };
            render_json(&entries, native, &meta)
        }
        RecordFormat::Strace => render_strace(&entries, native, &mut notes),
    };
    write_output(&args.output, text.as_bytes())?;
    if !args.quiet {
        if args.format == RecordFormat::Strace {
            for n in &notes {
                eprintln!("secopt: note: {n}");
            }
        }
        eprintln!("{}", summary(&trace, &entries, native));
    }
    // A process attached to was not started here: its exit is not this command's outcome.
    Ok(if args.pid.is_some() {
        super::EXIT_OK
    } else {
        trace.end.shell_status()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::workload::{parse_file, WorkloadOptions};
    use crate::kernel::trace::{End, Exit, SyscallCounts};
    use std::collections::HashMap;

    const X86_64: u32 = 0xc000_003e;
    const I386: u32 = 0x4000_0003;

    fn counts(count: u64, masks: [u64; 6], samples: &[([u64; 6], u64)]) -> SyscallCounts {
        SyscallCounts {
            count,
            masks,
            samples: samples.iter().copied().collect(),
            unsampled: count - samples.iter().map(|s| s.1).sum::<u64>(),
        }
    }

    /// A trace as the tracer would return it: getppid, two ioctl requests, i386 getpid, an
    /// x32 call, one number no table names, and an unknown arch token.
    fn example() -> Trace {
        let m1 = [0, u64::MAX, 0, 0, 0, 0];
        let mut calls = HashMap::new();
        calls.insert((X86_64, 110), counts(1000, [0; 6], &[]));
        calls.insert(
            (X86_64, 16),
            counts(
                95,
                m1,
                &[([0, 0x5401, 0, 0, 0, 0], 90), ([0, 0x541b, 0, 0, 0, 0], 4)],
            ),
        );
        calls.insert((I386, 20), counts(3, [0; 6], &[]));
        calls.insert((X86_64, 0x4000_0027), counts(2, [0; 6], &[]));
        calls.insert((X86_64, 1000), counts(1, [0; 6], &[]));
        calls.insert((0x1234, 1), counts(7, [0; 6], &[]));
        Trace {
            calls,
            end: End::Exited(Exit::Code(0)),
            tasks: 1,
            left_running: 0,
            untraced_children: 0,
        }
    }

    #[test]
    fn entries_round_trip_through_the_workload_reader() {
        let trace = example();
        let (entries, notes) = entries_of(&trace, Arch::X86_64, 16);
        let labels: Vec<&str> = entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "getppid",
                "ioctl(_, 0x5401)",
                "ioctl(_, 0x541b)",
                "getpid/x86",
                "getpid/x32",
                "ioctl(other)",
                "syscall_0x3e8"
            ]
        );
        assert!(notes.iter().any(|n| n.contains("0x00001234")), "{notes:?}");
        let meta = Meta {
            command: &[OsString::from("prog")],
            date: iso_date(0),
            end: trace.end,
            total: trace.total_calls(),
            tasks: 1,
            sampling: "test".into(),
            notes: &notes,
        };
        let text = render_json(&entries, Arch::X86_64, &meta);
        let opts = WorkloadOptions {
            native: Arch::X86_64,
            skip_unknown: false,
        };
        let w = parse_file(text.as_bytes(), "rec.json", &opts).unwrap();
        let got: Vec<(Arch, u32, u64, Option<u64>)> = w
            .entries
            .iter()
            .map(|e| (e.arch, e.nr, e.count, e.args[1]))
            .collect();
        // getppid 110, ioctl 16 on x86_64; getpid 20 on i386; x32 getpid 39 | bit 30.
        assert_eq!(
            got,
            [
                (Arch::X86_64, 110, 1000, None),
                (Arch::X86_64, 16, 90, Some(0x5401)),
                (Arch::X86_64, 16, 4, Some(0x541b)),
                (Arch::X86, 20, 3, None),
                (Arch::X32, 0x4000_0027, 2, None),
                (Arch::X86_64, 16, 1, None),
                (Arch::X86_64, 1000, 1, None),
            ]
        );
        let strace = render_strace(&entries, Arch::X86_64, &mut Vec::new());
        let w = parse_file(strace.as_bytes(), "rec.txt", &opts).unwrap();
        assert!(w.notes.is_empty(), "{:?}", w.notes);
        let got: Vec<(Arch, u32, u64)> =
            w.entries.iter().map(|e| (e.arch, e.nr, e.count)).collect();
        assert_eq!(
            got,
            [
                (Arch::X86_64, 110, 1000),
                (Arch::X86_64, 16, 95),
                (Arch::X86_64, 1000, 1),
                (Arch::X86, 20, 3),
                (Arch::X32, 0x4000_0027, 2),
            ]
        );
    }

    #[test]
    fn patterns_past_the_cap_are_merged() {
        let trace = example();
        let (entries, _) = entries_of(&trace, Arch::X86_64, 1);
        let ioctl: Vec<(&str, u64)> = entries
            .iter()
            .filter(|e| e.syscall == "ioctl")
            .map(|e| (e.label.as_str(), e.count))
            .collect();
        assert_eq!(ioctl, [("ioctl(_, 0x5401)", 90), ("ioctl(other)", 5)]);
    }

    #[test]
    fn option_table_is_sorted_and_names_real_syscalls() {
        for w in OPTION_ARGUMENTS.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
        for (name, positions) in OPTION_ARGUMENTS {
            assert!(
                [Arch::X86_64, Arch::X86, Arch::Aarch64]
                    .iter()
                    .any(|a| a.syscalls().nr(name).is_some()),
                "{name} is no syscall"
            );
            assert!(positions.iter().all(|&p| p < 6), "{name}");
        }
        // ioctl(fd, request, arg); prctl(option, ...); socket(domain, type, protocol).
        assert_eq!(option_arguments(Arch::X86_64, "ioctl"), [1]);
        assert_eq!(option_arguments(Arch::X86_64, "prctl"), [0]);
        assert_eq!(option_arguments(Arch::X86_64, "socket"), [0, 1, 2]);
        assert!(option_arguments(Arch::X86, "mmap").is_empty());
        assert!(option_arguments(Arch::X86_64, "read").is_empty());
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(iso_date(0), "1970-01-01T00:00:00Z");
        // 2000-02-29 12:34:56 UTC = 951827696 (a leap day in a century leap year).
        assert_eq!(iso_date(951_827_696), "2000-02-29T12:34:56Z");
        // 2024-12-31 23:59:59 UTC = 1735689599.
        assert_eq!(iso_date(1_735_689_599), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn durations_say_which_bound_they_miss() {
        assert_eq!(parse_duration("1.5").unwrap().as_millis(), 1500);
        for (s, says) in [
            ("0", "positive"),
            ("-3", "positive"),
            ("soon", "not a number"),
            ("1e30", "more seconds than a time limit can hold"),
            (
                "18446744073709551615",
                "more seconds than a time limit can hold",
            ),
        ] {
            let e = parse_duration(s).unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
        // The bound the message gives is itself taken.
        let e = parse_duration("1e30").unwrap_err();
        let most = e.rsplit("at most ").next().unwrap().trim_end_matches(')');
        assert!(parse_duration(most).is_ok(), "{e}");
    }

    #[test]
    fn filter_sampling_takes_the_words_the_filter_reads() {
        // ioctl: ALLOW only request 0x5401 (args[1].lo); everything else ALLOW.
        let prog = crate::bpf::asm::assemble(
            "ld [nr]\njeq #16, next, allow\nld [args[1].lo]\njeq #0x5401, allow\nret ERRNO(1)\nallow: ret ALLOW\n",
        )
        .unwrap();
        let s = Sampling::Filter(Analyzer::new(&prog).unwrap());
        assert_eq!(s.masks(X86_64, 16), [0, u64::MAX, 0, 0, 0, 0]);
        assert_eq!(s.masks(X86_64, 0), [0; 6]);
        assert_eq!(
            Sampling::Options.masks(X86_64, 16),
            [0, u64::MAX, 0, 0, 0, 0]
        );
        // i386 ioctl is 54; its arguments are 32 bits wide.
        assert_eq!(
            Sampling::Options.masks(I386, 54),
            [0, 0xffff_ffff, 0, 0, 0, 0]
        );
        assert_eq!(Sampling::Off.masks(X86_64, 16), [0; 6]);
    }
}
