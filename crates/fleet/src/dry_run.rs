//! `fleet run --dry-run`: the nodes a run would measure and the manifests it would apply,
//! without creating anything. With `--nodes` nothing is contacted (the names are taken as
//! given); any other selection reads the cluster's nodes and judges them as a real run does.

use crate::error::Result;
use crate::kube_run::{self, ClientOptions};
use crate::manifest::{self, JobConfig};
use crate::select::{Candidate, Selection};
use k8s_openapi::api::batch::v1::Job;

/// The nodes a dry run makes Jobs for, and those it skips.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRunNodes {
    /// The measured nodes' names, in the selection's order.
    pub measured: Vec<String>,
    /// The skipped nodes, each with its reason, in the selection's order.
    pub skipped: Vec<Candidate>,
}

impl DryRunNodes {
    /// Splits judged candidates into the measured (no skip reason) and the skipped.
    pub fn from_candidates(cands: Vec<Candidate>) -> DryRunNodes {
        let (skipped, measured): (Vec<Candidate>, Vec<Candidate>) =
            cands.into_iter().partition(|c| c.skip.is_some());
        DryRunNodes {
            measured: measured.into_iter().map(|c| c.node).collect(),
            skipped,
        }
    }
}

/// The nodes of a dry run: `--nodes` as given (nothing is contacted, nothing skipped); any
/// other selection from the cluster `opts` names, judged for a pod with the tolerations of
/// `tolerate_all` ([`manifest::tolerations`]). Blocks on its own runtime.
pub fn nodes(opts: &ClientOptions, sel: &Selection, tolerate_all: bool) -> Result<DryRunNodes> {
    if let Selection::Names(n) = sel {
        return Ok(DryRunNodes {
            measured: n.clone(),
            skipped: Vec::new(),
        });
    }
    let tolerations = manifest::tolerations(tolerate_all);
    let cands = kube_run::block_on(async {
        let client = kube_run::client(opts).await?;
        kube_run::select(&client, sel, &tolerations).await
    })??;
    Ok(DryRunNodes::from_candidates(cands))
}

/// What a dry run prints: the Jobs, and the manifests as multi-document YAML.
#[derive(Debug, Clone)]
pub struct Manifests {
    /// One Job per node, in the nodes' order.
    pub jobs: Vec<Job>,
    /// The namespace first when `--create-namespace` asks for it, then the Jobs.
    pub yaml: String,
}

/// The manifests for `nodes`: the namespace (with `create_namespace`) and one Job per node.
/// Two nodes whose Job names collide are refused ([`manifest::job_names`]): the YAML would
/// apply one Job over the other.
pub fn manifests(cfg: &JobConfig, nodes: &[String], create_namespace: bool) -> Result<Manifests> {
    let mut yaml = String::new();
    if create_namespace {
        yaml.push_str(&manifest::to_yaml(&[manifest::namespace(&cfg.namespace)])?);
    }
    manifest::job_names(&cfg.run_id, nodes)?;
    let jobs: Vec<Job> = nodes.iter().map(|n| manifest::job(cfg, n)).collect();
    yaml.push_str(&manifest::to_yaml(&jobs)?);
    Ok(Manifests { jobs, yaml })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> JobConfig {
        crate::manifest::example_options()
            .into_config(&["check", "etcd", "/x"].map(String::from))
            .unwrap()
    }

    fn cand(node: &str, skip: Option<&str>) -> Candidate {
        Candidate {
            node: node.into(),
            instance_type: None,
            zone: None,
            skip: skip.map(str::to_string),
        }
    }

    #[test]
    fn skipped_nodes_are_dropped_in_order() {
        let n = DryRunNodes::from_candidates(vec![
            cand("a", None),
            cand("b", Some("cordoned")),
            cand("c", None),
            cand("d", Some("NotReady (x)")),
        ]);
        assert_eq!(n.measured, ["a", "c"]);
        let skipped: Vec<_> = n.skipped.iter().map(|c| c.node.as_str()).collect();
        assert_eq!(skipped, ["b", "d"]);
    }

    #[test]
    fn names_are_taken_as_given_without_a_cluster() {
        let opts = ClientOptions {
            kubeconfig: Some("/nonexistent".into()),
            context: None,
        };
        let sel = Selection::Names(vec!["b".into(), "a".into()]);
        let n = nodes(&opts, &sel, false).unwrap();
        assert_eq!(n.measured, ["b", "a"]);
        assert!(n.skipped.is_empty());
    }

    #[test]
    fn one_job_per_node_after_the_namespace() {
        let nodes = ["n1".to_string(), "n2".to_string()];
        let m = manifests(&cfg(), &nodes, true).unwrap();
        assert_eq!(m.jobs.len(), 2);
        assert_eq!(m.yaml.matches("---\n").count(), 3);
        assert!(
            m.yaml.starts_with("---\napiVersion: v1\nkind: Namespace\n"),
            "{}",
            m.yaml
        );
        let m = manifests(&cfg(), &nodes, false).unwrap();
        assert_eq!(m.yaml.matches("kind: Job").count(), 2);
        assert!(!m.yaml.contains("kind: Namespace"));
        // The same node twice would be one Job applied twice: refused.
        let twice = ["n1".to_string(), "n1".to_string()];
        assert!(manifests(&cfg(), &twice, false).is_err());
    }
}
