//! `secopt verify` and `secopt diff`: exact equivalence of two filters, and a per-arch,
//! per-syscall account of how they differ (see [`crate::verify`]).
//!
//! Exit codes: 0 equal, 1 different, 2 bad input (including a filter the kernel would
//! reject), 3 unknown (a budget ran out, or an internal check failed; the message says which).
//! Before answering unknown, `verify` runs both filters on inputs made of their constants
//! ([`crate::verify::sample_difference`]): a difference found so is a "different".

use super::io::{display_name, InputFormat};
use super::{Failure, Format, EXIT_DIFFERENT, EXIT_OK};
use crate::arch::{Arch, AUDIT_ARCH_LE};
use crate::bpf::action::parse_u32;
use crate::bpf::{RetVal, SeccompData};
use crate::verify::{
    self, ArchSel, Budget, Counterexample, Diff, DiffOutcome, Domain, NrSel, Verdict, VerifyError,
    VerifyOptions,
};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
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
    /// The first filter: raw cBPF, assembly, or an OCI/Docker profile (JSON), which is
    /// compiled on the fly for this host with Docker's default capabilities, exactly as
    /// `secopt compile PROFILE` would (`-` for stdin).
    pub a: PathBuf,
    /// The second filter (same forms).
    pub b: PathBuf,
    /// How the inputs are encoded.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub input_format: InputFormat,
    /// Compare only these architectures (repeat or comma-separate): names such as x86_64, x86,
    /// x32, aarch64 (x86_64 and x32 split the x86_64 token by bit 30 of nr, so `x86_64` leaves
    /// out nr -1 and every number from 0x40000000 up, which a 64-bit process can still make),
    /// or raw arch tokens (0xc000003e) with every number. Default: every arch token.
    #[arg(long, value_parser = parse_arch_sel, value_delimiter = ',')]
    pub arch: Vec<ArchSel>,
    /// Compare only these syscall numbers (repeat or comma-separate): N, FIRST..=LAST,
    /// FIRST-LAST (raw seccomp_data.nr values; x32 numbers include 0x40000000), or syscall
    /// names (need --arch). Default: all 2^32 numbers.
    #[arg(long, value_parser = parse_nr_sel, value_delimiter = ',')]
    pub nr: Vec<NrSel>,
    /// Most BDD nodes before answering unknown (at least 3: the two constants and one test).
    #[arg(long, default_value_t = Budget::default().max_bdd_nodes,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(3..))]
    pub max_nodes: usize,
    /// Most BDD steps (operations the cache did not answer) before answering unknown: a bound
    /// on work that, unlike --timeout, gives the same verdict on every machine.
    #[arg(long, default_value_t = Budget::default().max_bdd_steps)]
    pub max_steps: u64,
    /// Most memory for the BDD tables, in MiB (an estimate), before answering unknown.
    #[arg(long, default_value_t = Budget::default().max_memory_bytes >> 20)]
    pub max_memory: usize,
    /// Most symbolic states per filter before answering unknown.
    #[arg(long, default_value_t = Budget::default().max_states)]
    pub max_states: usize,
    /// Seconds before answering unknown (0: no limit). A proof the decision diagrams cannot
    /// finish usually reaches --max-steps first, which gives the same verdict on every
    /// machine.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit codes: 0 equal, 1 different, 2 bad input, 3 unknown (budget exceeded, and \
no input made of the filters' constants, tried afterwards, tells them apart).\n\n\
Examples:\n  \
secopt verify docker.bpf optimized.bpf\n  \
secopt verify a.bpf b.s --arch x86_64,x86 --nr 0..=500\n  \
secopt verify a.bpf b.bpf --timeout 5 --format json"
)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub pair: PairArgs,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit codes: 0 no difference, 1 differences, 2 bad input, 3 unknown.\n\n\
Examples:\n  \
secopt diff old.bpf new.bpf\n  \
secopt diff old.bpf new.bpf --arch x86_64 --examples\n  \
secopt diff old.bpf new.bpf --format json | jq '.arches[].entries[].names'"
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

/// `--nr`: a number, a range, or a syscall name.
fn parse_nr_sel(s: &str) -> Result<NrSel, String> {
    let t = s.trim();
    let num = |x: &str| parse_u32(x).ok_or_else(|| format!("`{x}` is not a 32-bit number"));
    let range = t.split_once("..=").or_else(|| t.split_once('-'));
    if let Some((a, b)) = range {
        let (a, b) = (num(a)?, num(b)?);
        if a > b {
            return Err(format!(
                "empty range `{s}`: the first number is above the last"
            ));
        }
        return Ok(NrSel::Range(a, b));
    }
    if t.starts_with(|c: char| c.is_ascii_digit()) {
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
    if !(p.timeout >= 0.0 && p.timeout.is_finite()) {
        return Err(Failure::input(format!(
            "--timeout: `{}` is not a number of seconds",
            p.timeout
        )));
    }
    let domain = Domain {
        arches: p.arch.clone(),
        nrs: p.nr.clone(),
    };
    domain
        .check()
        .map_err(|e| Failure::input(format!("--nr: {e}")))?;
    Ok(VerifyOptions {
        domain,
        budget: Budget {
            max_bdd_nodes: p.max_nodes,
            max_bdd_steps: p.max_steps,
            max_memory_bytes: p.max_memory.saturating_mul(1 << 20),
            max_states: p.max_states,
            time_limit: (p.timeout > 0.0).then(|| Duration::from_secs_f64(p.timeout)),
        },
    })
}

/// Loads both programs (validated).
fn load(p: &PairArgs) -> Result<(crate::bpf::Program, crate::bpf::Program), Failure> {
    let stdin = std::path::Path::new("-");
    if p.a == stdin && p.b == stdin {
        return Err(Failure::input(
            "both inputs are `-`: stdin holds one filter; give the other as a file",
        ));
    }
    Ok((
        load_one(&p.a, p.input_format)?,
        load_one(&p.b, p.input_format)?,
    ))
}

/// A filter file, or an OCI/Docker profile compiled the way `secopt compile` does by default.
fn load_one(path: &std::path::Path, format: InputFormat) -> Result<crate::bpf::Program, Failure> {
    let bytes = super::io::read_input(path)?;
    let name = display_name(path);
    let json = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if format == InputFormat::Auto && json {
        if super::compile::looks_like_firecracker(&bytes) {
            return Err(Failure::input(format!(
                "{name}: a Firecracker seccompiler file holds one filter per thread; compile \
                 the thread to compare first (`secopt compile {name} --thread vcpu -o vcpu.bpf`)"
            )));
        }
        let filter = crate::compile::compile_oci(
            &bytes,
            &name,
            &crate::policy::ResolveOptions::default(),
            &crate::compile::CompileOptions::default(),
        )
        .map_err(|e| Failure::input(e.to_string()))?;
        return Ok(filter.into_program());
    }
    super::io::program_from_bytes(&bytes, &name, format)
}

/// An error of the library as a CLI failure.
fn failure(p: &PairArgs, e: VerifyError) -> Failure {
    match e {
        VerifyError::Invalid { side, error } => {
            let path = if side == verify::Side::A { &p.a } else { &p.b };
            Failure::input(format!(
                "{}: the kernel would reject this filter: {error}",
                display_name(path)
            ))
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
    let arch = Arch::of_data(d.arch, d.nr as u32);
    let name = arch.and_then(|a| a.syscalls().name(d.nr as u32));
    (arch, name)
}

fn data_json(d: &SeccompData) -> Value {
    let (arch, name) = names_of(d);
    json!({
        "arch": d.arch,
        "arch_name": arch.map(|a| a.name()),
        "nr": d.nr,
        "syscall": name,
        "instruction_pointer": d.instruction_pointer,
        "args": d.args,
        "byte_order": if big_endian(d) { "big-endian" } else { "little-endian" },
    })
}

/// Whether the input's arch token lacks `__AUDIT_ARCH_LE`: the kernel of such an arch lays
/// each 64-bit field out high word first, and so do the filters' runs here.
fn big_endian(d: &SeccompData) -> bool {
    d.arch & AUDIT_ARCH_LE == 0
}

fn ret_json(r: RetVal) -> Value {
    json!({ "value": r.0, "text": r.to_string() })
}

fn counterexample_json(c: &Counterexample) -> Value {
    json!({ "input": data_json(&c.data), "a": ret_json(c.a), "b": ret_json(c.b) })
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

/// `secopt verify`.
pub fn run_verify(args: VerifyArgs) -> Result<i32, Failure> {
    let p = &args.pair;
    let opts = options(p)?;
    let (a, b) = load(p)?;
    let (name_a, name_b) = (display_name(&p.a), display_name(&p.b));
    let mut verdict = verify::equivalent(&a, &b, &opts).map_err(|e| failure(p, e))?;
    // When the proof runs out, inputs built from the filters' constants may still show a
    // difference (never an equality): the budget's reason is kept to say how it was found.
    let mut proof_ran_out = None;
    if let Verdict::Unknown { reason } = &verdict {
        if let Some(c) = verify::sample_difference(&a, &b, &opts.domain) {
            proof_ran_out = Some(reason.to_string());
            verdict = Verdict::Different(c);
        }
    }
    let domain = opts.domain.to_string();
    let mut out = String::new();
    match args.pair.format {
        Format::Json => {
            let mut v = json!({ "a": name_a, "b": name_b, "domain": domain });
            match &verdict {
                Verdict::Equal => v["verdict"] = "equal".into(),
                Verdict::Different(c) => {
                    v["verdict"] = "different".into();
                    v["counterexample"] = counterexample_json(c);
                    v["found_by"] = if proof_ran_out.is_some() {
                        "sampling"
                    } else {
                        "proof"
                    }
                    .into();
                    if let Some(why) = &proof_ran_out {
                        v["reason"] = why.as_str().into();
                    }
                }
                Verdict::Unknown { reason } => {
                    v["verdict"] = "unknown".into();
                    v["reason"] = reason.to_string().into();
                    v["budget"] = serde_json::to_value(reason).unwrap_or(Value::Null);
                }
            }
            emit_json(&mut out, &v)?;
        }
        Format::Text => match &verdict {
            Verdict::Equal => {
                say!(
                    out,
                    "equal: {name_a} and {name_b} return the same value on every input"
                );
                say!(out, "domain: {domain}");
            }
            Verdict::Different(c) => {
                say!(out, "different: {}", data_text(&c.data));
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
                if let Some(why) = &proof_ran_out {
                    say!(
                        out,
                        "  (found by running both on inputs made of their constants after the proof ran out: {why})"
                    );
                }
                say!(out, "domain: {domain}");
            }
            Verdict::Unknown { reason } => {
                say!(out, "unknown: {reason}");
                say!(out, "domain: {domain}");
            }
        },
    }
    emit(&out)?;
    Ok(match verdict {
        Verdict::Equal => EXIT_OK,
        Verdict::Different(_) => EXIT_DIFFERENT,
        Verdict::Unknown { .. } => EXIT_UNKNOWN,
    })
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
                                    "input": data_json(&c.example),
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
                    verify::ArchGroup::Other { .. } => Value::Null,
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

/// `secopt diff`.
pub fn run_diff(args: DiffArgs) -> Result<i32, Failure> {
    let p = &args.pair;
    let opts = options(p)?;
    let (a, b) = load(p)?;
    let (name_a, name_b) = (display_name(&p.a), display_name(&p.b));
    let outcome = verify::diff(&a, &b, &opts).map_err(|e| failure(p, e))?;
    // As `verify` does: when the budget runs out before anything is listed, inputs made of
    // the filters' constants may still show that they differ (not how, everywhere).
    let sampled = match &outcome {
        DiffOutcome::Unknown { .. } => verify::sample_difference(&a, &b, &opts.domain),
        _ => None,
    };
    let domain = opts.domain.to_string();
    let mut out = String::new();
    match p.format {
        Format::Json => {
            let mut v = json!({ "a": name_a, "b": name_b, "domain": domain });
            match &outcome {
                DiffOutcome::Equal => v["verdict"] = "equal".into(),
                DiffOutcome::Different(d) => {
                    v["verdict"] = "different".into();
                    if let (Value::Object(m), Value::Object(d)) = (&mut v, diff_json(d)) {
                        m.extend(d);
                    }
                }
                DiffOutcome::Unknown { reason } => {
                    v["reason"] = reason.to_string().into();
                    match &sampled {
                        Some(c) => {
                            v["verdict"] = "different".into();
                            v["found_by"] = "sampling".into();
                            v["counterexample"] = counterexample_json(c);
                        }
                        None => v["verdict"] = "unknown".into(),
                    }
                }
            }
            emit_json(&mut out, &v)?;
        }
        Format::Text => {
            match &outcome {
                DiffOutcome::Equal => {
                    say!(out, "no differences: {name_a} and {name_b} return the same value on every input");
                    say!(out, "domain: {domain}");
                }
                DiffOutcome::Different(d) => {
                    say!(out, "--- {name_a}");
                    say!(out, "+++ {name_b}");
                    for group in &d.arches {
                        for e in &group.entries {
                            let head = format!("{} {}:", group.group, e.subject());
                            let one_line = e.changes.len() == 1 && !args.examples;
                            if one_line {
                                say!(out, "{head} {}", e.changes[0]);
                                continue;
                            }
                            say!(out, "{head}");
                            for c in &e.changes {
                                say!(out, "    {c}");
                                if args.examples {
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
                    let inexact = d
                        .arches
                        .iter()
                        .flat_map(|g| &g.entries)
                        .flat_map(|e| &e.changes)
                        .any(|c| !c.exact);
                    if let Some(why) = &d.truncated {
                        say!(out, "… and more differences not listed ({why}); restrict --arch/--nr to see them");
                    }
                    if inexact {
                        say!(out, "(some conditions are too complex to show exactly; --format json gives a confirmed example for each)");
                    }
                    say!(out, "domain: {domain}");
                }
                DiffOutcome::Unknown { reason } => match &sampled {
                    Some(c) => {
                        say!(out, "--- {name_a}");
                        say!(out, "+++ {name_b}");
                        say!(
                            out,
                            "the filters differ, but where cannot be listed: {reason}"
                        );
                        say!(
                            out,
                            "e.g. {}: {:?} -> {:?} (found by running both on inputs made of their constants; restrict --arch/--nr or raise the budget to list the differences)",
                            example_text(&c.data),
                            c.a,
                            c.b
                        );
                        say!(out, "domain: {domain}");
                    }
                    None => {
                        say!(out, "unknown: {reason}");
                        say!(out, "domain: {domain}");
                    }
                },
            }
        }
    }
    emit(&out)?;
    Ok(match (outcome, sampled) {
        (DiffOutcome::Equal, _) => EXIT_OK,
        (DiffOutcome::Different(_), _) | (DiffOutcome::Unknown { .. }, Some(_)) => EXIT_DIFFERENT,
        (DiffOutcome::Unknown { .. }, None) => EXIT_UNKNOWN,
    })
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
        assert_eq!(parse_arch_sel("amd64"), Ok(ArchSel::Arch(Arch::X86_64)));
        assert_eq!(parse_arch_sel("0x1234"), Ok(ArchSel::Token(0x1234)));
        assert!(parse_arch_sel("vax").is_err());
    }
}
