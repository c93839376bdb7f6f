//! `secopt exec --denials`: which calls of a command the filter did not allow.
//!
//! The command runs under ptrace ([`crate::kernel::trace`]) with the filters installed by its
//! own process just before its `execve`, exactly as plain `exec` installs them. A ptrace
//! syscall-entry stop comes *before* seccomp runs, so at each entry the tracer sees the very
//! `seccomp_data` the kernel is about to give the filters: [`Collector`] runs the stack on it
//! with secopt's interpreter (the one the kernel-oracle tests hold to the kernel's answers)
//! and keeps every call whose answer is not `ALLOW`, counted per syscall and answer, with a
//! few distinct argument tuples.
//!
//! The kernel checks the prediction where it can: an `ERRNO(e)` answer (and `TRACE`, which
//! without a tracer asking for seccomp events is `ENOSYS`) must come back from the call as
//! `-e`. Each such answer is counted as confirmed or contradicted; a contradiction means the
//! kernel decided otherwise, which happens when the command installs a filter of its own
//! (noted) — or would show a bug here.
//!
//! Worked example: a profile whose default is `ERRNO(1)` and which allows what `sh` needs
//! but not `mkdir`. `secopt exec -p p.json --denials -- sh -c 'mkdir /tmp/x; echo $?'`
//! prints the command's `mkdir: … Operation not permitted` and `1`, then:
//!
//! ```text
//! secopt: p.json did not allow 1 of 353 calls (1 syscall); the command exited with status 0
//!   calls  syscall         answer          rules naming it  arguments
//!       1  mkdir (x86_64)  ERRNO(1) EPERM  none             any (the answer does not depend on them)
//! secopt: the kernel's return values confirm 1 of 1 errno answers
//! ```
//!
//! `none`: no rule names `mkdir`, so the default action answered it; `any`: no argument
//! value would change that answer. A rule the profile's `includes`/`excludes` left out for
//! this container is listed after the rules that apply, with why: Docker's profile run with
//! `-- unshare -m true` gives `unshare`'s row `none; not applied: $.syscalls[17]: needs
//! CAP_SYS_ADMIN (includes.caps)`, and a hint to pass `--caps` if the container will have it.

use super::verify::data_json;
use crate::arch::Arch;
use crate::bpf::action::Action;
use crate::bpf::analysis::{Analyzer, Budget};
use crate::bpf::data::Endian;
use crate::bpf::Field;
use crate::bpf::{stack, Program, RetVal, SeccompData};
use crate::kernel::trace::{End, SyscallStop};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

impl Dependence {
    /// The words of `data` the answer depends on, the others zeroed: the six arguments (all
    /// of them when not known), then the instruction pointer. A fixed array, so that the
    /// comparison with each sample, made on every refused call, allocates nothing.
    fn words_of(&self, data: &SeccompData) -> [u64; 7] {
        let mut words = [0; 7];
        match self {
            Dependence::Unknown => words[..6].copy_from_slice(&data.args),
            Dependence::None => {}
            Dependence::On { args, ip, .. } => {
                for (&i, &mask) in args {
                    words[usize::from(i)] = data.args[usize::from(i)] & mask;
                }
                if *ip {
                    words[6] = data.instruction_pointer;
                }
            }
        }
        words
    }
}

/// The largest errno a call returns (`MAX_ERRNO`, include/linux/err.h): the kernel answers
/// `ERRNO(n)` with `-min(n, 4095)`.
const MAX_ERRNO: u16 = 4095;

/// Distinct argument tuples kept per syscall and answer.
const SAMPLES: usize = 3;

/// What the filters answered one syscall (per arch token, number and answer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Denial {
    pub count: u64,
    /// Calls whose return value the kernel's answer shows (ERRNO, TRACE) and matched.
    pub confirmed: u64,
    /// Such calls that returned something else.
    pub contradicted: u64,
    /// Up to [`SAMPLES`] calls (thread id and input), the first ones seen that differ in
    /// the words the answer depends on (one, when it depends on none).
    pub samples: Vec<(libc::pid_t, SeccompData)>,
    /// Whether calls differing from every sample in those words were left out.
    pub more: bool,
    /// When the first of these calls came, counting every call traced (for the order of the
    /// report: the first refusal is often what made the command fail).
    pub first: u64,
    /// What the answer for this syscall depends on, over all its arguments.
    pub depends: Dependence,
}

/// Whether a syscall's answer depends on its arguments, and on which (from
/// [`crate::bpf::analysis`], over every filter of the stack).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum Dependence {
    /// Not worked out (the analysis could not be set up).
    #[default]
    Unknown,
    /// The same answer whatever the arguments and instruction pointer.
    None,
    /// The answer may change with these arguments (`args` indexes) and the instruction
    /// pointer (`ip`); `exact` false when the analysis ran out of budget and these are the
    /// words read on some path.
    On {
        /// Per argument index, the bits read (a 32-bit half, or both).
        args: BTreeMap<u8, u64>,
        ip: bool,
        exact: bool,
        /// The words read, by their names (`args[1].lo`, `ip.hi`).
        reads: BTreeSet<String>,
    },
}

/// Watches a traced command's calls and keeps those the filters do not allow.
pub(super) struct Collector<'p> {
    programs: &'p [Program],
    /// One per program, for [`Dependence`]; empty when a program could not be analysed.
    analyzers: Vec<Analyzer<'p>>,
    /// Per `(arch token, nr, answer)`.
    pub denials: BTreeMap<(u32, u32, u32), Denial>,
    /// The return value each thread's current call must have, and where to count it.
    expected: HashMap<libc::pid_t, (i64, (u32, u32, u32))>,
    /// Threads whose current call installs a filter of their own (`seccomp` or `prctl`).
    installing: HashSet<libc::pid_t>,
    /// Threads that installed a filter of their own: their later calls also meet it.
    pub own_filters: BTreeSet<libc::pid_t>,
    /// Calls seen so far.
    calls: u64,
    /// Calls the interpreter could not decide (a program that reads out of bounds: the
    /// kernel's checks refuse such programs, so this stays 0).
    pub undecided: u64,
}

impl<'p> Collector<'p> {
    pub fn new(programs: &'p [Program]) -> Self {
        let analyzers: Result<Vec<Analyzer<'p>>, _> = programs.iter().map(Analyzer::new).collect();
        Collector {
            programs,
            analyzers: analyzers.unwrap_or_default(),
            denials: BTreeMap::new(),
            expected: HashMap::new(),
            installing: HashSet::new(),
            own_filters: BTreeSet::new(),
            calls: 0,
            undecided: 0,
        }
    }

    pub fn observe(&mut self, stop: SyscallStop) {
        match stop {
            SyscallStop::Entry {
                tid,
                arch,
                nr,
                instruction_pointer,
                args,
            } => {
                self.calls += 1;
                self.expected.remove(&tid);
                self.installing.remove(&tid);
                let mut data = SeccompData::new(arch, nr as i32, args);
                data.instruction_pointer = instruction_pointer;
                match Arch::call_of_data(arch, nr) {
                    (_, Some(name)) if installs_filter(name, &data) => {
                        self.installing.insert(tid);
                    }
                    _ => {}
                }
                let Ok(ret) = stack::eval_stack(self.programs, &data) else {
                    self.undecided += 1;
                    return;
                };
                if ret.action() == Some(Action::Allow) {
                    return;
                }
                let key = (arch, nr, ret.0);
                if !self.denials.contains_key(&key) {
                    let depends = self.dependence(arch, nr);
                    self.denials.insert(
                        key,
                        Denial {
                            depends,
                            first: self.calls,
                            ..Denial::default()
                        },
                    );
                }
                let denial = self.denials.get_mut(&key).expect("inserted above");
                denial.count += 1;
                let words = denial.depends.words_of(&data);
                if !denial
                    .samples
                    .iter()
                    .any(|(_, d)| denial.depends.words_of(d) == words)
                {
                    if denial.samples.len() < SAMPLES {
                        denial.samples.push((tid, data));
                    } else {
                        denial.more = true;
                    }
                }
                if let Some(rval) = expected_return(ret) {
                    self.expected.insert(tid, (rval, key));
                }
            }
            SyscallStop::Exit { tid, rval, .. } => {
                if self.installing.remove(&tid) && rval >= 0 {
                    self.own_filters.insert(tid);
                }
                let Some((want, key)) = self.expected.remove(&tid) else {
                    return;
                };
                let denial = self.denials.get_mut(&key).expect("counted at its entry");
                if rval == want {
                    denial.confirmed += 1;
                } else {
                    denial.contradicted += 1;
                }
            }
        }
    }

    /// The denials in the order their first call came (the first refusal is often what made
    /// the command fail), as both reports list them.
    fn in_order(&self) -> Vec<(&(u32, u32, u32), &Denial)> {
        let mut in_order: Vec<_> = self.denials.iter().collect();
        in_order.sort_by_key(|(_, d)| d.first);
        in_order
    }

    /// What the stack's answer for `(token, nr)` depends on.
    fn dependence(&self, token: u32, nr: u32) -> Dependence {
        if self.analyzers.is_empty() {
            return Dependence::Unknown;
        }
        let mut args = BTreeMap::new();
        let mut reads = BTreeSet::new();
        let (mut ip, mut exact, mut depends) = (false, true, false);
        for analyzer in &self.analyzers {
            let paths = analyzer.syscall(token, nr, &Budget::default());
            exact &= paths.exact;
            if !paths.depends_on_args {
                continue;
            }
            depends = true;
            for field in paths.argument_fields_read(Endian::of_arch_token(token)) {
                reads.insert(field.name());
                match field {
                    Field::Arg { index, high } => {
                        *args.entry(index).or_insert(0) |= if high {
                            0xffff_ffff_0000_0000
                        } else {
                            0xffff_ffff
                        };
                    }
                    Field::Ip { .. } => ip = true,
                    Field::Nr | Field::Arch => {}
                }
            }
        }
        if depends {
            Dependence::On {
                args,
                ip,
                exact,
                reads,
            }
        } else {
            Dependence::None
        }
    }

    /// How many errno answers the kernel's return values confirmed, and how many they
    /// contradicted.
    pub fn errno_checks(&self) -> (u64, u64) {
        self.denials
            .values()
            .fold((0, 0), |(a, b), d| (a + d.confirmed, b + d.contradicted))
    }

    /// Calls not allowed (`LOG` allows and is left out).
    pub fn denied_calls(&self) -> u64 {
        self.denials
            .iter()
            .filter(|((_, _, ret), _)| !logs_only(RetVal(*ret)))
            .map(|(_, d)| d.count)
            .sum()
    }
}

/// What the call returns when the kernel answers it with `ret`, where that shows: `-errno`
/// for `ERRNO`, `-ENOSYS` for `TRACE` (no tracer here asks for seccomp events).
fn expected_return(ret: RetVal) -> Option<i64> {
    match ret.action()? {
        // The kernel caps the errno at MAX_ERRNO (kernel/seccomp.c).
        Action::Errno => Some(-i64::from(ret.data().min(MAX_ERRNO))),
        Action::Trace => Some(-i64::from(libc::ENOSYS)),
        _ => None,
    }
}

fn logs_only(ret: RetVal) -> bool {
    ret.action() == Some(Action::Log)
}

/// Whether the call puts the thread under more seccomp: `seccomp(SECCOMP_SET_MODE_FILTER or
/// SECCOMP_SET_MODE_STRICT, …)` or `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER or
/// SECCOMP_MODE_STRICT, …)`.
fn installs_filter(name: &str, data: &SeccompData) -> bool {
    const PR_SET_SECCOMP: u64 = 22;
    const SECCOMP_MODE_STRICT: u64 = 1;
    const SECCOMP_MODE_FILTER: u64 = 2;
    const SECCOMP_SET_MODE_STRICT: u64 = 0;
    const SECCOMP_SET_MODE_FILTER: u64 = 1;
    match name {
        // seccomp's `op` is an unsigned int and prctl's `option` an int: the kernel reads
        // their low 32 bits only; prctl passes its second argument on whole.
        "seccomp" => matches!(
            data.args[0] & 0xffff_ffff,
            SECCOMP_SET_MODE_STRICT | SECCOMP_SET_MODE_FILTER
        ),
        "prctl" => {
            data.args[0] & 0xffff_ffff == PR_SET_SECCOMP
                && matches!(data.args[1], SECCOMP_MODE_STRICT | SECCOMP_MODE_FILTER)
        }
        _ => false,
    }
}

/// `mkdir (x86_64)`, or `nr 999 (x86_64)`, or `nr 5 (arch 0x1234)`.
fn call_label(token: u32, nr: u32) -> String {
    let (arch, name) = Arch::call_of_data(token, nr);
    let arch_text = arch.map_or_else(|| format!("arch {token:#x}"), |a| a.name().to_string());
    match name {
        Some(name) => format!("{name} ({arch_text})"),
        // x32's numbers as its table counts them (the call passes them with bit 30 set).
        None if arch == Some(Arch::X32) => {
            format!("nr {} ({arch_text})", nr & !crate::arch::X32_SYSCALL_BIT)
        }
        // As the kernel's `int`: -1 (a call a tracer or the program cancelled), not 4294967295.
        None => format!("nr {} ({arch_text})", nr as i32),
    }
}

/// `ERRNO(1) EPERM`, `KILL_PROCESS`, `LOG (allowed)`.
fn answer_text(ret: RetVal) -> String {
    match ret.action() {
        Some(Action::Errno) if ret.data() > MAX_ERRNO => {
            format!("{ret}, returned as 4095 (the kernel's largest errno)")
        }
        Some(Action::Errno) => match crate::policy::errno_name(ret.data()) {
            Some(name) => format!("{ret} {name}"),
            None => ret.to_string(),
        },
        Some(Action::Trace) => format!("{ret} ENOSYS"),
        Some(Action::Log) => format!("{ret} (allowed)"),
        _ => ret.to_string(),
    }
}

/// The arguments column: `any` when the answer does not depend on them, else the words it
/// depends on as the first call had them (`args[1]=0x1ff`), for each distinct sample.
fn arguments_text(d: &Denial) -> String {
    match &d.depends {
        Dependence::None => "any (the answer does not depend on them)".to_string(),
        Dependence::Unknown => {
            let args: Vec<String> = d.samples[0]
                .1
                .args
                .iter()
                .map(|a| format!("{a:#x}"))
                .collect();
            args.join(", ")
        }
        Dependence::On {
            args, ip, exact, ..
        } => {
            let samples: Vec<String> = d
                .samples
                .iter()
                .map(|(_, data)| {
                    let mut words: Vec<String> = args
                        .iter()
                        .map(|(&i, &mask)| {
                            format!("args[{i}]={:#x}", data.args[usize::from(i)] & mask)
                        })
                        .collect();
                    if *ip {
                        words.push(format!("ip={:#x}", data.instruction_pointer));
                    }
                    words.join(" ")
                })
                .collect();
            let more = if d.more { "; …" } else { "" };
            let bound = if *exact { "" } else { " (words read)" };
            format!("{}{more}{bound}", samples.join("; "))
        }
    }
}

/// What the reports say besides the calls.
pub(super) struct Run<'a> {
    /// The filter's source, as given.
    pub input: &'a str,
    pub total_calls: u64,
    pub tasks: u64,
    pub end: End,
    /// Tasks the command left running, untraced from its end on.
    pub left_running: usize,
    /// Tasks started with `CLONE_UNTRACED`, which no tracer follows (the filter still
    /// applies to them).
    pub untraced_children: u64,
    /// What the profile says of each syscall; `None` for a raw filter.
    pub rules: Option<&'a ProfileRules>,
}

/// The rules of a profile, by syscall, for the report.
#[derive(Debug, Clone, Default)]
pub(super) struct ProfileRules {
    /// The ABIs the filter covers; a call of another gets the bad-arch action.
    pub arches: Vec<Arch>,
    /// Per `(arch token, nr)`, the places of the rules that name the syscall with an action
    /// other than the default (the rules runc hands libseccomp), in profile order; a syscall
    /// absent here is decided by the default action.
    pub places: BTreeMap<(u32, u32), Vec<String>>,
    /// Per `(arch token, nr)`, the rules naming the syscall with an action other than the
    /// default that `includes`/`excludes` left out for this container: place, and why
    /// (`needs CAP_SYS_ADMIN (includes.caps)`).
    pub not_applied: BTreeMap<(u32, u32), Vec<(String, String)>>,
    /// With runc's ENOSYS stub (`--runc-compat`), per ABI, the number above which it answers
    /// `ENOSYS` ([`crate::compile::runc_stub_threshold`]).
    pub stub: BTreeMap<Arch, u32>,
}

/// What the profile has for one syscall.
enum Naming<'r> {
    /// A raw filter: no rules to name.
    NoProfile,
    /// The call's ABI is not one the profile covers.
    OtherArch,
    /// These rules name it (none: the default action decides), and these name it but were
    /// left out for this container.
    Rules(&'r [String], &'r [(String, String)]),
    /// runc's ENOSYS stub answers it (`--runc-compat`): its number is above this one, the
    /// highest the profile names for its ABI.
    Stub(u32),
}

impl Run<'_> {
    fn rules_of(&self, token: u32, nr: u32) -> Naming<'_> {
        let Some(profile) = self.rules else {
            return Naming::NoProfile;
        };
        match Arch::of_data(token, nr) {
            Some(arch) if profile.arches.contains(&arch) => match profile.stub.get(&arch) {
                Some(&highest) if nr > highest => Naming::Stub(highest),
                _ => self.named(profile, token, nr),
            },
            _ => Naming::OtherArch,
        }
    }

    fn named<'p>(&self, profile: &'p ProfileRules, token: u32, nr: u32) -> Naming<'p> {
        Naming::Rules(
            profile
                .places
                .get(&(token, nr))
                .map_or(&[][..], Vec::as_slice),
            profile
                .not_applied
                .get(&(token, nr))
                .map_or(&[][..], Vec::as_slice),
        )
    }
}

/// `none`, or the first three places and how many more; then the rules left out for this
/// container, with why: `none; not applied: $.syscalls[12]: needs CAP_SYS_ADMIN
/// (includes.caps)`.
fn rules_text(rules: &[String], not_applied: &[(String, String)]) -> String {
    let mut text = match rules.len() {
        0 => "none".to_string(),
        1..=3 => rules.join(", "),
        n => format!("{}, … ({n} in all)", rules[..3].join(", ")),
    };
    if !not_applied.is_empty() {
        let shown: Vec<String> = not_applied
            .iter()
            .take(2)
            .map(|(place, why)| format!("{place}: {why}"))
            .collect();
        text += &format!("; not applied: {}", shown.join("; "));
        if not_applied.len() > 2 {
            text += &format!(", … ({} in all)", not_applied.len());
        }
    }
    text
}

/// The report printed on stderr when the command has ended.
/// `the command exited with status 1`, `the command was killed by SIGSYS`, ….
pub(super) fn end_text(end: End) -> String {
    match end {
        End::Exited(e) => format!("the command {e}"),
        End::Detached => end.to_string(),
    }
}

pub(super) fn text_report(c: &Collector<'_>, run: &Run<'_>) -> String {
    let (input, total_calls, end) = (run.input, run.total_calls, run.end);
    let mut out = String::new();
    let denied = c.denied_calls();
    let end_text = end_text(end);
    let logged: u64 = c
        .denials
        .iter()
        .filter(|((_, _, r), _)| logs_only(RetVal(*r)))
        .map(|(_, d)| d.count)
        .sum();
    let logged_text = if logged > 0 {
        format!(", {logged} of them logged (LOG)")
    } else {
        String::new()
    };
    if denied == 0 {
        out.push_str(&format!(
            "secopt: {input} allowed all {total_calls} calls the command made{logged_text}; \
             {end_text}\n"
        ));
    } else {
        let syscalls: BTreeSet<(u32, u32)> = c
            .denials
            .keys()
            .filter(|(_, _, r)| !logs_only(RetVal(*r)))
            .map(|&(a, n, _)| (a, n))
            .collect();
        out.push_str(&format!(
            "secopt: {input} did not allow {denied} of {total_calls} calls ({} syscall{}){}; \
             {end_text}\n",
            syscalls.len(),
            if syscalls.len() == 1 { "" } else { "s" },
            if logged > 0 {
                format!(", and logged {logged} it allowed")
            } else {
                String::new()
            }
        ));
    }
    if !c.denials.is_empty() {
        let with_rules = run.rules.is_some();
        let rows: Vec<Vec<String>> = c
            .in_order()
            .into_iter()
            .map(|(&(arch, nr, ret), d)| {
                let mut row = vec![
                    d.count.to_string(),
                    call_label(arch, nr),
                    answer_text(RetVal(ret)),
                ];
                match run.rules_of(arch, nr) {
                    Naming::NoProfile => {}
                    Naming::OtherArch => row.push("(not a profile arch)".to_string()),
                    Naming::Rules(rules, not_applied) => row.push(rules_text(rules, not_applied)),
                    Naming::Stub(highest) => row.push(format!(
                        "none (runc's ENOSYS stub: above {highest}, the highest number the \
                         profile names)"
                    )),
                }
                row.push(arguments_text(d));
                row
            })
            .collect();
        let mut header = vec!["calls", "syscall", "answer"];
        if with_rules {
            header.push("rules naming it");
        }
        header.push("arguments");
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(header[i].chars().count())
            })
            .collect();
        let line = |cells: &[&str]| {
            let mut text = String::from(" ");
            for (i, cell) in cells.iter().enumerate() {
                let w = widths[i];
                if i == 0 {
                    text.push_str(&format!(" {cell:>w$}"));
                } else if i + 1 == cells.len() {
                    text.push_str(&format!("  {cell}"));
                } else {
                    text.push_str(&format!("  {cell:<w$}"));
                }
            }
            text.push('\n');
            text
        };
        out.push_str(&line(&header));
        for r in &rows {
            out.push_str(&line(&r.iter().map(String::as_str).collect::<Vec<_>>()));
        }
        let (confirmed, contradicted) = c.errno_checks();
        if confirmed + contradicted > 0 {
            out.push_str(&format!(
                "secopt: the kernel's return values confirm {confirmed} of {} errno answers{}\n",
                confirmed + contradicted,
                if contradicted > 0 {
                    " (the others returned something else: see the notes)"
                } else {
                    ""
                }
            ));
        }
        let refused_as = |naming: fn(&Naming<'_>) -> bool| {
            c.denials.keys().any(|&(token, nr, ret)| {
                !logs_only(RetVal(ret)) && naming(&run.rules_of(token, nr))
            })
        };
        if refused_as(|n| matches!(n, Naming::OtherArch)) {
            out.push_str(
                "secopt: hint: a call of an ABI the profile does not cover gets its bad-arch \
                 action whatever its name: if the command needs that ABI, list it in the \
                 profile's architectures\n",
            );
        }
        if with_rules {
            // Only for calls of a profile arch (the other-arch hint speaks for the rest), and
            // not for a call whose only allowing rules were left out for this container: for
            // those, adding the name to an ALLOW rule is not the fix (Docker's answer to a
            // cap-gated call is the capability).
            if refused_as(
                |n| matches!(n, Naming::Rules(rules, not_applied) if !rules.is_empty() || not_applied.is_empty()),
            ) {
                out.push_str(
                    "secopt: hint: a call no rule names gets the default action: if the command \
                 needs it, add its name to an ALLOW rule; a call a rule names did not meet that \
                 rule's conditions with the arguments shown (or the rule refuses it). After \
                 changing the profile, run this again to check\n",
                );
            }
            if refused_as(|n| matches!(n, Naming::Rules(_, not_applied) if !not_applied.is_empty()))
            {
                out.push_str(
                    "secopt: hint: a rule \"not applied\" would allow the call but does not \
                     apply here: its includes/excludes leave it out for this container (run \
                     with the capabilities, --caps, or kernel, --kernel, it names if the \
                     container will have them), or the syscall table in use lacks its name \
                     (an older libseccomp, as runc linked with it skips the rule)\n",
                );
            }
        } else if denied > 0 {
            out.push_str(
                "secopt: hint: if the command needs these calls, the filter must allow them \
                 (with the arguments shown, where its answer depends on them)\n",
            );
        }
    }
    for note in notes(c, run) {
        out.push_str(&format!("secopt: note: {note}\n"));
    }
    out
}

fn notes(c: &Collector<'_>, run: &Run<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    if run.left_running > 0 {
        notes.push(format!(
            "{} process{} or thread{} the command started still ran when it ended: secopt \
             stopped tracing {} (the filter still applies), so {} later calls are not in \
             this report",
            run.left_running,
            if run.left_running == 1 { "" } else { "es" },
            if run.left_running == 1 { "" } else { "s" },
            if run.left_running == 1 { "it" } else { "them" },
            if run.left_running == 1 {
                "its"
            } else {
                "their"
            },
        ));
    }
    if !c.own_filters.is_empty() {
        let tids: Vec<String> = c.own_filters.iter().map(|t| t.to_string()).collect();
        notes.push(format!(
            "the command installed filters of its own (thread {}): the calls it and the \
             processes it starts make after that also meet those filters, which this report \
             does not judge",
            tids.join(", ")
        ));
    }
    if run.untraced_children > 0 {
        let n = run.untraced_children;
        notes.push(format!(
            "the command started {n} process{} or thread{} with CLONE_UNTRACED, which no \
             tracer follows: the filter applies to {}, but {} calls are not in this report",
            if n == 1 { "" } else { "es" },
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" },
            if n == 1 { "its" } else { "their" },
        ));
    }
    let (_, contradicted) = c.errno_checks();
    if contradicted > 0 {
        notes.push(format!(
            "{contradicted} call{} answered with an errno here returned another value: the \
             kernel decided otherwise{}",
            if contradicted == 1 { "" } else { "s" },
            if c.own_filters.is_empty() {
                " (please report this with the filter and the command)"
            } else {
                " (the command's own filters may explain it)"
            }
        ));
    }
    if c.undecided > 0 {
        notes.push(format!(
            "{} calls could not be judged by the interpreter",
            c.undecided
        ));
    }
    notes
}

/// The report as one JSON document (docs/json.md, `exec --denials-json`).
pub(super) fn json_report(c: &Collector<'_>, run: &Run<'_>, command: &[String]) -> Value {
    let (input, total_calls, tasks, end) = (run.input, run.total_calls, run.tasks, run.end);
    let denials: Vec<Value> = c
        .in_order()
        .into_iter()
        .map(|(&(arch, nr, ret), d)| {
            let ret = RetVal(ret);
            let (abi, name) = Arch::call_of_data(arch, nr);
            let mut doc = json!({
                "arch": arch,
                "arch_name": abi.map(|a| a.name()),
                "nr": nr as i32,
                "syscall": name,
                "action": ret.to_string(),
                "value": ret.0,
                "errno_name": (ret.action() == Some(Action::Errno))
                    .then(|| crate::policy::errno_name(ret.data()))
                    .flatten(),
                "allowed": logs_only(ret),
                "count": d.count,
                "confirmed": d.confirmed,
                "contradicted": d.contradicted,
                "samples": d.samples.iter().map(|(tid, data)| json!({
                    "tid": tid,
                    "seccomp_data": data_json(data),
                })).collect::<Vec<_>>(),
            });
            match run.rules_of(arch, nr) {
                Naming::NoProfile => {}
                Naming::OtherArch => doc["rules"] = Value::Null,
                Naming::Stub(highest) => {
                    doc["rules"] = json!([]);
                    doc["runc_stub_above"] = json!(highest);
                }
                Naming::Rules(rules, not_applied) => {
                    doc["rules"] = json!(rules);
                    doc["rules_not_applied"] = not_applied
                        .iter()
                        .map(|(place, why)| json!({ "place": place, "why": why }))
                        .collect();
                }
            }
            // Left out when the analysis could not run (never for a filter the kernel
            // accepted, which is all `exec` installs).
            match &d.depends {
                Dependence::Unknown => {}
                Dependence::None => {
                    doc["depends_on_args"] = json!(false);
                    doc["reads"] = json!([]);
                }
                Dependence::On { reads, .. } => {
                    doc["depends_on_args"] = json!(true);
                    doc["reads"] = json!(reads);
                }
            }
            doc
        })
        .collect();
    let (status, exit) = match end {
        End::Exited(e) => (e.shell_status(), e.to_string()),
        End::Detached => (0, end.to_string()),
    };
    json!({
        "input": input,
        "argv": command,
        "exit": { "status": status, "text": exit },
        "calls": total_calls,
        "tasks": tasks,
        "denied_calls": c.denied_calls(),
        "denials": denials,
        "notes": notes(c, run),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::asm::assemble;

    fn entry(tid: i32, nr: u32, args: [u64; 6]) -> SyscallStop {
        SyscallStop::Entry {
            tid,
            arch: Arch::X86_64.token(),
            nr,
            instruction_pointer: 0x1000,
            args,
        }
    }

    fn exit(tid: i32, rval: i64) -> SyscallStop {
        SyscallStop::Exit {
            tid,
            rval,
            is_error: rval < 0,
        }
    }

    /// An i386 mkdir (39 there; the test filter kills 39, reading the number alone).
    fn i386_mkdir() -> SyscallStop {
        SyscallStop::Entry {
            tid: 9,
            arch: Arch::X86.token(),
            nr: 39,
            instruction_pointer: 0,
            args: [0; 6],
        }
    }

    /// A run of `total_calls` calls under a profile with these rules, exit status 0.
    fn run_of(rules: &ProfileRules, total_calls: u64) -> Run<'_> {
        Run {
            input: "p",
            total_calls,
            tasks: 1,
            end: End::Exited(crate::kernel::trace::Exit::Code(0)),
            left_running: 0,
            untraced_children: 0,
            rules: Some(rules),
        }
    }

    /// mkdir (83) gets ERRNO(13) unless its args[0] is 0x30, getpid (39) is killed, write (1)
    /// logged, the rest allowed.
    fn program() -> Program {
        assemble(
            "ld [0]\n\
             jeq #83, mkdir\n\
             jeq #39, kill\n\
             jeq #1, log\n\
             ret #0x7fff0000\n\
             mkdir: ld [16]\n\
             jeq #0x30, allow, eacces\n\
             eacces: ret #0x0005000d\n\
             kill: ret #0x80000000\n\
             log: ret #0x7ffc0000\n\
             allow: ret #0x7fff0000\n",
        )
        .expect("assembles")
    }

    #[test]
    fn denials_are_counted_per_syscall_and_checked_against_the_return_value() {
        let programs = [program()];
        let mut c = Collector::new(&programs);
        for stop in [
            entry(7, 83, [0x10, 0o755, 0, 0, 0, 0]),
            exit(7, -13),
            entry(7, 0, [0; 6]),
            exit(7, 5),
            entry(8, 83, [0x20, 0o700, 0, 0, 0, 0]),
            // The kernel said otherwise: counted as contradicted.
            exit(8, 0),
            entry(8, 83, [0x10, 0o755, 0, 0, 0, 0]),
            exit(8, -13),
            entry(8, 1, [1, 0, 0, 0, 0, 0]),
            exit(8, 1),
            entry(9, 39, [0; 6]),
        ] {
            c.observe(stop);
        }
        let token = Arch::X86_64.token();
        let mkdir = &c.denials[&(token, 83, 0x0005_000d)];
        assert_eq!(mkdir.count, 3);
        assert_eq!((mkdir.confirmed, mkdir.contradicted), (2, 1));
        // Two values of the argument the answer depends on, the repeat not kept twice.
        assert_eq!(mkdir.samples.len(), 2);
        assert_eq!(mkdir.samples[1].0, 8);
        assert!(!mkdir.more);
        assert!(
            matches!(&mkdir.depends, Dependence::On { args, ip: false, exact: true, .. }
            if args.keys().eq([&0]))
        );
        // getpid's answer depends on nothing: one sample.
        assert_eq!(
            c.denials[&(token, 39, 0x8000_0000)].depends,
            Dependence::None
        );
        assert_eq!(c.denials[&(token, 39, 0x8000_0000)].count, 1);
        assert_eq!(c.denials[&(token, 1, 0x7ffc_0000)].count, 1);
        assert!(!c.denials.keys().any(|k| k.1 == 0), "read was allowed");
        // LOG allows: not a denied call.
        assert_eq!(c.denied_calls(), 4);
        let rules = ProfileRules {
            arches: vec![Arch::X86_64],
            places: BTreeMap::from([((token, 83), vec!["$.syscalls[2]".to_string()])]),
            not_applied: BTreeMap::new(),
            stub: BTreeMap::new(),
        };
        let run = run_of(&rules, 6);
        let text = text_report(&c, &run);
        let mkdir_line = text.lines().find(|l| l.contains("mkdir")).unwrap();
        assert!(mkdir_line.contains("$.syscalls[2]"), "{text}");
        let getpid_line = text.lines().find(|l| l.contains("getpid")).unwrap();
        assert!(getpid_line.contains(" none "), "{text}");
        let doc = json_report(&c, &run, &[]);
        let by_name = |name: &str| {
            doc["denials"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["syscall"] == name)
                .unwrap()
                .clone()
        };
        assert_eq!(by_name("getpid")["rules"], json!([]));
        assert_eq!(by_name("mkdir")["rules"], json!(["$.syscalls[2]"]));
        assert!(!text.contains("not a profile arch"), "{text}");

        assert!(
            text.contains("did not allow 4 of 6 calls (2 syscalls)"),
            "{text}"
        );
        assert!(text.contains("ERRNO(13) EACCES"), "{text}");
        assert!(text.contains("confirm 2 of 3 errno answers"), "{text}");
        assert!(text.contains("LOG (allowed)"), "{text}");
        assert!(text.contains("args[0]=0x10; args[0]=0x20"), "{text}");
        // In the order the calls came: mkdir first.
        assert!(
            text.find("mkdir").unwrap() < text.find("getpid").unwrap(),
            "{text}"
        );
        // An i386 call (the filter answers it by number alone: mkdir is 39 there, killed)
        // in a profile of x86_64 only: its ABI, not its name, is what to fix.
        c.observe(i386_mkdir());
        let text = text_report(&c, &run);
        let line = text.lines().find(|l| l.contains("(x86)")).unwrap();
        assert!(line.contains("(not a profile arch)"), "{text}");
        assert!(
            text.contains("list it in the profile's architectures"),
            "{text}"
        );
        let doc = json_report(&c, &run, &[]);
        let i386 = doc["denials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["arch_name"] == "x86")
            .unwrap();
        assert!(i386["rules"].is_null(), "{i386}");
    }

    /// Every refusal is of an ABI the profile does not list: only the hint to list it, not
    /// the one about rules (no rule of the profile judged these calls).
    #[test]
    fn refusals_of_another_abi_only_get_the_arch_hint() {
        let programs = [program()];
        let mut c = Collector::new(&programs);
        c.observe(i386_mkdir());
        let rules = ProfileRules {
            arches: vec![Arch::X86_64],
            places: BTreeMap::new(),
            not_applied: BTreeMap::new(),
            stub: BTreeMap::new(),
        };
        let run = run_of(&rules, 1);
        let text = text_report(&c, &run);
        assert!(
            text.contains("list it in the profile's architectures"),
            "{text}"
        );
        assert!(!text.contains("a call no rule names"), "{text}");
    }

    #[test]
    fn a_filter_the_command_installs_is_noted() {
        let programs = [program()];
        let mut c = Collector::new(&programs);
        // prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) that fails, then seccomp(SET_MODE_FILTER)
        // that succeeds; seccomp(GET_ACTION_AVAIL) is not an install.
        for stop in [
            entry(3, 157, [22, 2, 0, 0, 0, 0]),
            exit(3, -14),
            entry(4, 317, [2, 0, 0, 0, 0, 0]),
            exit(4, 0),
        ] {
            c.observe(stop);
        }
        assert!(c.own_filters.is_empty());
        c.observe(entry(5, 317, [1, 0, 0, 0, 0, 0]));
        c.observe(exit(5, 0));
        assert_eq!(c.own_filters, BTreeSet::from([5]));
        let run = Run {
            input: "p",
            total_calls: 5,
            tasks: 3,
            end: End::Exited(crate::kernel::trace::Exit::Code(0)),
            left_running: 2,
            untraced_children: 0,
            rules: None,
        };
        let notes = notes(&c, &run);
        assert!(notes[0].contains("2 processes or threads"), "{notes:?}");
        assert!(notes[1].contains("thread 5"), "{notes:?}");
        // prctl's option is an int: high bits do not hide PR_SET_SECCOMP.
        c.observe(entry(6, 157, [0xffff_ffff_0000_0016, 2, 0, 0, 0, 0]));
        c.observe(exit(6, 0));
        assert!(c.own_filters.contains(&6));
    }

    /// Calls are labelled by their ABI's part of the numbers: -1 (a tracer's "skip this
    /// call") is x86_64's, signed as the kernel's `int`; x32's are counted as its table does.
    #[test]
    fn call_labels_name_the_abi_a_number_belongs_to() {
        let token = Arch::X86_64.token();
        assert_eq!(call_label(token, u32::MAX), "nr -1 (x86_64)");
        assert_eq!(call_label(token, 39), "getpid (x86_64)");
        assert_eq!(call_label(token, 0x4000_0000 + 999), "nr 999 (x32)");
        assert_eq!(call_label(0x1234, 5), "nr 5 (arch 0x1234)");
    }
}
