//! What fio's default text report (`--output-format=normal`) says about a run, as read:
//! figures in nanoseconds and bytes, each `None` where the report does not print it.

use std::collections::BTreeMap;

/// A job's options line: `NAME: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..., ioengine=psync,
/// iodepth=1`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextHeader {
    pub rw: Option<String>,
    /// Read and write block size, when each is one size (`4096B-4096B`).
    pub bs_read: Option<u64>,
    pub bs_write: Option<u64>,
    pub ioengine: Option<String>,
    pub iodepth: Option<u32>,
}

/// A `clat`/`lat`/`sync` line (`min=, max=, avg=, stdev=`) in nanoseconds, as rounded by fio to
/// its unit; with the percentile block that follows its direction, if any.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextLat {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stdev: f64,
}

/// One direction's figures (`read:` or `write:` and the lines under it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextDir {
    /// `IOPS=45.2k` (3 significant digits).
    pub iops: f64,
    /// `BW=177MiB/s`, in bytes a second (3 significant digits).
    pub bw_bytes: f64,
    /// `(29.0MiB/15937msec)`: the bytes (rounded) and the run time (exact, ms).
    pub io_bytes: f64,
    pub runtime_ms: u64,
    pub clat: Option<TextLat>,
    pub lat: Option<TextLat>,
    /// Percentile (fio's, e.g. 99.0) to nanoseconds (fio rounds up to its unit).
    pub clat_percentiles: BTreeMap<String, u64>,
    pub lat_percentiles: BTreeMap<String, u64>,
}

/// The `fsync/fdatasync/sync_file_range:` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextSync {
    pub lat: Option<TextLat>,
    pub percentiles: BTreeMap<String, u64>,
}

/// One job's report: `NAME: (groupid=0, jobs=1): err= 0: pid=...: DATE` and its lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextJob {
    pub name: String,
    pub groupid: u32,
    /// `jobs=N`: with group_reporting, how many jobs the figures sum.
    pub jobs: u32,
    pub error: u64,
    /// `Thu Sep 14 07:56:37 2023`: when the job ended, in the host's local time (no zone).
    pub ended: Option<String>,
    pub header: Option<TextHeader>,
    pub read: Option<TextDir>,
    pub write: Option<TextDir>,
    /// `trim:` (rw=trim, randtrim, trimwrite): read, but not a direction of disktier's result.
    pub trim: Option<TextDir>,
    pub sync: Option<TextSync>,
    /// `cpu : usr=1.14%, sys=5.69%`: percentages of the job's run time.
    pub usr_pct: Option<f64>,
    pub sys_pct: Option<f64>,
    /// `issued rwts: total=R,W,T,X`: exact counts of reads and writes.
    pub issued: Option<(u64, u64)>,
    /// Its third count: trims.
    pub issued_trims: Option<u64>,
}

/// One direction of a `Run status group N (all jobs):` section: `READ: bw=95.7MiB/s (100MB/s),
/// 47.8MiB/s-47.9MiB/s (...), io=192MiB (201MB), run=2003-2006msec`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TextGroupDir {
    /// The group's bytes, as rounded by fio (3 significant digits).
    pub io_bytes: f64,
    /// Its aggregate bandwidth (the bytes over the longest run), bytes a second.
    pub bw_bytes: f64,
    /// The shortest and longest run time of its jobs, ms.
    pub run_ms: (u64, u64),
}

/// A `Run status group N (all jobs):` section: fio's totals of reporting group N.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextGroup {
    pub id: u32,
    pub read: Option<TextGroupDir>,
    pub write: Option<TextGroupDir>,
    pub trim: Option<TextGroupDir>,
}

/// The whole report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextReport {
    /// `fio-3.33`.
    pub version: Option<String>,
    pub jobs: Vec<TextJob>,
    /// The first device of `Disk stats (read/write):`.
    pub device: Option<String>,
    /// The `Run status group` sections, in the file's order (at most [`super::MAX_JOBS`]).
    pub groups: Vec<TextGroup>,
    /// Lines over the length limit, skipped.
    pub long_lines: usize,
}
