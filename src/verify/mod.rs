//! Exact semantic equivalence of two seccomp filters over all of `seccomp_data`, with a
//! concrete counterexample when they differ ([`equivalent`]) and a per-arch, per-syscall
//! account of every difference ([`diff()`]).
//!
//! # How equivalence is decided
//!
//! Both programs are run symbolically by [`crate::bpf::symbolic`] in **one** BDD manager, over
//! the 512 input bits (variables ordered `arch`, `nr`, then each argument high half before low
//! half, then the instruction pointer). Each run yields its *return classes*: pairs
//! `(value, inputs)` where `value` is a constant (`RET K`, or 0 for a division by X == 0) or a
//! bit-blasted computed value (`RET A`), and `inputs` is the exact set of inputs reaching that
//! return. A program's output is then the 32-bit vector of BDDs
//!
//! ```text
//! out[i] = OR over classes (inputs ∧ value[i])
//! ```
//!
//! Because BDDs are canonical and both runs share the node table, the programs are equivalent
//! exactly when `outA[i]` and `outB[i]` are the same node for all 32 bits — `RET A` values are
//! compared as values, not as "some RET A". Otherwise `D = OR_i (outA[i] ⊕ outB[i])` is the
//! set of inputs where they differ; its smallest assignment (in variable order, free bits 0)
//! is the counterexample, and it is run through [`crate::bpf::interp`] before it is reported.
//!
//! [`equivalent`] does this once per *arch case* when a program tests the arch word: with the
//! word fixed to the host's token, then to each token a program compares it with, and once
//! for every other token. Those cases partition the inputs, so the proof is as exact; but
//! with the word fixed the arch tests are decided as the programs run, and a path condition
//! no longer starts with a 32-node path through the arch word that each branch rebuilds. On
//! Docker's default profile for three arches the optimizer's self-check builds 87 thousand
//! nodes instead of 204 thousand, in 109 thousand steps instead of 259 thousand. The cases
//! come in the order counterexamples are preferred in (see below), so the first case with a
//! difference has the counterexample the single exploration would give. Where the arches
//! share their code after the arch test (one body behind many tokens), each case would run that
//! body again, so the proof explores the whole domain at once instead (`MAX_CASE_OVERLAP`).
//! If the interpreter does not reproduce it, that is a bug and [`equivalent`] returns
//! [`VerifyError::Disagreement`] instead of a verdict.
//!
//! Worked example. `A` allows everything but `socket` (41) with `args[0] == 16`; `B` writes the
//! argument test as a range. Both are run; `A`'s classes are `ERRNO(1)` on
//! `nr == 41 ∧ a0lo == 16` and `ALLOW` on the rest; `B`'s test `a0lo >= 16 ∧ a0lo <= 16` builds
//! the same BDD node for its `ERRNO(1)` set, so every output bit is the same node: equal.
//! Changing `B`'s bound to `<= 17` adds the inputs with `a0lo == 17` to its ERRNO set; `D` is
//! `nr == 41 ∧ a0lo == 17`. The counterexample is its smallest point with the host's arch token
//! (else one the filters test, else any: a real machine's token gives it a real byte order, in
//! which offset 16 is `args[0]`'s low word): on x86_64, arch x86_64, nr 41, `args[0]` 17, the
//! rest 0:
//!
//! ```
//! use secopt::bpf::insn::*;
//! use secopt::bpf::{Insn, Program, RetVal};
//! use secopt::verify::{equivalent, Verdict, VerifyOptions};
//!
//! let errno = RetVal::errno(1).0;
//! let a = Program::new(vec![
//!     Insn::ld_abs(0),                                  // A = nr
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 41, 0, 3),  // socket? else allow
//!     Insn::ld_abs(16),                                 // A = args[0].lo
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 16, 0, 1),  // == AF_NETLINK? else allow
//!     Insn::ret(errno),
//!     Insn::ret(RetVal::ALLOW.0),
//! ]);
//! let b = |upper: u32| Program::new(vec![
//!     Insn::ld_abs(0),
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 41, 0, 4),
//!     Insn::ld_abs(16),
//!     Insn::jump(BPF_JMP | BPF_JGE | BPF_K, 16, 0, 2),      // >= 16
//!     Insn::jump(BPF_JMP | BPF_JGT | BPF_K, upper, 1, 0),   // and <= upper
//!     Insn::ret(errno),
//!     Insn::ret(RetVal::ALLOW.0),
//! ]);
//! let opts = VerifyOptions::default();
//! assert_eq!(equivalent(&a, &b(16), &opts).unwrap(), Verdict::Equal);
//! let Verdict::Different(cx) = equivalent(&a, &b(17), &opts).unwrap() else { panic!() };
//! assert_eq!((cx.data.nr, cx.data.args[0]), (41, 17));
//! if let Some(host) = secopt::arch::Arch::host() {
//!     assert_eq!(cx.data.arch, host.token());
//! }
//! assert_eq!((cx.a, cx.b), (RetVal::ALLOW, RetVal::errno(1)));
//! ```
//!
//! # Budgets
//!
//! BDDs can grow exponentially (a product of two unknown words, two words compared with each
//! other). Node count, an estimate of the tables' memory, the number of symbolic states and
//! wall-clock time are bounded by [`Budget`]; when one runs out the answer is
//! [`Verdict::Unknown`] with the reason, never a guess. There is no approximation anywhere
//! else: a verdict of `Equal` is a proof over the whole [`Domain`].
//!
//! The work is measured in the budget's own units: a [`Meter`] in [`VerifyOptions::meter`]
//! follows the nodes and steps while the programs are explored and compared ([`Phase`]), for a
//! caller on another thread (`secopt verify --progress` draws them against the budget), and
//! holds what a verdict took once it returns (JSON `proof`; the optimizer's self-check reports
//! its proof's as [`crate::optimize::Optimized::proof`]). The counts are the same on every
//! machine, and a budget of exactly them reaches the same verdict.

mod diff;
mod domain;
mod render;
mod sample;

/// A concrete input of `domain` on which `a` and `b` differ, searched among inputs built from
/// their constants and random words (deterministically: at most 200 000 inputs, fewer for
/// long programs): what is worth trying when [`equivalent`] answers unknown. `None` proves
/// nothing. Both returns come from the interpreter.
pub fn sample_difference(a: &Program, b: &Program, domain: &Domain) -> Option<Counterexample> {
    sample::difference(a, b, domain)
}

pub use diff::{diff, ArchDiff, ArchGroup, Change, Diff, DiffEntry, DiffOutcome, Ret, MAX_ENTRIES};
pub use domain::{ArchSel, Domain, DomainError, NrSel};

pub use crate::bpf::symbolic::bdd::Meter;
use crate::bpf::symbolic::bdd::{Bdd, FxMap, Limit, Limits as BddLimits, Node, OutOfNodes, FALSE};
use crate::bpf::symbolic::{self, Limits, Machine, Observer, State, Stopped, Val};
use crate::bpf::validate::{validate_structure, ValidationError};
use crate::bpf::{interp, Program, RetVal, SeccompData};
use std::fmt;
use std::time::{Duration, Instant};

/// How much work one verification may do before it answers [`Verdict::Unknown`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Most BDD nodes (both programs together).
    pub max_bdd_nodes: usize,
    /// Most BDD steps (both programs together): the deterministic bound on work, reached
    /// before the clock on programs whose diagrams grow slowly but cost much (see
    /// [`crate::bpf::symbolic::bdd::Limits::max_steps`]).
    pub max_bdd_steps: u64,
    /// Most estimated bytes of BDD tables.
    pub max_memory_bytes: usize,
    /// Most symbolic `(instruction, state)` steps per program (over all its arch cases, see
    /// [`equivalent`]).
    pub max_states: usize,
    /// Wall-clock limit (`None`: none).
    pub time_limit: Option<Duration>,
}

impl Budget {
    /// This budget without its clock: the node, step, memory and state limits stop a proof
    /// after the same work on every machine, so the verdict no longer depends on how busy
    /// the machine is (a proof that would run long still stops, on the steps).
    ///
    /// ```
    /// use secopt::verify::Budget;
    /// let b = Budget::default().without_clock();
    /// assert_eq!(b.time_limit, None);
    /// assert_eq!(b.max_bdd_steps, Budget::default().max_bdd_steps);
    /// ```
    pub const fn without_clock(self) -> Budget {
        Budget {
            time_limit: None,
            ..self
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            // Real filters need well under a million; 16M nodes is ~600 MB of tables.
            max_bdd_nodes: 1 << 24,
            // No proof in the test suite took more than ~620 000 steps (measured once); a
            // hopeless one runs 2^28 steps in well under the 60 s below (21.8 s for the
            // fuzzer's worst input, measured once).
            max_bdd_steps: 1 << 28,
            max_memory_bytes: 1 << 30,
            max_states: 2_000_000,
            time_limit: Some(Duration::from_secs(60)),
        }
    }
}

/// What to verify and with how much effort.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyOptions {
    /// The inputs compared (default: all of `seccomp_data`).
    pub domain: Domain,
    pub budget: Budget,
    /// Where a caller on another thread can watch the work: the decision diagrams' nodes and
    /// steps against [`Budget::max_bdd_nodes`] and [`Budget::max_bdd_steps`], and the
    /// [`Phase`] (`secopt verify` and `diff` draw it on a terminal).
    pub meter: Option<Meter>,
}

/// The work of one proof: the decision diagrams' nodes and steps, and the budget's limits on
/// them it ran under (`secopt verify`'s JSON `proof`, the optimizer's
/// [`crate::optimize::Optimized::proof`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ProofWork {
    pub bdd_nodes: u64,
    pub bdd_steps: u64,
    pub max_bdd_nodes: u64,
    pub max_bdd_steps: u64,
}

impl ProofWork {
    /// What `meter` counted, once the comparison it followed has returned, under `budget`.
    pub fn measured(meter: &Meter, budget: &Budget) -> ProofWork {
        ProofWork {
            bdd_nodes: meter.nodes(),
            bdd_steps: meter.steps(),
            max_bdd_nodes: budget.max_bdd_nodes as u64,
            max_bdd_steps: budget.max_bdd_steps,
        }
    }
}

/// What [`equivalent`] and [`diff()`] are doing, as their [`VerifyOptions::meter`] says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Running the first program (A) on every input at once, symbolically.
    ExploringA,
    /// Running the second (B).
    ExploringB,
    /// Comparing what they return.
    Comparing,
}

impl Phase {
    /// The phase a [`Meter`] of a comparison says by this number ([`Meter::phase`], or what
    /// its listener hears), if any.
    pub fn from_number(n: u8) -> Option<Phase> {
        match n {
            1 => Some(Phase::ExploringA),
            2 => Some(Phase::ExploringB),
            3 => Some(Phase::Comparing),
            _ => None,
        }
    }

    /// Publishes the exact counts so far and says the comparison is now in this phase.
    fn enter(self, bdd: &Bdd, meter: Option<&Meter>) {
        if let Some(m) = meter {
            bdd.publish();
            m.set_phase(self as u8 + 1);
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::ExploringA => "exploring A",
            Phase::ExploringB => "exploring B",
            Phase::Comparing => "comparing A and B",
        })
    }
}

/// An input on which the two programs return different values (both confirmed by the
/// interpreter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Counterexample {
    pub data: SeccompData,
    /// What the first program returns.
    pub a: RetVal,
    /// What the second program returns.
    pub b: RetVal,
}

/// `write (x86_64, arch 0xc000003e, nr 1) ip=0x0 args=[0x1, 0x0, …]: the first returns
/// ALLOW, the second ERRNO(1)`.
impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.data;
        let (arch, name) = crate::arch::Arch::call_of_data(d.arch, d.nr as u32);
        write!(
            f,
            "{} ({}arch {:#x}, nr {}) ip={:#x} args=[{}]: the first returns {}, the second {}",
            name.unwrap_or("?"),
            arch.map_or_else(String::new, |a| format!("{a}, ")),
            d.arch,
            d.nr,
            d.instruction_pointer,
            d.args
                .iter()
                .map(|a| format!("{a:#x}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.a,
            self.b
        )
    }
}

/// Why no verdict could be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "budget")]
#[non_exhaustive]
pub enum UnknownReason {
    /// The BDD node budget ran out.
    BddNodes { limit: usize },
    /// The BDD step budget ran out.
    BddSteps { limit: u64 },
    /// The estimated memory of the BDD tables reached the budget.
    Memory { limit_bytes: usize },
    /// The time budget ran out.
    Time { limit_ms: u64 },
    /// Too many symbolic states.
    States { limit: usize },
}

impl UnknownReason {
    /// The [`Budget`] field whose limit ran out: raising it may let the proof finish. (The
    /// command line names its flag: `secopt verify --max-nodes` for `max_bdd_nodes`, and so
    /// on.)
    pub fn budget_field(self) -> &'static str {
        match self {
            UnknownReason::BddNodes { .. } => "max_bdd_nodes",
            UnknownReason::BddSteps { .. } => "max_bdd_steps",
            UnknownReason::Memory { .. } => "max_memory_bytes",
            UnknownReason::Time { .. } => "time_limit",
            UnknownReason::States { .. } => "max_states",
        }
    }
}

/// What ran out, with its limit; what to raise is the caller's to say
/// ([`UnknownReason::budget_field`] names the [`Budget`] field).
impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownReason::BddNodes { limit } => {
                write!(f, "the decision diagrams needed more than {limit} nodes")
            }
            UnknownReason::BddSteps { limit } => {
                write!(f, "the decision diagrams needed more than {limit} steps")
            }
            UnknownReason::Memory { limit_bytes } => write!(
                f,
                "the decision diagrams needed more than the {} MiB memory budget",
                limit_bytes >> 20
            ),
            // Milliseconds below a second (a limit of 1 ms is "1 ms", not "0.0 s").
            UnknownReason::Time { limit_ms } if *limit_ms < 1000 => {
                write!(f, "the time budget of {limit_ms} ms ran out")
            }
            UnknownReason::Time { limit_ms } => write!(
                f,
                "the time budget of {:.1} s ran out",
                *limit_ms as f64 / 1000.0
            ),
            UnknownReason::States { limit } => {
                write!(f, "symbolic execution needed more than {limit} states")
            }
        }
    }
}

/// The answer of [`equivalent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Both programs return the same value on every input of the domain (proved).
    Equal,
    /// They differ on this input.
    Different(Counterexample),
    /// A budget ran out before an answer.
    Unknown { reason: UnknownReason },
}

/// `equal`, `different on <the counterexample>`, `unknown: <what ran out>`.
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Equal => f.write_str("equal"),
            Verdict::Different(c) => write!(f, "different on {c}"),
            Verdict::Unknown { reason } => write!(f, "unknown: {reason}"),
        }
    }
}

/// Which of the two programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Side {
    A,
    B,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::A => "first",
            Side::B => "second",
        })
    }
}

/// Why there is no verdict at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// A program the kernel would reject (checked before any analysis).
    #[error("the {side} filter is invalid: {error}")]
    Invalid { side: Side, error: ValidationError },
    /// The domain restriction is unusable.
    #[error("{0}")]
    Domain(#[from] DomainError),
    /// The return classes of a filter do not cover the domain exactly once: a bug in secopt.
    #[error("internal error: the symbolic execution of the {side} filter lost track of some inputs (e.g. {example:?}); please report this")]
    Incomplete { side: Side, example: SeccompData },
    /// The symbolic result and the interpreter disagree on a concrete input: a bug in secopt.
    #[error("internal error: on {data:?} the symbolic execution of the {side} filter says {symbolic} but the interpreter says {interpreter}; please report this")]
    Disagreement {
        side: Side,
        data: SeccompData,
        symbolic: String,
        interpreter: String,
    },
}

/// `p` (side `side`) checked with [`validate_structure`].
fn structure_of(p: &Program, side: Side) -> Result<(), VerifyError> {
    validate_structure(p).map_err(|error| VerifyError::Invalid { side, error })
}

/// Whether `a` and `b` are the same instructions (after both checks [`Pair::explore`] makes
/// first: the structure and the domain). The same instructions decide every input alike, so
/// no exploration is needed: a filter whose paths never merge ran into the budget against
/// itself ("unknown" after 6 s).
fn identical(a: &Program, b: &Program, opts: &VerifyOptions) -> Result<bool, VerifyError> {
    if a != b {
        return Ok(false);
    }
    structure_of(a, Side::A)?;
    opts.domain.check()?;
    Ok(true)
}

/// Decides whether `a` and `b` return the same value for every input of `opts.domain`.
///
/// Both programs are checked first with
/// [`validate_structure`] ([`VerifyError::Invalid`]):
/// every kernel rule but the length limit, so an over-long reference (a profile's plain
/// lowering) can be compared with its optimized form. Identical programs are equal without
/// exploring. A [`Verdict::Different`] counterexample has been reproduced by the interpreter
/// on both programs.
pub fn equivalent(a: &Program, b: &Program, opts: &VerifyOptions) -> Result<Verdict, VerifyError> {
    equivalent_in_cases(a, b, opts, &arch_cases(a, b))
}

/// [`equivalent`], exploring the programs in `cases` (which partition the inputs).
fn equivalent_in_cases(
    a: &Program,
    b: &Program,
    opts: &VerifyOptions,
    cases: &[ArchCase],
) -> Result<Verdict, VerifyError> {
    if identical(a, b, opts)? {
        return Ok(Verdict::Equal);
    }
    let mut pair = match Pair::explore(a, b, opts, cases)? {
        Ok(p) => p,
        Err(reason) => return Ok(Verdict::Unknown { reason }),
    };
    match pair.first_difference() {
        Ok(None) => Ok(Verdict::Equal),
        Ok(Some((case, words))) => {
            let data = SeccompData::from_words(&words);
            let ra = pair.confirm(case, Side::A, &data)?;
            let rb = pair.confirm(case, Side::B, &data)?;
            if ra == rb {
                // The outputs differ symbolically at this point but not concretely.
                return Err(VerifyError::Disagreement {
                    side: Side::A,
                    data,
                    symbolic: "the two filters differ here".into(),
                    interpreter: format!("both return {ra}"),
                });
            }
            Ok(Verdict::Different(Counterexample { data, a: ra, b: rb }))
        }
        Err(OutOfNodes) => Ok(Verdict::Unknown {
            reason: pair.reason(None),
        }),
    }
}

/// The return classes of one program: each distinct returned value (a constant or a
/// computed bit vector) with the exact set of inputs that get it.
#[derive(Default)]
struct Classes {
    index: FxMap<Val, usize>,
    list: Vec<(Val, Node)>,
}

impl Observer for Classes {
    fn ret(&mut self, m: &mut Machine, value: Val, _lo: u32, _hi: u32, cond: Node) {
        if let Val::Opaque(_) = value {
            m.exact = false;
            return;
        }
        match self.index.get(&value) {
            Some(&i) => match m.bdd.or(self.list[i].1, cond) {
                Ok(n) => self.list[i].1 = n,
                Err(OutOfNodes) => m.out_of_budget(),
            },
            None => {
                self.index.insert(value, self.list.len());
                self.list.push((value, cond));
            }
        }
    }
}

/// A part of the inputs explored on its own: the arch word fixed to one token (so that the
/// path conditions no longer carry it), every token no case fixes, or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArchCase {
    /// Every arch token: one exploration of the whole domain ([`diff()`]'s).
    Any,
    /// The arch word is this token: every arch test is decided while exploring.
    Token(u32),
    /// Every token no [`ArchCase::Token`] case of the same pair fixes.
    Rest,
}

impl ArchCase {
    /// The tokens `cases` fix, in order: what their [`ArchCase::Rest`] leaves out.
    fn fixed_tokens(cases: &[ArchCase]) -> Vec<u32> {
        cases
            .iter()
            .filter_map(|c| match c {
                ArchCase::Token(t) => Some(*t),
                _ => None,
            })
            .collect()
    }
}

/// The cases an equivalence proof of `a` and `b` explores: the host's arch token, then each
/// token one of the programs compares the arch word with (in the order
/// [`Pair::first_difference`] prefers them for a counterexample), then the rest; or one case
/// for everything when neither program tests the arch, or when the cases would run the same
/// code many times over ([`MAX_CASE_OVERLAP`]).
///
/// Why: both programs test the arch first, so over the whole domain every path condition
/// starts with a 32-node path through the arch word, rebuilt on each branch. With the word
/// fixed the tests are decided as the program runs and the conditions are over the syscall
/// number and arguments only: on Docker's default profile (three arches) the self-check
/// builds less than half the nodes. The cases partition the domain, whatever the tokens
/// are, so the proof stays exact.
fn arch_cases(a: &Program, b: &Program) -> Vec<ArchCase> {
    let cases = cases_by_token(a, b);
    if cases.len() > 1 && case_overlap([a, b], &cases) > MAX_CASE_OVERLAP {
        return vec![ArchCase::Any];
    }
    cases
}

/// [`arch_cases`] before the overlap is weighed: a case for each token, in order, then the
/// rest; one case when no program tests the arch.
fn cases_by_token(a: &Program, b: &Program) -> Vec<ArchCase> {
    let checked = tokens_checked([a, b]);
    if checked.is_empty() {
        return vec![ArchCase::Any];
    }
    let mut cases: Vec<ArchCase> = host_first(checked)
        .into_iter()
        .map(ArchCase::Token)
        .collect();
    cases.push(ArchCase::Rest);
    cases
}

/// Every token either program compares the arch word with, in program order.
fn tokens_checked(progs: [&Program; 2]) -> Vec<u32> {
    progs
        .into_iter()
        .flat_map(crate::bpf::analysis::arch_tokens_checked)
        .collect()
}

/// The host's arch token, then `tokens`, each once: the order a counterexample's arch is
/// preferred in (a real machine's token gives it a real byte order).
fn host_first(tokens: Vec<u32>) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(tokens.len() + 1);
    for t in crate::arch::Arch::host()
        .map(|a| a.token())
        .into_iter()
        .chain(tokens)
    {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The most [`case_overlap`] the arch cases may have. A filter whose arches share their code
/// after the arch test (one body behind ten `jeq` tokens) has an overlap of about the number
/// of cases: each would run the whole body again, where one exploration runs it once for all
/// (audit 54: an argument check with divisions behind ten tokens took 41 M steps and 72 s
/// split, 4.3 M steps and 6 s whole). The self-checks of the corpus's profiles (x86_64+x86+x32
/// and aarch64) and of Firecracker's threads have 1.00 to 1.02; such a shared body 8 to 40.
const MAX_CASE_OVERLAP: f64 = 1.5;

/// How many times over the cases would run the programs' work: the instructions each case
/// reaches that do work, summed over the cases and both programs, against the instructions
/// some case reaches that do. Loading and testing the arch word, unconditional jumps and
/// returns are no work here: with the word fixed the tests are decided, and every case has its
/// own. A jump on anything else (the syscall number, an argument) is work. Reachability
/// is judged from the tests of the arch word alone (while the accumulator holds it), an
/// over-approximation that only chooses how to explore.
fn case_overlap(progs: [&Program; 2], cases: &[ArchCase]) -> f64 {
    let tokens = ArchCase::fixed_tokens(cases);
    let (mut each, mut any) = (0usize, 0usize);
    for prog in progs {
        let mut some_case = vec![false; prog.len()];
        for &case in cases {
            let reached = work_in_case(prog, case, &tokens);
            for (some, &r) in some_case.iter_mut().zip(&reached) {
                *some |= r;
                each += usize::from(r);
            }
        }
        any += some_case.iter().filter(|&&r| r).count();
    }
    each as f64 / any.max(1) as f64
}

/// The instructions of `prog` the inputs of `case` may reach that do work (see
/// [`case_overlap`]), deciding only the jumps that compare the arch word (loaded into the
/// accumulator and not changed since) with a constant.
fn work_in_case(prog: &Program, case: ArchCase, tokens: &[u32]) -> Vec<bool> {
    use crate::bpf::data::OFF_ARCH;
    use crate::bpf::insn::*;
    let n = prog.len();
    // For each instruction reached: whether the accumulator holds the arch word on every path
    // to it. Jumps only go forward, so one pass in program order sees every path.
    let mut arch_in_a: Vec<Option<bool>> = vec![None; n];
    let mut work = vec![false; n];
    if n > 0 {
        arch_in_a[0] = Some(false);
    }
    for pc in 0..n {
        let Some(holds) = arch_in_a[pc] else {
            continue;
        };
        let insn = prog.insns[pc];
        let loads_arch = insn.code == BPF_LD | BPF_W | BPF_ABS && insn.k == OFF_ARCH;
        let tests_arch = class(insn.code) == BPF_JMP && holds && src(insn.code) == BPF_K;
        work[pc] = !(insn.is_ret() || insn.is_ja() || loads_arch || tests_arch);
        let mut go = |to: usize, holds: bool| {
            if let Some(slot) = arch_in_a.get_mut(to) {
                *slot = Some(slot.map_or(holds, |h| h && holds));
            }
        };
        match class(insn.code) {
            BPF_RET => {}
            BPF_JMP if insn.is_ja() => go(pc + 1 + insn.k as usize, holds),
            BPF_JMP => {
                let (jt, jf) = (pc + 1 + insn.jt as usize, pc + 1 + insn.jf as usize);
                let decided = match case {
                    _ if !holds || src(insn.code) != BPF_K => None,
                    ArchCase::Token(t) => Some(jump_taken(op(insn.code), t, insn.k)),
                    ArchCase::Rest if op(insn.code) == BPF_JEQ && tokens.contains(&insn.k) => {
                        Some(false)
                    }
                    ArchCase::Rest | ArchCase::Any => None,
                };
                match decided {
                    Some(true) => go(jt, holds),
                    Some(false) => go(jf, holds),
                    None => {
                        go(jt, holds);
                        go(jf, holds);
                    }
                }
            }
            BPF_LD => go(pc + 1, loads_arch),
            BPF_ALU => go(pc + 1, false),
            BPF_MISC if miscop(insn.code) == BPF_TXA => go(pc + 1, false),
            // LDX, ST, STX, TAX: the accumulator is unchanged.
            _ => go(pc + 1, holds),
        }
    }
    work
}

/// One case of a [`Pair`]: its inputs, each program's return classes on them, and the output
/// bit vectors once computed.
struct Case {
    arch: ArchCase,
    domain: Node,
    classes: [Vec<(Val, Node)>; 2],
    out: Option<[[Node; 32]; 2]>,
}

/// Both programs explored in one machine, case by case ([`ArchCase`]).
struct Pair<'p> {
    progs: [&'p Program; 2],
    m: Machine,
    budget: Budget,
    cases: Vec<Case>,
    /// When the time budget runs out.
    deadline: Option<Instant>,
}

impl<'p> Pair<'p> {
    /// Validates and explores both programs, in each of `cases` (which partition the
    /// domain); `Ok(Err(reason))` when a budget ran out.
    fn explore(
        a: &'p Program,
        b: &'p Program,
        opts: &VerifyOptions,
        cases: &[ArchCase],
    ) -> Result<Result<Self, UnknownReason>, VerifyError> {
        structure_of(a, Side::A)?;
        structure_of(b, Side::B)?;
        opts.domain.check()?;
        let budget = &opts.budget;
        let deadline = budget.time_limit.map(|t| Instant::now() + t);
        let mut bdd = Bdd::with_limits(BddLimits {
            max_nodes: budget.max_bdd_nodes,
            max_bytes: Some(budget.max_memory_bytes),
            max_steps: Some(budget.max_bdd_steps),
            deadline,
        });
        if let Some(meter) = &opts.meter {
            bdd.set_meter(meter.clone());
        }
        let mut pair = Pair {
            progs: [a, b],
            m: Machine::new(bdd),
            budget: budget.clone(),
            cases: Vec::new(),
            deadline,
        };
        match pair.case_domains(&opts.domain, cases) {
            Ok(cases) => pair.cases = cases,
            Err(OutOfNodes) => return Ok(Err(pair.reason(None))),
        }
        let mut states_left = budget.max_states;
        for side in 0..2 {
            [Phase::ExploringA, Phase::ExploringB][side].enter(&pair.m.bdd, opts.meter.as_ref());
            for case in 0..pair.cases.len() {
                let domain = pair.cases[case].domain;
                if domain == FALSE {
                    continue;
                }
                pair.enter(case);
                let mut classes = Classes::default();
                // The state budget is the whole program's, over all its cases.
                let limits = Limits {
                    max_states: states_left,
                    count_steps: false,
                    strict: true,
                    deadline,
                };
                match symbolic::explore(
                    pair.progs[side],
                    &mut pair.m,
                    State::initial(domain),
                    &limits,
                    &mut classes,
                ) {
                    Ok(explored) => states_left -= explored,
                    Err(Stopped::States(_)) => {
                        let stop = Stopped::States(budget.max_states);
                        return Ok(Err(pair.reason(Some(stop))));
                    }
                    Err(stop) => return Ok(Err(pair.reason(Some(stop)))),
                }
                if !pair.m.exact {
                    return Ok(Err(pair.reason(None)));
                }
                // Every input of the case reaches exactly one return: the classes must
                // cover it (a cheap check of the executor itself).
                let mut covered = FALSE;
                for &(_, cond) in &classes.list {
                    covered = match pair.m.bdd.or(covered, cond) {
                        Ok(c) => c,
                        Err(OutOfNodes) => return Ok(Err(pair.reason(None))),
                    };
                }
                if covered != domain {
                    let lost = pair.m.bdd.xor(covered, domain).ok();
                    let example = lost
                        .and_then(|l| pair.m.witness(l))
                        .map(|w| SeccompData::from_words(&w))
                        .unwrap_or_default();
                    let side = if side == 0 { Side::A } else { Side::B };
                    return Err(VerifyError::Incomplete { side, example });
                }
                pair.cases[case].classes[side] = classes.list;
            }
            // The other program gets the whole state budget again.
            states_left = budget.max_states;
        }
        Phase::Comparing.enter(&pair.m.bdd, opts.meter.as_ref());
        Ok(Ok(pair))
    }

    /// The inputs of `domain` in each case.
    fn case_domains(
        &mut self,
        domain: &Domain,
        cases: &[ArchCase],
    ) -> Result<Vec<Case>, OutOfNodes> {
        let bdd = &mut self.m.bdd;
        let whole = domain.to_bdd(bdd)?;
        let fixed = ArchCase::fixed_tokens(cases);
        let mut out = Vec::with_capacity(cases.len());
        for &arch in cases {
            let domain = match arch {
                ArchCase::Any => whole,
                ArchCase::Token(t) => bdd.restrict(whole, |v| {
                    let (word, bit) = symbolic::word_bit_of(v);
                    (word == symbolic::WORD_ARCH).then_some(t >> bit & 1 == 1)
                })?,
                ArchCase::Rest => {
                    let tokens = symbolic::bitvec::value_set(bdd, symbolic::WORD_ARCH, &fixed)?;
                    bdd.and_not(whole, tokens)?
                }
            };
            out.push(Case {
                arch,
                domain,
                classes: [Vec::new(), Vec::new()],
                out: None,
            });
        }
        Ok(out)
    }

    /// Sets the machine's knowledge of the arch word to case `case`'s.
    fn enter(&mut self, case: usize) {
        match self.cases[case].arch {
            ArchCase::Token(t) => self.m.set_known(symbolic::WORD_ARCH, t),
            ArchCase::Any | ArchCase::Rest => self.m.set_unknown(symbolic::WORD_ARCH),
        }
    }

    /// Why the machine gave up.
    fn reason(&self, stop: Option<Stopped>) -> UnknownReason {
        let time = || UnknownReason::Time {
            limit_ms: self
                .budget
                .time_limit
                .map_or(0, |t| t.as_millis().min(u64::MAX as u128) as u64),
        };
        match (stop, self.m.bdd.exhausted()) {
            (Some(Stopped::States(limit)), _) => UnknownReason::States { limit },
            (Some(Stopped::Time), _) | (_, Some(Limit::Time)) => time(),
            (_, Some(Limit::Memory(limit_bytes))) => UnknownReason::Memory { limit_bytes },
            (_, Some(Limit::Nodes(limit))) => UnknownReason::BddNodes { limit },
            (_, Some(Limit::Steps(limit))) => UnknownReason::BddSteps { limit },
            // Strict exploration only approximates when a BDD budget ran out.
            (_, None) => UnknownReason::BddNodes {
                limit: self.budget.max_bdd_nodes,
            },
        }
    }

    /// The 32 output bits of each program in case `case` (see the module docs).
    fn outputs(&mut self, case: usize) -> Result<[[Node; 32]; 2], OutOfNodes> {
        if let Some(out) = self.cases[case].out {
            return Ok(out);
        }
        let mut out = [[FALSE; 32]; 2];
        for (side, out) in out.iter_mut().enumerate() {
            for &(value, cond) in &self.cases[case].classes[side] {
                let bits = self.m.bits_of(value).ok_or(OutOfNodes)?;
                for (o, &bit) in out.iter_mut().zip(&bits) {
                    let here = self.m.bdd.and(cond, bit)?;
                    *o = self.m.bdd.or(*o, here)?;
                }
            }
        }
        self.cases[case].out = Some(out);
        Ok(out)
    }

    /// The inputs of case `case` on which the two outputs differ.
    fn difference(&mut self, case: usize) -> Result<Node, OutOfNodes> {
        let [a, b] = self.outputs(case)?;
        let mut d = FALSE;
        for (&x, &y) in a.iter().zip(&b) {
            if x != y {
                let differ = self.m.bdd.xor(x, y)?;
                d = self.m.bdd.or(d, differ)?;
            }
        }
        Ok(d)
    }

    /// An input on which the programs differ, if any, with its case: the smallest (in
    /// variable order) with the host's arch token, else with a token one of the filters
    /// compares with, else the smallest of all. Real arch tokens make counterexamples
    /// readable (and give them the byte order of a real machine). [`arch_cases`] puts the
    /// cases in that order, so the first case with a difference has it.
    fn first_difference(&mut self) -> Result<Option<(usize, crate::bpf::Words)>, OutOfNodes> {
        for case in 0..self.cases.len() {
            let d = self.difference(case)?;
            if d == FALSE {
                continue;
            }
            self.enter(case);
            if self.cases[case].arch != ArchCase::Any {
                return Ok(self.m.witness(d).map(|w| (case, w)));
            }
            for t in host_first(tokens_checked(self.progs)) {
                let arch = crate::bpf::symbolic::bitvec::value_set(
                    &mut self.m.bdd,
                    symbolic::WORD_ARCH,
                    &[t],
                )?;
                let here = self.m.bdd.and(d, arch)?;
                if here != FALSE {
                    return Ok(self.m.witness(here).map(|w| (case, w)));
                }
            }
            return Ok(self.m.witness(d).map(|w| (case, w)));
        }
        Ok(None)
    }

    /// The value the symbolic result of case `case` says program `side` returns on `data`
    /// (an input of that case).
    fn symbolic_value(&mut self, case: usize, side: Side, data: &SeccompData) -> Option<u32> {
        let out = self.outputs(case).ok()?[side as usize];
        let words = data.words();
        let value_of = |v| {
            let (w, bit) = symbolic::word_bit_of(v);
            words[w] >> bit & 1 == 1
        };
        Some(out.iter().enumerate().fold(0u32, |acc, (i, &n)| {
            acc | (self.m.bdd.eval(n, value_of) as u32) << i
        }))
    }

    /// Runs program `side` on `data` (an input of case `case`) with the interpreter and checks
    /// the symbolic result agrees; returns the interpreter's value.
    fn confirm(
        &mut self,
        case: usize,
        side: Side,
        data: &SeccompData,
    ) -> Result<RetVal, VerifyError> {
        let prog = self.progs[side as usize];
        let concrete = interp::eval(prog, data).map_err(|e| VerifyError::Disagreement {
            side,
            data: *data,
            symbolic: "a return".into(),
            interpreter: e.to_string(),
        })?;
        match self.symbolic_value(case, side, data) {
            Some(v) if v == concrete.0 => Ok(concrete),
            other => Err(VerifyError::Disagreement {
                side,
                data: *data,
                symbolic: other.map_or("no value (budget)".into(), |v| RetVal(v).to_string()),
                interpreter: concrete.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests;
