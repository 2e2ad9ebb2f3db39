//! The types the run loop and the I/O backends share: how to run ([`RunOptions`]), what a
//! run reports while it goes ([`Progress`], [`IoLog`]) and what it returns ([`Measured`]).
//! The backends (uring, sync_io, worker, plan, layout, smallfiles) depend on these and not
//! on the run loop, so that no file of the engine imports one that imports it back.

use crate::result::RunDoc;
use hdrhistogram::Histogram;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// How to run, beyond the job itself.
#[derive(Clone)]
pub struct RunOptions {
    /// Set by Ctrl-C: the run stops within a second and the result is marked interrupted.
    pub stop: Arc<AtomicBool>,
    /// Called about every 250 ms.
    pub progress: Option<Arc<ProgressFn>>,
    /// Keep the files disktier created (fio keeps them; disktier leaves nothing behind by default).
    pub keep_files: bool,
    /// Allow writes to a block device that holds a filesystem, a partition table, a mount or holders.
    pub destructive: bool,
    /// Lay out files before reads (default true; `--no-layout` only extends them, sparse).
    pub layout: bool,
    /// Receives every I/O issued, for `trace record`.
    pub io_log: Option<Arc<dyn IoLog>>,
    /// Copied into the result document.
    pub profile: Option<String>,
    pub quick: bool,
    /// How the run's warnings name job options: the command line's (`pass --direct`) or a fio
    /// job file's (`set direct=1`), as errors do ([`crate::Spelling`]).
    pub spelling: crate::Spelling,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            stop: Arc::new(AtomicBool::new(false)),
            progress: None,
            keep_files: false,
            destructive: false,
            layout: true,
            io_log: None,
            profile: None,
            quick: false,
            spelling: crate::Spelling::CommandLine,
        }
    }
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("keep_files", &self.keep_files)
            .field("destructive", &self.destructive)
            .field("layout", &self.layout)
            .field("profile", &self.profile)
            .field("quick", &self.quick)
            .field("spelling", &self.spelling)
            .finish_non_exhaustive()
    }
}

/// The progress callback's type.
pub type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// A progress report.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Since the I/O started (layout excluded, ramp included).
    pub elapsed: Duration,
    pub eta: Option<Duration>,
    /// Over the last report interval.
    pub iops: f64,
    pub bw_bytes: f64,
    /// p99 of the measured phase so far (about a second behind): of the syncs when the job
    /// syncs (etcd's figure), of the I/Os otherwise.
    pub p99_ns: Option<u64>,
    /// "layout", "ramp" or "run".
    pub phase: &'static str,
}

/// A sink for every I/O the engine issues (`disktier trace record`).
pub trait IoLog: Send + Sync {
    fn record(&self, rec: IoRecord);
}

#[derive(Debug, Clone, Copy)]
pub struct IoRecord {
    /// Submission time, ns since the I/O phase started.
    pub t_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub op: IoOp,
    pub latency_ns: u64,
    /// Which address space `offset` is in: the jobs that do I/O to one file or device share
    /// one (the first such job's number), and a job with a file of its own (numjobs on a
    /// directory) has its own, so that a trace keeps the jobs' files apart.
    pub stream: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoOp {
    Read,
    Write,
    Sync,
}

/// A finished run: the document and the merged histograms (for baselines and plots).
#[derive(Debug, Clone)]
pub struct Measured {
    /// Complete except for verdicts.
    pub doc: RunDoc,
    pub read_hist: Option<Histogram<u64>>,
    pub write_hist: Option<Histogram<u64>>,
    pub sync_hist: Option<Histogram<u64>>,
}

/// Removes the files disktier created when dropped (also on errors and interrupts).
pub(crate) struct Created {
    pub paths: Vec<PathBuf>,
    pub keep: bool,
}

impl Drop for Created {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for p in &self.paths {
            if p.is_dir() {
                let _ = std::fs::remove_dir_all(p);
            } else {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}
