//! `secopt emu`: run a filter on one `seccomp_data` with the kernel's semantics and show the
//! path it takes.

use super::asm_cmd::parse_arch;
use super::io::{decode_input, display_name, read_input, rejected_by_kernel, Input, InputFormat};
use super::{print_json, Failure, Format, EXIT_OK};
use crate::arch::Arch;
use crate::bpf::action::parse_u32;
use crate::bpf::thread_filters::shown;
use crate::bpf::{disasm, interp, validate, Field, Program, SeccompData};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt emu filter.bpf --arch x86_64 --nr openat --arg 2=0x80000\n  \
secopt emu filter.bpf --arch x86 --nr 102 --arg 0=1          (i386 socketcall(SYS_SOCKET))\n  \
secopt emu filter.bpf --arch-token 0x12345678 --nr 0         (an arch no kernel has)\n  \
secopt emu seccomp_filter.out --nr ioctl --arg 1=0xae80      (KVM_RUN in each Firecracker thread)")]
pub struct EmuArgs {
    /// The filter: raw cBPF, assembly or a JSON filter document (`-` for stdin). Firecracker's
    /// filter file: the call run through every thread's filter, and a line with each thread's
    /// result (`FILE:THREAD` for one).
    pub input: PathBuf,
    /// How the input is encoded.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub input_format: InputFormat,
    /// Architecture of the syscall (sets `seccomp_data.arch`; x32 also sets bit 30 of a named nr).
    /// Default: the host's.
    #[arg(long, value_parser = parse_arch, conflicts_with = "arch_token")]
    pub arch: Option<Arch>,
    /// A raw `seccomp_data.arch` value instead of --arch.
    #[arg(long, value_parser = parse_word)]
    pub arch_token: Option<u32>,
    /// Syscall name (resolved for --arch) or number (decimal, 0x hex, or negative like -1).
    #[arg(long, allow_hyphen_values = true)]
    pub nr: String,
    /// An argument as INDEX=VALUE (64-bit; repeat for several). Unset arguments are 0.
    #[arg(long = "arg", value_parser = parse_arg)]
    pub args: Vec<(usize, u64)>,
    /// `seccomp_data.instruction_pointer`.
    #[arg(long, value_parser = parse_u64, default_value = "0")]
    pub ip: u64,
    /// `text` (the path, one instruction a line) or `json`.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn parse_word(s: &str) -> Result<u32, String> {
    parse_u32(s).ok_or_else(|| format!("`{s}` is not a 32-bit number"))
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(neg) = t.strip_prefix('-') {
        neg.parse::<u64>().ok().map(|v| v.wrapping_neg())
    } else {
        t.parse::<u64>().ok()
    };
    v.ok_or_else(|| format!("`{s}` is not a 64-bit number (decimal, 0x hex, or negative)"))
}

fn parse_arg(s: &str) -> Result<(usize, u64), String> {
    let (i, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected INDEX=VALUE, e.g. 0=3"))?;
    let index: usize = i
        .trim()
        .parse()
        .ok()
        .filter(|&i| i < 6)
        .ok_or_else(|| format!("`{s}`: argument index must be 0 to 5"))?;
    Ok((index, parse_u64(v)?))
}

fn resolve_nr(text: &str, arch: Option<Arch>) -> Result<i32, Failure> {
    if text
        .trim_start()
        .starts_with(|c: char| c.is_ascii_digit() || c == '-')
    {
        let v = parse_u64(text).map_err(|e| Failure::input(format!("--nr: {e}")))?;
        let fits = v <= u32::MAX as u64 || v >= (i32::MIN as i64) as u64;
        if !fits {
            return Err(Failure::input(format!(
                "--nr: `{text}` does not fit in 32 bits"
            )));
        }
        return Ok(v as u32 as i32);
    }
    let arch = arch.ok_or_else(|| {
        Failure::input(format!(
            "--nr: `{text}` is a name, but there is no architecture to resolve it for; give --arch"
        ))
    })?;
    crate::bpf::asm::lookup_syscall(arch, text.trim())
        .map(|n| n as i32)
        .map_err(|e| Failure::input(format!("--nr: {e}")))
}

pub fn run(args: EmuArgs) -> Result<i32, Failure> {
    let bytes = read_input(&args.input)?;
    let name = display_name(&args.input);
    let input = decode_input(&bytes, &name, args.input_format)?;
    let arch = match args.arch_token {
        Some(_) => None,
        None => Some(args.arch.or_else(Arch::host).ok_or_else(|| {
            Failure::input(
                "this host's architecture is unknown to secopt; give --arch or --arch-token",
            )
        })?),
    };
    let token = args
        .arch_token
        .unwrap_or_else(|| arch.map_or(0, |a| a.token()));
    let nr = resolve_nr(&args.nr, arch)?;
    let mut data = SeccompData::new(token, nr, [0; 6]);
    data.instruction_pointer = args.ip;
    for (k, &(i, v)) in args.args.iter().enumerate() {
        if args.args[..k].iter().any(|&(j, _)| j == i) {
            return Err(Failure::input(format!(
                "--arg {i}= is given twice; an argument has one value per run"
            )));
        }
        data.args[i] = v;
    }
    let mut runs = Vec::new();
    match &input {
        Input::Program(prog) => runs.push(Run::new(None, prog, &data, arch, &name)?),
        Input::ThreadFilters(file) => {
            for (thread, prog) in &file.threads {
                let label = format!("{name}:{}", shown(thread));
                runs.push(match prog {
                    Some(prog) => {
                        validate::validate(prog).map_err(|e| rejected_by_kernel(&label, e))?;
                        Run::new(Some(thread), prog, &data, arch, &label)?
                    }
                    None => Run::unfiltered(thread),
                });
            }
        }
    }
    let notes: Vec<String> = passthrough_note(&data).into_iter().collect();
    match args.format {
        Format::Json => {
            let mut doc = serde_json::Map::new();
            doc.insert("input".into(), name.as_str().into());
            doc.insert("seccomp_data".into(), super::verify::data_json(&data));
            doc.insert("notes".into(), notes.clone().into());
            match runs.as_slice() {
                [run] if run.thread.is_none() => run.add_json(&mut doc),
                _ => {
                    let threads: Vec<serde_json::Value> = runs
                        .iter()
                        .map(|run| {
                            let mut thread = serde_json::Map::new();
                            run.add_json(&mut thread);
                            thread.into()
                        })
                        .collect();
                    doc.insert("threads".into(), threads.into());
                }
            }
            print_json(&doc.into())?;
        }
        Format::Text => {
            // The ABI the kernel sees in (token, nr): `--arch x32 --nr 0` is x86_64's read,
            // since a number without bit 30 is not an x32 call.
            let (abi, name) = Arch::call_of_data(token, nr as u32);
            let nr_name = name.map(|n| format!(" ({n})")).unwrap_or_default();
            println!(
                "seccomp_data: arch=0x{token:08x}{} nr={nr}{nr_name} ip=0x{:x} args=[{}]",
                abi.map(|a| format!(" ({a})")).unwrap_or_default(),
                data.instruction_pointer,
                data.args
                    .iter()
                    .map(|a| format!("0x{a:x}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for (i, run) in runs.iter().enumerate() {
                if i > 0 {
                    println!();
                }
                run.print();
            }
            if runs.len() > 1 {
                let each: Vec<String> = runs.iter().map(Run::summary).collect();
                println!("\nper thread: {}", each.join(", "));
            }
            for note in &notes {
                println!("note: {note}");
            }
        }
    }
    Ok(EXIT_OK)
}

/// When the kernel lets this call through before any filter runs (`uretprobe` and `uprobe`
/// on x86_64, `seccomp_uprobe_exception`): the run above is what older kernels do, not what
/// the kernels that have the exception do (docs/kernel-facts.md).
fn passthrough_note(data: &SeccompData) -> Option<String> {
    let cache = crate::bpf::cache::KernelCache::for_arch(Arch::X86_64)?;
    let p = cache
        .passthrough
        .iter()
        .find(|p| p.token == data.arch && p.nr == data.nr as u32)?;
    Some(format!(
        "Linux {} and later let `{}` through before any filter runs (as do stable kernels \
         the exception was backported to): the run above is what older kernels do",
        p.since, p.name
    ))
}

/// One filter run on the `seccomp_data`: the path it took, with each instruction's text.
struct Run<'a> {
    /// The Firecracker thread whose filter this is (`None`: the input is one filter).
    thread: Option<&'a str>,
    /// `None`: the thread has no filter, so the call runs unfiltered.
    trace: Option<(interp::Trace, Vec<String>, Vec<String>)>,
}

impl<'a> Run<'a> {
    fn new(
        thread: Option<&'a str>,
        prog: &Program,
        data: &SeccompData,
        arch: Option<Arch>,
        label: &str,
    ) -> Result<Self, Failure> {
        let trace =
            interp::trace(prog, data).map_err(|e| Failure::input(format!("{label}: {e}")))?;
        let endian = data.endian();
        let words_read = (0..16u32)
            .filter(|w| trace.words_read & (1 << w) != 0)
            .filter_map(|w| Field::at_offset(4 * w, endian).map(Field::name))
            .collect();
        let lines = disasm::instruction_texts(
            prog,
            &disasm::DisasmOptions {
                index_comments: false,
                arch,
            },
        );
        Ok(Run {
            thread,
            trace: Some((trace, lines, words_read)),
        })
    }

    fn unfiltered(thread: &'a str) -> Self {
        Run {
            thread: Some(thread),
            trace: None,
        }
    }

    /// Adds the run to a document (names as every verb's JSON has them, docs/json.md):
    /// `thread` (a thread's filter), then `value` (what the filter returns), `action` (it in
    /// words), `steps`, `path`, `reads` (every field the run loaded, `nr` and `arch` too),
    /// `division_by_zero`; an unfiltered thread adds `"filter": null`.
    fn add_json(&self, doc: &mut serde_json::Map<String, serde_json::Value>) {
        if let Some(thread) = self.thread {
            doc.insert("thread".into(), thread.into());
        }
        let Some((trace, lines, words_read)) = &self.trace else {
            doc.insert("filter".into(), serde_json::Value::Null);
            return;
        };
        let path: Vec<serde_json::Value> = trace
            .path
            .iter()
            .map(|&pc| serde_json::json!({"index": pc, "text": lines[pc]}))
            .collect();
        doc.insert("value".into(), trace.ret.0.into());
        doc.insert("action".into(), trace.ret.to_string().into());
        doc.insert("steps".into(), trace.steps.into());
        doc.insert("path".into(), path.into());
        doc.insert("reads".into(), words_read.clone().into());
        doc.insert("division_by_zero".into(), trace.div_by_zero.into());
    }

    /// `vcpu ALLOW (53 instructions)`, for the line that sums up a file's threads.
    fn summary(&self) -> String {
        let thread = self.thread.map_or("filter".into(), shown);
        match &self.trace {
            Some((trace, _, _)) => format!("{thread} {} ({} instructions)", trace.ret, trace.steps),
            None => format!("{thread} ALLOW (no filter)"),
        }
    }

    fn print(&self) {
        if let Some(thread) = self.thread {
            println!("thread {}:", shown(thread));
        }
        let Some((trace, lines, words_read)) = &self.trace else {
            println!("result: ALLOW: no filter (an empty program: Firecracker installs none for this thread)");
            return;
        };
        for &pc in &trace.path {
            println!("{pc:>5}  {}", lines[pc]);
        }
        if trace.div_by_zero {
            println!("       division by X == 0: the kernel's filter returns 0 here");
        }
        println!(
            "result: {} (0x{:08x}) after {} instructions; read {}",
            trace.ret,
            trace.ret.0,
            trace.steps,
            if words_read.is_empty() {
                "nothing".to_string()
            } else {
                words_read.join(", ")
            }
        );
    }
}
