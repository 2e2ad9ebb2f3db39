//! The whole comparison: the baseline, then every mitigation in turn, then the system restored.

use super::context::Ctx;
use super::one::run_one;
use super::probe::run_probe;
use super::Config;
use crate::aggressor::AggressorKind;
use crate::cgroup::Support;
use crate::error::{human_bytes, InterfereError, Result};
use crate::journal::{Change, Journal, DIR_PREFIX};
use crate::report::{InterfereDoc, Scenario};
use crate::scheduler::{self, Device};
use std::path::Path;
use std::sync::atomic::Ordering;

/// Runs every scenario and leaves the system as it found it (also on error or Ctrl-C).
pub fn run(cfg: &Config) -> Result<InterfereDoc> {
    if !cfg.dir.is_dir() {
        return Err(InterfereError::NotADirectory(cfg.dir.clone()));
    }
    // QA on dt-s23: `interfere /proc` said "/proc has 0 bytes free, ...: pass a smaller
    // --aggressor-size", also with --aggressor-cmd, which takes no size: say what /proc is.
    if let Some(fs) = disktier_engine::target::pseudo_fs(&cfg.dir) {
        return Err(InterfereError::PseudoFs {
            path: cfg.dir.clone(),
            fs,
        });
    }
    // The probe's file (22 MiB, the etcd profile) and one aggressor's files exist at a time.
    const PROBE_ROOM: u64 = 64 << 20;
    // Saturating: `--aggressor-size 18446744073709551615` overflowed here (QA: a panic in a
    // debug build; a release build wrapped to 64 MiB - 1 and let a 16 EiB writer start).
    let need = cfg.aggressor_size.saturating_add(PROBE_ROOM);
    if let Ok((_, free)) = disktier_engine::target::statfs(&cfg.dir) {
        if free < need {
            let command = cfg.aggressor == AggressorKind::Command;
            return Err(InterfereError::NoSpace {
                path: cfg.dir.clone(),
                free,
                writes: if command {
                    format!(
                        "the probe needs {} (beside what your command writes)",
                        human_bytes(PROBE_ROOM)
                    )
                } else {
                    format!(
                        "the aggressor writes {} and the probe needs {}",
                        human_bytes(cfg.aggressor_size),
                        human_bytes(PROBE_ROOM)
                    )
                },
                fix: if command {
                    "free some space there, or pass a directory on a filesystem with room"
                } else {
                    "pass a smaller --aggressor-size, or free some space there"
                },
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
    // QA on dt-s23: a read-only DIR failed with the scratch directory's path and the OS error
    // alone ("DIR/.disktier-interfere-N-T: Read-only file system (os error 30)").
    std::fs::create_dir(&work).map_err(|e| match e.raw_os_error() {
        Some(libc::EROFS) => InterfereError::ReadOnly(cfg.dir.clone()),
        _ => InterfereError::io(&work, e),
    })?;
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
    let interrupted = m.doc.interrupted || cx.cfg.stop.load(Ordering::Relaxed);
    let notes = interrupted.then(|| {
        vec![super::one::interrupted_note(
            m.doc.duration_s,
            cx.cfg.duration,
            None,
        )]
    });
    let mut s = Scenario::measured(
        "baseline",
        None,
        m,
        None,
        Vec::new(),
        notes,
        cx.cfg.threshold,
    );
    s.interrupted = interrupted;
    Ok(s)
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
