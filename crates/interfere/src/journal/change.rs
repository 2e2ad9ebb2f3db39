//! One journalled change: its record, the checks an entry passes before it is replayed, and
//! its undo.

use crate::error::{InterfereError, Result};
use crate::{cgroup, scheduler, sys};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most queue settings one entry may list (mq-deadline has 7 files, bfq about 15).
const MAX_QUEUE_SETTINGS: usize = 64;

/// The prefix of every directory a run creates, checked again before a journal's directory is
/// deleted so that a damaged journal can never remove anything else.
pub const DIR_PREFIX: &str = ".disktier-interfere-";
/// The prefix of every cgroup a run creates (checked likewise).
pub const CGROUP_PREFIX: &str = "disktier-interfere-";

/// One change to the system, described well enough to undo it from another process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// The scheduler of `device` was `was`; `file` is its sysfs file. `disk` is the device's
    /// `diskseq` then (a number the kernel gives each disk it attaches, never twice in a boot):
    /// a loop device detached after a SIGKILL and its name given to another backing file is
    /// another disk, whose scheduler `--restore` leaves alone.
    Scheduler {
        device: String,
        file: PathBuf,
        was: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disk: Option<u64>,
    },
    /// The queue settings of `device` under `scheduler` (`nr_requests` and `iosched/*`,
    /// relative to `/sys/block/<device>/queue`, as read), recorded before a scheduler switch,
    /// which resets them; undone after the scheduler is (it is recorded first).
    QueueSettings {
        device: String,
        scheduler: String,
        values: BTreeMap<String, String>,
        /// As for [`Change::Scheduler`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disk: Option<u64>,
    },
    /// A cgroup directory was created.
    Cgroup { path: PathBuf },
    /// A controller was enabled in a cgroup v2 `cgroup.subtree_control`.
    SubtreeControl { file: PathBuf, controller: String },
    /// A scratch directory was created (with everything in it ours).
    Dir { path: PathBuf },
    /// An aggressor process was started (`start_time` from `/proc/<pid>/stat`, so a recycled
    /// pid is never killed).
    /// With `group`, the process leads a process group (the user's `--aggressor-cmd` runs in
    /// it) and undo kills the whole group.
    Process {
        pid: i32,
        start_time: u64,
        #[serde(default)]
        group: bool,
    },
    /// Process `pid` (disktier itself, for `cgroup-latency`) was moved out of the cgroup v2
    /// directory `home`; undo moves it back while it lives.
    Rehome {
        pid: i32,
        start_time: u64,
        home: PathBuf,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Scheduler { device, was, .. } => write!(f, "scheduler of {device} was {was}"),
            Change::QueueSettings {
                device,
                scheduler,
                values,
                ..
            } => write!(
                f,
                "queue settings of {device} under {scheduler} were {}",
                values
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Change::Cgroup { path } => write!(f, "created cgroup {}", path.display()),
            Change::SubtreeControl { file, controller } => {
                write!(f, "enabled {controller} in {}", file.display())
            }
            Change::Dir { path } => write!(f, "created dir {}", path.display()),
            Change::Process { pid, .. } => write!(f, "started aggressor process {pid}"),
            Change::Rehome { pid, home, .. } => {
                write!(f, "moved process {pid} out of cgroup {}", home.display())
            }
        }
    }
}

/// A name the kernel gives a block device (`loop3`, `nvme0n1`, `dm-0`): no `/`, no `..`.
fn is_kernel_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':' | b'!'))
}

/// A scheduler name as `queue/scheduler` lists it (`mq-deadline`, `bfq`, `none`).
fn is_scheduler_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_'))
}

/// A queue file a [`Change::QueueSettings`] may name: `nr_requests` or `iosched/<name>`.
fn is_queue_setting(s: &str) -> bool {
    s == scheduler::NR_REQUESTS
        || s.strip_prefix("iosched/").is_some_and(|n| {
            !n.is_empty()
                && n.len() <= 64
                && n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// A value as a queue file prints it: short, printable, one line.
fn is_queue_value(s: &str) -> bool {
    s.len() <= 64 && s.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
}

/// Absolute, every component a plain name (no `.`, `..` or empty), no control characters.
fn is_clean_absolute(p: &Path) -> bool {
    use std::path::Component;
    let mut comps = p.components();
    comps.next() == Some(Component::RootDir)
        && comps.clone().next().is_some()
        && comps.all(|c| matches!(c, Component::Normal(_)))
        && p.to_str().is_some_and(|s| !s.chars().any(char::is_control))
}

/// `Err` unless `path` is clean and absolute and names `what` disktier made (named `prefix`*).
fn ours(path: &Path, prefix: &str, what: &str) -> std::result::Result<(), String> {
    if !is_clean_absolute(path) || !name_has_prefix(path, prefix) {
        return Err(format!("{} is not {what} named {prefix}*", path.display()));
    }
    Ok(())
}

/// When `device` is no longer the disk a change recorded (its `diskseq` differs: the loop
/// device was detached and its name reused, QA), what `--restore` says instead of undoing it.
fn another_disk(device: &str, recorded: Option<u64>) -> Option<String> {
    let was = recorded?;
    let now = scheduler::diskseq(device);
    (now != Some(was)).then(|| {
        format!(
            "{device} is another disk now (diskseq {was} when it was changed, {} now): its queue is left as it is",
            now.map_or_else(|| "none".to_string(), |n| n.to_string())
        )
    })
}

impl Change {
    /// Whether this entry has the shape of something disktier itself records (see the module
    /// doc); does not look at the system. `Err` says why not.
    pub fn check(&self) -> std::result::Result<(), String> {
        match self {
            Change::Scheduler {
                device, file, was, ..
            } => {
                if !is_kernel_name(device) {
                    return Err(format!("{device:?} is not a block device name"));
                }
                let want = Path::new("/sys/block").join(device).join("queue/scheduler");
                if *file != want {
                    return Err(format!(
                        "{} is not the scheduler file of {device} ({})",
                        file.display(),
                        want.display()
                    ));
                }
                if !is_scheduler_name(was) {
                    return Err(format!("{was:?} is not a scheduler name"));
                }
                Ok(())
            }
            Change::QueueSettings {
                device,
                scheduler,
                values,
                ..
            } => {
                if !is_kernel_name(device) {
                    return Err(format!("{device:?} is not a block device name"));
                }
                if !is_scheduler_name(scheduler) {
                    return Err(format!("{scheduler:?} is not a scheduler name"));
                }
                if values.len() > MAX_QUEUE_SETTINGS {
                    return Err(format!("{} queue settings are too many", values.len()));
                }
                if let Some((k, v)) = values
                    .iter()
                    .find(|(k, v)| !is_queue_setting(k) || !is_queue_value(v))
                {
                    return Err(format!(
                        "{k:?} = {v:?} is not a queue setting (nr_requests or iosched/<name>) with a value"
                    ));
                }
                Ok(())
            }
            Change::Cgroup { path } => ours(path, CGROUP_PREFIX, "a cgroup"),
            Change::SubtreeControl { file, controller } => {
                if !is_clean_absolute(file)
                    || file.file_name().and_then(|n| n.to_str()) != Some("cgroup.subtree_control")
                {
                    return Err(format!(
                        "{} is not a cgroup.subtree_control file",
                        file.display()
                    ));
                }
                if controller != "io" {
                    return Err(format!("{controller:?} is not the io controller"));
                }
                Ok(())
            }
            Change::Dir { path } => ours(path, DIR_PREFIX, "a scratch directory"),
            Change::Process {
                pid, start_time, ..
            }
            | Change::Rehome {
                pid, start_time, ..
            } => {
                // kill(0) or kill(-1) would signal a process group or every process.
                if *pid <= 1 || *start_time == 0 {
                    return Err(format!(
                        "pid {pid} (start time {start_time}) is not a process disktier started"
                    ));
                }
                if let Change::Rehome { home, .. } = self {
                    if !is_clean_absolute(home) {
                        return Err(format!("{} is not a cgroup directory", home.display()));
                    }
                }
                Ok(())
            }
        }
    }

    /// Whether what the entry points at, now, is something disktier may restore: the
    /// scheduler file is on sysfs, cgroup paths are on a cgroup filesystem, a scratch
    /// directory is a real directory owned by this user, a process belongs to this user.
    pub fn check_target(&self) -> std::result::Result<(), String> {
        self.check()?;
        let on = |p: &Path, magics: &[i64], what: &str| -> std::result::Result<(), String> {
            match crate::sys::fs_magic(p) {
                Ok(m) if magics.contains(&m) => Ok(()),
                Ok(m) => Err(format!(
                    "{} is not on {what} (filesystem 0x{m:x})",
                    p.display()
                )),
                // Gone (a detached device, a removed cgroup): nothing to restore there.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(format!("{}: {e}", p.display())),
            }
        };
        let cgroup_fs = [
            crate::sys::CGROUP_SUPER_MAGIC,
            crate::sys::CGROUP2_SUPER_MAGIC,
        ];
        match self {
            Change::Scheduler { file, .. } => on(file, &[crate::sys::SYSFS_MAGIC], "sysfs"),
            Change::QueueSettings { device, .. } => on(
                &Path::new("/sys/block").join(device).join("queue"),
                &[crate::sys::SYSFS_MAGIC],
                "sysfs",
            ),
            Change::Cgroup { path } => on(
                path.parent().unwrap_or(Path::new("/")),
                &cgroup_fs,
                "a cgroup filesystem",
            ),
            Change::SubtreeControl { file, .. } => on(
                file,
                &[crate::sys::CGROUP2_SUPER_MAGIC],
                "a cgroup2 filesystem",
            ),
            Change::Rehome { home, .. } => on(home, &cgroup_fs, "a cgroup filesystem"),
            Change::Dir { path } => {
                use std::os::unix::fs::MetadataExt;
                match std::fs::symlink_metadata(path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(format!("{}: {e}", path.display())),
                    Ok(md) if !md.file_type().is_dir() => Err(format!(
                        "{} is not a directory (a symlink?)",
                        path.display()
                    )),
                    Ok(md) if md.uid() != crate::sys::euid() => Err(format!(
                        "{} belongs to uid {}, not to this user",
                        path.display(),
                        md.uid()
                    )),
                    Ok(_) => Ok(()),
                }
            }
            Change::Process { pid, .. } => {
                use std::os::unix::fs::MetadataExt;
                match std::fs::metadata(format!("/proc/{pid}")) {
                    Err(_) => Ok(()), // ended
                    Ok(md) if md.uid() != crate::sys::euid() => Err(format!(
                        "process {pid} belongs to uid {}, not to this user",
                        md.uid()
                    )),
                    Ok(_) => Ok(()),
                }
            }
        }
    }

    /// Puts the system back as it was before this change. Safe to repeat.
    pub fn undo(&self) -> Result<()> {
        self.undo_noting().map(|_| ())
    }

    /// As [`Change::undo`], returning what could not be put back but is no reason to keep the
    /// entry (a queue setting the kernel refused), each as a sentence to report.
    pub fn undo_noting(&self) -> Result<Vec<String>> {
        match self {
            Change::Scheduler {
                device,
                file,
                was,
                disk,
            } => {
                if !file.exists() {
                    return Ok(vec![]); // the device went away (a detached loop device)
                }
                if let Some(note) = another_disk(device, *disk) {
                    return Ok(vec![note]);
                }
                if scheduler::read(file)?.active == *was {
                    return Ok(vec![]);
                }
                scheduler::set(file, device, was).map(|()| vec![])
            }
            Change::QueueSettings {
                device,
                scheduler,
                values,
                disk,
            } => {
                let queue = Path::new("/sys/block").join(device).join("queue");
                if !queue.exists() {
                    return Ok(vec![]); // the device went away
                }
                if let Some(note) = another_disk(device, *disk) {
                    return Ok(vec![note]);
                }
                let refused = scheduler::write_tunables(&queue, scheduler, values)?;
                Ok(refused
                    .into_iter()
                    .map(|r| {
                        format!("{device}'s queue setting {r} (the kernel refused the value it had before the scheduler switch)")
                    })
                    .collect())
            }
            Change::Cgroup { path } => {
                if !name_has_prefix(path, CGROUP_PREFIX) {
                    return Err(InterfereError::BadJournal {
                        path: path.clone(),
                        why: format!("a cgroup not named {CGROUP_PREFIX}*: refusing to remove it"),
                    });
                }
                cgroup::remove(path).map(|()| vec![])
            }
            Change::SubtreeControl { file, controller } => {
                // Fails with EBUSY while another cgroup uses it: then it stays on, harmlessly.
                let _ = std::fs::write(file, format!("-{controller}"));
                Ok(vec![])
            }
            Change::Dir { path } => {
                if !name_has_prefix(path, DIR_PREFIX) {
                    return Err(InterfereError::BadJournal {
                        path: path.clone(),
                        why: format!("a directory not named {DIR_PREFIX}*: refusing to delete it"),
                    });
                }
                match std::fs::remove_dir_all(path) {
                    Ok(()) => Ok(vec![]),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
                    Err(e) => Err(InterfereError::io(path, e)),
                }
            }
            Change::Process {
                pid,
                start_time,
                group,
            } => {
                if *group {
                    // While the leader (checked by its start time) lives, its group is ours:
                    // one SIGKILL reaches every member. Without the leader, the members of the
                    // group it led are those with its group id that started after it.
                    if process_start_time(*pid) == Some(*start_time) {
                        let _ = sys::kill(-*pid, libc::SIGKILL);
                    } else {
                        kill_group_members(*pid, *start_time);
                    }
                }
                if process_start_time(*pid) == Some(*start_time) {
                    sys::kill(*pid, libc::SIGKILL).map_err(|e| InterfereError::Syscall {
                        what: "kill",
                        pid: *pid,
                        source: e,
                    })?;
                    // Wait for it to go, so its files can be deleted and its cgroup removed.
                    for _ in 0..100 {
                        if process_start_time(*pid) != Some(*start_time) {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                }
                Ok(vec![])
            }
            Change::Rehome {
                pid,
                start_time,
                home,
            } => {
                if process_start_time(*pid) == Some(*start_time) {
                    let procs = home.join("cgroup.procs");
                    std::fs::write(&procs, pid.to_string())
                        .map_err(|e| InterfereError::io(&procs, e))?;
                }
                Ok(vec![])
            }
        }
    }
}

fn name_has_prefix(p: &Path, prefix: &str) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(prefix))
}

/// SIGKILLs the processes of group `pgid` that started at or after `since` (the leader's start):
/// what a user's command left when its leader is gone.
fn kill_group_members(pgid: i32, since: u64) {
    let Some(pids) = sys::pids() else {
        return;
    };
    for pid in pids {
        if pid > 1
            && sys::process_group_of(pid) == Some(pgid)
            && process_start_time(pid).is_some_and(|t| t >= since)
        {
            let _ = sys::kill(pid, libc::SIGKILL);
        }
    }
}

/// Field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot), or None when the
/// process does not exist or is a zombie already reaped.
pub fn process_start_time(pid: i32) -> Option<u64> {
    let rest = sys::stat_fields(pid)?;
    let mut fields = rest.split_whitespace();
    if fields.next() == Some("Z") {
        return None;
    }
    // Field 22 is the 20th from field 3; next() took the first.
    fields.nth(18)?.parse().ok()
}
