//! A small reduced ordered BDD package with a shared node table, so that equal functions are
//! equal node ids: state merging, feasibility checks and the verifier's equivalence test are
//! all O(1) comparisons of ids.
//!
//! Hand-written rather than a crate because the needs are narrow (ITE with a bounded cache,
//! existential quantification, cofactors, witnesses) and because every operation must be able
//! to give up cleanly when a budget (nodes, steps, estimated memory, wall-clock time) runs
//! out: callers turn [`OutOfNodes`] into an over-approximation (analysis) or an `unknown`
//! verdict (verify), never into a wrong answer.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A `HashMap` with rustc's Fx hash: the keys are small integer tuples from our own tables,
/// never attacker-chosen, so SipHash's flooding resistance would only cost time.
pub type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// A node id; 0 and 1 are the constants.
pub type Node = u32;
/// A variable; smaller variables are nearer the root.
pub type Var = u16;
/// The constant false.
pub const FALSE: Node = 0;
/// The constant true.
pub const TRUE: Node = 1;
/// The variable of the two leaves: after every real variable.
pub const LEAF: Var = Var::MAX;
/// Most slots of the operation cache; a manager with a small node budget keeps a
/// proportionally small cache.
const MEMO_LIMIT: usize = 1 << 20;
/// Slots of a new manager's operation cache and unique table: small, because the analyzer
/// makes a manager per syscall and most of them stay small; both grow with the node table.
const INITIAL_SLOTS: usize = 1 << 6;
/// Nodes created, or steps taken, between two checks of the clock (and, for nodes, of the
/// memory estimate).
const CHECK_EVERY: usize = 1 << 14;

/// A budget ran out; [`Bdd::exhausted`] says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfNodes;

/// Which budget of a [`Bdd`] ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The node count reached the limit.
    Nodes(usize),
    /// The estimated memory reached the limit (bytes).
    Memory(usize),
    /// The operations took more steps than the limit.
    Steps(u64),
    /// The deadline passed.
    Time,
}

/// The budgets of one [`Bdd`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most nodes (at least 2).
    pub max_nodes: usize,
    /// Most estimated bytes of tables ([`Bdd::memory_estimate`]).
    pub max_bytes: Option<usize>,
    /// Most steps: recursive `ite` calls the operation cache did not answer. Unlike the
    /// node count this bounds the work when the cache thrashes (on the `optimize` fuzz
    /// target's input 0xa6, a product of argument words, 126 million steps in 10 s left the
    /// node table under its 2M budget), and unlike the deadline it gives the same answer on
    /// every machine.
    pub max_steps: Option<u64>,
    /// When to give up.
    pub deadline: Option<Instant>,
}

/// How far a long computation has got, readable from another thread while it runs: the node
/// count and steps of the [`Bdd`] it is attached to ([`Bdd::set_meter`]), refreshed every
/// 16 384 nodes or steps (so a caller can show them against the budgets without
/// slowing the hot path), and the phase the computation says it is in (a number whose
/// meaning is the computation's), which a listener hears as it changes.
///
/// Clones share the counts; two meters are equal when they are the same meter.
#[derive(Clone, Default)]
pub struct Meter(Arc<MeterState>);

/// Called with each new phase, on the computation's thread.
pub type PhaseListener = Box<dyn Fn(u8) + Send + Sync>;

#[derive(Default)]
struct MeterState {
    nodes: AtomicU64,
    steps: AtomicU64,
    phase: AtomicU8,
    listener: Option<PhaseListener>,
}

impl Meter {
    /// A meter whose phase changes are told to `listener`.
    pub fn with_listener(listener: PhaseListener) -> Meter {
        Meter(Arc::new(MeterState {
            listener: Some(listener),
            ..MeterState::default()
        }))
    }

    /// Nodes of the attached manager when it last looked (the two leaves included).
    pub fn nodes(&self) -> u64 {
        self.0.nodes.load(Ordering::Relaxed)
    }

    /// Steps of the attached manager when it last looked (see [`Limits::max_steps`]).
    pub fn steps(&self) -> u64 {
        self.0.steps.load(Ordering::Relaxed)
    }

    /// The phase last set (0 until one is).
    pub fn phase(&self) -> u8 {
        self.0.phase.load(Ordering::Relaxed)
    }

    /// Says which phase the computation is in; the listener hears it if it is new.
    pub fn set_phase(&self, phase: u8) {
        if self.0.phase.swap(phase, Ordering::Relaxed) != phase {
            if let Some(listener) = &self.0.listener {
                listener(phase);
            }
        }
    }

    /// Sets the counts to 0, for a meter that is to follow another computation (which
    /// publishes its own when it starts, unless it does no work at all).
    pub fn reset(&self) {
        self.publish(0, 0);
    }

    fn publish(&self, nodes: usize, steps: u64) {
        self.0.nodes.store(nodes as u64, Ordering::Relaxed);
        self.0.steps.store(steps, Ordering::Relaxed);
    }
}

impl PartialEq for Meter {
    fn eq(&self, other: &Meter) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Meter {}

impl std::fmt::Debug for Meter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meter")
            .field("nodes", &self.nodes())
            .field("steps", &self.steps())
            .field("phase", &self.phase())
            .finish_non_exhaustive()
    }
}

/// A BDD manager: every function built with it lives in one shared, hash-consed node table.
pub struct Bdd {
    /// `(variable, low child, high child)`; variables increase from a node to its children.
    nodes: Vec<(Var, Node, Node)>,
    unique: UniqueTable,
    memo: IteCache,
    limits: Limits,
    memo_limit: usize,
    exhausted: Option<Limit>,
    /// Steps taken so far (see [`Limits::max_steps`]).
    steps: u64,
    /// The step at which [`Bdd::step`] next looks at the step budget and the clock: one
    /// comparison per step on the hot path instead of two.
    next_check: u64,
    /// Where the counts are published for another thread to read, if anywhere.
    meter: Option<Meter>,
}

/// The meter's last counts are the final ones.
impl Drop for Bdd {
    fn drop(&mut self) {
        self.publish();
    }
}

/// Bytes one node costs in the node table.
const BYTES_PER_NODE: usize = std::mem::size_of::<(Var, Node, Node)>();
/// Bytes one operation-cache slot costs.
const BYTES_PER_MEMO: usize = std::mem::size_of::<[Node; 4]>();
/// Bytes one unique-table slot costs.
const BYTES_PER_UNIQUE: usize = std::mem::size_of::<Node>();

/// The slot of the key `(a, b)` in a table of `len` slots (a power of two): a multiplicative
/// hash, of which the high bits are the well-mixed ones.
fn slot_of(a: u64, b: u64, len: usize) -> usize {
    let mixed = a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    (mixed >> (64 - len.trailing_zeros())) as usize
}

/// The unique table: which node is `(var, lo, hi)`, so that no function gets two nodes.
/// Open addressing with linear probing, at most half full. A slot holds only a node id and the
/// key is read from the node table: 4 bytes a slot, and growing re-places ids without moving
/// keys.
struct UniqueTable {
    /// Node ids; `FALSE` marks an empty slot (the leaves are never in the table).
    slots: Vec<Node>,
    len: usize,
}

impl UniqueTable {
    fn new(slots: usize) -> Self {
        debug_assert!(slots.is_power_of_two());
        UniqueTable {
            slots: vec![FALSE; slots],
            len: 0,
        }
    }

    fn home(&self, (var, lo, hi): (Var, Node, Node)) -> usize {
        slot_of(
            u64::from(lo) | u64::from(hi) << 32,
            u64::from(var),
            self.slots.len(),
        )
    }

    /// The node with this key, or the empty slot where it belongs.
    fn find(&self, nodes: &[(Var, Node, Node)], key: (Var, Node, Node)) -> Result<Node, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            match self.slots[i] {
                FALSE => return Err(i),
                n if nodes[n as usize] == key => return Ok(n),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Puts node `n` (already in `nodes`) into the empty slot [`Self::find`] gave.
    fn insert_at(&mut self, nodes: &[(Var, Node, Node)], slot: usize, n: Node) {
        self.slots[slot] = n;
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            let doubled = vec![FALSE; self.slots.len() * 2];
            let old = std::mem::replace(&mut self.slots, doubled);
            let mask = self.slots.len() - 1;
            for n in old.into_iter().filter(|&n| n != FALSE) {
                let mut i = self.home(nodes[n as usize]);
                while self.slots[i] != FALSE {
                    i = (i + 1) & mask;
                }
                self.slots[i] = n;
            }
        }
    }
}

/// The ITE operation cache, direct-mapped: each `(f, g, h)` has one slot, and a newer result
/// overwrites whatever hashed to the same slot before. It is only a cache, so a lost entry is
/// recomputed (through the unique table, to the same node) and never changes a result. Against
/// a hash map it needs no probing, no rehashing of entries while it grows and no flush when
/// full, which made the map the largest single cost of `verify`.
struct IteCache {
    /// `[f, g, h, result]`; `f == FALSE` marks an empty slot (`ite` never caches a constant `f`).
    slots: Vec<[Node; 4]>,
}

impl IteCache {
    fn new(slots: usize) -> Self {
        debug_assert!(slots.is_power_of_two());
        IteCache {
            slots: vec![[FALSE; 4]; slots],
        }
    }

    fn slot(&self, f: Node, g: Node, h: Node) -> usize {
        slot_of(
            u64::from(f) | u64::from(g) << 32,
            u64::from(h),
            self.slots.len(),
        )
    }

    fn get(&self, f: Node, g: Node, h: Node) -> Option<Node> {
        let [sf, sg, sh, r] = self.slots[self.slot(f, g, h)];
        (sf == f && sg == g && sh == h).then_some(r)
    }

    fn insert(&mut self, f: Node, g: Node, h: Node, r: Node) {
        let i = self.slot(f, g, h);
        self.slots[i] = [f, g, h, r];
    }

    /// Doubles the slots, keeping the entries that still get a slot of their own.
    fn grow(&mut self) {
        let doubled = vec![[FALSE; 4]; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        for [f, g, h, r] in old {
            if f != FALSE {
                self.insert(f, g, h, r);
            }
        }
    }

    fn len(&self) -> usize {
        self.slots.len()
    }
}

impl Bdd {
    /// A manager with at most `limit` nodes and no other budget.
    pub fn new(limit: usize) -> Self {
        Self::with_limits(Limits {
            max_nodes: limit,
            max_bytes: None,
            max_steps: None,
            deadline: None,
        })
    }

    /// A manager with the given budgets.
    pub fn with_limits(limits: Limits) -> Self {
        Bdd {
            nodes: vec![(LEAF, FALSE, FALSE), (LEAF, TRUE, TRUE)],
            unique: UniqueTable::new(INITIAL_SLOTS),
            memo: IteCache::new(INITIAL_SLOTS),
            limits: Limits {
                max_nodes: limits.max_nodes.max(2),
                ..limits
            },
            memo_limit: limits
                .max_nodes
                .saturating_mul(4)
                .clamp(1 << 12, MEMO_LIMIT)
                .next_power_of_two(),
            exhausted: None,
            steps: 0,
            next_check: Self::next_check_after(0, limits.max_steps),
            meter: None,
        }
    }

    /// Publishes the node count and steps on `meter` from now on, every 16 384
    /// nodes or steps, when [`Bdd::publish`] is called, and when the manager is dropped.
    pub fn set_meter(&mut self, meter: Meter) {
        meter.publish(self.nodes.len(), self.steps);
        self.meter = Some(meter);
    }

    /// Publishes the exact counts on the meter now (between phases of the work).
    pub fn publish(&self) {
        if let Some(meter) = &self.meter {
            meter.publish(self.nodes.len(), self.steps);
        }
    }

    /// Which budget ran out, if one did (then every later operation that needs a new node
    /// fails too).
    pub fn exhausted(&self) -> Option<Limit> {
        self.exhausted
    }

    /// Steps taken so far: recursive `ite` calls the operation cache did not answer.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Number of nodes, including the two leaves.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether only the two leaves exist.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 2
    }

    /// Estimated bytes held by the node table, the unique table and the operation cache.
    pub fn memory_estimate(&self) -> usize {
        self.nodes.capacity() * BYTES_PER_NODE
            + self.unique.slots.len() * BYTES_PER_UNIQUE
            + self.memo.len() * BYTES_PER_MEMO
    }

    /// The variable at the root of `n` ([`LEAF`] for the constants).
    pub fn top(&self, n: Node) -> Var {
        self.nodes[n as usize].0
    }

    /// `(variable, low child, high child)` of `n`.
    pub fn node(&self, n: Node) -> (Var, Node, Node) {
        self.nodes[n as usize]
    }

    fn fail(&mut self, why: Limit) -> OutOfNodes {
        self.exhausted.get_or_insert(why);
        OutOfNodes
    }

    /// The node `if var then hi else lo`; `var` must precede the children's variables.
    pub fn mk(&mut self, var: Var, lo: Node, hi: Node) -> Result<Node, OutOfNodes> {
        if lo == hi {
            return Ok(lo);
        }
        debug_assert!(var < self.top(lo) && var < self.top(hi));
        let slot = match self.unique.find(&self.nodes, (var, lo, hi)) {
            Ok(n) => return Ok(n),
            Err(slot) => slot,
        };
        if self.exhausted.is_some() {
            return Err(OutOfNodes);
        }
        let len = self.nodes.len();
        if len >= self.limits.max_nodes {
            return Err(self.fail(Limit::Nodes(self.limits.max_nodes)));
        }
        if len.is_multiple_of(CHECK_EVERY) {
            if let Some(meter) = &self.meter {
                meter.publish(len, self.steps);
            }
            if let Some(max) = self.limits.max_bytes {
                if self.memory_estimate() >= max {
                    return Err(self.fail(Limit::Memory(max)));
                }
            }
            if self.limits.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(self.fail(Limit::Time));
            }
        }
        let n = len as Node;
        self.nodes.push((var, lo, hi));
        self.unique.insert_at(&self.nodes, slot, n);
        Ok(n)
    }

    /// The function that is true exactly when `var` is.
    pub fn var(&mut self, var: Var) -> Result<Node, OutOfNodes> {
        self.mk(var, FALSE, TRUE)
    }

    fn cofactors(&self, n: Node, var: Var) -> (Node, Node) {
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
        if let Some(r) = self.memo.get(f, g, h) {
            return Ok(r);
        }
        self.step()?;
        let v = self.top(f).min(self.top(g)).min(self.top(h));
        let (f0, f1) = self.cofactors(f, v);
        let (g0, g1) = self.cofactors(g, v);
        let (h0, h1) = self.cofactors(h, v);
        let lo = self.ite(f0, g0, h0)?;
        let hi = self.ite(f1, g1, h1)?;
        let r = self.mk(v, lo, hi)?;
        // One slot per four nodes: on Docker's self-check a slot per node saved 0.4% of the
        // instructions and cost 36% more page faults (5 060 against 3 712; the tables are
        // fresh memory, and faulting it in was a large part of that compile's time).
        if self.memo.len() * 4 < self.nodes.len() && self.memo.len() < self.memo_limit {
            self.memo.grow();
        }
        self.memo.insert(f, g, h, r);
        Ok(r)
    }

    /// Counts one step against [`Limits::max_steps`] and, every [`CHECK_EVERY`] steps, the
    /// deadline.
    #[inline]
    fn step(&mut self) -> Result<(), OutOfNodes> {
        self.steps += 1;
        if self.steps < self.next_check {
            return Ok(());
        }
        self.check_steps()
    }

    #[cold]
    fn check_steps(&mut self) -> Result<(), OutOfNodes> {
        if let Some(meter) = &self.meter {
            meter.publish(self.nodes.len(), self.steps);
        }
        if let Some(max) = self.limits.max_steps {
            if self.steps > max {
                return Err(self.fail(Limit::Steps(max)));
            }
        }
        if self.steps.is_multiple_of(CHECK_EVERY as u64)
            && self.limits.deadline.is_some_and(|d| Instant::now() >= d)
        {
            return Err(self.fail(Limit::Time));
        }
        self.next_check = Self::next_check_after(self.steps, self.limits.max_steps);
        Ok(())
    }

    /// The first step after `steps` that [`Bdd::check_steps`] must see: the next multiple
    /// of [`CHECK_EVERY`], or the first step over the budget if that comes sooner.
    fn next_check_after(steps: u64, max_steps: Option<u64>) -> u64 {
        let every = CHECK_EVERY as u64;
        let clock = (steps / every + 1) * every;
        max_steps.map_or(clock, |max| clock.min(max.saturating_add(1)))
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
    /// `f ∧ ¬g`.
    pub fn and_not(&mut self, f: Node, g: Node) -> Result<Node, OutOfNodes> {
        self.ite(g, FALSE, f)
    }

    /// `∃ vars. f` for the variables `quantified` selects.
    pub fn exists(
        &mut self,
        f: Node,
        quantified: impl Fn(Var) -> bool,
    ) -> Result<Node, OutOfNodes> {
        let mut memo = FxMap::default();
        self.exists_rec(f, &quantified, &mut memo)
    }

    fn exists_rec(
        &mut self,
        f: Node,
        quantified: &impl Fn(Var) -> bool,
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

    /// The cofactor of `f` for the variables `fixed` gives a value to (the others stay free).
    pub fn restrict(
        &mut self,
        f: Node,
        fixed: impl Fn(Var) -> Option<bool>,
    ) -> Result<Node, OutOfNodes> {
        let mut memo = FxMap::default();
        self.restrict_rec(f, &fixed, &mut memo)
    }

    fn restrict_rec(
        &mut self,
        f: Node,
        fixed: &impl Fn(Var) -> Option<bool>,
        memo: &mut FxMap<Node, Node>,
    ) -> Result<Node, OutOfNodes> {
        if f == FALSE || f == TRUE {
            return Ok(f);
        }
        if let Some(&r) = memo.get(&f) {
            return Ok(r);
        }
        let (v, lo, hi) = self.nodes[f as usize];
        let r = match fixed(v) {
            Some(false) => self.restrict_rec(lo, fixed, memo)?,
            Some(true) => self.restrict_rec(hi, fixed, memo)?,
            None => {
                let l = self.restrict_rec(lo, fixed, memo)?;
                let h = self.restrict_rec(hi, fixed, memo)?;
                self.mk(v, l, h)?
            }
        };
        memo.insert(f, r);
        Ok(r)
    }

    /// The value of `f` under a full assignment.
    pub fn eval(&self, mut f: Node, value_of: impl Fn(Var) -> bool) -> bool {
        while f != TRUE && f != FALSE {
            let (v, lo, hi) = self.nodes[f as usize];
            f = if value_of(v) { hi } else { lo };
        }
        f == TRUE
    }

    /// One satisfying partial assignment of `f` (variables not listed are free): the smallest
    /// in the variable order when free variables are read as 0, because it prefers the low
    /// child at every node.
    pub fn witness(&self, mut f: Node) -> Option<Vec<(Var, bool)>> {
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

    /// Number of nodes reachable from `f` (the size of its diagram), leaves excluded.
    pub fn size(&self, f: Node) -> usize {
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![f];
        while let Some(n) = stack.pop() {
            if n == FALSE || n == TRUE || !seen.insert(n) {
                continue;
            }
            let (_, lo, hi) = self.nodes[n as usize];
            stack.push(lo);
            stack.push(hi);
        }
        seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_ids_for_equal_functions() {
        let mut b = Bdd::new(1000);
        let (x, y) = (b.var(0).unwrap(), b.var(1).unwrap());
        // De Morgan: ¬(x ∧ y) = ¬x ∨ ¬y, as the same node.
        let lhs = {
            let a = b.and(x, y).unwrap();
            b.not(a).unwrap()
        };
        let rhs = {
            let (nx, ny) = (b.not(x).unwrap(), b.not(y).unwrap());
            b.or(nx, ny).unwrap()
        };
        assert_eq!(lhs, rhs);
        let e = b.exists(lhs, |v| v == 0).unwrap();
        assert_eq!(e, TRUE);
        let r = b.restrict(lhs, |v| (v == 0).then_some(true)).unwrap();
        assert_eq!(r, b.not(y).unwrap());
        assert!(b.eval(lhs, |v| v == 0));
        assert!(!b.eval(lhs, |_| true));
        assert_eq!(b.witness(lhs), Some(vec![(0, false)]));
    }

    /// The property the verifier rests on (equal functions are equal ids, and only they),
    /// judged by truth tables computed without the BDD, over thousands of functions of five
    /// variables: far more nodes than the tables start with, so they grow many times, and
    /// the direct-mapped operation cache overwrites entries all along.
    #[test]
    fn one_node_per_function_through_the_tables_growth() {
        const VARS: usize = 5;
        // Truth table of a function: bit `a` is its value under assignment `a` (variable `v`
        // is bit `v` of `a`).
        let var_table = |v: usize| {
            (0..32u32)
                .filter(|a| a >> v & 1 == 1)
                .fold(0u32, |t, a| t | 1 << a)
        };
        let mut b = Bdd::new(1 << 20);
        let mut pool: Vec<(Node, u32)> = (0..VARS)
            .map(|v| (b.var(v as Var).unwrap(), var_table(v)))
            .collect();
        let mut node_of: std::collections::HashMap<u32, Node> = std::collections::HashMap::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let (r, op) = (next(), next() % 4);
            let (f, tf) = pool[r as usize % pool.len()];
            let (g, tg) = pool[(r >> 20) as usize % pool.len()];
            let (h, th) = pool[(r >> 40) as usize % pool.len()];
            let (n, t) = match op {
                0 => (b.and(f, g).unwrap(), tf & tg),
                1 => (b.xor(f, g).unwrap(), tf ^ tg),
                2 => (b.not(f).unwrap(), !tf),
                _ => (b.ite(f, g, h).unwrap(), tf & tg | !tf & th),
            };
            for a in 0..32u32 {
                assert_eq!(b.eval(n, |v| a >> v & 1 == 1), t >> a & 1 == 1);
            }
            assert_eq!(
                *node_of.entry(t).or_insert(n),
                n,
                "two nodes for one function"
            );
            pool.push((n, t));
            if pool.len() > 400 {
                pool.swap_remove(VARS + (r >> 50) as usize % (pool.len() - VARS));
            }
        }
        let mut distinct: Vec<Node> = node_of.values().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), node_of.len(), "one node for two functions");
        assert!(node_of.len() > 1000, "too few functions to grow the tables");
        assert!(b.len() > 16 * INITIAL_SLOTS);
    }

    #[test]
    fn budgets_fail_cleanly_and_say_why() {
        let mut b = Bdd::new(4);
        let x = b.var(0).unwrap();
        let y = b.var(1).unwrap();
        assert_eq!(b.and(x, y), Err(OutOfNodes));
        assert_eq!(b.exhausted(), Some(Limit::Nodes(4)));
        // Existing nodes are still found.
        assert_eq!(b.var(0), Ok(x));
    }

    #[test]
    fn the_step_budget_counts_work_the_cache_does_not_answer() {
        let mut b = Bdd::with_limits(Limits {
            max_nodes: 1 << 20,
            max_bytes: None,
            max_steps: Some(40),
            deadline: None,
        });
        let vars: Vec<Node> = (0..16).map(|v| b.var(v).unwrap()).collect();
        assert_eq!(b.steps(), 0, "making variables is no ite step");
        let x01 = b.and(vars[0], vars[1]).unwrap();
        let taken = b.steps();
        assert!(taken >= 1);
        // The same operation again is answered by the cache: no step.
        assert_eq!(b.and(vars[0], vars[1]), Ok(x01));
        assert_eq!(b.steps(), taken);
        // The parity of 16 variables needs about 2i steps for the i-th `xor`, ~250 in all,
        // and only ~30 nodes: the step budget, not the node budget, stops it.
        let mut parity = FALSE;
        let stopped = vars.iter().try_for_each(|&v| {
            parity = b.xor(parity, v)?;
            Ok::<_, OutOfNodes>(())
        });
        assert_eq!(stopped, Err(OutOfNodes));
        assert_eq!(b.exhausted(), Some(Limit::Steps(40)));
        assert!(b.len() < 100);
        // Existing nodes are still found; new work fails at once.
        assert_eq!(b.var(15), Ok(vars[15]));
        assert_eq!(b.and(vars[14], vars[15]), Err(OutOfNodes));
    }

    /// A meter shows the counts another thread may read: refreshed as the work grows by
    /// [`CHECK_EVERY`], exact when asked between phases and when the manager is dropped; its
    /// listener hears each new phase once.
    #[test]
    fn a_meter_follows_the_counts_and_tells_each_new_phase_once() {
        use std::sync::Mutex;
        let heard = Arc::new(Mutex::new(Vec::new()));
        let meter = {
            let heard = Arc::clone(&heard);
            Meter::with_listener(Box::new(move |p| heard.lock().unwrap().push(p)))
        };
        let mut b = Bdd::new(1 << 20);
        b.set_meter(meter.clone());
        assert_eq!((meter.nodes(), meter.steps()), (2, 0));
        meter.set_phase(1);
        // The parity of 20 variables built as a chain of `xor`s: a few hundred nodes and
        // steps, fewer than CHECK_EVERY, so nothing is published while it is built.
        let mut parity = FALSE;
        for v in 0..20 {
            let x = b.var(v).unwrap();
            parity = b.xor(parity, x).unwrap();
        }
        assert!(b.len() > 2 && b.steps() > 0);
        assert_eq!((meter.nodes(), meter.steps()), (2, 0));
        b.publish();
        assert_eq!(meter.nodes(), b.len() as u64);
        assert_eq!(meter.steps(), b.steps());
        meter.set_phase(1);
        meter.set_phase(2);
        // Enough work to pass CHECK_EVERY nodes: the meter follows without being asked.
        // (Conjunctions of pairs of 40 variables, each pair a new function.)
        let vars: Vec<Node> = (20..60).map(|v| b.var(v).unwrap()).collect();
        let mut all = TRUE;
        for (i, &x) in vars.iter().enumerate() {
            for &y in &vars[i + 1..] {
                let xy = b.or(x, y).unwrap();
                all = b.and(all, xy).unwrap();
                let z = b.xor(parity, xy).unwrap();
                parity = b.xor(z, all).unwrap();
            }
        }
        let grown = b.len() as u64;
        assert!(grown > CHECK_EVERY as u64 * 2, "{grown}");
        let seen = meter.nodes();
        assert!(
            seen >= CHECK_EVERY as u64 && seen <= grown,
            "{seen} of {grown}"
        );
        let steps = b.steps();
        drop(b);
        assert_eq!((meter.nodes(), meter.steps()), (grown, steps));
        assert_eq!(meter.phase(), 2);
        assert_eq!(*heard.lock().unwrap(), vec![1, 2]);
    }
}
