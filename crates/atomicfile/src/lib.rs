//! Replace a file whole or not at all.
//!
//! Every file disktier writes in place of another (a report, rendered units, a catalog, a
//! trace, a Prometheus textfile, setup's fstab) is written the same way, here:
//!
//! 1. a new temporary file beside the destination, named `.NAME.<random>.tmp` and created with
//!    `O_EXCL` (tempfile), so it is never a link planted there and a reader that lists the
//!    directory for `*.prom` or `NAME` never sees it half written;
//! 2. the bytes written, the file given its [`Mode`] by `fchmod` (so the umask does not cut it,
//!    unless the mode says it should), and synced;
//! 3. renamed over the destination (rename(2) replaces a link planted there, it never writes
//!    through it), and the directory synced, so the rename survives a crash.
//!
//! A crash or an error leaves the old file or the new one, never half of one. A [`Staged`] file
//! that is dropped before [`Staged::commit`] is removed. Writing several files all or nothing
//! is staging them all first, then committing them. A destination that is (or links to) a
//! device node or a socket is refused before anything is made: a rename would replace it.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The mode the new file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Exactly this (`fchmod`, the umask does not apply).
    Exact(u32),
    /// The mode of the regular file it replaces; this one when there is none.
    KeepOr(u32),
    /// This mode less the umask, as `File::create` would give a new file (`0o666`).
    Umask(u32),
}

/// A step of [`Staged`]'s write that failed, with the path it was writing and the error (its
/// source: shown after the message by `{:#}` or a caller's own wording).
#[derive(Debug, thiserror::Error)]
pub enum AtomicError {
    /// The temporary file could not be made in the destination's directory (it does not
    /// exist, is not writable, is on a read-only filesystem, ...).
    #[error("cannot create a temporary file in {}", dir.display())]
    Create {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Writing, syncing or renaming failed (a full filesystem, an I/O error).
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl AtomicError {
    /// The underlying I/O error.
    pub fn io(&self) -> &std::io::Error {
        match self {
            AtomicError::Create { source, .. } | AtomicError::Write { source, .. } => source,
        }
    }

    /// The underlying I/O error, for a caller whose own error names the path.
    pub fn into_io(self) -> std::io::Error {
        match self {
            AtomicError::Create { source, .. } | AtomicError::Write { source, .. } => source,
        }
    }
}

/// The directory `path` is in: `.` for a bare file name.
pub fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// What a destination that must not be replaced is, in words: a device node or a socket (a
/// service's). A FIFO is replaced as a file is: one planted in a textfile directory must not
/// hold the write (the Prometheus textfile writer counts on it).
fn special(m: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    Some(if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        return None;
    })
}

/// A temporary file beside its destination, not yet in its place.
#[derive(Debug)]
pub struct Staged {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    chmod: Option<u32>,
}

impl Staged {
    /// An empty temporary file beside `path` (step 1), to be written through [`Staged::file`].
    ///
    /// A destination that is (or links to) a device node or a socket is refused: the rename
    /// would put a regular file in its place. QA: `catalog import aws-offer ... -o /dev/full`
    /// said 'wrote /dev/full' and left a regular file where the device node was; as root,
    /// `-o /dev/sdb` would have done it to a disk's node, and `-o /dev/stdout` to the link.
    pub fn beside(path: &Path, mode: Mode) -> Result<Staged, AtomicError> {
        if let Some(kind) = std::fs::metadata(path).ok().and_then(|m| special(&m)) {
            return Err(AtomicError::Write {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("it is {kind}, not a regular file, and a file is written by renaming a new one over the old, which would put a regular file in its place: give the path of a regular file"),
                ),
            });
        }
        let dir = dir_of(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix).suffix(".tmp");
        // `None`: the mode the file was created with, less the umask, is its mode.
        let chmod = match mode {
            Mode::Exact(m) => Some(m),
            Mode::KeepOr(new) => Some(match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_file() => m.permissions().mode() & 0o7777,
                _ => new,
            }),
            Mode::Umask(m) => {
                b.permissions(std::fs::Permissions::from_mode(m));
                None
            }
        };
        let tmp = b.tempfile_in(dir).map_err(|source| AtomicError::Create {
            dir: dir.to_path_buf(),
            source,
        })?;
        Ok(Staged {
            tmp,
            path: path.to_path_buf(),
            chmod,
        })
    }

    /// [`Staged::beside`] with `bytes` written.
    pub fn with(path: &Path, bytes: &[u8], mode: Mode) -> Result<Staged, AtomicError> {
        let mut s = Staged::beside(path, mode)?;
        s.file().write_all(bytes).map_err(|e| s.error(e))?;
        Ok(s)
    }

    /// The temporary file, to write into.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A write error of this file, naming its destination.
    pub fn error(&self, source: std::io::Error) -> AtomicError {
        AtomicError::Write {
            path: self.path.clone(),
            source,
        }
    }

    /// Gives the file its mode, syncs it, renames it over the destination and syncs the
    /// directory (steps 2 and 3). On an error the temporary file is removed.
    pub fn commit(self) -> Result<(), AtomicError> {
        let Staged { tmp, path, chmod } = self;
        let err = |source| AtomicError::Write {
            path: path.clone(),
            source,
        };
        chmod
            .map_or(Ok(()), |m| {
                tmp.as_file()
                    .set_permissions(std::fs::Permissions::from_mode(m))
            })
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(err)?;
        tmp.persist(&path).map_err(|e| err(e.error))?;
        // The rename is durable once the directory is; a directory that cannot be opened for
        // reading (no read permission) still got the rename.
        if let Ok(d) = File::open(dir_of(&path)) {
            d.sync_all().map_err(err)?;
        }
        Ok(())
    }
}

/// Replaces `path` with `bytes`: [`Staged::with`], then [`Staged::commit`].
pub fn replace(path: &Path, bytes: &[u8], mode: Mode) -> Result<(), AtomicError> {
    Staged::with(path, bytes, mode)?.commit()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
