//! The least privilege a fleet run needs, as RBAC objects: a ClusterRole to read nodes (they
//! are cluster-scoped), a Role in the run's namespace for Jobs, Pods and their logs, and the
//! bindings to one subject (a ServiceAccount by default, or a user).

use crate::manifest::{MANAGED_BY, MANAGED_BY_VALUE};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Whom the roles are bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    /// A ServiceAccount in the run's namespace (created too).
    ServiceAccount(String),
    User(String),
}

/// The objects, in the order `kubectl apply -f -` should create them.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum RbacObject {
    ServiceAccount(ServiceAccount),
    ClusterRole(ClusterRole),
    ClusterRoleBinding(ClusterRoleBinding),
    Role(Role),
    RoleBinding(RoleBinding),
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(v(groups)),
        resources: Some(v(resources)),
        verbs: v(verbs),
        ..Default::default()
    }
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(BTreeMap::from([(
            MANAGED_BY.to_string(),
            MANAGED_BY_VALUE.to_string(),
        )])),
        ..Default::default()
    }
}

/// The rules of the namespaced Role: what `fleet run` and `fleet clean` call.
pub fn namespace_rules() -> Vec<PolicyRule> {
    vec![
        // create the Jobs, watch them, delete them (and leftovers: list by label).
        rule(
            &["batch"],
            &["jobs"],
            &["create", "get", "list", "watch", "delete"],
        ),
        // watch the pods for image-pull errors and results; delete pods that never started.
        rule(&[""], &["pods"], &["get", "list", "watch", "delete"]),
        // read the result document.
        rule(&[""], &["pods/log"], &["get"]),
    ]
}

/// The rules of the ClusterRole: nodes are cluster-scoped.
pub fn cluster_rules() -> Vec<PolicyRule> {
    vec![rule(&[""], &["nodes"], &["get", "list"])]
}

pub fn objects(namespace: &str, who: &Who) -> Vec<RbacObject> {
    const NAME: &str = "disktier-fleet";
    let subject = match who {
        Who::ServiceAccount(n) => Subject {
            kind: "ServiceAccount".into(),
            name: n.clone(),
            namespace: Some(namespace.to_string()),
            ..Default::default()
        },
        Who::User(n) => Subject {
            kind: "User".into(),
            name: n.clone(),
            api_group: Some("rbac.authorization.k8s.io".into()),
            ..Default::default()
        },
    };
    let role_ref = |kind: &str| RoleRef {
        api_group: "rbac.authorization.k8s.io".into(),
        kind: kind.into(),
        name: NAME.into(),
    };
    let mut out = Vec::new();
    if let Who::ServiceAccount(n) = who {
        out.push(RbacObject::ServiceAccount(ServiceAccount {
            metadata: meta(n, Some(namespace)),
            ..Default::default()
        }));
    }
    out.push(RbacObject::ClusterRole(ClusterRole {
        metadata: meta(NAME, None),
        rules: Some(cluster_rules()),
        ..Default::default()
    }));
    out.push(RbacObject::ClusterRoleBinding(ClusterRoleBinding {
        // One binding per namespace, so two namespaces' service accounts do not overwrite it.
        metadata: meta(&format!("{NAME}-{namespace}"), None),
        role_ref: role_ref("ClusterRole"),
        subjects: Some(vec![subject.clone()]),
    }));
    out.push(RbacObject::Role(Role {
        metadata: meta(NAME, Some(namespace)),
        rules: Some(namespace_rules()),
    }));
    out.push(RbacObject::RoleBinding(RoleBinding {
        metadata: meta(NAME, Some(namespace)),
        role_ref: role_ref("Role"),
        subjects: Some(vec![subject]),
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_privilege_and_nothing_more() {
        let objs = objects("disktier", &Who::ServiceAccount("disktier-fleet".into()));
        let v = serde_json::to_value(&objs).unwrap();
        let kinds: Vec<_> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "Role",
                "RoleBinding"
            ]
        );
        assert_eq!(
            v[1]["rules"],
            serde_json::json!([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}])
        );
        let all_verbs: Vec<String> = v[3]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| {
                r["verbs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
            })
            .collect();
        assert!(!all_verbs
            .iter()
            .any(|v| v == "*" || v == "deletecollection" || v == "update"));
        assert_eq!(v[4]["subjects"][0]["namespace"], "disktier");
        let user = serde_json::to_value(objects("ns", &Who::User("alice".into()))).unwrap();
        assert_eq!(user.as_array().unwrap().len(), 4);
        assert_eq!(user[1]["subjects"][0]["kind"], "User");
    }
}
