//! Sets of argument values tested with `jset` masks instead of one `jeq` each.
//!
//! A set of 32-bit values is a *cube* when it is every value whose bits outside a mask `free`
//! equal a fixed `base` (`base & free == 0`): `{base | s : s ⊆ free}`, `2^popcount(free)`
//! values. Membership needs no equality test per value: the bits that must be clear are one
//! `jset`, and each bit that must be set is one more.
//!
//! Worked example (gVisor's, and Firecracker's): `futex` is allowed for the operations
//! `FUTEX_WAIT` (0), `FUTEX_WAKE` (1), `FUTEX_WAIT_PRIVATE` (0x80), `FUTEX_WAKE_PRIVATE` (0x81)
//! and `FUTEX_WAIT_BITSET_PRIVATE` (0x89). Lowered rule by rule that is five `jeq` on the
//! low word of `args[1]`. The first four are the cube `{s : s ⊆ 0x81}` (base 0, free 0x81),
//! so
//!
//! ```text
//! jeq #0, allow, next          jset #0xffffff7e, next, allow   ; a bit outside 0x81: not in it
//! jeq #1, allow, next    ==>   jeq #0x89, allow, trap
//! jeq #0x80, allow, next
//! jeq #0x81, allow, next
//! jeq #0x89, allow, trap
//! ```
//!
//! and the longest path through the check drops from 5 tests to 2. Docker's `personality`
//! values {0, 8, 0x20000, 0x20008, 0xffffffff} hold the cube `{s : s ⊆ 0x20008}` the same way.
//!
//! The rewrite is exact by construction: a cube is only used when *every* one of its values
//! is in the set with the same target, so no value changes its decision. [`find_cubes`] picks
//! cubes greedily, largest gain first, and only where they take fewer tests than the `jeq`s
//! they replace.

use super::dag::{Dag, NodeId};
use crate::bpf::insn::*;
use std::collections::HashSet;

/// `{base | s : s ⊆ free}`, with `base & free == 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cube {
    pub base: u32,
    pub free: u32,
}

/// Largest set [`find_cubes`] looks at (its work grows with the set times the cube sizes).
pub const MAX_SET: usize = 256;

impl Cube {
    /// How many values the cube holds.
    pub fn len(&self) -> u64 {
        1u64 << self.free.count_ones()
    }

    /// Never empty (a cube holds at least its base); here for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn contains(&self, x: u32) -> bool {
        x & !self.free == self.base
    }

    /// Bits that must be clear.
    fn clear_mask(&self) -> u32 {
        !(self.base | self.free)
    }

    /// Tests the membership check takes: one `jset` for the bits that must be clear (if
    /// any), one per bit that must be set.
    pub fn tests(&self) -> usize {
        usize::from(self.clear_mask() != 0) + self.base.count_ones() as usize
    }

    /// Every value of the cube, in increasing order.
    pub fn values(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len() as usize);
        // Enumerate the submasks of `free` upwards: s ← (s − free) & free.
        let mut s: u32 = 0;
        loop {
            out.push(self.base | s);
            s = s.wrapping_sub(self.free) & self.free;
            if s == 0 {
                break;
            }
        }
        out.sort_unstable();
        out
    }

    /// The check on the word in A: to `inside` for members, else to `outside`. The clear-bits
    /// test comes first (it turns away the most values), then one `jset` per set bit.
    pub fn emit(&self, dag: &mut Dag, inside: NodeId, outside: NodeId) -> NodeId {
        let jset = |k: u32| Insn::jump(BPF_JMP | BPF_JSET | BPF_K, k, 0, 0);
        let mut node = inside;
        let mut bits: Vec<u32> = (0..32)
            .map(|i| 1u32 << i)
            .filter(|b| self.base & b != 0)
            .collect();
        bits.reverse();
        for b in bits {
            node = dag.test(jset(b), node, outside);
        }
        if self.clear_mask() != 0 {
            node = dag.test(jset(self.clear_mask()), outside, node);
        }
        node
    }
}

/// Disjoint cubes inside `values` (distinct values that share one target), each taking
/// fewer tests than it has values, chosen greedily by the tests they save. The values no cube
/// covers keep their `jeq`s.
pub fn find_cubes(values: &[u32]) -> Vec<Cube> {
    if values.len() < 2 || values.len() > MAX_SET {
        return Vec::new();
    }
    let mut left: HashSet<u32> = values.iter().copied().collect();
    let mut cubes = Vec::new();
    loop {
        let mut best: Option<(i64, Cube)> = None;
        let mut bases: Vec<u32> = left.iter().copied().collect();
        bases.sort_unstable();
        for &base in &bases {
            let cube = grow(base, &left);
            let gain = cube.len() as i64 - cube.tests() as i64;
            if gain > 0 && best.is_none_or(|(g, _)| gain > g) {
                best = Some((gain, cube));
            }
        }
        let Some((_, cube)) = best else {
            break;
        };
        for v in cube.values() {
            left.remove(&v);
        }
        cubes.push(cube);
    }
    cubes
}

/// The cube with minimum `base` grown one free bit at a time (lowest bit first) while all its
/// values stay in `set`.
fn grow(base: u32, set: &HashSet<u32>) -> Cube {
    let mut cube = Cube { base, free: 0 };
    for i in 0..32 {
        let b = 1u32 << i;
        if base & b != 0 || !set.contains(&(base | b)) {
            continue;
        }
        let wider = Cube {
            base,
            free: cube.free | b,
        };
        // The new half is the old cube with `b` set.
        if cube.values().iter().all(|&v| set.contains(&(v | b))) {
            cube = wider;
        }
    }
    cube
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{interp, Program, RetVal, SeccompData};
    use crate::optimize::layout::layout;
    use proptest::prelude::*;

    #[test]
    fn futex_operations_are_one_cube_and_one_value() {
        let cubes = find_cubes(&[0, 1, 0x80, 0x89, 0x81]);
        assert_eq!(
            cubes,
            [Cube {
                base: 0,
                free: 0x81
            }]
        );
        assert_eq!(cubes[0].tests(), 1);
        // Docker's personality values.
        let cubes = find_cubes(&[0xffff_ffff, 0x20008, 0x20000, 8, 0]);
        assert_eq!(
            cubes,
            [Cube {
                base: 0,
                free: 0x20008
            }]
        );
    }

    #[test]
    fn cubes_that_save_nothing_are_not_used() {
        // {0x80, 0x81}: a clear-mask test plus a set-bit test, as many as two `jeq`s.
        assert!(find_cubes(&[0x80, 0x81]).is_empty());
        assert!(find_cubes(&[5]).is_empty());
        assert!(find_cubes(&[3, 5]).is_empty());
        // {0x80..=0x83}: 2 tests for 4 values.
        assert_eq!(
            find_cubes(&[0x80, 0x81, 0x82, 0x83]),
            [Cube {
                base: 0x80,
                free: 3
            }]
        );
        // Every word with bit 31 set: no bit must be clear, so the check is the one `jset` on
        // bit 31.
        let c = Cube {
            base: 0x8000_0000,
            free: 0x7fff_ffff,
        };
        assert_eq!(c.tests(), 1);
    }

    #[test]
    fn submask_enumeration_is_complete() {
        let c = Cube {
            base: 0x100,
            free: 0b1010,
        };
        assert_eq!(c.values(), [0x100, 0x102, 0x108, 0x10a]);
        assert_eq!(c.len(), 4);
    }

    /// Runs `cube.emit` as a program on the low word of args[1]: ALLOW inside, ERRNO outside.
    fn emitted(cube: Cube) -> Program {
        let mut dag = Dag::new();
        let allow = dag.ret(RetVal::ALLOW.0);
        let deny = dag.ret(RetVal::errno(1).0);
        let check = cube.emit(&mut dag, allow, deny);
        let root = dag.op(Insn::ld_abs(24), check);
        layout(&dag, root).expect("lays out")
    }

    proptest! {
        /// Found cubes lie inside the set, are disjoint and save tests; the emitted check
        /// accepts exactly the cube (probed at every value, its neighbours, and random words).
        #[test]
        fn cubes_are_exact(
            values in proptest::collection::hash_set(prop_oneof![0u32..16, 0x80u32..0x90, any::<u32>()], 1..40),
            probes in proptest::collection::vec(any::<u32>(), 16),
        ) {
            let values: Vec<u32> = values.into_iter().collect();
            let cubes = find_cubes(&values);
            let mut seen = HashSet::new();
            for c in &cubes {
                prop_assert_eq!(c.base & c.free, 0);
                prop_assert!(c.tests() < c.len() as usize);
                for v in c.values() {
                    prop_assert!(values.contains(&v));
                    prop_assert!(seen.insert(v), "cubes overlap at {}", v);
                }
                let prog = emitted(*c);
                for x in values.iter().flat_map(|&v| [v, v ^ 1, v.wrapping_add(1)]).chain(probes.iter().copied()).chain(c.values()) {
                    let d = SeccompData::new(0xc000_003e, 202, [0, u64::from(x), 0, 0, 0, 0]);
                    let allowed = interp::eval(&prog, &d).unwrap() == RetVal::ALLOW;
                    prop_assert_eq!(allowed, c.contains(x), "{:?} at {:#x}", c, x);
                    prop_assert_eq!(c.contains(x), c.values().contains(&x));
                }
            }
        }
    }
}
