//! `secopt verify` and `secopt diff`: exact equivalence of two filters, and a per-arch,
//! per-syscall account of how they differ (see [`crate::verify`]); Firecracker's per-thread
//! filters (its JSON or its compiled file) are compared thread by thread ([`run_pairs`]).
//!
//! Exit codes: 0 equal, 1 different, 2 bad input (including a filter the kernel would
//! reject), 3 unknown (a budget ran out, or an internal check failed; the message says which).
//! Before answering unknown, `verify` runs both filters on inputs made of their constants
//! ([`crate::verify::sample_difference`]): a difference found so is a "different".

use super::compile::{FirecrackerDialect, SyscallTable};
use super::hints;
use super::io::{display_name, reads_stdin, Input, InputFormat};
use super::recorded::Recorded;
use super::status::{ProgressMode, StatusLine};
use super::{Failure, Format, EXIT_DIFFERENT, EXIT_OK};
use crate::arch::{Arch, Endian, AUDIT_ARCH_LE};
use crate::bpf::action::parse_u32;
use crate::bpf::action::SECCOMP_RET_ALLOW;
use crate::bpf::thread_filters::shown;
use crate::bpf::{Insn, Program, RetVal, SeccompData};
use crate::compile::FilterInfo;
use crate::policy::firecracker::FirecrackerOptions;
use crate::verify::{
    self, ArchSel, Budget, Counterexample, Diff, DiffOutcome, Domain, DomainError, Meter, NrSel,
    ProofWork, Verdict, VerifyError, VerifyOptions,
};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Exit code when no verdict could be reached.
pub const EXIT_UNKNOWN: i32 = 3;

/// Appends a line to a `String` (infallible).
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {
        let _ = writeln!($out, $($arg)*);
    };
}

/// Appends `value` as pretty JSON.
fn emit_json(out: &mut String, value: &Value) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Failure::input(format!("cannot encode JSON: {e}")))?;
    say!(out, "{text}");
    Ok(())
}

/// Writes the report to stdout in one go. A reader that went away (`| head`) is not an
/// error: the exit code still carries the verdict.
fn emit(out: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::input(format!("<stdout>: cannot write: {e}"))),
    }
}

/// What both verbs take.
#[derive(clap::Args, Debug)]
pub struct PairArgs {
    /// The first filter: raw cBPF, assembly or a JSON filter document (over 4096 instructions too:
    /// the comparison is of meanings), or an OCI/Docker profile (JSON), which stands for its
    /// meaning: its plain lowering, the program `secopt compile PROFILE --no-optimize` writes
    /// (Docker's default capabilities; see "Profile inputs" for compile's other settings), taken
    /// here even where it is longer than the kernel's 4096 instructions and only the optimized
    /// filter fits, which `compile --no-optimize` refuses to write (`-` for stdin). Firecracker's
    /// filters (its JSON, or the file its seccompiler-bin or `secopt compile --emit firecracker`
    /// writes) are compared thread by thread with the other side's; `FILE:THREAD` names one
    /// thread's filter. A listing or JSON document `secopt compile` wrote records the settings
    /// it was compiled with; compared with a profile compiled here with others (`--caps`,
    /// `--syscall-table`, `--kernel`, `--runc-compat`, its arches; a Firecracker file's
    /// `--firecracker-dialect`), a verdict other than equal comes with a warning naming the
    /// flag.
    pub a: PathBuf,
    /// The second filter (same forms).
    pub b: PathBuf,
    /// How the filter inputs are encoded (profiles, JSON, are recognised whatever it says).
    /// Given once, for both inputs; given twice, the first is the first input's and the
    /// second the second's (`--input-format raw-be --input-format asm` compares a big-endian
    /// filter with a listing). Default: auto.
    #[arg(long, value_enum, action = clap::ArgAction::Append, value_name = "INPUT_FORMAT")]
    pub input_format: Vec<InputFormat>,
    /// Compile profile inputs (OCI or Firecracker JSON) for this architecture alone, as
    /// `secopt compile --arch ARCH` does. Default: this host's (with its companion arches for
    /// an OCI profile). Unlike --arch, it does not narrow what is compared.
    #[arg(long, value_parser = parse_profile_arch)]
    pub profile_arch: Option<Arch>,
    /// Whose semantics a Firecracker JSON input has: Firecracker's own compiler since 1.11
    /// (libseccomp), Firecracker's own up to 1.10, or the rust-vmm seccompiler crate's.
    #[arg(long, value_enum, default_value_t = FirecrackerDialect::Libseccomp)]
    pub firecracker_dialect: FirecrackerDialect,
    /// The container's capabilities an OCI profile input is compiled for, as `secopt compile
    /// --caps`: `default` (Docker's 14), `all`, or a list such as `default,sys_admin`.
    #[arg(long, default_value = "default", help_heading = "Profile inputs")]
    pub caps: String,
    /// Kernel version an OCI profile's `minKernel` is compared with (default: the running
    /// kernel), as `secopt compile --kernel`.
    #[arg(long, value_name = "MAJOR.MINOR", help_heading = "Profile inputs")]
    pub kernel: Option<crate::policy::KernelVersion>,
    /// Compile an OCI profile input with runc's ENOSYS stub, as `secopt compile --runc-compat`:
    /// what runc loads, to compare with a filter `secopt dump` read from a runc container.
    #[arg(long, help_heading = "Profile inputs")]
    pub runc_compat: bool,
    /// Which table resolves an OCI profile input's syscall names, as `secopt compile
    /// --syscall-table` (`libseccomp`: the linked one, as runc resolves them).
    #[arg(long, value_enum, default_value_t = SyscallTable::Builtin, help_heading = "Profile inputs")]
    pub syscall_table: SyscallTable,
    /// Compare only these architectures (repeat or comma-separate): names such as x86_64, x86,
    /// x32, aarch64 (x86_64 and x32 split the x86_64 token by nr: x32's are
    /// 0x40000000..=0x7fffffff, which `x86_64` leaves out though a 64-bit process can still
    /// make them; x86_64's all others, -1 among them),
    /// or raw arch tokens (0xc000003e) with every number. Default: every arch token.
    #[arg(long, value_parser = parse_arch_sel, value_delimiter = ',')]
    pub arch: Vec<ArchSel>,
    /// Compare only these syscall numbers (repeat or comma-separate): N, FIRST..=LAST,
    /// FIRST-LAST (raw seccomp_data.nr values; x32 numbers include 0x40000000; -N is the
    /// 32-bit two's complement, -1 = 0xffffffff), or syscall names (need --arch).
    /// Default: all 2^32 numbers.
    #[arg(long, value_parser = parse_nr_sel, value_delimiter = ',', allow_hyphen_values = true)]
    pub nr: Vec<NrSel>,
    /// Most BDD nodes before answering unknown (at least 3: the two constants and one test).
    #[arg(long, default_value_t = Budget::default().max_bdd_nodes,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(3..))]
    pub max_nodes: usize,
    /// Most BDD steps (operations the cache did not answer) before answering unknown: a bound
    /// on work that, unlike --timeout, gives the same verdict on every machine.
    #[arg(long, default_value_t = Budget::default().max_bdd_steps,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: u64,
    /// Most memory for the BDD tables, in MiB (an estimate), before answering unknown.
    #[arg(long, default_value_t = Budget::default().max_memory_bytes >> 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_memory: usize,
    /// Most symbolic states per filter before answering unknown.
    #[arg(long, default_value_t = Budget::default().max_states,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_states: usize,
    /// Seconds before answering unknown (0: no limit). A proof the decision diagrams cannot
    /// finish usually reaches --max-steps first, which gives the same verdict on every
    /// machine.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = super::parse_time_limit)]
    pub timeout: f64,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// When to say on stderr how the comparison is going (the stage, and the decision
    /// diagrams' nodes and steps against --max-nodes and --max-steps): `auto` on a terminal
    /// once it has taken half a second, `always` as a line per stage, `never`.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit codes: 0 equal, 1 different, 2 bad input, 3 unknown (budget exceeded, and \
no input made of the filters' constants, tried afterwards, tells them apart). Compared \
thread by thread, the answer is different if any thread differs or is on one side only, else \
unknown if any is unknown.\n\n\
Examples:\n  \
secopt verify docker.bpf optimized.bpf\n  \
secopt verify a.bpf b.s --arch x86_64,x86 --nr 0..=500\n  \
secopt verify a.bpf b.bpf --timeout 5 --format json\n  \
secopt verify firecracker.json seccomp_filter.out      (every thread)\n  \
secopt verify seccomp_filter.out:vcpu optimized.out:vcpu"
)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub pair: PairArgs,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit codes: 0 no difference, 1 differences (in any thread, or a thread on one \
side only), 2 bad input, 3 unknown.\n\n\
Examples:\n  \
secopt diff old.bpf new.bpf\n  \
secopt diff old.bpf new.bpf --arch x86_64 --examples\n  \
secopt diff old.bpf new.bpf --format json | jq '.arches[].entries[].names'\n  \
secopt diff old-firecracker.json new-firecracker.json  (every thread)"
)]
pub struct DiffArgs {
    #[command(flatten)]
    pub pair: PairArgs,
    /// Show the confirmed example input under each change.
    #[arg(long)]
    pub examples: bool,
}

/// `--arch`: a known name or a raw token.
fn parse_arch_sel(s: &str) -> Result<ArchSel, String> {
    if let Some(a) = Arch::from_name(s) {
        return Ok(ArchSel::Arch(a));
    }
    if let Some(t) = parse_u32(s) {
        return Ok(ArchSel::Token(t));
    }
    let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
    Err(format!(
        "unknown architecture `{s}`; expected one of {} or a 32-bit arch token",
        names.join(", ")
    ))
}

/// `--profile-arch`: a known architecture name.
fn parse_profile_arch(s: &str) -> Result<Arch, String> {
    Arch::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
        format!(
            "unknown architecture `{s}`; expected one of {}",
            names.join(", ")
        )
    })
}

/// `--nr`: a number, a range, or a syscall name.
fn parse_nr_sel(s: &str) -> Result<NrSel, String> {
    let t = s.trim();
    // seccomp_data.nr is an int: -N is its 32-bit two's complement, as `emu --nr` and the
    // counterexamples verify prints (`nr -1`) write it.
    let num = |x: &str| {
        let x = x.trim();
        match x.strip_prefix('-') {
            Some(m) => parse_u32(m)
                .filter(|&m| m <= 1 << 31)
                .map(u32::wrapping_neg)
                .ok_or_else(|| format!("`{x}` is not a 32-bit number (-2147483648 is the least)")),
            None => parse_u32(x).ok_or_else(|| format!("`{x}` is not a 32-bit number")),
        }
    };
    // FIRST-LAST splits at a `-` that follows a number, not at a number's sign (`-5--1`,
    // `5 - 7`).
    let dash = || {
        let at = t.char_indices().skip(1).find(|&(i, c)| {
            c == '-'
                && t[..i]
                    .trim_end()
                    .ends_with(|p: char| p.is_ascii_alphanumeric())
        })?;
        Some((&t[..at.0], &t[at.0 + 1..]))
    };
    let range = t.split_once("..=").or_else(dash);
    if let Some((first, last)) = range {
        let (a, b) = (num(first)?, num(last)?);
        if a > b {
            let signed = [first, last].iter().any(|x| x.trim().starts_with('-'));
            let why = if signed {
                " (a negative number is its 32-bit two's complement, above every positive one: \
                 -1 is 0xffffffff)"
            } else {
                ""
            };
            return Err(format!(
                "empty range `{s}`: the first number is above the last{why}"
            ));
        }
        return Ok(NrSel::Range(a, b));
    }
    if t.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        let n = num(t)?;
        return Ok(NrSel::Range(n, n));
    }
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "`{s}` is neither a number, a range FIRST..=LAST, nor a syscall name"
        ));
    }
    Ok(NrSel::Name(t.to_string()))
}

fn options(p: &PairArgs) -> Result<VerifyOptions, Failure> {
    let domain = Domain {
        arches: p.arch.clone(),
        nrs: p.nr.clone(),
    };
    domain.check().map_err(|e| match e {
        DomainError::NameWithoutArch(_) => {
            Failure::input(format!("--nr: {e} (give the architectures with --arch)"))
        }
        _ => Failure::input(format!("--nr: {e}")),
    })?;
    Ok(VerifyOptions {
        domain,
        budget: Budget {
            max_bdd_nodes: p.max_nodes,
            max_bdd_steps: p.max_steps,
            max_memory_bytes: p.max_memory.saturating_mul(1 << 20),
            max_states: p.max_states,
            time_limit: (p.timeout > 0.0).then(|| Duration::from_secs_f64(p.timeout)),
        },
        meter: None,
    })
}

/// One side of a comparison.
enum Side {
    /// One filter.
    One(Program),
    /// Firecracker's filters, one per thread, sorted by thread name: from its JSON (compiled
    /// for `--profile-arch` or this host) or from the file its `seccompiler-bin` writes. A thread the file gives
    /// no filter is `RET ALLOW`, which is what running without a filter means.
    Threads(Vec<(String, Program)>),
}

/// Both sides, the warnings about the profiles among them, and where a filter side records
/// other settings than a profile side was compiled with ([`ProfilesSeen::setting_differences`]).
type Loaded = (Side, Side, Vec<Value>, Vec<Value>);

/// Loads both sides.
fn load(p: &PairArgs) -> Result<Loaded, Failure> {
    if reads_stdin(&p.a) && reads_stdin(&p.b) {
        return Err(Failure::input(format!(
            "both inputs read stdin ({} and {}), which can be read once; give one as a file",
            p.a.display(),
            p.b.display()
        )));
    }
    let formats = match p.input_format.as_slice() {
        [] => [InputFormat::Auto; 2],
        &[both] => [both; 2],
        &[a, b] => [a, b],
        more => {
            return Err(Failure::input(format!(
                "--input-format was given {} times: once for both inputs, or twice, the first \
                 input's and the second's",
                more.len()
            )))
        }
    };
    let mut seen = ProfilesSeen::default();
    let a = load_side(&p.a, formats[0], p, &mut seen)?;
    let b = load_side(&p.b, formats[1], p, &mut seen)?;
    seen.refuse_unused_options(p)?;
    let settings = seen.setting_differences();
    Ok((a, b, seen.warnings, settings))
}

/// An input that does not decode in the one `--input-format` given may be encoded otherwise
/// than the other input (a little-endian file beside a big-endian one, a listing beside raw
/// bytes): the flag applies to both, which the error then says, with how to give each its own.
fn one_format_hint(mut e: Failure, p: &PairArgs) -> Failure {
    if let &[format] = p.input_format.as_slice() {
        if format != InputFormat::Auto {
            e.message += &format!(
                " (--input-format {} applies to both inputs; for inputs encoded differently, \
                 give it twice: the first input's, then the second's)",
                clap::ValueEnum::to_possible_value(&format)
                    .map_or_else(String::new, |v| v.get_name().to_string())
            );
        }
    }
    e
}

/// Which kinds of profile the inputs were, so that options for a kind neither side is are
/// refused rather than ignored (a user who passes a flag expects it to matter); and what
/// secopt warned about them, for the JSON report.
#[derive(Default)]
struct ProfilesSeen {
    oci: bool,
    firecracker: bool,
    /// The warnings said on stderr, as the JSON report lists them: `input` (the file, or
    /// `FILE:THREAD`), then the warning's `path`, `message` and `kind`, as `compile --emit
    /// json` gives them.
    warnings: Vec<Value>,
    /// The profile input as it was compiled here: its name, what compiling it records,
    /// `--caps`, the syscall table's description, and whether it is a Firecracker file (for
    /// one, the first thread's: the threads share their dialect and arch).
    compiled: Option<(String, FilterInfo, String, String, bool)>,
    /// What the filter inputs secopt wrote record of how they were compiled.
    recorded: Vec<(String, Recorded)>,
}

impl ProfilesSeen {
    /// Where a filter input records other settings than the profile input was compiled with
    /// here (`compile --caps all` against verify's default caps), as `settings_differ`
    /// warnings: said once the verdict is known, and only when it is not `equal` (then the
    /// difference may be the flag's, not the filter's; when equal, the setting did not
    /// matter to this profile).
    fn setting_differences(&self) -> Vec<Value> {
        let Some((profile, info, caps, table, firecracker)) = &self.compiled else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for (filter, recorded) in &self.recorded {
            for d in recorded.differences((filter, profile), info, caps, table, *firecracker) {
                found.push(json!({
                    "input": filter,
                    "kind": "settings_differ",
                    "setting": d.setting,
                    "recorded": d.recorded,
                    "used": d.used,
                    "flag": d.flag,
                    "message": d.message,
                }));
            }
        }
        found
    }

    /// Keeps `warnings` about `input` for the JSON report.
    fn warned(&mut self, input: &str, warnings: Vec<crate::policy::Warning>) {
        self.warnings.extend(warnings.into_iter().map(|w| {
            let mut v = json!({ "input": input });
            if let (Value::Object(v), Ok(Value::Object(w))) = (&mut v, serde_json::to_value(w)) {
                v.extend(w);
            }
            v
        }));
    }

    fn refuse_unused_options(&self, p: &PairArgs) -> Result<(), Failure> {
        let mut unused = Vec::new();
        if !self.oci {
            if p.runc_compat {
                unused.push("--runc-compat");
            }
            if p.caps != "default" {
                unused.push("--caps");
            }
            if p.kernel.is_some() {
                unused.push("--kernel");
            }
            if p.syscall_table != SyscallTable::Builtin {
                unused.push("--syscall-table");
            }
        }
        if !self.firecracker && p.firecracker_dialect != FirecrackerDialect::Libseccomp {
            unused.push("--firecracker-dialect");
        }
        if !self.oci && !self.firecracker && p.profile_arch.is_some() {
            unused.push("--profile-arch");
        }
        if unused.is_empty() {
            return Ok(());
        }
        let kind = match (self.oci, self.firecracker) {
            (false, false) => "neither input is a profile (both are filters)",
            (true, false) => "no input is a Firecracker JSON file",
            _ => "no input is an OCI profile",
        };
        Err(Failure::input(format!(
            "{} only affect{} a profile input, but {kind}: leave {} out",
            unused.join(", "),
            if unused.len() == 1 { "s" } else { "" },
            if unused.len() == 1 { "it" } else { "them" },
        )))
    }
}

/// A filter file, an OCI/Docker profile compiled the way `secopt compile` does by default, a
/// Firecracker JSON file or filter file (every thread), or `FIRECRACKER_FILE:THREAD` (one).
/// Profiles are compiled for `arch` (`--profile-arch`) as `secopt compile --arch` does, else
/// for this host.
fn load_side(
    path: &Path,
    format: InputFormat,
    p: &PairArgs,
    seen: &mut ProfilesSeen,
) -> Result<Side, Failure> {
    let arch = p.profile_arch;
    if format == InputFormat::Auto {
        if let Some((file, thread)) = firecracker_json_thread(path) {
            let bytes = super::io::read_input(&file)?;
            let threads =
                compile_firecracker(&bytes, &display_name(&file), p, Some(&thread), seen)?;
            seen.firecracker = true;
            return one_thread(threads, &file, &thread);
        }
    }
    let bytes = super::io::read_input(path)?;
    let name = display_name(path);
    // A profile is recognised whatever --input-format says of the filters: `--input-format
    // raw-be s390x.bpf docker.json` compares a big-endian filter with its profile. Told a
    // format, only a whole JSON document counts, so a filter that merely starts with `{` is
    // still read as that format.
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let profile = object
        && (format == InputFormat::Auto
            || serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_ok())
        && !super::io::looks_like_filter_document(&bytes);
    if profile {
        if super::io::looks_like_firecracker(&bytes) {
            seen.firecracker = true;
            return Ok(Side::Threads(compile_firecracker(
                &bytes, &name, p, None, seen,
            )?));
        }
        let caps = crate::policy::CapSet::parse(&p.caps)
            .map_err(|e| Failure::input(format!("--caps: {e}")))?;
        let (resolver, table) = p.syscall_table.resolver()?;
        let policy =
            crate::policy::oci::parse(&bytes, &name).map_err(|e| Failure::input(e.to_string()))?;
        let resolved = crate::policy::resolve(
            &policy,
            &crate::policy::ResolveOptions {
                native: arch,
                arches: arch.map(|a| vec![a]),
                caps,
                kernel: p.kernel,
                resolver,
                ..Default::default()
            },
        )
        .map_err(|e| Failure::input(e.to_string()))?;
        // What `compile` warns about this profile (misspelt names and fields), said here too:
        // the comparison is of what the profile means once they are skipped.
        super::compile::report_warnings(&policy);
        let unenforced = crate::compile::lowering_warnings(&resolved);
        super::compile::report_unknown(&resolved, None, false, &unenforced);
        let options = crate::compile::CompileOptions {
            runc_compat: p.runc_compat,
            ..Default::default()
        };
        let info = FilterInfo::of(&resolved, &options);
        let mut warnings = info.warnings.clone();
        // A filter runc installed differs from this profile's exactly there: say so first.
        if p.syscall_table == SyscallTable::Builtin {
            warnings.extend(super::compile::report_names_runc_may_skip(&resolved));
        }
        seen.warned(&name, warnings);
        seen.compiled = Some((name.clone(), info, p.caps.clone(), table, false));
        // The profile's meaning, even past the kernel's length limit (its optimized filter
        // may fit where its plain lowering does not).
        let reference = crate::compile::reference_lowering(&resolved, &options)
            .map_err(|e| Failure::input(e.to_string()))?;
        seen.oci = true;
        return Ok(Side::One(reference));
    }
    Ok(
        match super::io::decode_input_any_length(&bytes, &name, format)
            .map_err(|e| one_format_hint(e, p))?
        {
            Input::Program(prog) => {
                seen.recorded.push((name, Recorded::of(&bytes)));
                Side::One(prog)
            }
            Input::ThreadFilters(file) => Side::Threads(
                file.threads
                    .into_iter()
                    .map(|(thread, prog)| {
                        (
                            thread,
                            prog.unwrap_or_else(|| {
                                Program::new(vec![Insn::ret(SECCOMP_RET_ALLOW)])
                            }),
                        )
                    })
                    .collect(),
            ),
        },
    )
}

/// `FILE:THREAD` where no file has that name and `FILE` is a Firecracker JSON file.
/// (`FILE:THREAD` of Firecracker's compiled filter file is resolved by `read_input`.)
fn firecracker_json_thread(path: &Path) -> Option<(PathBuf, String)> {
    let (file, thread) = path.to_str()?.rsplit_once(':')?;
    let file = PathBuf::from(file);
    if thread.is_empty() || thread.contains('/') || path.exists() || !file.is_file() {
        return None;
    }
    let bytes = std::fs::read(&file).ok()?;
    super::io::looks_like_firecracker(&bytes).then(|| (file, thread.to_string()))
}

/// A Firecracker JSON file's filters, compiled as `secopt compile --arch ARCH
/// --firecracker-dialect D --no-optimize` does, for `--profile-arch` (else this host) and
/// `--firecracker-dialect`. The warnings about the threads compared (`only`, else all) are
/// said, and kept in `seen`.
fn compile_firecracker(
    bytes: &[u8],
    name: &str,
    p: &PairArgs,
    only: Option<&str>,
    seen: &mut ProfilesSeen,
) -> Result<Vec<(String, Program)>, Failure> {
    let arch = p.profile_arch.or_else(Arch::host).ok_or_else(|| {
        Failure::input(format!(
            "{name}: this host's architecture has no syscall table to compile the Firecracker \
             file for; give --profile-arch ARCH"
        ))
    })?;
    let fc = FirecrackerOptions {
        arch,
        dialect: p.firecracker_dialect.dialect(),
    };
    let threads = crate::compile::resolve_firecracker(bytes, name, &fc).map_err(|e| {
        // A profile written for another arch names syscalls this one lacks.
        let e = e.to_string();
        let hint = if e.contains("unknown syscall") {
            "; for a profile of another architecture, give --profile-arch ARCH"
        } else {
            ""
        };
        Failure::input(format!("{e}{hint}"))
    })?;
    let mut filters = Vec::new();
    for (thread, resolved) in threads {
        // What `compile` warns about this thread (unknown fields, rules that never apply),
        // said here too, for the threads compared.
        if only.is_none_or(|t| t == thread) {
            super::compile::report_thread_warnings(&resolved, &thread);
            seen.warned(
                &thread_name(name, &thread),
                crate::compile::profile_warnings(&resolved),
            );
        }
        let options = crate::compile::CompileOptions::default();
        if seen.compiled.is_none() {
            let info = FilterInfo::of(&resolved, &options);
            // A Firecracker file is resolved with secopt's own table (verify takes no
            // --syscall-table for one).
            let (_, table) = SyscallTable::Builtin.resolver()?;
            seen.compiled = Some((name.to_string(), info, p.caps.clone(), table, true));
        }
        let program = crate::compile::reference_lowering(&resolved, &options)
            .map_err(|e| Failure::input(e.to_string()))?;
        filters.push((thread, program));
    }
    Ok(filters)
}

/// The filter of `thread` among `threads` (from `file`).
fn one_thread(threads: Vec<(String, Program)>, file: &Path, thread: &str) -> Result<Side, Failure> {
    let names = thread_list(&threads);
    match threads.into_iter().find(|(t, _)| t == thread) {
        Some((_, prog)) => Ok(Side::One(prog)),
        None => Err(Failure::input(format!(
            "{}: no thread {thread:?} in this Firecracker file (it has {names})",
            display_name(file)
        ))),
    }
}

fn thread_list(threads: &[(String, Program)]) -> String {
    let names: Vec<&str> = threads.iter().map(|(t, _)| t.as_str()).collect();
    names.join(", ")
}

/// What to compare: one pair of filters, or a pair per thread.
enum Pairs {
    One(Program, Program),
    /// Every thread either side has (sorted), with its filter on each side (`None`: that
    /// side has no such thread).
    Threads(Vec<(String, Option<Program>, Option<Program>)>),
}

/// Pairs the sides up: one filter with one filter, threads with threads by name.
fn pairs(p: &PairArgs, a: Side, b: Side) -> Result<Pairs, Failure> {
    match (a, b) {
        (Side::One(a), Side::One(b)) => Ok(Pairs::One(a, b)),
        (Side::Threads(a), Side::Threads(b)) => {
            let mut names: Vec<String> = a.iter().chain(&b).map(|(t, _)| t.clone()).collect();
            names.sort();
            names.dedup();
            let take = |side: &[(String, Program)], t: &str| {
                side.iter()
                    .find(|(n, _)| n == t)
                    .map(|(_, prog)| prog.clone())
            };
            Ok(Pairs::Threads(
                names
                    .into_iter()
                    .map(|t| {
                        let (pa, pb) = (take(&a, &t), take(&b, &t));
                        (t, pa, pb)
                    })
                    .collect(),
            ))
        }
        (Side::Threads(threads), Side::One(_)) => Err(mixed(&p.a, &threads, &p.b)),
        (Side::One(_), Side::Threads(threads)) => Err(mixed(&p.b, &threads, &p.a)),
    }
}

/// One side holds Firecracker's per-thread filters and the other one filter.
fn mixed(many: &Path, threads: &[(String, Program)], one: &Path) -> Failure {
    let many = display_name(many);
    let first = threads.first().map_or("vcpu", |(t, _)| t.as_str());
    Failure::input(format!(
        "{many} holds Firecracker's filters for threads {} and {} one filter: name the thread \
         to compare as `{many}:{first}`",
        thread_list(threads),
        display_name(one)
    ))
}

/// An error of the library as a CLI failure; `a` and `b` name the inputs.
fn failure(a: &str, b: &str, e: VerifyError) -> Failure {
    match e {
        VerifyError::Invalid { side, error } => {
            let name = if side == verify::Side::A { a } else { b };
            super::io::rejected_by_kernel(name, error)
        }
        VerifyError::Domain(d) => Failure::input(d.to_string()),
        e @ (VerifyError::Disagreement { .. } | VerifyError::Incomplete { .. }) => Failure {
            code: EXIT_UNKNOWN,
            message: e.to_string(),
        },
    }
}

/// Arch and syscall names of an input, when known.
fn names_of(d: &SeccompData) -> (Option<Arch>, Option<&'static str>) {
    Arch::call_of_data(d.arch, d.nr as u32)
}

/// One `seccomp_data` as every verb's JSON gives it (docs/json.md): the words, and the names
/// and byte order they are read with.
pub(super) fn data_json(d: &SeccompData) -> Value {
    let (arch, name) = names_of(d);
    json!({
        "arch": d.arch,
        "arch_name": arch.map(|a| a.name()),
        "nr": d.nr,
        "syscall": name,
        "instruction_pointer": d.instruction_pointer,
        "args": d.args,
        // Spelled as the filter documents' `byte_order` (the `Endian` names).
        "byte_order": if big_endian(d) { Endian::Big } else { Endian::Little },
    })
}

/// Whether the input's arch token lacks `__AUDIT_ARCH_LE`: the kernel of such an arch lays
/// each 64-bit field out high word first, and so do the filters' runs here.
fn big_endian(d: &SeccompData) -> bool {
    d.arch & AUDIT_ARCH_LE == 0
}

fn ret_json(r: RetVal) -> Value {
    json!({ "value": r.0, "action": r.to_string() })
}

fn counterexample_json(c: &Counterexample) -> Value {
    json!({ "seccomp_data": data_json(&c.data), "a": ret_json(c.a), "b": ret_json(c.b) })
}

/// The input as text: `arch x86_64 (0xc000003e), nr 41 (socket), ip 0, args [38, 0, …]`.
fn data_text(d: &SeccompData) -> String {
    let (arch, name) = names_of(d);
    let arch_text = match arch {
        Some(a) => format!("{a} (0x{:08x})", d.arch),
        None => format!("0x{:08x}", d.arch),
    };
    let nr_text = match name {
        Some(n) => format!("{} ({n})", d.nr),
        None => format!("{}", d.nr),
    };
    let args: Vec<String> = d.args.iter().map(|&a| show(a)).collect();
    format!(
        "arch {arch_text}, nr {nr_text}, ip {}, args [{}]",
        show(d.instruction_pointer),
        args.join(", ")
    )
}

fn show(v: u64) -> String {
    if v <= 0xffff {
        v.to_string()
    } else {
        format!("{v:#x}")
    }
}

/// A pair's verdict. `proof_ran_out` holds why the proof stopped when inputs made of the
/// filters' constants then showed the difference.
struct Decided {
    verdict: Verdict,
    proof_ran_out: Option<String>,
}

/// Proves `a` and `b` (named so in errors) equal or different, or says why it cannot.
fn decide(
    a: &Program,
    b: &Program,
    (name_a, name_b): (&str, &str),
    opts: &VerifyOptions,
) -> Result<Decided, Failure> {
    let mut verdict = verify::equivalent(a, b, opts).map_err(|e| failure(name_a, name_b, e))?;
    // When the proof runs out, inputs built from the filters' constants may still show a
    // difference (never an equality): the budget's reason is kept to say how it was found.
    let mut proof_ran_out = None;
    if let Verdict::Unknown { reason } = &verdict {
        if let Some(c) = verify::sample_difference(a, b, &opts.domain) {
            proof_ran_out = Some(hints::ran_out(reason));
            verdict = Verdict::Different(c);
        }
    }
    Ok(Decided {
        verdict,
        proof_ran_out,
    })
}

/// A pair's verdict as JSON: `a`, `b`, `verdict` and what goes with it.
fn decided_json(d: &Decided, name_a: &str, name_b: &str) -> Value {
    let mut v = json!({ "a": name_a, "b": name_b });
    match &d.verdict {
        Verdict::Equal => v["verdict"] = "equal".into(),
        Verdict::Different(c) => {
            v["verdict"] = "different".into();
            v["counterexample"] = counterexample_json(c);
            v["found_by"] = if d.proof_ran_out.is_some() {
                "sampling"
            } else {
                "proof"
            }
            .into();
            if let Some(why) = &d.proof_ran_out {
                v["reason"] = why.as_str().into();
            }
        }
        Verdict::Unknown { reason } => {
            v["verdict"] = "unknown".into();
            v["reason"] = hints::ran_out(reason).into();
            v["budget"] = serde_json::to_value(reason).unwrap_or(Value::Null);
        }
    }
    v
}

/// How a pair's outcome is written as text.
#[derive(Debug, Clone, Copy)]
struct Rendering {
    /// `diff --examples`: an input of each change.
    examples: bool,
    /// `--arch`/`--nr` narrowed the domain: "every input" is every input in it.
    narrowed: bool,
}

impl Rendering {
    /// What an equal verdict holds for: the domain line that follows says which inputs.
    fn every_input(self) -> &'static str {
        if self.narrowed {
            "every input in the domain below"
        } else {
            "every input"
        }
    }
}

/// A pair's verdict as text, its first line starting with `prefix`.
fn decided_text(
    out: &mut String,
    prefix: &str,
    d: &Decided,
    (name_a, name_b): (&str, &str),
    how: Rendering,
) {
    match &d.verdict {
        Verdict::Equal => {
            say!(
                out,
                "{prefix}equal: {name_a} and {name_b} return the same value on {}",
                how.every_input()
            );
        }
        Verdict::Different(c) => {
            say!(out, "{prefix}different: {}", data_text(&c.data));
            say!(out, "  {name_a} returns {:?}", c.a);
            say!(out, "  {name_b} returns {:?}", c.b);
            say!(
                out,
                "  (both confirmed by running the filters on this input)"
            );
            if big_endian(&c.data) {
                say!(
                    out,
                    "  (arch 0x{:08x} has no __AUDIT_ARCH_LE bit: the input is laid out as a big-endian kernel does, each 64-bit field high word first, so [16] reads args[0].hi)",
                    c.data.arch
                );
            }
            if let Some(why) = &d.proof_ran_out {
                say!(
                    out,
                    "  (found by running both on inputs made of their constants after the proof ran out: {why})"
                );
            }
        }
        Verdict::Unknown { reason } => {
            say!(out, "{prefix}unknown: {}", hints::ran_out(reason));
        }
    }
}

/// The exit code of several verdicts: different if any pair differs, else unknown if any is
/// unknown, else equal.
fn combined_exit(codes: impl IntoIterator<Item = i32>) -> i32 {
    codes.into_iter().fold(EXIT_OK, |acc, code| {
        if acc == EXIT_DIFFERENT || code == EXIT_DIFFERENT {
            EXIT_DIFFERENT
        } else {
            acc.max(code)
        }
    })
}

/// `name` with `:thread`, the way a single thread is named on the command line.
fn thread_name(name: &str, thread: &str) -> String {
    format!("{name}:{}", shown(thread))
}

/// The fields of an example input that are not zero, for `--examples`.
fn example_text(d: &SeccompData) -> String {
    let (arch, name) = names_of(d);
    let mut parts = vec![match arch {
        Some(a) => format!("arch={a}"),
        None => format!("arch=0x{:08x}", d.arch),
    }];
    parts.push(match name {
        Some(n) => format!("nr={} ({n})", d.nr),
        None => format!("nr={}", d.nr as u32),
    });
    if d.instruction_pointer != 0 {
        parts.push(format!("ip={}", show(d.instruction_pointer)));
    }
    for (i, &a) in d.args.iter().enumerate() {
        if a != 0 {
            parts.push(format!("args[{i}]={}", show(a)));
        }
    }
    parts.join(" ")
}

fn diff_json(d: &Diff) -> Value {
    let arches: Vec<Value> = d
        .arches
        .iter()
        .map(|g| {
            let entries: Vec<Value> = g
                .entries
                .iter()
                .map(|e| {
                    let changes: Vec<Value> = e
                        .changes
                        .iter()
                        .map(|c| {
                            json!({
                                "a": c.a.to_string(),
                                "b": c.b.to_string(),
                                "always": c.always,
                                "when": c.when,
                                "exact": c.exact,
                                "example": {
                                    "seccomp_data": data_json(&c.example),
                                    "a": ret_json(c.example_a),
                                    "b": ret_json(c.example_b),
                                },
                            })
                        })
                        .collect();
                    json!({
                        "first": e.first,
                        "last": e.last,
                        "names": e.names,
                        "unnamed_numbers": e.unnamed_numbers,
                        "nr_in_condition": e.nr_in_condition,
                        "changes": changes,
                    })
                })
                .collect();
            json!({
                "group": g.group.to_string(),
                "arch": match &g.group {
                    verify::ArchGroup::Arch(a) => Value::from(a.name()),
                    _ => Value::Null,
                },
                "token": match &g.group {
                    verify::ArchGroup::Arch(a) => Value::from(a.token()),
                    verify::ArchGroup::Token(t) => Value::from(*t),
                    verify::ArchGroup::Other { .. } | verify::ArchGroup::AnyToken => Value::Null,
                },
                "entries": entries,
            })
        })
        .collect();
    json!({
        "arches": arches,
        "counterexample": counterexample_json(&d.counterexample),
        "truncated": d.truncated,
    })
}

/// A pair's differences; `sampled` holds a difference that inputs made of the filters'
/// constants showed when the budget ran out before anything was listed.
struct Diffed {
    outcome: DiffOutcome,
    sampled: Option<Counterexample>,
}

/// Lists where `a` and `b` (named so in errors) differ.
fn diff_pair(
    a: &Program,
    b: &Program,
    (name_a, name_b): (&str, &str),
    opts: &VerifyOptions,
) -> Result<Diffed, Failure> {
    let outcome = verify::diff(a, b, opts).map_err(|e| failure(name_a, name_b, e))?;
    // As `verify` does: when the budget runs out before anything is listed, inputs made of
    // the filters' constants may still show that they differ (not how, everywhere).
    let sampled = match &outcome {
        DiffOutcome::Unknown { .. } => verify::sample_difference(a, b, &opts.domain),
        _ => None,
    };
    Ok(Diffed { outcome, sampled })
}

/// A pair's differences as JSON: `a`, `b`, `verdict` and what goes with it.
fn diffed_json(d: &Diffed, name_a: &str, name_b: &str) -> Value {
    let mut v = json!({ "a": name_a, "b": name_b });
    match &d.outcome {
        // The keys of a difference, empty: a script reads `arches` whatever the verdict.
        DiffOutcome::Equal => {
            v["verdict"] = "equal".into();
            v["arches"] = json!([]);
            v["truncated"] = Value::Null;
        }
        DiffOutcome::Different(diff) => {
            v["verdict"] = "different".into();
            v["found_by"] = "proof".into();
            if let (Value::Object(m), Value::Object(diff)) = (&mut v, diff_json(diff)) {
                m.extend(diff);
            }
        }
        DiffOutcome::Unknown { reason } => {
            v["reason"] = hints::ran_out(reason).into();
            match &d.sampled {
                Some(c) => {
                    v["verdict"] = "different".into();
                    v["found_by"] = "sampling".into();
                    v["counterexample"] = counterexample_json(c);
                }
                None => v["verdict"] = "unknown".into(),
            }
        }
    }
    v
}

/// A pair's differences as text, a line without `---`/`+++` headers starting with `prefix`.
fn diffed_text(
    out: &mut String,
    prefix: &str,
    d: &Diffed,
    (name_a, name_b): (&str, &str),
    how: Rendering,
) {
    let examples = how.examples;
    match &d.outcome {
        DiffOutcome::Equal => {
            say!(
                out,
                "{prefix}no differences: {name_a} and {name_b} return the same value on {}",
                how.every_input()
            );
        }
        DiffOutcome::Different(diff) => {
            say!(out, "--- {name_a}");
            say!(out, "+++ {name_b}");
            for group in &diff.arches {
                for e in &group.entries {
                    let head = format!("{} {}:", group.group, e.subject());
                    if e.changes.len() == 1 && !examples {
                        say!(out, "{head} {}", e.changes[0]);
                        continue;
                    }
                    say!(out, "{head}");
                    for c in &e.changes {
                        say!(out, "    {c}");
                        if examples {
                            say!(
                                out,
                                "        e.g. {}: {} -> {}",
                                example_text(&c.example),
                                c.example_a,
                                c.example_b
                            );
                        }
                    }
                }
            }
            let inexact = diff
                .arches
                .iter()
                .flat_map(|g| &g.entries)
                .flat_map(|e| &e.changes)
                .any(|c| !c.exact);
            if let Some(why) = &diff.truncated {
                say!(
                    out,
                    "… and more differences not listed ({why}); restrict --arch/--nr to see them"
                );
            }
            if inexact {
                say!(out, "(some conditions are too complex to show exactly; --format json gives a confirmed example for each)");
            }
        }
        DiffOutcome::Unknown { reason } => match &d.sampled {
            Some(c) => {
                say!(out, "--- {name_a}");
                say!(out, "+++ {name_b}");
                say!(
                    out,
                    "the filters differ, but where cannot be listed: {}",
                    hints::ran_out(reason)
                );
                say!(
                    out,
                    "e.g. {}: {:?} -> {:?} (found by running both on inputs made of their constants; restrict --arch/--nr or raise the budget to list the differences)",
                    example_text(&c.data),
                    c.a,
                    c.b
                );
            }
            None => {
                say!(out, "{prefix}unknown: {}", hints::ran_out(reason));
            }
        },
    }
}

/// What `verify` and `diff` report of one pair of filters.
trait PairOutcome: Sized {
    /// Compares `a` and `b` (named so in errors and reports).
    fn compare(
        a: &Program,
        b: &Program,
        names: (&str, &str),
        opts: &VerifyOptions,
    ) -> Result<Self, Failure>;
    fn exit_code(&self) -> i32;
    /// `a`, `b`, `verdict` and what goes with it.
    fn json(&self, name_a: &str, name_b: &str) -> Value;
    /// The text report; with `thread`, one thread's part of a whole-file report. `examples`:
    /// `diff --examples`.
    fn text(&self, out: &mut String, thread: Option<&str>, names: (&str, &str), how: Rendering);
}

impl PairOutcome for Decided {
    fn compare(
        a: &Program,
        b: &Program,
        names: (&str, &str),
        opts: &VerifyOptions,
    ) -> Result<Self, Failure> {
        decide(a, b, names, opts)
    }
    fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::Equal => EXIT_OK,
            Verdict::Different(_) => EXIT_DIFFERENT,
            Verdict::Unknown { .. } => EXIT_UNKNOWN,
        }
    }
    fn json(&self, name_a: &str, name_b: &str) -> Value {
        decided_json(self, name_a, name_b)
    }
    fn text(&self, out: &mut String, thread: Option<&str>, names: (&str, &str), how: Rendering) {
        decided_text(out, &prefix(thread), self, names, how);
    }
}

impl PairOutcome for Diffed {
    fn compare(
        a: &Program,
        b: &Program,
        names: (&str, &str),
        opts: &VerifyOptions,
    ) -> Result<Self, Failure> {
        diff_pair(a, b, names, opts)
    }
    fn exit_code(&self) -> i32 {
        match (&self.outcome, &self.sampled) {
            (DiffOutcome::Equal, _) => EXIT_OK,
            (DiffOutcome::Different(_), _) | (DiffOutcome::Unknown { .. }, Some(_)) => {
                EXIT_DIFFERENT
            }
            (DiffOutcome::Unknown { .. }, None) => EXIT_UNKNOWN,
        }
    }
    fn json(&self, name_a: &str, name_b: &str) -> Value {
        diffed_json(self, name_a, name_b)
    }
    fn text(&self, out: &mut String, thread: Option<&str>, names: (&str, &str), how: Rendering) {
        diffed_text(out, &prefix(thread), self, names, how);
    }
}

/// What starts a thread's first line in a whole-file report.
fn prefix(thread: Option<&str>) -> String {
    thread
        .map(|t| format!("{}: ", shown(t)))
        .unwrap_or_default()
}

/// The verdict an exit code stands for.
fn verdict_word(code: i32) -> &'static str {
    match code {
        EXIT_OK => "equal",
        EXIT_DIFFERENT => "different",
        _ => "unknown",
    }
}

/// [`PairOutcome::compare`] with the comparison's status on stderr as `--progress` says.
/// The status line names a pair's thread, if it is one (a single pair's files are on the
/// command line). Also gives the work the proof took, for the JSON report's `proof`: the
/// decision diagrams' nodes and steps (both 0 when the filters are the same instructions and
/// nothing was explored), which say how near a proof is to `--max-nodes` and `--max-steps`
/// on any machine.
fn compare_watched<R: PairOutcome>(
    p: &PairArgs,
    (a, b): (&Program, &Program),
    names: (&str, &str),
    thread: Option<&str>,
    opts: &VerifyOptions,
) -> Result<(R, Value), Failure> {
    let label = thread.map(shown).unwrap_or_default();
    let (status, meter) = match StatusLine::comparison(&label, p.progress, &opts.budget) {
        Some((status, meter)) => (Some(status), meter),
        None => (None, Meter::default()),
    };
    let opts = VerifyOptions {
        meter: Some(meter.clone()),
        ..opts.clone()
    };
    let outcome = R::compare(a, b, names, &opts);
    drop(status);
    let work = json!(ProofWork::measured(&meter, &opts.budget));
    Ok((outcome?, work))
}

/// Loads the inputs, compares them (one pair, or thread by thread) and prints the report.
fn run_pairs<R: PairOutcome>(p: &PairArgs, examples: bool) -> Result<i32, Failure> {
    let opts = options(p)?;
    let (a, b, mut warnings, settings) = load(p)?;
    let (name_a, name_b) = (display_name(&p.a), display_name(&p.b));
    let domain = opts.domain.to_string();
    let how = Rendering {
        examples,
        narrowed: !opts.domain.arches.is_empty() || !opts.domain.nrs.is_empty(),
    };
    let mut out = String::new();
    let code = match pairs(p, a, b)? {
        Pairs::One(a, b) => {
            let (r, work) = compare_watched::<R>(p, (&a, &b), (&name_a, &name_b), None, &opts)?;
            if r.exit_code() != EXIT_OK {
                for w in settings {
                    eprintln!(
                        "secopt: warning: {}",
                        w["message"].as_str().unwrap_or_default()
                    );
                    warnings.push(w);
                }
            }
            match p.format {
                Format::Json => {
                    let mut v = r.json(&name_a, &name_b);
                    v["domain"] = domain.as_str().into();
                    v["proof"] = work;
                    v["warnings"] = Value::Array(warnings);
                    emit_json(&mut out, &v)?;
                }
                Format::Text => {
                    r.text(&mut out, None, (&name_a, &name_b), how);
                    say!(out, "domain: {domain}");
                }
            }
            r.exit_code()
        }
        Pairs::Threads(threads) => {
            let mut json_threads = Vec::new();
            let mut text = String::new();
            let mut codes = Vec::new();
            for (thread, a, b) in &threads {
                let (ta, tb) = (thread_name(&name_a, thread), thread_name(&name_b, thread));
                let code = match (a, b) {
                    (Some(a), Some(b)) => {
                        let (r, work) =
                            compare_watched::<R>(p, (a, b), (&ta, &tb), Some(thread), &opts)?;
                        let mut v = r.json(&ta, &tb);
                        v["thread"] = thread.as_str().into();
                        v["proof"] = work;
                        json_threads.push(v);
                        r.text(&mut text, Some(thread), (&ta, &tb), how);
                        r.exit_code()
                    }
                    (a, _) => {
                        let (has, lacks) = if a.is_some() {
                            (&name_a, &name_b)
                        } else {
                            (&name_b, &name_a)
                        };
                        let thread_shown = shown(thread);
                        let why =
                            format!("only {has} has a {thread_shown} thread; {lacks} has none");
                        say!(text, "{thread_shown}: different: {why}");
                        json_threads.push(json!({
                            "thread": thread,
                            "verdict": "different",
                            "missing_in": if a.is_some() { "b" } else { "a" },
                            "reason": why,
                        }));
                        EXIT_DIFFERENT
                    }
                };
                codes.push((shown(thread), code));
            }
            let code = combined_exit(codes.iter().map(|(_, c)| *c));
            let verdict = verdict_word(code);
            match p.format {
                Format::Json => {
                    let v = json!({
                        "a": name_a,
                        "b": name_b,
                        "domain": domain,
                        "verdict": verdict,
                        "threads": json_threads,
                        "warnings": warnings,
                    });
                    emit_json(&mut out, &v)?;
                }
                Format::Text => {
                    out.push_str(&text);
                    let with = |wanted: i32| {
                        let names: Vec<&str> = codes
                            .iter()
                            .filter(|(_, c)| *c == wanted)
                            .map(|(t, _)| t.as_ref())
                            .collect();
                        names.join(", ")
                    };
                    let summary = match code {
                        EXIT_OK => format!("every thread's filter is equal ({})", with(EXIT_OK)),
                        EXIT_DIFFERENT => format!("thread(s) {} differ", with(EXIT_DIFFERENT)),
                        _ => format!("no verdict for thread(s) {}", with(EXIT_UNKNOWN)),
                    };
                    say!(out, "{verdict}: {name_a} and {name_b}: {summary}");
                    say!(out, "domain: {domain}");
                }
            }
            code
        }
    };
    emit(&out)?;
    Ok(code)
}

/// `secopt verify`.
pub fn run_verify(args: VerifyArgs) -> Result<i32, Failure> {
    run_pairs::<Decided>(&args.pair, false)
}

/// `secopt diff`.
pub fn run_diff(args: DiffArgs) -> Result<i32, Failure> {
    run_pairs::<Diffed>(&args.pair, args.examples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nr_and_arch_selections_parse() {
        assert_eq!(parse_nr_sel("41"), Ok(NrSel::Range(41, 41)));
        assert_eq!(parse_nr_sel("400..=450"), Ok(NrSel::Range(400, 450)));
        assert_eq!(
            parse_nr_sel("0x40000000-0x40000200"),
            Ok(NrSel::Range(0x4000_0000, 0x4000_0200))
        );
        assert_eq!(parse_nr_sel("socket"), Ok(NrSel::Name("socket".into())));
        assert!(parse_nr_sel("9..=3").is_err());
        assert!(parse_nr_sel("a b").is_err());
        // seccomp_data.nr is an int: -N is the word the kernel compares (audit 48 #2).
        assert_eq!(parse_nr_sel("-1"), Ok(NrSel::Range(u32::MAX, u32::MAX)));
        assert_eq!(
            parse_nr_sel("-5..=-1"),
            Ok(NrSel::Range(0xffff_fffb, u32::MAX))
        );
        assert_eq!(
            parse_nr_sel("-5--1"),
            Ok(NrSel::Range(0xffff_fffb, u32::MAX))
        );
        assert_eq!(
            parse_nr_sel("-2147483648"),
            Ok(NrSel::Range(0x8000_0000, 0x8000_0000))
        );
        assert!(parse_nr_sel("-2147483649").is_err());
        let wraps = parse_nr_sel("-1..=5").unwrap_err();
        assert!(wraps.contains("0xffffffff"), "{wraps}");
        assert!(!parse_nr_sel("9..=3").unwrap_err().contains("complement"));
        assert!(parse_nr_sel("--1").is_err());
        // Spaces around the separating dash, as `5..=7` allows around `..=`.
        assert_eq!(parse_nr_sel("5 - 7"), Ok(NrSel::Range(5, 7)));
        assert_eq!(
            parse_nr_sel("-5 - -1"),
            Ok(NrSel::Range(-5i32 as u32, u32::MAX))
        );
        assert_eq!(parse_arch_sel("amd64"), Ok(ArchSel::Arch(Arch::X86_64)));
        assert_eq!(parse_arch_sel("0x1234"), Ok(ArchSel::Token(0x1234)));
        assert!(parse_arch_sel("vax").is_err());
    }
}
