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
//! is bit-blasted: 32 binary decision diagrams (BDDs) over the 512 bits of `seccomp_data` (in
//! the variable order [`crate::bpf::symbolic`] documents). Every ALU operation (including `MUL`,
//! `DIV`, shifts by X, and values mixing several words) is computed exactly on these bit vectors,
//! and every comparison becomes one BDD. Each path carries its path condition as a BDD; a branch
//! side whose condition is `false` is infeasible and dropped, so feasibility is decided exactly.
//! States that reach the same instruction with the same registers, scratch memory and step count
//! are merged by OR-ing their conditions, which keeps real filters (a chain or tree of
//! comparisons) linear in their size. The engine is shared with the verifier: see
//! [`crate::bpf::symbolic`].
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

use super::data::{Endian, Field, SeccompData, Words, NUM_WORDS, OFF_ARCH};
use super::insn::*;
use super::interp;
use super::symbolic::bdd::{self, Bdd, Node, OutOfNodes, FALSE, TRUE};
use super::symbolic::{self, bitvec, Limits, Machine, Observer, State, Val, WORD_ARCH, WORD_NR};
use super::validate::{validate, ValidationError};
use super::RetVal;
use crate::arch::Arch;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

/// How much work one analysis may do before it settles for a sound over-approximation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Most (instruction, state) steps explored exactly; past it, states at an instruction are
    /// merged whatever their registers and step counts.
    pub max_states: usize,
    /// Most BDD nodes; past it, new symbolic values become opaque.
    pub max_bdd_nodes: usize,
    /// Most BDD steps of one analysis (see [`crate::bpf::symbolic::bdd::Limits::max_steps`]);
    /// past it, as past `max_bdd_nodes`.
    pub max_bdd_steps: u64,
    /// Most BDD steps of all the analyses one [`Analyzer`] runs at full budget; past it, each
    /// later analysis gets `max_bdd_steps / 256`. A program that exhausts the budget on
    /// every syscall (a multiplication of two argument words before any test of `nr`) then
    /// costs about a second instead of a second per forty syscalls.
    pub max_total_bdd_steps: u64,
    /// Most (instruction, state) steps of all the analyses one [`Analyzer`] runs at full
    /// budget; past it, each later analysis gets `max_states / 256`. A program whose paths
    /// multiply (a value summed in scratch memory over 16 bit tests, so that no two paths
    /// merge) reached `max_states` on every syscall of every arch: 14 minutes for one
    /// `secopt analyze` of a 100-instruction filter with 15 arches.
    pub max_total_states: usize,
    /// Most distinct values listed for one `RET A` of a computed value.
    pub max_ret_a_values: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_states: 200_000,
            // Real filters need a few thousand nodes.
            max_bdd_nodes: 1 << 18,
            // Measured once (temporary instrumentation): the test suite's programs need at
            // most ~41 000 steps for one syscall, secopt's Docker filter ~15 000 for all its
            // 1 219 (x86_64+x86+x32) together. Spending 2^24 and then starving takes ~0.73 s
            // on the worst input found (`cargo bench --bench compile -- pathological`).
            max_bdd_steps: 1 << 20,
            max_total_bdd_steps: 1 << 24,
            max_total_states: 1 << 23,
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
    /// [`crate::arch::is_x32_nr`]: numbers with bit 30 set and bit 31 clear belong to x32,
    /// the rest (`-1` among them) to x86_64.
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

/// Analyses one validated program many times (validation is done once). Its step budget
/// spans all its analyses ([`Budget::max_total_bdd_steps`]): make one per pass over a
/// program, not one for a process's lifetime.
#[derive(Debug, Clone)]
pub struct Analyzer<'p> {
    prog: &'p Program,
    /// BDD steps its analyses have taken (see [`Budget::max_total_bdd_steps`]).
    spent: Cell<u64>,
    /// States its analyses have explored (see [`Budget::max_total_states`]).
    states: Cell<usize>,
}

impl<'p> Analyzer<'p> {
    /// Validates `prog` as the kernel would; the analysis is only defined for valid programs.
    pub fn new(prog: &'p Program) -> Result<Self, ValidationError> {
        validate(prog)?;
        Ok(Self::checked(prog))
    }

    /// [`Analyzer::new`] for a program the kernel never loads, which may be longer than its
    /// 4096 instructions: a stack joined into one
    /// ([`crate::bpf::stack::joined_any_length`]), analyzed for what it decides.
    pub fn any_length(prog: &'p Program) -> Result<Self, ValidationError> {
        crate::bpf::validate::validate_structure(prog)?;
        Ok(Self::checked(prog))
    }

    fn checked(prog: &'p Program) -> Self {
        Analyzer {
            prog,
            spent: Cell::new(0),
            states: Cell::new(0),
        }
    }

    /// The paths of syscall `nr` with arch token `arch_token`.
    pub fn syscall(&self, arch_token: u32, nr: u32, budget: &Budget) -> SyscallPaths {
        self.analyze(arch_token, NrSet::One(nr), budget)
    }

    /// The paths of every number in `numbers`, seen with arch token `arch_token`.
    pub fn analyze(&self, arch_token: u32, numbers: NrSet, budget: &Budget) -> SyscallPaths {
        let steps = if self.spent.get() < budget.max_total_bdd_steps {
            budget.max_bdd_steps
        } else {
            budget.max_bdd_steps / 256
        };
        let max_states = if self.states.get() < budget.max_total_states {
            budget.max_states
        } else {
            budget.max_states / 256
        };
        let exec = Exec::new(self.prog, budget, steps, arch_token, numbers);
        let (paths, spent, states) = exec.run(max_states);
        self.spent.set(self.spent.get().saturating_add(spent));
        self.states.set(self.states.get().saturating_add(states));
        paths
    }

    /// BDD steps all analyses so far have taken (see [`Budget::max_total_bdd_steps`]).
    pub fn bdd_steps(&self) -> u64 {
        self.spent.get()
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

/// The architectures a program checks for: every known arch token compared (with a constant)
/// while the accumulator holds `seccomp_data.arch`, found by the disassembler's data-flow so
/// that a syscall number that happens to equal a token does not count. Sorted; x86_64's
/// token brings x32 along.
pub fn arches_checked(prog: &Program) -> Vec<Arch> {
    let mut found: Vec<Arch> = Vec::new();
    for token in arch_tokens_checked(prog) {
        for &a in Arch::from_token(token) {
            if !found.contains(&a) {
                found.push(a);
            }
        }
    }
    found.sort();
    found
}

/// Every constant a program compares `seccomp_data.arch` with (known arch tokens or not),
/// sorted and deduplicated; see [`arches_checked`].
pub fn arch_tokens_checked(prog: &Program) -> Vec<u32> {
    use super::disasm;
    let knowledge = disasm::infer_knowledge(&prog.insns, disasm::ArchSet::anything());
    let mut tokens: Vec<u32> = prog
        .insns
        .iter()
        .zip(&knowledge)
        .filter(|(insn, know)| {
            let holds_arch = know.is_some_and(|k| k.a == disasm::Value::Word(OFF_ARCH));
            insn.is_conditional_jump() && src(insn.code) == BPF_K && holds_arch
        })
        .map(|(insn, _)| insn.k)
        .collect();
    tokens.sort_unstable();
    tokens.dedup();
    tokens
}

/// What one analysis found, reported by the symbolic executor.
struct Found {
    max_ret_a_values: usize,
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
}

impl Found {
    fn steps(&mut self, lo: u32, hi: u32, cond: Node) {
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

    /// Records a return of `ret` after `lo..=hi` instructions for the inputs in `cond`.
    fn record(&mut self, m: &mut Machine, ret: RetVal, lo: u32, hi: u32, cond: Node) {
        self.steps(lo, hi, cond);
        let entry = self.returns.entry(ret).or_insert(FALSE);
        match m.bdd.or(*entry, cond) {
            Ok(n) => *entry = n,
            Err(OutOfNodes) => {
                self.ret_sets_exact = false;
                m.out_of_budget();
            }
        }
    }

    /// A return of values that are not listed.
    fn open_return(&mut self, m: &mut Machine, lo: u32, hi: u32, cond: Node) {
        m.exact = false;
        self.returns_complete = false;
        self.steps(lo, hi, cond);
    }
}

impl Observer for Found {
    fn load(&mut self, _m: &mut Machine, word: usize, cond: Node) {
        if self.words_read & (1 << word) == 0 {
            self.words_read |= 1 << word;
            self.word_conds[word] = cond;
        }
    }

    fn ret(&mut self, m: &mut Machine, value: Val, lo: u32, hi: u32, cond: Node) {
        match m.values(value, cond, self.max_ret_a_values) {
            Ok(Some(values)) => {
                for (v, c) in values {
                    self.record(m, RetVal(v), lo, hi, c);
                }
            }
            Ok(None) => self.open_return(m, lo, hi, cond),
            Err(OutOfNodes) => {
                m.out_of_budget();
                self.open_return(m, lo, hi, cond);
            }
        }
    }
}

struct Exec<'p> {
    prog: &'p Program,
    m: Machine,
    numbers: NrSet,
    domain: Node,
    found: Found,
}

impl<'p> Exec<'p> {
    fn new(
        prog: &'p Program,
        budget: &'p Budget,
        max_steps: u64,
        arch_token: u32,
        numbers: NrSet,
    ) -> Self {
        let mut m = Machine::new(Bdd::with_limits(bdd::Limits {
            max_nodes: budget.max_bdd_nodes,
            max_bytes: None,
            max_steps: Some(max_steps),
            deadline: None,
        }));
        m.set_known(WORD_ARCH, arch_token);
        if let NrSet::One(nr) = numbers {
            m.set_known(WORD_NR, nr);
        }
        Exec {
            prog,
            m,
            numbers,
            domain: TRUE,
            found: Found {
                max_ret_a_values: budget.max_ret_a_values,
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
            },
        }
    }

    /// The inputs the analysis covers, as a condition on `nr`.
    fn domain_of(&mut self, numbers: NrSet) -> Result<Node, OutOfNodes> {
        let NrSet::Unnamed(arch) = numbers else {
            return Ok(TRUE);
        };
        let bdd = &mut self.m.bdd;
        let named: Vec<u32> = arch.syscalls().iter().map(|(nr, _)| nr).collect();
        let in_table = bitvec::value_set(bdd, WORD_NR, &named)?;
        let mut domain = bdd.not(in_table)?;
        if Arch::from_token(arch.token()).len() > 1 {
            // x86_64 and x32 share the token: bits 30 and 31 of nr pick the ABI.
            let x32 = symbolic::x32_numbers(bdd)?;
            let side = if arch == Arch::X32 {
                x32
            } else {
                bdd.not(x32)?
            };
            domain = bdd.and(domain, side)?;
        }
        Ok(domain)
    }

    /// The paths, the BDD steps taken to find them and the states explored (at most
    /// `max_states` exactly).
    fn run(mut self, max_states: usize) -> (SyscallPaths, u64, usize) {
        let domain = match self.domain_of(self.numbers) {
            Ok(d) => d,
            Err(OutOfNodes) => {
                self.m.out_of_budget();
                TRUE
            }
        };
        self.domain = domain;
        let mut states = 0;
        if domain != FALSE {
            let limits = Limits {
                max_states,
                count_steps: true,
                strict: false,
                deadline: None,
            };
            // Without `strict` the exploration always runs to the end.
            states = symbolic::explore(
                self.prog,
                &mut self.m,
                State::initial(domain),
                &limits,
                &mut self.found,
            )
            .unwrap_or(max_states);
        }
        let steps = self.m.bdd.steps();
        (self.finish(), steps, states)
    }

    /// A concrete input in `cond`, run through the interpreter.
    fn witness(&self, cond: Node) -> Option<(Words, interp::Trace)> {
        let words = self.m.witness(cond)?;
        let trace = interp::trace_words(self.prog, &words).ok()?;
        Some((words, trace))
    }

    fn finish(mut self) -> SyscallPaths {
        let f = &self.found;
        let (any_return, min_steps, max_steps) = (
            f.any_return,
            if f.any_return { f.min_steps } else { 0 },
            f.max_steps,
        );
        let mut witnesses = Witnesses::default();
        let mut missing = false;
        let returns: Vec<(RetVal, Node)> = f.returns.iter().map(|(&r, &c)| (r, c)).collect();
        for &(r, c) in &returns {
            match self.witness(c) {
                Some((w, t)) if t.ret == r => {
                    witnesses.returns.insert(r, SeccompData::from_words(&w));
                }
                _ => missing = true,
            }
        }
        if any_return {
            match self.witness(f.min_cond) {
                Some((w, t)) if t.steps == min_steps as usize => {
                    witnesses.min_steps = Some(SeccompData::from_words(&w))
                }
                _ => missing = true,
            }
            match self.witness(f.max_cond) {
                Some((w, t)) if t.steps == max_steps as usize => {
                    witnesses.max_steps = Some(SeccompData::from_words(&w))
                }
                _ => missing = true,
            }
        }
        for word in 0..NUM_WORDS {
            if f.words_read & (1 << word) == 0 {
                continue;
            }
            match self.witness(f.word_conds[word]) {
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
            self.m.exact = false;
        }
        let depends_on_args = self.depends_on_args(&returns);
        SyscallPaths {
            min_steps: min_steps as usize,
            max_steps: max_steps as usize,
            words_read: self.found.words_read,
            returns: returns.iter().map(|&(r, _)| r).collect(),
            returns_complete: self.found.returns_complete,
            depends_on_args,
            exact: self.m.exact,
            budget_exceeded: self.m.budget_exceeded,
            witnesses,
        }
    }

    fn depends_on_args(&mut self, returns: &[(RetVal, Node)]) -> bool {
        let conservative = returns.len() > 1 || !self.found.returns_complete;
        if !self.m.exact || !self.found.ret_sets_exact {
            return conservative;
        }
        if self.m.known(WORD_NR).is_some() || returns.len() < 2 {
            // Each listed value is returned for some input: more than one means dependence.
            return returns.len() > 1;
        }
        // A set of numbers: is there one number for which the arguments change the decision?
        let unknown_words = |v: u16| {
            let w = symbolic::word_bit_of(v).0;
            w != WORD_NR && w != WORD_ARCH
        };
        let domain = self.domain;
        let bdd = &mut self.m.bdd;
        let mut check = || -> Result<bool, OutOfNodes> {
            for &(_, inputs) in returns {
                let some = bdd.exists(inputs, unknown_words)?;
                let others = bdd.and_not(domain, inputs)?;
                let other = bdd.exists(others, unknown_words)?;
                if bdd.and(some, other)? != FALSE {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        check().unwrap_or(conservative)
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

    #[test]
    fn past_the_total_step_budget_later_analyses_starve_but_stay_sound() {
        // (args[0] & 0xff) * (args[1] & 0xff) == 12345 never holds: 12345 = 3·5·823 has no
        // factor pair within 255. An exact analysis proves the ALLOW unreachable.
        let prog = Program::new(vec![
            Insn::ld_abs(16),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 0xff),
            Insn::stmt(BPF_MISC | BPF_TAX, 0),
            Insn::ld_abs(24),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 0xff),
            Insn::stmt(BPF_ALU | BPF_MUL | BPF_X, 0),
            jump(BPF_JEQ, 12345, 0, 1),
            Insn::ret(SECCOMP_RET_ALLOW),
            Insn::ret(0),
        ]);
        let unlimited = Budget {
            max_total_bdd_steps: u64::MAX,
            ..Budget::default()
        };
        let probe = Analyzer::new(&prog).unwrap();
        let p = probe.syscall(X86_64, 0, &unlimited);
        assert!(p.exact);
        assert_eq!(rets(&p), [RetVal(0)]);
        let needed = probe.bdd_steps();
        assert!(
            needed > 256,
            "{needed} steps: too few for a starved run to fall short"
        );
        // Exactly enough steps per analysis, and a total the first analysis uses up.
        let budget = Budget {
            max_bdd_steps: needed,
            max_total_bdd_steps: needed,
            ..Budget::default()
        };
        let a = Analyzer::new(&prog).unwrap();
        assert_eq!(a.syscall(X86_64, 0, &budget), p);
        assert_eq!(a.bdd_steps(), needed);
        // The next analysis gets needed / 256 steps: inexact, and still sound.
        let starved = a.syscall(X86_64, 0, &budget);
        assert!(!starved.exact && starved.budget_exceeded);
        assert_eq!(rets(&starved), [RetVal(0), RetVal::ALLOW]);
        assert!(starved.min_steps <= p.min_steps && starved.max_steps >= p.max_steps);
    }

    /// The state budget spans an analyzer's analyses too ([`Budget::max_total_states`]): a
    /// sum kept in scratch memory over 8 bit tests of `args[0]` gives 256 paths that never
    /// merge. With a total the first analysis uses up, the next gets `max_states / 256`:
    /// inexact, and still sound (its return set and path range contain the exact ones).
    #[test]
    fn the_state_budget_spans_all_analyses() {
        let mut insns = vec![Insn::stmt(BPF_LD | BPF_IMM, 0), Insn::stmt(BPF_ST, 0)];
        for i in 0..8 {
            insns.push(Insn::ld_abs(16));
            insns.push(jump(BPF_JSET, 1 << i, 0, 3));
            insns.push(Insn::stmt(BPF_LD | BPF_MEM, 0));
            insns.push(Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 1 << i));
            insns.push(Insn::stmt(BPF_ST, 0));
        }
        insns.push(Insn::stmt(BPF_LD | BPF_MEM, 0));
        insns.push(jump(BPF_JEQ, 0xab, 0, 1));
        insns.push(Insn::ret(SECCOMP_RET_ALLOW));
        insns.push(Insn::ret(0));
        let prog = Program::new(insns);
        let first = Analyzer::new(&prog).unwrap();
        let exact = first.syscall(X86_64, 0, &Budget::default());
        assert!(exact.exact);
        assert_eq!(rets(&exact), [RetVal(0), RetVal::ALLOW]);
        let needed = first.states.get();
        assert!(needed > 256 * 2, "{needed} states: too few to starve");
        let budget = Budget {
            max_states: needed,
            max_total_states: needed,
            ..Budget::default()
        };
        let a = Analyzer::new(&prog).unwrap();
        assert_eq!(a.syscall(X86_64, 0, &budget), exact);
        let starved = a.syscall(X86_64, 0, &budget);
        assert!(!starved.exact && starved.budget_exceeded);
        assert_eq!(rets(&starved), [RetVal(0), RetVal::ALLOW]);
        assert!(starved.min_steps <= exact.min_steps && starved.max_steps >= exact.max_steps);
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
            max_bdd_steps: 1000,
            max_total_bdd_steps: 5000,
            max_total_states: 40,
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
                    // x86_64's part of the numbers: any but x32's.
                    let n = d.nr as u32;
                    let n = if crate::arch::is_x32_nr(n) {
                        n & !crate::arch::X32_SYSCALL_BIT
                    } else {
                        n
                    };
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
