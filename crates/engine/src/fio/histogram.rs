//! fio's latency histograms (json+ `bins`, the `plat` bucket layout of fio's stat.h) and
//! its per-second logs, as hdrhistograms, stall counts and series samples.

use crate::result::Sample;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::BTreeMap;

/// A latency block's `bins` (fio's `--output-format=json+`: bucket value in ns -> count) as an
/// HDR histogram like the native engine's; `None` without bins. fio's buckets carry about 1/128
/// relative error (docs/sources.md [fio-doc]), coarser than the native 3 significant digits.
pub fn histogram(block: &Value) -> Option<Histogram<u64>> {
    let bins = block.get("bins")?.as_object()?;
    let mut h = crate::stats::new_hist();
    for (k, v) in bins {
        let (Ok(ns), Some(n)) = (k.parse::<u64>(), v.as_u64()) else {
            continue;
        };
        if n > 0 {
            crate::stats::record_ns_n(&mut h, ns, n);
        }
    }
    (!h.is_empty()).then_some(h)
}

/// Syncs over etcd's heartbeat interval and election timeout, counted from json+ `bins` (a bin
/// counts when the value fio gives it is over the limit: fio's bins are about 1/128 wide
/// there, so a call within that of 100 ms or 1 s may land on either side); `None` without bins.
pub fn bin_stalls(block: &Value) -> Option<crate::result::Stalls> {
    use crate::verdict::{ETCD_ELECTION_TIMEOUT_NS, ETCD_HEARTBEAT_NS};
    let bins = block.get("bins")?.as_object()?;
    let mut st = crate::result::Stalls {
        heartbeat_ns: ETCD_HEARTBEAT_NS,
        over_heartbeat: 0,
        election_ns: ETCD_ELECTION_TIMEOUT_NS,
        over_election: 0,
    };
    for (k, v) in bins {
        let (Ok(ns), Some(n)) = (k.parse::<u64>(), v.as_u64()) else {
            continue;
        };
        if ns > ETCD_HEARTBEAT_NS {
            st.over_heartbeat = st.over_heartbeat.saturating_add(n);
        }
        if ns > ETCD_ELECTION_TIMEOUT_NS {
            st.over_election = st.over_election.saturating_add(n);
        }
    }
    Some(st)
}

/// fio's fsync/fdatasync latency histogram of job `index`, when the JSON is json+.
pub fn sync_histogram(v: &Value, index: usize) -> Option<Histogram<u64>> {
    histogram(v.get("jobs")?.get(index)?.get("sync")?.get("lat_ns")?)
}

/// Reads fio's averaged logs `<prefix>_iops.<job>.log` and `<prefix>_bw.<job>.log` (lines
/// "msec, value, ddir, bs, offset"; ddir 0 = read, 1 = write; bandwidth in KiB/s) for jobs
/// 1..=numjobs, summed over jobs per second.
pub fn read_series(prefix: &str, numjobs: u32) -> Vec<Sample> {
    let mut secs: BTreeMap<u64, Sample> = BTreeMap::new();
    for (kind, scale) in [("iops", 1.0), ("bw", 1024.0)] {
        for j in 1..=numjobs.max(1) {
            let Ok(text) = std::fs::read_to_string(format!("{prefix}_{kind}.{j}.log")) else {
                continue;
            };
            for line in text.lines() {
                let f: Vec<&str> = line.split(',').map(str::trim).collect();
                // fio writes a u64 there (its log_entry's value): anything else (`inf`, `NaN`,
                // `-5`, `1e308` parse as f64) is no figure, and would leave the series infinite,
                // JSON `null` that no result reads back (fuzz_fio_logs). Sums of u64-sized
                // values, even in KiB, stay finite.
                let (Some(ms), Some(val), Some(dir)) = (
                    f.first().and_then(|x| x.parse::<u64>().ok()),
                    f.get(1)
                        .and_then(|x| x.parse::<f64>().ok())
                        .filter(|v| (0.0..=u64::MAX as f64).contains(v)),
                    f.get(2).and_then(|x| x.parse::<u8>().ok()),
                ) else {
                    continue;
                };
                // Saturating, as the histogram log's below: `ms + 500` overflowed (a panic with
                // overflow checks) at a time near 2^64 ms (fuzz_fio_logs).
                let sec = ms.saturating_add(500) / 1000;
                let s = secs.entry(sec).or_insert_with(|| Sample {
                    t_s: sec as f64,
                    ..Sample::default()
                });
                let v = val * scale;
                match (kind, dir) {
                    ("iops", 0) => s.read_iops += v,
                    ("iops", 1) => s.write_iops += v,
                    ("bw", 0) => s.read_bw_bytes += v,
                    ("bw", 1) => s.write_bw_bytes += v,
                    _ => {}
                }
            }
        }
    }
    // Completion latency: fio's histogram log, one line per job, direction and interval:
    // "msec, ddir, bs, count of bin 0, bin 1, ..." with the counts of that interval only.
    let mut hists: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for j in 1..=numjobs.max(1) {
        let Ok(text) = std::fs::read_to_string(format!("{prefix}_clat_hist.{j}.log")) else {
            continue;
        };
        for line in text.lines() {
            let mut f = line.split(',').map(str::trim);
            let Some(ms) = f.next().and_then(|x| x.parse::<u64>().ok()) else {
                continue;
            };
            // fio writes 1,856 bins (FIO_IO_U_PLAT_NR); more is not fio's log.
            let bins: Vec<u64> = f
                .skip(2)
                .take(PLAT_NR)
                .map_while(|x| x.parse::<u64>().ok())
                .collect();
            let acc = hists.entry(ms.saturating_add(500) / 1000).or_default();
            if acc.len() < bins.len() {
                acc.resize(bins.len(), 0);
            }
            for (a, b) in acc.iter_mut().zip(bins) {
                *a = a.saturating_add(b);
            }
        }
    }
    for (sec, bins) in hists {
        if let Some(p99) = plat_percentile(&bins, 99.0) {
            secs.entry(sec)
                .or_insert_with(|| Sample {
                    t_s: sec as f64,
                    ..Sample::default()
                })
                .p99_ns = Some(p99);
        }
    }
    secs.into_values().collect()
}

/// fio's number of latency histogram bins (FIO_IO_U_PLAT_NR in stat.h: 29 groups of 64).
pub const PLAT_NR: usize = 29 * 64;

/// The value of fio's latency histogram bin `idx` (fio's `plat_idx_to_val` in stat.c): 64
/// bins per power of two (FIO_IO_U_PLAT_BITS = 6), each standing for the middle of its range;
/// the first 128 bins are exact.
pub fn plat_idx_to_val(idx: usize) -> u64 {
    // Past fio's last bin the value would overflow: clamp to the last bin.
    let idx = idx.min(PLAT_NR - 1);
    const BITS: usize = 6;
    const VAL: usize = 1 << BITS;
    if idx < VAL << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> BITS) - 1;
    let base = 1u64 << (error_bits + BITS);
    let k = (idx % VAL) as u64;
    // base + (k + 0.5) * 2^error_bits, in integers.
    base + (k << error_bits) + ((1u64 << error_bits) >> 1)
}

/// The `p`-th percentile of fio histogram bins (counts indexed as fio's), as fio computes it:
/// the value of the first bin at which the running count reaches `p` % of the total.
pub fn plat_percentile(bins: &[u64], p: f64) -> Option<u64> {
    let total: u64 = bins.iter().fold(0u64, |a, b| a.saturating_add(*b));
    if total == 0 {
        return None;
    }
    let want = ((total as f64) * p / 100.0).ceil().max(1.0) as u64;
    let mut run = 0;
    for (i, n) in bins.iter().enumerate() {
        run = n.saturating_add(run);
        if run >= want {
            return Some(plat_idx_to_val(i));
        }
    }
    None
}
