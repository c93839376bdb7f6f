//! `secopt bench`: time a workload's syscalls on this kernel under several filters, side by
//! side with no filter and `RET ALLOW`, and report the deterministic cost beside it.
//!
//! Everything that can fail on bad input (profile, workload, filter files, the kernel
//! refusing a filter, a decision check) fails before any output is written; the report and
//! the plot are written atomically at the end.

use super::io::{check_can_write, display_name, read_input, write_output};
use super::{Failure, Format, EXIT_DIFFERENT, EXIT_OK};
use crate::arch::Arch;
use crate::bench::{self, peers, workload, BenchError, BenchOptions, Variant, VariantKind};
use crate::bpf::thread_filters::shown;
use crate::compile::{self, CompileOptions};
use crate::policy::{self, CapSet, KernelVersion, ResolveOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// How to read `--profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileFormat {
    /// Firecracker if the top level has no OCI key (`defaultAction`, `syscalls`, `linux`).
    Auto,
    /// OCI runtime-spec / Docker / podman.
    Oci,
    /// Firecracker seccompiler JSON (one filter per thread kind; pick one with --thread).
    Firecracker,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt bench --profile docker-default.json --workload nginx.strace-c.txt\n      \
Docker's default profile: libseccomp linear + tree, secopt, against none and RET ALLOW\n  \
secopt bench --profile firecracker.json --thread vcpu --probe firecracker-vcpu --plot vcpu.svg\n  \
secopt bench --bpf mine=filter.bpf --probe getpid --rounds 101\n  \
secopt bench --bpf stack=f0.bpf+f1.bpf+f2.bpf --bpf joined=one.bpf --probe common\n      \
a stack of filters (secopt dump's files) against the one filter secopt optimize joins it into\n  \
secopt bench --profile docker-default.json --workload redis.txt --no-cache --format json\n  \
secopt record -o app.json -- ./app && secopt bench --profile docker-default.json --workload app.json\n  \
secopt bench --list-probes\n\n\
Workloads: an `strace -c` / `strace -f -c` summary, a `secopt record` capture, or JSON \
{\"read\": 1200, \"ioctl(KVM_RUN)\": {\"syscall\": \"ioctl\", \"count\": 900, \"args\": [null, \"0xae80\"]}}. \
secopt's variant is laid out for the workload (as `secopt compile --weights` would). Each syscall is made \
through a harmless invocation (a never-open fd, NULL pointers, zero lengths, query-only \
arguments); syscalls without one (exit, fork, rt_sigreturn, ...) are listed as skipped. Filter \
returns other than ALLOW are rewritten to ERRNO for the run, with the path unchanged; such a \
call returns before the syscall runs, so its time is no overhead: it is marked `d` and left out \
of the workload-weighted figures. LOG is too (it lets the call run, but an audit record per call \
would flood the kernel log), and is listed apart from the denials.\n\n\
Exit status: 0 measured, 1 a decision check failed, 2 bad input (missing file, unknown \
syscall, a filter the kernel refuses).")]
pub struct BenchArgs {
    /// A profile to compile into variants: secopt's program and, when secopt is built with
    /// the `libseccomp` feature, the system libseccomp's linear and binary-tree programs.
    #[arg(short = 'p', long, value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
    /// How to read the profile.
    #[arg(long, value_enum, default_value_t = ProfileFormat::Auto)]
    pub profile_format: ProfileFormat,
    /// The Firecracker thread kind (`vmm`, `api`, `vcpu`).
    #[arg(long)]
    pub thread: Option<String>,
    /// Capabilities for `includes`/`excludes` (`default`, `all`, or names).
    #[arg(long, default_value = "default")]
    pub caps: String,
    /// Kernel version for `minKernel` (default: the running kernel).
    #[arg(long, value_name = "MAJOR.MINOR")]
    pub kernel: Option<KernelVersion>,
    /// A workload: `strace -c` summary, `secopt record` capture or JSON counts.
    #[arg(short = 'w', long, value_name = "FILE", conflicts_with = "probe")]
    pub workload: Option<PathBuf>,
    /// A built-in probe list (see --list-probes). Default without --workload: `common`.
    #[arg(long, value_name = "NAME")]
    pub probe: Option<String>,
    /// Leave out workload syscalls the architecture does not have (listed in the report)
    /// instead of failing.
    #[arg(long)]
    pub skip_unknown: bool,
    /// Also measure this filter (raw, assembly, a JSON filter document or `FILE:THREAD`), as
    /// `NAME=FILE`; repeatable. A stack of filters, installed together oldest first as a task
    /// carries them (e.g. `secopt dump`'s files): `NAME=FILE+FILE+…`.
    #[arg(long = "bpf", value_name = "NAME=FILE")]
    pub bpf: Vec<String>,
    /// Do not build libseccomp variants.
    #[arg(long)]
    pub no_libseccomp: bool,
    /// Do not build secopt's variant.
    #[arg(long)]
    pub no_secopt: bool,
    /// Rounds (each runs every variant once, in rotated order), 1 to 10000.
    #[arg(long, default_value_t = 31,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    pub rounds: usize,
    /// Timed calls per syscall per child, 1 to 1000000.
    #[arg(long, default_value_t = 200,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub calls: usize,
    /// Untimed warm-up calls before them, 0 to 1000000.
    #[arg(long, default_value_t = 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1_000_000))]
    pub warmup: usize,
    /// Model kernels before 5.11: every filter starts with an argument load, so the kernel
    /// caches no syscall and every call runs the whole filter.
    #[arg(long)]
    pub no_cache: bool,
    /// Pin the children to this CPU (default: the CPU secopt starts on).
    #[arg(long, conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin the children to a CPU.
    #[arg(long)]
    pub no_pin: bool,
    /// Bootstrap resamples for the 95% intervals (at least 100: fewer say nothing of them).
    #[arg(long, default_value_t = 2000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(100..))]
    pub bootstrap: usize,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 0x5ec0_9700)]
    pub seed: u64,
    /// Skip asking the kernel oracle whether every bench program decides every probe as its
    /// source filter does (the measurement children are checked either way).
    #[arg(long)]
    pub no_kernel_check: bool,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report here instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE", value_parser = super::io::output_path)]
    pub output: Option<PathBuf>,
    /// Also write an SVG chart of the overhead per syscall and in aggregate.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Syscalls shown in the chart (the most frequent), besides the aggregate.
    #[arg(long, default_value_t = 8)]
    pub plot_syscalls: usize,
    /// List the built-in probe lists and exit. With `--probe NAME`: that list's calls, with the
    /// argument values its probes are made with; `--format json` writes them as a workload
    /// file that `secopt analyze --workload` and `compile --weights` read.
    #[arg(long)]
    pub list_probes: bool,
}

fn bench_failure(e: BenchError) -> Failure {
    let code = match e {
        BenchError::Decision(_) | BenchError::Measure { .. } => EXIT_DIFFERENT,
        _ => super::EXIT_BAD_INPUT,
    };
    Failure {
        code,
        message: super::hints::bench_error(&e),
    }
}

/// Whether the JSON looks like an OCI profile rather than Firecracker's format.
fn looks_like_oci(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| {
            v.as_object().map(|o| {
                o.contains_key("defaultAction")
                    || o.contains_key("syscalls")
                    || o.contains_key("linux")
            })
        })
        .unwrap_or(true)
}

/// The variants a profile yields: libseccomp's (unless disabled) and secopt's.
fn profile_variants(
    a: &BenchArgs,
    native: Arch,
    workload: &workload::Workload,
) -> Result<(Vec<Variant>, Vec<String>), Failure> {
    let Some(path) = &a.profile else {
        if a.thread.is_some() {
            return Err(Failure::input("--thread needs --profile"));
        }
        return Ok((Vec::new(), Vec::new()));
    };
    let name = display_name(path);
    if a.no_secopt && a.no_libseccomp {
        return Err(Failure::input(format!(
            "--profile {name} with --no-secopt and --no-libseccomp: no variant is made from the \
             profile; drop one of them, or the profile"
        )));
    }
    let bytes = read_input(path)?;
    if let Some(kind) = super::io::compiled_filter_kind(&bytes, &name) {
        let stem = path
            .file_stem()
            .map_or("f".into(), |s| s.to_string_lossy().into_owned());
        return Err(Failure::input(format!(
            "{name}: this is {kind}, and --profile takes a profile; --bpf {stem}={} measures it",
            path.display()
        )));
    }
    let format = match a.profile_format {
        ProfileFormat::Auto if looks_like_oci(&bytes) => ProfileFormat::Oci,
        ProfileFormat::Auto => ProfileFormat::Firecracker,
        f => f,
    };
    let mut notes = Vec::new();
    let policy = match format {
        ProfileFormat::Firecracker => {
            let mut threads = policy::firecracker::parse(&bytes, &name, native)
                .map_err(|e| Failure::input(e.to_string()))?;
            let kinds: Vec<String> = threads.keys().cloned().collect();
            let thread = match (&a.thread, kinds.len()) {
                (Some(t), _) => t.clone(),
                (None, 1) => kinds[0].clone(),
                (None, _) => {
                    return Err(Failure::input(format!(
                        "{name}: a Firecracker file has one filter per thread kind; choose one with --thread ({})",
                        shown_names(&kinds)
                    )))
                }
            };
            let p = threads.remove(&thread).ok_or_else(|| {
                Failure::input(format!(
                    "{name}: no thread kind {thread:?} (the file has {})",
                    shown_names(&kinds)
                ))
            })?;
            notes.push(format!("profile {name}, thread {}", shown(&thread)));
            p
        }
        _ => {
            if a.thread.is_some() {
                return Err(Failure::input(format!(
                    "{name}: --thread applies to Firecracker files, and this is an OCI profile"
                )));
            }
            policy::oci::parse(&bytes, &name).map_err(|e| Failure::input(e.to_string()))?
        }
    };
    let caps = CapSet::parse(&a.caps).map_err(|e| Failure::input(format!("--caps: {e}")))?;
    let options = ResolveOptions {
        native: Some(native),
        caps,
        kernel: a.kernel,
        ..Default::default()
    };
    let resolved = policy::resolve(&policy, &options).map_err(|e| Failure::input(e.to_string()))?;
    for arch in &resolved.arches {
        // As compile says it: names libseccomp applies through socketcall/ipc are not skipped.
        let names = arch.unnumbered_names(resolved.dialect == policy::Dialect::Libseccomp);
        let skipped: Vec<&str> = names
            .other_arch
            .iter()
            .chain(&names.nowhere)
            .copied()
            .collect();
        if !skipped.is_empty() {
            notes.push(format!(
                "{name}: {} of its syscall names do not exist on {}, skipped there as runc does: {}",
                skipped.len(),
                arch.arch,
                policy::name_listing(&skipped, 6, "")
            ));
        }
        if !names.multiplexed.is_empty() {
            notes.push(format!(
                "{name}: on {} only through socketcall/ipc, as libseccomp applies them: {}",
                arch.arch,
                names.multiplexed.join(", ")
            ));
        }
    }
    // libseccomp's variants are what runc loads; where that filter does not enforce the
    // profile, its timings are of a filter that decides otherwise.
    for w in crate::compile::lowering_warnings(&resolved) {
        notes.push(format!("{name}: {w}"));
    }
    let mut variants = Vec::new();
    if a.no_libseccomp {
        // Asked not to.
    } else if peers::libseccomp_available() {
        variants.extend(peers::libseccomp_variants(&policy, &resolved).map_err(bench_failure)?);
    } else {
        notes.push(
            "no libseccomp variants: this secopt was built without the `libseccomp` feature (with libseccomp-dev installed: cargo build --release --features libseccomp)".into(),
        );
    }
    if !a.no_secopt {
        let filter = compile::compile(&resolved, &CompileOptions::default())
            .map_err(|e| Failure::input(e.to_string()))?;
        let reference = filter.into_program();
        // secopt's output is the optimized program, proved equal to the reference lowering
        // (which is measured too, as `secopt-ref`, so the optimizer's share is visible), laid
        // out for the workload being measured, as `secopt compile --weights` would.
        let mut weights = crate::optimize::Weights::new();
        for e in &workload.entries {
            weights
                .add_call(e.arch.token(), e.nr, e.count as f64, e.args)
                .map_err(|err| Failure::input(format!("{}: {err}", e.origin)))?;
        }
        let optimized = crate::optimize::optimize(
            &reference,
            &crate::optimize::OptimizeOptions {
                weights: Some(weights),
                cost_model: if a.no_cache {
                    crate::optimize::CostModel::NoCache
                } else {
                    crate::optimize::CostModel::AllowCache
                },
                verify: true,
                report: false,
                ..Default::default()
            },
        )
        .map_err(|e| Failure::input(format!("{name}: optimizing: {e}")))?;
        variants.push(Variant::program(
            "secopt",
            VariantKind::Secopt,
            optimized.program,
        ));
        variants.push(Variant::program(
            "secopt-ref",
            VariantKind::SecoptReference,
            reference,
        ));
    }
    Ok((variants, notes))
}

/// `--bpf NAME=FILE` variants.
fn file_variants(specs: &[String]) -> Result<Vec<Variant>, Failure> {
    specs
        .iter()
        .map(|spec| {
            let (name, file) = spec
                .split_once('=')
                .ok_or_else(|| Failure::input(format!("--bpf {spec}: expected NAME=FILE")))?;
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(Failure::input(format!(
                    "--bpf {spec}: the name must be non-empty and without spaces"
                )));
            }
            // `a.bpf+b.bpf` is a stack unless a file of that very name exists.
            let paths: Vec<PathBuf> = if file.contains('+') && !Path::new(file).is_file() {
                file.split('+').map(PathBuf::from).collect()
            } else {
                vec![PathBuf::from(file)]
            };
            if paths.iter().any(|p| p.as_os_str().is_empty()) {
                return Err(Failure::input(format!(
                    "--bpf {spec}: a file name is empty (expected NAME=FILE or NAME=FILE+FILE+…)"
                )));
            }
            let programs = paths
                .iter()
                .map(|p| super::io::load_program_to_install(p))
                .collect::<Result<Vec<_>, _>>()?;
            let kind = VariantKind::File {
                path: paths
                    .iter()
                    .map(|p| display_name(p))
                    .collect::<Vec<_>>()
                    .join("+"),
            };
            Ok(Variant::stack(name, kind, programs))
        })
        .collect()
}

/// A one-line progress bar on stderr, redrawn at most every 100 ms.
struct Progress {
    enabled: bool,
    start: std::time::Instant,
    last: Option<std::time::Instant>,
}

impl Progress {
    fn update(&mut self, done: usize, total: usize) {
        if !self.enabled {
            return;
        }
        let now = std::time::Instant::now();
        if done < total
            && self
                .last
                .is_some_and(|l| now - l < std::time::Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        let width = 30;
        let filled = width * done / total.max(1);
        let elapsed = self.start.elapsed().as_secs_f64();
        let eta = if done > 0 {
            elapsed / done as f64 * (total - done) as f64
        } else {
            0.0
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\rsecopt bench [{}{}] {done}/{total} children, {elapsed:.0}s, about {eta:.0}s left ",
            "#".repeat(filled),
            ".".repeat(width - filled)
        );
        if done == total {
            let _ = write!(err, "\r{}\r", " ".repeat(80));
        }
        let _ = err.flush();
    }
}

/// A probe list's calls as aligned text: label, syscall, count and the argument values given
/// (`-`: the probe's default, which no filter decision here depends on).
fn probe_table(list: &workload::Workload) -> String {
    let args = |e: &workload::WorkloadEntry| {
        e.args
            .iter()
            .map(|a| a.map_or_else(|| "-".to_string(), |v| format!("{v:#x}")))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let width = list
        .entries
        .iter()
        .map(|e| e.label.len())
        .max()
        .unwrap_or(0);
    let mut out = format!("{:width$}  {:>6}  args\n", "call", "count");
    for e in &list.entries {
        out += &format!("{:width$}  {:>6}  {}\n", e.label, e.count, args(e));
    }
    out
}

/// A probe list as a JSON workload file (`"label": {"syscall", "count", "args"}`), in the
/// list's order: what `secopt analyze --workload` and `compile --weights` read.
fn probe_workload_json(list: &workload::Workload, native: Arch) -> String {
    let lines: Vec<String> = list
        .entries
        .iter()
        .map(|e| {
            let member =
                workload::json_member(&e.label, &e.syscall, e.arch, native, e.count, &e.args);
            format!("  {member}")
        })
        .collect();
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

/// Where `--list-probes` writes: `-o`, as a report would go, else stdout.
fn list_output(a: &BenchArgs) -> &Path {
    a.output.as_deref().unwrap_or(Path::new("-"))
}

pub fn run(a: BenchArgs) -> Result<i32, Failure> {
    if let (true, Some(name)) = (a.list_probes, &a.probe) {
        let native = Arch::host()
            .ok_or_else(|| Failure::input("secopt has no syscall table for this host"))?;
        let list = workload::probe_list(name, native).map_err(bench_failure)?;
        let text = match a.format {
            Format::Text => probe_table(&list),
            Format::Json => probe_workload_json(&list, native),
        };
        write_output(list_output(&a), text.as_bytes())?;
        return Ok(EXIT_OK);
    }
    if a.list_probes {
        let text = match a.format {
            Format::Text => workload::PROBE_LISTS
                .iter()
                .map(|(name, what)| format!("{name:18} {what}\n"))
                .collect(),
            Format::Json => {
                let lists: Vec<serde_json::Value> = workload::PROBE_LISTS
                    .iter()
                    .map(|(name, what)| serde_json::json!({"name": name, "description": what}))
                    .collect();
                super::json_text(&serde_json::Value::from(lists))?
            }
        };
        write_output(list_output(&a), text.as_bytes())?;
        return Ok(EXIT_OK);
    }
    let native =
        Arch::host().ok_or_else(|| Failure::input("secopt has no syscall table for this host"))?;
    let wopts = workload::WorkloadOptions {
        native,
        skip_unknown: a.skip_unknown,
    };
    let workload = match (&a.workload, &a.probe) {
        (Some(path), _) => {
            let bytes = read_input(path)?;
            workload::parse_file(&bytes, &display_name(path), &wopts).map_err(bench_failure)?
        }
        (None, Some(name)) => workload::probe_list(name, native).map_err(bench_failure)?,
        (None, None) => workload::probe_list("common", native).map_err(bench_failure)?,
    };
    let (mut variants, profile_notes) = profile_variants(&a, native, &workload)?;
    variants.extend(file_variants(&a.bpf)?);
    // Both outputs are checked before the measuring (minutes of it): one that cannot be
    // written is said now, and neither is written.
    if let (Some(plot), Some(out)) = (&a.plot, &a.output) {
        if plot == out && out != Path::new("-") {
            return Err(Failure::input(format!(
                "--plot and -o both name {}; give each its own file",
                out.display()
            )));
        }
    }
    for path in [a.plot.as_deref(), a.output.as_deref()]
        .into_iter()
        .flatten()
    {
        check_can_write(path)?;
    }
    let cpu = if a.no_pin {
        None
    } else {
        a.cpu.or_else(current_cpu)
    };
    let options = BenchOptions {
        rounds: a.rounds,
        calls: a.calls,
        warmup: a.warmup,
        no_cache: a.no_cache,
        cpu,
        bootstrap: a.bootstrap,
        seed: a.seed,
    };
    let mut plan = bench::plan(workload, variants, options).map_err(bench_failure)?;
    plan.notes.extend(profile_notes);
    plan.check_install().map_err(bench_failure)?;
    let kernel_checked = if a.no_kernel_check {
        None
    } else {
        Some(plan.check_decisions_on_kernel().map_err(bench_failure)?)
    };

    // Roughly 0.5 µs per call plus 2 ms per child: show progress when that exceeds 1 s.
    let children = plan.options.rounds * plan.variants.len();
    let estimate = plan.calls_per_round() as f64 * plan.options.rounds as f64 * 0.5e-6
        + children as f64 * 2e-3;
    let mut progress = Progress {
        enabled: std::io::stderr().is_terminal() && estimate > 1.0,
        start: std::time::Instant::now(),
        last: None,
    };
    let m = plan
        .measure(&mut |done, total| progress.update(done, total))
        .map_err(bench_failure)?;
    let mut report = plan.report(&m);
    report.command = Some(command_line());
    if let Some(n) = kernel_checked {
        report.checks.push(format!(
            "kernel oracle: for {n} (variant, syscall) pairs the bench program returned at the instruction and with the value predicted from the source filter's kernel answer"
        ));
    }

    let text = match a.format {
        Format::Text => report.to_text().into_bytes(),
        Format::Json => {
            let mut j = serde_json::to_vec_pretty(&report)
                .map_err(|e| Failure::input(format!("cannot encode JSON: {e}")))?;
            j.push(b'\n');
            j
        }
    };
    // Everything is known now; write the outputs (each atomically).
    if let Some(plot) = &a.plot {
        write_output(plot, report.to_svg(a.plot_syscalls).as_bytes())?;
    }
    write_output(
        a.output.as_deref().unwrap_or(std::path::Path::new("-")),
        &text,
    )?;
    Ok(EXIT_OK)
}

fn current_cpu() -> Option<usize> {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        bench::measure::current_cpu()
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        None
    }
}

/// The command line as typed (arguments with spaces quoted).
fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            let a = if i == 0 { "secopt".to_string() } else { a };
            if a.contains(char::is_whitespace) || a.is_empty() {
                format!("'{a}'")
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Thread kinds as messages show them ([`shown`]), comma-separated.
fn shown_names(kinds: &[String]) -> String {
    let shown: Vec<_> = kinds.iter().map(|k| shown(k)).collect();
    shown.join(", ")
}
