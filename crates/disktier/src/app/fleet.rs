//! `fleet run`'s work on this side of the cluster: the run's id, the run itself ([`run`]: the
//! Jobs on the cluster, each measured node's document saved in the store, tagged by
//! `disktier_fleet::result::tag_document` and grouped by the fleet run, and the summary),
//! `fleet clean`, and the nodes' runs as Prometheus metrics. The Kubernetes work is
//! `disktier_fleet`'s.

use super::save::StoreConfig;
use crate::exposition::RunMetrics;
use anyhow::Context;
use disktier_fleet::kube_run::{self, ClientOptions, Progress, RunOutcome, RunSpec};
use disktier_fleet::manifest;
use disktier_fleet::result::{tag_document, FleetTag, Unmeasured, UNMEASURED_KIND};
use disktier_fleet::summary::{self, Summary};
use disktier_fleet::summary::{NodeReport, Status};

/// The fleet run's id: `given` (`--run-id`) checked, else a new one in the store's run id
/// shape (time, then random hex), lowercase so it is a valid label value.
pub fn run_id(given: Option<&str>) -> anyhow::Result<String> {
    Ok(match given {
        Some(id) => {
            manifest::check_run_id("--run-id", id)?;
            id.to_string()
        }
        None => disktier_store::model::new_id(),
    })
}

/// A fleet run as it ended: the cluster's outcome (its nodes saved, each with its run id) and
/// what they add up to.
pub struct FleetRun {
    pub outcome: RunOutcome,
    pub summary: Summary,
}

/// Runs `spec` on the cluster `client` reaches (one Job per node, `progress` hearing each
/// step), saves each measured node's document ([`save_results`]) and sums the nodes up.
pub fn run(
    store: &StoreConfig,
    spec: &RunSpec,
    client: &ClientOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> anyhow::Result<FleetRun> {
    let mut outcome = kube_run::block_on(async {
        let client = kube_run::client(client).await?;
        kube_run::run(&client, spec, progress).await
    })??;
    save_results(store, spec, &mut outcome.nodes)?;
    let summary = summary::summarize(&outcome.nodes);
    Ok(FleetRun { outcome, summary })
}

/// `fleet clean`: deletes the Jobs and Pods in `namespace` that match `selector` (a fleet
/// run's, or every disktier Job's).
pub fn clean(
    client: &ClientOptions,
    namespace: &str,
    selector: &str,
) -> anyhow::Result<kube_run::CleanReport> {
    Ok(kube_run::block_on(async {
        let client = kube_run::client(client).await?;
        kube_run::delete_matching(&client, namespace, selector).await
    })??)
}

/// Saves each measured node's document as a run of the node command's kind, grouped by the
/// fleet run and tagged with the node's name, instance type and zone; each saved node gets its
/// run id. A node without a document is saved as an `unmeasured` run of the group: its status
/// and reason. Nothing is saved (and no node changed) with `--no-save`. The documents in `nodes`
/// stay as the nodes printed them: the tagged copy is what is stored.
pub fn save_results(
    store: &StoreConfig,
    spec: &RunSpec,
    nodes: &mut [NodeReport],
) -> anyhow::Result<()> {
    if store.no_save {
        return Ok(());
    }
    let kind = spec.job.command.verb.name();
    for n in nodes.iter_mut() {
        let tag = FleetTag {
            fleet_run_id: spec.job.run_id.clone(),
            node: n.node.clone(),
            instance_type: n.instance_type.clone(),
            zone: n.zone.clone(),
            namespace: Some(spec.job.namespace.clone()),
            image: Some(spec.job.image.clone()),
        };
        let Some(doc) = &n.result else {
            // A node that gave no document (skipped, or in error: image, deadline, eviction,
            // OOM kill) is kept with the fleet run as what happened to it (QA: only the
            // measured nodes were stored, and the failures were lost once the terminal
            // scrolled). Not given to the node as its run id: it is no run of its command.
            let status = match n.status {
                Status::Skipped => "skipped",
                _ => "error",
            };
            let reason = n.reason.as_deref().unwrap_or("no result document");
            let doc = serde_json::to_value(Unmeasured::new(tag, status, reason))?;
            store
                .save(UNMEASURED_KIND, Some(&spec.job.run_id), &doc)
                .with_context(|| format!("saving the outcome of node {}", n.node))?;
            continue;
        };
        let mut doc = doc.clone();
        tag_document(&mut doc, &tag)?;
        n.run_id = store
            .save(kind, Some(&spec.job.run_id), &doc)
            .with_context(|| format!("saving the result of node {}", n.node))?;
    }
    Ok(())
}

/// The measured nodes' metrics: one [`RunMetrics`] per node whose document is a run, labelled
/// with the node's name, and the names of the nodes whose documents are not runs (assess
/// prints summaries).
pub struct NodeMetrics<'a> {
    /// The runs' metrics, in the nodes' order.
    pub runs: Vec<RunMetrics>,
    /// The measured nodes without a run document, in the nodes' order.
    pub without: Vec<&'a str>,
}

/// The metrics of each measured node's run, as `check` and `bench` write them on the node
/// itself, with `verb` (the node command) as the `command` label.
pub fn node_metrics<'a>(verb: &str, nodes: &'a [NodeReport]) -> NodeMetrics<'a> {
    let mut runs = Vec::new();
    let mut without = Vec::new();
    for n in nodes {
        // A node in error may still carry the document its command printed before failing
        // (kept for the store); its figures are not the node's measurement to export.
        let measured = matches!(n.status, Status::Pass | Status::Fail);
        let Some(doc) = n.result.as_ref().filter(|_| measured) else {
            continue;
        };
        match serde_json::from_value::<disktier_engine::RunDoc>(doc.clone()) {
            Ok(d) => runs.push(RunMetrics::from_doc(verb, &n.node, &d)),
            Err(_) => without.push(n.node.as_str()),
        }
    }
    NodeMetrics { runs, without }
}
