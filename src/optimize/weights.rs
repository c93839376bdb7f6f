//! How often each syscall is made: the weights the dispatch layout and the cost model use.

use crate::arch::Arch;
use std::collections::BTreeMap;
use std::fmt;

/// Syscall counts per `(arch token, nr)` (`nr` as `seccomp_data.nr` sees it: x32 numbers carry
/// bit 30). Counts are non-negative and finite.
///
/// Calls may also carry argument values (a `secopt record` capture's samples, a probe list's
/// fixed arguments): [`Weights::add_call`] keeps them, and the optimizer uses them to put the
/// frequent values of an argument check first ([`super::value_tree`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Weights {
    counts: BTreeMap<(u32, u32), f64>,
    /// Calls with at least one known argument: `(args, count)` per `(token, nr)`.
    #[serde(skip)]
    samples: BTreeMap<(u32, u32), Vec<(ArgValues, f64)>>,
}

/// The six argument values of a call, where known.
pub type ArgValues = [Option<u64>; 6];

/// Why a weight could not be added or a weights file read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WeightsError {
    #[error("{arch} has no syscall named `{name}`")]
    UnknownSyscall { arch: Arch, name: String },
    #[error("count {count} for {what} is not a finite non-negative number")]
    BadCount { what: String, count: String },
    #[error("unknown architecture `{0}`")]
    UnknownArch(String),
    #[error("weights file is not JSON: {0}")]
    Json(String),
    #[error("weights file: expected {{\"syscall\": count, …}} or {{\"arch\": {{\"syscall\": count, …}}, …}}, found {0}")]
    Shape(String),
}

/// The most all counts of a [`Weights`] may sum to: times any path length (at most 65 536
/// instructions, a stack of eight full filters), still a finite cost.
pub const MAX_TOTAL_COUNT: f64 = f64::MAX / 65_536.0;

impl Weights {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Adds `count` calls of syscall `nr` with arch token `token`.
    pub fn add(&mut self, token: u32, nr: u32, count: f64) -> Result<(), WeightsError> {
        if !count.is_finite() || count < 0.0 {
            return Err(WeightsError::BadCount {
                what: format!("{token:#x}/{nr}"),
                count: count.to_string(),
            });
        }
        // The costs are sums of counts times path lengths: counts summing near the largest
        // number would make them infinite, and then NaN.
        let total: f64 = self.counts.values().sum::<f64>() + count;
        if total > MAX_TOTAL_COUNT {
            return Err(WeightsError::BadCount {
                what: format!("{token:#x}/{nr} (the counts would sum past {MAX_TOTAL_COUNT:e})"),
                count: count.to_string(),
            });
        }
        *self.counts.entry((token, nr)).or_default() += count;
        Ok(())
    }

    /// Adds `count` calls of syscall `nr` with arch token `token` made with `args` (the values
    /// that are known); the same as [`Weights::add`] when none is.
    pub fn add_call(
        &mut self,
        token: u32,
        nr: u32,
        count: f64,
        args: ArgValues,
    ) -> Result<(), WeightsError> {
        self.add(token, nr, count)?;
        if count > 0.0 && args.iter().any(Option::is_some) {
            self.samples
                .entry((token, nr))
                .or_default()
                .push((args, count));
        }
        Ok(())
    }

    /// The calls with known arguments of one syscall.
    pub fn samples(&self, token: u32, nr: u32) -> &[(ArgValues, f64)] {
        self.samples.get(&(token, nr)).map_or(&[], Vec::as_slice)
    }

    /// Every `(token, nr)` with calls whose arguments are known.
    pub fn sampled_syscalls(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.samples.keys().copied()
    }

    /// Adds `count` calls of the syscall `name` of `arch`.
    pub fn add_named(&mut self, arch: Arch, name: &str, count: f64) -> Result<(), WeightsError> {
        let nr = arch
            .syscalls()
            .nr(name)
            .ok_or_else(|| WeightsError::UnknownSyscall {
                arch,
                name: name.to_string(),
            })?;
        self.add(arch.token(), nr, count)
    }

    /// The weight of one syscall (0 when absent).
    pub fn get(&self, token: u32, nr: u32) -> f64 {
        self.counts.get(&(token, nr)).copied().unwrap_or(0.0)
    }

    /// Every `(token, nr, count)` with a count, ordered by token then number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32, f64)> + '_ {
        self.counts.iter().map(|(&(t, n), &c)| (t, n, c))
    }

    /// The entries with a token in `lo..=hi`, ordered by token then number.
    pub fn tokens(&self, lo: u32, hi: u32) -> impl Iterator<Item = (u32, u32, f64)> + '_ {
        self.counts
            .range((lo, 0)..=(hi, u32::MAX))
            .map(|(&(t, n), &c)| (t, n, c))
    }

    /// The entries with token `token` and `nr` in `lo..=hi`.
    pub fn range(&self, token: u32, lo: u32, hi: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.counts
            .range((token, lo)..=(token, hi))
            .map(|(&(_, n), &c)| (n, c))
    }

    /// Sum of all counts.
    pub fn total(&self) -> f64 {
        self.counts.values().sum()
    }

    /// The documented default when no workload is given: every syscall the tables name for
    /// each of `arches` counts, the first of `arches` (the native ABI) 100 each and the others
    /// 1 each (compat and x32 calls are rare on real systems). Integers, so sums are exact.
    pub fn default_for(arches: &[Arch]) -> Self {
        let mut entries: Vec<((u32, u32), f64)> = Vec::new();
        for (i, &arch) in arches.iter().enumerate() {
            let each = if i == 0 { 100.0 } else { 1.0 };
            entries.extend(
                arch.syscalls()
                    .iter()
                    .map(|(nr, _)| ((arch.token(), nr), each)),
            );
        }
        // Sorted input lets the map be built in bulk; equal keys (none in practice) add up.
        // Each arch's table is sorted by number already: a stable sort merges those runs
        // instead of sorting from scratch.
        entries.sort_by_key(|e| e.0);
        entries.dedup_by(|next, last| {
            let same = next.0 == last.0;
            if same {
                last.1 += next.1;
            }
            same
        });
        Weights {
            counts: entries.into_iter().collect(),
            samples: BTreeMap::new(),
        }
    }

    /// Reads `{"name": count, …}` (syscalls of `default_arch`) or
    /// `{"arch": {"name": count, …}, …}`: a compact form for code. The files the command
    /// line reads (`strace -c` summaries, `secopt record`'s JSON with argument samples) are
    /// another format: read them with
    /// [`parse_file`](crate::bench::workload::parse_file) and
    /// [`Workload::weights`](crate::bench::workload::Workload::weights).
    pub fn from_json(text: &str, default_arch: Arch) -> Result<Self, WeightsError> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| WeightsError::Json(e.to_string()))?;
        let obj = v
            .as_object()
            .ok_or_else(|| WeightsError::Shape(kind(&v).into()))?;
        let mut w = Weights::new();
        let count = |what: &str, v: &serde_json::Value| -> Result<f64, WeightsError> {
            v.as_f64()
                .filter(|c| c.is_finite() && *c >= 0.0)
                .ok_or_else(|| WeightsError::BadCount {
                    what: what.to_string(),
                    count: v.to_string(),
                })
        };
        for (key, value) in obj {
            if let Some(inner) = value.as_object() {
                let arch =
                    Arch::from_name(key).ok_or_else(|| WeightsError::UnknownArch(key.clone()))?;
                for (name, c) in inner {
                    w.add_named(arch, name, count(name, c)?)?;
                }
            } else if value.is_number() {
                w.add_named(default_arch, key, count(key, value)?)?;
            } else {
                return Err(WeightsError::Shape(format!("{} for `{key}`", kind(value))));
            }
        }
        Ok(w)
    }
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

impl fmt::Display for Weights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} syscalls, {} calls", self.counts.len(), self.total())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts whose sum would pass the limit are refused, so a cost (counts times path
    /// lengths) stays finite: two counts of f64::MAX made an infinite total and NaN costs.
    #[test]
    fn counts_that_would_sum_past_the_limit_are_refused() {
        let tok = 0xc000_003e;
        let mut w = Weights::new();
        assert!(matches!(
            w.add(tok, 0, f64::MAX),
            Err(WeightsError::BadCount { .. })
        ));
        w.add(tok, 0, MAX_TOTAL_COUNT / 2.0).unwrap();
        w.add(tok, 1, MAX_TOTAL_COUNT / 2.0).unwrap();
        assert!(matches!(
            w.add(tok, 2, MAX_TOTAL_COUNT / 4.0),
            Err(WeightsError::BadCount { .. })
        ));
        assert!((w.total() * 65_536.0).is_finite());
    }

    #[test]
    fn json_forms_and_errors() {
        let w = Weights::from_json(r#"{"read": 10, "x32": {"write": 2}}"#, Arch::X86_64).unwrap();
        // read is 0 on x86_64; x32's write is 1 | 0x40000000 (both share the x86_64 token).
        assert_eq!(w.get(0xc000_003e, 0), 10.0);
        assert_eq!(w.get(0xc000_003e, 0x4000_0001), 2.0);
        assert_eq!(w.total(), 12.0);
        assert!(matches!(
            Weights::from_json(r#"{"nosuchcall": 1}"#, Arch::X86_64),
            Err(WeightsError::UnknownSyscall { .. })
        ));
        assert!(matches!(
            Weights::from_json(r#"{"read": -1}"#, Arch::X86_64),
            Err(WeightsError::BadCount { .. })
        ));
        assert!(matches!(
            Weights::from_json(r#"[1]"#, Arch::X86_64),
            Err(WeightsError::Shape(_))
        ));
    }

    #[test]
    fn default_weighs_the_native_abi_most() {
        let w = Weights::default_for(&[Arch::X86_64, Arch::X86]);
        assert_eq!(w.get(Arch::X86_64.token(), 0), 100.0);
        assert_eq!(w.get(Arch::X86.token(), 3), 1.0);
        // x86_64 has no syscall 1000.
        assert_eq!(w.get(Arch::X86_64.token(), 1000), 0.0);
    }
}
