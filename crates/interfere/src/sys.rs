//! The system calls this crate needs that std does not wrap: `syncfs`, `flock`, `statfs`,
//! `kill`, `prctl` and the like through rustix's safe wrappers, and in one place the four that
//! no safe wrapper covers, each an `unsafe` block with its `# Safety` argument:
//! `ioprio_set`/`ioprio_get` ([`int_syscall3`]), setting a signal to SIG_IGN
//! ([`ignore_terminal_signals`]), a `pre_exec` hook ([`kill_with_parent_on_exec`]) and
//! `getrusage(RUSAGE_CHILDREN)` ([`children_write_bytes`]). They are the crate's only `unsafe`
//! (`crates/disktier/tests/architecture.rs` keeps the count; ARCHITECTURE.md says why).

use rustix::process::{Pid, Signal};

/// `syscall(nr, a, b, c)` for calls whose arguments are all plain integers.
///
/// Kept `unsafe` inside: rustix (and std) have no ioprio_set/ioprio_get, and the `ioprio` crate
/// wraps them through an old `nix` (0.21).
pub fn int_syscall3(nr: libc::c_long, a: i32, b: i32, c: i32) -> libc::c_long {
    // # Safety
    // The calls made through here (ioprio_set, ioprio_get) take integers only and read or write
    // no user memory, so no argument can make the kernel touch memory we do not own.
    unsafe { libc::syscall(nr, a, b, c) }
}

/// Flushes the whole filesystem holding `f` (what ostree does once at the end of a pull).
pub fn syncfs(f: &std::fs::File) -> std::io::Result<()> {
    Ok(rustix::fs::syncfs(f)?)
}

/// Asks the kernel to SIGKILL this process when the thread that forked it dies, so a killed
/// `disktier interfere` never leaves its aggressor writing.
pub fn die_with_parent() -> std::io::Result<()> {
    Ok(rustix::process::set_parent_process_death_signal(Some(
        Signal::KILL,
    ))?)
}

/// The parent's pid (to notice that the parent died before `die_with_parent` took effect).
pub fn parent_pid() -> i32 {
    std::os::unix::process::parent_id() as i32
}

/// Sends `sig` to `pid` as kill(2) reads them (a negative pid is that process group, 0 our
/// own); `Ok(false)` when no such process exists.
pub fn kill(pid: i32, sig: i32) -> std::io::Result<bool> {
    let sig = Signal::from_named_raw(sig)
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let r = match pid {
        0 => rustix::process::kill_current_process_group(sig),
        // kill(-pid): the group; -i32::MIN does not exist, and the kernel answers ESRCH.
        _ if pid < 0 => match pid.checked_neg().and_then(Pid::from_raw) {
            Some(group) => rustix::process::kill_process_group(group, sig),
            None => Err(rustix::io::Errno::SRCH),
        },
        _ => match Pid::from_raw(pid) {
            Some(p) => rustix::process::kill_process(p, sig),
            None => Err(rustix::io::Errno::SRCH),
        },
    };
    succeeded_unless(r, rustix::io::Errno::SRCH)
}

/// A system call's result `r`: `Ok(true)` when it succeeded, `Ok(false)` when it failed with
/// the errno `benign`, else the OS error.
fn succeeded_unless(r: rustix::io::Result<()>, benign: rustix::io::Errno) -> std::io::Result<bool> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if e == benign => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Takes an exclusive `flock` on `f` without waiting; `Ok(false)` when another process holds it.
/// The kernel drops the lock when the holder dies, even by SIGKILL.
pub fn try_lock(f: &std::fs::File) -> std::io::Result<bool> {
    let r = rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive);
    succeeded_unless(r, rustix::io::Errno::WOULDBLOCK)
}

/// Whether this process may write `path` (access(2) with W_OK, which honours root's privileges).
pub fn writable(path: &std::path::Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok()
}

/// The effective user id of this process (who owns what a run creates).
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The filesystem type (`f_type` of statfs(2)) of the filesystem holding `path`.
pub fn fs_magic(path: &std::path::Path) -> std::io::Result<i64> {
    #[allow(clippy::unnecessary_cast)]
    Ok(rustix::fs::statfs(path)?.f_type as i64)
}

/// `linux/magic.h`: the filesystems a journal entry may point into.
pub const SYSFS_MAGIC: i64 = 0x6265_6572;
pub const CGROUP_SUPER_MAGIC: i64 = 0x0027_e0eb;
pub const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

/// Makes the aggressor child ignore the terminal's signals (Ctrl-C, Ctrl-\, a hang-up): they go
/// to the whole foreground process group, and the parent, which must undo its changes in
/// order, stops the child itself. SIGKILL of the parent still ends it (`die_with_parent`).
///
/// Kept `unsafe`: no safe wrapper sets SIG_IGN (rustix's sigaction and signal-hook's
/// registration are `unsafe` too), and a handler in its place would not pass "ignored" on to
/// what this process starts.
pub fn ignore_terminal_signals() {
    for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP] {
        // # Safety
        // Setting a signal's disposition to SIG_IGN installs no handler code.
        unsafe {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
}

/// Makes this process the reaper of its orphaned descendants (`PR_SET_CHILD_SUBREAPER`), so
/// that what a user's aggressor command leaves behind is reaped, counted and stopped here.
pub fn become_subreaper() -> std::io::Result<()> {
    // rustix passes the pid as prctl's (non-zero: on) argument.
    Ok(rustix::process::set_child_subreaper(Some(
        rustix::process::getpid(),
    ))?)
}

/// Arranges for the program `cmd` starts to get SIGKILL when the thread that forked it dies,
/// as the aggressor process itself does (`die_with_parent`), and to start with the terminal
/// signals at their defaults: the aggressor process ignores them (`ignore_terminal_signals`),
/// and an ignored disposition would otherwise pass through exec to the user's command.
///
/// Kept `unsafe`: std has no safe way to run code between fork and exec (`pre_exec` is
/// `unsafe`), and PR_SET_PDEATHSIG must be set in the child itself.
pub fn kill_with_parent_on_exec(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // # Safety
    // The closure runs in the forked child before exec and calls only signal(2) with SIG_DFL
    // and prctl(2) (rustix makes the system call directly), which are async-signal-safe,
    // allocate nothing and take integers only.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            Ok(())
        });
    }
}

/// Whether this process leads its own process group (the aggressor process must, so that
/// stopping the user's command never signals the parent's group).
pub fn leads_process_group() -> bool {
    rustix::process::getpgrp() == rustix::process::getpid()
}

/// Sends `sig` to every other process of this process's group (read from `/proc/*/stat`),
/// twice over, so that a process forked during the first pass is reached too.
pub fn signal_group_but_self(sig: i32) {
    let group = rustix::process::getpgrp().as_raw_nonzero().get();
    let me = std::process::id() as i32;
    for _ in 0..2 {
        let Some(pids) = pids() else {
            return;
        };
        for pid in pids {
            if pid != me && pid > 1 && process_group_of(pid) == Some(group) {
                let _ = kill(pid, sig);
            }
        }
    }
}

/// The ids of the processes in `/proc`, or None when it cannot be read.
pub fn pids() -> Option<impl Iterator<Item = i32>> {
    let rd = std::fs::read_dir("/proc").ok()?;
    Some(
        rd.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()),
    )
}

/// `/proc/<pid>/stat` from field 3 (the state) on, blank-separated, or None when there is no
/// such process.
pub fn stat_fields(pid: i32) -> Option<String> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces; fields resume after the last ')'.
    let rest = s.get(s.rfind(')')? + 2..)?;
    Some(rest.to_string())
}

/// The process group of `pid` (field 5 of `/proc/<pid>/stat`).
pub fn process_group_of(pid: i32) -> Option<i32> {
    stat_fields(pid)?.split_whitespace().nth(2)?.parse().ok()
}

/// Ends everything this process started or adopted: SIGKILL to every descendant (found by their
/// parents in `/proc`, whatever their session or group: a `setsid` child leaves the group but
/// not the tree, and as subreaper this process adopts it when its parent exits), and reaps until
/// `waitpid` answers ECHILD (no child left), or `limit` passed (a process in uninterruptible
/// sleep, e.g. in a throttled fsync, dies only when that returns). Returns whether none is
/// left. Each is signalled through a pidfd once it is checked to be the process the scan saw
/// (`disktier_cmd::proctree`): a pid that a stranger got in between is left alone.
pub fn kill_descendants(limit: std::time::Duration) -> bool {
    use disktier_cmd::proctree;
    let start = std::time::Instant::now();
    loop {
        if let Some(me) = proctree::me() {
            proctree::signal_descendants(&me, Signal::KILL);
        }
        loop {
            match rustix::process::waitpid(None, rustix::process::WaitOptions::NOHANG) {
                Ok(Some(_)) => continue,
                Ok(None) => break,
                // ECHILD: no child, so no descendant either (each one's chain runs through a
                // child).
                Err(_) => return true,
            }
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Bytes the reaped children of this process (and their reaped descendants) sent to the
/// storage layer: `ru_oublock` of `getrusage(RUSAGE_CHILDREN)`, which Linux counts in 512-byte
/// units from the tasks' `write_bytes`.
///
/// Kept `unsafe`: rustix has no getrusage, and no other safe source gives the children's
/// count alone (`/proc/self/io` adds this process's own writes).
pub fn children_write_bytes() -> u64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // # Safety
    // `ru` is a buffer of the size getrusage writes and outlives the call; it is read (as
    // `assume_init`) only after the call reported success, which means it filled it in.
    let ru = unsafe {
        if libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) < 0 {
            return 0;
        }
        ru.assume_init()
    };
    (ru.ru_oublock.max(0) as u64).saturating_mul(512)
}
