//! What `compile` and `optimize` say on stderr while the optimizer works (`--progress`).
//!
//! Most filters optimize in milliseconds, and a line that flashes by is noise; one with
//! thousands of argument values can take seconds, more under `--max-path`, and a silent
//! terminal then looks hung. So by default a terminal hears each layout and proof once the
//! optimization has run for [`QUIET_FOR`], on one line redrawn in place and cleared at the
//! end; `--progress always` logs every stage as a line of its own (for a CI log), `never`
//! says nothing.

use crate::optimize::{Progress, Stage};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// When `compile` and `optimize` say what the optimizer is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ProgressMode {
    /// On a terminal (and without --quiet), one line redrawn in place once the work has
    /// taken half a second
    #[default]
    Auto,
    /// Every layout and proof as a line of its own, from the start, terminal or not
    Always,
    /// Nothing
    Never,
}

/// How long an optimization runs before a terminal hears of it.
pub const QUIET_FOR: Duration = Duration::from_millis(500);

/// The status of one optimization on stderr; the line it drew is cleared when it is dropped.
///
/// On a terminal a ticker thread redraws the stage under way with the time so far, so a
/// single long layout (a table of hundreds of ranges under `--max-path` takes seconds) does
/// not look hung.
pub struct StatusLine {
    state: Arc<(Mutex<State>, Condvar)>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

struct State {
    label: String,
    start: Instant,
    /// The stage under way, as last heard.
    stage: Option<Stage>,
    /// Whether a redrawn line is on the terminal now.
    drawn: bool,
    /// Set when the optimization is over: the ticker stops.
    done: bool,
}

impl State {
    /// Redraws the line (back to its start, cleared with `ESC [ K`) once the work has run
    /// for [`QUIET_FOR`].
    fn redraw(&mut self) {
        let elapsed = self.start.elapsed();
        let Some(stage) = self.stage.filter(|_| elapsed >= QUIET_FOR) else {
            return;
        };
        // A line wider than the terminal would wrap, and the next one be drawn below it.
        let text: String = line(&self.label, &stage, elapsed)
            .chars()
            .take(terminal_width().saturating_sub(1))
            .collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{text}");
        let _ = err.flush();
        self.drawn = true;
    }
}

/// How often the ticker redraws the line.
const TICK: Duration = Duration::from_millis(250);

impl StatusLine {
    /// The status of the optimization of `label` (a file name), or `None` when `mode` (with
    /// `quiet` and whether stderr is a terminal) says nothing is to be shown.
    pub fn new(label: &str, mode: ProgressMode, quiet: bool) -> Option<StatusLine> {
        let log = match mode {
            ProgressMode::Never => return None,
            ProgressMode::Auto if quiet || !std::io::stderr().is_terminal() => return None,
            ProgressMode::Auto => false,
            ProgressMode::Always => true,
        };
        let state = Arc::new((
            Mutex::new(State {
                label: label.to_string(),
                start: Instant::now(),
                stage: None,
                drawn: false,
                done: false,
            }),
            Condvar::new(),
        ));
        let ticker = (!log).then(|| {
            let state = Arc::clone(&state);
            std::thread::spawn(move || {
                let (lock, wake) = &*state;
                let Ok(mut s) = lock.lock() else { return };
                while !s.done {
                    s.redraw();
                    match wake.wait_timeout(s, TICK) {
                        Ok((next, _)) => s = next,
                        Err(_) => return,
                    }
                }
            })
        });
        Some(StatusLine { state, ticker })
    }

    /// The callback for [`crate::optimize::OptimizeOptions::progress`]: on a terminal it
    /// records the stage and redraws the line; otherwise it logs the stage as a line.
    pub fn progress(&self) -> Progress {
        let state = Arc::clone(&self.state);
        let log = self.ticker.is_none();
        Progress(Arc::new(move |stage: &Stage| {
            let Ok(mut s) = state.0.lock() else { return };
            if log {
                let text = line(&s.label, stage, s.start.elapsed());
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{text}");
                let _ = err.flush();
            } else {
                s.stage = Some(*stage);
                s.redraw();
            }
        }))
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        let (lock, wake) = &*self.state;
        if let Ok(mut s) = lock.lock() {
            s.done = true;
            wake.notify_all();
        }
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
        if let Ok(s) = lock.lock() {
            if s.drawn {
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[K");
                let _ = err.flush();
            }
        }
    }
}

/// The width of the terminal on stderr, in columns (80 when it does not say).
fn terminal_width() -> usize {
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given, which lives
    // through the call.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_col > 0 {
        usize::from(size.ws_col)
    } else {
        80
    }
}

/// One stage as the status line says it: the file, the stage, and the time so far.
fn line(label: &str, stage: &Stage, elapsed: Duration) -> String {
    format!(
        "secopt: {label}: {stage}... ({:.1} s)",
        elapsed.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimize::{Favor, Method};

    #[test]
    fn a_stage_is_said_with_its_file_and_the_time_so_far() {
        let layout = Stage::Layout {
            favor: Favor::Size,
            within: Some(41),
            values_per_chain: Some(8),
        };
        assert_eq!(
            line("p.json", &layout, Duration::from_millis(2345)),
            "secopt: p.json: laying out favouring size within 41 instructions per path, \
             value chains of up to 8... (2.3 s)"
        );
        let proof = Stage::Proof {
            method: Method::Lifted,
        };
        assert_eq!(
            line("f.bpf", &proof, Duration::ZERO),
            "secopt: f.bpf: proving the re-emitted program equal... (0.0 s)"
        );
    }

    #[test]
    fn never_and_quiet_show_nothing() {
        assert!(StatusLine::new("x", ProgressMode::Never, false).is_none());
        assert!(StatusLine::new("x", ProgressMode::Auto, true).is_none());
        assert!(StatusLine::new("x", ProgressMode::Always, true).is_some());
    }
}
