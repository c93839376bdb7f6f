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
//! Other hosts: [`ProfileOptions::native`] builds the filter runc would build on, say, an
//! aarch64 or s390x host, by removing this machine's arch from the libseccomp filter and
//! adding the chosen ones (libseccomp translates rules between arches by syscall name).
//! Big-endian filters are exported big-endian and swapped back here.
//!
//! Besides the BPF, [`LibseccompFilter::pfc`] holds libseccomp's pseudo filter code for the
//! same filter and [`Pfc`] runs it: libseccomp's rule database as it prints it, without its
//! BPF code generator (which has bugs of its own, see tests/compile_libseccomp.rs).
//!
//! Never use secopt's own profile parser here: this module is what it is checked against.

use libseccomp::{
    ScmpAction, ScmpArch, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall,
};
use secopt::bpf::{Program, SeccompData};
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
    /// The host architecture to behave as, as an OCI name (`SCMP_ARCH_AARCH64`); `None`: this
    /// machine's. A foreign host is emulated by removing this machine's architecture from
    /// the filter (unless listed) and adding the chosen one, as runc on that host would have
    /// it (libseccomp then translates every rule by syscall name).
    pub native: Option<String>,
    /// The architectures to add besides the native one (OCI names), replacing the profile's
    /// `architectures`/`archMap`; `None`: what the profile says.
    pub arches: Option<Vec<String>>,
}

impl Default for ProfileOptions {
    /// Docker's default capabilities on a 6.18 kernel, linear layout, this host.
    fn default() -> Self {
        ProfileOptions {
            caps: DOCKER_DEFAULT_CAPS.iter().map(|c| c.to_string()).collect(),
            kernel: (6, 18, 0),
            optimize: 1,
            native: None,
            arches: None,
        }
    }
}

/// The native architecture in the two spellings the conversion needs: the OCI `SCMP_ARCH_*`
/// name (for `archMap`), and moby's Go-style name (for `includes`/`excludes`).
struct Native {
    oci: &'static str,
    moby: &'static str,
}

/// This machine's architecture as an OCI name.
fn host_oci() -> Result<&'static str, String> {
    Ok(host_native()?.oci)
}

/// The native architecture named by its OCI name.
fn native_named(oci: &str) -> Result<Native, String> {
    // moby's goToNative, the other way round.
    let (oci, moby) = match oci {
        "SCMP_ARCH_X86_64" => ("SCMP_ARCH_X86_64", "amd64"),
        "SCMP_ARCH_X86" => ("SCMP_ARCH_X86", "x86"),
        "SCMP_ARCH_AARCH64" => ("SCMP_ARCH_AARCH64", "arm64"),
        "SCMP_ARCH_ARM" => ("SCMP_ARCH_ARM", "arm"),
        "SCMP_ARCH_RISCV64" => ("SCMP_ARCH_RISCV64", "riscv64"),
        "SCMP_ARCH_S390X" => ("SCMP_ARCH_S390X", "s390x"),
        "SCMP_ARCH_PPC64LE" => ("SCMP_ARCH_PPC64LE", "ppc64le"),
        "SCMP_ARCH_LOONGARCH64" => ("SCMP_ARCH_LOONGARCH64", "loongarch64"),
        other => return Err(format!("no moby arch name known for {other}")),
    };
    Ok(Native { oci, moby })
}

fn host_native() -> Result<Native, String> {
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

/// The OCI profiles of the corpus (`oci/*.json`), by file name, sorted; at least seven.
pub fn oci_profile_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(profile_path("oci"))
        .expect("profile corpus")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    names
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
    /// libseccomp's "pseudo filter code" for the same filter: its rule database printed as
    /// nested `if`/`else` (src/gen_pfc.c), independent of its BPF code generator.
    pub pfc: String,
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

/// Builds libseccomp's filter for `profile` as Docker + runc would on this host (or on the
/// host `opts.native` names).
pub fn build_filter(profile: &Value, opts: &ProfileOptions) -> Result<LibseccompFilter, String> {
    let native = match &opts.native {
        Some(n) => native_named(n)?,
        None => host_native()?,
    };
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
    if let Some(list) = &opts.arches {
        arches = list.clone();
    }
    // runc's filter always holds the native arch (seccomp_init adds it).
    if !arches.iter().any(|a| a == native.oci) {
        arches.insert(0, native.oci.to_string());
    }

    let err = |what: &str, e: libseccomp::error::SeccompError| format!("{what}: {e}");
    let mut ctx = ScmpFilterContext::new(default).map_err(|e| err("seccomp_init", e))?;
    // A foreign host: libseccomp's own native arch goes unless it is wanted. Rules are still
    // given as this machine's syscall numbers; libseccomp translates them to every arch in
    // the filter by name (its tables know every name on every arch, as pseudo-numbers
    // where the arch lacks the call).
    let host = host_oci()?;
    if !arches.iter().any(|a| a == host) {
        // Removed first: libseccomp refuses to mix byte orders, and an empty filter takes
        // the byte order of the next arch added.
        ctx.remove_arch(ScmpArch::native())
            .map_err(|e| err("remove native arch", e))?;
        for a in &arches {
            let arch: ScmpArch = a.parse().map_err(|e| err(a, e))?;
            ctx.add_arch(arch).map_err(|e| err(a, e))?;
        }
    } else {
        for a in &arches {
            let arch: ScmpArch = a.parse().map_err(|e| err(a, e))?;
            if !ctx.is_arch_present(arch).map_err(|e| err(a, e))? {
                ctx.add_arch(arch).map_err(|e| err(a, e))?;
            }
        }
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
    let big_endian = arches.iter().all(|a| {
        matches!(
            a.as_str(),
            "SCMP_ARCH_S390X"
                | "SCMP_ARCH_S390"
                | "SCMP_ARCH_PPC64"
                | "SCMP_ARCH_PPC"
                | "SCMP_ARCH_MIPS"
                | "SCMP_ARCH_MIPS64"
                | "SCMP_ARCH_MIPS64N32"
        )
    });
    let mut returns: Vec<u32> = rules.iter().map(|r| r.1).collect();
    returns.extend([action_value(default), action_value(bad_arch)]);
    Ok(LibseccompFilter {
        program: export(&ctx, big_endian, &returns)?,
        default_action: action_value(default),
        bad_arch_action: action_value(bad_arch),
        arches,
        rules,
        pfc: export_pfc(&ctx)?,
    })
}

/// `seccomp_export_pfc` into a memfd.
fn export_pfc(ctx: &ScmpFilterContext) -> Result<String, String> {
    let mut file = memfd()?;
    ctx.export_pfc(&file)
        .map_err(|e| format!("export_pfc: {e}"))?;
    let mut text = String::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text))
        .map_err(|e| format!("reading the exported PFC: {e}"))?;
    Ok(text)
}

fn memfd() -> Result<File, String> {
    // SAFETY: memfd_create with a valid C string; the fd is owned by the File from here on.
    let fd = unsafe { libc::memfd_create(c"secopt-test-export".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// `seccomp_export_bpf` into a memfd (libseccomp 2.5 has no export to memory). libseccomp
/// writes a big-endian filter's `struct sock_filter` fields big-endian; they are swapped
/// back here.
///
/// Generating a big-endian filter on a little-endian host, libseccomp (2.5.4 and 2.6.1,
/// src/gen_bpf.c `_gen_bpf_build_jmp_ret`) swaps the value of the `RET` copies it inserts
/// for long jumps twice, so those come out little-endian. On a real big-endian host the
/// swap is a no-op and the filter is right. Such a `RET` is repaired here: when its value
/// is not an action this filter can return (`returns`) but the value byte-swapped is, it
/// is swapped; a value that is neither is an error.
fn export(ctx: &ScmpFilterContext, big_endian: bool, returns: &[u32]) -> Result<Program, String> {
    let mut file = memfd()?;
    ctx.export_bpf(&file)
        .map_err(|e| format!("export_bpf: {e}"))?;
    let mut raw = Vec::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut raw))
        .map_err(|e| format!("reading the exported filter: {e}"))?;
    if big_endian {
        for insn in raw.chunks_exact_mut(8) {
            insn[0..2].reverse();
            insn[4..8].reverse();
        }
    }
    let mut program = Program::from_raw(&raw).map_err(|e| e.to_string())?;
    if big_endian {
        for (pc, insn) in program.insns.iter_mut().enumerate() {
            if insn.code != 0x06 {
                continue; // only RET K
            }
            match (
                returns.contains(&insn.k),
                returns.contains(&insn.k.swap_bytes()),
            ) {
                (true, _) => {}
                (false, true) => insn.k = insn.k.swap_bytes(),
                (false, false) => {
                    return Err(format!(
                        "RET at {pc} returns {:#x}: not an action of this filter",
                        insn.k
                    ))
                }
            }
        }
    }
    Ok(program)
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

/// One statement of libseccomp's pseudo filter code.
#[derive(Debug, Clone)]
enum PfcStmt {
    If {
        cond: PfcCond,
        then: Vec<PfcStmt>,
        otherwise: Vec<PfcStmt>,
    },
    Action(u32),
}

#[derive(Debug, Clone)]
struct PfcCond {
    /// `arch`, `syscall`, or an argument word: (index, Some(true) = hi32, Some(false) =
    /// lo32, None = the 32-bit argument).
    what: PfcValue,
    mask: u32,
    op: &'static str,
    k: u32,
    /// For an `$arch` test: the ABI its block is for (`# filter for arch x32 (…)`). x86_64
    /// and x32 share a token, and the PFC does not print the bit-30 split libseccomp's BPF
    /// makes between their blocks ([`Pfc::decide`] applies it).
    abi: Option<String>,
}

#[derive(Debug, Clone, Copy)]
enum PfcValue {
    Arch,
    Syscall,
    Arg(usize, Option<bool>),
}

/// libseccomp's pseudo filter code, parsed, as a second oracle: the rule database as
/// libseccomp itself prints it, without its BPF code generator in between.
#[derive(Debug, Clone)]
pub struct Pfc(Vec<PfcStmt>);

impl Pfc {
    pub fn parse(text: &str) -> Result<Pfc, String> {
        let mut abi: Option<String> = None;
        let lines: Vec<(usize, String, Option<String>)> = text
            .lines()
            .filter_map(|l| {
                if let Some(rest) = l.trim().strip_prefix("# filter for arch ") {
                    abi = rest.split_whitespace().next().map(str::to_string);
                }
                let code = l.split('#').next().unwrap_or("");
                let indent = code.len() - code.trim_start().len();
                let code = code.trim().to_string();
                (!code.is_empty()).then(|| (indent / 2, code, abi.clone()))
            })
            .collect();
        let mut i = 0;
        let block = parse_block(&lines, &mut i, 0)?;
        if i != lines.len() {
            return Err(format!("PFC: unexpected line {:?}", lines[i].1));
        }
        Ok(Pfc(block))
    }

    /// The action for `data` (`None`: the code ends without one).
    pub fn decide(&self, data: &SeccompData) -> Option<u32> {
        run_block(&self.0, data)
    }
}

fn parse_block(
    lines: &[(usize, String, Option<String>)],
    i: &mut usize,
    indent: usize,
) -> Result<Vec<PfcStmt>, String> {
    let mut out = Vec::new();
    while *i < lines.len() && lines[*i].0 == indent {
        let line = &lines[*i].1;
        if let Some(rest) = line.strip_prefix("if (") {
            let mut cond = parse_cond(rest.strip_suffix(')').ok_or("PFC: if without )")?)?;
            if matches!(cond.what, PfcValue::Arch) {
                cond.abi = lines[*i].2.clone();
            }
            *i += 1;
            let then = parse_block(lines, i, indent + 1)?;
            let mut otherwise = Vec::new();
            if *i < lines.len() && lines[*i].0 == indent && lines[*i].1 == "else" {
                *i += 1;
                otherwise = parse_block(lines, i, indent + 1)?;
            }
            out.push(PfcStmt::If {
                cond,
                then,
                otherwise,
            });
        } else if let Some(rest) = line.strip_prefix("action ") {
            out.push(PfcStmt::Action(parse_pfc_action(
                rest.trim_end_matches(';'),
            )?));
            *i += 1;
        } else {
            return Err(format!("PFC: cannot read {line:?}"));
        }
    }
    Ok(out)
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("PFC: bad number {s:?}: {e}"))
}

fn parse_cond(text: &str) -> Result<PfcCond, String> {
    let (lhs, rest) = text.split_once(' ').ok_or("PFC: bad condition")?;
    let what = match lhs {
        "$arch" => PfcValue::Arch,
        "$syscall" => PfcValue::Syscall,
        a => {
            let a = a.strip_prefix("$a").ok_or("PFC: bad operand")?;
            let (index, half) = match a.split_once('.') {
                Some((n, "hi32")) => (n, Some(true)),
                Some((n, "lo32")) => (n, Some(false)),
                None => (a, None),
                _ => return Err("PFC: bad argument half".into()),
            };
            PfcValue::Arg(index.parse().map_err(|_| "PFC: bad argument index")?, half)
        }
    };
    let (mask, rest) = match rest.strip_prefix("& ") {
        Some(r) => {
            let (m, r) = r.split_once(' ').ok_or("PFC: bad mask")?;
            (parse_u32(m)?, r)
        }
        None => (u32::MAX, rest),
    };
    let (op, k) = rest.split_once(' ').ok_or("PFC: bad comparison")?;
    let op = match op {
        "==" => "==",
        ">=" => ">=",
        ">" => ">",
        other => return Err(format!("PFC: unknown operator {other}")),
    };
    Ok(PfcCond {
        what,
        mask,
        op,
        k: parse_u32(k)?,
        abi: None,
    })
}

fn parse_pfc_action(text: &str) -> Result<u32, String> {
    let data = |s: &str| -> Result<u32, String> {
        parse_u32(
            s.split_once('(')
                .and_then(|(_, r)| r.strip_suffix(')'))
                .ok_or("PFC: bad action data")?,
        )
    };
    Ok(match text {
        "KILL_PROCESS" => 0x8000_0000,
        "KILL" => 0,
        "TRAP" => 0x0003_0000,
        "LOG" => 0x7ffc_0000,
        "ALLOW" => 0x7fff_0000,
        t if t.starts_with("ERRNO(") => 0x0005_0000 | data(t)?,
        t if t.starts_with("TRACE(") => 0x7ff0_0000 | data(t)?,
        t => parse_u32(t)?,
    })
}

fn run_block(block: &[PfcStmt], data: &SeccompData) -> Option<u32> {
    for stmt in block {
        match stmt {
            PfcStmt::Action(a) => return Some(*a),
            PfcStmt::If {
                cond,
                then,
                otherwise,
            } => {
                let v = match cond.what {
                    PfcValue::Arch => data.arch,
                    PfcValue::Syscall => data.nr as u32,
                    PfcValue::Arg(i, Some(true)) => (data.args[i] >> 32) as u32,
                    PfcValue::Arg(i, _) => data.args[i] as u32,
                } & cond.mask;
                // libseccomp's BPF sends x32 numbers (bit 30; -1 stays x86_64's) past the
                // x86_64 block, and all others past the x32 block.
                let nr = data.nr as u32;
                let x32_number = nr & 0x4000_0000 != 0 && nr != u32::MAX;
                let abi_matches = match cond.abi.as_deref() {
                    Some("x86_64") => !x32_number,
                    Some("x32") => nr & 0x4000_0000 != 0,
                    _ => true,
                };
                let holds = abi_matches
                    && match cond.op {
                        "==" => v == cond.k,
                        ">=" => v >= cond.k,
                        _ => v > cond.k,
                    };
                let taken = if holds { then } else { otherwise };
                if let Some(a) = run_block(taken, data) {
                    return Some(a);
                }
            }
        }
    }
    None
}

/// The syscall names of every rule group that applies on the host (moby's includes and
/// excludes), including rules whose action is the default one — the names runc's ENOSYS
/// stub looks at (libcontainer/seccomp/patchbpf `findLastSyscalls` iterates them all).
pub fn applicable_names(profile: &Value, opts: &ProfileOptions) -> Result<Vec<String>, String> {
    let native = match &opts.native {
        Some(n) => native_named(n)?,
        None => host_native()?,
    };
    let mut names = Vec::new();
    for call in profile
        .get("syscalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !group_applies(call, &native, opts)? {
            continue;
        }
        names.extend(strings(call.get("names")).iter().map(|s| s.to_string()));
        if let Some(n) = call.get("name").and_then(Value::as_str) {
            names.push(n.to_string());
        }
    }
    Ok(names)
}
