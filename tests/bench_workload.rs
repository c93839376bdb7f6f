//! Workload input on the real `strace -c` files in ../shared/workloads: row counts, totals
//! and individual counts read off the files by hand; numbers are those of the x86_64 syscall
//! table (arch/x86/entry/syscalls/syscall_64.tbl).

use secopt::arch::Arch;
use secopt::bench::workload::{self, WorkloadOptions};
use secopt::bench::{self, BenchError, BenchOptions, UnknownWorkloadName};
use std::path::PathBuf;

fn shared(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/workloads")
        .join(name)
}

fn load(name: &str) -> workload::Workload {
    let bytes = std::fs::read(shared(name)).unwrap();
    workload::parse_file(&bytes, name, &WorkloadOptions::default()).unwrap()
}

fn count(w: &workload::Workload, syscall: &str) -> u64 {
    w.entries
        .iter()
        .find(|e| e.syscall == syscall)
        .unwrap_or_else(|| panic!("{syscall} missing"))
        .count
}

#[test]
fn redis_benchmark() {
    let w = load("redis-benchmark.strace-c.txt");
    assert_eq!(w.entries.len(), 12);
    // The file's own `total` row; the rows add up to it, so nothing is noted.
    assert_eq!(w.total_calls(), 361_331);
    assert!(w.notes.is_empty(), "{:?}", w.notes);
    assert_eq!(count(&w, "read"), 175_926);
    assert_eq!(count(&w, "write"), 175_611);
    assert_eq!(count(&w, "mmap"), 1);
    let futex = &w.entries[0];
    assert_eq!(
        (futex.syscall.as_str(), futex.nr, futex.count),
        ("futex", 202, 19)
    );
    assert!(w.entries.iter().all(|e| e.arch == Arch::X86_64));
}

#[test]
fn nginx_wrk() {
    let w = load("nginx-wrk.strace-c.txt");
    assert_eq!(w.entries.len(), 57);
    assert_eq!(w.total_calls(), 240_129);
    assert!(w.notes.is_empty(), "{:?}", w.notes);
    // `wait4` has errors (1), `writev` an empty errors cell.
    assert_eq!(count(&w, "wait4"), 4);
    assert_eq!(count(&w, "writev"), 113_693);
    assert_eq!(count(&w, "recvfrom"), 113_714);
    assert_eq!(count(&w, "rt_sigreturn"), 4);
    assert_eq!(count(&w, "execve"), 1);
    let writev = w.entries.iter().find(|e| e.syscall == "writev").unwrap();
    assert_eq!(writev.nr, 20);
}

#[test]
fn gvisor_sentry_with_elided_rows() {
    let w = load("gvisor-sentry-postgres.strace-c.txt");
    assert_eq!(w.entries.len(), 25);
    // The rows shown add up to 1,552,184; the table's total says 1,552,214 (rows elided in
    // the published table). Both are reported, nothing is invented.
    assert_eq!(w.total_calls(), 1_552_184);
    assert_eq!(w.notes.len(), 1);
    assert!(
        w.notes[0].contains("1552214") && w.notes[0].contains("1552184"),
        "{}",
        w.notes[0]
    );
    assert_eq!(count(&w, "futex"), 870_063);
    assert_eq!(count(&w, "nanosleep"), 275_649);
    assert_eq!(count(&w, "newfstatat"), 10);
}

#[test]
fn workload_syscalls_without_a_harmless_invocation_are_listed_as_skipped() {
    // nginx: rt_sigreturn (4 calls) cannot be made harmlessly; everything else can.
    let w = load("nginx-wrk.strace-c.txt");
    let plan = bench::plan(w, vec![], BenchOptions::default()).unwrap();
    let skipped: Vec<(&str, u64)> = plan
        .skipped
        .iter()
        .map(|s| (s.syscall.as_str(), s.count))
        .collect();
    assert_eq!(skipped, [("rt_sigreturn", 4)]);
    assert_eq!(plan.probes.len(), 56);
    assert!(plan.skipped[0].reason.contains("signal frame"));
    // gVisor: rt_sigreturn again; tgkill and getpid are made (tgkill with signal 0).
    let g = bench::plan(
        load("gvisor-sentry-postgres.strace-c.txt"),
        vec![],
        BenchOptions::default(),
    )
    .unwrap();
    assert_eq!(g.skipped.len(), 1);
    assert_eq!(g.skipped[0].syscall, "rt_sigreturn");
}

#[test]
fn unknown_names_and_negative_counts_are_errors() {
    let text = "% time     seconds  usecs/call     calls    errors syscall\n\
------ ----------- ----------- --------- --------- ----------------\n\
 50.00    0.000001           1        10           read\n\
 50.00    0.000001           1         3           frob\n";
    let e =
        workload::parse_strace_summary(text, "mine.txt", &WorkloadOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "mine.txt: unknown syscalls: frob (x86_64, line 4)"
    );
    // The names come as data, for an embedder to act on without parsing the message.
    let BenchError::UnknownSyscalls { unknown, .. } = e else {
        panic!("{e:?}")
    };
    assert_eq!(
        unknown,
        [UnknownWorkloadName {
            name: "frob".into(),
            arch: Arch::X86_64,
            place: "line 4".into()
        }]
    );
    let e = workload::parse_json(br#"{"read": -5}"#, "w.json", &WorkloadOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("negative call count -5"), "{e}");
    // Per-ABI sections are not a workload format; the error says how to write one.
    let e = workload::parse_json(
        br#"{"x86_64": {"read": 100}}"#,
        "w.json",
        &WorkloadOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("w.json: $.x86_64: missing \"count\"")
            && e.to_string().contains(r#""arch": "x86_64", "count": 100"#),
        "{e}"
    );
}

#[test]
fn chosen_arguments_are_used_where_choosable_and_noted_where_not() {
    let opts = WorkloadOptions::default();
    // ioctl's request may be chosen; its descriptor may not.
    let ok = workload::parse_json(
        br#"{"ioctl": {"count": 3, "args": [null, "0xae80"]}}"#,
        "w.json",
        &opts,
    )
    .unwrap();
    let plan = bench::plan(ok, vec![], BenchOptions::default()).unwrap();
    assert_eq!(plan.probes[0].regs[..2], [0x7fff_ffff, 0xae80]);
    assert!(plan.notes.is_empty(), "{:?}", plan.notes);
    // A recorded descriptor (what `secopt record` captures) is not an error: the call is made
    // with the invalid descriptor that keeps it harmless, the request as recorded, and the
    // report says so.
    let recorded = workload::parse_json(
        br#"{"ioctl": {"count": 3, "args": [3, "0xae80"]}}"#,
        "w.json",
        &opts,
    )
    .unwrap();
    let plan = bench::plan(recorded, vec![], BenchOptions::default()).unwrap();
    assert_eq!(plan.probes[0].regs[..2], [0x7fff_ffff, 0xae80]);
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("args[0]") && n.contains("measured with the harmless")),
        "{:?}",
        plan.notes
    );
}
