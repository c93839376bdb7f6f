//! `secopt optimize`: any valid filter in, an equivalent filter laid out for speed and size as
//! `--favor` weighs them out, proved equal to the input (unless `--no-verify`) and validated before it is written.

use super::hints;
use super::io::{
    decode_input_any_length, display_name, read_input, reads_stdin, rejected_by_kernel,
    write_binary_output, write_output, Input, InputFormat,
};
use super::status::{ProgressMode, StatusLine};
use super::{print_json, Failure, Format, EXIT_DIFFERENT, EXIT_OK};
use crate::arch::{Arch, Endian};
use crate::bench::report::counted;
use crate::bench::workload::{parse_file, WorkloadOptions};
use crate::bpf::cache::KernelVersion;
use crate::bpf::thread_filters::{self, ThreadFilters};
use crate::bpf::{validate, Program};
use crate::compile::{self, EmitFormat, ProgramOrigin};
use crate::optimize::{
    self, CostModel, Favor, Method, OptimizeOptions, Optimized, Report, StackOptimizeError,
    Verification, Weights,
};
use crate::policy;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt optimize docker.bpf -o docker.opt.bpf --report\n  \
secopt optimize docker.bpf -o - --output-format asm          optimized assembly on stdout\n  \
secopt optimize runc.bpf -o filter.h --name runc_filter      a C header (.rs, .go, .b64, .json alike)\n  \
secopt optimize docker.bpf -o opt.bpf --weights nginx.strace-c.txt --report --format json\n  \
secopt optimize filter.s -o opt.bpf --cost-model no-cache    optimize for kernels before 5.11\n  \
secopt optimize seccomp_filter.out -o opt.out --report       Firecracker's filter file: every thread, same encoding\n  \
secopt optimize seccomp_filter.out --thread vcpu -o vcpu.bpf one thread of it, as a raw filter")]
pub struct OptimizeArgs {
    /// The filter: raw cBPF, assembly or a JSON filter document (`-` for stdin). Several: a stack
    /// of filters, oldest first (the order they were installed in, as `secopt dump` lists them),
    /// optimized into one filter that decides every call as the kernel does with all of them
    /// attached. A Firecracker filter file (`seccompiler-bin`'s output, `firecracker
    /// --seccomp-filter`): each thread's filter optimized, written back as a file of the same
    /// encoding. A filter the kernel refuses only for being over 4096 instructions is taken too:
    /// the output must fit, or nothing is written.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// How the input is encoded.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub input_format: InputFormat,
    /// Where to write the optimized filter (`-` for stdout). Default: stdout.
    #[arg(short, long, value_parser = super::io::output_path)]
    pub output: Option<PathBuf>,
    /// How to write the optimized filter, as `compile --emit` does (`raw`: the struct
    /// sock_filter array seccomp(2) loads; `c`, `rust`, `go`: an array in a source file;
    /// `base64`; `json`: the program and where it came from). Default: from the output's
    /// extension (`.bpf`/`.bin`/`.raw`, `.s`/`.asm`, `.h`/`.c`, `.rs`, `.go`,
    /// `.b64`/`.base64`, `.json`; `asm` on a terminal), `raw` otherwise; for a whole
    /// Firecracker filter file, a file of the input's encoding (`firecracker` or
    /// `firecracker-bincode` converts; an extension of another format is refused). Raw and
    /// base64 keep a raw input's byte order; from assembly they are big-endian when every
    /// arch the filter checks is (s390x, ppc64). `--emit` is the same option.
    #[arg(long, value_enum, visible_alias = "emit")]
    pub output_format: Option<EmitFormat>,
    /// Name of the array in C, Rust and Go output (default: from the input's file name): an
    /// identifier all three can declare, used as given (Rust's constant and C's length macro,
    /// `NAME_LEN`, are upper-cased; Go's variable capitalised); refused for other output.
    #[arg(long, value_parser = super::compile::parse_array_name)]
    pub name: Option<String>,
    /// The package clause of Go output (default: `seccomp`); refused for other output.
    #[arg(long, value_parser = super::compile::parse_go_package)]
    pub go_package: Option<String>,
    /// Of a Firecracker filter file, only this thread's filter (`vmm`, `api`, `vcpu`), written
    /// as one filter (raw, assembly, a source file, …; `FILE:vcpu` is the same).
    #[arg(long)]
    pub thread: Option<String>,
    /// Print a report: sizes, cacheable syscalls, expected cost with and without the kernel's
    /// allow cache, worst-case path (to stderr when the filter goes to stdout).
    #[arg(long)]
    pub report: bool,
    /// Report format (`--report-format` is the same option, spelled as `compile` spells it);
    /// implies --report. JSON: an array of documents, one per filter (a Firecracker file:
    /// one per thread), shaped as `compile --report-format json`'s.
    #[arg(
        long,
        value_enum,
        visible_alias = "report-format",
        value_name = "FORMAT"
    )]
    pub format: Option<Format>,
    /// Skip the proof that the output decides every input like the input does (and the check
    /// that no cacheable syscall became uncacheable).
    #[arg(long)]
    pub no_verify: bool,
    /// Print errors only: no warnings or summary line on stderr (a report asked for with
    /// --report is still printed, and so is progress asked for with `--progress always`), as
    /// `compile -q`.
    #[arg(short, long)]
    pub quiet: bool,
    /// Syscall counts to optimize for: an `strace -c` / `strace -f -c` summary, JSON
    /// `{"syscall": count}` or a `secopt record` capture (whose argument values also order the
    /// argument checks). Default: every named syscall of the filter's arches, the native
    /// one weighing 100 per syscall and the others 1.
    #[arg(long)]
    pub weights: Option<PathBuf>,
    /// Leave out syscalls the weights file names that the ABI does not have (a workload
    /// recorded on another architecture), with a warning, instead of failing.
    #[arg(long, requires = "weights")]
    pub skip_unknown: bool,
    /// The native ABI: of the weights file (strace's first section, JSON names) and, without
    /// --weights, of the default weights (100 per syscall, the other arches 1, so its arch
    /// check comes first). Default: the host's. Give it when optimizing a filter for another
    /// machine that checks more than one arch.
    #[arg(long, value_parser = super::asm_cmd::parse_arch)]
    pub arch: Option<Arch>,
    /// Which cost the dispatch minimizes (the other one still counts 1/4).
    #[arg(long, value_enum, default_value_t = CostModel::AllowCache)]
    pub cost_model: CostModel,
    /// Promise a worst case: no input runs more than N instructions (a layout longer than N
    /// is replaced by the cheapest one within N). If no equivalent program meets N, nothing
    /// is written and the error gives the shortest worst path reached.
    #[arg(long, value_name = "N")]
    pub max_path: Option<usize>,
    /// What the dispatch favours. `balanced` and `speed` choose by the workload (`--weights`):
    /// with `speed` the worst path stays within 5 tests of a balanced tree; without
    /// `--weights` they are the same (`speed` then warns and is balanced). `size` gives the
    /// fewest instructions, with or without a workload (long exception chains, no test added
    /// for speed), for more instructions per call and often a longer worst path. `--max-path`
    /// holds with all three. A filter too long for the kernel as `balanced` or `speed` lays it
    /// out is laid out favouring size before it is refused (a warning says so).
    #[arg(long, value_enum, default_value_t = Favor::Balanced)]
    pub favor: Favor,
    /// Kernel whose allow cache to model (`6.18`, a `uname -r` string, or `none` for kernels
    /// before 5.11, as `5.10`). Default: 6.18.
    #[arg(long, value_parser = super::parse_kernel_model)]
    pub kernel: Option<super::KernelModel>,
    /// Say what the optimizer is doing on stderr: `auto` on a terminal once it has taken half
    /// a second (one line, redrawn, with a proof's nodes and steps and a --max-path table's
    /// share filled; a filter with thousands of argument values can take seconds), `always`
    /// the lifting, every layout, the passes and every proof as a line of its own, `never`
    /// nothing.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto, value_name = "WHEN")]
    pub progress: ProgressMode,
    #[command(flatten)]
    pub self_check: super::self_check::SelfCheckArgs,
}

impl OptimizeArgs {
    /// Whether a report is wanted: `--report`, or a `--format` given (as `compile`'s
    /// `--report-format` implies `--report`).
    fn wants_report(&self) -> bool {
        self.report || self.format.is_some()
    }
}

pub fn run(args: OptimizeArgs) -> Result<i32, Failure> {
    // Stdin can be read once: by one input (`-`, or a thread of it, `-:THREAD`), or weights.
    let on_stdin = args.inputs.iter().filter(|p| reads_stdin(p)).count();
    if on_stdin > 1 {
        return Err(Failure::input("stdin (`-`) can be only one of the inputs"));
    }
    if on_stdin > 0 && args.weights.as_deref() == Some(Path::new("-")) {
        return Err(Failure::input(
            "the filter and --weights cannot both come from stdin (`-`)",
        ));
    }
    let mut stack = Vec::with_capacity(args.inputs.len());
    // Whether every input is assembly: its byte order is then the program's own.
    let mut all_text = true;
    for path in &args.inputs {
        let bytes = read_input(path)?;
        all_text &= args.input_format != InputFormat::Raw
            && args.input_format != InputFormat::RawBe
            && super::io::looks_like_text(&bytes);
        match decode_input_any_length(&bytes, &display_name(path), args.input_format)? {
            Input::Program(prog) => stack.push(prog),
            Input::ThreadFilters(file) if args.inputs.len() == 1 => {
                return run_thread_filters(&args, file);
            }
            Input::ThreadFilters(_) => {
                return Err(Failure::input(format!(
                    "{}: a Firecracker filter file cannot be part of a stack; optimize it alone",
                    display_name(path)
                )))
            }
        }
    }
    if args.thread.is_some() {
        return Err(Failure::input(format!(
            "{}: --thread picks a thread of a Firecracker filter file, and this is a filter",
            input_name(&args)
        )));
    }
    let name = input_name(&args);
    let (opts, status) = with_status(&optimize_options(&args)?, &args, &name);
    let out = if let [prog] = &stack[..] {
        let out = optimize::optimize(prog, &opts);
        drop(status);
        out.map_err(|e| Failure::input(format!("{name}: {}", hints::optimize_error(&e))))?
    } else {
        let out = optimize::optimize_stack(&stack, &opts);
        drop(status);
        out.map_err(|e| match e {
            StackOptimizeError::NotJoined { .. } => Failure {
                code: EXIT_DIFFERENT,
                message: format!("{name}: {}", hints::stack_error(&e)),
            },
            e => Failure::input(format!("{name}: {}", hints::stack_error(&e))),
        })?
    };
    let endian = output_endian(args.input_format, all_text, &out.program);
    write_one(&args, None, &stack, &out, endian)
}

/// Writes one optimized filter (of the stack `inputs`, or of `thread` of a Firecracker file)
/// in the format asked for, with its summary line and report.
fn write_one(
    args: &OptimizeArgs,
    thread: Option<&str>,
    inputs: &[Program],
    out: &Optimized,
    endian: Endian,
) -> Result<i32, Failure> {
    let input_len: usize = inputs.iter().map(Program::len).sum();
    let name = thread_label(&input_name(args), thread);
    for note in out.notes.iter().filter(|_| !args.quiet) {
        eprintln!("secopt: warning: {name}: {}", hints::note(note));
    }
    let output = args.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    let to_stdout = output.as_os_str() == "-";
    let terminal = to_stdout && std::io::stdout().is_terminal();
    let format = args
        .output_format
        .unwrap_or_else(|| match EmitFormat::from_extension(&output) {
            Some(format) => format,
            None if terminal => EmitFormat::Asm,
            None => EmitFormat::Raw,
        });
    if format.thread_filters_encoding().is_some() {
        let hint = match thread {
            Some(t) => {
                format!("leave out --thread {t} to write the whole file, every thread optimized")
            }
            None => "which needs one as input (`secopt compile FIRECRACKER.json --emit \
                     firecracker` makes one)"
                .to_string(),
        };
        return Err(Failure::input(format!(
            "{name}: --output-format {} writes Firecracker's filter file, {hint}",
            super::compile::emit_name(format)
        )));
    }
    if terminal && format.is_binary() {
        return Err(Failure::input(
            "refusing to write a binary filter to a terminal; use -o FILE, \
             --output-format asm, or redirect stdout",
        ));
    }
    check_naming_options(args, format)?;
    let origin = ProgramOrigin {
        // `FILE:THREAD`, as the thread is read back (docs/json.md's `input`).
        source: match thread {
            Some(t) => format!("{}:{t}", input_name(args)),
            None => name.clone(),
        },
        endian,
        notes: vec![header_note(inputs, out)],
        optimization: Some(compile::OptimizationInfo {
            reference_instructions: input_len,
            method: out.method,
            verified: out.verification == Verification::Equal,
            proof: out.proof,
            notes: out.notes.clone(),
        }),
    };
    let array = args
        .name
        .clone()
        .unwrap_or_else(|| array_name(args, thread));
    let bytes = match (format, &args.go_package) {
        (EmitFormat::Go, Some(package)) => {
            compile::emit_program_go(&out.program, &origin, &array, package)
        }
        _ => compile::emit_program(&out.program, &origin, format, &array),
    }
    .map_err(|e| Failure::input(e.to_string()))?;
    write_output(&output, &bytes)?;
    if !to_stdout && !args.quiet {
        eprintln!(
            "secopt: {name}: {} instructions{} -> {}",
            out.program.len(),
            outcome_summary(inputs, out),
            output.display()
        );
    }
    if let Some(report) = &out.report {
        print_report(args, thread, out, report, to_stdout)?;
    }
    Ok(EXIT_OK)
}

/// The optimizer's options from the flags.
fn optimize_options(args: &OptimizeArgs) -> Result<OptimizeOptions, Failure> {
    let kernel = args.kernel.map_or(KernelVersion::MODELLED, |k| k.version());
    let weights = match &args.weights {
        None => None,
        Some(path) => Some(read_weights(
            path,
            args.arch,
            args.skip_unknown,
            args.quiet,
        )?),
    };
    Ok(OptimizeOptions {
        weights,
        native: args.arch,
        cost_model: args.cost_model,
        kernel,
        verify: !args.no_verify,
        self_check_budget: args.self_check.budget(),
        report: args.wants_report(),
        max_path: args.max_path,
        favor: args.favor,
        progress: None,
        proof_meter: None,
    })
}

/// `opts` with the status line of the optimization of `label` (`--progress`), which
/// dropping clears.
fn with_status(
    opts: &OptimizeOptions,
    args: &OptimizeArgs,
    label: &str,
) -> (OptimizeOptions, Option<StatusLine>) {
    let status = StatusLine::new(label, args.progress, false);
    let opts = OptimizeOptions {
        progress: status.as_ref().map(StatusLine::progress),
        proof_meter: status
            .as_ref()
            .map(|s| s.proof_meter(&opts.self_check_budget)),
        ..opts.clone()
    };
    (opts, status)
}

/// Firecracker's filter file: every thread's filter optimized and written back as a file (in
/// the input's encoding unless `--output-format` converts), or with `--thread` that thread's
/// alone as a filter. Nothing is written unless every thread's filter was optimized (and
/// proved equal).
fn run_thread_filters(args: &OptimizeArgs, file: ThreadFilters) -> Result<i32, Failure> {
    let source = input_name(args);
    if let Some(thread) = &args.thread {
        let prog = file
            .program(thread)
            .map_err(|e| Failure::input(format!("{source}: {e}")))?;
        let label = thread_label(&source, Some(thread));
        check_thread(prog, &label)?;
        let (opts, status) = with_status(&optimize_options(args)?, args, &label);
        let out = optimize::optimize(prog, &opts);
        drop(status);
        let out =
            out.map_err(|e| Failure::input(format!("{label}: {}", hints::optimize_error(&e))))?;
        // Firecracker's files hold little-endian filters (x86_64 and aarch64 only).
        return write_one(
            args,
            Some(thread),
            std::slice::from_ref(prog),
            &out,
            Endian::Little,
        );
    }
    // Without --output-format the file is written back as it came, whatever -o's extension:
    // one that names another format (`-o all.h`) would get a binary file under that name.
    let implied = args
        .output
        .as_deref()
        .and_then(EmitFormat::from_extension)
        .filter(|f| !matches!(f, EmitFormat::Raw));
    let asked = args.output_format.or(implied);
    let encoding = match asked.map(|f| (f, f.thread_filters_encoding())) {
        None => file.encoding,
        Some((_, Some(encoding))) => encoding,
        Some((format, None)) => {
            let given = match args.output_format {
                Some(_) => format!("--output-format {}", super::compile::emit_name(format)),
                None => format!(
                    "-o {} (its extension asks for {} output)",
                    args.output.as_deref().unwrap_or(Path::new("-")).display(),
                    super::compile::emit_name(format)
                ),
            };
            return Err(Failure::input(format!(
                "{source}: a Firecracker filter file with {} thread filters ({}), and {given} \
                 holds one filter: pick a thread with --thread, or write the file as one \
                 (--output-format firecracker / firecracker-bincode)",
                file.threads.len(),
                file.shown_names().join(", ")
            )));
        }
    };
    check_naming_options(args, EmitFormat::Firecracker)?;
    let opts = optimize_options(args)?;
    let mut optimized: Vec<(String, Option<(usize, Optimized)>)> = Vec::new();
    for (thread, prog) in &file.threads {
        let Some(prog) = prog else {
            optimized.push((thread.clone(), None));
            continue;
        };
        let label = thread_label(&source, Some(thread));
        check_thread(prog, &label)?;
        let (opts, status) = with_status(&opts, args, &label);
        let out = optimize::optimize(prog, &opts);
        drop(status);
        let out =
            out.map_err(|e| Failure::input(format!("{label}: {}", hints::optimize_error(&e))))?;
        for note in out.notes.iter().filter(|_| !args.quiet) {
            eprintln!("secopt: warning: {label}: {}", hints::note(note));
        }
        optimized.push((thread.clone(), Some((prog.len(), out))));
    }
    let threads: Vec<(String, Option<Program>)> = optimized
        .iter()
        .map(|(t, o)| (t.clone(), o.as_ref().map(|(_, out)| out.program.clone())))
        .collect();
    let bytes = thread_filters::encode(&threads, encoding);
    let output = args.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    let to_stdout = write_binary_output(&output, &bytes, "a binary filter file")?;
    if !to_stdout && !args.quiet {
        let sizes: Vec<String> = optimized
            .iter()
            .map(|(t, o)| match o {
                Some((before, out)) => format!(
                    "{} {before} -> {}",
                    thread_filters::shown(t),
                    out.program.len()
                ),
                None => format!("{} none", thread_filters::shown(t)),
            })
            .collect();
        let proved = if args.no_verify {
            "not verified (--no-verify)"
        } else {
            "each proved equal to its input"
        };
        eprintln!(
            "secopt: {source}: {} ({} instructions), {proved} -> {} ({}, {})",
            counted(optimized.len() as u64, "thread filter", "thread filters"),
            sizes.join(", "),
            output.display(),
            encoding.name(),
            encoding.releases()
        );
    }
    if args.wants_report() {
        let reports: Vec<Reported> = optimized
            .iter()
            .filter_map(|(t, o)| {
                let out = &o.as_ref()?.1;
                Some(Reported {
                    input: source.as_str(),
                    thread: Some(t.as_str()),
                    out,
                    report: out.report.as_ref()?,
                    // A program given to optimize has no profile, and so no warnings.
                    warnings: &[],
                })
            })
            .collect();
        print_report_list(
            args.format.unwrap_or(Format::Text),
            &reports,
            to_stdout,
            Reference::Input,
        )?;
    }
    Ok(EXIT_OK)
}

/// One filter's report, for [`print_report_list`].
pub(super) struct Reported<'a> {
    pub input: &'a str,
    pub thread: Option<&'a str>,
    pub out: &'a Optimized,
    pub report: &'a Report,
    /// The profile's warnings (compile's), which the JSON document carries and the text
    /// leaves to stderr, where they were printed.
    pub warnings: &'a [policy::Warning],
}

/// Reports of several filters, to stdout, or to stderr when a filter went there: a JSON array
/// of documents shaped as `optimize --format json` prints its one, or the texts one after
/// another.
pub(super) fn print_report_list(
    format: Format,
    reports: &[Reported],
    to_stdout: bool,
    reference: Reference,
) -> Result<(), Failure> {
    let text = match format {
        Format::Json => {
            let docs: Vec<serde_json::Value> = reports
                .iter()
                .map(|r| report_doc(r.input, r.thread, r.out, r.report, r.warnings))
                .collect();
            serde_json::to_string_pretty(&docs).map_err(|e| Failure::input(e.to_string()))?
        }
        Format::Text => reports
            .iter()
            .map(|r| report_text(&thread_label(r.input, r.thread), r.out, r.report, reference))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    if to_stdout {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
    Ok(())
}

/// One filter's report as JSON (compile's shape: `input`, `thread`, `method`, ...), with the
/// profile's `warnings` (empty for optimize) after the optimizer's `notes`: those `--emit
/// json` lists, so that a script reading compile's report sees them too.
fn report_doc(
    input: &str,
    thread: Option<&str>,
    out: &Optimized,
    report: &Report,
    warnings: &[policy::Warning],
) -> serde_json::Value {
    serde_json::json!({
        "input": input,
        "thread": thread,
        "method": out.method,
        "verification": out.verification,
        "proof": out.proof,
        "notes": out.notes.iter().map(hints::note).collect::<Vec<_>>(),
        "warnings": warnings,
        "report": report,
    })
}

/// `FILE (thread vcpu)`, or the file alone (the name as messages show it).
fn thread_label(source: &str, thread: Option<&str>) -> String {
    match thread {
        Some(t) => format!("{source} (thread {})", thread_filters::shown(t)),
        None => source.to_string(),
    }
}

/// Refuses a thread's program (`label` names the file and thread) if the kernel would
/// refuse it.
fn check_thread(prog: &Program, label: &str) -> Result<(), Failure> {
    validate::validate(prog).map_err(|e| rejected_by_kernel(label, e))
}

/// The inputs as messages name them: the file, or a stack's files joined by ` + `.
/// The byte order of the raw and base64 output: a raw input's (`--input-format raw-be` for a
/// big-endian one); for assembly, which has none, big-endian when every arch the program
/// checks is (an s390x or ppc64 filter), as `disasm` marks such a listing `.endian big`.
fn output_endian(input_format: InputFormat, all_text: bool, program: &Program) -> Endian {
    let arches = optimize::arches_singled_out(program);
    let big_arches = !arches.is_empty() && arches.iter().all(|a| a.endian() == Endian::Big);
    if input_format == InputFormat::RawBe || (all_text && big_arches) {
        Endian::Big
    } else {
        Endian::Little
    }
}

/// The array's name in source output without `--name`: the input's file name without its
/// extension (`docker.bpf` → `docker`), with the thread's after it; for a stack, every
/// input's (`runc.bpf podman.bpf` → `runc_podman`), so its header's array and include guard
/// are not those of a header made from the first filter alone. stdin is `filter`.
fn array_name(args: &OptimizeArgs, thread: Option<&str>) -> String {
    let stems: Vec<String> = args
        .inputs
        .iter()
        .map(|input| {
            if input.as_os_str() == "-" {
                return "filter".to_string();
            }
            // `seccomp_filter.out:vcpu` is the thread `--thread vcpu` names.
            let (file, thread) = match super::io::file_and_thread(input) {
                Some((file, t)) => (Path::new(file), Some(t)),
                None => (input.as_path(), thread),
            };
            let stem = file.file_stem().map_or_else(
                || "filter".to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
            match thread {
                Some(t) => format!("{stem}_{t}"),
                None => stem,
            }
        })
        .collect();
    if stems.is_empty() {
        "filter".to_string()
    } else {
        stems.join("_")
    }
}

/// `--name` and `--go-package` are refused where they would do nothing, as `compile`
/// refuses them.
fn check_naming_options(args: &OptimizeArgs, format: EmitFormat) -> Result<(), Failure> {
    let named = matches!(format, EmitFormat::C | EmitFormat::Rust | EmitFormat::Go);
    if args.name.is_some() && !named {
        return Err(Failure::input(format!(
            "--name names the array of C, Rust and Go output; {} output has none \
             (--output-format c, rust or go, or a .h, .rs or .go output)",
            super::compile::emit_name(format)
        )));
    }
    if args.go_package.is_some() && format != EmitFormat::Go {
        return Err(Failure::input(format!(
            "--go-package is for Go output; {} output is not Go (--output-format go, or a \
             .go output)",
            super::compile::emit_name(format)
        )));
    }
    Ok(())
}

/// What the optimizer did with `inputs`, for the header and the summary line: the output is
/// the input itself (whatever [`Method`] made it), shorter, or larger for a cheaper layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The output is a single input's program, instruction for instruction.
    Unchanged,
    /// Shorter than the input (or the stack's instructions in all).
    Smaller,
    /// As long as the input, laid out otherwise.
    SameLength,
    /// Longer than the input: the layout the ranking chose runs fewer instructions per
    /// syscall or has a shorter worst path (a test added for speed, a `ja` around a block).
    Larger,
}

impl Outcome {
    fn of(inputs: &[Program], out: &Optimized) -> Outcome {
        let input_len: usize = inputs.iter().map(Program::len).sum();
        match inputs {
            _ if out.method == Method::Unchanged => Outcome::Unchanged,
            [input] if *input == out.program => Outcome::Unchanged,
            _ => match out.program.len().cmp(&input_len) {
                std::cmp::Ordering::Less => Outcome::Smaller,
                std::cmp::Ordering::Equal => Outcome::SameLength,
                std::cmp::Ordering::Greater => Outcome::Larger,
            },
        }
    }
}

/// What was made of `inputs`, as a phrase (`optimized from 1083 instructions`; for a
/// stack, `joined from 2 filters of 115 instructions in all`), or `None` when the output is
/// the input. `counted`: the input's length is followed by "instructions" (the header's
/// sentence; the summary line has just counted the output's).
fn made_from(inputs: &[Program], out: &Optimized, counted: bool) -> Option<String> {
    let input_len: usize = inputs.iter().map(Program::len).sum();
    let unit = if counted { " instructions" } else { "" };
    Some(match (inputs.len() > 1, Outcome::of(inputs, out)) {
        (_, Outcome::Unchanged) => return None,
        (true, Outcome::Larger) => format!(
            "joined from {} filters of {input_len} instructions in all (longer than the \
             stack: one program must make the kernel's choice among the filters' answers \
             itself, where it cannot be worked out ahead, as for a computed `ret a`; \
             installing the stack as it is may run fewer instructions)",
            inputs.len()
        ),
        (true, _) => format!(
            "joined from {} filters of {input_len} instructions in all",
            inputs.len()
        ),
        (false, Outcome::Smaller) => format!("optimized from {input_len}{unit}"),
        (false, Outcome::SameLength) => format!("re-laid out from {input_len}{unit}"),
        (false, Outcome::Larger) => format!(
            "re-laid out from {input_len}{unit} (larger, for fewer instructions run per \
             syscall or a shorter worst path)"
        ),
    })
}

/// The sentence a source or JSON output's header gives about what was done to the input.
fn header_note(inputs: &[Program], out: &Optimized) -> String {
    let Some(from) = made_from(inputs, out, true) else {
        return "The input unchanged (no better equivalent program was found and proved)."
            .to_string();
    };
    // The phrase starts the sentence.
    let from = format!("{}{}", from[..1].to_ascii_uppercase(), &from[1..]);
    let to = if inputs.len() > 1 {
        "the stack"
    } else {
        "the input"
    };
    match &out.verification {
        Verification::Equal => format!("{from}; proved equal to {to}."),
        Verification::Skipped => format!("{from}; not verified (--no-verify)."),
    }
}

fn input_name(args: &OptimizeArgs) -> String {
    let names: Vec<String> = args.inputs.iter().map(|p| display_name(p)).collect();
    names.join(" + ")
}

/// `, optimized from 1083, proved equal` for the summary line (as `compile` words it); for a
/// stack, `, joined from 2 filters of 115 instructions in all, proved equal to the stack`.
fn outcome_summary(inputs: &[Program], out: &Optimized) -> String {
    let Some(from) = made_from(inputs, out, false) else {
        return if crate::optimize::Note::any_unproved(&out.notes) {
            ", the input unchanged (nothing better was proved equal within the self-check's \
             budget)"
        } else {
            ", the input unchanged (no better equivalent program was found and proved)"
        }
        .into();
    };
    let to = if inputs.len() > 1 {
        " to the stack"
    } else {
        ""
    };
    match &out.verification {
        Verification::Equal => format!(", {from}, proved equal{to}"),
        Verification::Skipped => format!(", {from}, not verified (--no-verify)"),
    }
}

/// Reads a weights file through the benchmark's workload reader (strace -c or JSON); its notes
/// are warnings, unknown names and bad counts are errors.
pub(super) fn read_weights(
    path: &Path,
    arch: Option<Arch>,
    skip_unknown: bool,
    quiet: bool,
) -> Result<Weights, Failure> {
    let name = display_name(path);
    let bytes = read_input(path)?;
    let mut wopts = WorkloadOptions {
        skip_unknown,
        ..WorkloadOptions::default()
    };
    if let Some(a) = arch {
        wopts.native = a;
    }
    let workload =
        parse_file(&bytes, &name, &wopts).map_err(|e| Failure::input(hints::bench_error(&e)))?;
    for note in workload.notes.iter().filter(|_| !quiet) {
        eprintln!("secopt: warning: {name}: {note}");
    }
    workload
        .weights()
        .map_err(|e| Failure::input(e.to_string()))
}

fn print_report(
    args: &OptimizeArgs,
    thread: Option<&str>,
    out: &Optimized,
    report: &Report,
    to_stdout: bool,
) -> Result<(), Failure> {
    let text = match args.format.unwrap_or(Format::Text) {
        Format::Json => {
            let mut doc = report_doc(&input_name(args), thread, out, report, &[]);
            // compile's shape, plus the files of a stack, oldest first, when there are several.
            if args.inputs.len() > 1 {
                let files: Vec<String> = args.inputs.iter().map(|p| display_name(p)).collect();
                doc["stack"] = files.into();
            }
            // An array of one, as compile's and a Firecracker file's: one shape for scripts.
            let docs = serde_json::Value::Array(vec![doc]);
            if !to_stdout {
                print_json(&docs)?;
                return Ok(());
            }
            serde_json::to_string_pretty(&docs).map_err(|e| Failure::input(e.to_string()))?
        }
        Format::Text => {
            let mut text = report_text(
                &thread_label(&input_name(args), thread),
                out,
                report,
                Reference::Input,
            );
            if args.inputs.len() > 1 {
                text += &format!(
                    "\n  stack: {} filters, oldest first; before: the kernel runs each on every \
                     call it does not cache, so their instructions, costs and worst paths are \
                     summed (the worst path a bound), and caches what all of them allow by number",
                    args.inputs.len()
                );
            }
            text
        }
    };
    if to_stdout {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
    Ok(())
}

/// What the optimizer's output was proved equal to, in a report's words.
#[derive(Debug, Clone, Copy)]
pub(super) enum Reference {
    /// `optimize`: the filter it was given.
    Input,
    /// `compile`: the profile's reference lowering.
    Lowering,
}

pub(super) fn report_text(
    input: &str,
    out: &Optimized,
    r: &Report,
    reference: Reference,
) -> String {
    let (b, a) = (&r.before, &r.after);
    let pct = |x: f64, y: f64| if y > 0.0 { 100.0 * x / y } else { 100.0 };
    let mut s = format!(
        "{input}: {}, {}\n",
        match out.method {
            optimize::Method::Lifted => "lifted and re-emitted",
            optimize::Method::BytecodePasses => "bytecode passes",
            optimize::Method::StructuralPasses => "structural passes",
            optimize::Method::Unchanged => "unchanged",
        },
        match (out.method, &out.verification) {
            (_, optimize::Verification::Equal) => match reference {
                Reference::Input => "proved equal to the input",
                Reference::Lowering => "proved equal to the reference lowering",
            },
            // Nothing to prove: the output is the program it would be proved equal to.
            (optimize::Method::Unchanged, _) => match reference {
                Reference::Input => "the output is the input",
                Reference::Lowering => "the output is the reference lowering",
            },
            (_, optimize::Verification::Skipped) => "not verified",
        }
    );
    s += &format!(
        "  instructions        {:>8} -> {:<8} ({:.0}%)\n",
        b.instructions,
        a.instructions,
        pct(a.instructions as f64, b.instructions as f64)
    );
    s += &format!(
        "  cost with cache     {:>8.2} -> {:<8.2} instructions per syscall (Linux {})\n",
        b.cost_with_cache, a.cost_with_cache, r.kernel
    );
    s += &format!(
        "  cost without cache  {:>8.2} -> {:<8.2} instructions per syscall\n",
        b.cost_without_cache, a.cost_without_cache
    );
    s += &format!(
        "  worst-case path     {:>8} -> {:<8} instructions\n",
        b.worst_case_path, a.worst_case_path
    );
    for (cb, ca) in b.cacheable.iter().zip(&a.cacheable) {
        let label = format!("cacheable {}", cb.bitmap);
        s += &format!(
            "  {label:<20}{:>8} -> {:<8} syscall numbers\n",
            cb.count, ca.count
        );
    }
    if let Some(p) = &out.proof {
        s += &format!(
            "  proof: {} of {} decision-diagram nodes, {} of {} steps (the self-check's budget)\n",
            p.bdd_nodes, p.max_bdd_nodes, p.bdd_steps, p.max_bdd_steps
        );
    }
    s += &format!("  weights: {}\n", r.weights);
    s += &format!("  assumption: {}", r.assumption);
    s
}
