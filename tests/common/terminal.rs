//! Running secopt on a pseudo-terminal, for the tests of what a terminal sees (`--progress`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The escape that starts each redraw of a status line: back to the line's start, cleared.
pub const DRAW: &str = "\r\x1b[K";

/// What a 60-column terminal shows while secopt runs with `args` (under `script(1)`), its
/// exit code and how long it ran; `None` (said on stderr) where there is no `script`.
pub fn run_on_a_terminal(args: &str) -> Option<(String, Option<i32>, Duration)> {
    let Some(script) = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        eprintln!("SKIPPED: no `script` (util-linux) to give secopt a terminal");
        return None;
    };
    let command = format!("stty cols 60; exec {} {args}", env!("CARGO_BIN_EXE_secopt"));
    let started = Instant::now();
    let run = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Some((
        String::from_utf8_lossy(&run.stdout).into_owned(),
        run.status.code(),
        started.elapsed(),
    ))
}
