//! Bit-blasted 32-bit values: bit `i` (0 = least significant) of a value is a BDD over the
//! input bits. Every classic-BPF ALU operation and comparison is computed exactly here.

use super::bdd::{Bdd, Node, OutOfNodes, FALSE, TRUE};
use super::var_of;
use crate::bpf::insn::*;

/// A 32-bit value as 32 BDDs, least significant bit first.
pub type Bits = [Node; 32];

type R<T> = Result<T, OutOfNodes>;

/// The constant `c`.
pub fn constant(c: u32) -> Bits {
    std::array::from_fn(|i| if c >> i & 1 == 1 { TRUE } else { FALSE })
}

/// The constant a bit vector holds, if it is one.
pub fn as_const(b: &Bits) -> Option<u32> {
    b.iter().enumerate().try_fold(0u32, |acc, (i, &n)| match n {
        TRUE => Some(acc | 1 << i),
        FALSE => Some(acc),
        _ => None,
    })
}

/// The unknown input word `word` itself.
pub fn word(bdd: &mut Bdd, word: usize) -> R<Bits> {
    let mut b = [FALSE; 32];
    for (i, n) in b.iter_mut().enumerate() {
        *n = bdd.var(var_of(word, i))?;
    }
    Ok(b)
}

/// The set `{word ∈ values}`, built bottom-up without any Boolean operation.
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

/// The set `{lo <= word <= hi}` (empty when `lo > hi`), built bottom-up.
pub fn value_range(bdd: &mut Bdd, word: usize, lo: u32, hi: u32) -> R<Node> {
    // `x >= lo`, and `x <= hi`, each a chain of one node per bit, intersected.
    fn at_least(bdd: &mut Bdd, word: usize, k: u32) -> R<Node> {
        // From the least significant bit up: ge_i = x_i > k_i, or x_i == k_i and ge_{i-1}.
        let mut ge = TRUE;
        for b in 0..32 {
            ge = if k >> b & 1 == 1 {
                bdd.mk(var_of(word, b), FALSE, ge)?
            } else {
                bdd.mk(var_of(word, b), ge, TRUE)?
            };
        }
        Ok(ge)
    }
    fn at_most(bdd: &mut Bdd, word: usize, k: u32) -> R<Node> {
        let mut le = TRUE;
        for b in 0..32 {
            le = if k >> b & 1 == 1 {
                bdd.mk(var_of(word, b), TRUE, le)?
            } else {
                bdd.mk(var_of(word, b), le, FALSE)?
            };
        }
        Ok(le)
    }
    if lo > hi {
        return Ok(FALSE);
    }
    let ge = at_least(bdd, word, lo)?;
    let le = at_most(bdd, word, hi)?;
    bdd.and(ge, le)
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

/// Per bit: `if c then t else e`.
pub fn select(bdd: &mut Bdd, c: Node, t: &[Node], e: &[Node]) -> R<Vec<Node>> {
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

/// `a == b`.
pub fn equal(bdd: &mut Bdd, a: &Bits, b: &Bits) -> R<Node> {
    // Least significant bit first, so each step adds a node above the previous ones.
    let mut eq = TRUE;
    for (&x, &y) in a.iter().zip(b) {
        let same = bdd.iff(x, y)?;
        eq = bdd.and(same, eq)?;
    }
    Ok(eq)
}

/// The condition of a conditional jump comparing `a` with `b`.
pub fn compare(bdd: &mut Bdd, op: u16, a: &Bits, b: &Bits) -> R<Node> {
    match (as_const(b), literal_bits(bdd, a)) {
        (Some(k), Some(bits)) => compare_literals(bdd, op, &bits, k),
        _ => compare_general(bdd, op, a, b),
    }
}

/// A bit of a value whose bits are each a constant or an input bit itself: what a loaded word
/// is, masked or not.
#[derive(Clone, Copy)]
enum Literal {
    Const(bool),
    Input(super::bdd::Var),
}

/// The bits of `a` as [`Literal`]s, if each is one and the input bits go up in variable order
/// from the most significant bit down (so the least significant bit's is at the bottom, as a
/// word's bits are).
fn literal_bits(bdd: &Bdd, a: &Bits) -> Option<[Literal; 32]> {
    let mut out = [Literal::Const(false); 32];
    let mut below = super::bdd::LEAF;
    for (o, &n) in out.iter_mut().zip(a) {
        *o = match n {
            FALSE => Literal::Const(false),
            TRUE => Literal::Const(true),
            _ => match bdd.node(n) {
                (v, FALSE, TRUE) if v < below => {
                    below = v;
                    Literal::Input(v)
                }
                _ => return None,
            },
        };
    }
    Some(out)
}

/// [`compare`] of a value of [`Literal`] bits with the constant `k`, built bottom-up with one
/// node per input bit and no Boolean operation: the jump tests of a filter almost all compare
/// a loaded word with a constant, and [`compare_general`] took about 60 operations a bit for
/// them. BDDs are canonical, so the node is the one [`compare_general`] gives.
fn compare_literals(bdd: &mut Bdd, op: u16, a: &[Literal; 32], k: u32) -> R<Node> {
    // From the least significant bit up, as in `equal` and `greater`: `r` is the condition on
    // the bits below `i`, and each bit decides it or passes it on.
    let mut r = match op {
        BPF_JEQ | BPF_JGE => TRUE,
        _ => FALSE,
    };
    for (i, &bit) in a.iter().enumerate() {
        let y = k >> i & 1 == 1;
        // The condition on bits `0..=i` when bit `i` is 0 and when it is 1.
        let (if_zero, if_one) = match op {
            BPF_JEQ if y => (FALSE, r),
            BPF_JEQ => (r, FALSE),
            BPF_JGT | BPF_JGE if y => (FALSE, r),
            BPF_JGT | BPF_JGE => (r, TRUE),
            // BPF_JSET: any bit set in both.
            _ if y => (r, TRUE),
            _ => (r, r),
        };
        r = match bit {
            Literal::Const(false) => if_zero,
            Literal::Const(true) => if_one,
            Literal::Input(v) => bdd.mk(v, if_zero, if_one)?,
        };
    }
    Ok(r)
}

/// [`compare`] for any two values.
fn compare_general(bdd: &mut Bdd, op: u16, a: &Bits, b: &Bits) -> R<Node> {
    match op {
        BPF_JEQ => equal(bdd, a, b),
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
pub fn enumerate(bdd: &mut Bdd, v: &Bits, cond: Node, limit: usize) -> R<Option<Vec<(u32, Node)>>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::symbolic::var_of;

    /// The value of a bit vector when word 4 holds `x` and word 5 holds `y`.
    fn eval(bdd: &Bdd, b: &Bits, x: u32, y: u32) -> u32 {
        let value_of = |v| {
            let (w, bit) = crate::bpf::symbolic::word_bit_of(v);
            let word = match w {
                4 => x,
                5 => y,
                _ => 0,
            };
            word >> bit & 1 == 1
        };
        (0..32).fold(0, |acc, i| acc | (bdd.eval(b[i], value_of) as u32) << i)
    }

    #[test]
    fn alu_matches_wrapping_arithmetic() {
        let mut bdd = Bdd::new(1 << 22);
        let x = word(&mut bdd, 4).unwrap();
        let y = word(&mut bdd, 5).unwrap();
        let samples = [0u32, 1, 3, 7, 0x8000_0000, 0xffff_ffff, 12345, 0x4000_0001];
        type Concrete = fn(u32, u32) -> u32;
        let ops: [(u16, Concrete); 6] = [
            (BPF_ADD, u32::wrapping_add),
            (BPF_SUB, u32::wrapping_sub),
            (BPF_XOR, |a, b| a ^ b),
            (BPF_LSH, |a, b| a.wrapping_shl(b & 31)),
            (BPF_RSH, |a, b| a.wrapping_shr(b & 31)),
            (BPF_AND, |a, b| a & b),
        ];
        // Words are whole blocks in the variable order, so `x + y` of two full words needs a
        // node per value of y's low bits: keep the second operand to its low byte.
        let low_byte = constant(0xff);
        let y = alu(&mut bdd, BPF_AND, &y, &low_byte).unwrap();
        for (op, f) in ops {
            let r = alu(&mut bdd, op, &x, &y).unwrap();
            for &a in &samples {
                for &b in &samples {
                    assert_eq!(eval(&bdd, &r, a, b), f(a, b & 0xff), "op {op:#x} {a} {b}");
                }
            }
        }
        // Division and multiplication by a constant (a full product of two words is too big).
        let seven = constant(7);
        let q = alu(&mut bdd, BPF_DIV, &x, &seven).unwrap();
        let p = alu(&mut bdd, BPF_MUL, &x, &seven).unwrap();
        for &a in &samples {
            assert_eq!(eval(&bdd, &q, a, 0), a / 7);
            assert_eq!(eval(&bdd, &p, a, 0), a.wrapping_mul(7));
        }
    }

    /// A loaded word compared with a constant is built directly ([`compare_literals`]); the
    /// node must be the one the Boolean operations give, and the jump the kernel's.
    #[test]
    fn comparing_a_word_with_a_constant_is_the_general_comparison() {
        let mut bdd = Bdd::new(1 << 22);
        let x = word(&mut bdd, 4).unwrap();
        let samples = [
            0u32,
            1,
            2,
            7,
            8,
            41,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_fffe,
            u32::MAX,
        ];
        type Shape = (&'static str, fn(u32) -> u32, bool);
        let shapes: [Shape; 7] = [
            ("x", |v| v, true),
            ("x & 0xff00ff0f", |v| v & 0xff00_ff0f, true),
            ("x | 0x80000001", |v| v | 0x8000_0001, true),
            ("x & 0xf0 | 0x3", |v| v & 0xf0 | 0x3, true),
            ("x >> 4", |v| v >> 4, true),
            ("x + 1", |v| v.wrapping_add(1), false),
            // Bits 0 and 1 are both x's bit 0: literals, but not one variable per bit.
            ("(x & 1) * 3", |v| (v & 1) * 3, false),
        ];
        for (name, concrete, literal) in shapes {
            let value = match name {
                "x" => x,
                "x & 0xff00ff0f" => alu(&mut bdd, BPF_AND, &x, &constant(0xff00_ff0f)).unwrap(),
                "x | 0x80000001" => alu(&mut bdd, BPF_OR, &x, &constant(0x8000_0001)).unwrap(),
                "x & 0xf0 | 0x3" => {
                    let m = alu(&mut bdd, BPF_AND, &x, &constant(0xf0)).unwrap();
                    alu(&mut bdd, BPF_OR, &m, &constant(3)).unwrap()
                }
                "x >> 4" => alu(&mut bdd, BPF_RSH, &x, &constant(4)).unwrap(),
                "(x & 1) * 3" => {
                    let m = alu(&mut bdd, BPF_AND, &x, &constant(1)).unwrap();
                    alu(&mut bdd, BPF_MUL, &m, &constant(3)).unwrap()
                }
                _ => alu(&mut bdd, BPF_ADD, &x, &constant(1)).unwrap(),
            };
            assert_eq!(literal_bits(&bdd, &value).is_some(), literal, "{name}");
            type Jump = fn(u32, u32) -> bool;
            let ops: [(u16, Jump); 4] = [
                (BPF_JEQ, |a, k| a == k),
                (BPF_JGT, |a, k| a > k),
                (BPF_JGE, |a, k| a >= k),
                (BPF_JSET, |a, k| a & k != 0),
            ];
            for (op, taken) in ops {
                for &k in samples.iter().chain(&[0xf3, 0x8000_0001, 0x0fff_fff0]) {
                    let fast = compare(&mut bdd, op, &value, &constant(k)).unwrap();
                    let general = compare_general(&mut bdd, op, &value, &constant(k)).unwrap();
                    assert_eq!(fast, general, "{name} op {op:#x} k {k:#x}");
                    for &v in &samples {
                        let value_of = |var| {
                            let (w, bit) = crate::bpf::symbolic::word_bit_of(var);
                            w == 4 && v >> bit & 1 == 1
                        };
                        let want = taken(concrete(v), k);
                        assert_eq!(
                            bdd.eval(fast, value_of),
                            want,
                            "{name} {op:#x} {k:#x} {v:#x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ranges_and_sets() {
        let mut bdd = Bdd::new(1 << 16);
        let r = value_range(&mut bdd, 0, 10, 20).unwrap();
        for (v, inside) in [
            (9, false),
            (10, true),
            (20, true),
            (21, false),
            (u32::MAX, false),
        ] {
            let value_of = |var| {
                let (w, bit) = crate::bpf::symbolic::word_bit_of(var);
                w == 0 && v >> bit & 1 == 1
            };
            assert_eq!(bdd.eval(r, value_of), inside, "{v}");
        }
        let s = value_set(&mut bdd, 0, &(10..=20).collect::<Vec<_>>()).unwrap();
        assert_eq!(r, s, "the same set is the same node");
        assert_eq!(value_range(&mut bdd, 0, 0, u32::MAX).unwrap(), TRUE);
        assert_eq!(value_range(&mut bdd, 0, 5, 4).unwrap(), FALSE);
        let top = bdd.var(var_of(0, 31)).unwrap();
        assert_eq!(
            value_range(&mut bdd, 0, 0x8000_0000, u32::MAX).unwrap(),
            top
        );
    }
}
