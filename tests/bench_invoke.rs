//! Every harmless invocation, made for real on this kernel without a filter (in a child
//! process), returns what its table entry says: the failure it relies on (EBADF for the
//! never-open descriptor, ENOENT for the empty path, EINVAL for invalid flags, ...) or
//! success for query-only calls. The expected values come from the syscalls' man pages and
//! kernel sources, written into the table by hand; the kernel is the judge here.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use secopt::arch::Arch;
use secopt::bench::{self, invoke, workload, BenchOptions};

fn describe(rax: u64) -> String {
    let v = rax as i64;
    if (-4095..0).contains(&v) {
        format!("errno {}", -v)
    } else {
        format!("{v}")
    }
}

#[test]
fn every_harmless_invocation_does_what_its_entry_says() {
    let w = workload::probe_list("harmless-all", Arch::X86_64).unwrap();
    let plan = bench::plan(w, vec![], BenchOptions::default()).unwrap();
    assert_eq!(plan.variants[0].variant.name, "none");
    let got = plan.run_once(0).unwrap();
    let mut wrong = Vec::new();
    for (p, rax) in plan.probes.iter().zip(&got) {
        if !p.invocation.expect.accepts(*rax) {
            wrong.push(format!(
                "{}: {} (expected {:?})",
                p.invocation.name,
                describe(*rax),
                p.invocation.expect
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(got.len() > 150, "only {} invocations", got.len());
}

#[test]
fn a_few_results_by_hand() {
    // Values from the man pages: read(2) on a descriptor that is not open is EBADF (9);
    // mkdir(2) of "" is ENOENT (2); socket(2) with an invalid type is EINVAL (22);
    // wait4(-1, .., WNOHANG) without children is ECHILD (10); getpid(2) returns the pid.
    let names = ["read", "mkdir", "socket", "wait4", "getpid"];
    let json = format!(
        "{{{}}}",
        names
            .iter()
            .map(|n| format!("\"{n}\": 1"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let w = workload::parse_json(json.as_bytes(), "t.json", &Default::default()).unwrap();
    let plan = bench::plan(w, vec![], BenchOptions::default()).unwrap();
    let got = plan.run_once(0).unwrap();
    let errno = |e: i64| (-e) as u64;
    assert_eq!(got[..4], [errno(9), errno(2), errno(22), errno(10)]);
    assert!((got[4] as i64) > 1, "getpid returned {}", got[4] as i64);
    assert_ne!(
        got[4],
        u64::from(std::process::id()),
        "the child has its own pid"
    );
    // The never-open descriptor is really never open.
    assert_eq!(invoke::CLOSED_FD, 0x7fff_ffff);
}
