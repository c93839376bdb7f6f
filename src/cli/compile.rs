//! `secopt compile PROFILE [-o OUT]`: an OCI/Docker/podman profile or a Firecracker
//! seccompiler file to a filter, in the format a runtime takes.

use super::asm_cmd::parse_arch;
use super::hints;
use super::io::{
    check_not_an_input, check_output_dir, display_name, looks_like_firecracker, read_input,
    write_binary_output,
};
use super::optimize::{print_report_list, read_weights, Reference, Reported};
use super::self_check::SelfCheckArgs;
use super::status::{ProgressMode, StatusLine};
use super::{Failure, Format, EXIT_OK};
use crate::arch::Arch;
use crate::bpf::thread_filters::{shown, Encoding, FIRECRACKER_BYTES_LIMIT};
use crate::compile::{
    self, CompileError, CompileOptions, CompiledFilter, EmitFormat, OptimizationInfo,
};
use crate::optimize::{CostModel, Favor, Method, OptimizeOptions, Optimized, Weights};
use crate::policy::firecracker::FirecrackerOptions;
use crate::policy::{
    self, CapSet, Dialect, KernelVersion, Policy, PolicyError, ResolveOptions, Resolved,
    SyscallResolver,
};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt compile docker-default.json -o docker.bpf            raw filter for this host (x86_64: + x86, x32)\n  \
secopt compile docker-default.json -o d.bpf --weights nginx.strace-c.txt --report   laid out for a workload\n  \
secopt compile docker-default.json --no-optimize -o ref.bpf the plain reference lowering\n  \
secopt compile docker-default.json --runc-compat --emit c   what runc loads, as a C header\n  \
secopt compile profile.json --arch aarch64 --arch arm -o f.json   metadata + program as JSON\n  \
secopt compile firecracker.json -o 'fc-{thread}.bpf'        one raw filter per thread kind\n  \
secopt compile firecracker.json --thread vcpu --emit base64\n\n\
Syscall names: runc resolves a profile's names with the libseccomp it is linked with and \
skips the names that library does not know, so a rule for a syscall newer than the library \
is silently dropped and the syscall gets the default action. secopt resolves names with its \
own Linux 6.18 tables by default; libseccomp 2.5.4 as Debian 12 ships it knows syscalls up \
to Linux 6.7 only (not mseal, statmount, listmount, *xattrat, uretprobe, ...). To get \
the filter runc loads, pass --syscall-table libseccomp (builds with the `libseccomp` \
feature) on a host whose libseccomp is runc's (`runc --version` shows its version).\n\n\
Optimization: the profile is first lowered to a plain reference program with the semantics of \
the profile's toolchain (libseccomp as runc drives it, or Firecracker's compiler); the optimizer \
then rebuilds it (shared decision code, ranges, a dispatch laid out for the workload, no \
cacheable syscall made uncacheable), validates the result against the kernel's rules and proves \
it equal to the reference with secopt's verifier before anything is written. If no better \
program (as --favor weighs size, speed and the worst path) can be proved equal, the reference \
itself is written. A profile whose reference is over 4096 instructions is accepted when its \
optimized form fits.")]
pub struct CompileArgs {
    /// The profile: OCI runtime-spec seccomp JSON (Docker, podman, a whole config.json) or a
    /// Firecracker seccompiler file (detected, or forced with --firecracker). `-` is stdin.
    /// A profile alone is read with Docker's and podman's extensions, as they convert it for
    /// runc; a whole config.json as runc reads it, ignoring them (each one warned about).
    pub profile: PathBuf,
    /// Output file (`-`: stdout). For Firecracker files with several thread kinds: a
    /// directory (`DIR/`, made if it does not exist; its parent must) or a pattern
    /// containing `{thread}`.
    #[arg(short, long, value_parser = super::io::output_path)]
    pub output: Option<PathBuf>,
    /// Output format. Default: from the output's extension (.bpf .s .h .rs .go .b64 .json);
    /// else assembly to a terminal and raw to a pipe or file.
    #[arg(long, value_enum)]
    pub emit: Option<EmitFormat>,
    /// Architectures the filter covers (repeat or comma-separate; the first is the native one
    /// that `includes.arches`/`archMap` are matched against). Default: this host's, plus the
    /// sub-architectures the profile's archMap or architectures list. `--runc-compat`'s stub
    /// still covers only the arches the profile lists, as runc's does.
    #[arg(long = "arch", value_parser = parse_arch, value_delimiter = ',')]
    pub arches: Vec<Arch>,
    /// The container's capabilities: `default` (Docker's 14), `all`, or a comma-separated
    /// list such as `default,sys_admin` or `CAP_NET_ADMIN,CAP_BPF`.
    #[arg(long, default_value = "default")]
    pub caps: String,
    /// Kernel version (`5.15`): what `minKernel` is compared with (default: the running
    /// kernel), and whose allow cache the optimizer models (none before 5.11; default: Linux
    /// 6.18's).
    #[arg(long)]
    pub kernel: Option<KernelVersion>,
    /// Make unknown syscall names and unsupported architectures an error instead of
    /// skipping them (as runc does). A name of another architecture (`chown32` on x86_64 in
    /// Docker's profile) is not unknown: it is skipped with a note either way. Every warning
    /// about the profile is an error too: an unknown field (`argz` for `args` would leave
    /// the rule unconditional, as runc reads it), a capability name no container has, ....
    #[arg(long)]
    pub strict: bool,
    /// Prepend runc's ENOSYS stub (what runc actually loads; a Docker or podman profile is
    /// read as they convert it for runc, a whole config.json as runc reads it): on the
    /// architectures the profile lists, numbers above the profile's highest syscall return
    /// ENOSYS unless the default action is ALLOW, LOG or TRACE. A profile runc refuses to start (NOTIFY
    /// without `listenerPath`, or on `write`; an arch of the other byte order than the native
    /// one, which libseccomp cannot add) is an error. The rules decide as libseccomp's
    /// rule tree does, also where its BPF generator does not (docs/kernel-facts.md: a missed
    /// accumulator reload can let runc's filter ALLOW a call its rules deny, and a warning
    /// gives such a call; a dropped syscall load, which a warning names, leaves a whole arch
    /// to the default action).
    #[arg(long)]
    pub runc_compat: bool,
    /// Which table turns syscall names into numbers: `builtin` (secopt's, Linux 6.18) or
    /// `libseccomp` (the libseccomp this secopt is linked with, as runc does; names it does
    /// not know are skipped, as runc skips them). `libseccomp` needs a secopt built with the
    /// `libseccomp` feature.
    #[arg(long, value_enum, default_value_t = SyscallTable::Builtin)]
    pub syscall_table: SyscallTable,
    /// Read the profile as a Firecracker seccompiler file (detected automatically otherwise).
    #[arg(long)]
    pub firecracker: bool,
    /// Whose semantics a Firecracker file has: Firecracker's own compiler since 1.11
    /// (libseccomp, the default), Firecracker's own up to 1.10, or the rust-vmm seccompiler
    /// crate's.
    #[arg(long, value_enum)]
    pub firecracker_dialect: Option<FirecrackerDialect>,
    /// Only this Firecracker thread kind (`vmm`, `api`, `vcpu`, ...).
    #[arg(long)]
    pub thread: Option<String>,
    /// Name of the array in C/Rust/Go output (default: from the profile's file name): an
    /// identifier all three can declare, used as given (Rust's constant and C's length macro,
    /// `NAME_LEN`, are upper-cased; Go's variable capitalised); refused for other output.
    #[arg(long, value_parser = parse_array_name)]
    pub name: Option<String>,
    /// The package clause of Go output (default: `seccomp`): the package of the directory the
    /// file goes in, e.g. `--go-package filters` for `internal/filters/docker.go`; refused for
    /// other output.
    #[arg(long, value_parser = parse_go_package)]
    pub go_package: Option<String>,
    /// Write the plain reference lowering (libseccomp-style per-arch chains, the program the
    /// optimizer's output is proved equal to) instead of the optimized filter.
    #[arg(long, help_heading = "Optimization", conflicts_with_all = [
        "self_check_timeout", "self_check_max_steps", "self_check_max_nodes",
        "self_check_max_memory", "self_check_max_states",
    ])]
    pub no_optimize: bool,
    /// Skip the optimizer's self-check (the proof that the output decides every input like
    /// the reference lowering, and that no cacheable syscall became uncacheable).
    #[arg(long, help_heading = "Optimization", conflicts_with = "no_optimize")]
    pub no_verify: bool,
    /// Syscall counts to lay the dispatch out for: an `strace -c` / `strace -f -c` summary, a
    /// JSON `{"syscall": count}` object or a `secopt record` capture (whose argument values
    /// also order the argument checks: the frequent values are tested first). Default: every
    /// named syscall of the filter's arches, the native one weighing 100 per syscall, the
    /// others 1.
    #[arg(long, help_heading = "Optimization", conflicts_with = "no_optimize")]
    pub weights: Option<PathBuf>,
    /// Leave out syscalls the weights file names that the filter's native ABI does not have
    /// (a workload recorded on another architecture), with a warning, instead of failing.
    #[arg(long, help_heading = "Optimization", requires = "weights")]
    pub skip_unknown: bool,
    /// Which cost the dispatch minimizes: `allow-cache` (Linux 5.11+, cached syscalls are
    /// free) or `no-cache` (every syscall runs the filter).
    #[arg(long, value_enum, default_value_t = CostModel::AllowCache, help_heading = "Optimization")]
    pub cost_model: CostModel,
    /// Promise a worst case: no input runs more than N instructions. By default the cost
    /// decides, within a few tests of the shortest possible worst path; with N, a layout
    /// longer than N is replaced by the cheapest one within N. If no equivalent filter meets
    /// N, nothing is written and the error gives the shortest worst path reached. `--report`
    /// shows the worst-case path.
    #[arg(
        long,
        value_name = "N",
        help_heading = "Optimization",
        conflicts_with = "no_optimize"
    )]
    pub max_path: Option<usize>,
    /// What the dispatch favours. `balanced` and `speed` choose by the workload (`--weights`):
    /// with `speed` the worst path stays within 5 tests of a balanced tree; without
    /// `--weights` they are the same (`speed` then warns and is balanced). `size` gives the
    /// fewest instructions, with or without a workload (long exception chains, no test added
    /// for speed), for more instructions per call and often a longer worst path. `--max-path`
    /// holds with all three. A filter too long for the kernel as `balanced` or `speed` lays it
    /// out is laid out favouring size before it is refused (a warning says so).
    #[arg(
        long,
        value_enum,
        default_value_t = Favor::Balanced,
        help_heading = "Optimization",
        conflicts_with = "no_optimize"
    )]
    pub favor: Favor,
    #[command(flatten)]
    pub self_check: SelfCheckArgs,
    /// Print the optimizer's report (sizes, cacheable syscalls, expected cost with and without
    /// the allow cache, worst-case path) to stdout, or to stderr when the filter goes to stdout.
    #[arg(long, help_heading = "Optimization", conflicts_with = "no_optimize")]
    pub report: bool,
    /// Report format (`text` by default); giving it implies --report.
    #[arg(
        long,
        value_enum,
        help_heading = "Optimization",
        conflicts_with = "no_optimize"
    )]
    pub report_format: Option<Format>,
    /// Print errors only: no notes, warnings or summary line on stderr (a report asked for
    /// with --report is still printed, and so is progress asked for with `--progress always`).
    #[arg(short, long)]
    pub quiet: bool,
    /// Say what the optimizer is doing on stderr: `auto` on a terminal once it has taken half
    /// a second (one line, redrawn, with a proof's nodes and steps and a --max-path table's
    /// share filled; a filter with thousands of argument values can take seconds), `always`
    /// the lifting, every layout, the passes and every proof as a line of its own, `never`
    /// nothing.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto, value_name = "WHEN")]
    pub progress: ProgressMode,
}

/// `--quiet`, for the notes and warnings printed from the helpers below.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `eprintln!` unless `--quiet`: compile's notes, warnings and summary lines.
macro_rules! say {
    ($($arg:tt)*) => {
        if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
            eprintln!($($arg)*);
        }
    };
}

impl CompileArgs {
    /// Whether a report is wanted: `--report`, or a `--report-format` given.
    fn wants_report(&self) -> bool {
        self.report || self.report_format.is_some()
    }

    /// The dialect a Firecracker file is read in.
    fn dialect(&self) -> FirecrackerDialect {
        self.firecracker_dialect
            .unwrap_or(FirecrackerDialect::Libseccomp)
    }
}

/// Where syscall numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SyscallTable {
    /// secopt's own tables (Linux 6.18, every architecture).
    Builtin,
    /// The linked libseccomp's table: what runc resolves with the same library.
    Libseccomp,
}

impl SyscallTable {
    /// The resolver, and a description for the output's settings.
    pub(super) fn resolver(self) -> Result<(Option<SyscallResolver>, String), Failure> {
        match self {
            SyscallTable::Builtin => Ok((None, "builtin (Linux 6.18)".to_string())),
            #[cfg(feature = "libseccomp")]
            SyscallTable::Libseccomp => Ok((
                Some(SyscallResolver::libseccomp()),
                format!("libseccomp {}", SyscallResolver::libseccomp_version()),
            )),
            #[cfg(not(feature = "libseccomp"))]
            SyscallTable::Libseccomp => Err(Failure::input(
                "--syscall-table libseccomp: this secopt was built without the `libseccomp` \
                 feature; rebuild it with `--features libseccomp` (needs the system libseccomp)",
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FirecrackerDialect {
    /// Firecracker's in-tree seccompiler since 1.11, built on libseccomp.
    Libseccomp,
    /// Firecracker's in-tree seccompiler up to 1.10, its own copy of rust-vmm's BPF backend:
    /// only `default_action`/`filter_action`, no `user_notif`, Linux 5.10's syscall names, and
    /// an entry without `args` must be its syscall's only one.
    #[value(name = "firecracker-1.10")]
    Firecracker110,
    /// The rust-vmm seccompiler crate's own BPF backend, as programs that embed the crate use
    /// it (the same programs as Firecracker 1.10's, from files read a little differently).
    RustVmm,
}

impl FirecrackerDialect {
    /// The policy front end's name for these semantics.
    pub fn dialect(self) -> Dialect {
        match self {
            FirecrackerDialect::Libseccomp => Dialect::Libseccomp,
            FirecrackerDialect::RustVmm => Dialect::RustVmmSeccompiler,
            FirecrackerDialect::Firecracker110 => Dialect::Firecracker110,
        }
    }
}

pub fn run(args: CompileArgs) -> Result<i32, Failure> {
    QUIET.store(args.quiet, std::sync::atomic::Ordering::Relaxed);
    // The weights file is read once, before the profile: one that cannot be read, parsed or
    // resolved fails before the profile says anything, and its warnings come once, not once
    // per Firecracker thread. Its names resolve on the native arch: the first --arch, else
    // the host's, as for the profile.
    check_not_overwriting_input(&args)?;
    let weights = match &args.weights {
        Some(path) if !args.no_optimize => {
            if path == &args.profile && path.as_os_str() == "-" {
                return Err(Failure::input(
                    "the profile and --weights cannot both be stdin (`-`)",
                ));
            }
            let native = args
                .arches
                .first()
                .copied()
                .or_else(Arch::host)
                .ok_or_else(|| {
                    Failure::input("this host's architecture has no syscall table; give --arch")
                })?;
            Some(read_weights(
                path,
                Some(native),
                args.skip_unknown,
                args.quiet,
            )?)
        }
        _ => None,
    };
    let bytes = read_input(&args.profile)?;
    let source = display_name(&args.profile);
    if let Some(kind) = super::io::compiled_filter_kind(&bytes, &source) {
        let given = args.profile.display().to_string();
        let extra = if kind.contains("Firecracker") {
            " --thread vcpu"
        } else if kind.contains("big-endian") {
            " --input-format raw-be"
        } else {
            ""
        };
        return Err(Failure::input(format!(
            "{source}: this is {kind}, not a profile; `secopt optimize {given}{extra} -o OUT` \
             optimizes it and writes it as compile does (raw, assembly, C, Rust, Go, base64, \
             JSON: `-o OUT.h` is a C header)"
        )));
    }
    let caps = CapSet::parse(&args.caps).map_err(|e| Failure::input(format!("--caps: {e}")))?;
    let kernel = args.kernel;
    let base_name = args.name.clone().unwrap_or_else(|| {
        args.profile
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| *s != "-")
            .unwrap_or("seccomp_filter")
            .to_string()
    });
    let firecracker = args.firecracker || looks_like_firecracker(&bytes);
    // Capabilities choose an OCI profile's `includes`/`excludes` rules; a Firecracker file has
    // none, and its filters do not record them.
    let mut settings = Vec::new();
    if !firecracker {
        settings.push(("caps".to_string(), args.caps.clone()));
    }
    if !args.arches.is_empty() {
        let names: Vec<&str> = args.arches.iter().map(|a| a.name()).collect();
        settings.push(("arch".to_string(), names.join(",")));
    }
    if args.strict {
        settings.push(("strict".to_string(), "yes".to_string()));
    }
    let (resolver, table) = args.syscall_table.resolver()?;
    settings.push(("syscall-table".to_string(), table));
    let options = CompileOptions {
        runc_compat: args.runc_compat,
        settings,
        ..Default::default()
    };
    let optimizer = Optimizer::new(&args, kernel, weights);

    if args.firecracker && super::io::looks_like_oci(&bytes) {
        return Err(Failure::input(format!(
            "{source}: --firecracker, but this is an OCI profile (it has `defaultAction` or \
             `ociVersion`): leave --firecracker out"
        )));
    }
    check_options_apply(&args, &source, firecracker)?;
    let filters: Vec<(Option<String>, Built)> = if firecracker {
        compile_firecracker(&args, &bytes, &source, &options, resolver, &optimizer)?
    } else {
        let resolve = ResolveOptions {
            native: args.arches.first().copied(),
            arches: (!args.arches.is_empty()).then(|| args.arches.clone()),
            caps,
            kernel,
            strict: args.strict,
            resolver,
        };
        let policy = policy::oci::parse(&bytes, &source).map_err(input_error)?;
        if !args.strict {
            // Under --strict they are the error resolving gives.
            report_warnings(&policy);
        }
        let resolved = policy::resolve(&policy, &resolve).map_err(resolve_failure)?;
        // Computed once: it rebuilds libseccomp's rule trees where a block has a pseudo-syscall.
        let unenforced = crate::compile::lowering_warnings(&resolved);
        if args.strict {
            refuse_unenforced(unenforced.clone(), &source)?;
        }
        if args.runc_compat {
            if let Some(why) = runc_refusal(&resolved) {
                return Err(Failure::input(format!("{source}: {why}")));
            }
        }
        report_unknown(&resolved, None, true, &unenforced);
        let skipped = match args.syscall_table {
            SyscallTable::Builtin => report_names_runc_may_skip(&resolved),
            _ => None,
        };
        let (filter, optimized) = optimizer.build(&resolved, &options)?;
        // Said on stderr above, and kept with the filter's other warnings (`--emit json`).
        let filter = match skipped {
            Some(w) => with_warning(filter, w)?,
            None => filter,
        };
        vec![(None, (filter, optimized))]
    };

    let to_stdout = write_all(&args, &base_name, &filters)?;
    if args.wants_report() {
        print_reports(&args, &filters, to_stdout)?;
    }
    Ok(EXIT_OK)
}

/// The `--emit` spelling of `format`.
pub(super) fn emit_name(format: EmitFormat) -> String {
    clap::ValueEnum::to_possible_value(&format)
        .map_or_else(String::new, |v| v.get_name().to_string())
}

pub(super) fn parse_go_package(s: &str) -> Result<String, String> {
    compile::go_package_name(s).map(str::to_string)
}

/// `--name`: an identifier C, Rust and Go can all declare, taken as given. A default name
/// (from the file) is made into one; a name the user typed is not rewritten behind their
/// back (`my name` became `my_name`, `linux` became `filter_linux`): it is refused with the
/// name that would be used.
pub(super) fn parse_array_name(s: &str) -> Result<String, String> {
    let usable = compile::identifier(s);
    if usable == s {
        return Ok(s.to_string());
    }
    Err(format!(
        "`{}` cannot name the array: --name takes a name C, Rust and Go can all declare \
         (ASCII letters, digits and `_`, starting with a letter; not a keyword, `main`, \
         `linux`, `unix`, `i386` or `BPF_*`); `{usable}` is one",
        crate::policy::printable(s)
    ))
}

/// Refuses options that do nothing for this kind of profile, instead of ignoring them: runc's
/// stub is not part of a Firecracker filter, and an OCI profile is one filter, not threads.
fn check_options_apply(args: &CompileArgs, source: &str, firecracker: bool) -> Result<(), Failure> {
    let refuse = |what: &str| -> Result<(), Failure> {
        let kind = if firecracker {
            "a Firecracker file"
        } else {
            "an OCI profile"
        };
        Err(Failure::input(format!("{source}: {what} (this is {kind})")))
    };
    if firecracker {
        if args.runc_compat {
            return refuse("--runc-compat adds runc's ENOSYS stub to OCI profiles");
        }
        if args.caps != "default" {
            return refuse(
                "--caps chooses an OCI profile's `includes`/`excludes` rules by capability; \
                 Firecracker files have no such rules",
            );
        }
        return Ok(());
    }
    if args.thread.is_some() {
        return refuse("--thread only applies to Firecracker files");
    }
    if args.firecracker_dialect.is_some() {
        return refuse("--firecracker-dialect only applies to Firecracker files");
    }
    if let Some(out) = &args.output {
        let text = out.to_string_lossy();
        let per_thread = text.contains("{thread}") || text.ends_with('/') || out.is_dir();
        if per_thread && out != Path::new("-") {
            return refuse(&format!(
                "-o {text}: a directory or a {{thread}} pattern is for Firecracker files, one \
                 file per thread; give the filter's file name"
            ));
        }
    }
    Ok(())
}

/// Refuses `-o` naming the input itself: compiling would replace the profile with its filter.
fn check_not_overwriting_input(args: &CompileArgs) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let (Some(out), input) = (&args.output, &args.profile) else {
        return Ok(());
    };
    if input == Path::new("-") || out == Path::new("-") {
        return Ok(());
    }
    let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(out)) else {
        return Ok(());
    };
    if a.is_file() && a.dev() == b.dev() && a.ino() == b.ino() {
        return Err(Failure::input(format!(
            "-o {}: that is the profile being compiled; writing the filter there would replace \
             it: choose another file",
            out.display()
        )));
    }
    Ok(())
}

/// A compiled filter with the optimizer's result, when it ran.
type Built = (CompiledFilter, Option<Optimized>);

/// Lowers resolved policies and optimizes them as the flags say.
struct Optimizer<'a> {
    args: &'a CompileArgs,
    kernel: Option<KernelVersion>,
    /// `--weights`, read on the native arch.
    weights: Option<Weights>,
}

impl Optimizer<'_> {
    fn new(
        args: &CompileArgs,
        kernel: Option<KernelVersion>,
        weights: Option<Weights>,
    ) -> Optimizer<'_> {
        Optimizer {
            args,
            kernel,
            weights,
        }
    }

    fn build(&self, resolved: &Resolved, options: &CompileOptions) -> Result<Built, Failure> {
        if self.args.no_optimize {
            let filter = compile::compile(resolved, options).map_err(|e| {
                let mut message = hints::compile_error(&e);
                // The plain lowering is what is over the limit: the optimized filter, which
                // `--no-optimize` turned off, may fit.
                if matches!(e, CompileError::TooLarge { .. }) {
                    message.push_str("; without --no-optimize the optimizer may make it fit");
                }
                Failure::input(message)
            })?;
            return Ok((filter, None));
        }
        let status = StatusLine::new(&resolved.source, self.args.progress, self.args.quiet);
        let budget = self.args.self_check.budget();
        let opts = OptimizeOptions {
            weights: self.weights.clone(),
            native: self.args.arches.first().copied(),
            cost_model: self.args.cost_model,
            kernel: self.kernel.unwrap_or(KernelVersion::MODELLED),
            verify: !self.args.no_verify,
            report: self.args.wants_report(),
            max_path: self.args.max_path,
            favor: self.args.favor,
            progress: status.as_ref().map(StatusLine::progress),
            proof_meter: status.as_ref().map(|s| s.proof_meter(&budget)),
            self_check_budget: budget,
        };
        let built = compile::compile_optimized(resolved, options, &opts);
        drop(status);
        let (filter, out) = built.map_err(|e| Failure::input(hints::compile_error(&e)))?;
        for note in &out.notes {
            say!(
                "secopt: warning: {}: optimizer: {}",
                resolved.source,
                hints::note(note)
            );
        }
        Ok((filter, Some(out)))
    }
}

/// The optimizer's report of every filter, to stdout, or to stderr when a filter went there.
fn print_reports(
    args: &CompileArgs,
    filters: &[(Option<String>, Built)],
    to_stdout: bool,
) -> Result<(), Failure> {
    let reports: Vec<Reported> = filters
        .iter()
        .filter_map(|(thread, (filter, out))| {
            let out = out.as_ref()?;
            let info = filter.info();
            Some(Reported {
                input: info.source.as_str(),
                thread: thread.as_deref(),
                out,
                report: out.report.as_ref()?,
                warnings: info.warnings.as_slice(),
            })
        })
        .collect();
    print_report_list(
        args.report_format.unwrap_or(Format::Text),
        &reports,
        to_stdout,
        Reference::Lowering,
    )
}

fn input_error(e: impl std::fmt::Display) -> Failure {
    Failure::input(e.to_string())
}

/// A profile that does not resolve, as a failure. `--strict`'s unknown names get the names
/// each is likely a typo for, as the warning without `--strict` gives them (`mkdri`: a typo
/// for `mkdir`?); a name secopt's own tables know (one newer than `--syscall-table
/// libseccomp`'s) gets none.
pub(super) fn resolve_failure(e: PolicyError) -> Failure {
    let mut failure = input_error(&e);
    if let PolicyError::UnknownSyscalls { unknown, .. } = &e {
        let mut names: Vec<&str> = unknown.values().flatten().map(String::as_str).collect();
        names.sort_unstable();
        names.dedup();
        failure.message += &hints::typos(names);
    }
    failure
}

/// `filter` with `warning` added to its info's warnings (the program is unchanged).
fn with_warning(
    filter: CompiledFilter,
    warning: policy::Warning,
) -> Result<CompiledFilter, Failure> {
    let mut info = filter.info().clone();
    info.warnings.push(warning);
    CompiledFilter::new(filter.into_program(), info).map_err(input_error)
}

fn compile_firecracker(
    args: &CompileArgs,
    bytes: &[u8],
    source: &str,
    options: &CompileOptions,
    resolver: Option<SyscallResolver>,
    optimizer: &Optimizer<'_>,
) -> Result<Vec<(Option<String>, Built)>, Failure> {
    if args.arches.len() > 1 {
        return Err(Failure::input(
            "a Firecracker filter is built for one architecture; give --arch once",
        ));
    }
    let arch = match args.arches.first() {
        Some(&a) => a,
        None => Arch::host().ok_or_else(|| {
            Failure::input("this host's architecture has no syscall table; give --arch")
        })?,
    };
    let dialect = args.dialect().dialect();
    let fc = FirecrackerOptions { arch, dialect };
    let policies: Vec<(String, Policy)> = policy::firecracker::parse_with(bytes, source, &fc)
        .map_err(input_error)?
        .into_iter()
        .filter(|(thread, _)| args.thread.as_ref().is_none_or(|t| t == thread))
        .collect();
    if policies.is_empty() {
        return Err(Failure::input(match &args.thread {
            Some(t) => format!("{source}: no thread filter named {t:?}"),
            None => format!("{source}: no thread filters"),
        }));
    }
    let resolve = ResolveOptions {
        native: Some(arch),
        strict: args.strict,
        resolver,
        ..Default::default()
    };
    if args.strict {
        // Every thread's warnings in one error, not the first thread's alone (each resolve
        // would refuse only its own).
        let warnings: Vec<_> = policies
            .iter()
            .flat_map(|(_, p)| p.warnings.iter().cloned())
            .collect();
        if !warnings.is_empty() {
            return Err(input_error(PolicyError::Warnings {
                file: source.to_string(),
                warnings,
            }));
        }
    }
    let mut out = Vec::new();
    for (thread, policy) in policies {
        if !args.strict {
            // Under --strict they are the error above.
            report_warnings(&policy);
        }
        let mut resolved = policy::resolve(&policy, &resolve).map_err(input_error)?;
        let unenforced = crate::compile::lowering_warnings(&resolved);
        if args.strict {
            refuse_unenforced(unenforced.clone(), source)?;
        }
        report_unknown(&resolved, Some(&thread), true, &unenforced);
        // Every message of the build (errors, optimizer notes) names the source: with three
        // threads in one file, it names the thread too; the filter's info keeps the file.
        let labelled = format!("{} (thread {})", resolved.source, shown(&thread));
        let file = std::mem::replace(&mut resolved.source, labelled);
        let (filter, optimized) = optimizer.build(&resolved, options)?;
        let mut info = filter.info().clone();
        info.source = file;
        info.thread = Some(thread.clone());
        let filter = CompiledFilter::new(filter.into_program(), info).map_err(input_error)?;
        out.push((Some(thread), (filter, optimized)));
    }
    Ok(out)
}

/// The profile's warnings, on stderr (unless `--quiet`); `verify` and `diff` print them too.
pub(super) fn report_warnings(policy: &Policy) {
    for w in &policy.warnings {
        say!("secopt: warning: {}: {w}", policy.source);
    }
}

/// A Firecracker thread's warnings (its [`Resolved::warnings`], and where libseccomp's
/// filter would not enforce it), on stderr unless `--quiet`: what `verify` and `diff` say of
/// a Firecracker file, as `compile` does.
pub(super) fn report_thread_warnings(resolved: &Resolved, thread: &str) {
    let unenforced = crate::compile::lowering_warnings(resolved);
    for w in resolved.warnings.iter().chain(&unenforced) {
        say!(
            "secopt: warning: {} (thread {}): {w}",
            resolved.source,
            shown(thread)
        );
    }
}

/// `--strict`: where libseccomp's filter would not enforce the profile is an error too.
pub(super) fn refuse_unenforced(
    unenforced: Vec<policy::Warning>,
    source: &str,
) -> Result<(), Failure> {
    if unenforced.is_empty() {
        return Ok(());
    }
    Err(input_error(PolicyError::Warnings {
        file: source.to_string(),
        warnings: unenforced,
    }))
}

/// Why runc would refuse to start a container with this profile, if it would: `--runc-compat`
/// promises what runc loads, and for these it loads nothing (libcontainer/seccomp
/// `InitSeccomp`, and the parent's "seccomp listenerPath is not set" on `procSeccomp`).
fn runc_refusal(resolved: &Resolved) -> Option<String> {
    if let Some(w) = crate::compile::runc_refuses_byte_order(resolved) {
        return Some(w.message);
    }
    if let Some(a) = resolved.arches.iter().find(|a| a.notifies("write")) {
        return Some(format!(
            "SCMP_ACT_NOTIFY on `write` ({}): runc refuses to start the container (it needs \
             `write` to hand the listener over)",
            a.arch.name()
        ));
    }
    let any_notify = resolved.arches.iter().any(|a| a.has_notify());
    (any_notify && resolved.listener_path.is_none()).then(|| {
        "SCMP_ACT_NOTIFY rules but no `listenerPath`: runc refuses to start the container \
         (\"seccomp listenerPath is not set\"); name the agent's socket in the profile"
            .to_string()
    })
}

/// Where the names a note leaves out are listed.
const MORE: &str = " (`--emit json` lists them)";

/// The rules that never apply and `unenforced` ([`crate::compile::runc_unenforced`], which the
/// caller computes once for this and `--strict`) as warnings; the names runc would skip (not
/// the socket and IPC calls that libseccomp still applies through `socketcall`/`ipc`): one
/// warning for each name no arch has that is likely a typo, one for the other names no arch
/// has, one for those only the table in use lacks, and with `notes`, per arch, notes for the
/// names of other arches.
pub(super) fn report_unknown(
    resolved: &Resolved,
    thread: Option<&str>,
    notes: bool,
    unenforced: &[policy::Warning],
) {
    let prefix = match thread {
        Some(t) => format!("{} (thread {})", resolved.source, shown(t)),
        None => resolved.source.clone(),
    };
    for w in resolved.shadowed.iter().chain(unenforced) {
        say!("secopt: warning: {prefix}: {w}");
    }
    // A name no table in use has, once, with its place and the name it is likely a typo for
    // (every arch lacks it: one warning, not one per arch). A name secopt's own tables have
    // is no typo: the table in use (`--syscall-table libseccomp`, an older library) lacks it.
    let mut table_lacks: Vec<&str> = Vec::new();
    let mut no_hint: Vec<String> = Vec::new();
    for (name, origin) in compile::names_no_arch_has(resolved) {
        match hints::likely_meant(name) {
            hints::Meant::Itself => table_lacks.push(name),
            hints::Meant::Others(meant) => {
                let place = origin.map_or_else(String::new, |o| format!("{o}: "));
                say!(
                    "secopt: warning: {prefix}: {place}`{}` is no syscall of any architecture \
                     secopt knows, skipped as runc skips it: a typo for {meant}?",
                    policy::printable(name)
                );
            }
            hints::Meant::Nothing => no_hint.push(match origin {
                Some(o) => format!("{name} ({o})"),
                None => name.to_string(),
            }),
        }
    }
    if !no_hint.is_empty() {
        say!(
            "secopt: warning: {prefix}: {} no syscall of any architecture secopt knows, \
             skipped as runc skips {}: {}",
            if no_hint.len() == 1 {
                "1 name is".to_string()
            } else {
                format!("{} names are", no_hint.len())
            },
            if no_hint.len() == 1 { "it" } else { "them" },
            policy::name_listing(&no_hint, 32, MORE)
        );
    }
    if !table_lacks.is_empty() {
        say!(
            "secopt: warning: {prefix}: {} name{} the syscall table in use does not know, \
             though secopt's own (Linux 6.18) does, skipped as runc skips {}: {} (newer than \
             the table)",
            table_lacks.len(),
            if table_lacks.len() == 1 { "" } else { "s" },
            if table_lacks.len() == 1 { "it" } else { "them" },
            policy::name_listing(&table_lacks, 32, MORE)
        );
    }
    let libseccomp = resolved.dialect == Dialect::Libseccomp;
    for a in &resolved.arches {
        // Profiles list the syscalls of every arch they support (Docker's names chown32 and
        // _llseek for arm and i386); those are expected on other arches and only summarized.
        // The names no arch has were said above.
        let policy::UnnumberedNames {
            other_arch: elsewhere,
            multiplexed,
            ..
        } = a.unnumbered_names(libseccomp);
        if !notes {
            continue;
        }
        if !elsewhere.is_empty() {
            say!(
                "secopt: note: {prefix}: {} skipped on {}: {}",
                if elsewhere.len() == 1 {
                    "1 name of another architecture".to_string()
                } else {
                    format!("{} names of other architectures", elsewhere.len())
                },
                a.arch,
                policy::name_listing(&elsewhere, 8, MORE)
            );
        }
        if !multiplexed.is_empty() {
            say!(
                "secopt: note: {prefix}: on {} only through socketcall/ipc, as libseccomp applies them: {}",
                a.arch,
                multiplexed.join(", ")
            );
        }
    }
    if !resolved.unsupported_arches.is_empty() {
        say!(
            "secopt: warning: {prefix}: not covered (secopt has no syscall table): {}",
            resolved.unsupported_arches.join(", ")
        );
    }
}

/// The warning for a profile resolved with secopt's own table that names syscalls older
/// libseccomp releases, and so runc linked with them, do not know
/// ([`compile::names_runc_may_skip`]): runc skips those names, so its filter does not apply
/// their rules where secopt's (from its Linux 6.18 tables) does; they get runc's ENOSYS
/// stub's answer above its (lower) threshold and the default action below it. Its path is the
/// whole profile (`$`).
pub(super) fn runc_may_skip_warning(resolved: &Resolved) -> Option<policy::Warning> {
    let named = compile::names_runc_may_skip(resolved);
    if named.is_empty() {
        return None;
    }
    let message = format!(
        "resolved with secopt's Linux 6.18 syscall table; runc skips the names its libseccomp \
         does not know, and libseccomp up to 2.5.5 (Debian 12 ships 2.5.4) does not know {}: \
         runc's filter ignores their rules, and its ENOSYS stub, whose threshold is then the \
         highest number its libseccomp knows, answers ENOSYS above that (unnamed syscalls \
         included) and the default action below it. {}",
        named.join(", "),
        if cfg!(feature = "libseccomp") {
            "--syscall-table libseccomp resolves as the linked libseccomp does"
        } else {
            "--syscall-table libseccomp would resolve as the system's libseccomp does, in a \
             secopt built with `--features libseccomp` (this one is not); or leave those names \
             out of the profile"
        }
    );
    Some(policy::Warning {
        path: "$".to_string(),
        message,
        kind: policy::WarningKind::NotEnforced,
    })
}

/// Says [`runc_may_skip_warning`] on stderr (unless `--quiet`), and returns it.
pub(super) fn report_names_runc_may_skip(resolved: &Resolved) -> Option<policy::Warning> {
    let warning = runc_may_skip_warning(resolved)?;
    say!("secopt: warning: {}: {}", resolved.source, warning.message);
    Some(warning)
}

/// The format: `--emit`, else the extension, else assembly for a terminal and raw otherwise.
fn format_for(args: &CompileArgs, path: &Path) -> EmitFormat {
    if let Some(f) = args.emit {
        return f;
    }
    if path != Path::new("-") {
        if let Some(f) = EmitFormat::from_extension(path) {
            return f;
        }
        return EmitFormat::Raw;
    }
    if std::io::stdout().is_terminal() {
        EmitFormat::Asm
    } else {
        EmitFormat::Raw
    }
}

/// Refuses a thread name that cannot stand as one file name in `-o DIR/` or a `{thread}`
/// pattern: a name is the profile's own text, and `../x`, `/etc/x` or an empty name would put
/// a filter outside the directory the user chose (or make a hidden `.bpf`).
fn check_thread_file_name(profile: &Path, thread: &str) -> Result<(), Failure> {
    let plain = !thread.is_empty()
        && thread != "."
        && thread != ".."
        && !thread.contains(['/', '\0'])
        && !thread.chars().any(char::is_control);
    if plain {
        return Ok(());
    }
    Err(Failure::input(format!(
        "{}: thread {:?} cannot name a file in -o DIR/ or a {{thread}} pattern (it is \
         empty, `.` or `..`, or holds `/` or a control character); write that thread with \
         --thread and -o FILE; nothing was written",
        display_name(profile),
        thread
    )))
}

/// Where each filter goes: one output, a directory, or a `{thread}` pattern. Returns whether
/// a filter went to stdout.
fn write_all(
    args: &CompileArgs,
    base_name: &str,
    filters: &[(Option<String>, Built)],
) -> Result<bool, Failure> {
    let mut to_stdout = false;
    let output = args.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    if let Some(encoding) = args.emit.and_then(EmitFormat::thread_filters_encoding) {
        return write_thread_filters(args, filters, encoding, &output);
    }
    let out_text = output.to_string_lossy().into_owned();
    let is_dir = out_text.ends_with('/') || (output != Path::new("-") && output.is_dir());
    let is_pattern = out_text.contains("{thread}");
    if filters.len() > 1 && !is_dir && !is_pattern {
        let threads: Vec<&str> = filters.iter().filter_map(|(t, _)| t.as_deref()).collect();
        return Err(Failure::input(format!(
            "{}: {} thread filters ({}); choose one with --thread, write all with -o DIR/ or -o 'NAME-{{thread}}.bpf', or write Firecracker's own filter file with --emit firecracker",
            display_name(&args.profile),
            filters.len(),
            threads.join(", ")
        )));
    }
    // `-o DIR/` that does not exist yet is made (one level: its parent must exist), after
    // every output is emitted and just before the first is written.
    let make_dir = is_dir && out_text.ends_with('/') && !output.exists();
    // Every output is emitted and its directory checked before the first is written, and
    // files this run created are removed again if a later write fails: a failure leaves
    // none behind (files that existed before are replaced one by one, each atomically).
    let mut planned = Vec::with_capacity(filters.len());
    for (thread, (filter, _)) in filters {
        if let Some(t) = thread.as_deref().filter(|_| is_pattern || is_dir) {
            check_thread_file_name(&args.profile, t)?;
        }
        let path = match thread {
            Some(t) if is_pattern => PathBuf::from(out_text.replace("{thread}", t)),
            Some(t) if is_dir => {
                let ext = match args.emit.unwrap_or(EmitFormat::Raw) {
                    EmitFormat::Raw => "bpf",
                    EmitFormat::Asm => "s",
                    EmitFormat::C => "h",
                    EmitFormat::Rust => "rs",
                    EmitFormat::Go => "go",
                    EmitFormat::Base64 => "b64",
                    EmitFormat::Json => "json",
                    // One file for all threads, written by write_thread_filters.
                    EmitFormat::Firecracker | EmitFormat::FirecrackerBincode => "bin",
                };
                output.join(format!("{t}.{ext}"))
            }
            _ => output.clone(),
        };
        let format = format_for(args, &path);
        if format.is_binary() && path == Path::new("-") && std::io::stdout().is_terminal() {
            return Err(Failure::input(
                "refusing to write a binary filter to a terminal; use -o FILE, --emit asm, or redirect stdout",
            ));
        }
        if filters.len() > 1 {
            check_output_dir(if make_dir { &output } else { &path })
                .and_then(|()| check_not_an_input(&path))
                .map_err(|e| Failure::input(format!("{}; nothing was written", e.message)))?;
        }
        let name = match thread {
            Some(t) => format!("{base_name}_{t}"),
            None => base_name.to_string(),
        };
        let named = matches!(format, EmitFormat::C | EmitFormat::Rust | EmitFormat::Go);
        // Options that would do nothing are refused (docs/design-notes.md); nothing has been
        // written yet.
        if args.name.is_some() && !named {
            return Err(Failure::input(format!(
                "--name names the array of C, Rust and Go output; {} output has none (--emit c, rust or go, or a .h, .rs or .go output)",
                emit_name(format)
            )));
        }
        if args.go_package.is_some() && format != EmitFormat::Go {
            return Err(Failure::input(format!(
                "--go-package is for Go output; {} output is not Go (--emit go, or a .go output)",
                emit_name(format)
            )));
        }
        let bytes = match (format, &args.go_package) {
            (EmitFormat::Go, Some(package)) => compile::emit_go(filter, &name, package),
            _ => compile::emit(filter, format, &name),
        };
        planned.push((thread, filter, path, bytes));
    }
    let outputs: Vec<(&Path, &[u8])> = planned
        .iter()
        .map(|(_, _, path, bytes)| (path.as_path(), bytes.as_slice()))
        .collect();
    if make_dir {
        std::fs::create_dir(&output).map_err(|e| {
            Failure::input(format!(
                "{out_text}: cannot make the directory: {e}; nothing was written"
            ))
        })?;
    }
    super::io::write_all_or_none(&outputs).inspect_err(|_| {
        if make_dir {
            // Empty again: write_all_or_none removed what it wrote.
            let _ = std::fs::remove_dir(&output);
        }
    })?;
    for (thread, filter, path, _) in &planned {
        if path.as_path() == Path::new("-") {
            to_stdout = true;
        } else {
            say!(
                "secopt: {}{}: {} instructions ({}){} -> {}",
                filter.info().source,
                thread
                    .as_deref()
                    .map(|t| format!(" thread {}", shown(t)))
                    .unwrap_or_default(),
                filter.program().len(),
                filter
                    .info()
                    .arches
                    .iter()
                    .map(|a| a.arch.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                optimization_summary(filter.info().optimization.as_ref()),
                path.display()
            );
        }
    }
    Ok(to_stdout)
}

/// The thread kinds Firecracker loads a filter file with: exactly these, no more, no fewer
/// (`filter_thread_categories` in Firecracker; names compared in lower case).
const FIRECRACKER_THREADS: [&str; 3] = ["api", "vcpu", "vmm"];

/// `--emit firecracker`: every thread's filter in one Firecracker filter file, refused unless
/// Firecracker would load it (its three threads, its compiler's arches, its size limit).
fn write_thread_filters(
    args: &CompileArgs,
    filters: &[(Option<String>, Built)],
    encoding: Encoding,
    output: &Path,
) -> Result<bool, Failure> {
    let source = display_name(&args.profile);
    // As for the other outputs without an array (docs/design-notes.md).
    for (given, flag) in [
        (args.name.is_some(), "--name"),
        (args.go_package.is_some(), "--go-package"),
    ] {
        if given {
            return Err(Failure::input(format!(
                "{flag} is for C, Rust and Go output; Firecracker's filter file has no array                  or package to name"
            )));
        }
    }
    let mut threads = Vec::with_capacity(filters.len());
    for (thread, (filter, _)) in filters {
        let Some(thread) = thread else {
            return Err(Failure::input(format!(
                "{source}: --emit firecracker writes Firecracker's filter file, one filter per \
                 thread kind, and this is an OCI profile; write it with --emit raw"
            )));
        };
        if let Some(arch) = filter
            .info()
            .arches
            .iter()
            .map(|a| a.arch)
            .find(|a| !matches!(a, Arch::X86_64 | Arch::Aarch64 | Arch::Riscv64))
        {
            return Err(Failure::input(format!(
                "{source}: thread {} covers {}; Firecracker's compiler targets x86_64, aarch64 \
                 and riscv64 only",
                shown(thread),
                arch.name()
            )));
        }
        threads.push((thread.clone(), filter));
    }
    let mut names: Vec<String> = threads.iter().map(|(t, _)| t.to_lowercase()).collect();
    names.sort();
    if names != FIRECRACKER_THREADS {
        return Err(Failure::input(format!(
            "{source}: Firecracker loads a filter file only if it holds exactly the threads {}; \
             this one would hold {}{}",
            FIRECRACKER_THREADS.join(", "),
            names.join(", "),
            if args.thread.is_some() {
                " (--thread keeps one; leave it out)"
            } else {
                ""
            }
        )));
    }
    let rust_vmm_backend = matches!(
        args.dialect(),
        FirecrackerDialect::RustVmm | FirecrackerDialect::Firecracker110
    );
    if rust_vmm_backend && encoding == Encoding::Bitcode {
        // Not refused: the file is what was asked for, and Firecracker refuses it at start.
        say!(
            "secopt: warning: {source}: the releases with a rust-vmm backend, Firecracker up to \
             1.10, read bincode, not bitcode (Firecracker 1.15 and later): for those releases \
             use --emit firecracker-bincode"
        );
    }
    let bytes = compile::emit_thread_filters(&threads, encoding);
    if bytes.len() > FIRECRACKER_BYTES_LIMIT {
        return Err(Failure::input(format!(
            "{source}: the filter file would be {} bytes; Firecracker reads at most {}",
            bytes.len(),
            FIRECRACKER_BYTES_LIMIT
        )));
    }
    let to_stdout = write_binary_output(output, &bytes, "a binary filter file")?;
    if !to_stdout {
        let sizes: Vec<String> = threads
            .iter()
            .map(|(t, f)| match &f.info().optimization {
                Some(o) => format!("{t} {} -> {}", o.reference_instructions, f.program().len()),
                None => format!("{t} {}", f.program().len()),
            })
            .collect();
        let infos: Vec<Option<&OptimizationInfo>> = threads
            .iter()
            .map(|(_, f)| f.info().optimization.as_ref())
            .collect();
        let optimization = if infos.iter().all(Option::is_none) {
            ", reference lowerings (--no-optimize)"
        } else if infos.iter().all(|o| o.is_some_and(|o| o.verified)) {
            ", optimized, each proved equal to its reference"
        } else {
            ", optimized, not verified"
        };
        say!(
            "secopt: {source}: {} thread filters ({} instructions){optimization} -> {} \
             (firecracker --seccomp-filter; {}, {})",
            threads.len(),
            sizes.join(", "),
            output.display(),
            encoding.name(),
            encoding.releases()
        );
    }
    Ok(to_stdout)
}

/// `, optimized from 1083, proved equal` for the summary line.
fn optimization_summary(o: Option<&OptimizationInfo>) -> String {
    match o {
        None => ", reference lowering (--no-optimize)".to_string(),
        Some(o) if o.method == Method::Unchanged => {
            if o.dropped_unproved() {
                ", reference lowering (nothing better was proved equal within the self-check's \
                 budget)"
                    .to_string()
            } else {
                ", reference lowering (the optimizer found nothing better)".to_string()
            }
        }
        Some(o) => format!(
            ", optimized from {}, {}",
            o.reference_instructions,
            if o.verified {
                "proved equal"
            } else {
                "not verified"
            }
        ),
    }
}
