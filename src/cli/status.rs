//! What `compile` and `optimize` say on stderr while the optimizer works, and `verify` and
//! `diff` while they compare (`--progress`).
//!
//! Most filters optimize and compare in milliseconds, and a line that flashes by is noise;
//! one with thousands of argument values can take seconds, more under `--max-path`, a
//! comparison the decision diagrams cannot finish runs until a budget stops it, and a silent
//! terminal then looks hung. So by default a terminal hears each stage once the work has run
//! for [`QUIET_FOR`], on one line redrawn in place and cleared at the end (a comparison's
//! line also counts its nodes and steps against their budgets); `--progress always` logs
//! every stage as a line of its own (for a CI log), `never` says nothing.

use crate::bpf::symbolic::bdd::Meter;
use crate::optimize::{Progress, Stage};
use crate::verify::{Budget, Phase};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// When `compile`, `optimize`, `verify` and `diff` say what they are doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ProgressMode {
    /// On a terminal (and without --quiet, where the command has it), one line redrawn in
    /// place once the work has taken half a second
    #[default]
    Auto,
    /// Every stage as a line of its own (each layout and proof; a comparison's phases and
    /// what it took), from the start, terminal or not
    Always,
    /// Nothing
    Never,
}

/// How long an optimization runs before a terminal hears of it.
pub const QUIET_FOR: Duration = Duration::from_millis(500);

/// The status of one optimization or comparison on stderr; the line it drew is cleared when
/// it is dropped.
///
/// On a terminal a ticker thread redraws the stage under way with the time so far (and a
/// comparison's counts), so a single long layout (a table of hundreds of ranges under
/// `--max-path` takes seconds) or proof does not look hung.
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
    /// The stage under way, as last heard, in words.
    stage: Option<String>,
    /// How far the stage under way has come, where it says (a layout's table of trees
    /// filling), drawn after it on a terminal.
    detail: Option<String>,
    /// A comparison's or the optimizer's proofs' meter, with the budgets its counts are
    /// shown against.
    meter: Option<(Meter, Budget)>,
    /// Whether the stage under way is counted on the meter (a comparison's every stage, a
    /// proof of the optimizer's; not a layout).
    counted: bool,
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
        if elapsed < self.sink.quiet_for {
            return;
        }
        let Some(parts) = self.parts() else { return };
        // A line wider than the terminal would wrap, and the next one be drawn below it.
        let text = parts.fit((self.sink.width)().saturating_sub(1));
        self.sink.write(format_args!("\r\x1b[K{text}"));
        self.drawn = true;
    }

    /// The stage under way as the line says it, with a comparison's counts or how far it has
    /// come.
    fn line(&self) -> Option<String> {
        self.parts().map(|p| p.whole())
    }

    /// The line in its parts.
    fn parts(&self) -> Option<Parts> {
        let stage = self.stage.as_deref()?;
        let progress = match (&self.meter, &self.detail) {
            (Some((meter, budget)), _) if self.counted => format!(": {}", counts(meter, budget)),
            (_, Some(detail)) => format!(": {detail}"),
            _ => String::new(),
        };
        Some(Parts {
            head: format!("secopt: {}{stage}", labelled(&self.label)),
            progress,
            time: elapsed(self.start.elapsed()),
        })
    }

    /// A comparison's last line in a log: its counts at the end, and the time it took.
    fn summary(&self) -> Option<String> {
        let (meter, budget) = self.meter.as_ref()?;
        Some(format!(
            "secopt: {}done: {} ({:.1} s)",
            labelled(&self.label),
            counts(meter, budget),
            self.start.elapsed().as_secs_f64()
        ))
    }

    /// A new stage: logged as a line of its own, or drawn on the terminal's line.
    fn hear(&mut self, stage: String, counted: bool, log: bool) {
        // Once the line is cleared, a stage heard late must not draw it again.
        if self.done {
            return;
        }
        self.stage = Some(stage);
        self.detail = None;
        self.counted = counted;
        if log {
            if let Some(text) = self.line() {
                self.sink.write(format_args!("{text}\n"));
            }
        } else {
            self.redraw();
        }
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

    /// The status of a comparison under `budget`, labelled `label` (a Firecracker thread's
    /// name; empty for a single pair, whose files are on the command line), or `None` as for
    /// [`StatusLine::new`] (there is no `--quiet` to heed); the [`Meter`] is for
    /// [`crate::verify::VerifyOptions::meter`].
    pub fn comparison(
        label: &str,
        mode: ProgressMode,
        budget: &Budget,
    ) -> Option<(StatusLine, Meter)> {
        let log = match mode {
            ProgressMode::Never => return None,
            ProgressMode::Auto if !std::io::stderr().is_terminal() => return None,
            ProgressMode::Auto => false,
            ProgressMode::Always => true,
        };
        Some(StatusLine::start_comparison(
            label,
            log,
            Sink::stderr(),
            budget,
        ))
    }

    fn start_comparison(
        label: &str,
        log: bool,
        sink: Sink,
        budget: &Budget,
    ) -> (StatusLine, Meter) {
        let status = StatusLine::start(label, log, sink);
        // The listener holds the state weakly: the state holds the meter, which holds it.
        let state = Arc::downgrade(&status.state);
        let meter = Meter::with_listener(Box::new(move |n| {
            let (Some(phase), Some(state)) = (Phase::from_number(n), state.upgrade()) else {
                return;
            };
            let Ok(mut s) = state.0.lock() else { return };
            s.hear(phase.to_string(), true, log);
        }));
        if let Ok(mut s) = status.state.0.lock() {
            s.meter = Some((meter.clone(), budget.clone()));
        }
        (status, meter)
    }

    /// The status of the work on `label` on `sink`: a line per stage where `log`, else one
    /// line redrawn by a ticker thread.
    fn start(label: &str, log: bool, sink: Sink) -> StatusLine {
        let state = Arc::new((
            Mutex::new(State {
                label: label.to_string(),
                sink,
                start: Instant::now(),
                stage: None,
                detail: None,
                meter: None,
                counted: false,
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

    /// The meter for [`crate::optimize::OptimizeOptions::proof_meter`]: a terminal's line
    /// shows a proof's counts against `budget` (the self-check's) while it runs.
    pub fn proof_meter(&self, budget: &Budget) -> Meter {
        let meter = Meter::default();
        if let Ok(mut s) = self.state.0.lock() {
            s.meter = Some((meter.clone(), budget.clone()));
        }
        meter
    }

    /// The callback for [`crate::optimize::OptimizeOptions::progress`]: on a terminal it
    /// records the stage and redraws the line; otherwise it logs the stage as a line.
    pub fn progress(&self) -> Progress {
        let state = Arc::clone(&self.state);
        let log = self.ticker.is_none();
        Progress(Arc::new(move |stage: &Stage| {
            if let Stage::Table(fill) = stage {
                // Part of the layout under way: a terminal's next redraw shows how far it
                // is filled (until it is full); a log, a line per stage, leaves it out.
                if !log {
                    if let Ok(mut s) = state.0.lock() {
                        s.detail = (fill.percent < 100).then(|| fill.to_string());
                    }
                }
                return;
            }
            if let Ok(mut s) = state.0.lock() {
                // A proof's counts are drawn as it runs; a log line, written as it starts,
                // would only ever say it had not begun.
                let counted = !log && matches!(stage, Stage::Proof { .. });
                s.hear(stage.to_string(), counted, log);
            }
        }))
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        let log = self.ticker.is_none();
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
            // A log of a comparison ends with what it took: its stage lines were written as
            // each stage began, when the counts had barely grown.
            if log && s.counted {
                if let Some(text) = s.summary() {
                    s.sink.write(format_args!("{text}\n"));
                }
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

/// A comparison's or a proof's counts against its budgets: `1.2M/16.8M nodes, 3.4M/268.4M
/// steps`.
fn counts(meter: &Meter, budget: &Budget) -> String {
    format!(
        "{}/{} nodes, {}/{} steps",
        short(meter.nodes()),
        short(budget.max_bdd_nodes as u64),
        short(meter.steps()),
        short(budget.max_bdd_steps)
    )
}

/// A count in three or four significant figures: `950`, `12.3k`, `268.4M`.
fn short(n: u64) -> String {
    // Each unit up to where its one decimal would round to 1000.0.
    match n {
        0..1_000 => n.to_string(),
        1_000..999_950 => format!("{:.1}k", n as f64 / 1e3),
        999_950..999_950_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

/// `label: `, or nothing for an empty label.
fn labelled(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!("{label}: ")
    }
}

/// The end of a status line: `... (2.3 s)`.
fn elapsed(time: Duration) -> String {
    format!("... ({:.1} s)", time.as_secs_f64())
}

/// A status line in its parts, which a narrow terminal keeps in order of what they say.
struct Parts {
    /// `secopt: `, the file and the stage.
    head: String,
    /// How far the stage has come (`: 1.2M/16.8M nodes, …`, `: table of 779 ranges 45%`),
    /// or empty.
    progress: String,
    /// `... (2.3 s)`.
    time: String,
}

impl Parts {
    fn whole(&self) -> String {
        format!("{}{}{}", self.head, self.progress, self.time)
    }

    /// The line in at most `width` columns (characters). What it says of its progress stays
    /// in view longest: the time goes first where that is enough (it is only the sign of life
    /// that the progress also gives), then the stage is cut short, marked `...`, and on a
    /// terminal too narrow even for that, the line's start is what shows.
    fn fit(&self, width: usize) -> String {
        /// The least of the head worth keeping before its cut: `secopt: ` and a few more.
        const LEAST_HEAD: usize = 16;
        let whole = self.whole();
        let (head, progress) = (self.head.as_str(), self.progress.as_str());
        let without_time = format!("{progress}...");
        if whole.chars().count() <= width {
            return whole;
        }
        if !progress.is_empty() && head.chars().count() + without_time.chars().count() <= width {
            return format!("{head}{without_time}");
        }
        for tail in [format!("{progress}{}", self.time), without_time] {
            // The cut is marked `...`, unless the tail starts with them (only the time).
            let mark = if tail.starts_with("...") { "" } else { "..." };
            match width.checked_sub(tail.chars().count() + mark.len()) {
                Some(room) if room >= LEAST_HEAD => {
                    let cut: String = head.chars().take(room).collect();
                    return format!("{cut}{mark}{tail}");
                }
                _ => {}
            }
        }
        whole.chars().take(width).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimize::{Favor, Method};

    /// One stage as the status line says it, as [`State::parts`] puts it together.
    fn line(label: &str, stage: &dyn std::fmt::Display, time: Duration) -> String {
        format!("secopt: {}{stage}{}", labelled(label), elapsed(time))
    }

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
        /// A terminal wide enough for any line of these tests.
        fn wide_sink(&self, quiet_for: Duration) -> Sink {
            Sink {
                width: || 200,
                ..self.sink(quiet_for)
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
            // Cut to the terminal's width less one column, so it never wraps, the stage
            // cut short to keep the time in view.
            assert_eq!(line.chars().count(), 39, "{line:?}");
            assert!(line.starts_with("secopt: p.json: laying out"), "{line:?}");
            assert!(line.ends_with(" s)"), "{line:?}");
            assert!(!line.contains('\n'));
        }
        // A new stage is drawn at once.
        (progress.0)(&PROOF);
        let drawn = screen.text();
        let last = drawn.rsplit("\r\x1b[K").next().unwrap();
        assert!(last.starts_with("secopt: p.json: proving the "), "{last:?}");
        // At the end the line is cleared, and nothing is drawn after.
        drop(status);
        let end = screen.text();
        assert!(end.ends_with("\r\x1b[K"), "{end:?}");
        std::thread::sleep(Duration::from_millis(300));
        (progress.0)(&LAYOUT);
        assert_eq!(screen.text(), end);
    }

    /// A line too wide for the terminal keeps what it says of its progress: it drops the time
    /// where that is enough, else cuts the stage short; a terminal too narrow for that shows
    /// the line's start.
    #[test]
    fn a_long_line_is_cut_in_its_stage_not_its_progress() {
        let parts = |head: &str, progress: &str| Parts {
            head: head.to_string(),
            progress: progress.to_string(),
            time: "... (2.3 s)".to_string(),
        };
        let compile = parts(
            "secopt: near.json: laying out favouring size within 44 instructions per path",
            ": table of 779 ranges 45%",
        );
        let whole = compile.whole();
        assert_eq!(compile.fit(200), whole);
        assert_eq!(
            compile.fit(59),
            "secopt: near.json: l...: table of 779 ranges 45%... (2.3 s)"
        );
        for width in [
            20,
            40,
            59,
            79,
            whole.len() - 1,
            whole.len(),
            whole.len() + 1,
        ] {
            let line = compile.fit(width);
            assert!(line.chars().count() <= width, "{line:?}");
            assert!(
                line.contains("ranges 45%") || whole.starts_with(&line),
                "{line:?}"
            );
        }
        assert_eq!(compile.fit(40), "secopt: near.json: laying out favouring ");
        // Where dropping the time is enough, the stage stays whole.
        let verify = parts("secopt: exploring A", ": 1.2M/16.8M nodes, 3.4M/5.0M steps");
        assert_eq!(
            verify.fit(59),
            "secopt: exploring A: 1.2M/16.8M nodes, 3.4M/5.0M steps..."
        );
        // With only the time after the stage, its dots mark the cut, and the time stays.
        assert_eq!(
            parts("secopt: near.json: laying out favouring size", "").fit(40),
            "secopt: near.json: laying out... (2.3 s)"
        );
    }

    /// The share of a layout's table filled follows the stage on a terminal, until the table
    /// is full or the next stage begins; a log, a line per stage, does not mention it.
    #[test]
    fn a_tables_filling_is_drawn_after_its_layout_and_never_logged() {
        let fill = |percent| {
            Stage::Table(crate::optimize::dispatch::TableFill {
                ranges: 779,
                within: 41,
                percent,
            })
        };
        let screen = Screen::default();
        let status = StatusLine::start("p.json", false, screen.wide_sink(Duration::ZERO));
        let progress = status.progress();
        let state = Arc::clone(&status.state);
        let line = || state.0.lock().unwrap().line().unwrap();
        (progress.0)(&LAYOUT);
        (progress.0)(&fill(0));
        (progress.0)(&fill(45));
        assert!(
            line().starts_with(
                "secopt: p.json: laying out favouring balanced: table of 779 ranges 45%... ("
            ),
            "{}",
            line()
        );
        (progress.0)(&fill(100));
        assert!(
            line().starts_with("secopt: p.json: laying out favouring balanced... ("),
            "{}",
            line()
        );
        (progress.0)(&fill(7));
        (progress.0)(&PROOF);
        assert!(
            line().starts_with("secopt: p.json: proving the re-emitted program equal... ("),
            "{}",
            line()
        );
        // The ticker draws what the line says.
        let deadline = Instant::now() + Duration::from_secs(10);
        (progress.0)(&LAYOUT);
        (progress.0)(&fill(45));
        while !screen.text().contains("ranges 45%") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(screen
            .text()
            .contains("balanced: table of 779 ranges 45%... ("));
        drop(status);

        let log = Screen::default();
        let status = StatusLine::start("p.json", true, log.sink(Duration::from_secs(60)));
        for stage in [LAYOUT, fill(0), fill(45), fill(100), PROOF] {
            (status.progress().0)(&stage);
        }
        drop(status);
        let lines: Vec<String> = log.text().lines().map(str::to_string).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(!log.text().contains('%'), "{lines:?}");
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
    fn counts_are_said_in_three_or_four_figures() {
        let said: Vec<String> = [0, 999, 1_000, 12_345, 999_949, 999_950, 16_777_216]
            .into_iter()
            .chain([268_435_456, 999_949_999, 999_950_000, 4_294_967_296])
            .map(short)
            .collect();
        assert_eq!(
            said,
            [
                "0", "999", "1.0k", "12.3k", "999.9k", "1.0M", "16.8M", "268.4M", "999.9M", "1.0G",
                "4.3G"
            ]
        );
    }

    #[test]
    fn never_and_quiet_show_nothing() {
        assert!(StatusLine::new("x", ProgressMode::Never, false).is_none());
        assert!(StatusLine::new("x", ProgressMode::Auto, true).is_none());
        assert!(StatusLine::new("x", ProgressMode::Always, true).is_some());
    }

    /// What a comparison of `a` and `b` under `budget` draws on a screen (logged, or drawn
    /// as a terminal's line with no quiet time), and its verdict.
    fn watched(a: &str, b: &str, budget: &Budget, log: bool) -> (String, crate::verify::Verdict) {
        use crate::bpf::asm::assemble;
        let screen = Screen::default();
        let (status, meter) =
            StatusLine::start_comparison("vcpu", log, screen.wide_sink(Duration::ZERO), budget);
        let opts = crate::verify::VerifyOptions {
            budget: budget.clone(),
            meter: Some(meter),
            ..Default::default()
        };
        let (a, b) = (assemble(a).unwrap(), assemble(b).unwrap());
        let verdict = crate::verify::equivalent(&a, &b, &opts).unwrap();
        drop(status);
        (screen.text(), verdict)
    }

    /// A filter that multiplies two argument words and allows one value of the sum: its
    /// decision diagrams grow past any small node budget.
    fn product(k: u32) -> String {
        format!(
            "ld [args[0].lo]\nmul #2654435769\ntax\nld [args[1].lo]\nmul #40503\nadd x\n\
             jeq #{k}, allow, next\nret ERRNO(1)\nallow:\nret ALLOW\n"
        )
    }

    /// `--progress always` on a comparison logs each stage as it starts and ends with the
    /// counts against the budgets; where the node budget ran out, the count has reached it.
    #[test]
    fn a_comparison_logs_its_stages_and_what_it_took() {
        use crate::verify::{UnknownReason, Verdict};
        let budget = Budget::default();
        let (log, verdict) = watched(
            "ld [args[0].lo]\njeq #1, next, deny\nret ALLOW\ndeny:\nret ERRNO(1)\n",
            "ld [args[0].lo]\njgt #1, deny, next\njge #1, next, deny\nret ALLOW\ndeny:\nret ERRNO(1)\n",
            &budget,
            true,
        );
        assert_eq!(verdict, Verdict::Equal);
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 4, "{log:?}");
        for (line, stage) in lines
            .iter()
            .zip(["exploring A", "exploring B", "comparing A and B"])
        {
            assert!(
                line.starts_with(&format!("secopt: vcpu: {stage}: ")),
                "{log:?}"
            );
            assert!(line.contains("/16.8M nodes, "), "{log:?}");
            assert!(line.contains("/268.4M steps... ("), "{log:?}");
        }
        assert!(
            lines[0].contains(": 2/16.8M nodes, 0/268.4M steps"),
            "{log:?}"
        );
        assert!(lines[3].starts_with("secopt: vcpu: done: "), "{log:?}");
        assert!(!log.contains('\r'), "{log:?}");

        let budget = Budget {
            max_bdd_nodes: 5000,
            ..Budget::default()
        };
        let (log, verdict) = watched(&product(7), &product(8), &budget, true);
        assert_eq!(
            verdict,
            Verdict::Unknown {
                reason: UnknownReason::BddNodes { limit: 5000 }
            }
        );
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 2, "{log:?}");
        assert!(
            lines[0].starts_with("secopt: vcpu: exploring A: 2/5.0k nodes"),
            "{log:?}"
        );
        assert!(
            lines[1].starts_with("secopt: vcpu: done: 5.0k/5.0k nodes, "),
            "{log:?}"
        );
    }

    /// On a terminal the comparison's stages are drawn on one line, with its counts, and the
    /// line is cleared at the end.
    #[test]
    fn a_terminal_sees_a_comparison_drawn_with_its_counts_and_cleared() {
        let budget = Budget {
            max_bdd_nodes: 50_000,
            ..Budget::default()
        };
        let (screen, _) = watched(&product(7), &product(8), &budget, false);
        let draws: Vec<&str> = screen.split("\r\x1b[K").collect();
        assert_eq!(draws[0], "", "{screen:?}");
        assert!(
            draws[1].starts_with("secopt: vcpu: exploring A: 2/50.0k n"),
            "{screen:?}"
        );
        assert_eq!(draws.last(), Some(&""), "{screen:?}");
        assert!(!screen.contains('\n'), "{screen:?}");
    }

    /// Compile's line counts a proof's nodes and steps against the self-check's budget as it
    /// runs (the optimizer's own proof, through `proof_meter`), and a layout without them;
    /// a log says neither.
    #[test]
    fn a_proof_is_drawn_with_its_counts_and_a_layout_without() {
        use crate::optimize::{self, OptimizeOptions};
        let budget = Budget {
            max_bdd_nodes: 300_000,
            ..crate::optimize::SELF_CHECK_BUDGET
        };
        for log in [false, true] {
            let screen = Screen::default();
            let status = StatusLine::start("p.bpf", log, screen.wide_sink(Duration::ZERO));
            let opts = OptimizeOptions {
                progress: Some(status.progress()),
                proof_meter: Some(status.proof_meter(&budget)),
                self_check_budget: budget.clone(),
                ..OptimizeOptions::default()
            };
            let prog = crate::bpf::asm::assemble(
                "ld [nr]\njeq #1, allow, next\njeq #2, allow, next\njeq #3, next, deny\n\
                 ld [args[0].lo]\njeq #5, allow, deny\ndeny:\nret ERRNO(1)\nallow:\nret ALLOW\n",
            )
            .unwrap();
            let out = optimize::optimize(&prog, &opts).unwrap();
            assert_eq!(out.verification, optimize::Verification::Equal);
            drop(status);
            let text = screen.text();
            let layouts = text
                .matches("secopt: p.bpf: laying out favouring balanced... (")
                .count();
            assert!(layouts >= 1, "{text:?}");
            let counted = "secopt: p.bpf: proving the re-emitted program equal: ";
            let plain = "secopt: p.bpf: proving the re-emitted program equal... (";
            if log {
                assert_eq!(text.matches(plain).count(), 1, "{text:?}");
                assert!(!text.contains("nodes"), "{text:?}");
            } else {
                assert!(
                    text.contains(&format!("{counted}0/300.0k nodes, 0/16.8M steps... (")),
                    "{text:?}"
                );
                assert!(text.ends_with("\r\x1b[K"), "{text:?}");
            }
        }
    }
}
