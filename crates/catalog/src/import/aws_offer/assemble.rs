//! The catalog overlay assembled from what was kept: volume prices per type (tiers, IOPS and
//! throughput) and instance prices, checked before they are returned.

use super::offer::{Found, Kept, State, Summary};
use crate::import::check_merged;
use crate::import::ImportError;
use crate::model::{Catalog, Instance, InstancePrice, IopsTier, Region, VolumePrice};
use std::collections::BTreeMap;
use std::path::Path;

pub(super) fn per_unit(f: &Found) -> f64 {
    // Throughput is listed per GiBps-month; the catalog holds per MiB/s-month.
    if f.unit.to_ascii_lowercase().starts_with("gibps") {
        f.usd / 1024.0
    } else {
        f.usd
    }
}

/// The price each volume type's dimension ("storage", "IOPS", "IOPS tier 2", "throughput")
/// took, and its SKU.
type Priced<'a> = BTreeMap<(String, String), (&'a String, &'a Found)>;

/// Records `f` (of `sku`) as the price of `type_`'s `dim`; another SKU that prices the same
/// differently is an error naming both, one that prices it alike is taken as the same price.
/// True when this is the first SKU of the dimension.
fn once<'a>(
    priced: &mut Priced<'a>,
    path: &Path,
    (type_, dim): (&str, &str),
    sku: &'a String,
    f: &'a Found,
) -> Result<bool, ImportError> {
    let shown = |sku: &str, f: &Found| {
        format!(
            "SKU {} at {} USD per {}",
            crate::suggest::shown(sku),
            f.usd,
            crate::suggest::shown(&f.unit)
        )
    };
    match priced.get(&(type_.to_string(), dim.to_string())) {
        Some((sku0, f0)) if per_unit(f0).total_cmp(&per_unit(f)).is_ne() => {
            Err(ImportError::Conflict {
                path: path.to_path_buf(),
                what: format!("{} {dim}", crate::suggest::shown(type_)),
                first: shown(sku0, f0),
                second: shown(sku, f),
            })
        }
        Some(_) => Ok(false),
        None => {
            priced.insert((type_.to_string(), dim.to_string()), (sku, f));
            Ok(true)
        }
    }
}

pub(super) fn assemble(
    st: State,
    embedded: &Catalog,
    path: &Path,
) -> Result<(Catalog, Summary), ImportError> {
    let date = st
        .publication_date
        .as_deref()
        .map(|d| d.get(..10).unwrap_or(d).to_string())
        .filter(|d| d.len() == 10)
        .unwrap_or_else(today);
    // Escaped: the name goes into the catalog's source and note, which must be plain text on
    // one line (left item: a newline in the file name failed `catalog check` and advised the
    // user to "write plain text").
    let file = path
        .file_name()
        .map(|f| crate::suggest::printable(&f.to_string_lossy()))
        .unwrap_or_default();
    let source = format!(
        "AWS price list offer file {file} (publicationDate {}), imported by disktier",
        st.publication_date.as_deref().unwrap_or("unknown")
    );
    let mut vols: BTreeMap<String, VolumePrice> = BTreeMap::new();
    // The storage price each type took, with its SKU, for the error on an unusable one.
    let mut storage: BTreeMap<String, (&String, &Found)> = BTreeMap::new();
    let mut io_tiers: BTreeMap<String, Vec<(u8, Found)>> = BTreeMap::new();
    let mut instances = vec![];
    let mut instance_prices = vec![];
    let blank = |t: &str| VolumePrice::unpriced(st.region, t, &source, &date);
    let known_type = |t: &str| embedded.volume_type(t).is_some();
    // The price each type's dimension took, with its SKU: a second SKU of another price for
    // the same is refused, not taken in SKU order (QA: a second gp3 storage SKU at $0.20 in an
    // offer file replaced the region's $0.0836 without a word).
    let mut priced: Priced = BTreeMap::new();

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
                once(&mut priced, path, (type_, "storage"), sku, first)?;
                let v = vols.entry(type_.clone()).or_insert_with(|| blank(type_));
                v.storage_gb_month = first.usd;
                storage.insert(type_.clone(), (sku, first));
                v.offer_max_gib = *max_gib;
                v.offer_max_iops = *max_iops;
                v.offer_max_mibs = *max_mibs;
            }
            Kept::Iops { type_, tier } if known_type(type_) => {
                // A tier is priced once, as a dimension is: a second SKU of the same tier (QA:
                // a duplicated io2 tier SKU) is the same price or a conflict naming both, not a
                // second tier that failed `catalog check` with an internal message.
                if found.len() > 1 && found.iter().any(|f| f.begin.is_some()) {
                    // Tiers as ranges inside one SKU.
                    for (i, f) in found.iter().enumerate() {
                        let n = u8::try_from(i + 1).unwrap_or(u8::MAX);
                        if once(
                            &mut priced,
                            path,
                            (type_, &format!("IOPS tier {n}")),
                            sku,
                            f,
                        )? {
                            io_tiers
                                .entry(type_.clone())
                                .or_default()
                                .push((n, f.clone()));
                        }
                    }
                } else if *tier > 1 || type_ == "io2" {
                    let dim = format!("IOPS tier {tier}");
                    if once(&mut priced, path, (type_, &dim), sku, first)? {
                        io_tiers
                            .entry(type_.clone())
                            .or_default()
                            .push((*tier, first.clone()));
                    }
                } else {
                    once(&mut priced, path, (type_, "IOPS"), sku, first)?;
                    vols.entry(type_.clone())
                        .or_insert_with(|| blank(type_))
                        .iops_month = Some(first.usd);
                }
            }
            Kept::Throughput { type_ } if known_type(type_) => {
                once(&mut priced, path, (type_, "throughput"), sku, first)?;
                vols.entry(type_.clone())
                    .or_insert_with(|| blank(type_))
                    .throughput_mibs_month = Some(per_unit(first));
            }
            Kept::Instance { name, store } => {
                let Some(per_hour) = found.iter().find(|f| f.unit.starts_with("Hr")) else {
                    continue;
                };
                let hourly = per_hour.usd;
                if hourly <= 0.0 {
                    continue;
                }
                // As for volumes: a second SKU of another price for the same instance type is
                // refused (QA: the first in SKU order was kept, the other dropped unsaid).
                once(&mut priced, path, (name, "instance hours"), sku, per_hour)?;
                if instances.iter().any(|i: &Instance| &i.name == name) {
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
    // A storage price that is no price (NaN, zero, negative) is named, not dropped: dropped, it
    // left "no EBS prices" with a wrong reason (QA).
    if let Some((t, (sku, f))) = storage
        .iter()
        .find(|(_, (_, f))| !(f.usd.is_finite() && f.usd > 0.0))
    {
        return Err(ImportError::UnusablePrice {
            path: path.to_path_buf(),
            what: format!("{t} storage (SKU {})", crate::suggest::shown(sku)),
            value: format!("{} USD per {}", f.usd, crate::suggest::shown(&f.unit)),
        });
    }
    // A type with a storage price is what makes an entry; IOPS or throughput alone are dropped.
    let volume_prices: Vec<VolumePrice> = vols
        .into_values()
        .filter(|v| storage.contains_key(&v.type_))
        .collect();
    if volume_prices.is_empty() && instance_prices.is_empty() {
        return Err(ImportError::NoPrices {
            path: path.to_path_buf(),
            // What the user and the file wrote, escaped: an error never prints them raw.
            region: crate::suggest::shown(st.region),
            seen: st
                .regions_seen
                .iter()
                .map(|r| crate::suggest::shown(r))
                .collect(),
            currencies: st.currencies.iter().cloned().collect(),
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
    check_merged(embedded, &cat, path)?;
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
