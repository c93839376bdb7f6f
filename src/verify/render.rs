//! Readable conditions from BDDs over the argument and IP words, for `secopt diff`.
//!
//! A condition is shown, in order of preference, as:
//! 1. a disjunction of conjunctions of per-field constraints, found by cutting the diagram at
//!    field boundaries (a field is a 64-bit argument or IP, shown as one value when both halves
//!    are constrained, else as its `.lo`/`.hi` half; on big-endian arches each half is its own
//!    field). Each field constraint is a value set written as `== v`, `!= v`, `<= v`, `>= v`,
//!    `in a..=b`, `in {…}`, `not in {…}`, or with masks `& m == v`, `& m != v`, a bracketed
//!    union of two masks, or one mask within a range (`args[1].lo & 0x3 == 0 and
//!    args[1].lo >= 4`, checked by building its diagram and comparing);
//! 2. a list of cubes (each input bit fixed or free, shown as masks per word);
//! 3. a statement that the condition is too complex, naming the fields it reads.
//!
//! Every form is exact except the last, which says so ([`Rendered::exact`] is false).

use super::domain::show_u64;
use crate::arch::Endian;
use crate::bpf::data::{Field, NUM_WORDS};
use crate::bpf::symbolic::bdd::{Bdd, FxMap, Node, OutOfNodes, Var, FALSE, TRUE};
use crate::bpf::symbolic::{first_var_at, word_bit_of, WORD_ORDER};
use std::collections::BTreeSet;

/// Most disjuncts, and most field classes at one cut, before giving up on form 1.
const MAX_TERMS: usize = 8;
/// Most intervals (or cubes) in one field's value set.
const MAX_PIECES: usize = 6;
/// Most cubes in form 2.
const MAX_CUBES: usize = 8;

/// A condition as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    pub text: String,
    /// False when the text only describes the condition instead of stating it.
    pub exact: bool,
}

/// How fields are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Naming {
    /// Named for a machine of this byte order (`args[0]`, `args[0].lo`, `ip`).
    Endian(Endian),
    /// Named by byte offset (`u32@16`): the arch token, hence the byte order, is not one value.
    Offsets,
}

/// A field: consecutive variable positions (one word, or two words of one 64-bit value with
/// the high half first).
#[derive(Debug, Clone)]
struct FieldSpan {
    /// First variable.
    start: Var,
    /// 32 or 64.
    bits: u32,
    /// Name of the whole field, and of its two halves when it has two.
    name: String,
    halves: Option<(String, String)>,
}

impl FieldSpan {
    fn end(&self) -> Var {
        self.start + self.bits as Var
    }
}

/// The name of word `word` (`nr`, `arch`, `args[0].lo`, `u32@16`).
fn word_name(naming: Naming, word: usize) -> String {
    match (word, naming) {
        (0, _) => "nr".into(),
        (1, _) => "arch".into(),
        (_, Naming::Endian(e)) => Field::at_offset(4 * word as u32, e)
            .map(|f| f.name())
            .unwrap_or_else(|| format!("u32@{}", 4 * word)),
        (_, Naming::Offsets) => format!("u32@{}", 4 * word),
    }
}

/// Every field in variable order: `arch` and `nr` (only met when a condition still depends on
/// them), then the arguments and the IP.
fn fields(naming: Naming) -> Vec<FieldSpan> {
    let word_name = |word: usize| word_name(naming, word);
    let mut out: Vec<FieldSpan> = (0..2)
        .map(|pos| FieldSpan {
            start: first_var_at(pos),
            bits: 32,
            name: word_name(WORD_ORDER[pos]),
            halves: None,
        })
        .collect();
    let mut pos = 2;
    while pos < NUM_WORDS {
        let (first, second) = (WORD_ORDER[pos], WORD_ORDER[pos + 1]);
        if naming == Naming::Endian(Endian::Little) {
            // The high half comes first: the two words are one 64-bit value, MSB first.
            let name = match first {
                3 => "ip".to_string(),
                w => format!("args[{}]", (w - 4) / 2),
            };
            out.push(FieldSpan {
                start: first_var_at(pos),
                bits: 64,
                name,
                halves: Some((word_name(first), word_name(second))),
            });
        } else {
            for (i, w) in [first, second].into_iter().enumerate() {
                out.push(FieldSpan {
                    start: first_var_at(pos + i),
                    bits: 32,
                    name: word_name(w),
                    halves: None,
                });
            }
        }
        pos += 2;
    }
    out
}

/// Renders `r` (usually a function of the words after `nr` in variable order).
pub(crate) fn condition(bdd: &mut Bdd, r: Node, naming: Naming) -> Result<Rendered, OutOfNodes> {
    if r == TRUE {
        return Ok(Rendered {
            text: "always".into(),
            exact: true,
        });
    }
    if r == FALSE {
        return Ok(Rendered {
            text: "never".into(),
            exact: true,
        });
    }
    let spans = fields(naming);
    if let Some(terms) = dnf(bdd, r, &spans, 0)? {
        return Ok(Rendered {
            text: join_terms(&terms),
            exact: true,
        });
    }
    if let Some(text) = cube_list(bdd, r, naming) {
        return Ok(Rendered { text, exact: true });
    }
    let read: BTreeSet<usize> = support(bdd, r)
        .into_iter()
        .map(|v| word_bit_of(v).0)
        .collect();
    let names: Vec<String> = spans
        .iter()
        .filter(|s| (s.start..s.end()).any(|v| read.contains(&word_bit_of(v).0)))
        .map(|s| s.name.clone())
        .collect();
    Ok(Rendered {
        text: format!(
            "a condition on {} too complex to show ({} BDD nodes)",
            names.join(", "),
            bdd.size(r)
        ),
        exact: false,
    })
}

fn join_terms(terms: &[Vec<String>]) -> String {
    if terms.len() == 1 {
        return terms[0].join(" and ");
    }
    terms
        .iter()
        .map(|t| {
            if t.len() == 1 {
                t[0].clone()
            } else {
                format!("({})", t.join(" and "))
            }
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Form 1: `r` as a disjunction of conjunctions of field constraints; `None` if too big.
fn dnf(
    bdd: &mut Bdd,
    r: Node,
    spans: &[FieldSpan],
    from: usize,
) -> Result<Option<Vec<Vec<String>>>, OutOfNodes> {
    if r == TRUE {
        return Ok(Some(vec![Vec::new()]));
    }
    if r == FALSE {
        return Ok(Some(Vec::new()));
    }
    let top = bdd.top(r);
    let Some(i) = (from..spans.len()).find(|&i| top < spans[i].end()) else {
        return Ok(None);
    };
    let span = &spans[i];
    if let Some(terms) = dnf_at(bdd, r, spans, i)? {
        return Ok(Some(terms));
    }
    // A 64-bit field that is not a simple set of 64-bit values may still be a simple
    // combination of its two halves (`args[0].hi == 0 and args[0].lo not in {…}`).
    let Some((hi, lo)) = &span.halves else {
        return Ok(None);
    };
    let mut split: Vec<FieldSpan> = spans[..i].to_vec();
    split.push(FieldSpan {
        start: span.start,
        bits: 32,
        name: hi.clone(),
        halves: None,
    });
    split.push(FieldSpan {
        start: span.start + 32,
        bits: 32,
        name: lo.clone(),
        halves: None,
    });
    split.extend_from_slice(&spans[i + 1..]);
    dnf_at(bdd, r, &split, i)
}

/// [`dnf`] with the first field cut at `spans[i]`.
fn dnf_at(
    bdd: &mut Bdd,
    r: Node,
    spans: &[FieldSpan],
    i: usize,
) -> Result<Option<Vec<Vec<String>>>, OutOfNodes> {
    let span = &spans[i];
    let classes = partition(bdd, r, span.end(), MAX_TERMS)?;
    let Some(classes) = classes else {
        return Ok(None);
    };
    // The values for which `r` holds whatever the later fields are (the classes whose residual
    // is TRUE, listed first): since `A or (not A and g)` is `A or g`, another class may take
    // them in, and its constraint on this field drops out when that covers every value
    // (`args[0].lo == 7 or ip.hi >= 32768`, not `… or (args[0].lo != 7 and ip.hi >= 32768)`).
    let mut unconditional = FALSE;
    for &(set, residual) in &classes {
        if residual == TRUE {
            unconditional = bdd.or(unconditional, set)?;
        }
    }
    let mut terms = Vec::new();
    for (set, residual) in classes {
        let atom = if residual != TRUE && bdd.or(set, unconditional)? == TRUE {
            None
        } else {
            let Some(atom) = field_constraint(bdd, set, span)? else {
                return Ok(None);
            };
            Some(atom)
        };
        let Some(rest) = dnf(bdd, residual, spans, i + 1)? else {
            return Ok(None);
        };
        for mut t in rest {
            t.splice(0..0, atom.iter().cloned());
            terms.push(t);
            if terms.len() > MAX_TERMS {
                return Ok(None);
            }
        }
    }
    Ok(Some(terms))
}

/// The functions `r` reaches when leaving the variables before `end`, each with the set of
/// assignments (a BDD over those variables) that reaches it; `None` if more than `limit`.
/// FALSE is left out.
fn partition(
    bdd: &mut Bdd,
    r: Node,
    end: Var,
    limit: usize,
) -> Result<Option<Vec<(Node, Node)>>, OutOfNodes> {
    let mut residuals = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![r];
    let mut visited = BTreeSet::new();
    // Depth first, low child first, so classes come out roughly in value order.
    while let Some(n) = stack.pop() {
        if bdd.top(n) >= end {
            if n != FALSE && seen.insert(n) {
                residuals.push(n);
                if residuals.len() > limit {
                    return Ok(None);
                }
            }
            continue;
        }
        if !visited.insert(n) {
            continue;
        }
        let (_, lo, hi) = bdd.node(n);
        stack.push(hi);
        stack.push(lo);
    }
    // Unconditional classes first: they read best.
    residuals.sort_by_key(|&n| n != TRUE);
    let mut out = Vec::new();
    for res in residuals {
        let mut memo = FxMap::default();
        let set = replace(bdd, r, end, res, &mut memo)?;
        out.push((set, res));
    }
    Ok(Some(out))
}

/// `r` with every function reached at `end` replaced by TRUE if it is `target`, else FALSE.
fn replace(
    bdd: &mut Bdd,
    n: Node,
    end: Var,
    target: Node,
    memo: &mut FxMap<Node, Node>,
) -> Result<Node, OutOfNodes> {
    if bdd.top(n) >= end {
        return Ok(if n == target { TRUE } else { FALSE });
    }
    if let Some(&m) = memo.get(&n) {
        return Ok(m);
    }
    let (v, lo, hi) = bdd.node(n);
    let l = replace(bdd, lo, end, target, memo)?;
    let h = replace(bdd, hi, end, target, memo)?;
    let m = bdd.mk(v, l, h)?;
    memo.insert(n, m);
    Ok(m)
}

/// The variables `n` tests.
fn support(bdd: &Bdd, n: Node) -> BTreeSet<Var> {
    let mut vars = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if n == TRUE || n == FALSE || !seen.insert(n) {
            continue;
        }
        let (v, lo, hi) = bdd.node(n);
        vars.insert(v);
        stack.push(lo);
        stack.push(hi);
    }
    vars
}

/// One field's constraint, `set` being a BDD over its variables; `None` if too complex.
fn field_constraint(
    bdd: &mut Bdd,
    set: Node,
    span: &FieldSpan,
) -> Result<Option<String>, OutOfNodes> {
    let vars = support(bdd, set);
    let half = span.start + 32;
    let (name, start, bits) = match &span.halves {
        Some((hi, _)) if vars.iter().all(|&v| v < half) => (hi.clone(), span.start, 32),
        Some((_, lo)) if vars.iter().all(|&v| v >= half) => (lo.clone(), half, 32),
        _ => (span.name.clone(), span.start, span.bits),
    };
    value_set(bdd, &name, set, start, bits)
}

/// A value set of field `name` over `bits` variables from `start` (most significant first),
/// e.g. `args[0].lo == 40` or `nr & 0x7e020000 != 0`. A union of masks is bracketed, as it
/// may stand next to other fields' constraints joined by `and`: `args[1].lo == 7 and
/// (args[2].lo & 0x43 == 0x41 or args[2].lo & 0x42 == 0x42)`.
fn value_set(
    bdd: &mut Bdd,
    name: &str,
    set: Node,
    start: Var,
    bits: u32,
) -> Result<Option<String>, OutOfNodes> {
    let max: u128 = (1u128 << bits) - 1;
    let inside = intervals(bdd, set, start, bits, MAX_PIECES);
    let complement = bdd.not(set)?;
    let outside = intervals(bdd, complement, start, bits, MAX_PIECES);
    let show = |v: u128| show_u64(v as u64);
    let list = |iv: &[(u128, u128)]| -> String {
        iv.iter()
            .map(|&(a, b)| {
                if a == b {
                    show(a)
                } else {
                    format!("{}..={}", show(a), show(b))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let positive = inside.as_ref().map(|iv| match iv.as_slice() {
        [(a, b)] if a == b => format!("== {}", show(*a)),
        [(0, b)] => format!("<= {}", show(*b)),
        [(a, b)] if *b == max => format!(">= {}", show(*a)),
        [(a, b)] => format!("in {}..={}", show(*a), show(*b)),
        iv => format!("in {{{}}}", list(iv)),
    });
    let negative = outside.as_ref().map(|iv| match iv.as_slice() {
        [(a, b)] if a == b => format!("!= {}", show(*a)),
        iv => format!("not in {{{}}}", list(iv)),
    });
    // What reads shorter: a range costs about two single values.
    let cost =
        |iv: &[(u128, u128)]| -> usize { iv.iter().map(|(a, b)| 1 + (a != b) as usize).sum() };
    let prefer_negative = match (&inside, &outside) {
        (Some(i), Some(o)) => cost(o) < cost(i),
        (None, Some(_)) => true,
        _ => false,
    };
    let named = |form: String| Some(format!("{name} {form}"));
    if prefer_negative {
        return Ok(negative.and_then(named));
    }
    if let Some(form) = positive {
        return Ok(named(form));
    }
    // Masks: a union of a few cubes, or the complement of one.
    if let Some(c) = cubes(bdd, set, start, bits, 2) {
        let parts: Vec<String> = c
            .iter()
            .map(|&(m, v)| format!("{name} & {} == {}", mask_text(m), show(v)))
            .collect();
        return Ok(Some(match parts.as_slice() {
            [one] => one.clone(),
            _ => format!("({})", parts.join(" or ")),
        }));
    }
    if let Some(c) = cubes(bdd, complement, start, bits, 1) {
        let (m, v) = c[0];
        return Ok(named(format!("& {} != {}", mask_text(m), show(v))));
    }
    // A mask within a range: `args[1].lo & 0x3 == 0 and args[1].lo >= 4` (aligned values).
    if let Some((m, v, lo, hi)) = mask_in_range(bdd, set, start, bits)? {
        // Against the mask's own least and greatest values, one bound may say nothing.
        let range = if hi == (max & !m) | v {
            format!(">= {}", show(lo))
        } else if lo == v {
            format!("<= {}", show(hi))
        } else {
            format!("in {}..={}", show(lo), show(hi))
        };
        return Ok(Some(format!(
            "{name} & {} == {} and {name} {range}",
            mask_text(m),
            show(v)
        )));
    }
    Ok(None)
}

/// `set` as the values of one mask (`& m == v`) between its least and greatest member, if it
/// is exactly that: the bits fixed across the set make the mask (less those the range itself
/// fixes), and the candidate's diagram must be `set`'s (diagrams are canonical).
fn mask_in_range(
    bdd: &mut Bdd,
    set: Node,
    start: Var,
    bits: u32,
) -> Result<Option<(u128, u128, u128, u128)>, OutOfNodes> {
    if set == FALSE || set == TRUE || bdd.top(set) < start {
        return Ok(None);
    }
    let weight = |depth: u32| 1u128 << (bits - 1 - depth);
    let var_at = |depth: u32| start + depth as Var;
    let (mut mask, mut value) = (0u128, 0u128);
    for depth in 0..bits {
        let x = bdd.var(var_at(depth))?;
        if bdd.and(set, x)? == FALSE {
            mask |= weight(depth);
        } else if bdd.and_not(set, x)? == FALSE {
            mask |= weight(depth);
            value |= weight(depth);
        }
    }
    // The least and greatest members: follow the 0 (1) side wherever it is not empty.
    let extreme = |bdd: &Bdd, greatest: bool| -> Option<u128> {
        let (mut n, mut out) = (set, 0u128);
        for depth in 0..bits {
            let at = if n == TRUE { Var::MAX } else { bdd.top(n) };
            if n != TRUE && at < var_at(depth) {
                return None; // a variable of another field
            }
            if at != var_at(depth) {
                out |= if greatest { weight(depth) } else { 0 };
                continue;
            }
            let (_, lo, hi) = bdd.node(n);
            let one = if greatest { hi != FALSE } else { lo == FALSE };
            if one {
                out |= weight(depth);
            }
            n = if one { hi } else { lo };
        }
        (n == TRUE).then_some(out)
    };
    let (Some(lo), Some(hi)) = (extreme(bdd, false), extreme(bdd, true)) else {
        return Ok(None);
    };
    // Bits above the highest one where `lo` and `hi` differ are fixed by the range itself.
    let varying = 128 - (lo ^ hi).leading_zeros();
    let low_bits = if varying >= 128 {
        u128::MAX
    } else {
        (1u128 << varying) - 1
    };
    mask &= low_bits;
    value &= mask;
    if mask == 0 {
        return Ok(None);
    }
    // The candidate, built from the least significant bit up (the deepest variable first).
    let (mut cube, mut ge, mut le) = (TRUE, TRUE, TRUE);
    for depth in (0..bits).rev() {
        let var = var_at(depth);
        let w = weight(depth);
        if mask & w != 0 {
            cube = if value & w != 0 {
                bdd.mk(var, FALSE, cube)?
            } else {
                bdd.mk(var, cube, FALSE)?
            };
        }
        ge = if lo & w != 0 {
            bdd.mk(var, FALSE, ge)?
        } else {
            bdd.mk(var, ge, TRUE)?
        };
        le = if hi & w != 0 {
            bdd.mk(var, TRUE, le)?
        } else {
            bdd.mk(var, le, FALSE)?
        };
    }
    let range = bdd.and(ge, le)?;
    let candidate = bdd.and(cube, range)?;
    Ok((candidate == set).then_some((mask, value, lo, hi)))
}

fn mask_text(m: u128) -> String {
    format!("{m:#x}")
}

/// The set as at most `limit` maximal intervals, ascending; `None` if more.
fn intervals(
    bdd: &Bdd,
    set: Node,
    start: Var,
    bits: u32,
    limit: usize,
) -> Option<Vec<(u128, u128)>> {
    /// The walk's fixed parameters and its output.
    struct Walk<'b> {
        bdd: &'b Bdd,
        start: Var,
        bits: u32,
        limit: usize,
        out: Vec<(u128, u128)>,
    }
    impl Walk<'_> {
        fn rec(&mut self, n: Node, depth: u32, prefix: u128) -> bool {
            if n == FALSE {
                return true;
            }
            if n == TRUE {
                let span = self.bits - depth;
                let lo = prefix << span;
                let hi = lo + ((1u128 << span) - 1);
                match self.out.last_mut() {
                    Some(last) if last.1 + 1 == lo => last.1 = hi,
                    _ => {
                        if self.out.len() == self.limit {
                            return false;
                        }
                        self.out.push((lo, hi));
                    }
                }
                return true;
            }
            let var = self.start + depth as Var;
            let (v, lo, hi) = self.bdd.node(n);
            if depth >= self.bits || v < var {
                // Not a set over these variables alone: not ours to show as intervals.
                return false;
            }
            let (l, h) = if v == var { (lo, hi) } else { (n, n) };
            self.rec(l, depth + 1, prefix << 1) && self.rec(h, depth + 1, prefix << 1 | 1)
        }
    }
    let mut walk = Walk {
        bdd,
        start,
        bits,
        limit,
        out: Vec::new(),
    };
    walk.rec(set, 0, 0).then_some(walk.out)
}

/// The set as at most `limit` disjoint cubes `(mask, value)`; `None` if more.
fn cubes(bdd: &Bdd, set: Node, start: Var, bits: u32, limit: usize) -> Option<Vec<(u128, u128)>> {
    let mut out = Vec::new();
    let mut stack = vec![(set, 0u128, 0u128)];
    while let Some((n, mask, value)) = stack.pop() {
        if n == FALSE {
            continue;
        }
        if n == TRUE {
            if out.len() == limit {
                return None;
            }
            out.push((mask, value));
            continue;
        }
        let (v, lo, hi) = bdd.node(n);
        if v < start || (v - start) as u32 >= bits {
            return None;
        }
        let bit = 1u128 << (bits - 1 - (v - start) as u32);
        stack.push((hi, mask | bit, value | bit));
        stack.push((lo, mask | bit, value));
    }
    Some(out)
}

/// Form 2: the paths of `r` as cubes, each a conjunction of masked word equalities.
fn cube_list(bdd: &Bdd, r: Node, naming: Naming) -> Option<String> {
    let mut cubes: Vec<[(u32, u32); NUM_WORDS]> = Vec::new();
    let mut stack = vec![(r, [(0u32, 0u32); NUM_WORDS])];
    while let Some((n, cube)) = stack.pop() {
        if n == FALSE {
            continue;
        }
        if n == TRUE {
            if cubes.len() == MAX_CUBES {
                return None;
            }
            cubes.push(cube);
            continue;
        }
        let (v, lo, hi) = bdd.node(n);
        let (word, bit) = word_bit_of(v);
        let mut with = cube;
        with[word].0 |= 1 << bit;
        let without = with;
        with[word].1 |= 1 << bit;
        stack.push((hi, with));
        stack.push((lo, without));
    }
    let name = |word: usize| word_name(naming, word);
    let terms: Vec<Vec<String>> = cubes
        .iter()
        .map(|cube| {
            WORD_ORDER
                .iter()
                .filter(|&&w| cube[w].0 != 0)
                .map(|&w| {
                    let (m, v) = cube[w];
                    if m == u32::MAX {
                        format!("{} == {}", name(w), show_u64(v as u64))
                    } else {
                        format!("{} & {:#x} == {}", name(w), m, show_u64(v as u64))
                    }
                })
                .collect()
        })
        .collect();
    Some(join_terms(&terms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::symbolic::bitvec;

    fn le() -> Naming {
        Naming::Endian(Endian::Little)
    }

    /// `args[i]` (64-bit, little-endian words) as a bit vector pair.
    fn arg_eq64(bdd: &mut Bdd, i: usize, v: u64) -> Node {
        let lo = bitvec::value_set(bdd, 4 + 2 * i, &[v as u32]).unwrap();
        let hi = bitvec::value_set(bdd, 5 + 2 * i, &[(v >> 32) as u32]).unwrap();
        bdd.and(lo, hi).unwrap()
    }

    #[test]
    fn sixty_four_bit_values_are_one_value_when_both_halves_are_tested() {
        let mut bdd = Bdd::new(1 << 16);
        let c = arg_eq64(&mut bdd, 0, 40);
        assert_eq!(condition(&mut bdd, c, le()).unwrap().text, "args[0] == 40");
        let big = arg_eq64(&mut bdd, 2, 0x1_0000_0002);
        assert_eq!(
            condition(&mut bdd, big, le()).unwrap().text,
            "args[2] == 0x100000002"
        );
        let not = bdd.not(c).unwrap();
        assert_eq!(
            condition(&mut bdd, not, le()).unwrap().text,
            "args[0] != 40"
        );
    }

    #[test]
    fn halves_masks_ranges_and_conjunctions() {
        let mut bdd = Bdd::new(1 << 16);
        // Only the low half: libseccomp on a 32-bit arch.
        let lo = bitvec::value_set(&mut bdd, 4, &[40]).unwrap();
        assert_eq!(
            condition(&mut bdd, lo, le()).unwrap().text,
            "args[0].lo == 40"
        );
        // `word`'s bits under `mask` equal to `value`'s.
        let bits_of = |bdd: &mut Bdd, word: usize, mask: u32, value: u32| {
            let mut n = TRUE;
            for bit in (0..32).filter(|b| mask >> b & 1 == 1) {
                let v = bdd.var(crate::bpf::symbolic::var_of(word, bit)).unwrap();
                n = if value >> bit & 1 == 1 {
                    bdd.and(n, v).unwrap()
                } else {
                    bdd.and_not(n, v).unwrap()
                };
            }
            n
        };
        // Docker's clone test: no namespace flag in args[0].lo.
        let flags_clear = bits_of(&mut bdd, 4, 0x7e02_0000, 0);
        assert_eq!(
            condition(&mut bdd, flags_clear, le()).unwrap().text,
            "args[0].lo & 0x7e020000 == 0"
        );
        let any_flag = bdd.not(flags_clear).unwrap();
        assert_eq!(
            condition(&mut bdd, any_flag, le()).unwrap().text,
            "args[0].lo & 0x7e020000 != 0"
        );
        let range = bitvec::value_range(&mut bdd, 6, 3, 9).unwrap();
        let both = bdd.and(lo, range).unwrap();
        assert_eq!(
            condition(&mut bdd, both, le()).unwrap().text,
            "args[0].lo == 40 and args[1].lo in 3..=9"
        );
        // The OR of the two, as written: not `… or (args[0].lo != 40 and …)`, which says the
        // same (an audit found such needless negations in `diff`'s conditions).
        let either = bdd.or(lo, range).unwrap();
        assert_eq!(
            condition(&mut bdd, either, le()).unwrap().text,
            "args[0].lo == 40 or args[1].lo in 3..=9"
        );
        // Another value's constraint stays where it does not cover the rest.
        let other = {
            let v41 = bitvec::value_set(&mut bdd, 4, &[41]).unwrap();
            let v41_in_range = bdd.and(v41, range).unwrap();
            bdd.or(lo, v41_in_range).unwrap()
        };
        assert_eq!(
            condition(&mut bdd, other, le()).unwrap().text,
            "args[0].lo == 40 or (args[0].lo == 41 and args[1].lo in 3..=9)"
        );
        let set = bitvec::value_set(&mut bdd, 4, &[1, 2, 8]).unwrap();
        assert_eq!(
            condition(&mut bdd, set, le()).unwrap().text,
            "args[0].lo in {1..=2, 8}"
        );
        // Both halves, but not one simple 64-bit set: shown per half.
        let not_two_ten = {
            let s = bitvec::value_set(&mut bdd, 4, &[2, 10]).unwrap();
            bdd.not(s).unwrap()
        };
        let not_38_40 = {
            let a = arg_eq64(&mut bdd, 0, 38);
            let b = arg_eq64(&mut bdd, 0, 40);
            let either = bdd.or(a, b).unwrap();
            bdd.not(either).unwrap()
        };
        let socket = bdd.and(not_two_ten, not_38_40).unwrap();
        assert_eq!(
            condition(&mut bdd, socket, le()).unwrap().text,
            "(args[0].hi == 0 and args[0].lo not in {2, 10, 38, 40}) or (args[0].hi != 0 and args[0].lo not in {2, 10})"
        );
        // A union of two masks next to another field's constraint is bracketed: read with
        // `and` before `or`, the unbracketed text would also cover args[1].lo == 0x42 alone.
        let m1 = bits_of(&mut bdd, 6, 0x43, 0x41);
        let m2 = bits_of(&mut bdd, 6, 0x42, 0x42);
        let masks = bdd.or(m1, m2).unwrap();
        let seven = bitvec::value_set(&mut bdd, 4, &[7]).unwrap();
        let both = bdd.and(seven, masks).unwrap();
        assert_eq!(
            condition(&mut bdd, both, le()).unwrap().text,
            "args[0].lo == 7 and (args[1].lo & 0x43 == 65 or args[1].lo & 0x42 == 66)"
        );
        // A mask within a range (aligned values from 4 up): the mask and the tighter bound.
        let aligned = bits_of(&mut bdd, 6, 0x3, 0);
        let from_two = bitvec::value_range(&mut bdd, 6, 2, u32::MAX).unwrap();
        let both = bdd.and(aligned, from_two).unwrap();
        assert_eq!(
            condition(&mut bdd, both, le()).unwrap().text,
            "args[1].lo & 0x3 == 0 and args[1].lo >= 4"
        );
        let below = bitvec::value_range(&mut bdd, 6, 0, 0x1000).unwrap();
        let odd = bits_of(&mut bdd, 6, 0x1, 1);
        let odd_between = {
            let from = bitvec::value_range(&mut bdd, 6, 9, u32::MAX).unwrap();
            let b = bdd.and(odd, below).unwrap();
            bdd.and(b, from).unwrap()
        };
        assert_eq!(
            condition(&mut bdd, odd_between, le()).unwrap().text,
            "args[1].lo & 0x1 == 1 and args[1].lo in 9..=4095"
        );
        let big_endian = Naming::Endian(Endian::Big);
        // On big-endian machines word 4 is the high half.
        assert_eq!(
            condition(&mut bdd, lo, big_endian).unwrap().text,
            "args[0].hi == 40"
        );
    }
}
