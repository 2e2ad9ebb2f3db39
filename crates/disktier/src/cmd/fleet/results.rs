//! Each measured node's result exported as Prometheus metrics with the node's name (the runs
//! are `app::fleet::node_metrics`; `app::fleet::run` saved them).

use super::super::Ctx;
use super::text::note;
use crate::app::fleet::node_metrics;
use disktier_fleet::kube_run::RunSpec;
use disktier_fleet::summary::NodeReport;

/// `--format prometheus` / `--textfile-dir`: each measured node's run as the same families
/// `check` and `bench` write on the node itself, with that node's name as the `node` label.
/// Assess documents carry summaries, not runs: their nodes are named in a note instead.
pub(super) fn export_metrics(
    ctx: &Ctx,
    spec: &RunSpec,
    nodes: &[NodeReport],
    interrupted: bool,
) -> anyhow::Result<()> {
    if !ctx.exports_metrics() {
        return Ok(());
    }
    let verb = spec.job.command.verb.name();
    let m = node_metrics(verb, nodes);
    if !m.without.is_empty() {
        note(
            ctx,
            format_args!(
                "no metrics for {} ({verb} prints a summary, not runs): use --format json",
                m.without.join(", ")
            ),
        );
    }
    ctx.export_run_metrics("fleet", &m.runs, interrupted)
}
