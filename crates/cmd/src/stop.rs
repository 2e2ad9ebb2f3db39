//! Stopping what runs when the user asks disktier to stop (Ctrl-C, SIGTERM, a dropped ssh
//! session's SIGHUP).
//!
//! A command with a timeout runs in a process group of its own (so a timeout kills its helpers
//! too), which also means a terminal's Ctrl-C does not reach it: left alone, `mkfs` went on
//! writing to the disk after disktier had exited (QA). A [`StoppableRunner`] watches a stop flag
//! that the caller's signal handler sets: the command running is sent SIGTERM with its group,
//! SIGKILL after [`GRACE`], and waited for before the runner returns; once stopped, no command
//! starts but the clean-ups marked [`crate::Cmd::even_when_stopped`].

use crate::{run_resolved, which, Cmd, CmdError, CommandRunner, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a stopped command has to exit after SIGTERM before its group gets SIGKILL: mkfs,
/// cp and mount die at once on SIGTERM; a tool that does not must not hold the user's Ctrl-C.
pub const GRACE: Duration = Duration::from_secs(3);

/// Runs commands for real, and stops them when `stop` is set (module doc).
#[derive(Debug, Clone)]
pub struct StoppableRunner {
    stop: Arc<AtomicBool>,
}

impl StoppableRunner {
    pub fn new(stop: Arc<AtomicBool>) -> StoppableRunner {
        StoppableRunner { stop }
    }
}

impl CommandRunner for StoppableRunner {
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        if cmd.even_when_stopped {
            return run_resolved(cmd, None);
        }
        if self.stopped() {
            return Err(CmdError::NotStarted {
                cmd: cmd.to_string(),
            });
        }
        run_resolved(cmd, Some(&self.stop))
    }

    fn has_program(&self, program: &str) -> bool {
        which(program).is_some()
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// Stops `child` (with its process group when `group`: it leads one) and reaps it: SIGTERM,
/// then SIGKILL when it is still there after [`GRACE`].
pub(crate) fn terminate(child: &mut std::process::Child, group: bool) {
    let pid = child.id() as libc::pid_t;
    let target = if group { -pid } else { pid };
    // SAFETY: kill(2) on the child we have not reaped yet (its pid cannot have been reused),
    // or on the process group it leads (process_group(0)).
    unsafe {
        libc::kill(target, libc::SIGTERM);
    }
    let start = Instant::now();
    while start.elapsed() < GRACE {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(target, libc::SIGKILL);
    }
    let _ = child.wait();
}

/// Whether `signal` is ignored in this process (SIG_IGN inherited: `nohup` ignores SIGHUP): a
/// handler installed for it would undo what the user asked for.
pub fn signal_ignored(signal: i32) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: sigaction(2) with a null new action only reads the current one into `old`,
    // which is zeroed memory of the right type.
    let r = unsafe { libc::sigaction(signal, std::ptr::null(), old.as_mut_ptr()) };
    // SAFETY: sigaction succeeded and filled it (and zeroed memory is a valid sigaction).
    r == 0 && unsafe { old.assume_init() }.sa_sigaction == libc::SIG_IGN
}
