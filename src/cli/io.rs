//! Reading programs and writing outputs for the CLI: `-` is stdin/stdout, raw and assembly
//! inputs are told apart, and files are written atomically.

use super::Failure;
use crate::arch::Endian;
use crate::bpf::{asm, thread_filters, validate, Program};
use std::io::{IsTerminal, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// How an input program is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// Decide from the content: assembly if it is UTF-8 text without NUL bytes, raw otherwise.
    Auto,
    /// Raw little-endian `struct sock_filter` array (what `seccomp(2)` and `bwrap --seccomp` take).
    Raw,
    /// Raw big-endian `struct sock_filter` array (what `seccomp(2)` takes on s390x, ppc64 and
    /// mips; `secopt compile` writes it for those arches).
    RawBe,
    /// secopt assembly text.
    Asm,
    /// secopt's JSON document of a filter (what `compile --emit json`, `optimize -o X.json`
    /// and `disasm --format json` write): the program in its `instructions`.
    Json,
}

/// Human name for an input path in messages.
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Reads a whole input file, or stdin for `-`, or one thread's filter of a Firecracker filter
/// file as raw bytes for `FILE:THREAD` (when no file has that name), so that every verb reads
/// one thread of such a file: `secopt analyze seccomp_filter.out:vcpu`.
pub fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    if let Some(raw) = read_thread_filter(path)? {
        return Ok(raw);
    }
    remember_input(path);
    if path == Path::new("-") {
        return read_stdin();
    }
    std::fs::read(path).map_err(|e| {
        // `FILE:THREAD` of a file that is not Firecracker's: say so, not just "not found".
        let split = path.to_str().and_then(|p| p.rsplit_once(':'));
        if let Some((file, thread)) = split {
            if e.kind() == std::io::ErrorKind::NotFound && Path::new(file).is_file() {
                return Failure::input(format!(
                    "{}: no such file, and {file} is not a Firecracker filter file, so \
                     `:{thread}` names no thread of it",
                    path.display()
                ));
            }
        }
        Failure::input(format!("{}: cannot read: {e}", path.display()))
    })
}

/// `path` split as `FILE:THREAD` where it names no file itself and a file comes before a `:`
/// (the last such `:`, so that file and thread names may hold one); whether FILE is a
/// Firecracker filter file is the caller's to find out.
pub fn file_and_thread(path: &Path) -> Option<(&str, &str)> {
    let text = path.to_str()?;
    let (file, thread) = text
        .rmatch_indices(':')
        .map(|(i, _)| (&text[..i], &text[i + 1..]))
        .find(|(file, _)| Path::new(file).is_file())?;
    if thread.is_empty() || thread.contains('/') || path.exists() {
        return None;
    }
    Some((file, thread))
}

/// Whether reading `path` reads stdin: `-`, or `-:THREAD`.
pub fn reads_stdin(path: &Path) -> bool {
    path == Path::new("-") || stdin_thread(path).is_some()
}

/// `-:THREAD` (given after `--`, as clap takes `-:` for a flag otherwise): THREAD of the
/// Firecracker filter file on stdin, unless a file has that name.
fn stdin_thread(path: &Path) -> Option<&str> {
    let thread = path.to_str()?.strip_prefix("-:")?;
    (!thread.is_empty() && !path.exists()).then_some(thread)
}

/// All of stdin.
fn read_stdin() -> Result<Vec<u8>, Failure> {
    // A file redirected in (`secopt asm - -o f.s < f.s`) is an input like a named one.
    remember_input_as(Path::new("/proc/self/fd/0"), Path::new("<stdin>"));
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::input(format!("<stdin>: cannot read: {e}")))?;
    Ok(bytes)
}

/// Thread `thread`'s program of a Firecracker filter file (`file`, as messages name it) as
/// raw (little-endian) bytes, or the threads the file has.
fn thread_raw(
    filters: &thread_filters::ThreadFilters,
    thread: &str,
    file: &str,
) -> Result<Vec<u8>, Failure> {
    filters
        .program(thread)
        .map(|prog| prog.to_raw())
        .map_err(|e| Failure::input(format!("{file}: {e}")))
}

/// `FILE:THREAD` naming a thread of a Firecracker filter file, or `-:THREAD` one of the file
/// on stdin: that thread's program as raw (little-endian) bytes. `None` when the path
/// exists, has no `:`, or no file before a `:` is a Firecracker filter file: the caller reads
/// the path as it is. The `:` is the last one with a file before it, so that both file and
/// thread names may hold one.
fn read_thread_filter(path: &Path) -> Result<Option<Vec<u8>>, Failure> {
    if let Some(thread) = stdin_thread(path) {
        let bytes = read_stdin()?;
        let filters = thread_filters::decode(&bytes).map_err(|e| {
            Failure::input(format!(
                "{}: `:{thread}` picks a thread of the Firecracker filter file on stdin, and \
                 stdin is {e}",
                path.display()
            ))
        })?;
        return thread_raw(&filters, thread, "<stdin>").map(Some);
    }
    let Some((file, thread)) = file_and_thread(path) else {
        return Ok(None);
    };
    let Ok(bytes) = std::fs::read(file) else {
        return Ok(None);
    };
    let Ok(filters) = thread_filters::decode(&bytes) else {
        return Ok(None);
    };
    remember_input(Path::new(file));
    thread_raw(&filters, thread, file).map(Some)
}

/// The regular files this run reads (device and inode number, with the name it was given),
/// so that no output replaces one: `secopt asm in.s -o in.s`, a workload named as `-o`, a
/// member of a stack, a `{thread}` pattern that expands to the profile's own name.
static INPUTS: std::sync::Mutex<Vec<(u64, u64, PathBuf)>> = std::sync::Mutex::new(Vec::new());

/// Notes `path` as one of this run's inputs when it is a regular file.
fn remember_input(path: &Path) {
    remember_input_as(path, path);
}

/// [`remember_input`], the input named `shown` in messages.
fn remember_input_as(path: &Path, shown: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_file() {
        if let Ok(mut inputs) = INPUTS.lock() {
            inputs.push((meta.dev(), meta.ino(), shown.to_path_buf()));
        }
    }
}

/// Refuses an output `path` that is one of this run's input files (through any name or
/// link): writing it would replace what was read, and the user's file would be lost.
pub fn check_not_an_input(path: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let Ok(inputs) = INPUTS.lock() else {
        return Ok(());
    };
    match inputs
        .iter()
        .find(|(dev, ino, _)| meta.is_file() && (*dev, *ino) == (meta.dev(), meta.ino()))
    {
        Some((_, _, read)) => Err(Failure::input(format!(
            "{}: that is {}, an input of this command; writing there would replace it: choose \
             another file",
            path.display(),
            if read == path {
                "the file read".to_string()
            } else {
                read.display().to_string()
            }
        ))),
        None => Ok(()),
    }
}

/// `LABEL: the kernel would reject this filter: WHY`, for a filter `validate` refused.
pub fn rejected_by_kernel(label: &str, why: impl std::fmt::Display) -> Failure {
    Failure::input(format!(
        "{label}: the kernel would reject this filter: {why}"
    ))
}

/// Whether bytes look like assembly text rather than a raw filter.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// Said of a raw filter that the kernel rejects as read little-endian but accepts read
/// big-endian, for the verbs with `--input-format`.
const BIG_ENDIAN_HINT: &str =
    " (read as big-endian it is a valid filter: pass `--input-format raw-be`)";

/// [`load_program`] of a filter to be installed on this machine (`exec --bpf`, `bench
/// --bpf`), whose kernel reads filters in its own byte order: a big-endian filter is named
/// as such, with no flag to offer.
pub fn load_program_to_install(path: &Path) -> Result<Program, Failure> {
    load_program(path, InputFormat::Auto).map_err(|mut f| {
        f.message = f.message.replace(
            BIG_ENDIAN_HINT,
            " (read as big-endian it is a valid filter, for s390x, ppc64 or mips: this \
             machine's kernel reads filters in its own byte order, so it cannot be installed \
             here; `secopt optimize --input-format raw-be` and `disasm` read it)",
        );
        f
    })
}

/// [`load_program`] with `flag` (`--filter-format`) offered for a big-endian filter, for a
/// verb that spells `--input-format` so.
pub fn load_program_with_flag(
    path: &Path,
    format: InputFormat,
    flag: &str,
) -> Result<Program, Failure> {
    load_program(path, format).map_err(|mut f| {
        f.message = f.message.replace(
            BIG_ENDIAN_HINT,
            &format!(" (read as big-endian it is a valid filter: pass `{flag} raw-be`)"),
        );
        f
    })
}

/// Loads a program (raw or assembly) and validates it as the kernel would.
/// Every failure names the file and the place (instruction index or line:column).
pub fn load_program(path: &Path, format: InputFormat) -> Result<Program, Failure> {
    let bytes = read_input(path)?;
    program_from_bytes(&bytes, &display_name(path), format)
}

/// [`load_program`] for bytes already read (stdin can be read only once); `name` is the
/// input's name in messages.
pub fn program_from_bytes(
    bytes: &[u8],
    name: &str,
    format: InputFormat,
) -> Result<Program, Failure> {
    let (prog, rejected) = decode_program(bytes, name, format)?;
    match rejected {
        Some(why) => Err(why),
        None => Ok(prog),
    }
}

/// Decodes a program (raw or assembly) without refusing what the kernel would reject: the
/// program, and the failure validation gives (`None`: the kernel accepts it). For
/// `secopt disasm`, which lists invalid filters too.
pub fn decode_program(
    bytes: &[u8],
    name: &str,
    format: InputFormat,
) -> Result<(Program, Option<Failure>), Failure> {
    let guessed = format == InputFormat::Auto;
    let format = match format {
        InputFormat::Auto if looks_like_filter_document(bytes) => InputFormat::Json,
        InputFormat::Auto if looks_like_text(bytes) => InputFormat::Asm,
        InputFormat::Auto => InputFormat::Raw,
        f => f,
    };
    let decoded = decode_as(bytes, name, format);
    // Text with one byte that is not UTF-8 (a Latin-1 comment) was taken for a raw filter:
    // say where the text stopped being text, not only that the length is odd.
    if let (true, InputFormat::Raw, Err(raw)) = (guessed, format, &decoded) {
        if let Some(at) = text_broken_at(bytes) {
            let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
            return Err(Failure::input(format!(
                "{}; it reads as text up to byte {at} (line {line}), which is not UTF-8: \
                 assembly must be UTF-8 (`--input-format asm` says where)",
                raw.message
            )));
        }
    }
    let rejected = !matches!(decoded, Ok((_, None)));
    // A profile is not assembly: say what it is and how to make a filter of it.
    if rejected && format == InputFormat::Asm {
        if let Some(hint) = profile_hint(bytes, name) {
            return Err(Failure::input(hint));
        }
    }
    // Firecracker's filter file holds several filters: say what it is and how to take one.
    if rejected && format == InputFormat::Raw {
        let file = thread_filters::decode(bytes);
        // A damaged Firecracker file (cut short, edited) is neither: say what it looks like
        // and why it does not decode, not only that it is no filter.
        if let (Err(why), Err(raw)) = (&file, &decoded) {
            if begins_as_firecracker_file(bytes) {
                return Err(Failure::input(format!(
                    "{}; it begins as Firecracker's filter file (a thread's name or a bincode \
                     thread count), but does not decode as one either ({why})",
                    raw.message
                )));
            }
        }
        // Eight zero bytes are both a one-instruction raw filter and Firecracker's file of
        // no threads: say both, since neither holds a filter.
        if let (Err(thread_filters::ThreadFiltersError::Empty), Ok((_, Some(raw))) | Err(raw)) =
            (&file, &decoded)
        {
            return Err(Failure::input(format!(
                "{}; read as Firecracker's filter file instead, it holds no thread filters \
                 (what its compiler writes for a JSON file of no threads)",
                raw.message
            )));
        }
        if let Ok(file) = file {
            let threads = file.shown_names();
            let first = threads.first().map_or("vcpu", |t| t.as_ref());
            return Err(Failure::input(format!(
                "{name}: this is Firecracker's filter file ({}; threads {}), not one filter: \
                 name one thread as `{name}:{first}`; `secopt optimize {name} -o OUT` \
                 optimizes all of them",
                file.encoding.name(),
                threads.join(", ")
            )));
        }
    }
    decoded
}

/// Where `bytes`, otherwise text (no NUL; before that point at least four bytes, all
/// printable, tabs, line breaks or UTF-8), stop being UTF-8: `None` for valid UTF-8 and for
/// anything binary.
fn text_broken_at(bytes: &[u8]) -> Option<usize> {
    if bytes.contains(&0) {
        return None;
    }
    let at = std::str::from_utf8(bytes).err()?.valid_up_to();
    let head = &bytes[..at];
    let texty = |b: &u8| matches!(b, b'\t' | b'\n' | b'\r' | 0x20..=0x7e | 0x80..);
    (at >= 4 && head.iter().all(texty)).then_some(at)
}

/// Whether the start of `bytes` holds a Firecracker thread name as its filter files store
/// them (`api`, `vcpu`, `vmm`: ASCII in both encodings), or begins as a bincode file does.
fn begins_as_firecracker_file(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    [b"vcpu".as_slice(), b"vmm", b"api"]
        .iter()
        .any(|name| head.windows(name.len()).any(|w| w == *name))
        || begins_as_bincode_threads(bytes)
}

/// Whether `bytes` begin as Firecracker's bincode file does: a `u64` count of threads (a
/// handful: none, for the file of no threads) and, when there are any, the first name's `u64`
/// length (short) with that many bytes after it. A raw filter's first instruction is a load
/// with a small offset, not these.
fn begins_as_bincode_threads(bytes: &[u8]) -> bool {
    let word = |i: usize| {
        let b: [u8; 8] = bytes.get(8 * i..8 * i + 8)?.try_into().ok()?;
        Some(u64::from_le_bytes(b))
    };
    match (word(0), word(1)) {
        (Some(0), None) => true,
        (Some(1..=64), Some(len @ 1..=255)) => bytes.len() as u64 >= 16 + len,
        _ => false,
    }
}

/// What an input file holds: one filter, or Firecracker's file of per-thread filters.
pub enum Input {
    Program(Program),
    ThreadFilters(thread_filters::ThreadFilters),
}

/// A filter or, when the bytes are binary and no filter the kernel accepts, Firecracker's
/// filter file (only with `--input-format auto`); a file that is neither gets the filter
/// decoder's error.
pub fn decode_input(bytes: &[u8], name: &str, format: InputFormat) -> Result<Input, Failure> {
    decode_input_taking(bytes, name, format, false)
}

/// [`decode_input`], except that a program the kernel refuses only for its length (more than
/// 4096 instructions, every other rule kept) is returned: what `optimize` takes (its output
/// must fit, and the optimizer says so when none does) and `verify`/`diff` take (they compare
/// meanings). Such a program comes from a generator whose output the kernel refused, for
/// instance libseccomp's for a profile with thousands of argument values.
pub fn decode_input_any_length(
    bytes: &[u8],
    name: &str,
    format: InputFormat,
) -> Result<Input, Failure> {
    decode_input_taking(bytes, name, format, true)
}

/// [`decode_input`], taking programs too long for the kernel when `any_length`.
fn decode_input_taking(
    bytes: &[u8],
    name: &str,
    format: InputFormat,
    any_length: bool,
) -> Result<Input, Failure> {
    let decoded = decode_program(bytes, name, format);
    if !matches!(decoded, Ok((_, None))) {
        if let Some(file) = thread_filters_file(bytes, format) {
            return Ok(Input::ThreadFilters(file));
        }
    }
    match decoded? {
        (prog, None) => Ok(Input::Program(prog)),
        (prog, Some(_)) if any_length && only_too_long(&prog) => Ok(Input::Program(prog)),
        (_, Some(rejected)) => Err(rejected),
    }
}

/// Whether the kernel refuses `prog` for its length alone: what a generator without an
/// optimizer writes.
fn only_too_long(prog: &Program) -> bool {
    prog.len() > crate::bpf::insn::BPF_MAXINSNS && validate::validate_structure(prog).is_ok()
}

/// Firecracker's filter file, when `bytes` are one: binary and read with `--input-format auto`
/// (a format given names one filter). For bytes [`decode_program`] found no filter the kernel
/// accepts in: a valid filter is a filter, whatever else its bytes could be read as.
pub fn thread_filters_file(
    bytes: &[u8],
    format: InputFormat,
) -> Option<thread_filters::ThreadFilters> {
    if format != InputFormat::Auto || looks_like_text(bytes) {
        return None;
    }
    thread_filters::decode(bytes).ok()
}

/// Whether `bytes` are a JSON object with an `instructions` key: secopt's document of a
/// filter (docs/json.md), which no profile has.
pub fn looks_like_filter_document(bytes: &[u8]) -> bool {
    use serde::de::IgnoredAny;
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
        && serde_json::from_slice::<std::collections::HashMap<String, IgnoredAny>>(bytes)
            .is_ok_and(|top| top.contains_key("instructions"))
}

/// The program of secopt's JSON document of a filter (`compile --emit json`, `optimize -o
/// X.json`, `disasm --format json`): its `instructions`, each `{code, jt, jf, k}` in the
/// ranges of `struct sock_filter` (and disasm's `index`, its position). `length` and `base64`, when present, must
/// hold the same program: a document edited in one place and not the other is refused
/// rather than read one way or the other.
fn program_from_document(bytes: &[u8], name: &str) -> Result<Program, Failure> {
    #[derive(serde::Deserialize)]
    struct Document {
        instructions: Vec<DocumentInsn>,
        length: Option<usize>,
        base64: Option<String>,
        byte_order: Option<Endian>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct DocumentInsn {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
        /// `disasm --format json`'s position of the instruction.
        index: Option<usize>,
    }
    // The error names the field (`$.instructions[3].code`), as a profile's errors do.
    let doc: Document =
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(bytes))
            .map_err(|e| {
                let path = e.path().to_string();
                let place = if path == "." {
                    String::new()
                } else {
                    format!("$.{path}: ")
                };
                Failure::input(format!(
                    "{name}: cannot read it as secopt's JSON document of a filter: {place}{}",
                    e.inner()
                ))
            })?;
    let prog = Program::new(
        doc.instructions
            .iter()
            .map(|i| crate::bpf::Insn::new(i.code, i.jt, i.jf, i.k))
            .collect(),
    );
    let stale = |what: &str| {
        Failure::input(format!(
            "{name}: the document's `instructions` and its `{what}` disagree (one was edited \
             and not the other); remove `{what}` to read the instructions"
        ))
    };
    if let Some((at, i)) = doc
        .instructions
        .iter()
        .enumerate()
        .find(|(at, i)| i.index.is_some_and(|index| index != *at))
    {
        return Err(Failure::input(format!(
            "{name}: instruction {at} of the document's `instructions` has `index` {}: \
             instructions are listed in order, each at its index",
            i.index.unwrap_or_default()
        )));
    }
    if doc.length.is_some_and(|n| n != prog.len()) {
        return Err(stale("length"));
    }
    if let Some(text) = &doc.base64 {
        let endian = doc.byte_order.unwrap_or(Endian::Little);
        if crate::compile::base64(&prog.to_raw_in(endian)) != text.trim() {
            return Err(stale("base64"));
        }
    }
    Ok(prog)
}

/// Whether `bytes` are a JSON object with an OCI profile's (`defaultAction`) or a whole
/// config's (`ociVersion`) top-level key.
pub fn looks_like_oci(bytes: &[u8]) -> bool {
    use serde::de::IgnoredAny;
    serde_json::from_slice::<std::collections::HashMap<String, IgnoredAny>>(bytes)
        .is_ok_and(|top| top.contains_key("defaultAction") || top.contains_key("ociVersion"))
}

/// What a file given where a profile belongs is, when it is a compiled filter rather than a
/// profile (`a cBPF filter`, `a Firecracker filter file`): for an error that says so instead
/// of the JSON parser's "expected value" at its first byte. Anything else that starts like
/// JSON is left to the profile's parser.
pub fn compiled_filter_kind(bytes: &[u8], name: &str) -> Option<&'static str> {
    if looks_like_filter_document(bytes) {
        return Some("secopt's JSON document of a filter");
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace())?;
    if matches!(first, b'{' | b'[') {
        return None;
    }
    match decode_input_any_length(bytes, name, InputFormat::Auto) {
        Ok(Input::Program(_)) => Some("a cBPF filter"),
        Ok(Input::ThreadFilters(_)) => Some("a Firecracker filter file"),
        Err(_) => decode_input_any_length(bytes, name, InputFormat::RawBe)
            .ok()
            .map(|_| "a big-endian cBPF filter"),
    }
}

/// A Firecracker file is an object of thread filters, each with a `filter` array; an OCI
/// profile has `defaultAction` (or is a whole config with `ociVersion`).
///
/// Only the top two levels are kept (the filters themselves are skipped, not built): the front
/// end parses the file again, and building a whole `serde_json::Value` here cost as much as
/// that parse.
pub fn looks_like_firecracker(bytes: &[u8]) -> bool {
    use serde::de::IgnoredAny;
    use std::collections::HashMap;
    // Anything but an object of objects fails here, and is not a Firecracker file.
    let Ok(top) = serde_json::from_slice::<HashMap<String, HashMap<String, IgnoredAny>>>(bytes)
    else {
        return false;
    };
    !top.is_empty()
        && !top.contains_key("defaultAction")
        && !top.contains_key("ociVersion")
        && top.values().all(|thread| thread.contains_key("filter"))
}

/// When `bytes` are a JSON object (a profile, not assembly): what to do instead.
fn profile_hint(bytes: &[u8], name: &str) -> Option<String> {
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if !object || serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_err() {
        return None;
    }
    Some(if looks_like_firecracker(bytes) {
        format!(
            "{name}: this is a Firecracker seccompiler file (JSON), not a filter: compile the \
             thread first (`secopt compile {name} --thread vcpu -o vcpu.bpf`)"
        )
    } else {
        format!(
            "{name}: this is JSON (an OCI/Docker profile?), not a filter: compile it first \
             (`secopt compile {name} -o filter.bpf`)"
        )
    })
}

/// One word of base64 (RFC 4648's alphabet, padded to a multiple of 4), long enough to hold
/// a filter (one instruction is 12 characters): no assembly looks like that, as every
/// instruction has an operand after a space.
fn looks_like_base64(text: &str) -> bool {
    let word = text.trim();
    let body = word.trim_end_matches('=');
    word.len() >= 12
        && word.len().is_multiple_of(4)
        && word.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// [`decode_program`] for a format already decided.
fn decode_as(
    bytes: &[u8],
    name: &str,
    format: InputFormat,
) -> Result<(Program, Option<Failure>), Failure> {
    let too_long_hint = " (nothing else is wrong with it: `secopt optimize` makes it fit where \
                         it can, `secopt verify` and `diff` compare it)";
    let prog = match format {
        InputFormat::Asm => {
            let text = std::str::from_utf8(bytes)
                .map_err(|e| Failure::input(format!("{name}: not UTF-8 text: {e}")))?;
            // Validated here, as a raw program is below, so that verbs comparing meanings
            // read a listing of a program past 4096 instructions as they read its bytes.
            let (prog, rejected) = asm::assemble_unvalidated(text).map_err(|e| {
                if looks_like_base64(text) {
                    return Failure::input(format!(
                        "{name}: this looks like base64 (`compile --emit base64`, crun's \
                         run.oci.seccomp_bpf_data), not assembly: decode it first \
                         (`base64 -d {name} > filter.bpf`)"
                    ));
                }
                Failure::input(format!("{name}:{e}"))
            })?;
            let rejected = rejected.map(|e| {
                let hint = if only_too_long(&prog) {
                    too_long_hint
                } else {
                    ""
                };
                Failure::input(format!("{name}:{e}{hint}"))
            });
            return Ok((prog, rejected));
        }
        InputFormat::RawBe => Program::from_raw_in(bytes, Endian::Big)
            .map_err(|e| Failure::input(format!("{name}: {e}")))?,
        InputFormat::Json => program_from_document(bytes, name)?,
        _ => Program::from_raw(bytes).map_err(|e| Failure::input(format!("{name}: {e}")))?,
    };
    let rejected = validate::validate(&prog).err().map(|e| {
        // A filter written for a big-endian machine reads as garbage little-endian: say so
        // rather than guess the byte order (a program can be valid both ways).
        let big_endian = format == InputFormat::Raw
            && Program::from_raw_in(bytes, Endian::Big)
                .is_ok_and(|p| validate::validate(&p).is_ok());
        let hint = if big_endian {
            BIG_ENDIAN_HINT
        } else if only_too_long(&prog) {
            too_long_hint
        } else {
            ""
        };
        rejected_by_kernel(name, format_args!("{e}{hint}"))
    });
    Ok((prog, rejected))
}

/// [`write_output`] for binary data (`what`: "a binary filter", ...), refused on a terminal
/// stdout. Returns whether it went to stdout.
pub fn write_binary_output(path: &Path, data: &[u8], what: &str) -> Result<bool, Failure> {
    let to_stdout = path == Path::new("-");
    if to_stdout && std::io::stdout().is_terminal() {
        return Err(Failure::input(format!(
            "refusing to write {what} to a terminal; use -o FILE or redirect stdout"
        )));
    }
    write_output(path, data)?;
    Ok(to_stdout)
}

/// Writes `data` to `path`, or to stdout for `-`.
///
/// A regular file (new, or reached through symbolic links) is replaced atomically: a temporary
/// file in the same directory, then `rename`, so a failed write leaves no partial file behind.
/// The replaced file keeps its permissions, and a symbolic link stays a link to it.
///
/// Anything else that exists (a character device such as `/dev/null`, a FIFO, a terminal,
/// `/dev/stdout`) is opened and written in place, as a shell redirection would: renaming over
/// it would replace the device node itself (`-o /dev/null` run as root used to turn
/// `/dev/null` into a regular file, which breaks every program on the machine that reads it).
/// A regular file named as a descriptor the shell opened for writing (`/dev/fd/3` with
/// `3> f`) is written through that descriptor (`open_descriptor`); stdout by any of its names
/// is `-` by then ([`output_path`]).
pub fn write_output(path: &Path, data: &[u8]) -> Result<(), Failure> {
    if path == Path::new("-") {
        // Through a duplicate of descriptor 1, not std's stdout: std counts a write to a closed
        // stdout (`>&-`, or one open read-only, both EBADF) as done, and the filter would be
        // lost with exit 0. What std has buffered goes first.
        return std::io::stdout()
            .flush()
            .and_then(|_| write_to_descriptor(1, data))
            .map_err(|e| Failure::input(format!("<stdout>: cannot write: {e}")));
    }
    let cannot_write =
        |e: std::io::Error| Failure::input(format!("{}: cannot write: {e}", path.display()));
    if path.as_os_str().as_bytes().ends_with(b"/") {
        return Err(Failure::input(format!(
            "{}: cannot write: that names a directory; give a file name",
            path.display()
        )));
    }
    check_not_an_input(path)?;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            if let Some(fd) = open_descriptor(path) {
                return write_to_descriptor(fd, data).map_err(cannot_write);
            }
            let file = std::fs::canonicalize(path).map_err(cannot_write)?;
            replace_atomically(&file, data, Some(meta.permissions())).map_err(cannot_write)
        }
        Ok(_) => write_in_place(path, data).map_err(cannot_write),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dangling_link = std::fs::symlink_metadata(path)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            if dangling_link {
                // Creating the file the link names is what a shell redirection does; replacing
                // the link with a file would not be.
                write_in_place(path, data).map_err(cannot_write)
            } else {
                // A missing directory is said as such, not as the OS's "No such file".
                check_output_dir(path)?;
                replace_atomically(path, data, None).map_err(cannot_write)
            }
        }
        Err(e) => Err(cannot_write(e)),
    }
}

/// An `-o` value as the commands take it: stdout by any of its names (`/dev/stdout`,
/// `/dev/fd/1`, `/proc/self/fd/1`, `/proc/<pid>/fd/1`, …) is `-`, so that it is what `-o -` is
/// everywhere: a binary filter refused on a terminal, the report sent to stderr, written
/// through the stream the shell opened rather than by replacing the file it leads to.
pub fn output_path(value: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    Ok(match descriptor_number(&path) {
        Some(1) => PathBuf::from("-"),
        _ => path,
    })
}

/// The descriptor of this process that `path` names, by any spelling: `/dev/stdout`,
/// `/dev/stderr`, or `N` in a directory that is this process's (or this thread's) descriptor
/// directory: `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N`, `/proc/<pid>/fd/N`,
/// `/dev//fd/N`.
fn descriptor_number(path: &Path) -> Option<u32> {
    match path.to_str()? {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let name = path.file_name()?.to_str()?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let dir = std::fs::canonicalize(path.parent()?).ok()?;
    let own = ["/proc/self/fd", "/proc/thread-self/fd"]
        .iter()
        .any(|d| std::fs::canonicalize(d).is_ok_and(|d| d == dir));
    own.then(|| name.parse().ok()).flatten()
}

/// The descriptor `path` names ([`descriptor_number`]; stdout's names are `-` by then,
/// [`output_path`]), where it is open for writing only and its file is a regular file. The
/// shell opened it for this command (`3> f`, `2>> f`): following it to the file and renaming
/// a new one over it would cut away what was there and what the shell writes next. Anything
/// else (a descriptor open for reading too, any other path) is an ordinary path.
fn open_descriptor(path: &Path) -> Option<u32> {
    let fd = descriptor_number(path)?;
    if !std::fs::metadata(format!("/proc/self/fd/{fd}")).is_ok_and(|m| m.is_file()) {
        return None;
    }
    // `flags:` in octal; the access mode is its low two bits (O_WRONLY is 1).
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).ok()?;
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?.trim();
    let flags = u32::from_str_radix(flags, 8).ok()?;
    (flags & 3 == 1).then_some(fd)
}

/// Writes `data` through descriptor `fd` (stdout, or one [`open_descriptor`] found), by a
/// duplicate that shares the shell's offset in the file (opening the path again would not:
/// what the shell writes next would overwrite the filter). Every write error is reported,
/// including a closed descriptor, which std's stdout and stderr count as written.
fn write_to_descriptor(fd: u32, data: &[u8]) -> std::io::Result<()> {
    use std::os::fd::FromRawFd;
    let fd = i32::try_from(fd).map_err(std::io::Error::other)?;
    // SAFETY: `dup` only reads the descriptor table; a closed `fd` makes it fail (EBADF).
    let copy = unsafe { libc::dup(fd) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `copy` was just returned by `dup`: open, and owned by nothing else.
    let mut f = unsafe { std::fs::File::from_raw_fd(copy) };
    f.write_all(data)?;
    f.flush()
}

/// Writes several outputs (one command's per-thread or per-filter files) so that a failure
/// leaves none behind: every path is checked ([`check_can_write`]) before the first is
/// written, and the files this run created are removed again if a later write fails (files
/// that existed before are replaced one by one, each atomically, by [`write_output`]).
pub fn write_all_or_none(outputs: &[(&Path, &[u8])]) -> Result<(), Failure> {
    for (path, _) in outputs {
        check_can_write(path).map_err(|e| Failure {
            message: format!("{}; nothing was written", e.message),
            ..e
        })?;
    }
    let mut created: Vec<&Path> = Vec::new();
    for &(path, bytes) in outputs {
        let existed = path == Path::new("-") || std::fs::symlink_metadata(path).is_ok();
        if let Err(e) = write_output(path, bytes) {
            for p in &created {
                let _ = std::fs::remove_file(p);
            }
            return Err(if created.is_empty() {
                e
            } else {
                Failure::input(format!(
                    "{}; removed what this run had written before it: {}",
                    e.message,
                    created
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            });
        }
        if !existed {
            created.push(path);
        }
    }
    Ok(())
}

/// Checks, before any work is done or anything written, that `path`'s directory exists
/// (`-`, stdout, always passes).
pub fn check_output_dir(path: &Path) -> Result<(), Failure> {
    if path == Path::new("-") {
        return Ok(());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if dir.is_dir() {
        return Ok(());
    }
    Err(Failure::input(format!(
        "{}: cannot write: {} {}",
        path.display(),
        dir.display(),
        if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        }
    )))
}

/// Checks that [`write_output`] could write `path`, before long work whose result would
/// otherwise be lost or whose side effects cannot be undone (a command recorded, a benchmark
/// run): the directory exists, `path` is not a directory or one of this run's inputs, and a
/// file can be made where the output's temporary file will go (a read-only file system, a
/// directory without write permission, `/proc`). Devices, FIFOs and dangling links are
/// written in place, as `write_output` writes them, and pass.
pub fn check_can_write(path: &Path) -> Result<(), Failure> {
    if path == Path::new("-") {
        return Ok(());
    }
    check_output_dir(path)?;
    if path.as_os_str().as_bytes().ends_with(b"/") || path.is_dir() {
        return Err(Failure::input(format!(
            "{}: cannot write: that is a directory; give a file name",
            path.display()
        )));
    }
    check_not_an_input(path)?;
    let (target, exists) = match std::fs::metadata(path) {
        // Written through the descriptor, not replaced: nothing to create.
        Ok(meta) if meta.is_file() && open_descriptor(path).is_some() => return Ok(()),
        Ok(meta) if meta.is_file() => (
            std::fs::canonicalize(path).unwrap_or(path.to_path_buf()),
            true,
        ),
        Ok(_) => return Ok(()),
        Err(_) if std::fs::symlink_metadata(path).is_ok() => return Ok(()),
        Err(_) => (path.to_path_buf(), false),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let probe = dir.join(format!(".secopt-probe.{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        // Worded as write_output's failure would be: a file that exists is replaced through
        // a new one (the OS's "No such file" for /proc says nothing of that).
        Err(e) => Err(Failure::input(format!(
            "{}: cannot write: cannot create a file in {}{} ({e})",
            path.display(),
            dir.display(),
            if exists { " to replace it with" } else { "" }
        ))),
    }
}

/// Opens `path` for writing (creating it if needed) and writes `data` through it.
fn write_in_place(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    f.write_all(data)?;
    f.flush()
}

/// Writes `data` to a temporary file beside `path` and renames it over `path`.
fn replace_atomically(
    path: &Path,
    data: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"))?;
    let tmp = dir.join(format!(
        ".{}.secopt-tmp.{}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        // A file in a directory where no file can be made (`/proc/self/status`) says so,
        // not just the OS's "No such file or directory" for a file that exists.
        let mut f = std::fs::File::create(&tmp).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot create a file in {} to replace it with ({e})",
                    dir.display()
                ),
            )
        })?;
        f.write_all(data)?;
        f.sync_all()?;
        if let Some(permissions) = permissions {
            std::fs::set_permissions(&tmp, permissions)?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any instructions, written as a filter document (`instructions` built here with
        /// serde_json, `base64` of their raw bytes in the order named), read back as the same
        /// program, whatever the kernel would make of it; with one field changed and the
        /// `base64` kept, refused.
        #[test]
        fn filter_documents_read_back_and_edits_are_caught(
            insns in prop::collection::vec(any::<(u16, u8, u8, u32)>(), 1..40),
            big in any::<bool>(),
            edit in any::<(prop::sample::Index, u32)>(),
        ) {
            let prog = Program::new(
                insns.iter().map(|&(c, t, f, k)| crate::bpf::Insn::new(c, t, f, k)).collect(),
            );
            let endian = if big { Endian::Big } else { Endian::Little };
            let doc = |insns: &[(u16, u8, u8, u32)]| {
                serde_json::json!({
                    "byte_order": endian,
                    "length": insns.len(),
                    "instructions": insns
                        .iter()
                        .map(|&(code, jt, jf, k)| serde_json::json!({
                            "code": code, "jt": jt, "jf": jf, "k": k
                        }))
                        .collect::<Vec<_>>(),
                    "base64": crate::compile::base64(&prog.to_raw_in(endian)),
                })
                .to_string()
            };
            let text = doc(&insns);
            prop_assert!(looks_like_filter_document(text.as_bytes()));
            prop_assert_eq!(program_from_document(text.as_bytes(), "d").unwrap(), prog.clone());
            let mut edited = insns.clone();
            let at = edit.0.index(edited.len());
            edited[at].3 ^= edit.1 | 1;
            let refused = program_from_document(doc(&edited).as_bytes(), "d").unwrap_err();
            prop_assert!(refused.message.contains("`base64` disagree"), "{}", refused.message);
        }
    }

    /// A write that fails after an earlier one succeeded (`/dev/full` passes every check and
    /// then refuses the bytes) leaves no file this run created, and leaves a file that was
    /// there before.
    #[test]
    fn a_failed_write_removes_what_the_run_created() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("secopt-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (new, old) = (dir.join("new.bpf"), dir.join("old.bpf"));
        std::fs::write(&old, "before").unwrap();
        let full = Path::new("/dev/full");
        let e = write_all_or_none(&[(&new, b"x"), (full, b"y")]).unwrap_err();
        assert!(
            e.message.contains("/dev/full: cannot write")
                && e.message
                    .contains("removed what this run had written before it")
                && e.message.contains("new.bpf"),
            "{}",
            e.message
        );
        assert!(!new.exists());
        // Nothing this run created: the error is the write's own.
        let e = write_all_or_none(&[(full, b"y"), (&new, b"x")]).unwrap_err();
        assert!(!e.message.contains("removed"), "{}", e.message);
        assert!(!new.exists());
        // A missing directory is found before anything is written.
        let missing = dir.join("no-such-dir/f.bpf");
        let e = write_all_or_none(&[(&old, b"after"), (&missing, b"x")]).unwrap_err();
        assert!(
            e.message.ends_with("does not exist; nothing was written"),
            "{}",
            e.message
        );
        assert_eq!(std::fs::read(&old).unwrap(), b"before");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
