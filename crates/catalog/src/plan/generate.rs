//! Generating single-volume options: each volume type of the region sized and provisioned by
//! its own rules to meet the requirements ([`size_for`]), or the limit that stops it, with the
//! nearest configuration the rules allow.

use super::explain::{volume_caveats, volume_label};
use super::rank::meets;
use super::types::{
    block, Blocker, Candidates, Component, Ctx, Kind, OptionPerformance, PlanOption, Requirements,
};
use crate::fmt::{int, num};
use crate::model::{IopsRule, PerTibThroughput, ProvisionedThroughput, ThroughputRule, VolumeType};
use crate::perf::VolumeConfig;
use crate::price::{self, Quote};

/// Every priced, non-ephemeral volume type of the region, sized for the requirements: into
/// `out.options` when it meets them, else into `out.rejected` with the reason; a note names
/// the types without a price in the region.
pub(super) fn volumes(ctx: &Ctx, out: &mut Candidates) {
    let (cat, region, req) = (ctx.cat, ctx.region, ctx.req());
    let mut unpriced = vec![];
    for vt in cat.volume_types.iter().filter(|t| t.cloud == ctx.cloud) {
        if vt.ephemeral {
            continue;
        }
        if cat.volume_price(region, &vt.name).is_none() {
            unpriced.push(vt.name.clone());
            continue;
        }
        match size_for(vt, req) {
            Ok(cfg) => {
                // The sizing follows the same rules `price` checks; should a hand-edited catalog
                // make them disagree, the type is rejected with the rule's words, not the plan.
                let q = match price::volume(cat, region, &vt.name, &cfg) {
                    Ok(q) => q,
                    Err(e) => {
                        out.reject(Kind::Volume, vt.name.clone(), e.to_string(), None);
                        continue;
                    }
                };
                let opt = volume_option(&q, vt);
                match meets(req, opt.performance.iops, opt.performance.throughput_mibs) {
                    Ok(()) => out.options.push(opt),
                    Err(why) => out.reject(Kind::Volume, opt.label.clone(), why, None),
                }
            }
            Err(b) => {
                let nearest = nearest_volume(ctx, vt, req);
                out.reject(Kind::Volume, vt.name.clone(), b.message, nearest);
            }
        }
    }
    if !unpriced.is_empty() {
        out.notes.push(format!(
            "no {region} price in the catalog for {}: not considered (add prices with --catalog FILE)",
            unpriced.join(", ")
        ));
    }
}

/// The smallest whole number at least `x`, forgiving float noise (1e-9) so that an exact
/// quotient is not rounded up; 0 for a negative `x`.
fn whole(x: f64) -> u64 {
    (x - 1e-9).ceil() as u64
}

/// Stops the configuration, saying `why`, when `stop` holds.
fn stop_if(stop: bool, why: impl FnOnce() -> String) -> Result<(), Blocker> {
    if stop {
        return Err(block(why()));
    }
    Ok(())
}

/// The smallest configuration of `vt` meeting `req`, or the limit that stops it.
pub(super) fn size_for(vt: &VolumeType, req: &Requirements) -> Result<VolumeConfig, Blocker> {
    let t = &vt.name;
    let mut size = req.capacity_gib.max(vt.min_gib);
    if let Some(unit) = vt.unit_gib {
        size = size.div_ceil(unit) * unit;
    }
    let mut iops: Option<u64> = None;
    let mut tp: Option<f64> = None;
    let r = req.iops;
    let want_tp = req.throughput_mibs;
    let at_most_mibs = |want: f64, max: f64| {
        stop_if(want > max, || {
            format!("{t} allows at most {} MiB/s", num(max))
        })
    };
    let at_most_iops = |want: u64, max: u64| {
        stop_if(want > max, || {
            format!("{t} allows at most {} IOPS", int(max))
        })
    };

    // Throughput rules that push IOPS or size.
    match &vt.throughput {
        ThroughputRule::Provisioned(rule) => {
            let mut t_need = want_tp.unwrap_or(rule.included_mibs).max(rule.min_mibs);
            if let Some(step) = rule.step_mibs {
                // gp3 is provisioned in whole MiB/s: 130.3 MiB/s asked is 131 provisioned.
                t_need = whole(t_need / step) as f64 * step;
            }
            at_most_mibs(t_need, rule.max_mibs)?;
            tp = Some(t_need);
            if let Some(per) = rule.max_mibs_per_iops {
                iops = Some(whole(t_need / per));
            }
        }
        ThroughputRule::Scaled {
            per_gib,
            base,
            max_mibs,
        } => {
            if let Some(w) = want_tp {
                at_most_mibs(w, *max_mibs)?;
                size = size.max(whole((w - base) / per_gib));
            }
        }
        ThroughputRule::Tiers { tiers } => {
            if let Some(w) = want_tp {
                match tiers.iter().find(|x| x.mibs >= w) {
                    Some(tier) => size = size.max(tier.from_gib),
                    None => {
                        let best = tiers.iter().map(|x| x.mibs).fold(0.0, f64::max);
                        return Err(block(format!("{t} sustains at most {} MiB/s", num(best))));
                    }
                }
                // Below the tier's limit the MiB/s follow the IOPS (gp2: 256 KiB per IOPS).
                if let (Some(kib), rule @ IopsRule::Scaled { per_gib, base, .. }) =
                    (vt.max_io_kib, &vt.iops)
                {
                    let need = w / (kib as f64 / 1024.0);
                    if rule.scaled_at(size as f64).unwrap_or_default() < need - 1e-9 {
                        size = size.max(whole((need - base) / per_gib));
                    }
                }
            }
        }
        ThroughputRule::PerIops {
            mibs_per_iops,
            max_mibs,
            plateau,
            ..
        } => {
            if let Some(w) = want_tp {
                at_most_mibs(w, *max_mibs)?;
                let above = plateau.as_ref().map_or(0.0, |x| x.iops_for(w));
                iops = Some(whole((w / mibs_per_iops).max(above)));
            }
        }
        ThroughputRule::PerTib(rule) => {
            if let Some(w) = want_tp {
                // Sustained, the largest volume's baseline: sc1 16 TiB x 12 = 192 MiB/s, where
                // its 250 cap is reached only in bursts (QA: 'sc1 allows at most 250 MiB/s').
                let most = sustained_per_tib_max(vt, rule);
                stop_if(w > most + 1e-9, || {
                    format!(
                        "{t} sustains at most {} MiB/s ({})",
                        num(most),
                        per_tib_max_words(vt, rule)
                    )
                })?;
                size = size.max(whole(w / rule.baseline_per_tib * 1024.0));
            }
        }
        ThroughputRule::SizeTier => {
            size = size.max(crate::perf::tier_size_meeting(vt, None, want_tp).map_err(block)?)
        }
        ThroughputRule::Unknown => stop_if(want_tp.is_some(), || {
            format!("the catalog has no throughput rule for {t}")
        })?,
    }

    match &vt.iops {
        IopsRule::Provisioned(rule) => {
            let need = r
                .unwrap_or(0)
                .max(rule.min)
                .max(rule.included)
                .max(iops.unwrap_or(0));
            at_most_iops(need, rule.max)?;
            iops = Some(need);
            // The included IOPS come at every size; the ratio bounds only what is above them.
            if let (Some(per), true) = (rule.max_per_gib, need > rule.included) {
                size = size.max(whole(need as f64 / per));
            }
        }
        rule @ IopsRule::Scaled {
            per_gib, base, max, ..
        } => {
            iops = None;
            if let Some(w) = r {
                if w > *max {
                    return Err(block(format!(
                        "{t} delivers at most {} IOPS (at {} GiB)",
                        int(*max),
                        int(((*max as f64 - base) / per_gib).ceil() as u64)
                    )));
                }
                // The size already chosen may deliver them through the rule's floor (gp2: 100
                // IOPS up to 33 GiB, [aws-ebs-types]); grow only when it does not.
                if rule.scaled_at(size as f64).unwrap_or_default() < w as f64 {
                    size = size.max(whole((w as f64 - base) / per_gib));
                }
            }
        }
        IopsRule::Cap { max } => {
            iops = None;
            if let Some(w) = r {
                at_most_iops(w, *max)?;
                // Small random I/O counts as `io_accounting_kib` of throughput each.
                if let (Some(kib), ThroughputRule::PerTib(rule)) =
                    (vt.io_accounting_kib, &vt.throughput)
                {
                    let mibs = w as f64 * kib as f64 / 1024.0;
                    let most = sustained_per_tib_max(vt, rule);
                    if mibs > most + 1e-9 {
                        return Err(block(format!(
                            "{t} sustains at most {} small random IOPS ({} MiB/s, each I/O counted as {} KiB; {})",
                            num((most / (kib as f64 / 1024.0)).floor()),
                            num(most),
                            int(kib),
                            per_tib_max_words(vt, rule)
                        )));
                    }
                    size = size.max(whole(mibs / rule.baseline_per_tib * 1024.0));
                }
            }
        }
        IopsRule::SizeTier => {
            size = size.max(crate::perf::tier_size_meeting(vt, r, None).map_err(block)?)
        }
        IopsRule::Unknown => stop_if(r.is_some(), || {
            format!("the catalog has no IOPS rule for {t}")
        })?,
    }
    if !matches!(vt.throughput, ThroughputRule::Provisioned(_)) {
        tp = None;
    }
    if !matches!(vt.iops, IopsRule::Provisioned(_)) {
        iops = None;
    }
    if size > vt.max_gib {
        return Err(block(format!(
            "{t} volumes hold at most {} GiB, and meeting this needs {} GiB",
            int(vt.max_gib),
            int(size)
        )));
    }
    Ok(VolumeConfig::new(size, iops, tp))
}

pub(super) fn component(q: &Quote, role: &str) -> Component {
    let c = q.config.as_ref().expect("volume quotes carry their config");
    Component {
        type_: q.type_.clone(),
        role: role.into(),
        size_gib: c.size_gib,
        iops: c
            .iops
            .or(q.performance.baseline_iops.map(|i| i.floor() as u64)),
        throughput_mibs: c.throughput_mibs.or(q.performance.baseline_throughput_mibs),
        monthly_cost_usd: q.monthly_cost_usd,
    }
}

pub(super) fn volume_option(q: &Quote, vt: &VolumeType) -> PlanOption {
    let p = &q.performance;
    PlanOption {
        kind: Kind::Volume,
        label: volume_label(q),
        monthly_cost_usd: q.monthly_cost_usd,
        components: vec![component(q, "volume")],
        performance: OptionPerformance {
            iops: p.baseline_iops,
            throughput_mibs: p.baseline_throughput_mibs,
            burst_iops: p.burst_iops,
            burst_throughput_mibs: p.burst_throughput_mibs,
            burst_seconds: p.burst_seconds,
            ..Default::default()
        },
        caveats: volume_caveats(p, vt),
        savings_usd: None,
        exact_monthly_cost_usd: None,
        equivalent: None,
        weak: q.weak,
        unverified: vec![],
    }
}

/// The most a per-TiB type sustains: its baseline at its largest size, at most its cap.
fn sustained_per_tib_max(vt: &VolumeType, rule: &PerTibThroughput) -> f64 {
    (rule.baseline_per_tib * vt.max_gib as f64 / 1024.0).min(rule.max_mibs)
}

/// Where [`sustained_per_tib_max`] comes from: "12 per TiB at 16,384 GiB; 250 only in bursts"
/// (sc1), or "its cap, from 12,800 GiB" (st1).
fn per_tib_max_words(vt: &VolumeType, rule: &PerTibThroughput) -> String {
    let most = sustained_per_tib_max(vt, rule);
    if most < rule.max_mibs {
        format!(
            "{} per TiB at {} GiB; {} only in bursts",
            num(rule.baseline_per_tib),
            int(vt.max_gib),
            num(rule.max_mibs)
        )
    } else {
        format!(
            "its cap, from {} GiB",
            int(whole(rule.max_mibs / rule.baseline_per_tib * 1024.0))
        )
    }
}

/// The closest configuration of `vt` the rules allow: each requirement clipped to the type's limit.
fn nearest_volume(ctx: &Ctx, vt: &VolumeType, req: &Requirements) -> Option<PlanOption> {
    let max_iops = crate::perf::max_iops(vt);
    let max_tp = match &vt.throughput {
        ThroughputRule::Provisioned(ProvisionedThroughput { max_mibs, .. })
        | ThroughputRule::Scaled { max_mibs, .. }
        | ThroughputRule::PerIops { max_mibs, .. } => Some(*max_mibs),
        ThroughputRule::PerTib(rule) => Some(sustained_per_tib_max(vt, rule)),
        ThroughputRule::Tiers { tiers } => tiers.iter().map(|t| t.mibs).reduce(f64::max),
        ThroughputRule::SizeTier => crate::perf::tier_max(vt).map(|m| m.1),
        ThroughputRule::Unknown => None,
    };
    let mut clipped = Requirements {
        capacity_gib: req.capacity_gib.min(vt.max_gib),
        iops: match (req.iops, max_iops) {
            (Some(w), Some(m)) => Some(w.min(m)),
            _ => None,
        },
        throughput_mibs: match (req.throughput_mibs, max_tp) {
            (Some(w), Some(m)) => Some(w.min(m)),
            _ => None,
        },
    };
    // st1/sc1: IOPS bounded by max throughput through the 1 MiB accounting.
    if let (Some(kib), Some(w), Some(m)) = (vt.io_accounting_kib, clipped.iops, max_tp) {
        clipped.iops = Some(w.min((m / (kib as f64 / 1024.0)) as u64));
    }
    let cfg = size_for(vt, &clipped).ok()?;
    let q = price::volume(ctx.cat, ctx.region, &vt.name, &cfg).ok()?;
    Some(volume_option(&q, vt))
}
