//! Measure: run one resolved workload with the native engine or through fio, after the same
//! safety checks, and return the result document and the sync latency histogram.

use anyhow::{anyhow, bail};
use disktier_engine::{Job, RunDoc, RunOptions, Workload};

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

/// Runs `workload` with `tool`; `opts` carries the stop flag, the progress callback and the
/// run's settings (keep files, destructive, layout, I/O log, profile name, quick).
pub fn measure(workload: &Workload, tool: Tool, opts: &RunOptions) -> anyhow::Result<Measurement> {
    match tool {
        Tool::Native => disktier_engine::run_workload(workload, opts)
            .map(|m| Measurement {
                doc: m.doc,
                sync_hist: m.sync_hist,
            })
            .map_err(anyhow::Error::from),
        Tool::Fio => run_fio(workload, opts),
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
    let runner = disktier_cmd::RealRunner;
    // Resolved once to an absolute path: the command that runs is the one checked here.
    let Some(fio) = disktier_cmd::which(disktier_engine::fio::FIO) else {
        bail!("fio was not found: install it (Debian package: fio) or use --engine native");
    };
    let target = disktier_engine::preflight(job, opts)?;
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
    Ok(Measurement {
        doc: m.doc,
        sync_hist: m.sync_hist,
    })
}
