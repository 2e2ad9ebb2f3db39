//! The volume performance model: from a type's rules (catalog data) and a configuration (size,
//! provisioned IOPS and throughput) to baseline and burst IOPS and MiB/s, how long a burst lasts
//! from a full bucket, and the rule that refuses a configuration the cloud would refuse.

use crate::fmt::{fine, int, num, secs};
use crate::model::{IopsRule, ProvisionedIops, SizeTier, ThroughputRule, VolumeType};
use serde::Serialize;

/// A configuration the cloud would refuse; the message names the rule and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct RuleError {
    /// A short name of the rule ("iops_per_gib", "max_iops", "size", ...).
    pub rule: &'static str,
    pub message: String,
}

fn refuse(rule: &'static str, message: String) -> RuleError {
    RuleError { rule, message }
}

/// A volume as the user asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeConfig {
    pub size_gib: u64,
    /// Provisioned IOPS, for types that take them (default: the included or minimum IOPS).
    pub iops: Option<u64>,
    /// Provisioned MiB/s, for types that take them (default: the included throughput).
    pub throughput_mibs: Option<f64>,
}

impl VolumeConfig {
    pub fn new(size_gib: u64, iops: Option<u64>, throughput_mibs: Option<f64>) -> VolumeConfig {
        VolumeConfig {
            size_gib,
            iops,
            throughput_mibs,
        }
    }
}

/// A configuration the rules accept, with defaults filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub size_gib: u64,
    /// Provisioned IOPS (none where IOPS follow size).
    pub iops: Option<u64>,
    /// Provisioned MiB/s (none where throughput follows size or IOPS).
    pub throughput_mibs: Option<f64>,
}

/// What a volume delivers.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Performance {
    /// Sustained IOPS (for st1/sc1: small random I/O, each counted as 1 MiB).
    pub baseline_iops: Option<f64>,
    pub baseline_throughput_mibs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_iops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_throughput_mibs: Option<f64>,
    /// How long the burst lasts from a full bucket, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_seconds: Option<f64>,
    /// The IOPS cap for large (1 MiB) I/O, where it differs from `baseline_iops`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_iops: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The known ones of an IOPS and a MiB/s figure, for people: ["16,000 IOPS", "1,000 MiB/s"].
pub fn rate_parts(iops: Option<f64>, mibs: Option<f64>) -> Vec<String> {
    let mut parts = vec![];
    if let Some(i) = iops {
        parts.push(format!("{} IOPS", num(i.floor())));
    }
    if let Some(t) = mibs {
        parts.push(format!("{} MiB/s", num(t)));
    }
    parts
}

/// "16,000 IOPS, 1,000 MiB/s", or that the catalog has neither figure.
pub fn rates(iops: Option<f64>, mibs: Option<f64>) -> String {
    let parts = rate_parts(iops, mibs);
    if parts.is_empty() {
        "performance not in the catalog".into()
    } else {
        parts.join(", ")
    }
}

impl Performance {
    /// One line for people: "16,000 IOPS, 1,000 MiB/s" (+ burst).
    pub fn summary(&self) -> String {
        let mut s = rates(self.baseline_iops, self.baseline_throughput_mibs);
        let burst = rate_parts(self.burst_iops, self.burst_throughput_mibs);
        if !burst.is_empty() {
            s.push_str(&format!("; burst {}", burst.join(", ")));
            if let Some(d) = self.burst_seconds {
                s.push_str(&format!(" for {} from a full bucket", secs(d)));
            }
        }
        s
    }
}

/// The smallest of the type's size tiers holding `size_gib` (none past the largest or untiered).
pub fn tier_for(vt: &VolumeType, size_gib: u64) -> Option<&SizeTier> {
    vt.size_tiers
        .as_deref()?
        .iter()
        .find(|t| t.size_gib >= size_gib)
}

/// The size of the smallest tier delivering `iops` and `mibs` (for `plan`), or why none does.
pub fn tier_size_meeting(
    vt: &VolumeType,
    iops: Option<u64>,
    mibs: Option<f64>,
) -> Result<u64, String> {
    let tiers = vt.size_tiers.as_deref().unwrap_or_default();
    tiers
        .iter()
        .find(|t| iops.is_none_or(|w| t.iops >= w) && mibs.is_none_or(|w| t.mibs() >= w - 1e-9))
        .map(|t| t.size_gib)
        .ok_or_else(|| match tiers.last() {
            Some(top) => format!(
                "{} sustains at most {} IOPS and {} MiB/s (its largest tier, {})",
                vt.name,
                int(top.iops),
                num(top.mibs()),
                top.name
            ),
            None => format!("the catalog has no size tiers for {}", vt.name),
        })
}

/// The largest tier's IOPS and MiB/s (for `plan`'s nearest configuration).
pub fn tier_max(vt: &VolumeType) -> Option<(u64, f64)> {
    vt.size_tiers.as_deref()?.last().map(|t| (t.iops, t.mibs()))
}

/// The most IOPS the type's rules allow at any size (none where the catalog has no IOPS rule).
pub fn max_iops(vt: &VolumeType) -> Option<u64> {
    match &vt.iops {
        IopsRule::Provisioned(ProvisionedIops { max, .. })
        | IopsRule::Scaled { max, .. }
        | IopsRule::Cap { max } => Some(*max),
        IopsRule::SizeTier => tier_max(vt).map(|m| m.0),
        IopsRule::Unknown => None,
    }
}

/// A scaled rule's rate for people: "240 per GiB", or "6,000 + 30 per GiB" with a base.
fn scaled_rate(base: f64, per_gib: f64) -> String {
    if base > 0.0 {
        format!("{} + {} per GiB", num(base), num(per_gib))
    } else {
        format!("{} per GiB", num(per_gib))
    }
}

/// The smallest size of `vt` (at least its minimum, in its units) whose scaled IOPS reach
/// `asked`, if one up to its maximum size does.
fn scaled_size_for(vt: &VolumeType, per_gib: f64, base: f64, asked: u64) -> Option<u64> {
    let mut need = ((asked as f64 - base) / per_gib).ceil().max(0.0) as u64;
    need = need.max(vt.min_gib);
    if let Some(unit) = vt.unit_gib {
        need = need.div_ceil(unit).saturating_mul(unit);
    }
    (need <= vt.max_gib).then_some(need)
}

/// Why `asked` provisioned IOPS are refused on `vt` (whose IOPS follow `rule`) at `size`, with
/// the size that gives them. Rule `iops_follow_size` when the size already delivers them (leave
/// `--iops` out), else `iops_not_provisioned` (`price` adds the types that take provisioned IOPS).
fn not_provisioned(vt: &VolumeType, rule: &IopsRule, size: u64, asked: u64) -> RuleError {
    let t = &vt.name;
    let already = |at: f64| {
        refuse(
            "iops_follow_size",
            format!(
                "{t} does not take provisioned IOPS: {} GiB already delivers {} IOPS, which is at least the {} asked: leave --iops out",
                int(size),
                num(at.floor()),
                int(asked)
            ),
        )
    };
    let how = match rule {
        IopsRule::Scaled {
            per_gib, base, max, ..
        } => {
            let at = rule.scaled_at(size as f64).unwrap_or_default();
            if at + 1e-9 >= asked as f64 {
                return already(at);
            }
            let rate = scaled_rate(*base, *per_gib);
            match scaled_size_for(vt, *per_gib, *base, asked).filter(|_| asked <= *max) {
                Some(need) => format!(
                    "its IOPS follow size ({rate}): for {} IOPS use at least {} GiB{}",
                    int(asked),
                    int(need),
                    vt.unit_gib
                        .filter(|u| *u > 1)
                        .map(|u| format!(" ({} x {} GiB)", int(need / u), int(u)))
                        .unwrap_or_default()
                ),
                None => {
                    // The most the rule gives, and the smallest size that gives it.
                    let top = (base + per_gib * vt.max_gib as f64).min(*max as f64);
                    let from = scaled_size_for(vt, *per_gib, *base, top.floor() as u64)
                        .unwrap_or(vt.max_gib);
                    format!(
                        "its IOPS follow size ({rate}) and reach at most {} IOPS (from {} GiB): {} cannot be had",
                        num(top.floor()),
                        int(from),
                        int(asked)
                    )
                }
            }
        }
        IopsRule::Cap { max } => format!(
            "it delivers at most {} IOPS, set by size and throughput",
            int(*max)
        ),
        IopsRule::SizeTier => {
            if let Some(tier) = tier_for(vt, size).filter(|x| x.iops >= asked) {
                return already(tier.iops as f64);
            }
            format!(
                "its IOPS follow the size tier: for {} IOPS use at least {} GiB",
                int(asked),
                tier_size_meeting(vt, Some(asked), None).map_or_else(|e| e, |g| int(g).to_string())
            )
        }
        _ => "the catalog has no IOPS rule for it".to_string(),
    };
    refuse(
        "iops_not_provisioned",
        format!("{t} does not take provisioned IOPS: {how}"),
    )
}

/// Checks a configuration against the type's rules and fills in defaults.
pub fn resolve(vt: &VolumeType, cfg: &VolumeConfig) -> Result<Resolved, RuleError> {
    let t = &vt.name;
    let size = cfg.size_gib;
    if size < vt.min_gib || size > vt.max_gib {
        return Err(refuse(
            "size",
            format!(
                "{t} volumes are {} to {} GiB: {} GiB is out of range",
                int(vt.min_gib),
                int(vt.max_gib),
                int(size)
            ),
        ));
    }
    if let Some(unit) = vt.unit_gib {
        if !size.is_multiple_of(unit) {
            return Err(refuse(
                "unit",
                format!(
                    "{t} comes in units of {unit} GiB: use {} GiB",
                    int(size.div_ceil(unit) * unit)
                ),
            ));
        }
    }
    if vt.is_tiered() && tier_for(vt, size).is_none() {
        return Err(refuse(
            "size_tier",
            format!(
                "{t} has no size tier holding {} GiB: the catalog's tiers stop at {} GiB",
                int(size),
                int(vt
                    .size_tiers
                    .as_deref()
                    .and_then(|x| x.last())
                    .map_or(0, |x| x.size_gib))
            ),
        ));
    }
    let iops = match &vt.iops {
        IopsRule::Provisioned(rule) => {
            let iops = cfg.iops.unwrap_or(rule.included.max(rule.min));
            if iops < rule.min || iops > rule.max {
                return Err(refuse(
                    "iops_range",
                    format!(
                        "{t} allows {} to {} provisioned IOPS: {} is out of range",
                        int(rule.min),
                        int(rule.max),
                        int(iops)
                    ),
                ));
            }
            if let Some(per) = rule.max_per_gib {
                // The included IOPS come at every size (AWS gp3 and Azure Premium SSD v2: a 1 GiB
                // volume has 3,000, docs/sources.md [aws-ebs-types], [azure-disk-types]); the
                // per-GiB ratio bounds only what is provisioned above them.
                let allowed = ((per * size as f64).floor() as u64).max(rule.included);
                if iops > allowed {
                    let need = (iops as f64 / per).ceil() as u64;
                    return Err(refuse(
                        "iops_per_gib",
                        format!(
                            "{t} allows at most {} IOPS per GiB: {} GiB allows {}; use at least {} GiB",
                            num(per),
                            int(size),
                            int(allowed),
                            int(need)
                        ),
                    ));
                }
            }
            Some(iops)
        }
        other => {
            if let Some(asked) = cfg.iops {
                return Err(not_provisioned(vt, other, size, asked));
            }
            None
        }
    };
    let throughput = match &vt.throughput {
        ThroughputRule::Provisioned(rule) => {
            let mut tp = cfg.throughput_mibs.unwrap_or(rule.included_mibs);
            if tp < rule.min_mibs || tp > rule.max_mibs {
                return Err(refuse(
                    "throughput_range",
                    format!(
                        "{t} allows {} to {} MiB/s: {} MiB/s is out of range",
                        num(rule.min_mibs),
                        num(rule.max_mibs),
                        num(tp)
                    ),
                ));
            }
            if let Some(step) = rule.step_mibs {
                let k = tp / step;
                // A figure shown to two decimals (as the suggestion below is, and plan's
                // options) names the step it rounds: Azure's 315 MB/s is 300.40740966796875
                // MiB/s, which no one types (QA: "use 300.41 MiB/s" was refused in turn).
                if (k - k.round()).abs() * step > STEP_SHOWN + 1e-12 {
                    return Err(refuse(
                        "throughput_step",
                        format!(
                            "{t} throughput is provisioned in whole steps of {} MiB/s{}: {} MiB/s is not one; use {} MiB/s",
                            fine(step),
                            mb_per_s(step).map(|mb| format!(" ({mb} MB/s, 10^6 bytes)")).unwrap_or_default(),
                            num(tp),
                            num(k.ceil() * step).replace(',', "")
                        ),
                    ));
                }
                tp = k.round() * step;
            }
            if let (Some(per), Some(i)) = (rule.max_mibs_per_iops, iops) {
                let allowed = per * i as f64;
                if tp > allowed + 1e-9 {
                    let need = (tp / per).ceil() as u64;
                    return Err(refuse(
                        "throughput_per_iops",
                        format!(
                            "{t} allows at most {} MiB/s per provisioned IOPS: {} IOPS allow {} MiB/s; provision at least {} IOPS",
                            fine(per),
                            int(i),
                            num(allowed),
                            int(need)
                        ),
                    ));
                }
            }
            Some(tp)
        }
        _ => {
            if let Some(asked) = cfg.throughput_mibs {
                return Err(refuse(
                    "throughput_not_provisioned",
                    format!(
                        "{t} does not take provisioned throughput ({} MiB/s asked): its throughput follows {}",
                        num(asked),
                        match vt.throughput {
                            ThroughputRule::PerIops { .. } => "provisioned IOPS",
                            ThroughputRule::Unknown => "rules the catalog does not have",
                            _ => "size",
                        }
                    ),
                ));
            }
            None
        }
    };
    Ok(Resolved {
        size_gib: size,
        iops,
        throughput_mibs: throughput,
    })
}

/// How far (MiB/s) a provisioned throughput may be from a whole step and still name it: half
/// the last of the two decimals figures are shown with.
const STEP_SHOWN: f64 = 0.005;

/// `step` MiB/s in whole MB/s (10^6 bytes) when it is one: Azure provisions MB/s.
fn mb_per_s(step: f64) -> Option<u64> {
    let mb = step * (1u64 << 20) as f64 / 1e6;
    ((mb - mb.round()).abs() < 1e-9 && mb >= 1.0).then(|| mb.round() as u64)
}

/// What a resolved configuration delivers.
pub fn performance(vt: &VolumeType, r: &Resolved) -> Performance {
    let size = r.size_gib as f64;
    let mut p = Performance::default();

    // Throughput first: st1/sc1's small-I/O IOPS follow from it.
    match &vt.throughput {
        ThroughputRule::Provisioned(_) => p.baseline_throughput_mibs = r.throughput_mibs,
        ThroughputRule::Scaled {
            per_gib,
            base,
            max_mibs,
        } => p.baseline_throughput_mibs = Some((base + per_gib * size).min(*max_mibs)),
        ThroughputRule::Tiers { tiers } => {
            if let Some(tier) = tiers.iter().rev().find(|t| r.size_gib >= t.from_gib) {
                p.baseline_throughput_mibs = Some(tier.mibs);
                p.burst_throughput_mibs = tier.burst_mibs;
            }
        }
        ThroughputRule::PerIops {
            mibs_per_iops,
            max_mibs,
            plateau,
            ..
        } => {
            p.baseline_throughput_mibs = r.iops.map(|i| {
                let i = i as f64;
                let at = (i * mibs_per_iops).min(*max_mibs);
                plateau.as_ref().map_or(at, |x| at.min(x.bound(i)))
            })
        }
        ThroughputRule::PerTib(rule) => {
            let tib = size / 1024.0;
            let base = (rule.baseline_per_tib * tib).min(rule.max_mibs);
            let burst = (rule.burst_per_tib * tib).min(rule.max_mibs);
            p.baseline_throughput_mibs = Some(base);
            if burst > base {
                p.burst_throughput_mibs = Some(burst);
                // A full bucket holds `rule.bucket_mib_per_tib` per TiB and drains at burst - baseline.
                p.burst_seconds = Some(rule.bucket_mib_per_tib * tib / (burst - base));
            }
        }
        ThroughputRule::SizeTier => {
            p.baseline_throughput_mibs = tier_for(vt, r.size_gib).map(SizeTier::mibs)
        }
        ThroughputRule::Unknown => {}
    }

    match &vt.iops {
        IopsRule::Provisioned(_) => p.baseline_iops = r.iops.map(|i| i as f64),
        rule @ IopsRule::Scaled { .. } => {
            let b = rule.scaled_at(size).unwrap_or_default();
            p.baseline_iops = Some(b);
            if let Some(burst) = &vt.burst {
                let bi = burst.burst_iops as f64;
                if b < bi {
                    p.burst_iops = Some(bi);
                    // gp2: the bucket fills at the baseline rate while bursting, so it drains at
                    // burst - baseline (EBS user guide: 5.4M credits last 30 min at 3,000 IOPS).
                    p.burst_seconds = Some(burst.bucket_credits / (bi - b));
                }
            }
        }
        IopsRule::Cap { max } => {
            let cap = *max as f64;
            match (vt.io_accounting_kib, p.baseline_throughput_mibs) {
                (Some(kib), Some(tp)) => {
                    let io_mib = kib as f64 / 1024.0;
                    p.baseline_iops = Some((tp / io_mib).min(cap));
                    p.burst_iops = p.burst_throughput_mibs.map(|b| (b / io_mib).min(cap));
                    p.max_iops = Some(cap);
                    p.notes.push(format!(
                        "each I/O up to {} KiB counts as {} KiB: small random I/O runs at throughput / {} KiB, at most {} IOPS",
                        int(kib),
                        int(kib),
                        int(kib),
                        int(*max)
                    ));
                }
                _ => p.baseline_iops = Some(cap),
            }
        }
        IopsRule::SizeTier => p.baseline_iops = tier_for(vt, r.size_gib).map(|t| t.iops as f64),
        IopsRule::Unknown => {}
    }
    // Throughput is at most IOPS x the largest I/O counted as one: gp2's sustained MiB/s follow
    // its baseline IOPS below its size tier's limit, which a burst reaches (AWS: 170 GiB = 510
    // IOPS x 256 KiB = 128 MiB/s, 334 GiB = 1,002 IOPS: 250, [aws-ebs-types]).
    if let (Some(kib), Some(limit), Some(i)) =
        (vt.max_io_kib, p.baseline_throughput_mibs, p.baseline_iops)
    {
        let io_mib = kib as f64 / 1024.0;
        let limit = p.burst_throughput_mibs.map_or(limit, |b| b.max(limit));
        let base = limit.min(i * io_mib);
        p.baseline_throughput_mibs = Some(base);
        p.burst_throughput_mibs = p
            .burst_iops
            .map(|b| limit.min(b * io_mib))
            .filter(|b| *b > base);
    }
    if vt.is_tiered() {
        if let Some(tier) = tier_for(vt, r.size_gib) {
            p.notes.push(format!(
                "{} GiB performs and is billed as {} ({} GiB: {} IOPS, {} MB/s)",
                int(r.size_gib),
                tier.name,
                int(tier.size_gib),
                int(tier.iops),
                num(tier.mbps)
            ));
        }
    }
    if vt.weak {
        p.notes
            .push(format!("{} rules are weak: {}", vt.name, vt.source));
    }
    p
}

#[cfg(test)]
mod tests;
