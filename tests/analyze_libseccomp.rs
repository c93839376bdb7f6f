//! Acceptance test of the per-syscall analysis on libseccomp's own filters for Docker's default
//! profile (x86_64 + x86 + x32; linear and binary-tree layouts).
//!
//! The reference is the interpreter run on enough inputs to cover every feasible path: for the
//! words a syscall's path reads, the cartesian product of candidate values taken from the
//! program's own comparisons (found by a syntactic scan, not by the analysis), ±1, 0 and
//! `u32::MAX`. Min/max steps, words read and return values seen must *equal* what the analysis
//! claims, and the analysis must claim exactness. Facts known from the profile itself (what
//! Docker allows or denies) are checked on top.

mod common;

use common::libseccomp_profiles::{
    build_filter, docker_default, load_profile, LibseccompFilter, ProfileOptions,
};
use libseccomp::{ScmpArch, ScmpSyscall};
use secopt::arch::Arch;
use secopt::bpf::analysis::{Analyzer, Budget, NrSet, SyscallPaths};
use secopt::bpf::insn::*;
use secopt::bpf::{interp, Program, RetVal, SeccompData, Words};
use std::collections::BTreeSet;
use std::time::Instant;

const ARCHES: [Arch; 3] = [Arch::X86_64, Arch::X86, Arch::X32];
/// Word index of `args[0].lo` / `args[0].hi` on a little-endian machine.
const ARG0_LO: u16 = 1 << 4;
const ARG0_HI: u16 = 1 << 5;
const NR_AND_ARCH: u16 = 0b11;

/// Candidate values per word: every constant the program compares a word (possibly masked with
/// `AND K`) against, found by a forward scan of which word A may hold at each instruction.
fn candidates(prog: &Program) -> Vec<BTreeSet<u32>> {
    let n = prog.len();
    // For each instruction, the (word, mask) values A may hold on entry.
    let mut a_in: Vec<BTreeSet<(usize, u32)>> = vec![BTreeSet::new(); n + 1];
    let mut per_word: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); 16];
    for pc in 0..n {
        let insn = prog.insns[pc];
        let a = a_in[pc].clone();
        let mut out = a.clone();
        match class(insn.code) {
            BPF_LD if mode(insn.code) == BPF_ABS => {
                out = BTreeSet::from([((insn.k / 4) as usize, u32::MAX)]);
            }
            BPF_LD => out.clear(),
            BPF_ALU if insn.code == BPF_ALU | BPF_AND | BPF_K => {
                out = a.iter().map(|&(w, m)| (w, m & insn.k)).collect();
            }
            BPF_ALU => out.clear(),
            BPF_MISC if miscop(insn.code) == BPF_TXA => out.clear(),
            BPF_JMP if insn.is_conditional_jump() && src(insn.code) == BPF_K => {
                let k = insn.k;
                for &(w, m) in &a {
                    let c = &mut per_word[w];
                    if op(insn.code) == BPF_JSET {
                        c.extend([k, !k, k & k.wrapping_neg()]);
                    } else {
                        c.extend([k, k.wrapping_add(1), k.wrapping_sub(1)]);
                        // Break a masked equality by flipping the lowest bit of the mask.
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
    for c in &mut per_word {
        c.extend([0, u32::MAX]);
    }
    per_word
}

/// What the interpreter does over the candidate inputs of one syscall.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    min_steps: usize,
    max_steps: usize,
    words_read: u16,
    returns: BTreeSet<RetVal>,
}

/// Runs the interpreter on the cartesian product of candidates over the words the runs read,
/// growing the set of words until no run reads a new one.
fn observe(prog: &Program, token: u32, nr: u32, cands: &[BTreeSet<u32>]) -> Observed {
    let mut words_to_vary: u16 = 0;
    loop {
        let varied: Vec<usize> = (2..16).filter(|w| words_to_vary & (1 << w) != 0).collect();
        let lists: Vec<Vec<u32>> = varied
            .iter()
            .map(|&w| cands[w].iter().copied().collect())
            .collect();
        let total: usize = lists.iter().map(Vec::len).product();
        assert!(total <= 2_000_000, "nr {nr:#x}: {total} combinations");
        let mut seen = Observed {
            min_steps: usize::MAX,
            max_steps: 0,
            words_read: 0,
            returns: BTreeSet::new(),
        };
        let mut words: Words = [0; 16];
        words[0] = nr;
        words[1] = token;
        for i in 0..total {
            let mut rest = i;
            for (slot, list) in varied.iter().zip(&lists) {
                words[*slot] = list[rest % list.len()];
                rest /= list.len();
            }
            let t = interp::trace_words(prog, &words).expect("valid program");
            seen.min_steps = seen.min_steps.min(t.steps);
            seen.max_steps = seen.max_steps.max(t.steps);
            seen.words_read |= t.words_read;
            seen.returns.insert(t.ret);
        }
        let wanted = seen.words_read & !NR_AND_ARCH;
        if wanted & !words_to_vary == 0 {
            return seen;
        }
        words_to_vary |= wanted;
    }
}

fn check_against_interpreter(
    label: &str,
    prog: &Program,
    cands: &[BTreeSet<u32>],
    token: u32,
    nr: u32,
    p: &SyscallPaths,
) {
    let seen = observe(prog, token, nr, cands);
    let claimed = Observed {
        min_steps: p.min_steps,
        max_steps: p.max_steps,
        words_read: p.words_read,
        returns: p.returns.clone(),
    };
    assert_eq!(claimed, seen, "{label}: nr {nr:#x} token {token:#x}");
    assert!(
        p.exact && p.returns_complete && !p.budget_exceeded,
        "{label}: nr {nr:#x}: {p:?}"
    );
    assert_eq!(
        p.depends_on_args,
        p.returns.len() > 1,
        "{label}: nr {nr:#x}"
    );
    // Every witness is a real input with the claimed behaviour.
    for (r, d) in &p.witnesses.returns {
        assert_eq!((d.arch, d.nr as u32), (token, nr));
        assert_eq!(interp::eval(prog, d).unwrap(), *r, "{label}: nr {nr:#x}");
    }
}

/// Numbers outside every table: past the end, far away, `-1`, and x32-looking numbers.
fn outside_numbers(arch: Arch) -> Vec<u32> {
    let table = arch.syscalls();
    let max = table.max_nr().expect("non-empty table");
    let mut v: Vec<u32> = (1..=3).map(|d| max + d).collect();
    v.extend([max + 1000, 0xffff_ffff, 0x7fff_ffff, 0x8000_0000]);
    match arch {
        Arch::X86_64 => v.extend([0x3fff_ffff, 1000]),
        Arch::X32 => v.extend([0x4000_0000 + 1000, 0x4000_0000 | 0x1ff]),
        _ => v.extend([0x4000_0000, 0x4000_0001]),
    }
    // A gap inside the table's range, if any.
    if let Some(gap) = (0..max)
        .map(|i| i | (max & 0x4000_0000))
        .find(|&n| table.name(n).is_none())
    {
        v.push(gap);
    }
    v.retain(|&n| table.name(n).is_none());
    v
}

fn check_filter(label: &str, filter: &LibseccompFilter) {
    let prog = &filter.program;
    let analyzer = Analyzer::new(prog).expect("libseccomp emits valid filters");
    let cands = candidates(prog);
    let budget = Budget::default();
    let mut checked = 0;
    for arch in ARCHES {
        let token = arch.token();
        let unnamed = analyzer.analyze(token, NrSet::Unnamed(arch), &budget);
        assert!(unnamed.exact, "{label}: unnamed {arch}: {unnamed:?}");
        for (r, d) in &unnamed.witnesses.returns {
            assert_eq!(interp::eval(prog, d).unwrap(), *r);
            assert!(arch.syscalls().name(d.nr as u32).is_none());
        }
        let named: Vec<u32> = arch.syscalls().iter().map(|(nr, _)| nr).collect();
        for nr in named.iter().copied().chain(outside_numbers(arch)) {
            let p = analyzer.syscall(token, nr, &budget);
            check_against_interpreter(label, prog, &cands, token, nr, &p);
            checked += 1;
            if arch.syscalls().name(nr).is_none() && Arch::of_data(token, nr) == Some(arch) {
                // One unnamed number's behaviour is within the analysis of all of them.
                assert!(p.returns.is_subset(&unnamed.returns), "{label}: {nr:#x}");
                assert!(p.min_steps >= unnamed.min_steps && p.max_steps <= unnamed.max_steps);
                assert_eq!(p.words_read & !unnamed.words_read, 0);
            }
        }
    }
    assert!(checked > 1000, "{label}: only {checked} numbers");
}

fn returns(p: &SyscallPaths) -> Vec<RetVal> {
    p.returns.iter().copied().collect()
}

/// Facts that follow from docker-default.json itself, independent of libseccomp and secopt.
fn check_profile_facts(label: &str, filter: &LibseccompFilter) {
    let prog = &filter.program;
    let a = Analyzer::new(prog).unwrap();
    let b = Budget::default();
    let x86_64 = Arch::X86_64.syscalls();
    let nr = |name: &str| x86_64.nr(name).unwrap();
    let token = Arch::X86_64.token();
    let eperm = RetVal::errno(1);
    assert_eq!(filter.default_action, eperm.0);

    // read: unconditionally allowed, so no argument word is looked at.
    let read = a.syscall(token, nr("read"), &b);
    assert_eq!(returns(&read), [RetVal::ALLOW], "{label}");
    assert_eq!(read.words_read & !NR_AND_ARCH, 0, "{label}");
    assert!(!read.depends_on_args);

    // socket, personality and clone are allowed only for some args[0] values.
    for name in ["socket", "personality", "clone"] {
        let p = a.syscall(token, nr(name), &b);
        assert_eq!(returns(&p), [eperm, RetVal::ALLOW], "{label}: {name}");
        assert!(p.depends_on_args, "{label}: {name}");
        assert_eq!(
            p.words_read & (ARG0_LO | ARG0_HI),
            ARG0_LO | ARG0_HI,
            "{label}: {name}"
        );
        assert_eq!(
            p.words_read & !(NR_AND_ARCH | ARG0_LO | ARG0_HI),
            0,
            "{label}: {name}"
        );
    }
    // ... and the profile says which: AF_VSOCK (40) is denied, AF_INET (2) allowed; clone with
    // CLONE_NEWUSER (0x10000000) is denied, a plain fork-like clone allowed.
    let run = |name: &str, arg0: u64| {
        interp::eval(
            prog,
            &SeccompData::new(token, nr(name) as i32, [arg0, 0, 0, 0, 0, 0]),
        )
        .unwrap()
    };
    assert_eq!(run("socket", 40), eperm);
    assert_eq!(run("socket", 2), RetVal::ALLOW);
    assert_eq!(run("clone", 0x1000_0000), eperm);
    assert_eq!(run("clone", 0x11), RetVal::ALLOW);
    assert_eq!(run("personality", 0xffff_ffff), RetVal::ALLOW);
    assert_eq!(run("personality", 1), eperm);

    // clone3 without CAP_SYS_ADMIN: ERRNO(ENOSYS) so that libcs fall back to clone.
    let clone3 = a.syscall(token, nr("clone3"), &b);
    assert_eq!(returns(&clone3), [RetVal::errno(38)], "{label}");
    assert_eq!(clone3.words_read & !NR_AND_ARCH, 0);
    // The i386 and x32 clone3 too.
    for arch in [Arch::X86, Arch::X32] {
        let p = a.syscall(arch.token(), arch.syscalls().nr("clone3").unwrap(), &b);
        assert_eq!(returns(&p), [RetVal::errno(38)], "{label}: {arch}");
    }

    // A number no table names gets the default action: every number below the end of the
    // tables that neither secopt's nor libseccomp's table names, and all numbers secopt's table
    // does not name (it must cover libseccomp's: on i386 the kernel names getrlimit (76) and
    // timer_settime (260), which Docker allows, though syscall-numbers 4.0.3 does not).
    assert_eq!(returns(&a.syscall(token, 1000, &b)), [eperm], "{label}");
    for (arch, scmp) in [
        (Arch::X86_64, ScmpArch::X8664),
        (Arch::X86, ScmpArch::X86),
        (Arch::X32, ScmpArch::X32),
    ] {
        let base = if arch == Arch::X32 { 0x4000_0000 } else { 0 };
        for nr in base..base + 600 {
            let libseccomp_names = ScmpSyscall::from_raw_syscall(nr as i32)
                .get_name_by_arch(scmp)
                .is_ok();
            if arch.syscalls().name(nr).is_none() && !libseccomp_names {
                assert_eq!(
                    returns(&a.syscall(arch.token(), nr, &b)),
                    [eperm],
                    "{label}: {arch} {nr:#x}"
                );
            }
        }
    }
    for arch in ARCHES {
        let p = a.analyze(arch.token(), NrSet::Unnamed(arch), &b);
        assert_eq!(
            returns(&p),
            [eperm],
            "{label}: unnamed {arch}: {:?}",
            p.witnesses.returns
        );
        assert!(!p.depends_on_args);
    }
    let x86_getrlimit = a.syscall(Arch::X86.token(), 76, &b);
    assert_eq!(returns(&x86_getrlimit), [RetVal::ALLOW], "{label}");

    // An architecture the filter does not list gets libseccomp's bad-arch action (KILL).
    assert_eq!(filter.bad_arch_action, RetVal::KILL_THREAD.0);
    let aarch64 = a.syscall(Arch::Aarch64.token(), 63, &b);
    assert_eq!(returns(&aarch64), [RetVal::KILL_THREAD], "{label}");
    assert_eq!(aarch64.words_read, 0b10, "only the arch is looked at");
}

#[test]
fn docker_default_linear() {
    let filter = docker_default(1);
    assert_eq!(
        filter.arches,
        ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]
    );
    check_profile_facts("linear", &filter);
    check_filter("linear", &filter);
}

#[test]
fn docker_default_binary_tree() {
    let filter = docker_default(2);
    check_profile_facts("tree", &filter);
    check_filter("tree", &filter);
}

/// The whole-program summary over three arches is exact within the default budget (the budget,
/// not a clock, bounds the work; the time is printed for the record: about 0.1 s for the
/// linear layout here; `cargo bench --bench compile` measures it, see docs/benchmarks.md).
#[test]
fn whole_program_summary_is_exact_within_the_default_budget() {
    for optimize in [1, 2] {
        let filter = docker_default(optimize);
        let a = Analyzer::new(&filter.program).unwrap();
        let start = Instant::now();
        let mut syscalls = 0;
        for arch in ARCHES {
            let s = a.arch_summary(arch, &Budget::default());
            assert!(s.unnamed.exact && s.syscalls.iter().all(|s| s.paths.exact));
            syscalls += s.syscalls.len();
        }
        let elapsed = start.elapsed();
        eprintln!(
            "optimize {optimize}: {} instructions, {syscalls} syscalls + 3 unnamed sets in {elapsed:?}",
            filter.program.len()
        );
    }
}

/// The rest of the OCI corpus, both layouts: the analysis must match the interpreter there too
/// (other operators: NE, GT, MASKED_EQ without valueTwo, OR-split rules, NOTIFY, no syscalls).
#[test]
fn other_oci_profiles() {
    let dir = common::libseccomp_profiles::profile_path("oci");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("profile corpus")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json") && n != "docker-default.json")
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for name in names {
        let profile = load_profile(&format!("oci/{name}")).unwrap();
        for optimize in [1, 2] {
            let opts = ProfileOptions {
                optimize,
                ..ProfileOptions::default()
            };
            let filter = build_filter(&profile, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
            check_filter(&format!("{name} optimize {optimize}"), &filter);
        }
    }
}

/// runc's rule conversion, seen through the filter libseccomp builds, with expectations read
/// off the profile text: conditions on one argument index are ORed, on distinct ones ANDed;
/// MASKED_EQ without valueTwo compares with 0; `errnoRet` is kept, and EPERM is the default.
#[test]
fn runc_integration_profile_semantics() {
    let profile = load_profile("oci/runc-integration-seccomp_syscall_test1.json").unwrap();
    for optimize in [1, 2] {
        let opts = ProfileOptions {
            optimize,
            ..ProfileOptions::default()
        };
        let filter = build_filter(&profile, &opts).unwrap();
        let prog = &filter.program;
        let token = Arch::X86_64.token();
        let nr = |name: &str| Arch::X86_64.syscalls().nr(name).unwrap() as i32;
        let run = |name: &str, args: [u64; 6]| {
            interp::eval(prog, &SeccompData::new(token, nr(name), args)).unwrap()
        };
        let (eperm, allow) = (RetVal::errno(1), RetVal::ALLOW);
        let a0 = |v: u64| [v, 0, 0, 0, 0, 0];
        assert_eq!(filter.default_action, eperm.0);
        assert_eq!(run("process_vm_readv", a0(100)), allow);
        assert_eq!(run("process_vm_readv", a0(9001)), allow);
        assert_eq!(run("process_vm_readv", a0(101)), eperm);
        assert_eq!(run("process_vm_writev", a0(1337)), RetVal::errno(55));
        assert_eq!(run("process_vm_writev", a0(2020)), RetVal::errno(55));
        assert_eq!(run("process_vm_writev", a0(1)), eperm);
        assert_eq!(run("ftruncate", [123456789, 1337, 0, 0, 0, 0]), allow);
        assert_eq!(run("ftruncate", [123456789, 1336, 0, 0, 0, 0]), eperm);
        assert_eq!(run("socket", [2, 1, 0x0ff, 0, 0, 0]), allow);
        assert_eq!(run("socket", [2, 1, 0x100, 0, 0, 0]), eperm);
        assert_eq!(run("dup3", a0(1)), allow);
        assert_eq!(run("dup3", a0(3)), allow);
        assert_eq!(run("dup3", a0(2)), eperm);

        let a = Analyzer::new(prog).unwrap();
        let b = Budget::default();
        let paths = |name: &str| a.syscall(token, nr(name) as u32, &b);
        let arg_words = |p: &SyscallPaths| p.words_read & !NR_AND_ARCH;
        let ftruncate = paths("ftruncate");
        assert_eq!(returns(&ftruncate), [eperm, allow]);
        assert_eq!(
            arg_words(&ftruncate),
            0b1111 << 4,
            "args[0] and args[1], both halves"
        );
        let writev = paths("process_vm_writev");
        assert_eq!(returns(&writev), [eperm, RetVal::errno(55)]);
        assert_eq!(arg_words(&writev), ARG0_LO | ARG0_HI);
        let socket = paths("socket");
        assert_eq!(arg_words(&socket), 0b11 << 8, "args[2] only");
        assert_eq!(returns(&paths("read")), [allow]);
    }
}
