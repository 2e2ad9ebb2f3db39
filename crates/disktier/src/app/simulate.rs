//! Simulate: a trace replayed through cache policies and sizes, with predictions from device models built from volume specs and the catalog.

use anyhow::{bail, Context};
use disktier_cachesim::device::{predict, DeviceModel, Prediction};
use disktier_cachesim::mrc::{Mrc, MrcBuilder};
use disktier_cachesim::policy::bcache::BcacheConfig;
use disktier_cachesim::policy::smq::SmqConfig;
use disktier_cachesim::policy::PolicyKind;
use disktier_cachesim::sim::{self, SimConfig, SimReport};
use disktier_catalog::Catalog;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

pub use super::traceread::Replaying;
use super::traceread::{open_counted, ticking};

/// A volume spec `TYPE:SIZE[:IOPS[:MiBps]]`.
pub fn parse_volume(
    spec: &str,
    what: &str,
) -> anyhow::Result<(String, u64, Option<u64>, Option<f64>)> {
    let parts: Vec<&str> = spec.split(':').collect();
    if parts.len() < 2 || parts.len() > 4 {
        bail!("{what} {spec:?}: expected TYPE:SIZE[:IOPS[:MiBps]], e.g. gp3:32GiB:16000:1000 or st1:1TiB");
    }
    let size =
        disktier_units::parse_size(parts[1]).with_context(|| format!("{what} {spec:?}: size"))?;
    if size == 0 {
        bail!(
            "{what} {spec:?}: the size is 0; give the volume's size, e.g. {}:1TiB",
            parts[0]
        );
    }
    // Volumes are sold in whole GiB: a smaller size is priced and modelled as 1 GiB.
    let gib = size.div_ceil(1 << 30);
    let iops = parts
        .get(2)
        .map(|s| s.parse::<u64>())
        .transpose()
        .with_context(|| format!("{what} {spec:?}: IOPS must be a whole number"))?;
    let tp = parts
        .get(3)
        .map(|s| s.trim_end_matches("MiB/s").parse::<f64>())
        .transpose()
        .with_context(|| format!("{what} {spec:?}: throughput must be MiB/s, e.g. 1000"))?;
    // Rust reads "nan" and "inf" as numbers: NaN passed the catalog's range check (every
    // comparison with it is false) and modelled a cache of 0 B/s; inf was refused as
    // "18,446,744,073,709,551,615NaN MiB/s is out of range" (QA).
    if let Some(t) = tp.filter(|t| !t.is_finite()) {
        bail!("{what} {spec:?}: throughput {t} is not a number of MiB/s: give one, e.g. 1000");
    }
    Ok((parts[0].to_string(), gib, iops, tp))
}

/// Unloaded latency of one small operation for a volume type, in seconds. The exact figures are
/// disktier's modelled assumptions (weak), not published numbers: gp2/gp3 0.8 ms, io1/io2 0.5 ms
/// and local NVMe 0.1 ms, the low (unloaded) ends of the ranges the model assumes (0.8-1.8 ms,
/// 0.5-1.2 ms, 0.1-0.17 ms). AWS publishes only upper bounds, which the figures stay under:
/// "single-digit millisecond" latency for gp2/gp3 and "sub-millisecond" for io2 Block Express
/// (docs/sources.md [aws-ebs-types]); io1 gets io2's figure, and local NVMe's has no primary
/// source. HDD types have no published figure and get 1 / their IOPS cap from the model.
pub fn latency_for(volume_type: &str) -> Option<f64> {
    match volume_type {
        "gp2" | "gp3" => Some(0.0008),
        "io1" | "io2" => Some(0.0005),
        t if t.contains("nvme") || t.contains("local") => Some(0.0001),
        _ => None,
    }
}

/// The device model of a volume spec (`what` is the option that gave it, for errors), from the
/// catalog's performance rules and [`latency_for`].
pub fn device(cat: &Catalog, spec: &str, what: &str) -> anyhow::Result<DeviceModel> {
    let (t, gib, iops, tp) = parse_volume(spec, what)?;
    DeviceModel::from_catalog(cat, &t, gib, iops, tp, latency_for(&t))
        .map_err(|e| anyhow::anyhow!("{what} {spec}: {e}"))
}

/// What `simulate` replays: the trace, the policies and sizes with their settings, and the
/// devices to predict with.
pub struct Request<'a> {
    /// A DTTRACE file.
    pub trace: &'a Path,
    pub sizes: Vec<u64>,
    pub policies: Vec<PolicyKind>,
    /// Cache block size.
    pub block: u64,
    /// SHARDS spatial sampling rate.
    pub sample: Option<f64>,
    /// bcache's settings; the drain limit is set here from the backing device.
    pub bcache: BcacheConfig,
    /// lvmcache's (dm-cache smq) settings; the drain limit is set here from the backing device.
    pub smq: SmqConfig,
    /// Build the LRU miss-ratio curve.
    pub mrc: bool,
    /// The cache and backing devices ([`device`]) to predict each result's performance with.
    pub models: Option<&'a (DeviceModel, DeviceModel)>,
    /// Called about once a second while the trace is replayed (a progress line).
    pub progress: Option<&'a (dyn Fn(&Replaying) + Sync)>,
}

/// A simulation's results.
pub struct Simulation {
    pub report: SimReport,
    /// The trace's source, from its header.
    pub source: String,
    /// One prediction per result, when the request had devices.
    pub predictions: Vec<Option<Prediction>>,
    /// The LRU miss-ratio curve, at the requested sizes.
    pub mrc: Option<Mrc>,
}

impl Simulation {
    /// The `simulate --format json` document: the report with each result's prediction, the
    /// trace and its source, the device models (`models`) and the miss-ratio curve.
    pub fn document(
        &self,
        trace: &Path,
        models: Option<&(DeviceModel, DeviceModel)>,
    ) -> anyhow::Result<serde_json::Value> {
        use serde_json::json;
        let mut v = serde_json::to_value(&self.report)?;
        v["schema_version"] = json!(super::SCHEMA_VERSION);
        v["trace"] = crate::text::path_json(trace);
        v["trace_source"] = json!(self.source);
        if let Some(results) = v["results"].as_array_mut() {
            for (r, p) in results.iter_mut().zip(&self.predictions) {
                if let Some(p) = p {
                    r["prediction"] = serde_json::to_value(p)?;
                }
            }
        }
        if let Some((c, b)) = models {
            v["cache_device"] = serde_json::to_value(c)?;
            v["backing_device"] = serde_json::to_value(b)?;
        }
        if let Some(m) = &self.mrc {
            v["mrc"] = serde_json::to_value(m)?;
        }
        Ok(v)
    }
}

/// Replays the trace through every policy and size. `note` receives a warning for the user (a
/// trace without its trailer).
pub fn simulate(req: Request<'_>, note: &dyn Fn(&str)) -> anyhow::Result<Simulation> {
    // The writeback drain runs onto the backing device: its sustained bandwidth caps it.
    let drain_limit = req.models.map(|(_, b)| b.bytes_per_s as u64);
    let cfg = SimConfig {
        block: req.block,
        policies: req.policies,
        sizes: req.sizes.clone(),
        sample: req.sample,
        bcache: BcacheConfig {
            drain_limit,
            ..req.bcache
        },
        smq: SmqConfig {
            drain_limit,
            ..req.smq
        },
    };
    cfg.check()?;
    cfg.check_sizes()?;
    // One pass over the trace file: every replay and the curve take each chunk as it is read,
    // so memory does not grow with the trace's length (docs/trace.md).
    // The reader's own errors name the file; a record's error later does not.
    let read = Arc::new(AtomicU64::new(0));
    let (mut reader, total_bytes) =
        open_counted(req.trace, Arc::clone(&read)).context("cannot read the trace")?;
    let mut curve = req.mrc.then(|| MrcBuilder::new(req.block, req.sample));
    // Each volume of a multi-volume trace (Alibaba, Tencent) in its own address space.
    let source = reader.header().source.clone();
    let records = disktier_cachesim::trace::Volumes::new(&mut reader, &source);
    // Traffic windows are kept only for predictions: they cost memory per busy second.
    let report = ticking(req.progress, &read, total_bytes, || {
        sim::simulate_stream(&cfg, records, curve.as_mut(), req.models.is_some())
    })
    .with_context(|| format!("cannot read the trace {}", req.trace.display()))?;
    if report.trace_requests == 0 {
        bail!(
            "the trace {} has no requests: record or import one first",
            req.trace.display()
        );
    }
    if report.trace_data_requests == 0 {
        bail!(
            "the trace {} has no data accesses: its {} requests move no data (syncs, discards, or reads and writes of 0 bytes), which no cache serves, so there is nothing to simulate",
            req.trace.display(),
            report.trace_requests
        );
    }
    if reader.truncated() {
        note(&format!(
            "warning: {} has no trailer (its writer did not finish); simulating the records before the cut",
            req.trace.display()
        ));
    }
    if let Some(w) = report
        .sample
        .zip(report.sample_tally)
        .and_then(|(rate, t)| t.warning(rate))
    {
        note(&format!("warning: {w}"));
    }
    let predictions: Vec<Option<Prediction>> = report
        .results
        .iter()
        .map(|r| req.models.map(|(c, b)| predict(&r.counters, c, b)))
        .collect();
    let mrc = match curve {
        None => None,
        Some(b) => {
            let mut m = b.finish()?;
            m.at(&req.sizes);
            Some(m)
        }
    };
    Ok(Simulation {
        report,
        source,
        predictions,
        mrc,
    })
}
