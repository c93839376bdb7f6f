//! `secopt analyze`: size and limits, per-arch cacheable syscalls (kernel allow-cache model),
//! per-syscall path lengths over all argument values, and which syscalls read which arguments.

use super::asm_cmd::parse_arch;
use super::io::{display_name, load_program, InputFormat};
use super::{print_json, Failure, Format, EXIT_OK};
use crate::arch::Arch;
use crate::bpf::analysis::{arches_checked, Analyzer, Budget, SyscallPaths};
use crate::bpf::cache::{CacheBitmap, CacheStatus, ConstAllow, KernelCache, KernelVersion};
use crate::bpf::insn::{BPF_MAXINSNS, MAX_INSNS_PER_PATH};
use crate::bpf::{Field, RetVal};
use serde_json::json;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt analyze docker.bpf                        every arch the filter checks, every syscall\n  \
secopt analyze docker.bpf --arch x86_64 --summary\n  \
secopt analyze docker.bpf --kernel 5.10          a kernel without the allow cache\n  \
secopt analyze docker.bpf --format json | jq '.arches[0].cacheable_count'")]
pub struct AnalyzeArgs {
    /// The filter: raw cBPF or assembly (`-` for stdin).
    pub input: PathBuf,
    /// How the input is encoded.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub input_format: InputFormat,
    /// Architecture(s) to analyze (repeat or comma-separate). Default: every architecture
    /// whose AUDIT_ARCH token the filter compares against (x86_64 brings x32 along), or the
    /// host's if it compares none.
    #[arg(long, value_parser = parse_arch, value_delimiter = ',')]
    pub arch: Vec<Arch>,
    /// Kernel version whose allow cache to model (`6.18`, a `uname -r` string, or `none` for
    /// kernels before 5.11). Default: the running kernel.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Only the per-arch summary, not the per-syscall table.
    #[arg(long)]
    pub summary: bool,
    /// `text` or `json`.
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

pub fn run(args: AnalyzeArgs) -> Result<i32, Failure> {
    let prog = load_program(&args.input, args.input_format)?;
    let name = display_name(&args.input);
    let analyzer = Analyzer::new(&prog).map_err(|e| Failure::input(format!("{name}: {e}")))?;
    let kernel = match args.kernel.as_deref() {
        Some("none") => None,
        Some(v) => Some(
            v.parse::<KernelVersion>()
                .map_err(|e| Failure::input(format!("--kernel: {e}")))?,
        ),
        None => running_kernel(),
    };
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
        let cache = kernel
            .and_then(|v| KernelCache::for_kernel(kernel_arch(arch), v))
            .map(|k| CacheBitmap::new(k).attach(&prog));
        let summary = analyzer.arch_summary(arch, &budget);
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
                                json!({
                                    "name": r.name,
                                    "nr": r.nr,
                                    "cached": r.cache.as_ref().map(|_| emulated_allow(&r.cache)),
                                    "never_filtered": passthrough(&r.cache),
                                    "cache": r.cache.as_ref().map(|c| c.to_string()),
                                    "min_steps": r.paths.min_steps,
                                    "max_steps": r.paths.max_steps,
                                    "reads": names_of(&r.paths.argument_fields_read(endian_of(*arch))),
                                    "returns": r.paths.returns.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                                    "returns_complete": r.paths.returns_complete,
                                    "depends_on_args": r.paths.depends_on_args,
                                    "exact": r.paths.exact,
                                })
                            })
                            .collect()
                    };
                    json!({
                        "arch": arch.name(),
                        "token": arch.token(),
                        "cache_bitmap": cache.as_ref().and_then(|c| c.kernel().target_for(arch.token()).map(|t| json!({"name": t.name, "table_size": t.table_size}))),
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
                            "returns": unnamed.returns.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                            "reads": names_of(&unnamed.argument_fields_read(endian_of(*arch))),
                            "exact": unnamed.exact,
                        },
                    })
                })
                .collect();
            print_json(&json!({
                "input": name,
                "length": prog.len(),
                "limits": {
                    "max_instructions": BPF_MAXINSNS,
                    "fits": prog.len() <= BPF_MAXINSNS,
                    "task_budget": MAX_INSNS_PER_PATH,
                    "task_cost": prog.len() + 4,
                },
                "kernel": kernel.map(|k| k.to_string()),
                "allow_cache": kernel.is_some_and(|k| k.has_allow_cache()),
                "arches": arches_json,
            }))?;
        }
        Format::Text => {
            println!("filter: {name}");
            println!(
                "size: {} instructions ({:.1}% of the {} a filter may have); costs {} of the {} instructions all filters of a task may total",
                prog.len(),
                100.0 * prog.len() as f64 / BPF_MAXINSNS as f64,
                BPF_MAXINSNS,
                prog.len() + 4,
                MAX_INSNS_PER_PATH
            );
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
                    Some(t) => println!(
                        "  cacheable: {cached} of {} named syscalls (kernel bitmap `{}`, numbers 0..{}); {upper} are ALLOW whatever the arguments",
                        rows.len(),
                        t.name,
                        t.table_size
                    ),
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
