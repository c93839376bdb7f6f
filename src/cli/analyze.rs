//! `secopt analyze`: size and limits, per-arch cacheable syscalls (kernel allow-cache model),
//! per-syscall path lengths over all argument values, and which syscalls read which arguments.
//! With `--workload`: the workload-weighted cost model ([`crate::optimize::cost`]), one row per
//! workload entry and the expected instructions per syscall with and without the allow cache.

use super::asm_cmd::parse_arch;
use super::io::{
    decode_input, display_name, load_program, read_input, reads_stdin, rejected_by_kernel, Input,
    InputFormat,
};
use super::{print_json, Failure, Format, EXIT_OK};
use crate::arch::Arch;
use crate::bench::report::counted;
use crate::bench::workload::{parse_file, Workload, WorkloadFormat, WorkloadOptions};
use crate::bpf::analysis::{arches_checked, Analyzer, Budget, SyscallPaths};
use crate::bpf::cache::{
    CacheBitmap, CacheStatus, ConstAllow, KernelCache, KernelVersion, NotCacheable,
};
use crate::bpf::insn::{BPF_MAXINSNS, MAX_INSNS_PER_PATH};
use crate::bpf::thread_filters::shown;
use crate::bpf::{validate, Field, Program, RetVal};
use crate::optimize::cost::{self, Assumption, Caches, PathEval, Sample, SampleCost};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt analyze docker.bpf                        every arch the filter checks, every syscall\n  \
secopt analyze docker.bpf --arch x86_64 --summary\n  \
secopt analyze docker.bpf --kernel 5.10          a kernel without the allow cache\n  \
secopt analyze docker.bpf --format json | jq '.arches[0].cacheable_count'\n  \
secopt analyze docker.bpf --workload nginx.strace-c.txt           cost per syscall of a workload\n  \
secopt analyze docker.bpf --workload vcpu.json --kernel 5.10      the same without the allow cache\n  \
secopt analyze docker.bpf --workload w.json --format json | jq .totals.cost_with_cache\n  \
secopt analyze f0.bpf f1.bpf --workload w.json   a stack (secopt dump PID --index 0 -o f0.bpf, …)\n  \
secopt analyze seccomp_filter.out --summary     every thread of a Firecracker filter file\n\n\
Workload JSON: {\"read\": 1200, \"ioctl(KVM_RUN)\": {\"syscall\": \"ioctl\", \"count\": 90, \"args\": [null, \"0xae80\"]}}")]
pub struct AnalyzeArgs {
    /// The filter: raw cBPF, assembly or a JSON filter document (`-` for stdin). Several: a stack
    /// of filters, oldest first (as installed, as `secopt dump` lists them), analyzed as the kernel
    /// runs it: what it decides, the syscalls every filter lets the cache skip, and path lengths
    /// summed over the filters (each runs on every call that is not cached); with --workload, each
    /// call is charged every filter's instructions. Firecracker's filter file (what its
    /// seccompiler-bin or `secopt compile --emit firecracker` writes): every thread's filter in
    /// turn (JSON: `{"input", "threads": [{"thread", …}]}`); `FILE:THREAD` for one.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// How the input is encoded.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub input_format: InputFormat,
    /// Architecture(s) to analyze (repeat or comma-separate). Default: every architecture
    /// whose AUDIT_ARCH token the filter compares against (x86_64 brings x32 along), or the
    /// host's if it compares none. With --workload: the workload's native ABI (one; strace's
    /// first section and JSON names are read as its syscalls), default the host's.
    #[arg(long, value_parser = parse_arch, value_delimiter = ',')]
    pub arch: Vec<Arch>,
    /// Kernel version whose allow cache to model (`6.18`, a `uname -r` string, or `none` for
    /// kernels before 5.11). Default: the running kernel.
    #[arg(long, value_parser = super::parse_kernel_model)]
    pub kernel: Option<super::KernelModel>,
    /// Only the per-arch summary, not the per-syscall table (not with `--workload`, whose
    /// report is per syscall of the workload).
    #[arg(long, conflicts_with = "workload")]
    pub summary: bool,
    /// Weigh the filter's cost by a workload: an `strace -c` / `strace -f -c` summary, or JSON
    /// counts whose entries may carry argument values.
    ///
    /// Each entry is charged the instructions the filter runs for it: exactly, when its path
    /// reads no argument or the workload gives the arguments it reads; otherwise the longest
    /// path over the values not given (strace -c records none). With the allow cache (Linux
    /// 5.11+), a syscall the kernel caches costs 0: the kernel computes its bitmap when the
    /// filter is attached, and never runs the filter for a cached number. Prints one row per
    /// entry and the expected instructions per syscall with and without the cache.
    ///
    /// JSON output (`--format json`, docs/json.md): `input`, `length`, `stack` (each filter's
    /// length, for a stack), `kernel`, `allow_cache`,
    /// `assumption` (the rule above, in words), `workload` {`input`, `format`, `native_abi`,
    /// `entries`, `calls`}, `notes` [text, …], `entries` [{`label`, `syscall`, `abi`, `nr`,
    /// `origin`, `count`, `share` (fraction of all calls), `args` [null or "0x…" as given],
    /// `actions` [action text], `actions_complete`, `cached`, `cache` {`kind`: cached |
    /// never_filtered | reads_arguments | not_allow | emulator_stops | outside_table | no_bitmap
    /// | no_allow_cache, `text`}, `min_steps`, `max_steps`, `cost_with_cache`,
    /// `cost_without_cache`, `assumption` {`kind`: no_arguments_read | workload_arguments |
    /// longest_path, `text`, `unknown_fields` [read but not given]}, `depends_on_args` (exact
    /// analysis of the syscall over all argument values)}], `totals` {`calls`,
    /// `cost_with_cache`, `cost_without_cache`, `max_steps`, `argument_dependent_calls`,
    /// `argument_dependent_syscalls` [label, …], `longest_path_calls`, `cached_calls`}.
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    /// With --workload: leave out syscall names the ABI does not have (each becomes a note)
    /// instead of failing.
    #[arg(long, requires = "workload")]
    pub skip_unknown: bool,
    /// `text` or `json`. Without --workload, JSON has `input`, `length`, `unreachable`
    /// ([[first, last], …]: instructions no path reaches), `stack`, `limits`, `kernel`,
    /// `allow_cache` and `arches` (per arch: cacheable syscalls, paths, arguments read).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// The kernel arch whose allow cache covers syscalls of `a` (a 64-bit kernel with its compat
/// ABI for the 32-bit arches that have one).
fn kernel_arch(a: Arch) -> Arch {
    match a {
        Arch::X86 | Arch::X32 => Arch::X86_64,
        Arch::Arm => Arch::Aarch64,
        other => other,
    }
}

/// The filter, or a stack's filters joined into one program ([`crate::bpf::stack`], for
/// what the stack decides), with the filters themselves and the name messages use.
fn load_inputs(args: &AnalyzeArgs) -> Result<(Program, Vec<Program>, String), Failure> {
    if args.inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Failure::input("stdin (`-`) can be only one of the inputs"));
    }
    let stack: Vec<Program> = args
        .inputs
        .iter()
        .map(|p| load_program(p, args.input_format))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = args.inputs.iter().map(|p| display_name(p)).collect();
    let name = names.join(" + ");
    let prog = match &stack[..] {
        [one] => one.clone(),
        _ => crate::bpf::stack::joined_any_length(&stack).map_err(|e| {
            Failure::input(format!("{name}: the stack cannot be analyzed as one: {e}"))
        })?,
    };
    Ok((prog, stack, name))
}

/// A stack's path lengths: every filter runs, so the steps add up (the longest a bound: no
/// one input need take every filter's longest path). What the stack decides stays as the
/// joined program's analysis found it; the step witnesses no longer apply.
fn sum_steps<'a>(paths: &mut SyscallPaths, each: impl Iterator<Item = &'a SyscallPaths>) {
    let (mut min, mut max) = (0, 0);
    for p in each {
        min += p.min_steps;
        max += p.max_steps;
        paths.exact &= p.exact;
    }
    paths.min_steps = min;
    paths.max_steps = max;
    paths.witnesses.min_steps = None;
    paths.witnesses.max_steps = None;
}

fn running_kernel() -> Option<KernelVersion> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    release.trim().parse().ok()
}

/// One syscall's row.
struct Row {
    nr: u32,
    name: Option<&'static str>,
    cache: Option<CacheStatus>,
    paths: SyscallPaths,
}

/// Cached because the filter's emulation reaches `RET ALLOW` (not a kernel passthrough).
fn emulated_allow(c: &Option<CacheStatus>) -> bool {
    matches!(
        c,
        Some(CacheStatus::Cached {
            how: ConstAllow::Allow { .. }
        })
    )
}

/// Never filtered at all on this kernel (`uretprobe`/`uprobe` on x86_64).
fn passthrough(c: &Option<CacheStatus>) -> bool {
    matches!(
        c,
        Some(CacheStatus::Cached {
            how: ConstAllow::Passthrough
        })
    )
}

fn names_of(fields: &[Field]) -> Vec<String> {
    fields.iter().map(|f| f.name()).collect()
}

fn returns_text(paths: &SyscallPaths) -> String {
    let mut s: Vec<String> = paths.returns.iter().map(RetVal::to_string).collect();
    if !paths.returns_complete {
        s.push("…".into());
    }
    s.join(" | ")
}

fn steps_text(p: &SyscallPaths) -> String {
    let approx = if p.exact { "" } else { "~" };
    if p.min_steps == p.max_steps {
        format!("{approx}{}", p.min_steps)
    } else {
        format!("{approx}{}..{}", p.min_steps, p.max_steps)
    }
}

/// Where `--format json` documents go: printed (one filter or stack), or collected (each
/// thread of a Firecracker filter file, printed together as one document at the end).
enum JsonOut {
    Print,
    Collect(Vec<serde_json::Value>),
}

impl JsonOut {
    fn emit(&mut self, value: serde_json::Value) -> Result<(), Failure> {
        match self {
            JsonOut::Print => print_json(&value),
            JsonOut::Collect(list) => {
                list.push(value);
                Ok(())
            }
        }
    }
}

pub fn run(args: AnalyzeArgs) -> Result<i32, Failure> {
    // Stdin can be read once: checked before either is read.
    if args.workload.as_deref() == Some(Path::new("-"))
        && args.inputs.iter().any(|p| reads_stdin(p))
    {
        return Err(Failure::input(
            "the filter and the workload cannot both come from stdin",
        ));
    }
    if let [path] = args.inputs.as_slice() {
        let bytes = read_input(path)?;
        let name = display_name(path);
        return match decode_input(&bytes, &name, args.input_format)? {
            Input::Program(prog) => {
                let stack = vec![prog.clone()];
                analyze(&args, (prog, stack, name), &mut JsonOut::Print)
            }
            Input::ThreadFilters(file) => run_thread_filters(&args, &name, file),
        };
    }
    let loaded = load_inputs(&args)?;
    analyze(&args, loaded, &mut JsonOut::Print)
}

/// Every thread's filter of a Firecracker filter file, one after the other (text), or in
/// one document `{"input", "threads": [{"thread", …the one-filter document…}]}` (JSON).
fn run_thread_filters(
    args: &AnalyzeArgs,
    name: &str,
    file: crate::bpf::thread_filters::ThreadFilters,
) -> Result<i32, Failure> {
    if args.workload.as_deref() == Some(Path::new("-")) {
        return Err(Failure::input(
            "analyzing every thread of a Firecracker filter file reads the workload once per \
             thread: give it as a file, not stdin",
        ));
    }
    // Every thread's filter is checked before any is analysed: a file with one the kernel
    // would refuse gets its error alone, not after the reports of the threads before it.
    for (thread, prog) in &file.threads {
        if let Some(prog) = prog {
            validate::validate(prog)
                .map_err(|e| rejected_by_kernel(&format!("{name}:{}", shown(thread)), e))?;
        }
    }
    let mut json_threads = Vec::new();
    let mut code = EXIT_OK;
    for (i, (thread, prog)) in file.threads.into_iter().enumerate() {
        let label = format!("{name}:{}", shown(&thread));
        if args.format == Format::Text && i > 0 {
            println!();
        }
        let Some(prog) = prog else {
            match args.format {
                Format::Text => println!(
                    "filter: {label}: none (an empty program: Firecracker installs no filter \
                     for this thread, so its syscalls run unfiltered)"
                ),
                Format::Json => {
                    json_threads.push(json!({ "thread": thread, "input": label, "filter": null }))
                }
            }
            continue;
        };
        let mut out = JsonOut::Collect(Vec::new());
        code = code.max(analyze(args, (prog.clone(), vec![prog], label), &mut out)?);
        if let JsonOut::Collect(docs) = out {
            for mut doc in docs {
                doc["thread"] = thread.as_str().into();
                json_threads.push(doc);
            }
        }
    }
    if args.format == Format::Json {
        print_json(&json!({ "input": name, "threads": json_threads }))?;
    }
    Ok(code)
}

/// The analysis of one filter, or of a stack joined into `prog`.
fn analyze(
    args: &AnalyzeArgs,
    (prog, stack, name): (Program, Vec<Program>, String),
    out: &mut JsonOut,
) -> Result<i32, Failure> {
    // A stack's joined program is secopt's own (each filter was validated as it was read).
    let analyzer = if stack.len() > 1 {
        Analyzer::any_length(&prog)
    } else {
        Analyzer::new(&prog)
    }
    .map_err(|e| rejected_by_kernel(&name, e))?;
    let kernel = match args.kernel {
        Some(model) => model.allow_cache_kernel(),
        None => running_kernel(),
    };
    // A stack's filters each, for their path lengths (none for one filter: its analyzer is
    // `analyzer`).
    let filter_analyzers: Vec<Analyzer> = if stack.len() > 1 {
        stack
            .iter()
            .map(|f| Analyzer::new(f).map_err(|e| Failure::input(format!("{name}: {e}"))))
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    if let Some(path) = &args.workload {
        let subject = Subject {
            name: &name,
            prog: &prog,
            stack: &stack,
            analyzer: &analyzer,
            filter_analyzers: &filter_analyzers,
        };
        return run_workload(args, subject, path, kernel, out);
    }
    let mut arches = args.arch.clone();
    if arches.is_empty() {
        arches = arches_checked(&prog);
    }
    if arches.is_empty() {
        arches.push(Arch::host().ok_or_else(|| {
            Failure::input(
                "the filter checks no known arch and this host's is unknown; give --arch",
            )
        })?);
    }
    let budget = Budget::default();
    let mut arch_reports = Vec::new();
    for &arch in &arches {
        // A stack's cache: each filter clears what it does not allow by number alone.
        let cache = kernel
            .and_then(|v| KernelCache::for_kernel(kernel_arch(arch), v))
            .map(|k| stack.iter().fold(CacheBitmap::new(k), |b, f| b.attach(f)));
        let mut summary = analyzer.arch_summary(arch, &budget);
        if !filter_analyzers.is_empty() {
            let each: Vec<_> = filter_analyzers
                .iter()
                .map(|a| a.arch_summary(arch, &budget))
                .collect();
            for (k, s) in summary.syscalls.iter_mut().enumerate() {
                sum_steps(&mut s.paths, each.iter().map(|e| &e.syscalls[k].paths));
            }
            sum_steps(&mut summary.unnamed, each.iter().map(|e| &e.unnamed));
        }
        let rows: Vec<Row> = summary
            .syscalls
            .into_iter()
            .map(|s| Row {
                nr: s.nr,
                name: Some(s.name),
                cache: cache.as_ref().map(|c| c.status(arch.token(), s.nr)),
                paths: s.paths,
            })
            .collect();
        arch_reports.push((arch, cache, rows, summary.unnamed));
    }

    let endian_of = |a: Arch| a.endian();
    let length: usize = stack.iter().map(Program::len).sum();
    // The kernel's MAX_INSNS_PER_PATH charges every filter its length plus 4.
    let task_cost: usize = stack.iter().map(|f| f.len() + 4).sum();
    // Of one filter (a stack's joined program is secopt's own, not what the kernel loads).
    let unreachable = if stack.len() > 1 {
        Vec::new()
    } else {
        prog.unreachable()
    };
    match args.format {
        Format::Json => {
            let arches_json: Vec<serde_json::Value> = arch_reports
                .iter()
                .map(|(arch, cache, rows, unnamed)| {
                    let cacheable: Vec<u32> =
                        rows.iter().filter(|r| emulated_allow(&r.cache)).map(|r| r.nr).collect();
                    let unfiltered: Vec<&str> =
                        rows.iter().filter(|r| passthrough(&r.cache)).filter_map(|r| r.name).collect();
                    let upper = rows.iter().filter(|r| always_allow(&r.paths)).count();
                    let syscalls: Vec<serde_json::Value> = if args.summary {
                        Vec::new()
                    } else {
                        rows.iter()
                            .map(|r| {
                                // Without a modelled cache nothing is cached (`false`), and
                                // `cache` says why (docs/json.md).
                                let cell = match r.cache {
                                    Some(c) => cache_cell(kernel, c, *arch),
                                    None => no_cache_cell(kernel, *arch),
                                };
                                json!({
                                    "name": r.name,
                                    "nr": r.nr,
                                    "cached": emulated_allow(&r.cache),
                                    "never_filtered": passthrough(&r.cache),
                                    "cache": {"kind": cell.kind, "text": cell.text},
                                    "min_steps": r.paths.min_steps,
                                    "max_steps": r.paths.max_steps,
                                    "reads": names_of(&r.paths.argument_fields_read(endian_of(*arch))),
                                    "actions": r.paths.returns.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                                    "actions_complete": r.paths.returns_complete,
                                    "depends_on_args": r.paths.depends_on_args,
                                    "exact": r.paths.exact,
                                })
                            })
                            .collect()
                    };
                    json!({
                        "arch": arch.name(),
                        "token": arch.token(),
                        // `cached_numbers`: every number of the bitmap the filter lets the
                        // kernel cache, unnamed ones included (the text's count), so that a
                        // script can rebuild the bitmap; `cacheable` lists the named ones.
                        "cache_bitmap": cache.as_ref().and_then(|c| c.kernel().target_for(arch.token()).map(|t| json!({
                            "name": t.name,
                            "table_size": t.table_size,
                            "cached_numbers": c.cached_by_filter(arch.token()),
                        }))),
                        "named_syscalls": rows.len(),
                        "cacheable_count": cacheable.len(),
                        "cacheable": cacheable,
                        "never_filtered": unfiltered,
                        "always_allow_count": upper,
                        "min_steps": rows.iter().map(|r| r.paths.min_steps).min(),
                        "max_steps": rows.iter().map(|r| r.paths.max_steps).max(),
                        "argument_dependent": rows.iter().filter(|r| r.paths.depends_on_args).map(|r| r.name).collect::<Vec<_>>(),
                        "syscalls": syscalls,
                        "unnamed_numbers": {
                            "min_steps": unnamed.min_steps,
                            "max_steps": unnamed.max_steps,
                            "actions": unnamed.returns.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                            "reads": names_of(&unnamed.argument_fields_read(endian_of(*arch))),
                            "exact": unnamed.exact,
                        },
                    })
                })
                .collect();
            out.emit(json!({
                "input": name,
                "length": length,
                "unreachable": unreachable.iter().map(|&(a, b)| [a, b]).collect::<Vec<_>>(),
                "stack": (stack.len() > 1).then(|| stack.iter().map(Program::len).collect::<Vec<_>>()),
                "limits": {
                    "max_instructions": BPF_MAXINSNS,
                    "fits": stack.iter().all(|f| f.len() <= BPF_MAXINSNS),
                    "task_budget": MAX_INSNS_PER_PATH,
                    "task_cost": task_cost,
                },
                "kernel": kernel.map(|k| k.to_string()),
                "allow_cache": kernel.is_some_and(|k| k.has_allow_cache()),
                "arches": arches_json,
            }))?;
        }
        Format::Text => {
            println!("filter: {name}");
            if stack.len() > 1 {
                println!(
                    "stack: {} filters, oldest first ({} instructions), {length} in all; the kernel runs each on every call it does not cache and acts on the most restrictive answer: path lengths below are summed over the filters (the longest a bound), the cache is what every filter allows by number; costs {task_cost} of the {MAX_INSNS_PER_PATH} instructions all filters of a task may total",
                    stack.len(),
                    stack.iter().map(|f| f.len().to_string()).collect::<Vec<_>>().join(", "),
                );
            } else {
                println!(
                    "size: {} instructions ({:.1}% of the {} a filter may have); costs {} of the {} instructions all filters of a task may total",
                    prog.len(),
                    100.0 * prog.len() as f64 / BPF_MAXINSNS as f64,
                    BPF_MAXINSNS,
                    task_cost,
                    MAX_INSNS_PER_PATH
                );
                if !unreachable.is_empty() {
                    let (kept, droppable): (Vec<usize>, Vec<usize>) = unreachable
                        .iter()
                        .flat_map(|&(a, b)| a..=b)
                        .partition(|&pc| the_kernels_check_needs(&prog, pc));
                    if !droppable.is_empty() {
                        println!(
                            "unreachable: {} no path reaches ({}), loaded and counted all the same; `secopt optimize` drops them",
                            counted(droppable.len() as u64, "instruction", "instructions"),
                            ranges_text(&droppable)
                        );
                    }
                    if !kept.is_empty() {
                        println!(
                            "unreachable: {} no path reaches ({}) that the kernel's linear check needs (removed, the filter would be rejected: the kernel checks scratch memory in program order, not by path)",
                            counted(kept.len() as u64, "store", "stores"),
                            ranges_text(&kept)
                        );
                    }
                }
            }
            match kernel {
                Some(k) if k.has_allow_cache() => {
                    println!("allow cache: modelled for Linux {k} (only ALLOW decisions reached through nr/arch checks are cached)")
                }
                Some(k) => println!("allow cache: none (Linux {k} is older than 5.11: every syscall runs the filter)"),
                None => println!("allow cache: not modelled (--kernel none)"),
            }
            for (arch, cache, rows, unnamed) in &arch_reports {
                println!();
                let cached = rows.iter().filter(|r| emulated_allow(&r.cache)).count();
                let unfiltered: Vec<&str> = rows
                    .iter()
                    .filter(|r| passthrough(&r.cache))
                    .filter_map(|r| r.name)
                    .collect();
                let in_table = |t: &crate::bpf::cache::CacheTarget| {
                    rows.iter().filter(|r| t.covers(r.nr)).count()
                };
                let upper = rows.iter().filter(|r| always_allow(&r.paths)).count();
                println!("{arch} (arch token 0x{:08x})", arch.token());
                match cache.as_ref().and_then(|c| c.kernel().target_for(arch.token())) {
                    Some(t) if in_table(t) == 0 => println!(
                        "  cacheable: none: {arch} numbers lie outside the kernel bitmap `{}` (0..{}), so every {arch} syscall runs the filter",
                        t.name, t.table_size
                    ),
                    Some(t) => {
                        // Syscalls newer than the kernel asked for are past its bitmap: the
                        // filter runs for them whatever it returns.
                        let past = rows
                            .iter()
                            .filter(|r| always_allow(&r.paths) && !t.covers(r.nr))
                            .count();
                        println!(
                            "  cacheable: {cached} of {} named syscalls (kernel bitmap `{}`, numbers 0..{}: {} of them cached, unnamed ones included, as `optimize --report` counts); {upper} are ALLOW whatever the arguments{}",
                            rows.len(),
                            t.name,
                            t.table_size,
                            cache.as_ref().map_or(0, |c| c.cached_by_filter(arch.token()).len()),
                            match (past, kernel) {
                                (0, _) | (_, None) => String::new(),
                                (n, Some(k)) => format!(
                                    " ({n} of them past the bitmap's end: syscalls newer than Linux {k}, never cached there)"
                                ),
                            }
                        )
                    }
                    None => println!(
                        "  cacheable: none (the modelled kernel keeps no allow bitmap for {arch}); {upper} of {} named syscalls are ALLOW whatever the arguments",
                        rows.len()
                    ),
                }
                if !unfiltered.is_empty() {
                    println!(
                        "  never filtered by this kernel: {} (the kernel lets them through before any filter runs)",
                        unfiltered.join(", ")
                    );
                }
                if let (Some(min), Some(max)) = (
                    rows.iter().map(|r| r.paths.min_steps).min(),
                    rows.iter().map(|r| r.paths.max_steps).max(),
                ) {
                    let mean = rows.iter().map(|r| r.paths.max_steps).sum::<usize>() as f64
                        / rows.len() as f64;
                    println!("  path length over named syscalls: shortest {min}, longest {max}, mean of longest {mean:.1} instructions");
                }
                let dependent: Vec<&str> = rows
                    .iter()
                    .filter(|r| r.paths.depends_on_args)
                    .filter_map(|r| r.name)
                    .collect();
                println!(
                    "  decided by arguments: {} syscall(s){}{}",
                    dependent.len(),
                    if dependent.is_empty() { "" } else { ": " },
                    dependent.join(", ")
                );
                println!(
                    "  numbers no table names: {} instructions, returns {}",
                    steps_text(unnamed),
                    returns_text(unnamed)
                );
                if args.summary {
                    continue;
                }
                println!(
                    "  {:<24} {:>10} {:<7} {:>8}  {:<24} returns",
                    "syscall", "nr", "cached", "steps", "reads"
                );
                for r in rows {
                    let reads = names_of(&r.paths.argument_fields_read(arch.endian()));
                    println!(
                        "  {:<24} {:>10} {:<7} {:>8}  {:<24} {}",
                        r.name.unwrap_or("?"),
                        r.nr,
                        match &r.cache {
                            c if passthrough(c) => "bypass",
                            c if emulated_allow(c) => "yes",
                            Some(_) => "no",
                            None => "-",
                        },
                        steps_text(&r.paths),
                        if reads.is_empty() {
                            "-".to_string()
                        } else {
                            reads.join(",")
                        },
                        returns_text(&r.paths)
                    );
                }
            }
        }
    }
    Ok(EXIT_OK)
}

/// ALLOW whatever the arguments: the most any filter can get cached.
fn always_allow(p: &SyscallPaths) -> bool {
    p.exact && !p.depends_on_args && p.returns.len() == 1 && p.returns.contains(&RetVal::ALLOW)
}

/// What the header says about entries whose arguments are unknown.
const WORKLOAD_ASSUMPTION: &str = "argument values the workload gives are used exactly; a call whose path reads an argument (or the IP) the workload does not give is charged the longest path over that word's values (strace -c records no arguments)";

/// Why an entry is or is not cached: a stable kind for JSON, a short cell for the table and a
/// sentence.
struct CacheCell {
    kind: &'static str,
    short: String,
    text: String,
}

/// Why no call of `arch` is cached: the cache is not modelled, the kernel has none, or its
/// cache does not cover this arch.
fn no_cache_cell(kernel: Option<KernelVersion>, arch: Arch) -> CacheCell {
    let cell = |kind, short: &str, text: String| CacheCell {
        kind,
        short: short.into(),
        text,
    };
    match kernel {
        None => cell(
            "no_allow_cache",
            "no (cache not modelled)",
            "the allow cache is not modelled (--kernel none): every call runs the filter".into(),
        ),
        Some(k) if !k.has_allow_cache() => cell(
            "no_allow_cache",
            "no (no cache before 5.11)",
            format!("Linux {k} has no allow cache (5.11+): every call runs the filter"),
        ),
        Some(k) => cell(
            "no_allow_cache",
            "no (no cache for this arch)",
            format!("Linux {k}'s allow cache does not cover {arch}: every call runs the filter"),
        ),
    }
}

fn cache_cell(kernel: Option<KernelVersion>, status: CacheStatus, arch: Arch) -> CacheCell {
    let cell = |kind, short: String, text: String| CacheCell { kind, short, text };
    if !kernel.is_some_and(|k| k.has_allow_cache()) {
        return no_cache_cell(kernel, arch);
    }
    match status {
        CacheStatus::Cached {
            how: ConstAllow::Passthrough,
        } => cell(
            "never_filtered",
            "yes (never filtered)".into(),
            "the kernel lets this syscall through before any filter runs".into(),
        ),
        CacheStatus::NoFilter => cell("cached", "yes".into(), status.to_string()),
        CacheStatus::Cached { .. } => cell(
            "cached",
            "yes".into(),
            format!("{status}: the kernel never runs the filter for it (the bitmap is computed when the filter is attached)"),
        ),
        CacheStatus::NotCached { reason, .. } => match reason {
            NotCacheable::Load { field, offset, pc } => {
                let what = field.map_or_else(|| format!("offset {offset}"), |f| f.name());
                cell(
                    "reads_arguments",
                    format!("no (arg-dependent: {what})"),
                    format!("the path loads {what} at instruction {pc}; the cache knows only nr and arch"),
                )
            }
            NotCacheable::Return { value, pc } => cell(
                "not_allow",
                format!("no (not ALLOW: {value})"),
                format!("the path returns {value} at instruction {pc}; only RET ALLOW is cached"),
            ),
            other => cell(
                "emulator_stops",
                format!("no (emulator stops at {})", other.pc()),
                format!("the kernel's cache emulator {other}"),
            ),
        },
        CacheStatus::OutsideTable { table_size } if arch == Arch::X32 => cell(
            "outside_table",
            "no (x32: outside the bitmap)".into(),
            format!("x32 numbers carry bit 30, outside the bitmap (numbers 0..{table_size})"),
        ),
        CacheStatus::OutsideTable { table_size } => cell(
            "outside_table",
            format!("no (nr >= {table_size})"),
            format!("the number is outside the kernel's bitmap (numbers 0..{table_size})"),
        ),
        CacheStatus::NoBitmap => cell(
            "no_bitmap",
            "no (no bitmap for this ABI)".into(),
            format!("the modelled kernel keeps no allow bitmap for {arch}"),
        ),
    }
}

/// The sentence for an entry's assumption.
fn assumption_text(cost: &SampleCost, args: &[Option<u64>; 6], token: u32) -> String {
    match cost.assumption {
        Assumption::NoArgumentsRead if args.iter().all(Option::is_some) => {
            "exact (all arguments known)".into()
        }
        Assumption::NoArgumentsRead => "exact (decision does not read arguments)".into(),
        Assumption::WorkloadArguments => "arguments from the workload: exact".into(),
        Assumption::LongestPath => {
            let unknown = field_names(&cost.eval, token).join(", ");
            if args.iter().all(Option::is_none) {
                format!("no argument values: charged the longest path (max over {unknown})")
            } else {
                let given: Vec<String> = args
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.is_some())
                    .map(|(i, _)| format!("args[{i}]"))
                    .collect();
                format!(
                    "values for {} only: charged the longest path (max over {unknown})",
                    given.join(", ")
                )
            }
        }
    }
}

fn field_names(eval: &PathEval, token: u32) -> Vec<String> {
    eval.unknown_fields(token)
        .into_iter()
        .map(Field::name)
        .collect()
}

fn decisions_text(eval: &PathEval) -> String {
    let mut s: Vec<String> = eval.returns.iter().map(RetVal::to_string).collect();
    if !eval.returns_complete {
        s.push("…".into());
    }
    s.join(" | ")
}

fn path_text(eval: &PathEval) -> String {
    if eval.min == eval.max {
        eval.max.to_string()
    } else {
        format!("{}..{}", eval.min, eval.max)
    }
}

fn format_name(f: WorkloadFormat) -> &'static str {
    match f {
        WorkloadFormat::StraceSummary => "strace -c summary",
        WorkloadFormat::Json => "JSON",
        WorkloadFormat::Probes => "probe list",
    }
}

/// One workload entry with everything the report says about it.
struct EntryRow {
    cost: SampleCost,
    cache: CacheCell,
    assumption: String,
    depends_on_args: bool,
}

/// What is analyzed: a filter, or a stack joined into `prog`, with their analyzers.
struct Subject<'a> {
    /// The input's name in reports (`a.bpf`, `f0.bpf + f1.bpf`, `filters.bin:vcpu`).
    name: &'a str,
    prog: &'a Program,
    stack: &'a [Program],
    analyzer: &'a Analyzer<'a>,
    /// A stack's filters' own analyzers (empty for one filter).
    filter_analyzers: &'a [Analyzer<'a>],
}

/// `analyze --workload`: the workload-weighted cost model (see `--help`).
fn run_workload(
    args: &AnalyzeArgs,
    subject: Subject,
    path: &Path,
    kernel: Option<KernelVersion>,
    out: &mut JsonOut,
) -> Result<i32, Failure> {
    let Subject {
        name,
        prog,
        stack,
        analyzer,
        filter_analyzers,
    } = subject;
    let native = match args.arch.as_slice() {
        [] => Arch::host().ok_or_else(|| {
            Failure::input(
                "this host's architecture is unknown; give the workload's ABI with --arch",
            )
        })?,
        [one] => *one,
        _ => {
            return Err(Failure::input(
                "with --workload, --arch names the workload's native ABI: give one",
            ))
        }
    };
    let source = display_name(path);
    let bytes = read_input(path)?;
    let options = WorkloadOptions {
        native,
        skip_unknown: args.skip_unknown,
    };
    let workload = parse_file(&bytes, &source, &options)
        .map_err(|e| Failure::input(super::hints::bench_error(&e)))?;

    let samples: Vec<Sample> = workload.samples();
    let mut abis: Vec<Arch> = workload.entries.iter().map(|e| e.arch).collect();
    abis.sort();
    abis.dedup();
    // No kernel (or `none`) models no cache, like any kernel before 5.11.
    let cache_kernel = kernel.unwrap_or(KernelVersion::new(0, 0));
    let caches = Caches::for_stack(stack, &abis, cache_kernel);
    // A stack runs every filter on each call the cache does not skip: its costs are the
    // filters' summed, its decisions the joined program's (`prog`).
    let (costs, worst) = match stack {
        [_] => (
            cost::workload_costs(prog, &samples, &caches),
            cost::worst_case_path(prog),
        ),
        _ => (
            cost::stack_workload_costs(stack, prog, &samples, &caches),
            stack.iter().map(cost::worst_case_path).sum(),
        ),
    };

    let budget = Budget::default();
    let mut exact: BTreeMap<(u32, u32), SyscallPaths> = BTreeMap::new();
    let mut notes = workload.notes.clone();
    let calls = samples
        .iter()
        .filter(|s| s.count > 0.0)
        .map(|s| (s.token, s.nr));
    if let Some(finding) = crate::optimize::calls_miss_the_filter(prog, calls) {
        notes.push(format!(
            "{finding}: every call takes its path for other arches, so these costs say nothing \
             about the rest of the filter; if the workload is for another ABI, say which (--arch)"
        ));
    }
    let mut rows = Vec::with_capacity(samples.len());
    for ((entry, sample), cost) in workload.entries.iter().zip(&samples).zip(costs.samples) {
        let paths = exact.entry((sample.token, sample.nr)).or_insert_with(|| {
            let mut paths = analyzer.syscall(sample.token, sample.nr, &budget);
            if !filter_analyzers.is_empty() {
                let each: Vec<SyscallPaths> = filter_analyzers
                    .iter()
                    .map(|a| a.syscall(sample.token, sample.nr, &budget))
                    .collect();
                sum_steps(&mut paths, each.iter());
            }
            paths
        });
        if !paths.exact {
            notes.push(format!(
                "{}: the exact analysis of {} ran out of budget; whether its decision depends on arguments is a conservative guess",
                entry.origin, entry.syscall
            ));
        }
        if entry.args.iter().all(Option::is_none)
            && paths.exact
            && (paths.max_steps as u32) < cost.eval.max
        {
            notes.push(format!(
                "{}: {} is charged {} instructions, but no input runs more than {}: the longest path counted passes tests that contradict each other",
                entry.origin, entry.label, cost.eval.max, paths.max_steps
            ));
        }
        let status = caches.status(sample.token, sample.nr);
        rows.push(EntryRow {
            cache: cache_cell(kernel, status, entry.arch),
            assumption: assumption_text(&cost, &entry.args, sample.token),
            depends_on_args: paths.depends_on_args,
            cost,
        });
    }

    let calls = workload.total_calls();
    let share = |count: u64| {
        if calls == 0 {
            0.0
        } else {
            count as f64 / calls as f64
        }
    };
    let sum_calls = |pick: &dyn Fn(&EntryRow) -> bool| -> u64 {
        workload
            .entries
            .iter()
            .zip(&rows)
            .filter(|(_, r)| pick(r))
            .map(|(e, _)| e.count)
            .sum()
    };
    let dependent_calls = sum_calls(&|r| r.depends_on_args);
    let longest_calls = sum_calls(&|r| r.cost.assumption == Assumption::LongestPath);
    let cached_calls = sum_calls(&|r| r.cost.cached);
    let dependent_labels: Vec<&str> = workload
        .entries
        .iter()
        .zip(&rows)
        .filter(|(_, r)| r.depends_on_args)
        .map(|(e, _)| e.label.as_str())
        .collect();
    let input = name.to_string();
    let cache_on = kernel.is_some_and(|k| k.has_allow_cache());

    match args.format {
        Format::Json => {
            let entries: Vec<serde_json::Value> = workload
                .entries
                .iter()
                .zip(&rows)
                .map(|(e, r)| {
                    json!({
                        "label": e.label,
                        "syscall": e.syscall,
                        "abi": e.arch.name(),
                        "nr": e.nr,
                        "origin": e.origin,
                        "count": e.count,
                        "share": share(e.count),
                        "args": e.args.iter().map(|a| a.map(|v| format!("{v:#x}"))).collect::<Vec<_>>(),
                        "actions": r.cost.eval.returns.iter().map(RetVal::to_string).collect::<Vec<_>>(),
                        "actions_complete": r.cost.eval.returns_complete,
                        "cached": r.cost.cached,
                        "cache": {"kind": r.cache.kind, "text": r.cache.text},
                        "min_steps": r.cost.eval.min,
                        "max_steps": r.cost.eval.max,
                        "cost_with_cache": r.cost.cost_with_cache,
                        "cost_without_cache": r.cost.cost_without_cache,
                        "assumption": {
                            "kind": r.cost.assumption,
                            "text": r.assumption,
                            "unknown_fields": field_names(&r.cost.eval, e.arch.token()),
                        },
                        "depends_on_args": r.depends_on_args,
                    })
                })
                .collect();
            out.emit(json!({
                "input": input,
                "length": stack.iter().map(Program::len).sum::<usize>(),
                "stack": (stack.len() > 1).then(|| stack.iter().map(Program::len).collect::<Vec<_>>()),
                "kernel": kernel.map(|k| k.to_string()),
                "allow_cache": cache_on,
                "assumption": WORKLOAD_ASSUMPTION,
                "workload": {
                    "input": workload.source,
                    "format": workload.format,
                    "native_abi": native.name(),
                    "entries": workload.entries.len(),
                    "calls": calls,
                },
                "notes": notes,
                "entries": entries,
                "totals": {
                    "calls": calls,
                    "cost_with_cache": costs.expected_with_cache,
                    "cost_without_cache": costs.expected_without_cache,
                    "max_steps": worst,
                    "argument_dependent_calls": dependent_calls,
                    "argument_dependent_syscalls": dependent_labels,
                    "longest_path_calls": longest_calls,
                    "cached_calls": cached_calls,
                },
            }))?;
        }
        Format::Text => {
            print_workload_text(&WorkloadText {
                input: &input,
                stack,
                workload: &workload,
                native,
                kernel,
                rows: &rows,
                calls,
                with_cache: costs.expected_with_cache,
                without_cache: costs.expected_without_cache,
                worst,
                dependent_calls,
                dependent_labels: &dependent_labels,
                longest_calls,
                notes: &notes,
            });
        }
    }
    Ok(EXIT_OK)
}

/// Everything the text report of `--workload` prints.
struct WorkloadText<'a> {
    input: &'a str,
    stack: &'a [Program],
    workload: &'a Workload,
    native: Arch,
    kernel: Option<KernelVersion>,
    rows: &'a [EntryRow],
    calls: u64,
    with_cache: f64,
    without_cache: f64,
    worst: u32,
    dependent_calls: u64,
    dependent_labels: &'a [&'a str],
    longest_calls: u64,
    notes: &'a [String],
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "0.0%".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn print_workload_text(t: &WorkloadText) {
    let w = t.workload;
    match t.stack {
        [one] => println!("filter: {} ({} instructions)", t.input, one.len()),
        _ => println!(
            "filters: {} (a stack of {}, oldest first: {} instructions; the kernel runs each on every call it does not cache, so the paths and costs below are summed over them, and a call is cached only when every filter allows it by number)",
            t.input,
            t.stack.len(),
            t.stack
                .iter()
                .map(|f| f.len().to_string())
                .collect::<Vec<_>>()
                .join(" + "),
        ),
    }
    println!(
        "workload: {} ({}, {}, {}; native ABI {})",
        w.source,
        format_name(w.format),
        counted(w.entries.len() as u64, "entry", "entries"),
        counted(t.calls, "call", "calls"),
        t.native
    );
    match t.kernel {
        Some(k) if k.has_allow_cache() => println!(
            "kernel: Linux {k}: allow cache modelled (a cached syscall costs 0: the filter never runs for it)"
        ),
        Some(k) => println!("kernel: Linux {k}: no allow cache (before 5.11): every call runs the filter"),
        None => println!("kernel: allow cache not modelled (--kernel none): every call runs the filter"),
    }
    println!(
        "assumption: {WORKLOAD_ASSUMPTION}; {} of {} calls charged that way",
        t.longest_calls, t.calls
    );
    println!();
    let header = [
        "entry",
        "ABI",
        "calls",
        "share",
        "decision(s)",
        "cached",
        "path",
        "cost cache",
        "cost no cache",
        "assumption",
    ];
    let cells: Vec<[String; 10]> = w
        .entries
        .iter()
        .zip(t.rows)
        .map(|(e, r)| {
            [
                e.label.clone(),
                e.arch.name().to_string(),
                e.count.to_string(),
                percent(e.count, t.calls),
                decisions_text(&r.cost.eval),
                r.cache.short.clone(),
                path_text(&r.cost.eval),
                r.cost.cost_with_cache.to_string(),
                r.cost.cost_without_cache.to_string(),
                r.assumption.clone(),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    // Numbers right-aligned, text left-aligned; the last column is not padded.
    let numeric = [
        false, false, true, true, false, false, true, true, true, false,
    ];
    let line = |row: &[String]| {
        let mut s = String::from(" ");
        for (i, c) in row.iter().enumerate() {
            let pad = widths[i].saturating_sub(c.chars().count());
            s.push(' ');
            if numeric[i] {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else if i + 1 == row.len() {
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            }
            if i + 1 < row.len() {
                s.push(' ');
            }
        }
        s.trim_end().to_string()
    };
    println!("{}", line(&header.map(String::from)));
    for row in &cells {
        println!("{}", line(row));
    }
    println!();
    println!("totals:");
    match t.kernel {
        Some(k) if k.has_allow_cache() => println!(
            "  expected instructions per syscall with the allow cache (Linux {k}): {:.2}",
            t.with_cache
        ),
        _ => println!(
            "  expected instructions per syscall with the allow cache: {:.2} (no cache modelled: the same as without)",
            t.with_cache
        ),
    }
    println!(
        "  expected instructions per syscall without it (kernels before 5.11): {:.2}",
        t.without_cache
    );
    let of = if t.stack.len() > 1 {
        "the stack (the filters' summed)"
    } else {
        "the program"
    };
    println!("  worst-case path of {of}: {} instructions", t.worst);
    println!(
        "  calls whose syscall's decision depends on arguments: {} of {} ({}){}{}",
        t.dependent_calls,
        t.calls,
        percent(t.dependent_calls, t.calls),
        if t.dependent_labels.is_empty() {
            ""
        } else {
            ": "
        },
        t.dependent_labels.join(", ")
    );
    for note in t.notes {
        println!("note: {note}");
    }
}

/// Whether the instruction at `pc`, which no path reaches, is a store the kernel's check of
/// scratch memory needs: that check walks the program in order, not by its paths, so a store
/// after a `ret` can be what makes a later `ld M[k]` pass. Replaced by a load of a constant
/// (no path reaches it, so the program decides the same), the program no longer validates.
fn the_kernels_check_needs(prog: &Program, pc: usize) -> bool {
    use crate::bpf::insn::{Insn, BPF_IMM, BPF_LD, BPF_ST, BPF_STX};
    let code = prog.insns[pc].code;
    if code != BPF_ST && code != BPF_STX {
        return false;
    }
    let mut without = prog.clone();
    without.insns[pc] = Insn::stmt(BPF_LD | BPF_IMM, 0);
    validate::validate(&without).is_err()
}

/// `3, 7..=9`: instruction indices, runs of neighbours as ranges.
fn ranges_text(pcs: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &pc in pcs {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == pc => *last = pc,
            _ => runs.push((pc, pc)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}..={b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
