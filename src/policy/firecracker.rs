//! Firecracker's seccompiler JSON: one filter per thread kind (`vmm`, `api`, `vcpu`, or any
//! other name), each with a default action, a filter action and rules
//! `{syscall, args: [{index, type, op, val, comment}], comment}`.
//!
//! Three compilers read this format, with different meanings, so the caller picks a
//! [`Dialect`]:
//!
//! - [`Dialect::Libseccomp`] (the default): Firecracker's in-tree `seccompiler-bin`
//!   (firecracker-microvm/firecracker src/seccompiler, which compiled the production
//!   filters since it moved to libseccomp in 2024). Verified in src/seccompiler/src/lib.rs
//!   and types.rs:
//!   - keys `default_action`, `filter_action`, `filter`; unknown keys are ignored (here:
//!     warned about);
//!   - `dword` matters only for `eq`, which becomes libseccomp `MASKED_EQ` with mask
//!     `0xffffffff` (low 32 bits equal; the constant's high bits are masked off by
//!     libseccomp); every other operator, and `masked_eq`, compares all 64 bits;
//!   - repeated entries for a syscall are separate libseccomp rules (ORed); an entry
//!     without `args`, or with `"args": []`, matches every call;
//!   - two conditions on one argument in one entry are refused (libseccomp -EINVAL);
//!   - errno/trace data are `u16`; the bad-architecture action is libseccomp's default
//!     (KILL_THREAD); no `user_notif`;
//!   - targets x86_64, aarch64 and riscv64 (types.rs `TargetArch`).
//! - [`Dialect::RustVmmSeccompiler`]: the rust-vmm `seccompiler` crate's own backend
//!   (rust-vmm/seccompiler src/frontend/json.rs, src/backend/{condition,filter,mod}.rs):
//!   - keys `mismatch_action`/`match_action` with aliases `default_action`/`filter_action`;
//!     unknown keys are refused (`deny_unknown_fields`); `comment` must be a string;
//!   - `dword` compares only the low 32 bits of the argument with the low 32 bits of `val`
//!     for *every* operator (no load of the high word at all); `qword` compares 64 bits;
//!   - `masked_eq(m)`: `(arg & m) == (val & m)`;
//!   - `"args": []` is refused (`EmptyRule`); and when a syscall has both entries without
//!     `args` and entries with `args`, only the latter count (the rule chain is built from
//!     the conditional entries alone) — reproduced here, with a warning;
//!   - bad architecture: KILL_PROCESS; `user_notif` is accepted.
//! - [`Dialect::Firecracker110`]: Firecracker's own `seccompiler-bin` up to 1.10 (its
//!   src/seccompiler/src/{compiler,backend}.rs at tag v1.10.1; from v1.0.0 on they differ only
//!   in refactoring, and their syscall tables not at all), a copy of the rust-vmm backend
//!   that lowers every file both take to the same program, but reads the file differently:
//!   - only `default_action` and `filter_action` (the aliases are unknown fields, refused);
//!     no `user_notif`; x86_64 and aarch64 only;
//!   - `"args": []` is an entry without `args`; an entry without `args` must be the only
//!     entry of its syscall (two entries of which one has no `args` are `ConflictingRules`,
//!     where the crate drops the one without `args`);
//!   - its syscall tables are Linux 5.10's ([`FIRECRACKER_1_10_LAST_NR`]).
//!
//! All refuse syscall names unknown on the target arch (Firecracker's libseccomp-based
//! compiler accepts a name of another architecture, whose rule decides nothing but can make
//! libseccomp drop the syscall load: `compile::runc_unenforced`; secopt skips it with a note), argument indexes above 5, and a filter whose `filter_action` equals its
//! default action (Firecracker's libseccomp-based compiler only when the filter has a rule,
//! which libseccomp refuses with EACCES). secopt additionally refuses errno/trace data above
//! 65535 (the rust-vmm backends would keep only the low 16 bits) and repeated keys.
//! Firecracker's own compiler also refuses an errno above 4094 ([`LIBSECCOMP_MAX_ERRNO`]:
//! libseccomp does).

use super::json::{self, JPath, Json, Obj, Reader};
use super::model::{
    Action, Applicability, Architectures, ArgCondition, ArgWidth, CmpOp, Dialect, Policy, Rule,
    LIBSECCOMP_MAX_ERRNO,
};
use super::{PolicyError, WarningKind};
use crate::arch::Arch;
use std::collections::{BTreeMap, BTreeSet};

/// How to read a Firecracker JSON file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirecrackerOptions {
    /// The target architecture (a Firecracker filter file is per target).
    pub arch: Arch,
    /// Whose semantics: Firecracker's in-tree compiler since 1.11 ([`Dialect::Libseccomp`]),
    /// up to 1.10 ([`Dialect::Firecracker110`]), or the rust-vmm seccompiler crate's
    /// ([`Dialect::RustVmmSeccompiler`]).
    pub dialect: Dialect,
}

impl FirecrackerOptions {
    /// Firecracker's own (libseccomp-based) semantics for `arch`.
    pub fn new(arch: Arch) -> Self {
        FirecrackerOptions {
            arch,
            dialect: Dialect::Libseccomp,
        }
    }
}

/// Parses a Firecracker seccompiler JSON file for `arch` with Firecracker's own semantics;
/// returns one [`Policy`] per thread kind.
///
/// ```
/// use secopt::arch::Arch;
/// use secopt::policy::{firecracker, Action, CmpOp};
/// let filters = firecracker::parse(br#"{
///     "vcpu": {"default_action": "trap", "filter_action": "allow", "filter": [
///         {"syscall": "ioctl", "args": [{"index": 1, "type": "dword", "op": "eq", "val": 44672}]},
///         {"syscall": "mmap", "args": [{"index": 2, "type": "dword", "op": {"masked_eq": 4}, "val": 0}]}
///     ]}
/// }"#, "vcpu.json", Arch::X86_64).unwrap();
/// let vcpu = &filters["vcpu"];
/// assert_eq!(vcpu.default_action, Action::Trap);
/// // Firecracker turns a dword `eq` into a masked comparison of the low 32 bits.
/// assert_eq!(vcpu.rules[0].conditions[0].op, CmpOp::MaskedEq(0xFFFF_FFFF));
/// ```
pub fn parse(
    bytes: &[u8],
    source_name: &str,
    arch: Arch,
) -> Result<BTreeMap<String, Policy>, PolicyError> {
    parse_with(bytes, source_name, &FirecrackerOptions::new(arch))
}

/// [`parse`] with an explicit dialect.
pub fn parse_with(
    bytes: &[u8],
    source_name: &str,
    options: &FirecrackerOptions,
) -> Result<BTreeMap<String, Policy>, PolicyError> {
    let supported: &[Arch] = match options.dialect {
        Dialect::Libseccomp => &[Arch::X86_64, Arch::Aarch64, Arch::Riscv64],
        Dialect::RustVmmSeccompiler => &[Arch::X86_64, Arch::Aarch64, Arch::Riscv64],
        Dialect::Firecracker110 => &[Arch::X86_64, Arch::Aarch64],
    };
    if !supported.contains(&options.arch) {
        // `x86_64 or aarch64`, `x86_64, aarch64, or riscv64`.
        let names: Vec<&str> = supported.iter().map(|a| a.name()).collect();
        let listed = match names.split_last() {
            Some((last, rest)) if rest.len() > 1 => format!("{}, or {last}", rest.join(", ")),
            _ => names.join(" or "),
        };
        return Err(PolicyError::InvalidOption(format!(
            "{source_name}: {} targets {listed}, not {}",
            match options.dialect {
                Dialect::Libseccomp => "Firecracker's seccompiler (libseccomp dialect)",
                Dialect::RustVmmSeccompiler => "rust-vmm seccompiler",
                Dialect::Firecracker110 => "Firecracker 1.10's seccompiler",
            },
            options.arch
        )));
    }
    let doc = json::parse_document(bytes, source_name)?;
    let root = JPath::root();
    let top = Reader::new(source_name).object(&doc, &root)?;
    let mut filters = BTreeMap::new();
    for (thread, value, path) in top.members() {
        let mut thread_reader = Reader::new(source_name);
        let mut policy = read_filter(&mut thread_reader, value, &path, options)?;
        policy.warnings = thread_reader.warnings;
        filters.insert(thread.to_owned(), policy);
    }
    Ok(filters)
}

fn unknown_keys(r: &mut Reader, obj: &Obj, dialect: Dialect) -> Result<(), PolicyError> {
    for (key, path) in obj.unused() {
        match dialect {
            Dialect::Libseccomp => r.warn(
                WarningKind::Ignored,
                &path,
                format!("unknown field {key:?} ignored"),
            ),
            Dialect::RustVmmSeccompiler | Dialect::Firecracker110 => {
                return Err(r.error(&path, format!("unknown field {key:?}")))
            }
        }
    }
    Ok(())
}

/// Reads a filter's action key: `primary` (`default_action`, `filter_action`), the name every
/// compiler knows, or in the rust-vmm crate also `alias` (`mismatch_action`, `match_action`).
fn action_key<'j>(
    r: &Reader,
    obj: &mut Obj<'j>,
    primary: &str,
    alias: &str,
    dialect: Dialect,
) -> Result<(&'j Json, JPath), PolicyError> {
    match dialect {
        // serde's `alias`: either name, and both at once is a duplicate field.
        Dialect::RustVmmSeccompiler => match (obj.get(primary), obj.get(alias)) {
            (Some(x), None) | (None, Some(x)) => Ok(x),
            (Some(_), Some((_, p))) => Err(r.error(
                &p,
                format!("give either `{primary}` or `{alias}`, not both"),
            )),
            (None, None) => Err(r.error(
                &obj.path().key(primary),
                format!("missing `{alias}` (or `{primary}`)"),
            )),
        },
        // Firecracker's own compilers know `primary` alone: 1.10 refuses any other key
        // (`deny_unknown_fields`), the libseccomp-based ones ignore it, so an alias is warned
        // about with the other unknown keys, and without `primary` the file is refused.
        Dialect::Libseccomp | Dialect::Firecracker110 => {
            if dialect == Dialect::Firecracker110 {
                if let Some((_, p)) = obj.get(alias) {
                    return Err(r.error(
                        &p,
                        format!("unknown field {alias:?}: Firecracker up to 1.10 knows only `{primary}` (`{alias}` is the rust-vmm seccompiler crate's name)"),
                    ));
                }
            }
            let aliased = obj.has(alias);
            obj.get(primary).ok_or_else(|| {
                let why = if aliased {
                    format!(" (`{alias}` is the rust-vmm seccompiler crate's name for it, which Firecracker's seccompiler does not read)")
                } else {
                    String::new()
                };
                r.error(&obj.path().key(primary), format!("missing `{primary}`{why}"))
            })
        }
    }
}

fn read_filter(
    r: &mut Reader,
    v: &Json,
    path: &JPath,
    options: &FirecrackerOptions,
) -> Result<Policy, PolicyError> {
    let dialect = options.dialect;
    let mut obj = r.object(v, path)?;
    let (dv, dp) = action_key(r, &mut obj, "default_action", "mismatch_action", dialect)?;
    let default_action = read_action(r, dv, &dp, dialect)?;
    let (fv, fp) = action_key(r, &mut obj, "filter_action", "match_action", dialect)?;
    let filter_action = read_action(r, fv, &fp, dialect)?;
    let (rv, rp) = obj.require(r, "filter", "an array of rules")?;
    let entries = r.array(rv, &rp)?;
    unknown_keys(r, &obj, dialect)?;

    // rust-vmm checks this always; libseccomp only refuses a rule equal to the default.
    if filter_action == default_action && (dialect != Dialect::Libseccomp || !entries.is_empty()) {
        return Err(r.error(
            &fp,
            format!("the filter action equals the default action ({default_action}); the filter would change nothing"),
        ));
    }

    let table = options.arch.syscalls();
    let mut rules = Vec::new();
    // Firecracker 1.10: per syscall, where its first entry is and whether one had no `args`.
    let mut seen: BTreeMap<&str, (JPath, bool)> = BTreeMap::new();
    for (i, entry) in entries.iter().enumerate() {
        let ep = rp.index(i);
        let mut e = r.object(entry, &ep)?;
        let (sv, sp) = e.require(r, "syscall", "a syscall name")?;
        let name = r.string(sv, &sp)?;
        if dialect == Dialect::Firecracker110
            && table.nr(name).is_some()
            && !firecracker_1_10_knows(options.arch, name)
        {
            return Err(r.error(
                &sp,
                format!("unknown syscall {name:?} on {} in Firecracker 1.10's syscall table (Linux 5.10's; {name:?} is newer)", options.arch),
            ));
        }
        if table.nr(name).is_none() {
            // Firecracker's compiler resolves names with libseccomp, which answers a
            // pseudo-number for a name of another architecture (`chown32` on x86_64) and adds
            // its rule, which decides nothing (but see `compile::runc_unenforced`); resolution
            // skips it with a note. rust-vmm's table
            // has only the target's names.
            let elsewhere = Arch::any_has_syscall(name);
            if !(elsewhere && dialect == Dialect::Libseccomp) {
                return Err(r.error(&sp, format!("unknown syscall {name:?} on {}", options.arch)));
            }
        }
        let mut conditions = Vec::new();
        match e.get("args") {
            None => {}
            Some((av, ap)) => {
                let args = r.array(av, &ap)?;
                if args.is_empty() && dialect == Dialect::RustVmmSeccompiler {
                    return Err(r.error(
                        &ap,
                        "empty `args`: the rust-vmm seccompiler crate refuses a rule without conditions (omit `args` to match any arguments; Firecracker's own seccompiler up to 1.10 reads `[]` as no `args`)",
                    ));
                }
                for (k, arg) in args.iter().enumerate() {
                    conditions.push(read_condition(r, arg, &ap.index(k), dialect)?);
                }
                if dialect == Dialect::Libseccomp {
                    let mut seen = BTreeSet::new();
                    for (k, c) in conditions.iter().enumerate() {
                        if !seen.insert(c.index) {
                            return Err(r.error(
                                &ap.index(k).key("index"),
                                format!("a second condition on argument {} in one rule; libseccomp refuses this (write a separate rule to OR them)", c.index),
                            ));
                        }
                    }
                }
            }
        }
        if let Some((cv, cp)) = e.get("comment") {
            if dialect != Dialect::Libseccomp {
                r.string(cv, &cp)?;
            }
        }
        unknown_keys(r, &e, dialect)?;
        // After the entry is read, as 1.10 checks conflicts after parsing: no `args` and
        // `"args": []` both leave no conditions.
        if dialect == Dialect::Firecracker110 {
            conflicting_rules(r, &mut seen, name, conditions.is_empty(), &ep)?;
        }
        rules.push(Rule {
            syscall: name.to_owned(),
            action: filter_action,
            conditions,
            applies: Applicability::default(),
            origin: ep.to_string().into(),
        });
    }

    if dialect == Dialect::RustVmmSeccompiler {
        drop_shadowed_unconditional(r, &mut rules);
    }

    Ok(Policy {
        source: r.file.to_owned(),
        default_action,
        bad_arch_action: match dialect {
            Dialect::Libseccomp => Action::KillThread,
            Dialect::RustVmmSeccompiler | Dialect::Firecracker110 => Action::KillProcess,
        },
        architectures: Architectures::Exactly(vec![options.arch]),
        rules,
        flags: Some(Vec::new()),
        listener_path: None,
        listener_metadata: None,
        dialect,
        warnings: Vec::new(),
    })
}

/// The highest syscall number in Firecracker 1.10's tables, on x86_64 and aarch64 alike:
/// `process_madvise`, the newest call of Linux 5.10, whose tables the release generated.
pub const FIRECRACKER_1_10_LAST_NR: u32 = 440;

/// Whether Firecracker 1.10's syscall table has `name` (one secopt's table for `arch` has):
/// every name numbered up to [`FIRECRACKER_1_10_LAST_NR`], except the two x86_64 calls
/// later kernels numbered in a gap below it (`uretprobe` of 6.11, `uprobe` of 6.16).
fn firecracker_1_10_knows(arch: Arch, name: &str) -> bool {
    let newer_in_a_gap = arch == Arch::X86_64 && matches!(name, "uretprobe" | "uprobe");
    arch.syscalls()
        .nr(name)
        .is_some_and(|nr| nr <= FIRECRACKER_1_10_LAST_NR && !newer_in_a_gap)
}

/// Firecracker 1.10 refuses a syscall with an entry without `args` and any other entry
/// (`ConflictingRules`): the entry without `args` matches every call, so the others could
/// never decide. `seen` holds, per syscall, its first entry and whether an entry so far had
/// no `args`; the entry at `path` is the next one for `name`.
fn conflicting_rules<'n>(
    r: &Reader,
    seen: &mut BTreeMap<&'n str, (JPath, bool)>,
    name: &'n str,
    bare: bool,
    path: &JPath,
) -> Result<(), PolicyError> {
    match seen.get_mut(name) {
        None => {
            seen.insert(name, (path.clone(), bare));
            Ok(())
        }
        Some((_, false)) if !bare => Ok(()),
        Some((first, _)) => Err(r.error(
            path,
            format!(
                "{name:?} has an entry without conditions and another entry (also at {first}): \
                 Firecracker up to 1.10 refuses such conflicting rules; an entry without `args` \
                 already matches every call, so keep it alone or give it conditions"
            ),
        )),
    }
}

/// rust-vmm seccompiler keeps, per syscall, only the entries that have `args` when there
/// are any: an entry without `args` then has no effect.
fn drop_shadowed_unconditional(r: &mut Reader, rules: &mut Vec<Rule>) {
    let conditional: BTreeSet<String> = rules
        .iter()
        .filter(|rule| !rule.conditions.is_empty())
        .map(|rule| rule.syscall.clone())
        .collect();
    let mut dropped = Vec::new();
    rules.retain(|rule| {
        let shadowed = rule.conditions.is_empty() && conditional.contains(&rule.syscall);
        if shadowed {
            dropped.push((rule.origin.clone(), rule.syscall.clone()));
        }
        !shadowed
    });
    for (origin, name) in dropped {
        r.warn_at(WarningKind::Ignored,
            &origin,
            format!("this entry without `args` has no effect: rust-vmm seccompiler only uses the entries of {name:?} that have `args` (Firecracker's own seccompiler up to 1.10 refuses such conflicting rules)"),
        );
    }
}

fn read_action(
    r: &Reader,
    v: &Json,
    path: &JPath,
    dialect: Dialect,
) -> Result<Action, PolicyError> {
    const EXPECTED: &str = "\"allow\", \"trap\", \"kill_thread\", \"kill_process\", \"log\", \
                            {\"errno\": N} or {\"trace\": N}";
    match v {
        Json::Str(s) => match s.as_str() {
            "allow" => Ok(Action::Allow),
            "trap" => Ok(Action::Trap),
            "kill_thread" => Ok(Action::KillThread),
            "kill_process" => Ok(Action::KillProcess),
            "log" => Ok(Action::Log),
            "user_notif" if dialect == Dialect::RustVmmSeccompiler => Ok(Action::UserNotif),
            "user_notif" => Err(r.error(
                path,
                "\"user_notif\" is not supported by Firecracker's seccompiler (only by rust-vmm seccompiler)",
            )),
            "errno" | "trace" => Err(r.error(
                path,
                format!("{s:?} needs a value: write {{\"{s}\": N}}"),
            )),
            other => Err(r.error(path, format!("unknown action {other:?}; expected {EXPECTED}"))),
        },
        Json::Obj(entries) if entries.len() == 1 => {
            let (key, value) = &entries[0];
            let vp = path.key(key);
            let make: fn(u16) -> Action = match key.as_str() {
                "errno" => Action::Errno,
                "trace" => Action::Trace,
                other => {
                    return Err(r.error(
                        &vp,
                        format!("unknown action {other:?}; expected {EXPECTED}"),
                    ))
                }
            };
            let n = r.u64(value, &vp)?;
            let data = u16::try_from(n).map_err(|_| {
                r.error(&vp, format!("{n} does not fit in the 16-bit data field of a seccomp return value (max 65535)"))
            })?;
            if key == "errno" && dialect == Dialect::Libseccomp && data > LIBSECCOMP_MAX_ERRNO {
                return Err(r.error(
                    &vp,
                    format!("errno {n} is above {LIBSECCOMP_MAX_ERRNO}, the largest libseccomp accepts: Firecracker's seccompiler refuses it"),
                ));
            }
            Ok(make(data))
        }
        other => Err(r.error(
            path,
            format!("expected an action ({EXPECTED}), found {}", other.kind()),
        )),
    }
}

fn read_condition(
    r: &mut Reader,
    v: &Json,
    path: &JPath,
    dialect: Dialect,
) -> Result<ArgCondition, PolicyError> {
    let mut obj = r.object(v, path)?;
    let index = r.arg_index(&mut obj)?;
    let (tv, tp) = obj.require(r, "type", "\"dword\" or \"qword\"")?;
    let width = match r.string(tv, &tp)? {
        "dword" => ArgWidth::Dword,
        "qword" => ArgWidth::Qword,
        other => {
            return Err(r.error(
                &tp,
                format!("unknown argument type {other:?}; expected \"dword\" or \"qword\""),
            ))
        }
    };
    let (ov, op_path) = obj.require(
        r,
        "op",
        "\"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\" or {\"masked_eq\": MASK}",
    )?;
    let op = read_op(r, ov, &op_path)?;
    let (vv, vp) = obj.require(r, "val", "an unsigned 64-bit integer")?;
    let value = r.u64(vv, &vp)?;
    if let Some((cv, cp)) = obj.get("comment") {
        if dialect != Dialect::Libseccomp {
            r.string(cv, &cp)?;
        }
    }
    unknown_keys(r, &obj, dialect)?;
    let condition = match dialect {
        Dialect::RustVmmSeccompiler | Dialect::Firecracker110 => ArgCondition {
            index,
            width,
            op,
            value,
        },
        // Firecracker types.rs `to_scmp_type`: only a dword `eq` looks at 32 bits.
        Dialect::Libseccomp => match (width, op) {
            (ArgWidth::Dword, CmpOp::Eq) => {
                ArgCondition::new(index, CmpOp::MaskedEq(0xFFFF_FFFF), value)
            }
            _ => ArgCondition::new(index, op, value),
        },
    };
    // The slip of what is compared: in libseccomp's dialect a dword is 32 bits for `eq` only
    // (the masked comparison above), 64 for every other operator.
    if let Some(slip) = condition.slip() {
        r.warn(
            WarningKind::Suspicious,
            path,
            format!("this condition on args[{index}] {slip}"),
        );
    }
    Ok(condition)
}

fn read_op(r: &Reader, v: &Json, path: &JPath) -> Result<CmpOp, PolicyError> {
    const EXPECTED: &str =
        "\"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\" or {\"masked_eq\": MASK}";
    match v {
        Json::Str(s) => match s.as_str() {
            "eq" => Ok(CmpOp::Eq),
            "ne" => Ok(CmpOp::Ne),
            "lt" => Ok(CmpOp::Lt),
            "le" => Ok(CmpOp::Le),
            "gt" => Ok(CmpOp::Gt),
            "ge" => Ok(CmpOp::Ge),
            "masked_eq" => Err(r.error(
                path,
                "\"masked_eq\" needs a mask: write {\"masked_eq\": MASK}",
            )),
            other => Err(r.error(
                path,
                format!("unknown operator {other:?}; expected {EXPECTED}"),
            )),
        },
        Json::Obj(entries) if entries.len() == 1 && entries[0].0 == "masked_eq" => {
            let mask = r.u64(&entries[0].1, &path.key("masked_eq"))?;
            Ok(CmpOp::MaskedEq(mask))
        }
        Json::Obj(entries) if entries.len() == 1 => Err(r.error(
            &path.key(&entries[0].0),
            format!("unknown operator {:?}; expected {EXPECTED}", entries[0].0),
        )),
        other => Err(r.error(
            path,
            format!("expected an operator ({EXPECTED}), found {}", other.kind()),
        )),
    }
}
