//! When the prices behind a plan were recorded: a plan is only as current as its catalog, and
//! cloud list prices change (QA: `price` named each price's date, `plan` named none).

use super::types::{PlanOption, PricesRecorded};
use crate::model::Catalog;

/// The catalog's version and the oldest and newest `date` of the price entries the options
/// use in `region` (each component's volume or instance price, and `instance`'s own price, which
/// an instance-store option is priced against); `None` when no option has a dated price.
pub(super) fn prices_recorded(
    cat: &Catalog,
    region: &str,
    instance: Option<&str>,
    options: &[PlanOption],
) -> Option<PricesRecorded> {
    let types: Vec<&str> = options
        .iter()
        .flat_map(|o| o.components.iter().map(|c| c.type_.as_str()))
        .chain(instance)
        .collect();
    let used = |r: &str, t: &str| r == region && types.contains(&t);
    let mut dates: Vec<&str> = cat
        .volume_prices
        .iter()
        .filter(|p| used(&p.region, &p.type_))
        .map(|p| p.date.as_str())
        .chain(
            cat.instance_prices
                .iter()
                .filter(|p| used(&p.region, &p.type_))
                .map(|p| p.date.as_str()),
        )
        .filter(|d| !d.is_empty())
        .collect();
    // ISO dates ("2024-06", "2026-11-22") order as strings.
    dates.sort_unstable();
    Some(PricesRecorded {
        catalog: [cat.version.as_deref(), cat.date.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" of "),
        oldest: dates.first()?.to_string(),
        newest: dates.last()?.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{plan, PlanRequest, Requirements};
    use crate::model::Catalog;

    fn request(cap: u64, iops: u64, instance: Option<&str>) -> PlanRequest {
        PlanRequest {
            region: "us-east-1".into(),
            requirements: Requirements {
                capacity_gib: cap,
                iops: Some(iops),
                throughput_mibs: None,
            },
            allow_hybrid: false,
            instance: instance.map(str::to_string),
            allow_ephemeral: false,
            hit_ratio: super::super::HitRatio::Assumed(super::super::DEFAULT_HIT_RATIO),
        }
    }

    /// The dates are those of the prices the options use, in the plan's region: an overlay
    /// that re-dates gp3's us-east-1 price moves the newest date, one for another region or
    /// another type does not.
    #[test]
    fn a_plan_names_when_the_prices_it_used_were_recorded() {
        let base = Catalog::embedded();
        let p = plan(&base, &request(100, 5000, None)).unwrap();
        let d = p.prices_recorded.clone().expect("dated prices");
        assert!(d.oldest <= d.newest, "{d:?}");
        assert!(
            d.catalog.contains(base.version.as_deref().unwrap()),
            "{d:?}"
        );
        let redated = |region: &str, ty: &str| {
            let mut c = base.clone();
            for v in &mut c.volume_prices {
                if v.region == region && v.type_ == ty {
                    v.date = "2099-01".into();
                }
            }
            plan(&c, &request(100, 5000, None))
                .unwrap()
                .prices_recorded
                .unwrap()
        };
        assert_eq!(redated("us-east-1", "gp3").newest, "2099-01");
        assert_eq!(redated("eu-north-1", "gp3"), d);
        assert_eq!(redated("us-east-1", "no-such-type"), d);
    }
}
