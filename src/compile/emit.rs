//! Output formats for a [`CompiledFilter`], and for a program no profile describes
//! ([`emit_program`]). Every function here writes only programs the kernel would take:
//! a `CompiledFilter` exists only for programs [`CompiledFilter::new`] validated, and
//! `emit_program` validates its program first.

use super::{CompileError, CompiledFilter, FilterInfo};
use crate::arch::Endian;
use crate::bpf::disasm::{self, DisasmOptions};
use crate::bpf::thread_filters::{self, Encoding};
use crate::bpf::Program;
use std::fmt::Write as _;

/// How to write a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum EmitFormat {
    /// `struct sock_filter` array in the native arch's byte order (`bwrap --seccomp`,
    /// `seccomp(2)`).
    Raw,
    /// secopt assembly (`secopt asm` turns it back into the same bytes; with `--big-endian`
    /// for s390x, ppc64 and mips, as its header says).
    Asm,
    /// A C header: `static struct sock_filter NAME[]` and its length `NAME_LEN`, upper-cased
    /// (`--name my_filter`: `MY_FILTER_LEN`).
    C,
    /// A Rust source file: a `#[repr(C)]` `SockFilter` struct and a `const` array.
    Rust,
    /// A Go source file: a `[]struct{Code uint16; Jt, Jf uint8; K uint32}` slice,
    /// convertible to `[]unix.SockFilter`.
    Go,
    /// Base64 of the raw bytes (crun's `run.oci.seccomp_bpf_data` annotation).
    Base64,
    /// The program and its metadata as one JSON document.
    Json,
    /// Firecracker's filter file, every thread's filter in one (`firecracker --seccomp-filter
    /// FILE`, in place of `seccompiler-bin`'s output), bitcode: Firecracker 1.15 and later.
    Firecracker,
    /// The same file, bincode: Firecracker releases before 1.15.
    FirecrackerBincode,
}

impl EmitFormat {
    /// The format a file name's extension implies (`.bpf`, `.s`/`.asm`, `.h`, `.rs`, `.go`,
    /// `.b64`/`.base64`, `.json`).
    pub fn from_extension(path: &std::path::Path) -> Option<EmitFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "bpf" | "raw" | "bin" => EmitFormat::Raw,
            "s" | "asm" => EmitFormat::Asm,
            "h" | "c" => EmitFormat::C,
            "rs" => EmitFormat::Rust,
            "go" => EmitFormat::Go,
            "b64" | "base64" => EmitFormat::Base64,
            "json" => EmitFormat::Json,
            _ => return None,
        })
    }

    /// Whether the output is binary (not for a terminal).
    pub fn is_binary(self) -> bool {
        self == EmitFormat::Raw || self.thread_filters_encoding().is_some()
    }

    /// For Firecracker's filter file, its encoding: it holds every thread's filter, so it is
    /// written by [`emit_thread_filters`], not one filter at a time.
    pub fn thread_filters_encoding(self) -> Option<Encoding> {
        match self {
            EmitFormat::Firecracker => Some(Encoding::Bitcode),
            EmitFormat::FirecrackerBincode => Some(Encoding::Bincode),
            _ => None,
        }
    }
}

/// The Go package [`emit`] declares; [`emit_go`] takes another.
pub const DEFAULT_GO_PACKAGE: &str = "seccomp";

/// Go source declaring the filter as `name` (in Go's MixedCaps) in `package` — a lower-case Go
/// identifier, as [`go_package_name`] checks.
pub fn emit_go(filter: &CompiledFilter, name: &str, package: &str) -> Vec<u8> {
    let header = description(filter.info(), filter.program().len());
    go_source(filter.program(), &header, name, package).into_bytes()
}

/// Checks a Go package name: lower-case ASCII letters, digits and `_`, starting with a letter,
/// and not a Go keyword (what `go vet` and Go's style accept for a package clause).
pub fn go_package_name(name: &str) -> Result<&str, String> {
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !GO_KEYWORDS.contains(&name);
    if valid {
        Ok(name)
    } else {
        Err(format!(
            "`{name}` is not a Go package name: lower-case letters, digits and `_`, starting \
             with a letter, not a keyword"
        ))
    }
}

/// Go's keywords (the Go specification, "Keywords").
const GO_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "fallthrough",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "import",
    "interface",
    "map",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "type",
    "var",
];

/// Writes `filter` in `format`. `name` names the array in source formats (made into a
/// valid identifier). A Firecracker filter file written from one filter holds that filter
/// alone, under its thread (or `name`): Firecracker itself wants all three threads, see
/// [`emit_thread_filters`].
pub fn emit(filter: &CompiledFilter, format: EmitFormat, name: &str) -> Vec<u8> {
    let info = filter.info();
    let prog = filter.program();
    let endian = info.native.endian();
    match format {
        EmitFormat::Firecracker | EmitFormat::FirecrackerBincode => {
            let thread = info.thread.as_deref().unwrap_or(name);
            emit_source(prog, endian, &[], format, thread, || json_document(filter))
        }
        _ => {
            let header = description(info, prog.len());
            emit_source(prog, endian, &header, format, name, || {
                json_document(filter)
            })
        }
    }
}

/// Where a program that no profile describes came from (an optimized `.bpf`, a filter
/// written by hand or dumped from a process), for the comment header and the JSON document
/// [`emit_program`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramOrigin {
    /// The file it was read from, as the user named it.
    pub source: String,
    /// The byte order of the raw and base64 output: the target machine's
    /// ([`Arch::endian`](crate::arch::Arch::endian)). Source formats hold numbers and have none.
    pub endian: Endian,
    /// What was done to it, one sentence each ("Optimized from 312 instructions; proved equal
    /// to the input."), for the header.
    pub notes: Vec<String>,
    /// The same for machines, when the program is the optimizer's output: the input's length
    /// as `reference_length`, the method, whether it was proved equal (JSON `optimization`,
    /// as in a compiled filter's document).
    pub optimization: Option<super::OptimizationInfo>,
}

/// Writes a program that no profile describes in `format`, as [`emit`] writes a compiled
/// filter: the header names `origin`'s source and notes, and the arches the program checks.
/// The program is checked as the kernel checks it first (nothing is written for one it would
/// refuse). A Firecracker filter file holds it alone, under the thread `name`.
///
/// ```
/// use secopt::bpf::asm::assemble;
/// use secopt::compile::{emit_program, EmitFormat, ProgramOrigin};
/// let program = assemble("ld [nr]\njeq #39, allow\nret ERRNO(1)\nallow: ret ALLOW\n").unwrap();
/// let origin = ProgramOrigin {
///     source: "getpid-only.s".into(),
///     endian: secopt::arch::Endian::Little,
///     notes: vec![],
///     optimization: None,
/// };
/// let header = emit_program(&program, &origin, EmitFormat::C, "getpid_only").unwrap();
/// let header = String::from_utf8(header).unwrap();
/// assert!(header.contains("static struct sock_filter getpid_only[GETPID_ONLY_LEN]"));
/// assert!(header.contains("#define GETPID_ONLY_LEN 4"));
/// ```
pub fn emit_program(
    program: &Program,
    origin: &ProgramOrigin,
    format: EmitFormat,
    name: &str,
) -> Result<Vec<u8>, CompileError> {
    check_program(program, origin)?;
    let header = match format {
        EmitFormat::Firecracker | EmitFormat::FirecrackerBincode => vec![],
        _ => program_description(program, origin),
    };
    Ok(emit_source(
        program,
        origin.endian,
        &header,
        format,
        name,
        || program_json(program, origin),
    ))
}

/// Go source declaring a program no profile describes as `name` in `package`, as
/// [`emit_go`] does for a compiled filter.
pub fn emit_program_go(
    program: &Program,
    origin: &ProgramOrigin,
    name: &str,
    package: &str,
) -> Result<Vec<u8>, CompileError> {
    check_program(program, origin)?;
    let header = program_description(program, origin);
    Ok(go_source(program, &header, name, package).into_bytes())
}

/// The kernel's checks, as [`CompiledFilter::new`] makes them, with `origin` named.
fn check_program(program: &Program, origin: &ProgramOrigin) -> Result<(), CompileError> {
    if program.len() > crate::bpf::insn::BPF_MAXINSNS {
        return Err(CompileError::TooLarge {
            file: origin.source.clone(),
            len: program.len(),
            reference: None,
        });
    }
    crate::bpf::validate::validate(program).map_err(|error| CompileError::Invalid {
        file: origin.source.clone(),
        error,
    })
}

/// `prog` in `format` with `header` as its comment lines; JSON is the document `json` writes
/// (a compiled filter's and a bare program's say different things).
fn emit_source(
    prog: &Program,
    endian: Endian,
    header: &[String],
    format: EmitFormat,
    name: &str,
    json: impl FnOnce() -> String,
) -> Vec<u8> {
    match format {
        EmitFormat::Json => json().into_bytes(),
        EmitFormat::Raw => raw_bytes(prog, endian),
        EmitFormat::Asm => asm_text(prog, header, endian).into_bytes(),
        EmitFormat::C => c_header(prog, header, name).into_bytes(),
        EmitFormat::Rust => rust_source(prog, header, name).into_bytes(),
        EmitFormat::Go => go_source(prog, header, name, DEFAULT_GO_PACKAGE).into_bytes(),
        EmitFormat::Base64 => {
            let mut s = base64(&raw_bytes(prog, endian));
            s.push('\n');
            s.into_bytes()
        }
        EmitFormat::Firecracker | EmitFormat::FirecrackerBincode => {
            let encoding = format
                .thread_filters_encoding()
                .expect("a Firecracker format");
            thread_filters::encode(&[(name.to_string(), Some(prog.clone()))], encoding)
        }
    }
}

/// Firecracker's filter file holding each `(thread, filter)`: from
/// [`compile_firecracker`](super::compile_firecracker)'s list,
/// `emit_thread_filters(&filters, encoding)`.
pub fn emit_thread_filters<S: AsRef<str>, F: std::borrow::Borrow<CompiledFilter>>(
    filters: &[(S, F)],
    encoding: Encoding,
) -> Vec<u8> {
    let threads: Vec<(String, Option<Program>)> = filters
        .iter()
        .map(|(t, f)| (t.as_ref().to_string(), Some(f.borrow().program().clone())))
        .collect();
    thread_filters::encode(&threads, encoding)
}

/// `struct sock_filter` bytes in `endian` order.
pub(crate) fn raw_bytes(prog: &Program, endian: Endian) -> Vec<u8> {
    prog.to_raw_in(endian)
}

/// Standard base64 with padding (RFC 4648 §4), as Go's `base64.StdEncoding` reads it.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Lines describing where the filter comes from, for comment headers.
fn description(info: &FilterInfo, len: usize) -> Vec<String> {
    let mut lines = vec![format!(
        "Generated by secopt {} from {}{}.",
        env!("CARGO_PKG_VERSION"),
        info.source,
        info.thread
            .as_deref()
            .map(|t| format!(" (thread {t})"))
            .unwrap_or_default()
    )];
    let arches: Vec<&str> = info.arches.iter().map(|a| a.arch.name()).collect();
    lines.push(format!(
        "{len} instructions; arches: {}; native: {}; semantics: {}{}.",
        arches.join(" "),
        info.native,
        match info.dialect {
            crate::policy::Dialect::Libseccomp => "libseccomp",
            crate::policy::Dialect::RustVmmSeccompiler => "rust-vmm seccompiler",
            crate::policy::Dialect::Firecracker110 => "Firecracker 1.10's seccompiler",
        },
        if info.runc_compat {
            " + runc's ENOSYS stub"
        } else {
            ""
        }
    ));
    if let Some(o) = &info.optimization {
        let unchanged = o.method == crate::optimize::Method::Unchanged;
        lines.push(match (unchanged, o.dropped_unproved()) {
            (true, true) => "The reference lowering (nothing better was proved equal within \
                             the self-check's budget)."
                .to_string(),
            (true, false) => {
                "The reference lowering (the optimizer found nothing better).".to_string()
            }
            (false, _) => format!(
                "Optimized from the {}-instruction reference lowering; {}.",
                o.reference_instructions,
                if o.verified {
                    "proved equal to it"
                } else {
                    "not verified (the self-check was turned off)"
                }
            ),
        });
    }
    lines.push(format!(
        "Default action {}; bad-arch action {}.",
        info.default_action, info.bad_arch_action
    ));
    if let Some(flags) = &info.flags {
        let names: Vec<&str> = flags.iter().map(|f| f.spec_name()).collect();
        lines.push(format!(
            "seccomp(2) flags: {}.",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(" ")
            }
        ));
    }
    if let Some(path) = &info.listener_path {
        lines.push(format!("Notify listener: {path}."));
    }
    for a in info.arches.iter().filter(|a| !a.unknown.is_empty()) {
        lines.push(format!(
            "Unknown on {} (skipped): {}.",
            a.arch,
            a.unknown.join(" ")
        ));
    }
    for a in info.arches.iter().filter(|a| !a.via_multiplexer.is_empty()) {
        lines.push(format!(
            "Only through socketcall/ipc on {}: {}.",
            a.arch,
            a.via_multiplexer.join(" ")
        ));
    }
    if !info.unsupported_arches.is_empty() {
        lines.push(format!(
            "Not covered (no syscall table): {}.",
            info.unsupported_arches.join(" ")
        ));
    }
    if let Some(k) = info.kernel {
        lines.push(format!("Resolved for kernel {k}."));
    }
    for (key, value) in &info.settings {
        lines.push(format!("{key}: {value}"));
    }
    one_line_each(lines)
}

/// The header lines of a program no profile describes: where it came from, what it checks,
/// and what was done to it.
fn program_description(prog: &Program, origin: &ProgramOrigin) -> Vec<String> {
    let arches: Vec<String> = crate::optimize::arches_described(prog)
        .iter()
        .map(|a| match a.arch {
            Some(arch) => arch.name().to_string(),
            None => format!("{:#010x}", a.token),
        })
        .collect();
    let mut lines = vec![
        format!(
            "Generated by secopt {} from {}.",
            env!("CARGO_PKG_VERSION"),
            origin.source
        ),
        format!(
            "{} instructions; arches checked: {}.",
            prog.len(),
            if arches.is_empty() {
                "none".to_string()
            } else {
                arches.join(" ")
            }
        ),
    ];
    lines.extend(origin.notes.iter().cloned());
    one_line_each(lines)
}

/// Header lines with control characters escaped: a file or thread name holding a newline
/// would otherwise end the comment line, and what follows it would be code (an assembly
/// header `; from x` + `ret ALLOW` assembles to a filter that allows everything).
fn one_line_each(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| crate::policy::printable(&line).into_owned())
        .collect()
}

fn asm_text(prog: &Program, header: &[String], endian: Endian) -> String {
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "; {line}");
    }
    if endian == Endian::Big {
        let _ = writeln!(
            out,
            "; big-endian raw filter: `secopt asm --big-endian` assembles this into its bytes"
        );
    }
    out.push_str(&disasm::disassemble(
        prog,
        &DisasmOptions {
            index_comments: true,
            arch: None,
        },
    ));
    out
}

/// `name` as an identifier: ASCII letters, digits and `_`, starting with a letter, and not a
/// keyword of C, Rust or Go (`int.json` would declare `static struct sock_filter int[…]`) nor
/// a name a C header cannot take ([`C_TAKEN`], `BPF_*`).
/// A leading `_` would make Go's name unexported (`go_exported` capitalises each part)
/// and C's reserved (`_` and a capital, or `__`), so `-lead.json` gives `filter_lead`.
pub(crate) fn identifier(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if id.starts_with('_') {
        id.insert_str(0, "filter");
    } else if id.is_empty()
        || id.starts_with(|c: char| c.is_ascii_digit())
        || KEYWORDS.contains(&id.as_str())
        || C_TAKEN.contains(&id.as_str())
        || id.starts_with("BPF_")
    {
        id.insert_str(0, "filter_");
    }
    id
}

/// Names a C header cannot declare an array as, besides keywords: macros GCC predefines in
/// its default GNU dialects (`linux` and `unix` are `1`; `i386` on 32-bit x86), and `main`,
/// which every program defines. `BPF_*` names are macros of `<linux/filter.h>`, which the
/// header includes (checked apart).
const C_TAKEN: &[&str] = &["linux", "unix", "i386", "main"];

/// Reserved words of C (C23), Rust (2021, including reserved ones) and Go.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex", "_Decimal128",
    "_Decimal32", "_Decimal64", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert",
    "_Thread_local", "abstract", "alignas", "alignof", "as", "async", "auto", "await", "become",
    "bool", "box", "break", "case", "chan", "char", "const", "constexpr", "continue", "crate",
    "default", "defer", "do", "double", "dyn", "else", "enum", "extern", "fallthrough", "false",
    "final", "float", "fn", "for", "func", "go", "goto", "if", "impl", "import", "in", "inline",
    "int", "interface", "let", "long", "loop", "macro", "map", "match", "mod", "move", "mut",
    "nullptr", "override", "package", "priv", "pub", "range", "ref", "register", "restrict",
    "return", "select", "self", "Self", "short", "signed", "sizeof", "static",
    "static_assert", "struct", "super", "switch", "thread_local", "trait", "true", "try",
    "type", "typedef", "typeof", "typeof_unqual", "union", "unsafe", "unsigned", "unsized",
    "use", "var", "virtual", "void", "volatile", "where", "while", "yield",
];

/// Comment text safe inside `/* */`.
fn c_comment_safe(line: &str) -> String {
    line.replace("*/", "* /")
}

fn c_header(prog: &Program, header: &[String], name: &str) -> String {
    let id = identifier(name);
    let upper = id.to_ascii_uppercase();
    let mut out = String::from("/*\n");
    for line in header {
        let _ = writeln!(out, " * {}", c_comment_safe(line));
    }
    out.push_str(" */\n");
    let _ = writeln!(out, "#ifndef SECOPT_{upper}_H\n#define SECOPT_{upper}_H\n");
    out.push_str("#include <linux/filter.h>\n\n");
    let _ = writeln!(out, "#define {upper}_LEN {}\n", prog.len());
    // Not const: `struct sock_fprog` points at it without one. `unused`, so a file that
    // includes the header without using the array builds under `-Wall -Werror`.
    let _ = writeln!(
        out,
        "static struct sock_filter {id}[{upper}_LEN] __attribute__((unused)) = {{"
    );
    for insn in &prog.insns {
        let _ = writeln!(
            out,
            "\t{{ 0x{:02x}, {}, {}, 0x{:08x} }},",
            insn.code, insn.jt, insn.jf, insn.k
        );
    }
    out.push_str("};\n\n#endif\n");
    out
}

fn rust_source(prog: &Program, header: &[String], name: &str) -> String {
    let id = identifier(name).to_ascii_uppercase();
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "// {line}");
    }
    out.push_str(
        "\n/// `struct sock_filter`: same layout as `libc::sock_filter`.\n\
         #[repr(C)]\n#[derive(Clone, Copy, Debug, PartialEq, Eq)]\n\
         pub struct SockFilter {\n    pub code: u16,\n    pub jt: u8,\n    pub jf: u8,\n    pub k: u32,\n}\n\n",
    );
    let _ = writeln!(out, "pub const {id}: [SockFilter; {}] = [", prog.len());
    for insn in &prog.insns {
        let _ = writeln!(
            out,
            "    SockFilter {{ code: 0x{:02x}, jt: {}, jf: {}, k: 0x{:08x} }},",
            insn.code, insn.jt, insn.jf, insn.k
        );
    }
    out.push_str("];\n");
    out
}

fn go_source(prog: &Program, header: &[String], name: &str, package: &str) -> String {
    let exported = go_exported(&identifier(name));
    let mut out = String::from("// Code generated by secopt; DO NOT EDIT.\n\n");
    for line in header {
        let _ = writeln!(out, "// {line}");
    }
    let _ = write!(out, "\npackage {package}\n\n");
    let _ = writeln!(
        out,
        "// {exported} is the filter as struct sock_filter values; each element converts to unix.SockFilter."
    );
    let _ = writeln!(
        out,
        "var {exported} = []struct {{\n\tCode   uint16\n\tJt, Jf uint8\n\tK      uint32\n}}{{"
    );
    for insn in &prog.insns {
        let _ = writeln!(
            out,
            "\t{{0x{:02x}, {}, {}, 0x{:08x}}},",
            insn.code, insn.jt, insn.jf, insn.k
        );
    }
    out.push_str("}\n");
    out
}

/// An exported Go name in Go's MixedCaps: `docker_default` → `DockerDefault` (Go's style
/// has no underscores in names; the capital first letter exports it). `identifier` starts
/// with a letter, so the result does too.
fn go_exported(id: &str) -> String {
    id.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
                .collect::<String>()
        })
        .collect()
}

/// A program's instructions as JSON `{code, jt, jf, k}` objects.
fn json_instructions(prog: &Program) -> Vec<serde_json::Value> {
    prog.insns
        .iter()
        .map(|i| serde_json::json!({"code": i.code, "jt": i.jt, "jf": i.jf, "k": i.k}))
        .collect()
}

/// The JSON document of a program no profile describes: the fields of a compiled filter's
/// that a program has (docs/json.md).
fn program_json(prog: &Program, origin: &ProgramOrigin) -> String {
    let doc = serde_json::json!({
        "generator": format!("secopt {}", env!("CARGO_PKG_VERSION")),
        "input": origin.source,
        "byte_order": origin.endian,
        "arches": crate::optimize::arches_described(prog),
        "description": origin.notes,
        "optimization": origin.optimization,
        "length": prog.len(),
        "instructions": json_instructions(prog),
        "base64": base64(&raw_bytes(prog, origin.endian)),
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn json_document(filter: &CompiledFilter) -> String {
    let prog = filter.program();
    let info = filter.info();
    let insns = json_instructions(prog);
    let arches: Vec<serde_json::Value> = info
        .arches
        .iter()
        .map(|a| {
            serde_json::json!({
                "arch": a.arch,
                "token": a.token,
                "unknown": a.unknown,
                "unknown_anywhere": a.unknown_anywhere,
                "via_multiplexer": a.via_multiplexer,
                "listed": a.listed,
                "syscalls_with_rules": a.syscalls_with_rules,
                "highest_named": a.highest_named,
            })
        })
        .collect();
    let settings: serde_json::Map<String, serde_json::Value> = info
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    let doc = serde_json::json!({
        "generator": format!("secopt {}", env!("CARGO_PKG_VERSION")),
        "input": info.source,
        "thread": info.thread,
        "dialect": info.dialect,
        "native": info.native,
        "byte_order": info.native.endian(),
        "arches": arches,
        "unsupported_arches": info.unsupported_arches,
        "warnings": info.warnings,
        "default_action": info.default_action.to_string(),
        "default_action_value": info.default_action.0,
        "bad_arch_action": info.bad_arch_action.to_string(),
        "bad_arch_action_value": info.bad_arch_action.0,
        "flags": info.flags.as_ref().map(|f| f.iter().map(|x| x.spec_name()).collect::<Vec<_>>()),
        "listener_path": info.listener_path,
        "listener_metadata": info.listener_metadata,
        "runc_compat": info.runc_compat,
        "kernel": info.kernel.map(|k| k.to_string()),
        "settings": settings,
        "optimization": info.optimization,
        "length": prog.len(),
        "instructions": insns,
        "base64": base64(&filter.to_raw()),
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}
