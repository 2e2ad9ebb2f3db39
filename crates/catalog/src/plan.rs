//! The planner: every storage option in a region that meets capacity, IOPS and throughput, cheapest
//! first. Single volumes of each type sized and provisioned by the type's rules, hybrid caches (a
//! fast volume in front of an HDD volume, the bcache-on-EBS recipe [recipe-bcache-ebs]), and
//! switching an instance to its instance-store sibling (the OpenShift instance-disk recipe
//! [recipe-ocp-instance-disk]). Savings are always against the cheapest single volume that meets
//! the same requirements.
//!
//! Performance checks use sustained (baseline) figures: a burst is reported, never relied on.

use crate::fmt::{int, num, round_cents, usd};
use crate::model::{Catalog, IopsRule, ThroughputRule, VolumeType};
use crate::perf::{Performance, VolumeConfig};
use crate::price::{self, PriceError, Quote};
use serde::Serialize;

/// The hit ratio the planner assumes for hybrid caches when the user gives none (issue #3's
/// example, `--hit-ratio 0.9`). It is a guess, stated in every hybrid option; `disktier simulate`
/// replaces it with a prediction from a trace (bcache [kernel-bcache] and lvmcache [lvmcache]
/// predict no hit ratio of their own).
pub const DEFAULT_HIT_RATIO: f64 = 0.9;

/// What the data needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Requirements {
    pub capacity_gib: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_mibs: Option<f64>,
}

/// How the planner learns a hybrid cache's hit ratio.
pub enum HitRatio {
    /// A stated assumption (`--hit-ratio`, default [`DEFAULT_HIT_RATIO`]).
    Assumed(f64),
    /// A prediction for a cache of the given size in bytes (from `disktier simulate`'s miss-ratio
    /// curve). The planner then tries several cache sizes and keeps the cheapest that meets the
    /// requirements.
    Curve {
        source: String,
        hit_ratio_for: Box<dyn Fn(u64) -> f64 + Send + Sync>,
    },
}

impl std::fmt::Debug for HitRatio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HitRatio::Assumed(h) => write!(f, "Assumed({h})"),
            HitRatio::Curve { source, .. } => write!(f, "Curve({source})"),
        }
    }
}

/// A planning question.
#[derive(Debug)]
pub struct PlanRequest {
    pub region: String,
    pub requirements: Requirements,
    pub allow_hybrid: bool,
    /// The instance the data lives on now (for the instance-store comparison).
    pub instance: Option<String>,
    pub allow_ephemeral: bool,
    pub hit_ratio: HitRatio,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Volume,
    Hybrid,
    InstanceStore,
}

/// One piece of an option (a volume, or an instance store).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Component {
    #[serde(rename = "type")]
    pub type_: String,
    /// "volume", "cache", "backing" or "instance-store".
    pub role: String,
    pub size_gib: u64,
    pub iops: Option<u64>,
    pub throughput_mibs: Option<f64>,
    pub monthly_cost_usd: f64,
}

/// What an option delivers, sustained and burst.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OptionPerformance {
    pub iops: Option<f64>,
    pub throughput_mibs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_iops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_throughput_mibs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_seconds: Option<f64>,
    /// Hybrid: the hit ratio the effective figures assume, and where it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_ratio_source: Option<String>,
    /// Hybrid: the hit ratio the requirements need.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_ratio_needed: Option<f64>,
}

/// What the same money buys in plain volumes (the OpenShift instance-disk recipe's comparison).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Equivalent {
    pub gp2_gib: Option<u64>,
    pub gp3_gib: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanOption {
    pub kind: Kind,
    /// "gp3 5,120 GiB, 16,000 IOPS, 1,000 MiB/s".
    pub label: String,
    pub monthly_cost_usd: f64,
    pub components: Vec<Component>,
    pub performance: OptionPerformance,
    pub caveats: Vec<String>,
    /// Cheapest single volume meeting the requirements minus this option (none when no single
    /// volume meets them).
    pub savings_usd: Option<f64>,
    /// Unrounded monthly cost (instance-store deltas; the OpenShift instance-disk recipe's $66.138
    /// style figures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_monthly_cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equivalent: Option<Equivalent>,
    pub weak: bool,
}

/// An option that does not meet the requirements, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejected {
    pub kind: Kind,
    pub label: String,
    pub reason: String,
    /// The closest configuration of this kind that the rules allow, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest: Option<Box<PlanOption>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub region: String,
    pub requirements: Requirements,
    /// The hit ratio assumed for hybrids (when not from a curve).
    pub assumed_hit_ratio: Option<f64>,
    pub options: Vec<PlanOption>,
    pub rejected: Vec<Rejected>,
    pub notes: Vec<String>,
    /// Published figures about `--instance`'s family, checked against the catalog (each
    /// check's message is also in `notes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quoted_checks: Vec<crate::quoted::QuotedCheck>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Price(#[from] PriceError),
    #[error("hit ratio {0} is not between 0 and 1: pass e.g. --hit-ratio 0.9")]
    HitRatio(f64),
    #[error("capacity must be at least 1 GiB")]
    Capacity,
    #[error("no option in {region} meets {wanted}: {}{}", .blockers.join("; "), .nearest.as_ref().map(|n| format!("; nearest feasible: {n}")).unwrap_or_default())]
    Impossible {
        region: String,
        wanted: String,
        blockers: Vec<String>,
        nearest: Option<String>,
    },
}

/// Why a type cannot meet the requirements: the rule's own words.
#[derive(Debug, Clone)]
struct Blocker {
    message: String,
}

fn block(message: String) -> Blocker {
    Blocker { message }
}

/// The smallest configuration of `vt` meeting `req`, or the limit that stops it.
fn size_for(vt: &VolumeType, req: &Requirements) -> Result<VolumeConfig, Blocker> {
    let t = &vt.name;
    let mut size = req.capacity_gib.max(vt.min_gib);
    if let Some(unit) = vt.unit_gib {
        size = size.div_ceil(unit) * unit;
    }
    let mut iops: Option<u64> = None;
    let mut tp: Option<f64> = None;
    let r = req.iops;
    let want_tp = req.throughput_mibs;

    // Throughput rules that push IOPS or size.
    match &vt.throughput {
        ThroughputRule::Provisioned {
            included_mibs,
            min_mibs,
            max_mibs,
            max_mibs_per_iops,
        } => {
            let t_need = want_tp.unwrap_or(*included_mibs).max(*min_mibs);
            if t_need > *max_mibs {
                return Err(block(format!(
                    "{t} allows at most {} MiB/s",
                    num(*max_mibs)
                )));
            }
            tp = Some(t_need);
            if let Some(per) = max_mibs_per_iops {
                iops = Some((t_need / per - 1e-9).ceil() as u64);
            }
        }
        ThroughputRule::Scaled {
            per_gib,
            base,
            max_mibs,
        } => {
            if let Some(w) = want_tp {
                if w > *max_mibs {
                    return Err(block(format!(
                        "{t} allows at most {} MiB/s",
                        num(*max_mibs)
                    )));
                }
                size = size.max(((w - base) / per_gib - 1e-9).ceil().max(0.0) as u64);
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
            }
        }
        ThroughputRule::PerIops {
            mibs_per_iops,
            max_mibs,
            ..
        } => {
            if let Some(w) = want_tp {
                if w > *max_mibs {
                    return Err(block(format!(
                        "{t} allows at most {} MiB/s",
                        num(*max_mibs)
                    )));
                }
                iops = Some((w / mibs_per_iops - 1e-9).ceil() as u64);
            }
        }
        ThroughputRule::PerTib {
            baseline_per_tib,
            max_mibs,
            ..
        } => {
            if let Some(w) = want_tp {
                if w > *max_mibs {
                    return Err(block(format!(
                        "{t} allows at most {} MiB/s",
                        num(*max_mibs)
                    )));
                }
                size = size.max((w / baseline_per_tib * 1024.0 - 1e-9).ceil() as u64);
            }
        }
        ThroughputRule::SizeTier => {
            size = size.max(crate::perf::tier_size_meeting(vt, None, want_tp).map_err(block)?)
        }
        ThroughputRule::Unknown => {
            if want_tp.is_some() {
                return Err(block(format!("the catalog has no throughput rule for {t}")));
            }
        }
    }

    match &vt.iops {
        IopsRule::Provisioned {
            included,
            min,
            max,
            max_per_gib,
        } => {
            let need = r
                .unwrap_or(0)
                .max(*min)
                .max(*included)
                .max(iops.unwrap_or(0));
            if need > *max {
                return Err(block(format!("{t} allows at most {} IOPS", int(*max))));
            }
            iops = Some(need);
            if let Some(per) = max_per_gib {
                size = size.max((need as f64 / per - 1e-9).ceil() as u64);
            }
        }
        IopsRule::Scaled {
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
                size = size.max(((w as f64 - base) / per_gib - 1e-9).ceil().max(0.0) as u64);
            }
        }
        IopsRule::Cap { max } => {
            iops = None;
            if let Some(w) = r {
                if w > *max {
                    return Err(block(format!("{t} allows at most {} IOPS", int(*max))));
                }
                // Small random I/O counts as `io_accounting_kib` of throughput each.
                if let (
                    Some(kib),
                    ThroughputRule::PerTib {
                        baseline_per_tib,
                        max_mibs,
                        ..
                    },
                ) = (vt.io_accounting_kib, &vt.throughput)
                {
                    let mibs = w as f64 * kib as f64 / 1024.0;
                    if mibs > *max_mibs {
                        return Err(block(format!(
                            "{t} sustains at most {} small random IOPS ({} MiB/s, each I/O counted as {} KiB)",
                            num(max_mibs / (kib as f64 / 1024.0)),
                            num(*max_mibs),
                            int(kib)
                        )));
                    }
                    size = size.max((mibs / baseline_per_tib * 1024.0 - 1e-9).ceil() as u64);
                }
            }
        }
        IopsRule::SizeTier => {
            size = size.max(crate::perf::tier_size_meeting(vt, r, None).map_err(block)?)
        }
        IopsRule::Unknown => {
            if r.is_some() {
                return Err(block(format!("the catalog has no IOPS rule for {t}")));
            }
        }
    }
    if !matches!(vt.throughput, ThroughputRule::Provisioned { .. }) {
        tp = None;
    }
    if !matches!(vt.iops, IopsRule::Provisioned { .. }) {
        iops = None;
    }
    if size > vt.max_gib {
        return Err(block(format!(
            "{t} volumes hold at most {} GiB, and meeting this needs {} GiB",
            int(vt.max_gib),
            int(size)
        )));
    }
    Ok(VolumeConfig {
        size_gib: size,
        iops,
        throughput_mibs: tp,
    })
}

fn volume_label(q: &Quote) -> String {
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

fn component(q: &Quote, role: &str) -> Component {
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

fn volume_option(q: &Quote, vt: &VolumeType) -> PlanOption {
    let p = &q.performance;
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
        caveats,
        savings_usd: None,
        exact_monthly_cost_usd: None,
        equivalent: None,
        weak: q.weak,
    }
}

fn meets(req: &Requirements, iops: Option<f64>, tp: Option<f64>) -> Result<(), String> {
    if let Some(w) = req.iops {
        match iops {
            Some(i) if i + 1e-9 >= w as f64 => {}
            Some(i) => return Err(format!("{} IOPS < {} required", num(i.floor()), int(w))),
            None => return Err("IOPS not in the catalog".into()),
        }
    }
    if let Some(w) = req.throughput_mibs {
        match tp {
            Some(t) if t + 1e-9 >= w => {}
            Some(t) => return Err(format!("{} MiB/s < {} required", num(t), num(w))),
            None => return Err("throughput not in the catalog".into()),
        }
    }
    Ok(())
}

fn describe(req: &Requirements) -> String {
    let mut s = format!("{} GiB", int(req.capacity_gib));
    if let Some(i) = req.iops {
        s.push_str(&format!(", {} IOPS", int(i)));
    }
    if let Some(t) = req.throughput_mibs {
        s.push_str(&format!(", {} MiB/s", num(t)));
    }
    s
}

/// Plans storage for the request.
pub fn plan(cat: &Catalog, reqst: &PlanRequest) -> Result<Plan, PlanError> {
    let reg = price::region(cat, &reqst.region)?.clone();
    let req = &reqst.requirements;
    if req.capacity_gib == 0 {
        return Err(PlanError::Capacity);
    }
    if let HitRatio::Assumed(h) = reqst.hit_ratio {
        if !(0.0..=1.0).contains(&h) || h.is_nan() {
            return Err(PlanError::HitRatio(h));
        }
    }
    let mut options = vec![];
    let mut rejected = vec![];
    let mut notes = vec![];
    let mut unpriced = vec![];

    // Single volumes.
    for vt in cat.volume_types.iter().filter(|t| t.cloud == reg.cloud) {
        if vt.ephemeral {
            continue;
        }
        if cat.volume_price(&reg.name, &vt.name).is_none() {
            unpriced.push(vt.name.clone());
            continue;
        }
        match size_for(vt, req) {
            Ok(cfg) => {
                // The sizing follows the same rules `price` checks; should a hand-edited catalog
                // make them disagree, the type is rejected with the rule's words, not the plan.
                let q = match price::volume(cat, &reg.name, &vt.name, &cfg) {
                    Ok(q) => q,
                    Err(e) => {
                        rejected.push(Rejected {
                            kind: Kind::Volume,
                            label: vt.name.clone(),
                            reason: e.to_string(),
                            nearest: None,
                        });
                        continue;
                    }
                };
                let opt = volume_option(&q, vt);
                match meets(req, opt.performance.iops, opt.performance.throughput_mibs) {
                    Ok(()) => options.push(opt),
                    Err(why) => rejected.push(Rejected {
                        kind: Kind::Volume,
                        label: opt.label.clone(),
                        reason: why,
                        nearest: None,
                    }),
                }
            }
            Err(b) => {
                let nearest = nearest_volume(cat, &reg.name, vt, req);
                rejected.push(Rejected {
                    kind: Kind::Volume,
                    label: vt.name.clone(),
                    reason: b.message,
                    nearest: nearest.map(Box::new),
                });
            }
        }
    }
    if !unpriced.is_empty() {
        notes.push(format!(
            "no {} price in the catalog for {}: not considered (add prices with --catalog FILE)",
            reg.name,
            unpriced.join(", ")
        ));
    }
    let cheapest_volume = options
        .iter()
        .map(|o| o.monthly_cost_usd)
        .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.min(c))));

    if reqst.allow_hybrid {
        hybrids(
            cat,
            &reg.name,
            reqst,
            &mut options,
            &mut rejected,
            &mut notes,
        )?;
    }
    let quoted_checks = reqst
        .instance
        .as_deref()
        .map(|i| crate::quoted::checks(cat, i))
        .unwrap_or_default();
    notes.extend(quoted_checks.iter().map(|c| c.message.clone()));
    if let Some(inst) = &reqst.instance {
        instance_store(
            cat,
            &reg.name,
            inst,
            reqst,
            &mut options,
            &mut rejected,
            &mut notes,
        )?;
    }

    if options.is_empty() {
        // The nearest feasible option: the one closest to the weakest requirement it misses
        // (achieved / required, capped at 1), then the cheaper.
        let closeness = |o: &PlanOption| {
            let size: u64 = o.components.iter().map(|c| c.size_gib).sum();
            let mut score = (size as f64 / req.capacity_gib as f64).min(1.0);
            if let Some(w) = req.iops {
                score = score.min((o.performance.iops.unwrap_or(0.0) / w as f64).min(1.0));
            }
            if let Some(w) = req.throughput_mibs {
                score = score.min((o.performance.throughput_mibs.unwrap_or(0.0) / w).min(1.0));
            }
            score
        };
        let nearest = rejected
            .iter()
            .filter_map(|r| r.nearest.as_deref())
            .min_by(|a, b| {
                closeness(b)
                    .total_cmp(&closeness(a))
                    .then(a.monthly_cost_usd.total_cmp(&b.monthly_cost_usd))
            })
            .map(|n| {
                format!(
                    "{} for {}/month ({})",
                    n.label,
                    usd(n.monthly_cost_usd),
                    perf_line(&n.performance)
                )
            });
        return Err(PlanError::Impossible {
            region: reg.name.clone(),
            wanted: describe(req),
            blockers: rejected
                .iter()
                .map(|r| format!("{}: {}", r.label, r.reason))
                .collect(),
            nearest,
        });
    }
    for o in options.iter_mut() {
        o.savings_usd = cheapest_volume.map(|c| round_cents(c - o.monthly_cost_usd));
    }
    if cheapest_volume.is_none() {
        notes.push(
            "no single volume meets the requirements, so no savings are shown (savings are only ever against the cheapest single volume meeting the same requirements)"
                .into(),
        );
    }
    options.sort_by(|a, b| {
        a.monthly_cost_usd
            .total_cmp(&b.monthly_cost_usd)
            .then_with(|| a.label.cmp(&b.label))
    });
    let assumed_hit_ratio = match reqst.hit_ratio {
        HitRatio::Assumed(h) if reqst.allow_hybrid => Some(h),
        _ => None,
    };
    Ok(Plan {
        region: reg.name,
        requirements: req.clone(),
        assumed_hit_ratio,
        options,
        rejected,
        notes,
        quoted_checks,
    })
}

/// The closest configuration of `vt` the rules allow: each requirement clipped to the type's limit.
fn nearest_volume(
    cat: &Catalog,
    region: &str,
    vt: &VolumeType,
    req: &Requirements,
) -> Option<PlanOption> {
    let max_iops = match &vt.iops {
        IopsRule::Provisioned { max, .. }
        | IopsRule::Scaled { max, .. }
        | IopsRule::Cap { max } => Some(*max),
        IopsRule::SizeTier => crate::perf::tier_max(vt).map(|m| m.0),
        IopsRule::Unknown => None,
    };
    let max_tp = match &vt.throughput {
        ThroughputRule::Provisioned { max_mibs, .. }
        | ThroughputRule::Scaled { max_mibs, .. }
        | ThroughputRule::PerIops { max_mibs, .. }
        | ThroughputRule::PerTib { max_mibs, .. } => Some(*max_mibs),
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
    let q = price::volume(cat, region, &vt.name, &cfg).ok()?;
    Some(volume_option(&q, vt))
}

fn perf_line(p: &OptionPerformance) -> String {
    let mut parts = vec![];
    if let Some(i) = p.iops {
        parts.push(format!("{} IOPS", num(i.floor())));
    }
    if let Some(t) = p.throughput_mibs {
        parts.push(format!("{} MiB/s", num(t)));
    }
    if parts.is_empty() {
        "performance not in the catalog".into()
    } else {
        parts.join(", ")
    }
}

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
fn hit_ratio_needed(backing: f64, want: f64) -> f64 {
    (1.0 - backing / want).max(0.0)
}

fn hybrids(
    cat: &Catalog,
    region: &str,
    reqst: &PlanRequest,
    options: &mut Vec<PlanOption>,
    rejected: &mut Vec<Rejected>,
    notes: &mut Vec<String>,
) -> Result<(), PlanError> {
    let req = &reqst.requirements;
    let cloud = &cat.region(region).expect("checked").cloud;
    let priced = |t: &&VolumeType| t.cloud == *cloud && cat.volume_price(region, &t.name).is_some();
    let caches: Vec<&VolumeType> = cat
        .volume_types
        .iter()
        .filter(priced)
        .filter(|t| matches!(t.iops, IopsRule::Provisioned { .. }) && t.media != "hdd")
        .collect();
    let backings: Vec<&VolumeType> = cat
        .volume_types
        .iter()
        .filter(priced)
        .filter(|t| t.media == "hdd")
        .collect();
    if caches.is_empty() || backings.is_empty() {
        notes.push(format!(
            "no hybrid in {region}: the catalog needs a priced provisioned-IOPS SSD type and a priced HDD type there"
        ));
        return Ok(());
    }
    for b in &backings {
        let bcfg = match size_for(
            b,
            &Requirements {
                capacity_gib: req.capacity_gib,
                iops: None,
                throughput_mibs: None,
            },
        ) {
            Ok(c) => c,
            Err(e) => {
                rejected.push(Rejected {
                    kind: Kind::Hybrid,
                    label: format!("cache in front of {}", b.name),
                    reason: e.message,
                    nearest: None,
                });
                continue;
            }
        };
        let bq = match price::volume(cat, region, &b.name, &bcfg) {
            Ok(q) => q,
            Err(e) => {
                rejected.push(Rejected {
                    kind: Kind::Hybrid,
                    label: format!("cache in front of {}", b.name),
                    reason: e.to_string(),
                    nearest: None,
                });
                continue;
            }
        };
        for c in &caches {
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
                    rejected.push(Rejected {
                        kind: Kind::Hybrid,
                        label: format!("{} cache in front of {}", c.name, b.name),
                        reason: e.message,
                        nearest: None,
                    });
                    continue;
                }
            };
            // Cache sizes to try: the rules' minimum, and with a hit-ratio curve a few fractions
            // of the capacity (the curve decides which one pays).
            let mut sizes = vec![base_cfg.size_gib];
            if let HitRatio::Curve { .. } = reqst.hit_ratio {
                for pct in [1u64, 2, 5, 10, 20, 50] {
                    let s = (req.capacity_gib * pct).div_ceil(100);
                    if s > base_cfg.size_gib && s <= c.max_gib {
                        sizes.push(s);
                    }
                }
            }
            let mut best_fail: Option<(PlanOption, String)> = None;
            let mut found = false;
            for size in sizes {
                let cfg = VolumeConfig {
                    size_gib: size,
                    ..base_cfg.clone()
                };
                let cq = match price::volume(cat, region, &c.name, &cfg) {
                    Ok(q) => q,
                    Err(e) => {
                        rejected.push(Rejected {
                            kind: Kind::Hybrid,
                            label: format!("{} cache in front of {}", c.name, b.name),
                            reason: e.to_string(),
                            nearest: None,
                        });
                        break;
                    }
                };
                let (h, h_source) = match &reqst.hit_ratio {
                    HitRatio::Assumed(h) => (*h, "assumed".to_string()),
                    HitRatio::Curve {
                        source,
                        hit_ratio_for,
                    } => ((hit_ratio_for)(size << 30).clamp(0.0, 1.0), source.clone()),
                };
                let opt = hybrid_option(c, &cq, b, &bq, h, &h_source, req);
                match meets(req, opt.performance.iops, opt.performance.throughput_mibs) {
                    Ok(()) => {
                        options.push(opt);
                        found = true;
                        break;
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
            if !found {
                if let Some((opt, why)) = best_fail {
                    let needed = opt.performance.hit_ratio_needed;
                    let reason = format!(
                        "at a hit ratio of {} ({}) it delivers {}{}",
                        num(opt.performance.hit_ratio.unwrap_or(0.0)),
                        opt.performance
                            .hit_ratio_source
                            .as_deref()
                            .unwrap_or("assumed"),
                        why,
                        match needed {
                            Some(n) if n < 1.0 => format!(
                                "; it needs at least {:.2} % of I/O to hit the cache",
                                n * 100.0
                            ),
                            _ => String::new(),
                        }
                    );
                    rejected.push(Rejected {
                        kind: Kind::Hybrid,
                        label: opt.label.clone(),
                        reason,
                        nearest: Some(Box::new(opt)),
                    });
                }
            }
        }
    }
    Ok(())
}

fn hybrid_option(
    c: &VolumeType,
    cq: &Quote,
    b: &VolumeType,
    bq: &Quote,
    h: f64,
    h_source: &str,
    req: &Requirements,
) -> PlanOption {
    let cp: &Performance = &cq.performance;
    let bp: &Performance = &bq.performance;
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
    let bcfg = bq.config.as_ref().expect("volume");
    let ccfg = cq.config.as_ref().expect("volume");
    let b_iops = bp.baseline_iops.unwrap_or(0.0);
    let b_tp = bp.baseline_throughput_mibs.unwrap_or(0.0);
    let mut caveats = vec![
        format!(
            "hit ratio {} is {h_source}: effective {} IOPS = min({} / {}, {} / {}) (hits served by {}, misses by {} at the same time)",
            num(h),
            iops.map(|i| num(i.floor())).unwrap_or_else(|| "?".into()),
            cp.baseline_iops.map(num).unwrap_or_else(|| "?".into()),
            num(h),
            num(b_iops.floor()),
            num(1.0 - h),
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
                (Some(cap), ThroughputRule::PerTib { baseline_per_tib, .. }) => format!(
                    " ({} IOPS cap, {} MiB/s per TiB baseline, each I/O counted as 1 MiB)",
                    num(cap),
                    num(*baseline_per_tib)
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
        format!(
            "the {} GiB {} cache is sized by its rules for the IOPS asked, not for the working set: measure or simulate the hit ratio (disktier simulate)",
            int(ccfg.size_gib),
            c.name
        ),
    ];
    if let Some(n) = needed {
        if n > 0.0 {
            caveats.push(format!(
                "the requirements need at least {:.2} % of I/O to hit the cache",
                n * 100.0
            ));
        }
    }
    PlanOption {
        kind: Kind::Hybrid,
        label: format!(
            "{} cache in front of {}",
            volume_label(cq),
            volume_label(bq)
        ),
        monthly_cost_usd: round_cents(cq.monthly_cost_usd + bq.monthly_cost_usd),
        components: vec![component(cq, "cache"), component(bq, "backing")],
        performance: OptionPerformance {
            iops,
            throughput_mibs: tp,
            burst_iops: burst_iops.filter(|b| Some(*b) != iops),
            burst_throughput_mibs: burst_tp.filter(|b| Some(*b) != tp),
            burst_seconds: bp.burst_seconds,
            hit_ratio: Some(h),
            hit_ratio_source: Some(h_source.to_string()),
            hit_ratio_needed: needed,
        },
        caveats,
        savings_usd: None,
        exact_monthly_cost_usd: None,
        equivalent: None,
        weak: cq.weak || bq.weak,
    }
}

/// MB/s (10^6 bytes, as clouds publish) in MiB/s.
fn mbps_to_mibs(mbps: f64) -> f64 {
    mbps * 1e6 / (1u64 << 20) as f64
}

/// What an instance store sustains, as the plan counts it: the lower of the published read and
/// write IOPS (or the one figure a cloud publishes), and the published throughput; with the
/// caveat that says which figures these are.
fn store_performance(i: &crate::model::Instance) -> (Option<f64>, Option<f64>, String) {
    let tp = i.store_throughput_mbps.map(mbps_to_mibs);
    let tp_words = match i.store_throughput_mbps {
        Some(m) => format!(
            "; {} MB/s ({} MiB/s)",
            num(m),
            num(tp.unwrap_or(0.0).floor())
        ),
        None => "; no published throughput".into(),
    };
    let how = if i.weak {
        "weak: scaled from a published size"
    } else {
        "published"
    };
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

#[allow(clippy::too_many_arguments)]
fn instance_store(
    cat: &Catalog,
    region: &str,
    inst_name: &str,
    reqst: &PlanRequest,
    options: &mut Vec<PlanOption>,
    rejected: &mut Vec<Rejected>,
    notes: &mut Vec<String>,
) -> Result<(), PlanError> {
    let req = &reqst.requirements;
    let inst = cat.instance(inst_name).ok_or_else(|| {
        PlanError::Price(PriceError::UnknownInstance {
            name: inst_name.to_string(),
            close: crate::suggest::close_matches(
                inst_name,
                cat.instances.iter().map(|i| i.name.as_str()),
            ),
        })
    })?;
    if let Some(counts) = &inst.local_ssd_counts {
        return gcp_local_ssd(
            cat, region, inst_name, counts, reqst, options, rejected, notes,
        );
    }
    let now = price::instance_monthly(cat, region, inst_name)?;
    if let Some(store) = &inst.store {
        notes.push(format!(
            "{inst_name} already has an instance store: use it (disktier disks / setup) at no extra cost"
        ));
        if reqst.allow_ephemeral {
            let (iops, tp, perf_caveat) = store_performance(inst);
            let store_gib = store.total_bytes() >> 30;
            let opt = PlanOption {
                kind: Kind::InstanceStore,
                label: format!(
                    "{inst_name}'s own instance store ({} x {} GB NVMe)",
                    store.count,
                    int(store.size_gb)
                ),
                monthly_cost_usd: 0.0,
                components: vec![Component {
                    type_: format!("{inst_name} instance store"),
                    role: "instance-store".into(),
                    size_gib: store_gib,
                    iops: iops.map(|i| i as u64),
                    throughput_mibs: tp,
                    monthly_cost_usd: 0.0,
                }],
                performance: OptionPerformance {
                    iops,
                    throughput_mibs: tp,
                    ..Default::default()
                },
                caveats: vec![
                    "data on the instance store is lost when the instance stops or is deallocated (kept across a reboot): only for data you can rebuild".into(),
                    perf_caveat,
                ],
                savings_usd: None,
                exact_monthly_cost_usd: Some(0.0),
                equivalent: None,
                weak: inst.weak,
            };
            push_checked(opt, store_gib, req, options, rejected);
        }
        return Ok(());
    }
    let Some(sib) = crate::quoted::store_sibling(cat, inst_name) else {
        notes.push(format!(
            "the catalog has no instance-store sibling of {inst_name}"
        ));
        return Ok(());
    };
    let then = price::instance_monthly(cat, region, &sib)?;
    let delta = then - now;
    let s = cat.instance(&sib).expect("sibling exists");
    let store = s.store.as_ref().expect("a sibling has a store");
    let store_gib = store.total_bytes() >> 30;
    if !reqst.allow_ephemeral {
        notes.push(format!(
            "{sib} has {} x {} GB of local NVMe for {}/month more than {inst_name}: pass --allow-ephemeral to weigh it (data lost on stop)",
            store.count,
            int(store.size_gb),
            usd(delta)
        ));
        return Ok(());
    }
    let equivalent = Equivalent {
        gp2_gib: cat
            .volume_price(region, "gp2")
            .map(|p| (delta / p.storage_gb_month + 1e-9).floor() as u64),
        gp3_gib: cat
            .volume_price(region, "gp3")
            .map(|p| (delta / p.storage_gb_month + 1e-9).floor() as u64),
    };
    let (iops, tp, perf_caveat) = store_performance(s);
    let mut caveats = vec![
        "data on the instance store is lost when the instance stops or terminates (kept across a reboot): only for data you can rebuild".to_string(),
        format!(
            "the size is fixed by the instance type: {} x {} GB ({} GiB); it cannot grow",
            store.count,
            int(store.size_gb),
            int(store_gib)
        ),
        format!(
            "{} -> {}: {}/month more ({} x 730 h), which buys {} GiB of gp2 or {} GiB of gp3",
            inst_name,
            sib,
            usd(delta),
            crate::fmt::unit_usd(delta / price::HOURS_PER_MONTH),
            equivalent.gp2_gib.map(int).unwrap_or_else(|| "?".into()),
            equivalent.gp3_gib.map(int).unwrap_or_else(|| "?".into()),
        ),
    ];
    caveats.push(perf_caveat);
    let opt = PlanOption {
        kind: Kind::InstanceStore,
        label: format!(
            "{inst_name} -> {sib} ({} x {} GB NVMe)",
            store.count,
            int(store.size_gb)
        ),
        monthly_cost_usd: round_cents(delta),
        components: vec![Component {
            type_: format!("{sib} instance store"),
            role: "instance-store".into(),
            size_gib: store_gib,
            iops: iops.map(|i| i as u64),
            throughput_mibs: tp,
            monthly_cost_usd: round_cents(delta),
        }],
        performance: OptionPerformance {
            iops,
            throughput_mibs: tp,
            ..Default::default()
        },
        caveats,
        savings_usd: None,
        exact_monthly_cost_usd: Some(delta),
        equivalent: Some(equivalent),
        weak: s.weak || inst.weak,
    };
    push_checked(opt, store_gib, req, options, rejected);
    Ok(())
}

/// Puts an instance-store option among the options when its capacity and its published
/// figures meet the requirements, else among the rejected with the reason. A requirement on a
/// figure the catalog lacks is not checked but said.
fn push_checked(
    mut opt: PlanOption,
    store_gib: u64,
    req: &Requirements,
    options: &mut Vec<PlanOption>,
    rejected: &mut Vec<Rejected>,
) {
    if store_gib < req.capacity_gib {
        rejected.push(Rejected {
            kind: Kind::InstanceStore,
            label: opt.label.clone(),
            reason: format!(
                "{} GiB of instance store < {} GiB required",
                int(store_gib),
                int(req.capacity_gib)
            ),
            nearest: Some(Box::new(opt)),
        });
        return;
    }
    let (iops, tp) = (opt.performance.iops, opt.performance.throughput_mibs);
    let mut check = req.clone();
    if iops.is_none() && req.iops.is_some() {
        check.iops = None;
        opt.caveats.push(
            "the catalog has no IOPS figure for this instance store: IOPS not checked".into(),
        );
    }
    if tp.is_none() && req.throughput_mibs.is_some() {
        check.throughput_mibs = None;
        opt.caveats.push(
            "the catalog has no throughput figure for this instance store: not checked".into(),
        );
    }
    match meets(&check, iops, tp) {
        Ok(()) => options.push(opt),
        Err(why) => rejected.push(Rejected {
            kind: Kind::InstanceStore,
            label: opt.label.clone(),
            reason: why,
            nearest: Some(Box::new(opt)),
        }),
    }
}

#[allow(clippy::too_many_arguments)]
fn gcp_local_ssd(
    cat: &Catalog,
    region: &str,
    machine: &str,
    counts: &[u32],
    reqst: &PlanRequest,
    options: &mut Vec<PlanOption>,
    rejected: &mut Vec<Rejected>,
    notes: &mut Vec<String>,
) -> Result<(), PlanError> {
    let req = &reqst.requirements;
    let label = format!("{machine} + local SSD");
    if counts.is_empty() {
        rejected.push(Rejected {
            kind: Kind::InstanceStore,
            label,
            reason: format!(
                "{machine} cannot have local SSD (e2 machine types): use an n1/n2 machine type"
            ),
            nearest: None,
        });
        return Ok(());
    }
    let Ok((_, vt, _)) = price::lookup(cat, region, "local-ssd") else {
        notes.push(format!("no local-ssd price for {region} in the catalog"));
        return Ok(());
    };
    let unit = vt.unit_gib.unwrap_or(375);
    if !reqst.allow_ephemeral {
        notes.push(format!(
            "{machine} can take up to {} local SSDs of {unit} GB: pass --allow-ephemeral to weigh them (data lost on stop)",
            counts.iter().max().copied().unwrap_or(0)
        ));
        return Ok(());
    }
    let mut fitting: Vec<u32> = counts
        .iter()
        .copied()
        .filter(|&n| n as u64 * unit >= req.capacity_gib)
        .collect();
    fitting.sort_unstable();
    // The fewest disks that hold the capacity and, by the catalog's figures, deliver the IOPS
    // and throughput; else the most the machine takes (then rejected with the shortfall).
    let delivers = |n: u32| {
        price::volume(
            cat,
            region,
            "local-ssd",
            &VolumeConfig {
                size_gib: n as u64 * unit,
                iops: None,
                throughput_mibs: None,
            },
        )
        .ok()
        .is_some_and(|q| {
            let p = &q.performance;
            req.iops
                .is_none_or(|w| p.baseline_iops.is_none_or(|i| i + 1e-9 >= w as f64))
                && req
                    .throughput_mibs
                    .is_none_or(|w| p.baseline_throughput_mibs.is_none_or(|t| t + 1e-9 >= w))
        })
    };
    let Some(n) = fitting
        .iter()
        .copied()
        .find(|&n| delivers(n))
        .or(fitting.last().copied())
    else {
        rejected.push(Rejected {
            kind: Kind::InstanceStore,
            label,
            reason: format!(
                "{machine} allows at most {} local SSDs ({} GB), < {} GiB required",
                counts.iter().max().copied().unwrap_or(0),
                int(counts.iter().max().copied().unwrap_or(0) as u64 * unit),
                int(req.capacity_gib)
            ),
            nearest: None,
        });
        return Ok(());
    };
    let q = price::volume(
        cat,
        region,
        "local-ssd",
        &VolumeConfig {
            size_gib: n as u64 * unit,
            iops: None,
            throughput_mibs: None,
        },
    )?;
    let mut caveats = vec![
        "local SSD data is lost when the VM stops: only for data you can rebuild".to_string(),
        format!(
            "{machine} allows {} local SSDs",
            counts
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ];
    let iops = q.performance.baseline_iops;
    let tp = q.performance.baseline_throughput_mibs;
    if let (Some(i), Some(t)) = (iops, tp) {
        caveats.push(format!(
            "{n} local SSD(s): {} IOPS and {} MiB/s sustained (the write side; reads reach about 1.9x the IOPS), from the catalog's local-ssd rules ({}); the per-instance maxima need enough vCPUs",
            num(i.floor()),
            num(t.floor()),
            vt.source
        ));
    }
    let opt = PlanOption {
        kind: Kind::InstanceStore,
        label: format!("{machine} + {n} x {unit} GB local SSD"),
        monthly_cost_usd: q.monthly_cost_usd,
        components: vec![Component {
            type_: "local-ssd".into(),
            role: "instance-store".into(),
            size_gib: n as u64 * unit,
            iops: iops.map(|i| i as u64),
            throughput_mibs: tp,
            monthly_cost_usd: q.monthly_cost_usd,
        }],
        performance: OptionPerformance {
            iops,
            throughput_mibs: tp,
            ..Default::default()
        },
        caveats,
        savings_usd: None,
        exact_monthly_cost_usd: None,
        equivalent: None,
        weak: q.weak,
    };
    push_checked(opt, n as u64 * unit, req, options, rejected);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(region: &str, cap: u64, iops: Option<u64>, tp: Option<f64>) -> PlanRequest {
        PlanRequest {
            region: region.into(),
            requirements: Requirements {
                capacity_gib: cap,
                iops,
                throughput_mibs: tp,
            },
            allow_hybrid: false,
            instance: None,
            allow_ephemeral: false,
            hit_ratio: HitRatio::Assumed(DEFAULT_HIT_RATIO),
        }
    }

    #[test]
    fn gp2_is_grown_to_reach_iops() {
        let c = Catalog::embedded();
        let p = plan(&c, &request("us-east-1", 100, Some(6000), None)).unwrap();
        let gp2 = p
            .options
            .iter()
            .find(|o| o.label.starts_with("gp2"))
            .unwrap();
        // 6,000 IOPS / 3 per GiB = 2,000 GiB; 2,000 x $0.10 = $200.00.
        assert_eq!(gp2.components[0].size_gib, 2000);
        assert_eq!(gp2.monthly_cost_usd, 200.0);
        // gp3: 100 GiB x 0.08 = 8.00 + 3,000 x 0.005 = 15.00 -> 23.00, the cheapest.
        assert_eq!(p.options[0].label, "gp3 100 GiB, 6,000 IOPS, 125 MiB/s");
        assert_eq!(p.options[0].monthly_cost_usd, 23.0);
        assert_eq!(p.options[0].savings_usd, Some(0.0));
        // Ordered cheapest first.
        assert!(p
            .options
            .windows(2)
            .all(|w| w[0].monthly_cost_usd <= w[1].monthly_cost_usd));
        // st1 cannot do 6,000 IOPS.
        assert!(p
            .rejected
            .iter()
            .any(|r| r.label == "st1" && r.reason.contains("500 IOPS")));
    }

    #[test]
    fn gcp_local_ssd_takes_the_smallest_allowed_count_and_e2_has_none() {
        let c = Catalog::embedded();
        let mut r = request("us-central1", 1000, None, None);
        r.instance = Some("n1-standard-8".into());
        r.allow_ephemeral = true;
        let p = plan(&c, &r).unwrap();
        let ls = p
            .options
            .iter()
            .find(|o| o.kind == Kind::InstanceStore)
            .unwrap();
        // 1,000 GiB needs 3 x 375 = 1,125 GiB; 1,125 x $0.08 = $90.00.
        assert_eq!(ls.components[0].size_gib, 1125);
        assert_eq!(ls.monthly_cost_usd, 90.0);
        r.instance = Some("e2-standard-4".into());
        let p = plan(&c, &r).unwrap();
        assert!(p.options.iter().all(|o| o.kind != Kind::InstanceStore));
        assert!(p
            .rejected
            .iter()
            .any(|x| x.reason.contains("cannot have local SSD")));
        // n1-standard-8 allows at most 8 x 375 = 3,000 GiB.
        r.instance = Some("n1-standard-8".into());
        r.requirements.capacity_gib = 4000;
        let p = plan(&c, &r).unwrap();
        assert!(p
            .rejected
            .iter()
            .any(|x| x.reason.contains("at most 8 local SSDs")));
    }

    #[test]
    fn bad_hit_ratio_and_zero_capacity_are_errors() {
        let c = Catalog::embedded();
        let mut r = request("us-east-1", 100, None, None);
        r.hit_ratio = HitRatio::Assumed(1.5);
        assert!(matches!(plan(&c, &r), Err(PlanError::HitRatio(_))));
        let r = request("us-east-1", 0, None, None);
        assert!(matches!(plan(&c, &r), Err(PlanError::Capacity)));
    }

    #[test]
    fn effective_rate_is_the_first_side_to_saturate() {
        // 16,000 / 0.9 = 17,778; 200 / 0.1 = 2,000 -> 2,000.
        assert!((effective_rate(16000.0, 200.0, 0.9) - 2000.0).abs() < 1e-9);
        assert_eq!(effective_rate(16000.0, 200.0, 1.0), 16000.0);
        assert!((hit_ratio_needed(200.0, 16000.0) - 0.9875).abs() < 1e-12);
    }

    #[test]
    fn a_curve_picks_a_bigger_cache_when_it_pays() {
        let c = Catalog::embedded();
        let mut r = request("eu-north-1", 5120, Some(16000), Some(1000.0));
        r.allow_hybrid = true;
        // A made-up curve: 32 GiB hits 90 %, 256 GiB (5 %) or more hits 99.5 %.
        r.hit_ratio = HitRatio::Curve {
            source: "test curve".into(),
            hit_ratio_for: Box::new(|bytes| if bytes >= 256 << 30 { 0.995 } else { 0.9 }),
        };
        let p = plan(&c, &r).unwrap();
        let h = p.options.iter().find(|o| o.kind == Kind::Hybrid).unwrap();
        // 1 % = 52 GiB and 2 % = 103 GiB still hit 90 %; 5 % = 256 GiB is the first to meet.
        assert_eq!(h.components[0].size_gib, 256);
        assert_eq!(h.performance.hit_ratio, Some(0.995));
        assert_eq!(
            h.performance.hit_ratio_source.as_deref(),
            Some("test curve")
        );
    }
}
