//! The textfile collector's directory: checked before measuring, written atomically.
//!
//! The directory is often writable by others (a node_exporter group) while disktier runs as
//! root from cron, so nothing is opened by a name someone could plant: the temporary file is
//! made by `tempfile` (`O_CREAT | O_EXCL` under a random name: a name that exists, a symlink
//! or a dangling one included, fails with EEXIST and another is drawn), and renamed over the
//! target, which replaces a symlink planted there, never what it points to (rename(2)).

use anyhow::bail;
use disktier_atomicfile::{Mode, Staged};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The mode of the file written: node_exporter usually runs as another user than a root cron
/// job and must be able to read it, whatever the umask.
const MODE: u32 = 0o644;

/// `--textfile-name`: the file's name in the directory, without `.prom` (a trailing `.prom` is
/// taken off): letters, digits, `_`, `-` and `.`, not starting with `.` (the collector reads
/// `*.prom` files, and a dot file is a temporary one here), at most [`NAME_MAX`] bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextfileName(String);

/// The longest `--textfile-name`: room for `.prom` and the temporary file's affixes in a
/// 255-byte file name.
const NAME_MAX: usize = 200;

impl TextfileName {
    pub fn parse(s: &str) -> Result<TextfileName, String> {
        let base = s.strip_suffix(".prom").unwrap_or(s);
        let ok = !base.is_empty()
            && base.len() <= NAME_MAX
            && !base.starts_with('.')
            && base
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if ok {
            Ok(TextfileName(base.to_string()))
        } else {
            Err(format!(
                "{:?} is not a textfile name: use 1 to {NAME_MAX} letters, digits, '_', '-' or '.', not starting with '.' (e.g. disktier_check_etcd; .prom is added)",
                s.escape_debug().to_string()
            ))
        }
    }
}

/// A directory node_exporter's textfile collector reads, checked to be a writable directory
/// before anything is measured, and the file's name in it when `--textfile-name` gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextfileDir(PathBuf, Option<TextfileName>);

/// What [`TextfileDir::write`] did.
#[derive(Debug)]
pub struct Written {
    pub path: PathBuf,
    /// The `path` labels the replaced file held that the new one does not: another target's
    /// figures, gone from the collector (two checks into one file).
    pub replaced_paths: Vec<String>,
}

/// How much of an existing textfile is read to see whose figures it held.
const READ_OLD_MAX: u64 = 4 << 20;

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
        // Removed when dropped.
        match Staged::beside(&dir.join("disktier-probe"), Mode::Exact(MODE)) {
            Ok(_probe) => Ok(TextfileDir(dir.to_path_buf(), None)),
            Err(e) => bail!(
                "--textfile-dir {}: cannot create a file in it ({}): {fix}",
                dir.display(),
                e.io()
            ),
        }
    }

    /// The same directory, its file named `name` (`--textfile-name`).
    pub fn named(self, name: Option<TextfileName>) -> TextfileDir {
        TextfileDir(self.0, name)
    }

    /// The file's name without `.prom`: `--textfile-name`, else `disktier_<command>`.
    fn stem(&self, command: &str) -> String {
        match &self.1 {
            Some(TextfileName(n)) => n.clone(),
            None => format!("disktier_{command}"),
        }
    }

    /// `DIR/disktier_<command>.prom`, or `DIR/NAME.prom`.
    pub fn file(&self, command: &str) -> PathBuf {
        self.0.join(format!("{}.prom", self.stem(command)))
    }

    /// Writes `text` to [`TextfileDir::file`] atomically ([`disktier_atomicfile`]): a new
    /// temporary file in DIR (its name does not end in .prom, so the collector never reads it
    /// half written), mode 0644, fsync, rename over the old file, fsync of the directory.
    /// Returns the file's path and the targets whose figures the old file held and the new one
    /// does not.
    pub fn write(&self, command: &str, text: &str) -> anyhow::Result<Written> {
        let dest = self.file(command);
        let replaced_paths = {
            let new = path_labels(text);
            old_paths(&dest).difference(&new).cloned().collect()
        };
        disktier_atomicfile::replace(&dest, text.as_bytes(), Mode::Exact(MODE))?;
        Ok(Written {
            path: dest,
            replaced_paths,
        })
    }
}

/// The `path` labels of the textfile at `dest`, if it is a regular file (not followed through
/// a symlink; at most [`READ_OLD_MAX`] bytes read).
fn old_paths(dest: &Path) -> BTreeSet<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // O_NOFOLLOW: not through a planted symlink; O_NONBLOCK: a FIFO planted at the name does
    // not hold a root cron job forever (its open would wait for a writer).
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dest);
    let mut bytes = Vec::new();
    if let Ok(f) = opened {
        if f.metadata().is_ok_and(|m| m.is_file()) {
            let _ = f.take(READ_OLD_MAX).read_to_end(&mut bytes);
        }
    }
    path_labels(&String::from_utf8_lossy(&bytes))
}

/// The distinct values of the `path` label in an exposition's samples, unescaped (`\\`,
/// `\"`, `\n`; text format 0.0.4). A line that does not parse is passed over.
pub fn path_labels(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some(open) = line.find('{') else { continue };
        let mut rest = &line[open + 1..];
        // name="value" pairs, comma separated, up to the closing brace.
        while let Some(eq) = rest.find("=\"") {
            let name = rest[..eq].trim_start_matches([',', ' ']);
            let mut value = String::new();
            let mut chars = rest[eq + 2..].char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, e)) => value.push(e),
                        None => break,
                    },
                    '"' => {
                        end = Some(eq + 2 + i + 1);
                        break;
                    }
                    c => value.push(c),
                }
            }
            let Some(end) = end else { break };
            if name == "path" {
                out.insert(value);
            }
            rest = &rest[end..];
            if rest.starts_with('}') {
                break;
            }
        }
    }
    out
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
        let p = d.write("check", "x 1\n").unwrap().path;
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

    /// The `path` labels are read from sample lines only, unescaped, each once; a value may
    /// hold `="`, commas and braces (escaped as the format says).
    #[test]
    fn path_labels_are_read_as_the_format_escapes_them() {
        let text = concat!(
            "# HELP x a \"path\" label\n",
            "# TYPE x gauge\n",
            "x{command=\"check\",node=\"n\",path=\"/srv/a\"} 1\n",
            "y{path=\"/srv/a\",device=\"sda\"} 2\n",
            "x{node=\"path=\\\"/no\\\"\",path=\"/b \\\"q\\\",}{\\\\c\\nd\"} 3\n",
            "z 4\n",
            "broken{path=\"/cut\n",
        );
        let got: Vec<String> = path_labels(text).into_iter().collect();
        assert_eq!(got, ["/b \"q\",}{\\c\nd", "/srv/a"]);
        assert!(path_labels("").is_empty());
    }

    #[test]
    fn textfile_names_are_checked() {
        assert_eq!(
            TextfileName::parse("etcd_disk.prom").unwrap(),
            TextfileName("etcd_disk".into())
        );
        for bad in [
            "",
            ".x",
            "a/b",
            "..",
            "a\u{202e}b",
            &"n".repeat(NAME_MAX + 1),
        ] {
            assert!(TextfileName::parse(bad).is_err(), "{bad:?}");
        }
    }

    /// Fuzz target (bolero): any bytes as an old textfile (whoever can write the collector's
    /// directory writes it): [`path_labels`] gives labels or none, never a panic or a hang,
    /// and each label is at most as long as the text. Corpus:
    /// `tests/__fuzz__/fuzz_textfile_labels/corpus`.
    #[test]
    fn fuzz_textfile_labels() {
        disktier_testkit::fuzz_target!("fuzz_textfile_labels", |input| {
            let text = String::from_utf8_lossy(input);
            for l in path_labels(&text) {
                assert!(l.len() <= text.len());
            }
        });
    }

    /// Reading the old file's labels never waits on a FIFO planted at its name (whoever can
    /// write the collector's directory can plant one), and reads at most [`READ_OLD_MAX`].
    #[test]
    fn a_planted_fifo_or_huge_file_does_not_hold_the_write() {
        let t = tempfile::tempdir().unwrap();
        let d = TextfileDir::check(t.path()).unwrap();
        let fifo = t.path().join("disktier_check.prom");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let w = d.write("check", "x{path=\"/a\"} 1\n").unwrap();
        assert!(w.replaced_paths.is_empty());
        assert!(std::fs::symlink_metadata(&w.path).unwrap().is_file());
        // 8 MiB of distinct paths: only the first 4 MiB are read.
        let big: String = (0..200_000)
            .map(|i| format!("x{{path=\"/p{i:036}\"}} 1\n"))
            .collect();
        std::fs::write(&w.path, &big).unwrap();
        let w = d.write("check", "x{path=\"/a\"} 1\n").unwrap();
        let n = w.replaced_paths.len();
        assert!(n > 50_000 && n < 200_000, "{n}");
    }
}
