//! The benchmark report: statistics from the measurements, and its renderings (aligned
//! text, JSON, an SVG bar chart).

use super::stats::{bootstrap_median, paired_differences, Estimate};
use super::{Environment, Measurements, Plan, Skipped, VariantKind};
use serde::Serialize;
use std::fmt::Write as _;

/// Timing of one variant on one syscall (or the aggregate), nanoseconds per call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    /// Time per call.
    pub ns: Estimate,
    /// Paired overhead over the no-filter baseline.
    pub vs_none: Estimate,
    /// Paired overhead over the `RET ALLOW` baseline.
    pub vs_allow: Estimate,
}

/// One variant on one syscall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub variant: String,
    pub timing: Timing,
    /// Instructions the filter executes for this call (the probe's arguments), as run
    /// (with `--no-cache`, the prepended load included). JSON `steps`, as every verb names
    /// the instructions one input runs (docs/json.md).
    #[serde(rename = "steps")]
    pub insns: usize,
    /// Whether the allow cache skipped the filter for this syscall in this run.
    pub cached: bool,
    /// What the (unrewritten) filter returns, e.g. `ALLOW`, `ERRNO(1)`, `KILL_PROCESS` (JSON
    /// `action`).
    #[serde(rename = "action")]
    pub decision: String,
    /// Whether that answer is not ALLOW: the bench program then returned ERRNO and the
    /// syscall itself never ran, so the time is no overhead of the filter (a denied `openat`
    /// is 60 ns faster than an unfiltered one). Such cells are left out of the aggregate and
    /// of the per-instruction fit. `LOG`, which lets the call run, is among them: the bench
    /// program does not log (an audit record per call), so its time is not the call's either.
    pub denied: bool,
    /// Whether the answer is `LOG` (then `denied` too): the text lists these apart from the
    /// denials. In JSON, `action` says it.
    #[serde(skip)]
    pub logs: bool,
}

/// One measured syscall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallRow {
    pub label: String,
    pub syscall: String,
    pub nr: u32,
    pub count: u64,
    /// Share of the measured calls (0..1).
    pub weight: f64,
    /// The argument registers used (pid/tid: the parent's, as predicted).
    pub args: [u64; 6],
    pub cells: Vec<Cell>,
}

/// Deterministic cost of a variant over the whole workload (native syscalls, measured or
/// not), in instructions per syscall, weighted by the counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeterministicCost {
    /// With the kernel's allow cache (Linux 5.11+): cached syscalls cost 0. (JSON
    /// `cost_with_cache` and `cost_without_cache`, as `analyze` and the optimizer's report
    /// name them.)
    #[serde(rename = "cost_with_cache")]
    pub with_cache: f64,
    /// Without it (before 5.11, or with `--no-cache`): every syscall runs the filter.
    #[serde(rename = "cost_without_cache")]
    pub without_cache: f64,
    /// Share of the workload's calls the allow cache skips (0..1).
    pub cached_share: f64,
}

/// One variant's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantRow {
    pub name: String,
    pub description: String,
    pub kind: VariantKind,
    /// Instructions in the filter as produced (0 for none; JSON `length`, as every verb names
    /// an instruction count).
    #[serde(rename = "length")]
    pub instructions: usize,
    /// Instructions in the program the child installed (JSON `bench_length`).
    #[serde(rename = "bench_length")]
    pub bench_instructions: usize,
    pub deterministic: DeterministicCost,
    /// Workload-weighted time per call over the measured syscalls.
    pub aggregate: Timing,
}

/// A statement about the measurements that the acceptance "shape" asks about, with the
/// evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub claim: String,
    pub holds: bool,
    pub evidence: String,
}

/// Fewer rounds than this give medians whose bootstrap intervals collapse (a median of 1 or 2
/// values resamples to itself): the report says its findings are not evidence.
pub const MEANINGFUL_ROUNDS: usize = 5;
/// Fewer bootstrap resamples than this cannot place the 2.5% and 97.5% percentiles.
pub const MEANINGFUL_RESAMPLES: usize = 200;

/// Least-squares line through the uncached (syscall, variant) cells, overhead over no filter
/// (median, ns) against instructions executed, with one intercept per syscall: its slope is
/// what one more filter instruction costs on this machine, the mean intercept roughly what
/// running a filter at all costs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerInstruction {
    pub ns_per_insn: f64,
    pub intercept_ns: f64,
    /// Cells fitted.
    pub cells: usize,
    /// Fewest and most instructions run among them (JSON `steps_range`).
    #[serde(rename = "steps_range")]
    pub insns_range: (usize, usize),
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub tool: String,
    /// UTC, `YYYY-MM-DD HH:MM:SS`.
    pub date: String,
    /// The command line, when the CLI made the report.
    pub command: Option<String>,
    pub environment: Environment,
    pub workload: String,
    pub workload_format: super::workload::WorkloadFormat,
    pub total_calls: u64,
    pub measured_calls: u64,
    pub options: super::BenchOptions,
    pub variants: Vec<VariantRow>,
    pub syscalls: Vec<SyscallRow>,
    pub skipped: Vec<Skipped>,
    pub findings: Vec<Finding>,
    /// The cost of one instruction, fitted (absent when fewer than 3 uncached cells or only
    /// one path length).
    pub per_instruction: Option<PerInstruction>,
    /// Checks made: paths compared with the interpreter, child results compared with the
    /// prediction, and (when done) decisions compared on the kernel.
    pub checks: Vec<String>,
    pub notes: Vec<String>,
}

/// `YYYY-MM-DD HH:MM:SS` for seconds since the epoch (UTC), by the civil-from-days formula.
pub fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_timestamp(secs)
}

impl Plan {
    /// Index of the first variant of `kind`.
    fn index_of(&self, kind: &VariantKind) -> usize {
        self.variants
            .iter()
            .position(|v| &v.variant.kind == kind)
            .expect("plan() adds both baselines")
    }

    /// Computes the statistics of a run.
    pub fn report(&self, m: &Measurements) -> Report {
        let o = &self.options;
        let none = self.index_of(&VariantKind::NoFilter);
        let allow = self.index_of(&VariantKind::AllowAll);
        let mut seed = o.seed;
        let mut boot = |values: &[f64]| {
            seed = seed.wrapping_add(0x9e37_79b9);
            bootstrap_median(values, o.bootstrap, seed)
        };
        let timing =
            |boot: &mut dyn FnMut(&[f64]) -> Estimate, series: &[Vec<f64>], v: usize| Timing {
                ns: boot(&series[v]),
                vs_none: boot(&paired_differences(&series[v], &series[none])),
                vs_allow: boot(&paired_differences(&series[v], &series[allow])),
            };
        let weights: Vec<f64> = self
            .probes
            .iter()
            .map(|p| self.workload.entries[p.entry].count as f64)
            .collect();
        let wsum: f64 = weights.iter().sum();
        // Equal weights when every count is 0.
        let weights: Vec<f64> = if wsum > 0.0 {
            weights.iter().map(|w| w / wsum).collect()
        } else {
            vec![1.0 / weights.len() as f64; weights.len()]
        };

        // Most frequent first; `order[row]` is the probe shown in that row.
        let mut order: Vec<usize> = (0..self.probes.len()).collect();
        order
            .sort_by_key(|&p| std::cmp::Reverse(self.workload.entries[self.probes[p].entry].count));
        let mut syscalls = Vec::new();
        for &p in &order {
            let probe = &self.probes[p];
            let e = &self.workload.entries[probe.entry];
            let series: Vec<Vec<f64>> = (0..self.variants.len())
                .map(|v| m.ns[v][p].clone())
                .collect();
            let cells = (0..self.variants.len())
                .map(|v| {
                    let c = self.cost(v, p);
                    // With --no-cache the child ran the bench programs, prefixes included,
                    // and the kernel cached nothing.
                    let pv = &self.variants[v];
                    let prefix: usize = pv.below.iter().chain(&pv.bench).map(|b| b.prefix).sum();
                    Cell {
                        variant: self.variants[v].variant.name.clone(),
                        timing: timing(&mut boot, &series, v),
                        insns: c.steps + prefix,
                        cached: c.cached && prefix == 0,
                        decision: if self.variants[v].variant.source.is_some() {
                            c.ret.to_string()
                        } else {
                            "(no filter)".into()
                        },
                        denied: self.variants[v].variant.source.is_some()
                            && c.ret.action() != Some(crate::bpf::action::Action::Allow),
                        logs: self.variants[v].variant.source.is_some()
                            && c.ret.action() == Some(crate::bpf::action::Action::Log),
                    }
                })
                .collect();
            syscalls.push(SyscallRow {
                label: e.label.clone(),
                syscall: e.syscall.clone(),
                nr: e.nr,
                count: e.count,
                weight: weights[p],
                args: probe.regs,
                cells,
            });
        }

        // Workload-weighted time per call, per round, over the syscalls every variant lets run:
        // a denied call returns before the syscall does its work, which is no overhead. (When
        // every syscall is denied by some variant, over all of them, and a note says so.)
        let denied_somewhere = |p: usize| {
            (0..self.variants.len()).any(|v| {
                self.variants[v].variant.source.is_some()
                    && self.cost(v, p).ret.action() != Some(crate::bpf::action::Action::Allow)
            })
        };
        let left_out: Vec<usize> = (0..self.probes.len())
            .filter(|&p| denied_somewhere(p))
            .collect();
        let kept_weight: f64 = (0..self.probes.len())
            .filter(|p| !left_out.contains(p))
            .map(|p| weights[p])
            .sum();
        let aggregate_weights: Vec<f64> = if kept_weight > 0.0 {
            (0..self.probes.len())
                .map(|p| {
                    if left_out.contains(&p) {
                        0.0
                    } else {
                        weights[p] / kept_weight
                    }
                })
                .collect()
        } else {
            weights.clone()
        };
        let aggregate_series: Vec<Vec<f64>> = (0..self.variants.len())
            .map(|v| {
                (0..o.rounds)
                    .map(|r| {
                        (0..self.probes.len())
                            .map(|p| aggregate_weights[p] * m.ns[v][p][r])
                            .sum()
                    })
                    .collect()
            })
            .collect();
        let total_native: f64 = self
            .workload
            .entries
            .iter()
            .filter(|e| e.arch == self.native)
            .map(|e| e.count as f64)
            .sum();
        let variants = self
            .variants
            .iter()
            .enumerate()
            .map(|(v, pv)| {
                // Sums of counts times instructions (whole numbers, exact in f64 far beyond
                // any workload), divided once: a share of all calls is then exactly 1, not
                // 0.9999999999999991.
                let (mut with, mut without, mut cached) = (0.0, 0.0, 0.0);
                for (e, c) in self.workload.entries.iter().zip(&pv.costs) {
                    if let Some(c) = c {
                        let n = e.count as f64;
                        with += n * c.with_cache() as f64;
                        without += n * c.steps as f64;
                        if c.cached {
                            cached += n;
                        }
                    }
                }
                let per_call = |sum: f64| {
                    if total_native > 0.0 {
                        sum / total_native
                    } else {
                        0.0
                    }
                };
                let (with, without, cached) = (per_call(with), per_call(without), per_call(cached));
                VariantRow {
                    name: pv.variant.name.clone(),
                    description: pv.variant.describe(),
                    kind: pv.variant.kind.clone(),
                    instructions: pv.variant.instructions(),
                    bench_instructions: pv
                        .below
                        .iter()
                        .chain(&pv.bench)
                        .map(|b| b.program.len())
                        .sum(),
                    deterministic: DeterministicCost {
                        with_cache: with,
                        without_cache: without,
                        cached_share: if pv.variant.source.is_some() {
                            cached
                        } else {
                            1.0
                        },
                    },
                    aggregate: timing(&mut boot, &aggregate_series, v),
                }
            })
            .collect::<Vec<_>>();

        let measured_calls = self
            .probes
            .iter()
            .map(|p| self.workload.entries[p.entry].count)
            .sum();
        let mut checks = vec![
            format!(
                "interpreter: every bench program takes its source filter's path on every probe ({} variants × {} probes)",
                self.variants.len(),
                self.probes.len()
            ),
            format!(
                "kernel: {} first results of the measurement children matched the predicted decision",
                m.results_checked
            ),
        ];
        if !m.unexpected.is_empty() {
            checks.push(format!(
                "{} allowed calls returned something other than the expected unfiltered result (listed in notes)",
                m.unexpected.len()
            ));
        }
        let mut notes = self.workload.notes.clone();
        notes.extend(self.notes.iter().cloned());
        if !left_out.is_empty() {
            let labels: Vec<&str> = left_out
                .iter()
                .map(|&p| self.workload.entries[self.probes[p].entry].label.as_str())
                .collect();
            notes.push(if kept_weight > 0.0 {
                format!(
                    "the workload-weighted times (ns/call, over none, over allow, the findings) are over the syscalls every variant allows, {:.1}% of the measured calls: a filter denied {} (`d` per syscall), and a denied call returns before the syscall runs, so its time says nothing of the filter's cost",
                    100.0 * kept_weight,
                    labels.join(", ")
                )
            } else if left_out.len() == self.probes.len() {
                "every measured syscall is denied by some variant (`d` per syscall): the workload-weighted times include denied calls, which return before the syscall runs, so they are no overhead of the filters, and whether every filter costs more than none is not judged".to_string()
            } else {
                format!(
                    "the syscalls every variant allows have no weight in the workload, so the workload-weighted times include the denied ones ({}; `d` per syscall), which return before the syscall runs: they are no overhead of the filters, and whether every filter costs more than none is not judged",
                    labels.join(", ")
                )
            });
        }
        notes.extend(m.unexpected.iter().cloned());
        if m.environment.already_filtered() {
            notes.push(format!(
                "the benchmark itself runs under seccomp ({}): 'none' still pays for those filters",
                m.environment.own_seccomp.as_deref().unwrap_or("?")
            ));
        }
        if o.rounds < MEANINGFUL_ROUNDS || o.bootstrap < MEANINGFUL_RESAMPLES {
            notes.push(format!(
                "{} rounds and {} bootstrap resamples: 95% intervals need at least {MEANINGFUL_ROUNDS} rounds and {MEANINGFUL_RESAMPLES} resamples to mean anything, so the findings of this run are not evidence (the instruction counts are exact whatever the rounds)",
                o.rounds, o.bootstrap
            ));
        }
        let mut report = Report {
            tool: format!("secopt {}", env!("CARGO_PKG_VERSION")),
            date: now_utc(),
            command: None,
            environment: m.environment.clone(),
            workload: self.workload.source.clone(),
            workload_format: self.workload.format,
            total_calls: self.workload.total_calls(),
            measured_calls,
            options: o.clone(),
            variants,
            syscalls,
            skipped: self.skipped.clone(),
            findings: Vec::new(),
            per_instruction: None,
            checks,
            notes,
        };
        let mut pooled = |v: usize, probes: &[usize]| {
            // Per round, the median over the syscalls (robust to one noisy syscall, such as
            // sched_yield, which enters the scheduler).
            let diffs: Vec<f64> = (0..o.rounds)
                .map(|r| {
                    let per: Vec<f64> = probes
                        .iter()
                        .map(|&p| m.ns[v][p][r] - m.ns[allow][p][r])
                        .collect();
                    super::stats::median(&per)
                })
                .collect();
            boot(&diffs)
        };
        // Rows are sorted by count below; findings index the report's rows.
        report.per_instruction = fit_per_instruction(&report);
        report.findings = findings(&report, kept_weight > 0.0, &mut |v, rows: &[usize]| {
            let probes: Vec<usize> = rows.iter().map(|&row| order[row]).collect();
            pooled(v, &probes)
        });
        report
    }
}

fn est(e: &Estimate) -> String {
    format!("{:+.1} [{:+.1}, {:+.1}]", e.median, e.lo, e.hi)
}

/// Fits [`PerInstruction`] over the uncached cells of filter variants, within each syscall
/// (a syscall's own entry and exit costs differ from another's; comparing variants on the
/// same syscall leaves the filter's share).
fn fit_per_instruction(r: &Report) -> Option<PerInstruction> {
    let groups: Vec<Vec<(f64, f64)>> = r
        .syscalls
        .iter()
        .map(|s| {
            s.cells
                .iter()
                .zip(&r.variants)
                .filter(|(c, v)| v.kind != VariantKind::NoFilter && !c.cached && !c.denied)
                .map(|(c, _)| (c.insns as f64, c.timing.vs_none.median))
                .filter(|(_, y)| y.is_finite())
                .collect()
        })
        .collect();
    let all: Vec<(f64, f64)> = groups.iter().flatten().copied().collect();
    let (min, max) = all.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &(x, _)| {
        (lo.min(x), hi.max(x))
    });
    let (slope, intercept) = grouped_line_fit(&groups)?;
    Some(PerInstruction {
        ns_per_insn: slope,
        intercept_ns: intercept,
        cells: all.len(),
        insns_range: (min as usize, max as usize),
    })
}

/// Least-squares slope of `y` on `x` with one intercept per group (each group centred on its
/// own means), and the mean intercept; `None` without 3 points and two different `x` in
/// some group.
fn grouped_line_fit(groups: &[Vec<(f64, f64)>]) -> Option<(f64, f64)> {
    let (mut sxy, mut sxx, mut n) = (0.0, 0.0, 0usize);
    for g in groups.iter().filter(|g| !g.is_empty()) {
        let k = g.len() as f64;
        let mx = g.iter().map(|p| p.0).sum::<f64>() / k;
        let my = g.iter().map(|p| p.1).sum::<f64>() / k;
        sxy += g.iter().map(|(x, y)| (x - mx) * (y - my)).sum::<f64>();
        sxx += g.iter().map(|(x, _)| (x - mx) * (x - mx)).sum::<f64>();
        n += g.len();
    }
    if n < 3 || sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = groups
        .iter()
        .flatten()
        .map(|(x, y)| y - slope * x)
        .sum::<f64>()
        / n as f64;
    Some((slope, intercept))
}

/// "The same cost" (finding 2): a difference whose whole interval lies within this many
/// nanoseconds (a few cycles). With hundreds of rounds an interval can exclude 0 by
/// hundredths of a nanosecond, which is no cost anyone can see; a margin says what "same" means.
const SAME_MARGIN_NS: f64 = 1.0;

/// A path at least this long counts as a walk down a long chain (finding 3).
const LONG_PATH: usize = 32;

/// The three statements of the acceptance shape, evaluated on this run. `pooled(v, probes)`
/// gives the bootstrap estimate of variant `v`'s paired difference to `RET ALLOW`, pooled per
/// round over `probes` (pooling many syscalls avoids reading the 5% false alarms among many
/// separate intervals as an effect).
/// `over_allowed`: whether the workload-weighted aggregate is over calls every variant
/// allows. When it is not (every measured syscall is denied by some variant), it holds
/// denied calls' times, which are no overhead, and finding 1 is not made.
fn findings(
    r: &Report,
    over_allowed: bool,
    pooled: &mut dyn FnMut(usize, &[usize]) -> Estimate,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let filtered: Vec<&VariantRow> = r
        .variants
        .iter()
        .filter(|v| v.kind != VariantKind::NoFilter)
        .collect();
    // 1. Any filter costs something over none.
    let costs: Vec<String> = filtered
        .iter()
        .map(|v| format!("{} {} ns", v.name, est(&v.aggregate.vs_none)))
        .collect();
    if over_allowed {
        out.push(Finding {
            claim: "every filter costs more than no filter (workload-weighted overhead over none, 95% interval above 0)".into(),
            holds: filtered.iter().all(|v| v.aggregate.vs_none.lo > 0.0),
            evidence: costs.join("; "),
        });
    }
    let others: Vec<usize> = (0..r.variants.len())
        .filter(|&v| {
            !matches!(
                r.variants[v].kind,
                VariantKind::NoFilter | VariantKind::AllowAll
            )
        })
        .collect();
    // 2. Syscalls every filter caches cost the same in every variant.
    let cached: Vec<usize> = (0..r.syscalls.len())
        .filter(|&p| others.iter().all(|&v| r.syscalls[p].cells[v].cached))
        .collect();
    if !cached.is_empty() && !others.is_empty() {
        let mut all_within = true;
        let mut parts = Vec::new();
        for &v in &others {
            let e = pooled(v, &cached);
            all_within &= e.lo >= -SAME_MARGIN_NS && e.hi <= SAME_MARGIN_NS;
            parts.push(format!(
                "{} {:+.2} [{:+.2}, {:+.2}] ns",
                r.variants[v].name, e.median, e.lo, e.hi
            ));
        }
        let pairs = cached.len() * others.len();
        let single = cached
            .iter()
            .flat_map(|&p| others.iter().map(move |&v| (p, v)))
            .filter(|&(p, v)| r.syscalls[p].cells[v].timing.vs_allow.excludes_zero())
            .count();
        out.push(Finding {
            claim: format!(
                "the {} every filter lets the allow cache skip cost the same under every filter as under RET ALLOW (per-round median difference over them: 95% interval within ±{SAME_MARGIN_NS} ns)",
                counted(cached.len() as u64, "syscall", "syscalls")
            ),
            holds: all_within,
            evidence: format!(
                "{}; singly, {single} of {pairs} (syscall, variant) intervals exclude 0 (about {:.0} expected by chance at 95%)",
                parts.join("; "),
                pairs as f64 * 0.05
            ),
        });
    }
    // 3. Uncached syscalls in the long linear libseccomp chain (else the longest filter) cost
    //    more than RET ALLOW.
    let linear = others.iter().copied().find(|&v| {
        matches!(
            r.variants[v].kind,
            VariantKind::Libseccomp { optimize: 1, .. }
        )
    });
    let longest = linear.or_else(|| {
        others
            .iter()
            .copied()
            .max_by_key(|&v| r.variants[v].instructions)
    });
    if let Some(vi) = longest {
        // Long walks only: a short uncached path costs about what RET ALLOW's does.
        let uncached: Vec<usize> = (0..r.syscalls.len())
            .filter(|&p| {
                let c = &r.syscalls[p].cells[vi];
                !c.cached && !c.denied && c.insns >= LONG_PATH
            })
            .collect();
        if !uncached.is_empty() {
            let above = uncached
                .iter()
                .filter(|&&p| r.syscalls[p].cells[vi].timing.vs_allow.lo > 0.0)
                .count();
            let detail: Vec<String> = uncached
                .iter()
                .map(|&p| {
                    let (s, c) = (&r.syscalls[p], &r.syscalls[p].cells[vi]);
                    format!(
                        "{} ({} insns) {} ns",
                        s.label,
                        c.insns,
                        est(&c.timing.vs_allow)
                    )
                })
                .collect();
            let v = &r.variants[vi];
            out.push(Finding {
                claim: format!(
                    "syscalls that {} ({} instructions) runs for at least {LONG_PATH} instructions, uncached, cost more than under RET ALLOW (interval above 0)",
                    v.name, v.instructions
                ),
                holds: above == uncached.len(),
                evidence: format!("{above} of {}: {}", uncached.len(), detail.join("; ")),
            });
        }
    }
    out
}

/// Pads `s` to `w` characters, left-aligned (`left`) or right-aligned.
fn pad(s: &str, w: usize, left: bool) -> String {
    let n = s.chars().count();
    if n >= w {
        return s.to_string();
    }
    let fill = " ".repeat(w - n);
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

/// Renders rows as columns: the first column left-aligned, the rest right-aligned.
fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| pad(s, widths[c], c == 0))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn short(e: &Estimate) -> String {
    format!("{:.1} [{:.1},{:.1}]", e.median, e.lo, e.hi)
}

fn short_signed(e: &Estimate) -> String {
    format!("{:+.1} [{:+.1},{:+.1}]", e.median, e.lo, e.hi)
}

impl Report {
    /// Aligned text for people.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let env = &self.environment;
        let o = &self.options;
        let _ = writeln!(s, "{} bench — {} UTC", self.tool, self.date);
        if let Some(c) = &self.command {
            let _ = writeln!(s, "command:     {c}");
        }
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        let _ = writeln!(
            s,
            "kernel:      {} (allow cache: {})",
            opt(&env.kernel),
            match env.allow_cache {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown",
            }
        );
        let _ = writeln!(
            s,
            "BPF JIT:     bpf_jit_enable={}, bpf_jit_harden={}",
            opt(&env.bpf_jit_enable),
            opt(&env.bpf_jit_harden)
        );
        let _ = writeln!(
            s,
            "CPU:         {}, {} online{}{}",
            opt(&env.cpu_model),
            env.cpus_online.map_or("?".into(), |n| n.to_string()),
            env.pinned_cpu
                .map_or(", children not pinned".into(), |c| format!(
                    ", children pinned to cpu {c}"
                )),
            env.tsc_ghz
                .map_or(String::new(), |g| format!(", TSC {g:.3} GHz"))
        );
        let _ = writeln!(
            s,
            "hypervisor:  {}{}",
            match env.hypervisor_flag {
                Some(true) => "yes (cpuinfo hypervisor flag)",
                Some(false) => "no hypervisor flag",
                None => "unknown",
            },
            env.hypervisor
                .as_ref()
                .map_or(String::new(), |h| format!(", {h}"))
                + &env
                    .container
                    .as_ref()
                    .map_or(String::new(), |c| format!("; in a {c} container"))
        );
        let _ = writeln!(s, "mitigations: {}", env.mitigation_summary());
        if !env.mitigation_switches.is_empty() {
            let _ = writeln!(s, "cmdline:     {}", env.mitigation_switches.join(" "));
        }
        let _ = writeln!(
            s,
            "clock:       {}; load {} at start, {} at end; own seccomp: {}",
            opt(&env.clocksource),
            env.load_start.map_or("?".into(), |l| format!("{l:.2}")),
            env.load_end.map_or("?".into(), |l| format!("{l:.2}")),
            opt(&env.own_seccomp)
        );
        let _ = writeln!(
            s,
            "workload:    {} ({}, {}; {} measured, {:.2}% of the calls)",
            self.workload,
            counted(
                (self.syscalls.len() + self.skipped.len()) as u64,
                "syscall",
                "syscalls"
            ),
            counted(self.total_calls, "call", "calls"),
            self.syscalls.len(),
            if self.total_calls > 0 {
                100.0 * self.measured_calls as f64 / self.total_calls as f64
            } else {
                100.0
            }
        );
        let _ = writeln!(
            s,
            "method:      {} rounds; per round one fresh child per variant, rotated order; {} timed calls (after {} warm-up) per syscall; medians with 95% bootstrap intervals ({} resamples); overheads paired per round{}",
            o.rounds,
            o.calls,
            o.warmup,
            o.bootstrap,
            if o.no_cache {
                "; no allow cache: every filter starts with an argument load, so nothing is cached"
            } else {
                ""
            }
        );
        s.push('\n');

        let _ = writeln!(s, "variants:");
        let mut rows = vec![vec![
            "variant".to_string(),
            "insns".into(),
            "insns/call cache".into(),
            "no cache".into(),
            "cached calls".into(),
            "ns/call".into(),
            "over none".into(),
            "over allow".into(),
        ]];
        for v in &self.variants {
            rows.push(vec![
                v.name.clone(),
                v.instructions.to_string(),
                format!("{:.2}", v.deterministic.with_cache),
                format!("{:.2}", v.deterministic.without_cache),
                format!("{:.1}%", 100.0 * v.deterministic.cached_share),
                short(&v.aggregate.ns),
                short_signed(&v.aggregate.vs_none),
                short_signed(&v.aggregate.vs_allow),
            ]);
        }
        s.push_str(&table(&rows));
        for v in &self.variants {
            let _ = writeln!(s, "  {}: {}", v.name, v.description);
        }
        s.push_str("  (insns/call: workload-weighted instructions executed per syscall, with and without the allow cache; ns: workload-weighted over the measured syscalls every variant allows)\n");
        if o.no_cache {
            s.push_str("  (insns, insns/call and cached calls are of the filters as produced, on a kernel with and without the cache; this run measured every call uncached, each program with the leading argument load the per-syscall counts include)\n");
        }
        s.push('\n');

        let _ = writeln!(
            s,
            "per syscall: overhead over none in ns, median [95% interval]; `insns` executed by the filter, `c` = skipped by the kernel's allow cache in this run, `d` = denied (the syscall did not run, so the time is no overhead):"
        );
        let filtered: Vec<usize> = (0..self.variants.len())
            .filter(|&v| self.variants[v].kind != VariantKind::NoFilter)
            .collect();
        let mut header = vec!["syscall".to_string(), "calls".into(), "none ns".into()];
        for &v in &filtered {
            header.push(self.variants[v].name.clone());
        }
        let mut rows = vec![header];
        let none = self
            .variants
            .iter()
            .position(|v| v.kind == VariantKind::NoFilter)
            .unwrap_or(0);
        for r in &self.syscalls {
            let mut row = vec![
                r.label.clone(),
                format!("{:.1}%", 100.0 * r.weight),
                format!("{:.1}", r.cells[none].timing.ns.median),
            ];
            for &v in &filtered {
                let c = &r.cells[v];
                row.push(format!(
                    "{} {}{}{}",
                    short_signed(&c.timing.vs_none),
                    c.insns,
                    if c.cached { "c" } else { "" },
                    if c.denied { "d" } else { "" }
                ));
            }
            rows.push(row);
        }
        s.push_str(&table(&rows));

        // LOG lets the call run, but the bench program returns ERRNO for it too (one audit
        // record per call would flood the kernel log): listed apart, so that it is not called
        // a denial.
        let (mut denied, mut logged) = (Vec::new(), Vec::new());
        for r in &self.syscalls {
            for c in r.cells.iter().filter(|c| c.denied) {
                let cell = format!("{} under {}: {}", r.label, c.variant, c.decision);
                if c.logs {
                    logged.push(cell);
                } else {
                    denied.push(cell);
                }
            }
        }
        if !denied.is_empty() {
            let _ = writeln!(
                s,
                "  denied, decisions other than ALLOW (rewritten to ERRNO for the run, same path; the syscall itself never ran): {}",
                denied.join("; ")
            );
        }
        if !logged.is_empty() {
            let _ = writeln!(
                s,
                "  LOG, which lets the call run and logs it: not timed as such (rewritten to ERRNO for the run, same path, so as not to write an audit record per call; `d` like a denial, the syscall itself never ran): {}",
                logged.join("; ")
            );
        }
        if !self.skipped.is_empty() {
            s.push('\n');
            let _ = writeln!(
                s,
                "skipped (not timed; the native ones still count in insns/call):"
            );
            for k in &self.skipped {
                let _ = writeln!(
                    s,
                    "  {} ({}): {}",
                    k.label,
                    counted(k.count, "call", "calls"),
                    k.reason
                );
            }
        }
        s.push('\n');
        let _ = writeln!(s, "findings:");
        for f in &self.findings {
            let _ = writeln!(
                s,
                "  [{}] {}\n        {}",
                if f.holds { "yes" } else { "no" },
                f.claim,
                f.evidence
            );
        }
        match &self.per_instruction {
            Some(f) if f.ns_per_insn > 0.0 => {
                let _ = writeln!(
                    s,
                    "per instruction: {:.3} ns per filter instruction executed, about {:.1} ns for running a filter at all (least squares within each syscall over {} uncached cells, {}..{} instructions)",
                    f.ns_per_insn, f.intercept_ns, f.cells, f.insns_range.0, f.insns_range.1
                );
            }
            Some(f) => {
                // A filter instruction cannot take negative time: the fit measured noise.
                let _ = writeln!(
                    s,
                    "per instruction: no cost could be fitted (the least-squares slope over {} uncached cells, {}..{} instructions, is {:.3} ns: noise larger than the filters' differences; more rounds or calls, or a workload with more uncached calls)",
                    f.cells, f.insns_range.0, f.insns_range.1, f.ns_per_insn
                );
            }
            None => {}
        }
        let _ = writeln!(s, "checks:");
        for c in &self.checks {
            let _ = writeln!(s, "  {c}");
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "notes:");
            for n in &self.notes {
                let _ = writeln!(s, "  {n}");
            }
        }
        s
    }

    /// An SVG bar chart: one group per filtered variant, one bar per syscall (the
    /// `max_syscalls` heaviest) plus the workload aggregate, each the overhead over no
    /// filter with its 95% interval as a whisker.
    pub fn to_svg(&self, max_syscalls: usize) -> String {
        let filtered: Vec<usize> = (0..self.variants.len())
            .filter(|&v| self.variants[v].kind != VariantKind::NoFilter)
            .collect();
        let mut order: Vec<usize> = (0..self.syscalls.len()).collect();
        order.sort_by(|&a, &b| self.syscalls[b].count.cmp(&self.syscalls[a].count));
        order.truncate(max_syscalls);
        // Bars: (label, estimate per variant).
        let mut series: Vec<(String, Vec<Estimate>)> = order
            .iter()
            .map(|&i| {
                let r = &self.syscalls[i];
                (
                    r.label.clone(),
                    filtered
                        .iter()
                        .map(|&v| r.cells[v].timing.vs_none)
                        .collect(),
                )
            })
            .collect();
        series.push((
            "aggregate".into(),
            filtered
                .iter()
                .map(|&v| self.variants[v].aggregate.vs_none)
                .collect(),
        ));
        let colors = [
            "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac",
        ];
        let bars = series.len();
        let bar_w = 14.0;
        let group_gap = 28.0;
        let group_w = bars as f64 * bar_w + group_gap;
        let (left, top, plot_h, bottom) = (70.0, 50.0, 300.0, 70.0);
        let legend_w = 200.0;
        let width = left + filtered.len() as f64 * group_w + legend_w;
        let height = top + plot_h + bottom;
        let mut hi = series
            .iter()
            .flat_map(|(_, e)| e.iter().map(|x| x.hi))
            .filter(|x| x.is_finite())
            .fold(1.0f64, f64::max);
        let lo = series
            .iter()
            .flat_map(|(_, e)| e.iter().map(|x| x.lo))
            .filter(|x| x.is_finite())
            .fold(0.0f64, f64::min);
        hi *= 1.05;
        let y = |v: f64| top + plot_h * (hi - v) / (hi - lo);
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="11">"#
        );
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{left}" y="20" font-size="14">Seccomp filter overhead over no filter (ns per syscall, median, 95% interval) — {}</text>"#,
            xml(&self.workload)
        );
        let _ = writeln!(
            s,
            r##"<text x="{left}" y="36" fill="#555">{} · kernel {} · {} rounds{}</text>"##,
            xml(&self.date),
            xml(self.environment.kernel.as_deref().unwrap_or("?")),
            self.options.rounds,
            if self.options.no_cache {
                " · no allow cache"
            } else {
                ""
            }
        );
        // Grid lines.
        let step = nice_step((hi - lo) / 6.0);
        let mut t = (lo / step).ceil() * step;
        while t <= hi {
            let _ = writeln!(
                s,
                r##"<line x1="{left}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{t:.0}</text>"##,
                width - legend_w,
                y(t),
                y(t),
                if t == 0.0 { "#000" } else { "#ddd" },
                left - 6.0,
                y(t) + 4.0
            );
            t += step;
        }
        for (g, &v) in filtered.iter().enumerate() {
            let gx = left + g as f64 * group_w + group_gap / 2.0;
            for (b, (_, ests)) in series.iter().enumerate() {
                let e = ests[g];
                if !e.median.is_finite() {
                    continue;
                }
                let x = gx + b as f64 * bar_w;
                let (y0, y1) = (y(e.median.max(0.0)), y(e.median.min(0.0)));
                let color = if b + 1 == bars {
                    "#333"
                } else {
                    colors[b % colors.len()]
                };
                let _ = writeln!(
                    s,
                    r#"<rect x="{:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{color}"><title>{}: {}: {:.1} ns [{:.1}, {:.1}]</title></rect>"#,
                    x + 1.0,
                    bar_w - 2.0,
                    (y1 - y0).max(0.5),
                    xml(&self.variants[v].name),
                    xml(&series[b].0),
                    e.median,
                    e.lo,
                    e.hi
                );
                let cx = x + bar_w / 2.0;
                let _ = writeln!(
                    s,
                    r#"<line x1="{cx:.1}" x2="{cx:.1}" y1="{:.1}" y2="{:.1}" stroke="black"/>"#,
                    y(e.hi),
                    y(e.lo)
                );
            }
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                gx + bars as f64 * bar_w / 2.0,
                top + plot_h + 18.0,
                xml(&self.variants[v].name)
            );
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">{} insns</text>"##,
                gx + bars as f64 * bar_w / 2.0,
                top + plot_h + 32.0,
                self.variants[v].instructions
            );
        }
        let lx = width - legend_w + 16.0;
        for (b, (label, _)) in series.iter().enumerate() {
            let color = if b + 1 == bars {
                "#333"
            } else {
                colors[b % colors.len()]
            };
            let ly = top + b as f64 * 16.0;
            let _ = writeln!(
                s,
                r#"<rect x="{lx:.1}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                ly,
                lx + 14.0,
                ly + 9.0,
                xml(label)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

/// A round step (1, 2 or 5 times a power of ten) at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `1 call`, `2 calls`: a count with its noun in the right number.
pub fn counted(n: impl Into<u64>, singular: &str, plural: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { singular } else { plural })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_match_known_dates() {
        // `date -u -d @0`, `@951782400` (leap day 2000) and `@1700000000`.
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(utc_timestamp(1_700_000_000), "2023-11-14 22:13:20");
    }

    #[test]
    fn grouped_line_fit_by_hand() {
        // Two syscalls with their own base costs (10 and 40) and the same slope 2; a pooled
        // fit would mix the bases into the slope, the grouped one does not.
        let a = vec![(0.0, 10.0), (10.0, 30.0), (20.0, 50.0)];
        let b = vec![(1.0, 42.0), (3.0, 46.0)];
        let (slope, intercept) = grouped_line_fit(&[a.clone(), b]).unwrap();
        assert!((slope - 2.0).abs() < 1e-9, "{slope}");
        // Mean of y - 2x over the five points: (10 + 10 + 10 + 40 + 40) / 5.
        assert!((intercept - 22.0).abs() < 1e-9, "{intercept}");
        let (slope, intercept) = grouped_line_fit(&[a]).unwrap();
        assert!((slope - 2.0).abs() < 1e-9 && (intercept - 10.0).abs() < 1e-9);
        // One x per group: no slope to see.
        let single = [vec![(1.0, 1.0)], vec![(2.0, 5.0)], vec![(3.0, 9.0)]];
        assert_eq!(grouped_line_fit(&single), None);
    }

    #[test]
    fn steps_and_tables() {
        assert_eq!(nice_step(3.3), 5.0);
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(12.0), 20.0);
        let t = table(&[
            vec!["a".into(), "1".into()],
            vec!["long".into(), "100".into()],
        ]);
        assert_eq!(t, "a       1\nlong  100\n");
        assert_eq!(xml("<a&\">"), "&lt;a&amp;&quot;&gt;");
    }
}
