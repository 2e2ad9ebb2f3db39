//! Which nodes a run measures: the selection the user asked for, then each node judged ready
//! or skipped with the reason (NotReady, cordoned, tainted unreachable by the node controller,
//! or tainted NoExecute where the pod's tolerations do not cover it).

use crate::error::{FleetError, Result};
use crate::names::check_node_name;
use k8s_openapi::api::core::v1::{Node, Taint, Toleration};
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

/// The most nodes one run selects: the largest cluster Kubernetes supports, "No more than
/// 5,000 nodes" (Kubernetes docs, Considerations for large clusters,
/// https://kubernetes.io/docs/setup/best-practices/cluster-large/; docs/sources.md
/// [k8s-large-clusters]). A selection of more is refused before anything is made or printed: a
/// dry run prints a Job (about 2 KB of YAML) per node, a run makes a Job per node.
pub const MAX_NODES: usize = 5_000;

/// Refuses `sel` when it selects (names, or matches in the cluster) `count` nodes, more than
/// [`MAX_NODES`].
pub fn check_count(sel: &Selection, count: usize) -> Result<()> {
    if count <= MAX_NODES {
        return Ok(());
    }
    Err(FleetError::TooManyNodes {
        selection: match sel {
            // Not the thousands of names.
            Selection::Names(_) => "--nodes".into(),
            _ => sel.describe(),
        },
        count,
        max: MAX_NODES,
    })
}

/// How the user chose nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Names(Vec<String>),
    Selector(String),
    ControlPlane,
    All,
}

impl Selection {
    /// The selection the options ask for, checked, first match wins: `nodes` (`--nodes`, each
    /// name trimmed and checked, a name given twice kept once, in the order given), else
    /// `selector` (`--selector`, trimmed; refused when blank, over 1024 bytes or holding a
    /// control character), else the control plane (`--control-plane`), else every node
    /// (`--all-nodes`). More than [`MAX_NODES`] names are refused ([`check_count`]).
    pub fn from_options(
        nodes: &[String],
        selector: Option<&str>,
        control_plane: bool,
    ) -> Result<Selection> {
        Ok(if !nodes.is_empty() {
            let mut names: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for n in nodes {
                let n = n.trim();
                check_node_name(n)?;
                // `--nodes a,a` measures `a` once, in the dry run as in the real run.
                if seen.insert(n) {
                    names.push(n.to_string());
                }
            }
            // Refused here, before a cluster is contacted (a dry run with --nodes contacts none).
            let count = names.len();
            let sel = Selection::Names(names);
            check_count(&sel, count)?;
            sel
        } else if let Some(s) = selector {
            if s.trim().is_empty() || s.len() > 1024 || s.chars().any(char::is_control) {
                return Err(FleetError::BadSelector(s.to_string()));
            }
            Selection::Selector(s.trim().to_string())
        } else if control_plane {
            Selection::ControlPlane
        } else {
            Selection::All
        })
    }

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

/// Judges one node for a pod with these tolerations ([`crate::manifest::tolerations`]).
pub fn candidate(node: &Node, tolerations: &[Toleration]) -> Candidate {
    let name = node.metadata.name.clone().unwrap_or_default();
    Candidate {
        node: name,
        instance_type: label(node, &INSTANCE_TYPE),
        zone: label(node, &ZONE),
        skip: skip_reason(node, tolerations),
    }
}

/// `NotReady (REASON)` when the node's Ready condition is not True (False, or Unknown: the
/// node controller heard nothing from the kubelet), or it has none.
pub fn not_ready(node: &Node) -> Option<String> {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
    match ready {
        None => Some("NotReady (the node has never reported a Ready condition)".into()),
        Some(c) if c.status != "True" => {
            let why = c
                .reason
                .as_deref()
                .or(c.message.as_deref())
                .unwrap_or("no reason given");
            Some(format!("NotReady ({why})"))
        }
        Some(_) => None,
    }
}

fn skip_reason(node: &Node, tolerations: &[Toleration]) -> Option<String> {
    let spec = node.spec.as_ref();
    if spec.and_then(|s| s.unschedulable) == Some(true) {
        return Some("cordoned (spec.unschedulable): uncordon it to measure it".into());
    }
    if let Some(why) = not_ready(node) {
        return Some(why);
    }
    // The node controller's taints mean the kubelet is gone or the node is going away: no
    // toleration makes such a node measurable.
    let taints = spec.and_then(|s| s.taints.as_deref()).unwrap_or_default();
    if let Some(t) = taints.iter().find(|t| {
        t.key == "node.kubernetes.io/unschedulable" || t.key == "node.kubernetes.io/unreachable"
    }) {
        return Some(format!("tainted {}: {}", t.key, t.effect));
    }
    let untolerated = untolerated_no_execute(node, tolerations);
    if !untolerated.is_empty() {
        let names: Vec<String> = untolerated.iter().map(|t| taint_text(t)).collect();
        return Some(format!(
            "tainted NoExecute ({}), which the pod does not tolerate: the taint manager would evict it at once (and the Job would make a new pod, again and again); pass --tolerate-all to measure it anyway",
            names.join(", ")
        ));
    }
    None
}

/// The node's NoExecute taints that none of `tolerations` tolerates. NoExecute is the effect
/// that acts on a pod bound with `nodeName`: the taint manager evicts it (NoSchedule and
/// PreferNoSchedule are the scheduler's, which such a pod never meets).
pub fn untolerated_no_execute<'a>(node: &'a Node, tolerations: &[Toleration]) -> Vec<&'a Taint> {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default()
        .iter()
        .filter(|t| t.effect == "NoExecute")
        .filter(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
        .collect()
}

/// Whether a toleration tolerates a taint, as Kubernetes decides it (core/v1
/// `Toleration.ToleratesTaint`): the effects match or the toleration's is empty; the keys match
/// or the toleration's is empty; `Exists` matches any value, `Equal` (the default) the same
/// value.
pub fn tolerates(tol: &Toleration, taint: &Taint) -> bool {
    fn set(s: &Option<String>) -> Option<&str> {
        s.as_deref().filter(|x| !x.is_empty())
    }
    if set(&tol.effect).is_some_and(|e| e != taint.effect) {
        return false;
    }
    if set(&tol.key).is_some_and(|k| k != taint.key) {
        return false;
    }
    match set(&tol.operator).unwrap_or("Equal") {
        "Exists" => true,
        "Equal" => tol.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        _ => false,
    }
}

/// A taint as `kubectl taint` spells it: `key=value:Effect`, or `key:Effect` without a value.
pub fn taint_text(t: &Taint) -> String {
    match t.value.as_deref().filter(|v| !v.is_empty()) {
        Some(v) => format!("{}={v}:{}", t.key, t.effect),
        None => format!("{}:{}", t.key, t.effect),
    }
}

/// The candidates for a selection, from the nodes the API returned (already filtered by label
/// selector for `Selector`), judged for a pod with `tolerations`, sorted by name, each node
/// once; `--nodes` names that match no node are skipped with "no such node".
pub fn candidates(sel: &Selection, nodes: &[Node], tolerations: &[Toleration]) -> Vec<Candidate> {
    let candidate = |n: &Node| candidate(n, tolerations);
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
    use crate::manifest::tolerations;
    use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus};
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
        let c = candidates(&sel, &nodes, &tolerations(false));
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
        let c = candidates(&Selection::ControlPlane, &nodes, &tolerations(false));
        assert_eq!(
            c.iter().map(|c| c.node.as_str()).collect::<Vec<_>>(),
            ["cp", "old"]
        );
    }

    #[test]
    fn options_choose_names_then_a_selector_then_the_control_plane() {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Trimmed, checked, each name once in the order given; names win over the rest.
        assert_eq!(
            Selection::from_options(&v(&["b", " a", "b", "a "]), Some("x=y"), true).unwrap(),
            Selection::Names(v(&["b", "a"]))
        );
        let e = Selection::from_options(&v(&["a", "A_B"]), None, false).unwrap_err();
        assert!(e.to_string().starts_with("node name `A_B`"), "{e}");
        assert_eq!(
            Selection::from_options(&[], Some(" k=v "), true).unwrap(),
            Selection::Selector("k=v".into())
        );
        for bad in ["", "  ", "a\u{7}b", &"k".repeat(1025)] {
            let e = Selection::from_options(&[], Some(bad), false).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("--selector {bad:?}: give a label selector such as node.kubernetes.io/instance-type=m6id.xlarge")
            );
        }
        assert_eq!(
            Selection::from_options(&[], None, true).unwrap(),
            Selection::ControlPlane
        );
        assert_eq!(
            Selection::from_options(&[], None, false).unwrap(),
            Selection::All
        );
    }

    /// QA: `fleet run --dry-run` took any number of nodes, printing a Job (about 2 KB of
    /// YAML) per node. More than Kubernetes' largest cluster are refused, named by the option
    /// that selected them and with a node selector suggested; as many are taken.
    #[test]
    fn more_nodes_than_the_largest_kubernetes_cluster_are_refused() {
        let names: Vec<String> = (0..=MAX_NODES).map(|i| format!("n{i}")).collect();
        assert_eq!(names.len(), 5_001);
        let e = Selection::from_options(&names, None, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--nodes selects 5001 nodes, more than the 5000 of the largest cluster Kubernetes supports (Kubernetes docs, Considerations for large clusters): narrow it with a node selector, e.g. --selector node.kubernetes.io/instance-type=m6id.xlarge, and run once per group of nodes"
        );
        let most = &names[..MAX_NODES];
        assert!(Selection::from_options(most, None, false).is_ok());
        // A name given twice is one node: 5,001 names, 5,000 nodes.
        let mut twice = most.to_vec();
        twice.push("n0".into());
        assert!(Selection::from_options(&twice, None, false).is_ok());
        // What the cluster answers a selector or --all-nodes with (kube_run::select).
        let nodes: Vec<Node> = names.iter().map(|n| node(n, "True", false, &[])).collect();
        for sel in [Selection::All, Selection::Selector("pool=big".into())] {
            let c = candidates(&sel, &nodes, &tolerations(false));
            let e = check_count(&sel, c.len()).unwrap_err().to_string();
            let want = format!("{} selects 5001 nodes, more than the 5000", sel.describe());
            assert!(e.starts_with(&want), "{e}");
            assert!(check_count(&sel, c.len() - 1).is_ok());
        }
    }

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(str::to_string),
            effect: effect.into(),
            ..Default::default()
        }
    }

    fn tainted(name: &str, taints: Vec<Taint>) -> Node {
        let mut n = node(name, "True", false, &[]);
        n.spec.as_mut().unwrap().taints = Some(taints);
        n
    }

    /// QA: a node tainted `qa13=x:NoExecute` was measured, and the taint manager evicted each
    /// pod the Job controller made, about ten a second until the deadline.
    #[test]
    fn a_no_execute_taint_the_pod_does_not_tolerate_skips_the_node() {
        let n = tainted("t", vec![taint("qa13", Some("x"), "NoExecute")]);
        let skip = candidate(&n, &tolerations(false)).skip.unwrap();
        assert!(
            skip.starts_with("tainted NoExecute (qa13=x:NoExecute)"),
            "{skip}"
        );
        assert!(skip.contains("--tolerate-all"), "{skip}");
        assert_eq!(candidate(&n, &tolerations(true)).skip, None);
        // NoSchedule is the scheduler's, which a nodeName-bound pod never meets: measured.
        let n = tainted("s", vec![taint("dedicated", Some("db"), "NoSchedule")]);
        assert_eq!(candidate(&n, &tolerations(false)).skip, None);
        // kubeadm's control-plane taint (NoSchedule, and tolerated as well): measured.
        let n = tainted(
            "cp",
            vec![taint("node-role.kubernetes.io/master", None, "NoSchedule")],
        );
        assert_eq!(candidate(&n, &tolerations(false)).skip, None);
        // Unreachable is skipped even with --tolerate-all: the kubelet is gone.
        let n = tainted(
            "u",
            vec![taint("node.kubernetes.io/unreachable", None, "NoExecute")],
        );
        assert!(candidate(&n, &tolerations(true)).skip.is_some());
    }

    #[test]
    fn tolerations_match_as_kubernetes_matches_them() {
        let t = taint("k", Some("v"), "NoExecute");
        let tol =
            |key: Option<&str>, op: Option<&str>, value: Option<&str>, effect: Option<&str>| {
                Toleration {
                    key: key.map(str::to_string),
                    operator: op.map(str::to_string),
                    value: value.map(str::to_string),
                    effect: effect.map(str::to_string),
                    ..Default::default()
                }
            };
        assert!(tolerates(&tol(None, Some("Exists"), None, None), &t));
        assert!(tolerates(
            &tol(Some("k"), Some("Exists"), None, Some("NoExecute")),
            &t
        ));
        assert!(tolerates(&tol(Some("k"), None, Some("v"), None), &t));
        assert!(tolerates(
            &tol(Some("k"), Some("Equal"), Some("v"), Some("NoExecute")),
            &t
        ));
        assert!(!tolerates(
            &tol(Some("k"), Some("Equal"), Some("w"), None),
            &t
        ));
        assert!(!tolerates(&tol(Some("j"), Some("Exists"), None, None), &t));
        assert!(!tolerates(
            &tol(Some("k"), Some("Exists"), None, Some("NoSchedule")),
            &t
        ));
        assert!(!tolerates(&tol(Some("k"), Some("Gt"), Some("v"), None), &t));
        assert_eq!(taint_text(&t), "k=v:NoExecute");
        assert_eq!(taint_text(&taint("k", None, "NoSchedule")), "k:NoSchedule");
    }
}
