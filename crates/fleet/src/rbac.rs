//! The least privilege a fleet run needs, as RBAC objects: a ClusterRole to read nodes (they
//! are cluster-scoped), a Role in the run's namespace for Jobs, Pods, their logs and events, and
//! the bindings to one subject (a ServiceAccount by default, or a user). The bindings are named
//! after their subject, so binding a second subject adds to the first instead of replacing it.

use crate::error::{FleetError, Result};
use crate::manifest::{MANAGED_BY, MANAGED_BY_VALUE};
use crate::names::{check_service_account, fnv1a};
use crate::shown::unshown;
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

/// Checks a `--user`: not empty, and every character shows as itself ([`unshown`]).
fn check_user(u: String) -> Result<String> {
    if u.is_empty() {
        return Err(FleetError::BadUser {
            user: u,
            why: "it is empty".into(),
        });
    }
    if let Some((c, what)) = u.chars().find_map(|c| unshown(c).map(|w| (c, w))) {
        return Err(FleetError::BadUser {
            why: format!(
                "it holds U+{:04X}, {what}, which would not show as itself in the bindings (reordered, invisible or breaking the line)",
                c as u32
            ),
            user: u,
        });
    }
    Ok(u)
}

impl Who {
    /// The subject the options name, checked: `user` (`--user`: [`check_user`]) when given,
    /// else the ServiceAccount `service_account` (a DNS label).
    pub fn from_options(user: Option<String>, service_account: String) -> Result<Who> {
        match user {
            Some(u) => Ok(Who::User(check_user(u)?)),
            None => {
                check_service_account(&service_account)?;
                Ok(Who::ServiceAccount(service_account))
            }
        }
    }
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

/// The one resource of the Role a run can do without (it loses only the early reports).
pub const EVENTS: &str = "events";

/// The rules of the namespaced Role: what `fleet run` and `fleet clean` call.
pub fn namespace_rules() -> Vec<PolicyRule> {
    vec![
        // create the Jobs, watch them, delete them (and leftovers: list by label). No `get`:
        // a watch lists and watches, and nothing reads one Job or Pod by name.
        rule(
            &["batch"],
            &["jobs"],
            &["create", "list", "watch", "delete"],
        ),
        // watch the pods for image-pull errors and results; delete pods that never started.
        rule(&[""], &["pods"], &["list", "watch", "delete"]),
        // read the result document.
        rule(&[""], &["pods/log"], &["get"]),
        // the kubelet's and the taint manager's word on a pod (FailedMount,
        // TaintManagerEviction): a node fails in seconds instead of at the deadline.
        rule(&[""], &[EVENTS], &["list", "watch"]),
    ]
}

/// The rules of the ClusterRole: nodes are cluster-scoped.
pub fn cluster_rules() -> Vec<PolicyRule> {
    vec![rule(&[""], &["nodes"], &["get", "list"])]
}

/// The part of a binding's name that names its subject: `sa-NAME` or `user-NAME` (NAME
/// lowercased, other characters as `-`, cut to 40) and 8 hex digits of a hash of the subject in
/// full (kind, namespace, name), so `alice` and `Alice`, or `a.b` and `a-b`, get two bindings.
/// Without it every subject's binding had one name, and `kubectl apply` of a second subject's
/// replaced the first's subjects (QA: the service account lost its permissions).
pub fn subject_suffix(namespace: &str, who: &Who) -> String {
    let (kind, name, full) = match who {
        Who::ServiceAccount(n) => ("sa", n, format!("ServiceAccount\0{namespace}\0{n}")),
        Who::User(n) => ("user", n, format!("User\0{n}")),
    };
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let hash = fnv1a(full.as_bytes()) & 0xffff_ffff;
    match clean.trim_matches('-') {
        "" => format!("{kind}-{hash:08x}"),
        c => format!("{kind}-{c}-{hash:08x}"),
    }
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
    let binding = format!("{NAME}-{}", subject_suffix(namespace, who));
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
        // One binding per namespace and subject, so neither another namespace's nor another
        // subject's binding overwrites it.
        metadata: meta(
            &format!("{NAME}-{namespace}-{}", subject_suffix(namespace, who)),
            None,
        ),
        role_ref: role_ref("ClusterRole"),
        subjects: Some(vec![subject.clone()]),
    }));
    out.push(RbacObject::Role(Role {
        metadata: meta(NAME, Some(namespace)),
        rules: Some(namespace_rules()),
    }));
    out.push(RbacObject::RoleBinding(RoleBinding {
        metadata: meta(&binding, Some(namespace)),
        role_ref: role_ref("Role"),
        subjects: Some(vec![subject]),
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subject_is_the_user_when_given_else_the_service_account() {
        assert_eq!(
            Who::from_options(Some("alice".into()), "Bad SA".into()).unwrap(),
            Who::User("alice".into())
        );
        assert_eq!(
            Who::from_options(None, "disktier-fleet".into()).unwrap(),
            Who::ServiceAccount("disktier-fleet".into())
        );
        assert_eq!(
            Who::from_options(Some("".into()), "x".into())
                .unwrap_err()
                .to_string(),
            "--user \"\": it is empty: give the user name the cluster authenticates (kubectl auth whoami shows it)"
        );
        assert!(Who::from_options(Some("a\nb".into()), "x".into())
            .unwrap_err()
            .to_string()
            .starts_with("--user \"a\\nb\": it holds U+000A, a control character"));
        let e = Who::from_options(None, "Bad SA".into()).unwrap_err();
        assert!(e.to_string().starts_with("--service-account"), "{e}");
    }

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

    fn names(objs: &[RbacObject]) -> Vec<(String, String)> {
        serde_json::to_value(objs)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["kind"].as_str().unwrap().to_string(),
                    o["metadata"]["name"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// QA: `fleet rbac --user $'alice\u202e'` printed the U+202E into the binding's subject,
    /// where it shows what follows reversed; zero-width and line-separator characters went
    /// through as well. Each is refused naming it; other Unicode (a name in any script, the
    /// OIDC and certificate forms) is kept, and quoted where YAML would read it otherwise.
    #[test]
    fn a_user_name_that_does_not_show_as_itself_is_refused() {
        for (bad, code, what) in [
            ("evil\u{202e}nimda", "U+202E", "bidirectional"),
            ("a\u{2066}b", "U+2066", "bidirectional"),
            ("a\u{200f}", "U+200F", "bidirectional"),
            ("ad\u{200b}min", "U+200B", "invisible"),
            ("\u{feff}admin", "U+FEFF", "invisible"),
            ("a\u{2028}b", "U+2028", "line or paragraph separator"),
            ("a\u{85}b", "U+0085", "control"),
            ("a\rb", "U+000D", "control"),
            ("a\0b", "U+0000", "control"),
        ] {
            let e = Who::from_options(Some(bad.into()), "x".into())
                .unwrap_err()
                .to_string();
            assert!(e.contains(code) && e.contains(what), "{bad:?}: {e}");
            // The error itself shows the name escaped.
            assert!(!e.chars().any(|c| unshown(c).is_some()), "{e:?}");
        }
        for good in [
            "alice",
            "Jürgen Müller",
            "山田",
            "https://accounts.google.com#1234567890",
            "system:serviceaccount:ns:sa",
            "alice@example.com",
            "yes",
            "- x",
            "a: b",
            "#x",
            "'q'",
            "007",
        ] {
            let who = Who::from_options(Some(good.into()), "x".into()).unwrap();
            let yaml = crate::manifest::to_yaml(&objects("disktier", &who)).unwrap();
            let back: Vec<serde_json::Value> = serde_yaml_ng::Deserializer::from_str(&yaml)
                .map(|d| serde::Deserialize::deserialize(d).unwrap())
                .collect();
            assert_eq!(back[1]["subjects"][0]["name"], good, "{yaml}");
            assert_eq!(back[3]["subjects"][0]["name"], good, "{yaml}");
        }
    }

    /// QA: `fleet rbac --user alice | kubectl apply -f -` after the default replaced the
    /// service account's bindings (same names), locking it out.
    #[test]
    fn each_subject_gets_bindings_of_its_own() {
        let subjects = [
            Who::ServiceAccount("disktier-fleet".into()),
            Who::ServiceAccount("other".into()),
            Who::User("alice".into()),
            Who::User("Alice".into()),
            Who::User("a.b".into()),
            Who::User("a-b".into()),
            Who::User("system:serviceaccount:x:y".into()),
        ];
        let mut bindings = Vec::new();
        for who in &subjects {
            for (kind, name) in names(&objects("disktier", who)) {
                if kind.ends_with("Binding") {
                    assert!(name.len() <= 253, "{name}");
                    assert!(
                        name.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                        "{name}"
                    );
                    bindings.push(name);
                }
            }
        }
        let n = bindings.len();
        bindings.sort();
        bindings.dedup();
        assert_eq!(
            bindings.len(),
            n,
            "two subjects share a binding: {bindings:?}"
        );
        // The roles are shared: applying a second subject's objects leaves them as they are.
        let (a, b) = (
            names(&objects("disktier", &subjects[0])),
            names(&objects("disktier", &subjects[2])),
        );
        assert!(a.contains(&("Role".into(), "disktier-fleet".into())));
        assert!(b.contains(&("Role".into(), "disktier-fleet".into())));
        // The same service account in two namespaces: two ClusterRoleBindings.
        let other_ns = names(&objects("perf", &subjects[0]));
        assert!(!other_ns
            .iter()
            .any(|x| x.0 == "ClusterRoleBinding" && a.contains(x)));
        assert!(subject_suffix("disktier", &subjects[2]).starts_with("user-alice-"));
    }
}
