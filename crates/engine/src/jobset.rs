//! Several different jobs at once, as fio runs the jobs of one job file between stonewalls:
//! each job with its own threads, files and figures, all started together; and the figures of a
//! reporting group combined as one (fio's `group_reporting`).

use crate::error::EngineError;
use crate::job::{Job, MAX_BUFFERS};
use crate::result::{percentile_key, DirStats, LatStats, Results, PERCENTILES};
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
            )
            .into(),
        });
    }
    let buffers: u64 = jobs
        .iter()
        .map(Job::buffer_bytes)
        .fold(0, u64::saturating_add);
    if buffers > MAX_BUFFERS {
        return Err(EngineError::BadOption {
            option: "iodepth",
            value: jobs.iter().map(|j| j.iodepth.to_string()).collect::<Vec<_>>().join(","),
            fix: format!(
                "the jobs that run together hold {} MiB of I/O buffers in all (numjobs x iodepth x bs summed over them): keep it at 2 GiB or less (lower numjobs, iodepth or bs, or split them with stonewall)",
                buffers >> 20
            )
            .into(),
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
/// jobs ran at the same time); min, max and mean are exact, the standard deviation is pooled
/// from the parts' exact ones, and the percentiles come from the merged histograms. A figure
/// that cannot be derived is unknown, never 0: the percentiles when a part has no histogram
/// (an import of fio's plain JSON), min and max when a part lacks them. One part is its own
/// figures, whatever it carries.
fn merge_dir(parts: &[(&DirStats, Option<&Histogram<u64>>)]) -> Option<DirStats> {
    match parts {
        [] => return None,
        [(d, _)] => return Some((*d).clone()),
        _ => {}
    }
    let mut out = DirStats::default();
    for (d, _) in parts {
        out.ios += d.ios;
        out.bytes += d.bytes;
        out.iops += d.iops;
        out.bw_bytes += d.bw_bytes;
    }
    let measured: Vec<&(&DirStats, Option<&Histogram<u64>>)> =
        parts.iter().filter(|(d, _)| d.ios > 0).collect();
    if out.ios == 0 || measured.is_empty() {
        out.lat_ns = LatStats::UNKNOWN;
        // No counts (fio's text prints none for syncs) weigh no mean or stdev, but the parts'
        // extremes are still the group's, when every part has them.
        let ext = |f: fn(&LatStats) -> Option<u64>| -> Option<Vec<u64>> {
            parts.iter().map(|(d, _)| f(&d.lat_ns)).collect()
        };
        if let (Some(mins), Some(maxs)) = (ext(LatStats::min_ns), ext(LatStats::max_ns)) {
            out.lat_ns.min = mins.into_iter().min().unwrap_or(0);
            out.lat_ns.max = maxs.into_iter().max().unwrap_or(0);
        }
        return Some(out);
    }
    let n = out.ios as f64;
    let all = |f: &dyn Fn(&LatStats) -> Option<f64>| -> Option<Vec<(f64, f64)>> {
        measured
            .iter()
            .map(|(d, _)| f(&d.lat_ns).map(|v| (d.ios as f64, v)))
            .collect()
    };
    let mean = all(&|l| l.mean_ns()).map(|v| v.iter().map(|(k, m)| k * m).sum::<f64>() / n);
    // The pooled (population) variance: E[x^2] - mean^2, with each part's E[x^2] = sd^2 + m^2.
    let stdev = match (mean, all(&|l| l.mean_ns()), all(&|l| l.stdev_ns())) {
        (Some(mean), Some(ms), Some(sds)) => {
            let ex2 = ms
                .iter()
                .zip(&sds)
                .map(|((k, m), (_, sd))| k * (sd * sd + m * m))
                .sum::<f64>()
                / n;
            (ex2 - mean * mean).max(0.0).sqrt()
        }
        _ => f64::NAN,
    };
    let min = all(&|l| l.min_ns().map(|v| v as f64))
        .map(|v| v.iter().map(|(_, x)| *x as u64).min().unwrap_or(0));
    let max = all(&|l| l.max_ns().map(|v| v as f64))
        .map(|v| v.iter().map(|(_, x)| *x as u64).max().unwrap_or(0));
    let hists: Option<Vec<&Histogram<u64>>> = measured.iter().map(|(_, h)| *h).collect();
    let percentiles = match hists {
        Some(hs) => {
            let mut hist = new_hist();
            for h in hs {
                // Both grow (new_hist): adding cannot fail.
                let _ = hist.add(h);
            }
            PERCENTILES
                .iter()
                .map(|p| (percentile_key(*p), hist.value_at_quantile(p / 100.0)))
                .collect()
        }
        None => Default::default(),
    };
    out.lat_ns = LatStats {
        mean: mean.unwrap_or(0.0),
        stdev,
        min: min.unwrap_or(0),
        max: max.unwrap_or(0),
        percentiles,
    };
    out.lat_ns.clamp_percentiles();
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
        // The pooled stdev is the stdev of all 100 samples (population).
        let all: Vec<f64> = std::iter::repeat_n(1_000.0, 99)
            .chain([1_000_000.0])
            .collect();
        let mu = all.iter().sum::<f64>() / 100.0;
        let sd = (all.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / 100.0).sqrt();
        assert!(
            (m.lat_ns.stdev - sd).abs() / sd < 1e-9,
            "{} vs {sd}",
            m.lat_ns.stdev
        );
    }

    /// QA: a group of jobs imported from fio's plain JSON (no histograms) showed p50/p99 0 and
    /// stdev 0. One job is its own figures; several give the exact figures and leave the
    /// percentiles unknown, never 0.
    #[test]
    fn groups_without_histograms_keep_what_is_known() {
        let (mut a, _) = dir(&[1_000, 2_000, 6_130_000]);
        a.lat_ns.percentiles.retain(|k, _| k == "99");
        let one = merge_dir(&[(&a, None)]).unwrap();
        assert_eq!(one, a);
        let (b, _) = dir(&[3_000]);
        let two = merge_dir(&[(&a, None), (&b, None)]).unwrap();
        assert_eq!(two.ios, 4);
        assert!(two.lat_ns.percentiles.is_empty(), "{:?}", two.lat_ns);
        assert_eq!((two.lat_ns.min, two.lat_ns.max), (1_000, 6_130_000));
        assert!(two.lat_ns.stdev_ns().is_some_and(|s| s > 0.0));
        // A part whose stdev or max is not known makes the group's unknown, not 0 or smaller.
        let mut c = b.clone();
        c.lat_ns.stdev = f64::NAN;
        c.lat_ns.max = 0;
        let m = merge_dir(&[(&a, None), (&c, None)]).unwrap();
        assert!(m.lat_ns.stdev_ns().is_none() && m.lat_ns.max_ns().is_none());
        let v = serde_json::to_value(&m.lat_ns).unwrap();
        assert!(
            v["stdev"].is_null() && v["max"].is_null() && v["min"] == 1_000,
            "{v}"
        );
    }

    /// QA: `import fio-text --jobs` of two jobs that synced (fio's text prints no sync count)
    /// gave their group's sync min and max null, though each job's were known: the extremes
    /// need no counts. The mean and stdev, which do, stay unknown.
    #[test]
    fn a_group_without_counts_keeps_its_extremes() {
        let sync = |min, max| DirStats {
            lat_ns: LatStats {
                mean: 1_700_000.0,
                stdev: 2_000_000.0,
                min,
                max,
                percentiles: Default::default(),
            },
            ..DirStats::default()
        };
        let (a, b) = (sync(33_000, 9_757_000), sync(41_000, 8_134_000));
        let m = merge_dir(&[(&a, None), (&b, None)]).unwrap();
        assert_eq!(m.ios, 0);
        assert_eq!((m.lat_ns.min, m.lat_ns.max), (33_000, 9_757_000));
        assert!(m.lat_ns.mean_ns().is_none() && m.lat_ns.stdev_ns().is_none());
        let c = sync(0, 0);
        let m = merge_dir(&[(&a, None), (&c, None)]).unwrap();
        assert!(m.lat_ns.min_ns().is_none() && m.lat_ns.max_ns().is_none());
    }
}
