//! The independent oracle for profile semantics: build the filter the real toolchain builds for an
//! OCI/Docker seccomp profile, with the system libseccomp (through the `libseccomp` crate).
//!
//! The conversion follows, step by step, what Docker (moby/profiles `setupSeccomp`) and runc
//! (`libcontainer/seccomp/seccomp_linux.go`) do, see DESIGN.md §3:
//! - Docker: `archMap` gives the native architecture and its sub-architectures (x86_64 → x86_64,
//!   x86, x32), or the profile lists `architectures` itself (not both). A syscall group is dropped
//!   if `excludes` matches (the native arch's Go-style name, e.g. `amd64`, is listed; *any* listed
//!   cap is held; or the kernel is at least `minKernel`), and kept only if `includes` matches
//!   (native arch listed; *all* caps held; kernel at least `minKernel`).
//! - runc: the filter starts from the default action (`defaultErrnoRet`, else EPERM, for ERRNO
//!   and TRACE); libseccomp's bad-arch action is left at its default, KILL (runc never sets it);
//!   each listed architecture is added to the native one; every name becomes its own rule; a rule
//!   whose action equals the default action is dropped; names the native arch does not know are
//!   skipped; a rule's conditions are ANDed unless two name the same argument index, then each
//!   condition becomes a rule of its own (OR); `SCMP_CMP_MASKED_EQ` is `(arg & value) ==
//!   valueTwo`.
//! - Not modelled: runc's ENOSYS stub (`patchbpf`), which runc prepends to libseccomp's program;
//!   this returns libseccomp's own program.
//!
//! Never use secopt's own profile parser here: this module is what it is checked against.

use libseccomp::{
    ScmpAction, ScmpArch, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall,
};
use secopt::bpf::Program;
use serde_json::Value;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::FromRawFd;
use std::path::PathBuf;

/// The 14 capabilities Docker grants a container by default (moby `oci/caps` defaults).
pub const DOCKER_DEFAULT_CAPS: [&str; 14] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
];

/// `EPERM`: runc's errno for ERRNO and TRACE actions without `errnoRet`.
const EPERM: u16 = 1;

/// How to resolve a profile, as Docker and runc would on a given host.
#[derive(Debug, Clone)]
pub struct ProfileOptions {
    /// Capabilities in the container's bounding set (`CAP_…` names).
    pub caps: Vec<String>,
    /// Kernel version `(major, minor, patch)` that `minKernel` is compared with.
    pub kernel: (u32, u32, u32),
    /// libseccomp's `SCMP_FLTATR_CTL_OPTIMIZE`: 1 (linear, priority order) or 2 (binary tree).
    pub optimize: u32,
}

impl Default for ProfileOptions {
    /// Docker's default capabilities on a 6.18 kernel, linear layout.
    fn default() -> Self {
        ProfileOptions {
            caps: DOCKER_DEFAULT_CAPS.iter().map(|c| c.to_string()).collect(),
            kernel: (6, 18, 0),
            optimize: 1,
        }
    }
}

/// The native architecture in the three spellings the conversion needs: libseccomp's, the OCI
/// `SCMP_ARCH_*` name (for `archMap`), and moby's Go-style name (for `includes`/`excludes`).
struct Native {
    oci: &'static str,
    moby: &'static str,
}

fn native() -> Result<Native, String> {
    // moby's goToNative: GOARCH → the name profiles use in includes/excludes.
    Ok(match std::env::consts::ARCH {
        "x86_64" => Native {
            oci: "SCMP_ARCH_X86_64",
            moby: "amd64",
        },
        "x86" => Native {
            oci: "SCMP_ARCH_X86",
            moby: "x86",
        },
        "aarch64" => Native {
            oci: "SCMP_ARCH_AARCH64",
            moby: "arm64",
        },
        "arm" => Native {
            oci: "SCMP_ARCH_ARM",
            moby: "arm",
        },
        "riscv64" => Native {
            oci: "SCMP_ARCH_RISCV64",
            moby: "riscv64",
        },
        "s390x" => Native {
            oci: "SCMP_ARCH_S390X",
            moby: "s390x",
        },
        "loongarch64" => Native {
            oci: "SCMP_ARCH_LOONGARCH64",
            moby: "loongarch64",
        },
        other => return Err(format!("no moby arch name known for host arch {other}")),
    })
}

/// Path of a profile in the shared corpus, e.g. `oci/docker-default.json`.
pub fn profile_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles")
        .join(relative)
}

/// Reads and parses a profile of the shared corpus.
pub fn load_profile(relative: &str) -> Result<Value, String> {
    let path = profile_path(relative);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// What libseccomp built for a profile.
#[derive(Debug, Clone)]
pub struct LibseccompFilter {
    /// The exported BPF program.
    pub program: Program,
    /// The default action's return value.
    pub default_action: u32,
    /// libseccomp's bad-arch action's return value.
    pub bad_arch_action: u32,
    /// Architectures in the filter, as OCI names, native first.
    pub arches: Vec<String>,
    /// The rules added, in order: `(name, return value, conditions)`, for diagnostics.
    pub rules: Vec<(String, u32, Vec<Condition>)>,
}

/// One argument condition as runc hands it to libseccomp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition {
    pub index: u32,
    pub op: ScmpCompareOp,
    pub value: u64,
    pub value_two: u64,
}

impl Condition {
    fn to_libseccomp(self) -> ScmpArgCompare {
        match self.op {
            // runc: MakeCondition(index, MASKED_EQ, value, valueTwo): mask = value.
            ScmpCompareOp::MaskedEqual(_) => ScmpArgCompare::new(
                self.index,
                ScmpCompareOp::MaskedEqual(self.value),
                self.value_two,
            ),
            op => ScmpArgCompare::new(self.index, op, self.value),
        }
    }
}

/// runc's `getAction`: the OCI action name (and optional errno) as a libseccomp action.
fn action(name: &str, errno_ret: Option<u64>) -> Result<ScmpAction, String> {
    let errno = match errno_ret {
        Some(e) => u16::try_from(e).map_err(|_| format!("errnoRet {e} does not fit 16 bits"))?,
        None => EPERM,
    };
    Ok(match name {
        "SCMP_ACT_KILL" | "SCMP_ACT_KILL_THREAD" => ScmpAction::KillThread,
        "SCMP_ACT_KILL_PROCESS" => ScmpAction::KillProcess,
        "SCMP_ACT_TRAP" => ScmpAction::Trap,
        "SCMP_ACT_ERRNO" => ScmpAction::Errno(errno as i32),
        "SCMP_ACT_TRACE" => ScmpAction::Trace(errno),
        "SCMP_ACT_LOG" => ScmpAction::Log,
        "SCMP_ACT_ALLOW" => ScmpAction::Allow,
        "SCMP_ACT_NOTIFY" => ScmpAction::Notify,
        other => return Err(format!("unknown action {other}")),
    })
}

/// The seccomp return value of a libseccomp action (from the uapi header values).
pub fn action_value(a: ScmpAction) -> u32 {
    match a {
        ScmpAction::KillProcess => 0x8000_0000,
        ScmpAction::KillThread => 0,
        ScmpAction::Trap => 0x0003_0000,
        ScmpAction::Errno(e) => 0x0005_0000 | (e as u32 & 0xffff),
        ScmpAction::Notify => 0x7fc0_0000,
        ScmpAction::Trace(t) => 0x7ff0_0000 | t as u32,
        ScmpAction::Log => 0x7ffc_0000,
        ScmpAction::Allow => 0x7fff_0000,
        _ => unreachable!("libseccomp 0.4 has no other action"),
    }
}

fn compare_op(op: &str) -> Result<ScmpCompareOp, String> {
    Ok(match op {
        "SCMP_CMP_NE" => ScmpCompareOp::NotEqual,
        "SCMP_CMP_LT" => ScmpCompareOp::Less,
        "SCMP_CMP_LE" => ScmpCompareOp::LessOrEqual,
        "SCMP_CMP_EQ" => ScmpCompareOp::Equal,
        "SCMP_CMP_GE" => ScmpCompareOp::GreaterEqual,
        "SCMP_CMP_GT" => ScmpCompareOp::Greater,
        "SCMP_CMP_MASKED_EQ" => ScmpCompareOp::MaskedEqual(0),
        other => return Err(format!("unknown operator {other}")),
    })
}

/// Parses a kernel version such as `4.8` or `5.10.1` (missing parts are 0).
fn parse_kernel(v: &str) -> Result<(u32, u32, u32), String> {
    let mut parts = v.split('.').map(|p| p.parse::<u32>());
    let mut next = || parts.next().transpose().map(|p| p.unwrap_or(0));
    let bad = |_| format!("bad kernel version {v:?}");
    Ok((
        next().map_err(bad)?,
        next().map_err(bad)?,
        next().map_err(bad)?,
    ))
}

fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// moby's includes/excludes test for one syscall group.
fn group_applies(call: &Value, native: &Native, opts: &ProfileOptions) -> Result<bool, String> {
    let has_cap = |c: &str| opts.caps.iter().any(|h| h == c);
    let kernel_at_least = |v: &Value| -> Result<bool, String> {
        let s = v.as_str().ok_or("minKernel is not a string")?;
        Ok(opts.kernel >= parse_kernel(s)?)
    };
    if let Some(ex) = call.get("excludes").filter(|v| !v.is_null()) {
        if strings(ex.get("arches")).contains(&native.moby) {
            return Ok(false);
        }
        if strings(ex.get("caps")).iter().any(|c| has_cap(c)) {
            return Ok(false);
        }
        if let Some(k) = ex.get("minKernel").filter(|v| !v.is_null()) {
            if kernel_at_least(k)? {
                return Ok(false);
            }
        }
    }
    if let Some(inc) = call.get("includes").filter(|v| !v.is_null()) {
        let arches = strings(inc.get("arches"));
        if !arches.is_empty() && !arches.contains(&native.moby) {
            return Ok(false);
        }
        if !strings(inc.get("caps")).iter().all(|c| has_cap(c)) {
            return Ok(false);
        }
        if let Some(k) = inc.get("minKernel").filter(|v| !v.is_null()) {
            if !kernel_at_least(k)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

fn conditions(call: &Value) -> Result<Vec<Condition>, String> {
    let Some(args) = call.get("args").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    args.iter()
        .map(|a| {
            let num = |k: &str| a.get(k).and_then(Value::as_u64).unwrap_or(0);
            let index = a
                .get("index")
                .and_then(Value::as_u64)
                .filter(|&i| i < 6)
                .ok_or("argument index missing or not below 6")?;
            let op = a.get("op").and_then(Value::as_str).ok_or("op missing")?;
            Ok(Condition {
                index: index as u32,
                op: compare_op(op)?,
                value: num("value"),
                value_two: num("valueTwo"),
            })
        })
        .collect()
}

/// Builds libseccomp's filter for `profile` as Docker + runc would on this host.
pub fn build_filter(profile: &Value, opts: &ProfileOptions) -> Result<LibseccompFilter, String> {
    let native = native()?;
    let errno_of = |v: Option<&Value>| v.and_then(Value::as_u64);
    let default_name = profile
        .get("defaultAction")
        .and_then(Value::as_str)
        .ok_or("defaultAction missing")?;
    let default = action(default_name, errno_of(profile.get("defaultErrnoRet")))?;

    // Architectures: archMap (Docker) or architectures (plain OCI), never both.
    let listed = strings(profile.get("architectures"));
    let map = profile.get("archMap").and_then(Value::as_array);
    if !listed.is_empty() && map.is_some_and(|m| !m.is_empty()) {
        return Err("both architectures and archMap".into());
    }
    let mut arches: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
    for entry in map.into_iter().flatten() {
        if entry.get("architecture").and_then(Value::as_str) == Some(native.oci) {
            arches.push(native.oci.to_string());
            arches.extend(
                strings(entry.get("subArchitectures"))
                    .iter()
                    .map(|s| s.to_string()),
            );
            break;
        }
    }

    let err = |what: &str, e: libseccomp::error::SeccompError| format!("{what}: {e}");
    let mut ctx = ScmpFilterContext::new(default).map_err(|e| err("seccomp_init", e))?;
    for a in &arches {
        let arch: ScmpArch = a.parse().map_err(|e| err(a, e))?;
        ctx.add_arch(arch).map_err(|e| err(a, e))?;
    }
    ctx.set_ctl_optimize(opts.optimize)
        .map_err(|e| err("optimize", e))?;

    let mut rules = Vec::new();
    for call in profile
        .get("syscalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !group_applies(call, &native, opts)? {
            continue;
        }
        let mut names = strings(call.get("names"));
        if let Some(n) = call.get("name").and_then(Value::as_str) {
            names.push(n);
        }
        let act_name = call
            .get("action")
            .and_then(Value::as_str)
            .ok_or("action missing")?;
        let act = action(act_name, errno_of(call.get("errnoRet")))?;
        if act == default {
            continue; // runc: redundant with the default action
        }
        let conds = conditions(call)?;
        let mut per_index = [0; 6];
        for c in &conds {
            per_index[c.index as usize] += 1;
        }
        // runc: ANDed when every index is distinct, else one rule per condition (OR).
        let groups: Vec<Vec<Condition>> = if per_index.iter().any(|&n| n > 1) {
            conds.iter().map(|&c| vec![c]).collect()
        } else {
            vec![conds]
        };
        for name in names {
            let Ok(sys) = ScmpSyscall::from_name(name) else {
                continue; // runc: unknown to libseccomp on the native arch, skipped
            };
            for g in &groups {
                let cmp: Vec<ScmpArgCompare> = g.iter().map(|c| c.to_libseccomp()).collect();
                if cmp.is_empty() {
                    ctx.add_rule(act, sys)
                } else {
                    ctx.add_rule_conditional(act, sys, &cmp)
                }
                .map_err(|e| err(name, e))?;
                rules.push((name.to_string(), action_value(act), g.clone()));
            }
        }
    }

    let bad_arch = ctx.get_act_badarch().map_err(|e| err("badarch", e))?;
    Ok(LibseccompFilter {
        program: export(&ctx)?,
        default_action: action_value(default),
        bad_arch_action: action_value(bad_arch),
        arches,
        rules,
    })
}

/// `seccomp_export_bpf` into a memfd (libseccomp 2.5 has no export to memory).
fn export(ctx: &ScmpFilterContext) -> Result<Program, String> {
    // SAFETY: memfd_create with a valid C string; the fd is owned by the File from here on.
    let fd = unsafe { libc::memfd_create(c"secopt-test-bpf".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    let mut file = unsafe { File::from_raw_fd(fd) };
    ctx.export_bpf(&file)
        .map_err(|e| format!("export_bpf: {e}"))?;
    let mut raw = Vec::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut raw))
        .map_err(|e| format!("reading the exported filter: {e}"))?;
    Program::from_raw(&raw).map_err(|e| e.to_string())
}

/// Docker's default profile for this host, built by libseccomp with `optimize` (1 or 2).
pub fn docker_default(optimize: u32) -> LibseccompFilter {
    let profile = load_profile("oci/docker-default.json").expect("docker-default.json");
    let opts = ProfileOptions {
        optimize,
        ..ProfileOptions::default()
    };
    build_filter(&profile, &opts).expect("libseccomp builds docker-default.json")
}
