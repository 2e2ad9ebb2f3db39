//! Running a job: check the target, lay out files, start `numjobs` threads on the chosen
//! backend, report progress about four times a second, stop on the runtime or on the stop flag,
//! and turn the threads' accumulators into the result document. Files disktier created are
//! removed at the end (unless `keep_files`), also when the run fails or is interrupted.

use crate::error::EngineError;
use crate::job::{IoEngineKind, Job};
use crate::layout::{self, Laid};
use crate::plan::{now_ns, Plan};
use crate::profile::Workload;
use crate::result::{Cpu, Results, RunDoc, Sample, SCHEMA_VERSION};
use crate::stats::{interval_hist, DirAcc, SecRecord};
use crate::sync_io::SyncEngine;
use crate::target::{self, Classified, Kind};
use crate::uring::{self, UringEngine};
use crate::worker::{Engine, Live, Recorder, SyncKind, WorkerCtx};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Keeps the calling thread on the CPUs of `list` (fio's `cpus_allowed`); nothing when empty.
fn pin_thread(list: &str) -> Result<(), EngineError> {
    if list.is_empty() {
        return Ok(());
    }
    let cpus = crate::job::parse_cpu_list(list).map_err(|why| EngineError::BadOption {
        option: "cpus_allowed",
        value: list.to_string(),
        fix: why,
    })?;
    let mut set = rustix::thread::CpuSet::new();
    for c in cpus {
        set.set(c as usize);
    }
    rustix::thread::sched_setaffinity(None, &set).map_err(|e| EngineError::BadOption {
        option: "cpus_allowed",
        value: list.to_string(),
        fix: format!(
            "the kernel refused it ({e}): name CPUs this machine has online (see nproc or /sys/devices/system/cpu/online)"
        ),
    })
}

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

/// Runs a profile's workload.
pub fn run_workload(w: &Workload, opts: &RunOptions) -> Result<Measured, EngineError> {
    match w {
        Workload::Job(j) => run(j, opts),
        Workload::SmallFiles {
            dir,
            files,
            file_size,
        } => crate::smallfiles::run(dir, *files, *file_size, opts),
    }
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

/// One file (or device) the job threads use, and its region.
#[derive(Debug)]
struct FileUse {
    path: PathBuf,
    /// Start and length of the region each thread works on.
    start: u64,
    len: u64,
    existed: bool,
    cur_len: u64,
}

/// Works out the files, regions and checks for `job` on the classified target.
fn plan_files(
    job: &Job,
    c: &Classified,
    warnings: &mut Vec<String>,
) -> Result<Vec<FileUse>, EngineError> {
    let t = &job.target;
    let uses = match c.kind {
        Kind::Directory => {
            let size = job
                .size
                .ok_or_else(|| EngineError::SizeRequired { path: t.clone() })?;
            (0..job.numjobs)
                .map(|j| {
                    let path = t.join(format!("{}.{j}.0", job.name));
                    let cur = std::fs::metadata(&path).ok();
                    if let Some(m) = &cur {
                        if !m.is_file() {
                            return Err(EngineError::WrongKind {
                                path: path.clone(),
                                is: "directory or special file",
                                wanted: "disktier creates its per-job files there".into(),
                                fix: "remove it or pass another --name".into(),
                            });
                        }
                    }
                    Ok(FileUse {
                        path,
                        start: job.offset,
                        len: size,
                        existed: cur.is_some(),
                        cur_len: cur.map_or(0, |m| m.len()),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        }
        Kind::File | Kind::NewFile => {
            let len = match job.size {
                Some(s) => s,
                None if c.kind == Kind::File && c.len > job.offset => c.len - job.offset,
                None if c.kind == Kind::File => {
                    return Err(EngineError::EmptyRegion {
                        path: t.clone(),
                        len: c.len,
                        offset: job.offset,
                    })
                }
                None => return Err(EngineError::SizeRequired { path: t.clone() }),
            };
            vec![FileUse {
                path: t.clone(),
                start: job.offset,
                len,
                existed: c.kind == Kind::File,
                cur_len: c.len,
            }]
        }
        Kind::Device => {
            if job.offset >= c.len {
                return Err(EngineError::EmptyRegion {
                    path: t.clone(),
                    len: c.len,
                    offset: job.offset,
                });
            }
            let avail = c.len - job.offset;
            let len = match job.size {
                Some(s) if s > avail => {
                    warnings.push(format!(
                        "size {} is larger than {} from offset {}: using the {} bytes there are",
                        s,
                        t.display(),
                        job.offset,
                        avail
                    ));
                    avail
                }
                Some(s) => s,
                None => avail,
            };
            vec![FileUse {
                path: t.clone(),
                start: job.offset,
                len,
                existed: true,
                cur_len: c.len,
            }]
        }
    };
    for u in &uses {
        if u.len < job.bs {
            return Err(EngineError::BadOption {
                option: "size",
                value: u.len.to_string(),
                fix: format!(
                    "{} has room for less than one block of bs={}: pass a larger --size or smaller --bs",
                    u.path.display(),
                    job.bs
                ),
            });
        }
    }
    Ok(uses)
}

/// The checks that refuse a run before anything is written.
fn check_target(
    job: &Job,
    c: &Classified,
    uses: &[FileUse],
    opts: &RunOptions,
) -> Result<(), EngineError> {
    let t = &job.target;
    if c.kind == Kind::Device {
        if let Some(p) = opts
            .profile
            .as_deref()
            .and_then(crate::profile::Profile::from_name)
        {
            if p.needs_filesystem() {
                return Err(EngineError::WrongKind {
                    path: job.target.clone(),
                    is: "block device",
                    wanted: format!("the {p} profile measures a filesystem"),
                    fix: "pass a directory on the filesystem to test (e.g. /var/lib/etcd)".into(),
                });
            }
        }
    }
    if job.direct {
        target::check_direct(c, t)?;
        if let Some(lbs) = c.logical_block_size.filter(|l| *l > 512) {
            for (option, value) in [("bs", job.bs), ("offset", job.offset)] {
                if value % lbs != 0 {
                    return Err(EngineError::DirectAlignment {
                        path: t.clone(),
                        option,
                        value,
                        align: lbs,
                    });
                }
            }
        }
    }
    if c.kind == Kind::Device && job.rw.writes() && !opts.destructive {
        if let Some(why) = target::device_in_use(t, c)? {
            return Err(target::refuse(t, why));
        }
    }
    if c.kind != Kind::Device && !opts.destructive {
        for u in uses.iter().filter(|u| u.existed) {
            let why = if job.rw.writes() {
                Some("is a write job")
            } else if u.start + u.len > u.cur_len {
                Some("read job would have to grow it (layout)")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(EngineError::ExistingFile {
                    path: u.path.clone(),
                    len: u.cur_len,
                    why,
                });
            }
        }
    }
    if c.kind != Kind::Device {
        let need: u64 = uses
            .iter()
            .map(|u| (u.start + u.len).saturating_sub(u.cur_len))
            .sum();
        if let Some(free) = c.free {
            if need > free {
                return Err(EngineError::NoSpace {
                    path: t.clone(),
                    need,
                    free,
                });
            }
        }
    }
    Ok(())
}

/// The checks [`run`] makes before any I/O, for callers that hand the job to another engine
/// (`--engine fio`): validates the job, classifies the target and refuses unsafe or impossible
/// runs with the same errors. Returns the target's description for the result document.
/// (Added by the engine-CLI area.)
pub fn preflight(job: &Job, opts: &RunOptions) -> Result<crate::result::TargetInfo, EngineError> {
    job.validate()?;
    let c = target::classify(&job.target)?;
    let uses = plan_files(job, &c, &mut Vec::new())?;
    check_target(job, &c, &uses, opts)?;
    Ok(c.info)
}

/// Picks the backend, falling back to psync (with a warning) when io_uring is unavailable.
fn choose_engine(job: &Job, warnings: &mut Vec<String>) -> IoEngineKind {
    let probe = if job.ioengine == IoEngineKind::IoUring {
        uring::probe()
    } else {
        Ok(())
    };
    engine_after_probe(job, probe, warnings)
}

/// [`choose_engine`] given the probe's answer (separate so that the fallback can be tested
/// without turning io_uring off on the machine).
fn engine_after_probe(
    job: &Job,
    probe: Result<(), String>,
    warnings: &mut Vec<String>,
) -> IoEngineKind {
    if job.ioengine == IoEngineKind::IoUring {
        if let Err(why) = probe {
            warnings.push(format!(
                "io_uring is unavailable ({why}): fell back to psync, where iodepth has no effect"
            ));
            return IoEngineKind::Psync;
        }
    }
    job.ioengine
}

fn open_for_job(path: &Path, job: &Job, device: bool) -> Result<File, EngineError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    let mut flags = 0;
    if job.rw.writes() {
        o.write(true);
        if device {
            // Exclusive open: fails with EBUSY if the device is mounted or claimed by md/dm.
            flags |= libc::O_EXCL;
        }
    }
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    o.custom_flags(flags);
    let access = if job.rw.writes() { "write" } else { "read" };
    // Right after a device was written and closed, the kernel's partition rescan and udev's
    // probe can hold it exclusively for a moment: retry EBUSY for up to a second before saying
    // it is busy (a mounted device stays busy).
    let mut tries = 0;
    loop {
        match o.open(path) {
            Ok(f) => return Ok(f),
            Err(e) if device && e.raw_os_error() == Some(libc::EBUSY) && tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(EngineError::from_open(path, access, e)),
        }
    }
}

struct WorkerOut {
    read: DirAcc,
    write: DirAcc,
    sync: DirAcc,
    last_ns: u64,
    ramp_end: u64,
}

/// Runs `job` and measures it. When the filesystem fills up the error is
/// [`EngineError::DiskFull`], and the files this run created are already removed.
pub fn run(job: &Job, opts: &RunOptions) -> Result<Measured, EngineError> {
    run_inner(job, opts).map_err(EngineError::full_disk)
}

fn run_inner(job: &Job, opts: &RunOptions) -> Result<Measured, EngineError> {
    job.validate()?;
    let started_at = now_rfc3339();
    let c = target::classify(&job.target)?;
    let mut warnings = Vec::new();
    let uses = plan_files(job, &c, &mut warnings)?;
    check_target(job, &c, &uses, opts)?;
    if !job.direct && job.rw.reads() && job.time_based {
        let region: u64 = uses.iter().map(|u| u.len).sum();
        if region < mem_total() {
            warnings.push(format!(
                "buffered reads loop over {} MiB, which fits in RAM: after the first pass they \
                 measure the page cache, not the disk; pass --direct",
                region >> 20
            ));
        }
    }
    let mut resolved = job.clone();
    resolved.size = Some(uses[0].len);
    resolved.ioengine = choose_engine(job, &mut warnings);
    if resolved.ioengine != IoEngineKind::IoUring && job.iodepth > 1 {
        warnings.push(format!(
            "ioengine {} issues one I/O at a time: iodepth={} has no effect (as in fio)",
            resolved.ioengine, job.iodepth
        ));
    }

    let mut created = Created {
        paths: Vec::new(),
        keep: opts.keep_files,
    };

    // Lay out (or reserve) what is short, with a plain buffered handle.
    let device = c.kind == Kind::Device;
    if !device {
        let total: u64 = uses
            .iter()
            .map(|u| (u.start + u.len).saturating_sub(u.cur_len))
            .sum();
        let mut done_before = 0u64;
        let t_layout = now_ns();
        for u in &uses {
            let mut o = std::fs::OpenOptions::new();
            o.read(true).write(true).truncate(false);
            if !u.existed {
                // The file did not exist when the target was checked: create it exclusively and
                // refuse a symlink, so that nothing planted in between is followed or overwritten.
                o.create_new(true).custom_flags(libc::O_NOFOLLOW);
            }
            let f = o.open(&u.path).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => EngineError::ExistingFile {
                    path: u.path.clone(),
                    len: 0,
                    why: "appeared after disktier checked the target",
                },
                _ => EngineError::from_open(&u.path, "write", e),
            })?;
            if !u.existed {
                // Only what this run created is removed at the end.
                created.paths.push(u.path.clone());
            }
            let mut report = |b: u64| {
                if let Some(p) = &opts.progress {
                    let el = Duration::from_nanos(now_ns() - t_layout);
                    let rate = (done_before + b) as f64 / el.as_secs_f64().max(1e-9);
                    let left = total.saturating_sub(done_before + b) as f64;
                    p(&Progress {
                        elapsed: el,
                        eta: (rate > 0.0).then(|| Duration::from_secs_f64(left / rate)),
                        iops: 0.0,
                        bw_bytes: rate,
                        p99_ns: None,
                        phase: "layout",
                    });
                }
            };
            let laid = layout::lay_out(
                &f,
                &u.path,
                u.start + u.len,
                job.rw.reads(),
                opts.layout,
                &opts.stop,
                &mut report,
            )?;
            if laid == Laid::Sparse && job.rw.reads() {
                warnings.push(layout::sparse_warning(&u.path));
            }
            if !job.direct && job.rw.reads() {
                layout::drop_cache(&f);
            }
            done_before += (u.start + u.len).saturating_sub(u.cur_len);
        }
    }

    // Open the job's handles: one per file (threads on the same file or device share it).
    let mut files: Vec<File> = Vec::new();
    for u in &uses {
        files.push(open_for_job(&u.path, job, device)?);
    }
    let align = c.logical_block_size.unwrap_or(512).max(512) as usize;
    let align = if job.direct { align.max(4096) } else { 4096 };

    let n = job.numjobs as usize;
    let stop = AtomicBool::new(false);
    let live: Vec<Live> = (0..n).map(|_| Live::default()).collect();
    let finished = AtomicUsize::new(0);
    let barrier = Barrier::new(n + 1);
    let (tx, rx) = std::sync::mpsc::channel::<SecRecord>();
    let ramp_ns = job.ramp_time.as_nanos() as u64;
    let runtime_ns = job.runtime.map(|r| r.as_nanos() as u64);
    let sync_kind = if job.fdatasync > 0 {
        SyncKind::Fdatasync
    } else if job.fsync > 0 {
        SyncKind::Fsync
    } else {
        SyncKind::None
    };
    let sync_every = if job.rw.writes() {
        job.fdatasync.max(job.fsync)
    } else {
        0
    };
    let io_log: Option<&dyn IoLog> = opts.io_log.as_deref();
    let total_ios: Option<u64> = if job.time_based {
        None
    } else {
        Some(
            (0..n)
                .map(|j| {
                    let u = &uses[j.min(uses.len() - 1)];
                    Plan::new(job, j as u32, u.start, u.len).blocks()
                })
                .sum(),
        )
    };

    let mut interrupted = false;
    let mut secs: BTreeMap<u64, SecRecord> = BTreeMap::new();
    let mut p99_so_far = interval_hist();
    let mut cpu = Cpu::default();

    // Stopped while laying out: no I/O phase, an interrupted (empty) result.
    let stopped_early = opts.stop.load(Ordering::Relaxed);
    interrupted |= stopped_early;
    let outs: Vec<Result<WorkerOut, EngineError>> = if stopped_early {
        drop(tx);
        Vec::new()
    } else {
        std::thread::scope(|s| {
            let mut handles = Vec::new();
            for j in 0..n {
                let u = &uses[j.min(uses.len() - 1)];
                let file = &files[j.min(files.len() - 1)];
                let (live, stop, barrier, finished) = (&live[j], &stop, &barrier, &finished);
                let tx = tx.clone();
                let resolved = &resolved;
                handles.push(s.spawn(move || {
                    let pinned = pin_thread(&resolved.cpus_allowed);
                    barrier.wait();
                    if let Err(e) = pinned {
                        stop.store(true, Ordering::Relaxed);
                        finished.fetch_add(1, Ordering::Release);
                        return Err(e);
                    }
                    let t0 = now_ns();
                    let rec = Recorder::new(t0, ramp_ns, runtime_ns, tx, live, stop, io_log);
                    let ramp_end = rec.ramp_end();
                    let mut ctx = WorkerCtx {
                        jobnum: j as u32,
                        file,
                        path: &u.path,
                        plan: Plan::new(resolved, j as u32, u.start, u.len),
                        bs: resolved.bs,
                        iodepth: resolved.iodepth,
                        batch: resolved.iodepth_batch_submit,
                        sync: sync_kind,
                        sync_every,
                        align,
                        seed: resolved.randseed.wrapping_add(j as u64 + 1),
                        rec,
                    };
                    let r = match resolved.ioengine {
                        IoEngineKind::IoUring => UringEngine.run(&mut ctx),
                        IoEngineKind::Psync => SyncEngine { positional: true }.run(&mut ctx),
                        IoEngineKind::Sync => SyncEngine { positional: false }.run(&mut ctx),
                    };
                    if r.is_err() {
                        // One thread failing stops the others.
                        stop.store(true, Ordering::Relaxed);
                    }
                    finished.fetch_add(1, Ordering::Release);
                    r.map(|_| WorkerOut {
                        last_ns: ctx.rec.last_ns,
                        ramp_end,
                        read: std::mem::take(&mut ctx.rec.read),
                        write: std::mem::take(&mut ctx.rec.write),
                        sync: std::mem::take(&mut ctx.rec.sync),
                    })
                }));
            }
            drop(tx);
            barrier.wait();
            let t0 = now_ns();
            let ramp_end = t0 + ramp_ns;
            let mut cpu0 = if ramp_ns == 0 {
                Some(uring::sys::cpu_times())
            } else {
                None
            };
            let tick = 250_000_000u64;
            let mut next_report = t0 + tick;
            let (mut last_ios, mut last_bytes, mut last_t) = (0u64, 0u64, t0);
            while finished.load(Ordering::Acquire) < n {
                let now = now_ns();
                let wake = if cpu0.is_none() {
                    next_report.min(ramp_end)
                } else {
                    next_report
                };
                if wake > now {
                    // Short sleeps so that a stop request or the end is seen quickly.
                    std::thread::sleep(Duration::from_nanos((wake - now).min(50_000_000)));
                }
                let now = now_ns();
                if cpu0.is_none() && now >= ramp_end {
                    cpu0 = Some(uring::sys::cpu_times());
                }
                if opts.stop.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    interrupted = true;
                    stop.store(true, Ordering::Relaxed);
                }
                for r in rx.try_iter() {
                    let _ = p99_so_far.add(if sync_every > 0 { &r.sync } else { &r.lat });
                    merge_sec(&mut secs, r);
                }
                if now >= next_report {
                    next_report = now + tick;
                    let ios: u64 = live.iter().map(|l| l.ios.load(Ordering::Relaxed)).sum();
                    let bytes: u64 = live.iter().map(|l| l.bytes.load(Ordering::Relaxed)).sum();
                    let dt = (now - last_t) as f64 / 1e9;
                    let elapsed = Duration::from_nanos(now - t0);
                    let eta = match (runtime_ns, total_ios) {
                        (Some(r), _) if job.time_based => {
                            Some(Duration::from_nanos((ramp_ns + r).saturating_sub(now - t0)))
                        }
                        (_, Some(total)) if ios > 0 => {
                            let rate = ios as f64 / elapsed.as_secs_f64();
                            let left = total.saturating_sub(ios) as f64 / rate;
                            let by_time = runtime_ns
                                .map(|r| ((ramp_ns + r).saturating_sub(now - t0)) as f64 / 1e9)
                                .unwrap_or(f64::MAX);
                            Some(Duration::from_secs_f64(left.min(by_time).max(0.0)))
                        }
                        _ => None,
                    };
                    if let Some(p) = &opts.progress {
                        p(&Progress {
                            elapsed,
                            eta,
                            iops: (ios - last_ios) as f64 / dt,
                            bw_bytes: (bytes - last_bytes) as f64 / dt,
                            p99_ns: (!p99_so_far.is_empty())
                                .then(|| p99_so_far.value_at_quantile(0.99)),
                            phase: if now < ramp_end { "ramp" } else { "run" },
                        });
                    }
                    (last_ios, last_bytes, last_t) = (ios, bytes, now);
                }
            }
            let outs: Vec<_> = handles
                .into_iter()
                .enumerate()
                .map(|(j, h)| {
                    h.join()
                        .unwrap_or(Err(EngineError::WorkerPanicked(j as u32)))
                })
                .collect();
            let cpu1 = uring::sys::cpu_times();
            let cpu0 = cpu0.unwrap_or(cpu1);
            cpu = Cpu {
                usr_s: (cpu1.0 - cpu0.0).max(0.0),
                sys_s: (cpu1.1 - cpu0.1).max(0.0),
            };
            if opts.stop.load(Ordering::Relaxed) {
                interrupted = true;
            }
            outs
        })
    };
    for r in rx.try_iter() {
        merge_sec(&mut secs, r);
    }

    let mut read = DirAcc::default();
    let mut write = DirAcc::default();
    let mut sync = DirAcc::default();
    let mut dur_ns = 0u64;
    for o in outs {
        let o = o?;
        read.merge(&o.read);
        write.merge(&o.write);
        sync.merge(&o.sync);
        dur_ns = dur_ns.max(o.last_ns.saturating_sub(o.ramp_end));
    }
    if let (Some(r), true) = (runtime_ns, job.time_based && !interrupted) {
        // A time-based run that was not stopped measured exactly its runtime (fio reports it so
        // too), even if its last completion came a little before the end (a slow sync).
        dur_ns = r;
    }
    let secs_f = dur_ns as f64 / 1e9;
    let series = build_series(&secs, secs_f);
    let results = Results {
        read: job.rw.reads().then(|| read.dir_stats(secs_f)),
        write: job.rw.writes().then(|| write.dir_stats(secs_f)),
        sync: (sync_every > 0).then(|| sync.sync_stats(secs_f)),
        cpu,
        small_files: None,
    };
    let doc = RunDoc {
        schema_version: SCHEMA_VERSION,
        engine: "disktier".into(),
        profile: opts.profile.clone(),
        quick: opts.quick,
        job: resolved.to_json(),
        target: c.info.clone(),
        host: crate::host::detect(),
        started_at,
        duration_s: secs_f,
        interrupted,
        results,
        series,
        verdicts: Vec::new(),
        warnings,
    };
    drop(files);
    drop(created);
    Ok(Measured {
        doc,
        read_hist: job.rw.reads().then_some(read.hist),
        write_hist: job.rw.writes().then_some(write.hist),
        sync_hist: (sync_every > 0).then_some(sync.hist),
    })
}

fn merge_sec(secs: &mut BTreeMap<u64, SecRecord>, r: SecRecord) {
    match secs.get_mut(&r.sec) {
        Some(acc) => acc.merge(&r),
        None => {
            secs.insert(r.sec, r);
        }
    }
}

/// One sample per second of the measured phase (seconds without completions included as zero).
pub(crate) fn build_series(secs: &BTreeMap<u64, SecRecord>, dur_s: f64) -> Vec<Sample> {
    let Some(last) = secs.keys().next_back().copied() else {
        return Vec::new();
    };
    (0..=last)
        .map(|s| {
            let end = ((s + 1) as f64).min(dur_s.max(s as f64 + 1e-3));
            let width = (end - s as f64).max(1e-3);
            match secs.get(&s) {
                Some(r) => Sample {
                    t_s: end,
                    read_iops: r.read_ios as f64 / width,
                    write_iops: r.write_ios as f64 / width,
                    read_bw_bytes: r.read_bytes as f64 / width,
                    write_bw_bytes: r.write_bytes as f64 / width,
                    p99_ns: (!r.lat.is_empty()).then(|| r.lat.value_at_quantile(0.99)),
                    sync_p99_ns: (!r.sync.is_empty()).then(|| r.sync.value_at_quantile(0.99)),
                },
                None => Sample {
                    t_s: end,
                    ..Sample::default()
                },
            }
        })
        .collect()
}

/// RAM size from /proc/meminfo (`MemTotal`, in KiB); 0 when unknown.
fn mem_total() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falls_back_to_psync_with_the_reason() {
        let job = Job::default();
        let mut w = Vec::new();
        assert_eq!(
            engine_after_probe(&job, Ok(()), &mut w),
            IoEngineKind::IoUring
        );
        assert!(w.is_empty());
        let why = "the sysctl kernel.io_uring_disabled is 2".to_string();
        assert_eq!(
            engine_after_probe(&job, Err(why), &mut w),
            IoEngineKind::Psync
        );
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("io_uring_disabled is 2") && w[0].contains("psync"),
            "{}",
            w[0]
        );
        let sync = Job {
            ioengine: IoEngineKind::Sync,
            ..Job::default()
        };
        assert_eq!(
            engine_after_probe(&sync, Err("x".into()), &mut w),
            IoEngineKind::Sync
        );
        // io_uring works on this kernel (6.18, not disabled).
        assert!(uring::probe().is_ok());
    }

    #[test]
    fn resolves_files_and_regions_like_fio() {
        let d = tempfile::tempdir().unwrap();
        let job = |t: &Path| Job {
            target: t.to_path_buf(),
            name: "j".into(),
            numjobs: 2,
            size: Some(1 << 20),
            offset: 4096,
            ..Job::default()
        };
        let mut w = Vec::new();
        // A directory: one file per job, named as fio names them.
        let j = job(d.path());
        let u = plan_files(&j, &target::classify(d.path()).unwrap(), &mut w).unwrap();
        let names: Vec<_> = u
            .iter()
            .map(|u| u.path.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["j.0.0", "j.1.0"]);
        assert!(u
            .iter()
            .all(|u| u.start == 4096 && u.len == 1 << 20 && !u.existed));
        // An existing file without a size: from the offset to its end, shared by the jobs.
        let f = d.path().join("f");
        std::fs::write(&f, vec![1u8; 64 * 1024]).unwrap();
        let j = Job {
            size: None,
            ..job(&f)
        };
        let u = plan_files(&j, &target::classify(&f).unwrap(), &mut w).unwrap();
        assert_eq!(u.len(), 1);
        assert_eq!(
            (u[0].start, u[0].len, u[0].existed),
            (4096, 60 * 1024, true)
        );
        // A new file or a directory without a size cannot be resolved.
        let n = d.path().join("new");
        let j = Job {
            size: None,
            ..job(&n)
        };
        let e = plan_files(&j, &target::classify(&n).unwrap(), &mut w).unwrap_err();
        assert!(matches!(e, EngineError::SizeRequired { .. }), "{e}");
        // An offset past the end of a file leaves nothing to do.
        let j = Job {
            size: None,
            offset: 1 << 20,
            ..job(&f)
        };
        let e = plan_files(&j, &target::classify(&f).unwrap(), &mut w).unwrap_err();
        assert!(matches!(e, EngineError::EmptyRegion { .. }), "{e}");
        assert!(w.is_empty());
    }

    #[test]
    fn series_has_one_sample_per_second_with_gaps_as_zero() {
        let mut secs = BTreeMap::new();
        let mut a = SecRecord::new(0);
        a.read_ios = 100;
        a.read_bytes = 409_600;
        a.lat.record(1000).unwrap();
        secs.insert(0, a);
        let mut c = SecRecord::new(2);
        c.read_ios = 50;
        secs.insert(2, c);
        let s = build_series(&secs, 2.5);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].t_s, s[0].read_iops), (1.0, 100.0));
        assert_eq!(s[0].read_bw_bytes, 409_600.0);
        assert!(s[0].p99_ns.is_some() && s[0].sync_p99_ns.is_none());
        assert_eq!((s[1].t_s, s[1].read_iops), (2.0, 0.0));
        // The last, half second: 50 I/Os in 0.5 s.
        assert_eq!((s[2].t_s, s[2].read_iops), (2.5, 100.0));
    }
}
