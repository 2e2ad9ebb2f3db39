//! The textfile collector's directory: checked before measuring, written atomically.

use anyhow::{bail, Context};
use std::io::Write;
use std::path::{Path, PathBuf};

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
        let probe = dir.join(format!(".disktier-probe.{}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
        {
            Ok(_) => {
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

    /// Writes `text` to `DIR/disktier_<command>.prom` atomically: a temporary file in DIR (its
    /// name does not end in .prom, so the collector never reads it half written), fsync,
    /// rename over the old file, fsync of the directory. Returns the file's path.
    pub fn write(&self, command: &str, text: &str) -> anyhow::Result<PathBuf> {
        let dest = self.file(command);
        let tmp = self.0.join(format!(
            ".disktier_{command}.prom.{}.tmp",
            std::process::id()
        ));
        let result = (|| -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &dest)?;
            std::fs::File::open(&self.0)?.sync_all()
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(e).with_context(|| format!("cannot write {}", dest.display()));
        }
        Ok(dest)
    }
}
