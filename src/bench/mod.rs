//! `secopt bench`: what a seccomp filter costs on the running kernel, measured side by side
//! with the baselines, and what it costs deterministically (instructions executed).
//!
//! The pipeline:
//! 1. A [`Workload`] ([`workload`]): syscalls with counts, from an `strace -c` summary, a
//!    JSON file, or a built-in probe list.
//! 2. [`Variant`]s ([`variant`]): no filter, `RET ALLOW`, libseccomp's linear and tree
//!    programs for the profile ([`peers`], cargo feature `libseccomp`), secopt's program,
//!    and any filter files. Each is turned into a *bench program* whose returns are
//!    rewritten so that nothing is killed and the path taken is unchanged.
//! 3. [`plan`] makes every workload syscall runnable through a harmless invocation
//!    ([`invoke`]) or lists it as skipped with the reason; computes each variant's
//!    deterministic cost per syscall under both cache models; and checks with the
//!    interpreter that every bench program takes its source's path on every probe.
//!    [`Plan::check_install`] and [`Plan::check_decisions_on_kernel`] ask the kernel the same.
//! 4. [`Plan::measure`] runs the rounds: in each, one fresh child per variant, in rotated
//!    order, times every probe ([`measure`], x86_64). Every child's first result of each
//!    probe is checked against the decision the interpreter predicts.
//! 5. [`Report`] ([`report`]): per-syscall and workload-weighted medians with bootstrap 95%
//!    intervals ([`stats`]), overhead against both baselines from the same run, the
//!    environment ([`env`](mod@env)), and text, JSON and SVG renderings.
//!
//! ```no_run
//! use secopt::bench::{self, BenchOptions, Variant, workload};
//! use secopt::arch::Arch;
//! let w = workload::probe_list("getpid", Arch::X86_64).unwrap();
//! let plan = bench::plan(w, vec![Variant::none(), Variant::allow()], BenchOptions::default()).unwrap();
//! plan.check_install().unwrap();
//! let m = plan.measure(&mut |_, _| {}).unwrap();
//! let report = plan.report(&m);
//! print!("{}", report.to_text());
//! ```

pub mod env;
pub mod invoke;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub mod measure;
pub mod peers;
pub mod report;
pub mod stats;
pub mod variant;
pub mod workload;

pub use env::Environment;
pub use report::Report;
pub use variant::{bench_program, BenchProgram, Expected, Variant, VariantKind};
pub use workload::{UnknownWorkloadName, Workload, WorkloadEntry, WorkloadOptions};

use crate::arch::Arch;
use crate::bpf::cache::{CacheBitmap, KernelCache};
use crate::bpf::{interp, RetVal, SeccompData};
use invoke::{ArgContext, Invocation};
use serde::Serialize;

/// Why a benchmark could not be planned or run. Every message names the input concerned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A workload file is malformed.
    #[error("{source_name}: {place}: {message}")]
    Workload {
        source_name: String,
        place: String,
        message: String,
    },
    /// A workload names syscalls the architecture does not have
    /// ([`workload::WorkloadOptions::skip_unknown`] leaves them out instead).
    #[error(
        "{source_name}: unknown syscalls: {}",
        crate::policy::name_listing(
            &unknown.iter().map(ToString::to_string).collect::<Vec<_>>(),
            usize::MAX,
            ""
        )
    )]
    UnknownSyscalls {
        source_name: String,
        /// Every name that did not resolve, in the order the file gives them.
        unknown: Vec<workload::UnknownWorkloadName>,
    },
    /// A variant cannot be benchmarked.
    #[error("variant {variant}: {message}")]
    Variant { variant: String, message: String },
    /// The kernel refused to install a variant's filter.
    #[error("variant {variant}: the kernel refused to install the filter: {error}")]
    Install { variant: String, error: String },
    /// A measurement child failed.
    #[error("variant {variant}: {message}")]
    Measure { variant: String, message: String },
    /// The kernel decided a probe differently from what the interpreter predicts.
    #[error("decision check failed: {0}")]
    Decision(String),
    /// Bad options.
    #[error("{0}")]
    Usage(String),
    /// This platform cannot run the measurement.
    #[error("{0}")]
    Unsupported(String),
    /// libseccomp's programs were asked for, and this build has no libseccomp to make them
    /// (the `libseccomp` feature is off).
    #[error("this secopt was built without the `libseccomp` feature, so it has no libseccomp programs to measure (`cargo build --features libseccomp` adds them; it needs the system libseccomp)")]
    NoLibseccomp,
}

/// How to measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchOptions {
    /// Rounds; each runs every variant once, in rotated order.
    pub rounds: usize,
    /// Timed calls per probe per child.
    pub calls: usize,
    /// Untimed calls before them.
    pub warmup: usize,
    /// Prepend an argument load to every filter so no syscall is cached (pre-5.11 kernels).
    pub no_cache: bool,
    /// The CPU children are pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Bootstrap resamples for the intervals.
    pub bootstrap: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            rounds: 31,
            calls: 200,
            warmup: 20,
            no_cache: false,
            cpu: None,
            bootstrap: 2000,
            seed: 0x5ec0_9700,
        }
    }
}

/// A workload syscall made runnable.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Index into the workload's entries.
    pub entry: usize,
    pub invocation: &'static Invocation,
    /// The argument registers (pid/tid placeholders are the parent's ids).
    pub regs: [u64; 6],
}

/// A workload syscall that is not measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub label: String,
    pub syscall: String,
    pub count: u64,
    pub reason: String,
}

/// What one variant does on one workload syscall, deterministically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProbeCost {
    /// Instructions the source filter executes for the probe's `seccomp_data`.
    pub steps: usize,
    /// Whether the kernel's allow cache skips the filter for this syscall number.
    pub cached: bool,
    /// What the source filter returns.
    pub ret: RetVal,
    /// What the bench program does.
    pub expected: Expected,
}

impl ProbeCost {
    /// Instructions executed per call with the allow cache (5.11+).
    pub fn with_cache(&self) -> usize {
        if self.cached {
            0
        } else {
            self.steps
        }
    }
}

/// A variant ready to run.
#[derive(Debug, Clone)]
pub struct PlannedVariant {
    pub variant: Variant,
    /// `None` for the no-filter baseline.
    pub bench: Option<BenchProgram>,
    /// The bench programs of a stack's older filters ([`Variant::below`]), oldest first.
    pub below: Vec<BenchProgram>,
    /// Per workload entry (native entries only; `None` for others).
    pub costs: Vec<Option<ProbeCost>>,
}

/// Everything needed to measure: probes, variants with their bench programs, and the
/// deterministic costs.
pub struct Plan {
    pub workload: Workload,
    pub probes: Vec<Probe>,
    pub skipped: Vec<Skipped>,
    pub variants: Vec<PlannedVariant>,
    pub options: BenchOptions,
    pub native: Arch,
    /// Notes for the report (choices made while planning).
    pub notes: Vec<String>,
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    _scratch: measure::Scratch,
    arg_context: ArgContext,
}

/// What a run measured: `ns[variant][probe][round]`, nanoseconds per call.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurements {
    pub ns: Vec<Vec<Vec<f64>>>,
    pub environment: Environment,
    /// Results that matched the predicted decision but not the expected unfiltered outcome.
    pub unexpected: Vec<String>,
    /// Number of (round, variant, probe) first results checked against the prediction.
    pub results_checked: usize,
}

/// Plans a benchmark of `variants` on `workload` (see the module docs). `none` and `allow`
/// are added in front when missing, since every overhead is reported against them.
pub fn plan(
    workload: Workload,
    mut variants: Vec<Variant>,
    options: BenchOptions,
) -> Result<Plan, BenchError> {
    if options.rounds == 0 || options.calls == 0 {
        return Err(BenchError::Usage(
            "rounds and calls must be at least 1".into(),
        ));
    }
    if let Some(cpu) = options.cpu {
        if !cpu_allowed(cpu) {
            return Err(BenchError::Usage(format!(
                "CPU {cpu}: this process may not run on it (see `taskset -p $$` or /sys/devices/system/cpu/online)"
            )));
        }
    }
    let native = Arch::X86_64;
    if Arch::host() != Some(native) {
        return Err(BenchError::Unsupported(format!(
            "secopt bench measures x86_64 syscalls; this host is {}",
            std::env::consts::ARCH
        )));
    }
    if !variants.iter().any(|v| v.kind == VariantKind::AllowAll) {
        variants.insert(0, Variant::allow());
    }
    if !variants.iter().any(|v| v.kind == VariantKind::NoFilter) {
        variants.insert(0, Variant::none());
    }
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].iter().any(|w| w.name == v.name) {
            return Err(BenchError::Usage(format!(
                "two variants are named {:?}; names must be unique",
                v.name
            )));
        }
    }

    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    let scratch = measure::Scratch::new().map_err(|e| BenchError::Measure {
        variant: "-".into(),
        message: format!("cannot map the scratch pages: {e}"),
    })?;
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    let (out_buf, zeros, ones) = (scratch.out_buf(), scratch.zeros(), scratch.ones());
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    let (out_buf, zeros, ones) = (0, 0, 0);
    let arg_context = ArgContext {
        out_buf,
        zeros,
        ones,
        pid: u64::from(std::process::id()),
        tid: u64::from(std::process::id()),
    };

    let mut probes = Vec::new();
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    for (i, e) in workload.entries.iter().enumerate() {
        let skip = |reason: String| Skipped {
            label: e.label.clone(),
            syscall: e.syscall.clone(),
            count: e.count,
            reason,
        };
        if e.arch != native {
            skipped.push(skip(format!(
                "made through the {} ABI; only native {native} calls are measured",
                e.arch
            )));
            continue;
        }
        let Some(inv) = invoke::harmless(&e.syscall) else {
            skipped.push(skip(invoke::skip_reason(&e.syscall)));
            continue;
        };
        // A recorded value at a position the harmless invocation must fix (a flag that keeps
        // the call harmless) is measured with the fixed value instead, and the report says so:
        // recordings carry such values for nearly every program (`newfstatat`'s flags).
        if let Err(m) = inv.check_choices(&e.args) {
            notes.push(format!(
                "{m} (entry {}); measured with the harmless invocation's value",
                e.label
            ));
        }
        if inv.uses_self_ids() {
            notes.push(format!(
                "{}: the call names the benchmark child itself; decisions are predicted with the parent's pid",
                e.label
            ));
        }
        probes.push(Probe {
            entry: i,
            invocation: inv,
            regs: inv.registers(&e.args, &arg_context),
        });
    }
    if probes.is_empty() {
        return Err(BenchError::Usage(format!(
            "{}: none of the workload's syscalls can be measured ({})",
            workload.source,
            skipped
                .iter()
                .map(|s| format!("{}: {}", s.label, s.reason))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }

    let kernel = KernelCache::for_arch(native)
        .ok_or_else(|| BenchError::Unsupported(format!("no allow-cache model for {native}")))?;
    let token = native.token();
    let ip = child_ip();
    let mut planned = Vec::with_capacity(variants.len());
    for v in variants {
        notes.extend(v.notes.iter().cloned());
        let Some(source) = &v.source else {
            let costs = workload
                .entries
                .iter()
                .map(|e| {
                    (e.arch == native).then_some(ProbeCost {
                        steps: 0,
                        cached: true,
                        ret: RetVal::ALLOW,
                        expected: Expected::Runs,
                    })
                })
                .collect();
            planned.push(PlannedVariant {
                variant: v,
                bench: None,
                below: Vec::new(),
                costs,
            });
            continue;
        };
        let bench = bench_program(&v.name, source, options.no_cache)?;
        let below: Vec<BenchProgram> = v
            .below
            .iter()
            .enumerate()
            .map(|(i, f)| bench_program(&format!("{} (filter {i})", v.name), f, options.no_cache))
            .collect::<Result<_, _>>()?;
        // A stack's cache: each filter clears what it does not allow by number alone.
        let bitmap = v
            .filters()
            .fold(CacheBitmap::new(kernel.clone()), |b, f| b.attach(f));
        let mut costs = Vec::with_capacity(workload.entries.len());
        for (i, e) in workload.entries.iter().enumerate() {
            if e.arch != native {
                costs.push(None);
                continue;
            }
            let regs = probes
                .iter()
                .find(|p| p.entry == i)
                .map(|p| p.regs)
                .unwrap_or_else(|| e.args.map(|a| a.unwrap_or(0)));
            let data = SeccompData {
                instruction_pointer: ip,
                ..SeccompData::new(token, e.nr as i32, regs)
            };
            let mut cost = predict(&v.name, source, &bench, &data, &e.label)?;
            if !below.is_empty() {
                cost = stack_cost(&v, cost, &below, &data, &e.label)?;
            }
            costs.push(Some(ProbeCost {
                cached: bitmap.is_cached(token, e.nr),
                ..cost
            }));
        }
        planned.push(PlannedVariant {
            variant: v,
            bench: Some(bench),
            below,
            costs,
        });
    }
    Ok(Plan {
        workload,
        probes,
        skipped,
        variants: planned,
        options,
        native,
        notes,
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        _scratch: scratch,
        arg_context,
    })
}

/// Whether this process may run on `cpu` (its affinity mask contains it).
fn cpu_allowed(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0
                && libc::CPU_ISSET(cpu, &set)
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// The cost of a stack on `data`, from its newest filter's (`newest`): every filter runs, so
/// the steps add up; the kernel acts on the lowest action among the sources' answers
/// ([`crate::bpf::stack::eval_stack`]); and among the bench programs' answers, which are
/// `ALLOW` or `ERRNO(marker)`, the newest marker stands (equal actions: the newest wins).
fn stack_cost(
    v: &Variant,
    newest: ProbeCost,
    below: &[BenchProgram],
    data: &SeccompData,
    label: &str,
) -> Result<ProbeCost, BenchError> {
    let mut steps = newest.steps;
    let mut expected = newest.expected;
    for (f, b) in v.below.iter().zip(below).rev() {
        let c = predict(&v.name, f, b, data, label)?;
        steps += c.steps;
        if expected == Expected::Runs {
            expected = c.expected;
        }
    }
    let filters: Vec<crate::bpf::Program> = v.filters().cloned().collect();
    let ret = crate::bpf::stack::eval_stack(&filters, data).map_err(|e| BenchError::Variant {
        variant: v.name.clone(),
        message: format!("{label}: {e}"),
    })?;
    Ok(ProbeCost {
        steps,
        ret,
        expected,
        ..newest
    })
}

/// Runs the source and the bench program on `data` and checks that the bench program takes
/// the source's path (shifted by its prefix) to the expected return.
fn predict(
    variant: &str,
    source: &crate::bpf::Program,
    bench: &BenchProgram,
    data: &SeccompData,
    label: &str,
) -> Result<ProbeCost, BenchError> {
    let err = |message: String| BenchError::Variant {
        variant: variant.to_string(),
        message,
    };
    let s = interp::trace(source, data).map_err(|e| err(format!("{label}: {e}")))?;
    if s.div_by_zero {
        return Err(err(format!(
            "{label}: the filter divides by zero on this call, which makes the kernel kill the caller; it cannot be benchmarked without changing its path"
        )));
    }
    let pc = *s
        .path
        .last()
        .expect("a run executes at least one instruction");
    let expected = bench
        .expected(pc, s.ret)
        .ok_or_else(|| err(format!("{label}: instruction {pc} is not a return")))?;
    let t = interp::trace(&bench.program, data).map_err(|e| err(format!("{label}: {e}")))?;
    let shifted = s.path[..s.path.len() - 1]
        .iter()
        .map(|p| p + bench.prefix)
        .eq(t.path[bench.prefix..]
            .iter()
            .take(s.path.len() - 1)
            .copied());
    let end = bench.ret_index(pc, s.ret);
    if !shifted || t.path.last().copied() != end {
        return Err(err(format!(
            "internal error: the bench program leaves the source's path on {label}"
        )));
    }
    Ok(ProbeCost {
        steps: s.steps,
        cached: false,
        ret: s.ret,
        expected,
    })
}

impl Plan {
    /// The context the probes' arguments point into.
    pub fn arg_context(&self) -> ArgContext {
        self.arg_context
    }

    /// The deterministic cost of probe `p` under variant `v`.
    pub fn cost(&self, v: usize, p: usize) -> ProbeCost {
        self.variants[v].costs[self.probes[p].entry].expect("probes are native entries")
    }

    /// System calls one round makes (for progress estimates).
    pub fn calls_per_round(&self) -> usize {
        self.variants.len() * self.probes.len() * (self.options.calls + self.options.warmup)
    }
}

/// The `instruction_pointer` the bench child's calls report, so that a filter that checks it
/// is predicted as the kernel decides it. The child's one `syscall` instruction is in
/// [`crate::kernel::entry::issue`], at the same address in the forked child as here: one
/// harmless call here (`getpid`) tells it.
fn child_ip() -> u64 {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        use crate::kernel::entry::{issue, Entry};
        // SAFETY: getpid has no side effect.
        unsafe { issue(Entry::Native, libc::SYS_getpid as i32, [0; 6]).ip }
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        0
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
impl Plan {
    fn child_probes(&self) -> Vec<measure::ChildProbe> {
        self.probes
            .iter()
            .map(|p| {
                let mut pid_slots = 0u8;
                let mut tid_slots = 0u8;
                for (i, a) in p.invocation.args.iter().enumerate() {
                    match a {
                        invoke::Arg::SelfPid => pid_slots |= 1 << i,
                        invoke::Arg::SelfTid => tid_slots |= 1 << i,
                        _ => {}
                    }
                }
                measure::ChildProbe {
                    nr: self.workload.entries[p.entry].nr,
                    regs: p.regs,
                    pid_slots,
                    tid_slots,
                }
            })
            .collect()
    }

    /// The bench programs the child for variant `v` installs, oldest first (none for the
    /// no-filter baseline).
    fn filter_of(&self, v: usize) -> Vec<Vec<libc::sock_filter>> {
        let pv = &self.variants[v];
        pv.below
            .iter()
            .chain(&pv.bench)
            .map(|b| crate::kernel::seccomp::to_sock_filters(&b.program))
            .collect()
    }

    /// Installs every variant's bench program in a child that then ends at once, so a
    /// filter the kernel refuses is reported before anything is measured.
    pub fn check_install(&self) -> Result<(), BenchError> {
        let cfg = measure::ChildConfig {
            warmup: 1,
            calls: 0,
            cpu: None,
            rotate: 0,
            timeout_secs: 20,
        };
        for v in 0..self.variants.len() {
            let filters = self.filter_of(v);
            if !filters.is_empty() {
                measure::run_child(&self.variants[v].variant.name, &filters, &[], &cfg)?;
            }
        }
        Ok(())
    }

    /// Asks the kernel (through [`crate::kernel::Oracle`]) which return every source filter
    /// and every bench program takes for every probe, and checks that they correspond:
    /// the bench program returns where the source returns (shifted by its prefix), with the
    /// rewritten value. Returns the number of (variant, probe) pairs checked.
    pub fn check_decisions_on_kernel(&self) -> Result<usize, BenchError> {
        use crate::kernel::{Call, Entry, Oracle};
        let oracle = Oracle::new().map_err(|e| BenchError::Decision(e.to_string()))?;
        let calls: Vec<Call> = self
            .probes
            .iter()
            .map(|p| {
                Call::new(
                    Entry::Native,
                    self.workload.entries[p.entry].nr as i32,
                    p.regs,
                )
            })
            .collect();
        let mut checked = 0;
        // Each filter of a stack on its own: the bench program must take its source's path.
        let pairs = self.variants.iter().flat_map(|pv| {
            let newest = pv.variant.source.as_ref().zip(pv.bench.as_ref());
            pv.variant
                .below
                .iter()
                .zip(&pv.below)
                .chain(newest)
                .map(move |(source, bench)| (&pv.variant.name, source, bench))
        });
        for (name, source, bench) in pairs {
            let err = |m: String| BenchError::Decision(format!("variant {name}: {m}"));
            let src = oracle.run(source, &calls).map_err(|e| err(e.to_string()))?;
            let got = oracle
                .run(&bench.program, &calls)
                .map_err(|e| err(e.to_string()))?;
            for ((p, s), b) in self.probes.iter().zip(&src).zip(&got) {
                let label = &self.workload.entries[p.entry].label;
                let (Some(spc), Some(bpc)) = (s.ret_index, b.ret_index) else {
                    return Err(err(format!("{label}: the kernel killed the call")));
                };
                let want_pc = bench.ret_index(spc, s.value);
                let want = bench.expected(spc, s.value);
                let got_value = match want {
                    Some(Expected::Runs) => b.value.action() == Some(crate::bpf::Action::Allow),
                    Some(Expected::Marker(m)) => b.value == RetVal::errno(m),
                    None => false,
                };
                if want_pc != Some(bpc) || !got_value {
                    return Err(err(format!(
                        "{label}: the source returns {} at instruction {spc}, the bench program {} at {bpc} (expected {want:?} at {want_pc:?})",
                        s.value, b.value
                    )));
                }
                checked += 1;
            }
        }
        Ok(checked)
    }

    /// Runs one child for variant `v` that makes each probe once (after no warm-up) and
    /// returns the raw results (`rax`) in probe order.
    pub fn run_once(&self, v: usize) -> Result<Vec<u64>, BenchError> {
        let cfg = measure::ChildConfig {
            warmup: 1,
            calls: 0,
            cpu: None,
            rotate: 0,
            timeout_secs: 20,
        };
        let filters = self.filter_of(v);
        let r = measure::run_child(
            &self.variants[v].variant.name,
            &filters,
            &self.child_probes(),
            &cfg,
        )?;
        Ok(r.first_rax)
    }

    /// Runs every round. `progress(done, total)` is called after each child.
    pub fn measure(
        &self,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Measurements, BenchError> {
        let mut environment = Environment::probe();
        let ghz = measure::tsc_ghz();
        if !(ghz.is_finite() && ghz > 0.05) {
            return Err(BenchError::Unsupported(format!(
                "the time-stamp counter does not advance usefully ({ghz} GHz)"
            )));
        }
        environment.tsc_ghz = Some(ghz);
        environment.pinned_cpu = self.options.cpu;
        let probes = self.child_probes();
        let filters: Vec<Vec<Vec<libc::sock_filter>>> = (0..self.variants.len())
            .map(|v| self.filter_of(v))
            .collect();
        let nv = self.variants.len();
        let np = probes.len();
        let o = &self.options;
        // Generous: 20 µs per call is 50–100 times a filtered syscall on any recent machine.
        let per_child_secs = (np * (o.calls + o.warmup)) as f64 * 20e-6;
        let timeout_secs = (10.0 + per_child_secs * 4.0).min(3600.0) as u32;
        let mut ns = vec![vec![Vec::with_capacity(o.rounds); np]; nv];
        let mut unexpected = Vec::new();
        let mut results_checked = 0;
        let total = o.rounds * nv;
        let mut done = 0;
        for round in 0..o.rounds {
            for k in 0..nv {
                let v = (k + round) % nv;
                let cfg = measure::ChildConfig {
                    warmup: o.warmup.max(1),
                    calls: o.calls,
                    cpu: o.cpu,
                    rotate: round % np,
                    timeout_secs,
                };
                let name = &self.variants[v].variant.name;
                let r = measure::run_child(name, &filters[v], &probes, &cfg)?;
                for (p, (&rax, &cycles)) in r.first_rax.iter().zip(&r.cycles).enumerate() {
                    self.check_result(v, p, rax, &mut unexpected)?;
                    results_checked += 1;
                    ns[v][p].push(cycles as f64 / ghz / o.calls as f64);
                }
                done += 1;
                progress(done, total);
            }
        }
        environment.load_end = env::load_average();
        Ok(Measurements {
            ns,
            environment,
            unexpected,
            results_checked,
        })
    }

    /// Checks one child's first result for probe `p` under variant `v` against the
    /// prediction: a marker errno exactly when the bench program denies.
    fn check_result(
        &self,
        v: usize,
        p: usize,
        rax: u64,
        unexpected: &mut Vec<String>,
    ) -> Result<(), BenchError> {
        let cost = self.cost(v, p);
        let label = &self.workload.entries[self.probes[p].entry].label;
        let name = &self.variants[v].variant.name;
        let errno = {
            let r = rax as i64;
            (-4095..0).contains(&r).then_some((-r) as u32)
        };
        let is_marker = errno.is_some_and(|e| e >= variant::MARKER_BASE);
        match cost.expected {
            Expected::Marker(m) if errno == Some(u32::from(m)) => Ok(()),
            Expected::Runs if !is_marker => {
                let expect = self.probes[p].invocation.expect;
                if !expect.accepts(rax) {
                    let note = format!(
                        "{label}: returned {} where {} was expected (unfiltered)",
                        describe_rax(rax),
                        describe_outcome(&expect)
                    );
                    if !unexpected.contains(&note) {
                        unexpected.push(note);
                    }
                }
                Ok(())
            }
            want => Err(BenchError::Decision(format!(
                "variant {name}, {label}: the kernel returned {} but the filter should {}",
                describe_rax(rax),
                match want {
                    Expected::Runs => "let the call run".to_string(),
                    Expected::Marker(m) => format!(
                        "deny it (errno {m}, the bench program's mark for this filter's return)"
                    ),
                }
            ))),
        }
    }
}

fn describe_rax(rax: u64) -> String {
    let r = rax as i64;
    if (-4095..0).contains(&r) {
        format!("errno {}", -r)
    } else {
        format!("{r}")
    }
}

fn describe_outcome(o: &invoke::Outcome) -> String {
    let mut parts: Vec<String> = o.errnos.iter().map(|e| format!("errno {e}")).collect();
    if o.success {
        parts.insert(0, "success".into());
    }
    parts.join(" or ")
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
impl Plan {
    /// Not available on this platform.
    pub fn check_install(&self) -> Result<(), BenchError> {
        Err(unsupported())
    }
    /// Not available on this platform.
    pub fn check_decisions_on_kernel(&self) -> Result<usize, BenchError> {
        Err(unsupported())
    }
    /// Not available on this platform.
    pub fn measure(
        &self,
        _progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Measurements, BenchError> {
        Err(unsupported())
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn unsupported() -> BenchError {
    BenchError::Unsupported("secopt bench measures on x86_64 Linux only".into())
}
