//! Random Firecracker filter files for the differential tests against Firecracker's own
//! compilers (the rust-vmm `seccompiler` crate, `seccompiler-bin` of a release): random
//! names, actions, 1–3 conditions of every operator and width with constants at the word
//! edges, and at most one fault per file, so that both compilers must refuse a faulty file for
//! that fault. The faults are each dialect's own (what the other takes is not a fault there).

use secopt::arch::Arch;
use secopt::bpf::testing::Rng;
use secopt::bpf::Program;
use secopt::compile::{compile_firecracker, CompileOptions};
use secopt::policy::firecracker::FirecrackerOptions;
use secopt::policy::Dialect;
use serde_json::{json, Value};

/// Names x86_64 and aarch64 both have, so one generator serves both.
pub const NAMES: [&str; 12] = [
    "read",
    "write",
    "openat",
    "close",
    "ioctl",
    "mmap",
    "futex",
    "clone",
    "socket",
    "madvise",
    "exit_group",
    "ppoll",
];

/// What a file is refused for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The filter action equals the default action (both dialects).
    EqualActions,
    /// An argument index above 5 (both).
    ArgumentIndex,
    /// A syscall name no architecture has (both).
    UnknownName,
    /// `"args": []` (rust-vmm: `EmptyRule`; libseccomp matches every call).
    EmptyArgs,
    /// A key the format does not have (rust-vmm and Firecracker 1.10 deny unknown fields;
    /// Firecracker's libseccomp-based compiler ignores them).
    UnknownField,
    /// A `comment` that is not a string (rust-vmm).
    CommentNotString,
    /// Two conditions on one argument in one entry (libseccomp: -EINVAL; rust-vmm ANDs them).
    RepeatedArgument,
    /// An entry without `args` beside another entry for its syscall (Firecracker 1.10:
    /// `ConflictingRules`; the crate drops the one without `args`, libseccomp ORs them).
    ConflictingRules,
    /// A name newer than Linux 5.10, whose table Firecracker 1.10 has.
    NewerName,
    /// The `user_notif` action (only the crate has it).
    UserNotif,
    /// `mismatch_action`/`match_action` without `default_action`/`filter_action` (the
    /// crate's names, which Firecracker's libseccomp-based compiler does not read).
    MissingAction,
}

/// Names of syscalls added after Linux 5.10, on both x86_64 and aarch64.
pub const NEWER_THAN_5_10: [&str; 4] = [
    "epoll_pwait2",
    "landlock_create_ruleset",
    "futex_waitv",
    "mseal",
];

impl Fault {
    /// The faults of `dialect`.
    pub fn of(dialect: Dialect) -> &'static [Fault] {
        match dialect {
            Dialect::RustVmmSeccompiler => &[
                Fault::EqualActions,
                Fault::ArgumentIndex,
                Fault::UnknownName,
                Fault::EmptyArgs,
                Fault::UnknownField,
                Fault::CommentNotString,
            ],
            Dialect::Firecracker110 => &[
                Fault::EqualActions,
                Fault::ArgumentIndex,
                Fault::UnknownName,
                Fault::UnknownField,
                Fault::CommentNotString,
                Fault::ConflictingRules,
                Fault::NewerName,
                Fault::UserNotif,
            ],
            _ => &[
                Fault::EqualActions,
                Fault::ArgumentIndex,
                Fault::UnknownName,
                Fault::RepeatedArgument,
                Fault::MissingAction,
            ],
        }
    }

    /// The fault an error message (either compiler's) names.
    pub fn named(message: &str) -> Option<Fault> {
        let m = message.to_lowercase();
        if m.contains("are equal")
            || m.contains("equals the default action")
            || m.contains("identical")
        {
            Some(Fault::EqualActions)
        } else if m.contains("argument index")
            || m.contains("argument number")
            || m.contains("index") && m.contains("range")
        {
            Some(Fault::ArgumentIndex)
        } else if m.contains("cannot be empty") || m.contains("empty `args`") {
            Some(Fault::EmptyArgs)
        } else if m.contains("no_such_syscall") {
            Some(Fault::UnknownName)
        } else if NEWER_THAN_5_10.iter().any(|name| m.contains(name)) {
            Some(Fault::NewerName)
        } else if m.contains("conflicting rules") {
            Some(Fault::ConflictingRules)
        } else if m.contains("user_notif") {
            Some(Fault::UserNotif)
        } else if m.contains("missing") && m.contains("_action") {
            Some(Fault::MissingAction)
        } else if m.contains("unknown field") {
            Some(Fault::UnknownField)
        } else if m.contains("expected a string") {
            Some(Fault::CommentNotString)
        } else if m.contains("second condition on argument") {
            Some(Fault::RepeatedArgument)
        } else {
            None
        }
    }
}

/// Constants around the edges the comparisons care about: zero, the word boundary, the top.
pub fn value(rng: &mut Rng) -> u64 {
    match rng.below(6) {
        0 => rng.below(4) as u64,
        1 => 0xffff_ffff,
        2 => 1 << 32,
        3 => u64::MAX - rng.below(2) as u64,
        4 => u64::from(rng.next_u32()),
        _ => rng.next_u64(),
    }
}

pub fn action(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => json!("allow"),
        1 => json!({ "errno": rng.below(3) as u64 + 1 }),
        2 => json!("trap"),
        3 => json!("kill_thread"),
        4 => json!("kill_process"),
        5 => json!("log"),
        _ => json!({ "trace": rng.below(3) as u64 }),
    }
}

/// A condition on argument `index`.
pub fn condition(rng: &mut Rng, index: usize) -> Value {
    let op = match rng.below(7) {
        0 => json!("eq"),
        1 => json!("ne"),
        2 => json!("lt"),
        3 => json!("le"),
        4 => json!("gt"),
        5 => json!("ge"),
        _ => json!({ "masked_eq": value(rng) }),
    };
    json!({
        "index": index,
        "type": if rng.chance(1, 2) { "dword" } else { "qword" },
        "op": op,
        "val": value(rng),
    })
}

/// 1–3 conditions; on distinct arguments where `distinct` (libseccomp refuses a repeat).
fn conditions(rng: &mut Rng, distinct: bool) -> Value {
    let n = 1 + rng.below(3);
    let mut used = Vec::new();
    let mut out = Vec::new();
    while out.len() < n {
        let index = rng.below(6);
        if distinct && used.contains(&index) {
            continue;
        }
        used.push(index);
        out.push(condition(rng, index));
    }
    Value::Array(out)
}

/// One random filter file in `dialect`'s format (one or two threads, each with a few entries
/// on a few names) and the fault put in it, if any.
pub fn random_file(rng: &mut Rng, dialect: Dialect) -> (Value, Option<Fault>) {
    let rust_vmm = dialect == Dialect::RustVmmSeccompiler;
    let libseccomp = dialect == Dialect::Libseccomp;
    let faults = Fault::of(dialect);
    let pick = rng.below(faults.len() * 3);
    let fault = faults.get(pick).copied();
    let threads = 1 + rng.below(2);
    let faulty_thread = rng.below(threads);
    let mut file = serde_json::Map::new();
    for (t, thread) in ["main", "vcpu"].iter().take(threads).enumerate() {
        let mut entries = Vec::new();
        for _ in 0..rng.below(7) {
            // The first four names most often, so that entries meet on a syscall.
            let among = 4 + rng.below(NAMES.len() - 3);
            let mut entry = json!({ "syscall": NAMES[rng.below(among)] });
            match rng.below(6) {
                0 => {}
                // An empty list matches every call, except in the crate, which refuses it.
                1 if !rust_vmm && rng.chance(1, 3) => entry["args"] = json!([]),
                _ => entry["args"] = conditions(rng, libseccomp),
            }
            if rng.chance(1, 4) {
                entry["comment"] = json!("why");
            }
            entries.push(entry);
        }
        let mut mismatch = action(rng);
        let mut matched = action(rng);
        while matched == mismatch {
            matched = action(rng);
        }
        // The entry the fault put in, which the tidying below keeps.
        let mut faulty_entry = None;
        let mut aliases = false;
        if t == faulty_thread {
            let at = rng.below(entries.len() + 1);
            let len = entries.len();
            match fault {
                // libseccomp refuses the first rule whose action is the default one (EACCES):
                // with no rule, nothing refuses it.
                Some(Fault::EqualActions) => {
                    matched = mismatch.clone();
                    if entries.is_empty() {
                        entries.push(json!({ "syscall": "read" }));
                    }
                }
                Some(Fault::ArgumentIndex) => {
                    let index = 6 + rng.below(250);
                    let c = condition(rng, index);
                    entries.insert(at, json!({ "syscall": "read", "args": [c] }));
                }
                Some(Fault::UnknownName) => {
                    entries.insert(at, json!({ "syscall": "no_such_syscall" }));
                }
                Some(Fault::EmptyArgs) => {
                    entries.insert(at, json!({ "syscall": "write", "args": [] }));
                }
                // In an entry, or in one of its conditions.
                // Firecracker 1.10 does not know the crate's names of the two actions.
                Some(Fault::UnknownField)
                    if dialect == Dialect::Firecracker110 && rng.chance(1, 3) =>
                {
                    aliases = true;
                }
                Some(Fault::MissingAction) => aliases = true,
                Some(Fault::UnknownField) => {
                    let mut entry = json!({ "syscall": "close", "args": [condition(rng, 0)] });
                    if rng.chance(1, 2) {
                        entry["action"] = json!("allow");
                    } else {
                        entry["args"][0]["mask"] = json!(1);
                    }
                    entries.insert(at, entry);
                }
                Some(Fault::CommentNotString) => {
                    entries.insert(at, json!({ "syscall": "close", "comment": 7 }));
                }
                Some(Fault::RepeatedArgument) => {
                    let index = rng.below(6);
                    let args = json!([condition(rng, index), condition(rng, index)]);
                    entries.insert(at, json!({ "syscall": "close", "args": args }));
                }
                // A second entry for a syscall, one of the two without `args`.
                Some(Fault::ConflictingRules) => {
                    let other = (len > 0).then(|| entries[rng.below(len)].clone());
                    let name = other
                        .as_ref()
                        .map_or(json!("read"), |o| o["syscall"].clone());
                    let mut bare = json!({ "syscall": name });
                    if rng.chance(1, 3) {
                        bare["args"] = json!([]);
                    }
                    if other.is_none() {
                        entries.push(json!({ "syscall": "read", "args": conditions(rng, false) }));
                    }
                    entries.insert(at.min(entries.len()), bare.clone());
                    faulty_entry = Some(bare);
                }
                Some(Fault::NewerName) => {
                    let name = NEWER_THAN_5_10[rng.below(NEWER_THAN_5_10.len())];
                    entries.insert(at, json!({ "syscall": name }));
                }
                Some(Fault::UserNotif) => {
                    if rng.chance(1, 2) || mismatch == json!("user_notif") {
                        matched = json!("user_notif");
                    } else {
                        mismatch = json!("user_notif");
                        if matched == mismatch {
                            matched = json!("allow");
                        }
                    }
                }
                None => {}
            }
            if faulty_entry.is_none() && entries.len() > len {
                faulty_entry = Some(entries[at].clone());
            }
        }
        if dialect == Dialect::Firecracker110 {
            without_conflicts(&mut entries, faulty_entry.as_ref(), fault);
        }
        let (mismatch_key, match_key) = if aliases || rust_vmm && rng.chance(1, 2) {
            ("mismatch_action", "match_action")
        } else {
            ("default_action", "filter_action")
        };
        let mut filter = json!({ mismatch_key: mismatch, match_key: matched, "filter": entries });
        // Firecracker's libseccomp-based compiler ignores keys it does not know, the crate's
        // names of the actions among them.
        if libseccomp && !aliases && rng.chance(1, 8) {
            filter["match_action"] = action(rng);
        }
        file.insert(thread.to_string(), filter);
    }
    (Value::Object(file), fault)
}

/// Whether an entry has no conditions (no `args`, or an empty list).
fn bare(entry: &Value) -> bool {
    entry
        .get("args")
        .is_none_or(|a| a.as_array().is_some_and(Vec::is_empty))
}

/// Firecracker 1.10 refuses a syscall with an entry without `args` and any other entry: the
/// entries that would make such a conflict are dropped, unless it is the file's `fault`.
/// Where the entry the fault put in (`faulty`) is one of them it stays, and the others go.
fn without_conflicts(entries: &mut Vec<Value>, faulty: Option<&Value>, fault: Option<Fault>) {
    let keep_conflict = fault == Some(Fault::ConflictingRules);
    let names: Vec<Value> = entries.iter().map(|e| e["syscall"].clone()).collect();
    let mut keep = vec![true; entries.len()];
    for (i, entry) in entries.iter().enumerate() {
        let group: Vec<usize> = (0..entries.len())
            .filter(|&j| names[j] == names[i])
            .collect();
        let conflict = group.len() > 1 && group.iter().any(|&j| bare(&entries[j]));
        let of_fault = faulty.is_some_and(|f| f["syscall"] == entry["syscall"]);
        if !conflict || (keep_conflict && of_fault) {
            continue;
        }
        keep[i] = match faulty.filter(|_| of_fault) {
            // The fault's entry stays; every other entry of its syscall goes.
            Some(f) => {
                let first = group.iter().find(|&&j| &entries[j] == f);
                first == Some(&i)
            }
            // Otherwise the entries with conditions stay, or the first entry if none has any.
            None => {
                let conditional = group.iter().any(|&j| !bare(&entries[j]));
                if conditional {
                    !bare(entry)
                } else {
                    group[0] == i
                }
            }
        };
    }
    let mut k = keep.into_iter();
    entries.retain(|_| k.next().unwrap());
}

/// secopt's reference lowering of each thread of a Firecracker file, sorted by thread, or its
/// error.
pub fn secopt_threads(
    json: &[u8],
    arch: Arch,
    dialect: Dialect,
) -> Result<Vec<(String, Program)>, String> {
    let fc = FirecrackerOptions { arch, dialect };
    let mut threads: Vec<(String, Program)> =
        compile_firecracker(json, "random.json", &fc, &CompileOptions::default())
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(thread, filter)| (thread, filter.into_program()))
            .collect();
    threads.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(threads)
}
