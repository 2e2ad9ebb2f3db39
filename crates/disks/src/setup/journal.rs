//! The journal of `setup --undo` ([`super::undo`]): before the first change, what is to be
//! undone (the device, its UUID, the bind targets, the choices) is written to a private file
//! and fsynced (file and directory), so a re-run after a kill or a failure reads it and
//! completes the undo, even when the mount that identified the device is already gone. Read
//! back, it is trusted only as a private regular file of this user, and every path in it is
//! checked again before it reaches a command.

use super::SetupError;
use crate::valid::MountPath;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What to do with the content of bind-mounted directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BindChoice {
    /// Copy what the bind shows (it lives on the local disk) back into the directory underneath.
    CopyBack,
    /// Leave the directory underneath as it is (the disk's copy goes with the disk).
    Keep,
}

/// The journal: what an undo in progress is undoing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub mount: String,
    /// The device setup made (`None` when the filesystem was no longer mounted).
    pub device: Option<String>,
    pub uuid: String,
    /// Bind targets, deepest first.
    pub binds: Vec<String>,
    pub bind_choice: Option<BindChoice>,
    pub wipe: bool,
}

/// The journal file for `mount`.
pub fn journal_path(root: &Path, mount: &MountPath) -> PathBuf {
    root.join("var/lib/disktier").join(format!(
        "undo-{}.json",
        crate::valid::unit_escape_path(mount)
    ))
}

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> SetupError {
    let path = p.to_path_buf();
    move |source| SetupError::Io { path, source }
}

/// Writes the journal and fsyncs it and its directory, before any change.
pub(crate) fn write_journal(path: &Path, j: &Journal) -> Result<(), SetupError> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let tmp = path.with_extension("json.tmp");
    let body = serde_json::to_vec_pretty(j).map_err(|e| SetupError::Config(e.to_string()))?;
    let _ = std::fs::remove_file(&tmp);
    let mut f = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(io(&tmp))?
    };
    f.write_all(&body).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir))?;
    Ok(())
}

/// The largest undo journal read: one holds a device, a UUID and a few bind targets.
const MAX_JOURNAL: u64 = 1 << 20;

/// The journal of the undo of `mount` at `path`, when there is one and it can be trusted: every
/// path in it is one setup itself would have recorded (a bind target a `MountPath`, the device a
/// `DevicePath`), or it is refused with the fix (remove it).
pub fn read_journal(path: &Path, mount: &MountPath) -> Result<Option<Journal>, SetupError> {
    // The journal tells a root process what to unmount and wipe: only a regular file owned by
    // this user, writable by no one else, is trusted.
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) => {
            let me = std::fs::metadata("/proc/self")
                .map(|p| p.uid())
                .unwrap_or(0);
            if !m.is_file() || m.uid() != me || m.mode() & 0o022 != 0 {
                return Err(SetupError::Config(format!(
                    "{} is not a private regular file of this user: it is not trusted as an undo journal; remove it",
                    path.display()
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    }
    // At most one byte past the cap is read, whatever the file's size (QA: it was read whole,
    // then measured); O_NOFOLLOW|O_NONBLOCK: nothing swapped in since the look above is followed
    // or waited on.
    let opened = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
    };
    let mut text = Vec::new();
    match opened {
        Ok(f) => {
            use std::io::Read;
            f.take(MAX_JOURNAL + 1)
                .read_to_end(&mut text)
                .map_err(io(path))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    }
    if text.len() as u64 > MAX_JOURNAL {
        return Err(SetupError::Config(format!(
            "{} is larger than {} bytes, too large to be an undo journal: remove it",
            path.display(),
            MAX_JOURNAL
        )));
    }
    let j: Journal = serde_json::from_slice(&text).map_err(|e| {
        SetupError::Config(format!(
            "{} is not a valid undo journal ({e}): remove it and run the undo again",
            path.display()
        ))
    })?;
    if j.mount != mount.as_str() {
        return Err(SetupError::Config(format!(
            "{} is the journal of an undo of {}, not {mount}: remove it",
            path.display(),
            j.mount
        )));
    }
    // Every path in it is checked again before it reaches a command.
    for b in &j.binds {
        MountPath::parse("--bind", b)
            .map_err(|e| SetupError::Config(format!("{}: {e}", path.display())))?;
    }
    // The device is what `setup --devices` takes (fuzz_setup_journal: "/dev/\u{1b}[2J", a
    // NUL, "/dev/./sda" or "/dev/" alone passed a check of "/dev/", ".." and blanks, and
    // reached blkid and wipefs as root).
    if let Some(d) = &j.device {
        if super::DevicePath::parse(d).is_err() {
            return Err(SetupError::Config(format!(
                "{}: {d:?} is not a device path: remove the journal",
                path.display()
            )));
        }
    }
    Ok(Some(j))
}

#[cfg(test)]
mod tests {
    /// A journal past the cap is refused having read one byte past it: a 4 GiB sparse file
    /// was read whole before (QA), and now costs nothing.
    #[test]
    fn a_journal_past_the_cap_is_refused_unread() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("undo.json");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(4 << 30).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mount = crate::valid::MountPath::parse("--mount", "/srv/data").unwrap();
        let e = super::read_journal(&path, &mount).unwrap_err().to_string();
        assert!(e.contains("is larger than 1048576 bytes"), "{e}");
    }
}
