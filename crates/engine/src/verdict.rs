//! Verdicts on a measured run: whether a disk can host etcd, judged the way etcd's own docs and
//! the OpenShift etcd-perf image judge it (the 99th percentile of fdatasync latency under 10 ms),
//! plus etcd's IOPS guidance and a 95 % confidence interval for that p99 from order statistics,
//! so a user can tell a solid "pass" from a lucky one.
//!
//! The interval is distribution-free: the rank of the true 99th percentile among n samples is
//! binomial(n, 0.99), so the sample values at ranks j and k around n·0.99 bracket it with at
//! least 95 % probability (e.g. Conover, "Practical Nonparametric Statistics", §3.2; Hahn &
//! Meeker, "Statistical Intervals", §5.2). Ranks come from the exact binomial distribution for
//! up to 50,000 samples and from its normal approximation above; the values at those ranks are
//! read from a histogram (the native engine's, exact to 3 significant digits, or one built from
//! fio's json+ bins) or, for imported results that only carry fio's percentile list,
//! interpolated from that list and marked approximate.

pub use crate::result::QuantileCi;
use crate::result::{DirStats, LatStats, RunDoc, Verdict, PERCENTILES};
use hdrhistogram::Histogram;

/// etcd's limit for the 99th percentile of WAL fdatasync latency: 10 ms. Sources (docs/sources.md):
/// [etcd-hardware], [ocp-etcd-practices] (50 sequential 8 KB fdatasync'd writes a second under
/// 10 ms), and the OpenShift etcd-perf image (`quay.io/openshift-scale/etcd-perf`,
/// [ocp-etcd-perf]), which prints "within the recommended threshold - 10 ms".
pub const ETCD_SYNC_P99_THRESHOLD_NS: u64 = 10_000_000;

/// etcd's minimum: at least 50 sequential fdatasync'd writes a second (docs/sources.md
/// [ocp-etcd-practices]: 50 IOPS of 8 KB, fdatasync included, under 10 ms).
pub const ETCD_MIN_SYNC_IOPS: f64 = 50.0;

/// etcd's guidance for busy clusters: around 500 sequential fdatasync'd writes a second
/// (docs/sources.md [ocp-etcd-practices]: 500 IOPS of 8000 bytes at 2 ms).
pub const ETCD_BUSY_SYNC_IOPS: f64 = 500.0;

/// etcd's default heartbeat interval, 100 ms: a WAL fsync longer than this delays the leader's
/// heartbeats. Source: etcd docs, "Tuning" (op-guide/tuning.md, "Time parameters":
/// `--heartbeat-interval` defaults to 100 ms).
pub const ETCD_HEARTBEAT_NS: u64 = 100_000_000;

/// etcd's default election timeout, 1 s: a follower that hears no heartbeat for this long starts
/// an election. Source: etcd docs, "Tuning" (`--election-timeout` defaults to 1000 ms).
pub const ETCD_ELECTION_TIMEOUT_NS: u64 = 1_000_000_000;

/// The verdicts [`etcd`] gives that inform and decide nothing: `check etcd`'s exit status is the
/// p99's (`etcd`; with the etcd-server model also `etcd-backend-commit`), as in etcd's docs, and
/// `assess` is etcd-ready on `etcd` alone. Readers of result documents (fleet's per-node
/// verdict) leave these out.
pub const INFORMATIONAL: [&str; 4] = [
    "etcd-iops-50",
    "etcd-iops-500",
    "etcd-stalls",
    "etcd-longest-sync",
];

/// Whether the verdict named `name` decides a run's pass or fail ([`INFORMATIONAL`]).
pub fn decides(name: &str) -> bool {
    !INFORMATIONAL.contains(&name)
}

mod stalls;
pub use stalls::{count_noun, longest_sync_sentence, stall_meaning, stall_sentence};

/// The confidence level of [`quantile_ci`] intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Up to this many samples the ranks come from the exact binomial distribution; above it the
/// normal approximation is within a rank or two and `(1-q)^n` would underflow an f64 anyway.
const EXACT_BINOMIAL_MAX_N: u64 = 50_000;

/// Where the latency samples of one series can be read from.
pub enum Samples<'a> {
    /// The engine's HDR histogram: every sample, at 3 significant digits.
    Hist(&'a Histogram<u64>),
    /// Only a summary (fio's percentile list, an imported or stored result): quantiles between
    /// the listed percentiles are interpolated, so intervals from it are approximate.
    Summary { lat: &'a LatStats, n: u64 },
}

impl Samples<'_> {
    fn n(&self) -> u64 {
        match self {
            Samples::Hist(h) => h.len(),
            Samples::Summary { n, .. } => *n,
        }
    }

    /// The value of the `rank`-th smallest sample (1-based).
    fn value_at_rank(&self, rank: u64) -> u64 {
        match self {
            Samples::Hist(h) => {
                let mut seen = 0u64;
                for v in h.iter_recorded() {
                    seen += v.count_since_last_iteration();
                    if seen >= rank {
                        return h.highest_equivalent(v.value_iterated_to());
                    }
                }
                h.max()
            }
            Samples::Summary { lat, n } => interpolate(lat, 100.0 * rank as f64 / *n as f64),
        }
    }
}

/// The quantile function of a percentile summary at percentile `p` (0-100), linear between the
/// listed points, with `min` at 0 and `max` at 100.
pub fn interpolate(lat: &LatStats, p: f64) -> u64 {
    let mut pts: Vec<(f64, f64)> = vec![(0.0, lat.min as f64)];
    for q in PERCENTILES {
        if let Some(v) = lat.p(q) {
            pts.push((q, v as f64));
        }
    }
    pts.push((100.0, lat.max.max(lat.min) as f64));
    let p = p.clamp(0.0, 100.0);
    for w in pts.windows(2) {
        let ((p0, v0), (p1, v1)) = (w[0], w[1]);
        if p <= p1 {
            if p1 <= p0 {
                return v1 as u64;
            }
            return (v0 + (v1 - v0) * (p - p0) / (p1 - p0)).round() as u64;
        }
    }
    lat.max
}

impl QuantileCi {
    /// The sentence a user reads, e.g. "95 % confidence interval for the p99: 1.21 ms to 1.43 ms
    /// (13,677 samples)".
    pub fn sentence(&self) -> String {
        let pct = percent_label(self.q);
        let approx = if self.approximate {
            ", approximate: interpolated from the percentile list"
        } else {
            ""
        };
        let conf = (self.confidence * 100.0).round();
        match (self.lo_ns, self.hi_ns) {
            (Some(lo), Some(hi)) => format!(
                "{conf} % confidence interval for the p{pct}: {} to {} ({} samples{approx})",
                disktier_units::fmt_ns(lo as f64),
                disktier_units::fmt_ns(hi as f64),
                self.n
            ),
            (lo, None) => format!(
                "too few samples ({}) for an upper bound on the p{pct} at {conf} % confidence{}: \
                 the true p{pct} may exceed the largest sample; run longer (--size or --runtime) \
                 for at least {} samples{approx}",
                self.n,
                lo.map(|v| format!(" (lower bound {})", disktier_units::fmt_ns(v as f64)))
                    .unwrap_or_default(),
                min_samples_for_upper_bound(self.q, self.confidence)
            ),
            (None, Some(hi)) => format!(
                "{conf} % confidence upper bound for the p{pct}: {} ({} samples{approx})",
                disktier_units::fmt_ns(hi as f64),
                self.n
            ),
        }
    }
}

fn percent_label(q: f64) -> String {
    crate::result::percentile_key(q * 100.0)
}

/// The smallest n for which the largest sample is an upper bound for the q-quantile at the given
/// confidence: P(all n samples below the quantile) = q^n <= (1-confidence)/2.
pub fn min_samples_for_upper_bound(q: f64, confidence: f64) -> u64 {
    let alpha = (1.0 - confidence) / 2.0;
    (alpha.ln() / q.ln()).ceil() as u64
}

/// The 1-based ranks (j, k) such that [X(j), X(k)] covers the q-quantile with probability at
/// least `confidence`; a bound is `None` when it would fall outside 1..=n.
pub fn ci_ranks(n: u64, q: f64, confidence: f64) -> (Option<u64>, Option<u64>) {
    if n == 0 {
        return (None, None);
    }
    let alpha = (1.0 - confidence) / 2.0;
    // P(X(j) <= xi_q) = P(B >= j) and P(X(k) >= xi_q) = P(B <= k-1) for B ~ Bin(n, q):
    // take the largest j with P(B <= j-1) <= alpha and the smallest k with P(B <= k-1) >= 1-alpha.
    let (j, k) = if n <= EXACT_BINOMIAL_MAX_N {
        exact_ranks(n, q, alpha)
    } else {
        normal_ranks(n, q, alpha)
    };
    let lo = (j >= 1).then_some(j as u64);
    let hi = (k <= n as i64).then_some(k as u64);
    (lo, hi)
}

/// Ranks from the exact binomial CDF. The pmf is built downwards from P(B = n) = q^n with
/// P(B = i-1) = P(B = i) · i/(n-i+1) · (1-q)/q, because for q near 1 the top of the
/// distribution is where the mass is (starting from (1-q)^n would underflow at once).
fn exact_ranks(n: u64, q: f64, alpha: f64) -> (i64, i64) {
    let nf = n as f64;
    let mut pmf = vec![0.0f64; n as usize + 1];
    pmf[n as usize] = (nf * q.ln()).exp();
    let ratio = (1.0 - q) / q;
    for i in (1..=n as usize).rev() {
        pmf[i - 1] = pmf[i] * i as f64 / (nf - i as f64 + 1.0) * ratio;
    }
    let mut cdf = 0.0f64;
    let mut j: i64 = 0;
    let mut k: i64 = n as i64 + 1;
    for (i, p) in pmf.iter().enumerate() {
        // Here cdf = P(B <= i-1): rank i (1-based) satisfies the lower-bound condition.
        if cdf <= alpha {
            j = i as i64;
        }
        cdf += p;
        // Now cdf = P(B <= i): rank i+1 satisfies the upper-bound condition.
        if cdf >= 1.0 - alpha {
            k = i as i64 + 1;
            break;
        }
    }
    (j, k)
}

/// Ranks from the normal approximation of Bin(n, q), with a continuity correction, rounded
/// outwards so the coverage stays at least the nominal level.
fn normal_ranks(n: u64, q: f64, alpha: f64) -> (i64, i64) {
    let z = inverse_normal_cdf(1.0 - alpha);
    let nf = n as f64;
    let sd = (nf * q * (1.0 - q)).sqrt();
    let j = (nf * q - z * sd - 0.5).floor() as i64;
    let k = (nf * q + z * sd + 0.5).ceil() as i64 + 1;
    (j, k)
}

/// The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
fn inverse_normal_cdf(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p_low = 0.02425;
    if p < p_low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - p_low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -inverse_normal_cdf(1.0 - p)
    }
}

/// A confidence interval for the q-quantile of `samples` at [`CONFIDENCE`].
pub fn quantile_ci(samples: &Samples<'_>, q: f64) -> QuantileCi {
    let n = samples.n();
    let (lo_rank, hi_rank) = ci_ranks(n, q, CONFIDENCE);
    QuantileCi {
        q,
        confidence: CONFIDENCE,
        n,
        lo_rank,
        hi_rank,
        lo_ns: lo_rank.map(|r| samples.value_at_rank(r)),
        hi_ns: hi_rank.map(|r| samples.value_at_rank(r)),
        approximate: matches!(samples, Samples::Summary { .. }),
    }
}

/// Settings of the etcd check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EtcdCriteria {
    /// p99 of fdatasync must be below this (ns).
    pub threshold_ns: u64,
}

impl Default for EtcdCriteria {
    fn default() -> Self {
        EtcdCriteria {
            threshold_ns: ETCD_SYNC_P99_THRESHOLD_NS,
        }
    }
}

/// The outcome of the etcd check on one run.
#[derive(Debug, Clone, PartialEq)]
pub struct EtcdVerdict {
    /// The p99 of the sync latency (ns) the verdict is based on.
    pub p99_ns: u64,
    /// Sequential fdatasync'd writes per second.
    pub sync_iops: f64,
    pub threshold_ns: u64,
    pub pass: bool,
    /// The 95 % confidence interval of `p99_ns`.
    pub ci: QuantileCi,
    /// `etcd` (the p99 verdict), then `etcd-iops-50` and `etcd-iops-500` (guidance).
    pub verdicts: Vec<Verdict>,
    /// What a user reads, line by line, in the OpenShift etcd-perf wording first.
    pub lines: Vec<String>,
    /// Why the figures say nothing about a disk, when they do not (the run was on tmpfs).
    pub caveat: Option<String>,
}

/// Filesystems that keep their data in RAM: a run there measures memory, and what it holds is
/// lost on reboot.
pub const RAM_FILESYSTEMS: &[&str] = &["tmpfs", "ramfs"];

/// The caveat for a run on a RAM-backed filesystem (tmpfs, ramfs), if `doc` was one.
pub fn ram_caveat(doc: &RunDoc) -> Option<String> {
    let fs = doc.target.fs_type.as_deref()?;
    RAM_FILESYSTEMS.contains(&fs).then(|| {
        format!(
            "{} is on {fs}: its data is in RAM and lost on reboot; it is not a disk, so these figures say nothing about a disk for etcd",
            doc.target.path
        )
    })
}

/// Errors of the etcd check.
#[derive(Debug, thiserror::Error)]
pub enum VerdictError {
    #[error("the run recorded no fdatasync/fsync latencies: the etcd check needs a write job with --fdatasync=1 (use --profile etcd)")]
    NoSync,
}

/// Judges a run for etcd. `sync_hist` is the sync latency histogram (the native engine's, or
/// fio's json+ bins); without it (an import of plain fio JSON, a stored run) the interval is
/// interpolated from the percentile list.
pub fn etcd(
    doc: &RunDoc,
    sync_hist: Option<&Histogram<u64>>,
    criteria: EtcdCriteria,
) -> Result<EtcdVerdict, VerdictError> {
    let sync: &DirStats = doc.results.sync.as_ref().ok_or(VerdictError::NoSync)?;
    let hist = sync_hist.filter(|h| !h.is_empty());
    let n = hist.map(|h| h.len()).unwrap_or(sync.ios);
    if n == 0 {
        return Err(VerdictError::NoSync);
    }
    let p99_ns = sync
        .lat_ns
        .p(99.0)
        .or_else(|| hist.map(|h| h.value_at_quantile(0.99)))
        .ok_or(VerdictError::NoSync)?;
    let samples = match hist {
        Some(h) => Samples::Hist(h),
        None => Samples::Summary {
            lat: &sync.lat_ns,
            n,
        },
    };
    let mut ci = quantile_ci(&samples, 0.99);
    // The bounds are samples: within the exact min and max, which a histogram bucket's highest
    // value may pass (as the percentiles are clamped).
    for b in [&mut ci.lo_ns, &mut ci.hi_ns].into_iter().flatten() {
        if let Some(max) = sync.lat_ns.max_ns() {
            *b = (*b).min(max);
        }
        if let Some(min) = sync.lat_ns.min_ns() {
            *b = (*b).max(min);
        }
    }
    let threshold_ns = criteria.threshold_ns;
    let pass = p99_ns < threshold_ns;
    let sync_iops = sync_rate(doc, sync);
    let thr = fmt_threshold(threshold_ns);

    // The OpenShift etcd-perf image's wording (docs/sources.md [ocp-etcd-perf]), so results read
    // the same.
    let mut lines = vec![format!("99th percentile of fsync is {p99_ns} ns")];
    let caveat = ram_caveat(doc);
    let main_msg = if pass && caveat.is_some() {
        // QA: a run on tmpfs said "the disk can be used to host etcd". The arithmetic stands;
        // there is no disk to speak of.
        format!(
            "99th percentile of the fsync is within the recommended threshold - {thr}, but {} is on {}, which is RAM, not a disk: it cannot keep etcd's data across a reboot",
            doc.target.path,
            doc.target.fs_type.as_deref().unwrap_or("")
        )
    } else if pass {
        format!(
            "99th percentile of the fsync is within the recommended threshold - {thr}, the disk can be used to host etcd"
        )
    } else {
        format!(
            "WARN: 99th percentile of the fsync is greater than the recommended value which is {thr}, faster disks are recommended to host etcd for better performance"
        )
    };
    lines.push(main_msg.clone());
    lines.push(ci.sentence());
    // Whether the interval settles the verdict: a bound on the wrong side of the threshold means
    // another run could come out the other way.
    match (pass, ci.lo_ns, ci.hi_ns) {
        (true, _, Some(hi)) if hi >= threshold_ns => lines.push(format!(
            "the interval reaches above {thr}: the pass is not certain, repeat the run or run longer"
        )),
        (true, _, None) => lines.push(
            "with this few samples the pass is not certain: repeat the run or run longer".into(),
        ),
        (false, Some(lo), _) if lo < threshold_ns => lines.push(format!(
            "the interval reaches below {thr}: the failure is not certain, repeat the run or run longer"
        )),
        _ => {}
    }

    let iops_msg = |min: f64, what: &str| {
        if sync_iops >= min {
            format!("{sync_iops:.0} sequential fdatasync'd writes/s meets etcd's {min:.0}/s {what}")
        } else {
            format!(
                "{sync_iops:.0} sequential fdatasync'd writes/s is below etcd's {min:.0}/s {what}"
            )
        }
    };
    let min_msg = iops_msg(ETCD_MIN_SYNC_IOPS, "minimum");
    let busy_msg = iops_msg(ETCD_BUSY_SYNC_IOPS, "guidance for busy clusters");
    lines.push(min_msg.clone());
    lines.push(busy_msg.clone());
    // What the p99 hides: single fdatasyncs past etcd's raft timeouts, counted per call.
    let stall_msg = sync.stalls.as_ref().map(|st| stall_sentence("fsyncs", st));
    if let Some(m) = &stall_msg {
        lines.push(m.clone());
    }
    // Without counts, the longest fsync alone still shows what the p99 hides.
    let longest = match (sync.stalls, sync.lat_ns.max_ns()) {
        (None, Some(max)) => Some((max, longest_sync_sentence(max, doc.engine == "fio"))),
        _ => None,
    };
    if let Some((_, m)) = &longest {
        lines.push(m.clone());
    }

    let mut verdicts = vec![
        Verdict {
            name: "etcd".into(),
            metric: "sync.p99".into(),
            value: p99_ns as f64,
            threshold: threshold_ns as f64,
            pass,
            message: main_msg,
            ci95: Some(ci.clone()),
            inconclusive: false,
        },
        Verdict {
            name: "etcd-iops-50".into(),
            metric: "sync.iops".into(),
            value: sync_iops,
            threshold: ETCD_MIN_SYNC_IOPS,
            pass: sync_iops >= ETCD_MIN_SYNC_IOPS,
            message: min_msg,
            ci95: None,
            inconclusive: false,
        },
        Verdict {
            name: "etcd-iops-500".into(),
            metric: "sync.iops".into(),
            value: sync_iops,
            threshold: ETCD_BUSY_SYNC_IOPS,
            pass: sync_iops >= ETCD_BUSY_SYNC_IOPS,
            message: busy_msg,
            ci95: None,
            inconclusive: false,
        },
    ];
    // Informational: the check's exit status stays the p99's, as in etcd's docs.
    if let (Some(st), Some(message)) = (sync.stalls, stall_msg) {
        verdicts.push(Verdict {
            name: "etcd-stalls".into(),
            metric: "sync.stalls.over_heartbeat".into(),
            value: st.over_heartbeat as f64,
            threshold: 0.0,
            pass: st.over_heartbeat == 0,
            message,
            ci95: None,
            inconclusive: false,
        });
    }
    if let Some((max, message)) = longest {
        verdicts.push(Verdict {
            name: "etcd-longest-sync".into(),
            metric: "sync.max_ns".into(),
            value: max as f64,
            threshold: ETCD_HEARTBEAT_NS as f64,
            pass: max <= ETCD_HEARTBEAT_NS,
            message,
            ci95: None,
            inconclusive: false,
        });
    }
    Ok(EtcdVerdict {
        p99_ns,
        sync_iops,
        threshold_ns,
        pass,
        ci,
        verdicts,
        lines,
        caveat,
    })
}

impl EtcdVerdict {
    /// Marks the verdict inconclusive when a runtime cap (`--quick`'s) ended the run before its
    /// size and the interval does not settle it: a pass without an upper bound below the
    /// threshold, a failure without a lower bound at or above it. The `etcd` verdict then fails
    /// (a gate must not read "ready" from it), `inconclusive` is set and the message says `fix`.
    /// A verdict the interval settles stands (QA: 39 fdatasyncs, the p99's lower bound 200 ms,
    /// against 10 ms: too slow however the rest of the job would have gone).
    pub fn cut_short(&mut self, fix: &str) {
        let thr = self.threshold_ns;
        let settled = match (self.pass, self.ci.lo_ns, self.ci.hi_ns) {
            (true, _, Some(hi)) => hi < thr,
            (false, Some(lo), _) => lo >= thr,
            _ => false,
        };
        if settled {
            let (what, bound) = if self.pass {
                ("pass", "upper bound is below")
            } else {
                ("failure", "lower bound is at or above")
            };
            self.lines.insert(
                3.min(self.lines.len()),
                format!(
                    "the run was cut short, but the p99's {bound} {}: the {what} stands",
                    fmt_threshold(thr)
                ),
            );
            return;
        }
        let msg = format!(
            "INCONCLUSIVE: the run was cut short after {} fdatasyncs, too few for a p99 that settles the {} threshold (see its interval); {fix}",
            self.ci.n,
            fmt_threshold(thr)
        );
        self.pass = false;
        if let Some(v) = self.verdicts.first_mut() {
            v.pass = false;
            v.inconclusive = true;
            v.message = msg.clone();
        }
        // The main message, and no more "the pass (failure) is not certain": it says so.
        if let Some(l) = self.lines.get_mut(1) {
            *l = msg;
        }
        self.lines.retain(|l| !l.contains(" is not certain: "));
    }
}

/// "10 ms" as etcd-perf writes it, "1 s"; other values in the unit a person reads.
fn fmt_threshold(ns: u64) -> String {
    if ns >= 1_000_000_000 && ns.is_multiple_of(1_000_000_000) {
        format!("{} s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{} ms", ns / 1_000_000)
    } else {
        disktier_units::fmt_ns(ns as f64)
    }
}

/// fdatasync calls per second: the sync series' own rate, else its count over the run time.
fn sync_rate(doc: &RunDoc, sync: &DirStats) -> f64 {
    if sync.iops > 0.0 {
        sync.iops
    } else if doc.duration_s > 0.0 {
        sync.ios as f64 / doc.duration_s
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests;
