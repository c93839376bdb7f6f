//! `secopt disasm` and `secopt asm`.

use super::io::{
    decode_program, display_name, read_input, write_binary_output, write_output, InputFormat,
};
use super::{print_json, Failure, Format, EXIT_DIFFERENT, EXIT_OK};
use crate::arch::{Arch, Endian};
use crate::bpf::{asm, disasm, validate};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DisasmArgs {
    /// The filter: raw cBPF or assembly (`-` for stdin).
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
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct AsmArgs {
    /// The assembly source (`-` for stdin).
    pub input: PathBuf,
    /// Where to write the raw filter (`-` for stdout; refused when stdout is a terminal).
    #[arg(short, long)]
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
    // An invalid filter is listed too (`.insn` for opcodes seccomp refuses, `+N` for jumps out
    // of the program), with the kernel's objection on stderr and exit code 1.
    let bytes = read_input(&args.input)?;
    let (prog, rejected) = decode_program(&bytes, &display_name(&args.input), args.input_format)?;
    let exit = match &rejected {
        Some(why) => {
            eprintln!("secopt: {} (listed anyway)", why.message);
            EXIT_DIFFERENT
        }
        None => EXIT_OK,
    };
    let opts = disasm::DisasmOptions {
        index_comments: !args.no_index,
        arch: args.arch,
    };
    let text = disasm::disassemble(&prog, &opts);
    let out = match args.format {
        Format::Text => text.into_bytes(),
        Format::Json => {
            let insns: Vec<serde_json::Value> = prog
                .insns
                .iter()
                .enumerate()
                .map(|(i, insn)| {
                    serde_json::json!({"index": i, "code": insn.code, "jt": insn.jt, "jf": insn.jf, "k": insn.k})
                })
                .collect();
            let doc = serde_json::json!({
                "input": display_name(&args.input),
                "length": prog.len(),
                "kernel_accepts": rejected.is_none(),
                "rejected": rejected.as_ref().map(|f| &f.message),
                "instructions": insns,
                "assembly": text,
            });
            if args.output.is_none() {
                print_json(&doc)?;
                return Ok(exit);
            }
            serde_json::to_vec_pretty(&doc).map_err(|e| Failure::input(e.to_string()))?
        }
    };
    write_output(args.output.as_deref().unwrap_or("-".as_ref()), &out)?;
    Ok(exit)
}

pub fn asm(args: AsmArgs) -> Result<i32, Failure> {
    let name = display_name(&args.input);
    let bytes = read_input(&args.input)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| Failure::input(format!("{name}: not UTF-8 text: {e}")))?;
    let prog = asm::assemble(text).map_err(|e| Failure::input(format!("{name}:{e}")))?;
    // The assembler validates; check again so no path here can write an unvalidated filter.
    validate::validate(&prog)
        .map_err(|e| Failure::input(format!("{name}: the kernel would reject this filter: {e}")))?;
    let output = args.output.unwrap_or_else(|| PathBuf::from("-"));
    let endian = if args.big_endian {
        Endian::Big
    } else {
        Endian::Little
    };
    write_binary_output(&output, &prog.to_raw_in(endian), "a binary filter")?;
    Ok(EXIT_OK)
}
