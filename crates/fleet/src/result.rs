//! A node's result: the JSON document the node command printed, read back from the pod's log
//! and parsed into the typed documents the CLI writes (a run document for `check` and `bench`,
//! the assessment summary for `assess`), and the key figures the fleet table compares.

use disktier_engine::result::{RunDoc, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most of a pod's log fleet reads: a result document with its one-second series is tens
/// of KiB; anything past this is not ours and is cut (memory stays bounded per node).
pub const MAX_LOG_BYTES: i64 = 16 * 1024 * 1024;

/// `disktier assess --format json`, the fields fleet uses.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct AssessDoc {
    pub schema_version: u32,
    #[serde(default)]
    pub targets: Vec<AssessTarget>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct AssessTarget {
    pub path: String,
    #[serde(default)]
    pub runs: Vec<AssessRun>,
    #[serde(default)]
    pub etcd_ready: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct AssessRun {
    pub profile: String,
    #[serde(default)]
    pub verdicts: Vec<Verdict>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub read_iops: Option<f64>,
    #[serde(default)]
    pub write_iops: Option<f64>,
    #[serde(default)]
    pub sync_p99_ns: Option<u64>,
    #[serde(default)]
    pub p99_ns: Option<u64>,
}

/// `disktier check etcd --metrics URL --format json` (kind `etcd-metrics`): what etcd itself
/// measured, the fields fleet uses.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct EtcdMetricsDoc {
    pub schema_version: u32,
    pub kind: String,
    pub pass: bool,
    #[serde(default)]
    pub members: Vec<EtcdMember>,
    #[serde(default)]
    pub verdicts: Vec<Verdict>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct EtcdMember {
    pub url: String,
    pub wal_fsync: EtcdP99,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct EtcdP99 {
    /// Interpolated from etcd's histogram buckets, seconds; `None` without observations.
    pub p99_s: Option<f64>,
}

/// The `fleet` object `fleet run` adds to each node's document before saving it: which fleet
/// run and which node the document came from.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct FleetTag {
    pub fleet_run_id: String,
    pub node: String,
    #[serde(default)]
    pub instance_type: Option<String>,
    #[serde(default)]
    pub zone: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub image: Option<String>,
}

/// The store kind of a fleet node's outcome when it gave no document ([`Unmeasured`]).
pub const UNMEASURED_KIND: &str = "unmeasured";

/// What `fleet run` stores for a node that gave no result document (skipped, or in error: an
/// image pull failure, the deadline, an eviction, an OOM kill, ...), grouped with the fleet
/// run's other nodes so that `history --group`, `show` and the report's fleet section keep the
/// failures once the terminal has scrolled. It carries no figures: it is never drawn, compared,
/// summed into medians or exported as metrics.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Unmeasured {
    pub schema_version: u32,
    pub host: UnmeasuredHost,
    pub fleet: FleetTag,
    pub unmeasured: Outcome,
}

/// The node, as the `host` of a run names it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct UnmeasuredHost {
    pub hostname: String,
    #[serde(default)]
    pub instance_type: Option<String>,
}

/// Why a node was not measured, as `fleet run` reported it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Outcome {
    /// `error` (it could not be measured) or `skipped` (it was not tried).
    pub status: String,
    /// The reason `fleet run` printed (the pod's phase, reason and exit code where it had
    /// them: "OOMKilled (exit 137): ...", "evicted (Evicted: ...)", "NotReady ...").
    pub reason: String,
}

impl Unmeasured {
    /// The stored document of a node tagged `tag` that was not measured.
    pub fn new(tag: FleetTag, status: &str, reason: &str) -> Unmeasured {
        Unmeasured {
            schema_version: 1,
            host: UnmeasuredHost {
                hostname: tag.node.clone(),
                instance_type: tag.instance_type.clone(),
            },
            fleet: tag,
            unmeasured: Outcome {
                status: status.to_string(),
                reason: reason.to_string(),
            },
        }
    }
}

/// Rewrites a node's document for the store: adds `tag` as its `fleet` object and makes its
/// `host` the node's. The pod's hostname is the pod's name, so `host.hostname` becomes
/// `tag.node`; `host.instance_type` is filled from `tag.instance_type` only where it is null or
/// missing; a document without a `host` object gets one with the node's name and instance type.
/// A document that is not a JSON object is left as it is.
pub fn tag_document(doc: &mut Value, tag: &FleetTag) -> serde_json::Result<()> {
    let Some(obj) = doc.as_object_mut() else {
        return Ok(());
    };
    obj.insert("fleet".into(), serde_json::to_value(tag)?);
    if let Some(host) = obj.get_mut("host").and_then(|h| h.as_object_mut()) {
        host.insert("hostname".into(), tag.node.clone().into());
        if let Some(t) = &tag.instance_type {
            host.entry("instance_type")
                .and_modify(|v| {
                    if v.is_null() {
                        *v = t.clone().into()
                    }
                })
                .or_insert_with(|| t.clone().into());
        }
    } else {
        obj.insert(
            "host".into(),
            serde_json::json!({"hostname": tag.node, "instance_type": tag.instance_type}),
        );
    }
    Ok(())
}

/// The `kind` of an etcd metrics document.
pub const ETCD_METRICS_KIND: &str = "etcd-metrics";

/// The document a node printed.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeDoc {
    Run(Box<RunDoc>),
    Assess(AssessDoc),
    EtcdMetrics(EtcdMetricsDoc),
}

/// The schema version this fleet understands (the engine's).
pub const SCHEMA_VERSION: u32 = disktier_engine::result::SCHEMA_VERSION;

/// Why a log held no usable document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("the pod's log holds no JSON document (was the node command's output cut?)")]
    NoDocument,
    #[error("the pod's log holds a JSON document that is neither a run nor an assessment: {0}")]
    Shape(String),
    #[error("the node's result has schema_version {0}, newer than this disktier reads ({SCHEMA_VERSION}): use the same version on both sides (--image)")]
    TooNew(u32),
}

/// Finds the node command's document in a pod log: the first line that is exactly `{` starts
/// it (the CLI prints JSON pretty, and nothing else on stdout starts a line with a lone brace);
/// lines before it (stderr warnings) and after it are ignored. Returns the raw value (what is
/// stored) and its typed form.
pub fn parse_log(log: &str) -> Result<(Value, NodeDoc), ParseError> {
    let mut offset = 0;
    for line in log.split_inclusive('\n') {
        if line.trim_end() == "{" {
            let mut stream =
                serde_json::Deserializer::from_str(&log[offset..]).into_iter::<Value>();
            if let Some(Ok(v)) = stream.next() {
                let doc = NodeDoc::from_value(&v)?;
                return Ok((v, doc));
            }
        }
        offset += line.len();
    }
    Err(ParseError::NoDocument)
}

impl NodeDoc {
    /// Reads a document into its type: a run (it has `results`), etcd's metrics (its `kind`)
    /// or an assessment summary (it has `targets`).
    pub fn from_value(v: &Value) -> Result<NodeDoc, ParseError> {
        let version = v
            .get("schema_version")
            .and_then(Value::as_u64)
            .ok_or_else(|| ParseError::Shape("no schema_version".into()))?;
        if version > SCHEMA_VERSION as u64 {
            return Err(ParseError::TooNew(version.min(u32::MAX as u64) as u32));
        }
        let shape = |e: serde_json::Error| ParseError::Shape(e.to_string());
        if v.get("results").is_some() {
            Ok(NodeDoc::Run(Box::new(
                RunDoc::deserialize(v).map_err(shape)?,
            )))
        } else if v.get("kind").and_then(Value::as_str) == Some(ETCD_METRICS_KIND) {
            Ok(NodeDoc::EtcdMetrics(
                EtcdMetricsDoc::deserialize(v).map_err(shape)?,
            ))
        } else if v.get("targets").is_some() {
            Ok(NodeDoc::Assess(AssessDoc::deserialize(v).map_err(shape)?))
        } else {
            Err(ParseError::Shape(
                "it has neither `results` nor `targets` and is not an etcd metrics document".into(),
            ))
        }
    }
}

/// The figures one row of the fleet table shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KeyFigures {
    /// `true` all verdicts passed, `false` one failed, `None` the command gives no verdict.
    pub pass: Option<bool>,
    /// 99th percentile of sync (fdatasync) latency, ns: etcd's figure.
    pub sync_p99_ns: Option<u64>,
    /// 99th percentile of I/O completion latency, ns.
    pub p99_ns: Option<u64>,
    /// Read plus write IOPS (the highest of an assessment's runs).
    pub iops: Option<f64>,
    /// `pass` is false only because a runtime cap cut a run short and its p99's interval
    /// settles nothing (`Verdict::inconclusive`): the disk was not shown too slow.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inconclusive: bool,
}

impl NodeDoc {
    pub fn figures(&self) -> KeyFigures {
        match self {
            NodeDoc::Run(d) => {
                let r = &d.results;
                let iops = match (&r.read, &r.write) {
                    (None, None) => None,
                    (a, b) => Some(
                        a.as_ref().map_or(0.0, |s| s.iops) + b.as_ref().map_or(0.0, |s| s.iops),
                    ),
                };
                let p99 = [&r.read, &r.write]
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.lat_ns.p(99.0))
                    .max();
                KeyFigures {
                    pass: verdict_of(&d.verdicts),
                    sync_p99_ns: r.sync.as_ref().and_then(|s| s.lat_ns.p(99.0)),
                    p99_ns: p99,
                    iops,
                    inconclusive: inconclusive_of(&d.verdicts),
                }
            }
            NodeDoc::EtcdMetrics(e) => KeyFigures {
                pass: Some(e.pass),
                // The worst member's WAL fsync p99: etcd's own figure for the verdict.
                sync_p99_ns: e
                    .members
                    .iter()
                    .filter_map(|m| m.wal_fsync.p99_s)
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(|s| (s * 1e9).min(u64::MAX as f64) as u64)
                    .max(),
                p99_ns: None,
                iops: None,
                inconclusive: false,
            },
            NodeDoc::Assess(a) => {
                let runs = a.targets.iter().flat_map(|t| &t.runs);
                let verdicts: Vec<Verdict> =
                    runs.clone().flat_map(|r| r.verdicts.clone()).collect();
                let failed_run = runs.clone().any(|r| r.error.is_some());
                KeyFigures {
                    pass: if failed_run {
                        Some(false)
                    } else {
                        verdict_of(&verdicts)
                    },
                    sync_p99_ns: runs.clone().filter_map(|r| r.sync_p99_ns).max(),
                    p99_ns: runs.clone().filter_map(|r| r.p99_ns).max(),
                    iops: runs
                        .map(|r| r.read_iops.unwrap_or(0.0) + r.write_iops.unwrap_or(0.0))
                        .filter(|x| *x > 0.0)
                        .reduce(f64::max),
                    inconclusive: !failed_run && inconclusive_of(&verdicts),
                }
            }
        }
    }
}

/// A node's verdict from the deciding verdicts of its document; none: the exit status decides.
/// QA: a node whose `check etcd` passed (p99 2.10 ms, exit 0) at 455 fdatasync'd writes/s was
/// FAIL, and fleet exited 1, because etcd-iops-500 (guidance for busy clusters) had failed.
fn verdict_of(v: &[Verdict]) -> Option<bool> {
    let mut deciding = v
        .iter()
        .filter(|v| disktier_engine::verdict::decides(&v.name))
        .peekable();
    deciding.peek()?;
    Some(deciding.all(|v| v.pass))
}

/// True when the deciding verdicts fail only as inconclusive: each that did not pass is a run a
/// runtime cap cut short whose interval settles nothing, and there is one.
fn inconclusive_of(v: &[Verdict]) -> bool {
    let failing: Vec<&Verdict> = v
        .iter()
        .filter(|v| disktier_engine::verdict::decides(&v.name) && !v.pass)
        .collect();
    !failing.is_empty() && failing.iter().all(|v| v.inconclusive)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn an_etcd_metrics_document_gives_the_worst_members_wal_p99() {
        let log = r#"{
  "schema_version": 1,
  "kind": "etcd-metrics",
  "pass": false,
  "members": [
    {"url": "http://127.0.0.1:2379", "wal_fsync": {"p99_s": 0.004, "observations": 10.0}},
    {"url": "http://10.0.0.2:2379", "wal_fsync": {"p99_s": 0.012, "observations": 10.0}}
  ],
  "verdicts": [{"name": "etcd-wal-fsync", "metric": "p99", "value": 12000000.0,
                "threshold": 10000000.0, "pass": false, "message": "too slow"}]
}
"#;
        let (_, doc) = parse_log(log).unwrap();
        let f = doc.figures();
        assert_eq!(f.pass, Some(false));
        assert_eq!(f.sync_p99_ns, Some(12_000_000));
        assert!(matches!(doc, NodeDoc::EtcdMetrics(ref e) if e.members.len() == 2));
    }

    /// A `check etcd` document as a node prints it (also read by kube_run's tests).
    pub(crate) const RUN: &str = r#"{
  "schema_version": 1,
  "engine": "disktier",
  "profile": "etcd",
  "job": {},
  "target": {"path": "/var/lib/etcd", "kind": "directory"},
  "host": {"hostname": "pod", "kernel": "6.1", "cpus": 2},
  "started_at": "2026-11-24T12:00:00Z",
  "duration_s": 3.5,
  "results": {
    "write": {"ios": 10, "bytes": 23000, "iops": 400.0, "bw_bytes": 9.0e5,
      "lat_ns": {"mean": 1.0, "stdev": 0.0, "min": 1, "max": 9, "percentiles": {"99": 5000}}},
    "sync": {"ios": 10, "bytes": 0, "iops": 400.0, "bw_bytes": 0.0,
      "lat_ns": {"mean": 1.0, "stdev": 0.0, "min": 1, "max": 9, "percentiles": {"99": 2100000}}},
    "cpu": {"usr_s": 0.1, "sys_s": 0.2}
  },
  "verdicts": [{"name": "etcd", "metric": "sync.p99", "value": 2100000, "threshold": 1e7, "pass": true, "message": "ok"}]
}
"#;

    #[test]
    fn finds_the_document_after_stderr_lines() {
        let log = format!("warning: io_uring unavailable, using psync\n{RUN}");
        let (v, doc) = parse_log(&log).unwrap();
        assert_eq!(v["profile"], "etcd");
        let f = doc.figures();
        assert_eq!(f.pass, Some(true));
        assert_eq!(f.sync_p99_ns, Some(2_100_000));
        assert_eq!(f.p99_ns, Some(5000));
        assert_eq!(f.iops, Some(400.0));
    }

    #[test]
    fn informational_verdicts_do_not_fail_a_node() {
        // docs/fleet.md's cp-1: p99 2.10 ms passes at 455 writes/s, below etcd's 500/s
        // guidance for busy clusters; check etcd exits 0 on it.
        let with = |extra: &str| {
            let log = RUN.replace(
                r#""pass": true, "message": "ok"}]"#,
                &format!(r#""pass": true, "message": "ok"}}{extra}]"#),
            );
            parse_log(&log).unwrap().1.figures().pass
        };
        let iops = r#", {"name": "etcd-iops-500", "metric": "sync.iops", "value": 455.0, "threshold": 500.0, "pass": false, "message": "below"}"#;
        let stalls = r#", {"name": "etcd-stalls", "metric": "sync.stalls.over_heartbeat", "value": 2.0, "threshold": 0.0, "pass": false, "message": "2 fsyncs over 100 ms"}"#;
        assert_eq!(with(iops), Some(true));
        assert_eq!(with(&format!("{iops}{stalls}")), Some(true));
        // The etcd-server model's backend commit decides with the WAL p99.
        let commit = r#", {"name": "etcd-backend-commit", "metric": "backend_commit.p99", "value": 3e7, "threshold": 2.5e7, "pass": false, "message": "slow"}"#;
        assert_eq!(with(commit), Some(false));
        // Only informational verdicts: the exit status decides.
        let only = RUN.replace(
            r#"{"name": "etcd", "metric": "sync.p99", "value": 2100000, "threshold": 1e7, "pass": true, "message": "ok"}"#,
            &iops[2..],
        );
        assert_eq!(parse_log(&only).unwrap().1.figures().pass, None);
    }

    #[test]
    fn a_verdict_failed_only_as_inconclusive_is_told_apart() {
        let with = |etcd: &str, extra: &str| {
            let log = RUN.replace(
                r#"{"name": "etcd", "metric": "sync.p99", "value": 2100000, "threshold": 1e7, "pass": true, "message": "ok"}"#,
                &format!("{etcd}{extra}"),
            );
            let f = parse_log(&log).unwrap().1.figures();
            (f.pass, f.inconclusive)
        };
        let cut = r#"{"name": "etcd", "metric": "sync.p99", "value": 2100000, "threshold": 1e7, "pass": false, "message": "cut short", "inconclusive": true}"#;
        let slow = r#"{"name": "etcd", "metric": "sync.p99", "value": 2e7, "threshold": 1e7, "pass": false, "message": "slow"}"#;
        assert_eq!(with(cut, ""), (Some(false), true));
        assert_eq!(with(slow, ""), (Some(false), false));
        // Another deciding verdict that failed outright: the node failed.
        let commit = r#", {"name": "etcd-backend-commit", "metric": "backend_commit.p99", "value": 3e7, "threshold": 2.5e7, "pass": false, "message": "slow"}"#;
        assert_eq!(with(cut, commit), (Some(false), false));
        // An informational verdict that failed does not count.
        let iops = r#", {"name": "etcd-iops-500", "metric": "sync.iops", "value": 455.0, "threshold": 500.0, "pass": false, "message": "below"}"#;
        assert_eq!(with(cut, iops), (Some(false), true));
    }

    #[test]
    fn assess_summary_gives_worst_figures() {
        let log = r#"{
  "schema_version": 1,
  "targets": [{"path": "/var/lib/containers", "etcd_ready": false, "runs": [
    {"profile": "etcd", "verdicts": [{"name": "etcd", "metric": "sync.p99", "value": 2e7, "threshold": 1e7, "pass": false}], "sync_p99_ns": 20000000, "seconds": 3},
    {"profile": "read-iops", "verdicts": [], "read_iops": 12000.5, "p99_ns": 900000, "seconds": 3}
  ]}]
}"#;
        let (_, doc) = parse_log(log).unwrap();
        let f = doc.figures();
        assert_eq!(f.pass, Some(false));
        assert_eq!(f.sync_p99_ns, Some(20_000_000));
        assert_eq!(f.iops, Some(12000.5));
    }

    fn tag(instance_type: Option<&str>) -> FleetTag {
        FleetTag {
            fleet_run_id: "20261124-121935-a3f90c".into(),
            node: "node-1".into(),
            instance_type: instance_type.map(str::to_string),
            zone: Some("eu-north-1a".into()),
            namespace: Some("disktier".into()),
            image: Some("localhost/disktier:0.1.0".into()),
        }
    }

    #[test]
    fn tagging_makes_the_host_the_nodes_and_adds_the_fleet_object() {
        // The pod's hostname is overwritten; a missing instance type is filled in.
        let mut doc =
            serde_json::json!({"schema_version": 1, "host": {"hostname": "pod-x", "cpus": 2}});
        tag_document(&mut doc, &tag(Some("m6id.xlarge"))).unwrap();
        assert_eq!(
            doc,
            serde_json::json!({
                "schema_version": 1,
                "host": {"hostname": "node-1", "cpus": 2, "instance_type": "m6id.xlarge"},
                "fleet": {
                    "fleet_run_id": "20261124-121935-a3f90c",
                    "node": "node-1",
                    "instance_type": "m6id.xlarge",
                    "zone": "eu-north-1a",
                    "namespace": "disktier",
                    "image": "localhost/disktier:0.1.0"
                }
            })
        );
        // A null instance type is filled in; one the node command found is kept.
        let mut doc = serde_json::json!({"host": {"hostname": "p", "instance_type": null}});
        tag_document(&mut doc, &tag(Some("m6id.xlarge"))).unwrap();
        assert_eq!(doc["host"]["instance_type"], "m6id.xlarge");
        let mut doc = serde_json::json!({"host": {"hostname": "p", "instance_type": "c5.large"}});
        tag_document(&mut doc, &tag(Some("m6id.xlarge"))).unwrap();
        assert_eq!(doc["host"]["instance_type"], "c5.large");
        assert_eq!(doc["host"]["hostname"], "node-1");
        // Without a known instance type the host gets none.
        let mut doc = serde_json::json!({"host": {"hostname": "p"}});
        tag_document(&mut doc, &tag(None)).unwrap();
        assert_eq!(doc["host"], serde_json::json!({"hostname": "node-1"}));
        assert_eq!(doc["fleet"]["instance_type"], Value::Null);
    }

    #[test]
    fn tagging_a_document_without_a_host_object_makes_one() {
        for host in [None, Some(Value::Null), Some(Value::from("pod-x"))] {
            let mut doc = serde_json::json!({"schema_version": 1, "targets": []});
            if let Some(h) = host {
                doc["host"] = h;
            }
            tag_document(&mut doc, &tag(None)).unwrap();
            assert_eq!(
                doc["host"],
                serde_json::json!({"hostname": "node-1", "instance_type": null})
            );
            assert_eq!(doc["fleet"]["node"], "node-1");
        }
        let mut doc = serde_json::json!({"targets": []});
        tag_document(&mut doc, &tag(Some("m6id.xlarge"))).unwrap();
        assert_eq!(
            doc["host"],
            serde_json::json!({"hostname": "node-1", "instance_type": "m6id.xlarge"})
        );
        // Not an object: nothing to tag.
        let mut doc = serde_json::json!([1, 2]);
        tag_document(&mut doc, &tag(None)).unwrap();
        assert_eq!(doc, serde_json::json!([1, 2]));
    }

    #[test]
    fn refuses_what_is_not_a_result() {
        assert_eq!(
            parse_log("error: /x does not exist\n"),
            Err(ParseError::NoDocument)
        );
        assert!(matches!(
            parse_log("{\n\"schema_version\": 1, \"other\": 1}\n"),
            Err(ParseError::Shape(_))
        ));
        assert_eq!(
            parse_log("{\n\"schema_version\": 99, \"results\": {}}\n"),
            Err(ParseError::TooNew(99))
        );
        // A document cut short by a size limit is no document.
        assert_eq!(parse_log(&RUN[..200]), Err(ParseError::NoDocument));
    }
}
