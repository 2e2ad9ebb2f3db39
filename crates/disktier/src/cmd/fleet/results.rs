//! Each measured node's result: saved in the store as a run of the node command's kind, and
//! exported as Prometheus metrics with the node's name (the work is `app::fleet`'s).

use super::super::Ctx;
use super::text::note;
use crate::app::fleet::{node_metrics, save_results};
use disktier_fleet::kube_run::RunSpec;
use disktier_fleet::summary::NodeReport;

/// Saves each measured node's document as a run of the node command's kind, grouped by the
/// fleet run and tagged with the node's name, instance type and zone.
pub(super) fn save(ctx: &Ctx, spec: &RunSpec, nodes: &mut [NodeReport]) -> anyhow::Result<()> {
    save_results(&ctx.store(), spec, nodes)
}

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
