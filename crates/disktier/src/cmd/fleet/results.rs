//! Each measured node's result: saved in the store as a run of the node command's kind, and
//! exported as Prometheus metrics with the node's name.

use super::super::Ctx;
use super::text::note;
use anyhow::Context;
use disktier_fleet::kube_run::RunSpec;
use disktier_fleet::result::FleetTag;
use disktier_fleet::summary::NodeReport;

/// Saves each measured node's document as a run of the node command's kind, grouped by the
/// fleet run and tagged with the node's name, instance type and zone.
pub(super) fn save(ctx: &Ctx, spec: &RunSpec, nodes: &mut [NodeReport]) -> anyhow::Result<()> {
    if ctx.global.no_save {
        return Ok(());
    }
    let kind = spec.job.command.verb.name();
    for n in nodes.iter_mut() {
        let Some(doc) = &n.result else { continue };
        let mut doc = doc.clone();
        if let Some(obj) = doc.as_object_mut() {
            let tag = FleetTag {
                fleet_run_id: spec.job.run_id.clone(),
                node: n.node.clone(),
                instance_type: n.instance_type.clone(),
                zone: n.zone.clone(),
                namespace: Some(spec.job.namespace.clone()),
                image: Some(spec.job.image.clone()),
            };
            obj.insert("fleet".into(), serde_json::to_value(&tag)?);
            // The pod's hostname is the pod's name; the run is the node's.
            if let Some(host) = obj.get_mut("host").and_then(|h| h.as_object_mut()) {
                host.insert("hostname".into(), n.node.clone().into());
                if let Some(t) = &n.instance_type {
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
                    serde_json::json!({"hostname": n.node, "instance_type": n.instance_type}),
                );
            }
        }
        n.run_id = ctx
            .store()
            .save(kind, Some(&spec.job.run_id), &doc)
            .with_context(|| format!("saving the result of node {}", n.node))?;
    }
    Ok(())
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
    let mut runs = Vec::new();
    let mut without = Vec::new();
    for n in nodes {
        let Some(doc) = &n.result else { continue };
        match serde_json::from_value::<disktier_engine::RunDoc>(doc.clone()) {
            Ok(d) => runs.push(crate::exposition::RunMetrics::from_doc(verb, &n.node, &d)),
            Err(_) => without.push(n.node.as_str()),
        }
    }
    if !without.is_empty() {
        note(
            ctx,
            format_args!(
                "no metrics for {} ({verb} prints a summary, not runs): use --format json",
                without.join(", ")
            ),
        );
    }
    ctx.export_run_metrics("fleet", &runs, interrupted)
}
