//! Workloads: which system calls a program makes, how often, and optionally with which
//! arguments.
//!
//! Three sources:
//! - **`strace -c` / `strace -f -c` summaries** ([`parse_strace_summary`]): the table strace
//!   prints, with its `% time  seconds  usecs/call  calls  errors syscall` header. The `calls`
//!   column is found by the header (strace right-aligns numbers under their column name, and
//!   `-U` may select and order other columns), so an empty `errors` cell does not shift it;
//!   the syscall name is found under its header, left-aligned there. Dashed rules
//!   and the `total` row are skipped; the total is checked against the rows and a mismatch is
//!   noted (a table with elided rows, like the gVisor one in `../shared/workloads/`, is still
//!   usable). `System call usage summary for 32 bit mode:` / `x32 mode:` starts a section of
//!   the compat ABI. Unknown syscalls printed as `syscall_0x1b6` / `syscall_438` are read as
//!   numbers.
//! - **JSON** ([`parse_json`]): `{ "read": 1200, "write": 800 }`, where a value may instead be
//!   an object `{ "syscall": "ioctl", "count": 90, "args": [null, "0xae80"] }` — the key is then
//!   a label, so one syscall can appear with several argument patterns
//!   (`"ioctl(KVM_RUN)"`, `"ioctl(other)"`). `args` gives representative values for the
//!   arguments a harmless invocation lets the caller choose ([`super::invoke`]); `null` keeps
//!   the default. An object may name the ABI the calls were made through, `"arch": "x86"`
//!   (any spelling [`Arch::from_name`] knows; default: the native one), so one file holds
//!   the i386 and x32 calls of a program beside its native ones, as `secopt record` writes
//!   them. Keys starting with `$` are ignored (`"$comment"`).
//! - **Named probe lists** ([`probe_list`]): built-in syscall mixes with equal or fixed weights.
//!
//! Counts must be non-negative integers; a name the architecture does not have is an error
//! that lists every such name with its line (or `--skip-unknown` turns them into notes).

use super::BenchError;
use crate::arch::Arch;
use crate::policy::json::{self as pjson, JPath, Json, Reader};
use serde::Serialize;

/// Where a workload came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadFormat {
    /// An `strace -c` summary table.
    StraceSummary,
    /// A JSON object of counts.
    Json,
    /// A built-in probe list.
    Probes,
}

/// One syscall (with one argument pattern) of a workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadEntry {
    /// How reports name it: the syscall name, or the JSON key for labelled entries.
    pub label: String,
    /// The kernel's name of the syscall.
    pub syscall: String,
    /// The ABI it was made through (the native one, x86/x32 for strace's compat sections, or
    /// a JSON entry's `"arch"`).
    pub arch: Arch,
    /// The number as `seccomp_data.nr` carries it (x32 numbers include bit 30).
    pub nr: u32,
    /// How many calls.
    pub count: u64,
    /// Representative argument values the workload asks for (`None`: the default).
    pub args: [Option<u64>; 6],
    /// Where in the input it was found (`line 12`, `$.ioctl`), for messages.
    pub origin: String,
}

/// A workload: syscalls with counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Workload {
    /// File name or probe list name.
    pub source: String,
    pub format: WorkloadFormat,
    /// In input order.
    pub entries: Vec<WorkloadEntry>,
    /// Things worth knowing about the input (total mismatch, skipped unknown names).
    pub notes: Vec<String>,
}

impl Workload {
    /// Total number of calls.
    pub fn total_calls(&self) -> u64 {
        self.entries.iter().map(|e| e.count).sum()
    }

    /// The optimizer's weights for these calls, argument values included
    /// ([`crate::optimize::OptimizeOptions::weights`]); an error names the entry's place.
    ///
    /// ```
    /// use secopt::arch::Arch;
    /// use secopt::bench::workload::{parse_file, WorkloadOptions};
    /// let summary = "% time     seconds  usecs/call     calls    errors syscall\n\
    ///   ------ ----------- ----------- --------- --------- ----------------\n\
    ///    90.00    0.000900           1       900           read\n\
    ///    10.00    0.000100           1       100           write\n\
    ///   ------ ----------- ----------- --------- --------- ----------------\n\
    ///   100.00    0.001000           1      1000           total\n";
    /// let options = WorkloadOptions { native: Arch::X86_64, ..Default::default() };
    /// let workload = parse_file(summary.as_bytes(), "strace.txt", &options).unwrap();
    /// let weights = workload.weights().unwrap();
    /// assert_eq!(weights.get(Arch::X86_64.token(), 0), 900.0); // read
    /// assert_eq!(workload.samples()[1].count, 100.0); // write
    /// ```
    pub fn weights(&self) -> Result<crate::optimize::Weights, WorkloadWeightsError> {
        let mut weights = crate::optimize::Weights::new();
        for e in &self.entries {
            weights
                .add_call(e.arch.token(), e.nr, e.count as f64, e.args)
                .map_err(|error| WorkloadWeightsError {
                    file: self.source.clone(),
                    origin: e.origin.clone(),
                    error,
                })?;
        }
        Ok(weights)
    }

    /// The calls as the cost model counts them ([`crate::optimize::cost`]), in input order.
    pub fn samples(&self) -> Vec<crate::optimize::cost::Sample> {
        self.entries
            .iter()
            .map(|e| crate::optimize::cost::Sample {
                token: e.arch.token(),
                nr: e.nr,
                count: e.count as f64,
                args: e.args,
            })
            .collect()
    }
}

/// An entry of a workload that the optimizer's weights refuse ([`Workload::weights`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {origin}: {error}")]
pub struct WorkloadWeightsError {
    /// The workload's file (or probe list) name.
    pub file: String,
    /// Where in the input the entry is (`line 12`, `$.ioctl`).
    pub origin: String,
    pub error: crate::optimize::WeightsError,
}

/// How to read a workload.
#[derive(Debug, Clone)]
pub struct WorkloadOptions {
    /// The native ABI (strace's first section, and the JSON format's names).
    pub native: Arch,
    /// Names the architecture does not have become notes instead of an error.
    pub skip_unknown: bool,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            native: Arch::host().unwrap_or(Arch::X86_64),
            skip_unknown: false,
        }
    }
}

/// The compat ABI strace calls "32 bit" for a native arch.
fn compat_of(native: Arch) -> Option<Arch> {
    match native {
        Arch::X86_64 => Some(Arch::X86),
        Arch::Aarch64 => Some(Arch::Arm),
        Arch::Ppc64 => Some(Arch::Ppc),
        _ => None,
    }
}

/// Reads a workload file: JSON if it starts with `{`, else an `strace -c` summary.
pub fn parse_file(
    bytes: &[u8],
    source: &str,
    options: &WorkloadOptions,
) -> Result<Workload, BenchError> {
    let text = std::str::from_utf8(bytes).map_err(|e| BenchError::Workload {
        source_name: source.to_string(),
        place: format!("byte {}", e.valid_up_to()),
        message: "not UTF-8 text (expected an strace -c summary or a JSON object)".into(),
    })?;
    // A byte-order mark (Windows editors write one) is not part of either format.
    let (text, bytes) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, rest.as_bytes()),
        None => (text, bytes),
    };
    // `[`: JSON too (its parser then says an object was expected, not an strace header),
    // unless it is strace's own `[ Process PID=N runs in 32 bit mode. ]`.
    let head = text.trim_start();
    if head.starts_with('{') || (head.starts_with('[') && !is_strace_status(head)) {
        parse_json(bytes, source, options)
    } else {
        parse_strace_summary(text, source, options)
    }
}

/// strace's lines about the tracee, written among (before) its summary when both go to
/// stderr: `[ Process PID=4242 runs in 32 bit mode. ]`.
fn is_strace_status(line: &str) -> bool {
    line.starts_with("[ Process PID=")
}

/// A workload's syscall name that the architecture it is counted for does not have: the
/// name as the file spells it, the architecture, and where the file gives it (`line 4`,
/// `$.frob`, `probe list io`). It displays as the error lists it: `frob (x86_64, line 4)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWorkloadName {
    pub name: String,
    pub arch: Arch,
    pub place: String,
}

impl std::fmt::Display for UnknownWorkloadName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {})", self.name, self.arch, self.place)
    }
}

/// Resolves a syscall name (or strace's `syscall_0x1b6` for unnamed numbers) on `arch`.
fn resolve_name(arch: Arch, name: &str) -> Option<(String, u32)> {
    let table = arch.syscalls();
    if let Some(nr) = table.nr(name) {
        return Some((name.to_string(), nr));
    }
    // strace's x32 table names the 64-bit-only numbers an x32 process can still call (with
    // the x32 bit, under 512) `NAME#64`: x86_64's NAME (linux/x32/syscallent.h).
    if let (Arch::X32, Some(base)) = (arch, name.strip_suffix("#64")) {
        let nr = Arch::X86_64.syscalls().nr(base)?;
        return Some((name.to_string(), nr | crate::arch::X32_SYSCALL_BIT));
    }
    let digits = name.strip_prefix("syscall_")?;
    let nr = match digits.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    // strace prints the number without the x32 bit.
    let nr = if arch == Arch::X32 {
        nr | crate::arch::X32_SYSCALL_BIT
    } else {
        nr
    };
    Some((
        table
            .name(nr)
            .map_or_else(|| name.to_string(), str::to_string),
        nr,
    ))
}

/// Column of a header: its name and the character position where it ends.
#[derive(Clone)]
struct Column {
    name: String,
    end: usize,
}

/// Splits a line into whitespace-separated tokens with their end positions (in chars).
fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    let mut chars = 0;
    for (byte, c) in line.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((chars, &line[s..byte]));
            }
        } else if start.is_none() {
            start = Some(byte);
        }
        chars += 1;
    }
    if let Some(s) = start {
        out.push((chars, &line[s..]));
    }
    out
}

/// The columns of an strace summary header (`% time` is one column).
fn header_columns(line: &str) -> Option<Vec<Column>> {
    let toks = tokens(line);
    // The name column is last unless `strace -c -U` ordered the columns otherwise.
    if !toks.iter().any(|(_, t)| *t == "calls") || !toks.iter().any(|(_, t)| *t == "syscall") {
        return None;
    }
    let mut cols: Vec<Column> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let (end, t) = toks[i];
        if t == "%" && toks.get(i + 1).is_some_and(|n| n.1 == "time") {
            cols.push(Column {
                name: "% time".into(),
                end: toks[i + 1].0,
            });
            i += 2;
            continue;
        }
        cols.push(Column {
            name: t.to_string(),
            end,
        });
        i += 1;
    }
    Some(cols)
}

/// A data row's syscall name and its other cells. strace left-aligns the name under the
/// header's `syscall`; when that column is last (strace's default) the name is the row's last
/// token, else the token starting where the header's does, or the one at its position in a
/// row with every cell filled.
fn split_row<'l>(
    row: &[(usize, &'l str)],
    cols: &[Column],
) -> Option<(&'l str, Vec<(usize, &'l str)>)> {
    let at = cols.iter().position(|c| c.name == "syscall")?;
    let start = |(end, t): &(usize, &str)| end - t.chars().count();
    let header_start = cols[at].end - "syscall".len();
    let i = if at + 1 == cols.len() {
        row.len().checked_sub(1)?
    } else {
        match row.iter().position(|t| start(t) == header_start) {
            Some(i) => i,
            None if row.len() == cols.len() => at,
            None => return None,
        }
    };
    let mut cells = row.to_vec();
    let (_, name) = cells.remove(i);
    Some((name, cells))
}

/// The `calls` cell among a data row's `numbers` (its cells but the name; `cols`: the header
/// without `syscall`): the token right-aligned under the header's `calls`, or by position
/// when the row is not aligned (hand-edited files). An empty `errors` cell is the only one
/// strace leaves blank.
fn calls_cell<'l>(numbers: &[(usize, &'l str)], cols: &[Column]) -> Option<&'l str> {
    let calls_col = cols.iter().position(|c| c.name == "calls")?;
    if let Some((_, t)) = numbers.iter().find(|(end, _)| *end == cols[calls_col].end) {
        return Some(t);
    }
    let data_cols = cols.len();
    let errors_col = cols.iter().position(|c| c.name == "errors");
    if numbers.len() == data_cols {
        return Some(numbers[calls_col].1);
    }
    match errors_col {
        Some(e) if numbers.len() + 1 == data_cols && e > calls_col => Some(numbers[calls_col].1),
        _ => None,
    }
}

/// Parses an integer count, refusing negative and fractional values.
fn parse_count(cell: &str) -> Result<u64, String> {
    if cell.starts_with('-') {
        return Err(format!("negative call count {cell}"));
    }
    cell.parse::<u64>()
        .map_err(|_| format!("call count {cell:?} is not a non-negative integer"))
}

/// Parses an `strace -c` (or `strace -f -c`, `-U` with a `calls` column) summary.
pub fn parse_strace_summary(
    text: &str,
    source: &str,
    options: &WorkloadOptions,
) -> Result<Workload, BenchError> {
    let err = |line: usize, message: String| BenchError::Workload {
        source_name: source.to_string(),
        place: format!("line {line}"),
        message,
    };
    let mut arch = options.native;
    // The section's header, and its columns but `syscall` (those of the numbers).
    let mut cols: Option<(Vec<Column>, Vec<Column>)> = None;
    let mut entries: Vec<WorkloadEntry> = Vec::new();
    // Where each (ABI, name) is in `entries`, to refuse a repeated row without a scan.
    let mut listed: std::collections::HashMap<(Arch, String), usize> =
        std::collections::HashMap::new();
    let mut unknown: Vec<UnknownWorkloadName> = Vec::new();
    let mut notes = Vec::new();
    let mut section_sum: u64 = 0;
    let mut sections = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("strace:") || is_strace_status(trimmed) {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("System call usage summary for ") {
            let mode = rest.trim_end_matches(':').trim_end_matches(" mode");
            arch = match mode {
                "32 bit" => compat_of(options.native).ok_or_else(|| {
                    err(
                        n,
                        format!("a 32 bit section, but {} has no compat ABI", options.native),
                    )
                })?,
                "x32" if options.native == Arch::X86_64 => Arch::X32,
                "64 bit" => options.native,
                other => return Err(err(n, format!("unknown strace personality {other:?}"))),
            };
            cols = None;
            continue;
        }
        if let Some(c) = header_columns(line) {
            let numbers = c.iter().filter(|c| c.name != "syscall").cloned().collect();
            cols = Some((c, numbers));
            sections += 1;
            section_sum = 0;
            continue;
        }
        if trimmed.chars().all(|c| c == '-' || c.is_whitespace()) {
            continue;
        }
        let Some((columns, number_columns)) = &cols else {
            return Err(err(
                n,
                format!(
                    "expected the strace -c header (`% time  seconds  usecs/call  calls  errors  syscall`) before {trimmed:?}"
                ),
            ));
        };
        let row = tokens(line);
        let (name, numbers) = split_row(&row, columns)
            .ok_or_else(|| err(n, format!("cannot find the syscall column in {trimmed:?}")))?;
        let cell = calls_cell(&numbers, number_columns)
            .ok_or_else(|| err(n, format!("cannot find the calls column in {trimmed:?}")))?;
        let count = parse_count(cell).map_err(|m| err(n, m))?;
        if name == "total" {
            if count != section_sum {
                notes.push(format!(
                    "line {n}: the total says {count} calls but the rows add up to {section_sum} (rows elided from the summary?)"
                ));
            }
            continue;
        }
        section_sum = section_sum.saturating_add(count);
        let origin = format!("line {n}");
        let Some((syscall, nr)) = resolve_name(arch, name) else {
            unknown.push(UnknownWorkloadName {
                name: name.to_string(),
                arch,
                place: origin,
            });
            continue;
        };
        match listed.entry((arch, syscall.clone())) {
            std::collections::hash_map::Entry::Occupied(first) => {
                return Err(err(
                    n,
                    format!(
                        "{syscall} ({arch}) is listed twice (first at {})",
                        entries[*first.get()].origin
                    ),
                ));
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(entries.len());
            }
        }
        entries.push(WorkloadEntry {
            label: if arch == options.native {
                syscall.clone()
            } else {
                format!("{syscall}/{arch}")
            },
            syscall,
            arch,
            nr,
            count,
            args: [None; 6],
            origin,
        });
    }
    if sections == 0 {
        return Err(BenchError::Workload {
            source_name: source.to_string(),
            place: "line 1".into(),
            message: "no strace -c summary header found (expected a line like `% time  seconds  usecs/call  calls  errors  syscall`), and the file is not a JSON object".into(),
        });
    }
    finish(
        source,
        WorkloadFormat::StraceSummary,
        entries,
        unknown,
        notes,
        options,
    )
}

fn finish(
    source: &str,
    format: WorkloadFormat,
    entries: Vec<WorkloadEntry>,
    unknown: Vec<UnknownWorkloadName>,
    mut notes: Vec<String>,
    options: &WorkloadOptions,
) -> Result<Workload, BenchError> {
    if !unknown.is_empty() {
        if !options.skip_unknown {
            return Err(BenchError::UnknownSyscalls {
                source_name: source.to_string(),
                unknown,
            });
        }
        for u in &unknown {
            notes.push(format!(
                "{}: skipped {}: no such syscall on {}",
                crate::policy::printable(&u.place),
                crate::policy::printable(&u.name),
                u.arch
            ));
        }
    }
    if entries.is_empty() {
        return Err(BenchError::Workload {
            source_name: source.to_string(),
            place: "whole file".into(),
            message: "the workload names no syscall".into(),
        });
    }
    if entries.iter().all(|e| e.count == 0) {
        return Err(BenchError::Workload {
            source_name: source.to_string(),
            place: "whole file".into(),
            message: "every count is 0: the workload has no calls to weigh".into(),
        });
    }
    // Totals and shares are computed in 64 bits: counts that add up to more would wrap.
    if entries
        .iter()
        .try_fold(0u64, |sum, e| sum.checked_add(e.count))
        .is_none()
    {
        return Err(BenchError::Workload {
            source_name: source.to_string(),
            place: "whole file".into(),
            message: format!("the call counts add up to more than {} calls", u64::MAX),
        });
    }
    Ok(Workload {
        source: source.to_string(),
        format,
        entries,
        notes,
    })
}

fn json_error(e: crate::policy::PolicyError) -> BenchError {
    match e {
        crate::policy::PolicyError::Syntax {
            file,
            line,
            column,
            message,
        } => BenchError::Workload {
            source_name: file,
            place: format!("line {line}, column {column}"),
            message,
        },
        crate::policy::PolicyError::Invalid {
            file,
            path,
            message,
        } => BenchError::Workload {
            source_name: file,
            place: path,
            message,
        },
        other => BenchError::Workload {
            source_name: String::new(),
            place: "-".into(),
            message: other.to_string(),
        },
    }
}

/// A JSON count: a non-negative integer.
fn json_count(r: &Reader, v: &Json, path: &JPath) -> Result<u64, BenchError> {
    match v {
        Json::Int(n) => Err(json_error(
            r.error(path, format!("negative call count {n}")),
        )),
        _ => r.u64(v, path).map_err(json_error),
    }
}

/// A JSON argument value: an integer (negative ones as two's complement, like a C `long`), a
/// string in any base `0x…`/`0o…`/`0b…`/decimal, or `null` for the default.
fn json_arg(r: &Reader, v: &Json, path: &JPath) -> Result<Option<u64>, BenchError> {
    Ok(Some(match v {
        Json::Null => return Ok(None),
        Json::UInt(n) => *n,
        Json::Int(n) => *n as u64,
        Json::Str(s) => parse_u64(s).ok_or_else(|| {
            json_error(r.error(
                path,
                format!("{s:?} is not a number (decimal, 0x…, 0o…, 0b…)"),
            ))
        })?,
        other => {
            return Err(json_error(r.error(
                path,
                format!(
                    "expected an argument value (integer, numeric string or null), found {}",
                    other.kind()
                ),
            )))
        }
    }))
}

/// Parses a 64-bit number in decimal, `0x` hex, `0o` octal or `0b` binary, or a negative
/// decimal as two's complement.
pub fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim().replace('_', "");
    if let Some(neg) = s.strip_prefix('-') {
        return neg.parse::<i64>().ok().map(|n| n.wrapping_neg() as u64);
    }
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(o) = s.strip_prefix("0o") {
        (o, 8)
    } else if let Some(b) = s.strip_prefix("0b") {
        (b, 2)
    } else {
        (s.as_str(), 10)
    };
    if digits.is_empty() || digits.starts_with('+') {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// One member of a JSON workload (see the module docs), as `parse_json` reads it back:
/// `"label": count` when the entry is a plain native call, else
/// `"label": {"syscall", "arch" (when not `native`), "count", "args" (up to the last given)}`.
/// `secopt record` and `secopt bench --list-probes` write their files with it.
pub fn json_member(
    label: &str,
    syscall: &str,
    arch: Arch,
    native: Arch,
    count: u64,
    args: &[Option<u64>; 6],
) -> String {
    let text = |s: &str| serde_json::Value::from(s).to_string();
    let plain = arch == native && *args == [None; 6] && label == syscall;
    let value = if plain {
        count.to_string()
    } else {
        let mut fields = vec![format!("\"syscall\": {}", text(syscall))];
        if arch != native {
            fields.push(format!("\"arch\": {}", text(arch.name())));
        }
        fields.push(format!("\"count\": {count}"));
        if let Some(last) = args.iter().rposition(Option::is_some) {
            let args: Vec<String> = args[..=last]
                .iter()
                .map(|a| a.map_or_else(|| "null".to_string(), |v| format!("\"{v:#x}\"")))
                .collect();
            fields.push(format!("\"args\": [{}]", args.join(", ")));
        }
        format!("{{{}}}", fields.join(", "))
    };
    format!("{}: {value}", text(label))
}

/// Parses a JSON workload (see the module docs).
pub fn parse_json(
    bytes: &[u8],
    source: &str,
    options: &WorkloadOptions,
) -> Result<Workload, BenchError> {
    let doc = pjson::parse_document(bytes, source).map_err(json_error)?;
    let r = Reader::new(source);
    let root = JPath::root();
    let top = r.object(&doc, &root).map_err(json_error)?;
    let mut entries: Vec<WorkloadEntry> = Vec::new();
    let mut unknown = Vec::new();
    let mut notes = Vec::new();
    for (key, value, path) in top.members() {
        if key == "$native" {
            // `secopt record` names the ABI its entries without "arch" are: read as another
            // one's, they would be another syscall each (x86_64's 11 is i386's munmap).
            if let Json::Str(recorded) = value {
                match Arch::from_name(recorded) {
                    Some(a) if a != options.native => notes.push(format!(
                        "recorded on {a} ($native), read as {}: its entries without \"arch\" \
                         are taken for {}'s syscalls of those names (give --arch {a} to read \
                         them as recorded)",
                        options.native, options.native
                    )),
                    _ => {}
                }
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        let (name, count, args, arch) = match value {
            Json::Obj(_) => {
                let mut obj = r.object(value, &path).map_err(json_error)?;
                let name = match obj.get("syscall") {
                    Some((v, p)) => r.string(v, &p).map_err(json_error)?.to_string(),
                    None => key.to_string(),
                };
                let count = match obj.get("count") {
                    Some((v, p)) => json_count(&r, v, &p)?,
                    None => {
                        let mut message = "missing \"count\" (the number of calls): an entry \
                             is `\"name\": N` or `\"label\": {\"count\": N}` with optional \
                             \"syscall\", \"arch\" and \"args\" (docs/record.md)"
                            .to_string();
                        if Arch::from_name(key).is_some() && !obj.has("syscall") {
                            message += &format!(
                                "; counts of one ABI are entries with \"arch\": \
                                 {{\"read/{key}\": {{\"syscall\": \"read\", \"arch\": \"{key}\", \"count\": 100}}}}"
                            );
                        }
                        return Err(json_error(r.error(&path, message)));
                    }
                };
                let mut args = [None; 6];
                if let Some((v, p)) = obj.get("args") {
                    let items = r.array(v, &p).map_err(json_error)?;
                    if items.len() > 6 {
                        return Err(json_error(r.error(
                            &p,
                            format!("a syscall has 6 arguments, found {}", items.len()),
                        )));
                    }
                    for (i, item) in items.iter().enumerate() {
                        args[i] = json_arg(&r, item, &p.index(i))?;
                    }
                }
                let arch = match obj.get("arch") {
                    Some((v, p)) => {
                        let spelled = r.string(v, &p).map_err(json_error)?;
                        Arch::from_name(spelled).ok_or_else(|| {
                            json_error(r.error(
                                &p,
                                format!("unknown architecture {spelled:?} (x86_64, x86, x32, aarch64, ...)"),
                            ))
                        })?
                    }
                    None => options.native,
                };
                if let Some((k, p)) = obj.unused().first() {
                    return Err(json_error(r.error(
                        p,
                        format!(
                            "unknown key {k:?} (expected \"syscall\", \"count\", \"args\", \"arch\")"
                        ),
                    )));
                }
                // A 32-bit ABI's call hands the filter 32-bit arguments (the kernel zero-extends
                // them): a wider value is no call that can happen, and would be charged a path
                // none takes.
                if !arch.is_64bit() {
                    if let Some(i) = args.iter().position(|a| a.is_some_and(|v| v > 0xffff_ffff)) {
                        let (_, p) = obj.get("args").expect("args were read");
                        return Err(json_error(r.error(
                            &p.index(i),
                            format!(
                                "{:#x} does not fit in 32 bits: {arch} passes 32-bit arguments",
                                args[i].unwrap_or_default()
                            ),
                        )));
                    }
                }
                (name, count, args, arch)
            }
            _ => (
                key.to_string(),
                json_count(&r, value, &path)?,
                [None; 6],
                options.native,
            ),
        };
        let origin = path.as_str().to_string();
        let Some((syscall, nr)) = resolve_name(arch, &name) else {
            unknown.push(UnknownWorkloadName {
                name,
                arch,
                place: origin,
            });
            continue;
        };
        entries.push(WorkloadEntry {
            label: key.to_string(),
            syscall,
            arch,
            nr,
            count,
            args,
            origin,
        });
    }
    finish(
        source,
        WorkloadFormat::Json,
        entries,
        unknown,
        notes,
        options,
    )
}

/// The built-in probe lists: name, description.
pub const PROBE_LISTS: &[(&str, &str)] = &[
    ("getpid", "getpid alone: the classic seccomp overhead probe"),
    (
        "common",
        "a dozen syscalls servers make most, equal weights",
    ),
    (
        "firecracker-vcpu",
        "a synthetic Firecracker vCPU-thread mix dominated by ioctl(KVM_RUN)",
    ),
    (
        "harmless-all",
        "every syscall secopt knows a harmless invocation for, equal weights",
    ),
];

/// `KVM_RUN`: `_IO(KVMIO, 0x80)` with `KVMIO` = 0xAE (include/uapi/linux/kvm.h).
pub const KVM_RUN: u64 = 0xae80;
/// `KVM_IRQFD` = `_IOW(KVMIO, 0x76, struct kvm_irqfd)` (32 bytes), one of the requests
/// Firecracker's vcpu filter allows.
pub const KVM_IRQFD: u64 = 0x4020_ae76;
/// `FUTEX_WAKE | FUTEX_PRIVATE_FLAG` (include/uapi/linux/futex.h).
pub const FUTEX_WAKE_PRIVATE: u64 = 0x81;

/// A built-in probe list, for `arch` (x86_64 names).
pub fn probe_list(name: &str, arch: Arch) -> Result<Workload, BenchError> {
    let no_args = [None; 6];
    let with_arg = |i: usize, v: u64| {
        let mut a = [None; 6];
        a[i] = Some(v);
        a
    };
    let items: Vec<(String, &str, u64, [Option<u64>; 6])> = match name {
        "getpid" => vec![("getpid".into(), "getpid", 1, no_args)],
        "common" => [
            "read",
            "write",
            "close",
            "fstat",
            "futex",
            "epoll_wait",
            "recvfrom",
            "sendto",
            "writev",
            "openat",
            "mmap",
            "getpid",
        ]
        .iter()
        .map(|s| (s.to_string(), *s, 1, no_args))
        .collect(),
        // A vCPU thread mostly re-enters the guest; between runs it signals eventfds
        // (write), wakes other threads (futex) and occasionally reconfigures irqfds.
        // Invented proportions, stated as such in docs/benchmarks.md.
        "firecracker-vcpu" => vec![
            ("ioctl(KVM_RUN)".into(), "ioctl", 900, with_arg(1, KVM_RUN)),
            ("write".into(), "write", 60, no_args),
            (
                "futex(WAKE_PRIVATE)".into(),
                "futex",
                30,
                with_arg(1, FUTEX_WAKE_PRIVATE),
            ),
            (
                "ioctl(KVM_IRQFD)".into(),
                "ioctl",
                5,
                with_arg(1, KVM_IRQFD),
            ),
            ("sched_yield".into(), "sched_yield", 5, no_args),
        ],
        "harmless-all" => super::invoke::harmless_names()
            .map(|s| (s.to_string(), s, 1, no_args))
            .collect(),
        other => {
            return Err(BenchError::Usage(format!(
                "unknown probe list {other:?}; known: {}",
                PROBE_LISTS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let mut entries = Vec::new();
    let mut unknown = Vec::new();
    for (label, syscall, count, chosen) in items {
        // The values the measured call is made with (its harmless invocation's, which exists
        // for x86_64), so the list's cost is that of the path the probe takes.
        let known = match arch {
            Arch::X86_64 => super::invoke::harmless(syscall).map(|i| i.known_values()),
            _ => None,
        };
        let args: [Option<u64>; 6] =
            std::array::from_fn(|i| chosen[i].or_else(|| known.and_then(|k| k[i])));
        match resolve_name(arch, syscall) {
            Some((syscall, nr)) => entries.push(WorkloadEntry {
                label,
                syscall,
                arch,
                nr,
                count,
                args,
                origin: format!("probe list {name}"),
            }),
            None => unknown.push(UnknownWorkloadName {
                name: syscall.to_string(),
                arch,
                place: format!("probe list {name}"),
            }),
        }
    }
    let options = WorkloadOptions {
        native: arch,
        skip_unknown: true,
    };
    finish(
        name,
        WorkloadFormat::Probes,
        entries,
        unknown,
        Vec::new(),
        &options,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> WorkloadOptions {
        WorkloadOptions {
            native: Arch::X86_64,
            skip_unknown: false,
        }
    }

    #[test]
    fn an_empty_errors_cell_does_not_shift_the_calls_column() {
        let text = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 62.10  431.799048         496    870063     46227 futex
  0.87    6.032292          37    160201           sendmmsg
------ ----------- ----------- --------- --------- ----------------
100.00  437.831340         447   1030264     46227 total
";
        let w = parse_strace_summary(text, "t", &opts()).unwrap();
        let got: Vec<(&str, u64, u32)> = w
            .entries
            .iter()
            .map(|e| (e.syscall.as_str(), e.count, e.nr))
            .collect();
        // futex is 202 and sendmmsg 307 on x86_64 (arch/x86/entry/syscalls/syscall_64.tbl).
        assert_eq!(got, [("futex", 870063, 202), ("sendmmsg", 160201, 307)]);
        assert!(w.notes.is_empty(), "{:?}", w.notes);
    }

    /// `strace -f -c CMD 2> FILE` of a program that enters the i386 ABI: strace's notes on
    /// the mode switches come first, and a leading `[` is not JSON there. Its 32-bit section
    /// names the compat calls.
    #[test]
    fn strace_s_mode_notes_before_the_summary_are_skipped() {
        let text = "\
[ Process PID=17768 runs in 32 bit mode. ]
[ Process PID=17768 runs in 64 bit mode. ]
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
  0.00    0.000000           0         2           getppid
------ ----------- ----------- --------- --------- ----------------
100.00    0.000000           0         2           total
System call usage summary for 32 bit mode:
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
  0.00    0.000000           0         5           getpid
------ ----------- ----------- --------- --------- ----------------
100.00    0.000000           0         5           total
System call usage summary for x32 mode:
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
  0.00    0.000000           0         1         1 ioctl#64
------ ----------- ----------- --------- --------- ----------------
100.00    0.000000           0         1         1 total
";
        let w = parse_file(text.as_bytes(), "t", &opts()).unwrap();
        let got: Vec<(Arch, &str, u64, u32)> = w
            .entries
            .iter()
            .map(|e| (e.arch, e.syscall.as_str(), e.count, e.nr))
            .collect();
        // getppid is 110 on x86_64, getpid 20 on i386 (syscall_64.tbl, syscall_32.tbl); strace's
        // x32 section names x86_64's ioctl (16) called with the x32 bit `ioctl#64`.
        assert_eq!(
            got,
            [
                (Arch::X86_64, "getppid", 2, 110),
                (Arch::X86, "getpid", 5, 20),
                (Arch::X32, "ioctl#64", 1, 0x4000_0010)
            ]
        );
        // A byte-order mark before JSON is not part of it.
        let w = parse_file("\u{feff}{\"getppid\": 3}".as_bytes(), "t", &opts()).unwrap();
        assert_eq!(w.entries[0].count, 3);
    }

    /// An integer past 64 bits (which serde_json reads as a float) is said to be one, not
    /// "fractional".
    #[test]
    fn arguments_past_64_bits_are_named_as_such() {
        for v in ["-9223372036854775809", "18446744073709551616"] {
            let json = format!(r#"{{"read": {{"count": 1, "args": [{v}]}}}}"#);
            let e = parse_file(json.as_bytes(), "t", &opts())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("an integer outside the 64-bit range"),
                "{v}: {e}"
            );
        }
        let e = parse_file(br#"{"read": {"count": 1, "args": [1.5]}}"#, "t", &opts());
        assert!(e.unwrap_err().to_string().contains("a fractional number"));
        // An i386 call's arguments are 32 bits wide; x32's registers are 64.
        let wide = br#"{"i": {"syscall": "ioctl", "arch": "x86", "count": 1, "args": [null, "0x100005401"]}}"#;
        let e = parse_file(wide, "t", &opts()).unwrap_err().to_string();
        assert!(
            e.contains("$.i.args[1]: 0x100005401 does not fit in 32 bits"),
            "{e}"
        );
        let x32 = br#"{"i": {"syscall": "ioctl", "arch": "x32", "count": 1, "args": [null, "0x100005401"]}}"#;
        assert!(parse_file(x32, "t", &opts()).is_ok());
    }

    #[test]
    fn a_workload_of_no_calls_is_refused() {
        let e = parse_file(br#"{"read": 0, "write": 0}"#, "t", &opts()).unwrap_err();
        assert!(e.to_string().contains("every count is 0"), "{e}");
        assert!(parse_file(br#"{"read": 0, "write": 1}"#, "t", &opts()).is_ok());
    }

    /// `secopt record` names the ABI of its entries without "arch" (`$native`): read as
    /// another one's, the same names are other calls, and a note says so.
    #[test]
    fn a_file_recorded_on_another_abi_says_so() {
        let json = br#"{"$native": "x86_64", "getpid": 3}"#;
        let as_i386 = WorkloadOptions {
            native: Arch::X86,
            skip_unknown: false,
        };
        let w = parse_file(json, "t", &as_i386).unwrap();
        assert_eq!(w.notes.len(), 1, "{:?}", w.notes);
        assert!(w.notes[0].contains("recorded on x86_64"), "{:?}", w.notes);
        assert!(parse_file(json, "t", &opts()).unwrap().notes.is_empty());
    }

    /// `strace -c -U name,calls` and `-U calls,name,errors` (strace 6.1's output): the name
    /// column is not last, and a blank `errors` cell follows it.
    #[test]
    fn strace_columns_in_another_order() {
        let name_first = "\
syscall              calls
---------------- ---------
getppid                100
openat                  15
---------------- ---------
total                  115
";
        // (Not a `\` continuation: that would strip the header's leading spaces.)
        let name_between = concat!(
            "    calls syscall             errors\n",
            "--------- ---------------- ---------\n",
            "      100 getppid                   \n",
            "       15 openat                  13\n",
            "--------- ---------------- ---------\n",
            "      115 total                   13\n",
        );
        for text in [name_first, name_between] {
            let w = parse_strace_summary(text, "t", &opts()).unwrap();
            let got: Vec<(&str, u64)> = w
                .entries
                .iter()
                .map(|e| (e.syscall.as_str(), e.count))
                .collect();
            assert_eq!(got, [("getppid", 100), ("openat", 15)], "{text}");
            assert!(w.notes.is_empty(), "{:?}", w.notes);
        }
    }

    #[test]
    fn unaligned_rows_fall_back_to_positions() {
        // Hand-edited, single-space separated; the second row has no errors cell.
        let text =
            "% time seconds usecs/call calls errors syscall\n1 0.1 1 7 2 read\n1 0.1 1 5 write\n";
        let w = parse_strace_summary(text, "t", &opts()).unwrap();
        assert_eq!(w.entries[0].count, 7);
        assert_eq!(w.entries[1].count, 5);
        // Tab-separated, rule included (a spreadsheet's export).
        let text = "%\ttime\tseconds\tusecs/call\tcalls\terrors\tsyscall\n\
                    ------\t-------\t-------\t-----\t------\t-------\n\
                    0.00\t0.000000\t0\t3\t\tclose\n";
        let w = parse_strace_summary(text, "t", &opts()).unwrap();
        assert_eq!(
            (w.entries[0].syscall.as_str(), w.entries[0].count),
            ("close", 3)
        );
    }

    #[test]
    fn calls_only_columns_and_compat_sections() {
        let text = "\
    calls syscall
--------- ----------------
        3 read
System call usage summary for 32 bit mode:
    calls syscall
--------- ----------------
        4 read
        2 syscall_0x1b6
";
        let w = parse_strace_summary(text, "t", &opts()).unwrap();
        let got: Vec<(Arch, u32, u64)> =
            w.entries.iter().map(|e| (e.arch, e.nr, e.count)).collect();
        // read: 0 on x86_64, 3 on i386 (syscall_32.tbl); 0x1b6 = 438 (pidfd_getfd).
        assert_eq!(
            got,
            [(Arch::X86_64, 0, 3), (Arch::X86, 3, 4), (Arch::X86, 438, 2)]
        );
        assert_eq!(w.entries[2].syscall, "pidfd_getfd");
        assert_eq!(w.entries[1].label, "read/x86");
    }

    #[test]
    fn bad_rows_are_errors_with_their_line() {
        let header = "% time     seconds  usecs/call     calls    errors syscall\n";
        let neg = format!("{header}  1.00    0.000001           1        -3           read\n");
        let e = parse_strace_summary(&neg, "w.txt", &opts()).unwrap_err();
        assert!(
            e.to_string().contains("w.txt: line 2") && e.to_string().contains("negative"),
            "{e}"
        );
        let unknown = format!(
            "{header}  1.00    0.000001           1         3           frobnicate\n  1.00    0.000001           1         3           read\n  1.00    0.000001           1         3           nosuch2\n"
        );
        let e = parse_strace_summary(&unknown, "w.txt", &opts()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("frobnicate (x86_64, line 2)") && msg.contains("nosuch2 (x86_64, line 4)"),
            "{msg}"
        );
        let skipped = parse_strace_summary(
            &unknown,
            "w.txt",
            &WorkloadOptions {
                skip_unknown: true,
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(skipped.entries.len(), 1);
        assert_eq!(skipped.notes.len(), 2);
        let e = parse_strace_summary("read 3\n", "w.txt", &opts()).unwrap_err();
        assert!(e.to_string().contains("header"), "{e}");
        // strace prints one row per syscall and section: a second is an edit, refused at
        // its line with the first one's.
        let row =
            |name: &str| format!("  1.00    0.000001           1         3           {name}\n");
        let twice = format!("{header}{}{}{}", row("read"), row("write"), row("read"));
        let e = parse_strace_summary(&twice, "w.txt", &opts()).unwrap_err();
        assert!(
            e.to_string().contains("line 4")
                && e.to_string()
                    .contains("read (x86_64) is listed twice (first at line 2)"),
            "{e}"
        );
    }

    #[test]
    fn json_counts_labels_and_args() {
        let json = br#"{"$comment": "x", "read": 10,
            "ioctl(KVM_RUN)": {"syscall": "ioctl", "count": 5, "args": [null, "0xae80"]},
            "kill": {"count": 1, "args": [-1]}}"#;
        let w = parse_json(json, "w.json", &opts()).unwrap();
        assert_eq!(w.entries.len(), 3);
        assert_eq!((w.entries[0].nr, w.entries[0].count), (0, 10));
        assert_eq!(w.entries[1].nr, 16); // ioctl
        assert_eq!(w.entries[1].args[1], Some(0xae80));
        assert_eq!(w.entries[1].label, "ioctl(KVM_RUN)");
        assert_eq!(w.entries[2].args[0], Some(u64::MAX));
        for (bad, want) in [
            (&br#"{"read": -1}"#[..], "negative"),
            (br#"{"read": 1.5}"#, "integer"),
            (br#"{"read": 1, "read": 2}"#, "duplicate"),
            (br#"{"nope": 1}"#, "nope"),
            (br#"{"read": {"count": 1, "argz": []}}"#, "argz"),
            (br#"{"read": {"args": []}}"#, "count"),
            (br#"[1]"#, "object"),
            (br#"{"read": 1"#, "line 1"),
            // Each count fits in 64 bits, their sum does not.
            (
                br#"{"read": 18446744073709551615, "write": 1}"#,
                "add up to more than 18446744073709551615",
            ),
        ] {
            let e = parse_json(bad, "w.json", &opts()).unwrap_err().to_string();
            assert!(e.contains(want) && e.starts_with("w.json"), "{e}");
        }
    }

    #[test]
    fn json_entries_may_name_their_abi() {
        // One program's calls through three ABIs, as `secopt record` writes them.
        let json = br#"{"getpid": 4,
            "getpid/x86": {"syscall": "getpid", "arch": "x86", "count": 3},
            "getpid/x32": {"syscall": "getpid", "arch": "x32", "count": 2},
            "syscall_0x1b6/x86": {"syscall": "syscall_0x1b6", "arch": "i386", "count": 1},
            "ioctl/x86": {"syscall": "ioctl", "arch": "x86", "count": 1, "args": [null, "0x5401"]}}"#;
        let w = parse_json(json, "w.json", &opts()).unwrap();
        let got: Vec<(Arch, u32, u64)> =
            w.entries.iter().map(|e| (e.arch, e.nr, e.count)).collect();
        // getpid: 39 on x86_64, 20 on i386 (syscall_32.tbl), 39 | 0x40000000 on x32;
        // 0x1b6 = 438 (pidfd_getfd) on i386; ioctl is 54 on i386.
        assert_eq!(
            got,
            [
                (Arch::X86_64, 39, 4),
                (Arch::X86, 20, 3),
                (Arch::X32, 0x4000_0027, 2),
                (Arch::X86, 438, 1),
                (Arch::X86, 54, 1),
            ]
        );
        assert_eq!(w.entries[3].syscall, "pidfd_getfd");
        assert_eq!(w.entries[4].args[1], Some(0x5401));
        for (bad, want) in [
            (
                &br#"{"r": {"syscall": "read", "arch": "vax", "count": 1}}"#[..],
                "vax",
            ),
            (
                br#"{"r": {"syscall": "read", "arch": 3, "count": 1}}"#,
                "$.r.arch",
            ),
            // i386 has no `newfstatat` (it has fstatat64).
            (
                br#"{"r": {"syscall": "newfstatat", "arch": "x86", "count": 1}}"#,
                "newfstatat (x86",
            ),
        ] {
            let e = parse_json(bad, "w.json", &opts()).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn probe_lists_resolve() {
        let vcpu = probe_list("firecracker-vcpu", Arch::X86_64).unwrap();
        assert_eq!(vcpu.entries[0].args[1], Some(0xae80));
        assert_eq!(vcpu.total_calls(), 1000);
        assert!(probe_list("nope", Arch::X86_64).is_err());
        // KVM_RUN = _IO(0xAE, 0x80): no direction bits, no size.
        assert_eq!(KVM_RUN, (0xae << 8) | 0x80);
        // KVM_IRQFD = _IOW(0xAE, 0x76, 32 bytes): dir 1 << 30, size 32 << 16.
        assert_eq!(KVM_IRQFD, (1 << 30) | (32 << 16) | (0xae << 8) | 0x76);
    }

    /// A probe list's entries carry the values the probe is made with, so its cost is that of
    /// the path the measured call takes. The constants are the UAPI's, not the invocation
    /// table's: FUTEX_WAKE | FUTEX_PRIVATE_FLAG = 1 | 128 (linux/futex.h); PROT_READ |
    /// PROT_WRITE = 1 | 2 and MAP_PRIVATE | MAP_ANONYMOUS = 0x02 | 0x20 (asm-generic/mman*.h).
    #[test]
    fn probe_entries_carry_the_arguments_the_probe_is_made_with() {
        let common = probe_list("common", Arch::X86_64).unwrap();
        let entry = |name: &str| common.entries.iter().find(|e| e.syscall == name).unwrap();
        let futex = entry("futex");
        assert_eq!(futex.args[1], Some(1 | 128));
        assert_eq!(
            futex.args[0], None,
            "a pointer into the child: not known here"
        );
        let mmap = entry("mmap");
        assert_eq!(mmap.args[2..4], [Some(1 | 2), Some(0x02 | 0x20)]);
        assert_eq!(mmap.args[0], Some(0), "NULL");
        // A descriptor that is never open: i32::MAX.
        assert_eq!(entry("read").args[0], Some(0x7fff_ffff));
        // The bench accepts every carried value as the one it makes the call with.
        for e in &common.entries {
            let inv = super::super::invoke::harmless(&e.syscall).unwrap();
            assert_eq!(inv.check_choices(&e.args), Ok(()), "{}", e.label);
        }
        // An explicit value wins over the invocation's default: KVM_RUN, not its request.
        let vcpu = probe_list("firecracker-vcpu", Arch::X86_64).unwrap();
        assert_eq!(vcpu.entries[0].args[1], Some(0xae80));
        // Other arches have no invocation table: nothing is assumed.
        let a64 = probe_list("common", Arch::Aarch64).unwrap();
        assert!(a64.entries.iter().all(|e| e.args == [None; 6]));
    }
}
