//! Firecracker's compiled filter file: one cBPF program per thread kind (`vmm`, `api`, `vcpu`),
//! the file `seccompiler-bin` writes and `firecracker --seccomp-filter FILE` loads.
//!
//! The file is a serialized map from thread name to program, each program a list of `u64`s
//! that are `struct sock_filter` read as one little-endian integer (`code | jt << 16 |
//! jf << 24 | k << 32`; Firecracker runs on x86_64 and aarch64 only). Two encodings:
//!
//! - **bitcode** (the `bitcode` crate 0.6, serde): Firecracker 1.15 and later.
//! - **bincode** with fixed-size little-endian integers: Firecracker before 1.15 (bincode 1,
//!   then bincode 2 in the same layout). A `u64` count of entries; per entry a `u64` name
//!   length, the UTF-8 name, a `u64` instruction count and the instructions, 8 bytes each.
//!
//! An empty program means "no filter for this thread". Entries are kept and written sorted by
//! name, as `seccompiler-bin` writes them since 1.12 (1.11 and earlier wrote hash-map order),
//! so output is reproducible. Whether the programs are
//! valid is [`crate::bpf::validate`]'s question, asked by the caller with the thread's name.

use super::insn::{Insn, Program, BPF_MAXINSNS};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// How a thread-filter file is serialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// bitcode 0.6: Firecracker 1.15 and later.
    Bitcode,
    /// bincode, fixed-size little-endian integers: Firecracker before 1.15.
    Bincode,
}

impl Encoding {
    /// `bitcode` or `bincode`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Bitcode => "bitcode",
            Encoding::Bincode => "bincode",
        }
    }

    /// The Firecracker releases that read this encoding, for messages.
    pub fn releases(self) -> &'static str {
        match self {
            Encoding::Bitcode => "Firecracker 1.15 and later",
            Encoding::Bincode => "Firecracker before 1.15",
        }
    }
}

/// Firecracker rejects larger files (`DESERIALIZATION_BYTES_LIMIT`, 1.12 and later).
pub const FIRECRACKER_BYTES_LIMIT: usize = 100_000;

/// The decoded file: thread name to program, sorted by name; `None` for an empty program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadFilters {
    pub encoding: Encoding,
    pub threads: Vec<(String, Option<Program>)>,
}

impl ThreadFilters {
    /// The threads' names, in the file's (sorted) order.
    pub fn names(&self) -> Vec<&str> {
        self.threads.iter().map(|(t, _)| t.as_str()).collect()
    }

    /// The threads' names as messages show them ([`shown`]), in the file's order.
    pub fn shown_names(&self) -> Vec<Cow<'_, str>> {
        self.threads.iter().map(|(t, _)| shown(t)).collect()
    }

    /// The program of `thread`: an error names the threads there are, or says the thread
    /// has no filter.
    pub fn program(&self, thread: &str) -> Result<&Program, ThreadLookupError> {
        match self.threads.iter().find(|(t, _)| t == thread) {
            Some((_, Some(prog))) => Ok(prog),
            Some((_, None)) => Err(ThreadLookupError::NoFilter(shown(thread).into_owned())),
            None => Err(ThreadLookupError::NoThread {
                thread: thread.to_string(),
                threads: self.shown_names().join(", "),
            }),
        }
    }
}

/// A thread name as messages and listings show it: as it is when every character prints
/// (`vcpu`), else quoted with Rust's escapes (`"api\u{1b}[2J"`, `""`, `"a\nb"`).
///
/// Names come from the file. Printed raw, one could clear the terminal, recolour a verdict,
/// or end the `; thread NAME` comment of a listing and start an instruction that `secopt asm`
/// would then assemble; escaped, it is one visible word. Lookups and the files written back
/// keep the name itself.
pub fn shown(name: &str) -> Cow<'_, str> {
    let plain = !name.is_empty() && name.chars().all(|c| c.escape_debug().len() == 1);
    if plain {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!("{name:?}"))
    }
}

/// Why [`ThreadFilters::program`] has no program to give.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ThreadLookupError {
    #[error("no thread {thread:?} in this Firecracker filter file (it has {threads})")]
    NoThread { thread: String, threads: String },
    #[error("thread {0} has no filter (an empty program: Firecracker installs none for it)")]
    NoFilter(String),
}

/// Why bytes are not a thread-filter file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThreadFiltersError {
    #[error("not a Firecracker filter file: as bincode (Firecracker before 1.15), {bincode}; as bitcode (1.15 and later), {bitcode}")]
    Neither { bincode: String, bitcode: String },
    #[error("thread {thread:?}: {len} instructions, more than the kernel's 4096")]
    TooLong { thread: String, len: usize },
    #[error("no thread filters in the file")]
    Empty,
}

/// Decodes a thread-filter file in either encoding (bincode is tried first: its layout is
/// checked exactly, to the last byte, so bitcode data does not pass as bincode).
pub fn decode(bytes: &[u8]) -> Result<ThreadFilters, ThreadFiltersError> {
    let (encoding, map) = match decode_bincode(bytes) {
        Ok(map) => (Encoding::Bincode, map),
        Err(bincode) => match bitcode::deserialize::<BTreeMap<String, Vec<u64>>>(bytes) {
            Ok(map) => (Encoding::Bitcode, map),
            // The decoder's message is "bitcode error" in release builds (its detail exists
            // only under debug assertions), so it is not passed on: the same words either way.
            Err(_) => {
                return Err(ThreadFiltersError::Neither {
                    bincode,
                    bitcode: "it is not a map of thread names to programs (the bitcode \
                              decoder does not say where it stopped)"
                        .to_string(),
                })
            }
        },
    };
    if map.is_empty() {
        return Err(ThreadFiltersError::Empty);
    }
    let threads = map
        .into_iter()
        .map(|(thread, words)| {
            if words.len() > BPF_MAXINSNS {
                return Err(ThreadFiltersError::TooLong {
                    len: words.len(),
                    thread,
                });
            }
            let prog = (!words.is_empty()).then(|| {
                Program::new(
                    words
                        .iter()
                        .map(|w| Insn::from_bytes_in(w.to_le_bytes(), crate::arch::Endian::Little))
                        .collect(),
                )
            });
            Ok((thread, prog))
        })
        .collect::<Result<_, _>>()?;
    Ok(ThreadFilters { encoding, threads })
}

/// Encodes thread filters (written sorted by name; `None` is an empty program).
pub fn encode(threads: &[(String, Option<Program>)], encoding: Encoding) -> Vec<u8> {
    let map: BTreeMap<&str, Vec<u64>> = threads
        .iter()
        .map(|(name, prog)| {
            let words = prog.as_ref().map_or_else(Vec::new, |p| {
                p.insns
                    .iter()
                    .map(|i| u64::from_le_bytes(i.to_bytes_in(crate::arch::Endian::Little)))
                    .collect()
            });
            (name.as_str(), words)
        })
        .collect();
    match encoding {
        Encoding::Bitcode => {
            bitcode::serialize(&map).expect("a map of strings to integers always serializes")
        }
        Encoding::Bincode => {
            let mut out = Vec::new();
            out.extend_from_slice(&(map.len() as u64).to_le_bytes());
            for (name, words) in &map {
                out.extend_from_slice(&(name.len() as u64).to_le_bytes());
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(&(words.len() as u64).to_le_bytes());
                for w in words {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
            out
        }
    }
}

/// The bincode layout, read exactly: every length in bounds, names UTF-8, no byte left over.
fn decode_bincode(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u64>>, String> {
    let mut pos = 0usize;
    // Every count is checked against what is left, so a wrong guess allocates nothing.
    let entries = read_u64(bytes, &mut pos, "entry count")?;
    let mut map = BTreeMap::new();
    for _ in 0..entries {
        let name_len = read_u64(bytes, &mut pos, "name length")?;
        let name = std::str::from_utf8(read_bytes(bytes, &mut pos, name_len, "thread name")?)
            .map_err(|_| format!("the thread name before byte {pos} is not UTF-8"))?
            .to_string();
        let count = read_u64(bytes, &mut pos, "instruction count")?;
        let raw = read_bytes(bytes, &mut pos, count.saturating_mul(8), "program")?;
        let words = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        if map.insert(name.clone(), words).is_some() {
            return Err(format!("thread {name:?} appears twice"));
        }
    }
    if pos != bytes.len() {
        return Err(format!(
            "{} bytes follow the last of {entries} entries",
            bytes.len() - pos
        ));
    }
    Ok(map)
}

/// The `len` bytes at `pos` (moved past them), or an error if they run past the end.
fn read_bytes<'b>(
    bytes: &'b [u8],
    pos: &mut usize,
    len: u64,
    what: &str,
) -> Result<&'b [u8], String> {
    let start = *pos;
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| start.checked_add(l))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| format!("the {what} at byte {start} runs past the end"))?;
    *pos = end;
    Ok(&bytes[start..end])
}

/// The little-endian `u64` at `pos` (moved past it).
fn read_u64(bytes: &[u8], pos: &mut usize, what: &str) -> Result<u64, String> {
    let word = bytes
        .get(*pos..*pos + 8)
        .ok_or_else(|| format!("the file ends inside the {what} at byte {pos}"))?;
    *pos += 8;
    Ok(u64::from_le_bytes(word.try_into().expect("8 bytes")))
}
