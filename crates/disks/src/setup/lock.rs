//! One `setup` or `setup --undo` at a time on a node. Each plans from what it reads (the disks'
//! state, the mount table, fstab) and then changes it; two at once each act on a stale reading
//! (QA: two setups of the same mount point both found it free and mounted two disks on it, one
//! hiding the other; a setup beside an undo of the same mount, or two setups persisting in
//! fstab, rewrite what the other just wrote). So every run that changes something holds an
//! exclusive `flock` on `var/lib/disktier/setup.lock` below the persist root (the kernel
//! releases it when the holder dies, even by SIGKILL). A second run waits for the first to
//! finish, saying so once on stderr, and then plans from the state the first left: the
//! boot-time units of two mount points may start together, and both must succeed. A signal
//! stops the wait, with nothing changed.

use super::SetupError;
use disktier_cmd::CommandRunner;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock file below `persist_root` (`/` on the node).
pub fn lock_path(persist_root: &Path) -> PathBuf {
    persist_root.join("var/lib/disktier/setup.lock")
}

/// Held while a setup or an undo runs; dropping it releases the lock.
#[derive(Debug)]
pub struct SetupLock {
    _file: File,
}

/// Takes the lock below `persist_root`, waiting (stoppably) while another run holds it.
/// `what` names the caller in the error a signal makes.
pub fn take(
    persist_root: &Path,
    runner: &dyn CommandRunner,
    what: &str,
) -> Result<SetupLock, SetupError> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = lock_path(persist_root);
    let io = |source| SetupError::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(io)?;
    let mut said = false;
    loop {
        match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => break,
            Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {}
            Err(e) => return Err(io(e.into())),
        }
        let holder = holder_pid(&mut f);
        if runner.stopped() {
            return Err(SetupError::Interrupted {
                during: format!(
                    "while {what} waited for another disktier setup ({holder}) to finish"
                ),
                state: "nothing was changed; run it again once the other one is done".into(),
            });
        }
        if !said {
            eprintln!(
                "waiting for another disktier setup or undo ({holder}, lock {}) to finish before {what} reads the disks",
                path.display()
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = f.set_len(0);
    let _ = f.rewind();
    let _ = writeln!(f, "{}", std::process::id());
    Ok(SetupLock { _file: f })
}

/// "pid N" as the holder wrote it in the lock file, or "pid unknown".
fn holder_pid(f: &mut File) -> String {
    let mut s = String::new();
    let _ = f.rewind();
    let _ = Read::by_ref(f).take(32).read_to_string(&mut s);
    match s.trim() {
        p if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => format!("pid {p}"),
        _ => "pid unknown".into(),
    }
}
