//! `disktier catalog check`: every price has a source and a date, ranges are sane, no duplicates,
//! prices refer to known regions and types of the same cloud, and rules are consistent with
//! the prices (a provisioned dimension has a price; a price list's stated limits agree).

use crate::fmt::{a, as_read, int, num};
use crate::model::{
    Catalog, Instance, IopsRule, ProvisionedIops, ProvisionedThroughput, Region, ThroughputRule,
    VolumeType,
};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// What `check` found: problems fail the check, warnings do not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub problems: Vec<String>,
    pub warnings: Vec<String>,
    /// Entries checked, per section.
    pub counted: Counted,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counted {
    pub regions: usize,
    pub volume_types: usize,
    pub volume_prices: usize,
    pub instances: usize,
    pub instance_prices: usize,
    pub weak_prices: usize,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

const CLOUDS: [&str; 3] = ["aws", "gcp", "azure"];

/// `YYYY-MM` or `YYYY-MM-DD`.
fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let digits = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
    match parts.as_slice() {
        [y, m] => digits(y, 4) && digits(m, 2) && (1..=12).contains(&m.parse::<u32>().unwrap_or(0)),
        [y, m, d] => {
            digits(y, 4)
                && digits(m, 2)
                && digits(d, 2)
                && (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
                && (1..=31).contains(&d.parse::<u32>().unwrap_or(0))
        }
        _ => false,
    }
}

fn dated(p: &mut Vec<String>, what: &str, source: &str, date: &str) {
    if source.trim().is_empty() {
        p.push(format!(
            "{what}: no source (say where the figure comes from)"
        ));
    }
    if date.trim().is_empty() {
        p.push(format!("{what}: no date"));
    } else if !is_date(date) {
        p.push(format!(
            "{what}: date '{date}' is not YYYY-MM or YYYY-MM-DD"
        ));
    }
}

fn dup(p: &mut Vec<String>, seen: &mut HashSet<String>, key: String, what: &str) {
    if !seen.insert(key.clone()) {
        p.push(format!("{what} {key} appears twice"));
    }
}

/// The catalog's regions, types and instances by name (the first of a name, as
/// [`Catalog::region`] finds it), so that checking each price against them stays linear (QA: an
/// overlay of 60,000 regions and 60,000 prices, 11.6 MB, took 51 s to check, scanning the
/// regions once per price).
struct Index<'c> {
    regions: HashMap<&'c str, &'c Region>,
    types: HashMap<&'c str, &'c VolumeType>,
    instances: HashMap<&'c str, &'c Instance>,
}

impl<'c> Index<'c> {
    fn new(cat: &'c Catalog) -> Self {
        fn by_name<'c, T>(
            items: &'c [T],
            name: impl Fn(&'c T) -> &'c str,
        ) -> HashMap<&'c str, &'c T> {
            let mut m = HashMap::new();
            for x in items {
                m.entry(name(x)).or_insert(x);
            }
            m
        }
        Index {
            regions: by_name(&cat.regions, |r| r.name.as_str()),
            types: by_name(&cat.volume_types, |t| t.name.as_str()),
            instances: by_name(&cat.instances, |i| i.name.as_str()),
        }
    }

    fn region(&self, name: &str) -> Option<&'c Region> {
        self.regions.get(name).copied()
    }
}

/// One table of the catalog (`kind`: "volume type", "volume price", ...) and the keys seen in it.
struct Rows<'c, 'i> {
    index: &'i Index<'c>,
    kind: &'static str,
    seen: HashSet<String>,
}

impl<'c, 'i> Rows<'c, 'i> {
    fn new(index: &'i Index<'c>, kind: &'static str) -> Self {
        Rows {
            index,
            kind,
            seen: HashSet::new(),
        }
    }

    /// The checks every named row (a type, an instance) gets: listed once, dated. Returns its
    /// name for messages ("volume type gp3").
    fn named(&mut self, p: &mut Vec<String>, name: &str, (source, date): (&str, &str)) -> String {
        let what = format!("{} {name}", self.kind);
        dup(p, &mut self.seen, name.to_string(), self.kind);
        dated(p, &what, source, date);
        what
    }

    /// The checks every price row gets: listed once, dated, in a known region. Returns its name
    /// for messages ("price of gp3 in us-east-1").
    fn price(
        &mut self,
        p: &mut Vec<String>,
        (region, type_): (&str, &str),
        (source, date): (&str, &str),
    ) -> String {
        let what = format!("price of {type_} in {region}");
        dup(p, &mut self.seen, format!("{region}/{type_}"), self.kind);
        dated(p, &what, source, date);
        if self.index.region(region).is_none() {
            p.push(format!("{what}: region {region} is not in the catalog"));
        }
        what
    }
}

/// Validates a (merged) catalog.
pub fn check(cat: &Catalog) -> Report {
    let index = Index::new(cat);
    let mut p = vec![];
    let mut w = vec![];
    let mut counted = Counted::default();

    match &cat.version {
        Some(v) if !v.trim().is_empty() => {}
        _ => p.push("catalog: no top-level version".into()),
    }
    match &cat.date {
        Some(d) if is_date(d) => {}
        Some(d) => p.push(format!("catalog: date '{d}' is not YYYY-MM or YYYY-MM-DD")),
        None => p.push("catalog: no top-level date".into()),
    }
    // What a loaded file has already passed; an imported or merged catalog may not have.
    p.extend(
        crate::entries::control_characters(cat)
            .iter()
            .map(|b| format!("{b}: write plain text on one line")),
    );
    p.extend(crate::validate::numbers(cat).iter().map(|b| b.to_string()));

    let mut seen = HashSet::new();
    for r in &cat.regions {
        counted.regions += 1;
        dup(&mut p, &mut seen, r.name.clone(), "region");
        if !CLOUDS.contains(&r.cloud.as_str()) {
            p.push(format!(
                "region {}: unknown cloud '{}' (aws, gcp or azure)",
                r.name, r.cloud
            ));
        }
    }

    let mut rows = Rows::new(&index, "volume type");
    for t in &cat.volume_types {
        counted.volume_types += 1;
        let what = rows.named(&mut p, &t.name, (&t.source, &t.date));
        if !CLOUDS.contains(&t.cloud.as_str()) {
            p.push(format!("{what}: unknown cloud '{}'", t.cloud));
        }
        if t.min_gib == 0 || t.min_gib > t.max_gib {
            p.push(format!(
                "{what}: size range {}-{} GiB is not sane",
                int(t.min_gib),
                int(t.max_gib)
            ));
        }
        match &t.iops {
            IopsRule::Provisioned(rule) => {
                if rule.min > rule.max || rule.included > rule.max {
                    p.push(format!(
                        "{what}: IOPS range {}-{} (included {}) is not sane",
                        int(rule.min),
                        int(rule.max),
                        int(rule.included)
                    ));
                }
                if let Some(per) = rule.max_per_gib {
                    if per <= 0.0 {
                        p.push(format!("{what}: max_per_gib must be positive"));
                    } else if (per * t.max_gib as f64) < rule.min as f64 {
                        p.push(format!(
                            "{what}: even the largest volume ({} GiB x {}) cannot reach the minimum {} IOPS",
                            int(t.max_gib),
                            num(per),
                            int(rule.min)
                        ));
                    }
                }
            }
            IopsRule::Scaled {
                per_gib, min, max, ..
            } => {
                if *per_gib < 0.0 || min > max {
                    p.push(format!("{what}: scaled IOPS rule is not sane"));
                }
            }
            IopsRule::Cap { max } => {
                if *max == 0 {
                    p.push(format!("{what}: IOPS cap of 0"));
                }
            }
            IopsRule::SizeTier | IopsRule::Unknown => {}
        }
        // The load check (validate.rs) has the tiers' numbers and order; here: they cover the range.
        if let Some(top) = t.size_tiers.as_deref().and_then(|x| x.last()) {
            if top.size_gib < t.max_gib {
                p.push(format!(
                    "{what}: the largest size tier ({}, {} GiB) is below max_gib {}: add the missing tiers or lower max_gib",
                    top.name,
                    int(top.size_gib),
                    int(t.max_gib)
                ));
            }
        }
        match &t.throughput {
            ThroughputRule::Provisioned(rule) => {
                if rule.min_mibs > rule.max_mibs || rule.included_mibs > rule.max_mibs {
                    p.push(format!("{what}: throughput range is not sane"));
                }
                if rule.max_mibs_per_iops.is_some() && !matches!(t.iops, IopsRule::Provisioned(_)) {
                    p.push(format!("{what}: max_mibs_per_iops needs provisioned IOPS"));
                }
                // price takes the included throughput when none is asked: it must be one the
                // cloud can provision.
                if let Some(step) = rule.step_mibs.filter(|s| *s > 0.0) {
                    let off = |x: f64| ((x / step) - (x / step).round()).abs() > 1e-9;
                    if off(rule.included_mibs) || off(rule.min_mibs) {
                        p.push(format!(
                            "{what}: included_mibs {} and min_mibs {} must be whole steps of step_mibs {}",
                            num(rule.included_mibs),
                            num(rule.min_mibs),
                            rule.step_mibs.unwrap_or_default()
                        ));
                    }
                }
            }
            ThroughputRule::Tiers { tiers } => {
                if tiers.is_empty() {
                    p.push(format!("{what}: throughput tiers are empty"));
                }
                if tiers.windows(2).any(|x| x[0].from_gib >= x[1].from_gib) {
                    p.push(format!(
                        "{what}: throughput tiers are not ascending by from_gib"
                    ));
                }
            }
            ThroughputRule::PerTib(rule) => {
                if rule.baseline_per_tib > rule.burst_per_tib
                    || rule.max_mibs <= 0.0
                    || rule.bucket_mib_per_tib <= 0.0
                {
                    p.push(format!("{what}: per-TiB throughput rule is not sane"));
                }
            }
            ThroughputRule::PerIops { mibs_per_iops, .. } => {
                if *mibs_per_iops <= 0.0 {
                    p.push(format!("{what}: mibs_per_iops must be positive"));
                }
                if !matches!(t.iops, IopsRule::Provisioned(_)) {
                    p.push(format!(
                        "{what}: per-IOPS throughput needs provisioned IOPS"
                    ));
                }
            }
            ThroughputRule::Scaled { .. } | ThroughputRule::SizeTier | ThroughputRule::Unknown => {}
        }
        if let Some(b) = &t.burst {
            if b.bucket_credits <= 0.0 || !matches!(t.iops, IopsRule::Scaled { .. }) {
                p.push(format!(
                    "{what}: an I/O credit burst needs scaled IOPS and a positive bucket"
                ));
            }
        }
        if t.io_accounting_kib.is_some() && !matches!(t.iops, IopsRule::Cap { .. }) {
            p.push(format!(
                "{what}: io_accounting_kib only applies to capped IOPS (st1/sc1)"
            ));
        }
    }

    let mut rows = Rows::new(&index, "volume price");
    for pr in &cat.volume_prices {
        counted.volume_prices += 1;
        counted.weak_prices += usize::from(pr.weak);
        let what = rows.price(&mut p, (&pr.region, &pr.type_), (&pr.source, &pr.date));
        let reg = index.region(&pr.region);
        let vt = index.types.get(pr.type_.as_str()).copied();
        let Some(vt) = vt else {
            p.push(format!("{what}: type {} is not in the catalog", pr.type_));
            continue;
        };
        if let Some(reg) = reg {
            if reg.cloud != vt.cloud {
                p.push(format!(
                    "{what}: {} type priced in {} region",
                    a(&vt.cloud),
                    a(&reg.cloud)
                ));
            }
            if reg.weak && !pr.weak {
                w.push(format!(
                    "{what}: region {} is marked weak but the price is not",
                    reg.name
                ));
            }
        }
        // No cloud lists block storage near $10 per GB-month (docs/sources.md [aws-ebs-pricing],
        // [gcp-disk-pricing]: $0.015-0.17); a figure that large is a unit mistake (per TB, or
        // cents).
        if let Some(tiers) = &pr.tier_prices {
            let priced: Vec<u64> = tiers.iter().map(|t| t.size_gib).collect();
            let sizes: Vec<u64> = vt.size_tiers.iter().flatten().map(|t| t.size_gib).collect();
            if priced != sizes {
                p.push(format!(
                    "{what}: tier_prices sizes {priced:?} differ from the size_tiers of {} {sizes:?}: price each tier once",
                    vt.name
                ));
            }
        } else if vt.size_tiers.is_some() {
            p.push(format!(
                "{what}: {} is billed per size tier but the price has no tier_prices",
                vt.name
            ));
        } else if !(pr.storage_gb_month > 0.0 && pr.storage_gb_month < 10.0) {
            p.push(format!(
                "{what}: storage ${}/GB-month is not sane (a GB-month price is above $0 and below $10)",
                as_read(pr.storage_gb_month)
            ));
        }
        for x in [pr.iops_month, pr.throughput_mibs_month]
            .into_iter()
            .flatten()
        {
            if !(x > 0.0 && x < 10.0) {
                p.push(format!(
                    "{what}: unit price {} is not sane (an IOPS-month or MiB/s-month price is above $0 and below $10)",
                    as_read(x)
                ));
            }
        }
        let provisioned_iops = match &vt.iops {
            IopsRule::Provisioned(ProvisionedIops { included, max, .. }) => included < max,
            _ => false,
        };
        let has_iops_price = pr.iops_month.is_some() || pr.iops_tiers.is_some();
        if provisioned_iops && !has_iops_price {
            p.push(format!(
                "{what}: {} takes provisioned IOPS but has no IOPS price",
                vt.name
            ));
        }
        if !provisioned_iops && has_iops_price {
            p.push(format!(
                "{what}: an IOPS price for a type without provisioned IOPS"
            ));
        }
        if pr.iops_month.is_some() && pr.iops_tiers.is_some() {
            p.push(format!("{what}: both iops_month and iops_tiers"));
        }
        if let Some(tiers) = &pr.iops_tiers {
            let ups: Vec<u64> = tiers.iter().filter_map(|t| t.up_to).collect();
            if ups.windows(2).any(|x| x[0] >= x[1])
                || tiers.iter().rev().skip(1).any(|t| t.up_to.is_none())
                || tiers.last().is_some_and(|t| t.up_to.is_some())
            {
                p.push(format!(
                    "{what}: IOPS tiers must ascend and end with an open tier"
                ));
            }
        }
        let provisioned_tp = matches!(
            &vt.throughput,
            ThroughputRule::Provisioned(ProvisionedThroughput { included_mibs, max_mibs, .. }) if included_mibs < max_mibs
        );
        if provisioned_tp && pr.throughput_mibs_month.is_none() {
            p.push(format!(
                "{what}: {} takes provisioned throughput but has no throughput price",
                vt.name
            ));
        }
        if !provisioned_tp && pr.throughput_mibs_month.is_some() {
            p.push(format!(
                "{what}: a throughput price for a type without provisioned throughput"
            ));
        }
        // A price list's own limits (imported) against the rules: a warning, since the price
        // list's free-text attributes lag behind the user guide (gp3's 2025 raise).
        if let Some(m) = pr.offer_max_gib {
            if m != vt.max_gib {
                w.push(format!(
                    "{what}: the price list says at most {} GiB, the rules say {}",
                    int(m),
                    int(vt.max_gib)
                ));
            }
        }
        if let Some(m) = pr.offer_max_iops {
            let rule_max = crate::perf::max_iops(vt);
            if rule_max.is_some_and(|r| r != m) {
                w.push(format!(
                    "{what}: the price list says at most {} IOPS, the rules say {}",
                    int(m),
                    int(rule_max.unwrap_or(0))
                ));
            }
        }
    }

    let mut rows = Rows::new(&index, "instance");
    for i in &cat.instances {
        counted.instances += 1;
        let what = rows.named(&mut p, &i.name, (&i.source, &i.date));
        if let Some(s) = &i.store {
            if s.count == 0 || s.size_gb == 0 {
                p.push(format!(
                    "{what}: instance store of {} x {} GB",
                    s.count, s.size_gb
                ));
            }
        }
        if i.store.is_none() && (i.store_read_iops.is_some() || i.store_write_iops.is_some()) {
            p.push(format!("{what}: store IOPS without a store"));
        }
    }
    let mut rows = Rows::new(&index, "instance price");
    for pr in &cat.instance_prices {
        counted.instance_prices += 1;
        counted.weak_prices += usize::from(pr.weak);
        let what = rows.price(&mut p, (&pr.region, &pr.type_), (&pr.source, &pr.date));
        match index.instances.get(pr.type_.as_str()).copied() {
            None => p.push(format!(
                "{what}: instance {} is not in the catalog",
                pr.type_
            )),
            Some(i) => {
                if index.region(&pr.region).is_some_and(|r| r.cloud != i.cloud) {
                    p.push(format!(
                        "{what}: {} instance priced in another cloud's region",
                        a(&i.cloud)
                    ));
                }
            }
        }
        if !(pr.usd_per_hour > 0.0 && pr.usd_per_hour < 1000.0) {
            p.push(format!(
                "{what}: ${}/hour is not sane (an hourly price is above $0 and below $1,000)",
                as_read(pr.usd_per_hour)
            ));
        }
    }
    Report {
        problems: p,
        warnings: w,
        counted,
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
