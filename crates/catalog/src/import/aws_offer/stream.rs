//! The streaming read: `DeserializeSeed`s over the top-level object, the products and the
//! on-demand terms, and which products are kept.

use super::offer::{Found, Kept, Product, State, Term};
use crate::model::Store;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// Seeds that read one JSON object into the import's [`State`], each through its [`Visitor`].
macro_rules! object_seeds {
    ($($vis:vis $name:ident),* $(,)?) => {$(
        $vis struct $name<'s, 'a> {
            pub(super) st: &'s mut State<'a>,
        }

        impl<'de> DeserializeSeed<'de> for $name<'_, '_> {
            type Value = ();
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_map(self)
            }
        }
    )*};
}

object_seeds!(pub(super) TopSeed, ProductsSeed, TermsSeed, OnDemandSeed);

/// The next key of `map`, built within the item budget (a key is held in memory).
fn next_key<'de, A: MapAccess<'de>>(st: &State, map: &mut A) -> Result<Option<String>, A::Error> {
    st.budget.arm();
    let k = map.next_key::<String>();
    st.budget.disarm();
    k
}

/// The next value of `map`, built in memory within the item budget.
fn built<'de, T: serde::Deserialize<'de>, A: MapAccess<'de>>(
    st: &State,
    map: &mut A,
) -> Result<T, A::Error> {
    st.budget.arm();
    let v = map.next_value::<T>();
    st.budget.disarm();
    v
}

impl<'de> Visitor<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an AWS offer file object with \"products\" and \"terms\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = next_key(self.st, &mut map)? {
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
                "publicationDate" => self.st.publication_date = Some(built(self.st, &mut map)?),
                "version" => self.st.version = Some(built(self.st, &mut map)?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for ProductsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"products\" as an object of SKU to {productFamily, attributes}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(sku) = next_key(self.st, &mut map)? {
            let p: Product = built(self.st, &mut map)?;
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

impl<'de> Visitor<'de> for TermsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"terms\" as an object with \"OnDemand\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = next_key(self.st, &mut map)? {
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

impl<'de> Visitor<'de> for OnDemandSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"OnDemand\" as an object of SKU to {offerTermCode: {priceDimensions}}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(sku) = next_key(self.st, &mut map)? {
            // Once the products are known, prices of other SKUs are skipped unbuilt.
            if self.st.products_done && !self.st.kept.contains_key(&sku) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let terms: BTreeMap<String, Term> = built(self.st, &mut map)?;
            let ours = self.st.kept.contains_key(&sku);
            let found = self.st.prices.entry(sku).or_default();
            for term in terms.into_values() {
                for dim in term.price_dimensions.into_values() {
                    let Some(usd) = dim.price_per_unit.get("USD") else {
                        if ours {
                            for code in dim.price_per_unit.keys() {
                                crate::import::saw_currency(&mut self.st.currencies, code);
                            }
                        }
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
pub(super) fn parse_size_gib(s: &str) -> Option<u64> {
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
pub(super) fn parse_count(s: &str) -> Option<u64> {
    let digits: String = s
        .replace(',', "")
        .split_whitespace()
        .find(|w| w.chars().all(|c| c.is_ascii_digit()))?
        .to_string();
    digits.parse().ok()
}

/// "1000 MiB/s", "250 MiB/s", "1,000 MB/s" -> MiB/s.
pub(super) fn parse_mibs(s: &str) -> Option<f64> {
    let s = s.replace(',', "");
    let mut it = s.split_whitespace();
    let n: f64 = it.next()?.parse().ok()?;
    match it.next().map(|u| u.to_ascii_lowercase()) {
        Some(u) if u.starts_with("gib") || u.starts_with("gb") => Some(n * 1024.0),
        _ => Some(n),
    }
}

/// "1 x 237 NVMe SSD", "2 x 1900 NVMe SSD", "1 x 475 NVMe SSD" -> Store; "EBS only" -> none.
pub(super) fn parse_store(s: &str) -> Option<Store> {
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
