//! What the optimizer tells its caller besides the program: a candidate it could not use, or
//! a choice the options left to it ([`super::Optimized::notes`]).
//!
//! A note's text says what happened in the library's terms; its [`NoteKind`] says what kind
//! of thing it is, so a caller can act on it without reading the text. The command line
//! adds the flag to use from the kind (`--weights`, `--arch`, `--no-verify`): the library
//! names no flag, since an embedder has none.

use crate::verify::UnknownReason;
use serde::Serialize;
use std::fmt;

/// One thing the optimizer noticed. Displays (and serializes) as its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub text: String,
}

/// What a [`Note`] is about. New kinds may be added: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NoteKind {
    /// Every call of the weights takes the filter's path for other arches, so they did not
    /// shape the layout: most often weights recorded on another ABI than
    /// [`super::OptimizeOptions::native`] says.
    WorkloadMissesFilter,
    /// [`super::Favor::Speed`] was asked without weights: the balanced layout was used.
    SpeedWithoutWorkload,
    /// The layout asked for did not keep [`super::OptimizeOptions::max_path`], and another
    /// one (or the same with less room) did.
    LaidOutForPathBound,
    /// The layout asked for was too long for the kernel, and one with smaller value trees,
    /// or the one favouring size, fit.
    LaidOutToFit,
    /// One way of building a candidate (lifting, a layout, the bytecode passes) failed.
    CandidateFailed,
    /// A candidate failed a check that never fails on a correct optimizer (the validator, the
    /// allow cache, or the proof found a difference): a secopt bug, and the candidate was
    /// dropped.
    CandidateRejected,
    /// The self-check could not prove a candidate equal within
    /// [`super::OptimizeOptions::self_check_budget`]; it was dropped, and a larger budget, or
    /// no self-check, may keep it.
    NotProved(UnknownReason),
    /// The candidate that usually wins ranked below another one.
    Ranked,
    /// The stack's filters route notifications to several listeners, which one joined
    /// filter cannot.
    SeveralListeners,
}

impl Note {
    pub fn new(kind: NoteKind, text: impl Into<String>) -> Self {
        Note {
            kind,
            text: text.into(),
        }
    }

    /// Whether `notes` say the self-check dropped a candidate it could not prove equal within
    /// its budget: the output is then not the best the optimizer found (a larger budget may
    /// keep it).
    pub fn any_unproved(notes: &[Note]) -> bool {
        notes
            .iter()
            .any(|n| matches!(n.kind, NoteKind::NotProved(_)))
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// As its text: the notes in JSON output read as they print.
impl Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

/// `notes` joined with `"; "`, for an error that lists them.
pub fn joined(notes: &[Note]) -> String {
    notes
        .iter()
        .map(|n| n.text.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}
