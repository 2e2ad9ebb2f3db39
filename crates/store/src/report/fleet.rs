//! The fleet section: for each `disktier fleet run` among the report's runs (documents that
//! carry a `fleet` object), one row per node — node, instance type, zone, verdict, the key
//! figures — and a bar chart of the key figure per node (sync p99 when the runs measured
//! fsyncs, else IOPS), so a slow node stands out.

use super::charts::{self, Bar, ChartError};
use super::html::esc;
use crate::compare::fmt_count;
use crate::StoredRun;
use disktier_fleet::result::{FleetTag, KeyFigures, Outcome, UNMEASURED_KIND};
use serde::Deserialize;
use std::fmt::Write as _;

/// One node's stored run, as the section reads it.
struct Row<'a> {
    run: &'a StoredRun,
    node: String,
    instance_type: Option<String>,
    zone: Option<String>,
    verdict: Option<bool>,
    /// The verdict failed only as inconclusive (a run cut short that settled nothing).
    inconclusive: bool,
    sync_p99_ns: Option<u64>,
    iops: Option<f64>,
    /// A node that gave no document: its status (`error`, `skipped`) and reason.
    unmeasured: Option<(String, String)>,
}

/// The row of a run that a fleet run saved (its document carries a `fleet` object), or `None`.
/// `figures` are the ones `fleet run` prints for the node
/// ([`disktier_fleet::result::NodeDoc::figures`]); a document that does not read has none.
fn row<'a>(run: &'a StoredRun, figures: &KeyFigures) -> Option<(String, Row<'a>)> {
    #[derive(Deserialize)]
    struct Tagged {
        fleet: FleetTag,
        #[serde(default)]
        unmeasured: Option<Outcome>,
    }
    let tagged = Tagged::deserialize(&run.doc).ok()?;
    let tag = tagged.fleet;
    // Only the kind `fleet run` stores a node's outcome under has none of the figures.
    let unmeasured = tagged
        .unmeasured
        .filter(|_| run.summary.kind == UNMEASURED_KIND)
        .map(|o| (o.status, o.reason));
    Some((
        tag.fleet_run_id,
        Row {
            run,
            node: tag.node,
            instance_type: tag.instance_type,
            zone: tag.zone,
            verdict: figures.pass,
            inconclusive: figures.inconclusive,
            sync_p99_ns: figures.sync_p99_ns,
            iops: figures.iops,
            unmeasured,
        },
    ))
}

/// The section's HTML, or `None` when no run came from a fleet run. `figures[i]` are the key
/// figures of `runs[i]`'s document.
pub fn section(runs: &[StoredRun], figures: &[KeyFigures]) -> Result<Option<String>, ChartError> {
    let mut groups: Vec<(String, Vec<Row<'_>>)> = Vec::new();
    for (id, r) in runs.iter().zip(figures).filter_map(|(r, f)| row(r, f)) {
        match groups.iter_mut().find(|(g, _)| *g == id) {
            Some((_, rows)) => rows.push(r),
            None => groups.push((id, vec![r])),
        }
    }
    if groups.is_empty() {
        return Ok(None);
    }
    let mut s = String::new();
    for (id, mut rows) in groups {
        rows.sort_by(|a, b| a.node.cmp(&b.node));
        let unmeasured = rows.iter().filter(|r| r.unmeasured.is_some()).count();
        let _ = writeln!(
            s,
            "<h3>fleet run <span class=\"mono\">{}</span> · {} node{}{}</h3>",
            esc(&id),
            rows.len(),
            if rows.len() == 1 { "" } else { "s" },
            if unmeasured > 0 {
                format!(" ({unmeasured} not measured)")
            } else {
                String::new()
            }
        );
        s.push_str("<table class=\"fleet\">\n<tr><th>node</th><th>instance type</th><th>zone</th><th>verdict</th><th>sync p99</th><th>IOPS</th><th>run</th></tr>\n");
        for r in &rows {
            let _ = writeln!(
                s,
                "<tr><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"mono\">{}</td></tr>",
                esc(&r.node),
                esc(r.instance_type.as_deref().unwrap_or("–")),
                esc(r.zone.as_deref().unwrap_or("–")),
                match (&r.unmeasured, r.verdict.map(|p| (p, r.inconclusive))) {
                    (Some((status, reason)), _) => format!(
                        "<span class=\"badge fail\">not measured: {}</span> {}",
                        esc(status),
                        esc(reason)
                    ),
                    (None, Some((true, _))) => "<span class=\"badge pass\">pass</span>".into(),
                    (None, Some((false, true))) => {
                        "<span class=\"badge info\">inconclusive</span> the run was cut short"
                            .into()
                    }
                    (None, Some((false, false))) => "<span class=\"badge fail\">fail</span>".into(),
                    (None, None) => "–".into(),
                },
                r.sync_p99_ns
                    .map(|v| esc(&disktier_units::fmt_ns(v as f64)))
                    .unwrap_or_else(|| "–".into()),
                r.iops.map(fmt_count).unwrap_or_else(|| "–".into()),
                esc(&r.run.summary.id),
            );
        }
        s.push_str("</table>\n");
        let sync = rows.iter().any(|r| r.sync_p99_ns.is_some());
        let bars: Vec<Bar> = rows
            .iter()
            .filter_map(|r| {
                let (value, text) = if sync {
                    let v = r.sync_p99_ns? as f64;
                    (v / 1e6, disktier_units::fmt_ns(v))
                } else {
                    let v = r.iops?;
                    (v, fmt_count(v))
                };
                Some(Bar {
                    label: r.node.clone(),
                    value,
                    color: if r.verdict == Some(false) && !r.inconclusive {
                        1
                    } else {
                        0
                    },
                    text,
                })
            })
            .collect();
        if !bars.is_empty() {
            let x = if sync {
                "fdatasync p99 (ms) per node"
            } else {
                "IOPS per node"
            };
            let svg = charts::bars(&bars, x, 900)?;
            let _ = write!(
                s,
                "<figure class=\"chart\" data-chart=\"fleet:{}\">\n{svg}</figure>\n",
                esc(&id)
            );
        }
    }
    Ok(Some(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::docs::StoredDoc;
    use crate::NewRun;

    /// The section as `render` builds it: each document read once for its figures.
    fn section_of(runs: &[StoredRun]) -> Option<String> {
        let figures: Vec<_> = runs.iter().map(|r| StoredDoc::read(r).figures()).collect();
        section(runs, &figures).unwrap()
    }

    fn run(node: &str, p99: u64, pass: bool) -> StoredRun {
        run_with(node, p99, pass, false)
    }

    fn run_with(node: &str, p99: u64, pass: bool, inconclusive: bool) -> StoredRun {
        let doc = serde_json::json!({
            "schema_version": 1, "engine": "disktier", "profile": "etcd", "job": {},
            "target": {"path": "/var/lib/etcd", "kind": "directory"},
            "host": {"hostname": node, "kernel": "6.1", "cpus": 2},
            "started_at": "2026-11-24T12:00:00Z", "duration_s": 3.0,
            "results": {"write": {"ios": 1, "bytes": 1, "iops": 400.0, "bw_bytes": 1.0,
                "lat_ns": {"mean": 1.0, "stdev": 0.0, "min": 1, "max": 1, "percentiles": {"99": 1000}}},
              "sync": {"ios": 1, "bytes": 0, "iops": 400.0, "bw_bytes": 0.0,
                "lat_ns": {"mean": 1.0, "stdev": 0.0, "min": 1, "max": 1, "percentiles": {"99": p99}}},
              "cpu": {"usr_s": 0.0, "sys_s": 0.0}},
            "verdicts": [{"name": "etcd", "metric": "sync.p99", "value": p99, "threshold": 1e7, "pass": pass, "inconclusive": inconclusive}],
            "fleet": {"fleet_run_id": "20261124-120000-abcdef", "node": node,
                      "instance_type": "m6id.xlarge", "zone": "eu-north-1a"}
        });
        NewRun {
            kind: "check",
            group_id: Some("20261124-120000-abcdef"),
            doc: &doc,
        }
        .to_row(format!("id-{node}"), "2026-11-24T12:00:00Z".into())
    }

    #[test]
    fn a_node_cut_short_is_marked_inconclusive_not_failed() {
        let runs = vec![
            run_with("node-a", 2_000_000, false, true),
            run("node-b", 14_000_000, false),
        ];
        let s = section_of(&runs).unwrap();
        assert_eq!(s.matches("badge fail").count(), 1, "{s}");
        assert_eq!(s.matches("badge info\">inconclusive").count(), 1, "{s}");
    }

    #[test]
    fn one_row_per_node_and_a_chart_of_sync_p99() {
        let runs = vec![
            run("node-b", 14_000_000, false),
            run("node-a", 2_000_000, true),
            run("node-c", 2_500_000, true),
        ];
        let s = section_of(&runs).unwrap();
        assert_eq!(s.matches("<tr><td class=\"mono\">node-").count(), 3);
        assert!(
            s.find("node-a").unwrap() < s.find("node-b").unwrap(),
            "sorted by node"
        );
        assert_eq!(s.matches("badge fail").count(), 1);
        assert!(s.contains("m6id.xlarge") && s.contains("eu-north-1a"));
        assert!(s.contains("data-chart=\"fleet:20261124-120000-abcdef\""));
        assert!(s.contains("fdatasync p99 (ms) per node"));
        let page = crate::report::render(&crate::report::ReportInput::new(&runs, "now")).unwrap();
        assert!(page.contains("<section id=\"fleet\">"));
    }

    #[test]
    fn an_assessment_gives_its_worst_figures() {
        let doc = serde_json::json!({
            "schema_version": 1,
            "targets": [{"path": "/var/lib/containers", "runs": [
                {"profile": "etcd", "sync_p99_ns": 12_000_000,
                 "verdicts": [{"name": "etcd", "metric": "sync.p99", "value": 1.2e7, "threshold": 1e7, "pass": false}]},
                {"profile": "read-iops", "read_iops": 15000.0, "verdicts": []}
            ]}],
            "fleet": {"fleet_run_id": "r-1", "node": "n1"}
        });
        let run = NewRun {
            kind: "assess",
            group_id: Some("r-1"),
            doc: &doc,
        }
        .to_row("id-n1".into(), "2026-11-24T12:00:00Z".into());
        let s = section_of(&[run]).unwrap();
        assert!(s.contains("badge fail"), "{s}");
        assert!(s.contains("<td>12.00 ms</td>"), "{s}");
        assert!(s.contains("<td>15.0k</td>"), "{s}");
    }

    #[test]
    fn runs_without_a_fleet_run_have_no_section() {
        let mut r = run("x", 1, true);
        r.doc.as_object_mut().unwrap().remove("fleet");
        assert!(section_of(&[r]).is_none());
    }

    /// A node that gave no document is a row marked with its status and reason, with no
    /// figure and no bar: the chart holds the measured nodes only.
    #[test]
    fn an_unmeasured_node_is_a_marked_row_without_a_bar() {
        let tag: FleetTag = serde_json::from_value(serde_json::json!({
            "fleet_run_id": "20261124-120000-abcdef", "node": "node-z", "zone": "eu-north-1b"}))
        .unwrap();
        let doc = serde_json::to_value(disktier_fleet::result::Unmeasured::new(
            tag,
            "error",
            "OOMKilled (exit 137): <the node command> went past the pod's 1Gi memory limit",
        ))
        .unwrap();
        let lost = NewRun {
            kind: UNMEASURED_KIND,
            group_id: Some("20261124-120000-abcdef"),
            doc: &doc,
        }
        .to_row("id-z".into(), "2026-11-24T12:00:00Z".into());
        let runs = vec![run("node-a", 2_000_000, true), lost];
        let s = section_of(&runs).unwrap();
        assert!(s.contains("· 2 nodes (1 not measured)"), "{s}");
        assert!(
            s.contains("not measured: error</span> OOMKilled (exit 137): &lt;the node command&gt;"),
            "{s}"
        );
        // Named in its row only (a bar would name it too).
        assert_eq!(s.matches("node-z").count(), 1, "{s}");
        let page = crate::report::render(&crate::report::ReportInput::new(&runs, "now")).unwrap();
        assert!(!page.contains("unreadable document"), "{page}");
    }
}
