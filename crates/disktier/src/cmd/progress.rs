//! The live progress line and Ctrl-C handling shared by every command that measures (`bench`,
//! `check`, `assess`, `interfere`, `trace record`); `simulate` and `trace stats` draw their own
//! line, [`reading_line`], with [`draw`].
//!
//! The line ("run 12s/60s  ETA 48s  12,345 IOPS  48.2 MiB/s  p99 1.23 ms") is drawn on stderr,
//! redrawn in place with `\r` and erased when the run ends. It is shown only on a terminal: when
//! stdout or stderr is redirected (a pipe, a file, CI) or with `--quiet` there is none, so logs
//! and JSON stay clean (issue #2: "off when stdout is not a terminal or with --quiet").
//!
//! [`stop_flag`] installs SIGINT, SIGTERM and SIGHUP handlers once per process that set a
//! shared flag the engine polls (it stops within a second and marks the result interrupted): a
//! dropped ssh session (SIGHUP) stops a run as cleanly as Ctrl-C. A second SIGINT or SIGTERM
//! while the flag is already set ends the process at once with the shell's status for the signal
//! that ended it, 128 + its number (130 for SIGINT, 143 for SIGTERM), unless it is the first
//! signal again within [`SAME_REQUEST`]: coreutils `timeout` sends its one signal twice, to
//! the process and to its process group. Under `nohup` (SIGHUP inherited as ignored) a hang-up
//! stays ignored.

use super::Ctx;
use disktier_engine::Progress;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The callback type the engine's `RunOptions.progress` takes.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Whether a progress line is on screen now (so [`clear`] knows to erase it).
static DRAWN: AtomicBool = AtomicBool::new(false);
/// Serialises drawing: the engine may call from more than one thread.
static DRAW_LOCK: Mutex<()> = Mutex::new(());

/// The process-wide stop flag, set by SIGINT, SIGTERM or SIGHUP. The first call installs the
/// handlers.
pub fn stop_flag() -> Arc<AtomicBool> {
    STOP_FLAG
        .get_or_init(|| {
            let flag = Arc::new(AtomicBool::new(false));
            let ending = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM];
            for sig in ending {
                let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
            }
            // The second signal ends the process from a thread, which can tell a repeat of the
            // first (`timeout`'s) from a new request: signal-hook's conditional shutdown ran in
            // the handler, which cannot (QA: `timeout 2 disktier bench ...` left disktier.0.0
            // behind and printed nothing in 2 of 8 runs, when its two SIGTERMs came apart).
            if let Ok(mut signals) = signal_hook::iterator::Signals::new(ending) {
                std::thread::spawn(move || {
                    let mut first: Option<(i32, Instant)> = None;
                    for sig in signals.forever() {
                        match first {
                            None => {
                                first = Some((sig, Instant::now()));
                                // QA: a first Ctrl-C during a long store upgrade seemed to do
                                // nothing until it committed.
                                if disktier_store::migrate::upgrading() {
                                    crate::out::note("note: the store upgrade under way finishes and commits before disktier stops; interrupt again to stop now, which rolls the upgrade back (the next command that opens the store starts it again)");
                                }
                            }
                            Some((f, at)) if f == sig && at.elapsed() < SAME_REQUEST => {}
                            // The shell's status for the signal that ended it (QA: a second
                            // SIGTERM exited 130, SIGINT's).
                            Some(_) => signal_hook::low_level::exit(128 + sig),
                        }
                    }
                });
            }
            // A hang-up comes once (the session is gone): it stops the run, and a second one
            // does not end the process before the run has stopped and saved.
            if !nohup() {
                let _ = signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&flag));
            }
            flag
        })
        .clone()
}

/// How soon after the first signal the same signal again is the same request, not a second
/// one: `timeout` sends its signal to disktier and then to its process group, microseconds
/// apart, and a person presses Ctrl-C again only after seeing the first do nothing.
const SAME_REQUEST: Duration = Duration::from_millis(250);

/// [`stop_flag`]'s flag, once installed.
static STOP_FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Whether [`stop_flag`]'s first signal came: a second one now ends the process at once.
fn stopping() -> bool {
    STOP_FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// The stop flag of a run that changes the system and must undo it or stop at a safe point
/// before it exits (`interfere`, `setup`): SIGINT, SIGTERM, SIGHUP (but not under `nohup`) and
/// SIGQUIT all set it, and a repeated signal does NOT end the process (unlike [`stop_flag`]):
/// the run stops its scenario or step, undoes what must be undone, then exits (status 2).
/// [`restoring_signal`] says which signal started the stop. Never call [`stop_flag`] in the
/// same process: its handlers would end the process on a second Ctrl-C.
pub fn restoring_stop_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let mut caught = Vec::new();
        for sig in RESTORING_SIGNALS {
            if sig == signal_hook::consts::SIGHUP && nohup() {
                continue;
            }
            let _ = signal_hook::flag::register_usize(sig, Arc::clone(&LAST_SIGNAL), sig as usize);
            let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
            caught.push(sig);
        }
        // The first signal is kept by a thread (a handler can only overwrite, which kept the
        // last: QA saw SIGTERM then Ctrl-C reported as "interrupted by SIGINT").
        if let Ok(mut signals) = signal_hook::iterator::Signals::new(&caught) {
            std::thread::spawn(move || {
                while !signals.is_closed() {
                    let batch: Vec<i32> = signals.wait().collect();
                    let last = LAST_SIGNAL.load(Ordering::SeqCst) as i32;
                    if let Some(first) = first_of(&batch, last) {
                        let _ = FIRST_SIGNAL.compare_exchange(
                            0,
                            first as usize,
                            Ordering::SeqCst,
                            Ordering::SeqCst,
                        );
                    }
                }
            });
        }
        flag
    })
    .clone()
}

/// Which of the signals the thread found pending together came first. signal-hook hands them
/// over in no set order, so two different signals whose handlers both ran before the thread
/// woke (a loaded machine) are told apart by the handlers' `last`, the one that ran after.
/// (Two signals sent before the process ran at all are delivered by the kernel in signal
/// number order: no process can tell which was sent first.)
fn first_of(batch: &[i32], last: i32) -> Option<i32> {
    match batch {
        [] => None,
        [one] => Some(*one),
        _ => batch
            .iter()
            .copied()
            .find(|&s| s != last)
            .or(batch.first().copied()),
    }
}

/// Whether the process was started ignoring SIGHUP (`nohup`): a handler would undo that.
fn nohup() -> bool {
    disktier_cmd::signal_ignored(signal_hook::consts::SIGHUP)
}

const RESTORING_SIGNALS: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// The last signal [`restoring_stop_flag`] caught, set by the handler itself: the answer until
/// the thread has recorded [`FIRST_SIGNAL`].
static LAST_SIGNAL: std::sync::LazyLock<Arc<std::sync::atomic::AtomicUsize>> =
    std::sync::LazyLock::new(|| Arc::new(std::sync::atomic::AtomicUsize::new(0)));

/// The first signal [`restoring_stop_flag`] caught: the one that started the stop.
static FIRST_SIGNAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The name of the signal that started [`restoring_stop_flag`]'s stop, if any: the first one,
/// not a later signal sent while the run was undoing its changes.
pub fn restoring_signal() -> Option<&'static str> {
    let first = FIRST_SIGNAL.load(Ordering::SeqCst);
    let sig = if first != 0 {
        first
    } else {
        LAST_SIGNAL.load(Ordering::SeqCst)
    };
    match sig as i32 {
        0 => None,
        signal_hook::consts::SIGINT => Some("SIGINT"),
        signal_hook::consts::SIGTERM => Some("SIGTERM"),
        signal_hook::consts::SIGHUP => Some("SIGHUP"),
        signal_hook::consts::SIGQUIT => Some("SIGQUIT"),
        _ => Some("a signal"),
    }
}

/// Whether this process should draw a progress line: not `--quiet`, and both stdout and stderr
/// are terminals.
pub fn enabled(ctx: &Ctx) -> bool {
    ctx.chatty() && std::io::stderr().is_terminal() && std::io::stdout().is_terminal()
}

/// Measures `req` ([`crate::app::measure::measure_request`]) with Ctrl-C stopping it (the
/// document is then marked interrupted) and, on a terminal, a progress line that `label`
/// starts, erased afterwards.
pub fn measure(
    ctx: &Ctx,
    label: &str,
    req: crate::app::measure::Request<'_>,
) -> anyhow::Result<crate::app::measure::Measurement> {
    running(ctx, label, |stop, progress| {
        crate::app::measure::measure_request(req, stop, progress)
    })
}

/// Calls `f` with the stop flag Ctrl-C sets and, on a terminal, a progress line that `label`
/// starts; the line is erased when `f` returns.
pub fn running<T>(
    ctx: &Ctx,
    label: &str,
    f: impl FnOnce(Arc<AtomicBool>, Option<ProgressFn>) -> T,
) -> T {
    let result = f(stop_flag(), reporter(ctx, label));
    clear();
    result
}

/// The progress callback for `RunOptions.progress`, or `None` when no line should be drawn.
/// `label` starts the line (e.g. the profile name, or "etcd probe").
pub fn reporter(ctx: &Ctx, label: &str) -> Option<ProgressFn> {
    if !enabled(ctx) {
        return None;
    }
    let label = label.to_string();
    Some(Arc::new(move |p: &Progress| {
        draw(&with_stop_hint(render(&label, p), p.phase, stopping()))
    }))
}

/// After the first Ctrl-C, small-files removes the files it made (minutes for 10^7), and a
/// second one ends the process at once and leaves them: the line says so, so that the user
/// chooses. The next run in that directory names what was left.
fn with_stop_hint(mut line: String, phase: &str, stopping: bool) -> String {
    if stopping && phase == "cleanup" {
        line.push_str("  (Ctrl-C again: stop now and leave the files)");
    }
    line
}

/// The text of one progress line.
pub fn render(label: &str, p: &Progress) -> String {
    let mut s = format!("{label} {} {}", p.phase, fmt_secs(p.elapsed));
    if let Some(eta) = p.eta {
        // Elapsed is shown rounded down, so the time left is rounded up: the two add up to
        // the run's length, ramp included (QA: "ramp 0s ETA 5s" for a 1 s ramp and 5 s run).
        let up = Duration::from_secs(eta.as_secs() + u64::from(eta.subsec_nanos() > 0));
        s.push_str(&format!("  ETA {}", fmt_secs(up)));
    }
    s.push_str(&format!(
        "  {} IOPS  {:.1} MiB/s",
        group(p.iops),
        p.bw_bytes / (1u64 << 20) as f64
    ));
    if let Some(p99) = p.p99_ns {
        s.push_str(&format!("  p99 {}", disktier_units::fmt_ns(p99 as f64)));
    }
    s
}

pub fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}s", s)
    }
}

/// 12345.6 -> "12,346".
pub fn group(v: f64) -> String {
    let n = v.max(0.0).round() as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The progress line of a pass over a trace file (`simulate`, `trace stats`): "simulate 12s
/// 43 % of the trace  ETA 16s" (the share of the file read; a FIFO's bytes instead).
pub fn reading_line(label: &str, r: &crate::app::traceread::Replaying) -> String {
    let elapsed = fmt_secs(r.elapsed);
    match r.eta() {
        Some(eta) => format!(
            "{label} {elapsed}  {:.0} % of the trace  ETA {}",
            100.0 * r.read_bytes as f64 / r.total_bytes as f64,
            // Rounded up, as the engine's line does: elapsed is rounded down.
            fmt_secs(Duration::from_secs(eta.as_secs_f64().ceil() as u64))
        ),
        None => format!(
            "{label} {elapsed}  {} of the trace",
            disktier_units::Bytes(r.read_bytes)
        ),
    }
}

/// Draws `line` as the progress line (callers check [`enabled`] first).
pub fn draw(line: &str) {
    let _g = DRAW_LOCK.lock();
    let mut err = std::io::stderr().lock();
    // \r to the line start, the text, then erase whatever a longer previous line left.
    // The line names jobs and targets: their own control characters and bidi overrides are
    // shown escaped, as everywhere else on the terminal.
    let line = crate::text::printable(line, false);
    let _ = write!(err, "\r{line}\x1b[K");
    let _ = err.flush();
    DRAWN.store(true, Ordering::SeqCst);
}

/// Erases the progress line, if one is on screen. Call before printing results.
pub fn clear() {
    let _g = DRAW_LOCK.lock();
    if DRAWN.swap(false, Ordering::SeqCst) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_phase_eta_rate_and_tail() {
        let p = Progress {
            elapsed: Duration::from_secs(72),
            eta: Some(Duration::from_secs(48)),
            iops: 12_345.4,
            bw_bytes: 48.25 * (1u64 << 20) as f64,
            p99_ns: Some(1_230_000),
            phase: "run",
        };
        assert_eq!(
            render("etcd", &p),
            "etcd run 1m12s  ETA 48s  12,345 IOPS  48.2 MiB/s  p99 1.23 ms"
        );
        let p = Progress {
            eta: None,
            p99_ns: None,
            phase: "layout",
            ..p
        };
        assert_eq!(render("x", &p), "x layout 1m12s  12,345 IOPS  48.2 MiB/s");
    }

    /// QA: a 5 s run after a 1 s ramp showed "ramp 0s ETA 5s", then "run 6s ETA 0s".
    #[test]
    fn elapsed_and_eta_add_up_to_ramp_and_runtime() {
        let at = |elapsed_ms: u64, phase| Progress {
            elapsed: Duration::from_millis(elapsed_ms),
            eta: Some(Duration::from_millis(6_000 - elapsed_ms)),
            iops: 0.0,
            bw_bytes: 0.0,
            p99_ns: None,
            phase,
        };
        assert!(render("x", &at(250, "ramp")).starts_with("x ramp 0s  ETA 6s"));
        assert!(render("x", &at(3_500, "run")).starts_with("x run 3s  ETA 3s"));
        assert!(render("x", &at(6_000, "run")).starts_with("x run 6s  ETA 0s"));
    }

    #[test]
    fn of_signals_pending_together_the_first_is_the_one_not_last() {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        assert_eq!(first_of(&[], SIGINT), None);
        assert_eq!(first_of(&[SIGINT], SIGINT), Some(SIGINT));
        // Handed over in signal number order, SIGINT (2) before SIGTERM (15).
        assert_eq!(first_of(&[SIGINT, SIGTERM], SIGINT), Some(SIGTERM));
        assert_eq!(first_of(&[SIGINT, SIGTERM], SIGTERM), Some(SIGINT));
        assert_eq!(first_of(&[SIGHUP, SIGTERM], SIGTERM), Some(SIGHUP));
    }

    #[test]
    fn a_stopped_cleanup_says_what_a_second_ctrl_c_does() {
        let hint = "(Ctrl-C again: stop now and leave the files)";
        assert!(with_stop_hint("x".into(), "cleanup", true).ends_with(hint));
        assert_eq!(with_stop_hint("x".into(), "cleanup", false), "x");
        assert_eq!(with_stop_hint("x".into(), "run", true), "x");
    }

    #[test]
    fn the_reading_line_shows_the_share_read_and_the_time_left() {
        let r = crate::app::traceread::Replaying {
            elapsed: Duration::from_secs(12),
            read_bytes: 43 << 20,
            total_bytes: 100 << 20,
        };
        // 12 s for 43 %: 57 % more takes 15.9 s, rounded up.
        assert_eq!(
            reading_line("simulate", &r),
            "simulate 12s  43 % of the trace  ETA 16s"
        );
        // A FIFO: no size, so no share and no ETA.
        let fifo = crate::app::traceread::Replaying {
            total_bytes: 0,
            ..r
        };
        assert_eq!(
            reading_line("trace stats", &fifo),
            "trace stats 12s  43 MiB of the trace"
        );
    }

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group(0.0), "0");
        assert_eq!(group(999.4), "999");
        assert_eq!(group(1000.0), "1,000");
        assert_eq!(group(250_123.0), "250,123");
    }
}
