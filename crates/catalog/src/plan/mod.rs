//! The planner: every storage option in a region that meets capacity, IOPS and throughput, cheapest
//! first. Single volumes of each type sized and provisioned by the type's rules, hybrid caches (a
//! fast volume in front of an HDD volume, the bcache-on-EBS recipe [recipe-bcache-ebs]), and
//! switching an instance to its instance-store sibling (the OpenShift instance-disk recipe
//! [recipe-ocp-instance-disk]). Savings are always against the cheapest single volume that meets
//! the same requirements.
//!
//! Performance checks use sustained (baseline) figures: a burst is reported, never relied on.
//!
//! `plan()` runs the phases, each in its own file; they share `types` and the helpers (`cost`,
//! `rank`, `explain`) and never import each other in a circle:
//!
//! - generate: `generate` (single volumes), `hybrid` (caches in front of HDD volumes),
//!   `local` (instance store, GCP local SSD);
//! - `cost`: the arithmetic (effective rate at a hit ratio, equivalents);
//! - `rank`: meets or not, savings, cheapest first, the nearest feasible option;
//! - `explain`: labels, performance lines and caveat text.

mod cost;
mod explain;
mod generate;
mod hybrid;
mod local;
mod rank;
mod types;

pub use cost::effective_rate;
pub use types::{
    Component, Equivalent, HitRatio, Kind, OptionPerformance, PlanError, PlanOption, PlanRequest,
    Rejected, Requirements, StoragePlan, DEFAULT_HIT_RATIO,
};

use crate::model::Catalog;
use types::{Candidates, Ctx};

/// Plans storage for the request.
pub fn plan(cat: &Catalog, reqst: &PlanRequest) -> Result<StoragePlan, PlanError> {
    let reg = crate::price::region(cat, &reqst.region)?;
    let req = &reqst.requirements;
    if req.capacity_gib == 0 {
        return Err(PlanError::Capacity);
    }
    if let HitRatio::Assumed(h) = reqst.hit_ratio {
        if !(0.0..=1.0).contains(&h) || h.is_nan() {
            return Err(PlanError::HitRatio(h));
        }
    }
    let ctx = Ctx {
        cat,
        region: &reg.name,
        cloud: &reg.cloud,
        request: reqst,
    };
    let mut out = Candidates::default();
    generate::volumes(&ctx, &mut out);
    let cheapest_volume = cost::cheapest(&out.options);
    if reqst.allow_hybrid {
        hybrid::hybrids(&ctx, &mut out)?;
    }
    let quoted_checks = reqst
        .instance
        .as_deref()
        .map(|i| crate::quoted::checks(cat, i))
        .unwrap_or_default();
    out.notes
        .extend(quoted_checks.iter().map(|c| c.message.clone()));
    if let Some(inst) = &reqst.instance {
        local::instance_store(&ctx, inst, &mut out)?;
    }
    if out.options.is_empty() {
        return Err(PlanError::Impossible {
            region: reg.name.clone(),
            wanted: explain::describe(req),
            blockers: out
                .rejected
                .iter()
                .map(|r| format!("{}: {}", r.label, r.reason))
                .collect(),
            nearest: rank::nearest_feasible(req, &out),
        });
    }
    rank::rank(&mut out, cheapest_volume);
    let assumed_hit_ratio = match reqst.hit_ratio {
        HitRatio::Assumed(h) if reqst.allow_hybrid => Some(h),
        _ => None,
    };
    Ok(StoragePlan {
        region: reg.name.clone(),
        requirements: req.clone(),
        assumed_hit_ratio,
        options: out.options,
        rejected: out.rejected,
        notes: out.notes,
        quoted_checks,
    })
}

#[cfg(test)]
mod tests {
    use super::cost::hit_ratio_needed;
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
