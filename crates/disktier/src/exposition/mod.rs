//! Prometheus text exposition (format 0.0.4) of measured runs, for `--format prometheus` and
//! `--textfile-dir` (node_exporter's textfile collector).
//!
//! The input is typed: a [`RunMetrics`] per measured run, built from the run's result document
//! with the labels that name it (command, path, device, profile, node). `check`, `bench` and
//! `assess` build one per run on this node; `fleet` builds one per node, with that node's name,
//! and encodes them all with [`encode`]. Families, names and units follow the Prometheus naming
//! guide (<https://prometheus.io/docs/practices/naming/>): the `disktier_` prefix, base units
//! (seconds, bytes), latency percentiles as a summary with `quantile` labels. The text itself
//! is written by the `prometheus` crate's `TextEncoder` (format 0.0.4), not by hand.

//!
//! [`encode`] (in `encode.rs`) writes the families; [`TextfileDir`] (in `textfile.rs`) is the
//! checked directory the text is written to.

mod encode;
mod textfile;

pub use encode::{encode, encode_with};
pub use textfile::{TextfileDir, TextfileName};

use crate::app::judge::RunVerdict;
use disktier_engine::{DirStats, RunDoc};

/// The environment variable that names the node (Kubernetes' downward API:
/// `env: [{name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]`).
pub const NODE_NAME_ENV: &str = "NODE_NAME";

/// The node label of runs measured here: `$NODE_NAME` when set (in a pod), else the host name
/// the result document recorded.
pub fn local_node(doc: &RunDoc) -> String {
    match std::env::var(NODE_NAME_ENV) {
        Ok(n) if !n.trim().is_empty() => n.trim().to_string(),
        _ => doc.host.hostname.clone(),
    }
}

/// The labels every series of one run carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLabels {
    /// The command that measured ("check", "bench", "assess", "fleet"): the same path and
    /// profile measured by two commands are two series, not a collision.
    pub command: String,
    pub path: String,
    /// The kernel name of the block device ("nvme1n1"), empty when unknown.
    pub device: String,
    /// The profile name ("etcd"), empty for a job given by options.
    pub profile: String,
    pub node: String,
    /// What tells runs of one command apart beyond the above: `run` ("1".."N" with
    /// `--repeat`), `job` and `job_index` (a job file's jobs).
    pub extra: Vec<(&'static str, String)>,
}

impl RunLabels {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("command", self.command.clone()),
            ("node", self.node.clone()),
            ("path", self.path.clone()),
            ("device", self.device.clone()),
            ("profile", self.profile.clone()),
        ];
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// What the runs of `--repeat N` agree on (the repeat document's aggregate), labelled like
/// the runs without their `run` label.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatMetrics {
    pub labels: RunLabels,
    /// The p99 the figures are of ("sync.p99", "write.p99", "read.p99").
    pub metric: String,
    pub runs: usize,
    pub median_p99_seconds: Option<f64>,
    pub min_p99_seconds: Option<f64>,
    pub max_p99_seconds: Option<f64>,
    pub cv: Option<f64>,
    /// Runs whose verdict passed, when the command has one.
    pub passed: Option<usize>,
}

impl RepeatMetrics {
    /// The aggregate of runs labelled as `first` (the first run's metrics) was.
    pub fn new(first: &RunMetrics, agg: &disktier_engine::result::RepeatAggregate) -> Self {
        let mut labels = first.labels.clone();
        labels.extra.retain(|(k, _)| *k != "run");
        RepeatMetrics {
            labels,
            metric: agg.metric.clone(),
            runs: agg.runs,
            median_p99_seconds: agg.median_p99_ns.map(|v| v / NS),
            min_p99_seconds: agg.min_p99_ns.map(|v| v as f64 / NS),
            max_p99_seconds: agg.max_p99_ns.map(|v| v as f64 / NS),
            cv: agg.cv,
            passed: agg.passed,
        }
    }
}

/// One I/O direction of a run ("read", "write", or "sync" for fsync/fdatasync).
#[derive(Debug, Clone, PartialEq)]
pub struct DirectionMetrics {
    pub direction: &'static str,
    pub ops_per_second: f64,
    /// None for sync, which moves no data.
    pub bytes_per_second: Option<f64>,
    /// (quantile in 0..1, latency in seconds), ascending.
    pub latency_quantiles: Vec<(f64, f64)>,
    pub latency_count: u64,
    pub latency_sum_seconds: f64,
    /// Calls longer than etcd's heartbeat interval and election timeout: (bound in seconds,
    /// count), when the run counted them (sync only).
    pub stalls: Vec<(f64, u64)>,
}

/// The unit a verdict's value and threshold are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictUnit {
    Seconds,
    OperationsPerSecond,
    /// A number of events in the run (etcd-stalls: fdatasyncs longer than the heartbeat).
    Events,
}

/// A pass/fail judgement with its threshold, in base units.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictMetrics {
    pub name: String,
    pub unit: VerdictUnit,
    pub value: f64,
    pub threshold: f64,
    pub pass: bool,
    /// The run was cut short and its interval settles nothing (`Verdict::inconclusive`).
    pub inconclusive: bool,
}

/// Everything exported about one measured run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMetrics {
    pub labels: RunLabels,
    /// When the run ended, Unix seconds.
    pub finished_unix_seconds: f64,
    pub duration_seconds: f64,
    pub directions: Vec<DirectionMetrics>,
    pub cpu_user_seconds: f64,
    pub cpu_system_seconds: f64,
    pub small_files_per_second: Option<f64>,
    pub verdicts: Vec<VerdictMetrics>,
}

impl RunMetrics {
    /// The figures of `doc` (and its verdicts), labelled for `command` on `node`.
    pub fn from_doc(command: &str, node: &str, doc: &RunDoc) -> RunMetrics {
        let labels = RunLabels {
            command: command.to_string(),
            path: doc.target.path.clone(),
            device: doc.target.device.clone().unwrap_or_default(),
            profile: doc.profile.clone().unwrap_or_default(),
            node: node.to_string(),
            extra: Vec::new(),
        };
        let r = &doc.results;
        let directions = [
            ("read", r.read.as_ref()),
            ("write", r.write.as_ref()),
            ("sync", r.sync.as_ref()),
        ]
        .into_iter()
        .filter_map(|(name, d)| d.map(|d| direction(name, d)))
        .collect();
        RunMetrics {
            labels,
            finished_unix_seconds: finished_at(doc),
            duration_seconds: doc.duration_s,
            directions,
            cpu_user_seconds: r.cpu.usr_s,
            cpu_system_seconds: r.cpu.sys_s,
            small_files_per_second: r.small_files.as_ref().map(|s| s.files_per_s),
            verdicts: doc.verdicts.iter().filter_map(verdict).collect(),
        }
    }
}

const NS: f64 = 1e9;

fn direction(name: &'static str, d: &DirStats) -> DirectionMetrics {
    let mut latency_quantiles: Vec<(f64, f64)> = d
        .lat_ns
        .percentiles
        .iter()
        .filter_map(|(k, v)| Some((quantile(k)?, *v as f64 / NS)))
        .filter(|(q, _)| (0.0..=1.0).contains(q))
        .collect();
    latency_quantiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    DirectionMetrics {
        direction: name,
        ops_per_second: d.iops,
        bytes_per_second: (name != "sync").then_some(d.bw_bytes),
        latency_quantiles,
        latency_count: d.ios,
        latency_sum_seconds: d.lat_ns.mean * d.ios as f64 / NS,
        stalls: d
            .stalls
            .as_ref()
            .map(|s| {
                vec![
                    (s.heartbeat_ns as f64 / NS, s.over_heartbeat),
                    (s.election_ns as f64 / NS, s.over_election),
                ]
            })
            .unwrap_or_default(),
    }
}

/// The quantile of a percentile key ("99.9" -> 0.999), rounded so that its label prints as
/// written ("0.999", not "0.9990000000000001").
fn quantile(percentile: &str) -> Option<f64> {
    let q = percentile.parse::<f64>().ok()? / 100.0;
    format!("{q:.10}").parse().ok()
}

/// Latency verdicts (`sync.p99`, in ns) become seconds; rate verdicts (`sync.iops`) stay per
/// second. A verdict on another metric is not exported rather than exported in a wrong unit.
fn verdict(v: &RunVerdict) -> Option<VerdictMetrics> {
    let leaf = v.metric.rsplit('.').next().unwrap_or("");
    let (unit, scale) = if leaf == "iops" {
        (VerdictUnit::OperationsPerSecond, 1.0)
    } else if leaf.starts_with('p') && leaf[1..].parse::<f64>().is_ok() || leaf.ends_with("_ns") {
        (VerdictUnit::Seconds, NS)
    } else if leaf.starts_with("over_") {
        (VerdictUnit::Events, 1.0)
    } else {
        return None;
    };
    Some(VerdictMetrics {
        name: v.name.clone(),
        unit,
        value: v.value / scale,
        threshold: v.threshold / scale,
        pass: v.pass,
        inconclusive: v.inconclusive,
    })
}

/// The run's end: its start plus its duration; now when the start cannot be read.
fn finished_at(doc: &RunDoc) -> f64 {
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    };
    time::OffsetDateTime::parse(
        &doc.started_at,
        &time::format_description::well_known::Rfc3339,
    )
    .map_or_else(
        |_| now(),
        |t| t.unix_timestamp_nanos() as f64 / NS + doc.duration_s,
    )
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
