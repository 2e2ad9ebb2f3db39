//! The `rand-write` aggressor: direct random 16 KiB writes at queue depth 32 through the engine
//! (io_uring), like a busy database next door. O_DIRECT skips the page cache, so the writer
//! fsync policies do not apply to it.

use super::{Tally, Ticker};
use crate::error::Result;
use disktier_engine::{IoEngineKind, Job, RunOptions, Rw};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// 16 KiB: a database page size (PostgreSQL uses 8 KiB, InnoDB 16 KiB); depth 32 keeps a
/// virtio or NVMe queue busy without being unusual for a database.
const BS: u64 = 16 << 10;
const DEPTH: u32 = 32;

pub fn job(spec: &super::AggressorSpec) -> Job {
    Job {
        name: "aggressor".into(),
        target: spec.dir.clone(),
        rw: Rw::RandWrite,
        bs: BS,
        size: Some(spec.size.max(BS) / BS * BS),
        iodepth: DEPTH,
        ioengine: IoEngineKind::IoUring,
        direct: true,
        randseed: spec.seed,
        ..Job::default()
    }
}

pub fn run(
    spec: &super::AggressorSpec,
    stop: &AtomicBool,
    progress: &dyn Fn(Tally),
) -> Result<Tally> {
    let stop_flag = Arc::new(AtomicBool::new(stop.load(Ordering::Relaxed)));
    let latest = Arc::new(Mutex::new(Tally::default()));
    let seen = latest.clone();
    let opts = RunOptions {
        stop: stop_flag.clone(),
        progress: Some(Arc::new(move |p: &disktier_engine::Progress| {
            let mut t = seen.lock().unwrap_or_else(|e| e.into_inner());
            t.seconds = p.elapsed.as_secs_f64();
            t.bytes += (p.bw_bytes * 0.25) as u64;
        })),
        ..RunOptions::default()
    };
    let ticker = Ticker::new(progress);
    let measured = std::thread::scope(|s| {
        let h = s.spawn(|| disktier_engine::run(&job(spec), &opts));
        // Forward the caller's stop flag and the engine's progress.
        while !h.is_finished() {
            if stop.load(Ordering::Relaxed) {
                stop_flag.store(true, Ordering::Relaxed);
            }
            progress(*latest.lock().unwrap_or_else(|e| e.into_inner()));
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        h.join().expect("engine thread panicked")
    })?;
    let bytes = measured
        .doc
        .results
        .write
        .as_ref()
        .map(|w| w.bytes)
        .unwrap_or(0);
    Ok(Tally {
        bytes,
        seconds: ticker.elapsed(),
        objects: 1,
    })
}
