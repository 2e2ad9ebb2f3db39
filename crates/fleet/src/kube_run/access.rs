//! Whether the client may do what a run does, asked before anything is made. Without it a
//! Role that lacks one verb of `disktier fleet rbac` showed only once the run was under way,
//! and then as something else: without `watch` on pods every node waited out `--timeout` and
//! was reported "deadline exceeded ... the pod never started (Pending; is the node's kubelet
//! running?)", without `delete` on Jobs or Pods the run's objects stayed in the cluster, and
//! without `get` on `pods/log` a node was measured and its result lost (QA, minimal RBAC on the
//! test cluster).
//!
//! The API server answers each question with a SelfSubjectAccessReview, which every
//! authenticated user may create (the `system:basic-user` ClusterRole); a server that refuses
//! the review itself leaves the calls to say what they are refused.

use crate::error::{FleetError, Result};
use crate::rbac::{cluster_rules, namespace_rules, EVENTS};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::api::{Api, PostParams};
use kube::Client;

/// One permission a run uses: `verb` on `resource` (`pods/log` is `pods` and its subresource
/// `log`) of API group `group`, in `namespace` (`None`: cluster-scoped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    pub group: String,
    pub resource: String,
    pub verb: String,
    pub namespace: Option<String>,
}

impl Permission {
    /// `create jobs.batch`, `get pods/log`, `list nodes (cluster-wide)`.
    pub fn describe(&self) -> String {
        let group = match self.group.as_str() {
            "" => String::new(),
            g => format!(".{g}"),
        };
        let scope = if self.namespace.is_none() {
            " (cluster-wide)"
        } else {
            ""
        };
        format!("{} {}{group}{scope}", self.verb, self.resource)
    }

    /// Events are optional: without them a run still works, but a missing node path or an
    /// eviction is reported at `--timeout` instead of in seconds (docs/fleet.md).
    pub fn optional(&self) -> bool {
        self.resource == EVENTS
    }

    pub(super) fn review(&self) -> SelfSubjectAccessReview {
        let (resource, subresource) = match self.resource.split_once('/') {
            Some((r, s)) => (r.to_string(), Some(s.to_string())),
            None => (self.resource.clone(), None),
        };
        SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    group: Some(self.group.clone()),
                    resource: Some(resource),
                    subresource,
                    verb: Some(self.verb.clone()),
                    namespace: self.namespace.clone(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

/// Every permission of `disktier fleet rbac` for a run in `namespace`: the rules it prints are
/// the ones checked, so the two cannot drift apart.
pub fn needed(namespace: &str) -> Vec<Permission> {
    let expand = |rules: Vec<PolicyRule>, ns: Option<&str>| {
        let mut out = Vec::new();
        for r in rules {
            for g in r.api_groups.unwrap_or_default() {
                for res in r.resources.clone().unwrap_or_default() {
                    for v in &r.verbs {
                        out.push(Permission {
                            group: g.clone(),
                            resource: res.clone(),
                            verb: v.clone(),
                            namespace: ns.map(str::to_string),
                        });
                    }
                }
            }
        }
        out
    };
    let mut all = expand(namespace_rules(), Some(namespace));
    all.extend(expand(cluster_rules(), None));
    all
}

/// What the client may not do of what a run needs: `(required, optional)`; both empty when the
/// server does not answer access reviews (the calls themselves will say).
pub async fn missing(client: &Client, namespace: &str) -> (Vec<Permission>, Vec<Permission>) {
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let perms = needed(namespace);
    let answers = futures::future::join_all(perms.iter().map(|p| {
        let api = api.clone();
        let review = p.review();
        async move { api.create(&PostParams::default(), &review).await }
    }))
    .await;
    let (mut required, mut optional) = (Vec::new(), Vec::new());
    for (p, answer) in perms.into_iter().zip(answers) {
        match answer {
            Ok(r) if r.status.as_ref().is_some_and(|s| s.allowed) => {}
            Ok(_) if p.optional() => optional.push(p),
            Ok(_) => required.push(p),
            // A refused (403) or unknown (404) review, or any other failure: no answer.
            Err(_) => return (Vec::new(), Vec::new()),
        }
    }
    (required, optional)
}

/// Fails, before anything is made, when the client lacks a permission a run needs; returns the
/// optional ones it lacks (for a note).
pub async fn check(client: &Client, namespace: &str) -> Result<Vec<Permission>> {
    let (required, optional) = missing(client, namespace).await;
    if !required.is_empty() {
        return Err(FleetError::Forbidden {
            namespace: namespace.to_string(),
            missing: list(&required),
        });
    }
    Ok(optional)
}

/// `create jobs.batch, watch pods`.
pub fn list(perms: &[Permission]) -> String {
    perms
        .iter()
        .map(Permission::describe)
        .collect::<Vec<_>>()
        .join(", ")
}
