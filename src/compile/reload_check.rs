//! Where libseccomp's own filter for a profile decides otherwise than its rules: its BPF
//! generator misses an accumulator reload ([`crate::compile::ReloadCase`]), and the verifier
//! says whether that changes a decision.
//!
//! The lowering finds the syscalls whose generated code tests a word it has not loaded and
//! builds both decisions as programs ([`super::libseccomp_reload_cases`]); the verifier
//! compares them and gives the input where they differ. A test of the wrong word need not change anything (the path to it may
//! be one no input takes), so only a proved difference, or an unknown, is a warning.

use super::ReloadCase;
use crate::bpf::SeccompData;
use crate::policy::{self, Resolved};
use crate::verify::{self, Verdict, VerifyOptions};

/// The warnings for a profile whose filter, as libseccomp generates it (what runc, crun and
/// Firecracker's compiler since 1.11 load), decides some calls otherwise than its rules
/// because of a missed accumulator reload: one per arch and syscall, at the syscall's first
/// rule with conditions, with an input where the two differ. Of the profile's own
/// architectures, as [`super::runc_unenforced`]; empty outside libseccomp's dialect.
pub fn libseccomp_reload_warnings(resolved: &Resolved) -> Vec<policy::Warning> {
    super::libseccomp_reload_cases(resolved)
        .iter()
        .filter_map(|case| {
            let proof = case.programs.as_ref().map(|(tree, generated)| {
                verify::equivalent(tree, generated, &VerifyOptions::default())
            });
            let outcome = match proof {
                Some(Ok(Verdict::Equal)) => return None,
                Some(Ok(Verdict::Different(c))) => {
                    // The programs test no arch: read the words in the case's byte order.
                    let mut words = c.data.words();
                    words[1] = case.arch.token();
                    let data = SeccompData::from_words(&words);
                    let args: Vec<String> = data.args.iter().map(|a| format!("{a:#x}")).collect();
                    format!(
                        "with args [{}], libseccomp's filter returns {} where the rules give {}",
                        args.join(", "),
                        c.b,
                        c.a
                    )
                }
                Some(Ok(Verdict::Unknown { reason })) => {
                    format!("secopt could not tell whether that changes a decision ({reason})")
                }
                Some(Err(e)) => {
                    format!("secopt could not tell whether that changes a decision ({e})")
                }
                None => "secopt could not tell whether that changes a decision (the rules do \
                         not fit in a program)"
                    .to_string(),
            };
            Some(warning(case, &outcome))
        })
        .collect()
}

fn warning(case: &ReloadCase, outcome: &str) -> policy::Warning {
    policy::Warning {
        kind: policy::WarningKind::NotEnforced,
        path: case.origin.to_string(),
        message: format!(
            "libseccomp's filter (what runc, crun and Firecracker's compiler since 1.11 load) \
             for `{syscall}`{carried} on {arch} tests {held} where its rules test {meant}: its BPF \
             generator misses an accumulator reload where a test is reached by falling \
             through from a nested one (docs/kernel-facts.md); {outcome}. secopt's filter \
             decides as the rules say (as libseccomp's own pseudo filter code prints them)",
            syscall = case.syscall,
            carried = case
                .written_for
                .as_ref()
                .map_or_else(String::new, |w| format!(
                    " (which carries the rules for `{w}`)"
                )),
            arch = case.arch,
            held = case.word(case.held),
            meant = case.word(case.meant),
        ),
    }
}
