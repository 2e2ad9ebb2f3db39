//! Check: can a directory's disk host etcd? The checks made before anything runs (a directory
//! etcd could use, a threshold that can pass, a job that syncs), the verdict on a measured run,
//! and the etcd-server model's run and verdict.

use super::job::JobOptions;
use super::judge;
use super::measure::{canonical, Measurement, Request, RunSettings, Tool};
use super::repeat::OneRun;
use anyhow::bail;
use disktier_engine::verdict::EtcdCriteria;
use disktier_engine::{Profile, Workload};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The etcd jobs `check etcd` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtcdKind {
    /// etcd's classic fio job (the `etcd` profile).
    Etcd,
    /// The OpenShift etcd-perf job (the `etcd-openshift` profile).
    EtcdOpenshift,
    /// The etcd-server model: etcd's WAL and backend streams, not a fio job.
    EtcdServer,
}

/// A `check etcd` on a directory, checked: what runs, judged against what.
pub enum EtcdCheck<'a> {
    /// An etcd fio job: measure `request` ([`super::measure::measure_request`]), then
    /// [`judged`].
    Job {
        request: Request<'a>,
        criteria: EtcdCriteria,
    },
    /// The etcd-server model: [`etcd_server`].
    Server {
        dir: &'a Path,
        quick: bool,
        criteria: EtcdCriteria,
    },
}

/// Checks a `check etcd` before anything runs, in this order: `dir` is a directory, the
/// threshold can pass, and then for the etcd-server model that no job options and not fio were
/// given, for a job that the options leave it syncing after writes.
pub fn prepare<'a>(
    dir: &'a Path,
    kind: EtcdKind,
    quick: bool,
    job: &'a JobOptions,
    run: RunSettings,
    threshold: std::time::Duration,
) -> anyhow::Result<EtcdCheck<'a>> {
    etcd_dir(dir)?;
    let criteria = criteria(threshold)?;
    let profile = match kind {
        EtcdKind::Etcd => Profile::Etcd,
        EtcdKind::EtcdOpenshift => Profile::EtcdOpenshift,
        EtcdKind::EtcdServer => {
            if job.any() {
                bail!(
                    "the etcd-server profile is a model of etcd's two streams, not a fio job: it takes no job options (got {}); drop them or use --profile etcd",
                    job.given().join(", ")
                );
            }
            if run.tool == Tool::Fio {
                bail!("fio cannot run the etcd-server model (two streams with different shapes): drop --engine fio or use --profile etcd");
            }
            return Ok(EtcdCheck::Server {
                dir,
                quick,
                criteria,
            });
        }
    };
    let request = Request {
        target: dir,
        profile: Some(profile),
        quick,
        job,
        run,
        io_log: None,
    };
    refuse_unsynced(&request)?;
    Ok(EtcdCheck::Job { request, criteria })
}

/// Refuses a target that is not a directory: etcd keeps its data in one, and a path that is not
/// a directory would make the engine create a file there (or write to a device), which is not
/// what "check this disk for etcd" means.
fn etcd_dir(dir: &Path) -> anyhow::Result<()> {
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
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A name in /dev is a device's: no `mkdir -p` there (the engine says why).
            if let Err(e @ disktier_engine::EngineError::NoSuchDevice { .. }) =
                disktier_engine::target::classify(dir)
            {
                return Err(e.into());
            }
            bail!(
                "{} does not exist: create it first (mkdir -p {}) on the disk etcd would use",
                dir.display(),
                dir.display()
            )
        }
        Err(e) => bail!("{}: {e}", dir.display()),
    }
}

/// The verdict's criteria: a threshold of 0 can never pass and is refused.
fn criteria(threshold: std::time::Duration) -> anyhow::Result<EtcdCriteria> {
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
fn refuse_unsynced(req: &Request<'_>) -> anyhow::Result<()> {
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

/// Measures an etcd job ([`super::measure::measure_request`]; `stop` and `progress` come from
/// the front end) and judges it against `criteria` ([`judged`]).
pub fn measure_and_judge(
    request: Request<'_>,
    criteria: EtcdCriteria,
    stop: Arc<AtomicBool>,
    progress: Option<Arc<disktier_engine::ProgressFn>>,
) -> anyhow::Result<(OneRun, Vec<String>)> {
    let job = match request.workload()? {
        Workload::Job(j) => Some(j),
        Workload::SmallFiles { .. } => None,
    };
    let quick = request.quick;
    let mut m = super::measure::measure_request(request, stop, progress)?;
    let cut = job.and_then(|j| cut_short(&j, quick, &m.doc));
    let fix = cut.as_ref().map(|c| c.1);
    m.doc.warnings.extend(cut.map(|c| c.0));
    judged(m, criteria, fix)
}

/// Says so when a size-based job's runtime (with `--quick`, the etcd profile's cap,
/// [`disktier_engine::profile::QUICK_ETCD_CAP`]) ended it before it wrote its size: the p99 is
/// then of fewer fdatasyncs than the job's, which its interval shows (QA: without a cap a quick
/// check on a slow disk ran for minutes; with one, a run cut short must not read as whole).
pub(crate) fn cut_short(
    job: &disktier_engine::Job,
    quick: bool,
    doc: &disktier_engine::RunDoc,
) -> Option<(String, &'static str)> {
    let (runtime, size) = (job.runtime?, job.size?);
    // Whole blocks: 4 MiB of 2300-byte writes is 1,823 of them, 4,192,900 bytes.
    let planned = (size / job.bs.max(1))
        .saturating_mul(job.bs)
        .saturating_mul(u64::from(job.numjobs.max(1)));
    let written = doc.results.write.as_ref().map_or(0, |w| w.bytes);
    // A size-based run that was not interrupted stops short of its size only at its runtime.
    // Its ramp's writes are not counted, so with a ramp it must also have lasted about that
    // long (the last fdatasync can end a slow disk's second before the deadline: QA saw 4.91 s
    // of 5).
    let ran_out = job.ramp_time.is_zero() || doc.duration_s + 1.0 >= runtime.as_secs_f64();
    if job.time_based || doc.interrupted || written >= planned || !ran_out {
        return None;
    }
    let quick_cap = quick && runtime == disktier_engine::profile::QUICK_ETCD_CAP;
    let cap = if quick_cap {
        format!("--quick's cap of {} s", runtime.as_secs())
    } else {
        format!("the runtime of {} s", runtime.as_secs_f64())
    };
    let fix = judge::cut_short_fix(quick_cap);
    let writes = doc.results.write.as_ref().map_or(0, |w| w.ios);
    let warning = format!(
        "{cap} ended the job after {} of its {} writes ({} of {}, {} fdatasyncs): the p99 is of fewer samples than the whole job's (see its interval); {fix}",
        writes,
        planned / job.bs.max(1),
        disktier_units::Bytes(written),
        disktier_units::Bytes(size.saturating_mul(u64::from(job.numjobs.max(1)))),
        doc.results.sync.as_ref().map_or(0, |s| s.ios),
    );
    Some((warning, fix))
}

/// A measured etcd job judged against `criteria`: the run (its document carries the verdicts)
/// and the lines a user reads.
/// `cut_short`: a runtime cap ended it before its size ([`cut_short`]), and the fix to say.
pub fn judged(
    m: Measurement,
    criteria: EtcdCriteria,
    cut_short: Option<&str>,
) -> anyhow::Result<(OneRun, Vec<String>)> {
    let mut doc = m.doc;
    let v = judge::etcd(&mut doc, m.sync_hist.as_ref(), criteria, cut_short)?;
    Ok((
        OneRun {
            doc,
            pass: Some(v.pass),
        },
        v.lines,
    ))
}

/// Runs the etcd-server model (etcd's WAL and backend streams) in `dir` and judges it; `note`
/// hears what is about to run.
pub fn etcd_server(
    dir: &Path,
    quick: bool,
    criteria: EtcdCriteria,
    stop: Arc<AtomicBool>,
    note: &dyn Fn(String),
) -> anyhow::Result<judge::EtcdServerJudged> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_engine::Rw;
    use std::time::Duration;

    const NATIVE: RunSettings = RunSettings {
        tool: Tool::Native,
        keep_files: false,
        destructive: false,
        layout: true,
    };

    fn prepared(
        dir: &Path,
        kind: EtcdKind,
        job: &JobOptions,
        run: RunSettings,
        ms: u64,
    ) -> Result<&'static str, String> {
        match prepare(dir, kind, true, job, run, Duration::from_millis(ms)) {
            Ok(EtcdCheck::Job { .. }) => Ok("job"),
            Ok(EtcdCheck::Server { .. }) => Ok("server"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn prepare_checks_in_order_and_picks_the_runner() {
        let d = tempfile::tempdir().unwrap();
        let none = JobOptions::default();
        let fio = RunSettings {
            tool: Tool::Fio,
            ..NATIVE
        };
        assert_eq!(
            prepared(d.path(), EtcdKind::Etcd, &none, NATIVE, 10),
            Ok("job")
        );
        assert_eq!(
            prepared(d.path(), EtcdKind::EtcdServer, &none, NATIVE, 10),
            Ok("server")
        );
        // The directory first, then the threshold, then what the kind refuses.
        let missing = d.path().join("missing");
        let e = prepared(&missing, EtcdKind::EtcdServer, &none, fio, 0).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let e = prepared(d.path(), EtcdKind::EtcdServer, &none, fio, 0).unwrap_err();
        assert!(e.contains("--threshold 0"), "{e}");
        let e = prepared(d.path(), EtcdKind::EtcdServer, &none, fio, 10).unwrap_err();
        assert!(e.contains("fio cannot run the etcd-server model"), "{e}");
        let read = JobOptions {
            rw: Some(Rw::Read),
            ..JobOptions::default()
        };
        let e = prepared(d.path(), EtcdKind::EtcdServer, &read, NATIVE, 10).unwrap_err();
        assert!(e.contains("takes no job options (got --rw)"), "{e}");
        let e = prepared(d.path(), EtcdKind::Etcd, &read, NATIVE, 10).unwrap_err();
        assert!(e.contains("--rw read issues no writes to sync"), "{e}");
        let f = d.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        let e = prepared(&f, EtcdKind::Etcd, &none, NATIVE, 10).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
    }
}
