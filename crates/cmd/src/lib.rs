//! The one way disktier runs external tools (mkfs, mount, mdadm, blkid, fio, ...).
//!
//! Everything that runs a program goes through a [`CommandRunner`]: the [`RealRunner`] runs it and
//! keeps stdout and stderr for the error message; the [`RecordingRunner`] records each command and
//! answers from a script, so code for what cannot run here (md RAID, bcache, lvmcache, SELinux) is
//! tested against golden files of the commands it would run.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One command line, program first. Arguments are kept as strings: every tool we run takes
/// UTF-8 paths and options.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
    /// Bytes fed to the program's standard input, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
}

impl Cmd {
    pub fn new(program: impl Into<String>) -> Self {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            stdin: None,
        }
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
    #[error("`{cmd}` failed with exit status {status}{}", fmt_streams(.stdout, .stderr))]
    Failed {
        cmd: String,
        status: i32,
        stdout: String,
        stderr: String,
    },
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
}

/// Finds a program on PATH (plus the sbin directories, which root's tools live in but a user's
/// PATH may lack).
pub fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for extra in ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        let extra = PathBuf::from(extra);
        if !dirs.contains(&extra) {
            dirs.push(extra);
        }
    }
    dirs.into_iter()
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
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
        let path = which(&cmd.program).ok_or_else(|| CmdError::NotFound {
            program: cmd.program.clone(),
            package: package_for(&cmd.program).to_string(),
        })?;
        let mut c = Command::new(path);
        c.args(cmd.args.iter().map(OsString::from))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(if cmd.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        let mut child = c.spawn().map_err(|e| CmdError::Spawn {
            cmd: cmd.to_string(),
            source: e,
        })?;
        if let Some(input) = &cmd.stdin {
            use std::io::Write;
            if let Some(mut si) = child.stdin.take() {
                let _ = si.write_all(input.as_bytes());
            }
        }
        let out = child.wait_with_output().map_err(|e| CmdError::Spawn {
            cmd: cmd.to_string(),
            source: e,
        })?;
        Ok(Output {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    fn has_program(&self, program: &str) -> bool {
        which(program).is_some()
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

/// Records every command and answers from rules; unknown commands succeed with empty output.
/// Tests compare [`RecordingRunner::transcript`] with a golden file.
#[derive(Debug, Default)]
pub struct RecordingRunner {
    rules: Mutex<VecDeque<Rule>>,
    log: Mutex<Vec<Cmd>>,
    programs: Mutex<Option<Vec<String>>>,
}

impl RecordingRunner {
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers commands of `program` whose arguments start with `args_prefix`.
    pub fn on(&self, program: &str, args_prefix: &[&str], status: i32, stdout: &str) -> &Self {
        self.rules.lock().unwrap().push_back(Rule {
            program: program.to_string(),
            args_prefix: args_prefix.iter().map(|s| s.to_string()).collect(),
            output: Output {
                status,
                stdout: stdout.to_string(),
                stderr: String::new(),
            },
            times: None,
        });
        self
    }

    /// Like [`on`](Self::on) but answers only once, then falls through to later rules.
    pub fn once(&self, program: &str, args_prefix: &[&str], status: i32, stdout: &str) -> &Self {
        self.rules.lock().unwrap().push_back(Rule {
            program: program.to_string(),
            args_prefix: args_prefix.iter().map(|s| s.to_string()).collect(),
            output: Output {
                status,
                stdout: stdout.to_string(),
                stderr: String::new(),
            },
            times: Some(1),
        });
        self
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
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/dev/loop0"), "/dev/loop0");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn real_runner_keeps_streams_on_failure() {
        let r = RealRunner;
        let err = r
            .run(&Cmd::new("sh").args(["-c", "echo out; echo bad >&2; exit 3"]))
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("exit status 3"), "{msg}");
        assert!(msg.contains("stderr: bad"), "{msg}");
        assert!(msg.contains("stdout: out"), "{msg}");
    }

    #[test]
    fn missing_program_names_the_package() {
        let err = RealRunner.run(&Cmd::new("mkfs.doesnotexist")).unwrap_err();
        assert!(matches!(err, CmdError::NotFound { .. }));
    }

    #[test]
    fn recording_runner_answers_and_records() {
        let r = RecordingRunner::new();
        r.once("blkid", &["-p"], 2, "");
        r.on("blkid", &[], 0, "TYPE=xfs");
        assert_eq!(r.output(&Cmd::new("blkid").arg("-p")).unwrap().status, 2);
        assert_eq!(
            r.output(&Cmd::new("blkid").arg("-p")).unwrap().stdout,
            "TYPE=xfs"
        );
        assert_eq!(r.transcript(), "blkid -p\nblkid -p\n");
    }
}
