//! What the library reports, with the flags that act on it.
//!
//! The library's errors and notes say what happened in its own terms (an embedder has no
//! command line); the verbs print them through these functions, which add the flag to
//! use from the report's structure, never from its text.

use crate::bench::BenchError;
use crate::compile::CompileError;
use crate::optimize::{Note, NoteKind, OptimizeError, StackOptimizeError};
use crate::verify::UnknownReason;
use std::collections::BTreeSet;

/// The `verify`/`diff` flag that raises the budget `reason` ran out of.
pub fn budget_flag(reason: &UnknownReason) -> &'static str {
    match reason {
        UnknownReason::BddNodes { .. } => "--max-nodes",
        UnknownReason::BddSteps { .. } => "--max-steps",
        UnknownReason::Memory { .. } => "--max-memory",
        UnknownReason::States { .. } => "--max-states",
        UnknownReason::Time { .. } => "--timeout",
    }
}

/// Why a proof ran out, with the flag that raises that budget.
pub fn ran_out(reason: &UnknownReason) -> String {
    format!("{reason} (raise {})", budget_flag(reason))
}

/// What to do about a candidate the self-check could not prove.
fn unproved(reason: &UnknownReason) -> String {
    format!(
        "raise {} to prove it (`--no-verify` writes it unproved, for `secopt verify` to prove \
         later)",
        super::self_check::flag(reason)
    )
}

/// An optimizer note as `compile` and `optimize` print it.
pub fn note(n: &Note) -> String {
    match n.kind {
        NoteKind::WorkloadMissesFilter => {
            format!("{n}; if the workload is for another ABI, say which (--arch)")
        }
        NoteKind::SpeedWithoutWorkload => format!("{n} (give one with --weights)"),
        NoteKind::NotProved(reason) => format!("{n}; {}", unproved(&reason)),
        NoteKind::LaidOutForPathBound
        | NoteKind::LaidOutToFit
        | NoteKind::CandidateFailed
        | NoteKind::CandidateRejected
        | NoteKind::Ranked
        | NoteKind::SeveralListeners => n.to_string(),
    }
}

/// The hint for a list of dropped candidates: the first one the self-check could not prove.
fn dropped(reasons: &[Note]) -> String {
    reasons
        .iter()
        .find_map(|n| match n.kind {
            NoteKind::NotProved(reason) => Some(format!(" ({})", unproved(&reason))),
            _ => None,
        })
        .unwrap_or_default()
}

/// A compile error as `compile` prints it.
pub fn compile_error(e: &CompileError) -> String {
    match e {
        CompileError::PathBound { .. } => format!("{e} (raise --max-path)"),
        CompileError::Dropped { reasons, .. } => format!("{e}{}", dropped(reasons)),
        _ => e.to_string(),
    }
}

/// An optimize error as `optimize` prints it.
pub fn optimize_error(e: &OptimizeError) -> String {
    match e {
        OptimizeError::PathBound { .. } => format!("{e} (raise --max-path)"),
        OptimizeError::Dropped { reasons, .. } => format!("{e}{}", dropped(reasons)),
        _ => e.to_string(),
    }
}

/// A benchmark or workload error as `bench`, `analyze`, `compile` and `optimize` print it.
pub fn bench_error(e: &BenchError) -> String {
    match e {
        BenchError::UnknownSyscalls { unknown, .. } => {
            // `wirte` a typo for `write`?, as a profile's unknown names get it.
            let typos = typos(unknown.iter().map(|u| u.name.as_str()));
            format!("{e}{typos} (use --skip-unknown to leave them out)")
        }
        BenchError::NoLibseccomp => format!("{e}; or pass --no-libseccomp"),
        _ => e.to_string(),
    }
}

/// A stack optimize error as `optimize --stack` prints it.
pub fn stack_error(e: &StackOptimizeError) -> String {
    match e {
        StackOptimizeError::NotJoined { notes, .. } => format!("{e}{}", dropped(notes)),
        StackOptimizeError::Optimize(inner) => optimize_error(inner),
        _ => e.to_string(),
    }
}

/// What a syscall name no table in use has was likely meant to be.
pub enum Meant {
    /// The name itself: one of secopt's own tables has it (the table in use is older).
    Itself,
    /// The names near it, as [`alternatives`] lists them.
    Others(String),
    /// Nothing near enough.
    Nothing,
}

/// What `name` was likely meant to be (see [`nearest_names`]).
pub fn likely_meant(name: &str) -> Meant {
    if crate::arch::Arch::any_has_syscall(name) {
        return Meant::Itself;
    }
    let nearest = nearest_names(name);
    if nearest.is_empty() {
        Meant::Nothing
    } else {
        Meant::Others(alternatives(&nearest))
    }
}

/// `` (`wirte` a typo for `write`?; `mkdri` a typo for `mkdir`?)`` for the `names` that are
/// likely typos, for the end of an error that lists unknown names; empty when none is.
pub fn typos<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let typos: Vec<String> = names
        .into_iter()
        .filter_map(|name| match likely_meant(name) {
            Meant::Others(meant) => Some(format!(
                "`{}` a typo for {meant}?",
                crate::policy::printable(name)
            )),
            Meant::Itself | Meant::Nothing => None,
        })
        .collect();
    if typos.is_empty() {
        String::new()
    } else {
        format!(" ({})", typos.join("; "))
    }
}

/// The syscall names of any arch nearest `name`, when they are near enough to be what was
/// meant (at most two edits, and fewer than half the name: `getdents46` → `getdents64`,
/// `wirte` → `write`; `mkdri` → `mkdir`), in alphabetical order: a tie is shown whole
/// (`stats` → `stat` or `statfs`) rather than decided by where a table happens to list them.
fn nearest_names(name: &str) -> Vec<&'static str> {
    let mut best = usize::MAX;
    let mut nearest: BTreeSet<&'static str> = BTreeSet::new();
    for arch in crate::arch::Arch::ALL {
        for (_, known) in arch.syscalls().iter() {
            let d = strsim::osa_distance(name, known);
            if d > 2 || 2 * d >= name.len() || d > best {
                continue;
            }
            if d < best {
                best = d;
                nearest.clear();
            }
            nearest.insert(known);
        }
    }
    nearest.into_iter().collect()
}

/// `` `write` ``, `` `stat` or `statfs` ``, `` `a`, `b` or `c` `` (three at most, then "…").
fn alternatives(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().take(3).map(|n| format!("`{n}`")).collect();
    let more = if names.len() > 3 { ", …" } else { "" };
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) if more.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => format!("{}{more}", quoted.join(", ")),
    }
}
