//! Generating hybrid options: a fast provisioned-IOPS volume as a cache in front of an HDD
//! volume (the bcache-on-EBS recipe [recipe-bcache-ebs]), at the assumed hit ratio or, with a
//! miss-ratio curve, at the cheapest of several cache sizes that meets the requirements.

use super::cost::{effective_rate, hit_ratio_needed};
use super::explain::{hybrid_caveats, hybrid_shortfall, volume_label};
use super::generate::{component, size_for};
use super::rank::meets;
use super::types::{
    Candidates, Ctx, HitRatio, Kind, OptionPerformance, PlanError, PlanOption, Requirements,
};
use crate::fmt::round_cents;
use crate::model::{IopsRule, VolumeType};
use crate::perf::VolumeConfig;
use crate::price::{self, Quote};

/// Every priced HDD type with every priced provisioned-IOPS SSD type in front of it.
pub(super) fn hybrids(ctx: &Ctx, out: &mut Candidates) -> Result<(), PlanError> {
    let (cat, region, req) = (ctx.cat, ctx.region, ctx.req());
    let priced =
        |t: &&VolumeType| t.cloud == ctx.cloud && cat.volume_price(region, &t.name).is_some();
    let caches: Vec<&VolumeType> = cat
        .volume_types
        .iter()
        .filter(priced)
        .filter(|t| matches!(t.iops, IopsRule::Provisioned(_)) && t.media != "hdd")
        .collect();
    let backings: Vec<&VolumeType> = cat
        .volume_types
        .iter()
        .filter(priced)
        .filter(|t| t.media == "hdd")
        .collect();
    if caches.is_empty() || backings.is_empty() {
        out.notes.push(format!(
            "no hybrid in {region}: the catalog needs a priced provisioned-IOPS SSD type and a priced HDD type there"
        ));
        return Ok(());
    }
    for b in &backings {
        let label = format!("cache in front of {}", b.name);
        let whole = Requirements {
            capacity_gib: req.capacity_gib,
            iops: None,
            throughput_mibs: None,
        };
        let bcfg = match size_for(b, &whole) {
            Ok(c) => c,
            Err(e) => {
                out.reject(Kind::Hybrid, label, e.message, None);
                continue;
            }
        };
        let bq = match price::volume(cat, region, &b.name, &bcfg) {
            Ok(q) => q,
            Err(e) => {
                out.reject(Kind::Hybrid, label, e.to_string(), None);
                continue;
            }
        };
        for c in &caches {
            with_cache(ctx, c, b, &bq, out);
        }
    }
    Ok(())
}

/// The cache type `c` in front of the backing volume `bq`: the first cache size that meets the
/// requirements, else the best that does not, rejected with the hit ratio it would need.
fn with_cache(ctx: &Ctx, c: &VolumeType, b: &VolumeType, bq: &Quote, out: &mut Candidates) {
    let (cat, region, req) = (ctx.cat, ctx.region, ctx.req());
    let label = || format!("{} cache in front of {}", c.name, b.name);
    // The cache is provisioned for the whole requirement: in writeback mode every write
    // lands on it, and the bcache-on-EBS recipe [recipe-bcache-ebs] sizes it so (32 GiB =
    // 16,000 IOPS / 500 IOPS per GiB).
    let min_cache = Requirements {
        capacity_gib: 1,
        iops: req.iops,
        throughput_mibs: req.throughput_mibs,
    };
    let base_cfg = match size_for(c, &min_cache) {
        Ok(cfg) => cfg,
        Err(e) => {
            out.reject(Kind::Hybrid, label(), e.message, None);
            return;
        }
    };
    // Cache sizes to try: the rules' minimum, and with a hit-ratio curve a few fractions
    // of the capacity (the curve decides which one pays).
    let mut sizes = vec![base_cfg.size_gib];
    if let HitRatio::Curve { .. } = ctx.request.hit_ratio {
        for pct in [1u64, 2, 5, 10, 20, 50] {
            let s = (req.capacity_gib * pct).div_ceil(100);
            if s > base_cfg.size_gib && s <= c.max_gib {
                sizes.push(s);
            }
        }
    }
    let mut best_fail: Option<(PlanOption, String)> = None;
    for size in sizes {
        let cfg = VolumeConfig {
            size_gib: size,
            ..base_cfg.clone()
        };
        let cq = match price::volume(cat, region, &c.name, &cfg) {
            Ok(q) => q,
            Err(e) => {
                out.reject(Kind::Hybrid, label(), e.to_string(), None);
                break;
            }
        };
        let (h, h_source, predicted) = match &ctx.request.hit_ratio {
            HitRatio::Assumed(h) => (*h, "assumed".to_string(), false),
            HitRatio::Curve {
                source,
                hit_ratio_for,
            } => (
                (hit_ratio_for)(size << 30).clamp(0.0, 1.0),
                source.clone(),
                true,
            ),
        };
        let opt = hybrid_option((c, &cq), (b, bq), (h, &h_source, predicted), req);
        match meets(req, opt.performance.iops, opt.performance.throughput_mibs) {
            Ok(()) => {
                out.options.push(opt);
                return;
            }
            Err(why) => {
                let better = best_fail.as_ref().is_none_or(|(o, _)| {
                    opt.performance.iops.unwrap_or(0.0) > o.performance.iops.unwrap_or(0.0)
                });
                if better {
                    best_fail = Some((opt, why));
                }
            }
        }
    }
    if let Some((opt, why)) = best_fail {
        let reason = hybrid_shortfall(&opt.performance, &why);
        out.reject(Kind::Hybrid, opt.label.clone(), reason, Some(opt));
    }
}

/// The cache `c` in front of `b` at hit ratio `h` (from `h_source`; `predicted` for this cache
/// size by a curve rather than assumed).
fn hybrid_option(
    (c, cq): (&VolumeType, &Quote),
    (b, bq): (&VolumeType, &Quote),
    (h, h_source, predicted): (f64, &str, bool),
    req: &Requirements,
) -> PlanOption {
    let (cp, bp) = (&cq.performance, &bq.performance);
    let eff = |cache: Option<f64>, back: Option<f64>| match (cache, back) {
        (Some(c), Some(b)) => Some(effective_rate(c, b, h)),
        _ => None,
    };
    let iops = eff(cp.baseline_iops, bp.baseline_iops);
    let tp = eff(cp.baseline_throughput_mibs, bp.baseline_throughput_mibs);
    let burst_iops = eff(cp.baseline_iops, bp.burst_iops);
    let burst_tp = eff(cp.baseline_throughput_mibs, bp.burst_throughput_mibs);
    let mut needed: Option<f64> = None;
    if let (Some(w), Some(bi)) = (req.iops, bp.baseline_iops) {
        needed = Some(hit_ratio_needed(bi, w as f64));
    }
    if let (Some(w), Some(bt)) = (req.throughput_mibs, bp.baseline_throughput_mibs) {
        let n = hit_ratio_needed(bt, w);
        needed = Some(needed.map_or(n, |x: f64| x.max(n)));
    }
    let performance = OptionPerformance {
        iops,
        throughput_mibs: tp,
        burst_iops: burst_iops.filter(|b| Some(*b) != iops),
        burst_throughput_mibs: burst_tp.filter(|b| Some(*b) != tp),
        burst_seconds: bp.burst_seconds,
        hit_ratio: Some(h),
        hit_ratio_source: Some(h_source.to_string()),
        hit_ratio_needed: needed,
    };
    PlanOption {
        kind: Kind::Hybrid,
        label: format!(
            "{} cache in front of {}",
            volume_label(cq),
            volume_label(bq)
        ),
        monthly_cost_usd: round_cents(cq.monthly_cost_usd + bq.monthly_cost_usd),
        components: vec![component(cq, "cache"), component(bq, "backing")],
        caveats: hybrid_caveats((c, cq), (b, bq), &performance, predicted),
        performance,
        savings_usd: None,
        exact_monthly_cost_usd: None,
        equivalent: None,
        weak: cq.weak || bq.weak,
        unverified: vec![],
    }
}
