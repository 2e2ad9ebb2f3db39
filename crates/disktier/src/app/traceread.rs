//! Reading a trace file once with a progress report: the bytes read are counted as the reader
//! takes them, and a callback hears, about once a second, how far the pass has got (`simulate`
//! and `trace stats` draw their progress line from it).

use disktier_cachesim::{Reader, TraceError};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How far a pass over a trace has got: the bytes of the trace file read so far (a consumer
/// runs at most a few chunks behind the reader, docs/trace.md) out of the file's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replaying {
    pub elapsed: Duration,
    pub read_bytes: u64,
    /// 0 when the size is unknown (a FIFO).
    pub total_bytes: u64,
}

impl Replaying {
    /// The time left at the rate so far, when the size is known and something was read.
    pub fn eta(&self) -> Option<Duration> {
        if self.total_bytes == 0 || self.read_bytes == 0 {
            return None;
        }
        let left = self.total_bytes.saturating_sub(self.read_bytes) as f64;
        Some(self.elapsed.mul_f64(left / self.read_bytes as f64))
    }
}

/// The callback a pass reports its progress to.
pub type ProgressFn<'a> = &'a (dyn Fn(&Replaying) + Sync);

/// A file that counts the bytes read from it into `read`.
pub struct Counted {
    file: File,
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens the trace at `path` counting what is read into `read`; its size in bytes too (0 for
/// what is not a regular file).
pub fn open_counted(
    path: &Path,
    read: Arc<AtomicU64>,
) -> Result<(Reader<BufReader<Counted>>, u64), TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    let total = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len());
    let input = BufReader::with_capacity(1 << 16, Counted { file, read });
    Ok((Reader::new(input, &path.display().to_string())?, total))
}

/// Runs `work`, calling `progress` (when given) every second until it returns, with the bytes
/// `read` counts out of `total_bytes`.
pub fn ticking<T>(
    progress: Option<ProgressFn<'_>>,
    read: &AtomicU64,
    total_bytes: u64,
    work: impl FnOnce() -> T,
) -> T {
    let Some(progress) = progress else {
        return work();
    };
    let start = Instant::now();
    let (done, ticks) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) =
                ticks.recv_timeout(Duration::from_secs(1))
            {
                progress(&Replaying {
                    elapsed: start.elapsed(),
                    read_bytes: read.load(Ordering::Relaxed),
                    total_bytes,
                });
            }
        });
        let out = work();
        drop(done);
        out
    })
}
