//! When the proof runs out of budget: a search for a concrete difference.
//!
//! The symbolic comparison is exact but can need more decision-diagram nodes than any budget
//! allows (a product or a difference of two arguments compared with a constant). Such filters
//! often differ on an input built from their own constants, so before answering "unknown" the
//! verifier runs both programs on inputs made of the constants they compare with (and their
//! neighbours), the domain's numbers and random words. A difference found this way is as
//! good as a proved one — both programs were run on it by the interpreter — and "unknown"
//! stays the answer when none is found: sampling never answers "equal".
//!
//! Worked example: `ld [args[3].lo]; tax; ld [args[5].hi]; xor #7; …; sub x; jeq #0` against
//! `ret ALLOW`: the pool holds 7 and 0, so `args[3].lo = 7, args[5].hi = 0` is among the
//! first inputs tried, and it tells the two apart.

use super::domain::{ArchSel, Domain, NrSel};
use super::Counterexample;
use crate::bpf::data::{SeccompData, Words, NUM_WORDS};
use crate::bpf::symbolic::bdd::Bdd;
use crate::bpf::symbolic::word_bit_of;
use crate::bpf::testing::Rng;
use crate::bpf::{interp, Program};

/// Most inputs tried.
const MAX_INPUTS: usize = 200_000;
/// Most instructions (of both programs' lengths) per search: a count, not a time, so the
/// answer is the same on every machine (tens of milliseconds).
const MAX_WORK: usize = 20_000_000;

/// A concrete input of `domain` on which `a` and `b` return different values, if one of the
/// inputs tried is one.
pub(crate) fn difference(a: &Program, b: &Program, domain: &Domain) -> Option<Counterexample> {
    let mut bdd = Bdd::new(1 << 16);
    let inside = domain.to_bdd(&mut bdd).ok()?;
    let mut pool: Vec<u32> = vec![0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x4000_0000];
    for insn in a.insns.iter().chain(&b.insns) {
        let k = insn.k;
        pool.extend([k, k.wrapping_add(1), k.wrapping_sub(1), !k]);
    }
    pool.sort_unstable();
    pool.dedup();
    let in_domain = |words: &Words| {
        bdd.eval(inside, |var| {
            let (word, bit) = word_bit_of(var);
            words[word] >> bit & 1 == 1
        })
    };
    let inputs = MAX_INPUTS.min(MAX_WORK / (a.len() + b.len()).max(1));
    let mut rng = Rng::new(0x5eed);
    for _ in 0..inputs {
        let mut words: Words = [0; NUM_WORDS];
        for w in &mut words {
            *w = if rng.chance(7, 8) {
                rng.pick(&pool)
            } else {
                rng.next_u32()
            };
        }
        // A restricted domain: its own arch tokens and numbers (the membership test below
        // still decides, e.g. for bit 30 of x32's numbers).
        if !domain.arches.is_empty() {
            words[1] = match rng.pick(&domain.arches) {
                ArchSel::Arch(a) => a.token(),
                ArchSel::Token(t) => t,
            };
        }
        if !domain.nrs.is_empty() {
            let arch = domain.arches.iter().find_map(|s| match s {
                ArchSel::Arch(a) if a.token() == words[1] => Some(*a),
                _ => None,
            });
            words[0] = match &domain.nrs[rng.below(domain.nrs.len())] {
                NrSel::Range(lo, hi) => match rng.below(3) {
                    0 => *lo,
                    1 => *hi,
                    // (An unchecked domain may hold `lo > hi`: no panic, the BDD test rejects.)
                    _ => lo.wrapping_add(rng.next_u32() % hi.saturating_sub(*lo).saturating_add(1)),
                },
                NrSel::Name(name) => arch.and_then(|a| a.syscalls().nr(name)).unwrap_or(words[0]),
            };
        }
        if !in_domain(&words) {
            continue;
        }
        let differs = |words: &Words| {
            let data = SeccompData::from_words(words);
            let (ra, rb) = (interp::eval(a, &data).ok()?, interp::eval(b, &data).ok()?);
            (ra != rb).then_some((data, ra, rb))
        };
        if differs(&words).is_none() {
            continue;
        }
        // Readable: every word that can be 0 (and stay in the domain, and still differ) is.
        for i in 0..NUM_WORDS {
            let mut fewer = words;
            fewer[i] = 0;
            if differs(&fewer).is_some() && in_domain(&fewer) {
                words = fewer;
            }
        }
        let (data, a, b) = differs(&words)?;
        return Some(Counterexample { data, a, b });
    }
    None
}
