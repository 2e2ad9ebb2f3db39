//! Every number of a catalog file checked on load, before price or plan can divide by it: a
//! price or rate must be finite and not negative, the rates price and plan divide by must be
//! above zero, sizes must be ordered and below [`MAX_GIB`], so that no overlay can make disktier
//! panic, loop or print NaN. `catalog check` adds the softer checks (sources, dates, limits).

use crate::fmt::as_read;
use crate::model::{Catalog, IopsRule, ThroughputRule};

/// The largest volume size a catalog may state: 16 PiB in GiB, far above any cloud volume
/// (EBS and GCP PD stop at 64 TiB), and small enough that sizes x prices stay exact in f64 and
/// sizes in bytes fit in u64.
pub const MAX_GIB: u64 = 1 << 24;
/// The largest IOPS or count a catalog may state (a billion; io2 Block Express stops at 256,000).
pub const MAX_COUNT: u64 = 1_000_000_000;
/// The largest instance store disk, in decimal GB (a petabyte).
pub const MAX_STORE_GB: u64 = 1_000_000;

/// One number of a catalog that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{object}: {field} = {value} {why}: {fix}")]
pub struct BadNumber {
    /// The entry, e.g. `volume_type gp3`.
    pub object: String,
    pub field: &'static str,
    pub value: String,
    pub why: &'static str,
    pub fix: &'static str,
}

struct V<'a> {
    object: String,
    errs: &'a mut Vec<BadNumber>,
}

impl V<'_> {
    fn bad(&mut self, field: &'static str, value: String, why: &'static str, fix: &'static str) {
        self.errs.push(BadNumber {
            object: self.object.clone(),
            field,
            value,
            why,
            fix,
        });
    }

    /// A price or rate: finite and not negative.
    fn amount(&mut self, field: &'static str, v: f64) {
        if !v.is_finite() {
            self.bad(
                field,
                as_read(v),
                "is not a finite number",
                "write a plain decimal number (no nan or inf)",
            );
        } else if v < 0.0 {
            self.bad(
                field,
                as_read(v),
                "is negative",
                "write a value of 0 or more",
            );
        } else if v > 1e12 {
            self.bad(
                field,
                as_read(v),
                "is out of range",
                "write a value below 1e12",
            );
        }
    }

    /// A rate price or plan divides by: finite and above zero.
    fn divisor(&mut self, field: &'static str, v: f64) {
        self.above_zero(
            field,
            v,
            as_read(v),
            "write a value above 0 (price and plan divide by it)",
        );
    }

    /// An [`V::amount`] that is also above zero (`value` shows it and `fix` says what to write
    /// when it is zero).
    fn above_zero(&mut self, field: &'static str, v: f64, value: String, fix: &'static str) {
        let before = self.errs.len();
        self.amount(field, v);
        if self.errs.len() == before && v <= 0.0 {
            self.bad(field, value, "is zero", fix);
        }
    }

    fn count(&mut self, field: &'static str, v: u64, min: u64, max: u64) {
        if v < min {
            self.bad(
                field,
                v.to_string(),
                if min == 1 { "is zero" } else { "is too small" },
                "write a value of at least 1",
            );
        } else if v > max {
            self.bad(
                field,
                v.to_string(),
                "is out of range",
                "write a value a real cloud offers (sizes below 16 PiB, counts below a billion)",
            );
        }
    }

    /// Flags a tier whose `key` is not above the previous tier's (`last`, which becomes `key`):
    /// tiers are listed in ascending `field` (`value` shows this tier, `fix` says so).
    fn above_last(
        &mut self,
        last: &mut Option<u64>,
        field: &'static str,
        key: u64,
        value: String,
        fix: &'static str,
    ) {
        if last.is_some_and(|l| l >= key) {
            self.bad(field, value, "is not above the previous tier's", fix);
        }
        *last = Some(key);
    }

    /// `iops.min` and `iops.max`: counts, the minimum not above the maximum.
    fn iops_range(&mut self, min: u64, max: u64) {
        self.count("iops.min", min, 0, MAX_COUNT);
        self.count("iops.max", max, 0, MAX_COUNT);
        self.ordered("iops.min..max", min as f64, max as f64);
    }

    fn ordered(&mut self, field: &'static str, lo: f64, hi: f64) {
        if lo > hi {
            self.bad(
                field,
                format!("{lo} > {hi}"),
                "has its minimum above its maximum",
                "swap or correct the two limits",
            );
        }
    }
}

/// All unusable numbers of `cat`, in file order (empty when it can be used).
pub fn numbers(cat: &Catalog) -> Vec<BadNumber> {
    let mut errs = Vec::new();
    for t in &cat.volume_types {
        let mut v = V {
            object: format!("volume_type {}", t.name),
            errs: &mut errs,
        };
        v.count("min_gib", t.min_gib, 0, MAX_GIB);
        v.count("max_gib", t.max_gib, 1, MAX_GIB);
        v.ordered("min_gib..max_gib", t.min_gib as f64, t.max_gib as f64);
        if let Some(u) = t.unit_gib {
            v.count("unit_gib", u, 1, MAX_GIB);
        }
        if let Some(k) = t.io_accounting_kib {
            v.count("io_accounting_kib", k, 1, 1 << 20);
        }
        if let Some(k) = t.max_io_kib {
            v.count("max_io_kib", k, 1, 1 << 20);
        }
        if let Some(b) = &t.burst {
            v.count("burst.burst_iops", b.burst_iops, 0, MAX_COUNT);
            v.amount("burst.bucket_credits", b.bucket_credits);
        }
        match &t.iops {
            IopsRule::Provisioned(rule) => {
                v.count("iops.included", rule.included, 0, MAX_COUNT);
                v.iops_range(rule.min, rule.max);
                if let Some(p) = rule.max_per_gib {
                    v.divisor("iops.max_per_gib", p);
                }
            }
            IopsRule::Scaled {
                per_gib,
                base,
                min,
                max,
            } => {
                v.divisor("iops.per_gib", *per_gib);
                v.amount("iops.base", *base);
                v.iops_range(*min, *max);
            }
            IopsRule::Cap { max } => v.count("iops.max", *max, 0, MAX_COUNT),
            IopsRule::SizeTier | IopsRule::Unknown => {}
        }
        match &t.size_tiers {
            Some(tiers) => {
                if tiers.is_empty() {
                    v.bad(
                        "size_tiers",
                        "[]".into(),
                        "is empty",
                        "list the tiers ({ name, size_gib, iops, mbps }) in ascending size_gib",
                    );
                }
                let mut last = None;
                for tier in tiers {
                    v.count("size_tiers.size_gib", tier.size_gib, 1, MAX_GIB);
                    v.count("size_tiers.iops", tier.iops, 1, MAX_COUNT);
                    v.divisor("size_tiers.mbps", tier.mbps);
                    v.above_last(
                        &mut last,
                        "size_tiers.size_gib",
                        tier.size_gib,
                        format!("{} ({})", tier.size_gib, tier.name),
                        "list the tiers in ascending size_gib",
                    );
                }
            }
            None if t.is_tiered() => v.bad(
                "size_tiers",
                "(none)".into(),
                "is missing for a size_tier rule",
                "add the tiers ([[volume_type.size_tiers]] name, size_gib, iops, mbps) or use another model",
            ),
            None => {}
        }
        match &t.throughput {
            ThroughputRule::Provisioned(rule) => {
                v.amount("throughput.included_mibs", rule.included_mibs);
                v.amount("throughput.min_mibs", rule.min_mibs);
                v.amount("throughput.max_mibs", rule.max_mibs);
                v.ordered(
                    "throughput.min_mibs..max_mibs",
                    rule.min_mibs,
                    rule.max_mibs,
                );
                if let Some(p) = rule.max_mibs_per_iops {
                    v.divisor("throughput.max_mibs_per_iops", p);
                }
                if let Some(p) = rule.step_mibs {
                    v.divisor("throughput.step_mibs", p);
                }
            }
            ThroughputRule::Scaled {
                per_gib,
                base,
                max_mibs,
            } => {
                v.divisor("throughput.per_gib", *per_gib);
                v.amount("throughput.base", *base);
                v.amount("throughput.max_mibs", *max_mibs);
            }
            ThroughputRule::Tiers { tiers } => {
                let mut last = None;
                for tier in tiers {
                    v.count("throughput.tiers.from_gib", tier.from_gib, 0, MAX_GIB);
                    v.amount("throughput.tiers.mibs", tier.mibs);
                    if let Some(b) = tier.burst_mibs {
                        v.amount("throughput.tiers.burst_mibs", b);
                    }
                    v.above_last(
                        &mut last,
                        "throughput.tiers.from_gib",
                        tier.from_gib,
                        tier.from_gib.to_string(),
                        "list the tiers in ascending from_gib",
                    );
                }
            }
            ThroughputRule::PerIops {
                mibs_per_iops,
                max_mibs,
                plateau,
                ..
            } => {
                v.divisor("throughput.mibs_per_iops", *mibs_per_iops);
                v.amount("throughput.max_mibs", *max_mibs);
                if let Some(x) = plateau {
                    v.amount("throughput.plateau.mibs", x.mibs);
                    v.divisor("throughput.plateau.mibs_per_iops", x.mibs_per_iops);
                }
            }
            ThroughputRule::PerTib(rule) => {
                v.divisor("throughput.baseline_per_tib", rule.baseline_per_tib);
                v.amount("throughput.burst_per_tib", rule.burst_per_tib);
                v.amount("throughput.max_mibs", rule.max_mibs);
                v.amount("throughput.bucket_mib_per_tib", rule.bucket_mib_per_tib);
            }
            ThroughputRule::SizeTier | ThroughputRule::Unknown => {}
        }
    }
    for p in &cat.volume_prices {
        let mut v = V {
            object: format!("volume_price {} {}", p.region, p.type_),
            errs: &mut errs,
        };
        match &p.tier_prices {
            Some(tiers) => {
                v.amount("storage_gb_month", p.storage_gb_month);
                if tiers.is_empty() {
                    v.bad(
                        "tier_prices",
                        "[]".into(),
                        "is empty",
                        "list each tier's { size_gib, usd_month } in ascending size_gib",
                    );
                }
                let mut last = None;
                for t in tiers {
                    v.count("tier_prices.size_gib", t.size_gib, 1, MAX_GIB);
                    v.above_zero(
                        "tier_prices.usd_month",
                        t.usd_month,
                        format!("{} ({} GiB)", t.usd_month, t.size_gib),
                        "write the tier's monthly price from the price page (above 0)",
                    );
                    v.above_last(
                        &mut last,
                        "tier_prices.size_gib",
                        t.size_gib,
                        t.size_gib.to_string(),
                        "list the tiers in ascending size_gib",
                    );
                }
            }
            None => v.divisor("storage_gb_month", p.storage_gb_month),
        }
        if let Some(x) = p.iops_month {
            v.amount("iops_month", x);
        }
        if let Some(x) = p.throughput_mibs_month {
            v.amount("throughput_mibs_month", x);
        }
        if let Some(tiers) = &p.iops_tiers {
            let mut last = None;
            for (i, t) in tiers.iter().enumerate() {
                v.amount("iops_tiers.usd", t.usd);
                match t.up_to {
                    Some(u) => {
                        v.count("iops_tiers.up_to", u, 1, MAX_COUNT);
                        v.above_last(
                            &mut last,
                            "iops_tiers.up_to",
                            u,
                            u.to_string(),
                            "list the tiers in ascending up_to",
                        );
                    }
                    None if i + 1 != tiers.len() => v.bad(
                        "iops_tiers.up_to",
                        "(none)".into(),
                        "is missing on a tier that is not the last",
                        "only the last, open tier may omit up_to",
                    ),
                    None => {}
                }
            }
        }
        if let Some(x) = p.offer_max_gib {
            v.count("offer_max_gib", x, 0, MAX_GIB);
        }
        if let Some(x) = p.offer_max_iops {
            v.count("offer_max_iops", x, 0, MAX_COUNT);
        }
        if let Some(x) = p.offer_max_mibs {
            v.amount("offer_max_mibs", x);
        }
    }
    for i in &cat.instances {
        let mut v = V {
            object: format!("instance {}", i.name),
            errs: &mut errs,
        };
        if let Some(s) = &i.store {
            v.count("store.count", u64::from(s.count), 1, 1024);
            v.count("store.size_gb", s.size_gb, 1, MAX_STORE_GB);
        }
        for (f, x) in [
            ("store_read_iops", i.store_read_iops),
            ("store_write_iops", i.store_write_iops),
        ] {
            if let Some(x) = x {
                v.count(f, x, 0, MAX_COUNT);
            }
        }
        for c in i.local_ssd_counts.iter().flatten() {
            v.count("local_ssd_counts", u64::from(*c), 0, 1024);
        }
    }
    for p in &cat.instance_prices {
        let mut v = V {
            object: format!("instance_price {} {}", p.region, p.type_),
            errs: &mut errs,
        };
        v.amount("usd_per_hour", p.usd_per_hour);
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalog_has_no_bad_number() {
        assert_eq!(numbers(&Catalog::embedded()), vec![]);
    }

    /// The embedded catalog with one change, written out and loaded again as a file would be.
    fn load_with(change: impl FnOnce(&mut Catalog)) -> Result<Catalog, crate::load::LoadError> {
        let mut c = Catalog::embedded();
        change(&mut c);
        Catalog::parse(&c.to_toml(), "overlay.toml")
    }

    fn rejected(change: impl FnOnce(&mut Catalog), field: &str, why: &str) {
        let e = load_with(change).unwrap_err();
        let crate::load::LoadError::Numbers { bad, .. } = &e else {
            panic!("{e}");
        };
        assert_eq!(bad[0].field, field, "{e}");
        assert!(bad[0].why.contains(why), "{e}");
        let msg = e.to_string();
        assert!(msg.starts_with("catalog overlay.toml has "), "{msg}");
        assert!(
            msg.contains(&bad[0].object) && msg.contains(bad[0].fix),
            "{msg}"
        );
    }

    fn vt<'a>(c: &'a mut Catalog, name: &str) -> &'a mut crate::model::VolumeType {
        c.volume_types.iter_mut().find(|t| t.name == name).unwrap()
    }

    fn vp<'a>(c: &'a mut Catalog, type_: &str) -> &'a mut crate::model::VolumePrice {
        c.volume_prices
            .iter_mut()
            .find(|p| p.type_ == type_)
            .unwrap()
    }

    /// Regression (#13): unit_gib = 0 divided by zero in price and plan.
    #[test]
    fn unit_gib_zero_is_refused() {
        let local = Catalog::embedded()
            .volume_types
            .iter()
            .find(|t| t.unit_gib.is_some())
            .unwrap()
            .name
            .clone();
        rejected(|c| vt(c, &local).unit_gib = Some(0), "unit_gib", "zero");
    }

    #[test]
    fn negative_nan_and_infinite_prices_are_refused() {
        rejected(
            |c| vp(c, "gp3").storage_gb_month = -0.08,
            "storage_gb_month",
            "negative",
        );
        rejected(
            |c| vp(c, "gp3").storage_gb_month = f64::NAN,
            "storage_gb_month",
            "finite",
        );
        rejected(
            |c| vp(c, "gp3").storage_gb_month = f64::INFINITY,
            "storage_gb_month",
            "finite",
        );
        rejected(
            |c| vp(c, "gp3").storage_gb_month = 0.0,
            "storage_gb_month",
            "zero",
        );
        rejected(
            |c| vp(c, "gp3").iops_month = Some(f64::NEG_INFINITY),
            "iops_month",
            "finite",
        );
        rejected(
            |c| c.instance_prices[0].usd_per_hour = -1.0,
            "usd_per_hour",
            "negative",
        );
        rejected(
            |c| c.instance_prices[0].usd_per_hour = 1e300,
            "usd_per_hour",
            "range",
        );
    }

    #[test]
    fn sizes_out_of_order_or_range_and_zero_divisors_are_refused() {
        rejected(|c| vt(c, "gp3").max_gib = 0, "max_gib", "zero");
        rejected(|c| vt(c, "gp3").max_gib = u64::MAX, "max_gib", "range");
        rejected(
            |c| vt(c, "gp3").min_gib = 70_000,
            "min_gib..max_gib",
            "minimum above",
        );
        rejected(
            |c| {
                vt(c, "gp2").iops = IopsRule::Scaled {
                    per_gib: 0.0,
                    base: 0.0,
                    min: 100,
                    max: 16000,
                }
            },
            "iops.per_gib",
            "zero",
        );
        rejected(
            |c| {
                vt(c, "gp2").iops = IopsRule::Scaled {
                    per_gib: f64::NAN,
                    base: 0.0,
                    min: 100,
                    max: 16000,
                }
            },
            "iops.per_gib",
            "finite",
        );
        rejected(
            |c| vt(c, "gp2").iops = IopsRule::Cap { max: u64::MAX },
            "iops.max",
            "range",
        );
        rejected(
            |c| vt(c, "st1").io_accounting_kib = Some(0),
            "io_accounting_kib",
            "zero",
        );
        rejected(
            |c| {
                c.instances
                    .iter_mut()
                    .find(|i| i.store.is_some())
                    .unwrap()
                    .store
                    .as_mut()
                    .unwrap()
                    .size_gb = u64::MAX
            },
            "store.size_gb",
            "range",
        );
    }

    #[test]
    fn a_huge_number_is_shown_in_exponent_notation() {
        // QA: `storage_gb_month = 1e308` (or an offer file's "1e308") was shown as 309 digits.
        let e = load_with(|c| vp(c, "gp3").storage_gb_month = 1e308).unwrap_err();
        assert!(
            e.to_string()
                .contains("storage_gb_month = 1e308 is out of range: write a value below 1e12"),
            "{e}"
        );
        assert!(e.to_string().len() < 300, "{e}");
    }

    #[test]
    fn every_bad_number_is_listed_at_once() {
        let e = load_with(|c| {
            vp(c, "gp3").storage_gb_month = f64::NAN;
            c.instance_prices[0].usd_per_hour = -1.0;
        })
        .unwrap_err();
        assert!(e.to_string().contains("has 2 unusable number(s)"), "{e}");
    }
}
