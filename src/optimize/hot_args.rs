//! Shortcuts for the workload's hottest argument values.
//!
//! A body that decides a syscall by its arguments tests them in the order the profile's rules
//! give (each rule a conjunction, the rules tried one after the other). When the workload says
//! which argument values the program's hot calls carry (a `secopt record` capture, a probe
//! list), the hottest call often walks through tests that cannot change its decision. This pass
//! puts in front of such a body the fewest tests that *imply* the hot call's decision — an
//! implicant of the body's decision function that contains the call — and lets every other
//! value fall through to the body unchanged.
//!
//! Worked example (Firecracker's VMM thread, `mmap` with `prot` = 3 and `flags` = 0x22):
//!
//! ```text
//! before (8 instructions to ALLOW)      after (4 instructions to ALLOW)
//!   ld [args[2].lo]                        ld [args[2].lo]
//!   jeq #3, next, L1                       jset #4, body, next
//!   ld [args[3].lo]                        ld [args[3].lo]
//!   jeq #17, allow, next                   jeq #34, allow, body
//!   ld [args[2].lo]                      body: (the eight instructions on the left)
//! L1: jset #4, trap, next
//!   ld [args[3].lo]
//!   jeq #34, allow, next
//!   …
//! ```
//!
//! The facts on the hot call's path are `args[2] == 3`, `args[3] != 17`, `args[2] & 4 == 0`,
//! `args[3] == 34`; dropping facts one at a time while every path of the body that agrees with
//! the rest still returns ALLOW leaves `args[2] & 4 == 0` and `args[3] == 34`. Whether a test
//! of the body is decided by the kept facts is answered conservatively (intervals, known bits,
//! one known value): an undecided test explores both branches, so a fact is only dropped when
//! the body provably returns the same action without it.
//!
//! A shortcut is kept only when it lowers the expected cost of the calls that reach the body:
//! the sampled calls are run through both versions, and calls whose path is not known (no
//! sample, or an argument the sample lacks) are charged the growth of the longest path.

use super::dag::{taken, Dag, Node, NodeId, LIVE_A};
use super::lift::Lifted;
use super::weights::Weights;
use crate::bpf::data::{SeccompData, OFF_ARGS};
use crate::bpf::insn::*;
use rustc_hash::FxHashSet;

/// One test on the hot call's path: the word it reads, the test and its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Fact {
    offset: u32,
    test: Insn,
    taken: bool,
}

/// What is known about one 32-bit word from some facts: every value satisfying them lies in
/// `lo..=hi`, has the bits of `ones` set and those of `zeros` clear, is none of `not`, and is
/// `exactly` when that is known.
#[derive(Debug, Clone)]
struct Known {
    lo: u32,
    hi: u32,
    ones: u32,
    zeros: u32,
    not: Vec<u32>,
    exactly: Option<u32>,
}

impl Known {
    fn new() -> Known {
        Known {
            lo: 0,
            hi: u32::MAX,
            ones: 0,
            zeros: 0,
            not: Vec::new(),
            exactly: None,
        }
    }

    fn add(&mut self, test: Insn, taken: bool) {
        let k = test.k;
        match (op(test.code), taken) {
            (BPF_JEQ, true) => self.exactly = Some(k),
            (BPF_JEQ, false) => self.not.push(k),
            (BPF_JGE, true) => self.lo = self.lo.max(k),
            (BPF_JGE, false) => self.hi = self.hi.min(k.saturating_sub(1)),
            (BPF_JGT, true) => self.lo = self.lo.max(k.saturating_add(1)),
            (BPF_JGT, false) => self.hi = self.hi.min(k),
            (BPF_JSET, true) if k.count_ones() == 1 => self.ones |= k,
            (BPF_JSET, false) => self.zeros |= k,
            _ => {}
        }
    }

    /// The outcome of `test` for every value this knowledge allows, when they all agree.
    fn decides(&self, test: Insn) -> Option<bool> {
        if let Some(v) = self.exactly {
            return taken(test, v);
        }
        let k = test.k;
        match op(test.code) {
            BPF_JEQ => (k < self.lo
                || k > self.hi
                || k & self.zeros != 0
                || k & self.ones != self.ones
                || self.not.contains(&k))
            .then_some(false),
            BPF_JGE if self.lo >= k => Some(true),
            BPF_JGE if self.hi < k => Some(false),
            BPF_JGT if self.lo > k => Some(true),
            BPF_JGT if self.hi <= k => Some(false),
            BPF_JSET if k & self.ones != 0 => Some(true),
            BPF_JSET if k & !self.zeros == 0 => Some(false),
            _ => None,
        }
    }
}

/// The argument word an instruction loads, when it is `ld [args…]`.
fn loaded_arg_word(insn: Insn) -> Option<u32> {
    (insn.code == BPF_LD | BPF_W | BPF_ABS && insn.k >= OFF_ARGS && insn.k < OFF_ARGS + 48)
        .then_some(insn.k)
}

/// A call's path from `node`: its facts, the action it returns and the instructions it runs.
/// `None` when the path reads an argument the call does not give, or does anything but load
/// argument words, test them against constants and return a constant.
fn walk(dag: &Dag, mut node: NodeId, data: &SeccompData, known: &[bool; 6]) -> Option<Path> {
    let words = data.words();
    let mut facts = Vec::new();
    let mut held: Option<u32> = None;
    let mut length = 0;
    loop {
        length += 1;
        match dag.node(node) {
            Node::Ret(k) => {
                return Some(Path {
                    facts,
                    action: k,
                    length,
                })
            }
            Node::RetA => return None,
            Node::Op { insn, next } => {
                let offset = loaded_arg_word(insn)?;
                if !known[(offset - OFF_ARGS) as usize / 8] {
                    return None;
                }
                held = Some(offset);
                node = next;
            }
            Node::Test { insn, t, f } => {
                let offset = held?;
                let outcome = taken(insn, words[offset as usize / 4])?;
                facts.push(Fact {
                    offset,
                    test: insn,
                    taken: outcome,
                });
                node = if outcome { t } else { f };
            }
        }
    }
}

struct Path {
    facts: Vec<Fact>,
    action: u32,
    length: u32,
}

/// Whether every path from `body` that agrees with `facts` returns `action` (conservative: a
/// `false` may only mean the check could not tell).
fn implies(dag: &Dag, body: NodeId, facts: &[Fact], action: u32) -> bool {
    let mut per_word: Vec<(u32, Known)> = Vec::new();
    for f in facts {
        match per_word.iter_mut().find(|(o, _)| *o == f.offset) {
            Some((_, k)) => k.add(f.test, f.taken),
            None => {
                let mut k = Known::new();
                k.add(f.test, f.taken);
                per_word.push((f.offset, k));
            }
        }
    }
    let knowledge = |offset: u32| per_word.iter().find(|(o, _)| *o == offset).map(|(_, k)| k);
    // Depth-first over (node, word held in A); bodies are small DAGs.
    let mut seen: FxHashSet<(NodeId, Option<u32>)> = FxHashSet::default();
    let mut stack = vec![(body, None::<u32>)];
    while let Some(state) = stack.pop() {
        if !seen.insert(state) {
            continue;
        }
        let (node, held) = state;
        match dag.node(node) {
            Node::Ret(k) if k == action => {}
            Node::Ret(_) | Node::RetA => return false,
            Node::Op { insn, next } => match loaded_arg_word(insn) {
                Some(offset) => stack.push((next, Some(offset))),
                None => return false,
            },
            Node::Test { insn, t, f } => {
                // Only tests of A against a constant are understood.
                if taken(insn, 0).is_none() {
                    return false;
                }
                let decided = held.and_then(knowledge).and_then(|k| k.decides(insn));
                match decided {
                    Some(true) => stack.push((t, held)),
                    Some(false) => stack.push((f, held)),
                    None => {
                        stack.push((t, held));
                        stack.push((f, held));
                    }
                }
            }
        }
    }
    true
}

/// The body `facts` lead to `action` in, falling through to `body` at the first fact that does
/// not hold; facts are grouped by word (one load per word).
fn build_shortcut(dag: &mut Dag, body: NodeId, facts: &[Fact], action: u32) -> NodeId {
    let mut order: Vec<u32> = Vec::new();
    for f in facts {
        if !order.contains(&f.offset) {
            order.push(f.offset);
        }
    }
    let mut node = dag.ret(action);
    for &offset in order.iter().rev() {
        for f in facts.iter().rev().filter(|f| f.offset == offset) {
            node = if f.taken {
                dag.test(f.test, node, body)
            } else {
                dag.test(f.test, body, node)
            };
        }
        node = dag.op(Insn::ld_abs(offset), node);
    }
    node
}

/// Adds shortcuts for the hottest sampled calls in front of the bodies they reach (see the
/// module documentation). Does nothing when no call of `weights` carries argument values.
pub fn add_shortcuts(lifted: &mut Lifted, weights: &Weights) {
    let sampled: Vec<(u32, u32)> = weights.sampled_syscalls().collect();
    if sampled.is_empty() {
        return;
    }
    // The (class, piece) of every sampled call, each once.
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    for &(token, nr) in &sampled {
        let Some(c) = lifted.classes.iter().position(|c| c.arch.contains(token)) else {
            continue;
        };
        let p = lifted.classes[c].pieces.partition_point(|p| p.hi < nr);
        if p < lifted.classes[c].pieces.len() && !pieces.contains(&(c, p)) {
            pieces.push((c, p));
        }
    }
    for (c, p) in pieces {
        let class = &lifted.classes[c];
        let piece = class.pieces[p];
        let body = piece.body;
        let dag = &lifted.dag;
        if matches!(dag.node(body), Node::Ret(_) | Node::RetA) || dag.live_in(body) & LIVE_A != 0 {
            continue;
        }
        // The calls reaching this body: (path, count) when known, else only their count.
        let mut known_paths: Vec<(Path, f64, SeccompData, [bool; 6])> = Vec::new();
        let mut unknown = 0.0;
        for &(alo, ahi) in class.arch.ranges() {
            for (token, nr, count) in weights.tokens(alo, ahi) {
                if nr < piece.lo || nr > piece.hi {
                    continue;
                }
                let mut rest = count;
                for &(args, n) in weights.samples(token, nr) {
                    let data = SeccompData::new(token, nr as i32, args.map(|a| a.unwrap_or(0)));
                    let given = args.map(|a| a.is_some());
                    if let Some(path) = walk(dag, body, &data, &given) {
                        known_paths.push((path, n, data, given));
                        rest -= n;
                    }
                }
                unknown += rest.max(0.0);
            }
        }
        // The hottest known path (paths with equal facts add up; summed in one pass, as a
        // workload may give hundreds of thousands of argument patterns).
        let mut totals: rustc_hash::FxHashMap<&[Fact], f64> = Default::default();
        for (path, n, ..) in &known_paths {
            *totals.entry(&path.facts[..]).or_default() += n;
        }
        let mut best: Option<(usize, f64)> = None;
        for (i, (path, ..)) in known_paths.iter().enumerate() {
            let total = totals[&path.facts[..]];
            if best.is_none_or(|(_, b)| total > b) {
                best = Some((i, total));
            }
        }
        let Some((hot, _)) = best else {
            continue;
        };
        let action = known_paths[hot].0.action;
        let mut facts = known_paths[hot].0.facts.clone();
        let mut i = 0;
        while i < facts.len() {
            let mut fewer = facts.clone();
            fewer.remove(i);
            if implies(dag, body, &fewer, action) {
                facts = fewer;
            } else {
                i += 1;
            }
        }
        if !implies(dag, body, &facts, action) {
            continue;
        }
        let dag = &mut lifted.dag;
        let shortcut = build_shortcut(dag, body, &facts, action);
        // How the expected instructions of the calls reaching the body change: the sampled
        // calls re-run on the shortcut; the others may now run its longest path.
        let growth = dag.longest_path(shortcut) as f64 - dag.longest_path(body) as f64;
        let mut change = Some(unknown * growth.max(0.0));
        for (path, n, data, given) in &known_paths {
            change = change
                .zip(walk(dag, shortcut, data, given))
                .map(|(c, now)| c + (now.length as f64 - path.length as f64) * n);
        }
        if change.is_some_and(|c| c < 0.0) {
            lifted.classes[c].pieces[p].body = shortcut;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::testing::Rng;

    fn test(rng: &mut Rng) -> Insn {
        let code = [BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JSET][rng.below(4)];
        let k = match rng.below(3) {
            0 => rng.below(40) as u32,
            1 => 1 << rng.below(6),
            _ => u32::MAX - rng.below(3) as u32,
        };
        Insn::jump(BPF_JMP | code | BPF_K, k, 0, 0)
    }

    /// Facts drawn from a random value's own outcomes; whatever `decides` answers must hold
    /// for every value (of a domain covering all the constants and their neighbours) that
    /// satisfies the facts, checked by evaluating each test directly.
    #[test]
    fn knowledge_decides_a_test_only_when_every_allowed_value_agrees() {
        let mut rng = Rng::new(0x5eed);
        let domain: Vec<u32> = (0..=80).chain((0..8).map(|i| u32::MAX - i)).collect();
        let mut decided = 0;
        for _ in 0..20_000 {
            let v = domain[rng.below(domain.len())];
            let facts: Vec<(Insn, bool)> = (0..1 + rng.below(3))
                .map(|_| {
                    let t = test(&mut rng);
                    (t, taken(t, v).unwrap())
                })
                .collect();
            let mut known = Known::new();
            for &(t, outcome) in &facts {
                known.add(t, outcome);
            }
            let query = test(&mut rng);
            let Some(answer) = known.decides(query) else {
                continue;
            };
            decided += 1;
            for &w in &domain {
                if facts.iter().all(|&(t, o)| taken(t, w) == Some(o)) {
                    assert_eq!(taken(query, w), Some(answer), "{facts:?} {query:?} at {w}");
                }
            }
        }
        assert!(decided > 2_000, "{decided}");
    }
}
