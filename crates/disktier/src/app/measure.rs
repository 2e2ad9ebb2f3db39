//! Measure: run one resolved workload with the native engine or through fio, after the same
//! safety checks, and return the result document and the sync latency histogram.

use super::job::{self, JobOptions, LIBAIO_NOTE};
use anyhow::{anyhow, bail};
use disktier_engine::{IoLog, Job, Profile, ProgressFn, RunDoc, RunOptions, Workload};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What runs the job (the `--engine` choice). Not named "engine": that is the crate and its
/// `IoEngineKind` (io_uring, psync, sync) already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// disktier's own engine (io_uring, psync, sync), with HDR latency histograms.
    Native,
    /// fio, with its JSON read into the same result document.
    Fio,
}

/// A finished measurement.
pub struct Measurement {
    pub doc: RunDoc,
    /// The sync latency histogram: the native engine's, or fio's json+ bins (None for jobs
    /// without syncs and for small-files).
    pub sync_hist: Option<hdrhistogram::Histogram<u64>>,
}

/// The settings of a run that are not job options (`--engine`, `--keep-files`, `--destructive`,
/// `--no-layout`).
#[derive(Debug, Clone, Copy)]
pub struct RunSettings {
    pub tool: Tool,
    /// Keep the files the run created.
    pub keep_files: bool,
    /// Allow writes to a block device that holds data.
    pub destructive: bool,
    /// Fill files before read jobs (false: only extend them, sparse).
    pub layout: bool,
}

/// What to measure: a target, a profile and/or job options, and the run's settings, as any front
/// end (a command, a fleet node, a job file's runner) gives them.
#[derive(Clone)]
pub struct Request<'a> {
    pub target: &'a Path,
    pub profile: Option<Profile>,
    /// The profile scaled down (figures are indicative).
    pub quick: bool,
    pub job: &'a JobOptions,
    pub run: RunSettings,
    /// Receives every I/O issued (`trace record`).
    pub io_log: Option<Arc<dyn IoLog>>,
}

impl Request<'_> {
    /// The workload to run: the job options laid over the profile (or fio's defaults) on the
    /// target as given, checked.
    pub fn workload(&self) -> anyhow::Result<Workload> {
        job::resolve(self.target, self.profile, self.quick, self.job)
    }
}

/// Resolves `req` and runs it ([`measure`]); `stop` (set by a signal) and `progress` (about
/// every 250 ms) come from the front end. `--ioengine libaio`, which runs as io_uring, adds its
/// note to the result.
pub fn measure_request(
    req: Request<'_>,
    stop: Arc<AtomicBool>,
    progress: Option<Arc<ProgressFn>>,
) -> anyhow::Result<Measurement> {
    // The store and the metrics name the target by its canonical absolute path, as `assess`
    // does and `history --target` looks it up (not "etcdtest" as typed).
    let workload = job::resolve(&canonical(req.target), req.profile, req.quick, req.job)?;
    let opts = RunOptions {
        stop,
        progress,
        keep_files: req.run.keep_files,
        destructive: req.run.destructive,
        layout: req.run.layout,
        io_log: req.io_log,
        profile: req.profile.map(|p| p.name().to_string()),
        quick: req.quick,
        spelling: disktier_engine::Spelling::CommandLine,
    };
    let mut m = measure(&workload, req.run.tool, &opts)?;
    if req.job.libaio() {
        m.doc.warnings.push(LIBAIO_NOTE.to_string());
    }
    Ok(m)
}

/// Runs `workload` with `tool`; `opts` carries the stop flag, the progress callback and the
/// run's settings (keep files, destructive, layout, I/O log, profile name, quick). A run that
/// completed no I/O is an error: there is nothing to print as a result or to save
/// ([`NothingMeasured`] when a signal stopped it).
pub fn measure(workload: &Workload, tool: Tool, opts: &RunOptions) -> anyhow::Result<Measurement> {
    let m = match tool {
        Tool::Native => disktier_engine::run_workload(workload, opts)
            .map(|m| Measurement {
                doc: m.doc,
                sync_hist: m.sync_hist,
            })
            .map_err(anyhow::Error::from),
        Tool::Fio => run_fio(workload, opts),
    }?;
    // Stopped before one I/O completed (Ctrl-C during the layout): a run of zeros is no
    // result, and saved it would read as a disk that did nothing (QA).
    if m.doc.interrupted && completed_nothing(&m.doc) {
        return Err(NothingMeasured::new(&m.doc.target.path).into());
    }
    if !m.doc.interrupted && completed_nothing(&m.doc) {
        let job_str = |k: &str| m.doc.job.get(k).and_then(|r| r.as_str());
        if let Some(ramp) = ramp_of_sized(&m.doc) {
            bail!(
                "the run on {} completed no I/O after its ramp_time of {ramp}: the job's I/O all fell inside the ramp, which is not measured (and nothing is saved); drop --ramp-time, or give --time-based with a --runtime, or a larger --size",
                m.doc.target.path
            );
        }
        match job_str("runtime") {
            Some(r) => bail!(
                "the run on {} completed no I/O in its runtime of {r}: nothing was measured (and nothing is saved); give it a longer --runtime",
                m.doc.target.path
            ),
            None => bail!(
                "the run on {} completed no I/O: nothing was measured (and nothing is saved)",
                m.doc.target.path
            ),
        }
    }
    Ok(m)
}

/// A run a signal stopped before one I/O completed: there is nothing to print or to save.
/// Callers that run several measurements (`--repeat`, `assess`) tell it apart from a failure.
#[derive(Debug)]
pub struct NothingMeasured {
    target: String,
}

impl NothingMeasured {
    pub fn new(target: &str) -> NothingMeasured {
        NothingMeasured {
            target: target.to_string(),
        }
    }
}

impl std::fmt::Display for NothingMeasured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interrupted by a signal before any I/O completed on {}: nothing was measured, so nothing is saved (created files were removed unless --keep-files)",
            self.target
        )
    }
}

impl std::error::Error for NothingMeasured {}

/// The ramp_time of a sized (not time-based) job: one that completed nothing ended inside its
/// ramp, which is not a disk that did nothing (QA).
pub fn ramp_of_sized(doc: &RunDoc) -> Option<&str> {
    let time_based = doc.job.get("time_based").and_then(|t| t.as_bool()) == Some(true);
    doc.job
        .get("ramp_time")
        .and_then(|r| r.as_str())
        .filter(|r| *r != "0s" && !time_based)
}

/// Whether a run completed not one read, write, sync or file.
pub fn completed_nothing(doc: &RunDoc) -> bool {
    let r = &doc.results;
    let ios: u64 = [&r.read, &r.write, &r.sync]
        .into_iter()
        .flatten()
        .map(|d| d.ios)
        .sum();
    ios == 0 && r.small_files.as_ref().is_none_or(|s| s.files == 0)
}

/// The canonical absolute path of a target, as results name it (the store and the `path`
/// label): symlinks and `..` resolved; a file that does not exist yet is its resolved directory
/// joined with its name. A path that cannot be resolved is kept as given (the run then says
/// why it cannot use it).
pub fn canonical(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::canonicalize(dir).map_or_else(|_| p.to_path_buf(), |d| d.join(name))
        }
        _ => p.to_path_buf(),
    }
}

/// Runs the job through fio after the same safety checks the native engine makes.
fn run_fio(w: &Workload, opts: &RunOptions) -> anyhow::Result<Measurement> {
    let job: &Job = match w {
        Workload::Job(j) => j,
        Workload::SmallFiles { .. } => {
            bail!("fio has no small-files job: run the small-files profile with --engine native")
        }
    };
    if opts.io_log.is_some() {
        bail!("--trace records the native engine's I/O: drop --engine fio");
    }
    // Before anything is checked or made: fio would run the whole job and then fail to read.
    if let Some(why) = disktier_engine::fio::path_problem(&job.target) {
        return Err(disktier_engine::fio::FioError::Path {
            path: job.target.clone(),
            why,
        }
        .into());
    }
    let runner = disktier_cmd::RealRunner;
    // Resolved once to an absolute path: the command that runs is the one checked here.
    let Some(fio) = disktier_cmd::which(disktier_engine::fio::FIO) else {
        bail!("fio was not found: install it (Debian package: fio) or use --engine native");
    };
    let target = disktier_engine::preflight(job, opts)?;
    // Before the run: a job that writes before it reads leaves no blank device to tell.
    let blank = disktier_engine::blank_device_read(job);
    let fo = disktier_engine::fio::FioOptions {
        keep_files: opts.keep_files,
        profile: opts.profile.clone(),
        quick: opts.quick,
        stop: Some(opts.stop.clone()),
        no_layout: !opts.layout,
        program: Some(fio),
        timeout: None,
    };
    // The cause is part of the message (not a context chain): `assess` prints one line per
    // failed profile, and `{e}` must say why.
    let m = disktier_engine::fio::run(job, &runner, target, &fo).map_err(|e| {
        anyhow!(
            "fio could not run the job on {}: {:#}",
            job.target.display(),
            anyhow::Error::from(e)
        )
    })?;
    let mut doc = m.doc;
    doc.warnings.extend(blank);
    Ok(Measurement {
        doc,
        sync_hist: m.sync_hist,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_paths_are_absolute_for_new_files_too() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("etcdtest")).unwrap();
        let dotted = real.join("etcdtest").join("..").join("etcdtest");
        assert_eq!(canonical(&dotted), real.join("etcdtest"));
        assert_eq!(canonical(&real.join("new.dat")), real.join("new.dat"));
        let missing = Path::new("/nonexistent-disktier/x");
        assert_eq!(canonical(missing), missing);
    }

    #[test]
    fn a_run_without_io_completed_nothing() {
        let mut doc: RunDoc = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "engine": "disktier", "job": {}, "target": {"path": "/x", "kind": "directory"},
            "host": {"hostname": "h", "kernel": "k", "cpus": 1}, "started_at": "", "duration_s": 0.0,
            "results": {"write": {"ios": 0, "bytes": 0, "iops": 0.0, "bw_bytes": 0.0,
                "lat_ns": {"mean": null, "stdev": null, "min": null, "max": null, "percentiles": {}}}}
        }))
        .unwrap();
        assert!(completed_nothing(&doc));
        doc.results.write.as_mut().unwrap().ios = 1;
        assert!(!completed_nothing(&doc));
    }
}
