//! The cost-constrained question of the bcache-on-EBS recipe's paper: which cache (size, policy) in
//! front of which backing volume gives the best predicted performance within a monthly budget, and
//! the simulated hit-ratio curve `disktier plan --trace` hands to the catalog's planner.

use crate::mrc::Mrc;
use crate::policy::PolicyKind;
pub use crate::sim::simulate_one;
use crate::sim::SimConfig;
use crate::trace::Record;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A hit-ratio function of cache size for one policy, simulated from a trace. LRU answers from
/// one exact miss-ratio curve; the other policies replay the trace once per size asked and
/// remember the answer.
pub fn hit_ratio_curve(
    trace: Arc<Vec<Record>>,
    cfg: SimConfig,
    kind: PolicyKind,
) -> Result<Box<dyn Fn(u64) -> f64 + Send + Sync>, crate::TraceError> {
    if kind == PolicyKind::Lru {
        let mrc = Mrc::build(&trace, cfg.block, cfg.sample)?;
        return Ok(Box::new(move |bytes| mrc.hit_ratios(bytes).0));
    }
    let memo: Mutex<HashMap<u64, f64>> = Mutex::new(HashMap::new());
    Ok(Box::new(move |bytes| {
        let bytes = bytes.max(cfg.block);
        if let Some(&h) = memo.lock().expect("memo").get(&bytes) {
            return h;
        }
        let h = simulate_one(&trace, &cfg, kind, bytes).hit_ratio();
        memo.lock().expect("memo").insert(bytes, h);
        h
    }))
}

/// An option with its monthly price and predicted performance.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate<T> {
    pub option: T,
    pub monthly_usd: f64,
    /// Higher is better (e.g. predicted sustained IOPS for the trace's mix).
    pub score: f64,
    /// Tie-break, lower is better (e.g. predicted p99 latency).
    pub tie_break: f64,
}

/// Orders the candidates within `budget` best first (score descending, then tie-break, then
/// price); those over budget are returned apart, cheapest first.
pub fn rank_within_budget<T>(
    cands: Vec<Candidate<T>>,
    budget: f64,
) -> (Vec<Candidate<T>>, Vec<Candidate<T>>) {
    let (mut inside, mut over): (Vec<_>, Vec<_>) = cands
        .into_iter()
        .partition(|c| c.monthly_usd <= budget + 1e-9);
    inside.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.tie_break.total_cmp(&b.tie_break))
            .then(a.monthly_usd.total_cmp(&b.monthly_usd))
    });
    over.sort_by(|a, b| a.monthly_usd.total_cmp(&b.monthly_usd));
    (inside, over)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bcache::BcacheConfig;
    use crate::policy::smq::SmqConfig;
    use crate::trace::Op;

    #[test]
    fn best_within_budget_prefers_score_then_latency_then_price() {
        let c = |o: &'static str, usd: f64, score: f64, tie: f64| Candidate {
            option: o,
            monthly_usd: usd,
            score,
            tie_break: tie,
        };
        let (inside, over) = rank_within_budget(
            vec![
                c("a", 100.0, 5000.0, 0.01),
                c("b", 150.0, 9000.0, 0.02),
                c("c", 90.0, 9000.0, 0.01),
                c("d", 400.0, 1e6, 0.0),
            ],
            155.83,
        );
        let names: Vec<_> = inside.iter().map(|c| c.option).collect();
        assert_eq!(names, vec!["c", "b", "a"]);
        assert_eq!(over[0].option, "d");
    }

    #[test]
    fn curves_grow_with_size() {
        let trace: Vec<Record> = (0..20_000u64)
            .map(|i| {
                Record::new(
                    i * 1000,
                    (crate::hash::mix64(i % 3000) % 5000) * 4096,
                    4096,
                    Op::Read,
                )
            })
            .collect();
        let cfg = SimConfig {
            block: 4096,
            policies: vec![],
            sizes: vec![4096],
            sample: None,
            bcache: BcacheConfig::default(),
            smq: SmqConfig::default(),
        };
        let trace = Arc::new(trace);
        for kind in [PolicyKind::Lru, PolicyKind::Bcache] {
            let f = hit_ratio_curve(trace.clone(), cfg.clone(), kind).unwrap();
            let (small, big) = (f(1 << 20), f(64 << 20));
            assert!(big > small && big > 0.8, "{kind:?}: {small} {big}");
        }
    }
}
