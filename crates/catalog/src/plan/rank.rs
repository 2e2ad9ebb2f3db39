//! Ranking: whether an option meets the requirements, the options cheapest first with their
//! savings against the cheapest single volume, and the nearest feasible option when none meets
//! them.

use super::explain::perf_line;
use super::types::{Candidates, Kind, OptionPerformance, PlanOption, Requirements};
use crate::fmt::{int, num, round_cents, usd};

/// Ok when the figures meet the requirements, else the first shortfall in words.
pub(super) fn meets(req: &Requirements, iops: Option<f64>, tp: Option<f64>) -> Result<(), String> {
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

/// Puts an instance-store option among the options when its capacity and its published
/// figures meet the requirements, else among the rejected with the reason. A requirement on a
/// figure the catalog lacks is not counted as met: the option is marked unverified for it (its
/// performance caveat already says which figure is missing) and ranks after the options that
/// provably meet the requirements.
pub(super) fn push_checked(
    mut opt: PlanOption,
    store_gib: u64,
    req: &Requirements,
    out: &mut Candidates,
) {
    if store_gib < req.capacity_gib {
        let reason = format!(
            "{} GiB of instance store < {} GiB required",
            int(store_gib),
            int(req.capacity_gib)
        );
        out.reject(Kind::InstanceStore, opt.label.clone(), reason, Some(opt));
        return;
    }
    let OptionPerformance {
        iops,
        throughput_mibs: tp,
        ..
    } = opt.performance;
    let mut check = req.clone();
    if iops.is_none() && req.iops.is_some() {
        check.iops = None;
        opt.unverified.push("iops".into());
    }
    if tp.is_none() && req.throughput_mibs.is_some() {
        check.throughput_mibs = None;
        opt.unverified.push("throughput".into());
    }
    match meets(&check, iops, tp) {
        Ok(()) => out.options.push(opt),
        Err(why) => out.reject(Kind::InstanceStore, opt.label.clone(), why, Some(opt)),
    }
}

/// "IOPS", "throughput": an unverified requirement as people read it.
pub fn unverified_words(unverified: &[String]) -> String {
    unverified
        .iter()
        .map(|u| if u == "iops" { "IOPS" } else { u.as_str() })
        .collect::<Vec<_>>()
        .join(" and ")
}

/// With no option meeting the requirements: the nearest feasible one in words, the one
/// closest to the weakest requirement it misses (achieved / required, capped at 1), then the
/// cheaper.
pub(super) fn nearest_feasible(req: &Requirements, out: &Candidates) -> Option<String> {
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
    out.rejected
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
        })
}

/// Savings against `cheapest_volume` on every option, and the options cheapest first.
pub(super) fn rank(out: &mut Candidates, cheapest_volume: Option<f64>) {
    for o in out.options.iter_mut() {
        o.savings_usd = cheapest_volume.map(|c| round_cents(c - o.monthly_cost_usd));
    }
    if cheapest_volume.is_none() {
        out.notes.push(
            "no single volume meets the requirements, so no savings are shown (savings are only ever against the cheapest single volume meeting the same requirements)"
                .into(),
        );
    }
    // Options that provably meet the requirements first, then those the catalog cannot check.
    out.options.sort_by(|a, b| {
        a.unverified
            .is_empty()
            .cmp(&b.unverified.is_empty())
            .reverse()
            .then(a.monthly_cost_usd.total_cmp(&b.monthly_cost_usd))
            .then_with(|| a.label.cmp(&b.label))
    });
    let unverified: Vec<String> = out
        .options
        .iter()
        .filter(|o| !o.unverified.is_empty())
        .map(|o| {
            format!(
                "{} ({} not in the catalog)",
                o.label,
                unverified_words(&o.unverified)
            )
        })
        .collect();
    if !unverified.is_empty() {
        out.notes.push(format!(
            "unverified, so ranked after the options that meet the requirements: {}",
            unverified.join("; ")
        ));
    }
}
