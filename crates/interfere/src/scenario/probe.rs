//! The probe: etcd's fdatasync profile, alone or beside an aggressor.

use super::{probe_job, Config};
use crate::aggressor::process::Aggressor;
use crate::error::{InterfereError, Result};
use disktier_engine::RunOptions;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Flushes what the scenario left dirty and gives the device a moment, so that the next
/// scenario starts from a quiet disk.
pub(super) fn settle(work: &Path) {
    if let Ok(d) = std::fs::File::open(work) {
        let _ = crate::sys::syncfs(&d);
    }
    std::thread::sleep(Duration::from_millis(500));
}

/// Runs the probe; with an aggressor, lets it go `start_delay` after the probe started.
pub(super) fn run_probe(
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
