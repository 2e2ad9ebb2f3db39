//! The journal of changes a run makes to the system, so that whatever happens (Ctrl-C, SIGTERM,
//! an error, SIGKILL) the system ends up as it was found.
//!
//! Every change is appended to a JSON file and the file is fsynced *before* the change is made;
//! undoing a change removes its entry. A run takes an exclusive `flock` on `interfere.lock`
//! (the kernel releases it when the holder dies, even by SIGKILL), and the next run — or
//! `disktier interfere --restore` — finds a journal left without a live holder and undoes every
//! entry in reverse order. Undo is idempotent: a scheduler is written back, a missing cgroup or
//! directory counts as removed, a process that no longer exists counts as ended.
//!
//! The journal is an instruction to a (usually root) process to write files and kill processes,
//! so it is trusted only as far as it is provably ours:
//! - its directory is private ([`private_dir`]): created 0700, opened with `O_NOFOLLOW`, owned by
//!   this user and writable by no one else, or refused;
//! - the lock, the journal and its temporary file are opened with `O_NOFOLLOW` (the temporary
//!   with `O_EXCL`), and must be regular files owned by this user;
//! - every entry is checked before anything is replayed ([`Change::check`] for its shape,
//!   [`Change::check_target`] for what it points at): only a block device's
//!   `/sys/block/<dev>/queue/scheduler` back to a scheduler name, its `queue/nr_requests` and
//!   `queue/iosched/<name>` back to short values, `io` in a cgroup2
//!   `cgroup.subtree_control`, a `disktier-interfere-*` directory on a cgroup filesystem, a
//!   `.disktier-interfere-*` directory owned by this user, and processes of this user other than
//!   pid 0/1. One entry outside that refuses the whole journal, and nothing in it is replayed.

//!
//! `change.rs` holds one entry ([`Change`]): its checks and its undo; this file holds the
//! journal file, its directory and its lock.

mod change;

pub use change::{process_start_time, Change, CGROUP_PREFIX, DIR_PREFIX};

use crate::error::{InterfereError, Result};
use crate::sys;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most a journal file may hold: a run records a few entries per scenario.
pub const MAX_JOURNAL_BYTES: u64 = 1 << 20;
/// The most entries a journal may list.
pub const MAX_ENTRIES: usize = 10_000;

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
/// `/run/disktier` for root, else `$XDG_RUNTIME_DIR/disktier` (an absolute one), else
/// `$HOME/.local/state/disktier`, else `/tmp/disktier-<uid>`. Whichever it is, [`private_dir`]
/// refuses it unless it is this user's own and private.
pub fn default_dir() -> PathBuf {
    let nonempty = |k: &str| std::env::var_os(k).filter(|d| !d.is_empty());
    if let Some(d) = nonempty("DISKTIER_RUN_DIR") {
        return PathBuf::from(d);
    }
    let uid = crate::sys::euid();
    if uid == 0 {
        return PathBuf::from("/run/disktier");
    }
    // The XDG Base Directory spec: a relative XDG_RUNTIME_DIR is invalid and ignored (it would
    // put the journal under whatever directory the command ran in).
    if let Some(d) = nonempty("XDG_RUNTIME_DIR").filter(|d| Path::new(d).is_absolute()) {
        return PathBuf::from(d).join("disktier");
    }
    if let Some(h) = nonempty("HOME") {
        return PathBuf::from(h).join(".local/state/disktier");
    }
    PathBuf::from(format!("/tmp/disktier-{uid}"))
}

/// Creates `dir` (mode 0700) when missing and checks that it is this user's private directory:
/// not a symlink, owned by this user, writable by no one else. A directory that is ours but
/// readable by others is narrowed to 0700. Anything else is refused, naming the fix.
pub fn private_dir(dir: &Path) -> Result<File> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    let bad = |why: String| InterfereError::UnsafeRunDir {
        path: dir.to_path_buf(),
        why,
    };
    let mut b = std::fs::DirBuilder::new();
    b.mode(0o700);
    match b.create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Parents (e.g. ~/.local/state) are ordinary directories; only the last is private.
            b.recursive(true)
                .create(dir)
                .map_err(|e| InterfereError::io(dir, e))?;
        }
        Err(e) => return Err(InterfereError::io(dir, e)),
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(dir)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                bad("it is a symlink or not a directory".into())
            }
            _ => InterfereError::io(dir, e),
        })?;
    let md = f.metadata().map_err(|e| InterfereError::io(dir, e))?;
    let me = crate::sys::euid();
    if md.uid() != me {
        return Err(bad(format!(
            "it belongs to uid {}, not to uid {me}",
            md.uid()
        )));
    }
    let mode = md.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(bad(format!("its mode {mode:o} lets others write in it")));
    }
    if mode & 0o077 != 0 {
        f.set_permissions(std::fs::Permissions::from_mode(0o700))
            .map_err(|e| InterfereError::io(dir, e))?;
    }
    Ok(f)
}

/// Opens a file in the private directory without following a symlink, creating it (0600) when
/// `create`, and checks it is a regular file of this user. `Ok(None)` when it does not exist.
fn open_own(path: &Path, create: bool, write: bool) -> Result<Option<File>> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .create(create)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(InterfereError::BadJournal {
                path: path.to_path_buf(),
                why: "it is a symlink, which disktier never creates".into(),
            })
        }
        Err(e) => return Err(InterfereError::io(path, e)),
    };
    let md = f.metadata().map_err(|e| InterfereError::io(path, e))?;
    if !md.file_type().is_file() || md.uid() != crate::sys::euid() {
        return Err(InterfereError::BadJournal {
            path: path.to_path_buf(),
            why: format!(
                "it is not a regular file owned by this user (uid {}, owner {})",
                crate::sys::euid(),
                md.uid()
            ),
        });
    }
    Ok(Some(f))
}

/// Parses and checks a journal's bytes: valid JSON of the documented shape, at most
/// [`MAX_ENTRIES`] entries, each passing [`Change::check`]. Touches nothing.
pub fn parse(bytes: &[u8]) -> std::result::Result<Vec<Change>, String> {
    if bytes.len() as u64 > MAX_JOURNAL_BYTES {
        return Err(format!(
            "it holds {} bytes, more than any run writes ({MAX_JOURNAL_BYTES})",
            bytes.len()
        ));
    }
    let doc: JournalDoc = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if doc.entries.len() > MAX_ENTRIES {
        return Err(format!("it lists {} entries", doc.entries.len()));
    }
    doc.entries
        .into_iter()
        .map(|e| {
            e.change
                .check()
                .map_err(|why| format!("entry {} ({}): {why}", e.id, e.what))?;
            Ok(e.change)
        })
        .collect()
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
        // Record only what a later restore will accept.
        change.check().map_err(|why| {
            InterfereError::BadInput(format!(
                "refusing to make a change a restore could not undo: {why}"
            ))
        })?;
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
    /// Returns what could not be put back but did not fail the undo (see
    /// [`Change::undo_noting`]), to be reported.
    pub fn undo(&mut self, id: u64) -> Result<Vec<String>> {
        let Some(pos) = self.doc.entries.iter().position(|e| e.id == id) else {
            return Ok(vec![]);
        };
        let notes = self.doc.entries[pos].change.undo_noting()?;
        self.doc.entries.remove(pos);
        self.save()?;
        Ok(notes)
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
            match e.change.undo_noting() {
                Ok(notes) => r.undone.push(with_notes(e.what, &notes)),
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
    private_dir(dir)?;
    let lock_path = dir.join("interfere.lock");
    let mut f = open_own(&lock_path, true, true)?
        .ok_or_else(|| InterfereError::io(&lock_path, std::io::ErrorKind::NotFound.into()))?;
    if !sys::try_lock(&f).map_err(|e| InterfereError::io(&lock_path, e))? {
        let mut pid = String::new();
        let _ = std::io::Read::take(&f, 32).read_to_string(&mut pid);
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
    let Some(f) = open_own(path, false, false)? else {
        return Ok(r);
    };
    let mut text = Vec::new();
    std::io::Read::take(&f, MAX_JOURNAL_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| InterfereError::io(path, e))?;
    let bad = |why: String| InterfereError::BadJournal {
        path: path.to_path_buf(),
        why,
    };
    let mut changes = parse(&text).map_err(bad)?;
    // Every entry is checked before the first is replayed: all or nothing.
    for c in &changes {
        c.check_target().map_err(|why| bad(format!("{c}: {why}")))?;
    }
    let mut kept = Vec::new();
    while let Some(c) = changes.pop() {
        match c.undo_noting() {
            Ok(notes) => r.undone.push(with_notes(c.to_string(), &notes)),
            Err(err) => {
                r.failed.push(format!("{c}: {err}"));
                kept.push(c);
            }
        }
    }
    if kept.is_empty() {
        std::fs::remove_file(path).map_err(|e| InterfereError::io(path, e))?;
    } else {
        kept.reverse();
        let doc = JournalDoc {
            schema_version: 1,
            owner_pid: std::process::id(),
            entries: kept
                .into_iter()
                .enumerate()
                .map(|(i, change)| Entry {
                    id: i as u64 + 1,
                    what: change.to_string(),
                    change,
                })
                .collect(),
        };
        write_synced(path, &serde_json::to_vec_pretty(&doc).unwrap_or_default())?;
    }
    Ok(r)
}

/// An undone change in words, with what of it could not be put back.
fn with_notes(what: String, notes: &[String]) -> String {
    if notes.is_empty() {
        what
    } else {
        format!("{what} (not all put back: {})", notes.join("; "))
    }
}

/// Replaces `path` with `bytes` durably: write a temp file, fsync it, rename, fsync the dir.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("journal.tmp");
    // Only this user can write in the private directory, so a leftover is ours (a killed save);
    // O_EXCL|O_NOFOLLOW still guarantees the bytes land in a new file and nowhere else.
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(InterfereError::io(&tmp, e)),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .map_err(|e| InterfereError::io(&tmp, e))?;
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
#[path = "tests.rs"]
mod tests;
