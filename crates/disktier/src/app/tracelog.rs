//! The engine's I/O log as a DTTRACE file: what `bench --trace` and `trace record` write. It
//! joins two libraries (the engine's `IoLog` and the cache simulator's trace writer), so it lives
//! in the application rather than in either.

use anyhow::Context;
use disktier_cachesim::trace::{Header, Record, Writer, FLAG_LATENCY};
use disktier_cachesim::Op;
use disktier_engine::{IoLog, IoOp, IoRecord};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The engine's I/O log writing a DTTRACE file. Records arrive from every worker thread; a
/// mutex around a buffered writer is cheap next to the I/O itself. The trailer is written by
/// [`TraceLog::finish`] or, failing that, when the log is dropped.
pub struct TraceLog {
    path: PathBuf,
    inner: Mutex<LogState>,
    /// Mark writes REQ_SYNC: O_DIRECT writes reach the block layer with REQ_SYNC | REQ_IDLE
    /// (fs/iomap/direct-io.c), which moves bcache's writeback cutoff from 40 % to 70 %.
    sync_writes: bool,
}

struct LogState {
    writer: Option<Writer<BufWriter<File>>>,
    error: Option<String>,
}

impl TraceLog {
    pub fn create(path: &Path) -> anyhow::Result<TraceLog> {
        Self::create_with(path, false)
    }

    /// A log whose writes are flagged REQ_SYNC (for jobs with `direct`).
    pub fn create_with(path: &Path, sync_writes: bool) -> anyhow::Result<TraceLog> {
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let header = Header::new("disktier-engine", start, FLAG_LATENCY);
        let w = Writer::create(path, &header).with_context(|| {
            format!(
                "cannot write the trace to {}: pick a writable -o path",
                path.display()
            )
        })?;
        Ok(TraceLog {
            path: path.to_path_buf(),
            inner: Mutex::new(LogState {
                writer: Some(w),
                error: None,
            }),
            sync_writes,
        })
    }

    /// Writes the trailer; returns the number of records. When writing failed (the filesystem
    /// filled up, say) the partial trace is removed and the error says why.
    pub fn finish(&self) -> anyhow::Result<u64> {
        let mut st = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let stored = st.error.take();
        let w = st.writer.take();
        let res = match (stored, w) {
            (Some(e), _) => Err(e),
            (None, None) => return Ok(0),
            (None, Some(w)) => {
                let n = w.count();
                w.finish().map(|_| n).map_err(|e| e.to_string())
            }
        };
        res.map_err(|e| {
            let _ = std::fs::remove_file(&self.path);
            let full = e.contains("No space left") || e.contains("quota exceeded");
            anyhow::anyhow!(
                "writing the trace {} failed ({e}){}; the partial trace was removed",
                self.path.display(),
                if full {
                    ": its filesystem is full, free space or write the trace (-o) elsewhere"
                } else {
                    ""
                }
            )
        })
    }

    /// Drops a trace whose run failed: no partial file is left behind.
    pub fn discard(&self) {
        let mut st = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        st.writer.take();
        let _ = std::fs::remove_file(&self.path);
    }
}

impl IoLog for TraceLog {
    fn record(&self, rec: IoRecord) {
        let op = match rec.op {
            IoOp::Read => Op::Read,
            IoOp::Write => Op::Write,
            IoOp::Sync => Op::Sync,
        };
        let r = Record {
            t_ns: rec.t_ns,
            offset: rec.offset,
            len: rec.len,
            op,
            sync: op == Op::Sync || (op == Op::Write && self.sync_writes),
            stream: 0,
            latency_ns: rec.latency_ns,
        };
        let mut st = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if st.error.is_some() {
            return;
        }
        if let Some(w) = st.writer.as_mut() {
            if let Err(e) = w.write(&r) {
                st.error = Some(e.to_string());
            }
        }
    }
}

/// The I/O log behind `bench --trace FILE`: a DTTRACE writer that finishes its file when the
/// last reference is dropped.
pub fn open_io_log(path: &Path) -> anyhow::Result<Arc<dyn IoLog>> {
    Ok(Arc::new(TraceLog::create(path)?))
}

/// Refuses fio for `trace record`: only the native engine sees every I/O.
pub fn needs_native(tool: super::measure::Tool) -> anyhow::Result<()> {
    if tool != super::measure::Tool::Native {
        anyhow::bail!(
            "trace record needs the native engine (it sees every I/O): drop --engine fio"
        );
    }
    Ok(())
}

/// A recorded run: the measurement and how many I/Os the trace holds.
pub struct Recorded {
    pub measurement: super::measure::Measurement,
    pub records: u64,
}

/// `trace record`: measures `req` (native engine only: it sees every I/O) while every I/O it
/// issues goes to a new trace at `output`; a run that fails leaves no trace behind. `stop` and
/// `progress` come from the front end, as for [`super::measure::measure_request`].
pub fn record(
    mut req: super::measure::Request<'_>,
    output: &Path,
    stop: Arc<std::sync::atomic::AtomicBool>,
    progress: Option<Arc<disktier_engine::ProgressFn>>,
) -> anyhow::Result<Recorded> {
    needs_native(req.run.tool)?;
    // Resolved here only to learn whether writes are O_DIRECT (the measurement resolves again).
    let direct = match req.workload()? {
        disktier_engine::Workload::Job(j) => j.direct,
        _ => false,
    };
    let log = Arc::new(TraceLog::create_with(output, direct)?);
    req.io_log = Some(log.clone() as Arc<dyn IoLog>);
    let measurement = match super::measure::measure_request(req, stop, progress) {
        Ok(m) => m,
        Err(e) => {
            log.discard();
            return Err(e);
        }
    };
    let records = log.finish()?;
    Ok(Recorded {
        measurement,
        records,
    })
}
