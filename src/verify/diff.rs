//! `diff`: how two filters differ, per architecture and syscall, with readable argument
//! conditions and a confirmed example input for every line.
//!
//! The difference of the two programs' return classes is cut along the variable order: first
//! the arch word (each token a filter compares the arch with is its own group, x86_64 and x32
//! split by `nr` (x32's are 0x40000000..=0x7fffffff, [`crate::arch::is_x32_nr`]); every other token is one more group), then `nr` (walked bit by bit
//! into maximal blocks of numbers with the same remaining function, then split at the numbers
//! the arch's syscall table names), and what remains is a condition on the arguments and IP,
//! rendered by [`super::render`].

use super::domain::{arch_condition, show_u32, ArchSel};
use super::render::{self, Naming};
use super::{ArchCase, Counterexample, Pair, Side, UnknownReason, VerifyError, VerifyOptions};
use crate::arch::{Arch, Endian, SyscallTable};
use crate::bpf::analysis::arch_tokens_checked;
use crate::bpf::symbolic::bdd::{Bdd, Node, OutOfNodes, FALSE};
use crate::bpf::symbolic::{bitvec, first_var_at, words_of, Bits, WORD_ARCH, WORD_NR};
use crate::bpf::{Program, RetVal, SeccompData};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Instant;

/// Most values of one `RET A` listed one by one; beyond, the value is shown as computed.
const MAX_LISTED_VALUES: usize = 64;
/// Most blocks of numbers (or arch values) one group is cut into before the cut is given up
/// and the word is shown inside the condition instead.
const MAX_BLOCKS: usize = 50_000;
/// Most block × kind cells kept while cutting (bounds memory when there are many kinds).
const MAX_BLOCK_CELLS: usize = 1 << 22;
/// Most classes of other arch tokens listed separately.
const MAX_ARCH_CLASSES: usize = 32;
/// Most entries in one diff; a diff past it is cut and says so.
pub const MAX_ENTRIES: usize = 1000;

/// A run of numbers with one set of changes is listed name by name (named numbers, and the
/// unnamed runs between them, as entries of their own) up to this many entries; a longer run
/// is one entry for its whole range. A whole ABI that changes one way (gVisor traps x32's
/// numbers where libseccomp kills them) is then one line, not one per gap in the table.
pub const MAX_ENTRIES_PER_RUN: usize = 8;

/// What is left of the diff's output budget.
struct Room {
    left: usize,
    deadline: Option<Instant>,
    /// Why the diff was cut, once it was.
    cut: Option<String>,
}

impl Room {
    /// Takes room for one more entry; false (and the reason noted) when there is none.
    fn take(&mut self) -> bool {
        if self.cut.is_some() {
            return false;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.cut = Some("the time budget ran out".into());
            return false;
        }
        if self.left == 0 {
            self.cut = Some(format!("more than {MAX_ENTRIES} entries"));
            return false;
        }
        self.left -= 1;
        true
    }
}

/// One side of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ret {
    /// This return value.
    Value(RetVal),
    /// A `RET A` of a value computed from the input that takes too many values to list.
    Computed,
}

impl fmt::Display for Ret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ret::Value(v) => v.fmt(f),
            Ret::Computed => f.write_str("RET A (a value computed from the input)"),
        }
    }
}

/// One way the result changes for some inputs of a [`DiffEntry`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// What the first filter returns.
    pub a: Ret,
    /// What the second filter returns.
    pub b: Ret,
    /// Whether it changes for every value of the remaining words (then `when` is `always`).
    pub always: bool,
    /// The condition on the remaining words (arguments, IP; and `nr`/`arch` when
    /// [`DiffEntry::nr_in_condition`]).
    pub when: String,
    /// Whether `when` states the condition exactly (false: it only describes it).
    pub exact: bool,
    /// An input of this change, run through the interpreter on both filters.
    pub example: SeccompData,
    pub example_a: RetVal,
    pub example_b: RetVal,
}

/// A run of consecutive syscall numbers of one group with the same changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffEntry {
    pub first: u32,
    pub last: u32,
    /// The names of the numbers `first..=last`, all of which the arch's table names unless
    /// `unnamed_numbers`; empty for a run of numbers it does not name.
    pub names: Vec<&'static str>,
    /// The run holds numbers the arch's table does not name: all of them (`names` is empty),
    /// or more than eight entries' worth of named and unnamed numbers with the same changes
    /// (`MAX_ENTRIES_PER_RUN`), kept as one entry (`names` lists the named ones).
    pub unnamed_numbers: bool,
    /// The numbers were too fragmented to list (e.g. a bit test on `nr`): the entry covers
    /// the whole group and the conditions include `nr` (and `arch` for other arch tokens).
    pub nr_in_condition: bool,
    pub changes: Vec<Change>,
}

/// The architectures a group of entries is about.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchGroup {
    /// A known ABI (x86_64 and x32 split by `nr`: [`crate::arch::is_x32_nr`]).
    Arch(Arch),
    /// A token one of the filters compares the arch with that secopt does not know.
    Token(u32),
    /// Arch tokens neither filter compares with: all of them (`None`), or those `arches`
    /// describes.
    Other { arches: Option<String> },
    /// Every arch token: neither filter compares the arch with anything, so each decides a
    /// call on any arch as on any other (a filter written for one machine, without the arch
    /// check). "Other arch tokens" would suggest the host's arch is not among them.
    AnyToken,
}

impl fmt::Display for ArchGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchGroup::Arch(a) => f.write_str(a.name()),
            ArchGroup::Token(t) => write!(f, "arch {t:#010x}"),
            ArchGroup::Other { arches: None } => f.write_str("other arch tokens"),
            ArchGroup::Other {
                arches: Some(arches),
            } => write!(f, "other arch tokens ({arches})"),
            ArchGroup::AnyToken => f.write_str("any arch (neither filter checks the arch)"),
        }
    }
}

/// The differences within one architecture group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ArchDiff {
    pub group: ArchGroup,
    pub entries: Vec<DiffEntry>,
}

/// Every difference between two filters.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diff {
    pub arches: Vec<ArchDiff>,
    /// The smallest differing input (as [`super::equivalent`] reports it).
    pub counterexample: Counterexample,
    /// Why the list stops early (more than [`MAX_ENTRIES`] entries, or the time budget ran
    /// out); `None` when it lists every difference.
    pub truncated: Option<String>,
}

/// The answer of [`diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffOutcome {
    Equal,
    Different(Diff),
    Unknown { reason: UnknownReason },
}

/// How the two filters differ over `opts.domain`, grouped per arch and syscall.
///
/// Identical programs are equal without exploring, as in [`super::equivalent`].
pub fn diff(a: &Program, b: &Program, opts: &VerifyOptions) -> Result<DiffOutcome, VerifyError> {
    if super::identical(a, b, opts)? {
        return Ok(DiffOutcome::Equal);
    }
    let mut pair = match Pair::explore(a, b, opts, &[ArchCase::Any])? {
        Ok(p) => p,
        Err(reason) => return Ok(DiffOutcome::Unknown { reason }),
    };
    let mut tokens: BTreeSet<u32> = arch_tokens_checked(a).into_iter().collect();
    tokens.extend(arch_tokens_checked(b));
    for sel in &opts.domain.arches {
        tokens.insert(match sel {
            ArchSel::Arch(a) => a.token(),
            ArchSel::Token(t) => *t,
        });
    }
    match build(&mut pair, &tokens) {
        Ok(None) => Ok(DiffOutcome::Equal),
        Ok(Some(d)) => Ok(DiffOutcome::Different(d)),
        Err(Fail::Budget) => Ok(DiffOutcome::Unknown {
            reason: pair.reason(None),
        }),
        Err(Fail::Error(e)) => Err(e),
    }
}

enum Fail {
    Budget,
    Error(VerifyError),
}

impl From<OutOfNodes> for Fail {
    fn from(_: OutOfNodes) -> Self {
        Fail::Budget
    }
}

impl From<VerifyError> for Fail {
    fn from(e: VerifyError) -> Self {
        Fail::Error(e)
    }
}

/// A pair of return values and the inputs on which the first filter returns one and the
/// second the other.
struct Kind {
    a: Ret,
    b: Ret,
    region: Node,
}

fn build(pair: &mut Pair, tokens: &BTreeSet<u32>) -> Result<Option<Diff>, Fail> {
    let Some((_, words)) = pair.first_difference()? else {
        return Ok(None);
    };
    let data = SeccompData::from_words(&words);
    let counterexample = Counterexample {
        data,
        a: pair.confirm(0, Side::A, &data)?,
        b: pair.confirm(0, Side::B, &data)?,
    };
    let kinds = kinds(pair)?;
    let mut room = Room {
        left: MAX_ENTRIES,
        deadline: pair.deadline,
        cut: None,
    };
    let max_blocks = (MAX_BLOCK_CELLS / kinds.len().max(1)).clamp(1, MAX_BLOCKS);

    // Groups: every compared token.
    let mut groups: Vec<(ArchGroup, u32)> = Vec::new();
    for &t in tokens {
        match Arch::from_token(t) {
            [] => groups.push((ArchGroup::Token(t), t)),
            // x86_64's token is two ABIs, told apart by nr (bits 30 and 31).
            arches => groups.extend(arches.iter().map(|&a| (ArchGroup::Arch(a), t))),
        }
    }
    groups.sort_by_key(|(g, _)| match g {
        ArchGroup::Arch(a) => (0, *a as u32),
        ArchGroup::Token(t) => (1, *t),
        ArchGroup::Other { .. } | ArchGroup::AnyToken => (2, 0),
    });

    let mut arches = Vec::new();
    for (group, token) in groups {
        if room.cut.is_some() {
            break;
        }
        let bdd = &mut pair.m.bdd;
        let sel = match group {
            ArchGroup::Arch(a) => ArchSel::Arch(a),
            _ => ArchSel::Token(token),
        };
        let cond = arch_condition(bdd, sel)?;
        let mut roots = Vec::with_capacity(kinds.len());
        for k in &kinds {
            let r = bdd.and(k.region, cond)?;
            // Fixing the arch word: a walk down the top 32 levels.
            roots.push(bdd.restrict(r, |v| arch_bit(v, token))?);
        }
        let (table, naming) = match group {
            ArchGroup::Arch(a) => (Some(a.syscalls()), Naming::Endian(a.endian())),
            _ => (None, Naming::Endian(Endian::of_arch_token(token))),
        };
        let entries = entries(
            pair,
            &kinds,
            &roots,
            table,
            naming,
            Some(token),
            &mut room,
            max_blocks,
        )?;
        if !entries.is_empty() {
            arches.push(ArchDiff { group, entries });
        }
    }

    // Every other token.
    let bdd = &mut pair.m.bdd;
    let listed: Vec<u32> = tokens.iter().copied().collect();
    let known = bitvec::value_set(bdd, WORD_ARCH, &listed)?;
    let mut roots = Vec::with_capacity(kinds.len());
    for k in &kinds {
        roots.push(bdd.and_not(k.region, known)?);
    }
    if room.cut.is_none() && roots.iter().any(|&r| r != FALSE) {
        let classes = blocks(bdd, &roots, 0, max_blocks).and_then(|arch_blocks| {
            // Arch values with the same remaining function form one group.
            // (the roots' cofactors, the arch ranges that have them)
            type Class = (Vec<Node>, Vec<(u32, u32)>);
            let mut classes: Vec<Class> = Vec::new();
            for (lo, hi, tuple) in arch_blocks {
                match classes.iter().position(|(t, _)| *t == tuple) {
                    Some(i) => classes[i].1.push((lo, hi)),
                    None if classes.len() == MAX_ARCH_CLASSES => return None,
                    None => classes.push((tuple, vec![(lo, hi)])),
                }
            }
            Some(classes)
        });
        match classes {
            Some(classes) => {
                let whole = classes.len() == 1;
                for (tuple, ranges) in classes {
                    let arches_text = describe_arch_ranges(&ranges, &listed, whole);
                    // No token compared and one function for all: any arch, shown with the
                    // host's token in the examples (the one a reader checks first).
                    let any = listed.is_empty() && arches_text.is_none();
                    let example_token = match Arch::host() {
                        Some(host) if any => host.token(),
                        _ => ranges[0].0,
                    };
                    let entries = entries(
                        pair,
                        &kinds,
                        &tuple,
                        None,
                        Naming::Offsets,
                        Some(example_token),
                        &mut room,
                        max_blocks,
                    )?;
                    if !entries.is_empty() {
                        arches.push(ArchDiff {
                            group: if any {
                                ArchGroup::AnyToken
                            } else {
                                ArchGroup::Other {
                                    arches: arches_text,
                                }
                            },
                            entries,
                        });
                    }
                }
            }
            None => {
                if room.take() {
                    let entry = whole_entry(pair, &kinds, &roots, None)?;
                    arches.push(ArchDiff {
                        group: ArchGroup::Other {
                            arches: Some("as the conditions say".into()),
                        },
                        entries: vec![entry],
                    });
                }
            }
        }
    }
    Ok(Some(Diff {
        arches,
        counterexample,
        truncated: room.cut,
    }))
}

/// The value of arch-word variable `v` when the arch word is `token` (other variables free).
fn arch_bit(v: u16, token: u32) -> Option<bool> {
    let (word, bit) = crate::bpf::symbolic::word_bit_of(v);
    (word == WORD_ARCH).then_some(token >> bit & 1 == 1)
}

/// `None` when the ranges are every arch value but the `listed` ones.
fn describe_arch_ranges(ranges: &[(u32, u32)], listed: &[u32], whole: bool) -> Option<String> {
    let count: u64 = ranges.iter().map(|&(a, b)| (b - a) as u64 + 1).sum();
    if whole && count == (1u64 << 32) - listed.len() as u64 {
        return None;
    }
    let shown: Vec<String> = ranges
        .iter()
        .take(6)
        .map(|&(a, b)| {
            if a == b {
                format!("{a:#010x}")
            } else {
                format!("{a:#010x}..={b:#010x}")
            }
        })
        .collect();
    let more = if ranges.len() > 6 {
        format!(" and {} more ranges", ranges.len() - 6)
    } else {
        String::new()
    };
    Some(format!("arch in {{{}}}{more}", shown.join(", ")))
}

/// The pairs of different return values and where they occur. `RET A` classes with few
/// values are split into one class per value.
fn kinds(pair: &mut Pair) -> Result<Vec<Kind>, OutOfNodes> {
    let mut expanded: [Vec<(Ret, Node, Option<Bits>)>; 2] = [Vec::new(), Vec::new()];
    for (side, out) in expanded.iter_mut().enumerate() {
        for &(val, cond) in &pair.cases[0].classes[side] {
            match pair.m.values(val, cond, MAX_LISTED_VALUES)? {
                Some(values) => out.extend(
                    values
                        .into_iter()
                        .map(|(v, c)| (Ret::Value(RetVal(v)), c, None)),
                ),
                None => out.push((Ret::Computed, cond, pair.m.bits_of(val))),
            }
        }
    }
    let bdd = &mut pair.m.bdd;
    // Every class cut down to the inputs where the filters return different values first:
    // most pairs of classes then have nothing left to intersect, where a product of all of
    // them took seconds for filters that return thousands of values (an errno per rule).
    // Where A returns `v` and B does not, they differ; with a computed value on either side
    // that is not known without comparing the bits, and the classes are kept whole.
    let computed = expanded
        .iter()
        .flatten()
        .any(|&(r, _, _)| r == Ret::Computed);
    if !computed {
        let mut of_b: BTreeMap<Ret, Node> = BTreeMap::new();
        for &(rb, cb, _) in &expanded[1] {
            let entry = of_b.entry(rb).or_insert(FALSE);
            *entry = bdd.or(*entry, cb)?;
        }
        let mut differ = FALSE;
        for &(ra, ca, _) in &expanded[0] {
            let elsewhere = bdd.and_not(ca, of_b.get(&ra).copied().unwrap_or(FALSE))?;
            differ = bdd.or(differ, elsewhere)?;
        }
        for side in &mut expanded {
            for class in side.iter_mut() {
                class.1 = bdd.and(class.1, differ)?;
            }
            side.retain(|&(_, c, _)| c != FALSE);
        }
        // Every value known: only where classes meet matters, found without intersecting
        // classes that are apart (another syscall's).
        let [a, b] = &expanded;
        let mut by_pair: BTreeMap<(Ret, Ret), Node> = BTreeMap::new();
        let side = |s: &[(Ret, Node, Option<Bits>)]| s.iter().map(|c| c.1).enumerate().collect();
        let mut budget = 64 * (a.len() + b.len()) + 1024;
        for ((i, j), region) in meeting(bdd, side(a), side(b), &mut budget)? {
            if a[i].0 == b[j].0 {
                continue; // cut away above: the filters agree there
            }
            let entry = by_pair.entry((a[i].0, b[j].0)).or_insert(FALSE);
            *entry = bdd.or(*entry, region)?;
        }
        return Ok(by_pair
            .into_iter()
            .map(|((a, b), region)| Kind { a, b, region })
            .collect());
    }
    let mut by_pair: BTreeMap<(Ret, Ret), Node> = BTreeMap::new();
    for &(ra, ca, ba) in &expanded[0] {
        for &(rb, cb, bb) in &expanded[1] {
            if ra == rb && ra != Ret::Computed {
                continue;
            }
            let mut region = bdd.and(ca, cb)?;
            if region == FALSE {
                continue;
            }
            if ba.is_some() || bb.is_some() {
                let bits = |r: Ret, b: Option<Bits>| match (r, b) {
                    (_, Some(b)) => b,
                    (Ret::Value(v), None) => bitvec::constant(v.0),
                    (Ret::Computed, None) => bitvec::constant(0),
                };
                let same = bitvec::equal(bdd, &bits(ra, ba), &bits(rb, bb))?;
                region = bdd.and_not(region, same)?;
                if region == FALSE {
                    continue;
                }
            }
            let entry = by_pair.entry((ra, rb)).or_insert(FALSE);
            *entry = bdd.or(*entry, region)?;
        }
    }
    Ok(by_pair
        .into_iter()
        .map(|((a, b), region)| Kind { a, b, region })
        .collect())
}

/// Where classes `a[i]` and `b[j]` (each side's classes disjoint) both hold, for every pair
/// that meets: both lists are split together on their first variable, so that classes apart
/// (different syscalls, most often) are never intersected, where intersecting every pair took
/// seconds for thousands of return values. Past `budget` splits, the pairs left are
/// intersected directly.
///
/// Example: A's classes `nr == 0`, `nr == 1` and B's `nr == 1`, `nr == 2`, split on the bits
/// of `nr` in the diagrams' order: each branch ends with at most one class of each side, and
/// the one pair left to intersect is A's `nr == 1` with B's. (Lists this short are
/// intersected directly; the split pays for hundreds.)
fn meeting(
    bdd: &mut Bdd,
    a: Vec<(usize, Node)>,
    b: Vec<(usize, Node)>,
    budget: &mut usize,
) -> Result<BTreeMap<(usize, usize), Node>, OutOfNodes> {
    use crate::bpf::symbolic::bdd::LEAF;
    let mut out = BTreeMap::new();
    if a.is_empty() || b.is_empty() {
        return Ok(out);
    }
    let top = a
        .iter()
        .chain(&b)
        .map(|&(_, n)| bdd.top(n))
        .min()
        .unwrap_or(LEAF);
    if a.len() * b.len() <= 16 || *budget == 0 || top == LEAF {
        for &(i, ca) in &a {
            for &(j, cb) in &b {
                let region = bdd.and(ca, cb)?;
                if region != FALSE {
                    out.insert((i, j), region);
                }
            }
        }
        return Ok(out);
    }
    *budget -= 1;
    let split = |bdd: &Bdd, side: &[(usize, Node)], high: bool| -> Vec<(usize, Node)> {
        side.iter()
            .map(|&(i, n)| match bdd.node(n) {
                (v, lo, hi) if v == top => (i, if high { hi } else { lo }),
                _ => (i, n),
            })
            .filter(|&(_, n)| n != FALSE)
            .collect()
    };
    let (a_lo, a_hi, b_lo, b_hi) = (
        split(bdd, &a, false),
        split(bdd, &a, true),
        split(bdd, &b, false),
        split(bdd, &b, true),
    );
    let low = meeting(bdd, a_lo, b_lo, budget)?;
    let high = meeting(bdd, a_hi, b_hi, budget)?;
    let keys: BTreeSet<(usize, usize)> = low.keys().chain(high.keys()).copied().collect();
    for key in keys {
        let (lo, hi) = (
            low.get(&key).copied().unwrap_or(FALSE),
            high.get(&key).copied().unwrap_or(FALSE),
        );
        out.insert(key, bdd.mk(top, lo, hi)?);
    }
    Ok(out)
}

/// Cuts the word at variable position `position` (0 arch, 1 nr) into maximal blocks of values
/// on which every root has the same cofactor, ascending; blocks where all are FALSE are left
/// out. `None` when there are more than `max_blocks`.
fn blocks(
    bdd: &Bdd,
    roots: &[Node],
    position: usize,
    max_blocks: usize,
) -> Option<Vec<(u32, u32, Vec<Node>)>> {
    /// The walk's fixed parameters and its output.
    struct Walk<'b> {
        bdd: &'b Bdd,
        start: u16,
        max_blocks: usize,
        out: Vec<(u32, u32, Vec<Node>)>,
    }
    impl Walk<'_> {
        fn rec(&mut self, nodes: Vec<Node>, depth: u32, prefix: u64) -> bool {
            if nodes.iter().all(|&n| n == FALSE) {
                return true;
            }
            let end = self.start + 32;
            if nodes.iter().all(|&n| self.bdd.top(n) >= end) {
                let span = 32 - depth;
                let lo = (prefix << span) as u32;
                let hi = ((prefix << span) + ((1u64 << span) - 1)) as u32;
                match self.out.last_mut() {
                    Some(last) if last.1 as u64 + 1 == lo as u64 && last.2 == nodes => last.1 = hi,
                    _ => {
                        if self.out.len() >= self.max_blocks {
                            return false;
                        }
                        self.out.push((lo, hi, nodes));
                    }
                }
                return true;
            }
            let var = self.start + depth as u16;
            for side in [false, true] {
                let children: Vec<Node> = nodes
                    .iter()
                    .map(|&n| {
                        let (v, lo, hi) = self.bdd.node(n);
                        match (v == var, side) {
                            (true, false) => lo,
                            (true, true) => hi,
                            (false, _) => n,
                        }
                    })
                    .collect();
                if !self.rec(children, depth + 1, prefix << 1 | side as u64) {
                    return false;
                }
            }
            true
        }
    }
    let mut walk = Walk {
        bdd,
        start: first_var_at(position),
        max_blocks,
        out: Vec::new(),
    };
    walk.rec(roots.to_vec(), 0, 0).then_some(walk.out)
}

/// The entries of one group: `roots` (one per kind) are functions of `nr` and what follows.
#[allow(clippy::too_many_arguments)]
fn entries(
    pair: &mut Pair,
    kinds: &[Kind],
    roots: &[Node],
    table: Option<&SyscallTable>,
    naming: Naming,
    arch_value: Option<u32>,
    room: &mut Room,
    max_blocks: usize,
) -> Result<Vec<DiffEntry>, Fail> {
    if roots.iter().all(|&r| r == FALSE) {
        return Ok(Vec::new());
    }
    let Some(blocks) = blocks(&pair.m.bdd, roots, 1, max_blocks) else {
        if !room.take() {
            return Ok(Vec::new());
        }
        return Ok(vec![whole_entry(pair, kinds, roots, arch_value)?]);
    };
    let named: Vec<u32> = table.map_or(Vec::new(), |t| t.iter().map(|(n, _)| n).collect());
    // Adjacent blocks with the same changes are one run.
    let mut runs: Vec<(u32, u32, Vec<Node>)> = Vec::new();
    for (lo, hi, tuple) in blocks {
        match runs.last_mut() {
            Some(r) if r.1 as u64 + 1 == lo as u64 && r.2 == tuple => r.1 = hi,
            _ => runs.push((lo, hi, tuple)),
        }
    }
    // Split each run at the named numbers, unless that makes too many entries: (first, last,
    // a whole run of named and unnamed numbers, changes).
    let mut segments: Vec<(u32, u32, bool, Vec<Node>)> = Vec::new();
    for (lo, hi, tuple) in runs {
        let mut split: Vec<(u32, u32, bool)> = Vec::new();
        let mut push = |first: u32, last: u32, is_named: bool| match split.last_mut() {
            Some(s) if s.2 && is_named && s.1 as u64 + 1 == first as u64 => s.1 = last,
            _ => split.push((first, last, is_named)),
        };
        let mut cur = lo as u64;
        let start = named.partition_point(|&n| n < lo);
        for &n in named[start..].iter().take_while(|&&n| n <= hi) {
            if (n as u64) > cur {
                push(cur as u32, n - 1, false);
            }
            push(n, n, true);
            cur = n as u64 + 1;
        }
        if cur <= hi as u64 {
            push(cur as u32, hi, false);
        }
        if split.len() > MAX_ENTRIES_PER_RUN {
            segments.push((lo, hi, true, tuple));
        } else {
            segments.extend(
                split
                    .into_iter()
                    .map(|(a, b, _)| (a, b, false, tuple.clone())),
            );
        }
    }
    let mut out = Vec::with_capacity(segments.len());
    for (first, last, unnamed_numbers, tuple) in segments {
        if !room.take() {
            break;
        }
        // The named numbers of the segment (none for an unnamed run), from the table's numbers,
        // not the range's: a whole run can span 2^30 numbers.
        let names = match table {
            Some(t) => {
                let from = named.partition_point(|&n| n < first);
                named[from..]
                    .iter()
                    .take_while(|&&n| n <= last)
                    .filter_map(|&n| t.name(n))
                    .collect()
            }
            _ => Vec::new(),
        };
        // A run of unnamed numbers alone holds them too (a whole run was found so above).
        let unnamed_numbers = unnamed_numbers || names.is_empty();
        let mut changes = Vec::new();
        for (kind, &residual) in kinds.iter().zip(&tuple) {
            if residual != FALSE {
                let fixed = [(WORD_NR, Some(first)), (WORD_ARCH, arch_value)];
                changes.push(change(pair, kind, residual, naming, &fixed)?);
            }
        }
        out.push(DiffEntry {
            first,
            last,
            names,
            unnamed_numbers,
            nr_in_condition: false,
            changes,
        });
    }
    Ok(out)
}

/// One entry for a whole group whose numbers (or arch values) are too fragmented to list.
fn whole_entry(
    pair: &mut Pair,
    kinds: &[Kind],
    roots: &[Node],
    arch_value: Option<u32>,
) -> Result<DiffEntry, Fail> {
    let mut changes = Vec::new();
    for (kind, &r) in kinds.iter().zip(roots) {
        if r != FALSE {
            let fixed = [(WORD_ARCH, arch_value)];
            changes.push(change(pair, kind, r, Naming::Offsets, &fixed)?);
        }
    }
    Ok(DiffEntry {
        first: 0,
        last: u32::MAX,
        names: Vec::new(),
        unnamed_numbers: true,
        nr_in_condition: true,
        changes,
    })
}

/// A change with its condition rendered and an example confirmed by the interpreter.
fn change(
    pair: &mut Pair,
    kind: &Kind,
    residual: Node,
    naming: Naming,
    fixed: &[(usize, Option<u32>)],
) -> Result<Change, Fail> {
    let rendered = render::condition(&mut pair.m.bdd, residual, naming)?;
    let assignment = pair.m.bdd.witness(residual).ok_or(OutOfNodes)?;
    let mut words = words_of(&assignment);
    for &(w, v) in fixed {
        if let Some(v) = v {
            words[w] = v;
        }
    }
    let example = SeccompData::from_words(&words);
    let ra = pair.confirm(0, Side::A, &example)?;
    let rb = pair.confirm(0, Side::B, &example)?;
    let agrees = |r: Ret, got: RetVal| match r {
        Ret::Value(v) => v == got,
        Ret::Computed => true,
    };
    if ra == rb || !agrees(kind.a, ra) || !agrees(kind.b, rb) {
        return Err(Fail::Error(VerifyError::Disagreement {
            side: if agrees(kind.a, ra) { Side::B } else { Side::A },
            data: example,
            symbolic: format!("{} -> {}", kind.a, kind.b),
            interpreter: format!("{ra} -> {rb}"),
        }));
    }
    Ok(Change {
        a: kind.a,
        b: kind.b,
        always: rendered.text == "always",
        when: rendered.text,
        exact: rendered.exact,
        example,
        example_a: ra,
        example_b: rb,
    })
}

impl DiffEntry {
    /// What the entry is about: syscall names, or `(nr 400..=450)` for unnamed numbers.
    pub fn subject(&self) -> String {
        if self.nr_in_condition {
            "(the numbers the condition gives)".into()
        } else if (self.first, self.last) == (0, u32::MAX) {
            "(any nr)".into()
        } else if self.unnamed_numbers && !self.names.is_empty() {
            format!(
                "(nr {}..={}, every number: {} named syscall{} among them)",
                show_u32(self.first),
                show_u32(self.last),
                self.names.len(),
                if self.names.len() == 1 { "" } else { "s" }
            )
        } else if !self.names.is_empty() {
            self.names.join(", ")
        } else if self.first == self.last {
            format!("(nr {})", show_u32(self.first))
        } else {
            format!("(nr {}..={})", show_u32(self.first), show_u32(self.last))
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.a, self.b)?;
        if !self.always {
            write!(f, " when {}", self.when)?;
        }
        Ok(())
    }
}

impl fmt::Display for Diff {
    /// One line per entry (`x86_64 socket: ALLOW -> ERRNO(1) when args[0] == 40`), changes of
    /// one entry on indented lines when there are several.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for group in &self.arches {
            for e in &group.entries {
                let head = format!("{} {}:", group.group, e.subject());
                match e.changes.as_slice() {
                    [one] => writeln!(f, "{head} {one}")?,
                    many => {
                        writeln!(f, "{head}")?;
                        for c in many {
                            writeln!(f, "    {c}")?;
                        }
                    }
                }
            }
        }
        if let Some(why) = &self.truncated {
            writeln!(f, "… and more differences not listed ({why})")?;
        }
        Ok(())
    }
}
