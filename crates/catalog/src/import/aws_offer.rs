//! AWS's bulk price list offer file (`.../offers/v1.0/aws/AmazonEC2/<version>/<region>/index.json`),
//! read as a stream: a `DeserializeSeed` walks the top-level object, keeps only the products that
//! matter (EBS storage, provisioned IOPS and throughput, Linux on-demand instances of the region)
//! and only their on-demand prices, and skips everything else without building it. Memory stays
//! bounded by the kept products, not by the file (the real file is tens of MB).
//!
//! Format (docs/sources.md [aws-price-list]): `products{sku: {productFamily, attributes}}` and
//! `terms.OnDemand[sku][offerTermCode].priceDimensions[*].{unit, pricePerUnit.USD}`.

use super::ImportError;
use crate::check;
use crate::model::{Catalog, Instance, InstancePrice, IopsTier, Region, Store, VolumePrice};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// What one kept product is.
#[derive(Debug, Clone, PartialEq)]
enum Kept {
    Storage {
        type_: String,
        max_gib: Option<u64>,
        max_iops: Option<u64>,
        max_mibs: Option<f64>,
    },
    /// Provisioned IOPS; `tier` 1.. for io2's tiered usagetypes.
    Iops {
        type_: String,
        tier: u8,
    },
    Throughput {
        type_: String,
    },
    Instance {
        name: String,
        store: Option<Store>,
    },
}

/// A price dimension as the offer file has it.
#[derive(Debug, Clone, Deserialize)]
struct Dimension {
    #[serde(default)]
    unit: String,
    #[serde(rename = "pricePerUnit", default)]
    price_per_unit: BTreeMap<String, String>,
    #[serde(rename = "beginRange", default)]
    begin_range: Option<String>,
    #[serde(rename = "endRange", default)]
    end_range: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Term {
    #[serde(rename = "priceDimensions", default)]
    price_dimensions: BTreeMap<String, Dimension>,
}

#[derive(Debug, Deserialize)]
struct Product {
    #[serde(rename = "productFamily", default)]
    product_family: Option<String>,
    #[serde(default)]
    attributes: BTreeMap<String, String>,
}

/// A USD price found for a kept SKU.
#[derive(Debug, Clone)]
struct Found {
    unit: String,
    usd: f64,
    begin: Option<u64>,
    end: Option<u64>,
}

struct State<'a> {
    region: &'a str,
    /// The usagetype prefix of the region ("EUN1-"); used when products carry no regionCode.
    prefix: Option<String>,
    kept: HashMap<String, Kept>,
    prices: HashMap<String, Vec<Found>>,
    /// The products section has been read: prices of other SKUs are skipped unbuilt.
    products_done: bool,
    /// 1, or 2 when the terms came before the products and the file is read again for them.
    pass: u8,
    /// The first pass met the terms before the products and skipped them.
    deferred_terms: bool,
    regions_seen: BTreeSet<String>,
    saw_products: bool,
    saw_terms: bool,
    publication_date: Option<String>,
    version: Option<String>,
    skipped: usize,
}

/// What an import found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    pub region: String,
    pub volume_prices: usize,
    pub instances: usize,
    pub instance_prices: usize,
    pub products_skipped: usize,
    pub publication_date: Option<String>,
}

/// Reads an offer file from `reader` (streaming) and returns the catalog overlay for `region`.
/// A stream whose terms come before its products cannot be read twice: that is an error
/// (save it to a file and use [`import_from`]).
pub fn import<R: Read>(
    reader: R,
    path: &Path,
    region: &str,
) -> Result<(Catalog, Summary), ImportError> {
    let mut once = Some(reader);
    import_from(
        || {
            once.take().ok_or_else(|| {
                std::io::Error::other(
                    "its terms come before its products, and a stream cannot be read twice: save it to a file and import that",
                )
            })
        },
        path,
        region,
    )
}

/// Reads an offer file that `open` can open again: memory stays bounded by the kept products
/// whatever the order of the file's sections. When the terms come first, the first pass skips
/// them unbuilt and a second pass reads only the kept products' prices.
pub fn import_from<R: Read>(
    mut open: impl FnMut() -> std::io::Result<R>,
    path: &Path,
    region: &str,
) -> Result<(Catalog, Summary), ImportError> {
    let embedded = Catalog::embedded();
    let prefix = embedded
        .region(region)
        .map(|r| r.usage_prefix.clone().unwrap_or_default());
    let mut st = State {
        region,
        prefix,
        kept: HashMap::new(),
        prices: HashMap::new(),
        products_done: false,
        pass: 1,
        deferred_terms: false,
        regions_seen: BTreeSet::new(),
        saw_products: false,
        saw_terms: false,
        publication_date: None,
        version: None,
        skipped: 0,
    };
    let read_err = |source: std::io::Error| ImportError::Read {
        path: path.to_path_buf(),
        source,
    };
    pass(open().map_err(read_err)?, path, &mut st)?;
    if st.deferred_terms && st.saw_products {
        st.pass = 2;
        st.saw_terms = false;
        pass(open().map_err(read_err)?, path, &mut st)?;
    }
    if !st.saw_products {
        return Err(ImportError::Shape {
            path: path.to_path_buf(),
            message: "no \"products\" section".into(),
        });
    }
    if !st.saw_terms {
        return Err(ImportError::Shape {
            path: path.to_path_buf(),
            message: "no \"terms\" section with \"OnDemand\" prices".into(),
        });
    }
    assemble(st, &embedded, path)
}

/// One pass of the JSON deserializer over the file.
fn pass<R: Read>(reader: R, path: &Path, st: &mut State) -> Result<(), ImportError> {
    let mut de =
        serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 16, reader));
    let res = TopSeed { st }.deserialize(&mut de).and_then(|_| de.end());
    if let Err(e) = res {
        let message = e.to_string();
        return Err(if e.is_data() {
            ImportError::Shape {
                path: path.to_path_buf(),
                message,
            }
        } else if e.is_io() {
            ImportError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::other(message),
            }
        } else {
            ImportError::Json {
                path: path.to_path_buf(),
                message,
            }
        });
    }
    Ok(())
}

/// Imports `input` and writes the catalog to `out` atomically (nothing is written on error).
pub fn import_file(input: &Path, region: &str, out: &Path) -> Result<Summary, ImportError> {
    let (cat, summary) = import_from(|| std::fs::File::open(input), input, region)?;
    let header = format!(
        "# Imported by `disktier catalog import aws-offer {} --region {region}`.\n# Use it with `disktier --catalog {} ...`; entries replace the embedded ones by region + type.\n\n",
        input.display(),
        out.display()
    );
    super::write_atomically(&cat, &header, out)?;
    Ok(summary)
}

struct TopSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an AWS offer file object with \"products\" and \"terms\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "products" if self.st.pass == 2 => {
                    map.next_value::<IgnoredAny>()?;
                }
                "products" => {
                    self.st.saw_products = true;
                    map.next_value_seed(ProductsSeed { st: self.st })?;
                    self.st.products_done = true;
                }
                "terms" if !self.st.products_done => {
                    // Which SKUs matter is not known yet: skip the terms unbuilt and read them
                    // in a second pass (keeping every SKU's prices is unbounded memory).
                    self.st.deferred_terms = true;
                    self.st.saw_terms = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "terms" => {
                    map.next_value_seed(TermsSeed { st: self.st })?;
                }
                "publicationDate" => self.st.publication_date = Some(map.next_value()?),
                "version" => self.st.version = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct ProductsSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de> DeserializeSeed<'de> for ProductsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ProductsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"products\" as an object of SKU to {productFamily, attributes}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(sku) = map.next_key::<String>()? {
            let p: Product = map.next_value()?;
            match classify(self.st, &p) {
                Some(k) => {
                    self.st.kept.insert(sku, k);
                }
                None => self.st.skipped += 1,
            }
        }
        Ok(())
    }
}

struct TermsSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de> DeserializeSeed<'de> for TermsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TermsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"terms\" as an object with \"OnDemand\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "OnDemand" {
                self.st.saw_terms = true;
                map.next_value_seed(OnDemandSeed { st: self.st })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct OnDemandSeed<'s, 'a> {
    st: &'s mut State<'a>,
}

impl<'de> DeserializeSeed<'de> for OnDemandSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OnDemandSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"OnDemand\" as an object of SKU to {offerTermCode: {priceDimensions}}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(sku) = map.next_key::<String>()? {
            // Once the products are known, prices of other SKUs are skipped unbuilt.
            if self.st.products_done && !self.st.kept.contains_key(&sku) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let terms: BTreeMap<String, Term> = map.next_value()?;
            let found = self.st.prices.entry(sku).or_default();
            for term in terms.into_values() {
                for dim in term.price_dimensions.into_values() {
                    let Some(usd) = dim.price_per_unit.get("USD") else {
                        continue;
                    };
                    let Ok(usd) = usd.trim().parse::<f64>() else {
                        continue;
                    };
                    found.push(Found {
                        unit: dim.unit,
                        usd,
                        begin: dim.begin_range.as_deref().and_then(parse_range),
                        end: dim.end_range.as_deref().and_then(parse_range),
                    });
                }
            }
        }
        Ok(())
    }
}

fn parse_range(s: &str) -> Option<u64> {
    if s.eq_ignore_ascii_case("inf") {
        return None;
    }
    s.trim().parse::<f64>().ok().map(|x| x as u64)
}

/// Decides whether a product matters for `st.region` and what it is.
fn classify(st: &mut State, p: &Product) -> Option<Kept> {
    let a = &p.attributes;
    let usage = a.get("usagetype").map(String::as_str).unwrap_or("");
    if let Some(code) = a.get("regionCode") {
        if st.regions_seen.len() < 64 {
            st.regions_seen.insert(code.clone());
        }
        if code != st.region {
            return None;
        }
    } else {
        // No regionCode (older files): the usagetype's prefix tells the region ("EUN1-EBS:...").
        let own = usage.split_once('-').map(|(p, _)| p).filter(|p| {
            p.len() <= 5
                && p.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        });
        match (&st.prefix, own) {
            (Some(pre), Some(o)) if pre.trim_end_matches('-') == o => {}
            (Some(pre), None) if pre.is_empty() => {}
            (_, Some(o)) => {
                if st.regions_seen.len() < 64 {
                    st.regions_seen.insert(format!("usagetype prefix {o}-"));
                }
                return None;
            }
            _ => return None,
        }
    }
    let family = p.product_family.as_deref().unwrap_or("");
    let after = usage.split_once("EBS:").map(|(_, r)| r).unwrap_or("");
    match family {
        "Storage" => {
            let t = a.get("volumeApiName")?.clone();
            Some(Kept::Storage {
                type_: t,
                max_gib: a.get("maxVolumeSize").and_then(|s| parse_size_gib(s)),
                max_iops: a.get("maxIopsvolume").and_then(|s| parse_count(s)),
                max_mibs: a.get("maxThroughputvolume").and_then(|s| parse_mibs(s)),
            })
        }
        "System Operation" => {
            let rest = after.strip_prefix("VolumeP-IOPS.")?;
            let (name, tier) = match rest.split_once(".tier") {
                Some((n, t)) => (n, t.parse::<u8>().ok()?),
                None => (rest, 1),
            };
            let type_ = if name == "piops" { "io1" } else { name };
            Some(Kept::Iops {
                type_: type_.to_string(),
                tier,
            })
        }
        "Provisioned Throughput" => {
            let t = after.strip_prefix("VolumeP-Throughput.")?;
            Some(Kept::Throughput {
                type_: t.to_string(),
            })
        }
        "Compute Instance" => {
            let is = |k: &str, v: &str| a.get(k).is_none_or(|x| x == v);
            if !(a.get("operatingSystem").is_some_and(|x| x == "Linux")
                && is("tenancy", "Shared")
                && is("preInstalledSw", "NA")
                && is("capacitystatus", "Used")
                && is("licenseModel", "No License required"))
            {
                return None;
            }
            let name = a.get("instanceType")?.clone();
            let store = a.get("storage").and_then(|s| parse_store(s));
            Some(Kept::Instance { name, store })
        }
        _ => None,
    }
}

/// "16 TiB", "1 TiB", "16384 GiB", "64 TiB" -> GiB.
fn parse_size_gib(s: &str) -> Option<u64> {
    let s = s.replace(',', "");
    let mut it = s.split_whitespace();
    let n: f64 = it.next()?.parse().ok()?;
    let mult = match it.next().unwrap_or("GiB").to_ascii_lowercase().as_str() {
        "tib" | "tb" => 1024.0,
        "gib" | "gb" => 1.0,
        _ => return None,
    };
    Some((n * mult) as u64)
}

/// "16000", "16,000", "16000 IOPS", "Up to 16000" -> 16000.
fn parse_count(s: &str) -> Option<u64> {
    let digits: String = s
        .replace(',', "")
        .split_whitespace()
        .find(|w| w.chars().all(|c| c.is_ascii_digit()))?
        .to_string();
    digits.parse().ok()
}

/// "1000 MiB/s", "250 MiB/s", "1,000 MB/s" -> MiB/s.
fn parse_mibs(s: &str) -> Option<f64> {
    let s = s.replace(',', "");
    let mut it = s.split_whitespace();
    let n: f64 = it.next()?.parse().ok()?;
    match it.next().map(|u| u.to_ascii_lowercase()) {
        Some(u) if u.starts_with("gib") || u.starts_with("gb") => Some(n * 1024.0),
        _ => Some(n),
    }
}

/// "1 x 237 NVMe SSD", "2 x 1900 NVMe SSD", "1 x 475 NVMe SSD" -> Store; "EBS only" -> none.
fn parse_store(s: &str) -> Option<Store> {
    let (count, rest) = s.split_once(" x ")?;
    let count: u32 = count.trim().parse().ok()?;
    let size: u64 = rest
        .split_whitespace()
        .next()?
        .replace(',', "")
        .parse()
        .ok()?;
    Some(Store {
        count,
        size_gb: size,
    })
}

fn per_unit(f: &Found) -> f64 {
    // Throughput is listed per GiBps-month; the catalog holds per MiB/s-month.
    if f.unit.to_ascii_lowercase().starts_with("gibps") {
        f.usd / 1024.0
    } else {
        f.usd
    }
}

fn assemble(st: State, embedded: &Catalog, path: &Path) -> Result<(Catalog, Summary), ImportError> {
    let date = st
        .publication_date
        .as_deref()
        .map(|d| d.get(..10).unwrap_or(d).to_string())
        .filter(|d| d.len() == 10)
        .unwrap_or_else(today);
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let source = format!(
        "AWS price list offer file {file} (publicationDate {}), imported by disktier",
        st.publication_date.as_deref().unwrap_or("unknown")
    );
    let mut vols: BTreeMap<String, VolumePrice> = BTreeMap::new();
    let mut io_tiers: BTreeMap<String, Vec<(u8, Found)>> = BTreeMap::new();
    let mut instances = vec![];
    let mut instance_prices = vec![];
    let blank = |t: &str| VolumePrice {
        region: st.region.to_string(),
        type_: t.to_string(),
        storage_gb_month: 0.0,
        tier_prices: None,
        iops_month: None,
        iops_tiers: None,
        throughput_mibs_month: None,
        offer_max_gib: None,
        offer_max_iops: None,
        offer_max_mibs: None,
        source: source.clone(),
        date: date.clone(),
        weak: false,
        note: None,
    };
    let known_type = |t: &str| embedded.volume_type(t).is_some();
    // Deterministic order: by SKU.
    let mut kept: Vec<(&String, &Kept)> = st.kept.iter().collect();
    kept.sort_by(|a, b| a.0.cmp(b.0));
    for (sku, k) in kept {
        let Some(found) = st.prices.get(sku).filter(|f| !f.is_empty()) else {
            continue;
        };
        let first = &found[0];
        match k {
            Kept::Storage {
                type_,
                max_gib,
                max_iops,
                max_mibs,
            } if known_type(type_) => {
                let v = vols.entry(type_.clone()).or_insert_with(|| blank(type_));
                v.storage_gb_month = first.usd;
                v.offer_max_gib = *max_gib;
                v.offer_max_iops = *max_iops;
                v.offer_max_mibs = *max_mibs;
            }
            Kept::Iops { type_, tier } if known_type(type_) => {
                if found.len() > 1 && found.iter().any(|f| f.begin.is_some()) {
                    // Tiers as ranges inside one SKU.
                    for (i, f) in found.iter().enumerate() {
                        io_tiers
                            .entry(type_.clone())
                            .or_default()
                            .push((i as u8 + 1, f.clone()));
                    }
                } else if *tier > 1 || type_ == "io2" {
                    io_tiers
                        .entry(type_.clone())
                        .or_default()
                        .push((*tier, first.clone()));
                } else {
                    vols.entry(type_.clone())
                        .or_insert_with(|| blank(type_))
                        .iops_month = Some(first.usd);
                }
            }
            Kept::Throughput { type_ } if known_type(type_) => {
                vols.entry(type_.clone())
                    .or_insert_with(|| blank(type_))
                    .throughput_mibs_month = Some(per_unit(first));
            }
            Kept::Instance { name, store } => {
                let Some(hourly) = found
                    .iter()
                    .find(|f| f.unit.starts_with("Hr"))
                    .map(|f| f.usd)
                else {
                    continue;
                };
                if hourly <= 0.0 || instances.iter().any(|i: &Instance| &i.name == name) {
                    continue;
                }
                // Keep the embedded catalog's IOPS figures for the same store.
                let known = embedded.instance(name).filter(|i| i.store == *store);
                instances.push(Instance {
                    name: name.clone(),
                    cloud: "aws".into(),
                    store: store.clone(),
                    store_read_iops: known.and_then(|i| i.store_read_iops),
                    store_write_iops: known.and_then(|i| i.store_write_iops),
                    store_throughput_mbps: known.and_then(|i| i.store_throughput_mbps),
                    local_ssd_counts: None,
                    source: source.clone(),
                    date: date.clone(),
                    weak: known.is_some_and(|i| i.weak && i.store_read_iops.is_some()),
                });
                instance_prices.push(InstancePrice {
                    region: st.region.to_string(),
                    type_: name.clone(),
                    usd_per_hour: hourly,
                    source: source.clone(),
                    date: date.clone(),
                    weak: false,
                    note: None,
                });
            }
            _ => {}
        }
    }
    for (t, mut tiers) in io_tiers {
        tiers.sort_by_key(|(n, _)| *n);
        // Tier bounds: the file's ranges when it has them, else io2's published brackets
        // (32,000 and 64,000 IOPS; docs/sources.md [aws-ebs-pricing]).
        let defaults = [Some(32000u64), Some(64000u64)];
        let n = tiers.len();
        let list: Vec<IopsTier> = tiers
            .iter()
            .enumerate()
            .map(|(i, (_, f))| IopsTier {
                up_to: if i + 1 == n {
                    None
                } else {
                    f.end.or(defaults.get(i).copied().flatten())
                },
                usd: f.usd,
                weak: false,
            })
            .collect();
        let v = vols.entry(t.clone()).or_insert_with(|| blank(&t));
        if list.len() == 1 {
            v.iops_month = Some(list[0].usd);
        } else {
            v.iops_tiers = Some(list);
        }
    }
    // A type with a storage price is what makes an entry; IOPS or throughput alone are dropped.
    let volume_prices: Vec<VolumePrice> = vols
        .into_values()
        .filter(|v| v.storage_gb_month > 0.0)
        .collect();
    if volume_prices.is_empty() && instance_prices.is_empty() {
        return Err(ImportError::NoPrices {
            path: path.to_path_buf(),
            region: st.region.to_string(),
            seen: st
                .regions_seen
                .iter()
                .filter(|r| r.as_str() != st.region)
                .cloned()
                .collect(),
        });
    }
    let region = embedded.region(st.region).cloned().map(|mut r| {
        r.weak = false;
        r.note = Some(format!("imported from {file}"));
        r
    });
    let region = region.unwrap_or(Region {
        name: st.region.to_string(),
        cloud: "aws".into(),
        weak: false,
        usage_prefix: None,
        note: Some(format!("imported from {file}")),
    });
    let cat = Catalog {
        version: Some(format!(
            "aws-offer-{}",
            st.version.clone().unwrap_or_else(|| date.clone())
        )),
        date: Some(date),
        source: Some(source),
        regions: vec![region],
        volume_types: vec![],
        volume_prices,
        instances,
        instance_prices,
    };
    // What is written must pass `catalog check` once merged over the embedded catalog.
    let mut merged = embedded.clone();
    merged.merge(cat.clone());
    let report = check::check(&merged);
    if !report.ok() {
        return Err(ImportError::Check {
            path: path.to_path_buf(),
            problems: report.problems,
        });
    }
    let summary = Summary {
        region: st.region.to_string(),
        volume_prices: cat.volume_prices.len(),
        instances: cat.instances.len(),
        instance_prices: cat.instance_prices.len(),
        products_skipped: st.skipped,
        publication_date: st.publication_date.clone(),
    };
    Ok((cat, summary))
}

/// Today as YYYY-MM-DD (UTC), for files without a publicationDate.
fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(json: &str, region: &str) -> Result<(Catalog, Summary), ImportError> {
        import_from(|| Ok(json.as_bytes()), Path::new("inline.json"), region)
    }

    fn term(sku: &str, unit: &str, usd: &str) -> String {
        format!(
            r#""{sku}": {{"{sku}.JRTCKXETXF": {{"priceDimensions": {{"{sku}.JRTCKXETXF.6YS6EN2CT7": {{"unit": "{unit}", "pricePerUnit": {{"USD": "{usd}"}}}}}}}}}}"#
        )
    }

    #[test]
    fn terms_before_products_and_usagetype_prefixes_without_region_code() {
        // Older files carry no regionCode: the usagetype prefix decides ("EUN1-" is eu-north-1,
        // none is us-east-1). Terms may come first: their prices wait for the products.
        let json = format!(
            r#"{{"terms": {{"OnDemand": {{{}, {}}}}},
               "products": {{
                 "A": {{"productFamily": "Storage", "attributes": {{"usagetype": "EUN1-EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}},
                 "B": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}
               }},
               "publicationDate": "2026-07-01T00:00:00Z"}}"#,
            term("A", "GB-Mo", "0.0475"),
            term("B", "GB-Mo", "0.045")
        );
        let (cat, _) = run(&json, "eu-north-1").unwrap();
        assert_eq!(cat.volume_prices.len(), 1);
        assert_eq!(cat.volume_prices[0].storage_gb_month, 0.0475);
        let (cat, _) = run(&json, "us-east-1").unwrap();
        assert_eq!(cat.volume_prices[0].storage_gb_month, 0.045);
        assert_eq!(cat.date.as_deref(), Some("2026-07-01"));
    }

    /// Terms first in a stream that cannot be read twice: a clear error, not every SKU's
    /// prices held in memory (#13).
    #[test]
    fn terms_first_in_a_stream_is_an_error_and_in_a_file_two_passes() {
        let json = format!(
            r#"{{"terms": {{"OnDemand": {{{}, {}}}}},
               "products": {{"B": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}}}}}"#,
            term("B", "GB-Mo", "0.045"),
            term("UNRELATED", "Hrs", "9.99")
        );
        let e = import(json.as_bytes(), Path::new("-"), "us-east-1").unwrap_err();
        // The error wraps its cause (shown once, by the chain): read the whole chain.
        let chain = format!(
            "{e}: {}",
            std::error::Error::source(&e)
                .map(|s| s.to_string())
                .unwrap_or_default()
        );
        assert!(chain.contains("save it to a file"), "{chain}");
        let mut opened = 0;
        let (cat, _) = import_from(
            || {
                opened += 1;
                Ok(json.as_bytes())
            },
            Path::new("f.json"),
            "us-east-1",
        )
        .unwrap();
        assert_eq!(opened, 2);
        assert_eq!(cat.volume_prices[0].storage_gb_month, 0.045);
        // Products first: one pass.
        let json = format!(
            r#"{{"products": {{"B": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}}}, "terms": {{"OnDemand": {{{}}}}}}}"#,
            term("B", "GB-Mo", "0.045")
        );
        let mut opened = 0;
        import_from(
            || {
                opened += 1;
                Ok(json.as_bytes())
            },
            Path::new("f.json"),
            "us-east-1",
        )
        .unwrap();
        assert_eq!(opened, 1);
    }

    #[test]
    fn an_incomplete_price_list_fails_check_and_is_not_written() {
        // gp3 storage without its IOPS and throughput prices: `catalog check` would fail.
        let json = format!(
            r#"{{"products": {{"A": {{"productFamily": "Storage", "attributes": {{"regionCode": "us-east-1", "usagetype": "EBS:VolumeUsage.gp3", "volumeApiName": "gp3"}}}}}},
               "terms": {{"OnDemand": {{{}}}}}}}"#,
            term("A", "GB-Mo", "0.08")
        );
        let e = run(&json, "us-east-1").unwrap_err();
        assert!(e.to_string().contains("no IOPS price"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.json");
        std::fs::write(&input, json).unwrap();
        let out = dir.path().join("out.toml");
        assert!(import_file(&input, "us-east-1", &out).is_err());
        assert!(!out.exists());
    }

    #[test]
    fn parses_free_text_attributes() {
        assert_eq!(parse_size_gib("16 TiB"), Some(16384));
        assert_eq!(parse_size_gib("64 TiB"), Some(65536));
        assert_eq!(parse_count("16,000"), Some(16000));
        assert_eq!(parse_count("Up to 256000 IOPS"), Some(256000));
        assert_eq!(parse_mibs("1,000 MiB/s"), Some(1000.0));
        assert_eq!(
            parse_store("2 x 1900 NVMe SSD"),
            Some(Store {
                count: 2,
                size_gb: 1900
            })
        );
        assert_eq!(parse_store("EBS only"), None);
    }
}
