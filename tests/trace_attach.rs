//! `kernel::trace::trace_process` as a library caller uses it: the tracer lives on after the
//! trace, so the process must have been detached by it (when the `secopt record` binary exits,
//! the kernel would detach its tracees anyway, which the CLI tests cannot tell apart).
//!
//! One test in its own binary: the tracer's `waitpid(-1)` would reap other tests' children.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use secopt::kernel::trace::{trace_process, End, TraceOptions};

#[path = "data/e2e_support.rs"]
mod support;
use std::time::Duration;

fn status_field(pid: u32, field: &str) -> String {
    support::proc_status_field(pid, field).expect("the process is still there")
}

#[test]
fn the_process_is_detached_and_running_while_the_tracer_lives_on() {
    // A shell starting `cat` over and over: threads of work come and go during the trace,
    // and some are in the middle of a fork or an exec when the time is up.
    let shell = support::forking_shell();
    let pid = shell.0.id();
    let mut masks = |_: u32, _: u32| [0u64; 6];
    for _ in 0..5 {
        let mut options = TraceOptions {
            max_samples: 16,
            arg_masks: &mut masks,
            on_syscall: None,
        };
        let trace = trace_process(
            pid as i32,
            Some(Duration::from_millis(200)),
            &mut options,
            None,
        )
        .expect("attach to our own child");
        assert_eq!(trace.end, End::Detached);
        assert!(trace.total_calls() > 0);
        assert!(trace.tasks > 1, "no child followed");
        // Still alive, this process still the tracer of nothing: detached, not stopped.
        assert_eq!(status_field(pid, "TracerPid:"), "0");
        assert!(!status_field(pid, "State:").starts_with('t'));
    }
    // No child of the shell was left stopped by the tracer either.
    std::thread::sleep(Duration::from_millis(100));
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1) == Some(&pid.to_string().as_str()) {
            assert_ne!(
                fields[0], "t",
                "a child of the shell is in a tracing stop: {stat}"
            );
        }
    }
}
