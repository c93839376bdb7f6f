//! Exact symbolic execution of seccomp filters over all of `seccomp_data`: the engine shared by
//! the per-syscall analysis ([`crate::bpf::analysis`]) and the equivalence checker
//! ([`crate::verify`]).
//!
//! - [`bdd`]: a hash-consed BDD package with budgets (nodes, memory estimate, time).
//! - [`bitvec`]: 32-bit values as 32 BDDs, with every classic-BPF ALU operation and comparison.
//! - [`Machine`] and [`explore`]: runs a program (a DAG: jumps only go forward) in program
//!   order over symbolic states `(A, X, M[], path condition)`, merging states that meet at an
//!   instruction with the same registers by OR-ing their conditions, and reports every load
//!   and every return to an [`Observer`].
//!
//! # Variable order
//!
//! The BDD variables are the 512 bits of the 16 words of `seccomp_data`, each word most
//! significant bit first (so comparisons with constants are one node per bit), words in this
//! order:
//!
//! ```text
//! arch, nr, args[0].hi, args[0].lo, args[1].hi, args[1].lo, …, args[5].hi, args[5].lo, ip.hi, ip.lo
//! ```
//!
//! (`hi`/`lo` as laid out on a little-endian machine: word 5 before word 4, and so on.)
//! Why: filters test the arch first and the syscall number next, so with these two words at
//! the top a filter's decision is a small tree of per-arch, per-number-range blocks whose
//! leaves are the argument conditions, and cutting a function at an `(arch, nr)` pair is a walk
//! of 64 levels from the root (the verifier's diff relies on that). A 64-bit argument is
//! compared high half first by libseccomp and most compilers, and with the high half first
//! the order over the two halves is the order over the 64-bit value (one node per bit for an
//! ordered comparison). On big-endian arches the low half comes first, which is still exact,
//! only less compact. The instruction pointer is last: filters almost never read it.

pub mod bdd;
pub mod bitvec;

use crate::bpf::data::{Words, NUM_WORDS};
use crate::bpf::insn::*;
use crate::bpf::Program;
use bdd::{Bdd, FxMap, Node, OutOfNodes, Var, FALSE, TRUE};
pub use bitvec::Bits;
use std::collections::BTreeMap;
use std::time::Instant;

/// Word index of `seccomp_data.nr`.
pub const WORD_NR: usize = 0;
/// Word index of `seccomp_data.arch`.
pub const WORD_ARCH: usize = 1;

/// The words of `seccomp_data` in BDD variable order (see the module docs).
pub const WORD_ORDER: [usize; NUM_WORDS] = [1, 0, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 3, 2];

/// Position of each word in [`WORD_ORDER`].
const WORD_POSITION: [usize; NUM_WORDS] = {
    let mut pos = [0; NUM_WORDS];
    let mut i = 0;
    while i < NUM_WORDS {
        pos[WORD_ORDER[i]] = i;
        i += 1;
    }
    pos
};

/// The BDD variable of bit `bit` (0 = least significant) of word `word`.
pub const fn var_of(word: usize, bit: usize) -> Var {
    (WORD_POSITION[word] * 32 + (31 - bit)) as Var
}

/// The `nr` values of x32 calls under x86_64's arch token: bit 30 set and bit 31 clear
/// ([`crate::arch::is_x32_nr`]).
pub fn x32_numbers(bdd: &mut bdd::Bdd) -> Result<bdd::Node, bdd::OutOfNodes> {
    let bit30 = bdd.var(var_of(WORD_NR, 30))?;
    let bit31 = bdd.var(var_of(WORD_NR, 31))?;
    let below = bdd.not(bit31)?;
    bdd.and(bit30, below)
}

/// Inverse of [`var_of`]: `(word, bit)`.
pub const fn word_bit_of(var: Var) -> (usize, usize) {
    (WORD_ORDER[var as usize / 32], 31 - var as usize % 32)
}

/// The first variable of the word at position `position` of [`WORD_ORDER`].
pub const fn first_var_at(position: usize) -> Var {
    (position * 32) as Var
}

/// The input words of a satisfying assignment (unassigned bits are 0).
pub fn words_of(assignment: &[(Var, bool)]) -> Words {
    let mut words: Words = [0; NUM_WORDS];
    for &(var, value) in assignment {
        if value {
            let (word, bit) = word_bit_of(var);
            words[word] |= 1 << bit;
        }
    }
    words
}

/// A register or scratch word during symbolic execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Val {
    Const(u32),
    /// A bit-blasted value: an id of [`Machine`]'s interned bit vectors.
    Sym(u32),
    /// Any value (a budget ran out computing it). Ids are never reused.
    Opaque(u32),
}

/// One symbolic state at an instruction.
#[derive(Debug, Clone, Copy)]
pub struct State {
    pub a: Val,
    pub x: Val,
    pub mem: [Val; BPF_MEMWORDS as usize],
    /// Instructions executed before this one (a range only after coarse merging; always 0
    /// when steps are not counted).
    pub steps_lo: u32,
    pub steps_hi: u32,
    /// The inputs that reach this state.
    pub cond: Node,
}

impl State {
    /// The state at the first instruction for the inputs in `cond`.
    pub fn initial(cond: Node) -> Self {
        State {
            a: Val::Const(0),
            x: Val::Const(0),
            mem: [Val::Const(0); BPF_MEMWORDS as usize],
            steps_lo: 0,
            steps_hi: 0,
            cond,
        }
    }

    fn merge_key(&self) -> ([Val; 2 + BPF_MEMWORDS as usize], u32, u32) {
        let mut regs = [Val::Const(0); 2 + BPF_MEMWORDS as usize];
        regs[0] = self.a;
        regs[1] = self.x;
        regs[2..].copy_from_slice(&self.mem);
        (regs, self.steps_lo, self.steps_hi)
    }
}

/// How a branch condition relates to a state's inputs.
pub enum Decision {
    Always(bool),
    /// Taken exactly for the inputs in this BDD.
    Split(Node),
    /// Not decidable within budget: both ways.
    Unknown,
}

/// The BDD manager and the values built in it. One machine can run several programs, so that
/// their results live in the same node table and can be compared node for node.
pub struct Machine {
    pub bdd: Bdd,
    syms: Vec<Bits>,
    sym_ids: FxMap<Bits, u32>,
    known: [Option<u32>; NUM_WORDS],
    word_vals: [Option<Val>; NUM_WORDS],
    next_opaque: u32,
    /// False once anything was approximated (an opaque value or an undecided branch).
    pub exact: bool,
    /// Whether a budget caused an approximation.
    pub budget_exceeded: bool,
}

impl Machine {
    /// A machine over `bdd` where every input word is unknown.
    pub fn new(bdd: Bdd) -> Self {
        Machine {
            bdd,
            syms: Vec::new(),
            sym_ids: FxMap::default(),
            known: [None; NUM_WORDS],
            word_vals: [None; NUM_WORDS],
            next_opaque: 0,
            exact: true,
            budget_exceeded: false,
        }
    }

    /// Fixes input word `word` to `value` (a load of it yields the constant).
    pub fn set_known(&mut self, word: usize, value: u32) {
        self.known[word] = Some(value);
        self.word_vals[word] = None;
    }

    /// Makes input word `word` unknown again (a load of it yields its bits).
    pub fn set_unknown(&mut self, word: usize) {
        if self.known[word].take().is_some() {
            self.word_vals[word] = None;
        }
    }

    /// The value input word `word` was fixed to.
    pub fn known(&self, word: usize) -> Option<u32> {
        self.known[word]
    }

    /// Notes that a budget forced an approximation.
    pub fn out_of_budget(&mut self) {
        self.exact = false;
        self.budget_exceeded = true;
    }

    /// A fresh value that may be anything.
    pub fn opaque(&mut self) -> Val {
        self.exact = false;
        self.next_opaque += 1;
        Val::Opaque(self.next_opaque)
    }

    /// `a` if both are the same value, else an opaque one.
    pub fn join(&mut self, a: Val, b: Val) -> Val {
        if a == b {
            a
        } else {
            self.opaque()
        }
    }

    /// The value of a bit vector, as a constant when it is one.
    pub fn intern(&mut self, b: Bits) -> Val {
        if let Some(c) = bitvec::as_const(&b) {
            return Val::Const(c);
        }
        if let Some(&id) = self.sym_ids.get(&b) {
            return Val::Sym(id);
        }
        let id = self.syms.len() as u32;
        self.syms.push(b);
        self.sym_ids.insert(b, id);
        Val::Sym(id)
    }

    /// The bit vector of a value (`None` for opaque values).
    pub fn bits_of(&self, v: Val) -> Option<Bits> {
        match v {
            Val::Const(c) => Some(bitvec::constant(c)),
            Val::Sym(id) => Some(self.syms[id as usize]),
            Val::Opaque(_) => None,
        }
    }

    /// The value of input word `word`.
    pub fn load_word(&mut self, word: usize) -> Val {
        if let Some(c) = self.known[word] {
            return Val::Const(c);
        }
        if let Some(v) = self.word_vals[word] {
            return v;
        }
        let v = match bitvec::word(&mut self.bdd, word) {
            Ok(b) => self.intern(b),
            Err(OutOfNodes) => {
                self.out_of_budget();
                self.opaque()
            }
        };
        self.word_vals[word] = Some(v);
        v
    }

    /// `a OP b` for ALU operations other than division by zero (handled by the caller).
    pub fn alu(&mut self, op: u16, a: Val, b: Val) -> Val {
        if let (Val::Const(x), Val::Const(y)) = (a, b) {
            return Val::Const(alu_result(op, x, y));
        }
        let (Some(ab), Some(bb)) = (self.bits_of(a), self.bits_of(b)) else {
            return self.opaque();
        };
        match bitvec::alu(&mut self.bdd, op, &ab, &bb) {
            Ok(r) => self.intern(r),
            Err(OutOfNodes) => {
                self.out_of_budget();
                self.opaque()
            }
        }
    }

    /// Which way a conditional jump `a OP b` goes.
    pub fn decide(&mut self, op: u16, a: Val, b: Val) -> Decision {
        if let (Val::Const(x), Val::Const(y)) = (a, b) {
            return Decision::Always(jump_taken(op, x, y));
        }
        let (Some(ab), Some(bb)) = (self.bits_of(a), self.bits_of(b)) else {
            self.exact = false;
            return Decision::Unknown;
        };
        match bitvec::compare(&mut self.bdd, op, &ab, &bb) {
            Ok(TRUE) => Decision::Always(true),
            Ok(FALSE) => Decision::Always(false),
            Ok(p) => Decision::Split(p),
            Err(OutOfNodes) => {
                self.out_of_budget();
                Decision::Unknown
            }
        }
    }

    /// The conditions under which a decision goes each way from `cond` (`None`: infeasible).
    pub fn split(&mut self, cond: Node, d: Decision) -> (Option<Node>, Option<Node>) {
        let feasible = |n: Node| (n != FALSE).then_some(n);
        match d {
            Decision::Always(true) => (Some(cond), None),
            Decision::Always(false) => (None, Some(cond)),
            Decision::Unknown => (Some(cond), Some(cond)),
            Decision::Split(p) => {
                let taken = self.bdd.and(cond, p);
                let not_taken = self.bdd.and_not(cond, p);
                match (taken, not_taken) {
                    (Ok(t), Ok(f)) => (feasible(t), feasible(f)),
                    _ => {
                        self.out_of_budget();
                        (Some(cond), Some(cond))
                    }
                }
            }
        }
    }

    /// Every value `v` takes on the inputs in `cond`, with the inputs giving it; `Ok(None)`
    /// when there are more than `limit` or the value is opaque.
    pub fn values(
        &mut self,
        v: Val,
        cond: Node,
        limit: usize,
    ) -> Result<Option<Vec<(u32, Node)>>, OutOfNodes> {
        match v {
            Val::Const(c) => Ok(Some(vec![(c, cond)])),
            Val::Sym(id) => {
                let b = self.syms[id as usize];
                bitvec::enumerate(&mut self.bdd, &b, cond, limit)
            }
            Val::Opaque(_) => Ok(None),
        }
    }

    /// A concrete input in `cond` (the smallest in variable order, fixed words included).
    pub fn witness(&self, cond: Node) -> Option<Words> {
        let assignment = self.bdd.witness(cond)?;
        let mut words = words_of(&assignment);
        for (w, k) in self.known.iter().enumerate() {
            if let Some(k) = k {
                words[w] = *k;
            }
        }
        Some(words)
    }
}

/// What an exploration reports.
pub trait Observer {
    /// Input word `word` is loaded by the states in `cond` (before the machine loads it).
    fn load(&mut self, _m: &mut Machine, _word: usize, _cond: Node) {}
    /// The program returns `value` after `steps_lo..=steps_hi` instructions for the inputs in
    /// `cond`. A division by X == 0 returns `Val::Const(0)`.
    fn ret(&mut self, m: &mut Machine, value: Val, steps_lo: u32, steps_hi: u32, cond: Node);
}

/// How an exploration may spend its budget.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most `(instruction, state)` steps explored exactly.
    pub max_states: usize,
    /// Whether states carry instruction counts (they then only merge when the counts agree).
    pub count_steps: bool,
    /// Stop at the first approximation (and when `max_states` or the deadline is reached)
    /// instead of going on with a sound over-approximation.
    pub strict: bool,
    /// When to stop (checked once per step).
    pub deadline: Option<Instant>,
}

/// Why an exploration stopped early (only in strict mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Something had to be approximated (see [`Bdd::exhausted`] for which budget).
    Inexact,
    /// More than [`Limits::max_states`] steps.
    States(usize),
    /// The deadline passed.
    Time,
}

/// Liveness bit of A in [`live_registers`].
const LIVE_A: u32 = 1;
/// Liveness bit of X.
const LIVE_X: u32 = 2;
/// Liveness bit of `M[i]`.
const fn live_m(i: u32) -> u32 {
    4 << (i % BPF_MEMWORDS)
}

/// For each instruction, the registers (A, X, `M[i]`) whose value on entry may still be read
/// on some path (a backward pass; jumps only go forward, so one pass in reverse program order
/// is exact).
///
/// The executor never computes a value nobody reads, and sets dead registers to 0 so that
/// states differing only in dead values merge. Without this, `ld [nr]; mul #k; ret ALLOW`
/// would build a useless product (BDDs of products are large), and the two sides of a branch
/// that left different garbage in A would never merge. A division by X still reads X: the
/// kernel returns 0 when it is zero, whatever becomes of A.
pub fn live_registers(prog: &Program) -> Vec<u32> {
    let n = prog.len();
    let mut live = vec![0u32; n + 1];
    let at = |live: &Vec<u32>, t: usize| live.get(t).copied().unwrap_or(0);
    for pc in (0..n).rev() {
        let insn = prog.insns[pc];
        let k = insn.k;
        let out = at(&live, pc + 1);
        let if_a = |bit: u32| if out & LIVE_A != 0 { bit } else { 0 };
        let if_x = |bit: u32| if out & LIVE_X != 0 { bit } else { 0 };
        live[pc] = match class(insn.code) {
            BPF_LD if mode(insn.code) == BPF_MEM => (out & !LIVE_A) | if_a(live_m(k)),
            BPF_LD => out & !LIVE_A,
            BPF_LDX if mode(insn.code) == BPF_MEM => (out & !LIVE_X) | if_x(live_m(k)),
            BPF_LDX => out & !LIVE_X,
            BPF_ST => {
                let m = live_m(k);
                (out & !m) | if out & m != 0 { LIVE_A } else { 0 }
            }
            BPF_STX => {
                let m = live_m(k);
                (out & !m) | if out & m != 0 { LIVE_X } else { 0 }
            }
            BPF_ALU if op(insn.code) == BPF_DIV && src(insn.code) == BPF_X => out | LIVE_X,
            BPF_ALU if src(insn.code) == BPF_X && op(insn.code) != BPF_NEG => out | if_a(LIVE_X),
            BPF_ALU => out,
            BPF_JMP if insn.is_ja() => at(&live, pc + 1 + k as usize),
            // A test whose two targets are the same instruction decides nothing: it reads
            // nothing either (a dead `jge x` must not keep X, or a word×word compare, alive).
            BPF_JMP if insn.jt == insn.jf => at(&live, pc + 1 + insn.jt as usize),
            BPF_JMP => {
                let (t, f) = (pc + 1 + insn.jt as usize, pc + 1 + insn.jf as usize);
                let x = if src(insn.code) == BPF_X { LIVE_X } else { 0 };
                at(&live, t) | at(&live, f) | LIVE_A | x
            }
            BPF_RET if rval(insn.code) == BPF_A => LIVE_A,
            BPF_RET => 0,
            _ if miscop(insn.code) == BPF_TXA => (out & !LIVE_A) | if_a(LIVE_X),
            // TAX.
            _ => (out & !LIVE_X) | if_x(LIVE_A),
        };
    }
    live
}

/// Sets the registers that are dead on entry to an instruction to 0.
fn forget_dead(st: &mut State, live: u32) {
    if live & LIVE_A == 0 {
        st.a = Val::Const(0);
    }
    if live & LIVE_X == 0 {
        st.x = Val::Const(0);
    }
    for (i, m) in st.mem.iter_mut().enumerate() {
        if live & live_m(i as u32) == 0 {
            *m = Val::Const(0);
        }
    }
}

/// Runs `prog` (validated) from `init` to every return, in program order so that all states
/// reaching an instruction are there (and merged) before it executes.
///
/// Without `strict`, once the state budget is spent all states at an instruction are merged
/// whatever their registers (an over-approximation: [`Machine::exact`] becomes false).
/// Returns the `(instruction, state)` steps explored.
pub fn explore(
    prog: &Program,
    m: &mut Machine,
    init: State,
    limits: &Limits,
    obs: &mut impl Observer,
) -> Result<usize, Stopped> {
    let live = live_registers(prog);
    let mut init = init;
    forget_dead(&mut init, live[0]);
    let mut pending: BTreeMap<usize, Vec<State>> = BTreeMap::new();
    let mut ready: Vec<(usize, State)> = vec![(0, init)];
    let mut successors: Vec<(usize, State)> = Vec::with_capacity(4);
    let mut explored = 0usize;
    let mut coarse = false;
    loop {
        let Some((pc, state)) = ready.pop() else {
            let Some((pc, states)) = pending.pop_first() else {
                break;
            };
            for s in merge(m, states, coarse) {
                ready.push((pc, s));
            }
            continue;
        };
        explored += 1;
        if explored > limits.max_states && !coarse {
            if limits.strict {
                return Err(Stopped::States(limits.max_states));
            }
            coarse = true;
            m.out_of_budget();
        }
        // Without strictness the deadline is only a hint; the state budget bounds the work.
        if limits.strict && limits.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Stopped::Time);
        }
        successors.clear();
        let live_after = live[pc + 1];
        step(
            prog,
            m,
            pc,
            state,
            limits.count_steps,
            live_after,
            obs,
            &mut successors,
        );
        if limits.strict && !m.exact {
            return Err(Stopped::Inexact);
        }
        let alone = ready.is_empty() && successors.len() == 1;
        for (next_pc, mut next) in successors.drain(..) {
            forget_dead(&mut next, live[next_pc]);
            // Straight-line fast path: nothing else can reach `next_pc` any more.
            if alone && pending.first_key_value().is_none_or(|(&k, _)| k > next_pc) {
                ready.push((next_pc, next));
            } else {
                pending.entry(next_pc).or_default().push(next);
            }
        }
    }
    Ok(explored)
}

/// Merges states at one instruction: exactly when registers, memory and steps agree, or (when
/// `coarse`) all of them into one over-approximating state.
fn merge(m: &mut Machine, states: Vec<State>, coarse: bool) -> Vec<State> {
    if states.len() < 2 {
        return states;
    }
    if coarse {
        let mut it = states.into_iter();
        let mut acc = it.next().expect("at least two states");
        for s in it {
            acc.a = m.join(acc.a, s.a);
            acc.x = m.join(acc.x, s.x);
            for i in 0..acc.mem.len() {
                acc.mem[i] = m.join(acc.mem[i], s.mem[i]);
            }
            acc.steps_lo = acc.steps_lo.min(s.steps_lo);
            acc.steps_hi = acc.steps_hi.max(s.steps_hi);
            acc.cond = m.bdd.or(acc.cond, s.cond).unwrap_or(TRUE);
        }
        return vec![acc];
    }
    let mut out: Vec<State> = Vec::with_capacity(states.len());
    let mut index: FxMap<_, usize> = FxMap::default();
    for s in states {
        let key = s.merge_key();
        if let Some(&i) = index.get(&key) {
            if let Ok(c) = m.bdd.or(out[i].cond, s.cond) {
                out[i].cond = c;
                continue;
            }
            m.out_of_budget();
        }
        index.insert(key, out.len());
        out.push(s);
    }
    out
}

/// Executes the instruction at `pc` on `st`, pushing the successor states. `live_after` is
/// what is live at `pc + 1`: a value written there and dead is not computed.
#[allow(clippy::too_many_arguments)]
fn step(
    prog: &Program,
    m: &mut Machine,
    pc: usize,
    st: State,
    count_steps: bool,
    live_after: u32,
    obs: &mut impl Observer,
    out: &mut Vec<(usize, State)>,
) {
    let insn = prog.insns[pc];
    let k = insn.k;
    let mut next = st;
    if count_steps {
        next.steps_lo += 1;
        next.steps_hi += 1;
    }
    let (lo, hi) = (next.steps_lo, next.steps_hi);
    match class(insn.code) {
        BPF_LD | BPF_LDX => {
            let v = match mode(insn.code) {
                BPF_ABS => {
                    let word = k as usize / 4 % NUM_WORDS;
                    obs.load(m, word, st.cond);
                    if live_after & LIVE_A != 0 {
                        m.load_word(word)
                    } else {
                        Val::Const(0)
                    }
                }
                BPF_LEN => Val::Const(crate::bpf::data::SECCOMP_DATA_SIZE),
                BPF_IMM => Val::Const(k),
                // BPF_MEM (the validator admits no other mode).
                _ => st.mem[k as usize % BPF_MEMWORDS as usize],
            };
            if class(insn.code) == BPF_LD {
                next.a = v;
            } else {
                next.x = v;
            }
            out.push((pc + 1, next));
        }
        BPF_ST => {
            next.mem[k as usize % BPF_MEMWORDS as usize] = st.a;
            out.push((pc + 1, next));
        }
        BPF_STX => {
            next.mem[k as usize % BPF_MEMWORDS as usize] = st.x;
            out.push((pc + 1, next));
        }
        BPF_ALU => {
            let operand = if src(insn.code) == BPF_X {
                st.x
            } else {
                Val::Const(k)
            };
            let o = op(insn.code);
            let mut cond = st.cond;
            if o == BPF_DIV {
                // The kernel makes the whole filter return 0 on division by X == 0.
                let d = m.decide(BPF_JEQ, operand, Val::Const(0));
                let (zero, nonzero) = m.split(st.cond, d);
                if let Some(z) = zero {
                    obs.ret(m, Val::Const(0), lo, hi, z);
                }
                let Some(nz) = nonzero else { return };
                cond = nz;
            }
            next.a = if live_after & LIVE_A != 0 {
                m.alu(o, st.a, operand)
            } else {
                Val::Const(0)
            };
            next.cond = cond;
            out.push((pc + 1, next));
        }
        BPF_JMP => {
            if insn.is_ja() {
                out.push((pc + 1 + k as usize, next));
                return;
            }
            if insn.jt == insn.jf {
                // Both ways lead to the same instruction: no condition to build.
                out.push((pc + 1 + insn.jt as usize, next));
                return;
            }
            let operand = if src(insn.code) == BPF_X {
                st.x
            } else {
                Val::Const(k)
            };
            let d = m.decide(op(insn.code), st.a, operand);
            let (taken, not_taken) = m.split(st.cond, d);
            if let Some(c) = taken {
                out.push((pc + 1 + insn.jt as usize, State { cond: c, ..next }));
            }
            if let Some(c) = not_taken {
                out.push((pc + 1 + insn.jf as usize, State { cond: c, ..next }));
            }
        }
        BPF_RET => {
            let value = if rval(insn.code) == BPF_A {
                st.a
            } else {
                Val::Const(k)
            };
            obs.ret(m, value, lo, hi, st.cond);
        }
        _ => {
            // BPF_MISC: TAX or TXA.
            if miscop(insn.code) == BPF_TXA {
                next.a = st.x;
            } else {
                next.x = st.a;
            }
            out.push((pc + 1, next));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_order_puts_arch_and_nr_first_and_high_halves_before_low() {
        assert_eq!(var_of(WORD_ARCH, 31), 0);
        assert_eq!(var_of(WORD_NR, 31), 32);
        // args[0].hi is word 5 on little-endian machines.
        assert_eq!(var_of(5, 31), 64);
        assert_eq!(var_of(4, 0), 127);
        assert_eq!(var_of(2, 0), 511);
        for v in 0..512u16 {
            let (w, b) = word_bit_of(v);
            assert_eq!(var_of(w, b), v);
        }
    }
}
