//! The independent oracle for Firecracker's filter files: the programs Firecracker's own
//! compiler builds with the system libseccomp (src/seccompiler/src/lib.rs `compile_bpf` in the
//! firecracker repository), one per thread kind, on this x86_64 host.
//!
//! Never use secopt's own Firecracker parser here: this module is what it is checked against.

use libseccomp::{
    ScmpAction, ScmpArch, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall,
};
use secopt::bpf::Program;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::FromRawFd;

/// A Firecracker action as its seccompiler (src/seccompiler/src/types.rs) hands it to
/// libseccomp.
pub fn firecracker_action(v: &Value) -> ScmpAction {
    match v {
        Value::String(s) => match s.as_str() {
            "allow" => ScmpAction::Allow,
            "trap" => ScmpAction::Trap,
            "kill_thread" => ScmpAction::KillThread,
            "kill_process" => ScmpAction::KillProcess,
            "log" => ScmpAction::Log,
            other => panic!("action {other}"),
        },
        Value::Object(o) => {
            let (k, n) = o.iter().next().unwrap();
            let n = n.as_u64().unwrap() as u16;
            match k.as_str() {
                "errno" => ScmpAction::Errno(i32::from(n)),
                "trace" => ScmpAction::Trace(n),
                other => panic!("action {other}"),
            }
        }
        other => panic!("action {other}"),
    }
}

/// Firecracker's own compiler, step by step (src/seccompiler/src/lib.rs `compile_bpf`):
/// one libseccomp filter per thread with the default action, every entry a rule with the
/// filter action; a `dword` `eq` is `MASKED_EQ` with mask 0xffffffff, every other operator
/// compares 64 bits, `{"masked_eq": m}` is `MASKED_EQ` with mask m. Returns, per thread,
/// the program and its pseudo filter code. libseccomp's default layout (Firecracker sets
/// none); [`firecracker_with_libseccomp_at`] chooses one.
pub fn firecracker_with_libseccomp(json: &Value) -> BTreeMap<String, (Program, String)> {
    firecracker_with_libseccomp_at(json, None)
}

/// [`firecracker_with_libseccomp`] with `SCMP_FLTATR_CTL_OPTIMIZE` set to `optimize` (1:
/// linear in priority order, 2: binary tree) when given.
pub fn firecracker_with_libseccomp_at(
    json: &Value,
    optimize: Option<u32>,
) -> BTreeMap<String, (Program, String)> {
    build(json, optimize, None)
}

/// [`firecracker_with_libseccomp`] for another target, as `seccompiler-bin --target-arch`
/// builds it on this host: the target's arch added to the context (`seccomp_arch_add`), the
/// host's left in, each rule's syscall resolved by name on this host and added to both.
pub fn firecracker_with_libseccomp_for(
    json: &Value,
    target: ScmpArch,
) -> BTreeMap<String, (Program, String)> {
    build(json, None, Some(target))
}

fn build(
    json: &Value,
    optimize: Option<u32>,
    target: Option<ScmpArch>,
) -> BTreeMap<String, (Program, String)> {
    let mut out = BTreeMap::new();
    for (thread, f) in json.as_object().unwrap() {
        let default = firecracker_action(&f["default_action"]);
        let action = firecracker_action(&f["filter_action"]);
        let mut ctx = ScmpFilterContext::new(default).unwrap();
        if let Some(level) = optimize {
            ctx.set_ctl_optimize(level).unwrap();
        }
        if let Some(arch) = target {
            ctx.add_arch(arch).unwrap();
        }
        for rule in f["filter"].as_array().unwrap() {
            let sys = ScmpSyscall::from_name(rule["syscall"].as_str().unwrap()).unwrap();
            let conds: Vec<ScmpArgCompare> = rule["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    let index = a["index"].as_u64().unwrap() as u32;
                    let val = a["val"].as_u64().unwrap();
                    let op = match &a["op"] {
                        Value::String(s) => match (s.as_str(), a["type"].as_str()) {
                            ("eq", Some("dword")) => ScmpCompareOp::MaskedEqual(0xFFFF_FFFF),
                            ("eq", _) => ScmpCompareOp::Equal,
                            ("ne", _) => ScmpCompareOp::NotEqual,
                            ("lt", _) => ScmpCompareOp::Less,
                            ("le", _) => ScmpCompareOp::LessOrEqual,
                            ("gt", _) => ScmpCompareOp::Greater,
                            ("ge", _) => ScmpCompareOp::GreaterEqual,
                            (other, _) => panic!("op {other}"),
                        },
                        Value::Object(o) => {
                            ScmpCompareOp::MaskedEqual(o["masked_eq"].as_u64().unwrap())
                        }
                        other => panic!("op {other}"),
                    };
                    ScmpArgCompare::new(index, op, val)
                })
                .collect();
            ctx.add_rule_conditional(action, sys, &conds).unwrap();
        }
        // Exported through memfds, not named files: tests running in parallel threads build
        // the same thread kinds at once.
        let mut bpf = memfd();
        ctx.export_bpf(&bpf).unwrap();
        let mut raw = Vec::new();
        bpf.seek(SeekFrom::Start(0)).unwrap();
        bpf.read_to_end(&mut raw).unwrap();
        let mut pfc_file = memfd();
        ctx.export_pfc(&pfc_file).unwrap();
        let mut pfc = String::new();
        pfc_file.seek(SeekFrom::Start(0)).unwrap();
        pfc_file.read_to_string(&mut pfc).unwrap();
        out.insert(thread.clone(), (Program::from_raw(&raw).unwrap(), pfc));
    }
    out
}

fn memfd() -> File {
    // SAFETY: memfd_create with a valid C string; the fd is owned by the File from here on.
    let fd = unsafe { libc::memfd_create(c"secopt-test-firecracker".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    unsafe { File::from_raw_fd(fd) }
}
