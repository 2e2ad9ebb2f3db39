//! The planner's words: labels, the requirements and performance in one line, and the caveats
//! each kind of option carries (bursts, hit ratios, cache drains, data lost on stop, the
//! published figures an instance store is counted by).

use super::cost::mbps_to_mibs;
use super::types::{Equivalent, OptionPerformance, Requirements, HIT_RATIO_MEANS};
use crate::fmt::{
    int, num, percent_at_least, share, share_and_rest, share_decimals, unit_usd, usd,
};
use crate::model::{Instance, Store, ThroughputRule, VolumeType};
use crate::perf::Performance;
use crate::price::{Quote, HOURS_PER_MONTH};

/// "gp3 5,120 GiB, 16,000 IOPS, 1,000 MiB/s".
pub(super) fn volume_label(q: &Quote) -> String {
    let c = q.config.as_ref().expect("volume quotes carry their config");
    let mut s = format!("{} {} GiB", q.type_, int(c.size_gib));
    if let Some(i) = c.iops {
        s.push_str(&format!(", {} IOPS", int(i)));
    }
    if let Some(t) = c.throughput_mibs {
        s.push_str(&format!(", {} MiB/s", num(t)));
    }
    s
}

/// "5,120 GiB, 16,000 IOPS, 1,000 MiB/s".
pub(super) fn describe(req: &Requirements) -> String {
    let mut s = format!("{} GiB", int(req.capacity_gib));
    if let Some(i) = req.iops {
        s.push_str(&format!(", {} IOPS", int(i)));
    }
    if let Some(t) = req.throughput_mibs {
        s.push_str(&format!(", {} MiB/s", num(t)));
    }
    s
}

/// "16,000 IOPS, 1,000 MiB/s".
pub(super) fn perf_line(p: &OptionPerformance) -> String {
    crate::perf::rates(p.iops, p.throughput_mibs)
}

/// A single volume's caveats: the performance model's notes, bursts, durability.
pub(super) fn volume_caveats(p: &Performance, vt: &VolumeType) -> Vec<String> {
    let mut caveats: Vec<String> = p.notes.clone();
    if p.burst_iops.is_some() || p.burst_throughput_mibs.is_some() {
        caveats.push(format!(
            "burst figures ({}) last only while credits last; the plan counts the baseline",
            p.summary()
        ));
    }
    if let Some(d) = &vt.durability {
        caveats.push(format!("durability {d}"));
    }
    caveats
}

/// A hybrid's caveats: how the effective figures are reached, what a miss and a full cache
/// cost, and (for an assumed hit ratio) how the cache was sized. `predicted`: the hit ratio
/// comes from a curve for this cache size (a simulation), not from an assumption.
pub(super) fn hybrid_caveats(
    (c, cq): (&VolumeType, &Quote),
    (b, bq): (&VolumeType, &Quote),
    perf: &OptionPerformance,
    predicted: bool,
) -> Vec<String> {
    let (cp, bp) = (&cq.performance, &bq.performance);
    let h = perf.hit_ratio.unwrap_or(0.0);
    let h_source = perf.hit_ratio_source.as_deref().unwrap_or("assumed");
    let bcfg = bq.config.as_ref().expect("volume");
    let ccfg = cq.config.as_ref().expect("volume");
    let b_iops = bp.baseline_iops.unwrap_or(0.0);
    let b_tp = bp.baseline_throughput_mibs.unwrap_or(0.0);
    let effective = perf.iops.map(|i| num(i.floor()));
    let (formula, h_shown) = rate_formula(cp.baseline_iops, b_iops, h, effective.as_deref());
    let mut caveats = vec![
        format!(
            "hit ratio {h_shown} (requests served without {}) is {h_source}: effective {} IOPS = {formula} (hits served by {}, misses by {} at the same time)",
            b.name,
            effective.unwrap_or_else(|| "?".into()),
            c.name,
            b.name
        ),
        format!(
            "on a cache miss performance is {}'s: {} {} GiB sustains {} MiB/s and {} small random IOPS{}",
            b.name,
            b.name,
            int(bcfg.size_gib),
            num(b_tp),
            num(b_iops.floor()),
            match (bp.max_iops, &b.throughput) {
                (Some(cap), ThroughputRule::PerTib(rule)) => format!(
                    " ({} IOPS cap, {} MiB/s per TiB baseline, each I/O counted as 1 MiB)",
                    num(cap),
                    num(rule.baseline_per_tib)
                ),
                _ => String::new(),
            }
        ),
        format!(
            "a writeback cache's drain onto {} is bounded by {}'s throughput ({} MiB/s baseline{}); a cache full of dirty data can be slower than {} alone",
            b.name,
            b.name,
            num(b_tp),
            bp.burst_throughput_mibs
                .map(|x| format!(", {} MiB/s burst", num(x)))
                .unwrap_or_default(),
            b.name
        ),
        "bcache cannot be resized online (detach/attach or reboot); lvmcache (dm-cache) can, with lvextend".into(),
    ];
    // With a predicted ratio the cache size was chosen on the curve, and the ratio is the
    // prediction for it: nothing left to measure (QA: the caveat asked for a simulation next
    // to a simulated ratio).
    if !predicted {
        caveats.push(format!(
            "the {} GiB {} cache is sized by its rules for the IOPS asked, not for the working set: measure or simulate the hit ratio (disktier simulate, or plan --trace)",
            int(ccfg.size_gib),
            c.name
        ));
    }
    if let Some(n) = perf.hit_ratio_needed {
        if n > 0.0 {
            caveats.push(format!(
                "the requirements need at least {} % of requests served without {}",
                percent_at_least(n),
                b.name
            ));
        }
    }
    caveats
}

/// The effective rate's formula, min(cache / h, backing / (1 - h)), with the figures it was
/// computed from, and `h` as shown in it. `h` and `1 - h` get the decimals that keep 4
/// significant digits of the smaller ([`share_decimals`]), more when the shown formula would
/// not give the shown result `effective` (QA: "20,160 = min(20,000 / 0.99, 192 / 0.01)", which
/// is 19,200).
pub(super) fn rate_formula(
    cache_iops: Option<f64>,
    b_iops: f64,
    h: f64,
    effective: Option<&str>,
) -> (String, String) {
    let cache = cache_iops.map(num).unwrap_or_else(|| "?".into());
    let back = num(b_iops);
    if h >= 1.0 {
        return (format!("{cache} / 1 (no misses)"), "1".into());
    }
    if h <= 0.0 {
        return (format!("{back} / 1 (no hits)"), "0".into());
    }
    // The figures as printed, to evaluate the formula the reader sees.
    let value = |s: &str| s.replace(',', "").parse::<f64>().ok();
    let mut d = share_decimals(h);
    loop {
        let (hs, rest) = share_and_rest(h, d);
        let shown = match (value(&cache), value(&back), value(&hs), value(&rest)) {
            (Some(c), Some(b), Some(x), Some(y)) if x > 0.0 && y > 0.0 => {
                Some(num((c / x).min(b / y).floor()))
            }
            _ => None,
        };
        if d >= 12 || effective.is_none() || shown.as_deref() == effective {
            return (format!("min({cache} / {hs}, {back} / {rest})"), hs);
        }
        d += 1;
    }
}

/// Why a hybrid falls short: what it delivers at its hit ratio, and the hit ratio it needs.
pub(super) fn hybrid_shortfall(perf: &OptionPerformance, why: &str) -> String {
    format!(
        "at a hit ratio of {} ({HIT_RATIO_MEANS}, {}) it delivers {}{}",
        share(perf.hit_ratio.unwrap_or(0.0)),
        perf.hit_ratio_source.as_deref().unwrap_or("assumed"),
        why,
        match perf.hit_ratio_needed {
            Some(n) if n < 1.0 => format!(
                "; it needs at least {} % of requests served without the backing volume",
                percent_at_least(n)
            ),
            _ => String::new(),
        }
    )
}

/// What an instance store sustains, as the plan counts it: the lower of the published read and
/// write IOPS (or the one figure a cloud publishes), and the published throughput; with the
/// caveat that says which figures these are.
pub(super) fn store_performance(i: &Instance) -> (Option<f64>, Option<f64>, String) {
    let tp = i.store_throughput_mbps.map(mbps_to_mibs);
    let tp_words = match i.store_throughput_mbps {
        Some(m) => format!(
            "; {} MB/s ({} MiB/s)",
            num(m),
            num(tp.unwrap_or(0.0).floor())
        ),
        None => "; no published throughput".into(),
    };
    // Every instance of the catalog with store IOPS carries the figures the cloud publishes
    // for that very size (its `source` says so); an instance marked weak is weak for its store
    // size, not for these.
    let how = "published";
    match (i.store_read_iops, i.store_write_iops) {
        (Some(r), Some(w)) => (
            Some(r.min(w) as f64),
            tp,
            format!(
                "local NVMe 4 KiB random IOPS: {} read / {} write ({how}){tp_words}; the plan counts the lower",
                int(r),
                int(w)
            ),
        ),
        (Some(r), None) | (None, Some(r)) => (
            Some(r as f64),
            tp,
            format!(
                "local NVMe IOPS: {} ({how}: one figure, not split into read and write){tp_words}",
                int(r)
            ),
        ),
        (None, None) => (
            None,
            tp,
            format!("the catalog has no IOPS figure for this instance store{tp_words}"),
        ),
    }
}

/// The caveats of switching `inst` (`now` a month) to its instance-store sibling `sib` for
/// `delta` a month more.
pub(super) fn sibling_caveats(
    (inst, sib, cloud): (&str, &str, &str),
    store: &Store,
    (now, delta): (f64, f64),
    equivalent: &Equivalent,
) -> Vec<String> {
    // The share guides quote ("m6i.xlarge to m6id.xlarge increases ~24% of instance price", the
    // OpenShift instance-disk recipe), so that it can be checked against the catalog.
    let share = if now > 0.0 {
        format!(", {:+.1} % on {inst}'s {}", delta / now * 100.0, usd(now))
    } else {
        String::new()
    };
    vec![
        format!(
            "data on the instance store is {}: only for data you can rebuild",
            crate::price::store_lifetime(cloud)
        ),
        format!(
            "the size is fixed by the instance type: {} x {} GB ({} GiB); it cannot grow",
            store.count,
            int(store.size_gb),
            int(store.total_bytes() >> 30)
        ),
        format!(
            "{} -> {}: {}/month more ({} x 730 h{share}), which buys {} GiB of gp2 or {} GiB of gp3",
            inst,
            sib,
            usd(delta),
            unit_usd(delta / HOURS_PER_MONTH),
            equivalent.gp2_gib.map(int).unwrap_or_else(|| "?".into()),
            equivalent.gp3_gib.map(int).unwrap_or_else(|| "?".into()),
        ),
    ]
}

/// The caveats of `n` GCP local SSDs on `machine`, which allows `counts` of them (`weak`: the
/// counts seen to work, not all it allows).
pub(super) fn local_ssd_caveats(
    machine: &str,
    counts: &[u32],
    weak: bool,
    n: u32,
    p: &Performance,
    source: &str,
) -> Vec<String> {
    let mut caveats = vec![
        "local SSD data is lost when the VM stops: only for data you can rebuild".to_string(),
        if weak {
            format!(
                "the catalog lists only {} for {machine} (not every count GCP allows for it is in its sources)",
                counts_words(counts)
            )
        } else {
            format!("{machine} allows {}", counts_words(counts))
        },
    ];
    if let (Some(i), Some(t)) = (p.baseline_iops, p.baseline_throughput_mibs) {
        caveats.push(format!(
            "{n} local SSD(s): {} IOPS and {} MiB/s sustained (the write side; reads reach about 1.9x the IOPS), from the catalog's local-ssd rules ({source}); the per-instance maxima need enough vCPUs",
            num(i.floor()),
            num(t.floor()),
        ));
    }
    caveats
}

/// "1 local SSD", "1, 2 or 4 local SSDs".
pub(super) fn counts_words(counts: &[u32]) -> String {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    match sorted.as_slice() {
        [] => "no local SSD".into(),
        [one] => crate::fmt::count(*one as usize, "local SSD"),
        [rest @ .., last] => format!(
            "{} or {last} local SSDs",
            rest.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
