//! Benchmark variants: the filters measured side by side, and the rewrite that makes a filter
//! safe to run without changing which path it takes.
//!
//! A variant's *source* is the filter as its toolchain produced it. What the benchmark child
//! installs is the *bench program* ([`BenchProgram`]), which differs only in its returns:
//! - `RET K` with the ALLOW action stays (the syscall body runs, which is part of the cost);
//! - every other `RET K` (ERRNO, KILL, TRAP, TRACE, LOG, USER_NOTIF) becomes
//!   `RET ERRNO(marker)` with a marker errno of its own (1024 and up, far from real errnos),
//!   so nothing is killed and the errno the child gets back says which return was taken;
//! - a `RET A` becomes a jump to a 4-instruction epilogue appended at the end that passes A
//!   through when its action is ALLOW and returns `ERRNO(marker)` otherwise.
//!
//! Everything else, including every jump offset, is unchanged, so for any input the bench
//! program runs the source program's path and then returns. ERRNO and KILL decisions are not
//! cached by the kernel either way, and an exact `RET ALLOW` stays exact, so the rewrite keeps
//! the allow cache's view of every syscall number.
//!
//! `--no-cache` (kernels before 5.11) prepends one `LD args[0]` load: the kernel's cache
//! emulator stops at it for every number, so every syscall runs the whole program. When the
//! source does not begin by loading A, an `LD #0` follows to restore A = 0.

use super::BenchError;
use crate::bpf::action::{Action, SECCOMP_RET_ERRNO};
use crate::bpf::insn::*;
use crate::bpf::validate::validate;
use crate::bpf::{Program, RetVal};
use serde::Serialize;

/// First marker errno. Real errnos stay below 200; the kernel passes up to 4095.
pub const MARKER_BASE: u32 = 1024;
/// Distinct markers available (1024..=4094).
const MARKERS: u32 = 4095 - MARKER_BASE;
/// Byte offset of `args[0]`'s low word in `seccomp_data` on little-endian machines.
const ARG0_LO: u32 = 16;

/// What kind of filter a variant is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum VariantKind {
    /// No filter at all: the baseline every overhead is measured against.
    NoFilter,
    /// `RET ALLOW`: the cheapest possible filter.
    AllowAll,
    /// The system libseccomp's program for the profile (`optimize` 1 = linear, 2 = tree).
    Libseccomp { optimize: u32, version: String },
    /// secopt's program for the profile.
    Secopt,
    /// secopt's reference lowering of the profile (what it optimizes and proves equal to),
    /// measured so that the optimizer's share is visible.
    SecoptReference,
    /// A filter file the user named.
    File { path: String },
}

/// One filter to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// Short unique name used in tables (`none`, `allow`, `libseccomp-linear`, …).
    pub name: String,
    pub kind: VariantKind,
    /// The filter as produced (`None` for [`VariantKind::NoFilter`]); for a stack, its newest
    /// filter.
    pub source: Option<Program>,
    /// For a stack of filters measured together ([`Variant::stack`]): the filters installed
    /// before `source`, oldest first. The kernel runs all of them on every call its cache
    /// does not skip. Empty for a single filter.
    pub below: Vec<Program>,
    /// What the report should say about how it was built (e.g. names a peer skipped).
    pub notes: Vec<String>,
}

impl Variant {
    /// The no-filter baseline.
    pub fn none() -> Variant {
        Variant {
            name: "none".into(),
            kind: VariantKind::NoFilter,
            source: None,
            below: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The `RET ALLOW` baseline.
    pub fn allow() -> Variant {
        Variant {
            name: "allow".into(),
            kind: VariantKind::AllowAll,
            source: Some(Program::new(vec![Insn::ret(RetVal::ALLOW.0)])),
            below: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A variant from a program.
    pub fn program(name: impl Into<String>, kind: VariantKind, program: Program) -> Variant {
        Variant {
            name: name.into(),
            kind,
            source: Some(program),
            below: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A stack of filters (oldest first, at least one), installed together in that order.
    pub fn stack(name: impl Into<String>, kind: VariantKind, mut filters: Vec<Program>) -> Variant {
        let newest = filters.pop().expect("a stack has a filter");
        Variant {
            name: name.into(),
            kind,
            source: Some(newest),
            below: filters,
            notes: Vec::new(),
        }
    }

    /// Every filter the child installs, oldest first (none for the no-filter baseline).
    pub fn filters(&self) -> impl Iterator<Item = &Program> {
        self.source
            .iter()
            .flat_map(|s| self.below.iter().chain([s]))
    }

    /// Instructions over all its filters.
    pub fn instructions(&self) -> usize {
        self.filters().map(Program::len).sum()
    }

    /// One line saying what it is.
    pub fn describe(&self) -> String {
        let n = self.instructions();
        let len = match (&self.source, self.below.len()) {
            (None, _) => String::new(),
            (Some(_), 0) => format!(" ({n} instruction{})", if n == 1 { "" } else { "s" }),
            (Some(_), below) => format!(" (a stack of {} filters, {n} instructions)", below + 1),
        };
        let what = match &self.kind {
            VariantKind::NoFilter => "no filter".to_string(),
            VariantKind::AllowAll => "RET ALLOW, the cheapest filter".to_string(),
            VariantKind::Libseccomp { optimize, version } => format!(
                "libseccomp {version} {}",
                if *optimize == 2 {
                    "binary tree (optimize=2)"
                } else {
                    "linear (optimize=1)"
                }
            ),
            VariantKind::Secopt => "secopt compile, optimized".to_string(),
            VariantKind::SecoptReference => {
                "secopt compile --no-optimize (its reference lowering)".to_string()
            }
            VariantKind::File { path } => format!("file {path}"),
        };
        format!("{what}{len}")
    }
}

/// How the bench program returns where the source returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Rewritten {
    /// Unchanged: an ALLOW `RET K`.
    Kept,
    /// `RET K` replaced by `RET ERRNO(marker)`.
    Errno { marker: u16 },
    /// `RET A` replaced by a jump to the epilogue (ALLOW passes, the rest get `marker`).
    ToEpilogue { marker: u16 },
}

/// The program a benchmark child installs for a variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchProgram {
    pub program: Program,
    /// Instructions prepended (0, or 1–2 with `--no-cache`); source index `i` is at
    /// `i + prefix` here.
    pub prefix: usize,
    /// Per source instruction: how it was rewritten (`None` for non-returns).
    pub returns: Vec<Option<Rewritten>>,
    /// Index of the epilogue's `RET A` and its `RET ERRNO(marker)`, when there is one.
    pub epilogue: Option<(usize, usize)>,
}

/// What a bench program does for an input, given what the source does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "errno")]
pub enum Expected {
    /// The call is allowed and runs.
    Runs,
    /// The call fails with this marker errno without running.
    Marker(u16),
}

impl BenchProgram {
    /// The return value the bench program gives where the source took return `pc` and
    /// returned `value`.
    pub fn expected(&self, pc: usize, value: RetVal) -> Option<Expected> {
        match self.returns.get(pc).copied().flatten()? {
            Rewritten::Kept => Some(Expected::Runs),
            Rewritten::Errno { marker } => Some(Expected::Marker(marker)),
            Rewritten::ToEpilogue { marker } => Some(if value.action() == Some(Action::Allow) {
                Expected::Runs
            } else {
                Expected::Marker(marker)
            }),
        }
    }

    /// The index in the bench program where the source's return `pc` ends up returning, for
    /// a source return value `value` (the epilogue's `RET A` or `RET ERRNO` for a `RET A`).
    pub fn ret_index(&self, pc: usize, value: RetVal) -> Option<usize> {
        match self.returns.get(pc).copied().flatten()? {
            Rewritten::ToEpilogue { .. } => {
                let (pass, deny) = self.epilogue?;
                Some(if value.action() == Some(Action::Allow) {
                    pass
                } else {
                    deny
                })
            }
            _ => Some(pc + self.prefix),
        }
    }
}

fn marker(n: u32) -> u16 {
    (MARKER_BASE + n % MARKERS) as u16
}

/// Whether instruction `i` loads A without reading it first (so a prepended load is
/// overwritten before anything uses A).
fn loads_a(i: &Insn) -> bool {
    class(i.code) == BPF_LD
}

/// Builds the program a benchmark child installs for `source` (see the module docs).
pub fn bench_program(
    variant: &str,
    source: &Program,
    no_cache: bool,
) -> Result<BenchProgram, BenchError> {
    validate(source).map_err(|e| BenchError::Variant {
        variant: variant.to_string(),
        message: format!("the kernel would reject this filter: {e}"),
    })?;
    let prefix: Vec<Insn> = match (no_cache, source.insns.first()) {
        (false, _) => vec![],
        (true, Some(first)) if loads_a(first) => vec![Insn::ld_abs(ARG0_LO)],
        (true, _) => vec![Insn::ld_abs(ARG0_LO), Insn::stmt(BPF_LD | BPF_IMM, 0)],
    };
    let mut next_marker = 0u32;
    let mut take_marker = || {
        let m = marker(next_marker);
        next_marker += 1;
        m
    };
    let has_ret_a = source.insns.iter().any(|i| i.code == BPF_RET | BPF_A);
    let body_len = prefix.len() + source.len();
    let epilogue_len = if has_ret_a { 4 } else { 0 };
    let total = body_len + epilogue_len;
    if total > BPF_MAXINSNS {
        return Err(BenchError::Variant {
            variant: variant.to_string(),
            message: format!(
                "{} instructions, and the benchmark rewrite needs {} more ({}); the kernel takes at most {BPF_MAXINSNS}",
                source.len(),
                total - source.len(),
                if no_cache { "the no-cache argument load and the RET A epilogue" } else { "the RET A epilogue" }
            ),
        });
    }
    let reta_marker = if has_ret_a { take_marker() } else { 0 };
    let mut insns = prefix.clone();
    let mut returns = Vec::with_capacity(source.len());
    for (i, insn) in source.insns.iter().enumerate() {
        let at = prefix.len() + i;
        let (out, how) = if insn.code == BPF_RET | BPF_K {
            if RetVal(insn.k).action() == Some(Action::Allow) {
                (*insn, Some(Rewritten::Kept))
            } else {
                let m = take_marker();
                (
                    Insn::ret(SECCOMP_RET_ERRNO | m as u32),
                    Some(Rewritten::Errno { marker: m }),
                )
            }
        } else if insn.code == BPF_RET | BPF_A {
            (
                Insn::ja((body_len - at - 1) as u32),
                Some(Rewritten::ToEpilogue {
                    marker: reta_marker,
                }),
            )
        } else {
            (*insn, None)
        };
        insns.push(out);
        returns.push(how);
    }
    let epilogue = has_ret_a.then(|| {
        // JSET 0x80000000: KILL_PROCESS and unknown actions (the kernel kills) → deny.
        insns.push(Insn::jump(BPF_JMP | BPF_JSET | BPF_K, 0x8000_0000, 2, 0));
        // A >= ALLOW: the ALLOW action with any data → pass A through; the rest → deny.
        insns.push(Insn::jump(BPF_JMP | BPF_JGE | BPF_K, RetVal::ALLOW.0, 0, 1));
        insns.push(Insn::stmt(BPF_RET | BPF_A, 0));
        insns.push(Insn::ret(SECCOMP_RET_ERRNO | reta_marker as u32));
        (body_len + 2, body_len + 3)
    });
    let program = Program::new(insns);
    validate(&program).map_err(|e| BenchError::Variant {
        variant: variant.to_string(),
        message: format!("internal error: the rewritten filter is invalid: {e}"),
    })?;
    Ok(BenchProgram {
        program,
        prefix: prefix.len(),
        returns,
        epilogue,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{interp, SeccompData};

    fn x86_64(nr: i32, arg0: u64) -> SeccompData {
        SeccompData::new(0xc000_003e, nr, [arg0, 0, 0, 0, 0, 0])
    }

    /// read: ALLOW; kill: KILL_PROCESS; getpid: RET A of ERRNO(5) or ALLOW by args[0].
    fn sample() -> Program {
        Program::new(vec![
            Insn::ld_abs(0),                                    // 0
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 4, 0),     // 1 read → 6
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 62, 4, 0),    // 2 kill → 7
            Insn::ld_abs(16),                                   // 3 args[0]
            Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 0x7fff_0000), // 4
            Insn::stmt(BPF_RET | BPF_A, 0),                     // 5
            Insn::ret(0x7fff_0000),                             // 6
            Insn::ret(0x8000_0000),                             // 7
        ])
    }

    #[test]
    fn returns_are_rewritten_and_paths_kept() {
        let src = sample();
        for no_cache in [false, true] {
            let b = bench_program("t", &src, no_cache).unwrap();
            assert_eq!(b.prefix, usize::from(no_cache));
            assert_eq!(b.program.len(), src.len() + b.prefix + 4);
            for (data, want) in [
                (x86_64(0, 0), Expected::Runs),
                (x86_64(62, 0), Expected::Marker(1025)),
                // RET A with A = 0x7fff0000 + 0: ALLOW passes.
                (x86_64(39, 0), Expected::Runs),
                // A = 0x7fff0000 + 0x80010000 wraps to 0 (KILL_THREAD) → marker.
                (x86_64(39, 0x8001_0000), Expected::Marker(1024)),
            ] {
                let s = interp::trace(&src, &data).unwrap();
                let t = interp::trace(&b.program, &data).unwrap();
                let pc = *s.path.last().unwrap();
                assert_eq!(b.expected(pc, s.ret), Some(want));
                // The bench path is the source path shifted by the prefix, up to the return.
                let shifted: Vec<usize> = s.path.iter().map(|p| p + b.prefix).collect();
                assert_eq!(
                    t.path[b.prefix..b.prefix + shifted.len() - 1],
                    shifted[..shifted.len() - 1]
                );
                assert_eq!(*t.path.last().unwrap(), b.ret_index(pc, s.ret).unwrap());
                match want {
                    Expected::Runs => assert_eq!(t.ret.action(), Some(Action::Allow)),
                    Expected::Marker(m) => assert_eq!(t.ret, RetVal::errno(m)),
                }
            }
        }
    }

    #[test]
    fn no_cache_restores_a_when_the_source_reads_it_first() {
        // JEQ on A = 0 first: the prepended load must be undone.
        let src = Program::new(vec![
            Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
            Insn::ret(0x7fff_0000),
            Insn::ret(0x0005_0001),
        ]);
        let b = bench_program("t", &src, true).unwrap();
        assert_eq!(b.prefix, 2);
        let t = interp::trace(&b.program, &x86_64(0, 5)).unwrap();
        assert_eq!(t.ret, RetVal::ALLOW);
        // And the kernel's cache emulator no longer marks anything allowed.
        assert!(!crate::bpf::cache::is_const_allow(&b.program, 0xc000_003e, 0).is_allow());
        assert!(crate::bpf::cache::is_const_allow(&src, 0xc000_003e, 0).is_allow());
    }

    #[test]
    fn oversized_and_invalid_sources_are_refused() {
        let mut insns = vec![Insn::ld_abs(0); BPF_MAXINSNS - 1];
        insns.push(Insn::ret(0x7fff_0000));
        let full = Program::new(insns);
        assert!(bench_program("big", &full, false).is_ok());
        let e = bench_program("big", &full, true).unwrap_err().to_string();
        assert!(e.contains("big") && e.contains("4096"), "{e}");
        let bad = Program::new(vec![Insn::ld_abs(3), Insn::ret(0)]);
        let e = bench_program("bad", &bad, false).unwrap_err().to_string();
        assert!(e.contains("bad") && e.contains("reject"), "{e}");
    }
}
