//! Running an aggressor as its own process, and the small line protocol between the two sides.
//!
//! The parent starts the child (the disktier binary re-executed as `__aggressor ...`), which
//! prints `ready <pid>` and waits. While it waits the parent applies the I/O class or cgroup to
//! the whole process and reads it back; then it writes `go`. The child prints
//! `progress <bytes> <seconds> <objects>` about four times a second and `done ...` at the end.
//! A `stop` line or the end of stdin stops it early. The child asks the kernel to SIGKILL it
//! when the parent dies, so a killed run never leaves an aggressor writing.

use super::command::CommandExit;
use super::{AggressorSpec, Tally};
use crate::error::{InterfereError, Result};
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The child's side: what `disktier __aggressor` runs.
pub fn child_main(spec: &AggressorSpec) -> Result<()> {
    let parent = crate::sys::parent_pid();
    crate::sys::die_with_parent().map_err(|e| InterfereError::Aggressor(format!("prctl: {e}")))?;
    crate::sys::ignore_terminal_signals();
    if crate::sys::parent_pid() != parent {
        return Ok(()); // the parent died before the death signal was armed
    }
    let out = std::io::stdout();
    let say = |line: String| {
        let mut o = out.lock();
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    };
    say(format!("ready {}", std::process::id()));
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    if stdin.read_line(&mut line).unwrap_or(0) == 0 || line.trim() != "go" {
        return Ok(());
    }
    drop(stdin);
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = stop.clone();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut line = String::new();
        loop {
            line.clear();
            match stdin.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) if line.trim() == "stop" => break,
                Ok(_) => {}
            }
        }
        watcher.store(true, Ordering::Relaxed);
    });
    let report = |t: Tally| {
        say(format!(
            "progress {} {:.3} {}",
            t.bytes, t.seconds, t.objects
        ))
    };
    let tally = match (&spec.command, spec.kind) {
        (Some(c), super::AggressorKind::Command) => {
            if !spec.dir.is_dir() {
                return Err(InterfereError::NotADirectory(spec.dir.clone()));
            }
            let (tally, exit) = super::command::run(spec, c, &stop, &report)?;
            say(format!("status {}", exit.word()));
            tally
        }
        _ => super::run(spec, &stop, &report)?,
    };
    say(format!(
        "done {} {:.3} {}",
        tally.bytes, tally.seconds, tally.objects
    ));
    Ok(())
}

enum Msg {
    Ready(i32),
    Progress(Tally),
    Done(Tally),
    Status(CommandExit),
}

fn parse_tally(rest: &[&str]) -> Option<Tally> {
    Some(Tally {
        bytes: rest.first()?.parse().ok()?,
        seconds: rest.get(1)?.parse().ok()?,
        objects: rest.get(2)?.parse().ok()?,
    })
}

/// How an aggressor ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    pub tally: Tally,
    /// True when it was stopped at the cap before writing everything.
    pub capped: bool,
    /// True when the run's stop (Ctrl-C, a signal) ended it before it finished or reached the
    /// cap (then `capped` is false).
    pub interrupted: bool,
    /// How the user's command ended (`--aggressor-cmd` only).
    pub exit: Option<CommandExit>,
    /// The end of what the aggressor wrote to stderr (at most [`STDERR_TAIL`] bytes).
    pub stderr_tail: String,
}

/// How much of the aggressor's stderr is kept: the end, where a failing command says why.
pub const STDERR_TAIL: usize = 4096;
/// How long a stopped aggressor gets to stop its writers and report before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(8);

/// The parent's handle on a running aggressor. Dropping it kills the child.
pub struct Aggressor {
    child: Child,
    stdin: Option<ChildStdin>,
    pub pid: i32,
    rx: Receiver<Msg>,
    stderr: Arc<std::sync::Mutex<String>>,
    last: Tally,
    done: Option<Tally>,
    exit: Option<CommandExit>,
    started: Option<Instant>,
    /// Whether the child leads its own process group (then the whole group is killed).
    group: bool,
}

impl Aggressor {
    /// Starts `cmd` (which must run [`child_main`]) and waits until it is ready.
    pub fn spawn(mut cmd: Command) -> Result<Aggressor> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| InterfereError::Aggressor(format!("cannot start {cmd:?}: {e}")))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Find the keyword anywhere on the line: a test harness re-executing itself
                // as the child may print its own words before ours on the same line.
                let all: Vec<&str> = line.split_whitespace().collect();
                let at = all
                    .iter()
                    .rposition(|t| matches!(*t, "ready" | "progress" | "done" | "status"))
                    .unwrap_or(all.len());
                let w = &all[at..];
                let msg = match w.first().copied() {
                    Some("ready") => w.get(1).and_then(|p| p.parse().ok()).map(Msg::Ready),
                    Some("progress") => parse_tally(&w[1..]).map(Msg::Progress),
                    Some("done") => parse_tally(&w[1..]).map(Msg::Done),
                    Some("status") => w
                        .get(1)
                        .and_then(|s| CommandExit::from_word(s))
                        .map(Msg::Status),
                    _ => None,
                };
                if let Some(m) = msg {
                    if tx.send(m).is_err() {
                        break;
                    }
                }
            }
        });
        let stderr = Arc::new(std::sync::Mutex::new(String::new()));
        if let Some(mut e) = child.stderr.take() {
            let sink = stderr.clone();
            // Only the tail is kept: a chatty command must not grow our memory.
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut tail: Vec<u8> = Vec::new();
                while let Ok(n) = std::io::Read::read(&mut e, &mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > STDERR_TAIL {
                        tail.drain(..tail.len() - STDERR_TAIL);
                    }
                    *sink.lock().unwrap_or_else(|e| e.into_inner()) =
                        String::from_utf8_lossy(&tail).into_owned();
                }
            });
        }
        let stdin = child.stdin.take();
        let mut a = Aggressor {
            pid: child.id() as i32,
            child,
            stdin,
            rx,
            stderr,
            last: Tally::default(),
            done: None,
            exit: None,
            started: None,
            group: false,
        };
        a.group = crate::sys::process_group_of(a.pid) == Some(a.pid);
        match a.rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Msg::Ready(pid)) if pid == a.pid => Ok(a),
            _ => {
                a.kill();
                let _ = a.child.wait();
                std::thread::sleep(Duration::from_millis(50));
                Err(InterfereError::Aggressor(format!(
                    "the aggressor process did not start: {}",
                    a.stderr_text()
                )))
            }
        }
    }

    fn stderr_text(&self) -> String {
        self.stderr
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    /// Lets it write.
    pub fn go(&mut self) -> Result<()> {
        self.started = Some(Instant::now());
        let w = self.stdin.as_mut().expect("stdin kept until the end");
        writeln!(w, "go")
            .and_then(|_| w.flush())
            .map_err(|e| InterfereError::Aggressor(format!("cannot start the writer: {e}")))
    }

    /// Whether it has reported `done`.
    pub fn poll(&mut self) -> bool {
        while let Ok(m) = self.rx.try_recv() {
            self.take(m);
        }
        self.done.is_some()
    }

    fn take(&mut self, m: Msg) {
        match m {
            Msg::Ready(_) => {}
            Msg::Progress(t) => self.last = t,
            Msg::Done(t) => self.done = Some(t),
            Msg::Status(e) => self.exit = Some(e),
        }
    }

    /// SIGKILL to the child, and to its whole process group when it leads one (the user's
    /// command and whatever that started).
    fn kill(&mut self) {
        if self.group && self.child.try_wait().ok().flatten().is_none() {
            let _ = crate::sys::kill(-self.pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
    }

    /// Waits until it is done, `cap` has passed since [`Aggressor::go`] or `stop` is set (the
    /// run was interrupted); then it is killed and the last progress report counts, marked
    /// `capped` or `interrupted`.
    pub fn finish(&mut self, cap: Duration, stop: &AtomicBool) -> Result<Finish> {
        let start = self.started.unwrap_or_else(Instant::now);
        while self.done.is_none() {
            let left = cap.saturating_sub(start.elapsed());
            if left.is_zero() || stop.load(Ordering::Relaxed) {
                break;
            }
            match self.rx.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok(m) => self.take(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let unfinished = self.done.is_none();
        let interrupted = unfinished && stop.load(Ordering::Relaxed);
        let capped = unfinished && !interrupted;
        let at_cap = start.elapsed();
        if unfinished && self.group {
            // A user's command is asked to stop (SIGTERM, then SIGKILL to its group) so that
            // its exit status, time and written bytes are reported, within a grace period.
            if let Some(w) = self.stdin.as_mut() {
                let _ = writeln!(w, "stop").and_then(|_| w.flush());
            }
            let t0 = Instant::now();
            while self.done.is_none() && t0.elapsed() < STOP_GRACE {
                match self.rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(m) => self.take(m),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        }
        self.kill();
        let status = self.child.wait().ok();
        std::thread::sleep(Duration::from_millis(20));
        let stderr_tail = self.stderr_text();
        // The tally it reported at its end or, when the cap or a stop cut it short, the last
        // one it reported: its time is the time to the cap (or the stop), as for the built-in
        // writers.
        let tally = match self.done {
            Some(mut t) => {
                if unfinished {
                    t.seconds = t.seconds.min(at_cap.as_secs_f64());
                }
                Some(t)
            }
            None if unfinished && (at_cap >= cap || interrupted) => {
                let mut t = self.last;
                t.seconds = at_cap.as_secs_f64();
                Some(t)
            }
            None => None,
        };
        if let Some(tally) = tally {
            return Ok(Finish {
                tally,
                capped,
                interrupted,
                exit: self.exit,
                stderr_tail,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
        Err(InterfereError::Aggressor(format!(
            "it exited ({}) before finishing: {}",
            status.map(|s| s.to_string()).unwrap_or_default(),
            self.stderr_text()
        )))
    }
}

impl Drop for Aggressor {
    fn drop(&mut self) {
        self.kill();
        let _ = self.child.wait();
    }
}
