//! The Firecracker seccompiler JSON front end, on the real filters in
//! ../shared/profiles/firecracker. Per-thread counts are the ones SOURCES.md gives (and
//! were re-counted from the JSON by hand: entries, distinct syscalls, entries with args).

use proptest::prelude::*;
use secopt::arch::Arch;
use secopt::policy::{
    self, firecracker, firecracker::FirecrackerOptions, Action, Architectures, ArgCondition,
    ArgWidth, CmpOp, Dialect, Policy, PolicyError, ResolveOptions,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn profile_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles/firecracker")
        .join(name)
}

const PRODUCTION: &str = "firecracker-x86_64-unknown-linux-musl.json";

/// Every way secopt can read a Firecracker file.
const DIALECTS: [Dialect; 3] = [
    Dialect::Libseccomp,
    Dialect::RustVmmSeccompiler,
    Dialect::Firecracker110,
];

fn load(name: &str, dialect: Dialect) -> BTreeMap<String, Policy> {
    let bytes = std::fs::read(profile_path(name)).unwrap();
    let options = FirecrackerOptions {
        arch: Arch::X86_64,
        dialect,
    };
    firecracker::parse_with(&bytes, name, &options).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn production_filters_per_thread_counts() {
    for dialect in DIALECTS {
        let filters = load(PRODUCTION, dialect);
        assert_eq!(filters.keys().collect::<Vec<_>>(), ["api", "vcpu", "vmm"]);
        // (entries, distinct syscalls, entries with args) from SOURCES.md.
        for (thread, entries, distinct, with_args) in [
            ("vmm", 76, 50, 39),
            ("api", 36, 31, 14),
            ("vcpu", 49, 27, 29),
        ] {
            let p = &filters[thread];
            assert_eq!(p.default_action, Action::Trap, "{thread}");
            assert_eq!(p.dialect, dialect);
            assert_eq!(p.architectures, Architectures::Exactly(vec![Arch::X86_64]));
            assert!(p.warnings.is_empty(), "{thread}: {:?}", p.warnings);
            assert_eq!(p.rules.len(), entries, "{thread}");
            assert!(p.rules.iter().all(|r| r.action == Action::Allow));
            assert_eq!(
                p.rules.iter().filter(|r| !r.conditions.is_empty()).count(),
                with_args,
                "{thread}"
            );
            let r = policy::resolve(p, &ResolveOptions::default()).unwrap();
            assert_eq!(r.arches.len(), 1);
            let x = &r.arches[0];
            assert_eq!(x.arch, Arch::X86_64);
            assert_eq!(x.syscalls.len(), distinct, "{thread}");
            assert_eq!(x.syscalls.values().map(Vec::len).sum::<usize>(), entries);
            assert!(x.unknown.is_empty());
        }
        // The bad-arch action differs between the two compilers.
        let expected = match dialect {
            Dialect::Libseccomp => Action::KillThread,
            _ => Action::KillProcess,
        };
        assert_eq!(filters["vmm"].bad_arch_action, expected);
    }
}

#[test]
fn repeated_entries_are_ored_and_dword_eq_is_the_low_half() {
    let filters = load(PRODUCTION, Dialect::Libseccomp);
    let r = policy::resolve(&filters["vcpu"], &ResolveOptions::default()).unwrap();
    const NR_IOCTL: u32 = 16; // x86_64
    let ioctl = &r.arches[0].syscalls[&NR_IOCTL];
    assert_eq!(ioctl.len(), 18); // 18 separate ioctl entries in vcpu
                                 // The first is KVM_RUN = _IO(KVMIO, 0x80) = 0xAE80 = 44672 on argument 1, a dword.
    assert_eq!(
        ioctl[0].conditions,
        [ArgCondition::new(1, CmpOp::MaskedEq(0xFFFF_FFFF), 44672)]
    );
    let kvm_run = ioctl[0].conditions[0];
    assert!(kvm_run.matches(0xAE80));
    assert!(kvm_run.matches(0xFFFF_FFFF_0000_AE80)); // musl's garbage in the high half
    assert!(!kvm_run.matches(0xAE81));

    // mmap: PROT_EXEC (4) must be clear in argument 2.
    const NR_MMAP: u32 = 9;
    let mmap = &r.arches[0].syscalls[&NR_MMAP];
    let prot = mmap[0]
        .conditions
        .iter()
        .find(|c| c.index == 2)
        .copied()
        .unwrap();
    assert_eq!(prot, ArgCondition::new(2, CmpOp::MaskedEq(4), 0));
    assert!(prot.matches(3)); // PROT_READ|PROT_WRITE
    assert!(!prot.matches(7)); // ...|PROT_EXEC

    // rust-vmm: the same entry is a dword equality of the low halves.
    let filters = load(PRODUCTION, Dialect::RustVmmSeccompiler);
    let first = &filters["vcpu"]
        .rules
        .iter()
        .find(|r| r.syscall == "ioctl")
        .unwrap();
    assert_eq!(
        first.conditions,
        [ArgCondition {
            index: 1,
            width: ArgWidth::Dword,
            op: CmpOp::Eq,
            value: 44672
        }]
    );
}

#[test]
fn unimplemented_filters_are_empty() {
    let filters = load("firecracker-unimplemented.json", Dialect::Libseccomp);
    assert_eq!(filters.len(), 3);
    for p in filters.values() {
        assert_eq!(p.default_action, Action::Allow);
        assert!(p.rules.is_empty());
    }
}

fn one_filter(body: &str, dialect: Dialect) -> Result<Policy, PolicyError> {
    let json = format!(
        r#"{{"t": {{"default_action": "trap", "filter_action": "allow", "filter": [{body}]}}}}"#
    );
    let options = FirecrackerOptions {
        arch: Arch::X86_64,
        dialect,
    };
    firecracker::parse_with(json.as_bytes(), "fc.json", &options)
        .map(|mut m| m.remove("t").unwrap())
}

/// Firecracker's compiler passes `{"errno": N}` to libseccomp's `SCMP_ACT_ERRNO`, so the
/// errnos it takes are the ones libseccomp takes (oracle: the system libseccomp's
/// `seccomp_rule_add`); rust-vmm's own backend writes any 16 bits.
#[test]
fn errno_limits_follow_the_compiler() {
    use libseccomp::{ScmpAction, ScmpFilterContext, ScmpSyscall};
    let mut refused = 0;
    for n in [0u16, 1, 4094, 4095, 4096, 65535] {
        let mut ctx = ScmpFilterContext::new(ScmpAction::Trap).unwrap();
        let libseccomp = ctx
            .add_rule(
                ScmpAction::Errno(i32::from(n)),
                ScmpSyscall::from_name("dup").unwrap(),
            )
            .is_ok();
        refused += usize::from(!libseccomp);
        let json = format!(
            r#"{{"t": {{"default_action": "trap", "filter_action": {{"errno": {n}}}, "filter": [{{"syscall": "dup"}}]}}}}"#
        );
        for (dialect, expected) in [
            (Dialect::Libseccomp, libseccomp),
            (Dialect::RustVmmSeccompiler, true),
        ] {
            let options = FirecrackerOptions {
                arch: Arch::X86_64,
                dialect,
            };
            let parsed = firecracker::parse_with(json.as_bytes(), "fc.json", &options);
            assert_eq!(
                parsed.is_ok(),
                expected,
                "{n} {dialect:?}: {:?}",
                parsed.err()
            );
        }
    }
    assert_eq!(refused, 3, "libseccomp refuses 4095 and above");
}

#[test]
fn dword_semantics_differ_between_the_compilers() {
    let body =
        r#"{"syscall": "dup", "args": [{"index": 0, "type": "dword", "op": "gt", "val": 5}]}"#;
    // Firecracker (libseccomp): only `eq` is narrowed to 32 bits; `gt` compares 64 bits.
    let fc = one_filter(body, Dialect::Libseccomp).unwrap();
    let c = fc.rules[0].conditions[0];
    assert_eq!(c, ArgCondition::new(0, CmpOp::Gt, 5));
    assert!(c.matches(0x1_0000_0001));
    // rust-vmm: low halves only.
    let rv = one_filter(body, Dialect::RustVmmSeccompiler).unwrap();
    let c = rv.rules[0].conditions[0];
    assert!(!c.matches(0x1_0000_0001));
    assert!(c.matches(6));

    // A dword constant above 32 bits: rust-vmm truncates it, Firecracker masks it off.
    let body = r#"{"syscall": "dup", "args": [{"index": 0, "type": "dword", "op": "eq", "val": 4294967297}]}"#;
    for dialect in [Dialect::Libseccomp, Dialect::RustVmmSeccompiler] {
        let c = one_filter(body, dialect).unwrap().rules[0].conditions[0];
        assert!(c.matches(1), "{dialect:?}");
        assert!(c.matches(0xFFFF_FFFF_0000_0001), "{dialect:?}");
        assert!(!c.matches(2), "{dialect:?}");
    }
    // A qword `masked_eq` with constant bits outside the mask: both mask the constant.
    let body = r#"{"syscall": "dup", "args": [{"index": 0, "type": "qword", "op": {"masked_eq": 240}, "val": 31}]}"#;
    let c = one_filter(body, Dialect::Libseccomp).unwrap().rules[0].conditions[0];
    assert!(c.matches(0x10));
    assert!(c.matches(0x1F)); // low nibble outside the mask
    assert!(!c.matches(0x2F));
}

#[test]
fn rust_vmm_drops_unconditional_entries_shadowed_by_conditional_ones() {
    let body = r#"{"syscall": "dup"},
                  {"syscall": "dup", "args": [{"index": 0, "type": "dword", "op": "eq", "val": 1}]},
                  {"syscall": "close"}"#;
    let fc = one_filter(body, Dialect::Libseccomp).unwrap();
    assert_eq!(fc.rules.len(), 3);
    assert!(fc.warnings.is_empty());
    let rv = one_filter(body, Dialect::RustVmmSeccompiler).unwrap();
    assert_eq!(rv.rules.len(), 2);
    assert!(rv
        .rules
        .iter()
        .all(|r| r.syscall == "close" || !r.conditions.is_empty()));
    assert_eq!(rv.warnings.len(), 1);
    assert_eq!(rv.warnings[0].path, "$.t.filter[0]");
}

#[test]
fn other_targets() {
    let bytes = std::fs::read(profile_path(PRODUCTION)).unwrap();
    // The x86_64 file names syscalls aarch64 does not have (`stat` is the first). Firecracker's
    // compiler on aarch64 resolves them to libseccomp's pseudo-numbers, whose rules have no
    // effect: they are skipped. rust-vmm's table for aarch64 has no `stat`.
    let filters = firecracker::parse(&bytes, PRODUCTION, Arch::Aarch64).unwrap();
    let vmm = policy::resolve(
        &filters["vmm"],
        &ResolveOptions {
            native: Some(Arch::Aarch64),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        vmm.arches[0].unknown.iter().any(|n| n == "stat"),
        "{:?}",
        vmm.arches[0].unknown
    );
    let rust_vmm = FirecrackerOptions {
        arch: Arch::Aarch64,
        dialect: Dialect::RustVmmSeccompiler,
    };
    let e = firecracker::parse_with(&bytes, PRODUCTION, &rust_vmm).unwrap_err();
    assert_eq!(e.json_path(), Some("$.vmm.filter[0].syscall"), "{e}");
    assert!(
        e.to_string()
            .contains("unknown syscall \"stat\" on aarch64"),
        "{e}"
    );
    // Firecracker's compiler since 1.11 targets riscv64 too (src/seccompiler/src/types.rs
    // `TargetArch`), and 1.10's did not.
    assert!(firecracker::parse(&bytes, PRODUCTION, Arch::Riscv64).is_ok());
    let up_to_1_10 = FirecrackerOptions {
        arch: Arch::Riscv64,
        dialect: Dialect::Firecracker110,
    };
    let e = firecracker::parse_with(&bytes, PRODUCTION, &up_to_1_10).unwrap_err();
    assert!(matches!(e, PolicyError::InvalidOption(_)), "{e}");
    // The message names the file, then the compiler in words, not a Rust identifier.
    assert_eq!(
        e.to_string(),
        format!(
            "{PRODUCTION}: Firecracker 1.10's seccompiler targets x86_64 or aarch64, not riscv64"
        ),
    );
    let riscv = FirecrackerOptions {
        arch: Arch::Riscv64,
        dialect: Dialect::RustVmmSeccompiler,
    };
    let filters = firecracker::parse_with(br#"{"a": {"mismatch_action": {"errno": 38}, "match_action": "log", "filter": [{"syscall": "read"}]}}"#, "r.json", &riscv).unwrap();
    assert_eq!(filters["a"].default_action, Action::Errno(38));
    assert_eq!(filters["a"].rules[0].action, Action::Log);
}

/// Firecracker 1.10's `seccompiler-bin` reads the file as the rust-vmm crate does except in
/// these points; what it does with each was seen running v1.10.1's own binary (built from the
/// tag, `tests/data/firecracker/README.md`), and its sources say why
/// (src/seccompiler/src/{compiler,backend}.rs).
#[test]
fn firecracker_1_10_reads_the_file_as_its_own_compiler() {
    use Dialect::*;
    let cond = r#"[{"index": 0, "type": "dword", "op": "eq", "val": 1}]"#;
    // `"args": []` is an entry without `args` (a rule with no conditions, which matches
    // every call); the crate refuses it.
    let p = one_filter(r#"{"syscall": "dup", "args": []}"#, Firecracker110).unwrap();
    assert_eq!(p.rules.len(), 1);
    assert!(p.rules[0].conditions.is_empty());
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    invalid(
        r#"{"syscall": "dup", "args": []}"#,
        RustVmmSeccompiler,
        "$.t.filter[0].args",
        "empty `args`",
    );
    // An entry without `args` beside any other entry of its syscall: `ConflictingRules`
    // (backend.rs `SeccompFilter::validate`), in either order, with `[]`, or twice. The
    // crate keeps the entries with `args` (with a warning); libseccomp ORs them all.
    for (body, at, first) in [
        (
            format!(r#"{{"syscall": "dup"}}, {{"syscall": "dup", "args": {cond}}}"#),
            1,
            0,
        ),
        (
            format!(
                r#"{{"syscall": "dup", "args": {cond}}}, {{"syscall": "close"}}, {{"syscall": "dup", "args": []}}"#
            ),
            2,
            0,
        ),
        (
            r#"{"syscall": "dup"}, {"syscall": "dup"}"#.to_string(),
            1,
            0,
        ),
        (
            format!(
                r#"{{"syscall": "close"}}, {{"syscall": "dup", "args": []}}, {{"syscall": "dup", "args": {cond}}}"#
            ),
            2,
            1,
        ),
    ] {
        let e = one_filter(&body, Firecracker110).unwrap_err().to_string();
        assert!(e.starts_with(&format!("fc.json: $.t.filter[{at}]: \"dup\" has an entry without conditions and another entry (also at $.t.filter[{first}])")), "{e}");
        assert!(e.contains("conflicting rules"), "{e}");
        assert!(one_filter(&body, Libseccomp).unwrap().warnings.is_empty());
        let crate_reading = one_filter(&body, RustVmmSeccompiler);
        assert!(
            crate_reading.is_err() == body.contains("[]"),
            "{body}: {crate_reading:?}"
        );
    }
    // Entries that all have `args` are ORed, as everywhere; so are entries of other names.
    let p = one_filter(&format!(r#"{{"syscall": "dup", "args": {cond}}}, {{"syscall": "dup", "args": {cond}}}, {{"syscall": "close"}}"#), Firecracker110).unwrap();
    assert_eq!(p.rules.len(), 3);
    // Only `default_action` and `filter_action` (serde's `deny_unknown_fields`).
    let aliased = br#"{"t": {"mismatch_action": "trap", "filter_action": "allow", "filter": []}}"#;
    let options = |dialect| FirecrackerOptions {
        arch: Arch::X86_64,
        dialect,
    };
    let e = firecracker::parse_with(aliased, "fc.json", &options(Firecracker110)).unwrap_err();
    assert_eq!(e.json_path(), Some("$.t.mismatch_action"), "{e}");
    assert!(
        e.to_string().contains("unknown field \"mismatch_action\""),
        "{e}"
    );
    assert!(firecracker::parse_with(aliased, "fc.json", &options(RustVmmSeccompiler)).is_ok());
    // No `user_notif`.
    let notif =
        br#"{"t": {"default_action": "trap", "filter_action": "user_notif", "filter": []}}"#;
    let e = firecracker::parse_with(notif, "fc.json", &options(Firecracker110)).unwrap_err();
    assert_eq!(e.json_path(), Some("$.t.filter_action"), "{e}");
    assert!(firecracker::parse_with(notif, "fc.json", &options(RustVmmSeccompiler)).is_ok());
    // Its tables are Linux 5.10's: `process_madvise` (440) is its newest name, and the
    // x86_64 calls numbered later in a gap below it are not there either.
    assert!(one_filter(r#"{"syscall": "process_madvise"}"#, Firecracker110).is_ok());
    for name in [
        "epoll_pwait2",
        "landlock_create_ruleset",
        "futex_waitv",
        "uretprobe",
        "uprobe",
    ] {
        let body = format!(r#"{{"syscall": "{name}"}}"#);
        invalid(
            &body,
            Firecracker110,
            "$.t.filter[0].syscall",
            &format!("unknown syscall \"{name}\" on x86_64 in Firecracker 1.10's syscall table"),
        );
        assert!(one_filter(&body, RustVmmSeccompiler).is_ok(), "{name}");
    }
    assert_eq!(
        firecracker::FIRECRACKER_1_10_LAST_NR,
        Arch::X86_64.syscalls().nr("process_madvise").unwrap()
    );
    assert_eq!(
        firecracker::FIRECRACKER_1_10_LAST_NR,
        Arch::Aarch64.syscalls().nr("process_madvise").unwrap()
    );
    // x86_64 and aarch64 only (its `TargetArch`).
    let file = br#"{"t": {"default_action": "trap", "filter_action": "allow", "filter": [{"syscall": "read"}]}}"#;
    for (arch, takes) in [
        (Arch::X86_64, true),
        (Arch::Aarch64, true),
        (Arch::Riscv64, false),
    ] {
        let options = FirecrackerOptions {
            arch,
            dialect: Firecracker110,
        };
        let parsed = firecracker::parse_with(file, "fc.json", &options);
        assert_eq!(parsed.is_ok(), takes, "{arch}: {parsed:?}");
    }
}

fn invalid(body: &str, dialect: Dialect, path: &str, part: &str) {
    let e = one_filter(body, dialect).unwrap_err();
    assert_eq!(e.json_path(), Some(path), "{e}");
    assert!(
        e.to_string().starts_with(&format!("fc.json: {path}: ")),
        "{e}"
    );
    assert!(e.to_string().contains(part), "{e:?} lacks {part:?}");
}

#[test]
fn bad_input_is_reported_with_its_path() {
    use Dialect::*;
    let arg = |a: &str| format!(r#"{{"syscall": "dup", "args": [{a}]}}"#);
    invalid(
        r#"{"syscall": "no_such"}"#,
        Libseccomp,
        "$.t.filter[0].syscall",
        "unknown syscall \"no_such\" on x86_64",
    );
    invalid(
        r#"{"args": []}"#,
        Libseccomp,
        "$.t.filter[0].syscall",
        "missing",
    );
    invalid(
        &arg(r#"{"index": 6, "type": "dword", "op": "eq", "val": 1}"#),
        Libseccomp,
        "$.t.filter[0].args[0].index",
        "out of range",
    );
    invalid(
        &arg(r#"{"index": 0, "type": "word", "op": "eq", "val": 1}"#),
        Libseccomp,
        "$.t.filter[0].args[0].type",
        "\"dword\" or \"qword\"",
    );
    invalid(
        &arg(r#"{"index": 0, "type": "dword", "op": "equal", "val": 1}"#),
        Libseccomp,
        "$.t.filter[0].args[0].op",
        "unknown operator \"equal\"",
    );
    invalid(
        &arg(r#"{"index": 0, "type": "dword", "op": {"masked_eq": "4"}, "val": 1}"#),
        Libseccomp,
        "$.t.filter[0].args[0].op.masked_eq",
        "expected a non-negative integer",
    );
    invalid(
        &arg(r#"{"index": 0, "type": "dword", "op": {"masked_ne": 4}, "val": 1}"#),
        Libseccomp,
        "$.t.filter[0].args[0].op.masked_ne",
        "unknown operator",
    );
    invalid(
        &arg(r#"{"index": 0, "type": "dword", "op": "masked_eq", "val": 1}"#),
        Libseccomp,
        "$.t.filter[0].args[0].op",
        "needs a mask",
    );
    invalid(
        &arg(r#"{"index": 0, "type": "dword", "op": "eq", "val": -1}"#),
        Libseccomp,
        "$.t.filter[0].args[0].val",
        "non-negative",
    );
    invalid(
        &arg(r#"{"index": 0, "type": "dword", "op": "eq"}"#),
        Libseccomp,
        "$.t.filter[0].args[0].val",
        "missing",
    );
    invalid(
        &arg(
            r#"{"index": 0, "type": "dword", "op": "eq", "val": 1}, {"index": 0, "type": "dword", "op": "eq", "val": 2}"#,
        ),
        Libseccomp,
        "$.t.filter[0].args[1].index",
        "libseccomp refuses",
    );
    invalid(
        r#"{"syscall": "dup", "args": []}"#,
        RustVmmSeccompiler,
        "$.t.filter[0].args",
        "empty `args`",
    );
    invalid(
        r#"{"syscall": "dup", "agrs": []}"#,
        RustVmmSeccompiler,
        "$.t.filter[0].agrs",
        "unknown field",
    );
    invalid(
        r#"{"syscall": "dup", "comment": 5}"#,
        RustVmmSeccompiler,
        "$.t.filter[0].comment",
        "expected a string",
    );

    let filter = |head: &str| {
        let json = format!(r#"{{"t": {{{head}, "filter": [{{"syscall": "dup"}}]}}}}"#);
        firecracker::parse(json.as_bytes(), "fc.json", Arch::X86_64).unwrap_err()
    };
    let e = filter(r#""default_action": "allow", "filter_action": "allow""#);
    assert_eq!(e.json_path(), Some("$.t.filter_action"), "{e}");
    assert!(e.to_string().contains("equals the default action"), "{e}");
    let e = filter(r#""default_action": "alow", "filter_action": "allow""#);
    assert_eq!(e.json_path(), Some("$.t.default_action"), "{e}");
    assert!(e.to_string().contains("unknown action \"alow\""), "{e}");
    let e = filter(r#""default_action": {"errno": 65536}, "filter_action": "allow""#);
    assert_eq!(e.json_path(), Some("$.t.default_action.errno"), "{e}");
    let e = filter(r#""default_action": "user_notif", "filter_action": "allow""#);
    assert!(
        e.to_string()
            .contains("not supported by Firecracker's seccompiler"),
        "{e}"
    );
    let e = filter(r#""filter_action": "allow""#);
    assert_eq!(e.json_path(), Some("$.t.default_action"), "{e}");
    // The rust-vmm crate's names of the actions: Firecracker's own (libseccomp-based)
    // compiler does not read them, so without its own names the file is refused (v1.11.0's
    // `seccompiler-bin`: "missing field `default_action`"), and beside them they are ignored
    // (it takes the file; secopt warns). The crate reads either name, not both.
    let e = filter(r#""mismatch_action": "trap", "filter_action": "allow""#);
    assert_eq!(e.json_path(), Some("$.t.default_action"), "{e}");
    assert!(
        e.to_string()
            .contains("missing `default_action` (`mismatch_action` is the rust-vmm seccompiler crate's name for it"),
        "{e}"
    );
    let both = br#"{"t": {"default_action": "trap", "filter_action": "allow", "match_action": "trap", "filter": [{"syscall": "dup"}]}}"#;
    let p = &firecracker::parse(both, "fc.json", Arch::X86_64).unwrap()["t"];
    assert_eq!(
        (p.default_action, p.rules[0].action),
        (Action::Trap, Action::Allow)
    );
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert_eq!(p.warnings[0].path, "$.t.match_action");
    assert!(
        p.warnings[0].message.contains("unknown field"),
        "{:?}",
        p.warnings
    );
    let crate_reading = FirecrackerOptions {
        arch: Arch::X86_64,
        dialect: RustVmmSeccompiler,
    };
    let e = firecracker::parse_with(both, "fc.json", &crate_reading).unwrap_err();
    assert_eq!(e.json_path(), Some("$.t.match_action"), "{e}");
    assert!(e.to_string().contains("not both"), "{e}");

    let e = firecracker::parse(br#"[]"#, "fc.json", Arch::X86_64).unwrap_err();
    assert_eq!(e.json_path(), Some("$"));
    let e = firecracker::parse(
        br#"{"vmm": {"default_action": "trap"}, "vmm": {}}"#,
        "fc.json",
        Arch::X86_64,
    )
    .unwrap_err();
    assert!(e.to_string().contains("duplicate key \"vmm\""), "{e}");
    let e = firecracker::parse(br#"{"my thread": 7}"#, "fc.json", Arch::X86_64).unwrap_err();
    assert_eq!(e.json_path(), Some(r#"$["my thread"]"#), "{e}");
}

#[test]
fn unknown_keys_are_warnings_for_firecracker() {
    let p = one_filter(
        r#"{"syscall": "dup", "note": "x", "args": [{"index": 0, "type": "qword", "op": "ne", "val": 3, "extra": 1}]}"#,
        Dialect::Libseccomp,
    )
    .unwrap();
    let paths: Vec<&str> = p.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["$.t.filter[0].args[0].extra", "$.t.filter[0].note"]);
}

/// Every node of a JSON document, as JSON pointers.
fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, item) in map {
                pointers(
                    item,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

fn replacement(i: usize) -> serde_json::Value {
    use serde_json::json;
    let choices = [
        json!(null),
        json!(false),
        json!(-3),
        json!(0.5),
        json!(6),
        json!(u64::MAX),
        json!(""),
        json!("eq"),
        json!("dword"),
        json!({"masked_eq": 4}),
        json!({"errno": 1}),
        json!([]),
        json!({}),
        json!("kill_process"),
    ];
    choices[i % choices.len()].clone()
}

fn check(result: Result<BTreeMap<String, Policy>, PolicyError>) -> Result<(), TestCaseError> {
    match result {
        Ok(filters) => {
            for p in filters.values() {
                let _ = policy::resolve(p, &ResolveOptions::default());
            }
        }
        Err(PolicyError::Syntax { line, .. }) => prop_assert!(line >= 1),
        Err(PolicyError::Invalid { path, .. }) => prop_assert!(path.starts_with('$'), "{path}"),
        Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn byte_mutations_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
        dialect in 0..DIALECTS.len(),
    ) {
        let mut bytes = std::fs::read(profile_path(PRODUCTION)).unwrap();
        for (at, byte, kind) in edits {
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => { bytes.remove(i); }
            }
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        let options = FirecrackerOptions { arch: Arch::X86_64, dialect: DIALECTS[dialect] };
        check(firecracker::parse_with(&bytes, PRODUCTION, &options))?;
    }

    #[test]
    fn value_mutations_never_panic_and_name_the_place(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<usize>()), 1..4),
        dialect in 0..DIALECTS.len(),
    ) {
        let bytes = std::fs::read(profile_path(PRODUCTION)).unwrap();
        let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        for (at, choice) in edits {
            let mut all = Vec::new();
            pointers(&doc, String::new(), &mut all);
            let target = &all[at.index(all.len())];
            if let Some(slot) = doc.pointer_mut(target) {
                *slot = replacement(choice);
            }
        }
        let options = FirecrackerOptions { arch: Arch::X86_64, dialect: DIALECTS[dialect] };
        let result = firecracker::parse_with(&serde_json::to_vec(&doc).unwrap(), PRODUCTION, &options);
        if let Err(PolicyError::Syntax { .. }) = result {
            prop_assert!(false, "re-serialized JSON cannot have a syntax error");
        }
        check(result)?;
    }
}
