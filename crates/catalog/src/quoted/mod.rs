//! Figures that circulate in published guides, checked against the catalog's own unit prices,
//! so that `plan` can say where a figure a user has read differs from what the prices give.
//!
//! Each entry quotes a guide word for word (its number and the pair it names) and its address;
//! the check recomputes the pair's difference from the catalog's on-demand prices (730 hours a
//! month) and, when it differs, looks for the pair of the same family whose difference the
//! figure really is.

pub mod measured;
pub mod volume;

use crate::fmt::{unit_usd, usd};
use crate::model::Catalog;
use crate::price::HOURS_PER_MONTH;
use serde::Serialize;

/// A monthly difference between an instance type and its instance-store sibling, as a guide
/// states it.
#[derive(Debug, Clone, Copy)]
pub struct QuotedDelta {
    pub from: &'static str,
    pub to: &'static str,
    pub monthly_usd: f64,
    /// The region whose prices the guide used.
    pub region: &'static str,
    pub source: &'static str,
    /// The guide's words.
    pub says: &'static str,
    /// What the guide says its figure buys in volumes: (type, GiB).
    pub buys: &'static [(&'static str, u64)],
}

/// The figures checked.
pub const QUOTED: &[QuotedDelta] = &[QuotedDelta {
    from: "m6i.xlarge",
    to: "m6id.xlarge",
    monthly_usd: 66.138,
    region: "us-east-1",
    source: "https://mtulio.dev/playbooks/openshift/ocp-aws-disk-ephemeral",
    says: "Examples of a requirement to replace m6i.xlarge with m6id.xlarge: ... the difference in instance price is $66.138, an equivalent of 661 GiB of gp2 or 826GiB of gp3",
    buys: &[("gp2", 661), ("gp3", 826)],
}];

/// The outcome of checking one quoted figure.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct QuotedCheck {
    /// "m6i.xlarge -> m6id.xlarge".
    pub quoted_pair: String,
    pub quoted_monthly_usd: f64,
    pub source: String,
    pub region: String,
    /// The quoted pair's difference from the catalog's prices (unrounded).
    pub catalog_monthly_usd: f64,
    /// "(0.2373 - 0.192) $/h x 730 h".
    pub catalog_formula: String,
    /// Whether the quoted figure is the quoted pair's difference (within a cent).
    pub agrees: bool,
    /// The pair of the same family whose difference the quoted figure is, when it is not the
    /// quoted pair's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching_pair: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching_monthly_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching_formula: Option<String>,
    /// The whole finding in one sentence (also in the plan's notes).
    pub message: String,
}

fn family(name: &str) -> Option<&str> {
    let f = name.split_once('.')?.0;
    Some(f.strip_suffix('d').unwrap_or(f))
}

/// `(to - from) $/h x 730 h`, and the monthly figure.
fn delta(cat: &Catalog, region: &str, from: &str, to: &str) -> Option<(f64, String)> {
    let a = cat.instance_price(region, from)?.usd_per_hour;
    let b = cat.instance_price(region, to)?.usd_per_hour;
    let m = (b - a) * HOURS_PER_MONTH;
    let formula = format!(
        "({} - {}) $/h x {} h",
        unit_usd(b).trim_start_matches('$'),
        unit_usd(a).trim_start_matches('$'),
        HOURS_PER_MONTH
    );
    Some((m, formula))
}

/// "330 GiB of gp2 and 413 GiB of gp3": what `usd` a month buys of each of `types` at its
/// storage price in `region` (whole GiB), or none when a type has no price there.
fn buys_words(cat: &Catalog, region: &str, usd: f64, types: &[&str]) -> Option<String> {
    let parts: Option<Vec<String>> = types
        .iter()
        .map(|t| {
            let p = cat.volume_price(region, t)?.storage_gb_month;
            (p > 0.0).then(|| format!("{} GiB of {t}", crate::fmt::int((usd / p) as u64)))
        })
        .collect();
    parts.filter(|p| !p.is_empty()).map(|p| p.join(" and "))
}

/// Checks every quoted figure about the family of `instance` (m6i.xlarge and m6id.2xlarge are
/// both the m6i family) against the catalog.
pub fn checks(cat: &Catalog, instance: &str) -> Vec<QuotedCheck> {
    let Some(fam) = family(instance) else {
        return Vec::new();
    };
    QUOTED
        .iter()
        .filter(|q| family(q.from) == Some(fam))
        .filter_map(|q| check(cat, q))
        .collect()
}

fn check(cat: &Catalog, q: &QuotedDelta) -> Option<QuotedCheck> {
    let (m, formula) = delta(cat, q.region, q.from, q.to)?;
    let agrees = (m - q.monthly_usd).abs() < 0.01;
    let fam = family(q.from)?;
    let matching = if agrees {
        None
    } else {
        cat.instances
            .iter()
            .filter(|i| i.store.is_none() && family(&i.name) == Some(fam))
            .filter_map(|i| {
                let sib = store_sibling(cat, &i.name)?;
                let (d, f) = delta(cat, q.region, &i.name, &sib)?;
                ((d - q.monthly_usd).abs() < 0.01).then(|| (format!("{} -> {sib}", i.name), d, f))
            })
            .next()
    };
    let pair = format!("{} -> {}", q.from, q.to);
    let prices = cat
        .instance_price(q.region, q.to)
        .map(|p| format!("{} on-demand prices of {} ({})", q.region, p.date, p.source))
        .unwrap_or_default();
    // What the guide says its figure buys, and what the quoted pair's difference buys.
    let types: Vec<&str> = q.buys.iter().map(|(t, _)| *t).collect();
    let buys = match (agrees, buys_words(cat, q.region, m, &types)) {
        (false, Some(real)) => format!(
            " Its {} are what {} buys; the {pair} difference buys {real}.",
            q.buys
                .iter()
                .map(|(t, g)| format!("{} GiB of {t}", crate::fmt::int(*g)))
                .collect::<Vec<_>>()
                .join(" and "),
            usd(q.monthly_usd)
        ),
        _ => String::new(),
    };
    let message = match (&matching, agrees) {
        (_, true) => format!(
            "The quoted {}/month for {pair} ({}) agrees with the catalog: {formula} = {}.",
            usd(q.monthly_usd),
            q.source,
            usd(m)
        ),
        (Some((p, d, f)), false) => format!(
            "The quoted {}/month for {pair} ({}) is the {p} difference: {f} = {}; the {pair} difference is {formula} = {} ({prices}).{buys}",
            usd(q.monthly_usd),
            q.source,
            usd(*d),
            usd(m)
        ),
        (None, false) => format!(
            "The quoted {}/month for {pair} ({}) is not what the catalog gives: {formula} = {}, and no other pair of the family differs by it ({prices}).{buys}",
            usd(q.monthly_usd),
            q.source,
            usd(m)
        ),
    };
    Some(QuotedCheck {
        quoted_pair: pair,
        quoted_monthly_usd: q.monthly_usd,
        source: q.source.to_string(),
        region: q.region.to_string(),
        catalog_monthly_usd: m,
        catalog_formula: formula,
        agrees,
        matching_monthly_usd: matching.as_ref().map(|(_, d, _)| *d),
        matching_formula: matching.as_ref().map(|(_, _, f)| f.clone()),
        matching_pair: matching.map(|(p, _, _)| p),
        message,
    })
}

/// The instance-store sibling of an EBS-only type: m6i.xlarge -> m6id.xlarge.
pub fn store_sibling(cat: &Catalog, name: &str) -> Option<String> {
    let (family, size) = name.split_once('.')?;
    let sib = format!("{family}d.{size}");
    cat.instance(&sib).map(|_| sib)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quoted_m6i_figure_is_the_2xlarge_pair() {
        let cat = Catalog::embedded();
        let c = checks(&cat, "m6i.xlarge");
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert!(!c.agrees);
        // (0.2373 - 0.192) x 730 = 33.069; (0.4746 - 0.384) x 730 = 66.138.
        assert!((c.catalog_monthly_usd - 33.069).abs() < 1e-6, "{c:?}");
        assert_eq!(
            c.matching_pair.as_deref(),
            Some("m6i.2xlarge -> m6id.2xlarge")
        );
        assert!((c.matching_monthly_usd.unwrap() - 66.138).abs() < 1e-6);
        assert!(c.message.contains("$66.14") && c.message.contains("$33.07"));
        // The recipe's 661 GiB of gp2 / 826 GiB of gp3 are the $66.14's; $33.069 buys 330 / 413.
        assert!(
            c.message.ends_with(" Its 661 GiB of gp2 and 826 GiB of gp3 are what $66.14 buys; the m6i.xlarge -> m6id.xlarge difference buys 330 GiB of gp2 and 413 GiB of gp3."),
            "{}",
            c.message
        );
        assert_eq!(c.catalog_formula, "(0.2373 - 0.192) $/h x 730 h");
        // The same check for any member of the family, and none for another family.
        assert_eq!(checks(&cat, "m6id.2xlarge").len(), 1);
        assert!(checks(&cat, "c6i.xlarge").is_empty());
        assert!(checks(&cat, "nonsense").is_empty());
    }

    #[test]
    fn a_figure_that_agrees_says_so() {
        let mut cat = Catalog::embedded();
        for p in cat.instance_prices.iter_mut() {
            if p.type_ == "m6id.xlarge" && p.region == "us-east-1" {
                p.usd_per_hour = 0.192 + 66.138 / 730.0;
            }
        }
        let c = &checks(&cat, "m6i.xlarge")[0];
        assert!(c.agrees && c.matching_pair.is_none(), "{c:?}");
        assert!(c.message.contains("agrees"));
    }
}
