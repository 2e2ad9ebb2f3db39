//! The user's own workload as the aggressor (`--aggressor-cmd 'tar xf /srv/update.tar'`): an OS
//! update, an unpack, a backup — whatever really runs next to etcd on their nodes.
//!
//! The command line is split once, here, with POSIX shell quoting rules into an argv, and never
//! given to a shell: `sh -c '...'` is how a user asks for one. The program is looked up in
//! `PATH` once and kept as an absolute path. The command then runs as the child of the
//! aggressor process (`__aggressor`), forked only after the parent has applied the scenario's
//! I/O class and cgroup to that process, so it inherits both (`ioprio_set(2)`: "the I/O priority
//! is inherited across fork"; `cgroup-v2.rst`: "a new process is forked into the cgroup the
//! forking process belongs to"). The aggressor process leads its own process group, so the
//! command and everything it starts can be stopped together; see [`super::process`].

use super::{AggressorSpec, Tally};
use crate::error::{InterfereError, Result};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The longest command line accepted (bytes); a real workload's line is far shorter.
pub const MAX_LINE: usize = 16 << 10;
/// The most arguments accepted.
pub const MAX_ARGS: usize = 512;
/// How long a stopped command gets between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);
/// How long the processes the command left get to die of SIGKILL and be reaped: one stuck in
/// uninterruptible sleep (a throttled fsync) dies only when that returns. With [`GRACE`] it
/// stays within the parent's wait for a stopped aggressor (`process::STOP_GRACE`, 8 s).
pub const REAP_LIMIT: Duration = Duration::from_secs(5);
/// The environment variable that names the scratch directory the command runs in.
pub const DIR_ENV: &str = "DISKTIER_AGGRESSOR_DIR";

/// A checked `--aggressor-cmd`: an absolute program path and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// What the user typed, for the report.
    pub line: String,
}

impl UserCommand {
    /// Splits `line` into an argv (quotes as in a POSIX shell, no expansion), rejects what a
    /// shell would have interpreted, and finds the program in `path` (a `PATH` value).
    pub fn parse(line: &str, path: Option<&str>) -> Result<UserCommand> {
        let bad = |why: String| InterfereError::BadCommand {
            line: line.chars().take(200).collect(),
            why,
        };
        if line.len() > MAX_LINE {
            return Err(bad(format!(
                "{} bytes is longer than the {MAX_LINE} accepted: put the work in a script and pass its path",
                line.len()
            )));
        }
        if line.contains('\0') {
            return Err(bad("contains a NUL byte".into()));
        }
        // A backslash-newline is a line continuation to sh, removed before words are split;
        // shlex made it an empty argument ("tar xf a.tar \<newline> -C /srv" gave tar "").
        let unfolded = unfold(line);
        let argv = shlex::split(&unfolded).ok_or_else(|| {
            bad("unbalanced quotes or a trailing backslash: quote it as you would in sh".into())
        })?;
        if argv.is_empty() {
            return Err(bad(
                "is empty: give a command, e.g. --aggressor-cmd 'tar xf /srv/update.tar'".into(),
            ));
        }
        if argv.len() > MAX_ARGS {
            return Err(bad(format!(
                "{} arguments, more than the {MAX_ARGS} accepted",
                argv.len()
            )));
        }
        if let Some(op) = unquoted_operator(&unfolded) {
            // QA: "echo \"$(id)\"" was refused as "'$' outside quotes", where it is inside
            // double quotes, which a shell expands it in.
            let op = match op {
                ('\n', _) => "a line break outside quotes is a shell operator".to_string(),
                ('$', true) => {
                    "\"$(\" inside double quotes is a shell's command substitution".to_string()
                }
                ('$', false) => {
                    "\"$(\" outside quotes is a shell's command substitution".to_string()
                }
                (c, _) => format!("{c:?} outside quotes is a shell operator"),
            };
            return Err(bad(format!(
                "{op}, and the command runs without a shell: pass --aggressor-cmd \"sh -c '...'\" to use one"
            )));
        }
        let program = which(&argv[0], path).ok_or_else(|| {
            bad(format!(
                "{:?} is not an executable file, nor found in PATH: give its absolute path or install it",
                argv[0]
            ))
        })?;
        Ok(UserCommand {
            program,
            args: argv[1..].to_vec(),
            line: line.to_string(),
        })
    }
}

/// `line` without its line continuations: a backslash and a newline outside single quotes, which
/// sh removes (POSIX, "Escape Character (Backslash)" and "Double-Quotes").
fn unfold(line: &str) -> String {
    let (mut single, mut double) = (false, false);
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if !single => match chars.next() {
                Some('\n') => {}
                Some(next) => {
                    out.push(c);
                    out.push(next);
                }
                None => out.push(c),
            },
            '\'' if !double => {
                single = !single;
                out.push(c);
            }
            '"' if !single => {
                double = !double;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The first shell operator character (`|`, `&`, `;`, `<`, `>`, a backquote, `$(`, a line
/// break before more words) outside quotes and not escaped: there a user expected a shell, and
/// without one it would reach the program as a literal argument. A line break ends a command in
/// sh as `;` does (QA: "tar xf a.tar" and "sync" on two lines ran `tar xf a.tar sync`); one with
/// nothing after it (a YAML block scalar's last line) ends nothing and is accepted.
fn unquoted_operator(line: &str) -> Option<(char, bool)> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '|' | '&' | ';' | '<' | '>' | '`' if !single && !double => return Some((c, false)),
            '\n' if !single && !double && chars.clone().any(|c| !c.is_ascii_whitespace()) => {
                return Some((c, false))
            }
            '$' if !single && chars.peek() == Some(&'(') => return Some((c, double)),
            _ => {}
        }
    }
    None
}

/// The absolute path of `name`: itself when it has a slash, else the first executable file of
/// that name in `path`.
fn which(name: &str, path: Option<&str>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let exec = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = std::fs::canonicalize(name).ok()?;
        return exec(&p).then_some(p);
    }
    path?
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| Path::new(d).join(name))
        .find(|p| exec(p))
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ended", rename_all = "snake_case")]
pub enum CommandExit {
    /// It exited with this code.
    Code { code: i32 },
    /// A signal ended it (SIGTERM/SIGKILL from the stop at the cap, or its own).
    Signal { signal: i32 },
}

impl CommandExit {
    pub fn of(s: ExitStatus) -> CommandExit {
        match (s.code(), s.signal()) {
            (Some(code), _) => CommandExit::Code { code },
            (None, Some(signal)) => CommandExit::Signal { signal },
            (None, None) => CommandExit::Code { code: -1 },
        }
    }

    /// The protocol word: `exit:N` or `signal:N`.
    pub fn word(self) -> String {
        match self {
            CommandExit::Code { code } => format!("exit:{code}"),
            CommandExit::Signal { signal } => format!("signal:{signal}"),
        }
    }

    pub fn from_word(w: &str) -> Option<CommandExit> {
        let (k, v) = w.split_once(':')?;
        let n: i32 = v.parse().ok()?;
        match k {
            "exit" => Some(CommandExit::Code { code: n }),
            "signal" => Some(CommandExit::Signal { signal: n }),
            _ => None,
        }
    }

    pub fn success(self) -> bool {
        self == CommandExit::Code { code: 0 }
    }
}

impl std::fmt::Display for CommandExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandExit::Code { code } => write!(f, "exit status {code}"),
            CommandExit::Signal { signal } => write!(f, "killed by signal {signal}"),
        }
    }
}

/// Runs the command in `spec.dir` until it exits or `stop` is set (then SIGTERM to its whole
/// process group, SIGKILL after [`GRACE`]). `bytes` of the tally is what the command and every
/// descendant it waited for wrote to the storage layer (`getrusage(RUSAGE_CHILDREN)`'s
/// `ru_oublock`, 512-byte units: Linux fills it from the tasks' `write_bytes` I/O accounting).
pub fn run(
    spec: &AggressorSpec,
    cmd: &UserCommand,
    stop: &AtomicBool,
    progress: &dyn Fn(Tally),
) -> Result<(Tally, CommandExit)> {
    if !crate::sys::leads_process_group() {
        return Err(InterfereError::Aggressor(
            "the aggressor process must lead its own process group to run a command (start it with process_group(0))".into(),
        ));
    }
    // Orphans of the command (a backgrounded `&` job whose shell exited) come back to us, so
    // they are reaped here and their writes counted, and none outlives the scenario unseen.
    crate::sys::become_subreaper()
        .map_err(|e| InterfereError::Aggressor(format!("prctl(PR_SET_CHILD_SUBREAPER): {e}")))?;
    let mut c = Command::new(&cmd.program);
    c.args(&cmd.args)
        .current_dir(&spec.dir)
        .env(DIR_ENV, &spec.dir)
        .stdin(Stdio::null())
        // Our stdout is the line protocol to the parent; the command's output must not reach it.
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    crate::sys::kill_with_parent_on_exec(&mut c);
    let start = Instant::now();
    let mut child = c.spawn().map_err(|e| {
        InterfereError::Aggressor(format!("cannot start {}: {e}", cmd.program.display()))
    })?;
    // Its stderr goes to ours, which the parent keeps the tail of.
    if let Some(mut err) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let _ = std::io::Write::write_all(&mut std::io::stderr(), &buf[..n]);
            }
        });
    }
    let pid = child.id() as i32;
    let mut last_tick = Instant::now();
    let mut stop_sent: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(InterfereError::Aggressor(format!("waiting for it: {e}"))),
        }
        if stop.load(Ordering::Relaxed) {
            match stop_sent {
                None => {
                    signal_group(libc::SIGTERM);
                    stop_sent = Some(Instant::now());
                }
                Some(t) if t.elapsed() >= GRACE => signal_group(libc::SIGKILL),
                Some(_) => {}
            }
        }
        if last_tick.elapsed() >= Duration::from_millis(250) {
            last_tick = Instant::now();
            progress(Tally {
                bytes: proc_write_bytes(pid).unwrap_or(0),
                seconds: start.elapsed().as_secs_f64(),
                objects: 0,
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let seconds = start.elapsed().as_secs_f64();
    // What it left running in the background is stopped too: the scenario is over. The group
    // first (what is still our child's), then every descendant, also those that left the group
    // or the session (`setsid`): as subreaper we adopted them when their parents exited.
    signal_group(libc::SIGKILL);
    // One still in uninterruptible sleep after REAP_LIMIT dies of its SIGKILL when that sleep
    // ends; the parent then kills this process's group as well.
    let _ = crate::sys::kill_descendants(REAP_LIMIT);
    let tally = Tally {
        bytes: crate::sys::children_write_bytes(),
        seconds,
        objects: 0,
    };
    Ok((tally, CommandExit::of(status)))
}

/// Signals every process of our process group but ourselves: the aggressor process leads the
/// group the command was forked into (checked in [`run`]), and `kill(-pgid)` would end it too.
fn signal_group(sig: i32) {
    crate::sys::signal_group_but_self(sig);
}

/// `write_bytes` of `/proc/<pid>/io` (the process itself, not its children).
fn proc_write_bytes(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: Option<&str> = Some("/usr/local/bin:/usr/bin:/bin");

    #[test]
    fn a_line_becomes_an_absolute_argv() {
        let c = UserCommand::parse("dd if=/dev/zero 'of=a b' bs=1M", PATH).unwrap();
        assert!(c.program.is_absolute() && c.program.ends_with("dd"));
        assert_eq!(c.args, ["if=/dev/zero", "of=a b", "bs=1M"]);
    }

    #[test]
    fn sh_c_is_one_argument() {
        let c = UserCommand::parse("sh -c 'tar xf /x.tar | cat > /dev/null'", PATH).unwrap();
        assert_eq!(c.args, ["-c", "tar xf /x.tar | cat > /dev/null"]);
    }

    #[test]
    fn shell_operators_outside_quotes_are_refused_with_the_fix() {
        for line in [
            "tar xf /x.tar | cat",
            "dd if=/dev/zero of=x && sync",
            "dd > x",
        ] {
            let e = UserCommand::parse(line, PATH).unwrap_err().to_string();
            assert!(e.contains("sh -c"), "{line}: {e}");
        }
        // Quoted or escaped, an operator is a literal argument.
        assert!(UserCommand::parse("echo '|' \"a && b\" \\;", PATH).is_ok());
        assert!(UserCommand::parse("sh -c 'sleep 1 & sleep 2'", PATH).is_ok());
        assert!(UserCommand::parse("echo \"$(date)\"", PATH).is_err());
    }

    /// QA: `sh -c "echo $(id)"` was refused as "'$' outside quotes is a shell operator", though
    /// the `$(` is inside double quotes; the message now says where it is.
    #[test]
    fn a_command_substitution_is_named_where_it_is() {
        let e = UserCommand::parse("sh -c \"echo $(id)\"", PATH)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"$(\" inside double quotes is a shell's command substitution"),
            "{e}"
        );
        assert!(!e.contains("outside quotes"), "{e}");
        assert!(e.contains("sh -c '...'"), "{e}");
        let e = UserCommand::parse("echo $(id)", PATH)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"$(\" outside quotes"), "{e}");
        let e = UserCommand::parse("echo a | cat", PATH)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'|' outside quotes is a shell operator"), "{e}");
    }

    /// QA: a line break between two commands was split as a space, so "tar xf a.tar", "sync" on
    /// two lines ran `tar xf a.tar sync` (sync an archive member); sh runs them one after the
    /// other.
    #[test]
    fn a_line_break_between_commands_is_refused_as_sh_would_split_there() {
        let e = UserCommand::parse("tar xf /x.tar\nsync", PATH)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a line break outside quotes"), "{e}");
        assert!(e.contains("sh -c"), "{e}");
        // Quoted, escaped (a continuation line) or trailing, it ends no command.
        let c = UserCommand::parse("sh -c 'tar xf /x.tar\nsync'", PATH).unwrap();
        assert_eq!(c.args, ["-c", "tar xf /x.tar\nsync"]);
        let c = UserCommand::parse("dd if=/dev/zero \\\n of=x", PATH).unwrap();
        assert_eq!(c.args, ["if=/dev/zero", "of=x"]);
        // A continuation joins as in sh: no empty argument where it was, nothing split
        // inside a word; in single quotes it is literal.
        let c = UserCommand::parse("echo a\\\nb \"c\\\nd\" 'e\\\nf'", PATH).unwrap();
        assert_eq!(c.args, ["ab", "cd", "e\\\nf"]);
        let c = UserCommand::parse("dd if=/dev/zero of=x\n\n", PATH).unwrap();
        assert_eq!(c.args, ["if=/dev/zero", "of=x"]);
    }

    #[test]
    fn bad_lines_are_refused() {
        for line in [
            "",
            "   ",
            "echo 'open",
            "no-such-program-disktier x",
            "echo a\0b",
        ] {
            assert!(UserCommand::parse(line, PATH).is_err(), "{line:?}");
        }
        let long = "x ".repeat(MAX_LINE);
        assert!(UserCommand::parse(&long, PATH).is_err());
        // A directory is not a program.
        assert!(UserCommand::parse("/usr", PATH).is_err());
        // No PATH: only a path with a slash works.
        assert!(UserCommand::parse("dd", None).is_err());
    }

    #[test]
    fn exit_words_round_trip() {
        for e in [
            CommandExit::Code { code: 0 },
            CommandExit::Code { code: 3 },
            CommandExit::Signal { signal: 15 },
        ] {
            assert_eq!(CommandExit::from_word(&e.word()), Some(e));
        }
        assert_eq!(CommandExit::from_word("exit:x"), None);
    }
}
