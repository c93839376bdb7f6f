//! The cost model: how many instructions a filter runs per syscall of a workload, with and
//! without the kernel's allow cache, and its longest path.
//!
//! - **Path length** of a syscall `(arch, nr)`: the most instructions executed (the final `ret`
//!   included) over all values of the words the workload does not record (IP and arguments).
//!   `strace -c` gives counts only, so a syscall whose decision depends on arguments is charged
//!   its longest path: the assumption is stated in every report. Both sides of a test on an
//!   unknown word are assumed possible unless the bits that can still be set decide it
//!   (`and #0` makes 0, `and #m` keeps `m`'s bits), so the figure is an upper bound when two
//!   tests contradict each other (filters from compilers do not do that).
//! - **Expected cost without the cache** (kernels before 5.11):
//!   `Σ weight × path length / Σ weight`.
//! - **Expected cost with the cache** (5.11+): the same, but a syscall the kernel caches costs 0
//!   (the kernel builds its bitmap when the filter is attached, by emulating the filter for
//!   every number, and never runs the filter for a cached one: not even its first call).
//! - **Worst-case path**: the longest path over every input, found in one pass that keeps, for
//!   each state, the values of `arch` and `nr` its inputs may have and splits them at every
//!   comparison of either with a constant ([`worst_case_path`]). On filters that compare
//!   `arch` and `nr` only with constants (every compiler's) this equals running one input per
//!   range of values on which every such comparison goes the same way (`tests/worst_path.rs`
//!   checks it on the corpus); after arithmetic on `nr` it follows both sides of a test.
//! - **Workload samples** ([`workload_costs`]): a workload entry may carry argument values
//!   (`"args": [null, "0xae80"]`). Known values become constants when the filter loads them
//!   ([`evaluate`]), so a syscall whose arguments the workload gives is charged its exact path;
//!   only the words still unknown are maximized over. Every sample says which of the three
//!   cases it is ([`Assumption`]).

use super::intervals::{IntervalSet, Range};
use super::weights::Weights;
use crate::arch::Arch;
use crate::bpf::cache::{CacheBitmap, CacheStatus, KernelCache, KernelVersion};
use crate::bpf::data::{Endian, Field, NUM_WORDS};
use crate::bpf::insn::*;
use crate::bpf::RetVal;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// Most distinct register states tracked at one instruction before they are merged into one
/// (where everything is unknown, so both sides of later tests count: still an upper bound).
const MAX_STATES_PER_PC: usize = 64;

/// [`MAX_STATES_PER_PC`] for [`worst_case_path`], whose one pass carries every input's state
/// where [`evaluate`] carries one syscall's.
const WORST_PATH_MAX_STATES: usize = 1024;

/// How many times the cap states may pile up at an instruction, from many jumps into it,
/// before they are capped there (instead of when the instruction is reached).
const PILE_UP: usize = 4;

/// Most states [`worst_case_path`]'s exploration keeps waiting at once (about 200 MB) before
/// it starts again without cells (and with [`MAX_STATES_PER_PC`]).
const WORST_PATH_MAX_WAITING: usize = 1 << 20;

/// Most intervals the cells of [`worst_case_path`]'s exploration hold (about 64 MB) before it
/// starts again without them. Compilers' filters need tens of thousands (libseccomp's linear
/// Docker filter on three ABIs: 32 373), a random 4 096-instruction program about 100 000.
const WORST_PATH_MAX_RANGES: usize = 1 << 22;

/// What the abstract state knows about a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Val {
    Unknown,
    Const(u32),
    /// Unknown, but no bit outside the mask is set (never 0 or all ones: those are `Const(0)`
    /// and `Unknown`). libseccomp's masked compares (`and #m; jeq #v`) need it: with `m = 0`
    /// for the high half of a 32-bit mask, the test always succeeds, and counting its other
    /// side would add a path no input takes.
    Bits(u32),
    /// Input word 0 (`nr`) or 1 (`arch`), whose values are those of the state's [`Cell`]
    /// (only [`worst_case_path`] makes these: [`evaluate`] knows both words).
    Word(u8),
}

impl Val {
    /// The bits that may be set.
    fn possible(self) -> u32 {
        match self {
            Val::Unknown | Val::Word(_) => u32::MAX,
            Val::Const(c) | Val::Bits(c) => c,
        }
    }

    fn from_bits(mask: u32) -> Val {
        match mask {
            0 => Val::Const(0),
            u32::MAX => Val::Unknown,
            m => Val::Bits(m),
        }
    }
}

/// `a op b` for the abstract values; exact on constants, sound otherwise.
fn alu_abstract(op: u16, a: Val, b: Val) -> Val {
    if let (Val::Const(a), Val::Const(b)) = (a, b) {
        return Val::Const(alu_result(op, a, b));
    }
    let (pa, pb) = (a.possible(), b.possible());
    match (op, b) {
        (BPF_AND, _) => Val::from_bits(pa & pb),
        (BPF_OR, _) if a == Val::Const(u32::MAX) || b == Val::Const(u32::MAX) => {
            Val::Const(u32::MAX)
        }
        (BPF_OR | BPF_XOR, _) => Val::from_bits(pa | pb),
        (BPF_MUL, _) if a == Val::Const(0) || b == Val::Const(0) => Val::Const(0),
        (BPF_RSH, Val::Const(k)) => Val::from_bits(pa.wrapping_shr(k & 31)),
        (BPF_LSH, Val::Const(k)) => Val::from_bits(pa.wrapping_shl(k & 31)),
        _ => Val::Unknown,
    }
}

/// The outcome of the jump `a op k` when every value `a` can have gives the same one.
fn decide_jump(op: u16, a: Val, k: Val) -> Option<bool> {
    let Val::Const(k) = k else {
        return None;
    };
    if let Val::Const(a) = a {
        return Some(match op {
            BPF_JEQ => a == k,
            BPF_JGT => a > k,
            BPF_JGE => a >= k,
            _ => a & k != 0,
        });
    }
    // A has no bit outside `m`, so A <= m.
    let m = a.possible();
    match op {
        BPF_JEQ => (k & !m != 0).then_some(false),
        BPF_JGT => (m <= k).then_some(false),
        BPF_JGE if k == 0 => Some(true),
        BPF_JGE => (m < k).then_some(false),
        _ => (k & m == 0).then_some(false),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Regs {
    a: Val,
    x: Val,
    m: [Val; 16],
}

const UNKNOWN: Regs = Regs {
    a: Val::Unknown,
    x: Val::Unknown,
    m: [Val::Unknown; 16],
};

/// The fewest and most instructions `prog` (valid) executes for syscall `nr` with arch token
/// `token`, over all values of the other words (see the module documentation).
pub fn path_lengths(prog: &Program, token: u32, nr: u32) -> (u32, u32) {
    path_lengths_with(prog, token, nr, &[None; 6])
}

/// [`path_lengths`] with the arguments that are `Some` known: the fewest and most instructions
/// over all values of the unknown arguments and the instruction pointer.
pub fn path_lengths_with(
    prog: &Program,
    token: u32,
    nr: u32,
    args: &[Option<u64>; 6],
) -> (u32, u32) {
    let e = evaluate(prog, token, nr, args);
    (e.min, e.max)
}

/// What a filter does for one syscall when some argument values are known.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PathEval {
    /// Fewest instructions executed, the final `ret` (or the `div` by zero) included.
    pub min: u32,
    /// Most instructions executed: what a call is charged.
    pub max: u32,
    /// Every value some path returns (a division by X == 0 returns 0). Both sides of a test on
    /// an unknown word count, so contradicting tests can add a value no input gets.
    pub returns: BTreeSet<RetVal>,
    /// False when a path ends in `ret a` with A unknown (its value is not listed).
    pub returns_complete: bool,
    /// Bit `i` set when word `i` of `seccomp_data` (byte offset `4*i`) is loaded on some path
    /// without being known: the IP, or an argument half the caller did not give.
    pub unknown_words_read: u16,
}

impl PathEval {
    /// The unknown fields loaded, named for the byte order of arch token `token`.
    pub fn unknown_fields(&self, token: u32) -> Vec<Field> {
        (0..NUM_WORDS as u32)
            .filter(|w| self.unknown_words_read & (1 << w) != 0)
            .filter_map(|w| Field::at_offset(4 * w, Endian::of_arch_token(token)))
            .collect()
    }
}

/// The 16 words of `seccomp_data` a caller knows: `nr`, `arch` and the given arguments, each
/// half at the offset the byte order of `token` puts it (big-endian machines have the high
/// half first, see [`crate::bpf::data`]).
fn known_words(token: u32, nr: u32, args: &[Option<u64>; 6]) -> [Option<u32>; NUM_WORDS] {
    let mut words = [None; NUM_WORDS];
    words[0] = Some(nr);
    words[1] = Some(token);
    let endian = Endian::of_arch_token(token);
    for (index, value) in args.iter().enumerate() {
        let Some(v) = *value else { continue };
        for (high, half) in [(false, v as u32), (true, (v >> 32) as u32)] {
            let field = Field::Arg {
                index: index as u8,
                high,
            };
            words[(field.offset(endian) / 4) as usize] = Some(half);
        }
    }
    words
}

/// Runs `prog` (valid) for syscall `nr` of arch token `token` with the arguments that are
/// `Some` known, over all values of the rest (see the module documentation).
pub fn evaluate(prog: &Program, token: u32, nr: u32, args: &[Option<u64>; 6]) -> PathEval {
    let words = known_words(token, nr, args);
    // One run decides it when no unknown word is loaded on the way: the path is then the same
    // whatever the unknown words hold. That is the usual case for a workload's sample (it gives
    // the arguments its filter reads), and one run costs far less than an exploration, which
    // keeps states along a chain of thousands of argument tests.
    let unknown = (0..NUM_WORDS)
        .filter(|&w| words[w].is_none())
        .fold(0u16, |mask, w| mask | 1 << w);
    if let Ok(run) = crate::bpf::interp::outcome_words(prog, &words.map(|w| w.unwrap_or(0))) {
        if run.words_read & unknown == 0 {
            let steps = run.steps as u32;
            return PathEval {
                min: steps,
                max: steps,
                returns: BTreeSet::from([run.ret]),
                returns_complete: true,
                unknown_words_read: 0,
            };
        }
    }
    evaluate_by_exploring(prog, token, nr, &words)
}

/// [`evaluate`] by exploring every path, for the `words` known.
fn evaluate_by_exploring(
    prog: &Program,
    token: u32,
    nr: u32,
    words: &[Option<u32>; NUM_WORDS],
) -> PathEval {
    let cell = Cell {
        nr: IntervalSet::range(nr, nr),
        arch: IntervalSet::range(token, token),
    };
    // One number and one token: loads of either are constants, nothing is split, and no
    // budget can run out.
    explore(prog, cell, words, MAX_STATES_PER_PC, None)
        .expect("an exploration without cells to split has no budget")
}

/// The longest path of `prog` (valid) over every input (see the module documentation).
///
/// One pass over the program, not one per range of `(arch, nr)` values: a state carries the
/// values of `nr` and `arch` its inputs may have (a `Cell`), and a comparison of a register
/// holding one of them with a constant splits the state's cell between the jump's two sides.
/// Instructions that do not look at `nr` or `arch` are run once for every input that reaches
/// them with the same registers, so a filter is explored in time proportional to its states,
/// where running it once per range (its `nr` tests times its `arch` tests) took minutes on a
/// random 4,096-instruction program. Example: `ld [nr]; jge #100, a, b` explores `a` with
/// `nr` in `100..=u32::MAX` and `b` with `0..=99`; a later `jeq #50` on the `a` side is
/// decided (not taken) without splitting. States that reach one instruction with the same
/// registers and the same length so far share one cell; past `WORST_PATH_MAX_STATES` (1024)
/// distinct ones there (a chain of more than a thousand syscalls jumping into one block that
/// tests `nr` again), they are merged and the figure becomes a bound (see `cap_states`), as it
/// does when the cells or the states waiting grow past their budgets (the exploration then
/// starts again with `nr` and `arch` unknown).
pub fn worst_case_path(prog: &Program) -> u32 {
    worst_case_path_within(prog, WORST_PATH_MAX_RANGES)
}

/// [`worst_case_path`], splitting cells until they hold `budget` ranges in all; past it, the
/// program is explored again with `nr` and `arch` unknown (both sides of every test of them:
/// a bound, as for a program without tests of either).
fn worst_case_path_within(prog: &Program, budget: usize) -> u32 {
    let every = || Cell {
        nr: IntervalSet::full(),
        arch: IntervalSet::full(),
    };
    let none = [None; NUM_WORDS];
    explore(prog, every(), &none, WORST_PATH_MAX_STATES, Some(budget))
        .or_else(|| explore(prog, every(), &none, MAX_STATES_PER_PC, None))
        .expect("an exploration without cells to split has no budget")
        .max
}

/// The values of `nr` and `arch` the inputs of one explored state may have.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Cell {
    nr: IntervalSet,
    arch: IntervalSet,
}

impl Cell {
    /// The set of input word `word` (0: `nr`, 1: `arch`).
    fn word(&self, word: u8) -> &IntervalSet {
        if word == 0 {
            &self.nr
        } else {
            &self.arch
        }
    }

    fn with_word(&self, word: u8, set: IntervalSet) -> Cell {
        let mut c = self.clone();
        *(if word == 0 { &mut c.nr } else { &mut c.arch }) = set;
        c
    }

    /// `v`, with an input word whose set holds one value made that constant, and one with more
    /// values unknown (what an ALU operation, a `ret a` or a comparison with X sees).
    fn resolve(&self, v: Val) -> Val {
        match v {
            Val::Word(w) => match self.word(w).ranges() {
                [(lo, hi)] if lo == hi => Val::Const(*lo),
                _ => Val::Unknown,
            },
            other => other,
        }
    }
}

/// The cells of one exploration, each stored once: states name theirs by index, so a state
/// is as cheap to hash and copy as its registers.
#[derive(Default)]
struct Cells {
    all: Vec<Cell>,
    index: HashMap<Cell, u32>,
    /// Intervals held by all cells so far (each cell is stored twice: 16 bytes an interval).
    ranges: usize,
    /// Each cell's `arch` set, as an index into `arch_sets` (so that states can be grouped by
    /// it without copying it).
    arch_of: Vec<u32>,
    arch_sets: Vec<IntervalSet>,
    arch_index: HashMap<IntervalSet, u32>,
}

impl Cells {
    fn id(&mut self, cell: Cell) -> u32 {
        if let Some(&i) = self.index.get(&cell) {
            return i;
        }
        let i = self.all.len() as u32;
        self.ranges += cell.nr.ranges().len() + cell.arch.ranges().len();
        let arch = match self.arch_index.get(&cell.arch) {
            Some(&a) => a,
            None => {
                let a = self.arch_sets.len() as u32;
                self.arch_sets.push(cell.arch.clone());
                self.arch_index.insert(cell.arch.clone(), a);
                a
            }
        };
        self.arch_of.push(arch);
        self.all.push(cell.clone());
        self.index.insert(cell, i);
        i
    }
}

/// States waiting at one instruction: registers and cell, with the fewest and most
/// instructions run to get there.
type Waiting = HashMap<(Regs, u32), (u32, u32)>;

/// Caps the states waiting at one instruction at `cap` ([`MAX_STATES_PER_PC`] for one
/// syscall, [`WORST_PATH_MAX_STATES`] for every input at once). States with the same
/// registers, the same longest path so far and the same `arch` values first become one whose
/// `nr` values are both states' (the longest path from there is the longer of theirs, so the
/// worst path does not change; the fewest instructions becomes the smaller, an under-estimate
/// [`worst_case_path`] does not use, and [`evaluate`]'s states never share registers). Past
/// the cap still, everything becomes one state where nothing is known: both sides of every
/// later test count, so the figures stay bounds.
fn cap_states(states: Waiting, cells: &mut Cells, cap: usize) -> Waiting {
    if states.len() <= cap {
        return states;
    }
    // (registers, longest so far, `arch` set) → (`nr` ranges, fewest so far).
    let mut joined: HashMap<(Regs, u32, u32), (Vec<Range>, u32)> = HashMap::default();
    for ((regs, cell), (lo, hi)) in states {
        let e = joined
            .entry((regs, hi, cells.arch_of[cell as usize]))
            .or_insert((Vec::new(), u32::MAX));
        e.0.extend_from_slice(cells.all[cell as usize].nr.ranges());
        e.1 = e.1.min(lo);
    }
    let mut out = Waiting::default();
    if joined.len() <= cap {
        for ((regs, hi, arch), (nr, lo)) in joined {
            let cell = Cell {
                nr: IntervalSet::from_ranges(nr),
                arch: cells.arch_sets[arch as usize].clone(),
            };
            // Two groups can come to the same cell (`nr` 1 and 2 in one, 1..=2 in another,
            // with other lengths): the same inputs and registers, so the same way on, and the
            // longer length is the one to keep.
            let e = out.entry((regs, cells.id(cell))).or_insert((u32::MAX, 0));
            e.0 = e.0.min(lo);
            e.1 = e.1.max(hi);
        }
        return out;
    }
    let (mut nr, mut arch_ids, mut lo, mut hi) = (Vec::new(), BTreeSet::new(), u32::MAX, 0);
    for ((_, h, a), (n, l)) in joined {
        nr.extend(n);
        arch_ids.insert(a);
        lo = lo.min(l);
        hi = hi.max(h);
    }
    let arch: Vec<Range> = arch_ids
        .into_iter()
        .flat_map(|a| cells.arch_sets[a as usize].ranges().to_vec())
        .collect();
    let cell = Cell {
        nr: IntervalSet::from_ranges(nr),
        arch: IntervalSet::from_ranges(arch),
    };
    out.insert((UNKNOWN, cells.id(cell)), (lo, hi));
    out
}

/// Runs `prog` (valid) from its first instruction for every input whose `nr` and `arch` are
/// in `start` and whose other words are `known` where `Some` (words 0 and 1 come from the
/// cell), exploring both sides of every test the known values do not decide.
///
/// With `split` (a budget of intervals), a register loaded with `nr` or `arch` is tracked and
/// tests of it split the state's cell; `None` once the cells hold more intervals than the
/// budget, or more than [`WORST_PATH_MAX_WAITING`] states wait at once (an adversarial
/// program could otherwise fill memory with them). Without it, `nr` and `arch` are constants
/// where the start cell holds one value and unknown otherwise.
fn explore(
    prog: &Program,
    start: Cell,
    known: &[Option<u32>; NUM_WORDS],
    cap: usize,
    split: Option<usize>,
) -> Option<PathEval> {
    let mut returns = BTreeSet::new();
    let mut returns_complete = true;
    let mut unknown_words_read = 0u16;
    let insns = &prog.insns;
    let n = insns.len();
    let mut cells = Cells::default();
    let mut pending: BTreeMap<usize, Waiting> = BTreeMap::new();
    let initial = Regs {
        a: Val::Const(0),
        x: Val::Const(0),
        ..UNKNOWN
    };
    pending
        .entry(0)
        .or_default()
        .insert((initial, cells.id(start)), (0, 0));
    let (mut lo, mut hi) = (u32::MAX, 0u32);
    let mut finish = |steps: (u32, u32), ret: Option<RetVal>, returns: &mut BTreeSet<RetVal>| {
        lo = lo.min(steps.0 + 1);
        hi = hi.max(steps.1 + 1);
        match ret {
            Some(v) => {
                returns.insert(v);
            }
            None => returns_complete = false,
        }
    };
    // States waiting in `pending` (the first one now), for the budget of an exploration with
    // cells.
    let mut alive = 1usize;
    while let Some((pc, states)) = pending.pop_first() {
        if split.is_some() {
            alive -= states.len();
        }
        if pc >= n {
            continue;
        }
        let states = cap_states(states, &mut cells, cap);
        if split.is_some_and(|budget| cells.ranges > budget) {
            return None;
        }
        let insn = insns[pc];
        let code = insn.code;
        // Where this instruction's states go (a return: nowhere), and how many wait there.
        let next = match prog.jump_targets(pc) {
            Some((t, f)) => [Some(t), (f != t).then_some(f)],
            None if insn.is_ret() => [None, None],
            None => [Some(pc + 1), None],
        };
        let waiting = |pending: &BTreeMap<usize, Waiting>| -> usize {
            next.iter()
                .flatten()
                .map(|to| pending.get(to).map_or(0, HashMap::len))
                .sum()
        };
        // Counted only where a budget reads it (not in `evaluate`, run per syscall).
        let before = if split.is_some() {
            waiting(&pending)
        } else {
            0
        };
        for ((regs, cell_id), steps) in states {
            let go = |to: usize, r: Regs, cell: u32, pending: &mut BTreeMap<usize, Waiting>| {
                let e = pending
                    .entry(to)
                    .or_default()
                    .entry((r, cell))
                    .or_insert((u32::MAX, 0));
                e.0 = e.0.min(steps.0 + 1);
                e.1 = e.1.max(steps.1 + 1);
            };
            let cell = &cells.all[cell_id as usize];
            if insn.is_ret() {
                let value = match (rval(code), cell.resolve(regs.a)) {
                    (BPF_A, Val::Const(a)) => Some(RetVal(a)),
                    (BPF_A, _) => None,
                    _ => Some(RetVal(insn.k)),
                };
                finish(steps, value, &mut returns);
                continue;
            }
            if insn.is_ja() {
                go(pc + 1 + insn.k as usize, regs, cell_id, &mut pending);
                continue;
            }
            if insn.is_conditional_jump() {
                let (t, f) = (pc + 1 + insn.jt as usize, pc + 1 + insn.jf as usize);
                if let (Val::Word(w), BPF_K) = (regs.a, src(code)) {
                    // A holds `nr` or `arch`: each side gets the values that take it.
                    let set = cell.word(w);
                    // A test the set decides keeps the cell as it is (no copy to hash: such
                    // tests are common, and cells can hold thousands of ranges).
                    match set.decide(op(code), insn.k) {
                        Some(taken) => go(if taken { t } else { f }, regs, cell_id, &mut pending),
                        None => match set.split(op(code), insn.k) {
                            Some((taken, not_taken)) => {
                                let (taken, not_taken) =
                                    (cell.with_word(w, taken), cell.with_word(w, not_taken));
                                let taken = cells.id(taken);
                                go(t, regs, taken, &mut pending);
                                let not_taken = cells.id(not_taken);
                                go(f, regs, not_taken, &mut pending);
                            }
                            // A `jset` that would cut the set into too many pieces: both
                            // sides with every value.
                            None => {
                                go(t, regs, cell_id, &mut pending);
                                go(f, regs, cell_id, &mut pending);
                            }
                        },
                    }
                    continue;
                }
                let k = if src(code) == BPF_K {
                    Val::Const(insn.k)
                } else {
                    cell.resolve(regs.x)
                };
                match decide_jump(op(code), cell.resolve(regs.a), k) {
                    Some(taken) => go(if taken { t } else { f }, regs, cell_id, &mut pending),
                    None => {
                        go(t, regs, cell_id, &mut pending);
                        go(f, regs, cell_id, &mut pending);
                    }
                }
                continue;
            }
            let mut r = regs;
            let slot = (insn.k & 15) as usize;
            match class(code) {
                BPF_LD => {
                    r.a = match mode(code) {
                        BPF_ABS => {
                            let word = (insn.k / 4) as usize;
                            if word < 2 && insn.k.is_multiple_of(4) {
                                // `nr` or `arch`: a constant when the cell holds one value.
                                match cell.resolve(Val::Word(word as u8)) {
                                    Val::Const(v) => Val::Const(v),
                                    _ if split.is_some() => Val::Word(word as u8),
                                    _ => Val::Unknown,
                                }
                            } else {
                                match known.get(word).copied().flatten() {
                                    Some(v) if insn.k.is_multiple_of(4) => Val::Const(v),
                                    _ => {
                                        if word < NUM_WORDS {
                                            unknown_words_read |= 1 << word;
                                        }
                                        Val::Unknown
                                    }
                                }
                            }
                        }
                        BPF_IMM => Val::Const(insn.k),
                        BPF_LEN => Val::Const(64),
                        _ => r.m[slot],
                    }
                }
                BPF_LDX => {
                    r.x = match mode(code) {
                        BPF_IMM => Val::Const(insn.k),
                        BPF_LEN => Val::Const(64),
                        _ => r.m[slot],
                    }
                }
                BPF_ST => r.m[slot] = r.a,
                BPF_STX => r.m[slot] = r.x,
                BPF_ALU => {
                    let operand = if op(code) == BPF_NEG {
                        Val::Const(0)
                    } else if src(code) == BPF_X {
                        cell.resolve(r.x)
                    } else {
                        Val::Const(insn.k)
                    };
                    if op(code) == BPF_DIV && src(code) == BPF_X {
                        match operand {
                            // Division by zero: the filter stops here.
                            Val::Const(0) => {
                                finish(steps, Some(RetVal(0)), &mut returns);
                                continue;
                            }
                            Val::Const(_) => {}
                            _ => finish(steps, Some(RetVal(0)), &mut returns),
                        }
                    }
                    r.a = alu_abstract(op(code), cell.resolve(r.a), operand);
                }
                _ if miscop(code) == BPF_TAX => r.x = r.a,
                _ => r.a = r.x,
            }
            go(pc + 1, r, cell_id, &mut pending);
        }
        // Many jumps into one instruction pile up states there before it is reached: capped
        // as they come, past a few times the cap, so that no instruction holds more.
        for to in next.iter().flatten() {
            if let Some(w) = pending.get_mut(to) {
                if w.len() > PILE_UP * cap {
                    *w = cap_states(std::mem::take(w), &mut cells, cap);
                }
            }
        }
        if split.is_some() {
            alive = alive + waiting(&pending) - before;
            if alive > WORST_PATH_MAX_WAITING {
                return None;
            }
        }
    }
    if lo == u32::MAX {
        (lo, hi) = (0, 0);
    }
    Some(PathEval {
        min: lo,
        max: hi,
        returns,
        returns_complete,
        unknown_words_read,
    })
}

/// The kernel whose allow cache applies to syscalls of `arch` (64-bit kernels run the 32-bit
/// ABIs as compat).
pub fn kernel_arch(arch: Arch) -> Arch {
    match arch {
        Arch::X86 | Arch::X32 => Arch::X86_64,
        Arch::Arm => Arch::Aarch64,
        Arch::Ppc => Arch::Ppc64,
        other => other,
    }
}

/// The allow caches of the kernels that run `arches`, after attaching one program.
#[derive(Debug, Clone)]
pub struct Caches {
    /// `(kernel arch, bitmap)`.
    bitmaps: Vec<(Arch, CacheBitmap)>,
}

impl Caches {
    /// The bitmaps of kernel `version` for every kernel one of `arches` runs on, with `prog`
    /// attached; none before 5.11.
    pub fn new(prog: &Program, arches: &[Arch], version: KernelVersion) -> Caches {
        Caches::for_stack(std::slice::from_ref(prog), arches, version)
    }

    /// The bitmaps after attaching every filter of a stack, oldest first: the kernel clears
    /// from the previous filters' bitmap what each new one does not allow by number alone,
    /// so a syscall is cached only when every filter allows it so.
    pub fn for_stack(filters: &[Program], arches: &[Arch], version: KernelVersion) -> Caches {
        let mut kernels: Vec<Arch> = arches.iter().map(|&a| kernel_arch(a)).collect();
        kernels.sort();
        kernels.dedup();
        let bitmaps = kernels
            .into_iter()
            .filter_map(|k| Some((k, CacheBitmap::new(KernelCache::for_kernel(k, version)?))))
            .map(|(k, b)| (k, filters.iter().fold(b, |b, f| b.attach(f))))
            .collect();
        Caches { bitmaps }
    }

    /// Whether `(token, nr)` skips the filter.
    pub fn is_cached(&self, token: u32, nr: u32) -> bool {
        let Some(arch) = Arch::of_data(token, nr) else {
            return false;
        };
        let kernel = kernel_arch(arch);
        self.bitmaps
            .iter()
            .find(|(k, _)| *k == kernel)
            .is_some_and(|(_, b)| b.is_cached(token, nr))
    }

    /// Whether `(token, nr)` skips the filter, and if not, why (the kernel's bitmap for it, the
    /// instruction that stops the emulation); [`CacheStatus::NoBitmap`] when none of the
    /// kernels modelled keeps a bitmap for it (including every kernel before 5.11).
    pub fn status(&self, token: u32, nr: u32) -> CacheStatus {
        let Some(arch) = Arch::of_data(token, nr) else {
            return CacheStatus::NoBitmap;
        };
        let kernel = kernel_arch(arch);
        self.bitmaps
            .iter()
            .find(|(k, _)| *k == kernel)
            .map_or(CacheStatus::NoBitmap, |(_, b)| b.status(token, nr))
    }

    /// Every bitmap: `(name, token, numbers the filter lets the kernel cache)`: as
    /// [`sets`](Self::sets) without the kernel's passthroughs (`uretprobe`/`uprobe` on
    /// x86_64, set whatever the filter does), so a count says what the filter does, as
    /// `secopt analyze` counts it.
    pub fn filter_sets(&self) -> Vec<(&'static str, u32, Vec<u32>)> {
        self.per_target(CacheBitmap::cached_by_filter)
    }

    /// Every bitmap: `(name, token, cached numbers)`, as the kernel sets them.
    pub fn sets(&self) -> Vec<(&'static str, u32, Vec<u32>)> {
        self.per_target(CacheBitmap::cached_numbers)
    }

    /// `(name, token, numbers(bitmap, token))` for every target of every bitmap.
    fn per_target(
        &self,
        numbers: fn(&CacheBitmap, u32) -> Vec<u32>,
    ) -> Vec<(&'static str, u32, Vec<u32>)> {
        self.bitmaps
            .iter()
            .flat_map(|(_, b)| {
                b.kernel()
                    .targets()
                    .map(|t| (t.name, t.token, numbers(b, t.token)))
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// Expected instructions per syscall of `weights` for `prog`, without and with the allow cache
/// (`caches`); `(0, 0)` for empty weights. Calls the weights give argument values for are
/// charged their path with those values (as [`workload_costs`] does), the others their
/// longest path.
pub fn expected_costs(prog: &Program, weights: &Weights, caches: &Caches) -> (f64, f64) {
    let total = weights.total();
    if total == 0.0 {
        return (0.0, 0.0);
    }
    let (mut without, mut with) = (0.0, 0.0);
    for (token, nr, w) in weights.iter() {
        if w == 0.0 {
            continue;
        }
        // Calls with argument values: their own path (the longest over the words they do not
        // give); the rest: the longest path.
        let mut charged = 0.0;
        let mut sampled = 0.0;
        for (args, count) in weights.samples(token, nr) {
            charged += count * evaluate(prog, token, nr, args).max as f64;
            sampled += count;
        }
        let rest = (w - sampled).max(0.0);
        if rest > 0.0 {
            charged += rest * path_lengths(prog, token, nr).1 as f64;
        }
        without += charged;
        if !caches.is_cached(token, nr) {
            with += charged;
        }
    }
    (without / total, with / total)
}

/// Calls of one syscall with the argument values a workload gives for them.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub token: u32,
    /// As `seccomp_data.nr` carries it (x32 numbers include bit 30).
    pub nr: u32,
    /// How many calls (finite, non-negative).
    pub count: f64,
    /// `None`: the workload does not say.
    pub args: [Option<u64>; 6],
}

/// How a sample's path length was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Assumption {
    /// No path for this syscall reads an argument or the IP: one length, exact.
    NoArgumentsRead,
    /// The paths read arguments, and the workload gives every one they read: exact.
    WorkloadArguments,
    /// Some path reads a word the workload does not give: charged the longest path over its
    /// values (an upper bound; exact when the filter never tests contradicting conditions).
    LongestPath,
}

/// The cost of one sample.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SampleCost {
    /// The paths with the sample's argument values known.
    pub eval: PathEval,
    pub assumption: Assumption,
    /// Whether the kernel's allow cache skips the filter for this syscall (then its arguments
    /// do not matter: the cache is looked up by number).
    pub cached: bool,
    /// Instructions charged per call without the cache: `eval.max`.
    pub cost_without_cache: u32,
    /// Instructions charged per call with the cache: 0 when cached, else `eval.max`.
    pub cost_with_cache: u32,
}

/// The costs of a workload.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkloadCosts {
    /// One per sample, in order.
    pub samples: Vec<SampleCost>,
    /// Total number of calls.
    pub calls: f64,
    /// Expected instructions per call without the cache (0 when there are no calls).
    pub expected_without_cache: f64,
    /// Expected instructions per call with the cache.
    pub expected_with_cache: f64,
}

/// The cost of every sample and the expected instructions per call, with and without the
/// allow cache. For samples without argument values this is [`expected_costs`] with the same
/// counts.
pub fn workload_costs(prog: &Program, samples: &[Sample], caches: &Caches) -> WorkloadCosts {
    let mut reads_args = ReadsArgs::default();
    workload_costs_with(samples, caches, |s| {
        let eval = evaluate(prog, s.token, s.nr, &s.args);
        let reads_given_args = eval.unknown_words_read == 0
            && s.args.iter().any(Option::is_some)
            && reads_args.get(0, prog, s.token, s.nr);
        (eval, reads_given_args)
    })
}

/// Whether a filter reads an argument word on some path of a call, per filter (an index in
/// a stack), arch token and number: the same for every sample of that call, and costly to
/// find on a long chain of argument tests, which every path is explored for. Workloads hold
/// tens of thousands of argument samples of a few calls.
#[derive(Default)]
struct ReadsArgs(std::collections::HashMap<(usize, u32, u32), bool>);

impl ReadsArgs {
    fn get(&mut self, filter: usize, prog: &Program, token: u32, nr: u32) -> bool {
        *self
            .0
            .entry((filter, token, nr))
            .or_insert_with(|| evaluate(prog, token, nr, &[None; 6]).unknown_words_read != 0)
    }
}

/// [`workload_costs`] of a stack of filters (oldest first) as the kernel runs it: every
/// filter on each call the cache does not skip, so the instructions charged are the filters'
/// summed (`caches` should be [`Caches::for_stack`] of the same filters). What the stack
/// returns comes from `decisions`, one program deciding as the whole stack
/// ([`crate::bpf::stack::as_one_program`]); its own path lengths are not the stack's.
///
/// Example: a filter of 3 instructions on every path under one of 5 charges an uncached call
/// 8, whatever the joined program's length for it.
pub fn stack_workload_costs(
    filters: &[Program],
    decisions: &Program,
    samples: &[Sample],
    caches: &Caches,
) -> WorkloadCosts {
    let mut reads_args = ReadsArgs::default();
    workload_costs_with(samples, caches, |s| {
        let decided = evaluate(decisions, s.token, s.nr, &s.args);
        let mut eval = PathEval {
            min: 0,
            max: 0,
            returns: decided.returns,
            returns_complete: decided.returns_complete,
            unknown_words_read: 0,
        };
        let mut reads_given_args = false;
        for (i, f) in filters.iter().enumerate() {
            let each = evaluate(f, s.token, s.nr, &s.args);
            eval.min += each.min;
            eval.max += each.max;
            eval.unknown_words_read |= each.unknown_words_read;
            reads_given_args |=
                s.args.iter().any(Option::is_some) && reads_args.get(i, f, s.token, s.nr);
        }
        reads_given_args &= eval.unknown_words_read == 0;
        (eval, reads_given_args)
    })
}

/// The sums of [`workload_costs`] over `samples`, each evaluated by `eval` into its path and
/// whether it reads arguments the sample gives (and would otherwise be charged its longest).
fn workload_costs_with(
    samples: &[Sample],
    caches: &Caches,
    mut eval: impl FnMut(&Sample) -> (PathEval, bool),
) -> WorkloadCosts {
    let mut costs = Vec::with_capacity(samples.len());
    let (mut calls, mut without, mut with) = (0.0, 0.0, 0.0);
    for s in samples {
        let (eval, reads_given_args) = eval(s);
        let assumption = if eval.unknown_words_read != 0 {
            Assumption::LongestPath
        } else if reads_given_args {
            Assumption::WorkloadArguments
        } else {
            Assumption::NoArgumentsRead
        };
        let cached = caches.is_cached(s.token, s.nr);
        let cost_without_cache = eval.max;
        let cost_with_cache = if cached { 0 } else { eval.max };
        calls += s.count;
        without += s.count * cost_without_cache as f64;
        with += s.count * cost_with_cache as f64;
        costs.push(SampleCost {
            eval,
            assumption,
            cached,
            cost_without_cache,
            cost_with_cache,
        });
    }
    let per_call = |x: f64| if calls > 0.0 { x / calls } else { 0.0 };
    WorkloadCosts {
        samples: costs,
        calls,
        expected_without_cache: per_call(without),
        expected_with_cache: per_call(with),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::RetVal;

    fn jeq(k: u32, jt: u8, jf: u8) -> Insn {
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf)
    }

    #[test]
    fn path_lengths_by_hand() {
        // 0 ld [0]; 1 jeq #41 → 2 : 5; 2 ld [16]; 3 jeq #16 → 4 : 5; 4 ret ERRNO; 5 ret ALLOW
        let p = Program::new(vec![
            Insn::ld_abs(0),
            jeq(41, 0, 3),
            Insn::ld_abs(16),
            jeq(16, 0, 1),
            Insn::ret(RetVal::errno(1).0),
            Insn::ret(RetVal::ALLOW.0),
        ]);
        // socket: 0,1,2,3,4 or 0,1,2,3,5: 5 either way. read: 0,1,5: 3.
        assert_eq!(path_lengths(&p, 0xc000_003e, 41), (5, 5));
        assert_eq!(path_lengths(&p, 0xc000_003e, 0), (3, 3));
        assert_eq!(worst_case_path(&p), 5);
        // Weighted: 3 socket calls and 1 read: (3×5 + 1×3) / 4 = 4.5 without the cache; read
        // is cached on x86_64 (ALLOW using only nr), socket is not: 15 / 4 = 3.75 with it.
        let mut w = Weights::new();
        w.add(0xc000_003e, 41, 3.0).unwrap();
        w.add(0xc000_003e, 0, 1.0).unwrap();
        let caches = Caches::new(&p, &[Arch::X86_64], KernelVersion::new(6, 18));
        assert_eq!(expected_costs(&p, &w, &caches), (4.5, 3.75));
    }

    #[test]
    fn division_by_zero_stops_the_path() {
        // ldx #0; div x; ret #1  → runs 2 instructions and returns 0.
        let p = Program::new(vec![
            Insn::stmt(BPF_LDX | BPF_W | BPF_IMM, 0),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::ret(1),
        ]);
        assert_eq!(path_lengths(&p, 0, 0), (2, 2));
    }

    /// getpid (39) allowed; ioctl (16) allowed for `args[1] == 0xae80` or `args[1].hi == 1`;
    /// everything else ERRNO(1). Little-endian offsets: `args[1].lo` at 24, `.hi` at 28.
    fn ioctl_filter() -> Program {
        Program::new(vec![
            Insn::ld_abs(0),               // 0
            jeq(39, 5, 0),                 // 1: getpid → 7
            jeq(16, 0, 5),                 // 2: ioctl → 3, else 8
            Insn::ld_abs(24),              // 3
            jeq(0xae80, 2, 0),             // 4: → 7, else 5
            Insn::ld_abs(28),              // 5
            jeq(1, 0, 1),                  // 6: → 7, else 8
            Insn::ret(RetVal::ALLOW.0),    // 7
            Insn::ret(RetVal::errno(1).0), // 8
        ])
    }

    #[test]
    fn known_arguments_select_one_path() {
        let p = ioctl_filter();
        let x86_64 = 0xc000_003e;
        let kvm_run = [None, Some(0xae80), None, None, None, None];
        // 0,1,2,3,4,7.
        let e = evaluate(&p, x86_64, 16, &kvm_run);
        assert_eq!((e.min, e.max, e.unknown_words_read), (6, 6, 0));
        assert_eq!(e.returns, BTreeSet::from([RetVal::ALLOW]));
        // Unknown: 6 (0xae80) up to 8 (0,1,2,3,4,5,6 then 7 or 8), both decisions, reads
        // words 6 and 7 (args[1].lo, args[1].hi).
        let e = evaluate(&p, x86_64, 16, &[None; 6]);
        assert_eq!((e.min, e.max, e.unknown_words_read), (6, 8, 0b1100_0000));
        assert_eq!(e.returns, BTreeSet::from([RetVal::ALLOW, RetVal::errno(1)]));
        assert!(e.returns_complete);
        assert_eq!(path_lengths(&p, x86_64, 16), (6, 8));
        // A value for another argument changes nothing.
        let other = [Some(3), None, None, None, None, None];
        assert_eq!(path_lengths_with(&p, x86_64, 16, &other), (6, 8));
    }

    #[test]
    fn big_endian_tokens_put_the_high_half_first() {
        let p = ioctl_filter();
        // AUDIT_ARCH_S390X: big-endian, so offset 24 holds args[1].hi (0) and 28 args[1].lo
        // (0xae80): 0,1,2,3,4,5,6,8 = 8 instructions and ERRNO(1).
        let s390x = 0x8000_0016;
        let args = [None, Some(0xae80), None, None, None, None];
        let e = evaluate(&p, s390x, 16, &args);
        assert_eq!((e.min, e.max), (8, 8));
        assert_eq!(e.returns, BTreeSet::from([RetVal::errno(1)]));
        let data = crate::bpf::SeccompData::new(s390x, 16, [0, 0xae80, 0, 0, 0, 0]);
        let t = crate::bpf::interp::trace(&p, &data).unwrap();
        assert_eq!((t.steps, t.ret), (8, RetVal::errno(1)));
    }

    #[test]
    fn workload_costs_by_hand() {
        let p = ioctl_filter();
        let x86_64 = 0xc000_003e;
        let sample = |nr, count, args| Sample {
            token: x86_64,
            nr,
            count,
            args,
        };
        let kvm_run = [None, Some(0xae80), None, None, None, None];
        let samples = [
            sample(39, 100.0, [None; 6]), // getpid: 3, cached
            sample(16, 90.0, kvm_run),    // ioctl(KVM_RUN): 6
            sample(16, 10.0, [None; 6]),  // ioctl, no values: 8
            sample(0, 40.0, [None; 6]),   // read: 0,1,2,8 = 4, ERRNO
        ];
        let caches = Caches::new(&p, &[Arch::X86_64], KernelVersion::new(6, 18));
        let w = workload_costs(&p, &samples, &caches);
        let got: Vec<(u32, u32, bool, Assumption)> = w
            .samples
            .iter()
            .map(|s| {
                (
                    s.cost_without_cache,
                    s.cost_with_cache,
                    s.cached,
                    s.assumption,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (3, 0, true, Assumption::NoArgumentsRead),
                (6, 6, false, Assumption::WorkloadArguments),
                (8, 8, false, Assumption::LongestPath),
                (4, 4, false, Assumption::NoArgumentsRead),
            ]
        );
        // (100·3 + 90·6 + 10·8 + 40·4) / 240 = 1080 / 240; with the cache 780 / 240.
        assert_eq!(w.calls, 240.0);
        assert_eq!(w.expected_without_cache, 4.5);
        assert_eq!(w.expected_with_cache, 3.25);
        // Before 5.11 nothing is cached.
        let none = Caches::new(&p, &[Arch::X86_64], KernelVersion::new(5, 10));
        let w = workload_costs(&p, &samples, &none);
        assert_eq!(w.expected_with_cache, w.expected_without_cache);
    }

    #[test]
    fn weights_with_argument_values_cost_what_the_samples_cost() {
        // The same four kinds of calls as `workload_costs_by_hand`, as `Weights`: the 90
        // KVM_RUN calls carry their request, the other 10 ioctl calls do not. The same figures
        // by hand: 1080 / 240 without the cache, 780 / 240 with it.
        let p = ioctl_filter();
        let x86_64 = 0xc000_003e;
        let mut w = Weights::new();
        w.add_call(x86_64, 39, 100.0, [None; 6]).unwrap();
        w.add_call(
            x86_64,
            16,
            90.0,
            [None, Some(0xae80), None, None, None, None],
        )
        .unwrap();
        w.add_call(x86_64, 16, 10.0, [None; 6]).unwrap();
        w.add_call(x86_64, 0, 40.0, [None; 6]).unwrap();
        assert_eq!(w.samples(x86_64, 16).len(), 1);
        assert!(w.samples(x86_64, 39).is_empty());
        let caches = Caches::new(&p, &[Arch::X86_64], KernelVersion::new(6, 18));
        assert_eq!(expected_costs(&p, &w, &caches), (4.5, 3.25));
    }

    /// `ld [nr]`, then for each of `n` numbers `jeq #i` to a `ja` into one shared block, which
    /// loads `nr` again and runs 20 more instructions for `nr == 0` only. Every syscall's
    /// path reaches the block after a different number of instructions, and the longest path
    /// is number `n - 1`'s: the chain's end, then the block's short side.
    fn chain_into_a_shared_block(n: u32) -> Program {
        let mut insns = vec![Insn::ld_abs(0)];
        let shared = 1 + 2 * n as usize + 1;
        for i in 0..n {
            insns.push(jeq(i, 0, 1));
            let at = insns.len();
            insns.push(Insn::ja((shared - at - 1) as u32));
        }
        insns.push(Insn::ret(RetVal::ALLOW.0));
        insns.push(Insn::ld_abs(0));
        insns.push(jeq(0, 0, 20));
        insns.extend((0..20).map(|_| Insn::ld_abs(0)));
        insns.push(Insn::ret(RetVal::errno(1).0));
        Program::new(insns)
    }

    #[test]
    fn the_worst_path_keeps_each_syscalls_own_way_into_a_shared_block() {
        for n in [100, 1100] {
            let p = chain_into_a_shared_block(n);
            crate::bpf::validate::validate(&p).unwrap();
            // The interpreter over every number that takes a different path (the program reads
            // nothing else): number 0 runs the block's long side, n - 1 the chain's end.
            let longest = (0..=n)
                .map(|nr| {
                    let d = crate::bpf::SeccompData::new(0xc000_003e, nr as i32, [0; 6]);
                    crate::bpf::interp::trace(&p, &d).unwrap().steps as u32
                })
                .max()
                .unwrap();
            // `ld`, n - 1 tests not taken, the last taken and its `ja`, then `ld`, `jeq`, `ret`.
            assert_eq!(longest, n + 5);
            let worst = worst_case_path(&p);
            if n == 100 {
                // A hundred states wait at the block, one per syscall: each keeps its length.
                assert_eq!(worst, longest, "n = {n}");
            } else {
                // Past the cap (`WORST_PATH_MAX_STATES`, 1024) they become one (the longest
                // way in, then the longest way through): a bound, no longer the exact figure.
                assert!(worst >= longest, "n = {n}: {worst} < {longest}");
                assert_eq!(worst, (n + 2) + 23, "n = {n}");
            }
        }
    }

    /// Found by an audit (thirty-seventh session): 1 027 states wait at one `ret`, past the
    /// cap, and two of them, with the same registers, come to the same cell by different
    /// ways: `nr` 1..=2 after 40 instructions, and `nr` 1 and `nr` 2 apart after 10 (the
    /// other 1 024 are 32 register variants × 32 leaves of a tree on `nr`). Joining them
    /// wrote one over the other, and the longer was lost: the figure said 35 where `nr` 1 with
    /// `args[2]` 1 and `args[3]` 0 runs 41 (an exact solver over every path agreed), and
    /// `optimize --max-path 38` kept a filter that runs 41.
    #[test]
    fn states_joined_into_one_cell_keep_the_longest_way_there() {
        let mut src = String::from(
            "ld [args[2].lo]\njeq #0, filler, coll\ncoll: ld [nr]\nldx #1\n\
             jgt #2, dead, next\njge #1, next, dead\nld [args[3].lo]\n\
             jeq #0, long, short\nlong: ld [nr]\n",
        );
        src += &"ld [nr]\n".repeat(30);
        src += "ja p\nshort: ld [nr]\njeq #1, p, p\nfiller: ld [args[0].lo]\n";
        for i in 0..5 {
            src += &format!(
                "jset #{}, s{i}a, s{i}b\ns{i}a: ld #{}\nja s{i}e\ns{i}b: ld #{}\n\
                 s{i}e: st M[{i}]\nld [args[0].lo]\n",
                1 << i,
                i + 1,
                i + 100
            );
        }
        src += "ld [nr]\n";
        // A tree of depth 5 on `nr` over 1000..1032 whose 32 leaves all go to `p`.
        fn tree(lo: u32, hi: u32, depth: u32, name: &str, out: &mut String) {
            let mid = (lo + hi) / 2;
            if depth == 1 {
                *out += &format!("{name}: jge #{mid}, p, p\n");
                return;
            }
            *out += &format!("{name}: jge #{mid}, {name}r, {name}l\n");
            tree(lo, mid, depth - 1, &format!("{name}l"), out);
            tree(mid, hi, depth - 1, &format!("{name}r"), out);
        }
        tree(1000, 1032, 5, "t", &mut src);
        src += "dead: ret KILL_PROCESS\np: ret ALLOW\n";
        let p = crate::bpf::asm::assemble(&src).unwrap();
        let d = crate::bpf::SeccompData::new(0xc000_003e, 1, [0, 0, 1, 0, 0, 0]);
        let run = crate::bpf::interp::trace(&p, &d).unwrap().steps as u32;
        assert_eq!(run, 41);
        assert_eq!(worst_case_path(&p), 41);
    }

    #[test]
    fn cells_past_their_budget_leave_nr_and_arch_unknown() {
        let p = chain_into_a_shared_block(100);
        // Within the budget: exact (see above). Past it: every test of `nr` goes both ways,
        // so the chain's last test taken, then the block's long side: 1 + 100 + 1 + 23.
        assert_eq!(worst_case_path_within(&p, WORST_PATH_MAX_RANGES), 105);
        assert_eq!(worst_case_path_within(&p, 10), 125);
    }

    #[test]
    fn masks_decide_tests_on_unknown_words() {
        let and = |k| Insn::stmt(BPF_ALU | BPF_AND | BPF_K, k);
        // libseccomp's 64-bit `(args[0] & 0x7e020000) == 0`: the high half's mask is 0, so its
        // test always holds and the short exit at 2 is never taken.
        let p = Program::new(vec![
            Insn::ld_abs(20),              // 0: args[0].hi
            and(0),                        // 1
            jeq(0, 0, 4),                  // 2: always → 3
            Insn::ld_abs(16),              // 3: args[0].lo
            and(0x7e02_0000),              // 4
            jeq(0, 0, 1),                  // 5: → 6 or 7
            Insn::ret(RetVal::ALLOW.0),    // 6
            Insn::ret(RetVal::errno(1).0), // 7
        ]);
        let e = evaluate(&p, 0xc000_003e, 56, &[None; 6]);
        assert_eq!((e.min, e.max), (7, 7));
        assert_eq!(e.returns, BTreeSet::from([RetVal::ALLOW, RetVal::errno(1)]));
        // `and #0xff` leaves nothing above 0xff: `jgt #0xff` and `jeq #0x100` never hold,
        // `jge #0` always does; `jset #0xf00` never.
        for (test, taken) in [
            (Insn::jump(BPF_JMP | BPF_JGT | BPF_K, 0xff, 0, 1), false),
            (Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 0x100, 0, 1), false),
            (Insn::jump(BPF_JMP | BPF_JGE | BPF_K, 0, 0, 1), true),
            (Insn::jump(BPF_JMP | BPF_JSET | BPF_K, 0xf00, 0, 1), false),
        ] {
            let p = Program::new(vec![
                Insn::ld_abs(16),
                and(0xff),
                test,
                Insn::ret(RetVal::ALLOW.0),
                Insn::ret(RetVal::errno(1).0),
            ]);
            let e = evaluate(&p, 0xc000_003e, 0, &[None; 6]);
            let want = if taken {
                RetVal::ALLOW
            } else {
                RetVal::errno(1)
            };
            assert_eq!(e.returns, BTreeSet::from([want]), "{test:?}");
        }
    }

    /// `evaluate` runs the interpreter once when no unknown word is loaded on the way; the
    /// exploration of every path must give the same figures (random programs with ALU, X,
    /// scratch words and `ret a`; some arguments given, some not).
    #[test]
    fn one_run_and_the_exploration_agree_where_no_unknown_word_is_read() {
        use crate::bpf::testing::{random_data, random_program, GenConfig, Rng};
        let mut rng = Rng::new(0xe7a1);
        let tokens = [0xc000_003e, 0x4000_0003, 0x8000_0016];
        let mut one_run = 0;
        for _ in 0..2000 {
            let prog = random_program(&mut rng, &GenConfig::default());
            for _ in 0..4 {
                let d = random_data(&mut rng, &prog, &tokens);
                let args = d.args.map(|v| (!rng.chance(1, 4)).then_some(v));
                let nr = d.nr as u32;
                let words = known_words(d.arch, nr, &args);
                let explored = evaluate_by_exploring(&prog, d.arch, nr, &words);
                assert_eq!(
                    evaluate(&prog, d.arch, nr, &args),
                    explored,
                    "{prog:?} {d:?} {args:?}"
                );
                one_run += usize::from(explored.unknown_words_read == 0);
            }
        }
        assert!(one_run > 4000, "{one_run}");
    }

    #[test]
    fn a_stack_costs_its_filters_summed_and_decides_as_the_kernel_does() {
        use crate::bpf::interp;
        use crate::bpf::stack::{as_one_program, eval_stack};
        use crate::bpf::testing::{random_data, random_program, GenConfig, Rng};
        let mut rng = Rng::new(0x5ac4);
        let tokens = [0xc000_003e, 0x4000_0003];
        let kernel = KernelVersion::new(6, 18);
        let (mut compared, mut decided) = (0, 0);
        for _ in 0..300 {
            let cfg = if rng.chance(1, 2) {
                GenConfig::cache_friendly()
            } else {
                GenConfig::default()
            };
            let filters: Vec<Program> = (0..2 + rng.below(3))
                .map(|_| random_program(&mut rng, &cfg))
                .collect();
            let Ok(joined) = as_one_program(&filters) else {
                continue;
            };
            let caches = Caches::for_stack(&filters, &[Arch::X86_64, Arch::X86], kernel);
            // Numbers only: the same figures as `expected_costs` of each filter, summed.
            let mut weights = Weights::new();
            let mut samples = Vec::new();
            for _ in 0..8 {
                let from = rng.below(filters.len());
                let d = random_data(&mut rng, &filters[from], &tokens);
                let count = 1.0 + rng.below(50) as f64;
                if weights.add(d.arch, d.nr as u32, count).is_ok() {
                    samples.push(Sample {
                        token: d.arch,
                        nr: d.nr as u32,
                        count,
                        args: [None; 6],
                    });
                }
            }
            let costs = stack_workload_costs(&filters, &joined, &samples, &caches);
            let (mut without, mut with) = (0.0, 0.0);
            for f in &filters {
                let (a, b) = expected_costs(f, &weights, &caches);
                without += a;
                with += b;
            }
            assert!((costs.expected_without_cache - without).abs() < 1e-9);
            assert!((costs.expected_with_cache - with).abs() < 1e-9);

            // Every word given: one path per filter, the kernel's answer for the stack.
            for _ in 0..8 {
                let from = rng.below(filters.len());
                let d = random_data(&mut rng, &filters[from], &tokens);
                let sample = Sample {
                    token: d.arch,
                    nr: d.nr as u32,
                    count: 1.0,
                    args: d.args.map(Some),
                };
                let cost = &stack_workload_costs(&filters, &joined, &[sample], &caches).samples[0];
                if cost.eval.unknown_words_read != 0 {
                    continue; // the IP, which a sample cannot give
                }
                let steps: u32 = filters
                    .iter()
                    .map(|f| interp::trace(f, &d).unwrap().steps as u32)
                    .sum();
                assert_eq!((cost.eval.min, cost.eval.max), (steps, steps));
                if cost.eval.returns_complete {
                    let want = eval_stack(&filters, &d).unwrap();
                    assert_eq!(cost.eval.returns, BTreeSet::from([want]));
                    decided += 1;
                }
                compared += 1;
            }
        }
        assert!(compared > 1000, "only {compared} compared");
        assert!(decided > 1000, "only {decided} decided");
    }
}
