//! runc's ENOSYS stub (opencontainers/runc libcontainer/seccomp/patchbpf/enosys_linux.go),
//! which runc prepends to libseccomp's program so that syscalls newer than the profile
//! fail with `ENOSYS` (and C libraries fall back to older ones) instead of the default
//! action. Decisions reproduced here, checked against that file:
//!
//! - Not added when the default action is ALLOW, LOG or TRACE (`isAllowAction`). runc's check for a `defaultErrnoRet` of ENOSYS
//!   compares the errno with a whole return value (`SCMP_ACT_ERRNO(ENOSYS)`) and so never
//!   fires; it is not reproduced.
//! - Only the architectures the OCI config lists get a section (`findLastSyscalls` loops
//!   over `config.Architectures`; [`ResolvedArch::listed`]). A profile without
//!   `architectures` gets none at all: runc then emits `ld [arch]; ja; ja; ret
//!   ERRNO(ENOSYS)`, whose jumps skip the `ret` (observed from a container), and secopt
//!   emits nothing, which decides the same.
//! - Per listed architecture, the highest syscall number named by any rule of the profile
//!   (`findLastSyscalls`, counting rules dropped for equalling the default action, and not
//!   the socket and IPC calls libseccomp multiplexes: [`ResolvedArch::highest_named`]); an
//!   arch whose highest number is 0 or absent gets no section.
//! - `arch == token && nr > highest` → `ERRNO(ENOSYS)`, compared unsigned, so on most
//!   arches `nr == -1` gets ENOSYS too. Every other case goes on to the filter proper.
//! - On `AUDIT_ARCH_X86_64`, bit 30 chooses between the x86_64 and the x32 highest number
//!   when both ABIs have a section; with only one of them, numbers of the other ABI go
//!   straight to the filter. With x32's section present, `-1` has bit 30 set and is
//!   compared with the x32 highest number: it gets ENOSYS.
//! - On s390x, `nr == 0` also gets ENOSYS (the kernel leaves unknown "large" syscalls at 0).

use super::builder::{Builder, Label};
use crate::arch::{Arch, X32_SYSCALL_BIT};
use crate::bpf::data::{OFF_ARCH, OFF_NR};
use crate::bpf::insn::{BPF_JEQ, BPF_JGT, BPF_JSET};
use crate::bpf::RetVal;
#[cfg(doc)]
use crate::policy::ResolvedArch;
use crate::policy::{Action, Resolved};

/// `ENOSYS`.
const ENOSYS: u16 = 38;

/// Whether runc adds its stub for this default action.
pub fn applies(default_action: Action) -> bool {
    !matches!(
        default_action,
        Action::Allow | Action::Log | Action::Trace(_)
    )
}

/// One stub section: an audit token and its highest named numbers.
struct Section {
    token: u32,
    /// (arch, highest named number) for the arches of this token, filter order.
    highest: Vec<(Arch, u32)>,
}

/// The stub's sections, in filter order (runc's order is Go's random map order; the
/// sections exclude each other, so it does not matter).
fn sections(resolved: &Resolved) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for arch in resolved.arches.iter().filter(|a| a.listed) {
        let Some(highest) = arch.highest_named.filter(|&n| n != 0) else {
            continue;
        };
        let token = arch.arch.token();
        match out.iter_mut().find(|s| s.token == token) {
            Some(s) => s.highest.push((arch.arch, highest)),
            None => out.push(Section {
                token,
                highest: vec![(arch.arch, highest)],
            }),
        }
    }
    out
}

/// Whether runc's stub for `resolved` decides anything: the default action calls for it
/// and some listed arch has a section.
pub(crate) fn has_effect(resolved: &Resolved) -> bool {
    applies(resolved.default_action) && !sections(resolved).is_empty()
}

/// The number above which runc's stub answers `ENOSYS` for calls of `arch`'s ABI (its
/// highest named number), if the stub has a section for it and decides anything at all; the
/// number is compared unsigned, as the stub does. (`-1` on x86_64, which the stub judges by
/// x32's section when there is one, is left to the caller's ABI of the call.)
pub fn runc_stub_threshold(resolved: &Resolved, arch: Arch) -> Option<u32> {
    if !applies(resolved.default_action) {
        return None;
    }
    sections(resolved)
        .into_iter()
        .flat_map(|s| s.highest)
        .find(|&(a, _)| a == arch)
        .map(|(_, highest)| highest)
}

/// Emits the stub; its fall-through cases jump to `filter`, which the caller places at the
/// start of the filter proper. Emits nothing when the stub would decide nothing.
pub(crate) fn emit_enosys_stub(b: &mut Builder, resolved: &Resolved, filter: Label) {
    if !applies(resolved.default_action) {
        return;
    }
    let sections = sections(resolved);
    if sections.is_empty() {
        return;
    }
    let enosys = b.label();
    b.load(OFF_ARCH);
    let mut bodies = Vec::new();
    for s in &sections {
        let (body, next) = (b.label(), b.label());
        b.cond(BPF_JEQ, s.token, body, next);
        b.place(next);
        bodies.push(body);
    }
    b.jump(filter);
    for (s, body) in sections.iter().zip(bodies) {
        b.place(body);
        b.load(OFF_NR);
        let above = |b: &mut Builder, highest: u32| b.cond(BPF_JGT, highest, enosys, filter);
        let find = |a: Arch| s.highest.iter().find(|(x, _)| *x == a).map(|&(_, n)| n);
        match (find(Arch::X86_64), find(Arch::X32)) {
            (Some(x86_64), Some(x32)) => {
                let (x32_numbers, x86_64_numbers) = (b.label(), b.label());
                b.cond(BPF_JSET, X32_SYSCALL_BIT, x32_numbers, x86_64_numbers);
                b.place(x86_64_numbers);
                above(b, x86_64);
                b.place(x32_numbers);
                above(b, x32);
            }
            (Some(x86_64), None) => {
                let own = b.label();
                b.cond(BPF_JSET, X32_SYSCALL_BIT, filter, own);
                b.place(own);
                above(b, x86_64);
            }
            (None, Some(x32)) => {
                let own = b.label();
                b.cond(BPF_JSET, X32_SYSCALL_BIT, own, filter);
                b.place(own);
                above(b, x32);
            }
            (None, None) => {
                let highest = s.highest[0].1;
                if s.highest[0].0 == Arch::S390x {
                    let not_zero = b.label();
                    b.cond(BPF_JEQ, 0, enosys, not_zero);
                    b.place(not_zero);
                }
                above(b, highest);
            }
        }
    }
    b.place(enosys);
    b.ret(RetVal::errno(ENOSYS).0);
}
