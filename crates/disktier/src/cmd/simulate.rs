//! `disktier simulate`: replay a trace through cache policies and sizes, print hit ratios
//! (reads and writes apart), the traffic each device sees, an LRU miss-ratio curve and, given a
//! cache and a backing volume from the catalog, predicted IOPS and latency.

use super::{print_json, Ctx, Outcome};
use crate::app::simulate::{device, simulate, Replaying, Request, Simulation};
use disktier_cachesim::policy::bcache::{BcacheConfig, CacheMode};
use disktier_cachesim::policy::smq::SmqConfig;
use disktier_cachesim::policy::PolicyKind;
use disktier_cachesim::sim;
use disktier_units::{clap_parsers, Bytes};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A DTTRACE file (`disktier trace record` or `trace import`).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    /// Cache sizes: a list (1GiB,2GiB) or a doubling range (1GiB..64GiB).
    #[arg(long, value_name = "SIZES")]
    pub cache_sizes: String,
    /// Policies: lru, arc, s3fifo, bcache, lvmcache (dm-cache smq).
    #[arg(long, default_value = "lru,arc,s3fifo,bcache,lvmcache")]
    pub policies: String,
    /// Cache block size (the unit of hits and of the block-level policies).
    #[arg(long, default_value = "4KiB", value_parser = clap_parsers::size)]
    pub block: u64,
    /// SHARDS spatial sampling rate, e.g. 0.01: simulate 1 % of blocks with caches scaled by
    /// the same rate (fast on huge traces; sizes below block/rate are not resolved).
    #[arg(long, value_name = "RATE")]
    pub sample: Option<f64>,
    /// bcache's cache_mode: writethrough (the kernel's default), writeback, writearound.
    #[arg(long, default_value = "writethrough", value_parser = parse_mode)]
    pub bcache_mode: CacheMode,
    /// bcache's bucket size (make-bcache's default: 512KiB).
    #[arg(long, default_value = "512KiB", value_parser = clap_parsers::size)]
    pub bcache_bucket: u64,
    /// bcache's sequential_cutoff (its default, 4 << 20 bytes, which bcache.rst calls 4 MB;
    /// 0 disables, as the bcache-on-EBS recipe does).
    #[arg(long, default_value = "4MiB", value_parser = clap_parsers::size)]
    pub sequential_cutoff: u64,
    /// bcache's writeback_percent (dirty data the writeback controller aims for).
    #[arg(long, default_value_t = 10)]
    pub writeback_percent: u32,
    /// lvmcache's chunk size (lvm's cache-smq profile: 64KiB).
    #[arg(long, default_value = "64KiB", value_parser = clap_parsers::size)]
    pub lvm_chunk: u64,
    /// lvmcache's cache mode: writethrough (lvm's default) or writeback.
    #[arg(long, default_value = "writethrough", value_parser = parse_mode)]
    pub lvm_mode: CacheMode,
    /// The cache volume for predictions: TYPE:SIZE[:IOPS[:MiBps]] from the catalog,
    /// e.g. gp3:32GiB:16000:1000 (as in the bcache-on-EBS recipe).
    #[arg(long, value_name = "SPEC", requires = "backing_volume")]
    pub cache_volume: Option<String>,
    /// The backing volume for predictions, e.g. st1:1TiB (its burst bucket and 500-IOPS cap
    /// and the writeback drain onto it are modelled).
    #[arg(long, value_name = "SPEC", requires = "cache_volume")]
    pub backing_volume: Option<String>,
    /// Skip the LRU miss-ratio curve.
    #[arg(long)]
    pub no_mrc: bool,
}

/// A hit or miss ratio as a percentage followed by `unit`, or "-" when there were no accesses
/// of the kind (a trace without writes has no write hit ratio: not 0 % hits, not 100 % misses).
fn share(ratio: f64, accesses: u64, unit: &str) -> String {
    if accesses == 0 {
        "-".to_string()
    } else {
        format!("{:.1}{unit}", ratio * 100.0)
    }
}

fn draw_replay(r: &Replaying) {
    super::progress::draw(&super::progress::reading_line("simulate", r));
}

fn parse_mode(s: &str) -> Result<CacheMode, String> {
    CacheMode::from_name(s).map_err(|e| e.to_string())
}

pub fn run(ctx: &Ctx, a: Args) -> anyhow::Result<Outcome> {
    let sizes = sim::parse_sizes(&a.cache_sizes)?;
    let policies = PolicyKind::parse_list(&a.policies)?;
    let models = match (&a.cache_volume, &a.backing_volume) {
        (Some(c), Some(b)) => {
            let cat = super::catalog::load(ctx)?;
            Some((
                device(&cat, c, "--cache-volume")?,
                device(&cat, b, "--backing-volume")?,
            ))
        }
        _ => None,
    };
    let sim = simulate(
        Request {
            trace: &a.trace,
            sizes,
            policies,
            block: a.block,
            sample: a.sample,
            bcache: BcacheConfig {
                mode: a.bcache_mode,
                bucket_size: a.bcache_bucket,
                sequential_cutoff: a.sequential_cutoff,
                writeback_percent: a.writeback_percent,
                ..BcacheConfig::default()
            },
            smq: SmqConfig {
                chunk_size: a.lvm_chunk,
                mode: a.lvm_mode,
                drain_limit: None,
            },
            mrc: !a.no_mrc,
            models: models.as_ref(),
            progress: super::progress::enabled(ctx).then_some(&draw_replay),
        },
        &|m| ctx.note(m),
    );
    super::progress::clear();
    let sim = sim?;
    if ctx.json() {
        print_json(&sim.document(&a.trace, models.as_ref())?)?;
        return Ok(Outcome::Pass);
    }
    let Simulation {
        report,
        source: _,
        predictions,
        mrc,
    } = sim;
    outln!(
        "{}: {} requests over {:.1} s, {} blocks{}",
        crate::text::path(&a.trace),
        report.trace_requests,
        report.trace_seconds,
        Bytes(a.block),
        a.sample
            .map(|r| format!(", SHARDS sample {r}"))
            .unwrap_or_default()
    )?;
    outln!(
        "{:<9} {:>10} {:>7} {:>7} {:>7} {:>11} {:>11} {:>11} {:>11}{}",
        "policy",
        "cache",
        "hit",
        "read",
        "write",
        "backing rd",
        "backing wr",
        "bypassed",
        "dirty end",
        if models.is_some() {
            "    IOPS sust/burst   p99"
        } else {
            ""
        }
    )?;
    for (r, p) in report.results.iter().zip(&predictions) {
        let c = &r.counters;
        let pred = p
            .as_ref()
            .map(|p| {
                format!(
                    "  {:>8.0}/{:<8.0} {:>6}",
                    p.max_iops_sustained,
                    p.max_iops_burst,
                    disktier_units::fmt_ns(p.p99_latency_s * 1e9)
                )
            })
            .unwrap_or_default();
        outln!(
            "{:<9} {:>10} {:>6.1}% {:>7} {:>7} {:>11} {:>11} {:>11} {:>11}{}",
            r.policy_name(),
            Bytes(r.cache_bytes).to_string(),
            r.hit_ratio * 100.0,
            share(r.read_hit_ratio, c.read_blocks, "%"),
            share(r.write_hit_ratio, c.write_blocks, "%"),
            Bytes(c.backing_read_bytes).to_string(),
            Bytes(c.backing_write_bytes).to_string(),
            Bytes(c.bypassed_bytes).to_string(),
            Bytes(c.dirty_bytes_end).to_string(),
            pred
        )?;
    }
    if report
        .results
        .iter()
        .any(|r| r.policy == PolicyKind::Lvmcache)
    {
        outln!(
            "lvmcache promotes whole {} chunks: a first access to a block whose chunk is cached counts as a hit, so its hit ratio can pass the {} block reuse `trace stats` gives as the best a block cache can do",
            Bytes(a.lvm_chunk),
            Bytes(a.block)
        )?;
    }
    if let Some(m) = &mrc {
        outln!(
            "LRU miss-ratio curve ({}{}):",
            if m.exact {
                "exact, stack distances"
            } else {
                "SHARDS"
            },
            m.sample
                .map(|r| format!(
                    " at rate {r}, sizes under {} unresolved",
                    Bytes(m.min_resolved_bytes)
                ))
                .unwrap_or_default()
        )?;
        for p in &m.points {
            outln!(
                "  {:>10}  miss {:5.1} %  (reads {:>7}, writes {:>7})",
                Bytes(p.cache_bytes).to_string(),
                p.miss_ratio * 100.0,
                share(p.read_miss_ratio, m.read_accesses(), " %"),
                share(p.write_miss_ratio, m.write_accesses(), " %")
            )?;
        }
    }
    if let Some((c, b)) = &models {
        let window = predictions
            .iter()
            .flatten()
            .map(|p| p.window_s)
            .max()
            .unwrap_or(1);
        let per = if window > 1 {
            format!("per {window}-second window of the trace (it has more busy seconds than are kept one by one: bursts shorter than a window are averaged, so the figures are optimistic)")
        } else {
            "per second of the trace".to_string()
        };
        outln!(
            "predictions: cache {} ({:.0} IOPS, {}/s), backing {} ({:.0} IOPS, {}/s{}); M/M/1 queueing {per}, a model not a measurement",
            c.name,
            c.iops,
            Bytes(c.bytes_per_s as u64),
            b.name,
            b.iops,
            Bytes(b.bytes_per_s as u64),
            b.burst
                .as_ref()
                .map(|x| format!(", burst {}/s for {:.0} s", Bytes(x.bytes_per_s as u64), x.seconds))
                .unwrap_or_default()
        )?;
    }
    ctx.note(format!(
        "replayed {} requests in {:.2} s ({:.1} M requests/s)",
        report.requests,
        report.seconds,
        report.requests_per_second / 1e6
    ));
    Ok(Outcome::Pass)
}
