//! The textfile collector's directory: checked before measuring, written atomically.
//!
//! The directory is often writable by others (a node_exporter group) while disktier runs as
//! root from cron, so nothing is opened by a name someone could plant: the temporary file is
//! created with `O_CREAT | O_EXCL | O_NOFOLLOW` under a random name (a name that exists, a
//! symlink included, is skipped for another), and renamed over the target, which replaces a
//! symlink planted there, never what it points to (rename(2)).

use anyhow::{bail, Context};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The mode of the file written: node_exporter usually runs as another user than a root cron
/// job and must be able to read it, whatever the umask.
const MODE: u32 = 0o644;

/// A directory node_exporter's textfile collector reads, checked to be a writable directory
/// before anything is measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextfileDir(PathBuf);

impl TextfileDir {
    /// Checks that `dir` is a directory this process can create files in, by creating (and
    /// removing) one: permission bits say nothing about read-only mounts or root.
    pub fn check(dir: &Path) -> anyhow::Result<TextfileDir> {
        let fix = "give a writable directory (node_exporter's --collector.textfile.directory)";
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!("--textfile-dir {}: not a directory: {fix}", dir.display()),
            Err(e) => bail!("--textfile-dir {}: {e}: {fix}", dir.display()),
        }
        match create_exclusive(dir, random_names(".disktier-probe.")) {
            Ok((probe, _)) => {
                let _ = std::fs::remove_file(&probe);
                Ok(TextfileDir(dir.to_path_buf()))
            }
            Err(e) => bail!(
                "--textfile-dir {}: cannot create a file in it ({e}): {fix}",
                dir.display()
            ),
        }
    }

    /// `DIR/disktier_<command>.prom`.
    pub fn file(&self, command: &str) -> PathBuf {
        self.0.join(format!("disktier_{command}.prom"))
    }

    /// Writes `text` to `DIR/disktier_<command>.prom` atomically: a new temporary file in DIR
    /// (its name does not end in .prom, so the collector never reads it half written), mode
    /// 0644, fsync, rename over the old file, fsync of the directory. Returns the file's path.
    pub fn write(&self, command: &str, text: &str) -> anyhow::Result<PathBuf> {
        self.write_named(
            command,
            text,
            random_names(&format!(".disktier_{command}.prom.")),
        )
    }

    /// [`TextfileDir::write`] with the temporary file's candidate names given (tests plant
    /// files at them).
    fn write_named(
        &self,
        command: &str,
        text: &str,
        names: impl Iterator<Item = String>,
    ) -> anyhow::Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let dest = self.file(command);
        let (tmp, mut f) = create_exclusive(&self.0, names)
            .with_context(|| format!("cannot create a temporary file in {}", self.0.display()))?;
        let result = (|| -> std::io::Result<()> {
            f.write_all(text.as_bytes())?;
            // fchmod: the mode the file was created with went through the umask.
            f.set_permissions(std::fs::Permissions::from_mode(MODE))?;
            f.sync_all()?;
            std::fs::rename(&tmp, &dest)?;
            File::open(&self.0)?.sync_all()
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(e).with_context(|| format!("cannot write {}", dest.display()));
        }
        Ok(dest)
    }
}

/// Creates a new file in `dir` under the first of `names` that does not exist, with
/// `O_CREAT | O_EXCL | O_NOFOLLOW` (an existing name, a symlink or a dangling one included, is
/// EEXIST or ELOOP and skipped, never opened); gives up after 100 names.
fn create_exclusive(
    dir: &Path,
    names: impl Iterator<Item = String>,
) -> std::io::Result<(PathBuf, File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut last = None;
    for name in names.take(100) {
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e)
                if e.kind() == std::io::ErrorKind::AlreadyExists
                    || e.raw_os_error() == Some(libc::ELOOP) =>
            {
                last = Some(e)
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no name left to try")))
}

/// `{prefix}{16 random hex digits}.tmp`, a new draw each time.
fn random_names(prefix: &str) -> impl Iterator<Item = String> + '_ {
    std::iter::repeat_with(move || format!("{prefix}{:016x}.tmp", random_u64()))
}

/// Random bits without a dependency: std's randomly keyed hasher (a new key per call) over the
/// pid, a counter and the clock.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Regression (QA): the temporary file had a predictable name and was opened with
    /// `File::create`, so a symlink planted at that name made a root cron job overwrite the
    /// file it pointed to, and left the .prom file a symlink to it.
    #[test]
    fn a_planted_symlink_is_never_written_through() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim.txt");
        std::fs::write(&victim, "victim content").unwrap();
        let dir = t.path().join("tf");
        std::fs::create_dir(&dir).unwrap();
        // At the name the old code used, at the first name tried, and at the target itself.
        let old_name = dir.join(format!(".disktier_check.prom.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &old_name).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("planted.tmp")).unwrap();
        std::os::unix::fs::symlink(t.path().join("nowhere"), dir.join("dangling.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("disktier_check.prom")).unwrap();
        let d = TextfileDir::check(&dir).unwrap();
        let names = ["planted.tmp", "dangling.tmp", "fresh.tmp"].map(String::from);
        let p = d.write_named("check", "x 1\n", names.into_iter()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim content");
        assert!(
            !t.path().join("nowhere").exists(),
            "a dangling link was followed"
        );
        let md = std::fs::symlink_metadata(&p).unwrap();
        assert!(md.file_type().is_file(), "the symlink itself is replaced");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x 1\n");
        assert_eq!(md.permissions().mode() & 0o777, MODE);
        assert!(!dir.join("fresh.tmp").exists(), "renamed, not left");
        // The random names: nothing left behind, the planted links untouched.
        d.write("check", "x 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x 2\n");
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let old = old_name.file_name().unwrap().to_string_lossy().into_owned();
        let mut want = vec![
            old,
            "dangling.tmp".into(),
            "disktier_check.prom".into(),
            "planted.tmp".into(),
        ];
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn names_that_all_exist_give_up_with_the_reason() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.tmp"), "").unwrap();
        let e = create_exclusive(t.path(), std::iter::repeat("a.tmp".to_string())).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    }
}
