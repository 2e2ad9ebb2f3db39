//! `disktier catalog refresh gcp | azure`: the catalog's GCP and Azure prices from the clouds'
//! own public price lists, saved to files (the command never goes to the network itself):
//!
//! - GCP: the Cloud Billing Catalog API's SKU list of Compute Engine
//!   (`GET https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?key=...`, one or
//!   more pages): `{"skus": [{"description", "category": {"usageType", ...}, "serviceRegions":
//!   [...], "pricingInfo": [{"pricingExpression": {"usageUnit", "tieredRates": [{
//!   "startUsageAmount", "unitPrice": {"currencyCode", "units", "nanos"}}]}}]}], "nextPageToken"}`
//!   (cloud.google.com/billing/docs/reference/rest/v1/services.skus/list).
//! - Azure: the Retail Prices API (`GET https://prices.azure.com/api/retail/prices?$filter=...`,
//!   one or more pages): `{"Items": [{"armRegionName", "serviceName", "productName", "skuName",
//!   "meterName", "armSkuName", "type", "currencyCode", "retailPrice", "unitOfMeasure",
//!   "tierMinimumUnits", "effectiveStartDate"}], "NextPageLink"}`
//!   (learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices).
//!
//! Both are read as streams: the item array is walked one item at a time, each item is
//! classified and dropped, and only the prices that matter are kept, so memory stays bounded by
//! the handful of kept prices, not by the file (a full Compute Engine SKU list is tens of MB).

mod clash;
mod gcp_kind;
mod stream;

use clash::Clashes;
use gcp_kind::gcp_kind;

use super::ImportError;
use crate::import::check_merged;
use crate::model::{Catalog, InstancePrice, Region, TierPrice, VolumePrice};
use crate::model::{MIBS_PER_MBPS, PER_MBPS_NOTE};
use crate::price::HOURS_PER_MONTH;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use stream::read_page;

/// Which price list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    Gcp,
    Azure,
}

impl Cloud {
    pub fn name(self) -> &'static str {
        match self {
            Cloud::Gcp => "gcp",
            Cloud::Azure => "azure",
        }
    }

    fn format(self) -> &'static str {
        match self {
            Cloud::Gcp => "a Cloud Billing Catalog SKU list ({\"skus\": [...]})",
            Cloud::Azure => "an Azure Retail Prices API page ({\"Items\": [...]})",
        }
    }

    fn items_key(self) -> &'static str {
        match self {
            Cloud::Gcp => "skus",
            Cloud::Azure => "Items",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Cloud::Gcp => "Cloud Billing Catalog API, Compute Engine SKUs (cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus)",
            Cloud::Azure => "Azure Retail Prices API (prices.azure.com/api/retail/prices)",
        }
    }
}

/// What a refresh found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    pub cloud: String,
    pub region: String,
    pub files: usize,
    pub items_read: usize,
    pub volume_prices: usize,
    pub instance_prices: usize,
    pub date: String,
}

/// A kept figure: USD per unit-month (volumes) or per hour (instances), and the index of the
/// file (page) it was read from, so that each price names its own file.
type Figure = (f64, usize);

/// The figures kept so far, and their date.
#[derive(Debug, Clone, Default)]
struct Kept {
    storage: BTreeMap<String, Figure>,
    iops: BTreeMap<String, Figure>,
    throughput: BTreeMap<String, Figure>,
    hourly: BTreeMap<String, Figure>,
    /// Size-tier types (Azure Premium/Standard SSD): type -> tier size (GiB) -> USD per month.
    tiers: BTreeMap<String, BTreeMap<u64, Figure>>,
    /// The index of the file being read.
    file: usize,
    date: Option<String>,
    regions_seen: std::collections::BTreeSet<String>,
    /// Currencies other than USD that the region's items are priced in.
    currencies: std::collections::BTreeSet<String>,
    items: usize,
    /// Items that price one thing differently ([`clash`]).
    clashes: Clashes,
}

impl Kept {
    fn saw_region(&mut self, r: &str) {
        // A bounded sample: enough to name the file's regions in an error.
        if self.regions_seen.len() < 64 && !r.is_empty() && r.len() <= 64 {
            // Escaped: an error names them, and a price list is not trusted to be plain text.
            self.regions_seen.insert(crate::suggest::printable(r));
        }
    }

    fn dated(&mut self, d: &str) {
        let d = d.get(..10).unwrap_or("");
        let ok = d.len() == 10
            && d.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        if ok && self.date.as_deref().is_none_or(|old| d > old) {
            self.date = Some(d.to_string());
        }
    }
}

// ---------- GCP ----------

#[derive(Debug, Deserialize)]
struct GcpSku {
    #[serde(default)]
    description: String,
    #[serde(default)]
    category: GcpCategory,
    #[serde(rename = "serviceRegions", default)]
    service_regions: Vec<String>,
    #[serde(rename = "pricingInfo", default)]
    pricing_info: Vec<GcpPricingInfo>,
}

#[derive(Debug, Default, Deserialize)]
struct GcpCategory {
    #[serde(rename = "usageType", default)]
    usage_type: String,
}

#[derive(Debug, Deserialize)]
struct GcpPricingInfo {
    #[serde(rename = "effectiveTime", default)]
    effective_time: String,
    #[serde(rename = "pricingExpression", default)]
    expr: GcpExpr,
}

#[derive(Debug, Default, Deserialize)]
struct GcpExpr {
    #[serde(rename = "usageUnit", default)]
    usage_unit: String,
    #[serde(rename = "tieredRates", default)]
    tiered_rates: Vec<GcpRate>,
}

#[derive(Debug, Deserialize)]
struct GcpRate {
    #[serde(rename = "startUsageAmount", default)]
    start: f64,
    #[serde(rename = "unitPrice", default)]
    unit_price: GcpMoney,
}

#[derive(Debug, Default, Deserialize)]
struct GcpMoney {
    #[serde(rename = "currencyCode", default)]
    currency: String,
    /// google.type.Money: whole units as a decimal string (int64 in JSON).
    #[serde(default)]
    units: Option<serde_json::Value>,
    #[serde(default)]
    nanos: i64,
}

impl GcpMoney {
    fn usd(&self) -> Option<f64> {
        if self.currency != "USD" {
            return None;
        }
        let units: i64 = match &self.units {
            None => 0,
            Some(serde_json::Value::String(s)) => s.parse().ok()?,
            Some(serde_json::Value::Number(n)) => n.as_i64()?,
            Some(_) => return None,
        };
        let v = units as f64 + self.nanos as f64 / 1e9;
        (0.0..1e6).contains(&v).then_some(v)
    }
}

fn gcp_item(k: &mut Kept, region: &str, sku: GcpSku) {
    for r in &sku.service_regions {
        k.saw_region(r);
    }
    // A SKU priced for one region only: multi-region SKUs are priced per location group.
    if sku.category.usage_type != "OnDemand"
        || sku.service_regions.len() != 1
        || sku.service_regions[0] != region
    {
        return;
    }
    let Some((type_, what)) = gcp_kind(&sku.description) else {
        return;
    };
    // The latest pricing info; in it, the first tier with a price (a free allowance is a tier
    // at 0 USD starting at 0).
    let Some(info) = sku
        .pricing_info
        .iter()
        .max_by(|a, b| a.effective_time.cmp(&b.effective_time))
    else {
        return;
    };
    let unit = info.expr.usage_unit.as_str();
    let unit_ok = match what {
        "storage" => unit == "GiBy.mo",
        "iops" => unit == "mo" || unit == "IOPS.mo" || unit == "1.mo",
        _ => unit == "MiBy/s.mo" || unit == "MiBy.mo",
    };
    if !unit_ok {
        return;
    }
    let mut rates: Vec<&GcpRate> = info.expr.tiered_rates.iter().collect();
    rates.sort_by(|a, b| a.start.total_cmp(&b.start));
    for r in &rates {
        super::saw_currency(&mut k.currencies, &r.unit_price.currency);
    }
    let Some(usd) = rates
        .iter()
        .filter_map(|r| r.unit_price.usd())
        .find(|&v| v > 0.0)
    else {
        return;
    };
    k.dated(&info.effective_time);
    let file = k.file;
    k.clashes
        .saw(format!("{type_} {what}"), usd, &sku.description, file);
    let map = match what {
        "storage" => &mut k.storage,
        "iops" => &mut k.iops,
        _ => &mut k.throughput,
    };
    map.insert(type_.to_string(), (usd, file));
}

// ---------- Azure ----------

#[derive(Debug, Deserialize)]
struct AzureItem {
    #[serde(rename = "armRegionName", default)]
    region: String,
    #[serde(rename = "serviceName", default)]
    service: String,
    #[serde(rename = "productName", default)]
    product: String,
    #[serde(rename = "skuName", default)]
    sku: String,
    #[serde(rename = "meterName", default)]
    meter: String,
    #[serde(rename = "armSkuName", default)]
    arm_sku: String,
    #[serde(rename = "type", default)]
    type_: String,
    #[serde(rename = "currencyCode", default)]
    currency: String,
    #[serde(rename = "retailPrice", default)]
    retail: f64,
    #[serde(rename = "unitOfMeasure", default)]
    unit: String,
    #[serde(rename = "effectiveStartDate", default)]
    start: String,
}

fn azure_item(k: &mut Kept, region: &str, embedded: &Catalog, it: AzureItem) {
    k.saw_region(&it.region);
    if it.region == region && it.type_ == "Consumption" {
        super::saw_currency(&mut k.currencies, &it.currency);
    }
    if it.region != region
        || it.type_ != "Consumption"
        || it.currency != "USD"
        || !it.retail.is_finite()
        || it.retail < 0.0
        || it.retail >= 1e6
    {
        return;
    }
    let lower = |s: &str| s.to_ascii_lowercase();
    // Premium SSD / Standard SSD: one monthly price per size tier (sku "P15 LRS", meter
    // "P15 LRS Disk"); the tier's size comes from the embedded type's `size_tiers`.
    let tiered = match it.product.as_str() {
        "Premium SSD Managed Disks" => Some("premium-ssd"),
        "Standard SSD Managed Disks" => Some("standard-ssd"),
        _ => None,
    };
    if let Some(t) = tiered {
        let Some(tier) = it.sku.strip_suffix(" LRS") else {
            return;
        };
        let size = embedded
            .volume_type(t)
            .and_then(|vt| vt.size_tiers.as_ref())
            .and_then(|ts| ts.iter().find(|x| x.name == tier))
            .map(|x| x.size_gib);
        if let Some(size) = size {
            if it.meter == format!("{tier} LRS Disk") && it.unit == "1/Month" && it.retail > 0.0 {
                let file = k.file;
                k.clashes
                    .saw(format!("{t} {tier}"), it.retail, &it.meter, file);
                k.tiers
                    .entry(t.into())
                    .or_default()
                    .insert(size, (it.retail, file));
                k.dated(&it.start);
            }
        }
        return;
    }
    if it.product == "Azure Premium SSD v2" && it.sku == "Premium LRS" {
        // Billed per hour; the catalog keeps months of 730 hours. Capacity per GiB, IOPS per
        // unit, throughput per MB/s, which the catalog holds per MiB/s (x 2^20 / 10^6, as the
        // embedded entry); a free baseline shows as a tier at 0 USD, so the paid tier is kept.
        let what = lower(&it.meter);
        let mut per_month = it.retail * HOURS_PER_MONTH;
        let (dim, unit_ok) = if what.contains("capacity") {
            ("storage", it.unit == "1 GiB/Hour")
        } else if what.contains("iops") {
            ("iops", it.unit == "1/Hour")
        } else if what.contains("throughput") {
            per_month /= MIBS_PER_MBPS;
            ("throughput", it.unit == "1/Hour")
        } else {
            return;
        };
        if !unit_ok || it.retail == 0.0 {
            return;
        }
        k.clashes.saw(
            format!("premium-ssd-v2 {dim}"),
            it.retail,
            &it.meter,
            k.file,
        );
        let map = match dim {
            "storage" => &mut k.storage,
            "iops" => &mut k.iops,
            _ => &mut k.throughput,
        };
        map.insert("premium-ssd-v2".into(), (per_month, k.file));
        k.dated(&it.start);
        return;
    }
    if it.service == "Virtual Machines"
        && it.unit == "1 Hour"
        && !lower(&it.product).contains("windows")
        && !lower(&it.sku).contains("spot")
        && !lower(&it.sku).contains("low priority")
        && embedded
            .instance(&it.arm_sku)
            .is_some_and(|i| i.cloud == "azure")
        && it.retail > 0.0
    {
        let sku = format!("{} ({})", it.sku, it.product);
        k.clashes
            .saw(format!("{} per hour", it.arm_sku), it.retail, &sku, k.file);
        k.hourly.insert(it.arm_sku.clone(), (it.retail, k.file));
        k.dated(&it.start);
    }
}

/// Reads the pages `readers` gives (each a whole API response) and returns the catalog overlay
/// for `region`. `path` names the input in messages.
pub fn refresh<R: Read>(
    cloud: Cloud,
    readers: impl IntoIterator<Item = (std::path::PathBuf, R)>,
    region: &str,
) -> Result<(Catalog, Summary), ImportError> {
    let embedded = Catalog::embedded();
    let mut k = Kept::default();
    let mut paths: Vec<std::path::PathBuf> = Vec::new();
    for (path, r) in readers {
        k.file = paths.len();
        paths.push(path.clone());
        match cloud {
            Cloud::Gcp => {
                read_page::<GcpSku, _>(r, &path, cloud.items_key(), cloud.format(), |s| {
                    k.items += 1;
                    gcp_item(&mut k, region, s)
                })?
            }
            Cloud::Azure => {
                read_page::<AzureItem, _>(r, &path, cloud.items_key(), cloud.format(), |it| {
                    k.items += 1;
                    azure_item(&mut k, region, &embedded, it)
                })?
            }
        }
    }
    assemble(cloud, k, region, &paths, &embedded)
}

/// The source of a figure read from the files `used` (indices into `paths`): the price list and
/// each file, once, in reading order.
fn source_of(cloud: Cloud, paths: &[std::path::PathBuf], used: &[usize]) -> String {
    let mut used = used.to_vec();
    used.sort_unstable();
    used.dedup();
    let files: Vec<String> = used
        .iter()
        .filter_map(|&i| paths.get(i))
        // Escaped: plain text on one line (a file name's newline failed `catalog check`).
        .map(|p| crate::suggest::printable(&p.display().to_string()))
        .collect();
    format!("{}; refreshed from {}", cloud.source(), files.join(", "))
}

fn assemble(
    cloud: Cloud,
    k: Kept,
    region: &str,
    paths: &[std::path::PathBuf],
    embedded: &Catalog,
) -> Result<(Catalog, Summary), ImportError> {
    let files = paths.len();
    let dash = std::path::PathBuf::from("-");
    // Errors about the input as a whole name its first file.
    let path: &Path = paths.first().unwrap_or(&dash);
    let all: Vec<usize> = (0..files).collect();
    let no_prices = || ImportError::NoRegionPrices {
        path: path.to_path_buf(),
        cloud: cloud.name(),
        region: crate::suggest::shown(region),
        seen: k.regions_seen.iter().take(8).cloned().collect(),
        currencies: k.currencies.iter().cloned().collect(),
    };
    if let Some(e) = k.clashes.error(paths) {
        return Err(e);
    }
    if k.storage.is_empty() && k.hourly.is_empty() && k.tiers.is_empty() {
        return Err(no_prices());
    }
    let date = k.date.clone().ok_or_else(no_prices)?;
    let mut cat = Catalog {
        version: None,
        date: Some(date.clone()),
        source: Some(source_of(cloud, paths, &all)),
        ..Catalog::default()
    };
    match embedded.region(region) {
        Some(r) if r.cloud != cloud.name() => {
            return Err(ImportError::Format {
                path: path.to_path_buf(),
                format: cloud.format(),
                message: format!(
                    "{region} is a {} region in the catalog, not a {} one",
                    r.cloud,
                    cloud.name()
                ),
            })
        }
        // A region the price list confirms: no longer weak.
        Some(r) => cat.regions.push(Region {
            weak: false,
            ..r.clone()
        }),
        None => cat.regions.push(Region {
            name: region.to_string(),
            cloud: cloud.name().to_string(),
            weak: false,
            usage_prefix: None,
            note: Some(format!("added by `catalog refresh {}`", cloud.name())),
        }),
    }
    for (t, &(usd, file)) in &k.storage {
        if embedded.volume_type(t).is_none() {
            continue;
        }
        let iops = k.iops.get(t).copied();
        let throughput = k.throughput.get(t).copied();
        let used: Vec<usize> = [Some(file), iops.map(|x| x.1), throughput.map(|x| x.1)]
            .into_iter()
            .flatten()
            .collect();
        cat.volume_prices.push(VolumePrice {
            storage_gb_month: usd,
            iops_month: iops.map(|x| x.0),
            throughput_mibs_month: throughput.map(|x| x.0),
            note: (throughput.is_some() && cloud == Cloud::Azure).then(|| PER_MBPS_NOTE.into()),
            ..VolumePrice::unpriced(region, t, &source_of(cloud, paths, &used), &date)
        });
    }
    for (t, prices) in &k.tiers {
        let Some(vt) = embedded.volume_type(t) else {
            continue;
        };
        // Only a whole table: `catalog check` wants every tier of the type priced.
        if vt
            .size_tiers
            .iter()
            .flatten()
            .any(|x| !prices.contains_key(&x.size_gib))
        {
            continue;
        }
        let used: Vec<usize> = prices.values().map(|x| x.1).collect();
        cat.volume_prices.push(VolumePrice {
            tier_prices: Some(
                prices
                    .iter()
                    .map(|(s, u)| TierPrice {
                        size_gib: *s,
                        usd_month: u.0,
                    })
                    .collect(),
            ),
            ..VolumePrice::unpriced(region, t, &source_of(cloud, paths, &used), &date)
        });
    }
    for (name, &(usd, file)) in &k.hourly {
        cat.instance_prices.push(InstancePrice {
            region: region.to_string(),
            type_: name.clone(),
            usd_per_hour: usd,
            source: source_of(cloud, paths, &[file]),
            date: date.clone(),
            weak: false,
            note: None,
        });
    }
    // What is written must pass `catalog check` once merged over the embedded catalog (a type
    // whose rules need an IOPS price the list lacks is caught here).
    check_merged(embedded, &cat, path)?;
    let summary = Summary {
        cloud: cloud.name().into(),
        region: region.into(),
        files,
        items_read: k.items,
        volume_prices: cat.volume_prices.len(),
        instance_prices: cat.instance_prices.len(),
        date,
    };
    Ok((cat, summary))
}

/// Refreshes from `inputs` and writes the catalog to `out` atomically (nothing on error), dated
/// `today`: the stale-catalog warning counts from it, and an effective date (each price's) is
/// when a price last changed, often years back (QA: a file refreshed today warned as stale).
pub fn refresh_files(
    cloud: Cloud,
    inputs: &[std::path::PathBuf],
    region: &str,
    out: &Path,
    today: &str,
) -> Result<Summary, ImportError> {
    let mut readers = Vec::new();
    for p in inputs {
        let f = std::fs::File::open(p).map_err(|source| ImportError::Read {
            path: p.clone(),
            source,
        })?;
        readers.push((p.clone(), f));
    }
    let (mut cat, summary) = refresh(cloud, readers, region)?;
    cat.date = Some(today.to_string());
    let header = [
        format!(
            "Refreshed by: disktier catalog refresh {} {} --region {region}",
            cloud.name(),
            inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" "),
        ),
        super::use_it_with(out),
    ];
    super::write_atomically(&cat, &header, out)?;
    Ok(summary)
}

#[cfg(test)]
mod tests;
