//! Device models that turn simulated traffic into predicted performance.
//!
//! A [`DeviceModel`] is a volume's sustained IOPS and bandwidth, an optional burst (IOPS or
//! bandwidth above the baseline while a credit bucket lasts: gp2's I/O credits, st1's
//! throughput credits) and an unloaded per-operation latency. Its numbers come from the
//! catalog ([`DeviceModel::from_catalog`]: the catalog's rules, e.g. st1's 40 MiB/s per TiB
//! baseline, 250 MiB/s per TiB burst, 1 TiB of credits per TiB, 500 IOPS with every I/O up to
//! 1 MiB counted as one) or from the caller.
//!
//! [`predict`] replays the per-second traffic windows of a simulation ([`crate::series`])
//! against a cache device and a backing device: each second each device serves what its
//! capacity (and credits) allow, the rest queues into the next second (this is how a writeback drain onto st1 backs
//! up), and each request's latency is its device's service time inflated by queueing. Latency
//! percentiles use the M/M/1 response-time law (exponential with mean S / (1 - utilisation)),
//! mixed over seconds and over hits and misses; this is a model for comparing options, not a
//! measurement.

use crate::sim::{Counters, Window};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeviceModel {
    pub name: String,
    /// Sustained operations per second.
    pub iops: f64,
    /// Sustained bytes per second.
    pub bytes_per_s: f64,
    /// Unloaded latency of one small operation, seconds.
    pub latency_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst: Option<Burst>,
    /// Every operation uses at least this much of the bandwidth (st1/sc1: "each I/O up to
    /// 1 MiB counts as 1 MiB", docs/sources.md [aws-ebs-types]), so small random I/O is bounded by
    /// bandwidth / 1 MiB while large I/O reaches the IOPS cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_io_bytes: Option<u64>,
}

/// Capacity above the baseline while credits last.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Burst {
    pub iops: f64,
    pub bytes_per_s: f64,
    /// Credits in a full bucket, in seconds of burst at full use from a full bucket
    /// (the catalog's `burst_seconds`).
    pub seconds: f64,
}

const MIB: f64 = 1048576.0;

impl DeviceModel {
    /// From the catalog's performance figures for a configured volume. `latency_s` is the
    /// catalog's typical latency when it has one; otherwise the caller's estimate.
    pub fn from_performance(
        name: &str,
        p: &disktier_catalog::perf::Performance,
        latency_s: f64,
    ) -> Option<DeviceModel> {
        let tp = p.baseline_throughput_mibs.map(|m| m * MIB);
        // The catalog gives `max_iops` (the cap for 1 MiB I/O) only where small I/O counts as
        // 1 MiB (st1, sc1): model that rule directly instead of the small-I/O baseline.
        let min_io_bytes = p.max_iops.map(|_| 1u64 << 20);
        let iops = p.max_iops.or(p.baseline_iops);
        let (iops, bytes_per_s) = match (iops, tp) {
            (Some(i), Some(t)) => (i, t),
            // Throughput-only figures: count 1 MiB operations against the bandwidth.
            (None, Some(t)) => (t / MIB, t),
            (Some(i), None) => (i, i * 256.0 * 1024.0),
            (None, None) => return None,
        };
        let burst = match (p.burst_iops, p.burst_throughput_mibs, p.burst_seconds) {
            (None, None, _) | (_, _, None) => None,
            (bi, bt, Some(s)) => Some(Burst {
                iops: bi.unwrap_or(iops),
                bytes_per_s: bt.map(|m| m * MIB).unwrap_or(bytes_per_s),
                seconds: s,
            }),
        };
        Some(DeviceModel {
            name: name.to_string(),
            iops,
            bytes_per_s,
            latency_s,
            burst,
            min_io_bytes,
        })
    }

    /// Looks a volume up in the catalog and models it. Latency: the catalog's notes are prose,
    /// so the caller passes it (gp2/gp3 about 0.8-1.8 ms, a modelled, weak figure; for HDD volumes
    /// without a published figure disktier uses 1 / IOPS cap).
    pub fn from_catalog(
        cat: &disktier_catalog::Catalog,
        volume_type: &str,
        size_gib: u64,
        iops: Option<u64>,
        throughput_mibs: Option<f64>,
        latency_s: Option<f64>,
    ) -> Result<DeviceModel, String> {
        let vt = cat.volume_type(volume_type).ok_or_else(|| {
            format!(
                "volume type {volume_type:?} is not in the catalog: see `disktier catalog show`"
            )
        })?;
        let cfg = disktier_catalog::perf::VolumeConfig {
            size_gib,
            iops,
            throughput_mibs,
        };
        let r = disktier_catalog::perf::resolve(vt, &cfg).map_err(|e| e.to_string())?;
        let p = disktier_catalog::perf::performance(vt, &r);
        let label = format!("{volume_type} {size_gib} GiB");
        let cap = p.max_iops.or(p.baseline_iops).unwrap_or(1000.0);
        DeviceModel::from_performance(&label, &p, latency_s.unwrap_or(1.0 / cap))
            .ok_or_else(|| format!("{label}: the catalog has no performance figures for it"))
    }
}

/// What a cache + backing pair is predicted to deliver for a trace's arrival pattern.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Prediction {
    pub mean_latency_s: f64,
    pub p99_latency_s: f64,
    /// Request rate the pair sustains for this mix once credits are gone.
    pub max_iops_sustained: f64,
    /// ... and while burst credits last.
    pub max_iops_burst: f64,
    pub max_bytes_per_s_sustained: f64,
    pub max_bytes_per_s_burst: f64,
    /// The busiest second's backing-device utilisation (1.0 = saturated).
    pub backing_peak_utilisation: f64,
    /// Longest queue of backing work carried between seconds, in seconds of work.
    pub backing_peak_backlog_s: f64,
    /// Trace second at which the backing device's burst credits ran out, if they did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_exhausted_at_s: Option<f64>,
    /// Seconds to write back what is still dirty at the end of the trace at the backing
    /// device's sustained bandwidth.
    pub drain_seconds_end: f64,
    /// The width of the windows queued, in seconds: 1, or a power of two when the trace has
    /// more busy seconds than [`crate::series::MAX_WINDOWS`] (bursts shorter than a window are
    /// then averaged over it, and the figures are optimistic).
    pub window_s: u64,
}

/// Per-device state while walking the windows.
struct Dev<'a> {
    m: &'a DeviceModel,
    credits_s: f64,
    backlog_ops: f64,
    backlog_bytes: f64,
}

impl Dev<'_> {
    /// Serves one window of `dt` seconds of demand; returns (utilisation, backlog seconds,
    /// burst active). With `dt` = 1 this is the per-second step the model was written as.
    fn window(&mut self, ops: f64, bytes: f64, dt: f64) -> (f64, f64, bool) {
        let bytes = match self.m.min_io_bytes {
            Some(m) => bytes.max(ops * m as f64),
            None => bytes,
        };
        let want_ops = ops + self.backlog_ops;
        let want_bytes = bytes + self.backlog_bytes;
        let (base_ops, base_bytes) = (self.m.iops * dt, self.m.bytes_per_s * dt);
        let (mut cap_ops, mut cap_bytes) = (base_ops, base_bytes);
        let mut bursting = false;
        if let Some(b) = &self.m.burst {
            let base_u = (want_ops / cap_ops).max(want_bytes / cap_bytes);
            if base_u > 1.0 && self.credits_s > 0.0 {
                cap_ops = (b.iops * dt).max(cap_ops);
                cap_bytes = (b.bytes_per_s * dt).max(cap_bytes);
                bursting = true;
            }
        }
        let u = (want_ops / cap_ops).max(want_bytes / cap_bytes);
        let served = u.min(1.0);
        if let Some(b) = &self.m.burst {
            // Credits drain while demand is above the baseline and refill below it; the
            // bucket holds `seconds` of full burst.
            let base_u = (want_ops / base_ops).max(want_bytes / base_bytes);
            let over = ((base_u.min(u.min(1.0) * cap_bytes / base_bytes)) - 1.0).max(-1.0);
            let burst_excess =
                (b.bytes_per_s / self.m.bytes_per_s - 1.0).max(b.iops / self.m.iops - 1.0);
            if burst_excess > 0.0 {
                self.credits_s = (self.credits_s - over * dt / burst_excess).clamp(0.0, b.seconds);
            }
        }
        if u > 1.0 {
            self.backlog_ops = want_ops * (1.0 - 1.0 / u);
            self.backlog_bytes = want_bytes * (1.0 - 1.0 / u);
        } else {
            self.backlog_ops = 0.0;
            self.backlog_bytes = 0.0;
        }
        let backlog_s = if u > 1.0 { (u - 1.0) * dt } else { 0.0 };
        (served, backlog_s, bursting)
    }

    /// Whether an idle window changes nothing: no backlog to work off and the burst bucket
    /// (if any) full, so the walk can jump to the next window with traffic.
    fn at_rest(&self) -> bool {
        self.backlog_ops == 0.0
            && self.backlog_bytes == 0.0
            && self
                .m
                .burst
                .as_ref()
                .is_none_or(|b| self.credits_s >= b.seconds)
    }

    fn service_s(&self, bytes_per_op: f64) -> f64 {
        let b = self
            .m
            .min_io_bytes
            .map_or(bytes_per_op, |m| bytes_per_op.max(m as f64));
        self.m.latency_s + b / self.m.bytes_per_s
    }
}

/// One class of requests in one second: count, mean response time.
struct Class {
    weight: f64,
    mean_s: f64,
}

fn mm1_mean(service: f64, u: f64) -> f64 {
    service / (1.0 - u.min(0.98))
}

/// One window (index `i`, `dt` seconds wide) of traffic through both devices: their
/// utilisation, backlog and credits, the peaks, and the latency classes of its requests.
fn step(
    cd: &mut Dev<'_>,
    bd: &mut Dev<'_>,
    p: &mut Prediction,
    classes: &mut Vec<Class>,
    i: u64,
    w: &Window,
    dt: f64,
) {
    let Window {
        requests,
        cache_ops,
        cache_bytes,
        backing_read_ops,
        backing_read_bytes,
        backing_write_ops,
        backing_write_bytes,
        hit_requests,
        no_data_requests: _,
    } = *w;
    let b_ops = (backing_read_ops + backing_write_ops) as f64;
    let b_bytes = (backing_read_bytes + backing_write_bytes) as f64;
    let (cu, _, _) = cd.window(cache_ops as f64, cache_bytes as f64, dt);
    let (bu, backlog, bursting) = bd.window(b_ops, b_bytes, dt);
    if bd.m.burst.is_some() && !bursting && bd.credits_s <= 0.0 && p.burst_exhausted_at_s.is_none()
    {
        p.burst_exhausted_at_s = Some(i as f64 * dt);
    }
    p.backing_peak_utilisation = p.backing_peak_utilisation.max(bu);
    p.backing_peak_backlog_s = p.backing_peak_backlog_s.max(backlog);
    if requests == 0 {
        return;
    }
    let hit_s = mm1_mean(
        cd.service_s(cache_bytes as f64 / (cache_ops.max(1)) as f64),
        cu,
    );
    let miss_ops = (backing_read_ops).max(1) as f64;
    let miss_s = mm1_mean(bd.service_s(backing_read_bytes as f64 / miss_ops), bu) + backlog;
    let misses = requests.saturating_sub(hit_requests) as f64;
    classes.push(Class {
        weight: hit_requests as f64,
        mean_s: hit_s,
    });
    classes.push(Class {
        weight: misses,
        mean_s: miss_s,
    });
}

/// Predicts performance of `cache` in front of `backing` for a simulation's traffic.
pub fn predict(c: &Counters, cache: &DeviceModel, backing: &DeviceModel) -> Prediction {
    let mut cd = Dev {
        m: cache,
        credits_s: cache.burst.as_ref().map(|b| b.seconds).unwrap_or(0.0),
        backlog_ops: 0.0,
        backlog_bytes: 0.0,
    };
    let mut bd = Dev {
        m: backing,
        credits_s: backing.burst.as_ref().map(|b| b.seconds).unwrap_or(0.0),
        backlog_ops: 0.0,
        backlog_bytes: 0.0,
    };
    let mut p = Prediction {
        window_s: c.windows.width_s(),
        ..Prediction::default()
    };
    let mut classes: Vec<Class> = Vec::new();
    let dt = c.windows.width_s() as f64;
    let idle = Window::default();
    // The windows with traffic, with the idle ones between them walked as long as a device
    // still works off a backlog or refills its burst credits (or the credits' exhaustion is
    // still to be noted): the same steps as a window for every second, without storing them.
    let mut next = 0u64;
    for (i, w) in c.windows.iter() {
        while next < i {
            let exhaustion_pending =
                backing.burst.is_some() && bd.credits_s <= 0.0 && p.burst_exhausted_at_s.is_none();
            if cd.at_rest() && bd.at_rest() && !exhaustion_pending {
                break;
            }
            step(&mut cd, &mut bd, &mut p, &mut classes, next, &idle, dt);
            next += 1;
        }
        step(&mut cd, &mut bd, &mut p, &mut classes, i, w, dt);
        next = i + 1;
    }
    let total: f64 = classes.iter().map(|k| k.weight).sum();
    if total > 0.0 {
        p.mean_latency_s = classes.iter().map(|k| k.weight * k.mean_s).sum::<f64>() / total;
        // p99 of a mixture of exponentials: solve sum w_i exp(-t / m_i) = 0.01 * total.
        let tail = |t: f64| -> f64 {
            classes
                .iter()
                .filter(|k| k.mean_s > 0.0)
                .map(|k| k.weight * (-t / k.mean_s).exp())
                .sum::<f64>()
                / total
        };
        let (mut lo, mut hi) = (
            0.0,
            classes.iter().map(|k| k.mean_s).fold(0.0, f64::max) * 10.0,
        );
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if tail(mid) > 0.01 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        p.p99_latency_s = hi;
    }
    // Capacity for this mix: what each device spends per request, against what it has.
    // The writebacks the dirty data left at the end owes are charged as the trace's own: a
    // write-back cache defers writes, and a rate it sustains must drain them (QA: writes to
    // distinct blocks into an LRU larger than them were rated at the cache's 3,000 IOPS with
    // st1 behind it doing nothing).
    let reqs = c.data_requests.max(1) as f64;
    let owed_ops = c.dirty_ops_end as f64;
    let b_ops_per: f64 = (c
        .windows
        .iter()
        .map(|(_, w)| (w.backing_read_ops + w.backing_write_ops) as f64)
        .sum::<f64>()
        + owed_ops)
        / reqs;
    // Bandwidth charged on the backing device, with st1's 1 MiB minimum per operation.
    let charged = |bytes: f64, ops: f64| {
        backing
            .min_io_bytes
            .map_or(bytes, |m| bytes.max(ops * m as f64))
    };
    let b_bytes_per: f64 = (c
        .windows
        .iter()
        .map(|(_, w)| {
            let bytes = (w.backing_read_bytes + w.backing_write_bytes) as f64;
            let ops = (w.backing_read_ops + w.backing_write_ops) as f64;
            charged(bytes, ops)
        })
        .sum::<f64>()
        + charged(c.dirty_bytes_end as f64, owed_ops))
        / reqs;
    let c_ops_per: f64 = c
        .windows
        .iter()
        .map(|(_, w)| w.cache_ops as f64)
        .sum::<f64>()
        / reqs;
    let c_bytes_per = (c.cache_read_bytes + c.cache_write_bytes) as f64 / reqs;
    let bytes_per_req = (c.read_blocks + c.write_blocks) as f64 * c.block_bytes as f64 / reqs;
    let limit = |ops_per: f64, cap: f64| {
        if ops_per > 0.0 {
            cap / ops_per
        } else {
            f64::INFINITY
        }
    };
    let rate = |b_iops: f64, b_bw: f64| {
        limit(b_ops_per, b_iops)
            .min(limit(b_bytes_per, b_bw))
            .min(limit(c_ops_per, cache.iops))
            .min(limit(c_bytes_per, cache.bytes_per_s))
    };
    p.max_iops_sustained = rate(backing.iops, backing.bytes_per_s);
    p.max_iops_burst = match &backing.burst {
        Some(b) => rate(
            b.iops.max(backing.iops),
            b.bytes_per_s.max(backing.bytes_per_s),
        ),
        None => p.max_iops_sustained,
    };
    for v in [&mut p.max_iops_sustained, &mut p.max_iops_burst] {
        if !v.is_finite() {
            *v = 0.0;
        }
    }
    p.max_bytes_per_s_sustained = p.max_iops_sustained * bytes_per_req;
    p.max_bytes_per_s_burst = p.max_iops_burst * bytes_per_req;
    p.drain_seconds_end = c.dirty_bytes_end as f64 / backing.bytes_per_s;
    p
}

#[cfg(test)]
#[path = "device_tests.rs"]
mod tests;
