//! What the API server says of a node when one of its pods fails: its NoExecute taints for an
//! eviction, its Ready condition for a deadline.

use crate::manifest::{self, JobConfig};
use crate::select;
use k8s_openapi::api::core::v1::{Node, Toleration};
use kube::api::Api;
use kube::Client;

/// How every deadline's reason starts.
pub(super) const DEADLINE: &str = "deadline exceeded";

/// A deadline's reason, with the node's state when it is NotReady now: a node that went
/// NotReady during the run (its kubelet stopped, or lost the API server) was reported only as
/// a deadline, which reads as a slow disk (session 22's left item).
///
/// A read the server leaves unanswered sets `hung` (the run then asks it nothing more).
pub(super) async fn with_node_state(
    client: &Client,
    node: &str,
    why: String,
    hung: &mut Option<String>,
) -> String {
    match read_node(client, node, hung).await {
        Ok(Some(n)) => match select::not_ready(&n) {
            Some(state) => format!(
                "{why}; the node is {state} now: its kubelet stopped or lost the API server (kubectl describe node {node})"
            ),
            None => why,
        },
        Ok(None) => format!("{why}; the node is gone from the cluster"),
        Err(()) => why,
    }
}

/// The node as the API server has it; `Err` when it could not be read (and `hung` set when
/// the server did not answer), or was not asked because it had stopped answering.
async fn read_node(
    client: &Client,
    node: &str,
    hung: &mut Option<String>,
) -> Result<Option<Node>, ()> {
    if hung.is_some() {
        return Err(());
    }
    Api::<Node>::all(client.clone())
        .get_opt(node)
        .await
        .map_err(|e| {
            if super::limits::unanswered(&e) {
                *hung = Some(format!("reading node {node}"));
            }
        })
}

/// How long after the nodes were judged a node whose turn comes is judged again
/// ([`skip_now`]); a run that starts every node at once asks nothing more.
pub(crate) const REJUDGE_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Why a node judged measurable when the run started is not now (NotReady, cordoned, tainted
/// unreachable or NoExecute, gone), judged again when its turn comes: with `--parallel 1` a
/// node waits for every node before it, each up to `--timeout`, and one whose kubelet stopped
/// meanwhile (the node controller marks it NotReady 40 s later, its default
/// `--node-monitor-grace-period`) was given its Job all the same and held the run for a whole
/// `--timeout` as a pod that never started (QA, against an API server that reported the second
/// of three nodes NotReady once the first Job was made). `None` when the node cannot be read:
/// the Job's creation says why.
pub(super) async fn skip_now(
    client: &Client,
    node: &str,
    tolerations: &[Toleration],
    hung: &mut Option<String>,
) -> Option<String> {
    let why = match read_node(client, node, hung).await {
        Ok(Some(n)) => select::candidate(&n, tolerations).skip?,
        Ok(None) => "gone from the cluster".into(),
        Err(()) => return None,
    };
    Some(format!("{why} (found when its turn came)"))
}

/// An eviction's reason, with the node's NoExecute taints the pod does not tolerate when
/// there are any (the taint manager's own event names only the pod).
pub(super) async fn eviction_reason(
    client: &Client,
    node: &str,
    cfg: &JobConfig,
    why: String,
    hung: &mut Option<String>,
) -> String {
    let Ok(Some(n)) = read_node(client, node, hung).await else {
        return why;
    };
    let tolerations = manifest::tolerations(cfg.tolerate_all);
    let taints: Vec<String> = select::untolerated_no_execute(&n, &tolerations)
        .into_iter()
        .map(select::taint_text)
        .collect();
    if taints.is_empty() {
        return why;
    }
    format!(
        "{why}: the node is tainted {}, which the pod does not tolerate; pass --tolerate-all to measure it anyway",
        taints.join(", ")
    )
}
