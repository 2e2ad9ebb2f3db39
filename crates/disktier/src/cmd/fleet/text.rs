//! The human output of `fleet run`: progress lines, the per-node table and the summary, and
//! how they are written (through `crate::out`, which never panics on a closed pipe).

use super::super::Ctx;
use disktier_fleet::kube_run::Progress;
use disktier_fleet::summary::{self, NodeReport, Status, Summary};
use disktier_units::fmt_ns;

/// A note or progress line on stderr unless `--quiet`. A line that cannot be written (stderr
/// closed: `2>&1 | head`, a terminal that went away) is dropped: fleet writes these while its
/// Jobs exist, and `eprintln!` would panic there, ending the process before its cleanup.
pub(super) fn note(ctx: &Ctx, msg: impl std::fmt::Display) {
    if ctx.chatty() {
        crate::out::note(msg);
    }
}

pub(super) fn progress_line(p: &Progress<'_>) -> String {
    match p {
        // They may be another client's run still going, which a bare `fleet clean` (every
        // run's objects) would stop: each run is named with the command that removes it alone.
        Progress::Leftovers {
            namespace,
            jobs,
            runs,
        } => format!(
            "note: {jobs} Job(s) or Pod(s) of other fleet runs are in namespace {namespace}; those of a run that is over (killed) are removed by {}",
            runs.iter()
                .map(|r| format!("`disktier fleet clean -n {namespace} --run {r}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Progress::Unpermitted { namespace, missing } => format!(
            "note: this client may not {missing} in namespace {namespace}: a node path that is missing or an eviction is reported at --timeout instead of in seconds (`disktier fleet rbac` grants it)"
        ),
        Progress::Skipped { node, reason } => format!("  {node}: skipped: {reason}"),
        Progress::Created { node, job } => format!("  {node}: pending (job {job})"),
        Progress::Running { node } => format!("  {node}: running"),
        Progress::Done(r) => format!(
            "  {}: done: {}{}",
            r.node,
            status_word(r.status),
            r.reason
                .as_deref()
                .map(|x| format!(" ({x})"))
                .unwrap_or_default()
        ),
        Progress::Selected { measured } => format!("{measured} node(s) to measure"),
        Progress::Cleaning { why } => format!("cleaning up ({why})"),
    }
}

/// The progress lines of one run, each node's end counted against the nodes to measure
/// (`[3/50]`): with many nodes measured one at a time, how far the run has come. QA: 30
/// nodes' lines said which node had ended, never how many of them had.
#[derive(Default)]
pub(super) struct ProgressLines {
    measured: usize,
    ended: usize,
}

impl ProgressLines {
    pub(super) fn line(&mut self, p: &Progress<'_>) -> String {
        let line = progress_line(p);
        match p {
            Progress::Selected { measured, .. } => {
                self.measured = *measured;
                line
            }
            // A skip after the selection is a node judged again when its turn came.
            Progress::Done(_) | Progress::Skipped { .. } if self.measured > 0 => {
                self.ended += 1;
                format!("{line} [{}/{}]", self.ended, self.measured)
            }
            _ => line,
        }
    }
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "FAIL",
        Status::Skipped => "skipped",
        Status::Error => "ERROR",
    }
}

pub(super) fn table(nodes: &[NodeReport]) -> String {
    let opt = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
    let mut rows = vec![[
        "NODE".to_string(),
        "INSTANCE TYPE".into(),
        "ZONE".into(),
        "VERDICT".into(),
        "SYNC P99".into(),
        "P99".into(),
        "IOPS".into(),
        "SECONDS".into(),
        "REASON".into(),
    ]];
    for n in nodes {
        rows.push([
            n.node.clone(),
            opt(&n.instance_type),
            opt(&n.zone),
            status_word(n.status).into(),
            n.figures
                .sync_p99_ns
                .map(|x| fmt_ns(x as f64))
                .unwrap_or_else(|| "-".into()),
            n.figures
                .p99_ns
                .map(|x| fmt_ns(x as f64))
                .unwrap_or_else(|| "-".into()),
            n.figures
                .iops
                .map(|x| format!("{x:.0}"))
                .unwrap_or_else(|| "-".into()),
            n.seconds
                .map(|s| format!("{s:.1}"))
                .unwrap_or_else(|| "-".into()),
            opt(&n.reason),
        ]);
    }
    // The one table layout the other commands use (node names and label values are ASCII by
    // Kubernetes' rules; the unpadded last column, the reason, is free text).
    let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    disktier_store::compare::align(&rows)
}

pub(super) fn summary_text(s: &Summary) -> String {
    let mut out = format!(
        "\n{} node{}: {} pass, {} fail, {} could not be measured, {} skipped\n",
        s.nodes,
        if s.nodes == 1 { "" } else { "s" },
        s.passed,
        s.failed,
        s.errors,
        s.skipped
    );
    if let Some(k) = s.key_metric {
        let fmt = |v: f64| match k {
            summary::KeyMetric::Iops => format!("{v:.0}"),
            _ => fmt_ns(v),
        };
        if let Some(m) = s.median {
            out.push_str(&format!("{}: median {}", k.label(), fmt(m)));
        }
        if let Some(w) = &s.worst {
            out.push_str(&format!(", worst {} ({})", fmt(w.value), w.node));
        }
        out.push('\n');
        if s.outliers.is_empty() {
            out.push_str("outliers: none");
        } else {
            let o: Vec<String> = s
                .outliers
                .iter()
                .map(|o| format!("{} ({})", o.node, fmt(o.value)))
                .collect();
            out.push_str(&format!("outliers: {}", o.join(", ")));
        }
        out.push_str(&format!(" (rule: {})\n", s.outlier_rule));
    }
    out
}

/// The error of a run whose objects were still there when its cleanup stopped waiting. It
/// names this run's `fleet clean --run`: a bare `fleet clean -n NS` (which it named before)
/// deletes every run's objects in the namespace, and so stops another client's run going
/// there (QA: a pod held by a finalizer, beside a second run).
pub(super) fn left_behind_message(namespace: &str, run_id: &str, left: &[String]) -> String {
    format!(
        "could not delete {} within the wait (a finalizer holds an object until it is removed: `kubectl -n {namespace} get {} -o yaml` names it): run `disktier fleet clean -n {namespace} --run {run_id}` once it is gone",
        left.join(", "),
        left.first().map(String::as_str).unwrap_or("pods")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_left_is_cleaned_by_this_runs_id_alone() {
        let m = left_behind_message(
            "disktier",
            "20261128-101010-aaaaaa",
            &["pod/disktier-aaaaaa-n1-0badc0de-x1y2z".into()],
        );
        assert!(
            m.contains("`disktier fleet clean -n disktier --run 20261128-101010-aaaaaa`"),
            "{m}"
        );
        assert!(
            m.contains("kubectl -n disktier get pod/disktier-aaaaaa-n1-0badc0de-x1y2z -o yaml"),
            "{m}"
        );
        assert!(!m.contains("`disktier fleet clean -n disktier`"), "{m}");
    }

    #[test]
    fn each_nodes_end_is_counted_against_the_nodes_to_measure() {
        let mut lines = ProgressLines::default();
        let skipped = Progress::Skipped {
            node: "a",
            reason: "cordoned",
        };
        assert_eq!(lines.line(&skipped), "  a: skipped: cordoned");
        let selected = Progress::Selected { measured: 2 };
        assert_eq!(lines.line(&selected), "2 node(s) to measure");
        let created = Progress::Created {
            node: "b",
            job: "j",
        };
        assert_eq!(lines.line(&created), "  b: pending (job j)");
        let mut r = NodeReport::new("b", None, None);
        r.status = Status::Pass;
        assert_eq!(lines.line(&Progress::Done(&r)), "  b: done: pass [1/2]");
        let later = Progress::Skipped {
            node: "c",
            reason: "NotReady",
        };
        assert_eq!(lines.line(&later), "  c: skipped: NotReady [2/2]");
    }

    #[test]
    fn leftovers_are_cleaned_run_by_run_never_all_at_once() {
        // QA: with two fleet runs in one namespace, the second was told the first's Jobs were
        // from earlier runs and that `disktier fleet clean` removes them, which deletes every
        // run's Jobs and stops the first run midway.
        let line = progress_line(&Progress::Leftovers {
            namespace: "disktier",
            jobs: 2,
            runs: vec![
                "20261128-101010-aaaaaa".into(),
                "20261128-111111-bbbbbb".into(),
            ],
        });
        assert!(
            line.contains("`disktier fleet clean -n disktier --run 20261128-101010-aaaaaa`")
                && line.contains("`disktier fleet clean -n disktier --run 20261128-111111-bbbbbb`"),
            "{line}"
        );
        assert!(!line.contains("`disktier fleet clean`"), "{line}");
    }
}
