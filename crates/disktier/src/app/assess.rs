//! Assess: the quick suite (or the full profiles) on each target filesystem, in a scratch
//! directory made and removed there; every run measured through [`super::measure`], the etcd
//! run judged, every run saved under one assess id. The command prints the outcome and writes
//! the report.
//!
//! Assess never writes to a raw device: a disk without a filesystem is listed as not assessed,
//! with the command that would prepare it.

use super::judge;
use super::measure::{measure, Tool};
use super::save::StoreConfig;
use anyhow::{bail, Context};
use disktier_engine::verdict::EtcdCriteria;
use disktier_engine::{Profile, ProgressFn, RunDoc, RunOptions};
use disktier_store::{NewRun, StoredRun};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

mod options;
pub use options::Options;

/// The suite, in the order it runs: the etcd verdict first, because it is the question most users
/// come with (the OpenShift instance-disk recipe [recipe-ocp-instance-disk]), then the GKE
/// local-SSD recipe's jobs [recipe-gke-local-ssd], then the instance-store performance recipe's
/// small files [recipe-instance-store-perf] (docs/sources.md).
pub const SUITE: [Profile; 7] = [
    Profile::Etcd,
    Profile::ReadIops,
    Profile::WriteIops,
    Profile::ReadThroughput,
    Profile::WriteThroughput,
    Profile::Latency,
    Profile::SmallFiles,
];

/// What to assess, checked.
pub struct Request {
    pub targets: Vec<PathBuf>,
    /// Disks that cannot be assessed without writing to them raw, and why.
    pub skipped: Vec<Skipped>,
    pub profiles: Vec<Profile>,
    pub quick: bool,
    /// With --all-local a target that cannot be written is skipped, not an error.
    pub lenient: bool,
    pub tool: Tool,
    /// Where the HTML report goes (None: no report).
    pub report: Option<PathBuf>,
}

/// What the caller sees while the assessment runs, and where runs go.
pub struct Hooks<'a> {
    /// A note for the user (stderr, unless quiet).
    pub note: &'a dyn Fn(&str),
    /// The progress callback for the run labelled so.
    pub progress: &'a dyn Fn(&str) -> Option<Arc<ProgressFn>>,
    /// Called after each run (the progress line is erased).
    pub done: &'a dyn Fn(),
    /// Set by a signal: the current run stops, no other starts.
    pub stop: Arc<AtomicBool>,
    pub store: StoreConfig,
}

/// A finished (or interrupted) assessment.
pub struct Assessment {
    pub assess_id: String,
    pub targets: Vec<TargetOut>,
    /// Disks and targets that were not assessed, and why.
    pub skipped: Vec<Skipped>,
    /// Every measured run, for the Prometheus exposition.
    pub docs: Vec<RunDoc>,
    pub interrupted: bool,
    /// The HTML report written, if any.
    pub report: Option<PathBuf>,
    /// Why the report asked for could not be written: the runs are measured and saved, and
    /// are printed before this is reported.
    pub report_error: Option<anyhow::Error>,
}

impl Assessment {
    /// False when an etcd verdict failed (exit 1).
    pub fn pass(&self) -> bool {
        !self.targets.iter().any(|t| t.etcd_ready == Some(false))
    }

    /// The targets whose etcd profile could not run (too little room, no permission): their
    /// readiness is unknown, which is no pass (QA: a full filesystem exited 0, "every target
    /// that ran the etcd profile is etcd-ready").
    pub fn etcd_not_run(&self) -> Vec<&str> {
        self.targets
            .iter()
            .filter(|t| {
                t.runs
                    .iter()
                    .any(|r| r.profile == Profile::Etcd.name() && r.error.is_some())
            })
            .map(|t| t.path.as_str())
            .collect()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub device: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct RunOut {
    pub run_id: Option<String>,
    pub profile: String,
    pub verdicts: Vec<judge::RunVerdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub read_bw_bytes: Option<f64>,
    pub write_bw_bytes: Option<f64>,
    pub p99_ns: Option<u64>,
    pub sync_p99_ns: Option<u64>,
    pub files_per_s: Option<f64>,
    pub seconds: f64,
    /// A signal stopped this run: its figures are partial.
    pub interrupted: bool,
    /// The run's warnings (its document's: a cap that ended the quick etcd job early, a
    /// fallback the engine took), shown under the table as `show RUN` shows them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct TargetOut {
    pub path: String,
    pub fs_type: Option<String>,
    pub device: Option<String>,
    pub runs: Vec<RunOut>,
    /// None when the etcd profile did not run, failed to run or was interrupted.
    pub etcd_ready: Option<bool>,
    /// True (and `etcd_ready` false) when `--quick`'s cap cut the etcd run short and its p99's
    /// interval does not settle the verdict (`verdicts[].inconclusive`). Left out when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub etcd_inconclusive: bool,
    /// Why the figures say nothing about a disk, when they do not (a tmpfs target: RAM).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
}

/// Runs the assessment `req` describes.
pub fn assess(req: &Request, hooks: &Hooks<'_>) -> anyhow::Result<Assessment> {
    let assess_id = disktier_store::new_id();
    let stop = hooks.stop.clone();
    let mut outs = Vec::new();
    let mut stored: Vec<StoredRun> = Vec::new();
    // Every measured run, for the Prometheus exposition.
    let mut docs: Vec<RunDoc> = Vec::new();
    let mut skipped = req.skipped.clone();
    for s in &skipped {
        (hooks.note)(&format!("{}: {}", s.device, s.reason));
    }
    // Every target given by name must take a scratch directory before any is measured (QA: a
    // read-only second target failed the assessment after the first had been measured, with
    // exit 2 and no table); --all-local lists such a target as not assessed instead.
    if !req.lenient {
        for target in &req.targets {
            drop(Scratch::new(target)?);
        }
    }
    for target in &req.targets {
        let shown = target.display().to_string();
        let scratch = match Scratch::new(target) {
            Ok(s) => s,
            Err(e) if req.lenient => {
                skipped.push(Skipped {
                    device: shown,
                    reason: format!("not assessed: {e:#}"),
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut t = TargetOut {
            path: shown.clone(),
            fs_type: None,
            device: None,
            runs: Vec::new(),
            etcd_ready: None,
            etcd_inconclusive: false,
            caveat: None,
        };
        for (i, p) in req.profiles.iter().enumerate() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            (hooks.note)(&format!(
                "assess {shown}: {} ({}/{})",
                p.name(),
                i + 1,
                req.profiles.len()
            ));
            let label = format!("{} {}/{}", p.name(), i + 1, req.profiles.len());
            let opts = RunOptions {
                stop: stop.clone(),
                progress: (hooks.progress)(&label),
                profile: Some(p.name().to_string()),
                quick: req.quick,
                ..RunOptions::default()
            };
            let t0 = Instant::now();
            let workload = p.workload(&scratch.0, req.quick);
            let result = measure(&workload, req.tool, &opts);
            (hooks.done)();
            let m = match result {
                Ok(m) => m,
                // Stopped before it measured anything: not a profile that could not run, and
                // nothing to save; the assessment ends as interrupted.
                Err(e) if e.is::<super::measure::NothingMeasured>() => break,
                Err(e) => {
                    let why = assess_error(&e, p, &shown);
                    (hooks.note)(&format!(
                        "assess {shown}: {} could not run: {why}",
                        p.name()
                    ));
                    t.runs.push(RunOut::failed(p, why));
                    continue;
                }
            };
            let mut doc: RunDoc = m.doc;
            // The user's directory, not the scratch one, is what history and the report name.
            doc.target.path = shown.clone();
            if *p == Profile::Etcd {
                // The quick etcd job's cap, said as check etcd says it.
                let mut cut = None;
                if let disktier_engine::Workload::Job(j) = &workload {
                    if let Some((w, fix)) = super::check::cut_short(j, req.quick, &doc) {
                        doc.warnings.push(w);
                        cut = Some(fix);
                    }
                }
                match judge::etcd(&mut doc, m.sync_hist.as_ref(), EtcdCriteria::default(), cut) {
                    // A run cut short by a signal establishes nothing (it is marked partial).
                    Ok(v) if !doc.interrupted => {
                        t.etcd_ready = Some(v.pass);
                        t.etcd_inconclusive = v.verdicts.first().is_some_and(|v| v.inconclusive);
                    }
                    Ok(_) => {}
                    Err(e) => doc.warnings.push(format!("{e:#}")),
                }
            }
            if t.caveat.is_none() {
                t.caveat = disktier_engine::verdict::ram_caveat(&doc);
            }
            t.fs_type = t.fs_type.or(doc.target.fs_type.clone());
            t.device = t.device.or(doc.target.device.clone());
            let value = serde_json::to_value(&doc)?;
            let run_id = hooks.store.save("assess", Some(&assess_id), &value)?;
            let id = run_id.clone().unwrap_or_else(disktier_store::new_id);
            stored.push(
                NewRun {
                    kind: "assess",
                    group_id: Some(&assess_id),
                    doc: &value,
                }
                .to_row(id, disktier_store::model::now_rfc3339()),
            );
            t.runs.push(RunOut::from_doc(
                run_id,
                p,
                &doc,
                t0.elapsed().as_secs_f64(),
            ));
            let interrupted = doc.interrupted;
            docs.push(doc);
            if interrupted {
                break;
            }
        }
        drop(scratch);
        outs.push(t);
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    // QA: a report that could not be written (a full disk) failed the assessment here, after
    // every profile had run: no table and no JSON, and with --no-save nothing kept.
    let (report, report_error) = match report_to_write(req.report.as_deref(), !stored.is_empty()) {
        Some(path) => match super::report::write_report(&stored, None, path, "--report") {
            Ok(()) => (Some(path.to_path_buf()), None),
            Err(e) => (None, Some(e)),
        },
        None => (None, None),
    };
    Ok(Assessment {
        assess_id,
        targets: outs,
        skipped,
        docs,
        interrupted: stop.load(Ordering::SeqCst),
        report,
        report_error,
    })
}

/// The report is written when one was asked for and a run was saved (an assessment that ran
/// nothing leaves no report, and no old one overwritten).
fn report_to_write(report: Option<&Path>, any_run: bool) -> Option<&Path> {
    report.filter(|_| any_run)
}

/// Filesystems that live on a local block device (the kernel's names); tmpfs, overlays and
/// network filesystems are not a disk.
const LOCAL_FS: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "bcachefs", "jfs", "reiserfs", "nilfs2",
    "vfat", "exfat",
];

/// One writable mount point per local device, from mountinfo text.
pub fn local_mounts(mountinfo: &str) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for m in disktier_disks::discover::mountinfo::parse(mountinfo) {
        let ro = m.options.split(',').any(|o| o == "ro");
        if ro
            || !LOCAL_FS.contains(&m.fstype.as_str())
            || m.root != "/"
            || seen.contains(&m.maj_min)
        {
            continue;
        }
        seen.push(m.maj_min.clone());
        out.push(PathBuf::from(m.mount_point));
    }
    out
}

pub fn all_local() -> anyhow::Result<(Vec<PathBuf>, Vec<Skipped>)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .context("cannot read /proc/self/mountinfo")?;
    // Read-only mounts are already left out; one that is not writable for this user shows up
    // when its scratch directory cannot be made, and is listed as not assessed.
    let dirs = local_mounts(&text);
    let mut skipped = Vec::new();
    match disktier_disks::discover::discover(Path::new("/"), &disktier_cmd::RealRunner) {
        Ok(disks) => {
            for d in disks {
                let unformatted = d.all_mountpoints().is_empty()
                    && d.partitions.is_empty()
                    && d.signature.is_blank();
                if d.eligible && unformatted {
                    skipped.push(Skipped {
                        device: d.best_path().to_string(),
                        reason: "not assessed: no filesystem (run disktier setup)".into(),
                    });
                }
            }
        }
        Err(e) => skipped.push(Skipped {
            device: "(disk discovery)".into(),
            reason: format!("cannot list disks: {e}"),
        }),
    }
    Ok((dirs, skipped))
}

/// A scratch directory `.disktier-assess-XXXX` inside a target, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(parent: &Path) -> anyhow::Result<Scratch> {
        if let Some(fs) = disktier_engine::target::pseudo_fs(parent) {
            return Err(disktier_engine::EngineError::PseudoFs {
                path: parent.into(),
                fs,
            }
            .into());
        }
        for _ in 0..16 {
            let name = format!(".disktier-assess-{:04x}", rand16());
            let p = parent.join(name);
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(Scratch(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) if e.raw_os_error() == Some(libc::EROFS) => bail!(
                    "{} is on a read-only filesystem: assess writes a scratch directory there; remount it read-write (mount -o remount,rw) or give another path",
                    parent.display()
                ),
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!(
                        "cannot create a scratch directory in {}: assess needs write access there",
                        parent.display()
                    )
                    })
                }
            }
        }
        bail!(
            "cannot find a free scratch directory name in {}",
            parent.display()
        )
    }
}

fn rand16() -> u16 {
    let id = disktier_store::new_id();
    u16::from_str_radix(&id[id.len() - 4..], 16).unwrap_or(0)
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl RunOut {
    fn failed(p: &Profile, error: String) -> RunOut {
        RunOut {
            run_id: None,
            profile: p.name().into(),
            verdicts: Vec::new(),
            error: Some(error),
            read_iops: None,
            write_iops: None,
            read_bw_bytes: None,
            write_bw_bytes: None,
            p99_ns: None,
            sync_p99_ns: None,
            files_per_s: None,
            seconds: 0.0,
            interrupted: false,
            warnings: Vec::new(),
        }
    }

    fn from_doc(run_id: Option<String>, p: &Profile, d: &RunDoc, seconds: f64) -> RunOut {
        let r = &d.results;
        let pos = |v: f64| (v > 0.0).then_some(v);
        let p99 = r
            .read
            .as_ref()
            .or(r.write.as_ref())
            .and_then(|s| s.lat_ns.p(99.0));
        RunOut {
            run_id,
            profile: p.name().into(),
            verdicts: d.verdicts.clone(),
            error: None,
            read_iops: r.read.as_ref().map(|s| s.iops).and_then(pos),
            write_iops: r.write.as_ref().map(|s| s.iops).and_then(pos),
            read_bw_bytes: r.read.as_ref().map(|s| s.bw_bytes).and_then(pos),
            write_bw_bytes: r.write.as_ref().map(|s| s.bw_bytes).and_then(pos),
            p99_ns: p99,
            sync_p99_ns: r.sync.as_ref().and_then(|s| s.lat_ns.p(99.0)),
            files_per_s: r.small_files.as_ref().map(|s| s.files_per_s).and_then(pos),
            seconds,
            interrupted: d.interrupted,
            warnings: d.warnings.clone(),
        }
    }
}

/// Why profile `p` could not run on `shown`, with advice `assess` can follow: the engine's
/// errors name `bench`'s options (`--direct=false`, `--size`), which assess does not take.
fn assess_error(e: &anyhow::Error, p: &Profile, shown: &str) -> String {
    use disktier_engine::EngineError;
    // The etcd profile alone gives its verdict through `check etcd` (QA: `bench --profile
    // etcd` was advised, which measures and gives none).
    let alone = match p {
        Profile::SmallFiles => format!("disktier bench {shown} --profile {p} --nrfiles N"),
        Profile::Etcd => format!("disktier check etcd {shown} --size SIZE"),
        _ => format!("disktier bench {shown} --profile {p} --size SIZE"),
    };
    match e.downcast_ref::<EngineError>() {
        Some(EngineError::DirectUnsupported { fs, .. }) => format!(
            "{shown} is on {fs}, which has no O_DIRECT, and the {p} profile measures with it: it cannot run there ({fs} is RAM, not a disk)"
        ),
        Some(EngineError::NoSpace { need, free, .. }) => format!(
            "the {p} profile needs {need} bytes but {shown} has only {free} bytes free: free some space, or run it alone scaled down: {alone}"
        ),
        Some(EngineError::DiskFull { .. }) => format!(
            "the filesystem of {shown} filled up during the {p} profile (its files were removed): free some space, or run it alone scaled down: {alone}"
        ),
        Some(EngineError::ReadOnlyFs { .. }) => format!(
            "{shown} is on a read-only filesystem: remount it read-write (mount -o remount,rw) or assess another path"
        ),
        // `{:#}`: the whole chain, so the OS error behind an I/O error is shown.
        _ => format!("{e:#}"),
    }
}

/// The verdict table: one row per target, the figure each profile is about.
#[cfg(test)]
mod tests {
    #[test]
    fn local_mounts_skip_virtual_readonly_and_duplicates() {
        let text = "\
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
23 22 0:5 / /dev rw - devtmpfs udev rw
24 22 0:21 / /dev/shm rw - tmpfs tmpfs rw
25 22 259:1 / /var/lib/containers rw,noatime - xfs /dev/nvme1n1 rw,prjquota
26 22 259:1 / /mnt/again rw - xfs /dev/nvme1n1 rw
27 22 259:2 / /mnt/ro ro - ext4 /dev/nvme2n1 ro
28 22 259:3 /sub /mnt/bind rw - ext4 /dev/nvme3n1 rw
29 22 0:40 / /mnt/nfs rw - nfs4 srv:/x rw
";
        let got = super::local_mounts(text);
        assert_eq!(
            got,
            vec![std::path::PathBuf::from("/"), "/var/lib/containers".into()]
        );
    }

    /// QA: the etcd profile's advice was `disktier bench DIR --profile etcd --size SIZE`,
    /// which measures but gives no verdict; `check etcd` does.
    #[test]
    fn a_profile_without_room_is_advised_the_command_that_gives_its_answer() {
        use disktier_engine::{EngineError, Profile};
        let e = |p: &Profile| {
            let err = anyhow::Error::new(EngineError::NoSpace {
                path: "/d".into(),
                need: 4 << 20,
                free: 1 << 20,
                fix: disktier_engine::Advice::default(),
            });
            super::assess_error(&err, p, "/d")
        };
        assert!(
            e(&Profile::Etcd).ends_with("scaled down: disktier check etcd /d --size SIZE"),
            "{}",
            e(&Profile::Etcd)
        );
        assert!(e(&Profile::SmallFiles).ends_with("--profile small-files --nrfiles N"));
        assert!(e(&Profile::Latency).ends_with("--profile latency --size SIZE"));
    }

    #[test]
    fn report_only_when_asked_for_and_a_run_was_saved() {
        use std::path::Path;
        let r = Some(Path::new("r.html"));
        assert_eq!(super::report_to_write(r, true), r);
        assert_eq!(super::report_to_write(r, false), None);
        assert_eq!(super::report_to_write(None, true), None);
    }
}
