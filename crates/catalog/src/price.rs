//! Monthly prices from unit prices: one line item per billed dimension (storage, IOPS above the
//! included ones, throughput above the included MiB/s, instance hours), each rounded to the cent
//! as the AWS Pricing Calculator does, then summed.

use crate::fmt::{int, num, round_cents, unit_usd};
use crate::model::{
    Catalog, IopsRule, ProvisionedIops, ProvisionedThroughput, Region, ThroughputRule, VolumePrice,
    VolumeType,
};
use crate::perf::{performance, resolve, Performance, Resolved, RuleError, VolumeConfig};
use crate::suggest::{close_matches, hint, shown};
use serde::Serialize;

/// Hours in a month (730, as the AWS Pricing Calculator; docs/sources.md [aws-ec2-pricing]).
pub const HOURS_PER_MONTH: f64 = 730.0;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PriceError {
    #[error("unknown region '{region}': {}", hint(.close, &format!("the catalog has {}", .all.join(", "))))]
    UnknownRegion {
        region: String,
        close: Vec<String>,
        all: Vec<String>,
    },
    #[error("unknown volume type '{name}': {}", hint(.close, &format!("the catalog has {}", .all.join(", "))))]
    UnknownType {
        name: String,
        close: Vec<String>,
        all: Vec<String>,
    },
    #[error("unknown instance type '{name}': {}", hint(.close, "`disktier catalog show` lists the catalog's; add another with --catalog FILE"))]
    UnknownInstance { name: String, close: Vec<String> },
    #[error("{name} is a {cloud} type but {region} is a {region_cloud} region: pick one of the {cloud} regions ({})", .regions.join(", "))]
    WrongCloud {
        name: String,
        cloud: String,
        region: String,
        region_cloud: String,
        regions: Vec<String>,
    },
    #[error("the catalog has no {what} price for {name} in {region}{}: add one with --catalog FILE", if .elsewhere.is_empty() { String::new() } else { format!(" (it has one in {})", .elsewhere.join(", ")) })]
    NoPrice {
        what: &'static str,
        name: String,
        region: String,
        elsewhere: Vec<String>,
    },
    #[error(transparent)]
    Rule(#[from] RuleError),
}

/// One billed line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// "storage", "iops", "throughput", "iops 32,001-64,000", "instance".
    pub name: String,
    /// Rounded to the cent.
    pub monthly_cost_usd: f64,
    /// The arithmetic: "36 GiB x $0.0836 per GB-month".
    pub detail: String,
}

/// A priced volume or instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quote {
    #[serde(rename = "type")]
    pub type_: String,
    pub region: String,
    pub items: Vec<Item>,
    /// The sum of the rounded items.
    pub monthly_cost_usd: f64,
    pub performance: Performance,
    /// The configuration priced (volumes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<Resolved>,
    /// Some price or rule used is weak (back-solved or secondary source).
    pub weak: bool,
    /// Where the prices come from, with dates.
    pub sources: Vec<String>,
}

pub fn region<'a>(cat: &'a Catalog, name: &str) -> Result<&'a Region, PriceError> {
    cat.region(name).ok_or_else(|| PriceError::UnknownRegion {
        region: shown(name),
        close: close_matches(name, cat.regions.iter().map(|r| r.name.as_str())),
        all: cat.regions.iter().map(|r| r.name.clone()).collect(),
    })
}

/// The type, its price in the region, and the region, after the usual checks.
pub fn lookup<'a>(
    cat: &'a Catalog,
    region_name: &str,
    type_name: &str,
) -> Result<(&'a Region, &'a VolumeType, &'a VolumePrice), PriceError> {
    let reg = region(cat, region_name)?;
    let vt = cat
        .volume_type(type_name)
        .ok_or_else(|| PriceError::UnknownType {
            name: shown(type_name),
            close: close_matches(type_name, cat.volume_types.iter().map(|t| t.name.as_str())),
            all: cat.volume_types.iter().map(|t| t.name.clone()).collect(),
        })?;
    if vt.cloud != reg.cloud {
        return Err(PriceError::WrongCloud {
            name: vt.name.clone(),
            cloud: vt.cloud.clone(),
            region: reg.name.clone(),
            region_cloud: reg.cloud.clone(),
            regions: cat
                .regions
                .iter()
                .filter(|r| r.cloud == vt.cloud)
                .map(|r| r.name.clone())
                .collect(),
        });
    }
    let price = cat
        .volume_price(region_name, type_name)
        .ok_or_else(|| no_price(cat, "volume", type_name, region_name))?;
    Ok((reg, vt, price))
}

fn no_price(cat: &Catalog, what: &'static str, name: &str, region: &str) -> PriceError {
    let mut elsewhere: Vec<String> = cat
        .volume_prices
        .iter()
        .filter(|p| p.type_ == name)
        .map(|p| p.region.clone())
        .chain(
            cat.instance_prices
                .iter()
                .filter(|p| p.type_ == name)
                .map(|p| p.region.clone()),
        )
        .collect();
    elsewhere.sort();
    elsewhere.dedup();
    PriceError::NoPrice {
        what,
        name: name.to_string(),
        region: region.to_string(),
        elsewhere,
    }
}

/// Prices one volume for a month.
pub fn volume(
    cat: &Catalog,
    region_name: &str,
    type_name: &str,
    cfg: &VolumeConfig,
) -> Result<Quote, PriceError> {
    let (reg, vt, price) = lookup(cat, region_name, type_name)?;
    let r = resolve(vt, cfg)?;
    let items = volume_items(vt, price, &r)?;
    let perf = performance(vt, &r);
    let total = round_cents(items.iter().map(|i| i.monthly_cost_usd).sum());
    let mut sources = vec![format!(
        "{} {}: {} ({})",
        vt.name, reg.name, price.source, price.date
    )];
    sources.push(format!("{} rules: {} ({})", vt.name, vt.source, vt.date));
    if let Some(n) = &price.note {
        sources.push(format!("{} {} price: {n}", vt.name, reg.name));
    }
    let tiers_weak = price
        .iops_tiers
        .as_ref()
        .is_some_and(|t| t.iter().any(|t| t.weak));
    Ok(Quote {
        type_: vt.name.clone(),
        region: reg.name.clone(),
        items,
        monthly_cost_usd: total,
        performance: perf,
        config: Some(r),
        weak: price.weak || vt.weak || reg.weak || tiers_weak,
        sources,
    })
}

/// The billed lines of a resolved volume.
pub fn volume_items(
    vt: &VolumeType,
    price: &VolumePrice,
    r: &Resolved,
) -> Result<Vec<Item>, PriceError> {
    let storage = match &price.tier_prices {
        Some(tiers) => {
            let tier = tiers
                .iter()
                .find(|t| t.size_gib >= r.size_gib)
                .ok_or_else(|| PriceError::NoPrice {
                    what: "size tier",
                    name: format!("{} {} GiB", vt.name, int(r.size_gib)),
                    region: price.region.clone(),
                    elsewhere: vec![],
                })?;
            let name = crate::perf::tier_for(vt, r.size_gib)
                .filter(|t| t.size_gib == tier.size_gib)
                .map_or_else(|| "the tier".to_string(), |t| t.name.clone());
            Item {
                name: "storage".into(),
                monthly_cost_usd: round_cents(tier.usd_month),
                detail: format!(
                    "{} GiB billed as {name} ({} GiB) at {} per month",
                    int(r.size_gib),
                    int(tier.size_gib),
                    unit_usd(tier.usd_month)
                ),
            }
        }
        None => Item {
            name: "storage".into(),
            monthly_cost_usd: round_cents(r.size_gib as f64 * price.storage_gb_month),
            detail: format!(
                "{} GiB x {} per GB-month",
                int(r.size_gib),
                unit_usd(price.storage_gb_month)
            ),
        },
    };
    let mut items = vec![storage];
    if let (IopsRule::Provisioned(ProvisionedIops { included, .. }), Some(iops)) =
        (&vt.iops, r.iops)
    {
        let billable = iops.saturating_sub(*included);
        if billable > 0 {
            if let Some(tiers) = &price.iops_tiers {
                let mut lo = 0u64;
                for t in tiers {
                    let hi = t.up_to.unwrap_or(u64::MAX);
                    let n = billable.min(hi).saturating_sub(lo);
                    if n > 0 {
                        let name = match t.up_to {
                            Some(h) if lo == 0 => format!("iops 1-{}", int(h)),
                            Some(h) => format!("iops {}-{}", int(lo + 1), int(h)),
                            None => format!("iops above {}", int(lo)),
                        };
                        items.push(Item {
                            name,
                            monthly_cost_usd: round_cents(n as f64 * t.usd),
                            detail: format!("{} IOPS x {} per IOPS-month", int(n), unit_usd(t.usd)),
                        });
                    }
                    lo = hi;
                    if lo >= billable {
                        break;
                    }
                }
            } else if let Some(p) = price.iops_month {
                let above = if *included > 0 {
                    format!(" above the included {}", int(*included))
                } else {
                    String::new()
                };
                items.push(Item {
                    name: "iops".into(),
                    monthly_cost_usd: round_cents(billable as f64 * p),
                    detail: format!(
                        "{} IOPS{above} x {} per IOPS-month",
                        int(billable),
                        unit_usd(p)
                    ),
                });
            } else {
                return Err(PriceError::NoPrice {
                    what: "provisioned IOPS",
                    name: vt.name.clone(),
                    region: price.region.clone(),
                    elsewhere: vec![],
                });
            }
        }
    }
    if let (ThroughputRule::Provisioned(ProvisionedThroughput { included_mibs, .. }), Some(tp)) =
        (&vt.throughput, r.throughput_mibs)
    {
        let billable = tp - included_mibs;
        if billable > 1e-9 {
            let p = price.throughput_mibs_month.ok_or(PriceError::NoPrice {
                what: "provisioned throughput",
                name: vt.name.clone(),
                region: price.region.clone(),
                elsewhere: vec![],
            })?;
            items.push(Item {
                name: "throughput".into(),
                monthly_cost_usd: round_cents(billable * p),
                detail: format!(
                    "{} MiB/s above the included {} x {} per MiB/s-month",
                    num(billable),
                    num(*included_mibs),
                    unit_usd(p)
                ),
            });
        }
    }
    Ok(items)
}

/// Monthly cost of an instance type, unrounded (for differences), or an error naming close matches.
pub fn instance_monthly(cat: &Catalog, region_name: &str, name: &str) -> Result<f64, PriceError> {
    region(cat, region_name)?;
    if cat.instance(name).is_none() {
        return Err(PriceError::UnknownInstance {
            name: shown(name),
            close: close_matches(name, cat.instances.iter().map(|i| i.name.as_str())),
        });
    }
    let p = cat
        .instance_price(region_name, name)
        .ok_or_else(|| no_price(cat, "on-demand", name, region_name))?;
    Ok(p.usd_per_hour * HOURS_PER_MONTH)
}

/// Prices an instance for a month (730 hours), with its instance store.
pub fn instance(cat: &Catalog, region_name: &str, name: &str) -> Result<Quote, PriceError> {
    let monthly = instance_monthly(cat, region_name, name)?;
    let inst = cat.instance(name).expect("checked by instance_monthly");
    let p = cat
        .instance_price(region_name, name)
        .expect("checked by instance_monthly");
    let reg = region(cat, region_name)?;
    let mut perf = Performance::default();
    match &inst.store {
        Some(s) => {
            perf.notes.push(format!(
                "instance store: {} x {} GB NVMe SSD ({} GiB), lost when the instance stops or terminates (kept across a reboot)",
                s.count,
                int(s.size_gb),
                int(s.total_bytes() >> 30)
            ));
            if let (Some(r), Some(w)) = (inst.store_read_iops, inst.store_write_iops) {
                perf.baseline_iops = Some(r.min(w) as f64);
                perf.notes.push(format!(
                    "instance store 4 KiB random IOPS: {} read / {} write",
                    int(r),
                    int(w)
                ));
            }
        }
        None => perf.notes.push("EBS only: no instance store".into()),
    }
    Ok(Quote {
        type_: inst.name.clone(),
        region: reg.name.clone(),
        items: vec![Item {
            name: "instance".into(),
            monthly_cost_usd: round_cents(monthly),
            detail: format!(
                "{} h x {} per hour (on-demand Linux)",
                num(HOURS_PER_MONTH),
                unit_usd(p.usd_per_hour)
            ),
        }],
        monthly_cost_usd: round_cents(monthly),
        performance: perf,
        config: None,
        weak: p.weak || inst.weak || reg.weak,
        sources: vec![format!(
            "{} {}: {} ({})",
            inst.name, reg.name, p.source, p.date
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded catalog's quote for a volume of `type_` in `region` of `size_gib`, with
    /// `iops` and `mibs` provisioned.
    fn quote(
        region: &str,
        type_: &str,
        size_gib: u64,
        iops: Option<u64>,
        mibs: Option<f64>,
    ) -> Result<Quote, PriceError> {
        let cfg = VolumeConfig::new(size_gib, iops, mibs);
        volume(&Catalog::embedded(), region, type_, &cfg)
    }

    #[test]
    fn seed_001_cache_volume() {
        let q = quote("eu-north-1", "gp3", 36, Some(16000), Some(1000.0)).unwrap();
        // 36 x 0.0836 = 3.0096 -> 3.01; 13,000 x 0.0052 = 67.60; 875 x 0.0418 = 36.575 -> 36.58;
        // 3.01 + 67.60 + 36.58 = 107.19 (the bcache-on-EBS recipe [recipe-bcache-ebs]: $107.19).
        let got: Vec<f64> = q.items.iter().map(|i| i.monthly_cost_usd).collect();
        assert_eq!(got, vec![3.01, 67.60, 36.58]);
        assert_eq!(q.monthly_cost_usd, 107.19);
        assert!(q.weak);
    }

    #[test]
    fn included_iops_and_throughput_are_not_billed() {
        let q = quote("us-east-1", "gp3", 100, Some(3000), Some(125.0)).unwrap();
        // 100 x $0.08 = $8.00; 3,000 IOPS and 125 MiB/s are included.
        assert_eq!(q.items.len(), 1);
        assert_eq!(q.monthly_cost_usd, 8.0);
        // io1 bills every provisioned IOPS: 100 x 0.125 = 12.50 + 1,000 x 0.065 = 65.00.
        let q = quote("us-east-1", "io1", 100, Some(1000), None).unwrap();
        assert_eq!(q.monthly_cost_usd, 77.5);
        // GCP local SSD comes in 375 GiB units.
        assert!(quote("us-central1", "local-ssd", 400, None, None).is_err());
        let q = quote("us-central1", "local-ssd", 750, None, None).unwrap();
        assert_eq!(q.monthly_cost_usd, 60.0);
    }

    #[test]
    fn io2_tiers_apply_bracket_by_bracket() {
        let q = quote("us-east-1", "io2", 100, Some(70000), None).unwrap();
        // 100 x 0.125 = 12.50; 32,000 x 0.065 = 2,080.00; 32,000 x 0.0455 = 1,456.00;
        // 6,000 x 0.03185 = 191.10; total 3,739.60.
        let got: Vec<f64> = q.items.iter().map(|i| i.monthly_cost_usd).collect();
        assert_eq!(got, vec![12.50, 2080.00, 1456.00, 191.10]);
        assert_eq!(q.monthly_cost_usd, 3739.60);
        assert_eq!(q.items[2].name, "iops 32,001-64,000");
    }

    #[test]
    fn unknown_things_list_close_matches() {
        let c = Catalog::embedded();
        let e = quote("eu-nort-1", "gp3", 10, None, None).unwrap_err();
        assert!(e.to_string().contains("did you mean eu-north-1"), "{e}");
        let e = quote("us-east-1", "gp4", 10, None, None).unwrap_err();
        assert!(e.to_string().contains("gp3"), "{e}");
        let e = instance(&c, "us-east-1", "m6id.xlarg").unwrap_err();
        assert!(e.to_string().contains("m6id.xlarge"), "{e}");
        // Nothing close: no guess, the region list once.
        let e = quote("mars-1", "gp3", 10, None, None)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("did you mean"), "{e}");
        assert_eq!(e.matches("us-east-1").count(), 1, "{e}");
        let e = quote("us-east-1", "floppy", 10, None, None)
            .unwrap_err()
            .to_string();
        assert!(
            !e.contains("did you mean") && e.contains("the catalog has"),
            "{e}"
        );
        let e = instance(&c, "us-east-1", "zzzz").unwrap_err().to_string();
        assert!(
            !e.contains("did you mean") && e.contains("catalog show"),
            "{e}"
        );
        // A huge name is quoted cut short.
        let e = quote(&"x".repeat(5000), "gp3", 10, None, None)
            .unwrap_err()
            .to_string();
        assert!(e.len() < 500 && e.contains("xxx..."), "{e}");
        let e = quote("eu-north-1", "sc1", 500, None, None).unwrap_err();
        assert!(
            e.to_string().contains("it has one in ") && e.to_string().contains("us-east-1"),
            "{e}"
        );
        let e = quote("us-central1", "gp3", 500, None, None).unwrap_err();
        assert!(e.to_string().contains("pick one of the aws regions"), "{e}");
    }
}
