//! What a container runtime does with secopt as a library, start to finish: read an OCI
//! profile, compile it (optimized, and proved equal to the plain lowering before it is
//! returned), show the profile's warnings, and run a command under the filter the way runc
//! installs one: `no_new_privs`, then `seccomp(2)` with the profile's flags, then `execve`.
//!
//! ```sh
//! cargo run --release --example embed -- docker-default.json /bin/true
//! cargo run --release --example embed -- docker-default.json unshare -U true   # EPERM
//! cargo run --release --example embed -- examples/web-server.json /bin/true    # EPERM
//! ```
//!
//! (The last fails to start: a web server's profile does not allow `execve`, and the kernel
//! answers it with the profile's errno.)
//!
//! The install runs between `fork` and `exec` (`pre_exec`), so it uses only calls that
//! allocate nothing: the program is turned into the kernel's `struct sock_filter` array
//! before the child is started. (`secopt exec` does the same, with NOTIFY listeners too.)
use secopt::compile::{compile_oci, CompileOptions};
use secopt::kernel::seccomp::{install_filter_raw, set_no_new_privs, to_sock_filters};
use secopt::optimize::OptimizeOptions;
use secopt::policy::ResolveOptions;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitCode};

fn main() -> Result<ExitCode, Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [profile, command, rest @ ..] = args.as_slice() else {
        eprintln!("usage: embed PROFILE.json COMMAND [ARGS...]");
        return Ok(ExitCode::from(2));
    };
    let bytes = std::fs::read(profile).map_err(|e| format!("{profile}: {e}"))?;

    // This host's architecture and the ones the profile lists, Docker's default
    // capabilities: what runc would get from Docker for this profile.
    let options = CompileOptions {
        optimize: Some(OptimizeOptions::default()),
        ..Default::default()
    };
    let filter = compile_oci(&bytes, profile, &ResolveOptions::default(), &options)?;
    let info = filter.info();
    for warning in &info.warnings {
        eprintln!("embed: warning: {profile}: {warning}");
    }
    let proof = info.optimization.as_ref().map_or("not optimized", |o| {
        if o.verified {
            "optimized, proved equal"
        } else {
            "the reference lowering"
        }
    });
    eprintln!(
        "embed: {profile}: {} instructions ({proof}), arches {}",
        filter.program().len(),
        info.arches
            .iter()
            .map(|a| a.arch.name())
            .collect::<Vec<_>>()
            .join(" ")
    );

    // The profile's flags, or runc's default when it has none (SPEC_ALLOW).
    let flags = info.seccomp_flags();
    let sock_filters = to_sock_filters(filter.program());
    let mut child = Command::new(command);
    child.args(rest);
    // SAFETY: between fork and exec the closure only makes the two system calls, which
    // allocate nothing and take no locks.
    unsafe {
        child.pre_exec(move || {
            set_no_new_privs()?;
            install_filter_raw(&sock_filters, flags)?;
            Ok(())
        });
    }
    let status = child
        .status()
        .map_err(|e| format!("{command} under {profile}: {e}"))?;
    // As a shell reports it: the exit status, or 128 + the signal that killed the command
    // (SIGSYS, 159, when a KILL action stopped it).
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(128);
    Ok(ExitCode::from(code as u8))
}
