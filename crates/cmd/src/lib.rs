//! The one way disktier runs external tools (mkfs, mount, mdadm, blkid, fio, ...).
//!
//! Everything that runs a program goes through a [`CommandRunner`]: the [`RealRunner`] runs it and
//! keeps stdout and stderr for the error message; the [`RecordingRunner`] records each command and
//! answers from a script, so code for what cannot run here (md RAID, bcache, lvmcache, SELinux) is
//! tested against golden files of the commands it would run.
//!
//! Two rules hold for every command the real runner starts (SECURITY.md, "External commands"):
//! - **Found in a fixed, trusted list of directories, once.** A program named without a `/` is
//!   looked up in [`TRUSTED_DIRS`] (`/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`),
//!   never in the caller's `PATH`, which a user or a compromised environment controls; the
//!   absolute path found is cached for the life of the process. A program named with a `/`
//!   must be absolute.
//! - **Bounded in time.** Each command has a timeout: the one set on the [`Cmd`], else the
//!   program's default from [`default_timeout`] (none for fio, whose runner bounds it by the
//!   job). A command with a timeout runs in its own process group; when the time is up the
//!   whole group is killed (SIGKILL) and the error says which command, after how long, and
//!   what it had printed.
//!
//! A [`StoppableRunner`] adds a stop flag (set by a signal handler, `setup`'s): the command
//! running when it is set is stopped with its process group and waited for, and no other
//! starts, except the clean-up commands marked [`Cmd::even_when_stopped`] (stop.rs).
//!
//! What a command leaves running below it is found and ended with [`proctree`]: the processes
//! below one, read from `/proc`, each signalled through a pidfd once it is checked to be the
//! process the scan saw, never a stranger that got its pid.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub mod proctree;
mod stop;
pub use stop::{signal_ignored, StoppableRunner};

/// One command line, program first. Arguments are kept as strings: every tool we run takes
/// UTF-8 paths and options.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
    /// Bytes fed to the program's standard input, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// How long it may run; `None`: the program's [`default_timeout`].
    #[serde(skip)]
    pub timeout: Option<Duration>,
    /// A clean-up after a stop: a [`StoppableRunner`] runs it even once stopped, to its end.
    #[serde(skip)]
    pub even_when_stopped: bool,
}

impl Cmd {
    pub fn new(program: impl Into<String>) -> Self {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            stdin: None,
            timeout: None,
            even_when_stopped: false,
        }
    }
    /// Marks a clean-up that must run even after a stop ([`StoppableRunner`]): undoing what a
    /// stopped command left half done.
    pub fn even_when_stopped(mut self) -> Self {
        self.even_when_stopped = true;
        self
    }
    /// Sets how long the command may run before its process group is killed.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }
    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }
    pub fn args<I, S>(mut self, it: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(it.into_iter().map(Into::into));
        self
    }
    pub fn stdin(mut self, s: impl Into<String>) -> Self {
        self.stdin = Some(s.into());
        self
    }
}

impl fmt::Display for Cmd {
    /// Shell-quoted, so `--dry-run` output can be pasted into a shell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", shell_quote(&self.program))?;
        for a in &self.args {
            write!(f, " {}", shell_quote(a))?;
        }
        Ok(())
    }
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What a finished command left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn success(&self) -> bool {
        self.status == 0
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    #[error("{program} was not found: install it (Debian package: {package})")]
    NotFound { program: String, package: String },
    #[error("could not start `{cmd}`")]
    Spawn {
        cmd: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{program} must be an absolute path or a bare program name (found in {}), not {program:?}", TRUSTED_DIRS.join(":"))]
    NotAbsolute { program: String },
    #[error("`{cmd}` did not finish within {}s and was killed (with its process group){}", .after.as_secs_f64(), fmt_streams(.stdout, .stderr))]
    Timeout {
        cmd: String,
        after: Duration,
        stdout: String,
        stderr: String,
    },
    #[error("`{cmd}` failed with exit status {status}{}", fmt_streams(.stdout, .stderr))]
    Failed {
        cmd: String,
        status: i32,
        stdout: String,
        stderr: String,
    },
    /// A signal asked to stop while the command ran: it was stopped with its process group
    /// (SIGTERM, then SIGKILL after a grace) and waited for.
    #[error("`{cmd}` was stopped by a signal before it finished (its process group was killed and waited for)")]
    Stopped { cmd: String },
    /// A signal asked to stop before the command started: it did not run.
    #[error("`{cmd}` did not run: a signal asked to stop")]
    NotStarted { cmd: String },
}

impl CmdError {
    /// Whether a stop (a signal) is why the command did not finish or did not run.
    pub fn is_stop(&self) -> bool {
        matches!(self, CmdError::Stopped { .. } | CmdError::NotStarted { .. })
    }
}

fn fmt_streams(stdout: &str, stderr: &str) -> String {
    let mut s = String::new();
    if !stderr.trim().is_empty() {
        s.push_str(&format!(
            "\n  stderr: {}",
            stderr.trim().replace('\n', "\n          ")
        ));
    }
    if !stdout.trim().is_empty() {
        s.push_str(&format!(
            "\n  stdout: {}",
            stdout.trim().replace('\n', "\n          ")
        ));
    }
    s
}

/// Runs external commands. Implementations must be usable from several threads.
pub trait CommandRunner: Send + Sync {
    /// Runs the command and returns its output whatever its exit status.
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError>;

    /// Runs the command and fails, keeping its streams, when it exits non-zero.
    fn run(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        let out = self.output(cmd)?;
        if out.success() {
            Ok(out)
        } else {
            Err(CmdError::Failed {
                cmd: cmd.to_string(),
                status: out.status,
                stdout: out.stdout,
                stderr: out.stderr,
            })
        }
    }

    /// Whether the program can be found (on PATH or as an absolute path).
    fn has_program(&self, program: &str) -> bool;

    /// Whether a stop was asked for (a signal, [`StoppableRunner`]): a caller that runs steps
    /// stops before the next one.
    fn stopped(&self) -> bool {
        false
    }
}

/// Where programs are looked up, in order: the system's own directories, never the caller's
/// `PATH`. disktier runs as root; a `PATH` holding a user-writable directory would let whoever
/// writes there choose what `mkfs` means.
pub const TRUSTED_DIRS: [&str; 6] = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// The absolute path of a program: a bare name is looked up in [`TRUSTED_DIRS`] (once per
/// process; the answer is cached), an absolute path is taken as it is when executable, and a
/// relative path with a `/` is never resolved.
pub fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return (p.is_absolute() && is_executable(&p)).then_some(p);
    }
    if program.is_empty() || program == "." || program == ".." {
        return None;
    }
    static CACHE: OnceLock<Mutex<HashMap<String, Option<PathBuf>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(program) {
        return hit.clone();
    }
    let found = TRUSTED_DIRS
        .iter()
        .map(|d| Path::new(d).join(program))
        .find(|p| is_executable(p));
    // A miss is not cached: a package installed during the run (scripts/test.sh) is found.
    if found.is_some() {
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(program.to_string(), found.clone());
    }
    found
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// How long a program may run when its [`Cmd`] sets no timeout. Probes answer in seconds;
/// making a filesystem or an array on a large disk takes minutes (mkfs.xfs -K and mke2fs
/// skip the discard, which is what takes longest); copying a directory onto the new
/// filesystem is bounded by its size. `None`: no default (the caller bounds it, as the fio
/// runner does with the job's runtime).
pub fn default_timeout(program: &str) -> Option<Duration> {
    let name = program.rsplit('/').next().unwrap_or(program);
    let secs = match name {
        "blkid" | "findmnt" | "lsblk" | "wipefs" | "losetup" | "systemd-escape"
        | "systemd-analyze" | "mkdir" | "chown" | "chmod" | "modprobe" => 60,
        // `udevadm settle` waits up to 120 s by default (udevadm(8)).
        "udevadm" => 180,
        "systemctl" | "mount" | "umount" | "restorecon" | "mv" | "rm" => 600,
        "mdadm" => 600,
        n if n.starts_with("mkfs") || n.starts_with("mke2fs") => 1800,
        "make-bcache" | "pvcreate" | "vgcreate" | "lvcreate" | "lvconvert" => 1800,
        "cp" => 6 * 3600,
        _ => return None,
    };
    Some(Duration::from_secs(secs))
}

/// The Debian package that ships a program, for "install it" messages.
pub fn package_for(program: &str) -> &'static str {
    match program.rsplit('/').next().unwrap_or(program) {
        "mkfs.xfs" | "xfs_admin" | "xfs_info" | "xfs_growfs" => "xfsprogs",
        "mkfs.ext4" | "tune2fs" | "e2label" => "e2fsprogs",
        "mdadm" => "mdadm",
        "fio" => "fio",
        "etcd" => "etcd-server",
        "make-bcache" | "bcache-super-show" => "bcache-tools",
        "lvconvert" | "lvcreate" | "pvcreate" | "vgcreate" => "lvm2",
        "restorecon" => "policycoreutils",
        "chromium" => "chromium",
        "blkid" | "wipefs" | "findmnt" | "lsblk" | "mount" | "umount" | "losetup" => {
            "util-linux (mount for mount/umount/losetup)"
        }
        _ => "see your distribution",
    }
}

/// Runs commands for real.
#[derive(Debug, Default, Clone)]
pub struct RealRunner;

impl CommandRunner for RealRunner {
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        run_resolved(cmd, None)
    }

    fn has_program(&self, program: &str) -> bool {
        which(program).is_some()
    }
}

/// Resolves the program and runs the command ([`run_bounded`]).
fn run_resolved(cmd: &Cmd, stop: Option<&AtomicBool>) -> Result<Output, CmdError> {
    if cmd.program.contains('/') && !cmd.program.starts_with('/') {
        return Err(CmdError::NotAbsolute {
            program: cmd.program.clone(),
        });
    }
    let path = which(&cmd.program).ok_or_else(|| CmdError::NotFound {
        program: cmd.program.clone(),
        package: package_for(&cmd.program).to_string(),
    })?;
    run_bounded(
        &path,
        cmd,
        cmd.timeout.or_else(|| default_timeout(&cmd.program)),
        stop,
    )
}

/// Reads a pipe to its end on a thread; the result arrives on the channel.
fn drain<R: Read + Send + 'static>(mut r: R) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// Runs `path` with `cmd`'s arguments; with a `timeout`, in a process group of its own that is
/// killed when the time is up. When `stop` is set while it runs, the command (its group, if it
/// has one) is stopped and waited for ([`stop::terminate`]).
fn run_bounded(
    path: &Path,
    cmd: &Cmd,
    timeout: Option<Duration>,
    stop: Option<&AtomicBool>,
) -> Result<Output, CmdError> {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(path);
    c.args(cmd.args.iter().map(OsString::from))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    if timeout.is_some() {
        // A group of its own, so a timeout kills its helpers too. A command without a
        // timeout (fio) stays in ours, so a Ctrl-C on the terminal reaches it as before.
        c.process_group(0);
    }
    let mut child = c.spawn().map_err(|e| CmdError::Spawn {
        cmd: cmd.to_string(),
        source: e,
    })?;
    if let (Some(input), Some(mut si)) = (cmd.stdin.clone(), child.stdin.take()) {
        // On a thread: a program that does not read its input must not block us.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = si.write_all(input.as_bytes());
        });
    }
    let out_rx = child.stdout.take().map(drain);
    let err_rx = child.stderr.take().map(drain);
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(e) => {
                return Err(CmdError::Spawn {
                    cmd: cmd.to_string(),
                    source: e,
                })
            }
        }
        if stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
            stop::terminate(&mut child, timeout.is_some());
            return Err(CmdError::Stopped {
                cmd: cmd.to_string(),
            });
        }
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            // The whole group: a shell's children and a tool's helpers go too. The group id
            // is the child's pid (process_group(0)), which we have not yet reaped.
            stop::signal_child(&child, true, rustix::process::Signal::KILL);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    };
    // What it printed; a grandchild that escaped the group and keeps a pipe open does not
    // hold us beyond a short grace.
    let collect = |rx: Option<std::sync::mpsc::Receiver<Vec<u8>>>| {
        rx.and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let stdout = collect(out_rx);
    let stderr = collect(err_rx);
    match status {
        Some(st) => {
            use std::os::unix::process::ExitStatusExt;
            Ok(Output {
                // Killed by a signal: -SIGNAL, never 0.
                status: st.code().unwrap_or_else(|| -st.signal().unwrap_or(1)),
                stdout,
                stderr,
            })
        }
        None => Err(CmdError::Timeout {
            cmd: cmd.to_string(),
            after: timeout.unwrap_or_default(),
            stdout,
            stderr,
        }),
    }
}

/// A scripted answer for the recording runner: the first rule whose program and argument prefix
/// match a command answers it.
#[derive(Debug, Clone)]
pub struct Rule {
    pub program: String,
    pub args_prefix: Vec<String>,
    pub output: Output,
    /// Answer only this many times (None: always).
    pub times: Option<usize>,
}

/// The output of a command that printed `stdout` and exited with `status`.
fn canned(status: i32, stdout: &str) -> Output {
    Output {
        status,
        stdout: stdout.to_string(),
        stderr: String::new(),
    }
}

/// Records every command and answers from rules; unknown commands succeed with empty output.
/// Tests compare [`RecordingRunner::transcript`] with a golden file.
#[derive(Debug, Default)]
pub struct RecordingRunner {
    rules: Mutex<VecDeque<Rule>>,
    log: Mutex<Vec<Cmd>>,
    programs: Mutex<Option<Vec<String>>>,
}

impl RecordingRunner {
    /// Adds a rule; `times`: how often it answers before later rules apply (None: always).
    fn rule(
        &self,
        program: &str,
        args_prefix: &[&str],
        output: Output,
        times: Option<usize>,
    ) -> &Self {
        self.rules.lock().unwrap().push_back(Rule {
            program: program.to_string(),
            args_prefix: args_prefix.iter().map(|s| s.to_string()).collect(),
            output,
            times,
        });
        self
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// Answers commands of `program` whose arguments start with `args_prefix`.
    pub fn on(&self, program: &str, args_prefix: &[&str], status: i32, stdout: &str) -> &Self {
        self.rule(program, args_prefix, canned(status, stdout), None)
    }

    /// Answers commands of `program` whose arguments start with `args_prefix` with `output`
    /// (stderr included).
    pub fn answer(&self, program: &str, args_prefix: &[&str], output: Output) -> &Self {
        self.rule(program, args_prefix, output, None)
    }

    /// Like [`on`](Self::on) but answers only once, then falls through to later rules.
    pub fn once(&self, program: &str, args_prefix: &[&str], status: i32, stdout: &str) -> &Self {
        self.rule(program, args_prefix, canned(status, stdout), Some(1))
    }

    /// Limits which programs count as installed (default: all).
    pub fn with_programs(self, programs: &[&str]) -> Self {
        *self.programs.lock().unwrap() = Some(programs.iter().map(|s| s.to_string()).collect());
        self
    }

    pub fn commands(&self) -> Vec<Cmd> {
        self.log.lock().unwrap().clone()
    }

    /// One shell-quoted command a line: the form golden files hold.
    pub fn transcript(&self) -> String {
        self.commands().iter().map(|c| format!("{c}\n")).collect()
    }
}

impl CommandRunner for RecordingRunner {
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        self.log.lock().unwrap().push(cmd.clone());
        let mut rules = self.rules.lock().unwrap();
        let pos = rules.iter().position(|r| {
            r.program == cmd.program
                && r.args_prefix.len() <= cmd.args.len()
                && r.args_prefix.iter().zip(&cmd.args).all(|(a, b)| a == b)
        });
        match pos {
            Some(i) => {
                let out = rules[i].output.clone();
                if let Some(t) = rules[i].times.as_mut() {
                    *t -= 1;
                    if *t == 0 {
                        rules.remove(i);
                    }
                }
                Ok(out)
            }
            None => Ok(Output::default()),
        }
    }

    fn has_program(&self, program: &str) -> bool {
        match &*self.programs.lock().unwrap() {
            Some(list) => list.iter().any(|p| p == program),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests;
