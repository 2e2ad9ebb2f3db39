//! The planner's arithmetic: what a cache delivers at a hit ratio, the hit ratio a requirement
//! needs, published MB/s in MiB/s, and what an instance-store delta buys in plain volumes.

use super::types::{Equivalent, PlanOption};
use crate::model::Catalog;

/// Effective sustained rate of a cache in front of a backing device at hit ratio `h`: hits are
/// served by the cache and misses by the backing device, concurrently, so the first to saturate
/// bounds the total: min(cache / h, backing / (1 - h)).
///
/// A result within a billionth of a whole number is that number: `1.0 - 0.99` is
/// 0.010000000000000009 in binary, so 40 / (1 - 0.99) came out as 3,999.99..., which the plan
/// floors to "3,999 IOPS" where the formula it prints, 40 / 0.01, gives 4,000.
pub fn effective_rate(cache: f64, backing: f64, h: f64) -> f64 {
    let hit_side = if h > 0.0 { cache / h } else { f64::INFINITY };
    let miss_side = if h < 1.0 {
        backing / (1.0 - h)
    } else {
        f64::INFINITY
    };
    let r = hit_side.min(miss_side);
    let whole = r.round();
    if r.is_finite() && (r - whole).abs() <= 1e-9 * whole.abs().max(1.0) {
        whole
    } else {
        r
    }
}

/// The hit ratio at which `backing / (1 - h)` reaches `want`: 1 - backing / want.
pub(super) fn hit_ratio_needed(backing: f64, want: f64) -> f64 {
    (1.0 - backing / want).max(0.0)
}

/// MB/s (10^6 bytes, as clouds publish) in MiB/s.
pub(super) fn mbps_to_mibs(mbps: f64) -> f64 {
    mbps * crate::model::MIBS_PER_MBPS
}

/// The monthly cost of the cheapest option, if any.
pub(super) fn cheapest(options: &[PlanOption]) -> Option<f64> {
    options.iter().map(|o| o.monthly_cost_usd).reduce(f64::min)
}

/// The GiB of gp2 and of gp3 that `delta` a month buys in `region` (the OpenShift instance-disk
/// recipe's comparison [recipe-ocp-instance-disk]).
pub(super) fn equivalent(cat: &Catalog, region: &str, delta: f64) -> Equivalent {
    let gib = |t: &str| {
        cat.volume_price(region, t)
            .map(|p| (delta / p.storage_gb_month + 1e-9).floor() as u64)
    };
    Equivalent {
        gp2_gib: gib("gp2"),
        gp3_gib: gib("gp3"),
    }
}

#[cfg(test)]
mod tests {
    use super::effective_rate;

    /// QA (the bcache-on-EBS recipe's 1 TiB of st1, 40 IOPS, behind a 16,000 IOPS cache at a
    /// hit ratio of 0.99): the plan said "delivers 3,999 IOPS".
    #[test]
    fn a_whole_rate_is_not_floored_below_itself() {
        assert_eq!(effective_rate(16000.0, 40.0, 0.99).floor(), 4000.0);
        assert_eq!(effective_rate(16000.0, 200.0, 0.9).floor(), 2000.0);
        assert_eq!(effective_rate(16000.0, 40.0, 0.9975).floor(), 16000.0);
        // Fractions stay fractions.
        assert!((effective_rate(16000.0, 39.0625, 0.9) - 390.625).abs() < 1e-9);
    }
}
