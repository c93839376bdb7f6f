//! Peer compilers measured beside secopt: the system libseccomp, through the `libseccomp`
//! crate (cargo feature `libseccomp`, which needs the system library at run time).
//!
//! The rules fed to libseccomp are the policy's rules that survive resolution for the
//! native arch, one `seccomp_rule_add` per rule, by syscall name and *in profile order* —
//! what runc does after its own profile conversion (same-index conditions already split into
//! separate rules, rules equal to the default already dropped). The order matters: the
//! linear layout tests syscalls in the order their rules were added. libseccomp then adds
//! the rules to every architecture of the filter itself, with its own socketcall/ipc
//! multiplexing. runc's ENOSYS stub is not part of libseccomp's program and is not added.

use super::variant::Variant;
#[cfg(feature = "libseccomp")]
use super::variant::VariantKind;
use super::BenchError;
use crate::policy::{Policy, Resolved};

/// libseccomp's layouts: `SCMP_FLTATR_CTL_OPTIMIZE` 1 (a linear chain in priority order)
/// and 2 (a binary tree over syscall numbers).
pub const LIBSECCOMP_LAYOUTS: [(u32, &str); 2] = [(1, "libseccomp-linear"), (2, "libseccomp-tree")];

/// Whether this build can produce libseccomp variants.
pub const fn libseccomp_available() -> bool {
    cfg!(feature = "libseccomp")
}

/// The libseccomp variants (linear and tree) for `policy` as resolved in `resolved`.
#[cfg(feature = "libseccomp")]
pub fn libseccomp_variants(
    policy: &Policy,
    resolved: &Resolved,
) -> Result<Vec<Variant>, BenchError> {
    let version = crate::policy::SyscallResolver::libseccomp_version();
    LIBSECCOMP_LAYOUTS
        .iter()
        .map(|&(optimize, name)| {
            let (program, unknown) =
                imp::build(policy, resolved, optimize).map_err(|message| BenchError::Variant {
                    variant: name.to_string(),
                    message: format!("libseccomp could not build the filter: {message}"),
                })?;
            let mut v = Variant::program(
                name,
                VariantKind::Libseccomp {
                    optimize,
                    version: version.clone(),
                },
                program,
            );
            if !unknown.is_empty() {
                v.notes.push(format!(
                    "{name}: libseccomp {version} does not know {} (left out, as runc leaves out names its libseccomp does not know)",
                    unknown.join(", ")
                ));
            }
            Ok(v)
        })
        .collect()
}

/// Without the `libseccomp` feature there are no libseccomp variants.
#[cfg(not(feature = "libseccomp"))]
pub fn libseccomp_variants(
    _policy: &Policy,
    _resolved: &Resolved,
) -> Result<Vec<Variant>, BenchError> {
    Err(BenchError::NoLibseccomp)
}

#[cfg(feature = "libseccomp")]
mod imp {
    use crate::arch::Arch;
    use crate::bpf::Program;
    use crate::policy::{Action, ArgCondition, ArgWidth, CmpOp, Policy, Resolved};
    use libseccomp::{
        ScmpAction, ScmpArch, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall,
    };
    use std::io::{Read, Seek, SeekFrom};
    use std::os::fd::FromRawFd;

    fn action(a: Action) -> ScmpAction {
        match a {
            Action::KillProcess => ScmpAction::KillProcess,
            Action::KillThread => ScmpAction::KillThread,
            Action::Trap => ScmpAction::Trap,
            Action::Errno(e) => ScmpAction::Errno(e as i32),
            Action::UserNotif => ScmpAction::Notify,
            Action::Trace(t) => ScmpAction::Trace(t),
            Action::Log => ScmpAction::Log,
            Action::Allow => ScmpAction::Allow,
        }
    }

    fn compare(c: &ArgCondition) -> Result<ScmpArgCompare, String> {
        let index = u32::from(c.index);
        Ok(match (c.width, c.op) {
            (_, CmpOp::MaskedEq(mask)) => {
                let mask = match c.width {
                    ArgWidth::Qword => mask,
                    ArgWidth::Dword => mask & 0xffff_ffff,
                };
                ScmpArgCompare::new(index, ScmpCompareOp::MaskedEqual(mask), c.value)
            }
            // Low 32 bits equal: what Firecracker's seccompiler-bin emits for a dword `eq`.
            (ArgWidth::Dword, CmpOp::Eq) => ScmpArgCompare::new(
                index,
                ScmpCompareOp::MaskedEqual(0xffff_ffff),
                c.value & 0xffff_ffff,
            ),
            (ArgWidth::Dword, op) => {
                return Err(format!(
                    "args[{index}] {op:?} on the low 32 bits only (rust-vmm `dword`) has no libseccomp equivalent"
                ))
            }
            (ArgWidth::Qword, op) => {
                let op = match op {
                    CmpOp::Eq => ScmpCompareOp::Equal,
                    CmpOp::Ne => ScmpCompareOp::NotEqual,
                    CmpOp::Lt => ScmpCompareOp::Less,
                    CmpOp::Le => ScmpCompareOp::LessOrEqual,
                    CmpOp::Gt => ScmpCompareOp::Greater,
                    CmpOp::Ge => ScmpCompareOp::GreaterEqual,
                    CmpOp::MaskedEq(_) => unreachable!("handled above"),
                };
                ScmpArgCompare::new(index, op, c.value)
            }
        })
    }

    /// libseccomp's program, and the syscall names it did not know (left out).
    pub fn build(
        policy: &Policy,
        resolved: &Resolved,
        optimize: u32,
    ) -> Result<(Program, Vec<String>), String> {
        let e = |what: &str, err: libseccomp::error::SeccompError| format!("{what}: {err}");
        let native = resolved.native;
        let host = Arch::host().ok_or("no libseccomp architecture for this host")?;
        if native != host {
            return Err(format!(
                "the profile was resolved for {native}, but libseccomp builds for this host ({host})"
            ));
        }
        let mut ctx = ScmpFilterContext::new(action(resolved.default_action))
            .map_err(|err| e("seccomp_init", err))?;
        for a in &resolved.arches {
            if a.arch != native {
                ctx.add_arch(a.arch.libseccomp())
                    .map_err(|err| e(a.arch.name(), err))?;
            }
        }
        if !resolved.arches.iter().any(|a| a.arch == native) {
            ctx.remove_arch(ScmpArch::Native)
                .map_err(|err| e("remove native arch", err))?;
        }
        ctx.set_act_badarch(action(resolved.bad_arch_action))
            .map_err(|err| e("bad-arch action", err))?;
        ctx.set_ctl_optimize(optimize)
            .map_err(|err| e("optimize", err))?;
        let mut unknown: Vec<String> = Vec::new();
        for rule in &policy.rules {
            // Only rules that survived resolution on some arch of the filter (includes and
            // excludes, rules equal to the default dropped), matched by origin, action and
            // conditions. runc adds each by name once; libseccomp puts it into every arch
            // that has the syscall (x86-only names such as `_llseek` resolve to libseccomp's
            // pseudo numbers on x86_64 and land in the x86 block).
            // Names an arch only reaches through socketcall/ipc survive in `unknown_rules`.
            let same = |r: &crate::policy::ResolvedRule| {
                r.origin == rule.origin
                    && r.action == rule.action
                    && r.conditions == rule.conditions
            };
            let survives = resolved.arches.iter().any(|a| {
                let direct = a.arch.syscalls().nr(&rule.syscall).is_some_and(|nr| {
                    a.syscalls
                        .get(&nr)
                        .is_some_and(|list| list.iter().any(same))
                });
                let multiplexed = a
                    .unknown_rules
                    .get(&rule.syscall)
                    .is_some_and(|list| list.iter().any(same));
                direct || multiplexed
            });
            if !survives {
                continue;
            }
            let name = rule.syscall.as_str();
            let Ok(sys) = ScmpSyscall::from_name(name) else {
                if !unknown.iter().any(|u| u == name) {
                    unknown.push(name.to_string());
                }
                continue;
            };
            let cmps = rule
                .conditions
                .iter()
                .map(compare)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|m| format!("{name} ({}): {m}", rule.origin))?;
            let added = if cmps.is_empty() {
                ctx.add_rule(action(rule.action), sys)
            } else {
                ctx.add_rule_conditional(action(rule.action), sys, &cmps)
            };
            added.map_err(|err| format!("{name} ({}): {err}", rule.origin))?;
        }
        Ok((export(&ctx)?, unknown))
    }

    /// `seccomp_export_bpf` into a memfd (libseccomp 2.5 cannot export to memory).
    fn export(ctx: &ScmpFilterContext) -> Result<Program, String> {
        // SAFETY: memfd_create with a valid C string; the fd is owned by the File from here on.
        let fd = unsafe { libc::memfd_create(c"secopt-bench".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        ctx.export_bpf(&file)
            .map_err(|err| format!("export_bpf: {err}"))?;
        let mut raw = Vec::new();
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_end(&mut raw))
            .map_err(|err| format!("reading the exported filter: {err}"))?;
        Program::from_raw(&raw).map_err(|err| err.to_string())
    }
}
