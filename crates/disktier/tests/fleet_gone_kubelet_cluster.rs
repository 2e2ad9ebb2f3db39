//! `disktier fleet run` on a node whose kubelet went away while the node command ran, on the
//! real test cluster (`DISKTIER_TEST_KUBECONFIG`). A Node object with no kubelet stands for
//! it: its pod's status is written as a running container (what the API shows of a node whose
//! kubelet stopped midway), so nothing ever confirms the pod's deletion. QA: a `--timeout 10s`
//! run waited 90 s in its cleanup, then left the pod Terminating (`left_behind`), exit 2.
//! Also a node that goes NotReady while its pod waits, and one that does while it waits its
//! turn (`--parallel 1`).

use assert_cmd::cargo::CommandCargoExt;
use disktier_testkit::kube::{self, Cluster, FakeNodeSpec};
use serde_json::Value;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// `fleet run --format json` of `check etcd /var/lib/etcd` on `node` in `ns` with `timeout`,
/// its store in `store`, started with stdout and stderr piped.
fn start(c: &Cluster, ns: &str, node: &str, timeout: &str, store: &std::path::Path) -> Child {
    Command::cargo_bin("disktier")
        .unwrap()
        .env("KUBECONFIG", c.kubeconfig())
        .env("DISKTIER_DB", store.join("r.db"))
        .args([
            "fleet", "run", "--format", "json", "-n", ns, "--nodes", node,
        ])
        .args(["--timeout", timeout, "--", "check", "etcd", "/var/lib/etcd"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Writes `node`'s Ready condition Unknown (NodeStatusUnknown: what the node controller writes
/// when the kubelet stops posting status; the test cluster's grace period is an hour), then
/// waits for the run `child` to end with exit 2: its JSON and its stderr.
fn node_unknown_then_exit_2(c: &Cluster, node: &str, child: Child) -> (Value, String) {
    let unknown = serde_json::json!([
        {"op": "replace", "path": "/status/conditions/0/status", "value": "Unknown"},
        {"op": "replace", "path": "/status/conditions/0/reason", "value": "NodeStatusUnknown"},
    ]);
    c.kubectl_ok(&[
        "patch",
        "node",
        node,
        "--subresource=status",
        "--type=json",
        "-p",
        &unknown.to_string(),
    ]);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(out.status.code(), Some(2), "{err}");
    (json, err)
}

#[test]
fn a_pod_whose_kubelet_is_gone_is_deleted_after_its_grace_period() {
    let Some(c) = Cluster::from_env() else {
        return;
    };
    let ns = c.namespace("fleet-gone");
    let node = c.add_fake_node(&FakeNodeSpec::new(&kube::unique_name("fleet-gone")));
    let store = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let child = start(&c, &ns.name, &node.name, "10s", store.path());
    // The pod as a node whose kubelet started it and then went away leaves it: running.
    let mut pod = String::new();
    kube::wait_until(Duration::from_secs(30), "the run's pod", || {
        pod = c
            .kubectl_ok(&["-n", &ns.name, "get", "pods", "-o", "name"])
            .trim()
            .to_string();
        !pod.is_empty()
    });
    let status = serde_json::json!({"status": {"phase": "Running", "containerStatuses": [{
        "name": "disktier", "image": "x", "imageID": "", "ready": true, "restartCount": 0,
        "started": true, "state": {"running": {"startedAt": "2026-11-28T17:00:00Z"}}}]}});
    c.kubectl_ok(&[
        "-n",
        &ns.name,
        "patch",
        &pod,
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
    let out = child.wait_with_output().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(out.status.code(), Some(2), "{err}");
    let n = &json["nodes"][0];
    assert!(
        n["reason"]
            .as_str()
            .unwrap()
            .starts_with("deadline exceeded: --timeout 10s passed and the container was running"),
        "{n}"
    );
    // Deleted with its 30 s grace period (the Job controller's at the deadline, or the
    // cleanup's), then with none: the run ends well before the 90 s cleanup wait.
    assert_eq!(json["left_behind"], serde_json::json!([]), "{err}");
    assert!(secs < 80.0, "{secs} s: {err}");
    assert_eq!(
        c.kubectl_ok(&["-n", &ns.name, "get", "jobs,pods", "-o", "name"]),
        ""
    );
}

/// A node that goes NotReady while its pod waits (the node controller's word when the kubelet
/// stops posting status) was reported only as a deadline, which reads as a slow node; the
/// deadline's reason now says the node is NotReady (session 22's left item).
#[test]
fn a_node_that_goes_not_ready_mid_run_is_named_at_the_deadline() {
    let Some(c) = Cluster::from_env() else {
        return;
    };
    let ns = c.namespace("fleet-notready");
    let node = c.add_fake_node(&FakeNodeSpec::new(&kube::unique_name("fleet-nr")));
    let store = tempfile::tempdir().unwrap();
    let child = start(&c, &ns.name, &node.name, "8s", store.path());
    kube::wait_until(Duration::from_secs(30), "the run's pod", || {
        !c.kubectl_ok(&["-n", &ns.name, "get", "pods", "-o", "name"])
            .trim()
            .is_empty()
    });
    let (json, err) = node_unknown_then_exit_2(&c, &node.name, child);
    let reason = json["nodes"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("deadline exceeded: --timeout 8s passed")
            && reason.contains("the node is NotReady (NodeStatusUnknown) now"),
        "{reason}"
    );
    assert_eq!(json["left_behind"], serde_json::json!([]), "{err}");
}

/// QA: with `--parallel 1` every node waits for the ones before it, each up to `--timeout`,
/// and a node that went NotReady meanwhile (its kubelet stopped: a real node controller says
/// so 40 s later) was still given its Job and held the run for a whole `--timeout` as a pod
/// that never started. A node is judged again when its turn comes, and skipped with the
/// reason. (fleet_fake_api_cli has the same on a fake API server; this is the real one.)
#[test]
fn a_node_that_goes_not_ready_while_it_waits_its_turn_is_skipped() {
    let Some(c) = Cluster::from_env() else {
        return;
    };
    let ns = c.namespace("fleet-rejudge");
    let a = c.add_fake_node(&FakeNodeSpec::new(&kube::unique_name("fleet-rj")));
    let b = c.add_fake_node(&FakeNodeSpec::new(&kube::unique_name("fleet-rj")));
    let store = tempfile::tempdir().unwrap();
    let nodes = format!("{},{}", a.name, b.name);
    let child = start(&c, &ns.name, &nodes, "8s", store.path());
    // The first node's pod: the nodes have been judged, and the other one waits its turn.
    let mut first = String::new();
    kube::wait_until(Duration::from_secs(30), "the run's first pod", || {
        first = c.kubectl_ok(&[
            "-n",
            &ns.name,
            "get",
            "pods",
            "-o",
            "jsonpath={.items[*].spec.nodeName}",
        ]);
        !first.trim().is_empty()
    });
    let waiting = if first.trim() == a.name { &b } else { &a };
    let (json, err) = node_unknown_then_exit_2(&c, &waiting.name, child);
    let nodes = json["nodes"].as_array().unwrap();
    let w = nodes.iter().find(|n| n["node"] == waiting.name.as_str());
    let w = w.unwrap_or_else(|| panic!("{json}"));
    assert_eq!(w["status"], "skipped", "{w}");
    assert_eq!(
        w["reason"], "NotReady (NodeStatusUnknown) (found when its turn came)",
        "{w}"
    );
    assert_eq!(json["left_behind"], serde_json::json!([]), "{err}");
}
