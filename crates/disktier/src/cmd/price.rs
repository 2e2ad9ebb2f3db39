//! `disktier price <type> --size ... | price instance <type>`: one volume or instance for a
//! month, line by line (each rounded to the cent as the AWS Pricing Calculator does), with the
//! volume's performance, or the rule the cloud would refuse it by.

use super::{Ctx, Outcome};
use crate::app::price::{stale_catalog, volume, VolumeRequest};
use crate::app::SCHEMA_VERSION;
use disktier_catalog::age::StaleCatalog;
use disktier_catalog::fmt::{num, usd};
use disktier_catalog::quoted::volume::QuotedVolumeCheck;
use disktier_catalog::{price, Quote};
use disktier_units::clap_parsers;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A volume type (gp2, gp3, io1, io2, st1, sc1, pd-ssd, ...) or `instance`.
    pub kind: String,
    /// With `instance`: the instance type (e.g. m6id.xlarge).
    pub instance: Option<String>,
    /// Region (e.g. us-east-1, eu-north-1, us-central1, eastus: `disktier catalog show` lists them).
    #[arg(long, default_value = "us-east-1")]
    pub region: String,
    /// Volume size in whole GiB (36GiB, 1TiB, 500G).
    #[arg(long, value_parser = size_arg, allow_hyphen_values = true)]
    pub size: Option<u64>,
    /// Provisioned IOPS (gp3, io1, io2, ...).
    #[arg(long, value_parser = iops_arg, allow_hyphen_values = true)]
    pub iops: Option<u64>,
    /// Provisioned throughput (e.g. 1000MiB/s; gp3).
    #[arg(long, value_parser = rate_arg, allow_hyphen_values = true)]
    pub throughput: Option<u64>,
}

// The numeric options of price and plan take values that start with '-' (`--size -5GiB`), so that
// a negative value is refused by what it is, not by clap as an unknown option "-5".

/// Refuses a negative value: `what` must be positive, e.g. `example`.
fn not_negative(s: &str, what: &str, example: &str) -> Result<(), String> {
    if s.trim_start().starts_with('-') {
        return Err(format!(
            "'{}' is negative: {what} must be positive, e.g. {example}",
            s.trim()
        ));
    }
    Ok(())
}

/// `--size`, `--capacity`: a size with its unit, not negative.
pub fn size_arg(s: &str) -> Result<u64, String> {
    not_negative(s, "a size", "100GiB")?;
    clap_parsers::volume_size(s)
}

/// `--throughput`: a rate with its unit, not negative.
pub fn rate_arg(s: &str) -> Result<u64, String> {
    not_negative(s, "a throughput", "1000MiB/s")?;
    clap_parsers::volume_rate(s)
}

/// `--iops`: a whole number, not negative.
pub fn iops_arg(s: &str) -> Result<u64, String> {
    not_negative(s, "IOPS", "16000")?;
    s.parse::<u64>().map_err(|e| e.to_string())
}

/// `--budget`: USD a month, not negative.
pub fn usd_arg(s: &str) -> Result<f64, String> {
    not_negative(s, "a monthly budget in USD", "200")?;
    finite(s, "a monthly budget in USD", "200")
}

/// `s` as a finite number: one too large for a double (`1e400`) is refused as typed, not shown
/// back as "inf" (QA: `--budget 1e400` said "--budget inf: give a positive monthly amount").
fn finite(s: &str, what: &str, example: &str) -> Result<f64, String> {
    let v = s.parse::<f64>().map_err(|e| e.to_string())?;
    if v.is_infinite() {
        return Err(format!(
            "'{}' is too large: {what} is a finite number, e.g. {example}",
            s.trim()
        ));
    }
    Ok(v)
}

/// `--hit-ratio`: a number, not negative (the planner checks it is at most 1).
pub fn ratio_arg(s: &str) -> Result<f64, String> {
    if s.trim_start().starts_with('-') {
        return Err(format!(
            "'{}' is negative: a hit ratio is between 0 and 1, e.g. 0.9",
            s.trim()
        ));
    }
    finite(s, "a hit ratio", "0.9")
}

/// `price --format json`: the shape, `schema_version` first.
#[derive(serde::Serialize)]
struct PriceDoc<'a> {
    schema_version: u32,
    #[serde(flatten)]
    quote: &'a Quote,
    /// Published prices of this very volume, checked against the catalog.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    quoted_checks: Vec<QuotedVolumeCheck>,
    /// The catalog is older than docs/catalog.md's limit: when, and how to refresh it.
    #[serde(skip_serializing_if = "Option::is_none")]
    stale_catalog: Option<StaleCatalog>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let cat = super::catalog::load(ctx)?;
    let stale_catalog = stale_catalog(&cat)?;
    let (quote, quoted_checks) = if args.kind == "instance" {
        let Some(name) = &args.instance else {
            anyhow::bail!("price instance needs an instance type, e.g. `disktier price instance m6id.xlarge --region us-east-1`");
        };
        if args.size.is_some() || args.iops.is_some() || args.throughput.is_some() {
            anyhow::bail!("--size, --iops and --throughput are for volumes, not `price instance`");
        }
        (price::instance(&cat, &args.region, name)?, Vec::new())
    } else {
        if let Some(extra) = &args.instance {
            anyhow::bail!(
                "unexpected argument '{extra}': `price {}` takes --size, --iops and --throughput",
                args.kind
            );
        }
        volume(
            &cat,
            &VolumeRequest {
                region: &args.region,
                kind: &args.kind,
                size: args.size,
                iops: args.iops,
                throughput: args.throughput,
            },
        )?
    };
    let doc = PriceDoc {
        schema_version: SCHEMA_VERSION,
        quote: &quote,
        quoted_checks,
        stale_catalog,
    };
    ctx.print(&doc, || {
        let mut text = render(&quote);
        for c in &doc.quoted_checks {
            text.push_str(&format!("note: {}\n", c.message));
        }
        text
    })?;
    super::catalog::warn_stale(ctx, doc.stale_catalog.as_ref());
    Ok(Outcome::Pass)
}

/// What the total's line says in place of a line item's detail.
const TOTAL_DETAIL: &str = "(each line rounded to the cent)";

/// The human form of a quote.
pub fn render(q: &Quote) -> String {
    let mut out = String::new();
    let what = match &q.config {
        Some(c) => {
            let mut s = format!("{} GiB", disktier_catalog::fmt::int(c.size_gib));
            if let Some(i) = c.iops {
                s.push_str(&format!(", {} IOPS", disktier_catalog::fmt::int(i)));
            }
            if let Some(t) = c.throughput_mibs {
                s.push_str(&format!(", {} MiB/s", num(t)));
            }
            format!(" ({s})")
        }
        None => String::new(),
    };
    out.push_str(&format!(
        "{} in {}{}: {}/month{}\n",
        q.type_,
        q.region,
        what,
        usd(q.monthly_cost_usd),
        if q.weak {
            " (some figures are weak: see sources)"
        } else {
            ""
        }
    ));
    // The total's own words count too: a short line item ("1 GiB x $0.08 per GB-month") set
    // its amount left of the total's (QA).
    let width = q
        .items
        .iter()
        .map(|i| i.detail.len())
        .chain([TOTAL_DETAIL.len()])
        .max()
        .unwrap_or(0);
    for i in &q.items {
        out.push_str(&format!(
            "  {:<20} {:<width$}  {:>12}\n",
            i.name,
            i.detail,
            usd(i.monthly_cost_usd)
        ));
    }
    out.push_str(&format!(
        "  {:<20} {:<width$}  {:>12}\n",
        "total",
        TOTAL_DETAIL,
        usd(q.monthly_cost_usd)
    ));
    // The summary says "performance not in the catalog" for an instance without published
    // figures; after "performance:" that said it twice (QA).
    let summary = q.performance.summary();
    let summary = summary
        .strip_prefix("performance ")
        .unwrap_or(&summary)
        .to_string();
    out.push_str(&format!("performance: {summary}\n"));
    for n in &q.performance.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    for s in &q.sources {
        out.push_str(&format!("source: {s}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number too large for a double is refused as typed (before: `--budget 1e400` was
    /// "--budget inf: ...", `--hit-ratio 1e400` "hit ratio inf is not between 0 and 1").
    #[test]
    fn a_value_too_large_is_refused_as_typed() {
        assert_eq!(
            usd_arg("1e400").unwrap_err(),
            "'1e400' is too large: a monthly budget in USD is a finite number, e.g. 200"
        );
        assert_eq!(
            ratio_arg("1e400").unwrap_err(),
            "'1e400' is too large: a hit ratio is a finite number, e.g. 0.9"
        );
        assert_eq!(usd_arg("200").unwrap(), 200.0);
        assert!(usd_arg("inf").is_err());
        assert!(
            usd_arg("NaN").unwrap().is_nan(),
            "NaN is the planner's to refuse"
        );
    }

    /// An instance without published figures says so once (before: "performance: performance
    /// not in the catalog" for every EBS-only instance and the i3s).
    #[test]
    fn performance_not_in_the_catalog_is_said_once() {
        let cat = disktier_catalog::Catalog::embedded();
        for name in ["m6i.xlarge", "i4i.8xlarge"] {
            let text = render(&price::instance(&cat, "us-east-1", name).unwrap());
            assert!(
                text.contains("\nperformance: not in the catalog\n"),
                "{text}"
            );
        }
        let text = render(&price::instance(&cat, "us-east-1", "m6id.xlarge").unwrap());
        assert!(text.contains("\nperformance: 33,542 IOPS\n"), "{text}");
    }

    /// Every amount of a quote's table ends in one column, the total's too, however short the
    /// line items' details (QA: `price gp3 --size 1GiB` printed its $0.08 total five columns
    /// right of the storage line's).
    #[test]
    fn the_amounts_of_a_short_quote_line_up_with_its_total() {
        let cat = disktier_catalog::Catalog::embedded();
        for (kind, size) in [("gp3", 1), ("gp2", 1), ("gp3", 65536)] {
            let cfg = disktier_catalog::VolumeConfig {
                size_gib: size,
                iops: None,
                throughput_mibs: None,
            };
            let q = price::volume(&cat, "us-east-1", kind, &cfg).unwrap();
            let text = render(&q);
            let ends: Vec<usize> = text
                .lines()
                .filter(|l| l.starts_with("  ") && l.ends_with(|c: char| c.is_ascii_digit()))
                .map(|l| l.trim_end().chars().count())
                .collect();
            assert!(ends.len() >= 2, "{text}");
            assert!(ends.iter().all(|&e| e == ends[0]), "{text}");
        }
    }
}
