//! The journal of changes a run makes to the system, so that whatever happens (Ctrl-C, an error,
//! SIGKILL) the system ends up as it was found.
//!
//! Every change is appended to a JSON file and the file is fsynced *before* the change is made;
//! undoing a change removes its entry. A run takes an exclusive `flock` on `interfere.lock`
//! (the kernel releases it when the holder dies, even by SIGKILL), and the next run — or
//! `disktier interfere --restore` — finds a journal left without a live holder and undoes every
//! entry in reverse order. Undo is idempotent: a scheduler is written back, a missing cgroup or
//! directory counts as removed, a process that no longer exists counts as ended.

use crate::error::{InterfereError, Result};
use crate::{cgroup, scheduler, sys};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The prefix of every directory a run creates, checked again before a journal's directory is
/// deleted so that a damaged journal can never remove anything else.
pub const DIR_PREFIX: &str = ".disktier-interfere-";
/// The prefix of every cgroup a run creates (checked likewise).
pub const CGROUP_PREFIX: &str = "disktier-interfere-";

/// One change to the system, described well enough to undo it from another process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// The scheduler of `device` was `was`; `file` is its sysfs file.
    Scheduler {
        device: String,
        file: PathBuf,
        was: String,
    },
    /// A cgroup directory was created.
    Cgroup { path: PathBuf },
    /// A controller was enabled in a cgroup v2 `cgroup.subtree_control`.
    SubtreeControl { file: PathBuf, controller: String },
    /// A scratch directory was created (with everything in it ours).
    Dir { path: PathBuf },
    /// An aggressor process was started (`start_time` from `/proc/<pid>/stat`, so a recycled
    /// pid is never killed).
    Process { pid: i32, start_time: u64 },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Scheduler { device, was, .. } => write!(f, "scheduler of {device} was {was}"),
            Change::Cgroup { path } => write!(f, "created cgroup {}", path.display()),
            Change::SubtreeControl { file, controller } => {
                write!(f, "enabled {controller} in {}", file.display())
            }
            Change::Dir { path } => write!(f, "created dir {}", path.display()),
            Change::Process { pid, .. } => write!(f, "started aggressor process {pid}"),
        }
    }
}

impl Change {
    /// Puts the system back as it was before this change. Safe to repeat.
    pub fn undo(&self) -> Result<()> {
        match self {
            Change::Scheduler { device, file, was } => {
                if !file.exists() {
                    return Ok(()); // the device went away (a detached loop device)
                }
                if scheduler::read(file)?.active == *was {
                    return Ok(());
                }
                scheduler::set(file, device, was)
            }
            Change::Cgroup { path } => {
                if !name_has_prefix(path, CGROUP_PREFIX) {
                    return Err(InterfereError::BadJournal {
                        path: path.clone(),
                        why: format!("a cgroup not named {CGROUP_PREFIX}*: refusing to remove it"),
                    });
                }
                cgroup::remove(path)
            }
            Change::SubtreeControl { file, controller } => {
                // Fails with EBUSY while another cgroup uses it: then it stays on, harmlessly.
                let _ = std::fs::write(file, format!("-{controller}"));
                Ok(())
            }
            Change::Dir { path } => {
                if !name_has_prefix(path, DIR_PREFIX) {
                    return Err(InterfereError::BadJournal {
                        path: path.clone(),
                        why: format!("a directory not named {DIR_PREFIX}*: refusing to delete it"),
                    });
                }
                match std::fs::remove_dir_all(path) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(InterfereError::io(path, e)),
                }
            }
            Change::Process { pid, start_time } => {
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
                Ok(())
            }
        }
    }
}

fn name_has_prefix(p: &Path, prefix: &str) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(prefix))
}

/// Field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot), or None when the
/// process does not exist or is a zombie already reaped.
pub fn process_start_time(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces; fields resume after the last ')'.
    let rest = &s[s.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct JournalDoc {
    schema_version: u32,
    /// The pid of the run that wrote it.
    owner_pid: u32,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    id: u64,
    /// The change in words, for a human reading the file.
    what: String,
    #[serde(flatten)]
    change: Change,
}

/// What a restore did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Restored {
    pub undone: Vec<String>,
    pub failed: Vec<String>,
}

/// The directory holding the journal and its lock: `$DISKTIER_RUN_DIR` when set (tests), else
/// `/run/disktier` for root, else `$XDG_RUNTIME_DIR/disktier`, else `/tmp/disktier-<uid>`.
pub fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("DISKTIER_RUN_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let uid = std::fs::metadata("/proc/self").map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    if uid.as_ref().is_ok_and(|u| *u == 0) {
        return PathBuf::from("/run/disktier");
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("disktier");
    }
    PathBuf::from(format!("/tmp/disktier-{}", uid.unwrap_or(0)))
}

/// A live journal: holds the lock while the run lasts; dropping it undoes what is left.
pub struct Journal {
    path: PathBuf,
    _lock: File,
    doc: JournalDoc,
    next_id: u64,
}

impl Journal {
    pub fn file_in(dir: &Path) -> PathBuf {
        dir.join("interfere.journal")
    }

    /// Takes the lock in `dir`, undoes whatever a killed run left (returned), and starts an
    /// empty journal.
    pub fn open(dir: &Path) -> Result<(Journal, Restored)> {
        let lock = lock(dir)?;
        let path = Self::file_in(dir);
        let restored = undo_file(&path)?;
        let j = Journal {
            path,
            _lock: lock,
            doc: JournalDoc {
                schema_version: 1,
                owner_pid: std::process::id(),
                entries: Vec::new(),
            },
            next_id: 1,
        };
        j.save()?;
        Ok((j, restored))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the change to the journal and fsyncs it; call BEFORE making the change.
    pub fn record(&mut self, change: Change) -> Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        self.doc.entries.push(Entry {
            id,
            what: change.to_string(),
            change,
        });
        self.save()?;
        Ok(id)
    }

    /// Undoes one change and drops it from the journal (kept there if the undo fails).
    pub fn undo(&mut self, id: u64) -> Result<()> {
        let Some(pos) = self.doc.entries.iter().position(|e| e.id == id) else {
            return Ok(());
        };
        self.doc.entries[pos].change.undo()?;
        self.doc.entries.remove(pos);
        self.save()
    }

    /// Forgets a change that needs no undo any more (a process that exited on its own).
    pub fn forget(&mut self, id: u64) -> Result<()> {
        self.doc.entries.retain(|e| e.id != id);
        self.save()
    }

    /// Undoes everything still recorded, newest first, then removes the journal file.
    pub fn finish(mut self) -> Restored {
        self.undo_all()
    }

    fn undo_all(&mut self) -> Restored {
        let mut r = Restored::default();
        while let Some(e) = self.doc.entries.pop() {
            match e.change.undo() {
                Ok(()) => r.undone.push(e.what),
                Err(err) => r.failed.push(format!("{}: {err}", e.what)),
            }
        }
        if r.failed.is_empty() {
            let _ = std::fs::remove_file(&self.path);
        } else {
            // Keep the file for --restore to retry.
            let _ = self.save();
        }
        r
    }

    fn save(&self) -> Result<()> {
        write_synced(
            &self.path,
            &serde_json::to_vec_pretty(&self.doc).unwrap_or_default(),
        )
    }

    /// Current entries in words (for tests and `--restore` output).
    pub fn describe(&self) -> Vec<String> {
        self.doc.entries.iter().map(|e| e.what.clone()).collect()
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if !self.doc.entries.is_empty() {
            let _ = self.undo_all();
        } else {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Undoes whatever a killed run left in `dir` (what `--restore` runs). Idempotent: with no
/// journal it does nothing.
pub fn restore(dir: &Path) -> Result<Restored> {
    let _lock = lock(dir)?;
    undo_file(&Journal::file_in(dir))
}

fn lock(dir: &Path) -> Result<File> {
    std::fs::create_dir_all(dir).map_err(|e| InterfereError::io(dir, e))?;
    let lock_path = dir.join("interfere.lock");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&lock_path)
        .map_err(|e| InterfereError::io(&lock_path, e))?;
    if !sys::try_lock(&f).map_err(|e| InterfereError::io(&lock_path, e))? {
        let pid = std::fs::read_to_string(&lock_path).unwrap_or_default();
        return Err(InterfereError::Busy {
            pid: pid.trim().to_string(),
            lock: lock_path,
        });
    }
    let _ = f.set_len(0);
    let _ = writeln!(f, "{}", std::process::id());
    Ok(f)
}

fn undo_file(path: &Path) -> Result<Restored> {
    let mut r = Restored::default();
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(r),
        Err(e) => return Err(InterfereError::io(path, e)),
    };
    let mut doc: JournalDoc =
        serde_json::from_slice(&text).map_err(|e| InterfereError::BadJournal {
            path: path.to_path_buf(),
            why: e.to_string(),
        })?;
    let mut kept = Vec::new();
    while let Some(e) = doc.entries.pop() {
        match e.change.undo() {
            Ok(()) => r.undone.push(e.what),
            Err(err) => {
                r.failed.push(format!("{}: {err}", e.what));
                kept.push(e);
            }
        }
    }
    if kept.is_empty() {
        std::fs::remove_file(path).map_err(|e| InterfereError::io(path, e))?;
    } else {
        kept.reverse();
        doc.entries = kept;
        write_synced(path, &serde_json::to_vec_pretty(&doc).unwrap_or_default())?;
    }
    Ok(r)
}

/// Replaces `path` with `bytes` durably: write a temp file, fsync it, rename, fsync the dir.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("journal.tmp");
    let mut f = File::create(&tmp).map_err(|e| InterfereError::io(&tmp, e))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| InterfereError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| InterfereError::io(path, e))?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_left_journal_is_undone_by_the_next_open_and_restore_is_idempotent() {
        let t = tempfile::tempdir().unwrap();
        let run_dir = t.path().join("run");
        let scratch = t.path().join(format!("{DIR_PREFIX}x"));
        {
            let (mut j, _) = Journal::open(&run_dir).unwrap();
            j.record(Change::Dir {
                path: scratch.clone(),
            })
            .unwrap();
            std::fs::create_dir(&scratch).unwrap();
            std::fs::write(scratch.join("obj"), b"x").unwrap();
            // Simulate SIGKILL: the journal stays, nothing is undone.
            std::mem::forget(j);
        }
        let file = Journal::file_in(&run_dir);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("created dir"), "{text}");
        // The forgotten journal still holds its lock's fd in this process; a real SIGKILL frees
        // it. Restore through the file directly.
        let r = undo_file(&file).unwrap();
        assert_eq!(r.undone.len(), 1, "{r:?}");
        assert!(!scratch.exists());
        assert!(!file.exists());
        assert!(undo_file(&file).unwrap().undone.is_empty());
    }

    #[test]
    fn refuses_to_delete_what_is_not_ours() {
        let t = tempfile::tempdir().unwrap();
        let c = Change::Dir {
            path: t.path().to_path_buf(),
        };
        assert!(c.undo().is_err());
        assert!(t.path().exists());
    }

    #[test]
    fn dropping_a_journal_undoes_it() {
        let t = tempfile::tempdir().unwrap();
        let scratch = t.path().join(format!("{DIR_PREFIX}y"));
        let run_dir = t.path().join("run");
        {
            let (mut j, _) = Journal::open(&run_dir).unwrap();
            j.record(Change::Dir {
                path: scratch.clone(),
            })
            .unwrap();
            std::fs::create_dir(&scratch).unwrap();
        }
        assert!(!scratch.exists());
        assert!(!Journal::file_in(&run_dir).exists());
    }

    #[test]
    fn start_time_of_self_is_readable() {
        assert!(process_start_time(std::process::id() as i32).is_some());
        assert!(process_start_time(i32::MAX).is_none());
    }
}
