//! Laying out files before a job runs, as fio does: a read job (or a mixed one) needs real data
//! to read, so a file shorter than the job's region is filled with non-zero data; a write-only
//! job gets its space reserved with fallocate(2) (fio's default `fallocate=native`), without
//! writing. With `layout: false` a short file is only extended (sparse), which is quick but
//! reads of the holes never touch the disk.

use crate::error::EngineError;
use crate::plan::Rng;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Chunk size for laying out: large enough to stream, small enough to stop quickly.
const CHUNK: usize = 1 << 20;

/// What was done to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Laid {
    AlreadyBigEnough,
    Filled,
    Reserved,
    Sparse,
}

/// Makes `file` (at `path`) at least `need` bytes long. `fill`: write data (read jobs).
/// `layout`: false to only extend. `progress` gets bytes written so far.
pub fn lay_out(
    file: &File,
    path: &Path,
    need: u64,
    fill: bool,
    layout: bool,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64),
) -> Result<Laid, EngineError> {
    let io = |op: &'static str| {
        move |e: std::io::Error| EngineError::Io {
            path: path.to_path_buf(),
            op,
            source: e,
        }
    };
    let len = file.metadata().map_err(io("stat"))?.len();
    if len >= need {
        return Ok(Laid::AlreadyBigEnough);
    }
    if !layout {
        file.set_len(need).map_err(io("ftruncate"))?;
        return Ok(Laid::Sparse);
    }
    if !fill {
        // Reserve the blocks like fio; filesystems without fallocate just grow on write.
        match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, need) {
            Ok(()) => return Ok(Laid::Reserved),
            Err(e) if e == rustix::io::Errno::NOSPC => {
                return Err(io("fallocate")(std::io::Error::from(e)))
            }
            Err(_) => return Ok(Laid::AlreadyBigEnough),
        }
    }
    let mut buf = vec![0u8; CHUNK];
    Rng::new(need).fill(&mut buf);
    let mut off = len;
    while off < need {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let n = ((need - off) as usize).min(CHUNK);
        file.write_all_at(&buf[..n], off)
            .map_err(io("write (layout)"))?;
        off += n as u64;
        progress(off - len);
    }
    file.sync_all().map_err(io("fsync (layout)"))?;
    Ok(Laid::Filled)
}

/// The warning for a read job's file that `--no-layout` only extended.
pub fn sparse_warning(path: &Path) -> String {
    format!(
        "{} was extended without data (--no-layout): reads of its holes do not touch the disk",
        path.display()
    )
}

/// Drops the file's pages from the page cache (fio's `invalidate=1`), so buffered reads start cold.
pub fn drop_cache(file: &File) {
    let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_reserves_or_extends() {
        let d = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let p = d.path().join("r");
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&p)
            .unwrap();
        let mut seen = 0;
        let r = lay_out(&f, &p, 3 * CHUNK as u64 + 5, true, true, &stop, &mut |b| {
            seen = b
        })
        .unwrap();
        assert_eq!(r, Laid::Filled);
        assert_eq!(seen, 3 * CHUNK as u64 + 5);
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), 3 * CHUNK + 5);
        assert!(
            data.iter().filter(|b| **b == 0).count() < data.len() / 100,
            "mostly non-zero"
        );
        assert_eq!(
            lay_out(&f, &p, 100, true, true, &stop, &mut |_| ()).unwrap(),
            Laid::AlreadyBigEnough
        );

        let p = d.path().join("w");
        let f = File::create(&p).unwrap();
        let r = lay_out(&f, &p, 1 << 20, false, true, &stop, &mut |_| ()).unwrap();
        assert!(matches!(r, Laid::Reserved | Laid::AlreadyBigEnough));

        let p = d.path().join("s");
        let f = File::create(&p).unwrap();
        assert_eq!(
            lay_out(&f, &p, 1 << 20, true, false, &stop, &mut |_| ()).unwrap(),
            Laid::Sparse
        );
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
    }
}
