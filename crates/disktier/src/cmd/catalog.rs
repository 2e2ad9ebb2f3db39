//! `disktier catalog show | check | import aws-offer`: the embedded price/performance catalog
//! (merged with `--catalog FILE`), its validation, and refreshing it from AWS's price list.

use super::{print_json, Ctx, Outcome};
use crate::app::SCHEMA_VERSION;
use anyhow::Context;
use disktier_catalog::check::check;
use disktier_catalog::fmt::{fine, int, num, unit_usd};
use disktier_catalog::import::{aws_offer, refresh};
use disktier_catalog::model::{
    IopsRule, ProvisionedIops, ProvisionedThroughput, SizeTier, ThroughputRule, VolumeType,
};
use disktier_catalog::{price, Catalog};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Print the catalog: unit prices per region with source and date, rules per type, instances.
    #[command(after_help = super::EXIT_OK)]
    Show {
        /// Only this region (e.g. us-east-1, eu-north-1, us-central1).
        #[arg(long)]
        region: Option<String>,
    },
    /// Validate the catalog (with --catalog FILE merged in): exit 1 listing the problems.
    #[command(
        after_help = "Exit status: 0 no problem, 1 problems found (listed), 2 usage or runtime error (the catalog or overlay cannot be read)."
    )]
    Check,
    /// Write a catalog file from a cloud's own price list.
    #[command(after_help = super::EXIT_OK)]
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
    /// Write a catalog file of GCP or Azure prices from saved pages of the cloud's price API
    /// (read as streams; nothing is fetched from the network).
    #[command(after_help = super::EXIT_OK)]
    Refresh {
        #[command(subcommand)]
        source: RefreshSource,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum RefreshSource {
    /// Compute Engine SKUs from the Cloud Billing Catalog API (services/6F81-5844-456A/skus),
    /// one JSON response per page: disk prices (pd-*, hyperdisk-*, local SSD) of the region.
    Gcp(RefreshArgs),
    /// Azure Retail Prices API responses (prices.azure.com/api/retail/prices), one JSON page
    /// each: Premium SSD v2 and the catalog's Lsv3/Lasv3 VM prices of the region.
    Azure(RefreshArgs),
}

#[derive(Debug, clap::Args)]
pub struct RefreshArgs {
    /// The saved API responses (JSON), one per page.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The region to take prices for (e.g. asia-east1, eastus).
    #[arg(long)]
    pub region: String,
    /// Where to write the catalog file (default: catalog-<region>.toml).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
pub enum ImportSource {
    /// AWS's bulk price list offer file (AmazonEC2 <region>/index.json), read as a stream.
    AwsOffer {
        /// The offer file (JSON).
        file: PathBuf,
        /// The region to take prices for (e.g. us-east-1).
        #[arg(long)]
        region: String,
        /// Where to write the catalog file (default: catalog-<region>.toml).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

/// The embedded catalog with `--catalog FILE` merged in: what price, plan and catalog run on.
pub fn load(ctx: &Ctx) -> anyhow::Result<Catalog> {
    Ok(Catalog::with_overlay(overlay(ctx))?)
}

/// The overlay file of `--catalog` or `DISKTIER_CATALOG`; an empty value is no overlay, as an
/// unset variable is.
fn overlay(ctx: &Ctx) -> Option<&std::path::Path> {
    ctx.global
        .catalog
        .as_deref()
        .filter(|p| !p.as_os_str().is_empty())
}

/// Says on stderr (unless --quiet) that the catalog is stale; `--format json` carries the same
/// as `stale_catalog`.
pub fn warn_stale(ctx: &Ctx, stale: Option<&disktier_catalog::age::StaleCatalog>) {
    if let Some(s) = stale {
        ctx.note(format_args!("warning: {}", s.message));
    }
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    match args.command {
        Sub::Show { region } => show(ctx, region),
        Sub::Check => run_check(ctx),
        Sub::Import {
            source:
                ImportSource::AwsOffer {
                    file,
                    region,
                    output,
                },
        } => import(ctx, file, region, output),
        Sub::Refresh { source } => {
            let (cloud, a) = match source {
                RefreshSource::Gcp(a) => (refresh::Cloud::Gcp, a),
                RefreshSource::Azure(a) => (refresh::Cloud::Azure, a),
            };
            run_refresh(ctx, cloud, a)
        }
    }
}

/// `catalog show --format json`: the catalog, and `stale_catalog` when it is old.
#[derive(serde::Serialize)]
struct ShowDoc<'a> {
    schema_version: u32,
    #[serde(flatten)]
    catalog: &'a Catalog,
    #[serde(skip_serializing_if = "Option::is_none")]
    stale_catalog: Option<&'a disktier_catalog::age::StaleCatalog>,
}

fn show(ctx: &Ctx, region: Option<String>) -> anyhow::Result<Outcome> {
    let cat = load(ctx)?;
    let stale_catalog = crate::app::price::stale_catalog(&cat)?;
    let cat = match &region {
        Some(r) => {
            price::region(&cat, r)?;
            cat.for_region(r)
        }
        None => cat,
    };
    if ctx.json() {
        print_json(&ShowDoc {
            schema_version: SCHEMA_VERSION,
            catalog: &cat,
            stale_catalog: stale_catalog.as_ref(),
        })?;
        warn_stale(ctx, stale_catalog.as_ref());
        return Ok(Outcome::Pass);
    }
    outln!(
        "catalog {} ({}){}",
        cat.version.as_deref().unwrap_or("?"),
        cat.date.as_deref().unwrap_or("?"),
        overlay(ctx)
            .map(|p| format!(
                ", with {} merged in",
                disktier_catalog::suggest::printable(&p.display().to_string())
            ))
            .unwrap_or_default()
    )?;
    outln!("prices: USD; 730 h/month; GB-month billed per GiB; * = weak (back-solved or secondary source)")?;
    for reg in &cat.regions {
        outln!()?;
        outln!(
            "{} ({}){}{}",
            reg.name,
            reg.cloud,
            if reg.weak { " *" } else { "" },
            reg.note
                .as_ref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        )?;
        for p in cat.volume_prices.iter().filter(|p| p.region == reg.name) {
            let vt = cat.volume_type(&p.type_);
            let mut parts = vec![match &p.tier_prices {
                Some(tiers) => format!(
                    "per size tier: {}",
                    tiers
                        .iter()
                        .map(|t| format!("{} GiB {}", int(t.size_gib), unit_usd(t.usd_month)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => format!("{}/GB-month", unit_usd(p.storage_gb_month)),
            }];
            let included = match vt.map(|t| &t.iops) {
                Some(IopsRule::Provisioned(ProvisionedIops { included, .. })) if *included > 0 => {
                    format!(" above {}", int(*included))
                }
                _ => String::new(),
            };
            if let Some(i) = p.iops_month {
                parts.push(format!("{}/IOPS-month{included}", unit_usd(i)));
            }
            if let Some(tiers) = &p.iops_tiers {
                let t: Vec<String> = tiers
                    .iter()
                    .map(|t| {
                        format!(
                            "{}{}{}",
                            unit_usd(t.usd),
                            t.up_to
                                .map(|u| format!(" to {}", int(u)))
                                .unwrap_or_else(|| " above".into()),
                            if t.weak { "*" } else { "" }
                        )
                    })
                    .collect();
                parts.push(format!("IOPS-month {}", t.join(", ")));
            }
            if let Some(t) = p.throughput_mibs_month {
                let inc = match vt.map(|t| &t.throughput) {
                    Some(ThroughputRule::Provisioned(ProvisionedThroughput {
                        included_mibs,
                        ..
                    })) => {
                        format!(" above {}", num(*included_mibs))
                    }
                    _ => String::new(),
                };
                parts.push(format!("{}/MiB/s-month{inc}", unit_usd(t)));
            }
            outln!(
                "  {:<18} {}{}",
                p.type_,
                parts.join(" + "),
                if p.weak { " *" } else { "" }
            )?;
            outln!("  {:<18} source: {} ({})", "", p.source, p.date)?;
            if let Some(n) = &p.note {
                outln!("  {:<18} note: {n}", "")?;
            }
        }
        for p in cat.instance_prices.iter().filter(|p| p.region == reg.name) {
            let store = cat
                .instance(&p.type_)
                .and_then(|i| i.store.as_ref())
                .map(|s| format!("{} x {} GB NVMe", s.count, int(s.size_gb)))
                .unwrap_or_else(|| "EBS only".into());
            outln!(
                "  {:<18} {}/hour ({}/month), {}{}",
                p.type_,
                unit_usd(p.usd_per_hour),
                disktier_catalog::fmt::usd(p.usd_per_hour * price::HOURS_PER_MONTH),
                store,
                if p.weak { " *" } else { "" }
            )?;
            if let Some(n) = &p.note {
                outln!("  {:<18} note: {n}", "")?;
            }
        }
    }
    outln!()?;
    outln!("volume type rules:")?;
    for t in &cat.volume_types {
        outln!(
            "  {:<18} {}{}",
            t.name,
            rules_line(t),
            if t.weak { " *" } else { "" }
        )?;
    }
    let gcp: Vec<String> = cat
        .instances
        .iter()
        .filter_map(|i| {
            i.local_ssd_counts.as_ref().map(|c| {
                if c.is_empty() {
                    format!("{}: none", i.name)
                } else {
                    format!(
                        "{}: {}",
                        i.name,
                        c.iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                }
            })
        })
        .collect();
    if !gcp.is_empty() {
        // In the catalog's unit, GiB: GCP's "375 GB" local SSD is 375 GiB, 402,653,184,000 bytes
        // (fdisk in the GKE local-SSD recipe), as price and plan say (QA: "375 GB each" here).
        let unit = cat
            .volume_type("local-ssd")
            .and_then(|t| t.unit_gib)
            .unwrap_or(375);
        outln!(
            "local SSD counts ({} GiB each): {}",
            int(unit),
            gcp.join("; ")
        )?;
    }
    warn_stale(ctx, stale_catalog.as_ref());
    Ok(Outcome::Pass)
}

/// A scaled rule's rate: "3/GiB", or "100 + 0.5/GiB" with a base.
fn scaled(base: f64, per_gib: f64) -> String {
    if base > 0.0 {
        format!("{} + {}/GiB", num(base), num(per_gib))
    } else {
        format!("{}/GiB", num(per_gib))
    }
}

/// "per size tier (...)": the type's tiers, each as `each` shows it.
fn per_size_tier(t: &VolumeType, each: impl Fn(&SizeTier) -> String) -> String {
    let tiers: Vec<String> = t.size_tiers.iter().flatten().map(each).collect();
    format!("per size tier ({})", tiers.join(", "))
}

fn rules_line(t: &VolumeType) -> String {
    let mut s = format!("{}-{} GiB", int(t.min_gib), int(t.max_gib));
    s.push_str("; IOPS ");
    s.push_str(&match &t.iops {
        IopsRule::Provisioned(p) => format!(
            "{}-{} provisioned{}{}",
            int(p.min),
            int(p.max),
            if p.included > 0 {
                format!(", {} included", int(p.included))
            } else {
                String::new()
            },
            p.max_per_gib
                .map(|p| format!(", <= {}/GiB", num(p)))
                .unwrap_or_default()
        ),
        IopsRule::Scaled {
            per_gib,
            base,
            min,
            max,
        } => format!("{}, {}-{}", scaled(*base, *per_gib), int(*min), int(*max)),
        IopsRule::Cap { max } => format!("cap {}", int(*max)),
        IopsRule::SizeTier => per_size_tier(t, |x| {
            format!("{} {} GiB: {}", x.name, int(x.size_gib), int(x.iops))
        }),
        IopsRule::Unknown => "not in catalog".into(),
    });
    if let Some(b) = &t.burst {
        s.push_str(&format!(
            ", burst {} from {} credits",
            int(b.burst_iops),
            int(b.bucket_credits as u64)
        ));
    }
    s.push_str("; MiB/s ");
    s.push_str(&match &t.throughput {
        ThroughputRule::Provisioned(p) => format!(
            "{} included, up to {}{}{}",
            num(p.included_mibs),
            num(p.max_mibs),
            p.max_mibs_per_iops
                .map(|p| format!(", <= {} per IOPS", fine(p)))
                .unwrap_or_default(),
            p.step_mibs
                .map(|s| format!(", in steps of {}", fine(s)))
                .unwrap_or_default()
        ),
        ThroughputRule::Scaled {
            per_gib,
            base,
            max_mibs,
        } => format!("{}, up to {}", scaled(*base, *per_gib), num(*max_mibs)),
        ThroughputRule::SizeTier => {
            per_size_tier(t, |x| format!("{} {} MB/s", x.name, num(x.mbps)))
        }
        ThroughputRule::Tiers { tiers } => tiers
            .iter()
            .map(|x| {
                format!(
                    "{} from {} GiB{}",
                    num(x.mibs),
                    int(x.from_gib),
                    x.burst_mibs
                        .map(|b| format!(" (burst {})", num(b)))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        ThroughputRule::PerIops {
            mibs_per_iops,
            max_mibs,
            plateau,
            ..
        } => {
            format!(
                "{} per IOPS, up to {}{}",
                fine(*mibs_per_iops),
                num(*max_mibs),
                plateau
                    .as_ref()
                    .map(|x| format!(
                        " (held at {} from {} to {} IOPS, then {} per IOPS)",
                        num(x.mibs),
                        num(x.mibs / mibs_per_iops),
                        num(x.mibs / x.mibs_per_iops),
                        fine(x.mibs_per_iops)
                    ))
                    .unwrap_or_default()
            )
        }
        ThroughputRule::PerTib(rule) => format!(
            "{}/TiB baseline, {}/TiB burst, cap {}",
            num(rule.baseline_per_tib),
            num(rule.burst_per_tib),
            num(rule.max_mibs)
        ),
        ThroughputRule::Unknown => "not in catalog".into(),
    });
    if let Some(k) = t.io_accounting_kib {
        s.push_str(&format!("; each I/O counts as {} KiB", int(k)));
    }
    if let Some(k) = t.max_io_kib {
        s.push_str(&format!(
            "; sustained MiB/s at most baseline IOPS x {} KiB (an I/O up to it counts as one)",
            int(k)
        ));
    }
    s
}

fn run_check(ctx: &Ctx) -> anyhow::Result<Outcome> {
    let cat = load(ctx)?;
    let report = check(&cat);
    if ctx.json() {
        print_json(&serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "version": cat.version,
            "date": cat.date,
            "ok": report.ok(),
            "problems": report.problems,
            "warnings": report.warnings,
            "counted": report.counted,
        }))?;
    } else {
        let c = &report.counted;
        outln!(
            "catalog {} ({}): {} regions, {} volume types, {} volume prices, {} instances, {} instance prices ({} weak prices)",
            cat.version.as_deref().unwrap_or("?"),
            cat.date.as_deref().unwrap_or("?"),
            c.regions,
            c.volume_types,
            c.volume_prices,
            c.instances,
            c.instance_prices,
            c.weak_prices
        )?;
        for w in &report.warnings {
            outln!("warning: {w}")?;
        }
        for p in &report.problems {
            outln!("problem: {p}")?;
        }
        outln!(
            "{}",
            if report.ok() {
                "ok".to_string()
            } else {
                disktier_catalog::fmt::count(report.problems.len(), "problem")
            }
        )?;
    }
    Ok(if report.ok() {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

fn import(
    ctx: &Ctx,
    file: PathBuf,
    region: String,
    output: Option<PathBuf>,
) -> anyhow::Result<Outcome> {
    let out = output.unwrap_or_else(|| PathBuf::from(format!("catalog-{region}.toml")));
    let summary = aws_offer::import_file(&file, &region, &out)
        .with_context(|| format!("nothing written to {}", out.display()))?;
    // A newline in the name must not split the line (as `report -o`'s).
    let shown = crate::text::printable(&out.display().to_string(), false);
    let line = format!(
        "wrote {shown}: {} volume prices, {} instance types for {} ({} products skipped); use it with --catalog {shown}",
        summary.volume_prices,
        summary.instance_prices,
        summary.region,
        summary.products_skipped,
    );
    print_written(ctx, &out, &summary, &line)
}

fn run_refresh(ctx: &Ctx, cloud: refresh::Cloud, a: RefreshArgs) -> anyhow::Result<Outcome> {
    let out = a
        .output
        .unwrap_or_else(|| PathBuf::from(format!("catalog-{}.toml", a.region)));
    let today = crate::app::price::today()?;
    let today = format!(
        "{:04}-{:02}-{:02}",
        today.year(),
        u8::from(today.month()),
        today.day()
    );
    let summary = refresh::refresh_files(cloud, &a.files, &a.region, &out, &today)
        .with_context(|| format!("nothing written to {}", out.display()))?;
    let shown = crate::text::printable(&out.display().to_string(), false);
    let line = format!(
        "wrote {shown}: {} volume prices, {} instance prices for {} {} (prices of {}; {} items read from {} file(s)); use it with --catalog {shown}",
        summary.volume_prices,
        summary.instance_prices,
        summary.cloud,
        summary.region,
        summary.date,
        summary.items_read,
        summary.files,
    );
    print_written(ctx, &out, &summary, &line)
}

/// What an import or a refresh wrote: `{schema_version, output, summary}` with `--format json`,
/// else `line`.
fn print_written(
    ctx: &Ctx,
    out: &std::path::Path,
    summary: &impl serde::Serialize,
    line: &str,
) -> anyhow::Result<Outcome> {
    if ctx.json() {
        print_json(&serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "output": crate::text::path_json(out),
            "summary": summary,
        }))?;
    } else {
        outln!("{line}")?;
    }
    Ok(Outcome::Pass)
}
