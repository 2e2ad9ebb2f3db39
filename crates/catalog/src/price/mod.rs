//! Monthly prices from unit prices: one line item per billed dimension (storage, IOPS above the
//! included ones, throughput above the included MiB/s, instance hours), each rounded to the cent
//! as the AWS Pricing Calculator does, then summed.

use crate::fmt::{a, int, num, round_cents, unit_usd};
use crate::model::{
    Catalog, Instance, IopsRule, ProvisionedIops, ProvisionedThroughput, Region, ThroughputRule,
    VolumePrice, VolumeType, MIBS_PER_MBPS,
};
use crate::perf::{performance, resolve, Performance, Resolved, RuleError, VolumeConfig};
use crate::suggest::{close_matches, hint, shown};
use serde::Serialize;

mod cite;
pub use cite::cited;
use cite::instance_sources;

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
    #[error("{name} is an instance type, not a volume type: price it with `disktier price instance {name} --region {region}`")]
    NotAVolume { name: String, region: String },
    /// A volume type where an instance type is wanted (`price instance gp3`, `plan --instance gp3`).
    #[error("{name} is a volume type, not an instance type: price it with `disktier price {name} --size 100GiB`, or give an instance type (`disktier catalog show` lists them)")]
    NotAnInstance { name: String },
    #[error("{name} is {} type but {region} is {} region: pick one of the {cloud} regions ({})", a(.cloud), a(.region_cloud), .regions.join(", "))]
    WrongCloud {
        name: String,
        // Boxed strings keep the error small (clippy's result_large_err).
        cloud: Box<str>,
        region: String,
        region_cloud: Box<str>,
        regions: Vec<String>,
    },
    /// [`PriceError::WrongCloud`] for an instance type.
    #[error("{name} is {} instance type but {region} is {} region: pick one of the {cloud} regions ({})", a(.cloud), a(.region_cloud), .regions.join(", "))]
    InstanceWrongCloud {
        name: String,
        cloud: Box<str>,
        region: String,
        region_cloud: Box<str>,
        regions: Vec<String>,
    },
    /// `elsewhere` empty: the catalog prices it in no region, because no price for it was found
    /// in a primary source (the GCP machine types, the larger Azure Lsv3/Lasv3 sizes,
    /// hyperdisk-balanced): the message says so, so that its absence is not taken for an
    /// oversight (QA: it read as if a price were merely missing from one region).
    #[error("the catalog has no {what} price for {name} in {region}{}", if .elsewhere.is_empty() { " nor in any region: none was found in a primary source, so the catalog leaves it unpriced rather than guess: add one with --catalog FILE, citing the cloud's price page as its source".to_string() } else { format!(" (it has one in {}): add one with --catalog FILE", .elsewhere.join(", ")) })]
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
    /// The instance's local disks (`price instance`): in JSON as figures, not only in the
    /// notes' words (QA: `price instance m6id.xlarge --format json` gave the disk count and size
    /// only inside a sentence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_store: Option<InstanceStore>,
    /// Some price or rule used is weak (back-solved or secondary source).
    pub weak: bool,
    /// Where the prices come from, with dates.
    pub sources: Vec<String>,
}

/// An instance's local NVMe disks as `price instance --format json` gives them; `count` 0 for
/// an instance without any (EBS only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstanceStore {
    pub count: u32,
    /// Each disk's size in decimal GB, as the cloud lists it.
    pub size_gb: u64,
    /// All disks together, in whole GiB (rounded down).
    pub total_gib: u64,
    /// Published 4 KiB random IOPS of the instance's store, where the catalog has them.
    pub read_iops: Option<u64>,
    pub write_iops: Option<u64>,
    /// Published throughput in MB/s (10^6 bytes), where the catalog has it.
    pub throughput_mbps: Option<f64>,
    /// When the data is lost, in the cloud's words; absent without disks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_when: Option<&'static str>,
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
    let vt = volume_type(cat, reg, type_name)?;
    same_cloud(cat, reg, &vt.name, false, &vt.cloud)?;
    let price = cat
        .volume_price(region_name, type_name)
        .ok_or_else(|| no_price(cat, "volume", type_name, region_name))?;
    Ok((reg, vt, price))
}

/// The volume type `name`, or why there is none: an instance type of that name, or close matches.
pub fn volume_type<'a>(
    cat: &'a Catalog,
    reg: &Region,
    name: &str,
) -> Result<&'a VolumeType, PriceError> {
    if let Some(vt) = cat.volume_type(name) {
        return Ok(vt);
    }
    if let Some(i) = cat.instance(name) {
        // The suggested command must work: a region of the instance's own cloud (QA: `price
        // n1-standard-8 --region us-east-1` suggested pricing a GCP machine in an AWS region),
        // one that prices it when there is one.
        let own = |r: &&Region| r.cloud == i.cloud;
        let priced = |r: &&Region| cat.instance_price(&r.name, &i.name).is_some();
        let region = Some(reg)
            .filter(own)
            .or_else(|| cat.regions.iter().filter(own).find(priced))
            .or_else(|| cat.regions.iter().find(own))
            .map_or_else(|| reg.name.clone(), |r| r.name.clone());
        return Err(PriceError::NotAVolume {
            name: i.name.clone(),
            region,
        });
    }
    Err(PriceError::UnknownType {
        name: shown(name),
        close: close_matches(name, cat.volume_types.iter().map(|t| t.name.as_str())),
        all: cat.volume_types.iter().map(|t| t.name.clone()).collect(),
    })
}

/// Ok when `name` (an instance type when `instance`, else a volume type, of `cloud`) can be had
/// in `reg`, else which regions of its cloud to pick.
pub fn same_cloud(
    cat: &Catalog,
    reg: &Region,
    name: &str,
    instance: bool,
    cloud: &str,
) -> Result<(), PriceError> {
    if cloud == reg.cloud {
        return Ok(());
    }
    let regions = cat
        .regions
        .iter()
        .filter(|r| r.cloud == cloud)
        .map(|r| r.name.clone())
        .collect();
    let (name, cloud, region, region_cloud) = (
        name.to_string(),
        cloud.into(),
        reg.name.clone(),
        reg.cloud.as_str().into(),
    );
    Err(if instance {
        PriceError::InstanceWrongCloud {
            name,
            cloud,
            region,
            region_cloud,
            regions,
        }
    } else {
        PriceError::WrongCloud {
            name,
            cloud,
            region,
            region_cloud,
            regions,
        }
    })
}

/// A refusal of provisioned IOPS on a type whose IOPS follow its size, with the types of the
/// same cloud priced in `region` that take as many provisioned IOPS (from the catalog).
fn with_provisioned_types(
    cat: &Catalog,
    region: &str,
    vt: &VolumeType,
    asked: Option<u64>,
    mut e: RuleError,
) -> RuleError {
    let Some(asked) = asked.filter(|_| e.rule == "iops_not_provisioned") else {
        return e;
    };
    let types: Vec<&str> = cat
        .volume_types
        .iter()
        .filter(|t| t.cloud == vt.cloud && t.name != vt.name && !t.ephemeral)
        .filter(|t| matches!(&t.iops, IopsRule::Provisioned(p) if p.max >= asked))
        .filter(|t| cat.volume_price(region, &t.name).is_some())
        .map(|t| t.name.as_str())
        .collect();
    if !types.is_empty() {
        e.message.push_str(&format!(
            "; or a type that takes {} provisioned IOPS in {region}: {}",
            int(asked),
            types.join(", ")
        ));
    }
    e
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
    let r =
        resolve(vt, cfg).map_err(|e| with_provisioned_types(cat, &reg.name, vt, cfg.iops, e))?;
    let items = volume_items(vt, price, &r)?;
    let mut perf = performance(vt, &r);
    if vt.ephemeral {
        // As plan's local-SSD options say (QA: `price local-ssd` said nothing of it).
        perf.notes.insert(
            0,
            format!(
                "{} data is {}: only for data you can rebuild",
                vt.name,
                store_lifetime(&vt.cloud)
            ),
        );
    }
    let total = round_cents(items.iter().map(|i| i.monthly_cost_usd).sum());
    let mut sources = vec![format!(
        "{} {}: {}",
        vt.name,
        reg.name,
        cited(&price.source, &price.date)
    )];
    sources.push(format!(
        "{} rules: {}",
        vt.name,
        cited(&vt.source, &vt.date)
    ));
    if let Some(n) = &price.note {
        sources.push(format!("{} {} price: {n}", vt.name, reg.name));
    }
    // Weak only when a weak tier is billed (QA: io2 at 500 IOPS, all in the confirmed first
    // tier, was marked weak for its upper tiers).
    let billable = match (&vt.iops, r.iops) {
        (IopsRule::Provisioned(p), Some(i)) => i.saturating_sub(p.included),
        _ => 0,
    };
    let tiers_weak = price.iops_tiers.as_ref().is_some_and(|tiers| {
        let mut lo = 0;
        tiers.iter().any(|t| {
            let billed = billable > lo;
            lo = t.up_to.unwrap_or(u64::MAX);
            billed && t.weak
        })
    });
    Ok(Quote {
        type_: vt.name.clone(),
        region: reg.name.clone(),
        items,
        monthly_cost_usd: total,
        performance: perf,
        config: Some(r),
        instance_store: None,
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
                    tier_usd(tier.usd_month)
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
    let reg = region(cat, region_name)?;
    let inst = known_instance(cat, name)?;
    same_cloud(cat, reg, &inst.name, true, &inst.cloud)?;
    let p = cat
        .instance_price(region_name, name)
        .ok_or_else(|| no_price(cat, "on-demand", name, region_name))?;
    Ok(p.usd_per_hour * HOURS_PER_MONTH)
}

/// The instance type `name`, or why there is none: a volume type of that name (QA: `price
/// instance gp3` was "unknown instance type 'gp3'", as if gp3 were no name at all), or close
/// matches.
pub fn known_instance<'a>(cat: &'a Catalog, name: &str) -> Result<&'a Instance, PriceError> {
    if let Some(i) = cat.instance(name) {
        return Ok(i);
    }
    if cat.volume_type(name).is_some() {
        return Err(PriceError::NotAnInstance { name: shown(name) });
    }
    Err(PriceError::UnknownInstance {
        name: shown(name),
        close: close_matches(name, cat.instances.iter().map(|i| i.name.as_str())),
    })
}

/// A size tier's monthly price as money is written, "$3,604.11" and "$0.30" (QA: "$3604.11" and
/// "$0.3" beside the line's "$3,604.11"), unless it has fractions of a cent to show.
fn tier_usd(x: f64) -> String {
    if ((x * 100.0).round() - x * 100.0).abs() < 1e-6 {
        crate::fmt::usd(x)
    } else {
        unit_usd(x)
    }
}

/// How long an instance's local disks keep their data, in its cloud's own words: AWS
/// ([aws-instance-types], docs/sources.md) says stop and terminate, Azure (the Lsv3/Lasv3 size
/// pages the catalog's Azure instances cite, as `render aks` says) stop, deallocation and redeployment.
pub fn store_lifetime(cloud: &str) -> &'static str {
    match cloud {
        "aws" => "lost when the instance stops or terminates (kept across a reboot)",
        "azure" => "lost when the VM stops, is deallocated or is redeployed (kept across a reboot)",
        _ => "lost when the machine stops (kept across a reboot)",
    }
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
                "instance store: {} x {} GB NVMe SSD ({} GiB), {}",
                s.count,
                int(s.size_gb),
                int(s.total_bytes() >> 30),
                store_lifetime(&inst.cloud)
            ));
            // The figures `plan` ranks the store by (QA: an Azure Lsv3 VM, whose size table gives
            // one IOPS figure and MB/s, had 'performance not in the catalog' here).
            match (inst.store_read_iops, inst.store_write_iops) {
                (Some(r), Some(w)) => {
                    perf.baseline_iops = Some(r.min(w) as f64);
                    perf.notes.push(format!(
                        "instance store 4 KiB random IOPS: {} read / {} write",
                        int(r),
                        int(w)
                    ));
                }
                (Some(x), None) | (None, Some(x)) => {
                    perf.baseline_iops = Some(x as f64);
                    perf.notes.push(format!(
                        "instance store IOPS: {} (published: one figure, not split into read and write)",
                        int(x)
                    ));
                }
                (None, None) => {}
            }
            if let Some(m) = inst.store_throughput_mbps {
                perf.baseline_throughput_mibs = Some(m * MIBS_PER_MBPS);
                perf.notes.push(format!(
                    "instance store throughput: {} MB/s ({} MiB/s)",
                    num(m),
                    num(m * MIBS_PER_MBPS)
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
        instance_store: Some(InstanceStore {
            count: inst.store.as_ref().map_or(0, |s| s.count),
            size_gb: inst.store.as_ref().map_or(0, |s| s.size_gb),
            total_gib: inst.store.as_ref().map_or(0, |s| s.total_bytes() >> 30),
            read_iops: inst.store_read_iops,
            write_iops: inst.store_write_iops,
            throughput_mbps: inst.store_throughput_mbps,
            lost_when: inst.store.as_ref().map(|_| store_lifetime(&inst.cloud)),
        }),
        weak: p.weak || inst.weak || reg.weak,
        sources: instance_sources(inst, p, &reg.name),
    })
}

#[cfg(test)]
mod tests;
