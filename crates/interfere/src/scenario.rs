//! Running the comparison: a baseline (the probe alone), then for each mitigation the probe with
//! the aggressor next to it, the mitigation applied for real, checked by reading it back, and
//! undone afterwards. Every change goes through the [`Journal`] first.

use crate::aggressor::process::Aggressor;
use crate::aggressor::{AggressorKind, AggressorSpec};
use crate::cgroup::{self, Support, Version};
use crate::error::{InterfereError, Result};
use crate::ioprio::{self, IoPrio};
use crate::journal::{self, Change, Journal, CGROUP_PREFIX, DIR_PREFIX};
use crate::mitigation::{Combo, Mitigation};
use crate::report::{AggressorResult, InterfereDoc, Scenario};
use crate::scheduler::{self, Device};
use disktier_engine::{DirStats, Job, Profile, RunOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The cgroup v1 bfq weight given to the aggressor: 10 against the default 100
/// (`cgroup-v1/blkio-controller.rst`: weights 1-1000, default 100), a tenth of the probe's share.
pub const V1_WEIGHT: u32 = 10;
/// The cgroup v2 io.weight given to the aggressor: 10 against the default 100 (range 1-10000,
/// `cgroup-v2.rst`).
pub const V2_WEIGHT: u32 = 10;

/// A scenario's changes, in place, as `Config::on_applied` sees them.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The scenario's first (for a single mitigation, its only) mitigation.
    pub mitigation: Mitigation,
    /// All of the scenario's mitigations (more than one for `a+b`).
    pub parts: Vec<Mitigation>,
    pub aggressor_pid: i32,
    /// The read-back lines that also go into the scenario's `applied`.
    pub readback: Vec<String>,
}

/// See [`Config::on_applied`].
pub type OnApplied = Box<dyn Fn(&Applied)>;
/// The engine's progress callback.
pub type ProgressFn = Arc<dyn Fn(&disktier_engine::Progress) + Send + Sync>;

/// What the command line asked for, checked.
pub struct Config {
    pub dir: PathBuf,
    pub aggressor: AggressorKind,
    /// The user's command when `aggressor` is [`AggressorKind::Command`] (`--aggressor-cmd`).
    pub aggressor_cmd: Option<crate::aggressor::command::UserCommand>,
    pub aggressor_size: u64,
    pub mitigations: Vec<Combo>,
    /// How long the probe runs in each scenario.
    pub duration: Duration,
    /// etcd's limit for the fdatasync p99 (10 ms in etcd's docs).
    pub threshold: Duration,
    /// `cgroup-throttle`: the aggressor's write limit in bytes/s and IOPS.
    pub throttle_bps: u64,
    pub throttle_iops: u64,
    /// Where the journal and its lock live.
    pub run_dir: PathBuf,
    /// Builds the command that runs the aggressor process (the binary re-executed).
    pub launcher: Box<dyn Fn(&AggressorSpec) -> Command>,
    /// Set by Ctrl-C: the current scenario stops within a second and everything is undone.
    pub stop: Arc<AtomicBool>,
    /// How long the aggressor may run after it starts before it is stopped and marked capped.
    pub cap: Duration,
    /// How long after the probe the aggressor starts.
    pub start_delay: Duration,
    /// Receives notes ("scenario 2/5: ostree/ionice-idle") as the run goes.
    pub notes: Box<dyn Fn(&str)>,
    /// Called once a scenario's changes are applied, before the aggressor starts writing
    /// (tests use it to look at the system themselves).
    pub on_applied: Option<OnApplied>,
    /// The probe's progress (the binary's live line).
    pub progress: Option<ProgressFn>,
}

impl Config {
    /// The aggressor cap when the user gave none: long enough for a mitigation that makes the
    /// aggressor ten times slower to show it, bounded so a run always ends.
    pub fn default_cap(duration: Duration) -> Duration {
        duration.saturating_mul(10).max(Duration::from_secs(30))
    }
}

/// The probe: the `etcd` profile's job (2300-byte writes, fdatasync after each, ioengine sync),
/// made time-based for `duration`.
pub fn probe_job(dir: &Path, duration: Duration) -> Job {
    let mut job = match Profile::Etcd.workload(dir, false) {
        disktier_engine::Workload::Job(j) => j,
        disktier_engine::Workload::SmallFiles { .. } => unreachable!("etcd is a job"),
    };
    job.name = "probe".into();
    job.time_based = true;
    job.runtime = Some(duration);
    job
}

struct Ctx<'a> {
    cfg: &'a Config,
    journal: Journal,
    device: std::result::Result<Device, String>,
    sched_file: Option<PathBuf>,
    sched_before: Option<scheduler::Schedulers>,
    cgroups: Support,
    work: PathBuf,
}

/// Runs every scenario and leaves the system as it found it (also on error or Ctrl-C).
pub fn run(cfg: &Config) -> Result<InterfereDoc> {
    if !cfg.dir.is_dir() {
        return Err(InterfereError::NotADirectory(cfg.dir.clone()));
    }
    // The probe's file (22 MiB, the etcd profile) and one aggressor's files exist at a time.
    let need = cfg.aggressor_size + (64 << 20);
    if let Ok((_, free)) = disktier_engine::target::statfs(&cfg.dir) {
        if free < need {
            return Err(InterfereError::NoSpace {
                path: cfg.dir.clone(),
                need: cfg.aggressor_size,
                free,
            });
        }
    }
    let (mut journal, restored) = Journal::open(&cfg.run_dir)?;
    for r in &restored.undone {
        (cfg.notes)(&format!("undid what an earlier killed run left: {r}"));
    }
    let device = Device::of_path(&cfg.dir).map_err(|e| e.to_string());
    let sched_file = device.as_ref().ok().map(|d| d.scheduler_file());
    let sched_before = sched_file.as_ref().and_then(|f| scheduler::read(f).ok());
    let work = cfg.dir.join(format!(
        "{DIR_PREFIX}{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    ));
    journal.record(Change::Dir { path: work.clone() })?;
    std::fs::create_dir(&work).map_err(|e| InterfereError::io(&work, e))?;
    let mut cx = Ctx {
        cfg,
        journal,
        device,
        sched_file,
        sched_before,
        cgroups: Support::detect(),
        work,
    };
    let mut doc = new_doc(
        &cfg.dir,
        cx.device.as_ref().ok().map(|d| d.name.clone()),
        cx.sched_before.as_ref().map(|s| s.active.clone()),
        cfg,
    );
    doc.restored_leftovers = restored.undone;

    let total = cfg.mitigations.len() + 1;
    (cfg.notes)(&format!("scenario 1/{total}: baseline (the probe alone)"));
    let outcome = run_baseline(&mut cx).and_then(|s| {
        doc.scenarios.push(s);
        for (i, m) in cfg.mitigations.iter().enumerate() {
            if cfg.stop.load(Ordering::Relaxed) {
                doc.interrupted = true;
                break;
            }
            (cfg.notes)(&format!(
                "scenario {}/{total}: {}/{} ({})",
                i + 2,
                cfg.aggressor.name(),
                m.name(),
                m.describe()
            ));
            let s = run_one(&mut cx, m)?;
            doc.scenarios.push(s);
        }
        Ok(())
    });
    if cfg.stop.load(Ordering::Relaxed) {
        doc.interrupted = true;
    }
    let left = cx.journal.finish();
    if !left.failed.is_empty() {
        return Err(InterfereError::BadInput(format!(
            "could not undo every change: {}; run `disktier interfere --restore` to retry",
            left.failed.join("; ")
        )));
    }
    outcome?;
    doc.finish();
    Ok(doc)
}

fn run_baseline(cx: &mut Ctx) -> Result<Scenario> {
    let probe_dir = cx.work.join("probe");
    std::fs::create_dir(&probe_dir).map_err(|e| InterfereError::io(&probe_dir, e))?;
    let m = run_probe(cx.cfg, &probe_dir, None)?;
    Ok(Scenario::measured(
        "baseline",
        None,
        m,
        None,
        Vec::new(),
        None,
        cx.cfg.threshold,
    ))
}

/// Why `m` cannot run here, if it cannot.
fn unavailable(cx: &Ctx, m: Mitigation) -> Option<String> {
    let kind = cx.cfg.aggressor;
    let need_device = || cx.device.as_ref().err().cloned();
    let need_sched = |name: &str| -> Option<String> {
        if let Some(why) = need_device() {
            return Some(why);
        }
        let s = cx.sched_before.as_ref()?;
        if let Some(f) = cx.sched_file.as_ref().filter(|f| !crate::sys::writable(f)) {
            return Some(format!(
                "{} is not writable by this user: switching schedulers needs root (run with sudo)",
                f.display()
            ));
        }
        if !s.available.iter().any(|a| a == name) {
            return Some(format!(
                "{} offers the schedulers [{}], not {name} (load it with `modprobe {name}`)",
                cx.device.as_ref().map(|d| d.name.as_str()).unwrap_or("?"),
                s.available.join(", ")
            ));
        }
        None
    };
    let cgroup_root_writable = || -> Option<String> {
        let (_, root) = cx.cgroups.preferred().ok()?;
        if crate::sys::writable(&root) {
            None
        } else {
            Some(format!(
                "{} is not writable by this user: creating cgroups needs root (run with sudo)",
                root.display()
            ))
        }
    };
    match m {
        Mitigation::None | Mitigation::IoniceIdle | Mitigation::IoniceBe7 => None,
        Mitigation::SchedulerBfq => need_sched("bfq"),
        Mitigation::SchedulerMqDeadline => need_sched("mq-deadline"),
        Mitigation::CgroupWeight => {
            if let Some(why) = need_device().or_else(cgroup_root_writable) {
                return Some(why);
            }
            match cx.cgroups.preferred() {
                Err(why) => Some(why),
                Ok((Version::V1, _)) => need_sched("bfq").map(|why| {
                    format!("cgroup v1 weights are enforced only by the bfq scheduler, and {why}")
                }),
                Ok((Version::V2, _)) => None,
            }
        }
        Mitigation::CgroupThrottle => need_device()
            .or_else(|| cx.cgroups.preferred().err())
            .or_else(cgroup_root_writable),
        Mitigation::CgroupLatency => {
            if let Some(why) = need_device() {
                return Some(why);
            }
            match &cx.cgroups.v2 {
                Ok(_) => None,
                Err(why) => Some(format!(
                    "io.latency exists only in cgroup v2 (cgroup v1 blkio has no latency target), and {why}"
                )),
            }
        }
        Mitigation::WriterPerObjectFsync | Mitigation::WriterNoFsync => {
            kind.why_no_writer_policy().map(str::to_string)
        }
    }
}

/// Why the combination cannot run here: the first part that cannot, or a conflict between parts.
fn combo_unavailable(cx: &Ctx, c: &Combo) -> Option<String> {
    if let Some(why) = c.parts().iter().find_map(|m| unavailable(cx, *m)) {
        return Some(why);
    }
    if c.has(Mitigation::CgroupWeight)
        && c.has(Mitigation::SchedulerMqDeadline)
        && matches!(cx.cgroups.preferred(), Ok((Version::V1, _)))
    {
        return Some(
            "cgroup v1 weights are enforced only by bfq, and this combination asks for mq-deadline"
                .into(),
        );
    }
    None
}

fn run_one(cx: &mut Ctx, combo: &Combo) -> Result<Scenario> {
    let name = format!("{}/{}", cx.cfg.aggressor.name(), combo.name());
    if let Some(why) = combo_unavailable(cx, combo) {
        (cx.cfg.notes)(&format!("  unavailable: {why}"));
        return Ok(Scenario::unavailable(&name, combo.name(), why));
    }
    let has = |m: Mitigation| combo.has(m);
    let mut applied: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut undo_ids: Vec<u64> = Vec::new();

    // The scheduler first: it must be in place before any I/O of the scenario.
    let want_sched = if has(Mitigation::SchedulerBfq) {
        Some("bfq")
    } else if has(Mitigation::SchedulerMqDeadline) {
        Some("mq-deadline")
    } else if has(Mitigation::CgroupWeight)
        && matches!(cx.cgroups.preferred(), Ok((Version::V1, _)))
    {
        Some("bfq")
    } else {
        None
    };
    let result = (|| -> Result<Scenario> {
        if let Some(s) = want_sched {
            let id = switch_scheduler(cx, s, &mut applied)?;
            if id.is_some() && has(Mitigation::CgroupWeight) && !has(Mitigation::SchedulerBfq) {
                notes.push("cgroup v1 weights act only under bfq: the scheduler was switched to bfq for this scenario".into());
            }
            undo_ids.extend(id);
        }
        let active = cx
            .sched_file
            .as_ref()
            .and_then(|f| scheduler::read(f).ok())
            .map(|s| s.active);
        if has(Mitigation::IoniceIdle) || has(Mitigation::IoniceBe7) {
            match active.as_deref() {
                Some("none") | Some("kyber") => notes.push(format!(
                    "the active scheduler is {}, which ignores I/O priorities: expect no effect (the OSTree-vs-etcd issue, machine-config-operator #1897, saw the same under none)",
                    active.as_deref().unwrap_or("?")
                )),
                _ => {}
            }
            notes.push("buffered writes reach the disk from the kernel's flusher threads, which do not carry the writer's I/O class; only its fsync-driven and direct writes do".into());
        }
        if (has(Mitigation::CgroupThrottle) || has(Mitigation::CgroupWeight))
            && matches!(cx.cgroups.preferred(), Ok((Version::V1, _)))
            && cx.cfg.aggressor.has_writer_policy()
        {
            notes.push("cgroup v1 charges background writeback to the root group (blkio-controller.rst): only the writeback the aggressor's own fsyncs issue is limited".into());
        }

        if has(Mitigation::WriterNoFsync) {
            notes.push("without fsync the writer ends with data still dirty in the page cache (up to vm.dirty_ratio of RAM): its time excludes that writeback, and whatever is still unwritten when the probe ends is never counted (the scratch files are deleted)".into());
        }
        // The aggressor process, waiting for `go`.
        let adir = cx.work.join(format!("aggressor-{}", combo.name()));
        std::fs::create_dir(&adir).map_err(|e| InterfereError::io(&adir, e))?;
        let spec = AggressorSpec {
            kind: cx.cfg.aggressor,
            dir: adir.clone(),
            size: cx.cfg.aggressor_size,
            policy: combo.writer_policy(),
            seed: 0x0057_2ee5,
            command: cx.cfg.aggressor_cmd.clone(),
        };
        let mut launch = (cx.cfg.launcher)(&spec);
        let group = spec.command.is_some();
        if group {
            // The user's command and all it starts share this group, so that every way out
            // (the cap, an error, Ctrl-C, a restore after SIGKILL) can stop them together.
            std::os::unix::process::CommandExt::process_group(&mut launch, 0);
        }
        let mut agg = Aggressor::spawn(launch)?;
        let start_time = journal::process_start_time(agg.pid).unwrap_or(0);
        let proc_id = cx.journal.record(Change::Process {
            pid: agg.pid,
            start_time,
            group,
        })?;
        if spec.policy != crate::mitigation::WriterPolicy::SyncfsAtEnd {
            applied.push(format!("aggressor writer policy: {}", spec.policy.name()));
        }

        // Cgroups and I/O class on the aggressor, each read back.
        // A combination applies each of its parts: first the I/O class, then the cgroup.
        let io_class = combo
            .parts()
            .iter()
            .copied()
            .find(|m| matches!(m, Mitigation::IoniceIdle | Mitigation::IoniceBe7));
        let group = combo.parts().iter().copied().find(|m| {
            matches!(
                m,
                Mitigation::CgroupWeight | Mitigation::CgroupThrottle | Mitigation::CgroupLatency
            )
        });
        if let Some(m) = io_class {
            {
                let p = if m == Mitigation::IoniceIdle {
                    IoPrio::Idle
                } else {
                    IoPrio::BestEffort(7)
                };
                ioprio::set_process(agg.pid, p)?;
                let got = ioprio::get_process(agg.pid)?;
                if let Some((tid, other)) = got.iter().find(|(_, g)| *g != p) {
                    return Err(InterfereError::NotApplied {
                        file: format!("ioprio of thread {tid}").into(),
                        wanted: p.to_string(),
                        got: other.to_string(),
                    });
                }
                applied.push(format!("ioprio_get({}) = {p}", agg.pid));
            }
        }
        match group {
            Some(m @ (Mitigation::CgroupWeight | Mitigation::CgroupThrottle)) => {
                let (ver, root) = cx.cgroups.preferred().map_err(InterfereError::BadInput)?;
                let dev = cx
                    .device
                    .as_ref()
                    .map_err(|e| InterfereError::BadInput(e.clone()))?;
                let gname = format!("{CGROUP_PREFIX}{}-aggressor", std::process::id());
                let gpath = root.join(&gname);
                undo_ids.push(cx.journal.record(Change::Cgroup {
                    path: gpath.clone(),
                })?);
                if ver == Version::V2 && !cgroup::io_subtree_enabled(&root)? {
                    // Journaled before it is switched on, like every change.
                    undo_ids.push(cx.journal.record(Change::SubtreeControl {
                        file: root.join("cgroup.subtree_control"),
                        controller: "io".into(),
                    })?);
                    cgroup::enable_io_subtree(&root)?;
                }
                let g = cgroup::Group::create(&root, &gname, ver)?;
                if m == Mitigation::CgroupWeight {
                    let w = if ver == Version::V1 {
                        V1_WEIGHT
                    } else {
                        V2_WEIGHT
                    };
                    let (file, got) = g.set_weight(w)?;
                    applied.push(format!("{}/{file} = {got}", g.path.display()));
                    if ver == Version::V2 {
                        notes.push(
                            "io.weight is enforced only with iocost (io.cost.qos) or bfq".into(),
                        );
                    }
                } else {
                    for (file, got) in g.set_write_throttle(
                        &dev.maj_min,
                        cx.cfg.throttle_bps,
                        cx.cfg.throttle_iops,
                    )? {
                        applied.push(format!("{}/{file} = {got}", g.path.display()));
                    }
                }
                g.add_process(agg.pid)?;
                applied.push(format!(
                    "{}/cgroup.procs holds {}",
                    g.path.display(),
                    agg.pid
                ));
            }
            Some(Mitigation::CgroupLatency) => {
                // Only reached with a cgroup v2 io controller (see `unavailable`).
                let (_, root) = cx.cgroups.preferred().map_err(InterfereError::BadInput)?;
                let dev = cx
                    .device
                    .as_ref()
                    .map_err(|e| InterfereError::BadInput(e.clone()))?;
                let top_name = format!("{CGROUP_PREFIX}{}", std::process::id());
                let top = root.join(&top_name);
                undo_ids.push(cx.journal.record(Change::Cgroup { path: top.clone() })?);
                if !cgroup::io_subtree_enabled(&root)? {
                    undo_ids.push(cx.journal.record(Change::SubtreeControl {
                        file: root.join("cgroup.subtree_control"),
                        controller: "io".into(),
                    })?);
                    cgroup::enable_io_subtree(&root)?;
                }
                let t = cgroup::Group::create(&root, &top_name, Version::V2)?;
                cgroup::enable_io_subtree(&t.path)?;
                let probe_g = cgroup::Group::create(&t.path, "probe", Version::V2)?;
                let agg_g = cgroup::Group::create(&t.path, "aggressor", Version::V2)?;
                let target_us = cx.cfg.threshold.as_micros() as u64;
                let (file, got) = probe_g.set_latency_target(&dev.maj_min, target_us)?;
                applied.push(format!("{}/{file} = {got}", probe_g.path.display()));
                agg_g.add_process(agg.pid)?;
                // The probe runs in this process: move it, and move it back afterwards
                // (journaled first, so every way out moves it back before the group goes).
                let me = std::process::id() as i32;
                let home = cgroup::v2_path_of(me)
                    .map(|p| root.join(p.trim_start_matches('/')))
                    .ok_or_else(|| {
                        InterfereError::BadInput(format!(
                            "cannot read the cgroup v2 of this process (pid {me}) from /proc/{me}/cgroup"
                        ))
                    })?;
                undo_ids.push(cx.journal.record(Change::Rehome {
                    pid: me,
                    start_time: journal::process_start_time(me).unwrap_or(0),
                    home,
                })?);
                probe_g.add_process(me)?;
                applied.push(format!(
                    "probe (pid {}) in {}",
                    std::process::id(),
                    probe_g.path.display()
                ));
            }
            _ => {}
        }
        if let Some(cb) = &cx.cfg.on_applied {
            cb(&Applied {
                mitigation: combo.parts()[0],
                parts: combo.parts().to_vec(),
                aggressor_pid: agg.pid,
                readback: applied.clone(),
            });
        }

        // Run: the probe starts, the aggressor follows shortly after.
        let probe_dir = cx.work.join(format!("probe-{}", combo.name()));
        std::fs::create_dir(&probe_dir).map_err(|e| InterfereError::io(&probe_dir, e))?;
        let measured = run_probe(cx.cfg, &probe_dir, Some(&mut agg))?;
        // After Ctrl-C the aggressor is stopped at once rather than left to finish.
        let cap = if cx.cfg.stop.load(Ordering::Relaxed) {
            Duration::ZERO
        } else {
            cx.cfg.cap
        };
        let fin = agg.finish(cap)?;
        drop(agg);
        cx.journal.forget(proc_id)?;
        let _ = std::fs::remove_dir_all(&adir);
        let _ = std::fs::remove_dir_all(&probe_dir);
        if let Some(c) = &spec.command {
            if fin.capped {
                notes.push(format!(
                    "the command was stopped at the timeout (--aggressor-cap {} s), {}",
                    cx.cfg.cap.as_secs(),
                    fin.exit
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| "killed".into())
                ));
            } else if let Some(e) = fin.exit.filter(|e| !e.success()) {
                let tail = fin.stderr_tail.trim();
                let tail: String = tail
                    .char_indices()
                    .rev()
                    .nth(300)
                    .map(|(i, _)| &tail[i..])
                    .unwrap_or(tail)
                    .into();
                notes.push(format!(
                    "the command {:?} ended with {e}: its time is not that of a full run{}",
                    c.line,
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" (stderr: {tail})")
                    }
                ));
            }
        } else if fin.capped {
            notes.push(format!(
                "the aggressor was stopped at the cap ({} s) after writing {} of {} bytes",
                cx.cfg.cap.as_secs(),
                fin.tally.bytes,
                spec.size
            ));
        }
        Ok(Scenario::measured(
            &name,
            Some(combo.name()),
            measured,
            Some(AggressorResult::from_finish(&fin, spec.size)),
            applied.clone(),
            Some(notes.clone()),
            cx.cfg.threshold,
        ))
    })();
    // Undo this scenario's changes, newest first, whatever happened.
    let mut undo_err = None;
    for id in undo_ids.into_iter().rev() {
        if let Err(e) = cx.journal.undo(id) {
            undo_err.get_or_insert(e);
        }
    }
    settle(&cx.work);
    let s = result?;
    if let Some(e) = undo_err {
        return Err(e);
    }
    Ok(s)
}

fn switch_scheduler(cx: &mut Ctx, want: &str, applied: &mut Vec<String>) -> Result<Option<u64>> {
    let dev = cx
        .device
        .as_ref()
        .map_err(|e| InterfereError::BadInput(e.clone()))?;
    let file = dev.scheduler_file();
    let now = scheduler::read(&file)?;
    if now.active == want {
        applied.push(format!("{} already {want}", file.display()));
        return Ok(None);
    }
    let id = cx.journal.record(Change::Scheduler {
        device: dev.name.clone(),
        file: file.clone(),
        was: now.active.clone(),
    })?;
    scheduler::set(&file, &dev.name, want)?;
    applied.push(format!(
        "{} = {} (was {})",
        file.display(),
        scheduler::read(&file)?.active,
        now.active
    ));
    Ok(Some(id))
}

/// Flushes what the scenario left dirty and gives the device a moment, so that the next
/// scenario starts from a quiet disk.
fn settle(work: &Path) {
    if let Ok(d) = std::fs::File::open(work) {
        let _ = crate::sys::syncfs(&d);
    }
    std::thread::sleep(Duration::from_millis(500));
}

/// Runs the probe; with an aggressor, lets it go `start_delay` after the probe started.
fn run_probe(
    cfg: &Config,
    dir: &Path,
    agg: Option<&mut Aggressor>,
) -> Result<disktier_engine::Measured> {
    let job = probe_job(dir, cfg.duration);
    let opts = RunOptions {
        stop: cfg.stop.clone(),
        progress: cfg.progress.clone(),
        profile: Some("etcd".into()),
        ..RunOptions::default()
    };
    std::thread::scope(|s| {
        let h = s.spawn(|| disktier_engine::run(&job, &opts));
        if let Some(agg) = agg {
            let t0 = Instant::now();
            while t0.elapsed() < cfg.start_delay && !h.is_finished() {
                std::thread::sleep(Duration::from_millis(20));
            }
            if let Err(e) = agg.go() {
                cfg.stop.store(true, Ordering::Relaxed);
                let _ = h.join();
                return Err(e);
            }
            // Keep the aggressor's progress channel drained while the probe runs.
            while !h.is_finished() {
                agg.poll();
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        h.join()
            .map_err(|_| InterfereError::BadInput("the probe thread panicked".into()))?
            .map_err(InterfereError::from)
    })
}

/// The sync (fdatasync) figures of a probe run.
pub fn sync_stats(m: &disktier_engine::Measured) -> Option<DirStats> {
    m.doc.results.sync.clone()
}

/// Undoes what a killed run left (what `--restore` runs).
pub fn restore(run_dir: &Path) -> Result<journal::Restored> {
    journal::restore(run_dir)
}

/// The document of a run on `dir` with `cfg`, before any scenario.
fn new_doc(
    dir: &Path,
    device: Option<String>,
    sched: Option<String>,
    cfg: &Config,
) -> InterfereDoc {
    InterfereDoc {
        schema_version: 1,
        target: dir.display().to_string(),
        device,
        scheduler_before: sched,
        aggressor_kind: cfg.aggressor.name().to_string(),
        aggressor_command: cfg.aggressor_cmd.as_ref().map(|c| c.line.clone()),
        aggressor_size: cfg.aggressor_size,
        duration_s: cfg.duration.as_secs_f64(),
        threshold_ns: cfg.threshold.as_nanos() as u64,
        scenarios: Vec::new(),
        recommendation: String::new(),
        interrupted: false,
        restored_leftovers: Vec::new(),
        host: disktier_engine::host::detect(),
    }
}
