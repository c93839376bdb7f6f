//! Per-syscall path analysis: for one syscall number (or every number a syscall table does not
//! name) on one architecture, what a filter can do over *all* values of the 14 words it does not
//! know (the instruction pointer and the six 64-bit arguments).
//!
//! For each analysed input set the result ([`SyscallPaths`]) says:
//! - the fewest and most instructions executed (counting the final `RET`), over feasible paths;
//! - which `seccomp_data` words are loaded on some feasible path ("socket reads `args[0].lo`");
//! - every value the filter can return, and whether the decision depends on the unknown words;
//! - whether all of that is exact, and a concrete input (checked with the interpreter) for every
//!   claimed return value, for the shortest and the longest path, and for every word read.
//!
//! # How
//!
//! Symbolic execution over the program, which is a DAG (jumps only go forward), in program order.
//! A, X and `M[]` hold a constant, a symbolic 32-bit value, or an *opaque* value. A symbolic value
//! is bit-blasted: 32 binary decision diagrams (BDDs) over the 512 bits of `seccomp_data` (words
//! in order, most significant bit first within a word). Every ALU operation (including `MUL`,
//! `DIV`, shifts by X, and values mixing several words) is computed exactly on these bit vectors,
//! and every comparison becomes one BDD. Each path carries its path condition as a BDD; a branch
//! side whose condition is `false` is infeasible and dropped, so feasibility is decided exactly.
//! States that reach the same instruction with the same registers, scratch memory and step count
//! are merged by OR-ing their conditions, which keeps real filters (a chain or tree of
//! comparisons) linear in their size.
//!
//! Limits ([`Budget`]): BDDs can grow exponentially (e.g. `MUL` of two unknown words, or comparing
//! two different words for equality). When the node budget runs out, the value becomes opaque
//! (any value) and branches on it go both ways; when the state budget runs out, all states at an
//! instruction are merged regardless of registers and step counts. Either way the result is
//! marked `exact: false` and stays a sound *over-approximation*: `returns` and `words_read`
//! contain at least the true sets, `min_steps`/`max_steps` bound the true ones. With
//! `exact: true` every claim is also backed by a witness the interpreter confirmed.
//!
//! # Example
//!
//! ```
//! use secopt::bpf::analysis::{analyze_syscall, Budget};
//! use secopt::bpf::insn::*;
//! use secopt::bpf::{Insn, Program, RetVal};
//!
//! let prog = Program::new(vec![
//!     Insn::ld_abs(0),                                  // 0: A = nr
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 41, 0, 3),  // 1: socket? else goto 5
//!     Insn::ld_abs(16),                                 // 2: A = args[0].lo (the domain)
//!     Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, 16, 0, 1),  // 3: AF_NETLINK? else goto 5
//!     Insn::ret(RetVal::errno(1).0),                    // 4: ERRNO(1)
//!     Insn::ret(RetVal::ALLOW.0),                       // 5: ALLOW
//! ]);
//! let budget = Budget::default();
//! // socket (41): both paths run 5 instructions, read nr and args[0].lo, and the result depends
//! // on the argument.
//! let socket = analyze_syscall(&prog, 0xc000_003e, 41, &budget).unwrap();
//! assert_eq!((socket.min_steps, socket.max_steps), (5, 5));
//! assert_eq!(socket.words_read, 1 << 0 | 1 << 4);
//! assert_eq!(socket.returns.iter().copied().collect::<Vec<_>>(), [RetVal::errno(1), RetVal::ALLOW]);
//! assert!(socket.depends_on_args && socket.exact);
//! // read (0): one path of 3 instructions (0, 1, 5), only nr is read, always ALLOW.
//! let read = analyze_syscall(&prog, 0xc000_003e, 0, &budget).unwrap();
//! assert_eq!((read.min_steps, read.max_steps, read.words_read), (3, 3, 1));
//! assert_eq!(read.returns.iter().copied().collect::<Vec<_>>(), [RetVal::ALLOW]);
//! assert!(!read.depends_on_args && read.exact);
//! ```

use super::data::{Endian, Field, SeccompData, Words, NUM_WORDS};
use super::insn::*;
use super::interp;
use super::validate::{validate, ValidationError};
use super::RetVal;
use crate::arch::{Arch, X32_SYSCALL_BIT};
use bdd::{Bdd, Node, OutOfNodes, FALSE, TRUE};
use std::collections::{BTreeMap, BTreeSet};

/// Word index of `seccomp_data.nr`.
const WORD_NR: usize = 0;
/// Word index of `seccomp_data.arch`.
const WORD_ARCH: usize = 1;

/// How much work one analysis may do before it settles for a sound over-approximation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Most (instruction, state) steps explored exactly; past it, states at an instruction are
    /// merged whatever their registers and step counts.
    pub max_states: usize,
    /// Most BDD nodes; past it, new symbolic values become opaque.
    pub max_bdd_nodes: usize,
    /// Most distinct values listed for one `RET A` of a computed value.
    pub max_ret_a_values: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_states: 200_000,
            // Real filters need a few thousand; this caps a pathological syscall at ~0.1 s.
            max_bdd_nodes: 1 << 18,
            max_ret_a_values: 256,
        }
    }
}

/// What a filter can do for one analysed set of inputs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SyscallPaths {
    /// Fewest instructions executed, counting the final `RET` (or the `DIV` by zero).
    pub min_steps: usize,
    /// Most instructions executed.
    pub max_steps: usize,
    /// Bit `i` set when word `i` of `seccomp_data` (byte offset `4*i`) is loaded on some path.
    pub words_read: u16,
    /// Every value the filter can return (a `DIV` by X == 0 returns 0).
    pub returns: BTreeSet<RetVal>,
    /// False when a `RET A` of a computed value could return values not listed in `returns`.
    pub returns_complete: bool,
    /// Whether the decision is not the same for all values of the unknown words (IP and
    /// arguments). For a set of syscall numbers: whether for some number in it the decision
    /// depends on them. Conservatively true when not exact and more than one value is possible.
    pub depends_on_args: bool,
    /// Whether every field above is exact; otherwise they are sound bounds (see module docs).
    pub exact: bool,
    /// Whether a [`Budget`] limit was hit (one reason for `exact == false`).
    pub budget_exceeded: bool,
    /// Concrete inputs, confirmed with the interpreter, for the claims above.
    pub witnesses: Witnesses,
}

/// Inputs on which the interpreter does what [`SyscallPaths`] claims possible.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Witnesses {
    /// For each return value, an input on which the filter returns it.
    pub returns: BTreeMap<RetVal, SeccompData>,
    /// An input that runs exactly `min_steps` instructions.
    pub min_steps: Option<SeccompData>,
    /// An input that runs exactly `max_steps` instructions.
    pub max_steps: Option<SeccompData>,
    /// For each word read (by index), an input on which it is read.
    pub words: BTreeMap<u8, SeccompData>,
}

impl SyscallPaths {
    /// The fields read other than `nr` and `arch`, named for a machine of byte order `endian`.
    pub fn argument_fields_read(&self, endian: Endian) -> Vec<Field> {
        (2..NUM_WORDS as u32)
            .filter(|w| self.words_read & (1 << w) != 0)
            .filter_map(|w| Field::at_offset(4 * w, endian))
            .collect()
    }
}

/// Which syscall numbers one analysis covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NrSet {
    /// Exactly this number.
    One(u32),
    /// Every number of this architecture's part of the number space that its syscall table does
    /// not name. x86_64 and x32 share an arch token and split the numbers by
    /// [`X32_SYSCALL_BIT`]: numbers with that bit (including `-1`) belong to x32.
    Unnamed(Arch),
}

/// One syscall of an [`ArchSummary`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SyscallSummary {
    pub nr: u32,
    pub name: &'static str,
    pub paths: SyscallPaths,
}

/// A whole-program view for one architecture: every named syscall, and all other numbers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ArchSummary {
    pub arch: Arch,
    /// The arch token the analyses used.
    pub token: u32,
    /// Every syscall in the architecture's table, by number.
    pub syscalls: Vec<SyscallSummary>,
    /// All numbers of this architecture that the table does not name ([`NrSet::Unnamed`]).
    pub unnamed: SyscallPaths,
}

/// Analyses one validated program many times (validation is done once).
#[derive(Debug, Clone, Copy)]
pub struct Analyzer<'p> {
    prog: &'p Program,
}

impl<'p> Analyzer<'p> {
    /// Validates `prog` as the kernel would; the analysis is only defined for valid programs.
    pub fn new(prog: &'p Program) -> Result<Self, ValidationError> {
        validate(prog)?;
        Ok(Analyzer { prog })
    }

    /// The paths of syscall `nr` with arch token `arch_token`.
    pub fn syscall(&self, arch_token: u32, nr: u32, budget: &Budget) -> SyscallPaths {
        self.analyze(arch_token, NrSet::One(nr), budget)
    }

    /// The paths of every number in `numbers`, seen with arch token `arch_token`.
    pub fn analyze(&self, arch_token: u32, numbers: NrSet, budget: &Budget) -> SyscallPaths {
        Exec::new(self.prog, budget, arch_token, numbers).run()
    }

    /// Every syscall of `arch`'s table, plus all unnamed numbers of `arch`.
    pub fn arch_summary(&self, arch: Arch, budget: &Budget) -> ArchSummary {
        let token = arch.token();
        let syscalls = arch
            .syscalls()
            .iter()
            .map(|(nr, name)| SyscallSummary {
                nr,
                name,
                paths: self.syscall(token, nr, budget),
            })
            .collect();
        ArchSummary {
            arch,
            token,
            syscalls,
            unnamed: self.analyze(token, NrSet::Unnamed(arch), budget),
        }
    }
}

/// The paths of syscall `nr` with arch token `arch_token` in `prog` (validated first).
pub fn analyze_syscall(
    prog: &Program,
    arch_token: u32,
    nr: u32,
    budget: &Budget,
) -> Result<SyscallPaths, ValidationError> {
    Ok(Analyzer::new(prog)?.syscall(arch_token, nr, budget))
}

/// A register or scratch word during symbolic execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Val {
    Const(u32),
    /// A bit-blasted value: index into `Exec::syms`.
    Sym(u32),
    /// Any value (the budget ran out computing it). Ids are never reused.
    Opaque(u32),
}

/// One symbolic state at an instruction.
#[derive(Debug, Clone, Copy)]
struct State {
    a: Val,
    x: Val,
    mem: [Val; BPF_MEMWORDS as usize],
    /// Instructions executed before this one (a range only after coarse merging).
    steps_lo: u32,
    steps_hi: u32,
    /// The inputs that reach this state.
    cond: Node,
}

impl State {
    fn merge_key(&self) -> ([Val; 2 + BPF_MEMWORDS as usize], u32, u32) {
        let mut regs = [Val::Const(0); 2 + BPF_MEMWORDS as usize];
        regs[0] = self.a;
        regs[1] = self.x;
        regs[2..].copy_from_slice(&self.mem);
        (regs, self.steps_lo, self.steps_hi)
    }
}

/// How a branch condition relates to a state's inputs.
enum Decision {
    Always(bool),
    /// Taken exactly for the inputs in this BDD.
    Split(Node),
    /// Not decidable within budget: both ways.
    Unknown,
}

type Bits = [Node; 32];

struct Exec<'p> {
    prog: &'p Program,
    budget: &'p Budget,
    bdd: Bdd,
    numbers: NrSet,
    known: [Option<u32>; NUM_WORDS],
    syms: Vec<Bits>,
    sym_ids: bdd::FxMap<Bits, u32>,
    word_vals: [Option<Val>; NUM_WORDS],
    next_opaque: u32,
    coarse: bool,
    domain: Node,
    // What was found.
    min_steps: u32,
    max_steps: u32,
    min_cond: Node,
    max_cond: Node,
    any_return: bool,
    words_read: u16,
    word_conds: [Node; NUM_WORDS],
    /// Inputs reaching each return value (over-approximated when not exact).
    returns: BTreeMap<RetVal, Node>,
    ret_sets_exact: bool,
    returns_complete: bool,
    exact: bool,
    budget_exceeded: bool,
}

impl<'p> Exec<'p> {
    fn new(prog: &'p Program, budget: &'p Budget, arch_token: u32, numbers: NrSet) -> Self {
        let mut known = [None; NUM_WORDS];
        known[WORD_ARCH] = Some(arch_token);
        if let NrSet::One(nr) = numbers {
            known[WORD_NR] = Some(nr);
        }
        Exec {
            prog,
            budget,
            bdd: Bdd::new(budget.max_bdd_nodes),
            numbers,
            known,
            syms: Vec::new(),
            sym_ids: Default::default(),
            word_vals: [None; NUM_WORDS],
            next_opaque: 0,
            coarse: false,
            domain: TRUE,
            min_steps: u32::MAX,
            max_steps: 0,
            min_cond: FALSE,
            max_cond: FALSE,
            any_return: false,
            words_read: 0,
            word_conds: [FALSE; NUM_WORDS],
            returns: BTreeMap::new(),
            ret_sets_exact: true,
            returns_complete: true,
            exact: true,
            budget_exceeded: false,
        }
    }

    fn out_of_budget(&mut self) {
        self.exact = false;
        self.budget_exceeded = true;
    }

    /// The inputs the analysis covers, as a condition on `nr`.
    fn domain_of(&mut self, numbers: NrSet) -> Result<Node, OutOfNodes> {
        let NrSet::Unnamed(arch) = numbers else {
            return Ok(TRUE);
        };
        let named: Vec<u32> = arch.syscalls().iter().map(|(nr, _)| nr).collect();
        let in_table = bits::value_set(&mut self.bdd, WORD_NR, &named)?;
        let mut domain = self.bdd.not(in_table)?;
        if Arch::from_token(arch.token()).len() > 1 {
            // x86_64 and x32 share the token: bit 30 of nr picks the ABI.
            let bit = self.bdd.var(bits::var_of(
                WORD_NR,
                X32_SYSCALL_BIT.trailing_zeros() as usize,
            ))?;
            let side = if arch == Arch::X32 {
                bit
            } else {
                self.bdd.not(bit)?
            };
            domain = self.bdd.and(domain, side)?;
        }
        Ok(domain)
    }

    fn run(mut self) -> SyscallPaths {
        let domain = match self.domain_of(self.numbers) {
            Ok(d) => d,
            Err(OutOfNodes) => {
                self.out_of_budget();
                TRUE
            }
        };
        self.domain = domain;
        let init = State {
            a: Val::Const(0),
            x: Val::Const(0),
            mem: [Val::Const(0); BPF_MEMWORDS as usize],
            steps_lo: 0,
            steps_hi: 0,
            cond: domain,
        };
        if domain != FALSE {
            self.explore(init);
        }
        self.finish()
    }

    /// Runs every state to a return, in program order so that all states reaching an
    /// instruction are there (and merged) before it executes.
    fn explore(&mut self, init: State) {
        let mut pending: BTreeMap<usize, Vec<State>> = BTreeMap::new();
        let mut ready: Vec<(usize, State)> = vec![(0, init)];
        let mut successors: Vec<(usize, State)> = Vec::with_capacity(4);
        let mut explored = 0usize;
        loop {
            let Some((pc, state)) = ready.pop() else {
                let Some((pc, states)) = pending.pop_first() else {
                    break;
                };
                for s in self.merge(states) {
                    ready.push((pc, s));
                }
                continue;
            };
            explored += 1;
            if explored > self.budget.max_states && !self.coarse {
                self.coarse = true;
                self.out_of_budget();
            }
            successors.clear();
            self.step(pc, state, &mut successors);
            let alone = ready.is_empty() && successors.len() == 1;
            for (next_pc, next) in successors.drain(..) {
                // Straight-line fast path: nothing else can reach `next_pc` any more.
                if alone
                    && pending
                        .first_key_value()
                        .map_or(true, |(&k, _)| k > next_pc)
                {
                    ready.push((next_pc, next));
                } else {
                    pending.entry(next_pc).or_default().push(next);
                }
            }
        }
    }

    /// Merges states at one instruction: exactly when registers, memory and steps agree,
    /// or (after the state budget ran out) all of them into one over-approximating state.
    fn merge(&mut self, states: Vec<State>) -> Vec<State> {
        if states.len() < 2 {
            return states;
        }
        if self.coarse {
            let mut it = states.into_iter();
            let mut acc = it.next().expect("at least two states");
            for s in it {
                acc.a = self.join(acc.a, s.a);
                acc.x = self.join(acc.x, s.x);
                for i in 0..acc.mem.len() {
                    acc.mem[i] = self.join(acc.mem[i], s.mem[i]);
                }
                acc.steps_lo = acc.steps_lo.min(s.steps_lo);
                acc.steps_hi = acc.steps_hi.max(s.steps_hi);
                acc.cond = self.bdd.or(acc.cond, s.cond).unwrap_or(TRUE);
            }
            return vec![acc];
        }
        let mut out: Vec<State> = Vec::with_capacity(states.len());
        let mut index: bdd::FxMap<_, usize> = Default::default();
        for s in states {
            let key = s.merge_key();
            if let Some(&i) = index.get(&key) {
                if let Ok(c) = self.bdd.or(out[i].cond, s.cond) {
                    out[i].cond = c;
                    continue;
                }
                self.out_of_budget();
            }
            index.insert(key, out.len());
            out.push(s);
        }
        out
    }

    fn join(&mut self, a: Val, b: Val) -> Val {
        if a == b {
            a
        } else {
            self.opaque()
        }
    }

    fn opaque(&mut self) -> Val {
        self.exact = false;
        self.next_opaque += 1;
        Val::Opaque(self.next_opaque)
    }

    fn intern(&mut self, b: Bits) -> Val {
        if let Some(c) = bits::as_const(&b) {
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

    fn bits_of(&self, v: Val) -> Option<Bits> {
        match v {
            Val::Const(c) => Some(bits::constant(c)),
            Val::Sym(id) => Some(self.syms[id as usize]),
            Val::Opaque(_) => None,
        }
    }

    fn load_word(&mut self, word: usize, cond: Node) -> Val {
        if self.words_read & (1 << word) == 0 {
            self.words_read |= 1 << word;
            self.word_conds[word] = cond;
        }
        if let Some(c) = self.known[word] {
            return Val::Const(c);
        }
        if let Some(v) = self.word_vals[word] {
            return v;
        }
        let v = match bits::word(&mut self.bdd, word) {
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
    fn alu(&mut self, op: u16, a: Val, b: Val) -> Val {
        if let (Val::Const(x), Val::Const(y)) = (a, b) {
            return Val::Const(concrete_alu(op, x, y));
        }
        let (Some(ab), Some(bb)) = (self.bits_of(a), self.bits_of(b)) else {
            return self.opaque();
        };
        match bits::alu(&mut self.bdd, op, &ab, &bb) {
            Ok(r) => self.intern(r),
            Err(OutOfNodes) => {
                self.out_of_budget();
                self.opaque()
            }
        }
    }

    fn decide(&mut self, op: u16, a: Val, b: Val) -> Decision {
        if let (Val::Const(x), Val::Const(y)) = (a, b) {
            return Decision::Always(concrete_jump(op, x, y));
        }
        let (Some(ab), Some(bb)) = (self.bits_of(a), self.bits_of(b)) else {
            self.exact = false;
            return Decision::Unknown;
        };
        match bits::compare(&mut self.bdd, op, &ab, &bb) {
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
    fn split(&mut self, cond: Node, d: Decision) -> (Option<Node>, Option<Node>) {
        let feasible = |n: Node| (n != FALSE).then_some(n);
        match d {
            Decision::Always(true) => (Some(cond), None),
            Decision::Always(false) => (None, Some(cond)),
            Decision::Unknown => (Some(cond), Some(cond)),
            Decision::Split(p) => {
                let taken = self.bdd.and(cond, p);
                let not_taken = self.bdd.ite(p, FALSE, cond);
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

    /// Records a return of `ret` after `lo..=hi` instructions for the inputs in `cond`.
    fn record(&mut self, ret: RetVal, lo: u32, hi: u32, cond: Node) {
        self.any_return = true;
        if lo < self.min_steps {
            self.min_steps = lo;
            self.min_cond = cond;
        }
        if hi > self.max_steps {
            self.max_steps = hi;
            self.max_cond = cond;
        }
        let entry = self.returns.entry(ret).or_insert(FALSE);
        match self.bdd.or(*entry, cond) {
            Ok(n) => *entry = n,
            Err(OutOfNodes) => {
                self.ret_sets_exact = false;
                self.out_of_budget();
            }
        }
    }

    fn step(&mut self, pc: usize, st: State, out: &mut Vec<(usize, State)>) {
        let insn = self.prog.insns[pc];
        let k = insn.k;
        let mut next = st;
        next.steps_lo += 1;
        next.steps_hi += 1;
        let (lo, hi) = (next.steps_lo, next.steps_hi);
        match class(insn.code) {
            BPF_LD | BPF_LDX => {
                let v = match mode(insn.code) {
                    BPF_ABS => self.load_word(k as usize / 4, st.cond),
                    BPF_LEN => Val::Const(super::data::SECCOMP_DATA_SIZE),
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
                    let d = self.decide(BPF_JEQ, operand, Val::Const(0));
                    let (zero, nonzero) = self.split(st.cond, d);
                    if let Some(z) = zero {
                        self.record(RetVal(0), lo, hi, z);
                    }
                    let Some(nz) = nonzero else { return };
                    cond = nz;
                }
                next.a = self.alu(o, st.a, operand);
                next.cond = cond;
                out.push((pc + 1, next));
            }
            BPF_JMP => {
                if insn.is_ja() {
                    out.push((pc + 1 + k as usize, next));
                    return;
                }
                let operand = if src(insn.code) == BPF_X {
                    st.x
                } else {
                    Val::Const(k)
                };
                let d = self.decide(op(insn.code), st.a, operand);
                let (taken, not_taken) = self.split(st.cond, d);
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
                self.ret(value, lo, hi, st.cond);
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

    fn ret(&mut self, value: Val, lo: u32, hi: u32, cond: Node) {
        match value {
            Val::Const(c) => self.record(RetVal(c), lo, hi, cond),
            Val::Sym(id) => {
                let b = self.syms[id as usize];
                match bits::enumerate(&mut self.bdd, &b, cond, self.budget.max_ret_a_values) {
                    Ok(Some(values)) => {
                        for (v, c) in values {
                            self.record(RetVal(v), lo, hi, c);
                        }
                    }
                    Ok(None) => self.open_return(lo, hi, cond),
                    Err(OutOfNodes) => {
                        self.out_of_budget();
                        self.open_return(lo, hi, cond);
                    }
                }
            }
            Val::Opaque(_) => self.open_return(lo, hi, cond),
        }
    }

    /// A return of values that are not listed.
    fn open_return(&mut self, lo: u32, hi: u32, cond: Node) {
        self.exact = false;
        self.returns_complete = false;
        self.any_return = true;
        if lo < self.min_steps {
            self.min_steps = lo;
            self.min_cond = cond;
        }
        if hi > self.max_steps {
            self.max_steps = hi;
            self.max_cond = cond;
        }
    }

    /// A concrete input in `cond`, run through the interpreter.
    fn witness(&self, cond: Node) -> Option<(Words, interp::Trace)> {
        let assignment = self.bdd.witness(cond)?;
        let mut words: Words = [0; NUM_WORDS];
        for (var, value) in assignment {
            if value {
                let (word, bit) = bits::word_bit_of(var);
                words[word] |= 1 << bit;
            }
        }
        for (w, k) in self.known.iter().enumerate() {
            if let Some(k) = k {
                words[w] = *k;
            }
        }
        let trace = interp::trace_words(self.prog, &words).ok()?;
        Some((words, trace))
    }

    fn finish(mut self) -> SyscallPaths {
        if !self.any_return {
            self.min_steps = 0;
        }
        let mut witnesses = Witnesses::default();
        let mut missing = false;
        let returns: Vec<(RetVal, Node)> = self.returns.iter().map(|(&r, &c)| (r, c)).collect();
        for &(r, c) in &returns {
            match self.witness(c) {
                Some((w, t)) if t.ret == r => {
                    witnesses.returns.insert(r, SeccompData::from_words(&w));
                }
                _ => missing = true,
            }
        }
        if self.any_return {
            match self.witness(self.min_cond) {
                Some((w, t)) if t.steps == self.min_steps as usize => {
                    witnesses.min_steps = Some(SeccompData::from_words(&w))
                }
                _ => missing = true,
            }
            match self.witness(self.max_cond) {
                Some((w, t)) if t.steps == self.max_steps as usize => {
                    witnesses.max_steps = Some(SeccompData::from_words(&w))
                }
                _ => missing = true,
            }
        }
        for word in 0..NUM_WORDS {
            if self.words_read & (1 << word) == 0 {
                continue;
            }
            match self.witness(self.word_conds[word]) {
                Some((w, t)) if t.words_read & (1 << word) != 0 => {
                    witnesses
                        .words
                        .insert(word as u8, SeccompData::from_words(&w));
                }
                _ => missing = true,
            }
        }
        // Exactness is claimed only when every claim has a confirmed witness.
        if missing {
            self.exact = false;
        }
        let depends_on_args = self.depends_on_args(&returns);
        SyscallPaths {
            min_steps: self.min_steps as usize,
            max_steps: self.max_steps as usize,
            words_read: self.words_read,
            returns: returns.iter().map(|&(r, _)| r).collect(),
            returns_complete: self.returns_complete,
            depends_on_args,
            exact: self.exact,
            budget_exceeded: self.budget_exceeded,
            witnesses,
        }
    }

    fn depends_on_args(&mut self, returns: &[(RetVal, Node)]) -> bool {
        let conservative = returns.len() > 1 || !self.returns_complete;
        if !self.exact || !self.ret_sets_exact {
            return conservative;
        }
        if self.known[WORD_NR].is_some() || returns.len() < 2 {
            // Each listed value is returned for some input: more than one means dependence.
            return returns.len() > 1;
        }
        // A set of numbers: is there one number for which the arguments change the decision?
        let unknown_words = |v: u16| bits::word_bit_of(v).0 > WORD_ARCH;
        let mut check = || -> Result<bool, OutOfNodes> {
            for &(_, inputs) in returns {
                let some = self.bdd.exists(inputs, unknown_words)?;
                let others = self.bdd.ite(inputs, FALSE, self.domain)?;
                let other = self.bdd.exists(others, unknown_words)?;
                if self.bdd.and(some, other)? != FALSE {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        check().unwrap_or(conservative)
    }
}

/// Concrete ALU semantics (32-bit, wrapping, shifts by `& 31`); `DIV` by 0 is never asked.
fn concrete_alu(op: u16, a: u32, b: u32) -> u32 {
    match op {
        BPF_ADD => a.wrapping_add(b),
        BPF_SUB => a.wrapping_sub(b),
        BPF_MUL => a.wrapping_mul(b),
        BPF_DIV => a.checked_div(b).unwrap_or(0),
        BPF_OR => a | b,
        BPF_AND => a & b,
        BPF_XOR => a ^ b,
        BPF_LSH => a.wrapping_shl(b & 31),
        BPF_RSH => a.wrapping_shr(b & 31),
        // BPF_NEG (the validator admits no other operation).
        _ => a.wrapping_neg(),
    }
}

fn concrete_jump(op: u16, a: u32, b: u32) -> bool {
    match op {
        BPF_JEQ => a == b,
        BPF_JGT => a > b,
        BPF_JGE => a >= b,
        // BPF_JSET.
        _ => a & b != 0,
    }
}

/// Bit-blasted 32-bit values: bit `i` (0 = least significant) of a value is a BDD over the input
/// bits.
mod bits {
    use super::bdd::{Bdd, Node, OutOfNodes, FALSE, TRUE};
    use super::Bits;
    use crate::bpf::insn::*;

    type R<T> = Result<T, OutOfNodes>;

    /// The BDD variable of bit `bit` of word `word`: words in order, most significant bit
    /// first, so that comparisons with constants stay linear and words stay independent.
    pub fn var_of(word: usize, bit: usize) -> u16 {
        (word * 32 + (31 - bit)) as u16
    }

    /// Inverse of [`var_of`].
    pub fn word_bit_of(var: u16) -> (usize, usize) {
        (var as usize / 32, 31 - var as usize % 32)
    }

    pub fn constant(c: u32) -> Bits {
        std::array::from_fn(|i| if c >> i & 1 == 1 { TRUE } else { FALSE })
    }

    pub fn as_const(b: &Bits) -> Option<u32> {
        b.iter().enumerate().try_fold(0u32, |acc, (i, &n)| match n {
            TRUE => Some(acc | 1 << i),
            FALSE => Some(acc),
            _ => None,
        })
    }

    /// The unknown word `word` itself.
    pub fn word(bdd: &mut Bdd, word: usize) -> R<Bits> {
        let mut b = [FALSE; 32];
        for (i, n) in b.iter_mut().enumerate() {
            *n = bdd.var(var_of(word, i))?;
        }
        Ok(b)
    }

    /// The set `{word ∈ values}` (values sorted ascending), built bottom-up without any
    /// Boolean operation.
    pub fn value_set(bdd: &mut Bdd, word: usize, values: &[u32]) -> R<Node> {
        fn build(bdd: &mut Bdd, word: usize, bit: usize, values: &[u32]) -> R<Node> {
            if values.is_empty() {
                return Ok(FALSE);
            }
            if bit == 0 {
                return Ok(TRUE);
            }
            let b = bit - 1;
            let split = values.partition_point(|v| v >> b & 1 == 0);
            let lo = build(bdd, word, b, &values[..split])?;
            let hi = build(bdd, word, b, &values[split..])?;
            bdd.mk(var_of(word, b), lo, hi)
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        build(bdd, word, 32, &sorted)
    }

    /// `a + b + carry` over `a.len()` bits.
    fn add(bdd: &mut Bdd, a: &[Node], b: &[Node], mut carry: Node) -> R<Vec<Node>> {
        let mut sum = Vec::with_capacity(a.len());
        for (&x, &y) in a.iter().zip(b) {
            let differ = bdd.xor(x, y)?;
            sum.push(bdd.xor(differ, carry)?);
            // Carry out: the incoming carry if the bits differ, else their common value.
            carry = bdd.ite(differ, carry, x)?;
        }
        Ok(sum)
    }

    fn not(bdd: &mut Bdd, a: &[Node]) -> R<Vec<Node>> {
        a.iter().map(|&n| bdd.not(n)).collect()
    }

    fn sub(bdd: &mut Bdd, a: &[Node], b: &[Node]) -> R<Vec<Node>> {
        let nb = not(bdd, b)?;
        add(bdd, a, &nb, TRUE)
    }

    fn select(bdd: &mut Bdd, c: Node, t: &[Node], e: &[Node]) -> R<Vec<Node>> {
        t.iter().zip(e).map(|(&x, &y)| bdd.ite(c, x, y)).collect()
    }

    /// `a >= b` (`or_equal`) or `a > b`, unsigned, over `a.len()` bits.
    fn greater(bdd: &mut Bdd, a: &[Node], b: &[Node], or_equal: bool) -> R<Node> {
        // From the least significant bit up: g_i = a_i > b_i, or a_i == b_i and g_{i-1}.
        let mut g = if or_equal { TRUE } else { FALSE };
        for (&x, &y) in a.iter().zip(b) {
            let if_one = bdd.ite(y, g, TRUE)?;
            let if_zero = bdd.ite(y, FALSE, g)?;
            g = bdd.ite(x, if_one, if_zero)?;
        }
        Ok(g)
    }

    fn to_bits(v: Vec<Node>) -> Bits {
        let mut b = [FALSE; 32];
        b.copy_from_slice(&v[..32]);
        b
    }

    fn shift_const(a: &Bits, amount: u32, left: bool) -> Bits {
        let s = (amount & 31) as usize;
        std::array::from_fn(|i| {
            if left {
                if i >= s {
                    a[i - s]
                } else {
                    FALSE
                }
            } else if i + s < 32 {
                a[i + s]
            } else {
                FALSE
            }
        })
    }

    /// Shift by a symbolic amount (its low five bits, as the kernel does): a barrel shifter.
    fn shift_by(bdd: &mut Bdd, a: &Bits, amount: &Bits, left: bool) -> R<Bits> {
        let mut cur = *a;
        for (j, &bit) in amount.iter().enumerate().take(5) {
            let shifted = shift_const(&cur, 1 << j, left);
            cur = to_bits(select(bdd, bit, &shifted, &cur)?);
        }
        Ok(cur)
    }

    fn mul(bdd: &mut Bdd, a: &Bits, b: &Bits) -> R<Bits> {
        let mut acc = [FALSE; 32];
        for (j, &bj) in b.iter().enumerate() {
            if bj == FALSE {
                continue;
            }
            let shifted = shift_const(a, j as u32, true);
            let mut partial = [FALSE; 32];
            for (p, &s) in partial.iter_mut().zip(&shifted).skip(j) {
                *p = bdd.and(bj, s)?;
            }
            acc = to_bits(add(bdd, &acc, &partial, FALSE)?);
        }
        Ok(acc)
    }

    /// Unsigned `a / b` by restoring division; inputs with `b == 0` are the caller's concern
    /// (they never reach a `DIV` in the kernel).
    fn div(bdd: &mut Bdd, a: &Bits, b: &Bits) -> R<Bits> {
        // A 33-bit remainder: before each shift it is below b < 2^32.
        let mut divisor = b.to_vec();
        divisor.push(FALSE);
        let mut rem = vec![FALSE; 33];
        let mut quotient = [FALSE; 32];
        for i in (0..32).rev() {
            rem.rotate_right(1);
            rem[0] = a[i];
            let fits = greater(bdd, &rem, &divisor, true)?;
            quotient[i] = fits;
            let reduced = sub(bdd, &rem, &divisor)?;
            rem = select(bdd, fits, &reduced, &rem)?;
        }
        Ok(quotient)
    }

    /// `a OP b` for an ALU operation (`b` ignored by `NEG`).
    pub fn alu(bdd: &mut Bdd, op: u16, a: &Bits, b: &Bits) -> R<Bits> {
        let per_bit = |bdd: &mut Bdd, f: fn(&mut Bdd, Node, Node) -> R<Node>| -> R<Bits> {
            let mut r = [FALSE; 32];
            for ((out, &x), &y) in r.iter_mut().zip(a).zip(b) {
                *out = f(bdd, x, y)?;
            }
            Ok(r)
        };
        Ok(match op {
            BPF_AND => per_bit(bdd, Bdd::and)?,
            BPF_OR => per_bit(bdd, Bdd::or)?,
            BPF_XOR => per_bit(bdd, Bdd::xor)?,
            BPF_ADD => to_bits(add(bdd, a, b, FALSE)?),
            BPF_SUB => to_bits(sub(bdd, a, b)?),
            // By a power of two these are shifts, which cost no BDD operation.
            BPF_MUL => match as_const(b).filter(|k| k.is_power_of_two()) {
                Some(k) => shift_const(a, k.trailing_zeros(), true),
                None => mul(bdd, a, b)?,
            },
            BPF_DIV => match as_const(b).filter(|k| k.is_power_of_two()) {
                Some(k) => shift_const(a, k.trailing_zeros(), false),
                None => div(bdd, a, b)?,
            },
            BPF_LSH | BPF_RSH => match as_const(b) {
                Some(k) => shift_const(a, k, op == BPF_LSH),
                None => shift_by(bdd, a, b, op == BPF_LSH)?,
            },
            // BPF_NEG.
            _ => to_bits(sub(bdd, &[FALSE; 32], a)?),
        })
    }

    /// The condition of a conditional jump comparing `a` with `b`.
    pub fn compare(bdd: &mut Bdd, op: u16, a: &Bits, b: &Bits) -> R<Node> {
        match op {
            BPF_JEQ => {
                // Least significant bit first, so each step adds a node above the previous ones.
                let mut eq = TRUE;
                for (&x, &y) in a.iter().zip(b) {
                    let same = bdd.iff(x, y)?;
                    eq = bdd.and(same, eq)?;
                }
                Ok(eq)
            }
            BPF_JGT => greater(bdd, a, b, false),
            BPF_JGE => greater(bdd, a, b, true),
            // BPF_JSET.
            _ => {
                let mut any = FALSE;
                for (&x, &y) in a.iter().zip(b) {
                    let both = bdd.and(x, y)?;
                    any = bdd.or(both, any)?;
                }
                Ok(any)
            }
        }
    }

    /// Every value `v` the bit vector takes on inputs in `cond`, with the inputs giving it;
    /// `None` if there are more than `limit`.
    pub fn enumerate(
        bdd: &mut Bdd,
        v: &Bits,
        cond: Node,
        limit: usize,
    ) -> R<Option<Vec<(u32, Node)>>> {
        let mut found = Vec::new();
        let mut stack = vec![(32usize, 0u32, cond)];
        while let Some((bit, value, c)) = stack.pop() {
            if bit == 0 {
                if found.len() == limit {
                    return Ok(None);
                }
                found.push((value, c));
                continue;
            }
            let b = bit - 1;
            let one = bdd.and(c, v[b])?;
            let zero = bdd.ite(v[b], FALSE, c)?;
            if one != FALSE {
                stack.push((b, value | 1 << b, one));
            }
            if zero != FALSE {
                stack.push((b, value, zero));
            }
        }
        Ok(Some(found))
    }
}

/// A small reduced ordered BDD package with a shared node table, so that equal functions are
/// equal node ids (which makes state merging and feasibility checks O(1)).
mod bdd {
    use std::collections::HashMap;
    use std::hash::{BuildHasherDefault, Hasher};

    /// FxHash (as in rustc): the keys here are small integer tuples from our own tables.
    #[derive(Default, Clone, Copy)]
    pub struct FxHasher(u64);
    impl Hasher for FxHasher {
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.add(b as u64);
            }
        }
        fn write_u8(&mut self, i: u8) {
            self.add(i as u64)
        }
        fn write_u16(&mut self, i: u16) {
            self.add(i as u64)
        }
        fn write_u32(&mut self, i: u32) {
            self.add(i as u64)
        }
        fn write_u64(&mut self, i: u64) {
            self.add(i)
        }
        fn write_usize(&mut self, i: usize) {
            self.add(i as u64)
        }
        fn finish(&self) -> u64 {
            self.0
        }
    }
    impl FxHasher {
        #[inline]
        fn add(&mut self, v: u64) {
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

    /// A node id; 0 and 1 are the constants.
    pub type Node = u32;
    pub const FALSE: Node = 0;
    pub const TRUE: Node = 1;
    const LEAF: u16 = u16::MAX;
    /// Entries kept in the operation cache before it is flushed (it is only a cache).
    const MEMO_LIMIT: usize = 1 << 20;

    /// The node budget ran out.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct OutOfNodes;

    pub struct Bdd {
        /// `(variable, low child, high child)`; variables increase from a node to its children.
        nodes: Vec<(u16, Node, Node)>,
        unique: FxMap<(u16, Node, Node), Node>,
        memo: FxMap<(Node, Node, Node), Node>,
        limit: usize,
    }

    impl Bdd {
        pub fn new(limit: usize) -> Self {
            Bdd {
                nodes: vec![(LEAF, FALSE, FALSE), (LEAF, TRUE, TRUE)],
                unique: FxMap::default(),
                memo: FxMap::default(),
                limit: limit.max(2),
            }
        }

        fn top(&self, n: Node) -> u16 {
            self.nodes[n as usize].0
        }

        /// The node `if var then hi else lo`; `var` must precede the children's variables.
        pub fn mk(&mut self, var: u16, lo: Node, hi: Node) -> Result<Node, OutOfNodes> {
            if lo == hi {
                return Ok(lo);
            }
            debug_assert!(var < self.top(lo) && var < self.top(hi));
            if let Some(&n) = self.unique.get(&(var, lo, hi)) {
                return Ok(n);
            }
            if self.nodes.len() >= self.limit {
                return Err(OutOfNodes);
            }
            let n = self.nodes.len() as Node;
            self.nodes.push((var, lo, hi));
            self.unique.insert((var, lo, hi), n);
            Ok(n)
        }

        pub fn var(&mut self, var: u16) -> Result<Node, OutOfNodes> {
            self.mk(var, FALSE, TRUE)
        }

        fn cofactors(&self, n: Node, var: u16) -> (Node, Node) {
            let (v, lo, hi) = self.nodes[n as usize];
            if v == var {
                (lo, hi)
            } else {
                (n, n)
            }
        }

        /// `if f then g else h`.
        pub fn ite(&mut self, f: Node, g: Node, h: Node) -> Result<Node, OutOfNodes> {
            if f == TRUE {
                return Ok(g);
            }
            if f == FALSE {
                return Ok(h);
            }
            let g = if g == f { TRUE } else { g };
            let h = if h == f { FALSE } else { h };
            if g == h {
                return Ok(g);
            }
            if g == TRUE && h == FALSE {
                return Ok(f);
            }
            if let Some(&r) = self.memo.get(&(f, g, h)) {
                return Ok(r);
            }
            let v = self.top(f).min(self.top(g)).min(self.top(h));
            let (f0, f1) = self.cofactors(f, v);
            let (g0, g1) = self.cofactors(g, v);
            let (h0, h1) = self.cofactors(h, v);
            let lo = self.ite(f0, g0, h0)?;
            let hi = self.ite(f1, g1, h1)?;
            let r = self.mk(v, lo, hi)?;
            if self.memo.len() >= MEMO_LIMIT {
                self.memo.clear();
            }
            self.memo.insert((f, g, h), r);
            Ok(r)
        }

        pub fn not(&mut self, f: Node) -> Result<Node, OutOfNodes> {
            self.ite(f, FALSE, TRUE)
        }
        pub fn and(&mut self, f: Node, g: Node) -> Result<Node, OutOfNodes> {
            self.ite(f, g, FALSE)
        }
        pub fn or(&mut self, f: Node, g: Node) -> Result<Node, OutOfNodes> {
            self.ite(f, TRUE, g)
        }
        pub fn xor(&mut self, f: Node, g: Node) -> Result<Node, OutOfNodes> {
            let ng = self.not(g)?;
            self.ite(f, ng, g)
        }
        pub fn iff(&mut self, f: Node, g: Node) -> Result<Node, OutOfNodes> {
            let ng = self.not(g)?;
            self.ite(f, g, ng)
        }

        /// `∃ vars. f` for the variables `quantified` selects.
        pub fn exists(
            &mut self,
            f: Node,
            quantified: impl Fn(u16) -> bool,
        ) -> Result<Node, OutOfNodes> {
            let mut memo = FxMap::default();
            self.exists_rec(f, &quantified, &mut memo)
        }

        fn exists_rec(
            &mut self,
            f: Node,
            quantified: &impl Fn(u16) -> bool,
            memo: &mut FxMap<Node, Node>,
        ) -> Result<Node, OutOfNodes> {
            if f == FALSE || f == TRUE {
                return Ok(f);
            }
            if let Some(&r) = memo.get(&f) {
                return Ok(r);
            }
            let (v, lo, hi) = self.nodes[f as usize];
            let l = self.exists_rec(lo, quantified, memo)?;
            let h = self.exists_rec(hi, quantified, memo)?;
            let r = if quantified(v) {
                self.or(l, h)?
            } else {
                self.mk(v, l, h)?
            };
            memo.insert(f, r);
            Ok(r)
        }

        /// One satisfying partial assignment of `f` (variables not listed are free).
        pub fn witness(&self, mut f: Node) -> Option<Vec<(u16, bool)>> {
            if f == FALSE {
                return None;
            }
            let mut path = Vec::new();
            while f != TRUE {
                let (v, lo, hi) = self.nodes[f as usize];
                // In a reduced BDD every node other than FALSE is satisfiable.
                if lo != FALSE {
                    path.push((v, false));
                    f = lo;
                } else {
                    path.push((v, true));
                    f = hi;
                }
            }
            Some(path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::action::SECCOMP_RET_ALLOW;
    use crate::bpf::testing::{random_data, random_program, GenConfig, Rng};

    const X86_64: u32 = 0xc000_003e;

    fn jump(op: u16, k: u32, jt: u8, jf: u8) -> Insn {
        Insn::jump(BPF_JMP | op | BPF_K, k, jt, jf)
    }

    fn rets(p: &SyscallPaths) -> Vec<RetVal> {
        p.returns.iter().copied().collect()
    }

    #[test]
    fn masked_flags_check_like_docker_clone() {
        // clone allowed only when no namespace flag (mask 0x7e020000) is set in args[0].lo.
        let prog = Program::new(vec![
            Insn::ld_abs(0),
            jump(BPF_JEQ, 56, 0, 4),
            Insn::ld_abs(16),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 0x7e02_0000),
            jump(BPF_JEQ, 0, 1, 0),
            Insn::ret(RetVal::errno(1).0),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        let p = analyze_syscall(&prog, X86_64, 56, &Budget::default()).unwrap();
        assert!(p.exact);
        assert_eq!(rets(&p), [RetVal::errno(1), RetVal::ALLOW]);
        assert_eq!((p.min_steps, p.max_steps), (6, 6));
        assert_eq!(p.words_read, 0b1_0001);
        assert!(p.depends_on_args);
        let deny = p.witnesses.returns[&RetVal::errno(1)];
        assert_ne!(deny.args[0] & 0x7e02_0000, 0);
        // A mask that can never match makes the ERRNO path infeasible.
        let mut never = prog.clone();
        never.insns[4] = jump(BPF_JEQ, 1, 1, 0);
        let p = analyze_syscall(&never, X86_64, 56, &Budget::default()).unwrap();
        assert_eq!(rets(&p), [RetVal::errno(1)]);
        assert!(!p.depends_on_args && p.exact);
    }

    #[test]
    fn contradictory_branches_are_pruned() {
        // args[0].lo > 10, then == 5: the ALLOW return is unreachable.
        let prog = Program::new(vec![
            Insn::ld_abs(16),
            jump(BPF_JGT, 10, 0, 2),
            jump(BPF_JEQ, 5, 0, 1),
            Insn::ret(SECCOMP_RET_ALLOW),
            Insn::ret(0),
        ]);
        let p = analyze_syscall(&prog, X86_64, 0, &Budget::default()).unwrap();
        assert_eq!(rets(&p), [RetVal(0)]);
        assert_eq!((p.min_steps, p.max_steps), (3, 4));
        assert!(p.exact && !p.depends_on_args);
    }

    #[test]
    fn arithmetic_on_arguments_is_exact() {
        // (args[0].lo * 3 + 1) / X where X = args[1].lo: ret 0 when X == 0 (kernel rule),
        // RET A otherwise; A ≤ 7 is checked first so values are few.
        let prog = Program::new(vec![
            Insn::ld_abs(16),
            jump(BPF_JGT, 7, 5, 0),
            Insn::stmt(BPF_ALU | BPF_MUL | BPF_K, 3),
            Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 1),
            Insn::stmt(BPF_LDX | BPF_W | BPF_LEN, 0),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::stmt(BPF_RET | BPF_A, 0),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        // X = 64 (LEN): (3a+1)/64 is 0 for a <= 7.
        let p = analyze_syscall(&prog, X86_64, 0, &Budget::default()).unwrap();
        assert!(p.exact, "{p:?}");
        assert_eq!(rets(&p), [RetVal(0), RetVal::ALLOW]);
        assert_eq!((p.min_steps, p.max_steps), (3, 7));
    }

    #[test]
    fn division_by_symbolic_x_and_ret_a_values() {
        // A = 100 / (args[0].lo & 3): 0 (div by zero), 100, 50, 33.
        let prog = Program::new(vec![
            Insn::ld_abs(16),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 3),
            Insn::stmt(BPF_MISC | BPF_TAX, 0),
            Insn::stmt(BPF_LD | BPF_IMM, 100),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ]);
        let p = analyze_syscall(&prog, X86_64, 0, &Budget::default()).unwrap();
        assert!(p.exact, "{p:?}");
        assert_eq!(rets(&p), [RetVal(0), RetVal(33), RetVal(50), RetVal(100)]);
        assert_eq!((p.min_steps, p.max_steps), (5, 6));
        assert_eq!(p.witnesses.returns.len(), 4);
    }

    #[test]
    fn unnamed_numbers_of_x86_64_exclude_the_table_and_x32() {
        // Allow exactly nr 1000 and 0x40001000, else ERRNO(1).
        let prog = Program::new(vec![
            Insn::ld_abs(0),
            jump(BPF_JEQ, 1000, 2, 0),
            jump(BPF_JEQ, 0x4000_1000, 1, 0),
            Insn::ret(RetVal::errno(1).0),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        let a = Analyzer::new(&prog).unwrap();
        let p = a.analyze(X86_64, NrSet::Unnamed(Arch::X86_64), &Budget::default());
        assert!(p.exact);
        assert_eq!(rets(&p), [RetVal::errno(1), RetVal::ALLOW]);
        assert!(!p.depends_on_args, "nr alone decides");
        assert_eq!(p.witnesses.returns[&RetVal::ALLOW].nr, 1000);
        let x32 = a.analyze(X86_64, NrSet::Unnamed(Arch::X32), &Budget::default());
        assert_eq!(x32.witnesses.returns[&RetVal::ALLOW].nr as u32, 0x4000_1000);
        // read (0) is named, so the unnamed set cannot reach a check on 0.
        let only_read = Program::new(vec![
            Insn::ld_abs(0),
            jump(BPF_JEQ, 0, 0, 1),
            Insn::ret(0),
            Insn::ret(SECCOMP_RET_ALLOW),
        ]);
        let p = Analyzer::new(&only_read).unwrap().analyze(
            X86_64,
            NrSet::Unnamed(Arch::X86_64),
            &Budget::default(),
        );
        assert_eq!(rets(&p), [RetVal::ALLOW]);
    }

    #[test]
    fn tiny_budgets_stay_sound() {
        let prog = Program::new(vec![
            Insn::ld_abs(16),
            Insn::stmt(BPF_MISC | BPF_TAX, 0),
            Insn::ld_abs(24),
            Insn::stmt(BPF_ALU | BPF_MUL | BPF_X, 0),
            jump(BPF_JEQ, 12345, 0, 1),
            Insn::ret(SECCOMP_RET_ALLOW),
            Insn::ret(0),
        ]);
        let budget = Budget {
            max_bdd_nodes: 200,
            ..Budget::default()
        };
        let p = analyze_syscall(&prog, X86_64, 0, &budget).unwrap();
        assert!(!p.exact && p.budget_exceeded);
        assert_eq!(rets(&p), [RetVal(0), RetVal::ALLOW]);
        assert_eq!((p.min_steps, p.max_steps), (6, 6));
    }

    /// Soundness against the interpreter on random programs and inputs, and completeness of
    /// exact results through their witnesses.
    #[test]
    fn random_programs_agree_with_the_interpreter() {
        let mut rng = Rng::new(7);
        let cfg = GenConfig::default();
        // A small node budget keeps the test fast; results past it must stay sound.
        let budget = Budget {
            max_bdd_nodes: 1 << 15,
            ..Budget::default()
        };
        let starved = Budget {
            max_states: 4,
            max_bdd_nodes: 300,
            max_ret_a_values: 2,
        };
        let x86_64 = Arch::X86_64.syscalls();
        let mut exact = 0;
        for round in 0..3000 {
            let prog = random_program(&mut rng, &cfg);
            let a = Analyzer::new(&prog).expect("generator makes valid programs");
            let sample = random_data(&mut rng, &prog, &[X86_64]);
            // Every tenth program: all unnamed x86_64 numbers at once.
            let unnamed = round % 10 == 0;
            let (token, nr) = if unnamed {
                (X86_64, 0)
            } else {
                (sample.arch, sample.nr as u32)
            };
            let numbers = if unnamed {
                NrSet::Unnamed(Arch::X86_64)
            } else {
                NrSet::One(nr)
            };
            let p = a.analyze(token, numbers, &budget);
            // Starved of states and nodes, the coarse fallback must still bound the truth.
            let coarse = a.analyze(token, numbers, &starved);
            for _ in 0..20 {
                let mut d = random_data(&mut rng, &prog, &[token]);
                d.arch = token;
                if unnamed {
                    let n = d.nr as u32 & !X32_SYSCALL_BIT;
                    if x86_64.name(n).is_some() {
                        continue;
                    }
                    d.nr = n as i32;
                } else {
                    d.nr = nr as i32;
                }
                let t = interp::trace(&prog, &d).unwrap();
                for p in [&p, &coarse] {
                    assert!(
                        p.returns.contains(&t.ret) || !p.returns_complete,
                        "{prog:?} {d:?}: {t:?} not in {p:?}"
                    );
                    assert!(
                        t.steps >= p.min_steps && t.steps <= p.max_steps,
                        "{prog:?} {d:?}: {t:?} vs {p:?}"
                    );
                    assert_eq!(t.words_read & !p.words_read, 0, "{prog:?} {d:?}");
                }
                if p.exact && !p.depends_on_args && !unnamed {
                    assert_eq!(rets(&p), [t.ret]);
                }
            }
            if p.exact {
                exact += 1;
                assert_eq!(p.witnesses.returns.len(), p.returns.len());
                assert!(p.witnesses.min_steps.is_some() && p.witnesses.max_steps.is_some());
                assert_eq!(p.witnesses.words.len(), p.words_read.count_ones() as usize);
            }
        }
        assert!(exact > 2500, "only {exact} exact");
    }
}
