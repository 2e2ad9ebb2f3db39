//! fio as a second engine and as an import format: builds fio's command line from a [`Job`]
//! (same option names, `--output-format=json+`, `--group_reporting`), runs it through a
//! [`CommandRunner`], and reads fio's JSON (fio 3.x, `jobs[]` as documented in fio's HOWTO,
//! "JSON output") into the same [`RunDoc`] the native engine writes, so the two can be compared
//! number for number and judged by the same verdicts.
//!
//! Mapping (fio -> RunDoc): `jobs[i].{read,write}.total_ios/io_bytes/iops/bw_bytes` ->
//! `results.{read,write}.{ios,bytes,iops,bw_bytes}`; `clat_ns` (completion latency, what the
//! native engine times; fio's `lat_ns` adds submission) -> `lat_ns` with percentile keys
//! `"99.000000"` -> `"99"`; `sync.lat_ns` (fsync/fdatasync, whose `total_ios` fio 3.33 leaves at
//! 0, so the count is `lat_ns.N`) -> `results.sync`; `usr_cpu`/`sys_cpu` (percent of
//! `job_runtime`) -> seconds.

use crate::job::{Job, Rw};
use crate::result::{
    percentile_key, Cpu, DirStats, HostInfo, LatStats, Results, RunDoc, Sample, TargetInfo,
    SCHEMA_VERSION,
};
use disktier_cmd::{Cmd, CmdError, CommandRunner};
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Errors of the fio engine and of importing fio's JSON.
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    /// fio could not be started or failed without printing a result.
    #[error("fio failed")]
    Run(#[from] CmdError),
    /// The text is not fio's JSON output.
    #[error(
        "{source_name} is not fio JSON output ({why}): produce it with fio --output-format=json"
    )]
    NotJson { source_name: String, why: String },
    /// The JSON is fio's, but lacks something a result needs.
    #[error("{source_name}: {what} is missing from fio's JSON: is it the output of fio --output-format=json (fio 3.x)?")]
    Missing { source_name: String, what: String },
    /// The asked-for job index is not in the file.
    #[error(
        "{source_name} has {jobs} job(s), so job {index} does not exist: pass --job 0 to {last}"
    )]
    NoSuchJob {
        source_name: String,
        jobs: usize,
        index: usize,
        last: usize,
    },
    /// fio ran past its time limit and was killed.
    #[error("fio ran for more than {}s, its time limit for this job (runtime, ramp and layout plus a margin), and was killed: check that the target is not hung (dmesg), or pass a shorter --runtime or smaller --size", .after.as_secs())]
    Timeout { after: Duration },
    /// `--no-layout` could not extend a file before fio ran.
    #[error("could not extend {path} for fio (--no-layout): {source}")]
    Layout {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What fio is called on this machine.
pub const FIO: &str = "fio";

/// Escapes a path for fio's `filename`/`directory` options, in which ':' separates several
/// files (fio's HOWTO, "filename": "escape the colon with a backslash"); a backslash itself is
/// not special to fio, so only ':' is escaped.
pub fn escape_path(p: &Path) -> String {
    p.display().to_string().replace(':', "\\:")
}

/// The margin on top of a job's runtime, ramp and layout before fio is taken as hung.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(120);

/// How long fio may run for `job` before it is killed: runtime and ramp, plus the time to lay
/// out its files at a slow 10 MiB/s, plus [`TIMEOUT_MARGIN`]. A size-based job (no runtime) gets
/// its I/O at 1 MiB/s, the floor at which a disk is unusable anyway, and at least an hour.
pub fn timeout_for(job: &Job) -> Duration {
    const MIB: u64 = 1 << 20;
    let bytes = job
        .size
        .unwrap_or(0)
        .saturating_mul(u64::from(job.numjobs.max(1)));
    let layout = Duration::from_secs(bytes / (10 * MIB));
    let io = match job.runtime {
        Some(r) => r,
        None => Duration::from_secs((bytes / MIB).max(3600)),
    };
    io.saturating_add(job.ramp_time)
        .saturating_add(layout)
        .saturating_add(TIMEOUT_MARGIN)
}

/// How to format a duration for fio's time options (fio accepts `us`, `ms`, `s` suffixes).
fn fio_time(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d.as_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}us", d.as_micros().max(1))
    }
}

/// The fio command that runs `job`. `target_is_dir` chooses `--directory` (per-job files
/// `<name>.<jobnum>.0` created inside, as fio names them) over `--filename` (a file or device).
pub fn command(job: &Job, target_is_dir: bool) -> Cmd {
    let mut args: Vec<String> = vec![
        format!("--name={}", job.name),
        if target_is_dir {
            format!("--directory={}", escape_path(&job.target))
        } else {
            format!("--filename={}", escape_path(&job.target))
        },
        format!("--rw={}", job.rw.name()),
        format!("--bs={}", job.bs),
        format!("--ioengine={}", job.ioengine.name()),
        format!("--iodepth={}", job.iodepth),
        format!("--numjobs={}", job.numjobs),
        format!("--direct={}", u8::from(job.direct)),
    ];
    if job.rw.mixed() {
        args.push(format!("--rwmixread={}", job.rwmixread));
    }
    if let Some(s) = job.size {
        args.push(format!("--size={s}"));
    }
    if job.offset > 0 {
        args.push(format!("--offset={}", job.offset));
    }
    if job.fsync > 0 {
        args.push(format!("--fsync={}", job.fsync));
    }
    if job.fdatasync > 0 {
        args.push(format!("--fdatasync={}", job.fdatasync));
    }
    if let Some(r) = job.runtime {
        args.push(format!("--runtime={}", fio_time(r)));
    }
    if job.time_based {
        args.push("--time_based=1".into());
    }
    if !job.ramp_time.is_zero() {
        args.push(format!("--ramp_time={}", fio_time(job.ramp_time)));
    }
    args.push(format!("--randseed={}", job.randseed));
    if job.norandommap {
        args.push("--norandommap=1".into());
    }
    if !job.cpus_allowed.is_empty() {
        args.push(format!("--cpus_allowed={}", job.cpus_allowed));
    }
    if job.iodepth_batch_submit != 1 {
        args.push(format!(
            "--iodepth_batch_submit={}",
            job.iodepth_batch_submit
        ));
    }
    args.push("--group_reporting=1".into());
    // json+ adds each latency series' histogram bins, from which the p99's confidence interval
    // is read as from the native engine's histogram instead of interpolated.
    args.push("--output-format=json+".into());
    Cmd::new(FIO).args(args)
}

/// The per-job files fio creates in a directory target: `<name>.<jobnum>.0` (fio's default
/// `filename_format`, `$jobname.$jobnum.$filenum`).
pub fn job_files(job: &Job) -> Vec<PathBuf> {
    (0..job.numjobs)
        .map(|n| job.target.join(format!("{}.{n}.0", job.name)))
        .collect()
}

/// Options of a fio-engine run.
#[derive(Debug, Clone, Default)]
pub struct FioOptions {
    /// Keep the files fio created in a directory target.
    pub keep_files: bool,
    pub profile: Option<String>,
    pub quick: bool,
    /// Set when the run was stopped by a signal (fio stops on SIGINT too and prints what it has).
    pub stop: Option<std::sync::Arc<AtomicBool>>,
    /// `--no-layout`: a read job's short file is extended without data before fio starts, so
    /// that fio (which fills a file shorter than the job) leaves it as it is, like the native
    /// engine does.
    pub no_layout: bool,
    /// fio's absolute path, resolved once by the caller ([`disktier_cmd::which`]); `None` runs
    /// [`FIO`] as the runner finds it (the recording runner in tests).
    pub program: Option<PathBuf>,
    /// Kill fio after this long; `None`: [`timeout_for`] the job.
    pub timeout: Option<Duration>,
}

/// What a fio run gives: the document and fio's fsync/fdatasync latency histogram.
#[derive(Debug, Clone)]
pub struct FioMeasured {
    pub doc: RunDoc,
    /// From `jobs[0].sync.lat_ns.bins` (json+), when the job synced.
    pub sync_hist: Option<Histogram<u64>>,
}

/// Runs `job` through fio and reads its JSON into a [`RunDoc`] with engine "fio". The target
/// must already have passed the engine's safety checks; `target` describes it.
pub fn run(
    job: &Job,
    runner: &dyn CommandRunner,
    target: TargetInfo,
    opts: &FioOptions,
) -> Result<FioMeasured, FioError> {
    let is_dir = target.kind == "directory";
    let created: Vec<PathBuf> = if is_dir {
        job_files(job).into_iter().filter(|p| !p.exists()).collect()
    } else if !job.target.exists() {
        vec![job.target.clone()]
    } else {
        Vec::new()
    };
    let mut warnings = Vec::new();
    if let (true, true, Some(size)) = (opts.no_layout, job.rw.reads(), job.size) {
        let files = if is_dir {
            job_files(job)
        } else {
            vec![job.target.clone()]
        };
        for p in files {
            if let Some(w) = extend_sparse(&p, job.offset + size)? {
                warnings.push(w);
            }
        }
    }
    // Per-second IOPS and bandwidth logs (fio's write_iops_log/write_bw_log averaged over
    // 1000 ms) and completion latency histograms (write_hist_log every 1000 ms) become the
    // document's `series`, as the native engine's one-second samples. fio logs no histogram
    // of fsync/fdatasync latency, so `sync_p99_ns` stays empty with fio.
    let logs = LogDir::new();
    let mut cmd = command(job, is_dir);
    if let Some(p) = &opts.program {
        cmd.program = p.display().to_string();
    }
    let limit = opts.timeout.unwrap_or_else(|| timeout_for(job));
    let comm = opts
        .program
        .as_deref()
        .and_then(|p| p.file_name())
        .map_or_else(|| FIO.to_string(), |n| n.to_string_lossy().into_owned());
    if let Some(l) = &logs {
        let prefix = l.prefix();
        cmd = cmd.args([
            format!("--write_iops_log={prefix}"),
            format!("--write_bw_log={prefix}"),
            "--log_avg_msec=1000".to_string(),
            format!("--write_hist_log={prefix}"),
            "--log_hist_msec=1000".to_string(),
        ]);
    }
    // A Ctrl-C on the terminal reaches fio too (same process group), but a SIGTERM sent to
    // disktier alone does not: a watcher passes the stop on to our own fio child as SIGINT,
    // on which fio stops and still prints what it measured.
    // The same watcher kills fio (SIGKILL, from here: no other program is looked up) when it
    // runs past `limit`, so that a hung device cannot hang disktier.
    let done = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let out = std::thread::scope(|sc| {
        let (done, timed_out, comm) = (&done, &timed_out, &comm);
        sc.spawn(move || {
            let start = std::time::Instant::now();
            let mut interrupted = false;
            while !done.load(Ordering::SeqCst) {
                if !interrupted && opts.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
                    interrupted = true;
                    for pid in own_children_named(comm) {
                        let _ = runner
                            .output(&Cmd::new("kill").args(["-INT".to_string(), pid.to_string()]));
                    }
                }
                if start.elapsed() >= limit {
                    timed_out.store(true, Ordering::SeqCst);
                    // fio runs each job in a process of its own, which holds fio's output
                    // pipe open: kill the whole tree, children first.
                    for pid in own_children_named(comm) {
                        let mut tree = descendants(pid);
                        tree.reverse();
                        tree.push(pid);
                        for p in tree {
                            if let Some(p) = rustix::process::Pid::from_raw(p as i32) {
                                let _ =
                                    rustix::process::kill_process(p, rustix::process::Signal::KILL);
                            }
                        }
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let out = runner.output(&cmd);
        done.store(true, Ordering::SeqCst);
        out
    });
    if !opts.keep_files {
        for p in &created {
            let _ = std::fs::remove_file(p);
        }
    }
    if timed_out.load(Ordering::SeqCst) {
        return Err(FioError::Timeout { after: limit });
    }
    let out = out?;
    let stopped = opts.stop.as_ref().is_some_and(|f| f.load(Ordering::SeqCst));
    // fio exits non-zero when a job errored; when a signal stopped it, it still prints what it
    // measured, which is the partial result we want.
    if !(out.success() || stopped && out.stdout.contains('{')) {
        return Err(FioError::Run(CmdError::Failed {
            cmd: cmd.to_string(),
            status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
        }));
    }
    let v = parse(&out.stdout, "fio's output")?;
    let mut doc = to_run_doc(
        &v,
        0,
        "fio's output",
        DocContext {
            job: Some(job.to_json()),
            target: Some(target),
            host: crate::host::detect(),
            profile: opts.profile.clone(),
            quick: opts.quick,
        },
    )?;
    doc.interrupted = stopped;
    if let Some(l) = &logs {
        doc.series = read_series(&l.prefix(), job.numjobs);
    }
    doc.warnings.extend(warnings);
    for line in out.stderr.lines().filter(|l| l.starts_with("fio:")) {
        doc.warnings.push(line.to_string());
    }
    Ok(FioMeasured {
        doc,
        sync_hist: sync_histogram(&v, 0),
    })
}

/// `--no-layout` for fio: makes the regular file at `path` (created when missing) `need` bytes
/// long without writing data. Returns the warning the native engine gives for such a file.
/// Block devices and files already long enough are left alone.
fn extend_sparse(path: &Path, need: u64) -> Result<Option<String>, FioError> {
    if need == 0 || std::fs::metadata(path).is_ok_and(|m| !m.is_file() || m.len() >= need) {
        return Ok(None);
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .and_then(|f| f.set_len(need))
        .map_err(|e| FioError::Layout {
            path: path.to_path_buf(),
            source: e,
        })?;
    Ok(Some(crate::layout::sparse_warning(path)))
}

/// A latency block's `bins` (fio's `--output-format=json+`: bucket value in ns -> count) as an
/// HDR histogram like the native engine's; `None` without bins. fio's buckets carry about 1/128
/// relative error (references.md), coarser than the native 3 significant digits.
pub fn histogram(block: &Value) -> Option<Histogram<u64>> {
    let bins = block.get("bins")?.as_object()?;
    let mut h = crate::stats::new_hist();
    for (k, v) in bins {
        let (Ok(ns), Some(n)) = (k.parse::<u64>(), v.as_u64()) else {
            continue;
        };
        if n > 0 {
            h.saturating_record_n(ns.max(1), n);
        }
    }
    (!h.is_empty()).then_some(h)
}

/// Syncs over etcd's heartbeat interval and election timeout, counted from json+ `bins` (a bin
/// counts when the value fio gives it is over the limit: fio's bins are about 1/128 wide
/// there, so a call within that of 100 ms or 1 s may land on either side); `None` without bins.
pub fn bin_stalls(block: &Value) -> Option<crate::result::Stalls> {
    use crate::verdict::{ETCD_ELECTION_TIMEOUT_NS, ETCD_HEARTBEAT_NS};
    let bins = block.get("bins")?.as_object()?;
    let mut st = crate::result::Stalls {
        heartbeat_ns: ETCD_HEARTBEAT_NS,
        over_heartbeat: 0,
        election_ns: ETCD_ELECTION_TIMEOUT_NS,
        over_election: 0,
    };
    for (k, v) in bins {
        let (Ok(ns), Some(n)) = (k.parse::<u64>(), v.as_u64()) else {
            continue;
        };
        if ns > ETCD_HEARTBEAT_NS {
            st.over_heartbeat = st.over_heartbeat.saturating_add(n);
        }
        if ns > ETCD_ELECTION_TIMEOUT_NS {
            st.over_election = st.over_election.saturating_add(n);
        }
    }
    Some(st)
}

/// fio's fsync/fdatasync latency histogram of job `index`, when the JSON is json+.
pub fn sync_histogram(v: &Value, index: usize) -> Option<Histogram<u64>> {
    histogram(v.get("jobs")?.get(index)?.get("sync")?.get("lat_ns")?)
}

/// Every process as (pid, comm, ppid), from `/proc/<pid>/stat`: "pid (comm) state ppid ...".
fn processes() -> Vec<(u32, String, u32)> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (open, close) = (stat.find('(')?, stat.rfind(')')?);
            let comm = stat.get(open + 1..close)?.to_string();
            let ppid = stat
                .get(close + 1..)?
                .split_whitespace()
                .nth(1)?
                .parse::<u32>()
                .ok()?;
            Some((pid, comm, ppid))
        })
        .collect()
}

/// Pids of this process's direct children whose command name is `name`.
fn own_children_named(name: &str) -> Vec<u32> {
    let me = std::process::id();
    processes()
        .into_iter()
        .filter(|(_, comm, ppid)| comm == name && *ppid == me)
        .map(|(pid, _, _)| pid)
        .collect()
}

/// Every descendant of `root`, parents before their children.
fn descendants(root: u32) -> Vec<u32> {
    let all = processes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut frontier = vec![root];
    while let Some(&p) = frontier.get(i) {
        for (pid, _, _) in all.iter().filter(|(_, _, pp)| *pp == p) {
            if !frontier.contains(pid) {
                frontier.push(*pid);
                out.push(*pid);
            }
        }
        i += 1;
    }
    out
}

/// A private directory for fio's log files, removed when dropped.
struct LogDir(PathBuf);

impl LogDir {
    fn new() -> Option<LogDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("disktier-fio-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).ok().map(|_| LogDir(dir))
    }

    fn prefix(&self) -> String {
        self.0.join("log").display().to_string()
    }
}

impl Drop for LogDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Reads fio's averaged logs `<prefix>_iops.<job>.log` and `<prefix>_bw.<job>.log` (lines
/// "msec, value, ddir, bs, offset"; ddir 0 = read, 1 = write; bandwidth in KiB/s) for jobs
/// 1..=numjobs, summed over jobs per second.
pub fn read_series(prefix: &str, numjobs: u32) -> Vec<Sample> {
    let mut secs: BTreeMap<u64, Sample> = BTreeMap::new();
    for (kind, scale) in [("iops", 1.0), ("bw", 1024.0)] {
        for j in 1..=numjobs.max(1) {
            let Ok(text) = std::fs::read_to_string(format!("{prefix}_{kind}.{j}.log")) else {
                continue;
            };
            for line in text.lines() {
                let f: Vec<&str> = line.split(',').map(str::trim).collect();
                let (Some(ms), Some(val), Some(dir)) = (
                    f.first().and_then(|x| x.parse::<u64>().ok()),
                    f.get(1).and_then(|x| x.parse::<f64>().ok()),
                    f.get(2).and_then(|x| x.parse::<u8>().ok()),
                ) else {
                    continue;
                };
                let sec = (ms + 500) / 1000;
                let s = secs.entry(sec).or_insert_with(|| Sample {
                    t_s: sec as f64,
                    ..Sample::default()
                });
                let v = val * scale;
                match (kind, dir) {
                    ("iops", 0) => s.read_iops += v,
                    ("iops", 1) => s.write_iops += v,
                    ("bw", 0) => s.read_bw_bytes += v,
                    ("bw", 1) => s.write_bw_bytes += v,
                    _ => {}
                }
            }
        }
    }
    // Completion latency: fio's histogram log, one line per job, direction and interval:
    // "msec, ddir, bs, count of bin 0, bin 1, ..." with the counts of that interval only.
    let mut hists: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for j in 1..=numjobs.max(1) {
        let Ok(text) = std::fs::read_to_string(format!("{prefix}_clat_hist.{j}.log")) else {
            continue;
        };
        for line in text.lines() {
            let mut f = line.split(',').map(str::trim);
            let Some(ms) = f.next().and_then(|x| x.parse::<u64>().ok()) else {
                continue;
            };
            // fio writes 1,856 bins (FIO_IO_U_PLAT_NR); more is not fio's log.
            let bins: Vec<u64> = f
                .skip(2)
                .take(PLAT_NR)
                .map_while(|x| x.parse::<u64>().ok())
                .collect();
            let acc = hists.entry(ms.saturating_add(500) / 1000).or_default();
            if acc.len() < bins.len() {
                acc.resize(bins.len(), 0);
            }
            for (a, b) in acc.iter_mut().zip(bins) {
                *a = a.saturating_add(b);
            }
        }
    }
    for (sec, bins) in hists {
        if let Some(p99) = plat_percentile(&bins, 99.0) {
            secs.entry(sec)
                .or_insert_with(|| Sample {
                    t_s: sec as f64,
                    ..Sample::default()
                })
                .p99_ns = Some(p99);
        }
    }
    secs.into_values().collect()
}

/// fio's number of latency histogram bins (FIO_IO_U_PLAT_NR in stat.h: 29 groups of 64).
pub const PLAT_NR: usize = 29 * 64;

/// The value of fio's latency histogram bin `idx` (fio's `plat_idx_to_val` in stat.c): 64
/// bins per power of two (FIO_IO_U_PLAT_BITS = 6), each standing for the middle of its range;
/// the first 128 bins are exact.
pub fn plat_idx_to_val(idx: usize) -> u64 {
    // Past fio's last bin the value would overflow: clamp to the last bin.
    let idx = idx.min(PLAT_NR - 1);
    const BITS: usize = 6;
    const VAL: usize = 1 << BITS;
    if idx < VAL << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> BITS) - 1;
    let base = 1u64 << (error_bits + BITS);
    let k = (idx % VAL) as u64;
    // base + (k + 0.5) * 2^error_bits, in integers.
    base + (k << error_bits) + ((1u64 << error_bits) >> 1)
}

/// The `p`-th percentile of fio histogram bins (counts indexed as fio's), as fio computes it:
/// the value of the first bin at which the running count reaches `p` % of the total.
pub fn plat_percentile(bins: &[u64], p: f64) -> Option<u64> {
    let total: u64 = bins.iter().fold(0u64, |a, b| a.saturating_add(*b));
    if total == 0 {
        return None;
    }
    let want = ((total as f64) * p / 100.0).ceil().max(1.0) as u64;
    let mut run = 0;
    for (i, n) in bins.iter().enumerate() {
        run = n.saturating_add(run);
        if run >= want {
            return Some(plat_idx_to_val(i));
        }
    }
    None
}

/// Parses fio's JSON output. fio may print notes before the document (e.g. "note: both
/// iodepth >= 1 and synchronous I/O engine are selected"), so parsing starts at the first line
/// that opens an object.
pub fn parse(text: &str, source_name: &str) -> Result<Value, FioError> {
    let start = text
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| text.starts_with('{').then_some(0))
        .or_else(|| text.find('{'))
        .ok_or_else(|| FioError::NotJson {
            source_name: source_name.into(),
            why: "no JSON object found".into(),
        })?;
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let v = match de.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            return Err(FioError::NotJson {
                source_name: source_name.into(),
                why: e.to_string(),
            })
        }
        None => {
            return Err(FioError::NotJson {
                source_name: source_name.into(),
                why: "empty".into(),
            })
        }
    };
    if !v.get("jobs").is_some_and(Value::is_array) {
        return Err(FioError::Missing {
            source_name: source_name.into(),
            what: "the \"jobs\" list".into(),
        });
    }
    Ok(v)
}

/// What the fio JSON does not say about the run.
#[derive(Debug, Clone, Default)]
pub struct DocContext {
    /// The job as disktier ran it; when `None` it is rebuilt from fio's options.
    pub job: Option<Value>,
    /// The target; when `None` it is taken from fio's `filename`/`directory` option.
    pub target: Option<TargetInfo>,
    pub host: HostInfo,
    pub profile: Option<String>,
    pub quick: bool,
}

fn num(v: &Value, key: &str) -> f64 {
    match v.get(key) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn int(v: &Value, key: &str) -> u64 {
    let f = num(v, key);
    if f.is_finite() && f > 0.0 {
        f.round() as u64
    } else {
        0
    }
}

/// A latency block (`clat_ns`, `lat_ns`) as [`LatStats`]; `None` when it holds no samples.
fn lat_stats(block: &Value) -> Option<(LatStats, u64)> {
    let n = int(block, "N");
    if n == 0 {
        return None;
    }
    let mut percentiles = BTreeMap::new();
    if let Some(Value::Object(map)) = block.get("percentile") {
        for (k, v) in map {
            if let (Ok(p), Some(ns)) = (k.parse::<f64>(), v.as_f64()) {
                percentiles.insert(percentile_key(p), ns.max(0.0).round() as u64);
            }
        }
    }
    Some((
        LatStats {
            mean: num(block, "mean"),
            stdev: num(block, "stddev"),
            min: int(block, "min"),
            max: int(block, "max"),
            percentiles,
        },
        n,
    ))
}

/// One direction (`read`, `write`), `None` when it did no I/O.
fn dir_stats(dir: &Value) -> Option<DirStats> {
    let ios = int(dir, "total_ios");
    if ios == 0 && int(dir, "io_bytes") == 0 {
        return None;
    }
    // Completion latency; fall back to total latency when only it carries percentiles
    // (fio with clat_percentiles=0, lat_percentiles=1).
    let clat = dir.get("clat_ns").and_then(lat_stats);
    let lat = match clat {
        Some((c, _)) if !c.percentiles.is_empty() => c,
        other => dir
            .get("lat_ns")
            .and_then(lat_stats)
            .filter(|(l, _)| !l.percentiles.is_empty())
            .map(|(l, _)| l)
            .or(other.map(|(c, _)| c))
            .unwrap_or_default(),
    };
    Some(DirStats {
        ios,
        bytes: int(dir, "io_bytes"),
        iops: num(dir, "iops"),
        bw_bytes: num(dir, "bw_bytes"),
        lat_ns: lat,
        stalls: None,
    })
}

/// fio's options for job `j`: the global ones overlaid with the job's own.
fn options(v: &Value, j: &Value) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    for src in [v.get("global options"), j.get("job options")] {
        if let Some(Value::Object(o)) = src {
            for (k, val) in o {
                m.insert(k.clone(), val.clone());
            }
        }
    }
    m
}

/// The job in disktier's shape, rebuilt from fio's options where it can be (for imports).
fn job_from_options(opts: &serde_json::Map<String, Value>, jobname: &str) -> Value {
    let s = |k: &str| opts.get(k).and_then(Value::as_str).map(str::to_string);
    let size = |k: &str| s(k).and_then(|x| disktier_units::parse_size(&x).ok());
    let mut job = Job {
        name: jobname.to_string(),
        ..Job::default()
    };
    if let Some(t) = s("filename").or_else(|| s("directory")) {
        job.target = PathBuf::from(t);
    }
    if let Some(rw) = s("rw")
        .or_else(|| s("readwrite"))
        .and_then(|r| Rw::from_name(&r))
    {
        job.rw = rw;
    }
    if let Some(bs) = size("bs").or_else(|| size("blocksize")) {
        job.bs = bs;
    }
    job.size = size("size");
    if let Some(o) = size("offset") {
        job.offset = o;
    }
    let n = |k: &str| s(k).and_then(|x| x.parse::<u32>().ok());
    if let Some(x) = n("numjobs") {
        job.numjobs = x;
    }
    if let Some(x) = n("iodepth") {
        job.iodepth = x;
    }
    if let Some(x) = n("rwmixread") {
        job.rwmixread = x;
    }
    if let Some(x) = n("fsync") {
        job.fsync = x;
    }
    if let Some(x) = n("fdatasync") {
        job.fdatasync = x;
    }
    if let Some(x) = n("iodepth_batch_submit").or_else(|| n("iodepth_batch")) {
        job.iodepth_batch_submit = x;
    }
    if let Some(x) = s("randseed").and_then(|x| x.parse().ok()) {
        job.randseed = x;
    }
    if let Some(e) = s("ioengine") {
        match crate::job::IoEngineKind::from_name(&e) {
            Some(k) => job.ioengine = k,
            None => {
                // libaio, posixaio, ...: keep fio's name in the document.
                let mut v = job.to_json();
                v["ioengine"] = Value::String(e);
                return finish_job(v, opts);
            }
        }
    } else {
        // fio's default engine is psync (references.md: "fio without an engine falls back to
        // psync, where iodepth does nothing").
        job.ioengine = crate::job::IoEngineKind::Psync;
    }
    job.direct = s("direct").is_some_and(|d| d == "1" || d == "true");
    job.time_based = s("time_based").is_some_and(|d| d != "0" && d != "false");
    job.norandommap = s("norandommap").is_some_and(|d| d != "0" && d != "false");
    if let Some(c) = s("cpus_allowed") {
        job.cpus_allowed = c;
    }
    if let Some(r) = s("runtime").and_then(|r| parse_fio_time(&r)) {
        job.runtime = Some(r);
    }
    if let Some(r) = s("ramp_time").and_then(|r| parse_fio_time(&r)) {
        job.ramp_time = r;
    }
    finish_job(job.to_json(), opts)
}

/// Keeps fio's own option list beside the rebuilt job, so nothing an import said is lost.
fn finish_job(mut v: Value, opts: &serde_json::Map<String, Value>) -> Value {
    v["fio_options"] = Value::Object(opts.clone());
    v
}

/// fio's time values: a bare number is seconds; suffixes us, ms, s, m, h.
fn parse_fio_time(s: &str) -> Option<Duration> {
    let s = s.trim();
    if let Ok(n) = s.parse::<f64>() {
        // try_: "1e400" or "inf" in fio's options is no time, not a panic (fuzz_fio_json).
        return Duration::try_from_secs_f64(n).ok();
    }
    disktier_units::parse_duration(s).ok()
}

/// Converts job `index` of fio's JSON `v` into a [`RunDoc`] (engine "fio").
pub fn to_run_doc(
    v: &Value,
    index: usize,
    source_name: &str,
    ctx: DocContext,
) -> Result<RunDoc, FioError> {
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| FioError::Missing {
            source_name: source_name.into(),
            what: "the \"jobs\" list".into(),
        })?;
    if jobs.is_empty() {
        return Err(FioError::Missing {
            source_name: source_name.into(),
            what: "a job in \"jobs\"".into(),
        });
    }
    let j = jobs.get(index).ok_or(FioError::NoSuchJob {
        source_name: source_name.into(),
        jobs: jobs.len(),
        index,
        last: jobs.len() - 1,
    })?;
    for key in ["read", "write"] {
        if !j.get(key).is_some_and(Value::is_object) {
            return Err(FioError::Missing {
                source_name: source_name.into(),
                what: format!("jobs[{index}].{key}"),
            });
        }
    }
    let mut warnings = Vec::new();
    if jobs.len() > 1 {
        warnings.push(format!(
            "{source_name} holds {} jobs (run fio with --group_reporting to combine them); this result is job {index} ({})",
            jobs.len(),
            j.get("jobname").and_then(Value::as_str).unwrap_or("?")
        ));
    }
    let err = int(j, "error");
    if err != 0 {
        warnings.push(format!(
            "fio reported error {err} for this job: the figures may be incomplete"
        ));
    }
    let read = dir_stats(&j["read"]);
    let write = dir_stats(&j["write"]);
    let runtime_ms = ["read", "write", "trim"]
        .iter()
        .map(|d| int(&j[*d], "runtime"))
        .max()
        .filter(|&ms| ms > 0)
        .unwrap_or_else(|| int(j, "job_runtime"));
    let duration_s = runtime_ms as f64 / 1000.0;
    let sync = j.get("sync").and_then(|s| {
        let (lat, n) = s.get("lat_ns").and_then(lat_stats)?;
        // fio 3.33 leaves sync.total_ios at 0; lat_ns.N holds the count.
        let ios = int(s, "total_ios").max(n);
        Some(DirStats {
            ios,
            bytes: 0,
            iops: if duration_s > 0.0 {
                ios as f64 / duration_s
            } else {
                0.0
            },
            bw_bytes: 0.0,
            lat_ns: lat,
            stalls: s.get("lat_ns").and_then(bin_stalls),
        })
    });
    // usr_cpu/sys_cpu are percentages of job_runtime (summed over the group's jobs).
    let job_runtime_s = int(j, "job_runtime") as f64 / 1000.0;
    let cpu = Cpu {
        usr_s: num(j, "usr_cpu") / 100.0 * job_runtime_s,
        sys_s: num(j, "sys_cpu") / 100.0 * job_runtime_s,
    };
    let opts = options(v, j);
    let jobname = j.get("jobname").and_then(Value::as_str).unwrap_or("fio");
    let job = ctx.job.unwrap_or_else(|| job_from_options(&opts, jobname));
    let target = ctx.target.unwrap_or_else(|| {
        let dir = opts.get("directory").and_then(Value::as_str);
        let file = opts.get("filename").and_then(Value::as_str);
        TargetInfo {
            path: file.or(dir).unwrap_or("").to_string(),
            kind: if file.is_some_and(|f| f.starts_with("/dev/")) {
                "device"
            } else if file.is_some() {
                "file"
            } else {
                "directory"
            }
            .into(),
            // fio's disk_util names the device it saw busy.
            device: v
                .get("disk_util")
                .and_then(Value::as_array)
                .and_then(|d| d.first())
                .and_then(|d| d.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            ..TargetInfo::default()
        }
    });
    let started_at = started_at(v, runtime_ms);
    Ok(RunDoc {
        schema_version: SCHEMA_VERSION,
        engine: "fio".into(),
        profile: ctx.profile,
        quick: ctx.quick,
        job,
        target,
        host: ctx.host,
        started_at,
        duration_s,
        interrupted: false,
        results: Results {
            read,
            write,
            sync,
            cpu,
            small_files: None,
        },
        series: Vec::new(),
        verdicts: Vec::new(),
        warnings,
    })
}

/// fio's `timestamp` is when the report was written (the end of the run): start = end - runtime.
fn started_at(v: &Value, runtime_ms: u64) -> String {
    let end_ms = v
        .get("timestamp_ms")
        .and_then(Value::as_u64)
        .or_else(|| v.get("timestamp").and_then(Value::as_u64).map(|s| s * 1000))
        .unwrap_or(0);
    let start_ms = end_ms.saturating_sub(runtime_ms);
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(start_ms as i128 * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Reads fio's JSON text (a file's or standard input's, named `source_name` in errors) into a
/// [`RunDoc`] and, for json+ output, the sync histogram: `disktier import fio`.
pub fn import_text(
    text: &str,
    source_name: &str,
    index: usize,
    ctx: DocContext,
) -> Result<FioMeasured, FioError> {
    let v = parse(text, source_name)?;
    let doc = to_run_doc(&v, index, source_name, ctx)?;
    Ok(FioMeasured {
        doc,
        sync_hist: sync_histogram(&v, index),
    })
}

/// [`import_text`] on a file.
pub fn import_file(path: &Path, index: usize, ctx: DocContext) -> Result<FioMeasured, FioError> {
    let name = path.display().to_string();
    let text = read_capped(std::fs::File::open(path), &name)?;
    import_text(&text, &name, index, ctx)
}

/// One job of fio's output of a job file, as the native engine's [`crate::Measured`].
#[derive(Debug, Clone)]
pub struct FioJob {
    /// fio's `jobname` (with `group_reporting`, the group's first job).
    pub name: String,
    /// fio's `groupid`.
    pub group: u32,
    pub measured: crate::types::Measured,
}

/// Every job in fio's JSON `v` (the output of a job file), with its group and, for json+
/// output, its latency histograms (read and write completion latency, sync latency).
pub fn jobs(v: &Value, source_name: &str, ctx: &DocContext) -> Result<Vec<FioJob>, FioError> {
    let n = v.get("jobs").and_then(Value::as_array).map_or(0, Vec::len);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let j = &v["jobs"][i];
        let mut doc = to_run_doc(v, i, source_name, ctx.clone())?;
        // The "holds N jobs" warning is about importing one job of many: here all are kept.
        doc.warnings.retain(|w| !w.contains("--group_reporting"));
        let hist = |dir: &str| {
            j.get(dir)
                .and_then(|d| d.get("clat_ns"))
                .and_then(histogram)
        };
        let read_hist = doc.results.read.as_ref().and(hist("read"));
        let write_hist = doc.results.write.as_ref().and(hist("write"));
        out.push(FioJob {
            name: j
                .get("jobname")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
            group: j
                .get("groupid")
                .and_then(Value::as_u64)
                .and_then(|g| u32::try_from(g).ok())
                .unwrap_or(0),
            measured: crate::types::Measured {
                read_hist,
                write_hist,
                sync_hist: sync_histogram(v, i),
                doc,
            },
        });
    }
    Ok(out)
}

/// The largest fio JSON read: 256 MiB (a json+ output with histogram bins for 64 jobs is a few
/// MiB).
pub const MAX_JSON: u64 = 256 << 20;

/// Reads at most [`MAX_JSON`] bytes of fio JSON from `input` (a file or standard input).
pub fn read_capped(
    input: std::io::Result<impl std::io::Read>,
    name: &str,
) -> Result<String, FioError> {
    use std::io::Read;
    let cant = |e: std::io::Error| FioError::NotJson {
        source_name: name.to_string(),
        why: format!("cannot read it: {e}"),
    };
    let mut text = String::new();
    input
        .map_err(cant)?
        .take(MAX_JSON + 1)
        .read_to_string(&mut text)
        .map_err(cant)?;
    if text.len() as u64 > MAX_JSON {
        return Err(FioError::NotJson {
            source_name: name.to_string(),
            why: format!("larger than {} MiB", MAX_JSON >> 20),
        });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::IoEngineKind;
    use disktier_cmd::RecordingRunner;

    const ETCD: &str = include_str!("../../disktier/tests/fixtures/fio/etcd-3.33.json");
    const ETCD_PLUS: &str =
        include_str!("../../disktier/tests/fixtures/fio/etcd-jsonplus-3.33.json");
    const RANDRW: &str = include_str!("../../disktier/tests/fixtures/fio/randrw-2jobs-3.33.json");

    fn etcd_job(dir: &Path) -> Job {
        Job {
            name: "etcd".into(),
            target: dir.into(),
            rw: Rw::Write,
            ioengine: IoEngineKind::Sync,
            fdatasync: 1,
            bs: 2300,
            size: Some(22 << 20),
            ..Job::default()
        }
    }

    #[test]
    fn command_line_is_the_etcd_docs_job() {
        let c = command(&etcd_job(Path::new("/var/lib/etcd")), true);
        let s = c.to_string();
        for want in [
            "--name=etcd",
            "--directory=/var/lib/etcd",
            "--rw=write",
            "--bs=2300",
            "--ioengine=sync",
            "--fdatasync=1",
            "--size=23068672",
            "--direct=0",
            "--output-format=json+",
            "--group_reporting=1",
        ] {
            assert!(c.args.iter().any(|a| a == want), "{want} missing in {s}");
        }
        assert!(!s.contains("--runtime") && !s.contains("--rwmixread"));
        // A device or file gets --filename, a time-based job its runtime.
        let j = Job {
            target: "/dev/loop3".into(),
            rw: Rw::RandRw,
            runtime: Some(Duration::from_millis(1500)),
            time_based: true,
            ramp_time: Duration::from_secs(2),
            iodepth_batch_submit: 64,
            ..Job::default()
        };
        let c = command(&j, false);
        for want in [
            "--filename=/dev/loop3",
            "--runtime=1500ms",
            "--time_based=1",
            "--ramp_time=2s",
            "--rwmixread=50",
            "--iodepth_batch_submit=64",
            "--ioengine=io_uring",
        ] {
            assert!(c.args.iter().any(|a| a == want), "{want} missing in {c}");
        }
    }

    #[test]
    fn reads_fio_3_33_etcd_json() {
        let v = parse(ETCD, "etcd.json").unwrap();
        let d = to_run_doc(&v, 0, "etcd.json", DocContext::default()).unwrap();
        assert_eq!(d.engine, "fio");
        assert_eq!(d.schema_version, 1);
        assert!(d.results.read.is_none());
        let w = d.results.write.as_ref().unwrap();
        let raw = &v["jobs"][0]["write"];
        assert_eq!(w.ios, raw["total_ios"].as_u64().unwrap());
        assert_eq!(w.bytes, raw["io_bytes"].as_u64().unwrap());
        assert_eq!(
            w.lat_ns.p(99.0),
            raw["clat_ns"]["percentile"]["99.000000"].as_u64()
        );
        assert_eq!(w.lat_ns.min, raw["clat_ns"]["min"].as_u64().unwrap());
        assert_eq!(w.lat_ns.percentiles.len(), 17);
        let s = d.results.sync.as_ref().unwrap();
        let rs = &v["jobs"][0]["sync"]["lat_ns"];
        assert_eq!(
            s.ios,
            rs["N"].as_u64().unwrap(),
            "sync count comes from lat_ns.N"
        );
        assert_eq!(s.lat_ns.p(99.0), rs["percentile"]["99.000000"].as_u64());
        assert_eq!(s.lat_ns.p(99.99), rs["percentile"]["99.990000"].as_u64());
        assert!(s.iops > 0.0);
        // The job is rebuilt from fio's options.
        assert_eq!(d.job["rw"], "write");
        assert_eq!(d.job["bs"], 2300);
        assert_eq!(d.job["ioengine"], "sync");
        assert_eq!(d.job["fdatasync"], 1);
        assert_eq!(d.target.kind, "directory");
        assert!(d.started_at.starts_with("20"), "{}", d.started_at);
    }

    #[test]
    fn json_plus_bins_count_stalls() {
        let block = serde_json::json!({"bins": {"1000": 5, "100000000": 2, "100663296": 3, "2013265920": 1}});
        let st = bin_stalls(&block).unwrap();
        assert_eq!((st.over_heartbeat, st.over_election), (4, 1));
        assert_eq!(bin_stalls(&serde_json::json!({"N": 3})), None);
    }

    #[test]
    fn json_plus_bins_become_a_histogram_that_agrees_with_fios_percentiles() {
        let m = import_text(ETCD_PLUS, "etcd+.json", 0, DocContext::default()).unwrap();
        let sync = m.doc.results.sync.as_ref().unwrap();
        let h = m.sync_hist.expect("json+ carries sync bins");
        assert_eq!(h.len(), sync.ios, "every fdatasync is in a bin");
        // fio's p99 is a bin value; the histogram's p99 is the same bin within 0.1 %.
        let fio_p99 = sync.lat_ns.p(99.0).unwrap() as f64;
        let hist_p99 = h.value_at_quantile(0.99) as f64;
        assert!(
            (hist_p99 - fio_p99).abs() / fio_p99 < 0.001,
            "{hist_p99} vs {fio_p99}"
        );
        // Plain json has no bins.
        let plain = import_text(ETCD, "etcd.json", 0, DocContext::default()).unwrap();
        assert!(plain.sync_hist.is_none());
        assert!(histogram(&serde_json::json!({"N": 0})).is_none());
    }

    #[test]
    fn reads_grouped_mixed_json_and_cpu_seconds() {
        let v = parse(RANDRW, "randrw.json").unwrap();
        let d = to_run_doc(&v, 0, "randrw.json", DocContext::default()).unwrap();
        let j = &v["jobs"][0];
        let (r, w) = (d.results.read.unwrap(), d.results.write.unwrap());
        assert!(r.iops > w.iops, "rwmixread=70");
        assert_eq!(r.iops, j["read"]["iops"].as_f64().unwrap());
        assert!(d.results.sync.is_none());
        let want_usr =
            j["usr_cpu"].as_f64().unwrap() / 100.0 * j["job_runtime"].as_f64().unwrap() / 1000.0;
        assert!((d.results.cpu.usr_s - want_usr).abs() < 1e-9);
        assert!(d.results.cpu.sys_s > 0.0);
        assert_eq!(d.job["ioengine"], "io_uring");
        assert_eq!(d.job["direct"], true);
        assert_eq!(d.job["numjobs"], 2);
        assert!((d.duration_s - 1.0).abs() < 0.2, "{}", d.duration_s);
    }

    #[test]
    fn notes_before_the_json_are_skipped_and_garbage_is_refused() {
        let text =
            format!("note: both iodepth >= 1 and synchronous I/O engine are selected\n{ETCD}");
        assert!(parse(&text, "x").is_ok());
        let e = parse("hello", "x.json").unwrap_err();
        assert!(
            e.to_string().contains("x.json is not fio JSON output"),
            "{e}"
        );
        let e = parse("{\"jobs\": [", "x.json").unwrap_err();
        assert!(matches!(e, FioError::NotJson { .. }), "{e}");
        let e = parse("{\"fio version\": \"3\"}", "x.json").unwrap_err();
        assert!(e.to_string().contains("\"jobs\" list is missing"), "{e}");
        let v = parse(ETCD, "x.json").unwrap();
        let e = to_run_doc(&v, 3, "x.json", DocContext::default()).unwrap_err();
        assert!(e.to_string().contains("job 3 does not exist"), "{e}");
    }

    #[test]
    fn per_second_logs_are_summed_over_jobs() {
        // The shape fio 3.33 writes with --log_avg_msec=1000 (two jobs, randrw).
        let d = tempfile::tempdir().unwrap();
        let prefix = d.path().join("x").display().to_string();
        std::fs::write(
            format!("{prefix}_iops.1.log"),
            "1023, 4895, 0, 0, 0\n1023, 4956, 1, 0, 0\n2023, 7851, 0, 0, 0\n2023, 7790, 1, 0, 0\n",
        )
        .unwrap();
        std::fs::write(format!("{prefix}_iops.2.log"), "1023, 105, 0, 0, 0\n").unwrap();
        std::fs::write(format!("{prefix}_bw.1.log"), "1023, 20, 1, 0, 0\n").unwrap();
        let s = read_series(&prefix, 2);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].t_s, s[0].read_iops, s[0].write_iops),
            (1.0, 5000.0, 4956.0)
        );
        assert_eq!(s[0].write_bw_bytes, 20.0 * 1024.0);
        assert_eq!((s[1].t_s, s[1].read_iops), (2.0, 7851.0));
        assert!(read_series(&format!("{prefix}-none"), 1).is_empty());
        // No histogram log: no p99.
        assert_eq!(s[0].p99_ns, None);
    }

    #[test]
    fn plat_bins_map_to_fios_values() {
        // The exact range, then the first groups (values from fio's plat_idx_to_val).
        assert_eq!(plat_idx_to_val(0), 0);
        assert_eq!(plat_idx_to_val(127), 127);
        assert_eq!(plat_idx_to_val(128), 129); // 128 + 0.5 * 2
        assert_eq!(plat_idx_to_val(191), 255); // 128 + 63 * 2 + 1
        assert_eq!(plat_idx_to_val(192), 258); // 256 + 0.5 * 4
                                               // Monotonic, and every bin within 1/128 of the previous group's step.
        for i in 1..1856 {
            assert!(plat_idx_to_val(i) > plat_idx_to_val(i - 1), "{i}");
        }
        let mut bins = vec![0u64; 1856];
        bins[10] = 98;
        bins[200] = 1;
        bins[300] = 1;
        assert_eq!(plat_percentile(&bins, 50.0), Some(10));
        assert_eq!(plat_percentile(&bins, 99.0), Some(plat_idx_to_val(200)));
        assert_eq!(plat_percentile(&bins, 99.9), Some(plat_idx_to_val(300)));
        assert_eq!(plat_percentile(&[0, 0], 99.0), None);
    }

    #[test]
    fn per_second_p99_comes_from_the_histogram_log_summed_over_jobs() {
        let d = tempfile::tempdir().unwrap();
        let prefix = d.path().join("x").display().to_string();
        std::fs::write(format!("{prefix}_iops.1.log"), "1001, 100, 0, 0, 0\n").unwrap();
        let line = |ms: u64, ddir: u8, at: usize, n: u64| {
            let mut bins = vec!["0".to_string(); 1856];
            bins[at] = n.to_string();
            format!("{ms}, {ddir}, 4096, {}\n", bins.join(", "))
        };
        // Job 1: 99 reads fast in second 1; job 2: one slow write in second 1, fast in 2.
        std::fs::write(format!("{prefix}_clat_hist.1.log"), line(1001, 0, 100, 99)).unwrap();
        std::fs::write(
            format!("{prefix}_clat_hist.2.log"),
            line(1002, 1, 1000, 1) + &line(2001, 0, 50, 10),
        )
        .unwrap();
        let s = read_series(&prefix, 2);
        assert_eq!(s.len(), 2);
        // 100 I/Os in second 1: the 99th is still the fast bin; p99 of second 2 is bin 50.
        assert_eq!(s[0].p99_ns, Some(plat_idx_to_val(100)));
        assert_eq!(s[1].p99_ns, Some(50));
        assert_eq!(s[0].read_iops, 100.0);
        assert_eq!(s[0].sync_p99_ns, None);
    }

    #[test]
    fn run_uses_the_runner_and_cleans_created_files() {
        let d = tempfile::tempdir().unwrap();
        let job = etcd_job(d.path());
        let runner = RecordingRunner::new();
        runner.on("fio", &[], 0, ETCD);
        // A file that was there before the run is the user's: it must survive.
        std::fs::write(d.path().join("etcd.0.0"), b"user data").unwrap();
        let target = TargetInfo {
            path: d.path().display().to_string(),
            kind: "directory".into(),
            ..TargetInfo::default()
        };
        let doc = run(&job, &runner, target, &FioOptions::default())
            .unwrap()
            .doc;
        assert_eq!(doc.engine, "fio");
        assert_eq!(doc.job["size"], 22 << 20, "the job as disktier resolved it");
        assert_eq!(runner.commands().len(), 1);
        assert!(runner
            .transcript()
            .starts_with("fio --name=etcd --directory="));
        assert_eq!(
            std::fs::read(d.path().join("etcd.0.0")).unwrap(),
            b"user data"
        );
    }
}
