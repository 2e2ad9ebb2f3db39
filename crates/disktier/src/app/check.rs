//! Check: can a directory's disk host etcd? The checks made before anything runs (a directory
//! etcd could use, a threshold that can pass, a job that syncs), the verdict on a measured run,
//! and the etcd-server model's run and verdict.

use super::job::JobOptions;
use super::judge;
use super::measure::{canonical, Measurement, Request, Tool};
use super::repeat::OneRun;
use anyhow::bail;
use disktier_engine::verdict::EtcdCriteria;
use disktier_engine::Workload;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Refuses a target that is not a directory: etcd keeps its data in one, and a path that is not
/// a directory would make the engine create a file there (or write to a device), which is not
/// what "check this disk for etcd" means.
pub fn etcd_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) if std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()) => bail!(
            "{} is a block device: check etcd runs in the directory etcd would use, on a filesystem (etcd keeps files); make a filesystem on the device and mount it (disktier setup), then check a directory there",
            dir.display()
        ),
        Ok(_) => bail!(
            "{} is not a directory: check etcd runs in the directory etcd would use (e.g. /var/lib/etcd); give the directory the file is in",
            dir.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{} does not exist: create it first (mkdir -p {}) on the disk etcd would use",
            dir.display(),
            dir.display()
        ),
        Err(e) => bail!("{}: {e}", dir.display()),
    }
}

/// The verdict's criteria: a threshold of 0 can never pass and is refused.
pub fn criteria(threshold: std::time::Duration) -> anyhow::Result<EtcdCriteria> {
    if threshold.is_zero() {
        bail!("--threshold 0 can never pass: give a latency such as 10ms");
    }
    Ok(EtcdCriteria {
        threshold_ns: threshold.as_nanos().min(u64::MAX as u128) as u64,
    })
}

/// Refuses a job the options turned into one that issues no fdatasync after writes: the
/// verdict is on that latency, so it is refused before it lays out and runs (QA: --rw read and
/// --fdatasync 0 ran 200 MiB first).
pub fn refuse_unsynced(req: &Request<'_>) -> anyhow::Result<()> {
    if let Workload::Job(j) = req.workload()? {
        if !j.syncs() {
            let why = if !j.rw.writes() {
                format!("--rw {} issues no writes to sync", j.rw)
            } else {
                "--fdatasync 0 (and no --fsync) issues no syncs".to_string()
            };
            bail!(
                "check etcd judges the latency of fdatasync after each write: {why}; drop the option (the etcd job writes with --fdatasync 1), or use disktier bench for other jobs"
            );
        }
    }
    Ok(())
}

/// A measured etcd job judged against `criteria`: the run (its document carries the verdicts)
/// and the lines a user reads.
pub fn judged(m: Measurement, criteria: EtcdCriteria) -> anyhow::Result<(OneRun, Vec<String>)> {
    let mut doc = m.doc;
    let v = judge::etcd(&mut doc, m.sync_hist.as_ref(), criteria)?;
    Ok((
        OneRun {
            doc,
            pass: Some(v.pass),
        },
        v.lines,
    ))
}

/// Runs the etcd-server model (etcd's WAL and backend streams) in `dir` and judges it. It
/// takes no job options and runs only with the native engine; `note` hears what is about to
/// run.
pub fn etcd_server(
    dir: &Path,
    quick: bool,
    job: &JobOptions,
    tool: Tool,
    criteria: EtcdCriteria,
    stop: Arc<AtomicBool>,
    note: &dyn Fn(String),
) -> anyhow::Result<judge::EtcdServerJudged> {
    if job.any() {
        bail!(
            "the etcd-server profile is a model of etcd's two streams, not a fio job: it takes no job options (got {}); drop them or use --profile etcd",
            job.given().join(", ")
        );
    }
    if tool == Tool::Fio {
        bail!("fio cannot run the etcd-server model (two streams with different shapes): drop --engine fio or use --profile etcd");
    }
    let dir = canonical(dir);
    let spec = disktier_engine::etcdserver::EtcdServerSpec::new(&dir, quick);
    let opts = disktier_engine::RunOptions {
        stop,
        quick,
        profile: Some("etcd-server".into()),
        ..disktier_engine::RunOptions::default()
    };
    note(format!(
        "running the etcd-server model for {} s in {}",
        spec.runtime.as_secs(),
        dir.display()
    ));
    let m = disktier_engine::etcdserver::run(&spec, &opts)?;
    Ok(judge::etcd_server(m, criteria)?)
}
