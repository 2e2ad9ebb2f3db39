//! Plan: a storage plan kept within a monthly budget, and the hit-ratio curve a trace gives the planner.

use super::price::{mibs, whole_gib};
use disktier_catalog::fmt::usd;
use disktier_catalog::plan::{Rejected, StoragePlan};
use disktier_catalog::{Catalog, HitRatio, PlanRequest, Requirements, DEFAULT_HIT_RATIO};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the user asked `plan` for, as plain values (unchecked).
#[derive(Debug, Clone)]
pub struct Options {
    /// The region to price in.
    pub region: String,
    /// Capacity in bytes; rounded up to whole GiB.
    pub capacity: u64,
    /// Sustained IOPS needed.
    pub iops: Option<u64>,
    /// Sustained throughput needed, bytes per second.
    pub throughput: Option<u64>,
    /// Weigh hybrid cache + HDD options.
    pub allow_hybrid: bool,
    /// The hit ratio assumed for hybrids (default [`DEFAULT_HIT_RATIO`]).
    pub hit_ratio: Option<f64>,
    /// A trace whose simulated hit-ratio curve the hybrids use (implies `allow_hybrid`).
    pub trace: Option<PathBuf>,
    /// The cache policy simulated with `trace`.
    pub trace_policy: String,
    /// The cache block size simulated with `trace`.
    pub trace_block: u64,
    /// Monthly budget in USD.
    pub budget: Option<f64>,
    /// The instance whose instance-store sibling to weigh.
    pub instance: Option<String>,
    /// Weigh instance store / local SSD.
    pub allow_ephemeral: bool,
}

/// The plan `o` asks for from `cat`: the options checked in order (the first wrong one is
/// named), the capacity rounded up to whole GiB, the hybrids' hit ratio assumed or simulated
/// from the trace (`note` receives the simulator's warnings), then kept within the budget.
pub fn plan(cat: &Catalog, o: &Options, note: &dyn Fn(&str)) -> anyhow::Result<StoragePlan> {
    let req = request(o, |path| {
        simulated_curve(path, &o.trace_policy, o.trace_block, note)
    })?;
    let mut p = disktier_catalog::plan::plan(cat, &req)?;
    if let Some(b) = o.budget {
        within_budget(&mut p, b)?;
    }
    Ok(p)
}

/// The planner's request for `o`; `curve` simulates the trace's hit ratios.
fn request(
    o: &Options,
    curve: impl FnOnce(&Path) -> anyhow::Result<HitRatio>,
) -> anyhow::Result<PlanRequest> {
    if o.allow_ephemeral && o.instance.is_none() {
        anyhow::bail!("--allow-ephemeral needs --instance TYPE (the instance whose instance-store sibling to weigh)");
    }
    if o.iops == Some(0) {
        anyhow::bail!("--iops 0: leave --iops out when IOPS do not matter");
    }
    if o.throughput == Some(0) {
        anyhow::bail!("--throughput 0: leave --throughput out when throughput does not matter");
    }
    if o.hit_ratio.is_some() && !o.allow_hybrid {
        anyhow::bail!(
            "--hit-ratio is the hit ratio of hybrid caches, which only --allow-hybrid weighs: add --allow-hybrid, or leave --hit-ratio out"
        );
    }
    // Rounded up in GiB, not back into bytes: a capacity within 1 GiB of 2^64 bytes wrapped
    // to 0 there, and was refused as "--capacity must be at least 1GiB" (QA:
    // `--capacity 18446744073709551615B`, `--capacity 15.99999999999999999EiB`).
    let capacity_gib = match o.capacity.div_ceil(1 << 30) {
        0 => whole_gib(0, "--capacity")?,
        gib => gib,
    };
    let hit_ratio = match &o.trace {
        None => HitRatio::Assumed(o.hit_ratio.unwrap_or(DEFAULT_HIT_RATIO)),
        Some(path) => curve(path)?,
    };
    Ok(PlanRequest {
        region: o.region.clone(),
        requirements: Requirements {
            capacity_gib,
            iops: o.iops,
            throughput_mibs: o.throughput.map(mibs),
        },
        allow_hybrid: o.allow_hybrid || o.trace.is_some(),
        instance: o.instance.clone(),
        allow_ephemeral: o.allow_ephemeral,
        hit_ratio,
    })
}

/// The hit-ratio curve of a trace, from the cache simulator (crates/cachesim): the planner asks
/// it for each cache size it weighs. The ratio is the share of requests served without the
/// backing volume (`disktier_cachesim::budget::hit_ratio_curve`), which `simulate` charges the
/// backing volume the rest of, so the two agree; bcache and lvmcache run in their default
/// writethrough mode, which the source says. `note` receives a warning for the user (a trace
/// without its trailer).
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
    cfg.check().map_err(|e| in_plans_words(e, block))?;
    let (_, trace, truncated) = disktier_cachesim::trace::load(path)
        // The loader's errors name the file.
        .map_err(|e| anyhow::anyhow!("cannot read the trace: {e}"))?;
    if trace.is_empty() {
        anyhow::bail!(
            "the trace {} has no requests: record or import one first (disktier trace)",
            path.display()
        );
    }
    // As `simulate` refuses it: a hit ratio of 0 would be planned from nothing (QA).
    if !trace.iter().any(|r| r.op.is_data() && r.len > 0) {
        anyhow::bail!(
            "the trace {} has no data accesses: its {} requests move no data (syncs, discards, or reads and writes of 0 bytes), which no cache serves, so it gives no hit ratio: plan without --trace (--hit-ratio) or with a trace of the workload's reads and writes",
            path.display(),
            trace.len()
        );
    }
    if truncated {
        note(&format!(
            "warning: {} has no trailer; planning with the records before the cut",
            path.display()
        ));
    }
    let mode = match kind {
        PolicyKind::Bcache => format!(" ({})", cfg.bcache.mode.name()),
        PolicyKind::Lvmcache => format!(" ({})", cfg.smq.mode.name()),
        _ => String::new(),
    };
    Ok(HitRatio::Curve {
        source: format!("simulated: {}{mode} on {}", kind.name(), path.display()),
        hit_ratio_for: disktier_cachesim::budget::hit_ratio_curve(Arc::new(trace), cfg, kind)?,
    })
}

/// A simulation setting refused in `simulate`'s words (`--block`, `--lvm-chunk`) put in plan's:
/// its block is `--trace-block`, and it has no `--lvm-chunk` but simulates lvmcache with lvm's
/// cache-smq chunk (QA: `plan --trace-block 3` said "invalid --block", and `--trace-policy
/// lvmcache --trace-block 128KiB` "invalid --lvm-chunk", options plan does not take).
fn in_plans_words(e: disktier_cachesim::TraceError, block: u64) -> anyhow::Error {
    use disktier_cachesim::TraceError::Invalid;
    let chunk = disktier_cachesim::policy::smq::SmqConfig::default().chunk_size;
    match e {
        Invalid { what: "--block", why } => anyhow::anyhow!("invalid --trace-block: {why}"),
        Invalid {
            what: "--lvm-chunk",
            ..
        } => anyhow::anyhow!(
            "invalid --trace-block: {block} bytes is larger than the chunk plan simulates lvmcache with ({} bytes, lvm's cache-smq profile), which must hold whole blocks: use --trace-block {}KiB or smaller with --trace-policy lvmcache",
            chunk,
            chunk >> 10
        ),
        e => e.into(),
    }
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

    fn options() -> Options {
        Options {
            region: "us-east-1".into(),
            capacity: 1,
            iops: None,
            throughput: None,
            allow_hybrid: false,
            hit_ratio: None,
            trace: None,
            trace_policy: "lru".into(),
            trace_block: 4096,
            budget: None,
            instance: None,
            allow_ephemeral: false,
        }
    }

    fn no_trace(_: &Path) -> anyhow::Result<HitRatio> {
        panic!("no trace to simulate")
    }

    #[test]
    fn capacity_rounds_up_to_whole_gib_and_the_hit_ratio_defaults() {
        let r = request(&options(), no_trace).unwrap();
        assert_eq!(r.requirements.capacity_gib, 1);
        assert!(!r.allow_hybrid);
        assert!(matches!(r.hit_ratio, HitRatio::Assumed(h) if h == DEFAULT_HIT_RATIO));
        let o = Options {
            capacity: (5 << 30) + 1,
            throughput: Some(3 << 20),
            allow_hybrid: true,
            hit_ratio: Some(0.5),
            ..options()
        };
        let r = request(&o, no_trace).unwrap();
        assert_eq!(r.requirements.capacity_gib, 6);
        assert_eq!(r.requirements.throughput_mibs, Some(3.0));
        assert!(r.allow_hybrid);
        assert!(matches!(r.hit_ratio, HitRatio::Assumed(h) if h == 0.5));
        assert_eq!(
            request(
                &Options {
                    capacity: 0,
                    ..options()
                },
                no_trace
            )
            .unwrap_err()
            .to_string(),
            "--capacity must be at least 1GiB"
        );
    }

    /// A capacity within 1 GiB of 2^64 bytes is 2^34 GiB, not 0 (QA: it was rounded up in
    /// bytes, which wrapped, and refused as "--capacity must be at least 1GiB").
    #[test]
    fn the_largest_capacity_is_not_wrapped_to_zero() {
        for bytes in [u64::MAX, u64::MAX - (1 << 29)] {
            let o = Options {
                capacity: bytes,
                ..options()
            };
            let r = request(&o, no_trace).unwrap();
            assert_eq!(r.requirements.capacity_gib, 1 << 34, "{bytes}");
        }
    }

    #[test]
    fn a_trace_switches_hybrids_on_with_its_simulated_curve() {
        let o = Options {
            trace: Some("t.dttrace".into()),
            ..options()
        };
        let r = request(&o, |p| {
            assert_eq!(p, Path::new("t.dttrace"));
            Ok(HitRatio::Assumed(0.25))
        })
        .unwrap();
        assert!(r.allow_hybrid);
        assert!(matches!(r.hit_ratio, HitRatio::Assumed(h) if h == 0.25));
    }

    #[test]
    fn options_are_checked_in_order() {
        let all_wrong = Options {
            allow_ephemeral: true,
            iops: Some(0),
            throughput: Some(0),
            hit_ratio: Some(0.5),
            capacity: 0,
            ..options()
        };
        let first = |o: &Options| request(o, no_trace).unwrap_err().to_string();
        assert!(first(&all_wrong).starts_with("--allow-ephemeral needs --instance TYPE"));
        let o = Options {
            allow_ephemeral: false,
            ..all_wrong
        };
        assert!(first(&o).starts_with("--iops 0:"));
        let o = Options { iops: None, ..o };
        assert!(first(&o).starts_with("--throughput 0:"));
        let o = Options {
            throughput: None,
            ..o
        };
        assert!(first(&o).starts_with("--hit-ratio is the hit ratio of hybrid caches"));
        let o = Options {
            hit_ratio: None,
            ..o
        };
        assert_eq!(first(&o), "--capacity must be at least 1GiB");
    }

    /// Regression (QA): `plan --trace-block 3` was refused as "invalid --block: ...", and
    /// `--trace-policy lvmcache --trace-block 128KiB` as "invalid --lvm-chunk: 65536 is not a
    /// multiple of --block 131072": options plan does not have. (Checked before the trace is
    /// read, so the path need not exist.)
    #[test]
    fn trace_settings_are_refused_in_plans_own_words() {
        let t = Path::new("/nonexistent/t.dtt");
        let e = simulated_curve(t, "lru", 3, &|_| {}).err().unwrap();
        assert_eq!(
            e.to_string(),
            "invalid --trace-block: 3 is not a power of two of at least 512 bytes; try 4KiB"
        );
        let e = simulated_curve(t, "lvmcache", 128 << 10, &|_| {})
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("invalid --trace-block: 131072 bytes is larger than the chunk plan simulates lvmcache with (65536 bytes")
                && e.ends_with("use --trace-block 64KiB or smaller with --trace-policy lvmcache"),
            "{e}"
        );
        // A block-level policy takes it (the trace is then read).
        let e = simulated_curve(t, "lru", 128 << 10, &|_| {}).err().unwrap();
        assert!(e.to_string().starts_with("cannot read the trace"), "{e}");
    }

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
