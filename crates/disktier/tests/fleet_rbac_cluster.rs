//! `disktier fleet run` with exactly the permissions `disktier fleet rbac` prints, on the real
//! test cluster (scripts/kube-up.sh; `DISKTIER_TEST_KUBECONFIG`): a ServiceAccount bound as
//! docs/fleet.md says, a token for it (`kubectl create token`) and a kubeconfig with that
//! token. Then each permission is taken away in turn: a run must fail before it makes anything,
//! naming what is missing and the fix (QA: without `watch` on pods every node waited out
//! `--timeout` as "the pod never started ... is the node's kubelet running?", without `delete`
//! on Jobs or Pods the run's objects stayed behind).

use assert_cmd::cargo::CommandCargoExt;
use disktier_testkit::kube::{self, Cluster, Namespace};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A namespace with the ServiceAccount of `fleet rbac` and a kubeconfig that is it.
struct Minimal {
    admin: Cluster,
    ns: Namespace,
    sa: Cluster,
    _dir: tempfile::TempDir,
    /// The ClusterRoleBinding (cluster-scoped: the namespace's deletion leaves it).
    binding: String,
}

/// The Role's rules as `fleet rbac` prints them, with `verb` taken from `resource` (`None`:
/// all of them).
fn rules(without: Option<(&str, &str)>) -> String {
    let all: [(&str, &str, &[&str]); 4] = [
        ("batch", "jobs", &["create", "list", "watch", "delete"]),
        ("", "pods", &["list", "watch", "delete"]),
        ("", "pods/log", &["get"]),
        ("", "events", &["list", "watch"]),
    ];
    // A rule left without verbs goes (the server refuses an empty list).
    let rules: Vec<serde_json::Value> = all
        .iter()
        .filter_map(|(g, r, verbs)| {
            let verbs: Vec<&str> = verbs
                .iter()
                .copied()
                .filter(|v| without != Some((*r, *v)))
                .collect();
            (!verbs.is_empty())
                .then(|| serde_json::json!({"apiGroups": [g], "resources": [r], "verbs": verbs}))
        })
        .collect();
    serde_json::Value::from(rules).to_string()
}

impl Minimal {
    fn new() -> Option<Minimal> {
        let admin = Cluster::from_env()?;
        let ns = admin.namespace("fleet-rbac");
        let rbac = Command::cargo_bin("disktier")
            .unwrap()
            .args(["fleet", "rbac", "-n", &ns.name])
            .output()
            .unwrap();
        assert!(rbac.status.success());
        let yaml = String::from_utf8(rbac.stdout).unwrap();
        let out = admin.kubectl_stdin(&["apply", "-f", "-"], Some(&yaml));
        assert!(out.success, "{}", out.stderr);
        let binding = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("clusterrolebinding.rbac.authorization.k8s.io/"))
            .and_then(|l| l.split_whitespace().next())
            .expect("a ClusterRoleBinding")
            .to_string();
        // The token (TokenRequest, kubectl 1.24+ against the 1.20 server) in a kubeconfig of
        // the test cluster's server and CA.
        let token = admin
            .kubectl_ok(&[
                "-n",
                &ns.name,
                "create",
                "token",
                "disktier-fleet",
                "--duration=1h",
            ])
            .trim()
            .to_string();
        let server_cluster = admin
            .kubectl_ok(&[
                "config",
                "view",
                "--minify",
                "-o",
                "jsonpath={.clusters[0].name}",
            ])
            .trim()
            .to_string();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sa.kubeconfig");
        std::fs::copy(admin.kubeconfig(), &path).unwrap();
        let sa = Cluster::with_kubeconfig(&path);
        sa.kubectl_ok(&[
            "config",
            "set-credentials",
            "fleet-sa",
            &format!("--token={token}"),
        ]);
        sa.kubectl_ok(&[
            "config",
            "set-context",
            "fleet-sa",
            &format!("--cluster={server_cluster}"),
            "--user=fleet-sa",
            &format!("--namespace={}", ns.name),
        ]);
        sa.kubectl_ok(&["config", "use-context", "fleet-sa"]);
        let m = Minimal {
            admin,
            ns,
            sa,
            _dir: dir,
            binding,
        };
        m.wait_can("create", "jobs.batch", true);
        Some(m)
    }

    /// Waits until the server's RBAC has the Role's latest rules (an update reaches its
    /// authorizer's cache within a moment).
    fn wait_can(&self, verb: &str, resource: &str, yes: bool) {
        kube::wait_until(
            Duration::from_secs(30),
            &format!("can-i {verb} {resource} == {yes}"),
            || {
                let out = self
                    .sa
                    .kubectl(&["auth", "can-i", verb, resource, "-n", &self.ns.name]);
                out.stdout.trim() == if yes { "yes" } else { "no" }
            },
        );
    }

    /// The Role with `verb` taken from `resource` (`None`: as `fleet rbac` prints it).
    fn role_without(&self, without: Option<(&str, &str)>) {
        let patch = format!(
            r#"[{{"op":"replace","path":"/rules","value":{}}}]"#,
            rules(without)
        );
        self.admin.kubectl_ok(&[
            "-n",
            &self.ns.name,
            "patch",
            "role",
            "disktier-fleet",
            "--type=json",
            "-p",
            &patch,
        ]);
        let (verb, resource) = without.unwrap_or(("create", "jobs"));
        let resource = if resource == "jobs" {
            "jobs.batch"
        } else {
            resource
        };
        self.wait_can(verb, resource, without.is_none());
    }

    /// `fleet run` as the ServiceAccount on the real node, of an image no node has (its pod
    /// fails at once with ErrImagePull: a run with every permission ends in seconds).
    fn run(&self) -> (Output, f64) {
        let t0 = Instant::now();
        let out = Command::cargo_bin("disktier")
            .unwrap()
            .env("KUBECONFIG", self.sa.kubeconfig())
            .env("DISKTIER_DB", self._dir.path().join("r.db"))
            .args(["fleet", "run", "-n", &self.ns.name, "--nodes"])
            .arg(self.admin.node())
            .args([
                "--image",
                "localhost/disktier-missing:0",
                "--timeout",
                "60s",
            ])
            .args(["--", "check", "etcd", "/var/lib/etcd"])
            .output()
            .unwrap();
        (out, t0.elapsed().as_secs_f64())
    }

    /// Every Job and Pod in the namespace.
    fn objects(&self) -> String {
        self.admin
            .kubectl_ok(&["-n", &self.ns.name, "get", "jobs,pods", "-o", "name"])
    }
}

impl Drop for Minimal {
    fn drop(&mut self) {
        let _ = self.admin.kubectl(&[
            "delete",
            "clusterrolebinding",
            &self.binding,
            "--ignore-not-found",
        ]);
    }
}

#[test]
fn exactly_the_permissions_of_fleet_rbac_run_a_node_and_each_one_missing_is_named_first() {
    let Some(m) = Minimal::new() else {
        return;
    };
    // With exactly them, the run goes: its pod is watched (ErrImagePull in seconds) and
    // everything is deleted.
    let (out, secs) = m.run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ErrImagePull"), "{err}");
    assert!(
        !err.contains("forbidden") && !err.contains("may not"),
        "{err}"
    );
    assert!(secs < 30.0, "{secs} s: {err}");
    assert_eq!(m.objects(), "");

    for (resource, verb) in [
        ("jobs", "create"),
        ("jobs", "list"),
        ("jobs", "watch"),
        ("jobs", "delete"),
        ("pods", "list"),
        ("pods", "watch"),
        ("pods", "delete"),
        ("pods/log", "get"),
    ] {
        m.role_without(Some((resource, verb)));
        let (out, secs) = m.run();
        let err = String::from_utf8_lossy(&out.stderr);
        let named = if resource == "jobs" {
            format!("{verb} jobs.batch")
        } else {
            format!("{verb} {resource}")
        };
        assert_eq!(out.status.code(), Some(2), "without {named}: {err}");
        assert!(
            err.contains(&format!("does not let this client {named} in namespace")),
            "without {named}: {err}"
        );
        assert!(err.contains("nothing was made"), "{err}");
        assert!(
            err.contains(&format!("disktier fleet rbac -n {}", m.ns.name)),
            "{err}"
        );
        assert!(secs < 10.0, "without {named}: {secs} s");
        assert_eq!(m.objects(), "", "without {named}: {err}");
    }

    // Events only make some failures quicker: the run goes, and says what it lacks.
    m.role_without(Some(("events", "watch")));
    let (out, _) = m.run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ErrImagePull"), "{err}");
    assert!(
        err.contains("may not watch events in namespace"),
        "without watch on events: {err}"
    );
    assert_eq!(m.objects(), "");

    // The nodes (the ClusterRole's binding gone): named as cluster-wide.
    m.role_without(None);
    m.admin
        .kubectl_ok(&["delete", "clusterrolebinding", &m.binding]);
    kube::wait_until(Duration::from_secs(30), "nodes refused", || {
        m.sa.kubectl(&["auth", "can-i", "list", "nodes"])
            .stdout
            .trim()
            == "no"
    });
    let (out, _) = m.run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("get nodes (cluster-wide), list nodes (cluster-wide)"),
        "{err}"
    );
    assert_eq!(m.objects(), "");
}
