//! Volume prices that circulate in published guides, recomputed from the catalog's unit prices:
//! `price` and `plan` say where a figure a user has read differs from what the prices give,
//! and what the difference is.
//!
//! The one known today: the bcache-on-EBS recipe ("Improving IOPS in public cloud and reduce
//! cost with bcache V2", a blog post; docs/sources.md `[recipe-bcache-ebs]`) prices gp3 at
//! 5 TiB as five times its 1 TiB price. gp3's provisioned IOPS and throughput are billed per
//! volume (AWS EBS pricing, https://aws.amazon.com/ebs/pricing/), so a volume five times the
//! size pays them once, not five times.

use crate::fmt::{int, num, usd};
use crate::model::Catalog;
use crate::perf::VolumeConfig;
use serde::Serialize;

/// A volume's monthly price as a guide states it.
#[derive(Debug, Clone, Copy)]
pub struct QuotedVolume {
    pub type_: &'static str,
    pub region: &'static str,
    pub size_gib: u64,
    pub iops: u64,
    pub throughput_mibs: f64,
    pub monthly_usd: f64,
    pub source: &'static str,
    /// The guide's words.
    pub says: &'static str,
}

/// The figures checked.
pub const QUOTED_VOLUMES: &[QuotedVolume] = &[QuotedVolume {
    type_: "gp3",
    region: "eu-north-1",
    size_gib: 5 * 1024,
    iops: 16_000,
    throughput_mibs: 1000.0,
    monthly_usd: 948.94,
    source: "the bcache-on-EBS recipe, \"Improving IOPS in public cloud and reduce cost with bcache V2\"",
    says: "1TiB gp3 is $189.79 so $189.79*5 = $948.94",
}];

/// The outcome of checking one quoted volume price.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct QuotedVolumeCheck {
    /// "gp3 5,120 GiB, 16,000 IOPS, 1,000 MiB/s in eu-north-1".
    pub quoted_volume: String,
    pub quoted_monthly_usd: f64,
    pub source: String,
    pub says: String,
    /// The same volume priced from the catalog (the sum of its lines, each rounded to the cent).
    pub catalog_monthly_usd: f64,
    /// Whether the quoted figure is the catalog's (within a cent).
    pub agrees: bool,
    /// When the quoted figure is n times the price of a volume 1/n the size with the same IOPS
    /// and throughput: n, and that volume's price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiplied_by: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part_monthly_usd: Option<f64>,
    /// The whole finding in one sentence (also printed as a note).
    pub message: String,
}

impl QuotedVolume {
    fn config(&self, size_gib: u64) -> VolumeConfig {
        VolumeConfig {
            size_gib,
            iops: Some(self.iops),
            throughput_mibs: Some(self.throughput_mibs),
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} {} GiB, {} IOPS, {} MiB/s in {}",
            self.type_,
            int(self.size_gib),
            int(self.iops),
            num(self.throughput_mibs),
            self.region
        )
    }
}

/// The quoted figures about this very volume (type, region, size, IOPS and throughput as
/// quoted), checked against the catalog. `iops` and `throughput_mibs` are what the user asked
/// for; a volume asked for without them is not the quoted one.
pub fn checks(
    cat: &Catalog,
    region: &str,
    type_: &str,
    cfg: &VolumeConfig,
) -> Vec<QuotedVolumeCheck> {
    QUOTED_VOLUMES
        .iter()
        .filter(|q| {
            q.type_ == type_
                && q.region == region
                && q.size_gib == cfg.size_gib
                && cfg.iops == Some(q.iops)
                && cfg.throughput_mibs == Some(q.throughput_mibs)
        })
        .filter_map(|q| check(cat, q))
        .collect()
}

/// The quoted figures about a volume of `cfg` (a plan's requirements: the user asked the
/// guide's question), whatever type the guide priced.
pub fn about_plan(cat: &Catalog, region: &str, cfg: &VolumeConfig) -> Vec<QuotedVolumeCheck> {
    let mut types: Vec<&str> = QUOTED_VOLUMES.iter().map(|q| q.type_).collect();
    types.dedup();
    types
        .into_iter()
        .flat_map(|t| checks(cat, region, t, cfg))
        .collect()
}

fn priced(cat: &Catalog, q: &QuotedVolume, size_gib: u64) -> Option<f64> {
    crate::price::volume(cat, q.region, q.type_, &q.config(size_gib))
        .ok()
        .map(|p| p.monthly_cost_usd)
}

fn check(cat: &Catalog, q: &QuotedVolume) -> Option<QuotedVolumeCheck> {
    let whole = priced(cat, q, q.size_gib)?;
    let agrees = (whole - q.monthly_usd).abs() < 0.01;
    // n parts of 1/n the size, each paying the IOPS and throughput again: within a cent per
    // part, as a guide rounds each part's price.
    let multiple = if agrees {
        None
    } else {
        (2..=16u64)
            .filter(|n| q.size_gib.is_multiple_of(*n))
            .find_map(|n| {
                let part = priced(cat, q, q.size_gib / n)?;
                ((part * n as f64 - q.monthly_usd).abs() < 0.01 * n as f64).then_some((n, part))
            })
    };
    let head = format!(
        "The quoted {}/month for {} ({}: \"{}\")",
        usd(q.monthly_usd),
        q.describe(),
        q.source,
        q.says
    );
    let message = match multiple {
        _ if agrees => format!("{head} agrees with the catalog's {}.", usd(whole)),
        Some((n, part)) => format!(
            "{head} is {n} x the price of {} GiB with the same IOPS and throughput ({n} x {} = {}), but a volume's provisioned IOPS and throughput are billed once per volume, not per {} GiB: the catalog gives {} for the one {} GiB volume, {} less.",
            int(q.size_gib / n),
            usd(part),
            usd(part * n as f64),
            int(q.size_gib / n),
            usd(whole),
            int(q.size_gib),
            usd(q.monthly_usd - whole)
        ),
        None => format!(
            "{head} is not what the catalog gives: {}.",
            usd(whole)
        ),
    };
    Some(QuotedVolumeCheck {
        quoted_volume: q.describe(),
        quoted_monthly_usd: q.monthly_usd,
        source: q.source.to_string(),
        says: q.says.to_string(),
        catalog_monthly_usd: whole,
        agrees,
        multiplied_by: multiple.map(|(n, _)| n),
        part_monthly_usd: multiple.map(|(_, p)| p),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe_volume() -> VolumeConfig {
        VolumeConfig {
            size_gib: 5120,
            iops: Some(16_000),
            throughput_mibs: Some(1000.0),
        }
    }

    #[test]
    fn the_recipes_5_tib_is_five_times_the_1_tib_price() {
        let cat = Catalog::embedded();
        let c = checks(&cat, "eu-north-1", "gp3", &recipe_volume());
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert!(!c.agrees);
        assert_eq!(c.multiplied_by, Some(5));
        assert!(
            (c.part_monthly_usd.unwrap() - 189.79).abs() < 0.005,
            "{c:?}"
        );
        assert!((c.catalog_monthly_usd - 532.21).abs() < 0.005, "{c:?}");
        assert!(
            c.message.contains("is 5 x the price of 1,024 GiB with the same IOPS and throughput (5 x $189.79 = $948.95)")
                && c.message.contains("$532.21")
                && c.message.contains("$416.73 less"),
            "{}",
            c.message
        );
    }

    #[test]
    fn only_the_quoted_volume_is_checked() {
        let cat = Catalog::embedded();
        let mut other = recipe_volume();
        other.size_gib = 4096;
        assert!(checks(&cat, "eu-north-1", "gp3", &other).is_empty());
        let mut default_iops = recipe_volume();
        default_iops.iops = None;
        assert!(checks(&cat, "eu-north-1", "gp3", &default_iops).is_empty());
        assert!(checks(&cat, "us-east-1", "gp3", &recipe_volume()).is_empty());
        assert!(checks(&cat, "eu-north-1", "io2", &recipe_volume()).is_empty());
    }

    #[test]
    fn a_figure_that_agrees_says_so_and_one_that_matches_nothing_says_that() {
        let mut cat = Catalog::embedded();
        assert!(cat
            .volume_prices
            .iter()
            .any(|p| p.type_ == "gp3" && p.region == "eu-north-1"));
        // Storage at a price that makes the whole volume $948.94 (IOPS and throughput as now).
        let rest = 67.60 + 36.58;
        for p in cat.volume_prices.iter_mut() {
            if p.type_ == "gp3" && p.region == "eu-north-1" {
                p.storage_gb_month = (948.94 - rest) / 5120.0;
            }
        }
        let c = &checks(&cat, "eu-north-1", "gp3", &recipe_volume())[0];
        assert!(c.agrees && c.multiplied_by.is_none(), "{c:?}");
        assert!(
            c.message.ends_with("agrees with the catalog's $948.94."),
            "{}",
            c.message
        );
        for p in cat.volume_prices.iter_mut() {
            if p.type_ == "gp3" && p.region == "eu-north-1" {
                p.storage_gb_month = 0.05;
            }
        }
        let c = &checks(&cat, "eu-north-1", "gp3", &recipe_volume())[0];
        assert!(!c.agrees && c.multiplied_by.is_none(), "{c:?}");
        assert!(
            c.message.contains("is not what the catalog gives"),
            "{}",
            c.message
        );
    }
}
