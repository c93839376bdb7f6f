//! The reference lowering: a [`Resolved`] policy to a cBPF program whose decisions are the
//! toolchain's (libseccomp via runc, or rust-vmm seccompiler). The layout is deliberately
//! plain — one block per architecture, one equality test per syscall number — because
//! this program is the meaning the optimizer is held to.
//!
//! Program shape (libseccomp dialect, checked against libseccomp src/gen_bpf.c):
//! ```text
//!     ld [arch]
//!     jeq #TOKEN_A, 0, block_b      ; one block per audit token, native arch first
//!     ld [nr]
//!     ...x86_64/x32 split, see below...
//!     jeq #nr, ...                  ; one test per syscall with rules
//!     ret DEFAULT
//! block_b: ...
//! bad_arch:
//!     ret BAD_ARCH
//! ```
//! x86_64 and x32 share `AUDIT_ARCH_X86_64`; x32 numbers carry bit 30. When both are in the
//! filter they form one block (each number tested against its own ABI's rules, anything
//! else gets the default). With x86_64 alone, numbers `>= 0x40000000` get the bad-arch
//! action except `-1` (`0xffffffff`), which tracers use to skip a syscall and which gets
//! the default; with x32 alone, numbers below `0x40000000` get the bad-arch action.
//! Everywhere else `-1` is just a number without rules: the default.

use super::builder::Builder;
use super::dag::Dag;
use super::libseccomp_db::{Outcome, SyscallDb};
use super::libseccomp_gen::LibseccompGen;
use super::rules::{self, ArgLayout};
use super::{ret_val, CompileError, CompileOptions};
use crate::arch::{Arch, X32_SYSCALL_BIT};
use crate::bpf::data::{OFF_ARCH, OFF_NR};
use crate::bpf::insn::{BPF_JEQ, BPF_JGE};
use crate::bpf::RetVal;
use crate::policy::{ArgCondition, CmpOp, Dialect, Resolved, ResolvedArch, ResolvedRule};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// At most this many equality tests share one `RET` (conditional jumps reach 255 ahead).
const GROUP_SIZE: usize = 250;

/// How a block treats the x32 bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Split {
    /// No special case (every arch but x86_64/x32, and rust-vmm's backend).
    None,
    /// x86_64 without x32: numbers with bit 30 are a bad arch, except -1.
    X86_64Alone,
    /// x32 without x86_64: numbers without bit 30 are a bad arch.
    X32Alone,
}

/// One arch-token block: the arches sharing the token, in filter order.
struct Block<'r> {
    token: u32,
    members: Vec<&'r ResolvedArch>,
    split: Split,
}

fn blocks(arches: &[ResolvedArch], dialect: Dialect) -> Vec<Block<'_>> {
    let mut out: Vec<Block> = Vec::new();
    for arch in arches {
        let token = arch.arch.token();
        match out.iter_mut().find(|b| b.token == token) {
            Some(block) => block.members.push(arch),
            None => out.push(Block {
                token,
                members: vec![arch],
                split: Split::None,
            }),
        }
    }
    if dialect == Dialect::Libseccomp {
        for block in &mut out {
            let has = |a: Arch| block.members.iter().any(|m| m.arch == a);
            block.split = match (has(Arch::X86_64), has(Arch::X32)) {
                (true, false) => Split::X86_64Alone,
                (false, true) => Split::X32Alone,
                _ => Split::None,
            };
        }
    }
    out
}

/// How many syscall numbers of `arch` have rules once socket and IPC calls are multiplexed
/// (the keys of [`rules_with_multiplexing`], without building its rules).
pub(crate) fn numbers_with_rules(arch: &ResolvedArch, dialect: Dialect) -> usize {
    if dialect != Dialect::Libseccomp {
        return arch.syscalls.len();
    }
    let table = arch.arch.syscalls();
    let mut extra: Vec<u32> = arch
        .multiplexed_rules()
        .filter_map(|(_, (mux, _), _)| table.nr(mux))
        .filter(|nr| !arch.syscalls.contains_key(nr))
        .collect();
    extra.sort_unstable();
    extra.dedup();
    arch.syscalls.len() + extra.len()
}

/// The rules per syscall number of one arch, after libseccomp's multiplexing: on the arches
/// that multiplex ([`ResolvedArch::multiplexer`]), a rule on a socket or IPC call is also a
/// rule on `socketcall`/`ipc` whose argument 0 must equal the call number, replacing any
/// condition the rule had on argument 0; its other conditions stay on the same argument
/// indexes (libseccomp 2.5.4 and 2.6.1 src/syscalls.c `abi_rule_add`). That holds for names
/// the arch has no direct syscall for too (`recv`, `send`, `accept`, `semop`, `semtimedop`
/// on x86): libseccomp resolves every such name to a pseudo-number and adds the
/// multiplexed rule (the rule it also keeps for the pseudo-number itself never reaches the
/// BPF: src/gen_bpf.c `_skip_syscall`).
///
/// The multiplexer's rules are merged in the order runc adds them ([`ResolvedRule::seq`]),
/// since libseccomp's merging of overlapping rules depends on it.
pub(crate) fn rules_with_multiplexing(
    arch: &ResolvedArch,
    dialect: Dialect,
) -> Vec<(u32, Cow<'_, [ResolvedRule]>)> {
    // Borrowed, in a sorted list rather than a map: only the multiplexers' lists are built
    // (compile time matters, see benches/compile.rs, and this is asked once per lowering
    // and per libseccomp check).
    let mut out: Vec<(u32, Cow<'_, [ResolvedRule]>)> = arch
        .syscalls
        .iter()
        .map(|(&nr, rules)| (nr, Cow::Borrowed(rules.as_slice())))
        .collect();
    if dialect != Dialect::Libseccomp {
        return out;
    }
    let table = arch.arch.syscalls();
    for (_, (mux_name, call), rules) in arch.multiplexed_rules() {
        let Some(mux_nr) = table.nr(mux_name) else {
            continue;
        };
        let at = out
            .binary_search_by_key(&mux_nr, |e| e.0)
            .unwrap_or_else(|at| {
                out.insert(at, (mux_nr, Cow::Borrowed(&[])));
                at
            });
        let list = out[at].1.to_mut();
        for rule in rules {
            let mut conditions: Vec<ArgCondition> = rule
                .conditions
                .iter()
                .filter(|c| c.index != 0)
                .copied()
                .collect();
            conditions.push(ArgCondition::new(0, CmpOp::Eq, call));
            list.push(ResolvedRule {
                conditions,
                ..rule.clone()
            });
        }
    }
    // The multiplexers' lists, the only ones built here.
    for (_, list) in out.iter_mut() {
        if let Cow::Owned(list) = list {
            list.sort_by_key(|r| r.seq);
        }
    }
    out
}

/// The name the profile gave rule `seq`, when [`rules_with_multiplexing`] moved that rule
/// onto the multiplexer `nr` (`socket` on x86's `socketcall`).
fn multiplexed_name(arch: &ResolvedArch, nr: u32, seq: usize) -> Option<String> {
    let table = arch.arch.syscalls();
    arch.rules_by_name()
        .find(|(name, rules)| {
            arch.multiplexer(name)
                .is_some_and(|(mux, _)| table.nr(mux) == Some(nr))
                && rules.iter().any(|r| r.seq == seq)
        })
        .map(|(name, _)| name.to_string())
}

/// Emits the filter proper (everything after runc's stub) into `b`.
pub(crate) fn emit_filter(
    b: &mut Builder,
    resolved: &Resolved,
    options: &CompileOptions,
) -> Result<(), CompileError> {
    let default = ret_val(resolved.default_action);
    let bad_arch = b.label();
    // libseccomp adds each rule to every arch's filter before the next rule, and runc stops
    // at the first it refuses: of the refusals, the one reported is the first in that order
    // (rule, then arch), whichever syscall's tree it is in.
    let mut first_refusal: Option<((usize, usize), CompileError)> = None;
    let mut refusal = |key: (usize, usize), error: CompileError| {
        if first_refusal.as_ref().is_none_or(|(first, _)| key < *first) {
            first_refusal = Some((key, error));
        }
    };
    b.load(OFF_ARCH);
    for block in blocks(&resolved.arches, resolved.dialect) {
        let (body, next_block) = (b.label(), b.label());
        b.cond(BPF_JEQ, block.token, body, next_block);
        b.place(body);
        b.load(OFF_NR);
        let dispatch = b.label();
        match block.split {
            Split::None => {}
            Split::X86_64Alone => {
                let x32_range = b.label();
                b.cond(BPF_JGE, X32_SYSCALL_BIT, x32_range, dispatch);
                b.place(x32_range);
                b.cond(BPF_JEQ, u32::MAX, dispatch, bad_arch);
            }
            Split::X32Alone => b.cond(BPF_JGE, X32_SYSCALL_BIT, dispatch, bad_arch),
        }
        b.place(dispatch);

        let mut dag = Dag::new();
        let mut decisions = Vec::new();
        for arch in &block.members {
            let mut layout = ArgLayout::new(arch.arch, resolved.dialect);
            layout.merge_bug = options.libseccomp_merge_bug;
            let arch_place = resolved.arches.iter().position(|a| a.arch == arch.arch);
            let refused = |syscall: String, via: String, r: rules::Refused| {
                let key = (r.seq, arch_place.unwrap_or(usize::MAX));
                let (file, origin, reason) = (
                    resolved.source.clone(),
                    r.origin.to_string(),
                    format!("{via}{}", r.reason),
                );
                let error = if r.gave_up {
                    CompileError::MergeTooLong {
                        file,
                        origin,
                        arch: arch.arch,
                        syscall,
                        reason,
                    }
                } else {
                    CompileError::Refused {
                        file,
                        origin,
                        arch: arch.arch,
                        syscall,
                        reason,
                    }
                };
                (key, error)
            };
            for (nr, rules) in rules_with_multiplexing(arch, resolved.dialect) {
                match rules::syscall(&mut dag, layout, &rules, default) {
                    Ok(root) => decisions.push((nr, root)),
                    Err(r) => {
                        let name = arch.arch.syscalls().name(nr);
                        let name = name.map_or_else(|| format!("syscall {nr}"), str::to_string);
                        // A rule the profile wrote for `socket` is refused on `socketcall`
                        // where that carries it: named as written (as libseccomp's error
                        // names it), the reason saying where it went.
                        let (name, via) = match multiplexed_name(arch, nr, r.seq) {
                            Some(written) => {
                                (written, format!("through {name}, which carries it there, "))
                            }
                            None => (name, String::new()),
                        };
                        let (key, error) = refused(name, via, r);
                        refusal(key, error);
                    }
                }
            }
            if resolved.dialect == Dialect::Libseccomp {
                // libseccomp keeps the rules of a name it knows but this arch lacks under a
                // pseudo-syscall number, and refuses conflicting ones there as anywhere
                // (EEXIST: runc fails to start) or loops on them. Which names, depends on the
                // arch's backend (src/arch.c `arch_filter_rule_add`): without a `rule_add`
                // (x86_64, aarch64, riscv64, ...) every such name (`chown32` on x86_64); with
                // `abi_rule_add` (the arches that multiplex) only the multiplexed names
                // (`recv` on x86 and s390x), with their conditions as written, besides the
                // rewritten rule on `socketcall`/`ipc` (src/syscalls.c: `_abi_syscall_demux`
                // answers the pseudo-number), while other pseudo-numbers are dropped. None of
                // them reaches the filter, so they are only merged, to be checked.
                let names = arch.unnumbered_names(true);
                let kept = if arch.multiplexes() {
                    names.multiplexed
                } else {
                    names.other_arch
                };
                for name in kept {
                    if let Some(rules) = arch.unknown_rules.get(name) {
                        if let Err(r) = rules::libseccomp_takes(layout, rules) {
                            let (key, error) = refused(name.to_string(), String::new(), r);
                            refusal(key, error);
                        }
                    }
                }
            }
        }
        decisions.sort_by_key(|&(nr, _)| nr);

        // Numbers with one answer whatever the arguments share a RET per answer.
        let mut constant: BTreeMap<RetVal, Vec<u32>> = BTreeMap::new();
        for &(nr, root) in &decisions {
            match dag.constant(root) {
                Some(v) if v == default => {}
                Some(v) => constant.entry(v).or_default().push(nr),
                None => {
                    let (rules_code, skip) = (b.label(), b.label());
                    b.cond(BPF_JEQ, nr, rules_code, skip);
                    b.place(rules_code);
                    dag.emit(root, b);
                    b.place(skip);
                }
            }
        }
        for (value, nrs) in constant {
            for group in nrs.chunks(GROUP_SIZE) {
                let (ret, after) = (b.label(), b.label());
                for &nr in group {
                    let next = b.label();
                    b.cond(BPF_JEQ, nr, ret, next);
                    b.place(next);
                }
                b.jump(after);
                b.place(ret);
                b.ret(value.0);
                b.place(after);
            }
        }
        b.ret(default.0);
        b.place(next_block);
    }
    if let Some((_, error)) = first_refusal {
        return Err(error);
    }
    b.place(bad_arch);
    b.ret(ret_val(resolved.bad_arch_action).0);
    Ok(())
}

/// The syscalls whose filter, as libseccomp's BPF generator lays out the rule trees (2.5.4
/// and 2.6.1 alike, runc's linear layout), misses an accumulator reload: a test reached by
/// falling through from a nested level compares the word that level loaded
/// (docs/kernel-facts.md). secopt's filters follow the tree, as libseccomp's own pseudo
/// filter code prints it.
///
/// The generator shares a block among every syscall whose tree makes the same one, and
/// whether the block loads its word depends on which syscall's tree the layout walks to it
/// first ([`super::libseccomp_gen`]): so every tree of the filter is generated, in the
/// order of libseccomp's list of syscall tests, before any is judged.
pub(crate) fn libseccomp_missed_reloads(
    arches: &[ResolvedArch],
    dialect: Dialect,
    default_action: crate::policy::Action,
) -> Vec<super::ReloadCase> {
    if dialect != Dialect::Libseccomp {
        return Vec::new();
    }
    let default = ret_val(default_action);
    let mut gen = LibseccompGen::new(default.0);
    /// A syscall test of the filter with a rule tree behind it.
    struct Tested<'r> {
        arch: &'r ResolvedArch,
        nr: u32,
        rules: Cow<'r, [ResolvedRule]>,
        db: SyscallDb,
        root: usize,
        head: usize,
        nodes: usize,
    }
    // The syscall tests as libseccomp lists them: per arch block in filter order, the
    // block's syscalls by priority, fewest tree nodes first, ties in database order (the
    // first member arch's before the second's, each by number).
    let mut tests: Vec<Tested> = Vec::new();
    for block in blocks(arches, dialect) {
        let mut in_block = Vec::new();
        for &arch in &block.members {
            let layout = ArgLayout::new(arch.arch, dialect);
            for (nr, rules) in rules_with_multiplexing(arch, dialect) {
                if rules.iter().all(|r| r.conditions.is_empty()) {
                    continue;
                }
                // Refused (by libseccomp, or past secopt's merge budget), a cyclic level, a
                // layout too large to model: the compile fails, and runc loads nothing.
                let Ok(db) = rules::libseccomp_tree(layout, &rules) else {
                    return Vec::new();
                };
                let Outcome::Tree(root) = db.outcome() else {
                    continue;
                };
                let Some(head) = gen.syscall(&db, root) else {
                    return Vec::new();
                };
                let nodes = db.node_count();
                in_block.push(Tested {
                    arch,
                    nr,
                    rules,
                    db,
                    root,
                    head,
                    nodes,
                });
            }
        }
        in_block.sort_by_key(|t| t.nodes);
        tests.extend(in_block);
    }
    // The layout walks the list from its end.
    let loads = gen.loads(tests.iter().rev().map(|t| t.head));
    let mut out = Vec::new();
    for t in &tests {
        let Some(missed) = gen.missed_reload(t.head, &loads) else {
            continue;
        };
        let word = |offset| rules::arg_word_at(t.arch.arch, offset);
        let (Some(meant), Some(held)) = (word(missed.meant_offset), word(missed.held_offset))
        else {
            continue;
        };
        let Some(first) = t.rules.iter().find(|r| !r.conditions.is_empty()) else {
            continue;
        };
        let syscall = t.arch.arch.syscalls().name(t.nr);
        out.push(super::ReloadCase {
            arch: t.arch.arch,
            nr: t.nr,
            syscall: syscall.map_or_else(|| format!("syscall {}", t.nr), str::to_string),
            written_for: multiplexed_name(t.arch, t.nr, first.seq),
            origin: first.origin.clone(),
            meant,
            held,
            programs: rules::libseccomp_codegen_programs(
                &t.db,
                t.root,
                &gen,
                (t.head, &loads),
                default,
            ),
        });
    }
    // In the profile's order of arches, each by number.
    let place = |a: Arch| arches.iter().position(|r| r.arch == a);
    out.sort_by_key(|c| (place(c.arch), c.nr));
    out
}

/// An arch block of libseccomp's linear layout (runc's) that never loads the syscall number:
/// a libseccomp code-generation bug ([`blocks_libseccomp_leaves_without_the_syscall_load`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnloadedBlock {
    /// The arches of the block (x86_64 and x32 share one), in filter order.
    pub arches: Vec<Arch>,
    /// The arch whose pseudo-syscall libseccomp puts first.
    pub lacking: Arch,
    /// That pseudo-syscall's name with the place of its first rule; several when they tie
    /// (libseccomp orders them by pseudo-number, which secopt does not model).
    pub first: Vec<(String, std::sync::Arc<str>)>,
}

/// The arch blocks to which libseccomp's linear layout (what runc loads; libseccomp 2.5.4
/// and 2.6.1 alike) gives no `ld [nr]`, so that the block compares the arch token with
/// syscall numbers and every call of its arches gets the default action. Names in
/// `unknown_to_libseccomp` are taken as a libseccomp without them would: not in its database.
///
/// src/gen_bpf.c `_gen_bpf_syscalls` orders a block's syscalls by priority — fewest rule-tree
/// nodes first (src/db.c), ties in database order: each arch's syscalls by number, which
/// puts pseudo-syscalls (negative numbers, compared unsigned) after the real ones, the first
/// arch's before the second's (x86_64 and x32 share a block when both are in the filter) —
/// and passes the accumulator reset to the first one only. Pseudo-syscalls (names the arch
/// lacks, kept in libseccomp's database) are then left out of the BPF (`_skip_syscall`), so
/// when one is first, nothing loads the number. x86_64 or x32 alone is spared: its x32-bit
/// check loads the number first.
pub(crate) fn blocks_libseccomp_leaves_without_the_syscall_load(
    arches: &[ResolvedArch],
    dialect: Dialect,
    unknown_to_libseccomp: &[&str],
) -> Vec<UnloadedBlock> {
    if dialect != Dialect::Libseccomp {
        return Vec::new();
    }
    let mut out = Vec::new();
    for block in blocks(arches, dialect) {
        if block.split != Split::None {
            continue;
        }
        // Cheap first: without a pseudo-syscall in the block there is nothing to find (most
        // profiles with thousands of argument values have none, and their trees are slow).
        let pseudo: Vec<Vec<(&str, &[ResolvedRule])>> = block
            .members
            .iter()
            .map(|arch| {
                // The names libseccomp keeps as pseudo-syscalls here (`unnumbered_names`:
                // multiplexed ones where the arch multiplexes, else other arches' names),
                // among those with rules only: classifying every unknown name costs more.
                arch.unknown_rules
                    .iter()
                    .map(|(name, rules)| (name.as_str(), rules.as_slice()))
                    .filter(|(name, rules)| {
                        !rules.is_empty() && !unknown_to_libseccomp.contains(name)
                    })
                    .filter(|(name, _)| {
                        if arch.multiplexes() {
                            arch.multiplexer(name).is_some()
                        } else {
                            arch.is_other_arch_name(name)
                        }
                    })
                    .collect()
            })
            .collect();
        if pseudo.iter().all(Vec::is_empty) {
            continue;
        }
        // The block's syscalls in libseccomp's order of ties, each with its node count; the
        // first with the fewest nodes is the one the number is loaded for. `best`: that
        // count, and the member whose pseudo-syscalls hold it (`None`: a real syscall).
        let mut best: Option<(usize, Option<usize>)> = None;
        let mut first_pseudo = Vec::new();
        let mut any_real = false;
        'members: for (member, (arch, pseudo)) in block.members.iter().zip(&pseudo).enumerate() {
            let layout = ArgLayout::new(arch.arch, dialect);
            for (_, rules) in rules_with_multiplexing(arch, dialect) {
                let Some(count) = rules::libseccomp_node_count(layout, &rules) else {
                    // Refused (by libseccomp, or past secopt's merge budget): the compile
                    // fails, and runc loads nothing.
                    return Vec::new();
                };
                any_real = true;
                if best.is_none_or(|(b, _)| count < b) {
                    best = Some((count, None));
                }
                if count == 0 {
                    break 'members;
                }
            }
            for &(name, rules) in pseudo {
                let Some(count) = rules::libseccomp_node_count(layout, rules) else {
                    return Vec::new();
                };
                let origin = rules[0].origin.clone();
                match best {
                    Some((b, _)) if count > b => {}
                    // A tie with an earlier member's syscall, or a real one: that stays first.
                    Some((b, holder)) if count == b && holder != Some(member) => {}
                    // A tie among this member's pseudo-syscalls: their order is not modelled.
                    Some((b, _)) if count == b => first_pseudo.push((name.to_string(), origin)),
                    _ => {
                        best = Some((count, Some(member)));
                        first_pseudo = vec![(name.to_string(), origin)];
                    }
                }
            }
            if best.is_some_and(|(count, _)| count == 0) {
                break;
            }
        }
        if let (true, Some((_, Some(member)))) = (any_real, best) {
            out.push(UnloadedBlock {
                arches: block.members.iter().map(|a| a.arch).collect(),
                lacking: block.members[member].arch,
                first: first_pseudo,
            });
        }
    }
    out
}
