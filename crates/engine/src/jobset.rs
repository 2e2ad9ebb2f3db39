//! Several different jobs at once, as fio runs the jobs of one job file between stonewalls:
//! each job with its own threads, files and figures, all started together; and the figures of a
//! reporting group combined as one (fio's `group_reporting`).

use crate::error::EngineError;
use crate::job::Job;
use crate::result::{percentile_key, DirStats, Results, PERCENTILES};
use crate::run::run;
use crate::stats::new_hist;
use crate::types::{Measured, RunOptions};
use hdrhistogram::Histogram;

/// Most job threads (numjobs summed) running at once: each holds its buffers and a ring.
pub const MAX_THREADS: u32 = 1024;

/// Runs `jobs` at the same time and returns each one's measurement, in order. Every job is
/// checked (options, target, safety) before any starts, so a bad job stops nothing half-way.
/// Ctrl-C (`opts.stop`) stops them all. Only the first job reports progress.
pub fn run_together(jobs: &[Job], opts: &RunOptions) -> Result<Vec<Measured>, EngineError> {
    let threads: u32 = jobs.iter().map(|j| j.numjobs).fold(0, u32::saturating_add);
    if threads > MAX_THREADS {
        return Err(EngineError::BadOption {
            option: "numjobs",
            value: threads.to_string(),
            fix: format!(
                "the jobs that run together have {threads} threads in all: keep numjobs summed over them at {MAX_THREADS} or less (or split them with stonewall)"
            ),
        });
    }
    for j in jobs {
        crate::run::preflight(j, opts)?;
    }
    if jobs.len() == 1 {
        return Ok(vec![run(&jobs[0], opts)?]);
    }
    let outs: Vec<Result<Measured, EngineError>> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let mut o = opts.clone();
                if i > 0 {
                    o.progress = None;
                }
                s.spawn(move || run(j, &o))
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                h.join()
                    .unwrap_or(Err(EngineError::WorkerPanicked(i as u32)))
            })
            .collect()
    });
    outs.into_iter().collect()
}

/// One direction of several jobs that ran together, combined: counts and rates add up (the
/// jobs ran at the same time), latencies come from the merged histograms; min, max and mean are
/// exact.
fn merge_dir(parts: &[(&DirStats, Option<&Histogram<u64>>)]) -> Option<DirStats> {
    if parts.is_empty() {
        return None;
    }
    let mut hist = new_hist();
    let mut out = DirStats::default();
    let mut sum_ns = 0.0;
    let mut min = u64::MAX;
    for (d, h) in parts {
        out.ios += d.ios;
        out.bytes += d.bytes;
        out.iops += d.iops;
        out.bw_bytes += d.bw_bytes;
        sum_ns += d.lat_ns.mean * d.ios as f64;
        if d.ios > 0 {
            min = min.min(d.lat_ns.min);
        }
        out.lat_ns.max = out.lat_ns.max.max(d.lat_ns.max);
        if let Some(h) = h {
            // Both come from new_hist(): same bounds, adding cannot fail.
            let _ = hist.add(*h);
        }
    }
    if out.ios > 0 {
        out.lat_ns.mean = sum_ns / out.ios as f64;
        out.lat_ns.min = min;
        out.lat_ns.stdev = hist.stdev();
        out.lat_ns.percentiles = PERCENTILES
            .iter()
            .map(|p| (percentile_key(*p), hist.value_at_quantile(p / 100.0)))
            .collect();
    }
    Some(out)
}

/// One direction of a measurement: its figures and its histogram.
type DirOf = for<'a> fn(&'a Measured) -> (Option<&'a DirStats>, Option<&'a Histogram<u64>>);

/// The figures of jobs that ran together, as one (fio's `group_reporting`).
pub fn merge_results(ms: &[&Measured]) -> Results {
    let dir = |pick: DirOf| {
        let parts: Vec<_> = ms
            .iter()
            .filter_map(|m| {
                let (d, h) = pick(m);
                d.map(|d| (d, h))
            })
            .collect();
        merge_dir(&parts)
    };
    let mut r = Results {
        read: dir(|m| (m.doc.results.read.as_ref(), m.read_hist.as_ref())),
        write: dir(|m| (m.doc.results.write.as_ref(), m.write_hist.as_ref())),
        sync: dir(|m| (m.doc.results.sync.as_ref(), m.sync_hist.as_ref())),
        ..Results::default()
    };
    // CPU time is the process's, so every job that ran together saw the same: keep the largest.
    for m in ms {
        r.cpu.usr_s = r.cpu.usr_s.max(m.doc.results.cpu.usr_s);
        r.cpu.sys_s = r.cpu.sys_s.max(m.doc.results.cpu.sys_s);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(lats: &[u64]) -> (DirStats, Histogram<u64>) {
        let mut acc = crate::stats::DirAcc::default();
        for l in lats {
            acc.record(*l, 4096);
        }
        (acc.dir_stats(1.0), acc.hist)
    }

    #[test]
    fn merged_directions_add_counts_and_merge_latencies() {
        let (a, ha) = dir(&[1_000; 99]);
        let (b, hb) = dir(&[1_000_000]);
        let m = merge_dir(&[(&a, Some(&ha)), (&b, Some(&hb))]).unwrap();
        assert_eq!(m.ios, 100);
        assert_eq!(m.bytes, 100 * 4096);
        assert!((m.iops - 100.0).abs() < 1e-9);
        assert_eq!((m.lat_ns.min, m.lat_ns.max), (1_000, 1_000_000));
        assert!((m.lat_ns.mean - (99_000.0 + 1_000_000.0) / 100.0).abs() < 1e-6);
        // p99 of the group is the fast job's, p99.9 the slow one's.
        let p = |q| m.lat_ns.p(q).unwrap();
        assert!(p(99.0) < 2_000, "{}", p(99.0));
        assert!(p(99.9) > 990_000, "{}", p(99.9));
        let keys: Vec<_> = a.lat_ns.percentiles.keys().collect();
        assert_eq!(m.lat_ns.percentiles.keys().collect::<Vec<_>>(), keys);
        assert!(merge_dir(&[]).is_none());
    }
}
