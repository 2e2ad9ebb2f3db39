//! The planner's arithmetic: what a cache delivers at a hit ratio, the hit ratio a requirement
//! needs, published MB/s in MiB/s, and what an instance-store delta buys in plain volumes.

use super::types::{Equivalent, PlanOption};
use crate::model::Catalog;

/// Effective sustained rate of a cache in front of a backing device at hit ratio `h`: hits are
/// served by the cache and misses by the backing device, concurrently, so the first to saturate
/// bounds the total: min(cache / h, backing / (1 - h)).
pub fn effective_rate(cache: f64, backing: f64, h: f64) -> f64 {
    let hit_side = if h > 0.0 { cache / h } else { f64::INFINITY };
    let miss_side = if h < 1.0 {
        backing / (1.0 - h)
    } else {
        f64::INFINITY
    };
    hit_side.min(miss_side)
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
