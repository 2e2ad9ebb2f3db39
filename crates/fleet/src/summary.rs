//! The fleet's verdict: one row per node, the median and the worst node of the key figure, the
//! outliers (with the rule that found them), and the exit status of the worst node.

use crate::result::KeyFigures;
use serde::Serialize;
use serde_json::Value;

/// How a node's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured; every verdict passed (or the command gives none).
    Pass,
    /// Measured; a verdict failed.
    Fail,
    /// Selected but not measured (NotReady, cordoned, no such node).
    Skipped,
    /// Could not be measured (image, deadline, eviction, OOM, the command's own error).
    Error,
}

impl Status {
    /// The process exit status this node alone would give: 0 pass, 1 a verdict failed, 2 it
    /// could not be measured.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Pass => 0,
            Status::Fail => 1,
            Status::Skipped | Status::Error => 2,
        }
    }
}

/// One node's row.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    pub node: String,
    pub instance_type: Option<String>,
    pub zone: Option<String>,
    pub status: Status,
    /// Why it was skipped or could not be measured.
    pub reason: Option<String>,
    /// "pass" / "fail" when the node command gave verdicts ("inconclusive": failed only as a
    /// run cut short that settled nothing).
    pub verdict: Option<&'static str>,
    pub figures: KeyFigures,
    /// From the Job's creation to its result (what fleet adds included).
    pub seconds: Option<f64>,
    /// The stored run's id, once saved.
    pub run_id: Option<String>,
    /// The node command's document, as it printed it.
    pub result: Option<Value>,
}

impl NodeReport {
    pub fn new(node: &str, instance_type: Option<String>, zone: Option<String>) -> NodeReport {
        NodeReport {
            node: node.to_string(),
            instance_type,
            zone,
            status: Status::Error,
            reason: None,
            verdict: None,
            figures: KeyFigures::default(),
            seconds: None,
            run_id: None,
            result: None,
        }
    }
}

/// The figure nodes are compared by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyMetric {
    /// etcd's figure; higher is worse.
    SyncP99Ns,
    /// Higher is better.
    Iops,
    /// Higher is worse.
    P99Ns,
}

impl KeyMetric {
    pub fn of(self, f: &KeyFigures) -> Option<f64> {
        match self {
            KeyMetric::SyncP99Ns => f.sync_p99_ns.map(|x| x as f64),
            KeyMetric::Iops => f.iops,
            KeyMetric::P99Ns => f.p99_ns.map(|x| x as f64),
        }
    }
    pub fn higher_is_worse(self) -> bool {
        !matches!(self, KeyMetric::Iops)
    }
    pub fn label(self) -> &'static str {
        match self {
            KeyMetric::SyncP99Ns => "sync p99",
            KeyMetric::Iops => "IOPS",
            KeyMetric::P99Ns => "p99",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeValue {
    pub node: String,
    pub value: f64,
}

/// What the fleet as a whole looked like.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub nodes: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
    pub key_metric: Option<KeyMetric>,
    pub median: Option<f64>,
    pub worst: Option<NodeValue>,
    pub outliers: Vec<NodeValue>,
    pub outlier_rule: &'static str,
    /// The exit status of the worst node.
    pub exit_code: u8,
}

/// The outlier rule: Iglewicz and Hoaglin's modified z-score (NIST/SEMATECH e-Handbook of
/// Statistical Methods, 1.3.5.17), robust to the outliers themselves, unlike mean and standard
/// deviation. With fewer than 3 measured nodes nothing is called an outlier.
pub const OUTLIER_RULE: &str = "modified z-score 0.6745*|x - median|/MAD > 3.5 (Iglewicz-Hoaglin), on the worse side only; when MAD is 0, worse than the median by more than 50%; at least 3 measured nodes";

pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// The nodes whose value is an outlier on the worse side (see [`OUTLIER_RULE`]).
pub fn outliers(values: &[NodeValue], higher_is_worse: bool) -> Vec<NodeValue> {
    if values.len() < 3 {
        return Vec::new();
    }
    let xs: Vec<f64> = values.iter().map(|v| v.value).collect();
    let Some(med) = median(&xs) else {
        return Vec::new();
    };
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev).unwrap_or(0.0);
    let worse = |x: f64| if higher_is_worse { x > med } else { x < med };
    values
        .iter()
        .filter(|v| {
            worse(v.value)
                && if mad > 0.0 {
                    0.6745 * (v.value - med).abs() / mad > 3.5
                } else {
                    (v.value - med).abs() > 0.5 * med.abs()
                }
        })
        .cloned()
        .collect()
}

pub fn summarize(nodes: &[NodeReport]) -> Summary {
    let count = |s| nodes.iter().filter(|n| n.status == s).count();
    let measured: Vec<&NodeReport> = nodes
        .iter()
        .filter(|n| matches!(n.status, Status::Pass | Status::Fail))
        .collect();
    let key = [KeyMetric::SyncP99Ns, KeyMetric::Iops, KeyMetric::P99Ns]
        .into_iter()
        .find(|k| measured.iter().any(|n| k.of(&n.figures).is_some()));
    let values: Vec<NodeValue> = key
        .map(|k| {
            measured
                .iter()
                .filter_map(|n| {
                    k.of(&n.figures).map(|value| NodeValue {
                        node: n.node.clone(),
                        value,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let hiw = key.is_none_or(KeyMetric::higher_is_worse);
    let worst = values
        .iter()
        .max_by(|a, b| {
            if hiw {
                a.value.total_cmp(&b.value)
            } else {
                b.value.total_cmp(&a.value)
            }
        })
        .cloned();
    Summary {
        nodes: nodes.len(),
        passed: count(Status::Pass),
        failed: count(Status::Fail),
        errors: count(Status::Error),
        skipped: count(Status::Skipped),
        key_metric: key,
        median: median(&values.iter().map(|v| v.value).collect::<Vec<_>>()),
        worst,
        outliers: outliers(&values, hiw),
        outlier_rule: OUTLIER_RULE,
        exit_code: nodes
            .iter()
            .map(|n| n.status.exit_code())
            .max()
            .unwrap_or(0),
    }
}

/// The one-line error of a run where nodes could not be measured (skipped or errored, exit
/// status 2): how many of how many, counted by kind (a reason up to its first `:` or `(`, in
/// the order first met), then the first five such nodes by name (`, ...` when there are more).
pub fn unmeasured_message(nodes: &[NodeReport]) -> String {
    let bad: Vec<&NodeReport> = nodes.iter().filter(|n| n.status.exit_code() == 2).collect();
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for n in &bad {
        let r = n.reason.as_deref().unwrap_or("no reason");
        let kind = r.split([':', '(']).next().unwrap_or(r).trim().to_string();
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, c)) => *c += 1,
            None => kinds.push((kind, 1)),
        }
    }
    let names: Vec<&str> = bad.iter().take(5).map(|n| n.node.as_str()).collect();
    format!(
        "{} of {} nodes could not be measured ({}): {}{}",
        bad.len(),
        nodes.len(),
        kinds
            .iter()
            .map(|(k, c)| format!("{c} {k}"))
            .collect::<Vec<_>>()
            .join(", "),
        names.join(", "),
        if bad.len() > names.len() { ", ..." } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nv(node: &str, value: f64) -> NodeValue {
        NodeValue {
            node: node.into(),
            value,
        }
    }

    fn row(node: &str, status: Status, sync: Option<u64>) -> NodeReport {
        let mut r = NodeReport::new(node, None, None);
        r.status = status;
        r.figures.sync_p99_ns = sync;
        r
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn one_slow_node_among_ten_is_the_outlier() {
        let mut v: Vec<NodeValue> = (0..9)
            .map(|i| nv(&format!("n{i}"), 2.0e6 + i as f64 * 1.0e5))
            .collect();
        v.push(nv("slow", 9.0e6));
        // Faster than the rest is not "worse": not reported for a latency.
        v.push(nv("fast", 0.1e6));
        let o = outliers(&v, true);
        assert_eq!(o, vec![nv("slow", 9.0e6)]);
        // For IOPS the low one is the outlier.
        let iops = vec![
            nv("a", 1000.0),
            nv("b", 1010.0),
            nv("c", 990.0),
            nv("d", 100.0),
        ];
        assert_eq!(outliers(&iops, false), vec![nv("d", 100.0)]);
    }

    #[test]
    fn identical_nodes_use_the_fallback_and_two_nodes_have_no_outliers() {
        let v = vec![nv("a", 1.0), nv("b", 1.0), nv("c", 1.0), nv("d", 1.6)];
        assert_eq!(outliers(&v, true), vec![nv("d", 1.6)]);
        assert!(outliers(&[nv("a", 1.0), nv("b", 100.0)], true).is_empty());
    }

    #[test]
    fn the_unmeasured_nodes_are_counted_by_kind_and_the_first_five_named() {
        let bad = |node: &str, status: Status, reason: Option<&str>| {
            let mut r = row(node, status, None);
            r.reason = reason.map(str::to_string);
            r
        };
        let mut nodes = vec![
            row("a", Status::Pass, Some(1)),
            bad("b", Status::Error, Some("deadline: ended after 600s")),
            bad("c", Status::Skipped, Some("NotReady (KubeletNotReady)")),
            bad("d", Status::Error, Some("deadline: ended after 600s")),
            row("e", Status::Fail, Some(2)),
        ];
        assert_eq!(
            unmeasured_message(&nodes),
            "3 of 5 nodes could not be measured (2 deadline, 1 NotReady): b, c, d"
        );
        for n in ["f", "g", "h"] {
            nodes.push(bad(n, Status::Error, None));
        }
        assert_eq!(
            unmeasured_message(&nodes),
            "6 of 8 nodes could not be measured (2 deadline, 1 NotReady, 3 no reason): b, c, d, f, g, ..."
        );
    }

    #[test]
    fn exit_status_is_the_worst_node() {
        let s = summarize(&[
            row("a", Status::Pass, Some(1_000_000)),
            row("b", Status::Fail, Some(20_000_000)),
        ]);
        assert_eq!(s.exit_code, 1);
        assert_eq!(s.key_metric, Some(KeyMetric::SyncP99Ns));
        assert_eq!(s.worst, Some(nv("b", 2.0e7)));
        assert_eq!(s.median, Some(1.05e7));
        let s = summarize(&[
            row("a", Status::Pass, Some(1)),
            row("c", Status::Skipped, None),
        ]);
        assert_eq!((s.exit_code, s.skipped), (2, 1));
        assert_eq!(summarize(&[row("a", Status::Pass, None)]).exit_code, 0);
    }
}
