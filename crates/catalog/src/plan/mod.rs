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
mod dated;
mod explain;
mod generate;
mod hybrid;
mod local;
mod rank;
mod types;

pub use cost::effective_rate;
pub use rank::unverified_words;
pub use types::{
    Component, Equivalent, HitRatio, Kind, OptionPerformance, PlanError, PlanOption, PlanRequest,
    PricesRecorded, Rejected, Requirements, StoragePlan, DEFAULT_HIT_RATIO, HIT_RATIO_MEANS,
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
    let asked = crate::VolumeConfig {
        size_gib: req.capacity_gib,
        iops: req.iops,
        throughput_mibs: req.throughput_mibs,
    };
    let quoted_volume_checks = crate::quoted::volume::about_plan(cat, &reg.name, &asked);
    out.notes
        .extend(quoted_volume_checks.iter().map(|c| c.message.clone()));
    if let Some(inst) = &reqst.instance {
        local::instance_store(&ctx, inst, &mut out)?;
    }
    if out.options.is_empty() {
        // With nothing weighed at all (a region without prices), the notes say why (QA: "no
        // option in ca-central-1 meets 100 GiB: " ended there).
        let mut blockers: Vec<String> = out
            .rejected
            .iter()
            .map(|r| format!("{}: {}", r.label, r.reason))
            .collect();
        if blockers.is_empty() {
            blockers = out.notes.clone();
        }
        return Err(PlanError::Impossible {
            region: reg.name.clone(),
            wanted: explain::describe(req),
            blockers,
            nearest: rank::nearest_feasible(req, &out),
        });
    }
    rank::rank(&mut out, cheapest_volume);
    let assumed_hit_ratio = match reqst.hit_ratio {
        HitRatio::Assumed(h) if reqst.allow_hybrid => Some(h),
        _ => None,
    };
    let prices_recorded =
        dated::prices_recorded(cat, &reg.name, reqst.instance.as_deref(), &out.options);
    Ok(StoragePlan {
        prices_recorded,
        region: reg.name.clone(),
        requirements: req.clone(),
        assumed_hit_ratio,
        options: out.options,
        rejected: out.rejected,
        notes: out.notes,
        quoted_checks,
        quoted_volume_checks,
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

    /// A request for `cap` GiB (and `iops`) in `region` that may use `instance`'s local disks.
    fn with_store(region: &str, cap: u64, iops: Option<u64>, instance: &str) -> PlanRequest {
        PlanRequest {
            instance: Some(instance.into()),
            allow_ephemeral: true,
            ..request(region, cap, iops, None)
        }
    }

    /// The plan's instance-store option.
    fn store_option(p: &StoragePlan) -> &PlanOption {
        p.options
            .iter()
            .find(|o| o.kind == Kind::InstanceStore)
            .unwrap()
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
    fn gp2_is_not_grown_for_iops_its_100_iops_floor_delivers() {
        // gp2 volumes of 33 GiB and less get 100 IOPS ([aws-ebs-types]): 1 GiB meets 100 IOPS
        // for $0.10. It was grown to 100 / 3 = 34 GiB ($3.40), and to 17 GiB for 50 IOPS.
        let c = Catalog::embedded();
        for (iops, size) in [(50, 1), (100, 1), (101, 34), (300, 100)] {
            let p = plan(&c, &request("us-east-1", 1, Some(iops), None)).unwrap();
            let gp2 = p
                .options
                .iter()
                .find(|o| o.label.starts_with("gp2"))
                .unwrap();
            assert_eq!(gp2.components[0].size_gib, size, "{iops} IOPS");
        }
    }

    #[test]
    fn gp2_is_grown_until_its_baseline_iops_carry_the_throughput() {
        // gp2 sustains baseline IOPS x 256 KiB below its 128 / 250 MiB/s limits
        // ([aws-ebs-types]): 128 MiB/s needs 512 IOPS, 171 GiB; 200 MiB/s, 267 GiB; 250, 334 GiB.
        // 100 GiB was offered as sustaining 128 MiB/s (it sustains 75).
        let c = Catalog::embedded();
        for (mibs, size) in [
            (20.0, 100),
            (75.0, 100),
            (128.0, 171),
            (200.0, 267),
            (250.0, 334),
        ] {
            let p = plan(&c, &request("us-east-1", 100, None, Some(mibs))).unwrap();
            let gp2 = p
                .options
                .iter()
                .find(|o| o.label.starts_with("gp2"))
                .unwrap();
            assert_eq!(gp2.components[0].size_gib, size, "{mibs} MiB/s");
            assert!(
                gp2.performance.throughput_mibs.unwrap() >= mibs,
                "{mibs} MiB/s"
            );
        }
    }

    #[test]
    fn gp3_throughput_is_planned_in_whole_mibs() {
        // 130.3 MiB/s asked: gp3 provisions 131 (the EC2 API takes whole MiB/s); 6 x $0.04.
        let c = Catalog::embedded();
        let p = plan(&c, &request("us-east-1", 10, None, Some(130.3))).unwrap();
        let gp3 = p
            .options
            .iter()
            .find(|o| o.label.starts_with("gp3"))
            .unwrap();
        assert_eq!(gp3.components[0].throughput_mibs, Some(131.0));
        assert_eq!(gp3.label, "gp3 10 GiB, 3,000 IOPS, 131 MiB/s");
        // 10 x $0.08 = $0.80 + 6 x $0.04 = $0.24.
        assert_eq!(gp3.monthly_cost_usd, 1.04);
    }

    #[test]
    fn sc1_is_rejected_at_what_it_sustains_not_at_its_burst_cap() {
        // sc1 sustains 12 MiB/s per TiB, 192 at its largest 16 TiB; 250 is its burst cap. For
        // 300 MiB/s it said 'sc1 allows at most 250 MiB/s', with no nearest configuration.
        let c = Catalog::embedded();
        for mibs in [200.0, 300.0] {
            let p = plan(&c, &request("us-east-1", 100, None, Some(mibs))).unwrap();
            let sc1 = p.rejected.iter().find(|r| r.label == "sc1").unwrap();
            assert_eq!(
                sc1.reason,
                "sc1 sustains at most 192 MiB/s (12 per TiB at 16,384 GiB; 250 only in bursts)"
            );
            assert_eq!(sc1.nearest.as_ref().unwrap().components[0].size_gib, 16384);
        }
    }

    #[test]
    fn io1_is_provisioned_for_throughput_past_its_500_mibs_plateau() {
        // io1 gives 500 MiB/s from 2,000 to 32,000 IOPS, then 16 KiB per IOPS: 900 MiB/s needs
        // 900 x 64 = 57,600 IOPS, at 50 per GiB 1,152 GiB ([aws-ebs-types]). It was planned at
        // 3,600 IOPS (0.25 MiB/s each) on 100 GiB, which AWS gives 500 MiB/s.
        let c = Catalog::embedded();
        let p = plan(&c, &request("us-east-1", 100, None, Some(900.0))).unwrap();
        let io1 = p
            .options
            .iter()
            .find(|o| o.label.starts_with("io1"))
            .unwrap();
        assert_eq!(io1.components[0].iops, Some(57600));
        assert_eq!(io1.components[0].size_gib, 1152);
        assert_eq!(io1.performance.throughput_mibs, Some(900.0));
        // 1,152 x $0.125 = $144.00 + 57,600 x $0.065 = $3,744.00.
        assert_eq!(io1.monthly_cost_usd, 3888.0);
        // At or below the plateau, 0.25 MiB/s per IOPS still decides: 400 MiB/s, 1,600 IOPS.
        let p = plan(&c, &request("us-east-1", 100, None, Some(400.0))).unwrap();
        let io1 = p
            .options
            .iter()
            .find(|o| o.label.starts_with("io1"))
            .unwrap();
        assert_eq!(io1.components[0].iops, Some(1600));
    }

    #[test]
    fn n1_standard_2_local_ssd_names_what_the_gke_recipe_measured() {
        // The GKE local-SSD recipe measured its n1-standard-2 with 1 local SSD at 45,200
        // random-write IOPS; the catalog says 90,000. QA: plan offered it for 60,000 IOPS
        // without a word of the recipe's figure.
        let c = Catalog::embedded();
        let p = plan(
            &c,
            &with_store("asia-east1", 300, Some(60000), "n1-standard-2"),
        )
        .unwrap();
        let caveats = store_option(&p).caveats.join("\n");
        assert!(
            caveats.contains("measured n1-standard-2 with 1 local SSD: 45,200 random-write IOPS and 180,000 random-read, the write side below the catalog's 90,000; 398 MiB/s written and 703 MiB/s read in 1 MiB I/Os, where the catalog counts 336 MiB/s; below the 60,000 IOPS required"),
            "{caveats}"
        );
        // Within what it measured, the caveat still names the figures, without the warning.
        let p = plan(
            &c,
            &with_store("asia-east1", 300, Some(40000), "n1-standard-2"),
        )
        .unwrap();
        let caveats = store_option(&p).caveats.join("\n");
        assert!(caveats.contains("45,200 random-write IOPS"), "{caveats}");
        assert!(!caveats.contains("required"), "{caveats}");
        // Its throughput runs too (left item of session 25), beside the catalog's figure.
        assert!(
            caveats.contains(
                "; 398 MiB/s written and 703 MiB/s read in 1 MiB I/Os, where the catalog counts 336 MiB/s"
            ),
            "{caveats}"
        );
    }

    #[test]
    fn gcp_local_ssd_takes_the_smallest_allowed_count_and_e2_has_none() {
        let c = Catalog::embedded();
        let mut r = with_store("us-central1", 1000, None, "n1-standard-8");
        let p = plan(&c, &r).unwrap();
        let ls = store_option(&p);
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
        // n1-standard-8 is listed with at most 8 x 375 = 3,000 GiB (weak: the counts are not
        // all confirmed, so no limit is claimed).
        r.instance = Some("n1-standard-8".into());
        r.requirements.capacity_gib = 4000;
        let p = plan(&c, &r).unwrap();
        assert!(p.rejected.iter().any(|x| x.reason.contains(
            "lists only 1, 2, 3, 4, 5, 6, 7 or 8 local SSDs for n1-standard-8 (not every count"
        ) && x
            .reason
            .contains("8 x 375 GiB = 3,000 GiB < 4,000 GiB required")));
    }

    /// Regression (QA): i3.8xlarge's store (no published IOPS in the catalog then; i4i.8xlarge's
    /// now) ranked first as meeting 20,000 IOPS, with its missing figure said twice.
    #[test]
    fn an_unverified_requirement_is_not_counted_as_met() {
        let c = Catalog::embedded();
        let mut r = with_store("us-east-1", 1700, Some(20000), "i4i.8xlarge");
        let p = plan(&c, &r).unwrap();
        let last = p.options.last().unwrap();
        assert_eq!(last.kind, Kind::InstanceStore);
        assert_eq!(last.unverified, vec!["iops".to_string()]);
        // Every option before it provably meets the requirements; it costs the least.
        assert!(p.options[..p.options.len() - 1]
            .iter()
            .all(|o| o.unverified.is_empty() && o.monthly_cost_usd > last.monthly_cost_usd));
        let missing = last
            .caveats
            .iter()
            .filter(|c| c.contains("no IOPS figure"))
            .count();
        assert_eq!(missing, 1, "{:#?}", last.caveats);
        assert!(last.caveats[0].contains("lost when the instance stops or terminates"));
        assert!(p
            .notes
            .iter()
            .any(|n| n.starts_with("unverified, so ranked after")));
        // A published figure is checked, not marked: m6id.xlarge's 33,542 meets 20,000.
        r.instance = Some("m6id.xlarge".into());
        r.requirements.capacity_gib = 200;
        let p = plan(&c, &r).unwrap();
        let is = store_option(&p);
        assert!(is.unverified.is_empty());
        assert_eq!(p.options[0].kind, Kind::InstanceStore);
    }

    /// Regression (QA): a GCP machine type in an AWS region (and the reverse) only noted a
    /// missing price.
    #[test]
    fn an_instance_of_another_cloud_is_an_error_naming_both_clouds() {
        let c = Catalog::embedded();
        let r = with_store("us-east-1", 100, None, "n1-standard-8");
        let e = plan(&c, &r).unwrap_err().to_string();
        assert!(
            e.starts_with("n1-standard-8 is a gcp instance type but us-east-1 is an aws region: pick one of the gcp regions (us-central1,"),
            "{e}"
        );
        let mut r = request("us-central1", 100, None, None);
        r.instance = Some("m6id.xlarge".into());
        let e = plan(&c, &r).unwrap_err().to_string();
        assert!(
            e.contains("m6id.xlarge is an aws instance type but us-central1 is a gcp region"),
            "{e}"
        );
    }

    /// The GKE local-SSD recipe's node pool (n1-standard-2, one local SSD, asia-east1):
    /// 375 GiB x $0.088 = $33.00.
    #[test]
    fn seed_002_n1_standard_2_with_one_local_ssd() {
        let c = Catalog::embedded();
        let mut r = with_store("asia-east1", 200, None, "n1-standard-2");
        let p = plan(&c, &r).unwrap();
        let ls = store_option(&p);
        assert_eq!(ls.label, "n1-standard-2 + 1 x 375 GiB local SSD");
        assert_eq!(ls.monthly_cost_usd, 33.0);
        assert!(ls.weak);
        // Two local SSDs are not listed for it: the shortfall in one unit, with the arithmetic.
        r.requirements.capacity_gib = 500;
        let p = plan(&c, &r).unwrap();
        let why = &p
            .rejected
            .iter()
            .find(|x| x.kind == Kind::InstanceStore)
            .unwrap()
            .reason;
        assert_eq!(
            why,
            "the catalog lists only 1 local SSD for n1-standard-2 (not every count GCP allows for it is in the catalog's sources): 1 x 375 GiB = 375 GiB < 500 GiB required; check the machine type's valid local SSD counts in cloud.google.com/compute/docs/disks/local-ssd"
        );
    }

    #[test]
    fn a_hit_ratio_of_one_or_zero_is_explained_without_dividing_by_zero() {
        let c = Catalog::embedded();
        for (h, words) in [
            (1.0, "= 16,000 / 1 (no misses)"),
            (0.0, "= 200 / 1 (no hits)"),
        ] {
            let mut r = request("eu-north-1", 5120, Some(16000), None);
            r.allow_hybrid = true;
            r.hit_ratio = HitRatio::Assumed(h);
            let p = plan(&c, &r).unwrap();
            let hybrid = p
                .options
                .iter()
                .chain(p.rejected.iter().filter_map(|x| x.nearest.as_deref()))
                .find(|o| o.kind == Kind::Hybrid && o.label.starts_with("gp3"))
                .unwrap();
            assert!(hybrid.caveats[0].contains(words), "{}", hybrid.caveats[0]);
            assert!(!hybrid.caveats[0].contains("/ 0"), "{}", hybrid.caveats[0]);
        }
    }

    /// Regression (QA): i4i.4xlarge's IOPS, published for that size, were called "scaled from a
    /// published size" because the entry is weak (for its store size).
    #[test]
    fn published_store_iops_are_called_published() {
        let c = Catalog::embedded();
        let r = with_store("us-east-1", 100, None, "i4i.4xlarge");
        let p = plan(&c, &r).unwrap();
        let is = store_option(&p);
        let perf = is
            .caveats
            .iter()
            .find(|c| c.contains("400,000 read"))
            .unwrap();
        assert!(
            perf.contains("(published)") && !perf.contains("scaled"),
            "{perf}"
        );
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

    /// `min(a / b, c / d)` as the caveat prints it, evaluated.
    fn evaluate(formula: &str) -> f64 {
        let inner = formula
            .strip_prefix("min(")
            .and_then(|f| f.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{formula}"));
        let v = |s: &str| s.trim().replace(',', "").parse::<f64>().unwrap();
        inner
            .split(", ")
            .map(|q| {
                let (a, b) = q.split_once(" / ").unwrap();
                v(a) / v(b)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// QA: "effective 20,160 IOPS = min(20,000 / 0.99, 192 / 0.01)" evaluates to 19,200: h and
    /// 1 - h are shown precisely enough that the formula gives the figure shown.
    #[test]
    fn the_effective_rate_formula_evaluates_to_the_figure_shown() {
        use crate::fmt::num;
        for (cache, back, h) in [
            (20000.0, 192.0, 0.99206),
            (16000.0, 200.0, 0.9),
            (16000.0, 200.0, 0.99),
            (3000.0, 40.0, 0.123456),
            // 4 significant digits show 0.5, which gives 2,000,000: more are needed
            (1e6, 1e6, 0.5000001),
        ] {
            let shown = num(effective_rate(cache, back, h).floor());
            let (formula, h_shown) = explain::rate_formula(Some(cache), back, h, Some(&shown));
            assert_eq!(num(evaluate(&formula).floor()), shown, "{formula}");
            assert!(formula.contains(&format!("/ {h_shown},")), "{formula}");
        }
        let (formula, h_shown) =
            explain::rate_formula(Some(20000.0), 192.0, 0.99206, Some("20,160"));
        assert_eq!(formula, "min(20,000 / 0.99206, 192 / 0.00794)");
        assert_eq!(h_shown, "0.99206");
    }

    /// The hit ratio says what it is, at the precision of the formula; a predicted one (a curve,
    /// e.g. a simulation) drops the caveat asking to measure or simulate it (QA), which an
    /// assumed one keeps.
    #[test]
    fn a_predicted_hit_ratio_is_worded_and_needs_no_simulation_caveat() {
        let c = Catalog::embedded();
        let hybrid = |hit_ratio: HitRatio| {
            let mut r = request("eu-north-1", 5120, Some(16000), None);
            r.allow_hybrid = true;
            r.hit_ratio = hit_ratio;
            let p = plan(&c, &r).unwrap();
            p.options
                .into_iter()
                .find(|o| o.kind == Kind::Hybrid && o.label.starts_with("gp3"))
                .unwrap()
        };
        let h = hybrid(HitRatio::Curve {
            source: "simulated: bcache (writethrough) on t.dtt".into(),
            hit_ratio_for: Box::new(|_| 0.99206),
        });
        assert_eq!(
            h.caveats[0],
            "hit ratio 0.99206 (requests served without st1) is simulated: bcache (writethrough) on t.dtt: effective 16,128 IOPS = min(16,000 / 0.99206, 200 / 0.00794) (hits served by gp3, misses by st1 at the same time)"
        );
        let all = h.caveats.join("\n");
        assert!(!all.contains("not for the working set"), "{all}");
        assert!(
            all.contains("the requirements need at least 98.75 % of requests served without st1"),
            "{all}"
        );
        let h = hybrid(HitRatio::Assumed(0.99));
        assert!(h.caveats[0].starts_with("hit ratio 0.99 (requests served without st1) is assumed: effective 16,161 IOPS = min(16,000 / 0.99, 200 / 0.01)"), "{}", h.caveats[0]);
        assert!(h
            .caveats
            .iter()
            .any(|c| c.contains("not for the working set")));
    }
}
