//! Sets of 32-bit values as sorted interval lists, and how a conditional jump with a constant
//! splits them.
//!
//! The lifter keeps, for every input word it reasons about, the set of values still possible on
//! the current path. A comparison with a constant (`jeq`/`jgt`/`jge`) splits an interval into at
//! most three intervals, so these sets stay small; `jset` can fragment a set badly (`jset #1`
//! alternates on every value), so splitting by `jset` gives up past a limit and the caller keeps
//! the test as a runtime check instead.

use crate::bpf::insn::{BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JSET};

/// An inclusive range of 32-bit values `lo..=hi` (`lo <= hi`).
pub type Range = (u32, u32);

/// Most intervals one `jset` split may produce before the split is refused.
pub const JSET_SPLIT_LIMIT: usize = 64;

/// A set of `u32` values: sorted, disjoint, non-adjacent inclusive ranges.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct IntervalSet {
    ranges: Vec<Range>,
}

impl IntervalSet {
    /// Every 32-bit value.
    pub fn full() -> Self {
        IntervalSet {
            ranges: vec![(0, u32::MAX)],
        }
    }

    /// No value.
    pub fn empty() -> Self {
        IntervalSet { ranges: Vec::new() }
    }

    /// The values `lo..=hi`.
    pub fn range(lo: u32, hi: u32) -> Self {
        debug_assert!(lo <= hi);
        IntervalSet {
            ranges: vec![(lo, hi)],
        }
    }

    /// Builds a set from ranges in any order, overlapping or adjacent.
    pub fn from_ranges(mut ranges: Vec<Range>) -> Self {
        ranges.sort_unstable();
        let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) || last.1 == u32::MAX => {
                    last.1 = last.1.max(hi);
                }
                _ => out.push((lo, hi)),
            }
        }
        IntervalSet { ranges: out }
    }

    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.ranges == [(0, u32::MAX)]
    }

    pub fn contains(&self, v: u32) -> bool {
        let i = self.ranges.partition_point(|&(_, hi)| hi < v);
        self.ranges.get(i).is_some_and(|&(lo, _)| lo <= v)
    }

    /// Number of values (as u64: the full set has 2^32).
    pub fn count(&self) -> u64 {
        self.ranges
            .iter()
            .map(|&(lo, hi)| u64::from(hi - lo) + 1)
            .sum()
    }

    /// The values in `lo..=hi`.
    pub fn intersect_range(&self, lo: u32, hi: u32) -> Self {
        let ranges = self
            .ranges
            .iter()
            .filter(|&&(a, b)| b >= lo && a <= hi)
            .map(|&(a, b)| (a.max(lo), b.min(hi)))
            .collect();
        IntervalSet { ranges }
    }

    /// The values outside `lo..=hi`.
    pub fn minus_range(&self, lo: u32, hi: u32) -> Self {
        let mut ranges = Vec::with_capacity(self.ranges.len() + 1);
        for &(a, b) in &self.ranges {
            if b < lo || a > hi {
                ranges.push((a, b));
                continue;
            }
            if a < lo {
                ranges.push((a, lo - 1));
            }
            if b > hi {
                ranges.push((hi + 1, b));
            }
        }
        IntervalSet { ranges }
    }

    /// Splits the set by the outcome of `op k` (a `BPF_J*` operation with a constant): the
    /// values for which the jump is taken, and those for which it is not. `None` when the
    /// operation is `jset` and the split would need more than [`JSET_SPLIT_LIMIT`] intervals.
    pub fn split(&self, op: u16, k: u32) -> Option<(IntervalSet, IntervalSet)> {
        Some(match op {
            BPF_JEQ => (self.intersect_range(k, k), self.minus_range(k, k)),
            BPF_JGT => match k.checked_add(1) {
                Some(k1) => (
                    self.intersect_range(k1, u32::MAX),
                    self.intersect_range(0, k),
                ),
                None => (IntervalSet::empty(), self.clone()),
            },
            BPF_JGE => match k.checked_sub(1) {
                Some(k0) => (
                    self.intersect_range(k, u32::MAX),
                    self.intersect_range(0, k0),
                ),
                None => (self.clone(), IntervalSet::empty()),
            },
            BPF_JSET => {
                let (mut taken, mut not_taken) = (Vec::new(), Vec::new());
                for &(lo, hi) in &self.ranges {
                    let mut v = lo;
                    loop {
                        let set = v & k != 0;
                        let next = if set {
                            next_clear(v, k)
                        } else {
                            next_set(v, k)
                        };
                        let end = match next {
                            Some(n) if n <= hi => n - 1,
                            _ => hi,
                        };
                        if set {
                            taken.push((v, end));
                        } else {
                            not_taken.push((v, end));
                        }
                        if taken.len() + not_taken.len() > JSET_SPLIT_LIMIT {
                            return None;
                        }
                        if end == hi {
                            break;
                        }
                        v = end + 1;
                    }
                }
                (
                    IntervalSet::from_ranges(taken),
                    IntervalSet::from_ranges(not_taken),
                )
            }
            _ => return None,
        })
    }

    /// Whether `op k` is taken for every value (`Some(true)`), for none (`Some(false)`), or
    /// depends on the value (`None`). An empty set decides nothing.
    pub fn decide(&self, op: u16, k: u32) -> Option<bool> {
        if self.ranges.is_empty() {
            return None;
        }
        let (lo, hi) = (self.ranges[0].0, self.ranges[self.ranges.len() - 1].1);
        match op {
            BPF_JEQ => {
                if lo == k && hi == k {
                    Some(true)
                } else if !self.contains(k) {
                    Some(false)
                } else {
                    None
                }
            }
            BPF_JGT => decide_threshold(lo, hi, k.checked_add(1)),
            BPF_JGE => decide_threshold(lo, hi, Some(k)),
            BPF_JSET => {
                let mut any_true = false;
                let mut any_false = false;
                for &(a, b) in &self.ranges {
                    any_true |= next_set(a, k).is_some_and(|v| v <= b);
                    any_false |= next_clear(a, k).is_some_and(|v| v <= b);
                    if any_true && any_false {
                        return None;
                    }
                }
                Some(any_true)
            }
            _ => None,
        }
    }
}

/// Whether `v >= t` for all, none or some values of `lo..=hi` (`t == None` means 2^32).
fn decide_threshold(lo: u32, hi: u32, t: Option<u32>) -> Option<bool> {
    match t {
        None => Some(false),
        Some(t) if lo >= t => Some(true),
        Some(t) if hi < t => Some(false),
        Some(_) => None,
    }
}

/// The smallest `u >= v` with `u & k == 0`, if any.
///
/// While `u & k` has a highest set bit `b`, every value sharing `u`'s bits above `b` has bit
/// `b` set too, so the next candidate is the next multiple of `2^b` above `u` (bits below `b`
/// cleared, a carry into bit `b + 1`). The highest conflicting bit only moves up, so this
/// takes at most 32 rounds.
pub fn next_clear(v: u32, k: u32) -> Option<u32> {
    let mut u = v as u64;
    loop {
        if u > u32::MAX as u64 {
            return None;
        }
        let c = (u as u32) & k;
        if c == 0 {
            return Some(u as u32);
        }
        let b = 31 - c.leading_zeros();
        u = ((u >> b) + 1) << b;
    }
}

/// The smallest `u >= v` with `u & k != 0`, if any: for each bit `b` of `k`, the smallest
/// value at least `v` with bit `b` set is `v` itself or `v` with bit `b` set and the bits
/// below it cleared.
pub fn next_set(v: u32, k: u32) -> Option<u32> {
    if v & k != 0 {
        return Some(v);
    }
    (0..32)
        .filter(|b| k & (1 << b) != 0)
        .map(|b| ((v >> b) | 1) << b)
        .filter(|&u| u >= v)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_split(lo: u32, hi: u32, op: u16, k: u32) -> (Vec<u32>, Vec<u32>) {
        let taken = |v: u32| match op {
            BPF_JEQ => v == k,
            BPF_JGT => v > k,
            BPF_JGE => v >= k,
            _ => v & k != 0,
        };
        (lo..=hi).partition(|&v| taken(v))
    }

    fn values(s: &IntervalSet) -> Vec<u32> {
        s.ranges().iter().flat_map(|&(a, b)| a..=b).collect()
    }

    #[test]
    fn splits_match_brute_force() {
        for op in [BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET] {
            for k in [0u32, 1, 5, 6, 12, 31, 32, 33, 40, 63, 64] {
                for (lo, hi) in [(0u32, 63u32), (5, 40), (12, 12), (33, 34)] {
                    let s = IntervalSet::range(lo, hi);
                    let (t, f) = s.split(op, k).expect("small sets split");
                    let (bt, bf) = brute_split(lo, hi, op, k);
                    assert_eq!((values(&t), values(&f)), (bt.clone(), bf.clone()));
                    let expect = match (bt.is_empty(), bf.is_empty()) {
                        (false, true) => Some(true),
                        (true, false) => Some(false),
                        _ => None,
                    };
                    assert_eq!(s.decide(op, k), expect, "op {op:#x} k {k} {lo}..{hi}");
                }
            }
        }
    }

    #[test]
    fn x32_bit_splits_the_full_range_in_four() {
        // nr & 0x40000000: clear on 0..2^30-1 and 2^31..2^31+2^30-1.
        let (t, f) = IntervalSet::full().split(BPF_JSET, 0x4000_0000).unwrap();
        assert_eq!(
            t.ranges(),
            [(0x4000_0000, 0x7fff_ffff), (0xc000_0000, 0xffff_ffff)]
        );
        assert_eq!(f.ranges(), [(0, 0x3fff_ffff), (0x8000_0000, 0xbfff_ffff)]);
        // jset #1 over everything would alternate 2^32 times: refused.
        assert!(IntervalSet::full().split(BPF_JSET, 1).is_none());
        assert_eq!(IntervalSet::range(4, 4).decide(BPF_JSET, 1), Some(false));
    }

    #[test]
    fn edges_of_the_value_space() {
        let full = IntervalSet::full();
        let (t, f) = full.split(BPF_JGT, u32::MAX).unwrap();
        assert!(t.is_empty() && f.is_full());
        let (t, f) = full.split(BPF_JGE, 0).unwrap();
        assert!(t.is_full() && f.is_empty());
        let (t, f) = full.split(BPF_JEQ, u32::MAX).unwrap();
        assert_eq!(t.ranges(), [(u32::MAX, u32::MAX)]);
        assert_eq!(f.ranges(), [(0, u32::MAX - 1)]);
        assert_eq!(full.count(), 1 << 32);
        assert_eq!(
            IntervalSet::from_ranges(vec![(5, 9), (0, 4), (20, 30), (10, 10)]).ranges(),
            [(0, 10), (20, 30)]
        );
        assert_eq!(next_clear(u32::MAX, 1), None);
        assert_eq!(next_set(0, 0), None);
    }
}
