//! `disktier fleet run` in a namespace that is being deleted, on the real test cluster
//! (`DISKTIER_TEST_KUBECONFIG`). QA: a namespace held Terminating by a finalizer made every
//! node's Job fail alike, said as a permission: "cannot create Job ...: ... forbidden: unable
//! to create new content in namespace N because it is being terminated (403 Forbidden) (see
//! `disktier fleet rbac` for the permissions fleet needs)", once per node; --create-namespace
//! the same.

use assert_cmd::cargo::CommandCargoExt;
use disktier_testkit::kube::{self, Cluster, FakeNodeSpec};
use std::process::Command;

#[test]
fn a_namespace_being_deleted_is_named_before_anything_is_made() {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-term");
    let node = c.add_fake_node(&FakeNodeSpec::new(&kube::unique_name("fleet-fake")));
    // A ConfigMap with a finalizer of nobody's holds the namespace Terminating (until the
    // guard's drop lets it go, also when an assertion fails).
    c.kubectl_ok(&["-n", &ns.name, "create", "configmap", "hold"]);
    let hold = r#"{"metadata":{"finalizers":["disktier.test/hold"]}}"#;
    c.kubectl_ok(&["-n", &ns.name, "patch", "configmap", "hold", "-p", hold]);
    let _release = Release(&c, &ns.name);
    c.kubectl_ok(&["delete", "namespace", &ns.name, "--wait=false"]);
    for create in [false, true] {
        let store = tempfile::tempdir().unwrap();
        let mut cmd = Command::cargo_bin("disktier").unwrap();
        cmd.env("KUBECONFIG", c.kubeconfig())
            .env("DISKTIER_DB", store.path().join("r.db"))
            .args(["fleet", "run", "-n", &ns.name, "--nodes", &node.name]);
        if create {
            cmd.arg("--create-namespace");
        }
        let out = cmd
            .args(["--timeout", "30s", "--", "check", "etcd", "/var/lib/etcd"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "error: namespace {} is being deleted (Terminating)",
                ns.name
            )),
            "{err}"
        );
        assert!(
            !err.contains("fleet rbac") && !err.contains("pending"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// Removes the finalizer that holds the namespace, on drop.
struct Release<'a>(&'a Cluster, &'a str);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        let none = r#"{"metadata":{"finalizers":null}}"#;
        let _ = self.0.kubectl(&[
            "-n",
            self.1,
            "patch",
            "configmap",
            "hold",
            "--type=merge",
            "-p",
            none,
        ]);
    }
}
