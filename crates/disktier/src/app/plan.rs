//! Plan: a storage plan kept within a monthly budget, and the hit-ratio curve a trace gives the planner.

use disktier_catalog::fmt::usd;
use disktier_catalog::plan::{Rejected, StoragePlan};
use disktier_catalog::HitRatio;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The hit-ratio curve of a trace, from the cache simulator (crates/cachesim): the planner asks
/// it for each cache size it weighs. `note` receives a warning for the user (a trace without
/// its trailer).
pub fn simulated_curve(
    path: &Path,
    policy: &str,
    block: u64,
    note: &dyn Fn(&str),
) -> anyhow::Result<HitRatio> {
    use disktier_cachesim::policy::{bcache::BcacheConfig, smq::SmqConfig, PolicyKind};
    let kind = PolicyKind::from_name(policy)?;
    let cfg = disktier_cachesim::sim::SimConfig {
        block,
        policies: vec![kind],
        sizes: vec![block],
        sample: None,
        bcache: BcacheConfig::default(),
        smq: SmqConfig::default(),
    };
    cfg.check()?;
    let (_, trace, truncated) = disktier_cachesim::trace::load(path)
        // The loader's errors name the file.
        .map_err(|e| anyhow::anyhow!("cannot read the trace: {e}"))?;
    if trace.is_empty() {
        anyhow::bail!(
            "the trace {} has no requests: record or import one first (disktier trace)",
            path.display()
        );
    }
    if truncated {
        note(&format!(
            "warning: {} has no trailer; planning with the records before the cut",
            path.display()
        ));
    }
    Ok(HitRatio::Curve {
        source: format!("simulated: {} on {}", kind.name(), path.display()),
        hit_ratio_for: disktier_cachesim::budget::hit_ratio_curve(Arc::new(trace), cfg, kind)?,
    })
}

/// `--budget USD` (added by the trace/simulate area): keeps the options whose monthly cost is
/// within the budget, best predicted performance first — sustained IOPS, then MiB/s, then the lower
/// price — and lists the rest as over budget. The cost-constrained question of the bcache-on-EBS
/// recipe's paper; ranking in `disktier_cachesim::budget::rank_within_budget`. The rejected
/// options, the planner's and the budget's, are then ranked cheapest first
/// ([`sort_rejected_by_cost`]).
pub fn within_budget(p: &mut StoragePlan, budget: f64) -> anyhow::Result<()> {
    use disktier_cachesim::budget::{rank_within_budget, Candidate};
    if !(budget.is_finite() && budget > 0.0) {
        anyhow::bail!(
            "--budget {budget}: give a positive monthly amount in USD, e.g. --budget 200"
        );
    }
    // The options' costs, for the ones the budget moves to the rejected.
    let costs: HashMap<String, f64> = p
        .options
        .iter()
        .map(|o| (o.label.clone(), o.monthly_cost_usd))
        .collect();
    let cands = p
        .options
        .drain(..)
        .map(|o| Candidate {
            monthly_usd: o.monthly_cost_usd,
            score: o.performance.iops.unwrap_or(0.0),
            tie_break: -o.performance.throughput_mibs.unwrap_or(0.0),
            option: o,
        })
        .collect();
    let (inside, over) = rank_within_budget(cands, budget);
    if inside.is_empty() {
        let cheapest = over
            .first()
            .map(|c| {
                format!(
                    "; the cheapest is {} at {}/month",
                    c.option.label,
                    usd(c.monthly_usd)
                )
            })
            .unwrap_or_default();
        anyhow::bail!(
            "no option meets the requirements within {}/month{cheapest}: raise --budget",
            usd(budget)
        );
    }
    p.options = inside.into_iter().map(|c| c.option).collect();
    for c in over {
        p.rejected.push(disktier_catalog::plan::Rejected {
            kind: c.option.kind,
            label: c.option.label.clone(),
            reason: format!(
                "over the budget: {}/month > {}/month",
                usd(c.monthly_usd),
                usd(budget)
            ),
            nearest: None,
        });
    }
    p.notes.push(format!(
        "--budget {}/month: the options within it, best predicted performance (sustained IOPS, then MiB/s) first",
        usd(budget)
    ));
    sort_rejected_by_cost(&mut p.rejected, &costs);
    Ok(())
}

/// The rejected options cheapest first: an option over the budget at its cost (`costs`, by
/// label), another at its own or its nearest configuration's cost; those without a cost (a type
/// whose rules cannot be met at all) last, in the planner's order.
fn sort_rejected_by_cost(rejected: &mut [Rejected], costs: &HashMap<String, f64>) {
    let cost = |r: &Rejected| {
        costs
            .get(&r.label)
            .copied()
            .or(r.nearest.as_ref().map(|n| n.monthly_cost_usd))
    };
    rejected.sort_by(|a, b| match (cost(a), cost(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_catalog::plan::{Kind, OptionPerformance, PlanOption};

    fn rejected(label: &str, nearest_cost: Option<f64>) -> Rejected {
        Rejected {
            kind: Kind::Volume,
            label: label.into(),
            reason: "too slow".into(),
            nearest: nearest_cost.map(|c| {
                Box::new(PlanOption {
                    kind: Kind::Volume,
                    label: format!("{label} bigger"),
                    monthly_cost_usd: c,
                    components: Vec::new(),
                    performance: OptionPerformance::default(),
                    caveats: Vec::new(),
                    savings_usd: None,
                    exact_monthly_cost_usd: None,
                    equivalent: None,
                    weak: false,
                    unverified: Vec::new(),
                })
            }),
        }
    }

    #[test]
    fn rejected_options_rank_cheapest_first_and_costless_last_in_order() {
        let mut r = vec![
            rejected("no rule a", None),
            rejected("nearest 50", Some(50.0)),
            rejected("over budget 300", None),
            rejected("no rule b", None),
            rejected("nearest 20", Some(20.0)),
            rejected("over budget 30, nearest 10", Some(10.0)),
        ];
        let costs = HashMap::from([
            ("over budget 300".to_string(), 300.0),
            ("over budget 30, nearest 10".to_string(), 30.0),
        ]);
        sort_rejected_by_cost(&mut r, &costs);
        let labels: Vec<&str> = r.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "nearest 20",
                "over budget 30, nearest 10",
                "nearest 50",
                "over budget 300",
                "no rule a",
                "no rule b"
            ]
        );
    }
}
