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

/// Where the status goes: stderr, or in the tests a buffer that stands in for a terminal.
struct Sink {
    out: Box<dyn Write + Send>,
    /// The terminal's width in columns, asked at each redraw (it may have been resized).
    width: fn() -> usize,
    /// How long the work runs before a terminal hears of it ([`QUIET_FOR`]).
    quiet_for: Duration,
}

impl Sink {
    fn stderr() -> Sink {
        Sink {
            out: Box::new(std::io::stderr()),
            width: terminal_width,
            quiet_for: QUIET_FOR,
        }
    }

    fn write(&mut self, text: std::fmt::Arguments) {
        let _ = self.out.write_fmt(text);
        let _ = self.out.flush();
    }
}

struct State {
    label: String,
    sink: Sink,
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
        let Some(stage) = self.stage.filter(|_| elapsed >= self.sink.quiet_for) else {
            return;
        };
        // A line wider than the terminal would wrap, and the next one be drawn below it.
        let text: String = line(&self.label, &stage, elapsed)
            .chars()
            .take((self.sink.width)().saturating_sub(1))
            .collect();
        self.sink.write(format_args!("\r\x1b[K{text}"));
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
        Some(StatusLine::start(label, log, Sink::stderr()))
    }

    /// The status of the optimization of `label` on `sink`: a line per stage where `log`,
    /// else one line redrawn by a ticker thread.
    fn start(label: &str, log: bool, sink: Sink) -> StatusLine {
        let state = Arc::new((
            Mutex::new(State {
                label: label.to_string(),
                sink,
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
        StatusLine { state, ticker }
    }

    /// The callback for [`crate::optimize::OptimizeOptions::progress`]: on a terminal it
    /// records the stage and redraws the line; otherwise it logs the stage as a line.
    pub fn progress(&self) -> Progress {
        let state = Arc::clone(&self.state);
        let log = self.ticker.is_none();
        Progress(Arc::new(move |stage: &Stage| {
            let Ok(mut s) = state.0.lock() else { return };
            // Once the line is cleared, a stage heard late must not draw it again.
            if s.done {
                return;
            }
            if log {
                let text = line(&s.label, stage, s.start.elapsed());
                s.sink.write(format_args!("{text}\n"));
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
        if let Ok(mut s) = lock.lock() {
            if s.drawn {
                s.sink.write(format_args!("\r\x1b[K"));
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

    /// A buffer standing in for the terminal, readable while the status line writes to it.
    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Screen {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
        fn sink(&self, quiet_for: Duration) -> Sink {
            Sink {
                out: Box::new(self.clone()),
                width: || 40,
                quiet_for,
            }
        }
    }

    const LAYOUT: Stage = Stage::Layout {
        favor: Favor::Balanced,
        within: None,
        values_per_chain: None,
    };
    const PROOF: Stage = Stage::Proof {
        method: Method::Lifted,
    };

    #[test]
    fn a_terminal_hears_one_line_redrawn_after_the_quiet_time_and_cleared_at_the_end() {
        let screen = Screen::default();
        let started = Instant::now();
        let status = StatusLine::start("p.json", false, screen.sink(Duration::from_millis(200)));
        let progress = status.progress();
        (progress.0)(&LAYOUT);
        // Within the quiet time: nothing.
        assert_eq!(screen.text(), "");
        // The ticker draws the stage under way once the quiet time is over, and again as
        // the time so far grows, though no new stage is heard.
        let draws = |n: usize| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while screen.text().matches("\r\x1b[K").count() < n && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        draws(1);
        assert!(started.elapsed() >= Duration::from_millis(200));
        draws(2);
        let drawn = screen.text();
        let lines: Vec<&str> = drawn.split("\r\x1b[K").collect();
        assert_eq!(lines[0], "", "{drawn:?}");
        assert!(lines.len() >= 3, "{drawn:?}");
        for line in &lines[1..] {
            // Cut to the terminal's width less one column, so it never wraps.
            assert_eq!(line.chars().count(), 39, "{line:?}");
            assert!(
                line.starts_with("secopt: p.json: laying out favouring"),
                "{line:?}"
            );
            assert!(!line.contains('\n'));
        }
        // A new stage is drawn at once.
        (progress.0)(&PROOF);
        let drawn = screen.text();
        let last = drawn.rsplit("\r\x1b[K").next().unwrap();
        assert!(
            last.starts_with("secopt: p.json: proving the re-"),
            "{last:?}"
        );
        // At the end the line is cleared, and nothing is drawn after.
        drop(status);
        let end = screen.text();
        assert!(end.ends_with("\r\x1b[K"), "{end:?}");
        std::thread::sleep(Duration::from_millis(300));
        (progress.0)(&LAYOUT);
        assert_eq!(screen.text(), end);
    }

    #[test]
    fn work_done_within_the_quiet_time_leaves_the_terminal_untouched() {
        let screen = Screen::default();
        let status = StatusLine::start("p.json", false, screen.sink(Duration::from_secs(60)));
        (status.progress().0)(&LAYOUT);
        std::thread::sleep(Duration::from_millis(300));
        (status.progress().0)(&PROOF);
        drop(status);
        assert_eq!(screen.text(), "");
    }

    #[test]
    fn a_log_has_a_line_per_stage_from_the_start() {
        let screen = Screen::default();
        let status = StatusLine::start("f.bpf", true, screen.sink(Duration::from_secs(60)));
        (status.progress().0)(&LAYOUT);
        (status.progress().0)(&PROOF);
        drop(status);
        let log = screen.text();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 2, "{log:?}");
        assert!(lines[0].starts_with("secopt: f.bpf: laying out favouring balanced... ("));
        assert!(lines[1].starts_with("secopt: f.bpf: proving the re-emitted program equal... ("));
        assert!(!log.contains('\r'), "{log:?}");
    }

    #[test]
    fn never_and_quiet_show_nothing() {
        assert!(StatusLine::new("x", ProgressMode::Never, false).is_none());
        assert!(StatusLine::new("x", ProgressMode::Auto, true).is_none());
        assert!(StatusLine::new("x", ProgressMode::Always, true).is_some());
    }
}
