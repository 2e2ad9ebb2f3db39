//! Watching the I/O phase from the calling thread: passes a stop request on to the threads,
//! gathers their per-second records, takes the CPU times when the ramp ends and reports
//! progress (rates, ETA, running p99) about four times a second.

use super::prepare::Setup;
use crate::job::Job;
use crate::plan::now_ns;
use crate::stats::{interval_hist, SecRecord};
use crate::types::{Progress, RunOptions};
use crate::uring;
use crate::worker::Live;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// What the monitor watches.
pub(super) struct Watch<'a> {
    pub job: &'a Job,
    pub opts: &'a RunOptions,
    pub setup: &'a Setup,
    pub live: &'a [Live],
    pub finished: &'a AtomicUsize,
    /// The threads' stop flag (set on the user's stop request or a thread's failure).
    pub stop: &'a AtomicBool,
    pub rx: &'a Receiver<SecRecord>,
}

/// What the monitor saw.
pub(super) struct Watched {
    /// User and system CPU seconds when the measured phase began (None: it never began).
    pub cpu0: Option<(f64, f64)>,
    pub interrupted: bool,
}

/// Watches until every thread has finished, merging their records into `secs`.
pub(super) fn watch(w: &Watch<'_>, secs: &mut BTreeMap<u64, SecRecord>) -> Watched {
    let Watch {
        job,
        opts,
        setup,
        live,
        finished,
        stop,
        rx,
    } = *w;
    let (n, ramp_ns, runtime_ns, total_ios) = (
        setup.numjobs,
        setup.ramp_ns,
        setup.runtime_ns,
        setup.total_ios,
    );
    let sync_every = setup.sync_every;
    let mut interrupted = false;
    let mut p99_so_far = interval_hist();
    let t0 = now_ns();
    let ramp_end = t0.saturating_add(ramp_ns);
    let mut cpu0 = if ramp_ns == 0 {
        Some(uring::sys::cpu_times())
    } else {
        None
    };
    let tick = 250_000_000u64;
    let mut next_report = t0 + tick;
    let (mut last_ios, mut last_bytes, mut last_t) = (0u64, 0u64, t0);
    while finished.load(Ordering::Acquire) < n {
        let now = now_ns();
        let wake = if cpu0.is_none() {
            next_report.min(ramp_end)
        } else {
            next_report
        };
        if wake > now {
            // Short sleeps so that a stop request or the end is seen quickly.
            std::thread::sleep(Duration::from_nanos((wake - now).min(50_000_000)));
        }
        let now = now_ns();
        if cpu0.is_none() && now >= ramp_end {
            cpu0 = Some(uring::sys::cpu_times());
        }
        if opts.stop.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
            interrupted = true;
            stop.store(true, Ordering::Relaxed);
        }
        for r in rx.try_iter() {
            let _ = p99_so_far.add(if sync_every > 0 { &r.sync } else { &r.lat });
            merge_sec(secs, r);
        }
        if now >= next_report {
            next_report = now + tick;
            let ios: u64 = live.iter().map(|l| l.ios.load(Ordering::Relaxed)).sum();
            let bytes: u64 = live.iter().map(|l| l.bytes.load(Ordering::Relaxed)).sum();
            let dt = (now - last_t) as f64 / 1e9;
            let elapsed = Duration::from_nanos(now - t0);
            let eta = match (runtime_ns, total_ios) {
                (Some(r), _) if job.time_based => Some(Duration::from_nanos(
                    ramp_ns.saturating_add(r).saturating_sub(now - t0),
                )),
                (_, Some(total)) if ios > 0 => {
                    let rate = ios as f64 / elapsed.as_secs_f64();
                    let left = total.saturating_sub(ios) as f64 / rate;
                    let by_time = runtime_ns
                        .map(|r| (ramp_ns.saturating_add(r).saturating_sub(now - t0)) as f64 / 1e9)
                        .unwrap_or(f64::MAX);
                    Some(Duration::from_secs_f64(left.min(by_time).max(0.0)))
                }
                _ => None,
            };
            if let Some(p) = &opts.progress {
                p(&Progress {
                    elapsed,
                    eta,
                    iops: (ios - last_ios) as f64 / dt,
                    bw_bytes: (bytes - last_bytes) as f64 / dt,
                    p99_ns: (!p99_so_far.is_empty()).then(|| p99_so_far.value_at_quantile(0.99)),
                    phase: if now < ramp_end { "ramp" } else { "run" },
                });
            }
            (last_ios, last_bytes, last_t) = (ios, bytes, now);
        }
    }
    Watched { cpu0, interrupted }
}

/// Adds one thread's record of a second to the run's.
pub(super) fn merge_sec(secs: &mut BTreeMap<u64, SecRecord>, r: SecRecord) {
    match secs.get_mut(&r.sec) {
        Some(acc) => acc.merge(&r),
        None => {
            secs.insert(r.sec, r);
        }
    }
}
