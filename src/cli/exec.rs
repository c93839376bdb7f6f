//! `secopt exec`: run a command under a seccomp filter compiled from a profile (or read from
//! a raw filter file), the way a container runtime would install it.
//!
//! Order of operations, chosen so that nothing the filter forbids is needed after it is in
//! force: compile and validate; resolve the command on `PATH`; connect to the seccomp agent
//! (NOTIFY only); set `no_new_privs`; `seccomp(SECCOMP_SET_MODE_FILTER)` with the profile's
//! flags; hand the listener fd to the agent (one `sendmsg`); `execve`.
//!
//! NOTIFY rules are never dropped: a filter that can return `USER_NOTIF` is installed with
//! `SECCOMP_FILTER_FLAG_NEW_LISTENER` and its listener sent to `listenerPath` (or
//! `--listener-path`) as the OCI runtime spec describes, or `exec` refuses to run. Without
//! a listener the kernel would answer those calls with `ENOSYS`.

use super::asm_cmd::parse_arch;
use super::compile::SyscallTable;
use super::io::{display_name, read_input};
use super::{print_json, Failure, Format, EXIT_OK};
use crate::arch::Arch;
use crate::bpf::action::Action as RetAction;
use crate::bpf::insn::{BPF_A, BPF_K, BPF_RET};
use crate::bpf::{disasm, interp, Program, RetVal, SeccompData};
use crate::compile::{self, CompileOptions};
use crate::kernel::notify::{install_filter_with_listener, ContainerProcessState, ListenerHandoff};
use crate::kernel::seccomp::{install_filter, set_no_new_privs};
use crate::kernel::trace::{self, TraceError};
use crate::policy::{self, Action, CapSet, FilterFlag, KernelVersion, ResolveOptions, Resolved};
use std::ffi::{CString, OsString};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Exit code when the command cannot be found (as env(1) and shells use).
pub const EXIT_NOT_FOUND: i32 = 127;
/// Exit code when the command was found but cannot be executed.
pub const EXIT_NOT_EXECUTABLE: i32 = 126;

/// glibc's `execvp` search path when `PATH` is unset.

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
secopt exec -p docker-default.json -- /bin/true\n      \
run a command under Docker's default profile (host arch + sub-arches, Docker's 14 caps)\n  \
secopt exec -p profile.json --caps default,sys_admin --runc-compat -- make test\n  \
secopt exec --bpf filter.bpf -- ./server --port 8080      exec under an existing raw filter\n  \
secopt exec --bpf f0.bpf --bpf f1.bpf -- ./app     a stack, as `secopt dump PID` listed it\n  \
secopt exec -p notify.json --listener-path /run/agent.sock -- ./app\n      \
hand the NOTIFY listener to a seccomp agent (OCI container process state + SCM_RIGHTS)\n  \
secopt exec -p docker-default.json --dry-run -- sh        show what would be installed\n  \
secopt exec -p profile.json --denials -- ./app      which calls did the filter refuse?\n\n\
Exit status: the command's own status once it runs; 127 if the command is not found, 126 if \
it cannot be executed (also when the filter refuses its execve: then nothing is installed), 2 \
for a bad profile, filter or option.")]
#[command(group(clap::ArgGroup::new("filter").required(true).args(["profile", "bpf"])))]
pub struct ExecArgs {
    /// The profile to compile (OCI runtime-spec seccomp section, a whole OCI config.json,
    /// read as runc reads it, or a Docker/podman profile). It is installed as secopt's
    /// reference lowering, which decides as runc + libseccomp would, unoptimized (optimized
    /// and proved equal to it only when it is over the kernel's 4096 instructions); for the
    /// optimized filter, `secopt compile PROFILE -o f.bpf` and then `--bpf f.bpf`.
    #[arg(short = 'p', long, value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
    /// Install this filter instead of compiling a profile (raw `struct sock_filter` array, secopt
    /// assembly, a JSON filter document, or `FILE:THREAD`). Repeat for a stack: the filters are
    /// installed in the order given (oldest first, as `secopt dump` lists them), and the kernel
    /// runs every one on each call its cache does not skip; each filter but the last must allow
    /// `seccomp(2)`, which installs the next.
    #[arg(long, value_name = "FILE", conflicts_with = "profile")]
    pub bpf: Vec<PathBuf>,
    /// Architectures the filter covers (repeat or comma-separate; replaces the profile's
    /// own list and must include this host's). `includes.arches`/`archMap` are always
    /// matched against this host's arch. Default: the host's plus the sub-architectures the
    /// profile's archMap or architectures list.
    #[arg(long, value_delimiter = ',', value_parser = parse_arch, requires = "profile")]
    pub arch: Option<Vec<Arch>>,
    /// Capabilities for `includes`/`excludes`: names (`sys_admin`, `CAP_NET_RAW`),
    /// `default` (Docker's 14) or `all`, comma-separated.
    #[arg(long, default_value = "default", requires = "profile")]
    pub caps: String,
    /// Kernel version for `minKernel` (default: the running kernel).
    #[arg(long, value_name = "MAJOR.MINOR", requires = "profile")]
    pub kernel: Option<KernelVersion>,
    /// Add runc's ENOSYS semantics for syscall numbers above the profile's highest.
    #[arg(long, requires = "profile")]
    pub runc_compat: bool,
    /// Refuse profiles naming syscalls or architectures secopt does not know (names of other
    /// architectures are skipped, as without it), or with any warning (an unknown field,
    /// ...), as `compile --strict` does.
    #[arg(long, requires = "profile")]
    pub strict: bool,
    /// Which table turns syscall names into numbers: `builtin` (secopt's, Linux 6.18) or
    /// `libseccomp` (the linked libseccomp's, as runc resolves them: names that library
    /// does not know are skipped, so their calls get the default action). Needs a secopt
    /// built with the `libseccomp` feature.
    #[arg(long, value_enum, default_value_t = SyscallTable::Builtin, requires = "profile")]
    pub syscall_table: SyscallTable,
    /// A `seccomp(2)` filter flag (`log`, `spec_allow`, `tsync`, `wait_killable_recv`, or
    /// the spec's `SECCOMP_FILTER_FLAG_*` names); repeat for several. Replaces the profile's
    /// `flags`. Without it, a profile's flags are used (none listed: SPEC_ALLOW, as runc does).
    #[arg(long = "flag", value_name = "FLAG", value_parser = parse_flag)]
    pub flags: Vec<FilterFlag>,
    /// Install no flags at all (overrides the profile's and runc's default SPEC_ALLOW).
    #[arg(long, conflicts_with = "flags")]
    pub no_flags: bool,
    /// Unix socket of the seccomp agent that receives the NOTIFY listener (overrides the
    /// profile's `listenerPath`).
    #[arg(long, value_name = "SOCKET")]
    pub listener_path: Option<PathBuf>,
    /// Opaque metadata for the agent (overrides the profile's `listenerMetadata`).
    #[arg(long, value_name = "TEXT")]
    pub listener_metadata: Option<String>,
    /// Print what would be installed and executed, and exit without running anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Run the command under ptrace (with its threads and children, like `strace -f`) and,
    /// when it has ended, list on stderr every call the filter did not allow: the syscall,
    /// the answer, how often, the first arguments, and whether the kernel's return values
    /// confirm the errno answers; for a profile, also the rules that name each syscall. The
    /// filter is the same and installed the same way; only the calls are slower (each stops
    /// the command twice, as under strace). The report comes when the command's own process
    /// ends; what it leaves running is untraced from then on (a note says so), as are
    /// children started with CLONE_UNTRACED (counted in a note). secopt is the command's
    /// parent here.
    #[arg(long, conflicts_with = "dry_run")]
    pub denials: bool,
    /// Also write that list as JSON to FILE (implies --denials; docs/json.md). Not `-`:
    /// stdout is the command's (`/dev/fd/3` with `3>FILE` in the shell keeps them apart).
    #[arg(long, value_name = "FILE", conflicts_with = "dry_run")]
    pub denials_json: Option<PathBuf>,
    /// Output format of --dry-run.
    #[arg(long, value_enum, default_value_t = Format::Text, requires = "dry_run")]
    pub format: Format,
    /// Also report, on stderr before running, the names of other architectures skipped and
    /// the flags chosen for the profile. Warnings (names no syscall table knows, unknown
    /// profile fields, a listener or flag the filter has no use for) are always reported.
    #[arg(short, long)]
    pub verbose: bool,
    /// The command and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

fn parse_flag(s: &str) -> Result<FilterFlag, String> {
    let upper = s.trim().to_ascii_uppercase();
    let spec = if upper.starts_with("SECCOMP_FILTER_FLAG_") {
        upper
    } else {
        format!("SECCOMP_FILTER_FLAG_{upper}")
    };
    FilterFlag::from_spec_name(&spec).ok_or_else(|| {
        format!("unknown seccomp filter flag `{s}`; expected log, spec_allow, tsync or wait_killable_recv")
    })
}

/// Where the NOTIFY listener goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listener {
    path: PathBuf,
    metadata: Option<String>,
}

/// One filter `exec` installs.
#[derive(Debug)]
struct PlannedFilter {
    program: Program,
    /// Where it came from, for messages and the dry run.
    origin: String,
}

/// Everything `exec` installs, decided before anything irreversible happens.
#[derive(Debug)]
struct Plan {
    /// Installed in this order (one, unless `--bpf` gave a stack).
    filters: Vec<PlannedFilter>,
    /// `seccomp(2)` flags for every filter (without `NEW_LISTENER`, added for the filter
    /// `listener_on` when `listener` is set).
    flags: Vec<FilterFlag>,
    listener: Option<Listener>,
    /// Index in `filters` of the one installed with `NEW_LISTENER` (the one that notifies:
    /// the kernel gives a process one listener).
    listener_on: usize,
    /// Where the filters came from, for messages.
    origin: String,
    arches: Vec<Arch>,
    /// Remarks for --verbose and --dry-run.
    notes: Vec<String>,
    /// For a profile: the places of the rules naming each `(arch token, nr)` with an action
    /// other than the default (for --denials); `None` for raw filters.
    rules: Option<super::denials::ProfileRules>,
    /// What the user most likely did not mean (a name no table knows, an unknown field, an
    /// option the filter has no use for): on stderr before the command runs, as `compile`
    /// says them, and in --dry-run's output.
    warnings: Vec<String>,
    /// Whether the filter was compiled from a profile (`-p`), not given as one (`--bpf`).
    from_profile: bool,
}

/// Runs `secopt exec`. Returns only on failure or for --dry-run; otherwise the process
/// becomes the command.
pub fn run(args: ExecArgs) -> Result<i32, Failure> {
    let plan = match &args.profile {
        Some(profile) => plan_from_profile(profile, &args)?,
        None if args.bpf.is_empty() => {
            return Err(Failure::input(
                "exec needs a filter: -p PROFILE or --bpf FILE",
            ))
        }
        None => plan_from_bpf(&args.bpf, &args)?,
    };
    let command = resolve_command(&args.command)?;
    if args.dry_run {
        print_plan(&plan, &command, &args.command, args.format)?;
        return Ok(EXIT_OK);
    }
    for warning in &plan.warnings {
        eprintln!("secopt: warning: {warning}");
    }
    if args.verbose {
        for note in &plan.notes {
            eprintln!("secopt: note: {note}");
        }
    }
    if args.denials || args.denials_json.is_some() {
        return run_traced(&plan, &args);
    }
    Err(install_and_exec(&plan, &command, &args.command))
}

fn plan_from_profile(path: &Path, args: &ExecArgs) -> Result<Plan, Failure> {
    let name = display_name(path);
    let bytes = read_input(path)?;
    let policy = policy::oci::parse(&bytes, &name).map_err(|e| {
        if super::io::looks_like_firecracker(&bytes) {
            // Its threads' filters are installed by Firecracker, one per thread: exec runs
            // one of them as a raw filter.
            return Failure::input(format!(
                "{name}: a Firecracker profile, and -p takes an OCI profile; compile one \
                 thread's filter and run under it: secopt compile {name} --thread vcpu -o f.bpf \
                 && secopt exec --bpf f.bpf -- CMD"
            ));
        }
        if let Some(kind) = super::io::compiled_filter_kind(&bytes, &name) {
            let given = path.display();
            let how = if kind.contains("Firecracker") {
                format!("--bpf {given}:THREAD installs one of its threads' filters")
            } else if kind.contains("big-endian") && cfg!(target_endian = "little") {
                "this machine is little-endian: it cannot run it".to_string()
            } else {
                format!("--bpf {given} installs it")
            };
            return Failure::input(format!(
                "{name}: this is {kind}, and -p takes a profile; {how}"
            ));
        }
        Failure::input(e.to_string())
    })?;
    let host = Arch::host().ok_or_else(|| {
        Failure::input(format!(
            "secopt has no syscall table for this host's architecture ({})",
            std::env::consts::ARCH
        ))
    })?;
    let (resolver, table) = args.syscall_table.resolver()?;
    let options = ResolveOptions {
        native: Some(host),
        arches: args.arch.clone(),
        caps: CapSet::parse(&args.caps).map_err(|e| Failure::input(format!("--caps: {e}")))?,
        kernel: args.kernel,
        strict: args.strict,
        resolver,
    };
    let resolved = policy::resolve(&policy, &options).map_err(super::compile::resolve_failure)?;
    let Some(native) = resolved.arch(host) else {
        let covered: Vec<&str> = resolved.arches.iter().map(|a| a.arch.name()).collect();
        return Err(Failure::input(format!(
            "{name}: the filter would cover {} but not this host's architecture {host}: \
             every system call would get the bad-arch action; include {host} in --arch",
            covered.join(", ")
        )));
    };
    refuse_deadlocking_notify(&resolved, native, &name)?;
    // Where the filter runc's libseccomp loads would not enforce the profile (as compile
    // says it): an error under --strict, as there.
    let unenforced = crate::compile::lowering_warnings(&resolved);
    if args.strict {
        super::compile::refuse_unenforced(unenforced.clone(), &name)?;
    }

    let (program, optimized) = compile_resolved(&resolved, args.runc_compat)?;

    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    notes.extend(optimized);
    if args.syscall_table != SyscallTable::Builtin {
        notes.push(format!("syscall names resolved with {table}'s table"));
    }
    // As `compile` words it: names no table knows are likely typos or newer than the table
    // (once, not per arch), and a name secopt's own tables know is no typo (the table in use,
    // `--syscall-table libseccomp`, an older library, lacks it); names of other architectures
    // are expected in multi-arch profiles; socket and IPC calls of arches that multiplex them
    // still apply, through socketcall/ipc.
    let (table_lacks, nowhere): (Vec<&str>, Vec<&str>) =
        crate::compile::names_no_arch_has(&resolved)
            .into_iter()
            .map(|(n, _)| n)
            .partition(|n| crate::arch::Arch::any_has_syscall(n));
    let names = |n: usize| {
        if n == 1 {
            ("1 name is".to_string(), "it")
        } else {
            (format!("{n} names are"), "them")
        }
    };
    if !nowhere.is_empty() {
        let (count, them) = names(nowhere.len());
        warnings.push(format!(
            "{name}: {count} no syscall of any architecture secopt knows, skipped as runc skips \
             {them}: {}{}",
            crate::policy::name_listing(&nowhere, 32, ""),
            super::hints::typos(nowhere.iter().copied())
        ));
    }
    if !table_lacks.is_empty() {
        let (count, them) = names(table_lacks.len());
        warnings.push(format!(
            "{name}: {count} unknown to the syscall table in use, though secopt's own (Linux \
             6.18) has {them}, skipped as runc linked with that table skips {them}: {} (newer \
             than the table)",
            crate::policy::name_listing(&table_lacks, 32, ""),
        ));
    }
    // As `compile` warns: a runc linked with an older libseccomp skips names newer than it,
    // which this filter (secopt's own table) applies.
    if args.syscall_table == SyscallTable::Builtin {
        if let Some(w) = super::compile::runc_may_skip_warning(&resolved) {
            warnings.push(format!("{name}: {}", w.message));
        }
    }
    for arch in &resolved.arches {
        let libseccomp = resolved.dialect == crate::policy::Dialect::Libseccomp;
        let crate::policy::UnnumberedNames {
            other_arch: elsewhere,
            multiplexed,
            ..
        } = arch.unnumbered_names(libseccomp);
        if !elsewhere.is_empty() {
            notes.push(format!(
                "{}: names of other architectures skipped: {}",
                arch.arch,
                crate::policy::name_listing(&elsewhere, 32, "")
            ));
        }
        if !multiplexed.is_empty() {
            notes.push(format!(
                "{}: only through socketcall/ipc, as libseccomp applies them: {}",
                arch.arch,
                multiplexed.join(", ")
            ));
        }
    }
    for unsupported in &resolved.unsupported_arches {
        notes.push(format!(
            "architecture {unsupported} skipped (no syscall table)"
        ));
    }
    for warning in policy
        .warnings
        .iter()
        .chain(&resolved.shadowed)
        .chain(&unenforced)
    {
        // --listener-path gives the listener the profile lacks.
        if args.listener_path.is_some()
            && warning.message == crate::policy::oci::NOTIFY_WITHOUT_LISTENER
        {
            continue;
        }
        warnings.push(format!("{name}: {warning}"));
    }
    let profile_flags = match &resolved.flags {
        Some(list) => list.clone(),
        // `--flag` and `--no-flags` replace the profile's flags and runc's default alike.
        None if args.no_flags || !args.flags.is_empty() => Vec::new(),
        None => {
            notes.push(
                "the profile lists no flags: using SECCOMP_FILTER_FLAG_SPEC_ALLOW, as runc does"
                    .to_string(),
            );
            vec![FilterFlag::SpecAllow]
        }
    };
    let flags = chosen_flags(args, profile_flags);
    let listener = choose_listener(
        args,
        resolved.listener_path.as_deref().map(PathBuf::from),
        resolved.listener_metadata.clone(),
    );
    let mut plan = Plan {
        filters: vec![PlannedFilter {
            program,
            origin: name.clone(),
        }],
        flags,
        listener,
        listener_on: 0,
        origin: name,
        arches: resolved.arches.iter().map(|a| a.arch).collect(),
        notes,
        warnings,
        // Only --denials names rules.
        rules: (args.denials || args.denials_json.is_some())
            .then(|| rule_places(&resolved, args.runc_compat)),
        from_profile: true,
    };
    metadata_without_listener(&mut plan, args);
    settle_listener(&mut plan)?;
    Ok(plan)
}

fn plan_from_bpf(paths: &[PathBuf], args: &ExecArgs) -> Result<Plan, Failure> {
    let filters: Vec<PlannedFilter> = paths
        .iter()
        .map(|p| {
            Ok(PlannedFilter {
                program: super::io::load_program_to_install(p)?,
                origin: display_name(p),
            })
        })
        .collect::<Result<_, Failure>>()?;
    let origin = filters
        .iter()
        .map(|f| f.origin.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    let mut plan = Plan {
        filters,
        flags: chosen_flags(args, Vec::new()),
        listener: choose_listener(args, None, None),
        listener_on: 0,
        origin,
        arches: Vec::new(),
        notes: Vec::new(),
        warnings: Vec::new(),
        rules: None,
        from_profile: false,
    };
    if let Some(host) = Arch::host() {
        let decision = |f: &PlannedFilter, syscall: &str, args: [u64; 6]| {
            let nr = host.syscalls().nr(syscall)?;
            let data = SeccompData::new(host.token(), nr as i32, args);
            interp::eval(&f.program, &data).ok()
        };
        for f in &plan.filters {
            for syscall in ["write", "sendmsg"] {
                if decision(f, syscall, [0; 6]).and_then(RetVal::action)
                    == Some(RetAction::UserNotif)
                {
                    return Err(Failure::input(format!(
                        "{}: the filter sends {syscall} to the NOTIFY listener; secopt exec \
                         needs {syscall} after installing the filter to hand over the listener \
                         (it would wait for an agent that cannot answer yet)",
                        f.origin
                    )));
                }
            }
        }
        // Each filter of a stack is installed under the ones before it, by seccomp(2).
        let (_, older) = plan.filters.split_last().expect("clap requires one --bpf");
        let set_mode_filter = [1, FilterFlag::bits(&plan.flags).into(), 0, 0, 0, 0];
        for f in older {
            let Some(ret) = decision(f, "seccomp", set_mode_filter) else {
                continue;
            };
            if !matches!(ret.action(), Some(RetAction::Allow | RetAction::Log)) {
                return Err(Failure::input(format!(
                    "{}: the filter answers seccomp(2) with {ret}, so the filters after it \
                     could not be installed; join the stack into one filter instead \
                     (`secopt optimize {} -o one.bpf`, proved equal to the stack) and exec that",
                    f.origin,
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                )));
            }
        }
    }
    metadata_without_listener(&mut plan, args);
    settle_listener(&mut plan)?;
    Ok(plan)
}

/// The flags to install: `--flag`s, or none with `--no-flags`, or the profile's.
fn chosen_flags(args: &ExecArgs, from_profile: Vec<FilterFlag>) -> Vec<FilterFlag> {
    let mut flags = if args.no_flags {
        Vec::new()
    } else if !args.flags.is_empty() {
        args.flags.clone()
    } else {
        from_profile
    };
    flags.sort();
    flags.dedup();
    flags
}

/// `--listener-metadata` with no listener to hand it to is said to be ignored, as a listener
/// without NOTIFY rules is ([`settle_listener`]).
fn metadata_without_listener(plan: &mut Plan, args: &ExecArgs) {
    if plan.listener.is_none() && args.listener_metadata.is_some() {
        plan.warnings.push(format!(
            "--listener-metadata ignored: there is no listener to give it to (no \
             --listener-path{})",
            if plan.from_profile {
                ", and no `listenerPath` in the profile"
            } else {
                ""
            }
        ));
    }
}

fn choose_listener(
    args: &ExecArgs,
    profile_path: Option<PathBuf>,
    profile_metadata: Option<String>,
) -> Option<Listener> {
    let path = args.listener_path.clone().or(profile_path)?;
    Some(Listener {
        path,
        metadata: args.listener_metadata.clone().or(profile_metadata),
    })
}

/// Whether the program can return `USER_NOTIF`: `Some(true)` if a `RET K` does,
/// `None` if it has `RET A` (the value is computed), `Some(false)` otherwise.
fn may_notify(prog: &Program) -> Option<bool> {
    let mut computed = false;
    for insn in &prog.insns {
        if insn.code & 0x07 != BPF_RET {
            continue;
        }
        if insn.code & 0x18 == BPF_A {
            computed = true;
        } else if insn.code & 0x18 == BPF_K && RetVal(insn.k).action() == Some(RetAction::UserNotif)
        {
            return Some(true);
        }
    }
    if computed {
        None
    } else {
        Some(false)
    }
}

/// Makes the listener and the flags agree with whether the filter can notify: NOTIFY needs
/// a listener (refuse otherwise), a listener without NOTIFY is ignored (as the spec says),
/// and `WAIT_KILLABLE_RECV` is dropped without a listener (the kernel refuses it then).
fn settle_listener(plan: &mut Plan) -> Result<(), Failure> {
    let each: Vec<Option<bool>> = plan
        .filters
        .iter()
        .map(|f| may_notify(&f.program))
        .collect();
    let notifying: Vec<usize> = (0..each.len()).filter(|&i| each[i] == Some(true)).collect();
    let computing = each.iter().position(Option::is_none);
    if let [first, second, ..] = notifying[..] {
        return Err(Failure::input(format!(
            "{} and {} can both answer USER_NOTIF, but a process has one NOTIFY listener (the \
             kernel refuses a second with EBUSY): the calls of the other would fail with ENOSYS",
            plan.filters[first].origin, plan.filters[second].origin
        )));
    }
    match (notifying.first(), computing) {
        (Some(_), _) if plan.listener.is_none() => {
            return Err(Failure::input(format!(
                "{}: the filter has NOTIFY (USER_NOTIF) rules but no listener: {} \
                 --listener-path SOCKET (secopt will not drop NOTIFY rules; without a listener \
                 the kernel would fail those calls with ENOSYS)",
                plan.filters[notifying[0]].origin,
                if plan.from_profile {
                    "give the profile a `listenerPath` or pass"
                } else {
                    "pass"
                }
            )));
        }
        (Some(&i), _) => plan.listener_on = i,
        (None, Some(i)) => {
            if plan.listener.is_none() {
                plan.notes.push(
                    "the filter computes some return values (RET A); if it can return \
                     USER_NOTIF, pass --listener-path, or those calls fail with ENOSYS"
                        .to_string(),
                );
            }
            plan.listener_on = i;
        }
        (None, None) => {
            if let Some(l) = plan.listener.take() {
                plan.warnings.push(format!(
                    "listener {} ignored: the filter has no NOTIFY rule",
                    l.path.display()
                ));
            }
        }
    }
    if plan.listener.is_none() && plan.flags.contains(&FilterFlag::WaitKillableRecv) {
        plan.flags.retain(|f| *f != FilterFlag::WaitKillableRecv);
        plan.warnings.push(
            "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV dropped: it only applies to a NOTIFY \
             listener, and the kernel refuses it without one"
                .to_string(),
        );
    }
    Ok(())
}

/// Refuses NOTIFY set-ups that would hang `exec` itself, as runc refuses them: NOTIFY as
/// the default action, or NOTIFY on a syscall `exec` makes between installing the filter and
/// the agent receiving the listener (`sendmsg`; `write` for an error report).
fn refuse_deadlocking_notify(
    resolved: &Resolved,
    native: &policy::ResolvedArch,
    name: &str,
) -> Result<(), Failure> {
    if resolved.default_action == Action::UserNotif {
        return Err(Failure::input(format!(
            "{name}: SCMP_ACT_NOTIFY cannot be the default action (every call, including the \
             one handing the listener to the agent, would wait for the agent)"
        )));
    }
    for syscall in ["write", "sendmsg"] {
        if native.notifies(syscall) {
            return Err(Failure::input(format!(
                "{name}: SCMP_ACT_NOTIFY cannot be used for the {syscall} syscall: secopt exec \
                 needs it after installing the filter, before the agent has the listener"
            )));
        }
    }
    Ok(())
}

/// Lowers a resolved profile to cBPF (validated by the compiler before it is returned): the
/// reference lowering, or, when that is over the kernel's 4096 instructions (thousands of
/// argument values; libseccomp's tree may still fit), the optimized filter proved equal to
/// it, as `compile` writes it; the note says which.
fn compile_resolved(
    resolved: &Resolved,
    runc_compat: bool,
) -> Result<(Program, Option<String>), Failure> {
    let options = CompileOptions {
        runc_compat,
        ..Default::default()
    };
    let reference = match compile::compile(resolved, &options) {
        Ok(filter) => return Ok((filter.into_program(), None)),
        Err(compile::CompileError::TooLarge { len, .. }) => len,
        Err(e) => return Err(Failure::input(e.to_string())),
    };
    let options = CompileOptions {
        optimize: Some(crate::optimize::OptimizeOptions {
            report: false,
            ..Default::default()
        }),
        ..options
    };
    let filter = compile::compile(resolved, &options).map_err(|e| Failure::input(e.to_string()))?;
    let note = format!(
        "the reference lowering has {reference} instructions, over the kernel's 4096: \
         installing the optimized filter ({} instructions), proved equal to it",
        filter.program().len()
    );
    Ok((filter.into_program(), Some(note)))
}

/// Finds the command as `execvp(3)` would: a name with a `/` is used as is, anything else is
/// searched on `PATH`. 127 when nothing is found, 126 when only non-executables are.
fn resolve_command(command: &[OsString]) -> Result<PathBuf, Failure> {
    let Some(first) = command.first() else {
        return Err(Failure::input(
            "no command given (secopt exec ... -- COMMAND [ARGS...])",
        ));
    };
    match trace::find_program(first) {
        Ok(path) => Ok(path),
        Err(e @ TraceError::NotFound { .. }) => Err(not_found(e.to_string())),
        Err(e) => Err(not_executable(e.to_string())),
    }
}

fn not_found(message: String) -> Failure {
    Failure {
        code: EXIT_NOT_FOUND,
        message: format!("exec: {message}"),
    }
}

fn not_executable(message: String) -> Failure {
    Failure {
        code: EXIT_NOT_EXECUTABLE,
        message: format!("exec: {message}"),
    }
}

fn flag_names(flags: &[FilterFlag]) -> String {
    if flags.is_empty() {
        "none".to_string()
    } else {
        flags
            .iter()
            .map(|f| f.spec_name())
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// Installs the filter and replaces the process with the command. Returns only on failure.
fn install_and_exec(plan: &Plan, command: &Path, argv: &[OsString]) -> Failure {
    let exec_failure = |e: std::io::Error| {
        let message = format!(
            "`{}`: {}",
            command.display(),
            trace::exec_error_message(&e, command)
        );
        match e.raw_os_error() {
            Some(libc::ENOENT) => not_found(message),
            _ => not_executable(message),
        }
    };
    // Everything execve needs is built before the filter exists.
    let Ok(path) = CString::new(command.as_os_str().as_bytes()) else {
        return Failure::input("the command path contains a NUL byte");
    };
    let Ok(args) = argv
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
    else {
        return Failure::input("a command argument contains a NUL byte");
    };
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    // A filter that denies this execve leaves nothing to run, and once it is installed this
    // process may not even be able to say so (a profile that also denies write, mmap or
    // exit_group crashed it): decided before anything is installed, on this call's path and
    // argv pointers, whatever the instruction pointer.
    if let Some(why) = execve_refusal(
        plan,
        [
            path.as_ptr() as u64,
            arg_ptrs.as_ptr() as u64,
            trace::environ_pointer(),
        ],
    ) {
        return not_executable(format!("`{}`: {why}", command.display()));
    }

    let handoff = match &plan.listener {
        None => None,
        Some(l) => match connect_agent(l) {
            Ok(h) => Some(h),
            Err(f) => return f,
        },
    };
    // The Rust runtime ignores SIGPIPE, and ignored signals survive execve: give the command
    // the default disposition it would get from a shell (std's Command does the same).
    // SAFETY: setting a standard disposition; no handler code is involved.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if let Err(e) = set_no_new_privs() {
        return Failure::input(format!("prctl(PR_SET_NO_NEW_PRIVS): {e}"));
    }
    let flags = FilterFlag::bits(&plan.flags);
    let n = plan.filters.len();
    let refused = |i: usize, listener: &str, e: std::io::Error| {
        let f = &plan.filters[i];
        // A later filter of a stack is installed under the earlier ones, which also see
        // that seccomp(2) call (the check before installing could not see its pointer).
        let place = if i > 0 {
            format!(
                "; filter {} of {n}, installed under the {i} before it, which may refuse \
                 seccomp(2) themselves",
                i + 1
            )
        } else {
            String::new()
        };
        Failure::input(format!(
            "{}: seccomp(2) refused the filter (flags: {}{listener}{place}): {e}",
            f.origin,
            flag_names(&plan.flags),
        ))
    };
    let mut handoff = handoff;
    for (i, f) in plan.filters.iter().enumerate() {
        match handoff.take_if(|_| i == plan.listener_on) {
            None => {
                if let Err(e) = install_filter(&f.program, flags) {
                    return refused(i, "", e);
                }
            }
            Some(handoff) => {
                let listener = match install_filter_with_listener(&f.program, flags) {
                    Ok(fd) => fd,
                    Err(e) => return refused(i, ", NEW_LISTENER", e),
                };
                if let Err(e) = handoff.send(listener.as_fd()) {
                    return Failure::input(format!(
                        "cannot send the seccomp listener to the agent: {e}"
                    ));
                }
                // The agent has its own copy now; this one would be closed by execve anyway
                // (the kernel creates it close-on-exec).
                drop(listener);
            }
        }
    }
    // SAFETY: `path` and the NUL-terminated `arg_ptrs` point at CStrings alive here;
    // `execv` passes the current environment.
    unsafe { libc::execv(path.as_ptr(), arg_ptrs.as_ptr()) };
    exec_failure(std::io::Error::last_os_error())
}

/// The profile's ABIs and, per `(arch token, nr)`, the places of its rules for it, once each,
/// in profile order (the rules runc hands libseccomp: those with the default action are left
/// out), and of the allowing rules that do not apply here, with why: left out by their
/// `includes`/`excludes` for this container, or for a name the syscall table in use lacks;
/// with runc's stub (`runc_compat`), the number above which it answers ENOSYS per ABI.
fn rule_places(resolved: &Resolved, runc_compat: bool) -> super::denials::ProfileRules {
    let mut places = std::collections::BTreeMap::new();
    for arch in &resolved.arches {
        for (&nr, rules) in &arch.syscalls {
            let mut list: Vec<String> = Vec::new();
            for rule in rules {
                if !list.iter().any(|p| **p == *rule.origin) {
                    list.push(rule.origin.to_string());
                }
            }
            places.insert((arch.arch.token(), nr), list);
        }
    }
    // Only the rules that would allow the call explain a refusal (a KILL or ERRNO rule left
    // out does not): those `includes`/`excludes` left out, and those for a name the syscall
    // table in use lacks (`--syscall-table libseccomp`: an older library skips their rules).
    let allows = |a: crate::policy::Action| {
        matches!(a, crate::policy::Action::Allow | crate::policy::Action::Log)
    };
    let mut not_applied = std::collections::BTreeMap::new();
    let mut note = |token: u32, nr: u32, origin: &str, why: String| {
        let list: &mut Vec<(String, String)> = not_applied.entry((token, nr)).or_default();
        if !list.iter().any(|(place, _)| place == origin) {
            list.push((origin.to_string(), why));
        }
    };
    let only_some_args = |conditions: &[crate::policy::ArgCondition]| {
        if conditions.is_empty() {
            ""
        } else {
            ", and allows only some argument values"
        }
    };
    for rule in resolved.excluded.iter().filter(|r| allows(r.action)) {
        for arch in &resolved.arches {
            if let Some(nr) = arch.arch.syscalls().nr(&rule.syscall) {
                let why = format!("{}{}", rule.why, only_some_args(&rule.conditions));
                note(arch.arch.token(), nr, &rule.origin, why);
            }
        }
    }
    for arch in &resolved.arches {
        for (name, rules) in &arch.unknown_rules {
            let Some(nr) = arch.arch.syscalls().nr(name) else {
                continue;
            };
            for rule in rules.iter().filter(|r| allows(r.action)) {
                let why = format!(
                    "the syscall table in use does not know `{name}`{}",
                    only_some_args(&rule.conditions)
                );
                note(arch.arch.token(), nr, &rule.origin, why);
            }
        }
    }
    let stub = resolved
        .arches
        .iter()
        .filter(|_| runc_compat)
        .filter_map(|a| {
            Some((
                a.arch,
                crate::compile::runc_stub_threshold(resolved, a.arch)?,
            ))
        })
        .collect();
    super::denials::ProfileRules {
        arches: resolved.arches.iter().map(|a| a.arch).collect(),
        places,
        not_applied,
        stub,
    }
}

/// Why the stack must not be asked to run the execve that starts the command (its pointers:
/// path, argv, envp), in words: it refuses it ([`execve_denied`]).
fn execve_refusal(plan: &Plan, pointers: [u64; 3]) -> Option<String> {
    let ret = execve_denied(plan, pointers)?;
    let errno = match ret.action() {
        Some(RetAction::Errno) => {
            let text = std::io::Error::from_raw_os_error(i32::from(ret.data())).to_string();
            // "Operation not permitted (os error 1)": the number is in `ret` already.
            let text = text
                .split(" (os error")
                .next()
                .unwrap_or_default()
                .to_string();
            format!(" ({text})")
        }
        _ => String::new(),
    };
    Some(format!(
        "the filter answers execve with {ret}{errno}, so the command could not start under \
         it; nothing was installed (a profile that runs a command must allow execve, which \
         starts it)"
    ))
}

/// `exec --denials`: runs the command under ptrace with the plan's filters, installed by its
/// process just before its execve as [`install_and_exec`] installs them, and reports the
/// calls they did not allow ([`super::denials`]) once the command's own process has ended
/// (what it left running is detached). Returns the command's shell status.
fn run_traced(plan: &Plan, args: &ExecArgs) -> Result<i32, Failure> {
    if let Some(listener) = &plan.listener {
        return Err(Failure::input(format!(
            "--denials cannot hand the NOTIFY listener to the agent at {} (the command's \
             process installs the filter under the tracer); run without --denials, or compile \
             the profile with the NOTIFY rules' action changed to see the rest",
            listener.path.display()
        )));
    }
    if let Some(path) = &args.denials_json {
        if path.as_os_str() == "-" {
            // stdout is the command's: the document would be read as part of its output.
            return Err(Failure::input(
                "--denials-json -: stdout is the command's, and the report would be mixed \
                 with its output; give a file, or /dev/fd/3 with `3>FILE` in the shell \
                 (/dev/stdout if the command prints nothing)",
            ));
        }
        super::io::check_can_write(path)?;
    }
    let programs: Vec<Program> = plan.filters.iter().map(|f| f.program.clone()).collect();
    let child_filters = trace::ChildFilters {
        filters: programs
            .iter()
            .map(crate::kernel::seccomp::to_sock_filters)
            .collect(),
        flags: FilterFlag::bits(&plan.flags),
    };
    let mut collector = super::denials::Collector::new(&programs);
    let mut on_syscall = |stop| collector.observe(stop);
    let mut masks = |_: u32, _: u32| [0u64; 6];
    let mut options = trace::TraceOptions {
        max_samples: 0,
        arg_masks: &mut masks,
        on_syscall: Some(&mut on_syscall),
    };
    let launch = trace::CommandOptions {
        forward_signals: true,
        filters: Some(&child_filters),
        until_command_exits: true,
        // Judged on the pointers the command's process will pass, as without --denials.
        check_exec: Some(&|pointers| execve_refusal(plan, pointers)),
    };
    let traced = trace::trace_command(&args.command, &mut options, launch);
    let trace = traced.map_err(|e| match e {
        e @ TraceError::NotFound { .. } => not_found(e.to_string()),
        // As without --denials, where the same execve error comes from this process.
        e @ TraceError::CannotExecute { missing: true, .. } => not_found(e.to_string()),
        e @ TraceError::CannotExecute { .. } => not_executable(e.to_string()),
        TraceError::FilterRefused {
            index: Some(i),
            error,
        } => Failure::input(format!(
            "{}: seccomp(2) refused the filter (flags: {}): {error}",
            plan.filters[i].origin,
            flag_names(&plan.flags)
        )),
        other => Failure::input(format!("exec --denials: {other}")),
    })?;
    let run = super::denials::Run {
        input: &plan.origin,
        total_calls: trace.total_calls(),
        tasks: trace.tasks,
        end: trace.end,
        left_running: trace.left_running,
        untraced_children: trace.untraced_children,
        rules: plan.rules.as_ref(),
    };
    eprint!("{}", super::denials::text_report(&collector, &run));
    if let Some(path) = &args.denials_json {
        let command: Vec<String> = args
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let doc = super::denials::json_report(&collector, &run, &command);
        let mut text = serde_json::to_string_pretty(&doc).expect("JSON values serialize");
        text.push('\n');
        // The command has run: a failure here still says how it ended, as the exit status
        // (2, the file not written) cannot.
        super::io::write_output(path, text.as_bytes()).map_err(|mut f| {
            let end = super::denials::end_text(trace.end);
            f.message = format!("{} (the report above is complete; {end})", f.message);
            f
        })?;
    }
    Ok(trace.end.shell_status())
}

/// What the stack answers this process's execve (`[path, argv, envp]`: the pointers it passes)
/// when it refuses it — an errno, a kill, a trap — with the instruction pointer 0 and all ones
/// alike (the filter cannot know where the call comes from before it is made); `None` when
/// the call goes through, or may.
fn execve_denied(plan: &Plan, [path, argv, envp]: [u64; 3]) -> Option<RetVal> {
    let arch = Arch::host()?;
    let nr = arch.syscalls().nr("execve")?;
    let programs: Vec<Program> = plan.filters.iter().map(|f| f.program.clone()).collect();
    let mut denied = None;
    for ip in [0, u64::MAX] {
        let mut data = SeccompData::new(arch.token(), nr as i32, [path, argv, envp, 0, 0, 0]);
        data.instruction_pointer = ip;
        let ret = crate::bpf::stack::eval_stack(&programs, &data).ok()?;
        match ret.action() {
            Some(RetAction::Errno | RetAction::KillThread | RetAction::KillProcess)
            | Some(RetAction::Trap) => denied = denied.or(Some(ret)),
            _ => return None,
        }
    }
    denied
}

fn connect_agent(listener: &Listener) -> Result<ListenerHandoff, Failure> {
    let pid = std::process::id() as i32;
    let bundle = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| "/".to_string());
    let state = ContainerProcessState::for_listener(
        &format!("secopt-exec-{pid}"),
        pid,
        &bundle,
        listener.metadata.as_deref(),
    );
    ListenerHandoff::connect(&listener.path, &state).map_err(|e| {
        Failure::input(format!(
            "cannot connect to the seccomp agent at {}: {e}",
            listener.path.display()
        ))
    })
}

fn print_plan(
    plan: &Plan,
    command: &Path,
    argv: &[OsString],
    format: Format,
) -> Result<(), Failure> {
    let arch = plan.arches.first().copied();
    let assembly = |f: &PlannedFilter| {
        disasm::disassemble(
            &f.program,
            &disasm::DisasmOptions {
                index_comments: false,
                arch,
            },
        )
    };
    let stacked = plan.filters.len() > 1;
    let instructions: usize = plan.filters.iter().map(|f| f.program.len()).sum();
    let args: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let flags: Vec<&str> = plan.flags.iter().map(|f| f.spec_name()).collect();
    match format {
        Format::Json => {
            let mut doc = serde_json::json!({
            "input": plan.origin,
            "arches": plan.arches.iter().map(|a| a.name()).collect::<Vec<_>>(),
            "length": instructions,
            "no_new_privs": true,
            "flags": flags,
            "flag_bits": FilterFlag::bits(&plan.flags),
            "listener": plan.listener.as_ref().map(|l| serde_json::json!({
                "path": l.path.display().to_string(),
                "metadata": l.metadata,
            })),
            "command": command.display().to_string(),
            "argv": args,
            "warnings": plan.warnings,
            "notes": plan.notes,
            // A stack's programs are listed one by one in `stack`: pasted together they
            // would be no one program (their labels repeat).
            "assembly": plan.filters.first().filter(|_| !stacked).map(assembly),
            });
            // Only a stack has the key (one filter's document keeps its shape).
            if stacked {
                doc["stack"] = plan
                    .filters
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        serde_json::json!({
                            "input": f.origin,
                            "length": f.program.len(),
                            "gets_listener": plan.listener.is_some() && i == plan.listener_on,
                            "assembly": assembly(f),
                        })
                    })
                    .collect();
            }
            print_json(&doc)
        }
        Format::Text => {
            if stacked {
                println!(
                    "filters:  {} installed in this order, {instructions} instructions in all \
                     (the kernel runs each on every call its cache does not skip)",
                    plan.filters.len()
                );
                for f in &plan.filters {
                    println!(
                        "          {} instructions from {}",
                        f.program.len(),
                        f.origin
                    );
                }
            } else {
                println!("filter:   {instructions} instructions from {}", plan.origin);
            }
            if !plan.arches.is_empty() {
                let names: Vec<&str> = plan.arches.iter().map(|a| a.name()).collect();
                println!("arches:   {}", names.join(" "));
            }
            println!(
                "flags:    {} (0x{:x})",
                flag_names(&plan.flags),
                FilterFlag::bits(&plan.flags)
            );
            println!("no_new_privs: set");
            match &plan.listener {
                Some(l) => println!(
                    "listener: NEW_LISTENER fd{} sent to {}{}",
                    if stacked {
                        format!(" (of {})", plan.filters[plan.listener_on].origin)
                    } else {
                        String::new()
                    },
                    l.path.display(),
                    l.metadata
                        .as_deref()
                        .map(|m| format!(" with metadata {m:?}"))
                        .unwrap_or_default()
                ),
                None => println!("listener: none"),
            }
            println!("command:  {} {:?}", command.display(), args);
            for warning in &plan.warnings {
                println!("warning:  {warning}");
            }
            for note in &plan.notes {
                println!("note:     {note}");
            }
            for f in &plan.filters {
                if stacked {
                    println!("--- filter {} ---", f.origin);
                } else {
                    println!("--- filter ---");
                }
                print!("{}", assembly(f));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::action::SECCOMP_RET_ALLOW;
    use crate::bpf::Insn;

    #[test]
    fn flag_names_parse_in_both_spellings() {
        assert_eq!(parse_flag("log"), Ok(FilterFlag::Log));
        assert_eq!(parse_flag("SPEC_ALLOW"), Ok(FilterFlag::SpecAllow));
        assert_eq!(
            parse_flag("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"),
            Ok(FilterFlag::WaitKillableRecv)
        );
        assert!(parse_flag("new_listener").is_err(), "set by secopt itself");
        // include/uapi/linux/seccomp.h: TSYNC 1, LOG 2, SPEC_ALLOW 4.
        assert_eq!(
            FilterFlag::bits(&[FilterFlag::Tsync, FilterFlag::Log, FilterFlag::SpecAllow]),
            7
        );
    }

    #[test]
    fn notify_returns_are_found() {
        let allow = Insn::ret(SECCOMP_RET_ALLOW);
        let notify = Insn::ret(0x7fc0_0000); // SECCOMP_RET_USER_NOTIF
        let ret_a = Insn::stmt(BPF_RET | BPF_A, 0);
        assert_eq!(may_notify(&Program::new(vec![allow])), Some(false));
        assert_eq!(may_notify(&Program::new(vec![notify, allow])), Some(true));
        assert_eq!(may_notify(&Program::new(vec![ret_a])), None);
    }

    #[test]
    fn commands_are_searched_like_execvp() {
        let sh = resolve_command(&["sh".into()]).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        let missing = resolve_command(&["secopt-no-such-command-x".into()]).unwrap_err();
        assert_eq!(missing.code, EXIT_NOT_FOUND);
        let dir = resolve_command(&["/".into()]).unwrap_err();
        assert_eq!(dir.code, EXIT_NOT_EXECUTABLE);
        let absent = resolve_command(&["/nonexistent/secopt".into()]).unwrap_err();
        assert_eq!(absent.code, EXIT_NOT_FOUND);
    }
}
