//! Who else has a file open: a file the run would lay out that exists already may be another
//! run's, still in use (QA: two `check etcd DIR` started together, the second was told that a
//! killed run may have left `etcd.0.0`, and to pass --destructive, which would have had two
//! runs write one file and measure each other).

use crate::error::EngineError;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// At most this many processes are named.
const NAMED: usize = 3;

/// [`EngineError::FileInUse`] when another process has `path` open now, else
/// [`EngineError::ExistingFile`].
pub fn existing(path: &Path, len: u64, why: &'static str) -> EngineError {
    let by = openers(path);
    if by.is_empty() {
        EngineError::ExistingFile {
            path: path.to_path_buf(),
            len,
            why,
        }
    } else {
        EngineError::FileInUse {
            path: path.to_path_buf(),
            by: by.join(", "),
        }
    }
}

/// The processes other than this one with `path` open (`pid N (COMM)`), from `/proc/PID/fd`:
/// stat(2) follows each fd's link to the open file, whatever name it was opened by.
fn openers(path: &Path) -> Vec<String> {
    let Ok(m) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let (dev, ino) = (m.dev(), m.ino());
    let me = std::process::id();
    let mut by = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return by;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let open = fds
            .flatten()
            .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|f| f.dev() == dev && f.ino() == ino));
        if open {
            let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            by.push(format!("pid {pid} ({})", comm.trim()));
            if by.len() == NAMED {
                break;
            }
        }
    }
    by
}

#[cfg(test)]
mod tests {
    /// A file this test's child process holds open is named with the child's pid; one nobody
    /// holds is an ordinary existing file.
    #[test]
    fn a_file_another_process_holds_open_is_in_use() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("etcd.0.0");
        std::fs::write(&f, b"x").unwrap();
        let e = super::existing(&f, 1, "is a write job");
        assert!(matches!(e, crate::EngineError::ExistingFile { .. }), "{e}");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .stdin(std::fs::File::open(&f).unwrap())
            .spawn()
            .unwrap();
        let e = super::existing(&f, 1, "is a write job");
        let _ = child.kill();
        let _ = child.wait();
        let text = e.to_string();
        assert!(matches!(e, crate::EngineError::FileInUse { .. }), "{text}");
        assert!(
            text.contains(&format!("pid {} (sleep)", child.id())),
            "{text}"
        );
        assert!(!text.contains("--destructive"), "{text}");
    }
}
