//! The processes below one process (its children, theirs, and so on), read from
//! `/proc/*/stat`, and signalling them without hitting a stranger.
//!
//! A scan of `/proc` is a picture of a moment: a process it saw may exit before it is signalled,
//! and its pid may go to an unrelated process, which `kill(pid)` would then hit. So a process is
//! signalled through a pidfd ([`signal_checked`]): the pidfd is opened first, which pins the
//! process holding the pid at that moment; then its `/proc/<pid>/stat` is read again and must
//! show the start time the scan saw (a pid and a start time name one process) and a parent that
//! is still the root or one of the scanned processes below it; only then does
//! `pidfd_send_signal` go to the pidfd, which reaches that process or, if it exited since,
//! nobody (ESRCH). Both `interfere` (the aggressor's subreaper) and `engine` (fio's job
//! processes) end their trees this way.

use rustix::process::{Pid, PidfdFlags, Signal};
use std::collections::HashMap;

/// One process as one read of its `/proc/<pid>/stat` saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    /// The command name (field 2), at most 15 bytes of the program's name.
    pub comm: String,
    /// The parent (field 4).
    pub parent: i32,
    /// When it started (field 22), in clock ticks after boot: with `pid`, it names one process.
    pub start: u64,
}

/// `/proc/<pid>/stat` read now, or None when there is no such process.
pub fn read(pid: i32) -> Option<Proc> {
    parse_stat(
        pid,
        &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?,
    )
}

/// A `/proc/<pid>/stat` text: "pid (comm) state ppid ..." (proc(5)).
fn parse_stat(pid: i32, stat: &str) -> Option<Proc> {
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let comm = stat.get(open + 1..close)?.to_string();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    // From field 3 (the state): field 4 is the 2nd, field 22 the 20th.
    let parent = rest.nth(1)?.parse().ok()?;
    let start = rest.nth(17)?.parse().ok()?;
    Some(Proc {
        pid,
        comm,
        parent,
        start,
    })
}

/// Every process in `/proc` (empty when it cannot be read).
pub fn scan() -> Vec<Proc> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read)
        .collect()
}

/// The processes below `root`, from the parents in `(pid, parent)` pairs: those whose chain of
/// parents reaches `root`. Deepest first, so that a child is signalled while its parent (which
/// [`signal_checked`] looks for) is still there.
pub fn descendants_in(root: i32, parents: &[(i32, i32)]) -> Vec<i32> {
    let parent: HashMap<i32, i32> = parents.iter().copied().collect();
    let depth = |pid: i32| {
        if pid == root {
            return None;
        }
        let mut p = pid;
        // A chain is never longer than the process table; the bound guards against a loop
        // read from a changing /proc.
        for depth in 1..=parents.len() {
            match parent.get(&p) {
                Some(&pp) if pp == root => return Some(depth),
                Some(&pp) if pp > 1 && pp != p => p = pp,
                _ => return None,
            }
        }
        None
    };
    let mut found: Vec<(usize, i32)> = parents
        .iter()
        .filter_map(|&(pid, _)| Some((depth(pid)?, pid)))
        .collect();
    found.sort_by_key(|&(depth, _)| std::cmp::Reverse(depth));
    found.into_iter().map(|(_, pid)| pid).collect()
}

/// The processes of `procs` below `root`, deepest first ([`descendants_in`]).
pub fn descendants(root: i32, procs: &[Proc]) -> Vec<Proc> {
    let parents: Vec<(i32, i32)> = procs.iter().map(|p| (p.pid, p.parent)).collect();
    let by_pid: HashMap<i32, &Proc> = procs.iter().map(|p| (p.pid, p)).collect();
    descendants_in(root, &parents)
        .into_iter()
        .filter_map(|pid| by_pid.get(&pid).map(|p| (*p).clone()))
        .collect()
}

/// What [`signal_checked`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signalled {
    /// The signal went to the process the scan saw.
    Sent,
    /// Nothing was sent: that process exited, its pid names another process now, or it is no
    /// longer below the parents given.
    Gone,
}

/// Sends `sig` to `p` (a record of a scan) if, once a pidfd pins whatever holds its pid, that
/// is still the same process (the start time the scan saw) and its parent is still one of
/// `parents` (each also still the process the scan saw: same pid, same start time). Module doc.
///
/// Where the kernel has no pidfds (ENOSYS: Linux before 5.3; EPERM: a seccomp filter that
/// predates them), the same check is made and kill(2) sent by number right after it, the best
/// such a kernel allows.
pub fn signal_checked(p: &Proc, parents: &[Proc], sig: Signal) -> std::io::Result<Signalled> {
    let Some(pid) = Pid::from_raw(p.pid) else {
        return Ok(Signalled::Gone);
    };
    let pidfd = match rustix::process::pidfd_open(pid, PidfdFlags::empty()) {
        Ok(fd) => Some(fd),
        Err(rustix::io::Errno::SRCH) => return Ok(Signalled::Gone),
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => None,
        Err(e) => return Err(e.into()),
    };
    if !still_below(p, parents) {
        return Ok(Signalled::Gone);
    }
    let r = match &pidfd {
        Some(fd) => rustix::process::pidfd_send_signal(fd, sig),
        None => rustix::process::kill_process(pid, sig),
    };
    match r {
        Ok(()) => Ok(Signalled::Sent),
        Err(rustix::io::Errno::SRCH) => Ok(Signalled::Gone),
        Err(e) => Err(e.into()),
    }
}

/// Whether `/proc` shows `p` now as the scan saw it (same start time) with a parent among
/// `parents`, each itself as the scan saw it.
fn still_below(p: &Proc, parents: &[Proc]) -> bool {
    let same = |q: &Proc| read(q.pid).is_some_and(|now| now.start == q.start);
    read(p.pid).is_some_and(|now| {
        now.start == p.start && parents.iter().any(|q| q.pid == now.parent && same(q))
    })
}

/// Sends `sig` to every process below `root` ([`descendants`] of one [`scan`], deepest first),
/// each through [`signal_checked`] with `root` and the others of the tree as the parents it may
/// have; failures are skipped. Returns how many were sent the signal.
pub fn signal_descendants(root: &Proc, sig: Signal) -> usize {
    let tree = descendants(root.pid, &scan());
    let mut parents = tree.clone();
    parents.push(root.clone());
    tree.iter()
        .filter(|p| matches!(signal_checked(p, &parents, sig), Ok(Signalled::Sent)))
        .count()
}

/// This process as `/proc/self` shows it (the root of what it started).
pub fn me() -> Option<Proc> {
    read(std::process::id() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    fn sleeper() -> (Child, Proc) {
        let child = Command::new("sleep").arg("30").spawn().unwrap();
        let p = read(child.id() as i32).unwrap();
        (child, p)
    }

    /// Whether `child` still runs a while after a SIGKILL would have ended it.
    fn alive_after_a_while(child: &mut Child) -> bool {
        std::thread::sleep(Duration::from_millis(200));
        child.try_wait().unwrap().is_none()
    }

    fn killed(child: &mut Child) -> bool {
        use std::os::unix::process::ExitStatusExt;
        child.wait().unwrap().signal() == Some(Signal::KILL.as_raw())
    }

    #[test]
    fn stat_fields_are_read_after_the_last_parenthesis() {
        // A command name may hold blanks and parentheses.
        let stat = "42 (a) b (c) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    123456 2000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
        let p = parse_stat(42, stat).unwrap();
        assert_eq!(p.comm, "a) b (c");
        assert_eq!((p.pid, p.parent, p.start), (42, 7, 123456));
        assert_eq!(parse_stat(42, "42 (x) S 7"), None);
        // This process: its parent is the harness's, its start time is stable.
        let me = me().unwrap();
        assert_eq!(me.parent, std::os::unix::process::parent_id() as i32);
        assert_eq!(me.start, read(me.pid).unwrap().start);
    }

    #[test]
    fn descendants_are_found_by_their_parents_whatever_their_session() {
        // 10 is the root; 11 its child, 12 its child, 13 adopted (a setsid orphan), 20 a
        // stranger with child 21, 1 init.
        let parents = [
            (1, 0),
            (10, 1),
            (11, 10),
            (12, 11),
            (13, 10),
            (20, 1),
            (21, 20),
        ];
        let d = descendants_in(10, &parents);
        // Deepest first: 12 before its parent 11.
        assert_eq!(d, [12, 11, 13]);
        // A loop in what /proc said (a pid reused mid-read) ends the walk.
        assert!(descendants_in(10, &[(30, 31), (31, 30)]).is_empty());
    }

    #[test]
    fn a_process_whose_start_time_differs_from_the_scan_is_not_signalled() {
        // The scan saw another process under this pid: what holds it now started later.
        let (mut child, seen) = sleeper();
        let me = me().unwrap();
        let stale = Proc {
            start: seen.start.wrapping_sub(1),
            ..seen.clone()
        };
        assert_eq!(
            signal_checked(&stale, std::slice::from_ref(&me), Signal::KILL).unwrap(),
            Signalled::Gone
        );
        assert!(alive_after_a_while(&mut child), "a stranger got SIGKILL");
        // The record the scan made of it is signalled.
        assert_eq!(
            signal_checked(&seen, &[me], Signal::KILL).unwrap(),
            Signalled::Sent
        );
        assert!(killed(&mut child));
    }

    #[test]
    fn a_process_no_longer_below_the_root_is_not_signalled() {
        // `b` is this process's child, not `a`'s: its parent is not among those allowed.
        let (mut a, pa) = sleeper();
        let (mut b, pb) = sleeper();
        assert_eq!(
            signal_checked(&pb, std::slice::from_ref(&pa), Signal::KILL).unwrap(),
            Signalled::Gone
        );
        assert!(
            alive_after_a_while(&mut b),
            "a process outside the tree got SIGKILL"
        );
        // A parent that is not the process the scan saw (its start time differs) does not
        // count either.
        let me = me().unwrap();
        let other_me = Proc {
            start: me.start + 1,
            ..me.clone()
        };
        assert_eq!(
            signal_checked(&pb, &[other_me], Signal::KILL).unwrap(),
            Signalled::Gone
        );
        assert!(alive_after_a_while(&mut b));
        for (c, p) in [(&mut a, &pa), (&mut b, &pb)] {
            assert_eq!(
                signal_checked(p, std::slice::from_ref(&me), Signal::KILL).unwrap(),
                Signalled::Sent
            );
            assert!(killed(c));
        }
        // Reaped: gone, and nothing is sent.
        assert_eq!(
            signal_checked(&pa, &[me], Signal::KILL).unwrap(),
            Signalled::Gone
        );
    }

    #[test]
    fn every_process_below_the_root_is_signalled() {
        // sh forks two sleeps and waits for them; it exits once both died.
        let mut sh = Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .unwrap();
        let root = read(sh.id() as i32).unwrap();
        let start = Instant::now();
        while descendants(root.pid, &scan()).len() < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "sh forked no sleeps"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(signal_descendants(&root, Signal::KILL), 2);
        let status = sh.wait().unwrap();
        assert!(status.success(), "{status:?}");
        assert!(descendants(root.pid, &scan()).is_empty());
    }
}
