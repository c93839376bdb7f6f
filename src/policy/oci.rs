//! OCI runtime-spec seccomp profiles, with the Docker (moby) and podman extensions.
//!
//! Accepted: every field of the runtime spec's `linux.seccomp` section (`defaultAction`,
//! `defaultErrnoRet`, `architectures`, `flags`, `listenerPath`, `listenerMetadata`,
//! `syscalls[]` with `names`, `action`, `errnoRet`, `args[]`), moby's extensions (`archMap`
//! with `subArchitectures`, legacy `name`, `comment`, `includes`/`excludes` with `caps`,
//! `arches`, `minKernel`) and podman's string twins `defaultErrno`/`errno`. A whole OCI
//! `config.json` is accepted too: its `linux.seccomp` section is read as runc reads it, with
//! the runtime spec's fields only. Docker and podman resolve their extensions before they
//! write a config.json; one that still has them (a Docker profile pasted into a bundle) has
//! them ignored by runc, so conditional rules apply to every container. They are ignored
//! here too, each with a warning saying what that changes (checked against runc itself in
//! `tests/e2e_runc.rs`).
//!
//! The conversion follows runc (opencontainers/runc libcontainer/specconv/spec_linux.go
//! `SetupSeccomp` and libcontainer/seccomp/seccomp_linux.go `matchCall`), checked against
//! the source:
//! - one [`Rule`] per syscall name;
//! - `errnoRet` defaults to EPERM (1) for `SCMP_ACT_ERRNO` *and* `SCMP_ACT_TRACE` (runc's
//!   `actErrno`/`actTrace` both `SetReturnCode(EPERM)`);
//! - `SCMP_ACT_KILL` is `KILL_THREAD` (runc `getAction`);
//! - conditions of one entry are ANDed unless two name the same argument index; then every
//!   condition becomes a rule of its own (ORed) — runc's "revert to old behavior";
//! - `SCMP_CMP_MASKED_EQ` takes the mask from `value` and the constant from `valueTwo`
//!   (absent: 0);
//! - the bad-architecture action is libseccomp's default, KILL_THREAD: runc never sets
//!   `SCMP_FLTATR_ACT_BADARCH` (libseccomp src/db.c initialises it to `SCMP_ACT_KILL`).
//!
//! Rules whose action equals the default are kept here and dropped by
//! [`resolve`](super::resolve()), which also evaluates `includes`/`excludes` and `archMap`.
//!
//! Where the references disagree or say nothing, secopt decides as follows:
//! - `errno` (string) and `errnoRet` (number) both given: the string wins, as in podman,
//!   the only tool that reads both (containers/common pkg/seccomp/seccomp_linux.go
//!   `getErrno`); if they disagree a [`Warning`](super::Warning) says so, since Docker and runc would use
//!   `errnoRet`.
//! - `errnoRet` on an action without data is an error, as the runtime spec requires
//!   ("the runtime MUST print an error and fail"; runc silently ignores it).
//! - `errnoRet` above 65535 is an error (the kernel's data field has 16 bits; runc would
//!   truncate it with `int16(...)`), and so is an `SCMP_ACT_ERRNO` errno above 4094
//!   ([`LIBSECCOMP_MAX_ERRNO`]): libseccomp refuses it, so runc fails to start the container.
//! - An argument index above 5 is an error (runc would index out of bounds).
//! - An entry without names is a warning, not an error: the runtime spec requires a name,
//!   but runc and moby loop over the names and so ignore the entry.
//! - Unknown fields are ignored, as Go's encoding/json does, but reported as warnings.
//! - Repeated keys in one object are an error (Go would keep the last one silently).
//! - A missing `defaultAction` is an error; Docker and runc treat a profile with neither
//!   `defaultAction` nor `syscalls` as "seccomp disabled", which is not a filter.

use super::json::{self, JPath, Json, Obj, Reader};
use super::model::{
    Action, Applicability, ArchMapEntry, ArchRef, Architectures, ArgCondition, ArgWidth, CmpOp,
    Dialect, FilterFlag, HostFilter, KernelVersion, Policy, Rule, LIBSECCOMP_MAX_ERRNO,
};
use super::names::{self, ALL_CAPS};
use super::{PolicyError, WarningKind};

/// The warning about NOTIFY rules in a profile without `listenerPath` (`secopt exec
/// --listener-path` supplies one, and leaves the warning out). It names no tool: a runtime
/// embedding the library shows it to its own users.
pub(crate) const NOTIFY_WITHOUT_LISTENER: &str = "SCMP_ACT_NOTIFY rules but no `listenerPath`: \
     nothing will receive the notifications (runc refuses to start such a container)";

/// Parses an OCI / Docker / podman seccomp profile. `source_name` names the input in errors.
///
/// ```
/// let err = secopt::policy::oci::parse(
///     br#"{"defaultAction": "SCMP_ACT_ERRNO",
///          "syscalls": [{"names": ["dup3"], "action": "SCMP_ACT_ALLOW",
///                        "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_FOO"}]}]}"#,
///     "docker.json",
/// )
/// .unwrap_err();
/// assert!(err.to_string().starts_with(
///     r#"docker.json: $.syscalls[0].args[0].op: unknown operator "SCMP_CMP_FOO"; expected one of"#
/// ));
/// ```
pub fn parse(bytes: &[u8], source_name: &str) -> Result<Policy, PolicyError> {
    let doc = json::parse_document(bytes, source_name)?;
    let mut reader = Reader::go(source_name);
    let (section, path) = seccomp_section(&reader, &doc)?;
    // A whole config.json is what runc itself reads: only the runtime spec's fields count.
    reader.runtime_spec = path.as_str() != JPath::root().as_str();
    let mut policy = read_profile(&mut reader, section, &path)?;
    policy.warnings = reader.warnings;
    Ok(policy)
}

/// The seccomp object: the document itself, or `linux.seccomp` of a whole OCI config.
fn seccomp_section<'j>(r: &Reader, doc: &'j Json) -> Result<(&'j Json, JPath), PolicyError> {
    let root = JPath::root();
    let mut top = r.object(doc, &root)?;
    // `ociVersion` marks a config; a `linux` section without a profile's fields does too.
    if !top.has("defaultAction") && (top.has("ociVersion") || top.has("linux")) {
        let (linux, lpath) = top.get("linux").ok_or_else(|| {
            r.error(
                &root.key("linux"),
                "an OCI config without a `linux` section has no seccomp profile",
            )
        })?;
        let mut linux_obj = r.object(linux, &lpath)?;
        let (seccomp, spath) = linux_obj.get("seccomp").ok_or_else(|| {
            r.error(
                &lpath.key("seccomp"),
                "this OCI config has no `linux.seccomp` section",
            )
        })?;
        return Ok((seccomp, spath));
    }
    Ok((doc, root))
}

/// Member `key`, a field of moby's or podman's profile format that is not the runtime
/// spec's, as [`Obj::get`] gives it; in a whole OCI config ([`Reader::runtime_spec`]) `None`:
/// runc decodes the spec's struct, which has no such field, so it ignores it. When ignoring
/// it changes something (`matters`: an `includes` with conditions, not `{}`), a warning says
/// what (`effect`).
fn extension<'j>(
    r: &mut Reader,
    obj: &mut Obj<'j>,
    key: &str,
    effect: &str,
    matters: &dyn Fn(&Json) -> bool,
) -> Option<(&'j Json, JPath)> {
    let member = obj.get(key);
    if !r.runtime_spec {
        return member;
    }
    if let Some((_, p)) = member.filter(|(v, _)| matters(v)) {
        let owner = if key.starts_with("defaultErrno") || key == "errno" {
            "podman's"
        } else {
            "Docker's (moby's)"
        };
        r.warn(
            WarningKind::Ignored,
            &p,
            format!(
                "`{key}` is a field of {owner} profile format, not of the runtime spec: runc \
                 ignores it in a config.json, {effect}"
            ),
        );
    }
    None
}

/// Whether a value says anything: not null, `""`, `[]`, `{}`, or made of those only (an
/// `includes` of `{"caps": []}` holds no condition).
fn has_content(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Str(s) => !s.is_empty(),
        Json::Arr(items) => items.iter().any(has_content),
        Json::Obj(members) => members.iter().any(|(_, v)| has_content(v)),
        Json::Bool(_) | Json::UInt(_) | Json::Int(_) | Json::Float(_) => true,
    }
}

/// The action names of the runtime spec, without their data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ActionName {
    Kill,
    KillProcess,
    KillThread,
    Trap,
    Errno,
    Trace,
    Allow,
    Log,
    Notify,
}

const ACTION_NAMES: [(&str, ActionName); 9] = [
    ("SCMP_ACT_KILL", ActionName::Kill),
    ("SCMP_ACT_KILL_PROCESS", ActionName::KillProcess),
    ("SCMP_ACT_KILL_THREAD", ActionName::KillThread),
    ("SCMP_ACT_TRAP", ActionName::Trap),
    ("SCMP_ACT_ERRNO", ActionName::Errno),
    ("SCMP_ACT_TRACE", ActionName::Trace),
    ("SCMP_ACT_ALLOW", ActionName::Allow),
    ("SCMP_ACT_LOG", ActionName::Log),
    ("SCMP_ACT_NOTIFY", ActionName::Notify),
];

const OPERATORS: [(&str, Option<CmpOp>); 7] = [
    ("SCMP_CMP_NE", Some(CmpOp::Ne)),
    ("SCMP_CMP_LT", Some(CmpOp::Lt)),
    ("SCMP_CMP_LE", Some(CmpOp::Le)),
    ("SCMP_CMP_EQ", Some(CmpOp::Eq)),
    ("SCMP_CMP_GE", Some(CmpOp::Ge)),
    ("SCMP_CMP_GT", Some(CmpOp::Gt)),
    // The mask comes from `value`, so the operator is completed once that is read.
    ("SCMP_CMP_MASKED_EQ", None),
];

/// Errno for ERRNO and TRACE when the profile gives none (runc: EPERM).
const DEFAULT_ERRNO: u16 = 1;

impl ActionName {
    fn spelling(self) -> &'static str {
        ACTION_NAMES
            .iter()
            .find(|(_, a)| *a == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    fn takes_data(self) -> bool {
        matches!(self, ActionName::Errno | ActionName::Trace)
    }

    fn with_data(self, data: Option<u16>) -> Action {
        match self {
            ActionName::Kill | ActionName::KillThread => Action::KillThread,
            ActionName::KillProcess => Action::KillProcess,
            ActionName::Trap => Action::Trap,
            ActionName::Errno => Action::Errno(data.unwrap_or(DEFAULT_ERRNO)),
            ActionName::Trace => Action::Trace(data.unwrap_or(DEFAULT_ERRNO)),
            ActionName::Allow => Action::Allow,
            ActionName::Log => Action::Log,
            ActionName::Notify => Action::UserNotif,
        }
    }
}

fn one_of(names: impl IntoIterator<Item = &'static str>) -> String {
    names.into_iter().collect::<Vec<_>>().join(", ")
}

fn read_action_name(
    r: &Reader,
    obj: &mut Obj,
    key: &str,
) -> Result<(ActionName, JPath), PolicyError> {
    let Some((v, path)) = obj.get(key) else {
        return Err(r.error(
            &obj.path().key(key),
            format!(
                "missing; expected one of {}",
                one_of(ACTION_NAMES.map(|(n, _)| n))
            ),
        ));
    };
    let s = r.string(v, &path)?;
    match ACTION_NAMES.iter().find(|(n, _)| *n == s) {
        Some(&(_, a)) => Ok((a, path)),
        None => Err(r.error(
            &path,
            format!(
                "unknown action {s:?}; expected one of {}",
                one_of(ACTION_NAMES.map(|(n, _)| n))
            ),
        )),
    }
}

/// Reads the numeric (`ret_key`) and podman string (`str_key`) errno fields of an object
/// and checks that the action takes data if any is given.
fn read_errno(
    r: &mut Reader,
    obj: &mut Obj,
    action: ActionName,
    ret_key: &str,
    str_key: &str,
) -> Result<Option<u16>, PolicyError> {
    let numeric = match obj.get(ret_key) {
        Some((v, p)) => {
            let n = r.u64(v, &p)?;
            Some((errno_in_range(r, n, &p)?, p))
        }
        None => None,
    };
    let effect = format!("so the errno is `{ret_key}`'s (EPERM when it is absent)");
    // Ignoring it matters only where it names another errno than `errnoRet`.
    let ret = numeric.as_ref().map(|(n, _)| *n);
    let differs = |v: &Json| match v {
        Json::Str(s) if s.is_empty() => false,
        Json::Str(s) => names::errno_by_name(s).or_else(|| s.parse().ok()) != ret,
        _ => true,
    };
    let named = match extension(r, obj, str_key, &effect, &differs) {
        Some((v, p)) => {
            let s = r.string(v, &p)?;
            if s.is_empty() {
                None // podman: an empty `errno` means "use errnoRet"
            } else {
                Some((errno_from_string(r, s, &p)?, p))
            }
        }
        None => None,
    };
    if let (Some((n, np)), Some((s, sp))) = (&numeric, &named) {
        if n != s {
            r.warn(
                WarningKind::Suspicious,
                sp,
                format!(
                    "`{str_key}` ({s}) and `{ret_key}` ({n}) disagree; using `{str_key}` as \
                     podman does (Docker and runc read only `{ret_key}`, at {np})"
                ),
            );
        }
    }
    let chosen = named.or(numeric);
    if let Some((n, p)) = &chosen {
        if action == ActionName::Errno && *n > LIBSECCOMP_MAX_ERRNO {
            return Err(r.error(
                p,
                format!(
                    "errno {n} is above {LIBSECCOMP_MAX_ERRNO}, the largest libseccomp accepts: \
                     runc and crun would refuse to start the container"
                ),
            ));
        }
        if !action.takes_data() {
            // runc converts the action without it (libcontainer/seccomp `getAction`), and
            // crun alike; the runtime spec asks runtimes to refuse it, as --strict does.
            r.warn(
                WarningKind::Ignored,
                p,
                format!(
                    "an errno is only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not {}: runc \
                     ignores it and loads {} as it is, as secopt does (the runtime spec asks \
                     runtimes to refuse it); drop the errno, or change the action",
                    action.spelling(),
                    action.spelling()
                ),
            );
            return Ok(None);
        }
        if action == ActionName::Errno && *n == 0 {
            r.warn(
                WarningKind::Suspicious,
                p,
                "errno 0: the calls this answers return 0 without running, as if they had \
                 succeeded (a program then reads buffers that were never filled); give the errno \
                 they should fail with (1 is EPERM)"
                    .to_string(),
            );
        }
    }
    Ok(chosen.map(|(v, _)| v))
}

fn errno_in_range(r: &Reader, n: u64, path: &JPath) -> Result<u16, PolicyError> {
    u16::try_from(n).map_err(|_| {
        r.error(
            path,
            format!(
                "errno {n} does not fit in the 16-bit data field of a seccomp return value (max \
                 65535; runc would keep its low 16 bits, {}{})",
                n & 0xffff,
                match n & 0xffff {
                    0 => ": ERRNO(0), under which a denied call seems to succeed".to_string(),
                    low if low > u64::from(LIBSECCOMP_MAX_ERRNO) => format!(
                        ", above {LIBSECCOMP_MAX_ERRNO}, the largest libseccomp accepts, and so \
                         refuse to start the container"
                    ),
                    _ => ", silently".to_string(),
                }
            ),
        )
    })
}

/// podman's `getErrno`: a decimal number or an errno name.
fn errno_from_string(r: &Reader, s: &str, path: &JPath) -> Result<u16, PolicyError> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let n: u64 = s
            .parse()
            .map_err(|_| r.error(path, format!("errno {s:?} is out of range")))?;
        return errno_in_range(r, n, path);
    }
    names::errno_by_name(s).ok_or_else(|| {
        r.error(
            path,
            format!(
                "unknown errno {s:?}; expected a number or a name such as EPERM, ENOSYS, EINVAL"
            ),
        )
    })
}

fn read_profile(r: &mut Reader, section: &Json, root: &JPath) -> Result<Policy, PolicyError> {
    let mut top = r.object(section, root)?;

    let (default_name, default_path) = match read_action_name(r, &mut top, "defaultAction") {
        Err(e) if !top.has("defaultAction") && !top.has("syscalls") => {
            let hint = "; Docker and runc treat a profile with neither `defaultAction` nor \
                        `syscalls` as \"seccomp disabled\", which is not a filter";
            return Err(match e {
                PolicyError::Invalid {
                    file,
                    path,
                    message,
                } => PolicyError::Invalid {
                    file,
                    path,
                    message: message + hint,
                },
                other => other,
            });
        }
        other => other?,
    };
    if default_name == ActionName::Notify {
        return Err(r.error(
            &default_path,
            "SCMP_ACT_NOTIFY cannot be the default action (runc refuses it: the runtime's own \
             calls after loading the filter would wait for the agent)",
        ));
    }
    let default_data = read_errno(r, &mut top, default_name, "defaultErrnoRet", "defaultErrno")?;
    let default_action = default_name.with_data(default_data);

    let architectures = read_architectures(r, &mut top)?;
    let flags = read_flags(r, &mut top)?;

    let listener_path = optional_nonempty_string(r, &mut top, "listenerPath")?;
    let listener_metadata = optional_nonempty_string(r, &mut top, "listenerMetadata")?;
    if listener_metadata.is_some() && listener_path.is_none() {
        return Err(r.error(
            &root.key("listenerMetadata"),
            "`listenerMetadata` is set but `listenerPath` is not (the runtime spec forbids this)",
        ));
    }

    let mut rules = Vec::new();
    if let Some((v, spath)) = top.get("syscalls") {
        for (i, entry) in r.array(v, &spath)?.iter().enumerate() {
            read_syscall_entry(r, entry, &spath.index(i), &mut rules)?;
        }
    }

    for (key, path) in top.unused() {
        r.warn(
            WarningKind::Ignored,
            &path,
            format!("unknown field {key:?} ignored"),
        );
    }

    if listener_path.is_none() && rules.iter().any(|rule| rule.action == Action::UserNotif) {
        r.warn(WarningKind::RuntimeRefuses, root, NOTIFY_WITHOUT_LISTENER);
    }

    Ok(Policy {
        source: r.file.to_owned(),
        default_action,
        bad_arch_action: Action::KillThread,
        architectures,
        rules,
        flags,
        listener_path,
        listener_metadata,
        dialect: Dialect::Libseccomp,
        warnings: Vec::new(),
    })
}

fn optional_nonempty_string(
    r: &Reader,
    obj: &mut Obj,
    key: &str,
) -> Result<Option<String>, PolicyError> {
    match obj.get(key) {
        Some((v, p)) => {
            let s = r.string(v, &p)?;
            Ok((!s.is_empty()).then(|| s.to_owned()))
        }
        None => Ok(None),
    }
}

fn scmp_arch(r: &Reader, v: &Json, path: &JPath) -> Result<ArchRef, PolicyError> {
    let s = r.string(v, path)?;
    names::scmp_arch(s).ok_or_else(|| {
        r.error(
            path,
            format!(
                "unknown architecture {s:?}; expected one of {}",
                one_of(names::scmp_arch_names())
            ),
        )
    })
}

fn read_architectures(r: &mut Reader, top: &mut Obj) -> Result<Architectures, PolicyError> {
    let mut listed = Vec::new();
    let architectures = top.get("architectures");
    if let Some((v, p)) = &architectures {
        for (i, item) in r.array(v, p)?.iter().enumerate() {
            listed.push(scmp_arch(r, item, &p.index(i))?);
        }
    }
    let mut map = Vec::new();
    let effect = "so the filter covers the arches `architectures` lists (none: the native one)";
    if let Some((v, p)) = extension(r, top, "archMap", effect, &has_content) {
        for (i, item) in r.array(v, &p)?.iter().enumerate() {
            let ep = p.index(i);
            let mut entry = r.object(item, &ep)?;
            let (av, ap) = entry.require(r, "architecture", "an SCMP_ARCH_* name")?;
            let arch = scmp_arch(r, av, &ap)?;
            let mut sub_arches = Vec::new();
            if let Some((sv, sp)) = entry.get("subArchitectures") {
                for (k, sub) in r.array(sv, &sp)?.iter().enumerate() {
                    sub_arches.push(scmp_arch(r, sub, &sp.index(k))?);
                }
            }
            for (key, path) in entry.unused() {
                r.warn(
                    WarningKind::Ignored,
                    &path,
                    format!("unknown field {key:?} ignored"),
                );
            }
            map.push(ArchMapEntry { arch, sub_arches });
        }
        if !map.is_empty() && !listed.is_empty() {
            // moby and podman both refuse this combination.
            return Err(r.error(
                &p,
                "both `architectures` and `archMap` are given; use one of them",
            ));
        }
    }
    Ok(if map.is_empty() {
        Architectures::NativePlus(listed)
    } else {
        Architectures::ArchMap(map)
    })
}

fn read_flags(r: &Reader, top: &mut Obj) -> Result<Option<Vec<FilterFlag>>, PolicyError> {
    let Some((v, p)) = top.get("flags") else {
        return Ok(None);
    };
    let mut flags = Vec::new();
    for (s, i) in r.strings(v, &p)? {
        let flag = FilterFlag::from_spec_name(s).ok_or_else(|| {
            r.error(
                &p.index(i),
                format!(
                    "unknown flag {s:?}; expected one of {}",
                    one_of(FilterFlag::ALL.map(FilterFlag::spec_name))
                ),
            )
        })?;
        if !flags.contains(&flag) {
            flags.push(flag);
        }
    }
    Ok(Some(flags))
}

fn read_syscall_entry(
    r: &mut Reader,
    entry: &Json,
    path: &JPath,
    rules: &mut Vec<Rule>,
) -> Result<(), PolicyError> {
    let mut obj = r.object(entry, path)?;

    // Borrowed from the document: each rule below owns its copy.
    let mut names: Vec<&str> = Vec::new();
    if let Some((v, p)) = obj.get("names") {
        for (name, i) in r.strings(v, &p)? {
            if name.is_empty() {
                return Err(r.error(&p.index(i), "empty syscall name"));
            }
            names.push(name);
        }
    }
    if let Some((v, p)) = extension(r, &mut obj, "name", "so it names no syscall", &has_content) {
        let name = r.string(v, &p)?;
        if !name.is_empty() {
            if !names.is_empty() {
                return Err(r.error(&p, "both `name` and `names` are given; use `names`"));
            }
            names.push(name);
        }
    }
    if names.is_empty() {
        // runc (and moby before it) loops over the names and so ignores the entry; its
        // action and arguments are still read, as runc converts them first.
        r.warn(
            WarningKind::NeverApplies,
            &path.key("names"),
            "no syscall names: the entry has no effect (runc ignores it; the runtime spec \
             requires at least one name)",
        );
    }

    let (action_name, action_path) = read_action_name(r, &mut obj, "action")?;
    let data = read_errno(r, &mut obj, action_name, "errnoRet", "errno")?;
    let action = action_name.with_data(data);
    if action == Action::UserNotif && names.contains(&"write") {
        r.warn(
            WarningKind::RuntimeRefuses,
            &action_path,
            "runc refuses SCMP_ACT_NOTIFY on `write` (it needs `write` to hand over the listener)",
        );
    }

    let mut conditions = Vec::new();
    let mut args_path = None;
    if let Some((v, p)) = obj.get("args") {
        for (i, arg) in r.array(v, &p)?.iter().enumerate() {
            let ap = p.index(i);
            conditions.push((read_arg(r, arg, &ap)?, ap));
        }
        args_path = Some(p);
    }

    if let Some((v, p)) = obj.get("comment") {
        // runc ignores it in a config.json, whatever its type; it changes nothing either way.
        if !r.runtime_spec {
            r.string(v, &p)?;
        }
    }
    let mut applies = Applicability::default();
    let effect = "so the rule applies whatever the capabilities, arches and kernel";
    if let Some((v, p)) = extension(r, &mut obj, "includes", effect, &has_content) {
        applies.includes = read_host_filter(r, v, &p)?;
    }
    let effect = "so the rule is never left out";
    if let Some((v, p)) = extension(r, &mut obj, "excludes", effect, &has_content) {
        applies.excludes = read_host_filter(r, v, &p)?;
    }
    for (key, p) in obj.unused() {
        r.warn(
            WarningKind::Ignored,
            &p,
            format!("unknown field {key:?} ignored"),
        );
    }

    // runc matchCall: AND when every index is distinct, otherwise one rule per condition.
    let mut seen = [false; 6];
    let repeated = conditions.iter().any(|(c, _)| {
        let dup = seen[usize::from(c.index)];
        seen[usize::from(c.index)] = true;
        dup
    });
    // Values of one argument ORed is the idiom (`socket` for AF_UNIX or AF_INET); with a
    // condition on another argument too, that one no longer narrows the rule.
    let indexes = conditions
        .iter()
        .map(|(c, _)| c.index)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if let (true, true, Some(args_path)) = (repeated, indexes > 1, &args_path) {
        r.warn(
            WarningKind::Suspicious,
            args_path,
            "an argument index appears in more than one condition: runc then adds each \
             condition as a rule of its own, so the rule applies when any one of them holds \
             (OR, not AND), and the conditions on other arguments no longer narrow it (a rule \
             per value, each with the other conditions, keeps AND)"
                .to_string(),
        );
    }
    if let (true, 1, Some(args_path)) = (repeated, indexes, &args_path) {
        let conds: Vec<ArgCondition> = conditions.iter().map(|(c, _)| *c).collect();
        if let Some(message) = ored_bounds(&conds) {
            r.warn(WarningKind::Suspicious, args_path, message);
        }
    }
    let groups: Vec<(Vec<ArgCondition>, std::sync::Arc<str>)> = if repeated {
        conditions
            .iter()
            .map(|(c, p)| (vec![*c], p.as_str().into()))
            .collect()
    } else {
        vec![(
            conditions.iter().map(|(c, _)| *c).collect(),
            path.as_str().into(),
        )]
    };
    for name in names {
        for (conds, origin) in &groups {
            rules.push(Rule {
                syscall: name.to_owned(),
                action,
                conditions: conds.clone(),
                applies: applies.clone(),
                origin: origin.clone(),
            });
        }
    }
    Ok(())
}

/// What to say of conditions all on one argument (runc ORs them) when some are bounds (`NE`,
/// `LT`, `LE`, `GT`, `GE`): values of one argument ORed by `EQ` is the idiom (`socket` for
/// AF_UNIX or AF_INET), bounds ORed seldom mean what a list of them reads as (`GE 2` and
/// `LE 10` is every value, not 2..=10). `None` when every condition is `EQ` or `MASKED_EQ`.
fn ored_bounds(conds: &[ArgCondition]) -> Option<String> {
    let spelling = |c: &ArgCondition| {
        let name = OPERATORS
            .iter()
            .find(|(_, op)| *op == Some(c.op))
            .map_or("SCMP_CMP_MASKED_EQ", |(name, _)| name);
        format!("`{name} {}`", c.value)
    };
    if !conds.iter().any(|c| {
        matches!(
            c.op,
            CmpOp::Ne | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge
        )
    }) {
        return None;
    }
    let index = conds[0].index;
    let listed: Vec<String> = conds.iter().map(spelling).collect();
    let every = if covers_every_value(conds) {
        ", and together they hold for every value: the rule applies to every call, whatever \
         its arguments"
    } else {
        ""
    };
    let instead = if conds.iter().any(|c| c.op == CmpOp::Ne) {
        "to leave out several values, give them a rule of their own with another action"
    } else {
        "for a range, give the values outside it rules of their own with another action \
         (`SCMP_CMP_LT` its first value, `SCMP_CMP_GT` its last)"
    };
    Some(format!(
        "args[{index}] is given {} conditions with bounds ({}): runc adds each condition as \
         a rule of its own, so the rule applies when any one of them holds (OR, not AND)\
         {every}; {instead}",
        conds.len(),
        listed.join(" or ")
    ))
}

/// Whether the OR of `conds` (each on the whole 64-bit argument) holds for every value;
/// `false` when some condition is `MASKED_EQ` or a `Dword` (not worked out).
fn covers_every_value(conds: &[ArgCondition]) -> bool {
    const MAX: u128 = u64::MAX as u128;
    let mut spans: Vec<(u128, u128)> = Vec::new();
    for c in conds {
        if c.width != ArgWidth::Qword {
            return false;
        }
        let v = u128::from(c.value);
        match c.op {
            CmpOp::Eq => spans.push((v, v)),
            CmpOp::Ne => {
                if v > 0 {
                    spans.push((0, v - 1));
                }
                if v < MAX {
                    spans.push((v + 1, MAX));
                }
            }
            CmpOp::Lt if v > 0 => spans.push((0, v - 1)),
            CmpOp::Le => spans.push((0, v)),
            CmpOp::Gt if v < MAX => spans.push((v + 1, MAX)),
            CmpOp::Ge => spans.push((v, MAX)),
            CmpOp::Lt | CmpOp::Gt => {}
            CmpOp::MaskedEq(_) => return false,
        }
    }
    spans.sort_unstable();
    // The first value no span reaches yet.
    let mut next = 0u128;
    for (lo, hi) in spans {
        if lo > next {
            return false;
        }
        next = next.max(hi + 1);
    }
    next > MAX
}

fn read_arg(r: &mut Reader, v: &Json, path: &JPath) -> Result<ArgCondition, PolicyError> {
    let mut obj = r.object(v, path)?;
    let index = r.arg_index(&mut obj)?;
    let (vv, vp) = obj.require(r, "value", "an unsigned 64-bit integer")?;
    let value = r.u64(vv, &vp)?;
    let value_two = match obj.get("valueTwo") {
        Some((v2, p2)) => Some((r.u64(v2, &p2)?, p2)),
        None => None,
    };
    let (ov, op_path) = obj.get("op").ok_or_else(|| {
        r.error(
            &path.key("op"),
            format!(
                "missing; expected one of {}",
                one_of(OPERATORS.map(|(n, _)| n))
            ),
        )
    })?;
    let op_name = r.string(ov, &op_path)?;
    let Some(&(_, op)) = OPERATORS.iter().find(|(n, _)| *n == op_name) else {
        return Err(r.error(
            &op_path,
            format!(
                "unknown operator {op_name:?}; expected one of {}",
                one_of(OPERATORS.map(|(n, _)| n))
            ),
        ));
    };
    for (key, p) in obj.unused() {
        r.warn(
            WarningKind::Ignored,
            &p,
            format!("unknown field {key:?} ignored"),
        );
    }
    let condition = match op {
        // OCI: (arg & value) == valueTwo.
        None => ArgCondition::new(
            index,
            CmpOp::MaskedEq(value),
            value_two.map_or(0, |(v2, _)| v2),
        ),
        Some(op) => {
            if let Some((v2, p2)) = value_two {
                if v2 != 0 {
                    r.warn(
                        WarningKind::Ignored,
                        &p2,
                        format!(
                            "`valueTwo` is only used by SCMP_CMP_MASKED_EQ; ignored for {op_name}"
                        ),
                    );
                }
            }
            ArgCondition::new(index, op, value)
        }
    };
    if let Some(slip) = condition.slip() {
        let swapped = if op.is_none() {
            " (`value` is the mask and `valueTwo` the value: swapped?)"
        } else {
            ""
        };
        r.warn(
            WarningKind::Suspicious,
            path,
            format!("{op_name} on args[{index}] {slip}{swapped}"),
        );
    }
    Ok(condition)
}

fn read_host_filter(r: &mut Reader, v: &Json, path: &JPath) -> Result<HostFilter, PolicyError> {
    let mut obj = r.object(v, path)?;
    let mut filter = HostFilter::default();
    if let Some((cv, cp)) = obj.get("caps") {
        for (cap, i) in r.strings(cv, &cp)? {
            if !ALL_CAPS.contains(&cap) {
                r.warn(
                    WarningKind::UnknownName,
                    &cp.index(i),
                    format!(
                        "{cap:?} is not a Linux capability name (CAP_...); no container has it"
                    ),
                );
            }
            filter.caps.push(cap.to_owned());
        }
    }
    if let Some((av, ap)) = obj.get("arches") {
        for (arch, i) in r.strings(av, &ap)? {
            let p = ap.index(i);
            let a = names::filter_arch(arch).ok_or_else(|| {
                r.error(
                    &p,
                    format!(
                        "unknown architecture {arch:?}; expected a Go or libseccomp name ({}) or SCMP_ARCH_*",
                        one_of(names::filter_arch_names())
                    ),
                )
            })?;
            if let Some(host) = names::host_arch(arch) {
                filter.arches.push(host);
                continue;
            }
            // Docker and podman compare the string with their one name for the host, so
            // this spelling holds on no host: it is kept as a name that never equals the
            // native arch (an `includes` of only such names never applies).
            let never = names::filter_arch_spelling(arch).unwrap_or("(no host)");
            filter.arches.push(ArchRef::Unsupported(never));
            let instead = names::host_arch_name(a)
                .map(|n| format!("; write {n:?} for {a}"))
                .unwrap_or_default();
            r.warn(WarningKind::UnknownName,
                &p,
                format!(
                    "{arch:?} matches no host: Docker and podman compare these names with their own name for the host (`amd64` on x86_64, `arm64` on aarch64, `x86` on i386){instead}"
                ),
            );
        }
    }
    if let Some((kv, kp)) = obj.get("minKernel") {
        let s = r.string(kv, &kp)?;
        if !s.is_empty() {
            filter.min_kernel = Some(parse_min_kernel(s).ok_or_else(|| {
                r.error(
                    &kp,
                    format!("invalid kernel version {s:?}; expected \"<major>.<minor>\" such as \"4.8\""),
                )
            })?);
        }
    }
    for (key, p) in obj.unused() {
        r.warn(
            WarningKind::Ignored,
            &p,
            format!("unknown field {key:?} ignored"),
        );
    }
    Ok(filter)
}

/// moby's `KernelVersion.UnmarshalJSON`: exactly two dot-separated decimal parts, each
/// 0..=255 (`strconv.ParseUint(part, 10, 8)`), not both zero.
fn parse_min_kernel(s: &str) -> Option<KernelVersion> {
    let mut parts = s.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let part = |p: &str| -> Option<u32> {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse::<u8>().ok().map(u32::from)
    };
    let v = KernelVersion::new(part(major)?, part(minor)?);
    (v != KernelVersion::new(0, 0)).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> PolicyError {
        parse(json.as_bytes(), "t.json").unwrap_err()
    }

    #[test]
    fn min_kernel_follows_moby() {
        assert_eq!(parse_min_kernel("4.8"), Some(KernelVersion::new(4, 8)));
        assert_eq!(parse_min_kernel("5.010"), Some(KernelVersion::new(5, 10))); // ParseUint takes leading zeros
        assert_eq!(parse_min_kernel("256.1"), None);
        assert_eq!(parse_min_kernel("0.0"), None);
        assert_eq!(parse_min_kernel("4.8.1"), None);
        assert_eq!(parse_min_kernel("4"), None);
        assert_eq!(parse_min_kernel("+4.8"), None);
    }

    #[test]
    fn errno_string_twins() {
        let p = parse(
            br#"{"defaultAction":"SCMP_ACT_ERRNO","defaultErrno":"ENOSYS",
                 "syscalls":[{"names":["a"],"action":"SCMP_ACT_ERRNO","errno":"22"},
                             {"names":["b"],"action":"SCMP_ACT_ERRNO","errno":"EPERM","errnoRet":13}]}"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(p.default_action, Action::Errno(38));
        assert_eq!(p.rules[0].action, Action::Errno(22));
        assert_eq!(p.rules[1].action, Action::Errno(1));
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.warnings[0].path, "$.syscalls[1].errno");
        assert!(
            err(r#"{"defaultAction":"SCMP_ACT_ERRNO","defaultErrno":"EFOO"}"#)
                .to_string()
                .contains("unknown errno \"EFOO\"")
        );
    }

    /// Go's encoding/json (runc, moby) takes a key for a field whatever its case, with
    /// Unicode's simple folding (U+212A KELVIN SIGN is `K`, U+017F is `S`); two keys that are
    /// one field to Go are refused rather than guessed between. Firecracker's serde is exact.
    #[test]
    fn keys_match_fields_as_gos_encoding_json_does() {
        let p = parse(
            r#"{"DefaultAction":"SCMP_ACT_ERRNO","SYSCALLS":[
                 {"Names":["read"],"ACTION":"SCMP_ACT_ALLOW","args":[
                    {"index":1,"vaLue":2,"op":"SCMP_CMP_EQ"}]},
                 {"nameſ":["write"],"action":"SCMP_ACT_ERRNO","errnoRet":9}]}"#
                .as_bytes(),
            "t.json",
        )
        .unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.default_action, Action::Errno(1));
        assert_eq!(p.rules.len(), 2);
        assert_eq!(
            (p.rules[0].syscall.as_str(), p.rules[0].action),
            ("read", Action::Allow)
        );
        assert_eq!(p.rules[0].conditions.len(), 1);
        assert_eq!(p.rules[0].conditions[0].value, 2);
        assert_eq!(
            (p.rules[1].syscall.as_str(), p.rules[1].action),
            ("write", Action::Errno(9))
        );
        // `ß` is not `ss` to Go (its mappings are one character each): an unknown key.
        let p = parse(
            r#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[],"flaß":1}"#.as_bytes(),
            "t.json",
        )
        .unwrap();
        assert_eq!(p.warnings.len(), 1);
        let e = err(r#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[],"Syscalls":[]}"#);
        assert!(
            e.to_string().contains(
                r#"t.json: $.Syscalls: "syscalls" and "Syscalls" are one key to Go's encoding/json"#
            ),
            "{e}"
        );
        let e = err(
            r#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["a"],"Names":["b"],"action":"SCMP_ACT_ALLOW"}]}"#,
        );
        assert!(e.to_string().contains("$.syscalls[0].Names"), "{e}");
        let fc = crate::policy::firecracker::parse_with(
            br#"{"main": {"default_action": "trap", "filter_action": "allow", "Filter": []}}"#,
            "fc.json",
            &crate::policy::firecracker::FirecrackerOptions::new(crate::arch::Arch::X86_64),
        );
        assert!(
            fc.is_err(),
            "serde's keys are exact: `Filter` is not `filter`"
        );
    }

    /// ERRNO(0) makes a refused call look successful (the kernel returns 0 and runs
    /// nothing): accepted, as runc accepts it, with a warning where it is given; TRACE's 0 is
    /// only a message to the tracer.
    #[test]
    fn errno_zero_is_warned_about() {
        let p = parse(
            br#"{"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":0,
                 "syscalls":[{"names":["x"],"action":"SCMP_ACT_ERRNO","errnoRet":0},
                             {"names":["y"],"action":"SCMP_ACT_TRACE","errnoRet":0},
                             {"names":["z"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}"#,
            "t",
        )
        .unwrap();
        let paths: Vec<&str> = p.warnings.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(paths, ["$.defaultErrnoRet", "$.syscalls[0].errnoRet"]);
        assert!(p.warnings[0].message.contains("as if they had succeeded"));
    }

    #[test]
    fn errno_on_actions_without_data_is_ignored_as_runc_ignores_it() {
        // runc converts the action without it (`getAction`): a warning at its place.
        for (text, place, action) in [
            (
                r#"{"defaultAction":"SCMP_ACT_ALLOW","defaultErrnoRet":1}"#,
                "$.defaultErrnoRet",
                Action::Allow,
            ),
            (
                r#"{"defaultAction":"SCMP_ACT_LOG","syscalls":[{"names":["x"],"action":"SCMP_ACT_ERRNO"}]}"#,
                "",
                Action::Log,
            ),
        ] {
            let p = parse(text.as_bytes(), "t").unwrap();
            assert_eq!(p.default_action, action);
            let paths: Vec<&str> = p.warnings.iter().map(|w| w.path.as_str()).collect();
            let expected: Vec<&str> = [place].into_iter().filter(|p| !p.is_empty()).collect();
            assert_eq!(paths, expected);
        }
        let p = parse(
            br#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["x"],"action":"SCMP_ACT_LOG","errnoRet":5}]}"#,
            "t",
        )
        .unwrap();
        assert_eq!(p.rules[0].action, Action::Log);
        assert_eq!(p.warnings[0].path, "$.syscalls[0].errnoRet");
        assert_eq!(p.warnings[0].kind, WarningKind::Ignored);
        // TRACE takes data and defaults to EPERM like ERRNO.
        let p = parse(
            br#"{"defaultAction":"SCMP_ACT_TRACE","syscalls":[{"names":["x"],"action":"SCMP_ACT_TRACE","errnoRet":7}]}"#,
            "t",
        )
        .unwrap();
        assert_eq!(p.default_action, Action::Trace(1));
        assert_eq!(p.rules[0].action, Action::Trace(7));
    }

    #[test]
    fn oci_config_section() {
        let p = parse(
            br#"{"ociVersion":"1.0.2","linux":{"seccomp":{"defaultAction":"SCMP_ACT_KILL"}}}"#,
            "config.json",
        )
        .unwrap();
        assert_eq!(p.default_action, Action::KillThread);
        let e =
            err(r#"{"ociVersion":"1.0.2","linux":{"seccomp":{"defaultAction":"SCMP_ACT_FOO"}}}"#);
        assert_eq!(e.json_path(), Some("$.linux.seccomp.defaultAction"));
    }
}
