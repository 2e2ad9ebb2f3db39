//! `disktier fleet run` in a namespace whose ResourceQuota refuses the Job's pod, on the real
//! test cluster (`DISKTIER_TEST_KUBECONFIG`). QA: with `kubectl create quota q
//! --hard=limits.cpu=2,limits.memory=4Gi` (every pod must then give a CPU limit, which fleet's
//! pod does not, on purpose) the API server refused the pod at once ("failed quota: q: must
//! specify limits.cpu", the Job controller's FailedCreate event), and the node waited out the
//! whole --timeout as "deadline exceeded: ... the pod was never created", the quota unnamed.

use assert_cmd::cargo::CommandCargoExt;
use disktier_testkit::kube::{self, Cluster, FakeNodeSpec};
use serde_json::Value;
use std::process::Command;
use std::time::Instant;

/// `fleet run --format json` of `check etcd /var/lib/etcd` on `node` in `ns` with `timeout`:
/// its exit code, JSON document and how long it took.
fn run(c: &Cluster, ns: &str, node: &str, timeout: &str) -> (Option<i32>, Value, f64) {
    let store = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let out = Command::cargo_bin("disktier")
        .unwrap()
        .env("KUBECONFIG", c.kubeconfig())
        .env("DISKTIER_DB", store.path().join("r.db"))
        .args([
            "fleet", "run", "--format", "json", "-n", ns, "--nodes", node,
        ])
        .args(["--timeout", timeout, "--", "check", "etcd", "/var/lib/etcd"])
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), json, t0.elapsed().as_secs_f64())
}

/// Waits until the quota `q` in `ns` is in force: its status lists what it allows and uses, as
/// the quota controller writes it. Just after `kubectl create quota` the API server may still
/// admit a pod the quota forbids (CI, session 26: with `--hard=pods=0` a pod was created and
/// the run waited out its 3 s as "Pending"), so the test waits for the quota first.
fn quota_in_force(c: &Cluster, ns: &str) {
    let t0 = Instant::now();
    loop {
        let used = c.kubectl_ok(&[
            "-n",
            ns,
            "get",
            "quota",
            "q",
            "-o",
            "jsonpath={.status.used}",
        ]);
        if !used.trim().is_empty() {
            return;
        }
        assert!(
            t0.elapsed().as_secs() < 60,
            "quota q in {ns} has no status after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn a_pod_the_namespace_quota_refuses_is_reported_at_once_naming_it() {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-quota");
    let node = c.add_fake_node(&FakeNodeSpec::new(&kube::unique_name("fleet-fake")));
    c.kubectl_ok(&[
        "-n",
        &ns.name,
        "create",
        "quota",
        "q",
        "--hard=limits.cpu=2,limits.memory=4Gi",
    ]);
    quota_in_force(&c, &ns.name);
    let (code, json, seconds) = run(&c, &ns.name, &node.name, "300s");
    assert_eq!(code, Some(2), "{json}");
    let reason = json["nodes"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("FailedCreate") && reason.contains("must specify limits.cpu"),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("kubectl -n {} describe quota", ns.name)),
        "{reason}"
    );
    // Seconds, not the 300 s deadline.
    assert!(seconds < 60.0, "took {seconds:.1} s");

    // A quota that is only full now may make room: the deadline waits, and names it.
    c.kubectl_ok(&["-n", &ns.name, "delete", "quota", "q"]);
    c.kubectl_ok(&["-n", &ns.name, "create", "quota", "q", "--hard=pods=0"]);
    quota_in_force(&c, &ns.name);
    // And the API server's admission refuses a pod now (a server-side dry run goes through it).
    let t0 = Instant::now();
    loop {
        let probe = c.kubectl(&[
            "-n",
            &ns.name,
            "run",
            "quota-probe",
            "--image=localhost/none:1",
            "--restart=Never",
            "--dry-run=server",
        ]);
        if !probe.success && probe.stderr.contains("exceeded quota") {
            break;
        }
        assert!(
            t0.elapsed().as_secs() < 60,
            "a pod is still admitted: {}",
            probe.stderr
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let (code, json, _) = run(&c, &ns.name, &node.name, "3s");
    assert_eq!(code, Some(2), "{json}");
    let reason = json["nodes"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("deadline exceeded") && reason.contains("quota was full"),
        "{reason}"
    );
    let left = c.kubectl_ok(&[
        "-n",
        &ns.name,
        "get",
        "jobs,pods",
        "-l",
        "app.kubernetes.io/managed-by=disktier",
        "-o",
        "name",
    ]);
    assert_eq!(left.trim(), "", "left behind");
}
