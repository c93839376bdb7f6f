//! `secopt disasm` and `secopt asm`.

use super::io::{
    decode_program, display_name, read_input, rejected_by_kernel, thread_filters_file,
    write_binary_output, write_output, InputFormat,
};
use super::{json_text, Failure, Format, EXIT_DIFFERENT, EXIT_OK};
use crate::arch::{Arch, Endian};
use crate::bpf::thread_filters::{self, ThreadFilters};
use crate::bpf::{asm, disasm, validate, Program};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DisasmArgs {
    /// The filter: raw cBPF, assembly or a JSON filter document (`-` for stdin). Firecracker's
    /// filter file: every thread's listing under a `; thread NAME` line (`FILE:THREAD` for one).
    #[arg(default_value = "-")]
    pub input: PathBuf,
    /// How the input is encoded.
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub input_format: InputFormat,
    /// Architecture to name syscalls for when the program never checks `arch`
    /// (programs that check it are named per arch block automatically).
    #[arg(long, value_parser = parse_arch)]
    pub arch: Option<Arch>,
    /// Leave out the `; <index>` comment after each instruction.
    #[arg(long)]
    pub no_index: bool,
    /// `text` (assembly) or `json` (instructions with their raw fields and text).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write here instead of stdout (atomically).
    #[arg(short, long, value_parser = super::io::output_path)]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct AsmArgs {
    /// The assembly source (`-` for stdin).
    #[arg(default_value = "-")]
    pub input: PathBuf,
    /// Where to write the raw filter (`-` for stdout; refused when stdout is a terminal).
    #[arg(short, long, value_parser = super::io::output_path)]
    pub output: Option<PathBuf>,
    /// Write big-endian `struct sock_filter` (for s390x, ppc64 and mips machines; what
    /// `secopt compile --emit raw` writes for them) instead of little-endian.
    #[arg(long)]
    pub big_endian: bool,
}

/// Parses an architecture name in any common spelling, for `--arch`.
pub fn parse_arch(s: &str) -> Result<Arch, String> {
    Arch::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
        format!(
            "unknown architecture `{s}`; expected one of {}",
            names.join(", ")
        )
    })
}

pub fn disasm(args: DisasmArgs) -> Result<i32, Failure> {
    let bytes = read_input(&args.input)?;
    let name = display_name(&args.input);
    let opts = disasm::DisasmOptions {
        index_comments: !args.no_index,
        arch: args.arch,
    };
    let decoded = decode_program(&bytes, &name, args.input_format);
    if !matches!(decoded, Ok((_, None))) {
        if let Some(file) = thread_filters_file(&bytes, args.input_format) {
            return disasm_threads(&args, &name, file, &opts);
        }
    }
    // An invalid filter is listed too (`.insn` for opcodes seccomp refuses, `+N` for jumps out
    // of the program), with the kernel's objection on stderr and exit code 1.
    let (prog, rejected) = decoded?;
    let exit = match &rejected {
        Some(why) => {
            eprintln!("secopt: {} (listed anyway)", why.message);
            EXIT_DIFFERENT
        }
        None => EXIT_OK,
    };
    let listing = Listing::new(&prog, rejected.as_ref(), &opts);
    let out = match args.format {
        Format::Text => listing.text.into_bytes(),
        Format::Json => json_text(&listing.json(&name))?.into_bytes(),
    };
    write_output(args.output.as_deref().unwrap_or("-".as_ref()), &out)?;
    Ok(exit)
}

/// The comment that starts each thread's listing in `disasm`'s text of a Firecracker filter
/// file (`; thread vcpu: 89 instructions`), which `asm` recognises in its input.
const THREAD_HEADING: &str = "; thread ";

/// `; thread NAME: WHAT`, the line before a thread's listing.
fn thread_heading(shown: &str, what: &str) -> String {
    format!("{THREAD_HEADING}{shown}: {what}\n")
}

/// Every thread's filter of a Firecracker filter file: each listing under a `; thread NAME`
/// comment (text), or `{"input", "encoding", "threads": [{"thread", …one filter's document…}]}`
/// (JSON). A thread's filter the kernel would reject is listed too, as one filter is: the
/// objection on stderr, exit code 1.
fn disasm_threads(
    args: &DisasmArgs,
    name: &str,
    file: ThreadFilters,
    opts: &disasm::DisasmOptions,
) -> Result<i32, Failure> {
    let mut text = String::new();
    let mut threads = Vec::new();
    let mut exit = EXIT_OK;
    for (thread, prog) in &file.threads {
        let shown = thread_filters::shown(thread);
        let label = format!("{name}:{shown}");
        if !text.is_empty() {
            text.push('\n');
        }
        let Some(prog) = prog else {
            text.push_str(&thread_heading(
                &shown,
                "no filter (an empty program: Firecracker installs none for this thread)",
            ));
            threads.push(serde_json::json!({"thread": thread, "input": label, "filter": null}));
            continue;
        };
        let rejected = validate::validate(prog)
            .err()
            .map(|e| rejected_by_kernel(&label, e));
        if let Some(why) = &rejected {
            eprintln!("secopt: {} (listed anyway)", why.message);
            exit = EXIT_DIFFERENT;
        }
        let listing = Listing::new(prog, rejected.as_ref(), opts);
        text.push_str(&thread_heading(
            &shown,
            &format!("{} instructions", prog.len()),
        ));
        text.push_str(&listing.text);
        let mut doc = listing.json(&label);
        doc["thread"] = thread.as_str().into();
        threads.push(doc);
    }
    let out = match args.format {
        Format::Text => text.into_bytes(),
        Format::Json => json_text(&serde_json::json!({
            "input": name,
            "encoding": file.encoding.name(),
            "threads": threads,
        }))?
        .into_bytes(),
    };
    write_output(args.output.as_deref().unwrap_or("-".as_ref()), &out)?;
    Ok(exit)
}

/// One filter's listing: its assembly, and what `--format json` shows of it.
struct Listing<'a> {
    prog: &'a Program,
    rejected: Option<&'a Failure>,
    text: String,
}

impl<'a> Listing<'a> {
    fn new(prog: &'a Program, rejected: Option<&'a Failure>, opts: &disasm::DisasmOptions) -> Self {
        let text = disasm::disassemble(prog, opts);
        Listing {
            prog,
            rejected,
            text,
        }
    }

    /// `{"input", "length", "kernel_accepts", "rejected", "instructions", "assembly"}`.
    fn json(&self, input: &str) -> serde_json::Value {
        let insns: Vec<serde_json::Value> = self
            .prog
            .insns
            .iter()
            .enumerate()
            .map(|(i, insn)| {
                serde_json::json!({"index": i, "code": insn.code, "jt": insn.jt, "jf": insn.jf, "k": insn.k})
            })
            .collect();
        serde_json::json!({
            "input": input,
            "length": self.prog.len(),
            "kernel_accepts": self.rejected.is_none(),
            "rejected": self.rejected.map(|f| &f.message),
            "instructions": insns,
            "assembly": self.text,
        })
    }
}

/// `secopt asm`: one listing to one filter's bytes, validated before anything is written.
pub fn asm(args: AsmArgs) -> Result<i32, Failure> {
    let name = display_name(&args.input);
    let bytes = read_input(&args.input)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| Failure::input(format!("{name}: not UTF-8 text: {e}")))?;
    let prog = asm::assemble(text)
        .map_err(|e| Failure::input(format!("{name}:{e}{}", several_threads_hint(text))))?;
    // The assembler validates; check again so no path here can write an unvalidated filter.
    validate::validate(&prog).map_err(|e| rejected_by_kernel(&name, e))?;
    let output = args.output.unwrap_or_else(|| PathBuf::from("-"));
    let endian = if args.big_endian {
        Endian::Big
    } else {
        Endian::Little
    };
    if let Some(why) = byte_order_mismatch(text, &prog, endian) {
        eprintln!("secopt: warning: {name}: {why}");
    }
    write_binary_output(&output, &prog.to_raw_in(endian), "a binary filter")?;
    Ok(EXIT_OK)
}

/// A listing of a whole Firecracker filter file (`disasm fc.bpf`) holds one program per
/// thread, each under a `; thread NAME: …` line, and does not assemble as one (its labels
/// repeat). When an error comes from such a listing, say so and how to take one thread.
fn several_threads_hint(text: &str) -> String {
    let threads: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix(THREAD_HEADING))
        .filter_map(|rest| rest.split_once(':').map(|(thread, _)| thread))
        .collect();
    match threads.as_slice() {
        [] | [_] => String::new(),
        [first, ..] => format!(
            " (this is a listing of {} threads' filters ({}), as `disasm` writes a \
             Firecracker filter file: assemble one thread's at a time, \
             `secopt disasm FILE:{first} | secopt asm -o {first}.bpf`)",
            threads.len(),
            threads.join(", ")
        ),
    }
}

/// When the listing is a big-endian machine's filter (`.endian big`, as `disasm` marks one,
/// or every arch it checks is big-endian) and the bytes are to be little-endian, or the
/// other way round: the kernel the filter is for would refuse them, and nothing else says
/// so until it does.
fn byte_order_mismatch(text: &str, prog: &Program, endian: Endian) -> Option<String> {
    let said_big = text
        .lines()
        .map(|l| {
            l.split(';')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
        })
        .any(|words| words == [".endian", "big"]);
    let arches = crate::optimize::arches_singled_out(prog);
    let only = |e: Endian| !arches.is_empty() && arches.iter().all(|a| a.endian() == e);
    let names = || {
        arches
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(" ")
    };
    match endian {
        Endian::Little if said_big || only(Endian::Big) => Some(format!(
            "{} a big-endian machine's filter; these bytes are little-endian, which its \
             kernel refuses: add --big-endian",
            if said_big {
                "the listing says `.endian big`:".to_string()
            } else {
                format!("it checks only {}:", names())
            }
        )),
        Endian::Big if only(Endian::Little) => Some(format!(
            "it checks only {}, little-endian machines, and --big-endian writes bytes their \
             kernels refuse",
            names()
        )),
        _ => None,
    }
}
