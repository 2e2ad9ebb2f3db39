//! `disktier assess [PATH ...]`: the main job. For each target filesystem it runs the quick
//! suite (etcd check, read/write IOPS, read/write throughput, latency, small files; the full
//! profiles with `--full`) in a scratch directory it creates and removes, prints a verdict table,
//! saves every run under one assess id, and writes the HTML report.
//!
//! Assess never writes to a raw device: a disk without a filesystem is listed as not assessed,
//! with the command that would prepare it.

use super::save::save_run_in_group;
use super::{print_json, progress, Ctx, Outcome};
use anyhow::{bail, Context};
use disktier_engine::verdict::{self, EtcdCriteria};
use disktier_engine::{Profile, RunDoc, RunOptions};
use disktier_store::compare::{fmt_count, fmt_value, Unit};
use disktier_store::{NewRun, StoredRun};
use disktier_units::fmt_ns;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directories on the filesystems to assess (default: the current directory).
    #[arg(value_name = "PATH", conflicts_with = "all_local")]
    pub paths: Vec<PathBuf>,
    /// Every writable local filesystem, and every eligible disk `disktier disks` reports.
    #[arg(long)]
    pub all_local: bool,
    /// Run the full profiles (minutes per target) instead of the quick suite.
    #[arg(long)]
    pub full: bool,
    /// Only these profiles, comma-separated (default: the whole suite).
    #[arg(long, value_delimiter = ',', value_name = "PROFILE,...")]
    pub only: Vec<String>,
    /// Where to write the HTML report.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "disktier-report.html",
        conflicts_with = "no_report"
    )]
    pub report: PathBuf,
    /// Do not write the HTML report.
    #[arg(long)]
    pub no_report: bool,
}

/// The suite, in the order it runs: the etcd verdict first, because it is the question most users
/// come with (the OpenShift instance-disk recipe [recipe-ocp-instance-disk]), then the GKE
/// local-SSD recipe's jobs [recipe-gke-local-ssd], then the instance-store performance recipe's
/// small files.
pub const SUITE: [Profile; 7] = [
    Profile::Etcd,
    Profile::ReadIops,
    Profile::WriteIops,
    Profile::ReadThroughput,
    Profile::WriteThroughput,
    Profile::Latency,
    Profile::SmallFiles,
];

/// What `run` works on, checked.
struct Config {
    targets: Vec<PathBuf>,
    /// Disks that cannot be assessed without writing to them raw, and why.
    skipped: Vec<Skipped>,
    profiles: Vec<Profile>,
    quick: bool,
    report: Option<PathBuf>,
    /// With --all-local a target that cannot be written is skipped, not an error.
    lenient: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub device: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
struct RunOut {
    run_id: Option<String>,
    profile: String,
    verdicts: Vec<disktier_engine::Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    read_iops: Option<f64>,
    write_iops: Option<f64>,
    read_bw_bytes: Option<f64>,
    write_bw_bytes: Option<f64>,
    p99_ns: Option<u64>,
    sync_p99_ns: Option<u64>,
    files_per_s: Option<f64>,
    seconds: f64,
}

#[derive(Debug, Serialize)]
struct TargetOut {
    path: String,
    fs_type: Option<String>,
    device: Option<String>,
    runs: Vec<RunOut>,
    /// None when the etcd profile did not run or failed to run.
    etcd_ready: Option<bool>,
}

fn config(args: Args) -> anyhow::Result<Config> {
    let mut profiles = Vec::new();
    for name in &args.only {
        let p = Profile::from_name(name.trim()).with_context(|| {
            format!(
                "--only {name}: no such profile; choose from {}",
                SUITE
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        profiles.push(p);
    }
    if profiles.is_empty() {
        profiles = SUITE.to_vec();
    }
    let mut skipped = Vec::new();
    let raw = if args.all_local {
        let (dirs, s) = all_local()?;
        skipped = s;
        dirs
    } else if args.paths.is_empty() {
        vec![std::env::current_dir().context("cannot read the current directory: pass a PATH")?]
    } else {
        args.paths
    };
    let mut targets = Vec::new();
    for p in raw {
        let meta = std::fs::metadata(&p).with_context(|| {
            format!(
                "{}: cannot assess a path that does not exist: give a directory on the disk",
                p.display()
            )
        })?;
        if !meta.is_dir() {
            use std::os::unix::fs::FileTypeExt;
            if meta.file_type().is_block_device() {
                bail!("{} is a block device: assess never writes to raw devices; mount a filesystem on it (disktier setup) and give its directory, or use disktier bench --destructive", p.display());
            }
            bail!(
                "{} is not a directory: give a directory on the filesystem to assess",
                p.display()
            );
        }
        let canon = p
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", p.display()))?;
        if !targets.contains(&canon) {
            targets.push(canon);
        }
    }
    Ok(Config {
        targets,
        skipped,
        profiles,
        quick: !args.full,
        report: (!args.no_report).then_some(args.report),
        lenient: args.all_local,
    })
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

fn all_local() -> anyhow::Result<(Vec<PathBuf>, Vec<Skipped>)> {
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
        for _ in 0..16 {
            let name = format!(".disktier-assess-{:04x}", rand16());
            let p = parent.join(name);
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(Scratch(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
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

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    let assess_id = disktier_store::new_id();
    let stop = progress::stop_flag();
    let started = Instant::now();
    let mut outs = Vec::new();
    let mut stored: Vec<StoredRun> = Vec::new();
    // Every measured run, for the Prometheus exposition.
    let mut docs: Vec<RunDoc> = Vec::new();
    let mut skipped = cfg.skipped.clone();
    for s in &skipped {
        ctx.note(format_args!("{}: {}", s.device, s.reason));
    }
    for target in &cfg.targets {
        let shown = target.display().to_string();
        let scratch = match Scratch::new(target) {
            Ok(s) => s,
            Err(e) if cfg.lenient => {
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
        };
        for (i, p) in cfg.profiles.iter().enumerate() {
            if progress::stopped() {
                break;
            }
            ctx.note(format_args!(
                "assess {shown}: {} ({}/{})",
                p.name(),
                i + 1,
                cfg.profiles.len()
            ));
            let label = format!("{} {}/{}", p.name(), i + 1, cfg.profiles.len());
            let opts = RunOptions {
                stop: stop.clone(),
                progress: progress::reporter(ctx, &label),
                profile: Some(p.name().to_string()),
                quick: cfg.quick,
                ..RunOptions::default()
            };
            let t0 = Instant::now();
            let result = disktier_engine::run_workload(&p.workload(&scratch.0, cfg.quick), &opts);
            progress::clear();
            let m = match result {
                Ok(m) => m,
                Err(e) => {
                    ctx.note(format_args!(
                        "assess {shown}: {} could not run: {e}",
                        p.name()
                    ));
                    t.runs.push(RunOut::failed(p, e.to_string()));
                    continue;
                }
            };
            let mut doc: RunDoc = m.doc;
            // The user's directory, not the scratch one, is what history and the report name.
            doc.target.path = shown.clone();
            let mut ci = None;
            if *p == Profile::Etcd {
                match verdict::etcd(&doc, m.sync_hist.as_ref(), EtcdCriteria::default()) {
                    Ok(v) => {
                        doc.verdicts = v.verdicts;
                        t.etcd_ready = Some(v.pass);
                        ci = Some(v.ci);
                    }
                    Err(e) => doc.warnings.push(e.to_string()),
                }
            }
            t.fs_type = t.fs_type.or(doc.target.fs_type.clone());
            t.device = t.device.or(doc.target.device.clone());
            let mut value = serde_json::to_value(&doc)?;
            // The p99's confidence interval travels with the etcd verdict, as `check etcd` saves it.
            if let (Some(ci), Some(first)) = (ci, value["verdicts"].get_mut(0)) {
                first["ci95"] = serde_json::to_value(&ci)?;
            }
            let run_id = save_run_in_group(ctx, "assess", Some(&assess_id), &value)?;
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
        if progress::stopped() {
            break;
        }
    }
    let report = match (&cfg.report, stored.is_empty()) {
        (Some(path), false) => {
            super::report::write_report(&stored, None, path)?;
            Some(path.clone())
        }
        _ => None,
    };
    let wall = started.elapsed().as_secs_f64();
    if ctx.json() {
        print_json(&serde_json::json!({
            "schema_version": 1,
            "assess_id": assess_id,
            "quick": cfg.quick,
            "seconds": wall,
            "targets": outs,
            "not_assessed": skipped,
            "report": report,
        }))?;
    } else if ctx.prometheus() {
        // The exposition below is the output.
    } else {
        print!("{}", table(&outs));
        for s in &skipped {
            println!("{}  {}", s.device, s.reason);
        }
        println!(
            "\nassess id {assess_id} ({:.0} s){}",
            wall,
            if cfg.quick {
                ", quick suite: --full for the full profiles"
            } else {
                ""
            }
        );
        if let Some(r) = &report {
            println!("report: {}", r.display());
        }
    }
    let refs: Vec<&RunDoc> = docs.iter().collect();
    ctx.export_metrics("assess", &refs, progress::stopped())?;
    if progress::stopped() {
        bail!(
            "interrupted by a signal: the assessment is partial (scratch directories were removed)"
        );
    }
    Ok(if outs.iter().any(|t| t.etcd_ready == Some(false)) {
        Outcome::Fail
    } else {
        Outcome::Pass
    })
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
        }
    }
}

/// The verdict table: one row per target, the figure each profile is about.
fn table(targets: &[TargetOut]) -> String {
    let mut rows = vec![[
        "TARGET",
        "FS",
        "DEVICE",
        "ETCD",
        "SYNC P99",
        "READ IOPS",
        "WRITE IOPS",
        "READ",
        "WRITE",
        "READ P99 QD1",
        "SMALL FILES",
    ]
    .map(String::from)
    .to_vec()];
    for t in targets {
        let get = |name: &str, f: &dyn Fn(&RunOut) -> Option<String>| {
            t.runs
                .iter()
                .find(|r| r.profile == name)
                .map(|r| {
                    if r.error.is_some() {
                        "failed".into()
                    } else {
                        f(r).unwrap_or_else(|| "-".into())
                    }
                })
                .unwrap_or_else(|| "-".into())
        };
        rows.push(vec![
            t.path.clone(),
            t.fs_type.clone().unwrap_or_else(|| "-".into()),
            t.device.clone().unwrap_or_else(|| "-".into()),
            match t.etcd_ready {
                Some(true) => "ready".into(),
                Some(false) => "NOT ready".into(),
                None => "-".into(),
            },
            get("etcd", &|r| r.sync_p99_ns.map(|v| fmt_ns(v as f64))),
            get("read-iops", &|r| r.read_iops.map(fmt_count)),
            get("write-iops", &|r| r.write_iops.map(fmt_count)),
            get("read-throughput", &|r| {
                r.read_bw_bytes.map(|v| fmt_value(Unit::BytesPerSec, v))
            }),
            get("write-throughput", &|r| {
                r.write_bw_bytes.map(|v| fmt_value(Unit::BytesPerSec, v))
            }),
            get("latency", &|r| r.p99_ns.map(|v| fmt_ns(v as f64))),
            get("small-files", &|r| {
                r.files_per_s.map(|v| format!("{}/s", fmt_count(v)))
            }),
        ]);
    }
    let mut s = String::from("\n");
    s.push_str(&super::compare::align(&rows));
    for t in targets {
        for r in &t.runs {
            if let Some(e) = &r.error {
                s.push_str(&format!("{}: {} failed: {e}\n", t.path, r.profile));
            }
        }
    }
    s
}

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
}
