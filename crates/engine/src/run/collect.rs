//! After the I/O: merge the threads' accumulators and per-second records into the result
//! document and the histograms.

use super::dispatch::Dispatched;
use super::prepare::{Prepared, Setup};
use crate::error::EngineError;
use crate::job::Job;
use crate::result::{Results, RunDoc, Sample, SCHEMA_VERSION};
use crate::stats::{DirAcc, SecRecord};
use crate::types::{Measured, RunOptions};
use std::collections::BTreeMap;

/// The result of a finished (or stopped) I/O phase. Fails with the first thread's error.
pub(super) fn collect(
    job: &Job,
    prepared: Prepared,
    started_at: String,
    io: Dispatched,
    setup: &Setup,
    opts: &RunOptions,
) -> Result<Measured, EngineError> {
    let Dispatched {
        outs,
        secs,
        cpu,
        interrupted,
    } = io;
    let (runtime_ns, sync_every) = (setup.runtime_ns, setup.sync_every);
    let Prepared {
        target: c,
        resolved,
        warnings,
        ..
    } = prepared;
    let mut read = DirAcc::default();
    let mut write = DirAcc::default();
    let mut sync = DirAcc::default();
    let mut dur_ns = 0u64;
    for o in outs {
        let o = o?;
        read.merge(&o.read);
        write.merge(&o.write);
        sync.merge(&o.sync);
        dur_ns = dur_ns.max(o.last_ns.saturating_sub(o.ramp_end));
    }
    if let (Some(r), true) = (runtime_ns, job.time_based && !interrupted) {
        // A time-based run that was not stopped measured exactly its runtime (fio reports it so
        // too), even if its last completion came a little before the end (a slow sync).
        dur_ns = r;
    }
    let secs_f = dur_ns as f64 / 1e9;
    let series = build_series(&secs, secs_f);
    let results = Results {
        read: job.rw.reads().then(|| read.dir_stats(secs_f)),
        write: job.rw.writes().then(|| write.dir_stats(secs_f)),
        sync: (sync_every > 0).then(|| sync.sync_stats(secs_f)),
        cpu,
        small_files: None,
    };
    let doc = RunDoc {
        schema_version: SCHEMA_VERSION,
        engine: "disktier".into(),
        profile: opts.profile.clone(),
        quick: opts.quick,
        job: resolved.to_json(),
        target: c.info.clone(),
        host: crate::host::detect(),
        started_at,
        duration_s: secs_f,
        interrupted,
        results,
        series,
        verdicts: Vec::new(),
        warnings,
    };
    Ok(Measured {
        doc,
        read_hist: job.rw.reads().then_some(read.hist),
        write_hist: job.rw.writes().then_some(write.hist),
        sync_hist: (sync_every > 0).then_some(sync.hist),
    })
}

/// One sample per second of the measured phase (seconds without completions included as zero).
pub(crate) fn build_series(secs: &BTreeMap<u64, SecRecord>, dur_s: f64) -> Vec<Sample> {
    let Some(last) = secs.keys().next_back().copied() else {
        return Vec::new();
    };
    (0..=last)
        .map(|s| {
            let end = ((s + 1) as f64).min(dur_s.max(s as f64 + 1e-3));
            let width = (end - s as f64).max(1e-3);
            match secs.get(&s) {
                Some(r) => Sample {
                    t_s: end,
                    read_iops: r.read_ios as f64 / width,
                    write_iops: r.write_ios as f64 / width,
                    read_bw_bytes: r.read_bytes as f64 / width,
                    write_bw_bytes: r.write_bytes as f64 / width,
                    p99_ns: (!r.lat.is_empty()).then(|| r.lat.value_at_quantile(0.99)),
                    sync_p99_ns: (!r.sync.is_empty()).then(|| r.sync.value_at_quantile(0.99)),
                },
                None => Sample {
                    t_s: end,
                    ..Sample::default()
                },
            }
        })
        .collect()
}

/// Now, as RFC 3339 (the result document's `started_at`).
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_has_one_sample_per_second_with_gaps_as_zero() {
        let mut secs = BTreeMap::new();
        let mut a = SecRecord::new(0);
        a.read_ios = 100;
        a.read_bytes = 409_600;
        a.lat.record(1000).unwrap();
        secs.insert(0, a);
        let mut c = SecRecord::new(2);
        c.read_ios = 50;
        secs.insert(2, c);
        let s = build_series(&secs, 2.5);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].t_s, s[0].read_iops), (1.0, 100.0));
        assert_eq!(s[0].read_bw_bytes, 409_600.0);
        assert!(s[0].p99_ns.is_some() && s[0].sync_p99_ns.is_none());
        assert_eq!((s[1].t_s, s[1].read_iops), (2.0, 0.0));
        // The last, half second: 50 I/Os in 0.5 s.
        assert_eq!((s[2].t_s, s[2].read_iops), (2.5, 100.0));
    }
}
