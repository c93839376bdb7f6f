//! Lifting a program by partial evaluation: what does it do for each architecture token and each
//! syscall number, as a residual decision DAG over everything else?
//!
//! # The idea
//!
//! A seccomp filter is a function of 16 input words. Two of them, `arch` and `nr`, are what the
//! kernel's cache and every dispatch look at; the rest (IP and arguments) are looked at only in
//! a few syscalls' rules. Lifting *specializes* the program to a set of `arch` values and a set
//! of `nr` values: every test those sets decide is folded away, and what remains (argument
//! loads, ALU, scratch memory, X, `ret a`) is kept as a *residual* DAG ([`super::dag`]).
//!
//! The specializer runs the program forward over *contexts*: an instruction index plus what is
//! known there —
//! - what A, X and each `M[i]` hold: an input word, a constant, or unknown;
//! - the set of values `nr` can still have (an [`IntervalSet`]), while a later instruction may
//!   still look at `nr`;
//! - for the other words, the set of values the path's tests allow (so an argument test that
//!   repeats an earlier one is folded too, and an ALU operation on a word pinned to one value
//!   is that operation on the constant).
//!
//! A test of `nr` against a constant that the current set does not decide *forks*: each side
//! continues with its part of the set. A test of any other word that the knowledge does not
//! decide stays in the residual, and each side continues with refined knowledge. Contexts that
//! reach the same instruction with the same knowledge are one context, so the work is linear in
//! the number of distinct situations, not in the number of paths. Then a backward pass builds,
//! for each context, its result: the residual node for each part of its `nr` set.
//!
//! # Why it is exact
//!
//! Nothing is ever *assumed* about an input: a test is folded only when the current knowledge
//! proves its outcome for every input that can reach it in this context, a load is skipped only
//! when the register provably holds that word already on this path, and a constant is
//! propagated only when it is the register's value on every path into the context. So for every
//! input whose `nr` lies in a piece and whose `arch` lies in the specialization's range, the
//! piece's residual DAG computes exactly what the program computes. Residuals of two pieces can
//! be the same node only if they are structurally identical programs, so sharing them is also
//! exact. The partition into pieces only decides how *much* is folded, never whether the result
//! is right: a test the partition cannot decide (e.g. `jset #1` on `nr`) simply stays in the
//! residual.
//!
//! # Worked example
//!
//! ```text
//! 0: ld [4]            ; arch
//! 1: jeq #X86_64, 2, 7
//! 2: ld [0]            ; nr
//! 3: jge #0x40000000, 7, 4
//! 4: jeq #41, 5, 8     ; socket?
//! 5: ld [16]           ; args[0].lo
//! 6: jeq #16, 7, 8
//! 7: ret KILL
//! 8: ret ALLOW
//! ```
//! Arch cuts: 0xc000003e and 0xc000003f, so three arch ranges; the two outside the token fold
//! `1` to `7` at once: every nr gives `ret KILL`. For arch = x86_64, `3` forks nr into
//! `[0x40000000, max]` (→ `ret KILL`) and `[0, 0x3fffffff]`, which `4` forks into `{41}` and the
//! rest. The result for x86_64 is the pieces
//! `[0..40] → ret ALLOW`, `[41] → (ld [16]; jeq #16 → KILL : ALLOW)`, `[42..0x3fffffff] → ret ALLOW`,
//! `[0x40000000..max] → ret KILL`: the loads of `arch` and `nr` were only used by folded tests,
//! so they are dead in every residual and gone.

use super::dag::{with_initial_registers, Dag, NodeId};
use super::intervals::{IntervalSet, Range};
use crate::bpf::data::{OFF_ARCH, SECCOMP_DATA_SIZE};
use crate::bpf::insn::*;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// Word index of `nr` and `arch` in `seccomp_data`.
const WORD_NR: u8 = 0;
const WORD_ARCH: u8 = (OFF_ARCH / 4) as u8;

/// Most ranges kept in the value set of a word other than `nr` (beyond, only its bounds).
const MAX_KNOWN_RANGES: usize = 8;

/// How hard the specializer tries; each step down is cheaper and folds less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiftConfig {
    /// Fork on undecided `nr` tests (the partition into pieces). Without it, `nr` is treated
    /// like any other word and the result is one body for every `nr`.
    pub split_nr: bool,
    /// Specialize per range of `arch` values.
    pub split_arch: bool,
    /// Keep value sets for words other than `nr` (folds repeated argument tests).
    pub track_words: bool,
    /// Track register contents (constants, copies of input words): constant folding,
    /// redundant-load removal, scratch memory replaced by reloads.
    pub track_registers: bool,
    /// Most contexts before giving up with [`LiftError::TooComplex`]. A lifting that gives up
    /// at a million took about 1.5 s and 250 MB (`tests/optimize_passes.rs`, the lifting that
    /// failed, under `/usr/bin/time`).
    ///
    /// The full lifting of a joined stack needs many: each filter's chain of `nr` tests is
    /// walked once per range of `nr` the filters before it cut, so the count grows with the
    /// square of the stack's `nr` tests. The 16 systemd-style filters of 40 syscalls each in
    /// `tests/optimize_stacks.rs` need more than the 200,000 that bounded it first.
    pub max_contexts: usize,
}

impl LiftConfig {
    /// Full partial evaluation.
    pub const FULL: LiftConfig = LiftConfig {
        split_nr: true,
        split_arch: true,
        track_words: true,
        track_registers: true,
        max_contexts: 1_000_000,
    };
    /// The program as one body, with constant/copy propagation and knowledge of earlier tests.
    pub const BODY: LiftConfig = LiftConfig {
        split_nr: false,
        split_arch: false,
        track_words: true,
        track_registers: true,
        max_contexts: 200_000,
    };
    /// Structure only: one context per instruction; always linear.
    pub const PLAIN: LiftConfig = LiftConfig {
        split_nr: false,
        split_arch: false,
        track_words: false,
        track_registers: false,
        max_contexts: usize::MAX,
    };
}

/// Why a program could not be lifted with a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiftError {
    #[error("specialization needs more than {limit} contexts")]
    TooComplex { limit: usize },
}

/// One range of `nr` values and the residual DAG that decides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Piece {
    pub lo: u32,
    pub hi: u32,
    pub body: NodeId,
}

/// A set of `arch` values on which the program decides every `nr` the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchClass {
    pub arch: IntervalSet,
    /// Sorted, covering `0..=u32::MAX`, neighbours with different bodies.
    pub pieces: Vec<Piece>,
}

/// A lifted program: a partition of the `(arch, nr)` space with a residual body for each part.
#[derive(Debug, Clone)]
pub struct Lifted {
    pub dag: Dag,
    /// Disjoint, covering every `arch` value.
    pub classes: Vec<ArchClass>,
}

impl Lifted {
    /// The residual body that decides `(arch, nr)`.
    pub fn body(&self, arch: u32, nr: u32) -> Option<NodeId> {
        let class = self.classes.iter().find(|c| c.arch.contains(arch))?;
        let i = class.pieces.partition_point(|p| p.hi < nr);
        class.pieces.get(i).map(|p| p.body)
    }
}

/// Lifts a valid program (see the module documentation).
pub fn lift(prog: &Program, cfg: &LiftConfig) -> Result<Lifted, LiftError> {
    lift_into(Dag::new(), prog, cfg)
}

/// [`lift`] into an existing DAG (bodies shared with nodes already there).
pub fn lift_into(mut dag: Dag, prog: &Program, cfg: &LiftConfig) -> Result<Lifted, LiftError> {
    let arch_ranges: Vec<Range> = if cfg.split_arch {
        ranges_between(&arch_cuts(prog))
    } else {
        vec![(0, u32::MAX)]
    };
    let mut classes: Vec<ArchClass> = Vec::new();
    let facts = ProgramFacts::new(prog);
    for (alo, ahi) in arch_ranges {
        let pieces = {
            let mut spec = Specializer::new(prog, &facts, cfg, &mut dag);
            spec.run(alo, ahi)?
        };
        match classes.iter_mut().find(|c| c.pieces == pieces) {
            Some(c) => {
                let mut r = c.arch.ranges().to_vec();
                r.push((alo, ahi));
                c.arch = IntervalSet::from_ranges(r);
            }
            None => classes.push(ArchClass {
                arch: IntervalSet::range(alo, ahi),
                pieces,
            }),
        }
    }
    Ok(Lifted { dag, classes })
}

/// The ranges `[0, c1-1], [c1, c2-1], …, [cn, max]` between sorted, deduplicated cut points.
fn ranges_between(cuts: &[u32]) -> Vec<Range> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut lo = 0u32;
    for &c in cuts {
        if c > lo {
            out.push((lo, c - 1));
            lo = c;
        }
    }
    out.push((lo, u32::MAX));
    out
}

/// The points where a comparison of `arch` with a constant can change its outcome.
pub fn arch_cuts(prog: &Program) -> Vec<u32> {
    word_cuts(prog, OFF_ARCH, None)
}

/// The ranges of values of the word at byte offset `offset` on which every comparison of that
/// word with a constant goes the same way (see [`word_cuts`]).
pub fn word_cut_ranges(prog: &Program, offset: u32, arch: Option<u32>) -> Vec<Range> {
    ranges_between(&word_cuts(prog, offset, arch))
}

/// The points where a comparison of the word at byte offset `offset` with a constant can change
/// its outcome: for every conditional jump with a constant where A may hold that word (a
/// forward may-analysis over the instructions, complete in one pass because jumps only go
/// forward). With `arch`, only instructions reachable when `seccomp_data.arch == arch` count
/// (tests of a register that surely holds `arch` are followed one way).
pub fn word_cuts(prog: &Program, offset: u32, arch: Option<u32>) -> Vec<u32> {
    /// What a register may hold: the word of interest, and whether it surely holds `arch`.
    #[derive(Clone, Copy, Default, PartialEq)]
    struct R {
        word: bool,
        arch: bool,
    }
    #[derive(Clone, Copy, Default)]
    struct May {
        a: R,
        x: R,
        m: [R; 16],
        reached: bool,
    }
    let join_r = |d: &mut R, s: R| {
        d.word |= s.word;
        d.arch &= s.arch;
    };
    let n = prog.len();
    let mut st = vec![May::default(); n + 1];
    st[0].reached = true;
    let mut cuts = Vec::new();
    let join = |st: &mut Vec<May>, t: usize, s: May| {
        if let Some(d) = st.get_mut(t) {
            if !d.reached {
                *d = s;
            } else {
                join_r(&mut d.a, s.a);
                join_r(&mut d.x, s.x);
                for i in 0..16 {
                    join_r(&mut d.m[i], s.m[i]);
                }
            }
        }
    };
    for pc in 0..n {
        let mut s = st[pc];
        if !s.reached {
            continue;
        }
        let insn = prog.insns[pc];
        let code = insn.code;
        if insn.is_ret() {
            continue;
        }
        if let Some((t, f)) = prog.jump_targets(pc) {
            let with_k = insn.is_conditional_jump() && src(code) == BPF_K;
            if with_k && s.a.word {
                cut_points(op(code), insn.k, &mut cuts);
            }
            match arch {
                Some(a) if with_k && s.a.arch => {
                    let taken = match op(code) {
                        BPF_JEQ => a == insn.k,
                        BPF_JGT => a > insn.k,
                        BPF_JGE => a >= insn.k,
                        _ => a & insn.k != 0,
                    };
                    join(&mut st, if taken { t } else { f }, s);
                }
                _ => {
                    join(&mut st, t, s);
                    join(&mut st, f, s);
                }
            }
            continue;
        }
        let slot = (insn.k & 15) as usize;
        let loaded = |k: u32| R {
            word: k == offset,
            arch: k == OFF_ARCH,
        };
        match class(code) {
            BPF_LD => {
                s.a = match mode(code) {
                    BPF_ABS => loaded(insn.k),
                    BPF_MEM => s.m[slot],
                    _ => R::default(),
                }
            }
            BPF_LDX if mode(code) == BPF_MEM => s.x = s.m[slot],
            BPF_LDX => s.x = R::default(),
            BPF_ST => s.m[slot] = s.a,
            BPF_STX => s.m[slot] = s.x,
            BPF_ALU => s.a = R::default(),
            _ if miscop(code) == BPF_TAX => s.x = s.a,
            _ => s.a = s.x,
        }
        join(&mut st, pc + 1, s);
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// The outcome of `v op k` for every `v` whose bits in `ones` are set and in `zeros` clear,
/// when they decide it (`None` otherwise).
fn decide_by_bits(ones: u32, zeros: u32, op: u16, k: u32) -> Option<bool> {
    if ones == 0 && zeros == 0 {
        return None;
    }
    // The least and the greatest value with those bits.
    let (least, greatest) = (ones, !zeros);
    match op {
        BPF_JSET if ones & k != 0 => Some(true),
        BPF_JSET if zeros & k == k => Some(false),
        BPF_JEQ if k & zeros != 0 || ones & !k != 0 => Some(false),
        BPF_JEQ if ones | zeros == u32::MAX => Some(ones == k),
        BPF_JGT if least > k => Some(true),
        BPF_JGT if greatest <= k => Some(false),
        BPF_JGE if least >= k => Some(true),
        BPF_JGE if greatest < k => Some(false),
        _ => None,
    }
}

/// Whether `v & m == k` for every `v` whose bits in `ones` are set and in `zeros` clear, when
/// they decide it (`None` otherwise).
fn masked_eq_by_bits(ones: u32, zeros: u32, m: u32, k: u32) -> Option<bool> {
    if k & !m != 0 || ones & m & !k != 0 || zeros & k != 0 {
        Some(false)
    } else if (ones | zeros) & m == m {
        Some(true)
    } else {
        None
    }
}

/// Adds the values where `v op k` changes outcome (as the start of a new range).
fn cut_points(op: u16, k: u32, cuts: &mut Vec<u32>) {
    match op {
        BPF_JEQ => {
            cuts.push(k);
            if let Some(k1) = k.checked_add(1) {
                cuts.push(k1);
            }
        }
        BPF_JGT => cuts.extend(k.checked_add(1)),
        BPF_JGE => cuts.push(k),
        BPF_JSET => {
            if let Some((t, f)) = IntervalSet::full().split(BPF_JSET, k) {
                cuts.extend(t.ranges().iter().chain(f.ranges()).map(|r| r.0));
            }
        }
        _ => {}
    }
}

/// Per-instruction facts about the program that do not depend on the context.
struct ProgramFacts {
    /// Words some instruction at or after this one (on some path) loads with `ld [k]`.
    words_ahead: Vec<u16>,
}

impl ProgramFacts {
    fn new(prog: &Program) -> Self {
        let n = prog.len();
        let mut words_ahead = vec![0u16; n + 1];
        for pc in (0..n).rev() {
            let insn = prog.insns[pc];
            let mut w = 0u16;
            if insn.code == BPF_LD | BPF_W | BPF_ABS && insn.k < SECCOMP_DATA_SIZE {
                w |= 1 << (insn.k / 4);
            }
            if !insn.is_ret() {
                match prog.jump_targets(pc) {
                    Some((t, f)) => {
                        w |= words_ahead.get(t).copied().unwrap_or(0);
                        w |= words_ahead.get(f).copied().unwrap_or(0);
                    }
                    None => w |= words_ahead[pc + 1],
                }
            }
            words_ahead[pc] = w;
        }
        ProgramFacts { words_ahead }
    }
}

/// What a register or scratch word holds in a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    Unknown,
    /// Input word `i` (byte offset `4 * i`).
    Word(u8),
    Const(u32),
    /// Input word `i` AND a mask (`ld [w]; and #m`): what a masked comparison tests. Chromium's
    /// bpf_dsl reloads and re-masks the word for every value it compares
    /// (`ld [w]; and #m; jeq #v1; ld [w]; and #m; jeq #v2; …`); knowing A still holds `w & m`
    /// drops each repeated pair.
    Masked(u8, u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Regs {
    a: Val,
    x: Val,
    /// Scratch memory, shared between contexts until one writes (`None`: all unknown, which
    /// is every context of a program without stores; contexts are cloned a lot).
    m: Option<Rc<[Val; 16]>>,
}

impl Val {
    /// One word per value: hashing contexts is a hot path of lifting.
    fn bits(self) -> u64 {
        match self {
            Val::Unknown => 0,
            Val::Word(w) => 1 << 32 | w as u64,
            Val::Const(c) => 2 << 32 | c as u64,
            Val::Masked(w, m) => 3 << 40 | (w as u64) << 32 | m as u64,
        }
    }
}

impl std::hash::Hash for Regs {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.a.bits() << 2 ^ self.x.bits());
        if let Some(m) = &self.m {
            for v in m.iter() {
                h.write_u64(v.bits());
            }
        }
    }
}

impl Regs {
    fn mem(&self, slot: usize) -> Val {
        self.m.as_ref().map_or(Val::Unknown, |m| m[slot])
    }

    fn set_mem(&mut self, slot: usize, v: Val) {
        if self.mem(slot) == v {
            return;
        }
        let m = self.m.get_or_insert_with(|| Rc::new([Val::Unknown; 16]));
        Rc::make_mut(m)[slot] = v;
        if m.iter().all(|v| *v == Val::Unknown) {
            self.m = None;
        }
    }
}

impl Regs {
    fn holds_word(&self, w: u8) -> bool {
        let is = |v: &Val| matches!(*v, Val::Word(x) | Val::Masked(x, _) if x == w);
        is(&self.a) || is(&self.x) || self.m.as_ref().is_some_and(|m| m.iter().any(is))
    }
}

/// What is known at one instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Ctx {
    regs: Regs,
    /// Bounds of the values `nr` can have, while the rest of the program may still look at
    /// it. Only bounds: the exact set after a chain of `jeq` tests is the bounds minus a point
    /// per test, and carrying it would make every context of a chain as big as the chain.
    /// Values in the bounds that cannot actually arrive get a result too, which the fork that
    /// excluded them overwrites (see [`Step::Split`]).
    nr: Option<Range>,
    /// Value sets of other words, sorted by word; absent words are unconstrained.
    known: Vec<(u8, IntervalSet)>,
    /// Bits of other words the path's `jset` tests fixed: `(word, ones, zeros)`, sorted by
    /// word. A value set cannot hold them (`jset #4` splits the words into 2^30 ranges), yet
    /// compilers that test one matcher per rule repeat the same `jset` in every rule (gVisor's
    /// `mmap` rules test `args[2] & PROT_EXEC` eight times in a row).
    /// `None` when nothing is known, which is nearly every context: a pointer, not a `Vec`,
    /// because contexts are cloned and hashed a lot (lifting is on every compile's path).
    bits: Option<Rc<Vec<(u8, u32, u32)>>>,
}

type CtxId = u32;

/// End of a `same_hash` chain.
const NO_CTX: CtxId = CtxId::MAX;

/// What one context does at its instruction.
#[derive(Debug, Clone)]
enum Step {
    Ret(NodeId),
    /// The instruction vanishes (folded jump, skipped load): continue in this context.
    Skip(CtxId),
    /// Emit a straight-line instruction, then this context.
    Op(Insn, CtxId),
    /// `nr` fork: the exact set of the context's `nr` bounds for which the jump is taken, the
    /// taken side and the other side. The result takes the taken side's pieces on that set
    /// and the other side's everywhere else in the bounds.
    Split(Taken, CtxId, CtxId),
    /// A residual conditional jump.
    Test(Insn, CtxId, CtxId),
}

/// The values an `nr` fork sends to its taken side: one range for `jeq`, `jgt` and `jge` (kept
/// inline: a linear filter forks once per syscall), a set for `jset`.
#[derive(Debug, Clone)]
enum Taken {
    Range(Range),
    Set(IntervalSet),
}

impl Taken {
    fn ranges(&self) -> &[Range] {
        match self {
            Taken::Range(r) => std::slice::from_ref(r),
            Taken::Set(s) => s.ranges(),
        }
    }
}

/// The residual of a context: one body for every `nr` it can see, or pieces of its `nr` set.
#[derive(Debug, Clone)]
enum Res {
    Uniform(NodeId),
    /// Shared: a folded jump passes its successor's result on unchanged.
    Pieces(Rc<Vec<Piece>>),
}

struct Specializer<'a> {
    prog: &'a Program,
    facts: &'a ProgramFacts,
    cfg: &'a LiftConfig,
    dag: &'a mut Dag,
    ctxs: Vec<(u32, Ctx)>,
    steps: Vec<Option<Step>>,
    /// The contexts of each instruction, in creation order, as linked lists (one allocation
    /// for the whole program instead of one per instruction): the first and last context of
    /// each instruction, and each context's successor at its instruction.
    first_at: Vec<CtxId>,
    last_at: Vec<CtxId>,
    next_at: Vec<CtxId>,
    /// Contexts by the hash of `(pc, ctx)`: the first context with that hash; `same_hash`
    /// links the others. Contexts are stored once, in `ctxs`.
    index: FxHashMap<u64, CtxId>,
    same_hash: Vec<CtxId>,
    /// How many steps still have to read each context's result (it is moved out, not cloned,
    /// by the last one).
    readers: Vec<u32>,
    /// Scratch space for [`paste`], kept so that a chain of forks allocates it once.
    paste_scratch: Vec<Piece>,
    /// The `arch` values of this run, when runs are per arch range: the same in every context
    /// (every test of `arch` is decided by it, or kept whole), so it is not part of contexts.
    arch: Option<IntervalSet>,
}

impl<'a> Specializer<'a> {
    fn new(
        prog: &'a Program,
        facts: &'a ProgramFacts,
        cfg: &'a LiftConfig,
        dag: &'a mut Dag,
    ) -> Self {
        Specializer {
            prog,
            facts,
            cfg,
            dag,
            ctxs: Vec::with_capacity(2 * prog.len()),
            steps: Vec::with_capacity(2 * prog.len()),
            first_at: vec![NO_CTX; prog.len()],
            last_at: vec![NO_CTX; prog.len()],
            next_at: Vec::with_capacity(2 * prog.len()),
            index: FxHashMap::with_capacity_and_hasher(2 * prog.len(), Default::default()),
            same_hash: Vec::with_capacity(2 * prog.len()),
            readers: Vec::new(),
            paste_scratch: Vec::new(),
            arch: None,
        }
    }

    /// Specializes for `arch` in `alo..=ahi` and every `nr`; returns the pieces.
    fn run(&mut self, alo: u32, ahi: u32) -> Result<Vec<Piece>, LiftError> {
        let regs = Regs {
            a: self.initial(Val::Const(0)),
            x: self.initial(Val::Const(0)),
            m: None,
        };
        let known = Vec::new();
        if self.cfg.split_arch {
            self.arch = Some(IntervalSet::range(alo, ahi));
        }
        let nr = self.cfg.split_nr.then_some((0, u32::MAX));
        let root = self.context(
            0,
            Ctx {
                regs,
                nr,
                known,
                bits: None,
            },
        )?;
        // Forward: contexts only lead to later instructions, so visiting instructions in order
        // sees every context of an instruction before stepping any of them.
        for pc in 0..self.prog.len() {
            let mut id = self.first_at[pc];
            while id != NO_CTX {
                let step = self.step(id)?;
                self.steps[id as usize] = Some(step);
                id = self.next_at[id as usize];
            }
        }
        // Backward: results of later contexts first.
        self.readers = vec![0; self.ctxs.len()];
        for step in self.steps.iter().flatten() {
            let (a, b) = match step {
                Step::Ret(_) => (None, None),
                Step::Skip(c) | Step::Op(_, c) => (Some(*c), None),
                Step::Split(_, t, f) | Step::Test(_, t, f) => (Some(*t), Some(*f)),
            };
            for c in a.into_iter().chain(b) {
                self.readers[c as usize] += 1;
            }
        }
        let mut results: Vec<Option<Res>> = vec![None; self.ctxs.len()];
        for pc in (0..self.prog.len()).rev() {
            let mut id = self.first_at[pc];
            while id != NO_CTX {
                let res = self.result(id, &mut results);
                results[id as usize] = Some(res);
                id = self.next_at[id as usize];
            }
        }
        let full = IntervalSet::full();
        let res = results[root as usize].take().expect("root has a result");
        let pieces = materialize(res, &full);
        let mut out: Vec<Piece> = pieces
            .into_iter()
            .map(|p| Piece {
                body: with_initial_registers(self.dag, p.body),
                ..p
            })
            .collect();
        merge_adjacent(&mut out);
        Ok(out)
    }

    fn initial(&self, v: Val) -> Val {
        if self.cfg.track_registers {
            v
        } else {
            Val::Unknown
        }
    }

    /// The id of context `ctx` at `pc`, after dropping knowledge nothing ahead can use.
    fn context(&mut self, pc: usize, mut ctx: Ctx) -> Result<CtxId, LiftError> {
        let ahead = self.facts.words_ahead.get(pc).copied().unwrap_or(0);
        let relevant = |w: u8, regs: &Regs| ahead & (1 << w) != 0 || regs.holds_word(w);
        if ctx.nr.is_some() && !relevant(WORD_NR, &ctx.regs) {
            ctx.nr = None;
        }
        let regs = ctx.regs.clone();
        ctx.known
            .retain(|(w, set)| !set.is_full() && relevant(*w, &regs));
        if let Some(bits) = &mut ctx.bits {
            if bits.iter().any(|&(w, _, _)| !relevant(w, &regs)) {
                Rc::make_mut(bits).retain(|&(w, _, _)| relevant(w, &regs));
                if bits.is_empty() {
                    ctx.bits = None;
                }
            }
        }
        let key = (pc as u32, ctx);
        let hash = {
            use std::hash::BuildHasher;
            rustc_hash::FxBuildHasher.hash_one(&key)
        };
        let mut probe = self.index.get(&hash).copied();
        while let Some(id) = probe {
            if self.ctxs[id as usize] == key {
                return Ok(id);
            }
            probe = Some(self.same_hash[id as usize]).filter(|&n| n != NO_CTX);
        }
        if self.ctxs.len() >= self.cfg.max_contexts {
            return Err(LiftError::TooComplex {
                limit: self.cfg.max_contexts,
            });
        }
        let id = self.ctxs.len() as CtxId;
        self.ctxs.push(key);
        self.steps.push(None);
        self.next_at.push(NO_CTX);
        match self.last_at[pc] {
            NO_CTX => self.first_at[pc] = id,
            last => self.next_at[last as usize] = id,
        }
        self.last_at[pc] = id;
        let previous = self.index.insert(hash, id);
        self.same_hash.push(previous.unwrap_or(NO_CTX));
        Ok(id)
    }

    fn known_set(ctx: &Ctx, w: u8) -> Option<&IntervalSet> {
        ctx.known.iter().find(|(x, _)| *x == w).map(|(_, s)| s)
    }

    /// The one value `v` can have on this context's paths, if it has one: a constant, or a
    /// word the path's tests have pinned to one value (`jeq #3` taken: an ALU operation on
    /// that word folds, as the same operation on the constant would; Firecracker's `mmap`
    /// rule tests `args[2] == 3` and then `args[2] & 4`).
    fn single_value(ctx: &Ctx, v: Val) -> Option<u32> {
        match v {
            Val::Const(c) => Some(c),
            Val::Word(WORD_NR) => ctx.nr.filter(|(lo, hi)| lo == hi).map(|(lo, _)| lo),
            Val::Word(WORD_ARCH) => None,
            Val::Word(w) => match Self::known_set(ctx, w)?.ranges() {
                [(lo, hi)] if lo == hi => Some(*lo),
                _ => None,
            },
            Val::Masked(w, m) => Self::single_value(ctx, Val::Word(w)).map(|c| c & m),
            Val::Unknown => None,
        }
    }

    /// The bits of word `w` known to be one and known to be zero on this context's paths.
    fn known_bits(ctx: &Ctx, w: u8) -> (u32, u32) {
        ctx.bits
            .iter()
            .flat_map(|b| b.iter())
            .find(|e| e.0 == w)
            .map_or((0, 0), |&(_, ones, zeros)| (ones, zeros))
    }

    /// `ctx` with `ones` and `zeros` added to what is known of word `w`'s bits.
    fn with_bits(mut ctx: Ctx, w: u8, ones: u32, zeros: u32) -> Ctx {
        let bits = Rc::make_mut(ctx.bits.get_or_insert_with(Default::default));
        match bits.iter_mut().find(|e| e.0 == w) {
            Some(e) => {
                e.1 |= ones;
                e.2 |= zeros;
            }
            None => {
                bits.push((w, ones, zeros));
                bits.sort_by_key(|e| e.0);
            }
        }
        ctx
    }

    /// The taken and the other side of an undecided `jset #bits` on word `w`, with what each
    /// learns: taken, some bit of `bits` is set (known which only for a single bit); not
    /// taken, every bit of `bits` is clear.
    fn after_jset(taken: Ctx, other: Ctx, w: u8, bits: u32) -> (Ctx, Ctx) {
        let taken = if bits.is_power_of_two() {
            Self::with_bits(taken, w, bits, 0)
        } else {
            taken
        };
        (taken, Self::with_bits(other, w, 0, bits))
    }

    fn with_known(ctx: &Ctx, w: u8, set: IntervalSet) -> Ctx {
        // Many ranges cost hashing and copying in every context; the bounds are still true.
        let set = if set.ranges().len() > MAX_KNOWN_RANGES {
            let (lo, hi) = bounds(&set);
            IntervalSet::range(lo, hi)
        } else {
            set
        };
        let mut c = ctx.clone();
        match c.known.iter_mut().find(|(x, _)| *x == w) {
            Some(e) => e.1 = set,
            None => {
                c.known.push((w, set));
                c.known.sort_by_key(|e| e.0);
            }
        }
        c
    }

    fn step(&mut self, id: CtxId) -> Result<Step, LiftError> {
        let (pc, ctx) = self.ctxs[id as usize].clone();
        let pc = pc as usize;
        let insn = self.prog.insns[pc];
        let code = insn.code;
        let track = self.cfg.track_registers;
        let next = pc + 1;

        if insn.is_ret() {
            return Ok(Step::Ret(if rval(code) == BPF_A {
                match ctx.regs.a {
                    Val::Const(c) => self.dag.ret(c),
                    _ => self.dag.ret_a(),
                }
            } else {
                self.dag.ret(insn.k)
            }));
        }
        if insn.is_ja() {
            return Ok(Step::Skip(self.context(next + insn.k as usize, ctx)?));
        }
        if insn.is_conditional_jump() {
            return self.step_test(pc, &ctx, insn);
        }

        // Straight-line instructions: the instruction to emit (None: skip) and the new regs.
        let mut regs = ctx.regs.clone();
        let slot = (insn.k & 15) as usize;
        let emit: Option<Insn> = match class(code) {
            BPF_LD => {
                let (v, emit) = match mode(code) {
                    BPF_ABS => {
                        let w = (insn.k / 4) as u8;
                        // `ld [w]; and #m` while A holds `w & m` already: both vanish.
                        let and_m = |m: u32| {
                            self.prog
                                .insns
                                .get(next)
                                .is_some_and(|i| i.code == BPF_ALU | BPF_AND | BPF_K && i.k == m)
                        };
                        match regs.a {
                            Val::Masked(x, m) if track && x == w && and_m(m) => {
                                return Ok(Step::Skip(self.context(pc + 2, ctx)?));
                            }
                            _ => (Val::Word(w), insn),
                        }
                    }
                    BPF_IMM => (Val::Const(insn.k), insn),
                    BPF_LEN => (Val::Const(SECCOMP_DATA_SIZE), imm(SECCOMP_DATA_SIZE)),
                    _ => match regs.mem(slot) {
                        Val::Const(c) => (Val::Const(c), imm(c)),
                        Val::Word(w) => (Val::Word(w), Insn::ld_abs(4 * w as u32)),
                        v @ (Val::Masked(..) | Val::Unknown) => (v, insn),
                    },
                };
                if track && v != Val::Unknown && regs.a == v {
                    None
                } else {
                    regs.a = if track { v } else { Val::Unknown };
                    Some(emit)
                }
            }
            BPF_LDX => {
                let (v, emit) = match mode(code) {
                    BPF_IMM => (Val::Const(insn.k), insn),
                    BPF_LEN => (Val::Const(SECCOMP_DATA_SIZE), immx(SECCOMP_DATA_SIZE)),
                    _ => match regs.mem(slot) {
                        Val::Const(c) => (Val::Const(c), immx(c)),
                        v => (v, insn),
                    },
                };
                if track && v != Val::Unknown && regs.x == v {
                    None
                } else {
                    regs.x = if track { v } else { Val::Unknown };
                    Some(emit)
                }
            }
            BPF_ST | BPF_STX => {
                let v = if class(code) == BPF_ST {
                    regs.a
                } else {
                    regs.x
                };
                if track && v != Val::Unknown && regs.mem(slot) == v {
                    None
                } else {
                    regs.set_mem(slot, v);
                    Some(insn)
                }
            }
            BPF_ALU => {
                let operand = if src(code) == BPF_X && op(code) != BPF_NEG {
                    match regs.x {
                        Val::Const(c) => Some(c),
                        _ => None,
                    }
                } else {
                    Some(insn.k)
                };
                match operand {
                    // Division by an X known to be 0: the kernel returns 0 from the filter.
                    Some(0) if op(code) == BPF_DIV => return Ok(Step::Ret(self.dag.ret(0))),
                    Some(k) => {
                        let alu_k = if op(code) == BPF_NEG {
                            Insn::stmt(BPF_ALU | BPF_NEG, 0)
                        } else {
                            Insn::stmt(BPF_ALU | op(code) | BPF_K, alu_k_operand(op(code), k))
                        };
                        if is_identity(op(code), alu_k.k) {
                            None
                        } else if let Some(a) = Self::single_value(&ctx, regs.a) {
                            let c = alu_result(op(code), a, alu_k.k);
                            regs.a = Val::Const(c);
                            Some(imm(c))
                        } else {
                            regs.a = match (op(code), regs.a) {
                                (BPF_AND, Val::Word(w)) => Val::Masked(w, alu_k.k),
                                (BPF_AND, Val::Masked(w, m)) => Val::Masked(w, m & alu_k.k),
                                _ => Val::Unknown,
                            };
                            Some(alu_k)
                        }
                    }
                    None => {
                        regs.a = Val::Unknown;
                        Some(insn)
                    }
                }
            }
            _ if miscop(code) == BPF_TAX => {
                if track && regs.a != Val::Unknown && regs.x == regs.a {
                    None
                } else {
                    regs.x = regs.a;
                    Some(match regs.a {
                        Val::Const(c) => immx(c),
                        _ => insn,
                    })
                }
            }
            _ => {
                // TXA
                if track && regs.x != Val::Unknown && regs.a == regs.x {
                    None
                } else {
                    regs.a = regs.x;
                    Some(match regs.x {
                        Val::Const(c) => imm(c),
                        Val::Word(w) => Insn::ld_abs(4 * w as u32),
                        Val::Masked(..) | Val::Unknown => insn,
                    })
                }
            }
        };
        if !track {
            regs = Regs {
                a: Val::Unknown,
                x: Val::Unknown,
                m: None,
            };
        }
        let next_ctx = self.context(next, Ctx { regs, ..ctx })?;
        Ok(match emit {
            Some(i) => Step::Op(i, next_ctx),
            None => Step::Skip(next_ctx),
        })
    }

    fn step_test(&mut self, pc: usize, ctx: &Ctx, insn: Insn) -> Result<Step, LiftError> {
        let code = insn.code;
        let (jt, jf) = (pc + 1 + insn.jt as usize, pc + 1 + insn.jf as usize);
        let jop = op(code);
        // A test against X known to be a constant is a test against that constant.
        let k = match (src(code), ctx.regs.x) {
            (BPF_K, _) => Some(insn.k),
            (_, Val::Const(c)) => Some(c),
            _ => None,
        };
        let test_k = |k: u32| Insn::jump(BPF_JMP | jop | BPF_K, k, 0, 0);
        let Some(k) = k else {
            let (t, f) = (
                self.context(jt, ctx.clone())?,
                self.context(jf, ctx.clone())?,
            );
            return Ok(Step::Test(insn, t, f));
        };
        if let Val::Masked(w, m) = ctx.regs.a {
            if self.cfg.track_words && w != WORD_NR && w != WORD_ARCH {
                return self.step_masked_test(ctx, (w, m), (jop, k), (jt, jf));
            }
        }
        match ctx.regs.a {
            Val::Const(a) => {
                let taken = jump_taken(jop, a, k);
                Ok(Step::Skip(
                    self.context(if taken { jt } else { jf }, ctx.clone())?,
                ))
            }
            Val::Word(WORD_NR) if ctx.nr.is_some() => {
                let (lo, hi) = ctx.nr.expect("checked");
                // The common tests split the bounds without building sets (one `nr` test per
                // syscall in a linear filter); `jset` splits a set.
                let parts = match split_bounds(lo, hi, jop, k) {
                    Some((t, f)) => Some((t, f, None)),
                    None => IntervalSet::range(lo, hi).split(jop, k).map(|(t, f)| {
                        let part = |s: &IntervalSet| (!s.is_empty()).then(|| bounds(s));
                        (part(&t), part(&f), Some(t))
                    }),
                };
                match parts {
                    Some((None, _, _)) => Ok(Step::Skip(self.context(jf, ctx.clone())?)),
                    Some((_, None, _)) => Ok(Step::Skip(self.context(jt, ctx.clone())?)),
                    Some((Some(t), Some(f), set)) => {
                        let taken = set.map_or(Taken::Range(t), Taken::Set);
                        let ct = self.context(
                            jt,
                            Ctx {
                                nr: Some(t),
                                ..ctx.clone()
                            },
                        )?;
                        let cf = self.context(
                            jf,
                            Ctx {
                                nr: Some(f),
                                ..ctx.clone()
                            },
                        )?;
                        Ok(Step::Split(taken, ct, cf))
                    }
                    None => {
                        let (t, f) = (
                            self.context(jt, ctx.clone())?,
                            self.context(jf, ctx.clone())?,
                        );
                        Ok(Step::Test(test_k(k), t, f))
                    }
                }
            }
            Val::Word(WORD_ARCH) if self.arch.is_some() => {
                let set = self.arch.as_ref().expect("checked");
                let target = match set.decide(jop, k) {
                    Some(true) => jt,
                    Some(false) => jf,
                    None => {
                        let (t, f) = (
                            self.context(jt, ctx.clone())?,
                            self.context(jf, ctx.clone())?,
                        );
                        return Ok(Step::Test(test_k(k), t, f));
                    }
                };
                Ok(Step::Skip(self.context(target, ctx.clone())?))
            }
            Val::Word(w) => {
                let full = IntervalSet::full();
                let set = Self::known_set(ctx, w).unwrap_or(&full);
                let (ones, zeros) = Self::known_bits(ctx, w);
                match set
                    .decide(jop, k)
                    .or_else(|| decide_by_bits(ones, zeros, jop, k))
                {
                    Some(taken) => Ok(Step::Skip(
                        self.context(if taken { jt } else { jf }, ctx.clone())?,
                    )),
                    None => {
                        let split = if self.cfg.track_words {
                            set.split(jop, k)
                        } else {
                            None
                        };
                        let (mut ct, mut cf) = match split {
                            Some((ts, fs)) => {
                                (Self::with_known(ctx, w, ts), Self::with_known(ctx, w, fs))
                            }
                            None => (ctx.clone(), ctx.clone()),
                        };
                        if self.cfg.track_words && jop == BPF_JSET {
                            (ct, cf) = Self::after_jset(ct, cf, w, k);
                        }
                        let (t, f) = (self.context(jt, ct)?, self.context(jf, cf)?);
                        Ok(Step::Test(test_k(k), t, f))
                    }
                }
            }
            Val::Masked(..) | Val::Unknown => {
                let (t, f) = (
                    self.context(jt, ctx.clone())?,
                    self.context(jf, ctx.clone())?,
                );
                Ok(Step::Test(test_k(k), t, f))
            }
        }
    }

    /// A test of `A = w & m` (word `w`, not `nr` or `arch`) against `k`: `jset #k` is
    /// `jset #(k & m)` on the word, and `jeq #k` fixes the mask's bits when taken; both are
    /// decided by what is known of the word's bits and values. The residual test stays the
    /// instruction as written (A still holds `w & m` there).
    fn step_masked_test(
        &mut self,
        ctx: &Ctx,
        (w, m): (u8, u32),
        (jop, k): (u16, u32),
        (jt, jf): (usize, usize),
    ) -> Result<Step, LiftError> {
        let (ones, zeros) = Self::known_bits(ctx, w);
        let pinned = Self::single_value(ctx, Val::Masked(w, m));
        let decided = match jop {
            _ if pinned.is_some() => pinned.map(|a| jump_taken(jop, a, k)),
            BPF_JSET => Self::known_set(ctx, w)
                .and_then(|set| set.decide(BPF_JSET, k & m))
                .or_else(|| decide_by_bits(ones, zeros, BPF_JSET, k & m)),
            BPF_JEQ => masked_eq_by_bits(ones, zeros, m, k),
            _ => None,
        };
        if let Some(taken) = decided {
            let target = if taken { jt } else { jf };
            return Ok(Step::Skip(self.context(target, ctx.clone())?));
        }
        let (mut ct, mut cf) = (ctx.clone(), ctx.clone());
        match jop {
            BPF_JSET => (ct, cf) = Self::after_jset(ct, cf, w, k & m),
            // Undecided, so `k` lies within the mask: its bits are the word's there.
            BPF_JEQ => ct = Self::with_bits(ct, w, k, m & !k),
            _ => {}
        }
        let test = Insn::jump(BPF_JMP | jop | BPF_K, k, 0, 0);
        let (t, f) = (self.context(jt, ct)?, self.context(jf, cf)?);
        Ok(Step::Test(test, t, f))
    }

    fn result(&mut self, id: CtxId, results: &mut [Option<Res>]) -> Res {
        let readers = &mut self.readers;
        let mut get = |c: CtxId| {
            readers[c as usize] -= 1;
            let slot = &mut results[c as usize];
            let res = if readers[c as usize] == 0 {
                slot.take()
            } else {
                slot.clone()
            };
            res.expect("successor computed first")
        };
        // Each context's result is computed once: its step is not needed afterwards.
        let step = self.steps[id as usize]
            .take()
            .expect("every context stepped");
        match step {
            Step::Ret(node) => Res::Uniform(node),
            Step::Skip(c) => get(c),
            Step::Op(insn, c) => map_res(get(c), |b| self.dag.op(insn, b)),
            Step::Split(taken, t, f) => {
                let (lo, hi) = self.ctxs[id as usize].1.nr.expect("a fork has nr bounds");
                let (rt, rf) = (get(t), get(f));
                // The other side's pieces cover its bounds, and every value of ours outside
                // them is taken: extend them with the taken side's pieces at either end and
                // paste the taken values inside over them (in place when nobody else holds
                // that result). A `jeq` inside the bounds only pastes; a `jge` only appends.
                let rf = match (rf, self.ctxs[f as usize].1.nr) {
                    (Res::Pieces(mut pieces), Some((flo, fhi)))
                        if pieces.first().is_some_and(|p| p.lo == flo)
                            && pieces.last().is_some_and(|p| p.hi == fhi) =>
                    {
                        let list = Rc::make_mut(&mut pieces);
                        if flo > lo {
                            let mut front = Vec::new();
                            restrict(&rt, lo, flo - 1, &mut front);
                            let junction = front.len();
                            list.splice(0..0, front);
                            merge_at(list, junction);
                        }
                        if fhi < hi {
                            let junction = list.len();
                            restrict(&rt, fhi + 1, hi, list);
                            merge_at(list, junction);
                        }
                        for &(a, b) in taken.ranges() {
                            let (a, b) = (a.max(flo), b.min(fhi));
                            if a <= b {
                                paste(list, a, b, &rt, &mut self.paste_scratch);
                            }
                        }
                        return Res::Pieces(pieces);
                    }
                    (other, _) => other,
                };
                let mut pieces = Vec::new();
                let mut next = Some(lo);
                for &(a, b) in taken.ranges() {
                    if let Some(n) = next.filter(|&n| n < a) {
                        restrict(&rf, n, a - 1, &mut pieces);
                    }
                    restrict(&rt, a, b, &mut pieces);
                    next = b.checked_add(1);
                }
                if let Some(n) = next.filter(|&n| n <= hi) {
                    restrict(&rf, n, hi, &mut pieces);
                }
                merge_adjacent(&mut pieces);
                Res::Pieces(Rc::new(pieces))
            }
            Step::Test(insn, t, f) => {
                let domain = self.ctxs[id as usize].1.nr;
                let (rt, rf) = (get(t), get(f));
                match (rt, rf, domain) {
                    (Res::Uniform(a), Res::Uniform(b), _) => {
                        Res::Uniform(self.dag.test(insn, a, b))
                    }
                    (rt, rf, Some((lo, hi))) => {
                        let domain = IntervalSet::range(lo, hi);
                        let pt = materialize(rt, &domain);
                        let pf = materialize(rf, &domain);
                        let mut out = overlay(&pt, &pf, |a, b| self.dag.test(insn, a, b));
                        merge_adjacent(&mut out);
                        Res::Pieces(Rc::new(out))
                    }
                    _ => unreachable!("pieces only below a context with an nr set"),
                }
            }
        }
    }
}

fn map_res(res: Res, mut f: impl FnMut(NodeId) -> NodeId) -> Res {
    match res {
        Res::Uniform(b) => Res::Uniform(f(b)),
        Res::Pieces(ps) => {
            let mut out: Vec<Piece> = ps
                .iter()
                .map(|p| Piece {
                    body: f(p.body),
                    ..*p
                })
                .collect();
            merge_adjacent(&mut out);
            Res::Pieces(Rc::new(out))
        }
    }
}

/// How `v op k` splits the values `lo..=hi`, for `jeq`, `jgt` and `jge` (`None` for other
/// operations): the values for which the jump is taken (one range, or none) and the bounds of
/// the others (none when every value jumps). The same as the bounds of
/// [`IntervalSet::split`]'s two sets, without building them.
fn split_bounds(lo: u32, hi: u32, op: u16, k: u32) -> Option<(Option<Range>, Option<Range>)> {
    let clip = |a: u32, b: u32| (a.max(lo), b.min(hi));
    let nonempty = |(a, b): Range| (a <= b).then_some((a, b));
    Some(match op {
        BPF_JEQ => {
            if k < lo || k > hi {
                (None, Some((lo, hi)))
            } else if lo == hi {
                (Some((k, k)), None)
            } else {
                // The others are `lo..k` and `k+1..=hi`, one of them possibly empty.
                let others = if k == lo {
                    (lo + 1, hi)
                } else if k == hi {
                    (lo, hi - 1)
                } else {
                    (lo, hi)
                };
                (Some((k, k)), Some(others))
            }
        }
        BPF_JGT => match k.checked_add(1) {
            Some(k1) => (nonempty(clip(k1, u32::MAX)), nonempty(clip(0, k))),
            None => (None, Some((lo, hi))),
        },
        BPF_JGE => match k.checked_sub(1) {
            Some(k0) => (nonempty(clip(k, u32::MAX)), nonempty(clip(0, k0))),
            None => (Some((lo, hi)), None),
        },
        _ => return None,
    })
}

/// The smallest range containing a non-empty set.
fn bounds(set: &IntervalSet) -> Range {
    let r = set.ranges();
    (r[0].0, r[r.len() - 1].1)
}

/// Appends the pieces of `res` restricted to `lo..=hi` (which the result covers).
fn restrict(res: &Res, lo: u32, hi: u32, out: &mut Vec<Piece>) {
    match res {
        Res::Uniform(body) => out.push(Piece {
            lo,
            hi,
            body: *body,
        }),
        Res::Pieces(ps) => {
            let start = ps.partition_point(|p| p.hi < lo);
            for p in &ps[start..] {
                if p.lo > hi {
                    break;
                }
                out.push(Piece {
                    lo: p.lo.max(lo),
                    hi: p.hi.min(hi),
                    body: p.body,
                });
            }
        }
    }
}

/// Replaces what `pieces` says for `lo..=hi` (which it covers) by what `res` says there, and
/// joins the pasted pieces with their neighbours where the bodies agree (only there: the rest
/// of the list was already merged, and a chain of `jeq` forks pastes once per test, so merging
/// the whole list each time would be quadratic).
///
/// `new` is scratch space (its contents are replaced), kept by the caller between pastes.
fn paste(pieces: &mut Vec<Piece>, lo: u32, hi: u32, res: &Res, new: &mut Vec<Piece>) {
    let first = pieces.partition_point(|p| p.hi < lo);
    let end = pieces.partition_point(|p| p.lo <= hi);
    // The replaced pieces, plus the untouched neighbour on each side for the merge.
    let from = first.saturating_sub(1);
    let to = (end + 1).min(pieces.len());
    new.clear();
    new.extend_from_slice(&pieces[from..first]);
    let head = pieces[first];
    if head.lo < lo {
        new.push(Piece { hi: lo - 1, ..head });
    }
    restrict(res, lo, hi, new);
    let tail = pieces[end - 1];
    if tail.hi > hi {
        new.push(Piece { lo: hi + 1, ..tail });
    }
    new.extend_from_slice(&pieces[end..to]);
    merge_adjacent(new);
    pieces.splice(from..to, new.drain(..));
}

/// The pieces of a result over `domain`.
fn materialize(res: Res, domain: &IntervalSet) -> Vec<Piece> {
    match res {
        Res::Uniform(body) => domain
            .ranges()
            .iter()
            .map(|&(lo, hi)| Piece { lo, hi, body })
            .collect(),
        Res::Pieces(p) => Rc::try_unwrap(p).unwrap_or_else(|shared| (*shared).clone()),
    }
}

/// Combines two piece lists over the same domain, piece by piece of their common refinement.
fn overlay(a: &[Piece], b: &[Piece], mut f: impl FnMut(NodeId, NodeId) -> NodeId) -> Vec<Piece> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    let mut lo = match (a.first(), b.first()) {
        (Some(x), Some(y)) => x.lo.min(y.lo),
        _ => return out,
    };
    while i < a.len() && j < b.len() {
        let (pa, pb) = (a[i], b[j]);
        let start = lo.max(pa.lo).max(pb.lo);
        let end = pa.hi.min(pb.hi);
        if start <= end {
            out.push(Piece {
                lo: start,
                hi: end,
                body: f(pa.body, pb.body),
            });
        }
        if pa.hi == end {
            i += 1;
        }
        if pb.hi == end {
            j += 1;
        }
        match end.checked_add(1) {
            Some(e) => lo = e,
            None => break,
        }
    }
    out
}

/// Joins pieces `i - 1` and `i` if they are consecutive with the same body: where two merged
/// lists meet (neither side has two such neighbours, so nothing else can join).
fn merge_at(pieces: &mut Vec<Piece>, i: usize) {
    if i == 0 || i >= pieces.len() {
        return;
    }
    let (last, next) = (pieces[i - 1], pieces[i]);
    if last.body == next.body && last.hi.checked_add(1) == Some(next.lo) {
        pieces[i - 1].hi = next.hi;
        pieces.remove(i);
    }
}

/// Joins neighbouring pieces (consecutive values) with the same body.
pub(crate) fn merge_adjacent(pieces: &mut Vec<Piece>) {
    pieces.dedup_by(|next, last| {
        let join = last.body == next.body && last.hi.checked_add(1) == Some(next.lo);
        if join {
            last.hi = next.hi;
        }
        join
    });
}

fn imm(c: u32) -> Insn {
    Insn::stmt(BPF_LD | BPF_W | BPF_IMM, c)
}

fn immx(c: u32) -> Insn {
    Insn::stmt(BPF_LDX | BPF_W | BPF_IMM, c)
}

/// The constant operand the kernel uses for an ALU operation with X = `x`: shifts by X take
/// `x & 31` (as the kernel's interpreter and JITs do), everything else takes `x` as is.
fn alu_k_operand(op: u16, x: u32) -> u32 {
    match op {
        BPF_LSH | BPF_RSH => x & 31,
        _ => x,
    }
}

/// Whether `A op k` leaves A unchanged for every A.
fn is_identity(op: u16, k: u32) -> bool {
    match op {
        BPF_ADD | BPF_SUB | BPF_OR | BPF_XOR | BPF_LSH | BPF_RSH => k == 0,
        BPF_MUL | BPF_DIV => k == 1,
        BPF_AND => k == u32::MAX,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::RetVal;

    const X86_64: u32 = 0xc000_003e;

    fn jeq(k: u32, jt: u8, jf: u8) -> Insn {
        Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf)
    }

    /// `split_bounds` is a shortcut for the bounds of `IntervalSet::split`'s two sets: the same
    /// answer on ranges and constants near the edges (0, `u32::MAX`, the range's ends) and at
    /// random.
    /// Every decision from known bits holds for every value with those bits: all 16 values of
    /// the low four bits (the others known zero), every pair of disjoint masks there, every
    /// operator and constants around the range.
    #[test]
    fn bit_decisions_hold_for_every_value_with_those_bits() {
        let mut decided = 0;
        for ones in 0u32..16 {
            for zeros in 0u32..16 {
                if ones & zeros != 0 {
                    continue;
                }
                let zeros = zeros | !0xf;
                let values: Vec<u32> = (0u32..16)
                    .filter(|v| v & ones == ones && v & zeros == 0)
                    .collect();
                for op in [BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET] {
                    for k in (0u32..=17).chain([0x10, 0x100, u32::MAX]) {
                        let outcomes: Vec<bool> =
                            values.iter().map(|&v| jump_taken(op, v, k)).collect();
                        if let Some(taken) = decide_by_bits(ones, zeros, op, k) {
                            decided += 1;
                            assert!(
                                outcomes.iter().all(|&o| o == taken),
                                "ones {ones:#x} zeros {zeros:#x} op {op:#x} k {k:#x}: {taken}"
                            );
                        } else if ones == 0xf || zeros == !0 {
                            // Every bit known: always decided.
                            panic!("ones {ones:#x} zeros {zeros:#x} op {op:#x} k {k:#x} undecided");
                        }
                    }
                }
            }
        }
        assert!(decided > 1000, "{decided}");
        assert_eq!(decide_by_bits(0, 0, BPF_JSET, 4), None);
    }

    /// The same for `v & m == k`: every mask and constant of the low four bits (and one bit
    /// above them, which no value has).
    #[test]
    fn masked_equality_decisions_hold_for_every_value_with_those_bits() {
        let mut decided = 0;
        for ones in 0u32..16 {
            for zeros in (0u32..16).filter(|z| z & ones == 0) {
                let zeros = zeros | !0xf;
                let values: Vec<u32> = (0u32..16)
                    .filter(|v| v & ones == ones && v & zeros == 0)
                    .collect();
                for m in (0u32..16).chain([0x1f]) {
                    for k in (0u32..16).chain([0x10, 0x11]) {
                        let outcomes: Vec<bool> = values.iter().map(|&v| v & m == k).collect();
                        match masked_eq_by_bits(ones, zeros, m, k) {
                            Some(taken) => {
                                decided += 1;
                                assert!(
                                    outcomes.iter().all(|&o| o == taken),
                                    "ones {ones:#x} zeros {zeros:#x} m {m:#x} k {k:#x}: {taken}"
                                );
                            }
                            // Undecided only where the values disagree or a mask bit is open.
                            None => assert!(
                                outcomes.iter().any(|&o| o != outcomes[0])
                                    || (ones | zeros) & m != m,
                                "ones {ones:#x} zeros {zeros:#x} m {m:#x} k {k:#x}"
                            ),
                        }
                    }
                }
            }
        }
        assert!(decided > 10_000, "{decided}");
    }

    /// Chromium's masked value chain: `ld [w]; and #m; jeq #v` per value. The reload and
    /// re-mask after the first vanish, and a `jset` of a masked bit that an earlier `jeq`
    /// fixed folds.
    #[test]
    fn a_reloaded_masked_word_is_not_reloaded() {
        let and = |m: u32| Insn::stmt(BPF_ALU | BPF_AND | BPF_K, m);
        let p = Program::new(vec![
            Insn::ld_abs(24),                                // 0: args[1].lo
            and(0xff),                                       // 1
            jeq(1, 6, 0),                                    // 2: → 9
            Insn::ld_abs(24),                                // 3
            and(0xff),                                       // 4
            jeq(3, 0, 2),                                    // 5: → 6 : 8
            Insn::jump(BPF_JMP | BPF_JSET | BPF_K, 2, 0, 1), // 6: 3 has bit 1, so → 7
            Insn::ret(1),                                    // 7
            Insn::ret(2),                                    // 8
            Insn::ret(1),                                    // 9
        ]);
        let lifted = lift(&p, &LiftConfig::FULL).unwrap();
        let mut dag = lifted.dag.clone();
        let (r1, r2) = (dag.ret(1), dag.ret(2));
        let is3 = dag.test(jeq(3, 0, 0), r1, r2);
        let is1 = dag.test(jeq(1, 0, 0), r1, is3);
        let masked = dag.op(and(0xff), is1);
        let expect = dag.op(Insn::ld_abs(24), masked);
        assert_eq!(lifted.classes.len(), 1);
        assert_eq!(lifted.classes[0].pieces.len(), 1);
        assert_eq!(lifted.classes[0].pieces[0].body, expect);
    }

    #[test]
    fn split_bounds_are_the_bounds_of_the_split_sets() {
        let mut rng = crate::bpf::testing::Rng::new(7);
        let edges = [0, 1, 2, 40, 41, 42, u32::MAX - 1, u32::MAX];
        for case in 0..20_000 {
            let (mut lo, mut hi, k) = if case < 4_000 {
                (rng.pick(&edges), rng.pick(&edges), rng.pick(&edges))
            } else {
                (
                    rng.next_u32() % 64,
                    rng.next_u32() % 64,
                    rng.next_u32() % 64,
                )
            };
            if lo > hi {
                std::mem::swap(&mut lo, &mut hi);
            }
            for op in [BPF_JEQ, BPF_JGT, BPF_JGE] {
                let (t, f) = IntervalSet::range(lo, hi).split(op, k).expect("no jset");
                let part = |s: &IntervalSet| (!s.is_empty()).then(|| bounds(s));
                let expected = (part(&t), part(&f));
                assert_eq!(
                    split_bounds(lo, hi, op, k),
                    Some(expected),
                    "{lo}..={hi} op {op:#x} k {k}"
                );
                // One range is taken, whatever the operation.
                assert!(t.ranges().len() <= 1);
            }
        }
        assert_eq!(split_bounds(0, 9, BPF_JSET, 1), None);
    }

    /// The module documentation's worked example.
    fn example() -> Program {
        Program::new(vec![
            Insn::ld_abs(4),
            jeq(X86_64, 0, 5),
            Insn::ld_abs(0),
            Insn::jump(BPF_JMP | BPF_JGE | BPF_K, 0x4000_0000, 3, 0),
            jeq(41, 0, 3),
            Insn::ld_abs(16),
            jeq(16, 0, 1),
            Insn::ret(RetVal::KILL_THREAD.0),
            Insn::ret(RetVal::ALLOW.0),
        ])
    }

    #[test]
    fn worked_example() {
        let lifted = lift(&example(), &LiftConfig::FULL).unwrap();
        assert_eq!(arch_cuts(&example()), vec![X86_64, X86_64 + 1]);
        assert_eq!(lifted.classes.len(), 2);
        let mut dag = lifted.dag.clone();
        let kill = dag.ret(0);
        let allow = dag.ret(0x7fff_0000);
        let socket = {
            let t = dag.test(jeq(16, 0, 0), kill, allow);
            dag.op(Insn::ld_abs(16), t)
        };
        let x86_64 = lifted
            .classes
            .iter()
            .find(|c| c.arch.contains(X86_64))
            .unwrap();
        assert_eq!(x86_64.arch.ranges(), [(X86_64, X86_64)]);
        let p = |lo, hi, body| Piece { lo, hi, body };
        assert_eq!(
            x86_64.pieces,
            vec![
                p(0, 40, allow),
                p(41, 41, socket),
                p(42, 0x3fff_ffff, allow),
                p(0x4000_0000, u32::MAX, kill)
            ]
        );
        let other = lifted
            .classes
            .iter()
            .find(|c| !c.arch.contains(X86_64))
            .unwrap();
        assert_eq!(
            other.arch.ranges(),
            [(0, X86_64 - 1), (X86_64 + 1, u32::MAX)]
        );
        assert_eq!(other.pieces, vec![p(0, u32::MAX, kill)]);
    }

    #[test]
    fn repeated_argument_test_is_folded() {
        // ld [16]; jeq #5 → L; ld [16]; jeq #5 → ret 1 : ret 2;  L: ld [16]; jeq #5 → ret 3 : ret 4
        // On the L side args[0].lo == 5 is known: L's test folds to ret 3.
        let p = Program::new(vec![
            Insn::ld_abs(16),
            jeq(5, 3, 0),
            Insn::ld_abs(16),
            jeq(5, 0, 1),
            Insn::ret(1),
            Insn::ret(2),
            Insn::ld_abs(16),
            jeq(5, 0, 1),
            Insn::ret(3),
            Insn::ret(4),
        ]);
        // Fix the first jump: taken goes to 6 (L).
        let mut p = p;
        p.insns[1] = jeq(5, 4, 0);
        let lifted = lift(&p, &LiftConfig::FULL).unwrap();
        let mut dag = lifted.dag.clone();
        let (r2, r3) = (dag.ret(2), dag.ret(3));
        let t = dag.test(jeq(5, 0, 0), r3, r2);
        let expect = dag.op(Insn::ld_abs(16), t);
        assert_eq!(lifted.classes.len(), 1);
        assert_eq!(lifted.classes[0].pieces.len(), 1);
        assert_eq!(lifted.classes[0].pieces[0].body, expect);
    }

    #[test]
    fn alu_on_a_word_the_path_pinned_folds() {
        // ld [16]; jeq #3 → A : B;  A: ld [24]; jeq #17 → ret 1 : B;
        // B: ld [16]; and #4; jeq #0 → ret 1 : ret 2.
        // From A, args[0].lo is 3 and 3 & 4 == 0: B answers ret 1 there, so A's test of
        // args[1] has two equal sides and goes too. (Firecracker's `mmap` rule has this shape.)
        let p = Program::new(vec![
            Insn::ld_abs(16),
            jeq(3, 0, 2),
            Insn::ld_abs(24),
            jeq(17, 3, 0),
            Insn::ld_abs(16),
            Insn::stmt(BPF_ALU | BPF_AND | BPF_K, 4),
            jeq(0, 0, 1),
            Insn::ret(1),
            Insn::ret(2),
        ]);
        let lifted = lift(&p, &LiftConfig::FULL).unwrap();
        let mut dag = lifted.dag.clone();
        let (r1, r2) = (dag.ret(1), dag.ret(2));
        let masked = dag.test(Insn::jump(BPF_JMP | BPF_JSET | BPF_K, 4, 0, 0), r2, r1);
        let t = dag.test(jeq(3, 0, 0), r1, masked);
        let expect = dag.op(Insn::ld_abs(16), t);
        assert_eq!(lifted.classes[0].pieces.len(), 1);
        assert_eq!(lifted.classes[0].pieces[0].body, expect);
    }

    #[test]
    fn constants_and_scratch_are_propagated() {
        // ld [0]; st M[3]; ld [16]; ldx M[3]; txa; jeq #7 → ret 1 : ret 2
        // M[3] holds nr, X = nr, A = nr: the test is on nr and forks; no scratch is left.
        let p = Program::new(vec![
            Insn::ld_abs(0),
            Insn::stmt(BPF_ST, 3),
            Insn::ld_abs(16),
            Insn::stmt(BPF_LDX | BPF_W | BPF_MEM, 3),
            Insn::stmt(BPF_MISC | BPF_TXA, 0),
            jeq(7, 0, 1),
            Insn::ret(1),
            Insn::ret(2),
        ]);
        let lifted = lift(&p, &LiftConfig::FULL).unwrap();
        let mut dag = lifted.dag.clone();
        let (r1, r2) = (dag.ret(1), dag.ret(2));
        let pieces = &lifted.classes[0].pieces;
        assert_eq!(
            pieces
                .iter()
                .map(|p| (p.lo, p.hi, p.body))
                .collect::<Vec<_>>(),
            vec![(0, 6, r2), (7, 7, r1), (8, u32::MAX, r2)]
        );
    }

    #[test]
    fn ret_a_of_a_constant_and_division_by_zero() {
        // ldx #0; ld [16]; div x → the filter returns 0 whatever the input.
        let p = Program::new(vec![
            Insn::stmt(BPF_LDX | BPF_W | BPF_IMM, 0),
            Insn::ld_abs(16),
            Insn::stmt(BPF_ALU | BPF_DIV | BPF_X, 0),
            Insn::ret(5),
        ]);
        let lifted = lift(&p, &LiftConfig::FULL).unwrap();
        let mut dag = lifted.dag.clone();
        assert_eq!(lifted.classes[0].pieces[0].body, dag.ret(0));
        // ld #3; add #4; ret a → ret 7.
        let p = Program::new(vec![
            Insn::stmt(BPF_LD | BPF_W | BPF_IMM, 3),
            Insn::stmt(BPF_ALU | BPF_ADD | BPF_K, 4),
            Insn::stmt(BPF_RET | BPF_A, 0),
        ]);
        let lifted = lift(&p, &LiftConfig::FULL).unwrap();
        let mut dag = lifted.dag.clone();
        assert_eq!(lifted.classes[0].pieces[0].body, dag.ret(7));
    }
}
