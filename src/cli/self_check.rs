//! The self-check's budget as `compile` and `optimize` take it from the command line.
//!
//! Every candidate the optimizer builds is proved equal to its reference before it can be
//! written; a proof that runs out of budget drops the candidate (never written unproved).
//! The defaults ([`SELF_CHECK_BUDGET`]) prove real profiles with a wide margin and count
//! work, not time, so the output is the same on every machine however loaded; these flags
//! raise each limit so a larger filter is proved instead of dropped, or add a clock.

use crate::optimize::SELF_CHECK_BUDGET;
use crate::verify::{Budget, UnknownReason};
use std::time::Duration;

/// The `--self-check-*` flags: one per limit of [`Budget`], with the self-check's defaults.
/// Each conflicts with `--no-verify` on its own, so the error names the flag given (the
/// command that flattens them must have a `no_verify` argument).
#[derive(clap::Args, Debug, Clone)]
#[group(id = "self_check_budget", multiple = true)]
pub struct SelfCheckArgs {
    /// Seconds the self-check may spend proving one candidate before it is dropped (0, the
    /// default: no clock). The node and step limits below give the same output on every
    /// machine; a clock bounds the time but makes the output depend on the machine's load.
    #[arg(long, value_name = "SECS", help_heading = "Self-check", conflicts_with = "no_verify",
          default_value_t = SELF_CHECK_BUDGET.time_limit.map_or(0.0, |t| t.as_secs_f64()),
          value_parser = super::parse_time_limit)]
    pub self_check_timeout: f64,
    /// Most decision-diagram steps (operations the cache did not answer) one proof may take.
    #[arg(long, value_name = "N", help_heading = "Self-check", conflicts_with = "no_verify",
          default_value_t = SELF_CHECK_BUDGET.max_bdd_steps,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub self_check_max_steps: u64,
    /// Most decision-diagram nodes one proof may build (at least 3).
    #[arg(long, value_name = "N", help_heading = "Self-check", conflicts_with = "no_verify",
          default_value_t = SELF_CHECK_BUDGET.max_bdd_nodes,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(3..))]
    pub self_check_max_nodes: usize,
    /// Most memory for one proof's tables, in MiB (an estimate).
    #[arg(long, value_name = "MIB", help_heading = "Self-check", conflicts_with = "no_verify",
          default_value_t = SELF_CHECK_BUDGET.max_memory_bytes >> 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub self_check_max_memory: usize,
    /// Most symbolic states per filter in one proof.
    #[arg(long, value_name = "N", help_heading = "Self-check", conflicts_with = "no_verify",
          default_value_t = SELF_CHECK_BUDGET.max_states,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub self_check_max_states: usize,
}

impl SelfCheckArgs {
    /// The budget the flags give.
    pub fn budget(&self) -> Budget {
        Budget {
            max_bdd_nodes: self.self_check_max_nodes,
            max_bdd_steps: self.self_check_max_steps,
            max_memory_bytes: self.self_check_max_memory.saturating_mul(1 << 20),
            max_states: self.self_check_max_states,
            time_limit: (self.self_check_timeout > 0.0)
                .then(|| Duration::from_secs_f64(self.self_check_timeout)),
        }
    }
}

/// The `--self-check-*` flag that raises the limit `reason` ran out of: `verify`'s flag for
/// that limit with the prefix (`--max-steps` → `--self-check-max-steps`), so the two sets
/// cannot drift apart.
pub fn flag(reason: &UnknownReason) -> String {
    let verify_flag = super::hints::budget_flag(reason);
    format!("--self-check-{}", verify_flag.trim_start_matches("--"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A command with the flags, as `compile` and `optimize` have them: beside `--no-verify`,
    /// which they conflict with (clap checks in debug builds that it exists).
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        self_check: SelfCheckArgs,
        #[arg(long)]
        no_verify: bool,
    }

    /// The flag a note names for each limit is one the command line takes, and it sets that
    /// limit (the one the proof ran out of) and no other.
    #[test]
    fn every_limit_names_the_flag_that_sets_it() {
        let defaults = Cli::try_parse_from(["secopt"]).unwrap().self_check.budget();
        assert_eq!(defaults, SELF_CHECK_BUDGET);
        // Whether a candidate is kept must not depend on how busy the machine is (a compiler's
        // output is the same on every machine): no default limit is a clock.
        assert_eq!(defaults.time_limit, None);
        let reasons = [
            UnknownReason::BddNodes { limit: 0 },
            UnknownReason::BddSteps { limit: 0 },
            UnknownReason::Memory { limit_bytes: 0 },
            UnknownReason::Time { limit_ms: 0 },
            UnknownReason::States { limit: 0 },
        ];
        for reason in reasons {
            let flag = flag(&reason);
            let set = Cli::try_parse_from(["secopt", &flag, "7"])
                .unwrap_or_else(|e| panic!("{flag}: {e}"))
                .self_check
                .budget();
            let changed: Vec<&str> = [
                ("max_bdd_nodes", set.max_bdd_nodes != defaults.max_bdd_nodes),
                ("max_bdd_steps", set.max_bdd_steps != defaults.max_bdd_steps),
                (
                    "max_memory_bytes",
                    set.max_memory_bytes != defaults.max_memory_bytes,
                ),
                ("max_states", set.max_states != defaults.max_states),
                ("time_limit", set.time_limit != defaults.time_limit),
            ]
            .into_iter()
            .filter_map(|(field, changed)| changed.then_some(field))
            .collect();
            assert_eq!(changed, [reason.budget_field()], "{flag}");
        }
    }
}
