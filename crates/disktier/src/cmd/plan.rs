//! `disktier plan`: the storage options that meet capacity, IOPS and throughput in a region,
//! cheapest first, with savings against the cheapest single volume and caveats in words.

use super::price::{iops_arg, rate_arg, ratio_arg, size_arg, usd_arg};
use super::{Ctx, Outcome};
use crate::app::plan::{plan, Options};
use disktier_catalog::fmt::{int, num, secs, share, usd};
use disktier_catalog::perf::rate_parts;
use disktier_catalog::plan::{unverified_words, StoragePlan, HIT_RATIO_MEANS};
use disktier_units::clap_parsers;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Region (e.g. us-east-1, eu-north-1, us-central1, eastus: `disktier catalog show` lists them).
    #[arg(long, default_value = "us-east-1")]
    pub region: String,
    /// Capacity the data needs (e.g. 200GiB, 5TiB); rounded up to whole GiB.
    #[arg(long, value_parser = size_arg, allow_hyphen_values = true)]
    pub capacity: u64,
    /// Sustained IOPS needed (small random I/O).
    #[arg(long, value_parser = iops_arg, allow_hyphen_values = true)]
    pub iops: Option<u64>,
    /// Sustained throughput needed (e.g. 1000MiB/s).
    #[arg(long, value_parser = rate_arg, allow_hyphen_values = true)]
    pub throughput: Option<u64>,
    /// Also weigh a fast cache volume in front of a cheap HDD volume (bcache/lvmcache).
    #[arg(long)]
    pub allow_hybrid: bool,
    /// The hit ratio assumed for hybrid caches (0-1; default 0.9).
    #[arg(long, conflicts_with = "trace", value_parser = ratio_arg, allow_hyphen_values = true)]
    pub hit_ratio: Option<f64>,
    /// A block I/O trace (disktier's trace format: `disktier trace record|import`): hybrids use
    /// the hit ratio simulated for each cache size instead of an assumed one (implies --allow-hybrid).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// The cache policy simulated with --trace (lru, arc, s3fifo, bcache, lvmcache).
    #[arg(long, default_value = "lru", requires = "trace")]
    pub trace_policy: String,
    /// Cache block size simulated with --trace.
    #[arg(long, default_value = "4k", value_parser = clap_parsers::size, requires = "trace")]
    pub trace_block: u64,
    /// Monthly budget in USD: keep the options within it, best predicted performance first
    /// (sustained IOPS, then MiB/s; with --trace, hybrids at their simulated hit ratio).
    #[arg(long, value_name = "USD", value_parser = usd_arg, allow_hyphen_values = true)]
    pub budget: Option<f64>,
    /// The instance (or GCP machine type) the data lives on, to weigh its instance-store sibling.
    #[arg(long)]
    pub instance: Option<String>,
    /// Weigh instance store / local SSD (data lost when the instance stops).
    #[arg(long)]
    pub allow_ephemeral: bool,
}

impl Args {
    fn into_options(self) -> Options {
        Options {
            region: self.region,
            capacity: self.capacity,
            iops: self.iops,
            throughput: self.throughput,
            allow_hybrid: self.allow_hybrid,
            hit_ratio: self.hit_ratio,
            trace: self.trace,
            trace_policy: self.trace_policy,
            trace_block: self.trace_block,
            budget: self.budget,
            instance: self.instance,
            allow_ephemeral: self.allow_ephemeral,
        }
    }
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<Outcome> {
    let cat = super::catalog::load(ctx)?;
    let stale_catalog = crate::app::price::stale_catalog(&cat)?;
    let p = plan(&cat, &args.into_options(), &|m| ctx.note(m))?;
    let doc = PlanDoc {
        schema_version: crate::app::SCHEMA_VERSION,
        plan: &p,
        stale_catalog,
    };
    ctx.print(&doc, || render(&p))?;
    super::catalog::warn_stale(ctx, doc.stale_catalog.as_ref());
    Ok(Outcome::Pass)
}

/// `plan --format json`: the shape, `schema_version` first.
#[derive(serde::Serialize)]
struct PlanDoc<'a> {
    schema_version: u32,
    #[serde(flatten)]
    plan: &'a StoragePlan,
    /// The catalog is older than docs/catalog.md's limit: when, and how to refresh it.
    #[serde(skip_serializing_if = "Option::is_none")]
    stale_catalog: Option<disktier_catalog::age::StaleCatalog>,
}

/// The human form of a plan.
pub fn render(p: &StoragePlan) -> String {
    let r = &p.requirements;
    let mut want = format!("{} GiB", int(r.capacity_gib));
    if let Some(i) = r.iops {
        want.push_str(&format!(", {} IOPS", int(i)));
    }
    if let Some(t) = r.throughput_mibs {
        want.push_str(&format!(", {} MiB/s", num(t)));
    }
    let mut out = format!(
        "plan for {want} in {} (sustained figures; bursts are shown, not counted)\n",
        p.region
    );
    if let Some(h) = p.assumed_hit_ratio {
        out.push_str(&format!(
            "hybrids assume a cache hit ratio of {} ({HIT_RATIO_MEANS}; --hit-ratio); savings are against the cheapest single volume\n",
            // As precise as the hybrids' own lines: 0.9975 is not "1" (no misses at all).
            share(h)
        ));
    }
    if let Some(d) = &p.prices_recorded {
        let span = if d.oldest == d.newest {
            d.oldest.clone()
        } else {
            format!("{} to {}", d.oldest, d.newest)
        };
        out.push_str(&format!(
            "prices recorded {span} (catalog {}; sources: disktier price TYPE; to update them: disktier catalog --help)\n",
            d.catalog
        ));
    }
    out.push('\n');
    for (n, o) in p.options.iter().enumerate() {
        let savings = match o.savings_usd {
            Some(s) if s > 0.0 => format!(", saves {}/month", usd(s)),
            Some(s) if s < 0.0 => format!(", {}/month more", usd(-s)),
            Some(_) => " (cheapest single volume)".into(),
            None => String::new(),
        };
        let unverified = if o.unverified.is_empty() {
            String::new()
        } else {
            format!("  [{} unverified]", unverified_words(&o.unverified))
        };
        out.push_str(&format!(
            "{:>2}. {:<14} {:>11}/month{}{}{unverified}\n    {}\n",
            n + 1,
            o.kind.name(),
            usd(o.monthly_cost_usd),
            savings,
            if o.weak { "  [weak figures]" } else { "" },
            o.label
        ));
        let perf = &o.performance;
        let mut line = rate_parts(perf.iops, perf.throughput_mibs);
        let burst = rate_parts(perf.burst_iops, perf.burst_throughput_mibs);
        if !burst.is_empty() {
            line.push(format!(
                "burst {}{}",
                burst.join(", "),
                perf.burst_seconds
                    .map(|s| format!(" for {}", secs(s)))
                    .unwrap_or_default()
            ));
        }
        if let Some(h) = perf.hit_ratio {
            line.push(format!(
                "at hit ratio {} ({HIT_RATIO_MEANS}; {})",
                share(h),
                perf.hit_ratio_source.as_deref().unwrap_or("assumed")
            ));
        }
        if !line.is_empty() {
            out.push_str(&format!("    performance: {}\n", line.join("; ")));
        }
        if o.components.len() > 1 {
            for c in &o.components {
                out.push_str(&format!(
                    "    {} {} {} GiB: {}/month\n",
                    c.role,
                    c.type_,
                    int(c.size_gib),
                    usd(c.monthly_cost_usd)
                ));
            }
        }
        if let Some(e) = &o.equivalent {
            out.push_str(&format!(
                "    the same money buys {} GiB of gp2 or {} GiB of gp3 (exact delta {})\n",
                e.gp2_gib.map(int).unwrap_or_else(|| "?".into()),
                e.gp3_gib.map(int).unwrap_or_else(|| "?".into()),
                o.exact_monthly_cost_usd
                    .map(|x| format!("${x:.3}"))
                    .unwrap_or_default()
            ));
        }
        for c in &o.caveats {
            out.push_str(&format!("    - {c}\n"));
        }
    }
    if !p.rejected.is_empty() {
        out.push_str("\nnot meeting the requirements:\n");
        for r in &p.rejected {
            let cost = r
                .nearest
                .as_ref()
                .map(|n| {
                    if n.label == r.label {
                        format!(" ({}/month)", usd(n.monthly_cost_usd))
                    } else {
                        format!(
                            "; nearest: {} at {}/month",
                            n.label,
                            usd(n.monthly_cost_usd)
                        )
                    }
                })
                .unwrap_or_default();
            out.push_str(&format!(
                "  {} {}: {}{}\n",
                r.kind.name(),
                r.label,
                r.reason,
                cost
            ));
        }
    }
    for n in &p.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
