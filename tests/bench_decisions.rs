//! The benchmark measures a rewritten copy of each filter (returns other than ALLOW become
//! ERRNO, `--no-cache` prepends a load). This test asks the running kernel, through the
//! kernel oracle, which return instruction the *source* filter and the *bench* program take
//! for every workload syscall exactly as the benchmark makes it, and checks that the rewrite
//! does not change the path: the bench program returns at the same instruction (shifted by
//! its prefix), ALLOW stays exactly ALLOW, every other decision becomes an ERRNO marker
//! (>= 1024) that identifies the source return one to one. Not a timing test.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use secopt::arch::Arch;
use secopt::bench::{self, workload, BenchOptions, Plan, Variant, VariantKind};
use secopt::bpf::insn::*;
use secopt::bpf::{Action, Insn, Program, RetVal};
use secopt::compile::{self, CompileOptions};
use secopt::kernel::{Call, Entry, Oracle};
use secopt::policy::{self, ResolveOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

fn resolve_options() -> ResolveOptions {
    ResolveOptions {
        native: Some(Arch::X86_64),
        kernel: Some(policy::KernelVersion::new(6, 18)),
        ..Default::default()
    }
}

/// secopt's (and with the `libseccomp` feature, libseccomp's) filters for a policy.
fn profile_variants(policy: &policy::Policy) -> Vec<Variant> {
    let resolved = policy::resolve(policy, &resolve_options()).unwrap();
    #[cfg_attr(not(feature = "libseccomp"), allow(unused_mut))]
    let mut out = vec![Variant::program(
        "secopt",
        VariantKind::Secopt,
        compile::compile(&resolved, &CompileOptions::default())
            .unwrap()
            .into_program(),
    )];
    #[cfg(feature = "libseccomp")]
    out.extend(bench::peers::libseccomp_variants(policy, &resolved).unwrap());
    out
}

fn docker() -> Vec<Variant> {
    let bytes = std::fs::read(shared("profiles/oci/docker-default.json")).unwrap();
    profile_variants(&policy::oci::parse(&bytes, "docker-default.json").unwrap())
}

fn firecracker_vcpu() -> Vec<Variant> {
    let path = shared("profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json");
    let bytes = std::fs::read(path).unwrap();
    let mut threads = policy::firecracker::parse(&bytes, "fc.json", Arch::X86_64).unwrap();
    profile_variants(&threads.remove("vcpu").unwrap())
}

/// A hand-written filter with every kind of return: KILL_PROCESS, KILL_THREAD, TRAP,
/// TRACE, LOG, USER_NOTIF, ERRNO, ALLOW with data, and RET A of a computed value.
fn every_return() -> Variant {
    let jeq = |k: u32, jt: u8, jf: u8| Insn::jump(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf);
    let prog = Program::new(vec![
        Insn::ld_abs(0),                                // 0: nr
        jeq(0, 10, 0),                                  // 1: read → 12 ALLOW
        jeq(1, 10, 0),                                  // 2: write → 13 ERRNO(5)
        jeq(3, 10, 0),                                  // 3: close → 14 KILL_PROCESS
        jeq(5, 10, 0),                                  // 4: fstat → 15 TRAP
        jeq(8, 10, 0),                                  // 5: lseek → 16 TRACE(3)
        jeq(9, 10, 0),                                  // 6: mmap → 17 LOG
        jeq(10, 10, 0),                                 // 7: mprotect → 18 USER_NOTIF
        jeq(39, 10, 0),                                 // 8: getpid → 19 ALLOW(7)
        jeq(16, 0, 2),                                  // 9: ioctl → RET A, else 12
        Insn::ld_abs(24),                               // 10: args[1].lo
        Insn::stmt(BPF_RET | BPF_A, 0),                 // 11: the request as a return value
        Insn::ret(RetVal::ALLOW.0),                     // 12
        Insn::ret(RetVal::errno(5).0),                  // 13
        Insn::ret(RetVal::KILL_PROCESS.0),              // 14
        Insn::ret(RetVal::new(Action::Trap, 0).0),      // 15
        Insn::ret(RetVal::new(Action::Trace, 3).0),     // 16
        Insn::ret(RetVal::LOG.0),                       // 17
        Insn::ret(RetVal::new(Action::UserNotif, 0).0), // 18
        Insn::ret(RetVal::new(Action::Allow, 7).0),     // 19
    ]);
    Variant::program("every-return", VariantKind::File { path: "-".into() }, prog)
}

fn json_workload(text: &str) -> workload::Workload {
    workload::parse_json(text.as_bytes(), "t.json", &Default::default()).unwrap()
}

fn strace(name: &str) -> workload::Workload {
    let bytes = std::fs::read(shared(&format!("workloads/{name}"))).unwrap();
    workload::parse_file(&bytes, name, &Default::default()).unwrap()
}

/// The check itself, on the kernel's answers.
fn check(plan: &Plan, oracle: &Oracle) -> usize {
    let calls: Vec<Call> = plan
        .probes
        .iter()
        .map(|p| {
            Call::new(
                Entry::Native,
                plan.workload.entries[p.entry].nr as i32,
                p.regs,
            )
        })
        .collect();
    let mut checked = 0;
    for pv in &plan.variants {
        let (Some(source), Some(bench)) = (&pv.variant.source, &pv.bench) else {
            continue;
        };
        let name = &pv.variant.name;
        let src = oracle.run(source, &calls).unwrap();
        let got = oracle.run(&bench.program, &calls).unwrap();
        // Source return index → the bench value seen for it (must be one value per index,
        // and different indices of non-ALLOW returns must give different markers).
        let mut marker_of: BTreeMap<usize, RetVal> = BTreeMap::new();
        for ((p, s), b) in plan.probes.iter().zip(&src).zip(&got) {
            let label = &plan.workload.entries[p.entry].label;
            let spc = s.ret_index.expect("no filter here divides by zero");
            let bpc = b.ret_index.expect("the bench program is never killed");
            let ret_a = source.insns[spc].code == BPF_RET | BPF_A;
            if ret_a {
                // Through the epilogue: the last 4 instructions.
                assert!(
                    bpc >= bench.program.len() - 2,
                    "{name} {label}: RET A at {bpc}"
                );
            } else {
                assert_eq!(bpc, spc + bench.prefix, "{name} {label}: path changed");
            }
            if s.value.action() == Some(Action::Allow) {
                assert_eq!(b.value, s.value, "{name} {label}: ALLOW must stay as it is");
            } else {
                assert_eq!(b.value.action(), Some(Action::Errno), "{name} {label}");
                assert!(b.value.data() >= 1024, "{name} {label}: {}", b.value);
                if !ret_a {
                    let prev = marker_of.insert(spc, b.value);
                    assert!(prev.is_none() || prev == Some(b.value), "{name} {label}");
                }
            }
            checked += 1;
        }
        let mut markers: Vec<RetVal> = marker_of.values().copied().collect();
        markers.sort();
        markers.dedup();
        assert_eq!(
            markers.len(),
            marker_of.len(),
            "{name}: markers are not one to one"
        );
    }
    // The library's own kernel check agrees.
    assert_eq!(plan.check_decisions_on_kernel().unwrap(), checked);
    checked
}

#[test]
fn every_variant_decides_every_workload_syscall_as_its_source_filter() {
    let oracle = Oracle::new().expect("seccomp must work on the development machine");
    let mut total = 0;
    for no_cache in [false, true] {
        let options = BenchOptions {
            no_cache,
            ..BenchOptions::default()
        };
        for w in [
            strace("nginx-wrk.strace-c.txt"),
            strace("redis-benchmark.strace-c.txt"),
            strace("gvisor-sentry-postgres.strace-c.txt"),
            workload::probe_list("harmless-all", Arch::X86_64).unwrap(),
        ] {
            let plan = bench::plan(w, docker(), options.clone()).unwrap();
            total += check(&plan, &oracle);
        }
        let vcpu = workload::probe_list("firecracker-vcpu", Arch::X86_64).unwrap();
        let plan = bench::plan(vcpu, firecracker_vcpu(), options.clone()).unwrap();
        // KVM_RUN is allowed by the vcpu filter; the other mix entries too.
        let cost = plan.cost(plan.variants.len() - 1, 0);
        assert_eq!(cost.ret, RetVal::ALLOW);
        total += check(&plan, &oracle);
        let w = json_workload(
            r#"{"read": 1, "write": 1, "close": 1, "fstat": 1, "lseek": 1, "mmap": 1,
                "mprotect": 1, "getpid": 1, "brk": 1,
                "ioctl(ALLOW)": {"syscall": "ioctl", "count": 1, "args": [null, "0x7fff0000"]},
                "ioctl(ERRNO)": {"syscall": "ioctl", "count": 1, "args": [null, "0x00050009"]},
                "ioctl(KILL)": {"syscall": "ioctl", "count": 1, "args": [null, "0x80000000"]}}"#,
        );
        let plan = bench::plan(w, vec![every_return()], options).unwrap();
        total += check(&plan, &oracle);
    }
    assert!(total > 1000, "only {total} checks");
}

/// A stack measured as the kernel runs it (`--bpf NAME=A+B`): the child installs both bench
/// programs, oldest first. Worked out by hand: the oldest filter allows read, close gets
/// ERRNO(7) and write ERRNO(5); the newest gives write ERRNO(6) and fstat KILL_PROCESS. Every
/// call runs both filters (steps add up); the cache skips only what both allow by number; the
/// kernel's answer is the lowest action, the newest on a tie — and the running kernel, with
/// both bench programs installed, must return each call the marker the plan predicts, which
/// is the one of the filter whose answer won.
#[test]
fn a_stack_is_measured_as_the_kernel_runs_it() {
    let assemble = |s: &str| secopt::bpf::asm::assemble(s).unwrap();
    let oldest = assemble(
        "ld [nr]\njeq #0, allow\njeq #1, e5\njeq #3, e7\nallow: ret ALLOW\ne5: ret ERRNO(5)\ne7: ret ERRNO(7)\n",
    );
    let newest = assemble(
        "ld [nr]\njeq #1, e6\njeq #5, kill\nret ALLOW\ne6: ret ERRNO(6)\nkill: ret KILL_PROCESS\n",
    );
    let w = json_workload(r#"{"read": 1, "write": 1, "close": 1, "fstat": 1, "getpid": 1}"#);
    let kind = VariantKind::File { path: "a+b".into() };
    let plan = bench::plan(
        w,
        vec![Variant::stack("stack", kind, vec![oldest, newest])],
        BenchOptions::default(),
    )
    .unwrap();
    let expected: BTreeMap<&str, (usize, bool, RetVal, usize)> = [
        // (steps: oldest + newest, cached, the stack's answer, which filter's marker: 0 oldest, 1 newest)
        ("read", (3 + 4, true, RetVal::ALLOW, 9)),
        ("write", (4 + 3, false, RetVal::errno(6), 1)),
        ("close", (5 + 4, false, RetVal::errno(7), 0)),
        ("fstat", (5 + 4, false, RetVal::KILL_PROCESS, 1)),
        ("getpid", (5 + 4, true, RetVal::ALLOW, 9)),
    ]
    .into();
    // `plan` puts the baselines (no filter, RET ALLOW) first.
    let v = plan
        .variants
        .iter()
        .position(|pv| pv.variant.name == "stack")
        .unwrap();
    let pv = &plan.variants[v];
    let bench_of = [&pv.below[0], pv.bench.as_ref().unwrap()];
    let results = plan.run_once(v).unwrap();
    for (p, probe) in plan.probes.iter().enumerate() {
        let entry = &plan.workload.entries[probe.entry];
        let (steps, cached, ret, winner) = expected[entry.syscall.as_str()];
        let cost = plan.cost(v, p);
        assert_eq!(
            (cost.steps, cost.cached, cost.ret),
            (steps, cached, ret),
            "{}",
            entry.label
        );
        let rax = results[p] as i64;
        if winner == 9 {
            assert!(!(-4095..=-1024).contains(&rax), "{}: {rax}", entry.label);
        } else {
            let data = secopt::bpf::SeccompData::new(0xc000_003e, entry.nr as i32, probe.regs);
            let marker = secopt::bpf::interp::eval(&bench_of[winner].program, &data).unwrap();
            assert_eq!(marker.action(), Some(Action::Errno), "{}", entry.label);
            assert_eq!(
                rax,
                -i64::from(marker.data()),
                "{}: the kernel's answer",
                entry.label
            );
            assert_eq!(
                cost.expected,
                bench::Expected::Marker(marker.data() as u16),
                "{}: the plan's prediction",
                entry.label
            );
        }
    }
    // The oracle checks each filter of the stack on its own (and RET ALLOW's).
    assert_eq!(
        plan.check_decisions_on_kernel().unwrap(),
        3 * plan.probes.len()
    );
}
