//! `disktier fleet` without a cluster: `--dry-run --nodes` contacts nothing and prints
//! manifests that validate strictly against the official schemas of Kubernetes 1.25 and 1.33
//! (the `kubernetes-validate` package, offline), `fleet rbac` likewise, golden files of both,
//! and the one-line errors (exit 2) for bad input. The cluster tests are in fleet_cluster.rs.

use assert_cmd::Command;
use disktier_testkit::cli::each_str;
use disktier_testkit::cli::kubernetes_validate;
use disktier_testkit::cli::Succeeds;
use std::path::Path;

fn disktier() -> Command {
    let mut c = disktier_testkit::cli::disktier();
    c.env("DISKTIER_DB", "/nonexistent/fleet-never-saves.db");
    c
}

/// A kubeconfig whose server is a closed loopback port: any attempt to contact it fails.
fn unreachable_kubeconfig(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("kubeconfig");
    std::fs::write(
        &p,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n",
    )
    .unwrap();
    p
}

fn dry_run_yaml(extra: &[&str], command: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let kc = unreachable_kubeconfig(dir.path());
    disktier()
        .env("KUBECONFIG", &kc)
        .args([
            "fleet",
            "run",
            "--run-id",
            "20261124-120000-abcdef",
            "--dry-run",
        ])
        .args(extra)
        .arg("--")
        .args(command)
        .stdout_ok()
}

#[test]
fn dry_run_with_nodes_contacts_nothing_and_prints_one_job_per_node() {
    let y = dry_run_yaml(
        &["--nodes", "cp-1,worker-2"],
        &["check", "etcd", "/var/lib/etcd"],
    );
    assert_eq!(y.matches("\n---\n").count() + 1, 2, "{y}");
    assert_eq!(y.matches("kind: Job").count(), 2);
    assert!(y.contains("nodeName: cp-1") && y.contains("nodeName: worker-2"));
    insta::assert_snapshot!("fleet_dry_run_check_etcd", y);
}

#[test]
fn dry_run_manifests_validate_strictly_against_1_25_and_1_33() {
    let cases = [
        dry_run_yaml(&["--nodes", "cp-1"], &["check", "etcd", "/var/lib/etcd"]),
        dry_run_yaml(
            &[
                "--nodes",
                "ip-10-0-0-1.eu-north-1.compute.internal",
                "--create-namespace",
                "--tolerate-all",
                "--service-account",
                "disktier-fleet",
                "--image-pull-policy",
                "Never",
            ],
            &["bench", "/dev/nvme1n1", "--rw", "randread"],
        ),
        dry_run_yaml(
            &["--nodes", "a,b"],
            &["assess", "/var/lib/containers", "/var/lib/etcd"],
        ),
    ];
    let rbac = String::from_utf8(
        disktier()
            .args(["fleet", "rbac"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    for version in ["1.25.0", "1.33.0"] {
        for y in cases.iter().chain([&rbac]) {
            let Some((ok, text)) = kubernetes_validate(y, version) else {
                return;
            };
            assert!(ok, "kubernetes-validate {version}:\n{text}\n{y}");
        }
        // The validator does reject: a field Kubernetes does not have fails strict mode.
        let broken = cases[0].replace("backoffLimit: 0", "backoffLimit: 0\n  retryForever: true");
        let (ok, _) = kubernetes_validate(&broken, version).unwrap();
        assert!(!ok, "strict validation accepted an unknown field");
    }
}

#[test]
fn rbac_is_least_privilege_yaml() {
    let y = disktier()
        .args(["fleet", "rbac", "--namespace", "perf"])
        .stdout_ok();
    insta::assert_snapshot!("fleet_rbac", y);
    let v: serde_json::Value = disktier()
        .args(["fleet", "rbac", "--user", "alice", "--format", "json"])
        .json_ok();
    assert_eq!(
        each_str(&v["objects"], "kind"),
        ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--nodes", "a", "--", "check", "etcd", "relative"],
            "names no absolute path",
        ),
        (&["--nodes", "a", "--", "check", "etcd", "/"], "root"),
        (
            &["--nodes", "a", "--", "rm", "-rf", "/x"],
            "not one fleet runs",
        ),
        (
            &[
                "--nodes", "a", "--", "check", "etcd", "/x", "--format", "text",
            ],
            "--format",
        ),
        (
            &["--nodes", "A_B", "--", "check", "etcd", "/x"],
            "node name",
        ),
        (
            &[
                "--nodes",
                "a",
                "--namespace",
                "Bad NS",
                "--",
                "check",
                "etcd",
                "/x",
            ],
            "--namespace",
        ),
    ];
    for (args, want) in cases {
        let err = disktier()
            .env("KUBECONFIG", "/nonexistent")
            .args(["fleet", "run", "--dry-run"])
            .args(args)
            .stderr_of_exit(2);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error:")).count(),
            1,
            "{err}"
        );
    }
    // No selection at all is a usage error too.
    disktier()
        .args(["fleet", "run", "--", "check", "etcd", "/x"])
        .assert()
        .code(2);
}

#[test]
fn without_a_cluster_the_error_says_how_to_configure_one() {
    let err = disktier()
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .args([
            "fleet",
            "run",
            "--nodes",
            "a",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ])
        .stderr_of_exit(2);
    assert!(err.contains("set KUBECONFIG, pass --kubeconfig"), "{err}");
}
