//! The textfile collector's directory: checked before measuring, written atomically.
//!
//! The directory is often writable by others (a node_exporter group) while disktier runs as
//! root from cron, so nothing is opened by a name someone could plant: the temporary file is
//! made by `tempfile` (`O_CREAT | O_EXCL` under a random name: a name that exists, a symlink
//! or a dangling one included, fails with EEXIST and another is drawn), and renamed over the
//! target, which replaces a symlink planted there, never what it points to (rename(2)).

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
        match temp_in(dir, ".disktier-probe.") {
            // Removed when dropped.
            Ok(_probe) => Ok(TextfileDir(dir.to_path_buf())),
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
        use std::os::unix::fs::PermissionsExt;
        let dest = self.file(command);
        let mut tmp = temp_in(&self.0, &format!(".disktier_{command}.prom."))
            .with_context(|| format!("cannot create a temporary file in {}", self.0.display()))?;
        // On an error the temporary file is removed when `tmp` drops.
        let result = (|| -> std::io::Result<()> {
            tmp.write_all(text.as_bytes())?;
            // fchmod: the file was created 0600, and a mode given at creation goes through
            // the umask.
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(MODE))?;
            tmp.as_file().sync_all()?;
            Ok(())
        })()
        .and_then(|()| tmp.persist(&dest).map(drop).map_err(|e| e.error))
        .and_then(|()| File::open(&self.0)?.sync_all());
        result.with_context(|| format!("cannot write {}", dest.display()))?;
        Ok(dest)
    }
}

/// A new temporary file in `dir` named `{prefix}<random>.tmp` (module doc).
fn temp_in(dir: &Path, prefix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .tempfile_in(dir)
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
        // At the name the old code used, and at the target itself.
        let old_name = dir.join(format!(".disktier_check.prom.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &old_name).unwrap();
        std::os::unix::fs::symlink(t.path().join("nowhere"), dir.join("dangling.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("disktier_check.prom")).unwrap();
        let d = TextfileDir::check(&dir).unwrap();
        let p = d.write("check", "x 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim content");
        assert!(
            !t.path().join("nowhere").exists(),
            "a dangling link was followed"
        );
        let md = std::fs::symlink_metadata(&p).unwrap();
        assert!(md.file_type().is_file(), "the symlink itself is replaced");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x 1\n");
        assert_eq!(md.permissions().mode() & 0o777, MODE);
        d.write("check", "x 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x 2\n");
        // Nothing left behind (no probe, no temporary file), the planted links untouched.
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let old = old_name.file_name().unwrap().to_string_lossy().into_owned();
        let mut want = vec![old, "dangling.tmp".into(), "disktier_check.prom".into()];
        want.sort();
        assert_eq!(left, want);
    }
}
