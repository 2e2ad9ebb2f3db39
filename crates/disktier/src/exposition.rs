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

use crate::app::judge::RunVerdict;
use anyhow::{bail, Context};
use disktier_engine::{DirStats, RunDoc};
use prometheus::proto::{Gauge, LabelPair, Metric, MetricFamily, MetricType, Quantile, Summary};
use prometheus::{Encoder, TextEncoder};
use std::io::Write;
use std::path::{Path, PathBuf};

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
}

impl RunLabels {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("command", self.command.clone()),
            ("node", self.node.clone()),
            ("path", self.path.clone()),
            ("device", self.device.clone()),
            ("profile", self.profile.clone()),
        ]
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

/// Builds one metric family at a time; families without samples are left out (the encoder
/// rejects them, and an empty family says nothing).
struct Families(Vec<MetricFamily>);

impl Families {
    fn family(&mut self, name: &str, help: &str, kind: MetricType, metrics: Vec<Metric>) {
        if metrics.is_empty() {
            return;
        }
        let mut f = MetricFamily::default();
        f.set_name(name.to_string());
        f.set_help(help.to_string());
        f.set_field_type(kind);
        f.set_metric(metrics);
        self.0.push(f);
    }

    fn gauges(&mut self, name: &str, help: &str, samples: Vec<(Vec<(&str, String)>, f64)>) {
        let metrics = samples
            .into_iter()
            .map(|(labels, v)| {
                let mut g = Gauge::default();
                g.set_value(v);
                let mut m = Metric::from_gauge(g);
                m.set_label(label_pairs(labels));
                m
            })
            .collect();
        self.family(name, help, MetricType::GAUGE, metrics);
    }
}

fn label_pairs(labels: Vec<(&str, String)>) -> Vec<LabelPair> {
    labels
        .into_iter()
        .map(|(k, v)| {
            let mut p = LabelPair::default();
            p.set_name(k.to_string());
            p.set_value(v);
            p
        })
        .collect()
}

fn with(base: &RunLabels, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut l = base.pairs();
    l.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    l
}

/// The exposition of `runs`, text format 0.0.4.
pub fn encode(runs: &[RunMetrics]) -> anyhow::Result<String> {
    let mut f = Families(Vec::new());
    f.gauges(
        "disktier_build_info",
        "The disktier version that produced these metrics (always 1).",
        vec![(
            vec![("version", env!("CARGO_PKG_VERSION").to_string())],
            1.0,
        )],
    );
    f.gauges(
        "disktier_last_run_timestamp_seconds",
        "When the run ended, in seconds since the Unix epoch.",
        runs.iter()
            .map(|r| (r.labels.pairs(), r.finished_unix_seconds))
            .collect(),
    );
    f.gauges(
        "disktier_run_duration_seconds",
        "How long the measurement ran.",
        runs.iter()
            .map(|r| (r.labels.pairs(), r.duration_seconds))
            .collect(),
    );
    let per_direction = |get: &dyn Fn(&DirectionMetrics) -> Option<f64>| {
        runs.iter()
            .flat_map(|r| {
                r.directions.iter().filter_map(|d| {
                    get(d).map(|v| (with(&r.labels, &[("direction", d.direction)]), v))
                })
            })
            .collect::<Vec<_>>()
    };
    f.gauges(
        "disktier_io_operations_per_second",
        "Completed I/O operations per second during the run, by direction (sync: fsync/fdatasync calls).",
        per_direction(&|d| Some(d.ops_per_second)),
    );
    f.gauges(
        "disktier_io_bytes_per_second",
        "Bytes read or written per second during the run.",
        per_direction(&|d| d.bytes_per_second),
    );
    let summaries = runs
        .iter()
        .flat_map(|r| {
            r.directions.iter().map(|d| {
                let mut s = Summary::default();
                s.set_sample_count(d.latency_count);
                s.set_sample_sum(d.latency_sum_seconds);
                s.set_quantile(
                    d.latency_quantiles
                        .iter()
                        .map(|(q, v)| {
                            let mut qq = Quantile::default();
                            qq.set_quantile(*q);
                            qq.set_value(*v);
                            qq
                        })
                        .collect(),
                );
                let mut m = Metric::default();
                m.set_summary(s);
                m.set_label(label_pairs(with(&r.labels, &[("direction", d.direction)])));
                m
            })
        })
        .collect();
    f.family(
        "disktier_io_latency_seconds",
        "Completion latency of the run's I/O operations by direction (sync: fsync/fdatasync), as quantiles over the whole run.",
        MetricType::SUMMARY,
        summaries,
    );
    f.gauges(
        "disktier_run_cpu_seconds",
        "CPU time the measurement used, by mode (user, system).",
        runs.iter()
            .flat_map(|r| {
                [
                    (with(&r.labels, &[("mode", "user")]), r.cpu_user_seconds),
                    (with(&r.labels, &[("mode", "system")]), r.cpu_system_seconds),
                ]
            })
            .collect(),
    );
    f.gauges(
        "disktier_small_files_per_second",
        "Files created, written and closed per second (the small-files profile).",
        runs.iter()
            .filter_map(|r| r.small_files_per_second.map(|v| (r.labels.pairs(), v)))
            .collect(),
    );
    let verdicts = |get: &dyn Fn(&VerdictMetrics) -> Option<f64>| {
        runs.iter()
            .flat_map(|r| {
                r.verdicts.iter().filter_map(|v| {
                    get(v).map(|x| (with(&r.labels, &[("verdict", v.name.as_str())]), x))
                })
            })
            .collect::<Vec<_>>()
    };
    f.gauges(
        "disktier_verdict_pass",
        "1 when the verdict passed (e.g. etcd: fdatasync p99 within the threshold), 0 when it failed.",
        verdicts(&|v| Some(if v.pass { 1.0 } else { 0.0 })),
    );
    let in_unit = |unit, pick: fn(&VerdictMetrics) -> f64| {
        move |v: &VerdictMetrics| (v.unit == unit).then(|| pick(v))
    };
    f.gauges(
        "disktier_verdict_value_seconds",
        "The latency a verdict judged (e.g. etcd: the p99 of fdatasync latency).",
        verdicts(&in_unit(VerdictUnit::Seconds, |v| v.value)),
    );
    f.gauges(
        "disktier_verdict_threshold_seconds",
        "The latency limit of a verdict (etcd: 10 ms for the fdatasync p99, from etcd's hardware guide).",
        verdicts(&in_unit(VerdictUnit::Seconds, |v| v.threshold)),
    );
    f.gauges(
        "disktier_verdict_value_operations_per_second",
        "The rate a verdict judged (e.g. etcd-iops-50: fdatasync'd writes per second).",
        verdicts(&in_unit(VerdictUnit::OperationsPerSecond, |v| v.value)),
    );
    f.gauges(
        "disktier_verdict_threshold_operations_per_second",
        "The minimum rate of a verdict (etcd's guidance: 50, or 500 for busy clusters).",
        verdicts(&in_unit(VerdictUnit::OperationsPerSecond, |v| v.threshold)),
    );
    f.gauges(
        "disktier_verdict_value_events",
        "The count a verdict judged (e.g. etcd-stalls: fdatasyncs longer than etcd's 100 ms heartbeat interval).",
        verdicts(&in_unit(VerdictUnit::Events, |v| v.value)),
    );
    f.gauges(
        "disktier_verdict_threshold_events",
        "The most events a verdict allows (etcd-stalls: 0).",
        verdicts(&in_unit(VerdictUnit::Events, |v| v.threshold)),
    );
    f.gauges(
        "disktier_sync_stalls",
        "fsync/fdatasync calls of the run longer than longer_than_seconds (etcd's heartbeat interval, 0.1 s, and election timeout, 1 s: etcd docs, Tuning).",
        runs.iter()
            .flat_map(|r| {
                r.directions.iter().flat_map(move |d| {
                    d.stalls.iter().map(move |(bound, n)| {
                        (
                            with(&r.labels, &[("longer_than_seconds", &format!("{bound}"))]),
                            *n as f64,
                        )
                    })
                })
            })
            .collect(),
    );
    let mut buf = Vec::new();
    TextEncoder::new()
        .encode(&f.0, &mut buf)
        .context("cannot encode the Prometheus exposition")?;
    String::from_utf8(buf).context("the Prometheus exposition is not UTF-8")
}

/// A directory node_exporter's textfile collector reads, checked to be a writable directory
/// before anything is measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextfileDir(PathBuf);

impl TextfileDir {
    /// Checks that `dir` is a directory this process can create files in, by creating (and
    /// removing) one: permission bits say nothing about read-only mounts or root.
    pub fn check(dir: &Path) -> anyhow::Result<TextfileDir> {
        let fix = "give a writable directory (node_exporter's --collector.textfile.directory)";
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!("--textfile-dir {}: not a directory: {fix}", dir.display()),
            Err(e) => bail!("--textfile-dir {}: {e}: {fix}", dir.display()),
        }
        let probe = dir.join(format!(".disktier-probe.{}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
        {
            Ok(_) => {
                let _ = std::fs::remove_file(&probe);
                Ok(TextfileDir(dir.to_path_buf()))
            }
            Err(e) => bail!(
                "--textfile-dir {}: cannot create a file in it ({e}): {fix}",
                dir.display()
            ),
        }
    }

    /// `DIR/disktier_<command>.prom`.
    pub fn file(&self, command: &str) -> PathBuf {
        self.0.join(format!("disktier_{command}.prom"))
    }

    /// Writes `text` to `DIR/disktier_<command>.prom` atomically: a temporary file in DIR (its
    /// name does not end in .prom, so the collector never reads it half written), fsync,
    /// rename over the old file, fsync of the directory. Returns the file's path.
    pub fn write(&self, command: &str, text: &str) -> anyhow::Result<PathBuf> {
        let dest = self.file(command);
        let tmp = self.0.join(format!(
            ".disktier_{command}.prom.{}.tmp",
            std::process::id()
        ));
        let result = (|| -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &dest)?;
            std::fs::File::open(&self.0)?.sync_all()
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(e).with_context(|| format!("cannot write {}", dest.display()));
        }
        Ok(dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_engine::{LatStats, Results, TargetInfo};

    fn doc() -> RunDoc {
        let mut lat = LatStats {
            mean: 2_000_000.0,
            max: 9_000_000,
            ..LatStats::default()
        };
        for (k, v) in [("50", 1_500_000), ("99", 4_000_000), ("99.9", 6_000_000)] {
            lat.percentiles.insert(k.into(), v);
        }
        RunDoc {
            schema_version: crate::app::SCHEMA_VERSION,
            engine: "disktier".into(),
            profile: Some("etcd".into()),
            quick: true,
            job: serde_json::json!({}),
            target: TargetInfo {
                path: "/var/lib/etcd".into(),
                kind: "directory".into(),
                device: Some("nvme1n1".into()),
                ..TargetInfo::default()
            },
            host: disktier_engine::HostInfo {
                hostname: "master-0".into(),
                ..Default::default()
            },
            started_at: "2026-11-24T12:00:00Z".into(),
            duration_s: 2.5,
            interrupted: false,
            results: Results {
                sync: Some(DirStats {
                    ios: 1000,
                    iops: 400.0,
                    lat_ns: lat,
                    ..DirStats::default()
                }),
                ..Results::default()
            },
            series: vec![],
            verdicts: vec![
                RunVerdict {
                    name: "etcd".into(),
                    metric: "sync.p99".into(),
                    value: 4_000_000.0,
                    threshold: 10_000_000.0,
                    pass: true,
                    message: String::new(),
                    ci95: None,
                },
                RunVerdict {
                    name: "etcd-iops-500".into(),
                    metric: "sync.iops".into(),
                    value: 400.0,
                    threshold: 500.0,
                    pass: false,
                    message: String::new(),
                    ci95: None,
                },
            ],
            warnings: vec![],
        }
    }

    #[test]
    fn run_figures_in_base_units_with_labels() {
        let m = RunMetrics::from_doc("check", "node-a", &doc());
        assert_eq!(m.labels.device, "nvme1n1");
        assert_eq!(m.finished_unix_seconds, 1_795_521_600.0 + 2.5);
        let sync = &m.directions[0];
        assert_eq!(sync.direction, "sync");
        assert_eq!(sync.bytes_per_second, None);
        assert_eq!(
            sync.latency_quantiles,
            vec![(0.5, 0.0015), (0.99, 0.004), (0.999, 0.006)]
        );
        assert!((sync.latency_sum_seconds - 2.0).abs() < 1e-9);
        assert_eq!(m.verdicts[0].unit, VerdictUnit::Seconds);
        assert_eq!(m.verdicts[0].threshold, 0.01);
        assert_eq!(m.verdicts[1].unit, VerdictUnit::OperationsPerSecond);
        assert_eq!(m.verdicts[1].threshold, 500.0);
    }

    #[test]
    fn exposition_has_help_type_quantiles_and_verdicts() {
        let text = encode(&[RunMetrics::from_doc("check", "node-a", &doc())]).unwrap();
        let labels =
            r#"command="check",node="node-a",path="/var/lib/etcd",device="nvme1n1",profile="etcd""#;
        for line in [
            "# TYPE disktier_io_latency_seconds summary".to_string(),
            format!(
                r#"disktier_io_latency_seconds{{{labels},direction="sync",quantile="0.99"}} 0.004"#
            ),
            format!(r#"disktier_io_latency_seconds_count{{{labels},direction="sync"}} 1000"#),
            format!(r#"disktier_verdict_pass{{{labels},verdict="etcd"}} 1"#),
            format!(r#"disktier_verdict_pass{{{labels},verdict="etcd-iops-500"}} 0"#),
            format!(r#"disktier_verdict_threshold_seconds{{{labels},verdict="etcd"}} 0.01"#),
            format!(r#"disktier_last_run_timestamp_seconds{{{labels}}} 1795521602.5"#),
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in\n{text}");
        }
        // Every family has HELP and TYPE; no bytes family for a run that only synced.
        let families: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        for f in &families {
            assert!(text.contains(&format!("# HELP {f} ")), "{f}");
            assert!(f.starts_with("disktier_"), "{f}");
        }
        assert!(!families.contains(&"disktier_io_bytes_per_second"));
    }

    #[test]
    fn label_values_are_escaped() {
        let mut d = doc();
        d.target.path = "/mnt/a \"b\"\\c\nd".into();
        let text = encode(&[RunMetrics::from_doc("bench", "n", &d)]).unwrap();
        assert!(text.contains(r#"path="/mnt/a \"b\"\\c\nd""#), "{text}");
    }

    #[test]
    fn textfile_dir_must_be_a_writable_directory() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("f");
        std::fs::write(&file, "").unwrap();
        let e = TextfileDir::check(&file).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = TextfileDir::check(&t.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing"), "{e}");
        let d = TextfileDir::check(t.path()).unwrap();
        let p = d.write("check", "x 1\n").unwrap();
        assert_eq!(p, t.path().join("disktier_check.prom"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x 1\n");
        let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "temporary or probe files left: {left:?}");
    }
}
