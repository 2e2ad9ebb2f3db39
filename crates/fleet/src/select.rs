//! Which nodes a run measures: the selection the user asked for, then each node judged ready
//! or skipped with the reason (NotReady, cordoned, tainted NoExecute by the node controller).

use k8s_openapi::api::core::v1::Node;
use serde::Serialize;

/// The well-known labels a node's placement is read from (Kubernetes docs, "Well-Known Labels,
/// Annotations and Taints"); the beta names are what clusters before 1.17 set.
const INSTANCE_TYPE: [&str; 2] = [
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
];
const ZONE: [&str; 2] = [
    "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/zone",
];
/// Control-plane role labels: `control-plane` since 1.20, `master` before 1.24 and on OpenShift.
pub const CONTROL_PLANE_LABELS: [&str; 2] = [
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
];

/// How the user chose nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Names(Vec<String>),
    Selector(String),
    ControlPlane,
    All,
}

impl Selection {
    pub fn describe(&self) -> String {
        match self {
            Selection::Names(n) => format!("--nodes {}", n.join(",")),
            Selection::Selector(s) => format!("--selector {s}"),
            Selection::ControlPlane => "--control-plane".into(),
            Selection::All => "--all-nodes".into(),
        }
    }
}

/// One selected node: where it is, and whether it will be measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub node: String,
    pub instance_type: Option<String>,
    pub zone: Option<String>,
    /// Why it is not measured, or `None`.
    pub skip: Option<String>,
}

fn label(node: &Node, keys: &[&str]) -> Option<String> {
    let labels = node.metadata.labels.as_ref()?;
    keys.iter().find_map(|k| labels.get(*k).cloned())
}

pub fn is_control_plane(node: &Node) -> bool {
    node.metadata
        .labels
        .as_ref()
        .is_some_and(|l| CONTROL_PLANE_LABELS.iter().any(|k| l.contains_key(*k)))
}

/// Judges one node.
pub fn candidate(node: &Node) -> Candidate {
    let name = node.metadata.name.clone().unwrap_or_default();
    Candidate {
        node: name,
        instance_type: label(node, &INSTANCE_TYPE),
        zone: label(node, &ZONE),
        skip: skip_reason(node),
    }
}

fn skip_reason(node: &Node) -> Option<String> {
    let spec = node.spec.as_ref();
    if spec.and_then(|s| s.unschedulable) == Some(true) {
        return Some("cordoned (spec.unschedulable): uncordon it to measure it".into());
    }
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
    match ready {
        None => return Some("NotReady (the node has never reported a Ready condition)".into()),
        Some(c) if c.status != "True" => {
            let why = c
                .reason
                .as_deref()
                .or(c.message.as_deref())
                .unwrap_or("no reason given");
            return Some(format!("NotReady ({why})"));
        }
        Some(_) => {}
    }
    // The node controller's taints mean the kubelet is gone or the node is going away.
    let taints = spec.and_then(|s| s.taints.as_deref()).unwrap_or_default();
    if let Some(t) = taints.iter().find(|t| {
        t.key == "node.kubernetes.io/unschedulable" || t.key == "node.kubernetes.io/unreachable"
    }) {
        return Some(format!("tainted {}: {}", t.key, t.effect));
    }
    None
}

/// The candidates for a selection, from the nodes the API returned (already filtered by label
/// selector for `Selector`), sorted by name; `--nodes` names that match no node are skipped
/// with "no such node".
pub fn candidates(sel: &Selection, nodes: &[Node]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = match sel {
        Selection::Names(names) => names
            .iter()
            .map(|n| {
                nodes
                    .iter()
                    .find(|x| x.metadata.name.as_deref() == Some(n))
                    .map(candidate)
                    .unwrap_or_else(|| Candidate {
                        node: n.clone(),
                        instance_type: None,
                        zone: None,
                        skip: Some("no such node (see `kubectl get nodes`)".into()),
                    })
            })
            .collect(),
        Selection::ControlPlane => nodes
            .iter()
            .filter(|n| is_control_plane(n))
            .map(candidate)
            .collect(),
        Selection::Selector(_) | Selection::All => nodes.iter().map(candidate).collect(),
    };
    out.sort_by(|a, b| a.node.cmp(&b.node));
    out.dedup_by(|a, b| a.node == b.node);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus, Taint};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use std::collections::BTreeMap;

    pub fn node(name: &str, ready: &str, cordoned: bool, labels: &[(&str, &str)]) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect::<BTreeMap<_, _>>(),
                ),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                unschedulable: Some(cordoned),
                ..Default::default()
            }),
            status: Some(NodeStatus {
                conditions: Some(vec![NodeCondition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    reason: Some("KubeletReady".into()),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn skips_not_ready_cordoned_unreachable_and_unknown_names() {
        let mut unreachable = node("d", "True", false, &[]);
        unreachable.spec.as_mut().unwrap().taints = Some(vec![Taint {
            key: "node.kubernetes.io/unreachable".into(),
            effect: "NoExecute".into(),
            ..Default::default()
        }]);
        let nodes = vec![
            node(
                "a",
                "True",
                false,
                &[
                    ("node.kubernetes.io/instance-type", "m6id.xlarge"),
                    ("topology.kubernetes.io/zone", "eu-north-1a"),
                ],
            ),
            node("b", "Unknown", false, &[]),
            node("c", "True", true, &[]),
            unreachable,
        ];
        let sel = Selection::Names(["d", "a", "b", "c", "zz", "a"].map(String::from).to_vec());
        let c = candidates(&sel, &nodes);
        let names: Vec<_> = c.iter().map(|c| c.node.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "zz"]);
        assert_eq!(c[0].skip, None);
        assert_eq!(c[0].instance_type.as_deref(), Some("m6id.xlarge"));
        assert_eq!(c[0].zone.as_deref(), Some("eu-north-1a"));
        assert!(c[1].skip.as_deref().unwrap().starts_with("NotReady"));
        assert!(c[2].skip.as_deref().unwrap().starts_with("cordoned"));
        assert!(c[3].skip.as_deref().unwrap().contains("unreachable"));
        assert!(c[4].skip.as_deref().unwrap().starts_with("no such node"));
    }

    #[test]
    fn control_plane_by_either_role_label() {
        let nodes = vec![
            node(
                "cp",
                "True",
                false,
                &[("node-role.kubernetes.io/control-plane", "")],
            ),
            node(
                "old",
                "True",
                false,
                &[("node-role.kubernetes.io/master", "")],
            ),
            node("w", "True", false, &[]),
        ];
        let c = candidates(&Selection::ControlPlane, &nodes);
        assert_eq!(
            c.iter().map(|c| c.node.as_str()).collect::<Vec<_>>(),
            ["cp", "old"]
        );
    }
}
