//! The mutation test of the verifier (issue 4's acceptance): libseccomp's filters for the
//! profiles of the shared corpus (linear and binary-tree layouts, several arch sets) are
//! mutated once at random — a changed constant, a retargeted or flipped jump, swapped or
//! changed returns, a deleted instruction with the jumps over it fixed up, a changed load
//! offset — keeping the program valid, and each mutant is verified against its original.
//!
//! Every verdict is checked by the interpreter, independently of the verifier:
//! - `different`: the counterexample must make the two programs return the two claimed values;
//! - `equal`: both programs are run on every input of a grid — every arch token either program
//!   compares with (plus an unknown one) × every boundary value of the constants `nr` is
//!   compared with × the boundary values of the constants each argument word is compared with,
//!   for the words the programs read on that path — and must agree on every one;
//! - `unknown`: not expected on filters this small; it fails the test.

mod common;

use common::libseccomp_profiles::{build_filter, load_profile, ProfileOptions};
use secopt::bpf::insn::*;
use secopt::bpf::testing::Rng;
use secopt::bpf::validate::validate;
use secopt::bpf::{interp, Insn, Program, Words};
use secopt::verify::{equivalent, Verdict, VerifyOptions};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Instant;

/// A single random mutation of `prog` that the validator accepts, and what it was.
fn mutate(rng: &mut Rng, prog: &Program) -> (Program, String) {
    loop {
        let mut p = prog.clone();
        let n = p.len();
        let i = rng.below(n);
        let insn = p.insns[i];
        let what = match rng.below(9) {
            0 | 1 => {
                // A constant: a jump's k, AND k, RET k, LD IMM.
                let has_k = (insn.is_conditional_jump() && src(insn.code) == BPF_K)
                    || insn.code == BPF_ALU | BPF_AND | BPF_K
                    || insn.code == BPF_RET | BPF_K
                    || insn.code == BPF_LD | BPF_IMM;
                if !has_k {
                    continue;
                }
                let others: Vec<u32> = p.insns.iter().map(|x| x.k).collect();
                let k = insn.k;
                p.insns[i].k = match rng.below(5) {
                    0 => k.wrapping_add(1),
                    1 => k.wrapping_sub(1),
                    2 => rng.pick(&others),
                    3 => k ^ 1 << rng.below(32),
                    _ => rng.next_u32(),
                };
                format!("insn {i}: k {k:#x} -> {:#x}", p.insns[i].k)
            }
            2 => {
                if !insn.is_conditional_jump() {
                    continue;
                }
                let room = (n - 2 - i).min(255);
                let off = rng.below(room + 1) as u8;
                if rng.chance(1, 2) {
                    p.insns[i].jt = off;
                } else {
                    p.insns[i].jf = off;
                }
                format!("insn {i}: retargeted to +{off}")
            }
            3 => {
                if !insn.is_conditional_jump() || insn.jt == insn.jf {
                    continue;
                }
                p.insns[i].jt = insn.jf;
                p.insns[i].jf = insn.jt;
                format!("insn {i}: branches swapped")
            }
            4 => {
                let rets: Vec<usize> = (0..n)
                    .filter(|&j| p.insns[j].code == BPF_RET | BPF_K)
                    .collect();
                let j = rng.pick(&rets);
                if p.insns[i].code != BPF_RET | BPF_K || p.insns[j].k == insn.k {
                    continue;
                }
                p.insns[i].k = p.insns[j].k;
                p.insns[j].k = insn.k;
                format!("returns {i} and {j} swapped")
            }
            5 => {
                if i == n - 1 {
                    continue;
                }
                // Delete, keeping every jump over the deleted slot on its old target (a jump
                // to the deleted instruction now lands on the one after it).
                for j in 0..i {
                    let x = &mut p.insns[j];
                    if x.is_conditional_jump() {
                        if j + 1 + x.jt as usize > i {
                            x.jt -= 1;
                        }
                        if j + 1 + x.jf as usize > i {
                            x.jf -= 1;
                        }
                    } else if x.is_ja() && j + 1 + x.k as usize > i {
                        x.k -= 1;
                    }
                }
                p.insns.remove(i);
                format!("insn {i} deleted")
            }
            7 => {
                // Swap two adjacent equality tests that jump to the same place when true and
                // fall through otherwise: the order of such tests does not matter.
                let next = match p.insns.get(i + 1) {
                    Some(&x) => x,
                    None => continue,
                };
                let is_test = |x: Insn| x.code == BPF_JMP | BPF_JEQ | BPF_K && x.jf == 0;
                if !is_test(insn) || !is_test(next) || insn.jt as usize != next.jt as usize + 1 {
                    continue;
                }
                p.insns[i] = Insn::jump(next.code, next.k, insn.jt, 0);
                p.insns[i + 1] = Insn::jump(insn.code, insn.k, next.jt, 0);
                format!("insns {i} and {} swapped", i + 1)
            }
            6 => {
                // Retarget a branch to another return of the same value: the same meaning
                // through different code, which the verifier must call equal.
                if !insn.is_conditional_jump() {
                    continue;
                }
                let taken = rng.chance(1, 2);
                let off = if taken { insn.jt } else { insn.jf } as usize;
                let target = p.insns[i + 1 + off];
                if target.code != BPF_RET | BPF_K {
                    continue;
                }
                let same: Vec<usize> = (i + 1..n.min(i + 257))
                    .filter(|&j| p.insns[j] == target && j != i + 1 + off)
                    .collect();
                if same.is_empty() {
                    continue;
                }
                let new = (rng.pick(&same) - i - 1) as u8;
                if taken {
                    p.insns[i].jt = new;
                } else {
                    p.insns[i].jf = new;
                }
                format!("insn {i}: branch moved to an equal return at +{new}")
            }
            _ => {
                if insn.code != BPF_LD | BPF_W | BPF_ABS {
                    continue;
                }
                p.insns[i].k = 4 * rng.below(16) as u32;
                format!("insn {i}: load offset {} -> {}", insn.k, p.insns[i].k)
            }
        };
        if p != *prog && validate(&p).is_ok() {
            return (p, what);
        }
    }
}

/// Boundary values of the constants each word is compared with (a forward scan of which
/// word, under which `AND` mask, A may hold), from both programs.
fn boundary_values(progs: &[&Program]) -> Vec<BTreeSet<u32>> {
    let mut per_word: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); 16];
    for prog in progs {
        let n = prog.len();
        let mut a_in: Vec<BTreeSet<(usize, u32)>> = vec![BTreeSet::new(); n + 1];
        for pc in 0..n {
            let insn = prog.insns[pc];
            let a = std::mem::take(&mut a_in[pc]);
            let mut out = a.clone();
            match class(insn.code) {
                BPF_LD if mode(insn.code) == BPF_ABS => {
                    out = BTreeSet::from([((insn.k / 4) as usize, u32::MAX)]);
                }
                BPF_ALU if insn.code == BPF_ALU | BPF_AND | BPF_K => {
                    out = a.iter().map(|&(w, m)| (w, m & insn.k)).collect();
                }
                BPF_LD | BPF_ALU | BPF_MISC => out.clear(),
                BPF_JMP if insn.is_conditional_jump() && src(insn.code) == BPF_K => {
                    let k = insn.k;
                    for &(w, m) in &a {
                        let c = &mut per_word[w];
                        if op(insn.code) == BPF_JSET {
                            c.extend([k, !k, k & k.wrapping_neg()]);
                        } else {
                            c.extend([k, k.wrapping_add(1), k.wrapping_sub(1)]);
                            c.insert(k ^ (m & m.wrapping_neg()));
                        }
                    }
                }
                _ => {}
            }
            if insn.is_ret() {
                continue;
            }
            match prog.jump_targets(pc) {
                Some((t, f)) => {
                    a_in[t].extend(out.iter().copied());
                    a_in[f].extend(out);
                }
                None => a_in[pc + 1].extend(out),
            }
        }
    }
    for c in &mut per_word {
        c.extend([0, u32::MAX]);
    }
    // x86_64 and x32 share a token and split at bit 30 of nr.
    per_word[0].extend([0x3fff_ffff, 0x4000_0000]);
    // An arch token neither program knows.
    per_word[1].insert(0x1234_5678);
    per_word
}

/// Runs both programs on every grid input (see the module docs); returns how many inputs.
fn cross_check_equal(a: &Program, b: &Program, what: &str) -> usize {
    let values = boundary_values(&[a, b]);
    let cand: Vec<Vec<u32>> = values.iter().map(|s| s.iter().copied().collect()).collect();
    if std::env::var_os("VERIFY_GRID_DEBUG").is_some() {
        eprintln!(
            "grid: {} arch values x {} nr values",
            cand[1].len(),
            cand[0].len()
        );
    }
    let mut runs = 0;
    for &arch in &cand[1] {
        for &nr in &cand[0] {
            let mut words: Words = [0; 16];
            words[0] = nr;
            words[1] = arch;
            dfs(a, b, &mut words, 0b11, &cand, &mut runs, what);
        }
    }
    runs
}

/// Varies, one after the other, each word the programs read on the current path.
fn dfs(
    a: &Program,
    b: &Program,
    words: &mut Words,
    fixed: u16,
    cand: &[Vec<u32>],
    runs: &mut usize,
    what: &str,
) {
    let ta = interp::trace_words(a, words).unwrap();
    let tb = interp::trace_words(b, words).unwrap();
    *runs += 1;
    assert_eq!(
        ta.ret, tb.ret,
        "wrong `equal` ({what}): the programs differ on {words:x?}"
    );
    let unread = (ta.words_read | tb.words_read) & !fixed;
    if unread == 0 {
        return;
    }
    let w = unread.trailing_zeros() as usize;
    let saved = words[w];
    for &v in &cand[w] {
        if v == saved {
            continue;
        }
        words[w] = v;
        dfs(a, b, words, fixed | 1 << w, cand, runs, what);
    }
    words[w] = saved;
    // The saved value (0) too, with this word now fixed.
    dfs_fixed(a, b, words, fixed | 1 << w, cand, runs, what);
}

fn dfs_fixed(
    a: &Program,
    b: &Program,
    words: &mut Words,
    fixed: u16,
    cand: &[Vec<u32>],
    runs: &mut usize,
    what: &str,
) {
    let ta = interp::trace_words(a, words).unwrap();
    let tb = interp::trace_words(b, words).unwrap();
    let unread = (ta.words_read | tb.words_read) & !fixed;
    if unread != 0 {
        dfs(a, b, words, fixed, cand, runs, what);
    }
}

#[derive(Default, Debug)]
struct Tally {
    equal: usize,
    different: usize,
    grid_inputs: usize,
}

/// Mutates `prog` `count` times and checks every verdict.
fn run(name: &str, prog: &Program, count: usize, seed: u64) -> Tally {
    let mut rng = Rng::new(seed);
    let mut tally = Tally::default();
    let opts = VerifyOptions::default();
    let start = Instant::now();
    for _ in 0..count {
        let (mutant, what) = mutate(&mut rng, prog);
        let what = format!("{name}: {what}");
        match equivalent(prog, &mutant, &opts).unwrap_or_else(|e| panic!("{what}: {e}")) {
            Verdict::Different(c) => {
                let ra = interp::eval(prog, &c.data).unwrap();
                let rb = interp::eval(&mutant, &c.data).unwrap();
                assert_eq!((ra, rb), (c.a, c.b), "{what}: counterexample {c:?}");
                assert_ne!(ra, rb, "{what}");
                tally.different += 1;
            }
            Verdict::Equal => {
                tally.grid_inputs += cross_check_equal(prog, &mutant, &what);
                tally.equal += 1;
            }
            Verdict::Unknown { reason } => panic!("{what}: unknown ({reason})"),
        }
    }
    eprintln!(
        "{name}: {} instructions, {count} mutants: {} equal (cross-checked on {} inputs), {} different, in {:?}",
        prog.len(),
        tally.equal,
        tally.grid_inputs,
        tally.different,
        start.elapsed()
    );
    assert_eq!(tally.equal + tally.different, count);
    tally
}

fn libseccomp(profile: &str, arches: Option<&[&str]>, optimize: u32) -> Program {
    let mut p = load_profile(profile).unwrap();
    if let Some(list) = arches {
        let obj = p.as_object_mut().unwrap();
        obj.remove("archMap");
        obj.insert(
            "architectures".into(),
            list.iter().map(|&a| Value::from(a)).collect(),
        );
    }
    let opts = ProfileOptions {
        optimize,
        ..ProfileOptions::default()
    };
    build_filter(&p, &opts).unwrap().program
}

#[test]
fn docker_default_mutants() {
    // x86_64 + x86 + x32 (Docker's archMap on this host).
    let mut total = Tally::default();
    for (optimize, seed) in [(1, 1), (2, 2)] {
        let prog = libseccomp("oci/docker-default.json", None, optimize);
        let t = run(&format!("docker-default/opt{optimize}"), &prog, 500, seed);
        total.equal += t.equal;
        total.different += t.different;
    }
    // Both kinds of verdict occur often enough to mean something.
    assert!(total.equal >= 50 && total.different >= 500, "{total:?}");
}

#[test]
fn podman_default_mutants_on_x86_64_only() {
    for (optimize, seed) in [(1, 3), (2, 4)] {
        let prog = libseccomp(
            "oci/podman-containers-common-default.json",
            Some(&["SCMP_ARCH_X86_64"]),
            optimize,
        );
        let t = run(
            &format!("podman-default[x86_64]/opt{optimize}"),
            &prog,
            400,
            seed,
        );
        assert!(t.equal >= 20, "{t:?}");
    }
}

#[test]
fn smaller_profiles_mutants_on_several_arch_sets() {
    let arch_sets: [Option<&[&str]>; 3] = [
        None,
        Some(&["SCMP_ARCH_X86_64"]),
        Some(&["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_AARCH64"]),
    ];
    let mut seed = 10;
    for profile in [
        "oci/runc-integration-seccomp_syscall_test1.json",
        "oci/spo-nginx-1.19.1.json",
        "oci/seccompagent-notify-dangerous.json",
    ] {
        for arches in arch_sets {
            for optimize in [1, 2] {
                seed += 1;
                let prog = libseccomp(profile, arches, optimize);
                let name = format!("{profile}{arches:?}/opt{optimize}");
                run(&name, &prog, 100, seed);
            }
        }
    }
}
