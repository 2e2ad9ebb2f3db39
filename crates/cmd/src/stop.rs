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
use rustix::process::{Pid, Signal};
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
    // The child is not reaped yet, so its pid (and the group it leads: process_group(0)) cannot
    // have been reused.
    signal_child(child, group, Signal::TERM);
    let start = Instant::now();
    while start.elapsed() < GRACE {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_child(child, group, Signal::KILL);
    let _ = child.wait();
}

/// kill(2) to `child`, or to the process group it leads when `group`; a child already gone is
/// not an error (nothing to stop).
pub(crate) fn signal_child(child: &std::process::Child, group: bool, sig: Signal) {
    let Some(pid) = Pid::from_raw(child.id() as i32) else {
        return;
    };
    let _ = if group {
        rustix::process::kill_process_group(pid, sig)
    } else {
        rustix::process::kill_process(pid, sig)
    };
}

/// Whether `signal` is ignored in this process (SIG_IGN inherited: `nohup` ignores SIGHUP): a
/// handler installed for it would undo what the user asked for. Read from the kernel's own
/// account, the `SigIgn:` mask of `/proc/self/status` (proc(5)); the dispositions are the
/// process's, shared by its threads. Without /proc: not ignored.
pub fn signal_ignored(signal: i32) -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| ignored_mask(&s))
        .is_some_and(|mask| mask_has(mask, signal))
}

/// The `SigIgn:` line of a `/proc/<pid>/status` text: 16 hex digits, bit N-1 set when signal N
/// is ignored.
fn ignored_mask(status: &str) -> Option<u64> {
    let hex = status.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

/// Whether `mask` (bit N-1 for signal N) holds `signal`; signals outside 1..=64 never.
fn mask_has(mask: u64, signal: i32) -> bool {
    (1..=64).contains(&signal) && mask & (1u64 << (signal - 1)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sigign_mask_is_read_bit_n_minus_1_for_signal_n() {
        // As Linux prints it for a shell under `nohup` with SIGINT and SIGQUIT ignored too
        // (SIGHUP 1, SIGINT 2, SIGQUIT 3: 0b111), and SIGRTMAX (64) for the top bit.
        let status = "Name:\tsh\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n\
                      SigBlk:\t0000000000010000\nSigIgn:\t8000000000000007\n\
                      SigCgt:\t0000000000010002\n";
        let mask = ignored_mask(status).unwrap();
        assert_eq!(mask, 0x8000_0000_0000_0007);
        for sig in [1, 2, 3, 64] {
            assert!(mask_has(mask, sig), "{sig}");
        }
        // SigBlk's and SigCgt's bits are not SigIgn's.
        for sig in [0, 4, 15, 17, 63, 65, -1] {
            assert!(!mask_has(mask, sig), "{sig}");
        }
        assert_eq!(ignored_mask("Name:\tsh\n"), None);
        assert_eq!(ignored_mask("SigIgn:\tzz\n"), None);
    }
}
