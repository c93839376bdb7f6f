//! What the library reports, with the flags that act on it.
//!
//! The library's errors and notes say what happened in its own terms (an embedder has no
//! command line); the verbs print them through these functions, which add the flag to
//! use from the report's structure, never from its text.

use crate::bench::BenchError;
use crate::compile::CompileError;
use crate::optimize::{Note, NoteKind, OptimizeError, StackOptimizeError};
use crate::verify::UnknownReason;

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
        BenchError::UnknownSyscalls { names, .. } => {
            // `wirte` a typo for `write`?, as a profile's unknown names get it.
            let typos: Vec<String> = names
                .iter()
                .filter_map(|listed| {
                    // Listed as `name (arch, place)`.
                    let name = listed.split(" (").next().unwrap_or(listed);
                    let meant = super::compile::likely_meant(name);
                    (!meant.is_empty() && !meant.contains(&name)).then(|| {
                        format!(
                            "`{}` a typo for {}?",
                            crate::policy::printable(name),
                            super::compile::alternatives(&meant)
                        )
                    })
                })
                .collect();
            let typos = if typos.is_empty() {
                String::new()
            } else {
                format!(" ({})", typos.join("; "))
            };
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
