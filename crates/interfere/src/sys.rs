//! The few raw system calls this crate needs that std does not wrap: `ioprio_set`/`ioprio_get`,
//! `syncfs`, `prctl(PR_SET_PDEATHSIG)` and `kill`. Kept in one place so that every `unsafe` block
//! of the crate sits here, each with its `# Safety` argument.

use std::os::fd::AsRawFd;

/// `syscall(nr, a, b, c)` for calls whose arguments are all plain integers.
pub fn int_syscall3(nr: libc::c_long, a: i32, b: i32, c: i32) -> libc::c_long {
    // # Safety
    // The calls made through here (ioprio_set, ioprio_get) take integers only and read or write
    // no user memory, so no argument can make the kernel touch memory we do not own.
    unsafe { libc::syscall(nr, a, b, c) }
}

/// Flushes the whole filesystem holding `f` (what ostree does once at the end of a pull).
pub fn syncfs(f: &std::fs::File) -> std::io::Result<()> {
    // # Safety
    // `f` is an open file for the duration of the call; syncfs only reads the descriptor.
    let r = unsafe { libc::syncfs(f.as_raw_fd()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Asks the kernel to SIGKILL this process when the thread that forked it dies, so a killed
/// `disktier interfere` never leaves its aggressor writing.
pub fn die_with_parent() -> std::io::Result<()> {
    // # Safety
    // prctl(PR_SET_PDEATHSIG, sig) takes integers only.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The parent's pid (to notice that the parent died before `die_with_parent` took effect).
pub fn parent_pid() -> i32 {
    std::os::unix::process::parent_id() as i32
}

/// Sends `sig` to `pid`; `Ok(false)` when no such process exists.
pub fn kill(pid: i32, sig: i32) -> std::io::Result<bool> {
    // # Safety
    // kill(2) takes integers only.
    let r = unsafe { libc::kill(pid, sig) };
    succeeded_unless(r, libc::ESRCH)
}

/// A libc call's return value `r`: `Ok(true)` when it succeeded, `Ok(false)` when it failed with
/// the errno `benign`, else the OS error.
fn succeeded_unless(r: libc::c_int, benign: i32) -> std::io::Result<bool> {
    if r >= 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(benign) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Takes an exclusive `flock` on `f` without waiting; `Ok(false)` when another process holds it.
/// The kernel drops the lock when the holder dies, even by SIGKILL.
pub fn try_lock(f: &std::fs::File) -> std::io::Result<bool> {
    // # Safety
    // flock(2) takes the descriptor of a file that stays open for the call, and integers.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    succeeded_unless(r, libc::EWOULDBLOCK)
}

/// Whether this process may write `path` (access(2) with W_OK, which honours root's privileges).
pub fn writable(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // # Safety
    // `c` is a valid NUL-terminated string that outlives the call; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// The effective user id of this process (who owns what a run creates).
pub fn euid() -> u32 {
    // # Safety
    // geteuid(2) takes no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// The filesystem type (`f_type` of statfs(2)) of the filesystem holding `path`.
pub fn fs_magic(path: &std::path::Path) -> std::io::Result<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // # Safety
    // `c` is a valid NUL-terminated string and `st` a buffer of the size statfs writes; both
    // outlive the call. The buffer is read only after the call reported success.
    let r = unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // # Safety
    // statfs succeeded, so it filled the structure.
    #[allow(clippy::unnecessary_cast)]
    Ok(unsafe { st.assume_init() }.f_type as i64)
}

/// `linux/magic.h`: the filesystems a journal entry may point into.
pub const SYSFS_MAGIC: i64 = 0x6265_6572;
pub const CGROUP_SUPER_MAGIC: i64 = 0x0027_e0eb;
pub const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

/// Makes the aggressor child ignore the terminal's signals (Ctrl-C, Ctrl-\, a hang-up): they go
/// to the whole foreground process group, and the parent, which must undo its changes in
/// order, stops the child itself. SIGKILL of the parent still ends it (`die_with_parent`).
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
    // # Safety
    // prctl(PR_SET_CHILD_SUBREAPER, 1) takes integers only.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Arranges for the program `cmd` starts to get SIGKILL when the thread that forked it dies,
/// as the aggressor process itself does (`die_with_parent`), and to start with the terminal
/// signals at their defaults: the aggressor process ignores them (`ignore_terminal_signals`),
/// and an ignored disposition would otherwise pass through exec to the user's command.
pub fn kill_with_parent_on_exec(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // # Safety
    // The closure runs in the forked child before exec and calls only signal(2) with SIG_DFL
    // and prctl(2), which are async-signal-safe, allocate nothing and take integers only.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether this process leads its own process group (the aggressor process must, so that
/// stopping the user's command never signals the parent's group).
pub fn leads_process_group() -> bool {
    // # Safety
    // getpgrp(2) and getpid(2) take no arguments and cannot fail.
    unsafe { libc::getpgrp() == libc::getpid() }
}

/// Sends `sig` to every other process of this process's group (read from `/proc/*/stat`),
/// twice over, so that a process forked during the first pass is reached too.
pub fn signal_group_but_self(sig: i32) {
    // # Safety
    // getpgrp(2) takes no arguments and cannot fail.
    let group = unsafe { libc::getpgrp() };
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

/// Reaps every child (own and adopted) that has ended, waiting up to `limit` for those still
/// running to end.
pub fn reap_children(limit: std::time::Duration) {
    let start = std::time::Instant::now();
    loop {
        let mut status = 0;
        // # Safety
        // waitpid(-1, &status, WNOHANG) writes one int into `status`, which outlives the call.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r > 0 {
            continue;
        }
        if r < 0 || start.elapsed() >= limit {
            return; // ECHILD: none left
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Bytes the reaped children of this process (and their reaped descendants) sent to the
/// storage layer: `ru_oublock` of `getrusage(RUSAGE_CHILDREN)`, which Linux counts in 512-byte
/// units from the tasks' `write_bytes`.
pub fn children_write_bytes() -> u64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // # Safety
    // `ru` is a buffer of the size getrusage writes and outlives the call; it is read only
    // after the call reported success.
    let r = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) };
    if r < 0 {
        return 0;
    }
    // # Safety
    // getrusage succeeded, so it filled the structure.
    let ru = unsafe { ru.assume_init() };
    (ru.ru_oublock.max(0) as u64).saturating_mul(512)
}
