//! `disktier fleet` against the real single-node test cluster (scripts/kube-up.sh; Kubernetes
//! 1.20). scripts/test.sh exports its kubeconfig as DISKTIER_TEST_KUBECONFIG; without it every
//! test here prints why it is skipped (and fails under CI, which must run them).
//!
//! The real node runs the disktier image; extra Node objects with no kubelet behind them stand
//! for the rest of a fleet (their pods never start, which exercises the deadline path). Every
//! test works in a namespace and on nodes of its own, so the tests run in parallel.
//!
//! The small cluster helpers below are this file's own; crates/testkit's `kube` module (another
//! branch) has the fuller set.

use assert_cmd::cargo::CommandCargoExt;
use disktier_testkit::cli::stdout_ok;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const IMAGE: &str = concat!("localhost/disktier:", env!("CARGO_PKG_VERSION"));
const MANAGED: &str = "app.kubernetes.io/managed-by=disktier";

fn strict() -> bool {
    ["CI", "DISKTIER_TEST_REQUIRE_ROOT_FEATURES"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

fn skip(why: &str) {
    assert!(!strict(), "CI must have {why}");
    eprintln!("skipped: needs {why}");
}

fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

#[derive(Clone)]
struct Cluster {
    kubeconfig: PathBuf,
}

impl Cluster {
    fn from_env() -> Option<Cluster> {
        match std::env::var_os("DISKTIER_TEST_KUBECONFIG").map(PathBuf::from) {
            Some(p) if p.is_file() => Some(Cluster { kubeconfig: p }),
            Some(p) => {
                skip(&format!(
                    "a test cluster: DISKTIER_TEST_KUBECONFIG={} is not a file",
                    p.display()
                ));
                None
            }
            None => {
                skip("a test cluster: DISKTIER_TEST_KUBECONFIG is unset (scripts/test.sh starts one with scripts/kube-up.sh)");
                None
            }
        }
    }

    fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--request-timeout=30s")
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl");
        if let Some(s) = stdin {
            child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn kubectl_ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, out, err) = self.kubectl(args, stdin);
        assert!(ok, "kubectl {}: {err}{out}", args.join(" "));
        out
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        serde_json::from_str(&self.kubectl_ok(&a, None)).unwrap()
    }

    /// The node kube-up started (the Ready one that no test registered).
    fn real_node(&self) -> String {
        let nodes = self.json(&["get", "nodes", "-l", "!disktier.test/fake-node"]);
        nodes["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| {
                n["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                })
            })
            .and_then(|n| n["metadata"]["name"].as_str())
            .expect("the test cluster has a Ready node")
            .to_string()
    }

    /// Whether the real node holds the disktier image (kube-up imports it).
    fn has_disktier_image(&self) -> bool {
        let node = self.json(&["get", "node", &self.real_node()]);
        node["status"]["images"].as_array().is_some_and(|imgs| {
            imgs.iter().any(|i| {
                i["names"]
                    .as_array()
                    .is_some_and(|n| n.iter().any(|n| n.as_str() == Some(IMAGE)))
            })
        })
    }

    fn namespace(&self, prefix: &str) -> Ns {
        let name = unique(prefix);
        self.kubectl_ok(&["create", "namespace", &name], None);
        Ns {
            cluster: self.clone(),
            name,
        }
    }

    /// Jobs and pods fleet made in a namespace.
    fn ours(&self, ns: &str) -> Vec<String> {
        let out = self.kubectl_ok(
            &["get", "jobs,pods", "-n", ns, "-l", MANAGED, "-o", "name"],
            None,
        );
        out.lines().map(str::to_string).collect()
    }

    /// A Node object with no kubelet behind it.
    fn fake_node(&self, ready: bool, cordoned: bool, labels: &[(&str, &str)]) -> FakeNode {
        let name = unique("fleet-fake");
        let mut l = serde_json::Map::new();
        l.insert("disktier.test/fake-node".into(), name.clone().into());
        for (k, v) in labels {
            l.insert(k.to_string(), v.to_string().into());
        }
        let now = time_now();
        let (status, reason) = if ready {
            ("True", "KubeletReady")
        } else {
            ("False", "KubeletNotReady")
        };
        let node = serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": l},
            "spec": {"unschedulable": cordoned},
            "status": {
                "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": status, "reason": reason,
                    "message": "registered by a disktier test, no kubelet",
                    "lastHeartbeatTime": now, "lastTransitionTime": now}]
            }
        });
        self.kubectl_ok(&["create", "-f", "-"], Some(&node.to_string()));
        FakeNode {
            cluster: self.clone(),
            name,
        }
    }
}

fn time_now() -> String {
    let out = Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

struct Ns {
    cluster: Cluster,
    name: String,
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = self
            .cluster
            .kubectl(&["delete", "namespace", &self.name, "--wait=false"], None);
    }
}

struct FakeNode {
    cluster: Cluster,
    name: String,
}

impl Drop for FakeNode {
    fn drop(&mut self) {
        let sel = format!("spec.nodeName={}", self.name);
        let _ = self.cluster.kubectl(
            &[
                "delete",
                "pods",
                "-A",
                "--field-selector",
                &sel,
                "--grace-period=0",
                "--force",
            ],
            None,
        );
        let _ = self
            .cluster
            .kubectl(&["delete", "node", &self.name, "--wait=false"], None);
    }
}

/// `disktier` with the test cluster and a store of the test's own.
fn disktier(c: &Cluster, db: &Path) -> Command {
    let mut cmd = Command::cargo_bin("disktier").unwrap();
    cmd.env("KUBECONFIG", &c.kubeconfig).env("DISKTIER_DB", db);
    cmd
}

struct Ran {
    code: i32,
    json: Value,
    stderr: String,
    seconds: f64,
}

fn fleet_run(c: &Cluster, db: &Path, args: &[&str]) -> Ran {
    let t0 = Instant::now();
    let out = disktier(c, db)
        .args(["fleet", "run", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "fleet run {args:?}: no JSON on stdout ({e}): {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    Ran {
        code: out.status.code().unwrap_or(-1),
        json,
        stderr,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

fn node_dir() -> tempfile::TempDir {
    // The node is this machine: a directory here is a directory on the node.
    tempfile::Builder::new()
        .prefix("disktier-fleet-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

fn need_image(c: &Cluster) -> bool {
    if c.has_disktier_image() {
        return true;
    }
    skip(&format!(
        "the image {IMAGE} on the test node (kube-up imports target/image/disktier-oci.tar)"
    ));
    false
}

#[test]
fn a_run_on_the_node_is_stored_and_leaves_nothing_behind() {
    let Some(c) = Cluster::from_env() else { return };
    if !need_image(&c) {
        return;
    }
    let ns = c.namespace("fleet-ok");
    let dir = node_dir();
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let node = c.real_node();
    let path = dir.path().to_str().unwrap();
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &node,
            "-n",
            &ns.name,
            "--timeout",
            "180s",
            "--",
            "check",
            "etcd",
            path,
            "--quick",
        ],
    );
    let n = &r.json["nodes"][0];
    assert!(
        n["status"] == "pass" || n["status"] == "fail",
        "the node was measured: {n}\n{}",
        r.stderr
    );
    assert_eq!(r.code, if n["status"] == "pass" { 0 } else { 1 });
    assert_eq!(n["node"], node.as_str());
    assert_eq!(n["result"]["schema_version"], 1);
    assert_eq!(n["result"]["target"]["path"], path);
    assert!(
        n["result"]["results"]["sync"]["lat_ns"]["percentiles"]["99"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Stored, grouped by the fleet run, tagged with the node.
    let id = r.json["fleet_run_id"].as_str().unwrap();
    let out = disktier(&c, &db)
        .args(["history", "--group", id, "--format", "json"])
        .output()
        .unwrap();
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{h}");
    assert_eq!(runs[0]["hostname"], node.as_str());
    assert_eq!(runs[0]["kind"], "check");
    let out = disktier(&c, &db)
        .args(["show", runs[0]["id"].as_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains(id),
        "the stored document names its fleet run: {shown}"
    );
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
    // The node command removed its test file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_failed_verdict_exits_1_and_a_failing_command_exits_2_with_its_error() {
    let Some(c) = Cluster::from_env() else { return };
    if !need_image(&c) {
        return;
    }
    let ns = c.namespace("fleet-fail");
    let dir = node_dir();
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let node = c.real_node();
    let path = dir.path().to_str().unwrap();
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &node,
            "-n",
            &ns.name,
            "--timeout",
            "180s",
            "--",
            "check",
            "etcd",
            path,
            "--quick",
            "--threshold",
            "1ns",
        ],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.json, r.stderr);
    assert_eq!(r.json["nodes"][0]["status"], "fail");
    assert_eq!(r.json["nodes"][0]["verdict"], "fail");
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
    // The node command refuses its options: exit 2, its own error as the reason.
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &node,
            "-n",
            &ns.name,
            "--timeout",
            "180s",
            "--",
            "check",
            "etcd",
            path,
            "--threshold",
            "0ms",
        ],
    );
    assert_eq!(r.code, 2);
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("--threshold 0"), "{reason}");
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

#[test]
fn a_missing_image_is_reported_within_seconds() {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-img");
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let dir = node_dir();
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &c.real_node(),
            "-n",
            &ns.name,
            "--image",
            "localhost/disktier-missing:0",
            "--timeout",
            "300s",
            "--",
            "check",
            "etcd",
            dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 2);
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("ErrImagePull") || reason.starts_with("ImagePullBackOff"),
        "{reason}"
    );
    assert!(reason.contains("localhost/disktier-missing:0"), "{reason}");
    // Seconds, not the 300 s deadline (cleanup included).
    assert!(r.seconds < 60.0, "took {:.1} s", r.seconds);
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

#[test]
fn a_deadline_is_reported_and_cleaned_up() {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-deadline");
    let fake = c.fake_node(true, false, &[]);
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &fake.name,
            "-n",
            &ns.name,
            "--timeout",
            "4s",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("deadline exceeded"), "{reason}");
    assert!(reason.contains("never started"), "{reason}");
    assert!(r.seconds < 60.0, "took {:.1} s", r.seconds);
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

#[test]
fn selection_skips_not_ready_and_cordoned_and_runs_in_parallel() {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-sel");
    let group = unique("grp");
    let sel = [("disktier.test/group", group.as_str())];
    let typed = [
        ("disktier.test/group", group.as_str()),
        ("node.kubernetes.io/instance-type", "m6id.xlarge"),
        ("topology.kubernetes.io/zone", "eu-north-1a"),
    ];
    let ready: Vec<FakeNode> = (0..3).map(|_| c.fake_node(true, false, &typed)).collect();
    let not_ready = c.fake_node(false, false, &sel);
    let cordoned = c.fake_node(true, true, &sel);
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let selector = format!("disktier.test/group={group}");
    let r = fleet_run(
        &c,
        &db,
        &[
            "--selector",
            &selector,
            "-n",
            &ns.name,
            "--parallel",
            "3",
            "--timeout",
            "4s",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ],
    );
    assert_eq!(r.code, 2);
    let nodes = r.json["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 5, "{}", r.json);
    let by = |name: &str| nodes.iter().find(|n| n["node"] == name).unwrap();
    assert_eq!(by(&not_ready.name)["status"], "skipped");
    assert!(by(&not_ready.name)["reason"]
        .as_str()
        .unwrap()
        .starts_with("NotReady"));
    assert_eq!(by(&cordoned.name)["status"], "skipped");
    assert!(by(&cordoned.name)["reason"]
        .as_str()
        .unwrap()
        .starts_with("cordoned"));
    for f in &ready {
        let n = by(&f.name);
        assert_eq!(n["status"], "error");
        assert_eq!(n["instance_type"], "m6id.xlarge");
        assert_eq!(n["zone"], "eu-north-1a");
    }
    // All three Jobs were created before any finished: --parallel 3 ran them together.
    let events: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains(": pending") || l.contains(": done"))
        .collect();
    assert_eq!(events.len(), 6, "{}", r.stderr);
    assert!(
        events[..3].iter().all(|l| l.contains(": pending")),
        "{events:?}"
    );
    assert_eq!(r.json["summary"]["skipped"], 2);
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());

    // --parallel 1: each Job ends before the next starts.
    let r = fleet_run(
        &c,
        &db,
        &[
            "--selector",
            &selector,
            "-n",
            &ns.name,
            "--timeout",
            "3s",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ],
    );
    let events: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains(": pending") || l.contains(": done"))
        .collect();
    for pair in events.chunks(2) {
        assert!(
            pair[0].contains(": pending") && pair[1].contains(": done"),
            "{events:?}"
        );
    }
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

/// Starts a run on a node whose pod never starts, waits until its Job exists, sends `signal`,
/// and checks that nothing is left.
fn interrupted_midway(signal: libc::c_int, name: &str) {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-sig");
    let fake = c.fake_node(true, false, &[]);
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let mut child = disktier(&c, &db)
        .args([
            "fleet",
            "run",
            "--nodes",
            &fake.name,
            "-n",
            &ns.name,
            "--timeout",
            "300s",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "ended early: {seen}");
        seen.push_str(&line);
        if line.contains(": pending") {
            break;
        }
    }
    assert_eq!(
        c.ours(&ns.name)
            .iter()
            .filter(|o| o.starts_with("job"))
            .count(),
        1
    );
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{seen}{rest}");
    assert!(rest.contains(&format!("interrupted by {name}")), "{rest}");
    assert_eq!(c.ours(&ns.name), Vec::<String>::new(), "{rest}");
}

#[test]
fn ctrl_c_while_the_node_command_runs_stops_it_and_leaves_nothing() {
    let Some(c) = Cluster::from_env() else { return };
    if !need_image(&c) {
        return;
    }
    let ns = c.namespace("fleet-sigrun");
    let dir = node_dir();
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let mut child = disktier(&c, &db)
        .args([
            "fleet",
            "run",
            "--nodes",
            &c.real_node(),
            "-n",
            &ns.name,
            "--timeout",
            "300s",
            "--",
            "bench",
            dir.path().to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "64m",
            "--fdatasync",
            "1",
            "--runtime",
            "120s",
            "--time-based",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "ended early: {seen}");
        seen.push_str(&line);
        if line.contains(": running") {
            break;
        }
    }
    // The engine has created its file on the node.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(dir.path()).unwrap().count() == 0 {
        assert!(Instant::now() < deadline, "the node command made no file");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(2), "{seen}{rest}");
    assert_eq!(c.ours(&ns.name), Vec::<String>::new(), "{rest}");
    // The pod was given its grace period: the node command stopped and removed its file.
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the node command's file is left on the node"
    );
}

#[test]
fn ctrl_c_midway_leaves_nothing_behind() {
    interrupted_midway(libc::SIGINT, "Ctrl-C");
}

#[test]
fn sigterm_midway_leaves_nothing_behind() {
    interrupted_midway(libc::SIGTERM, "SIGTERM");
}

#[test]
fn clean_removes_planted_leftovers_and_a_new_run_reports_them() {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-clean");
    let fake = c.fake_node(true, false, &[]);
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    // A killed run's Job (and its never-starting pod), planted from fleet's own manifest.
    let yaml = disktier(&c, &db)
        .args([
            "fleet",
            "run",
            "--dry-run",
            "--nodes",
            &fake.name,
            "-n",
            &ns.name,
            "--run-id",
            "20261124-000000-dead00",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ])
        .output()
        .unwrap()
        .stdout;
    c.kubectl_ok(
        &["create", "-f", "-"],
        Some(&String::from_utf8(yaml).unwrap()),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !c.ours(&ns.name).iter().any(|o| o.starts_with("pod/")) {
        assert!(Instant::now() < deadline, "the Job controller made no pod");
        std::thread::sleep(Duration::from_millis(200));
    }
    // A new run says so.
    let other = c.fake_node(true, false, &[]);
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &other.name,
            "-n",
            &ns.name,
            "--timeout",
            "2s",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ],
    );
    assert!(
        r.stderr.contains("20261124-000000-dead00") && r.stderr.contains("fleet clean"),
        "{}",
        r.stderr
    );
    // Its own objects are gone, the planted ones are still there.
    assert!(!c.ours(&ns.name).is_empty());
    let out = disktier(&c, &db)
        .args(["fleet", "clean", "-n", &ns.name])
        .output()
        .unwrap();
    let text = stdout_ok(&out);
    assert!(text.contains("deleted job/disktier-dead00-"), "{text}");
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

#[test]
fn dry_run_output_is_accepted_by_the_server() {
    let Some(c) = Cluster::from_env() else { return };
    let ns = c.namespace("fleet-dry");
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    for command in [
        vec!["check", "etcd", "/var/lib/etcd"],
        vec!["bench", "/dev/nvme1n1", "--rw", "randread"],
    ] {
        let out = disktier(&c, &db)
            .args([
                "fleet",
                "run",
                "--dry-run",
                "--nodes",
                "a,b.example",
                "-n",
                &ns.name,
                "--tolerate-all",
                "--",
            ])
            .args(&command)
            .output()
            .unwrap();
        assert!(out.status.success());
        let yaml = String::from_utf8(out.stdout).unwrap();
        let applied = c.kubectl_ok(&["apply", "--dry-run=server", "-f", "-"], Some(&yaml));
        assert_eq!(
            applied.matches("created (server dry run)").count(),
            2,
            "{applied}"
        );
    }
    let rbac = disktier(&c, &db)
        .args(["fleet", "rbac", "-n", &ns.name])
        .output()
        .unwrap()
        .stdout;
    c.kubectl_ok(
        &["apply", "--dry-run=server", "-f", "-"],
        Some(&String::from_utf8(rbac).unwrap()),
    );
    // The selection form reads nodes (and only reads): the real node's Job is printed.
    let out = disktier(&c, &db)
        .args([
            "fleet",
            "run",
            "--dry-run",
            "--all-nodes",
            "-n",
            &ns.name,
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ])
        .output()
        .unwrap();
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert!(
        yaml.contains(&format!("nodeName: {}", c.real_node())),
        "{yaml}"
    );
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

#[test]
fn a_missing_namespace_says_how_to_create_it() {
    let Some(c) = Cluster::from_env() else { return };
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let name = unique("fleet-nons");
    let out = disktier(&c, &db)
        .args([
            "fleet",
            "run",
            "--nodes",
            "x",
            "-n",
            &name,
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("kubectl create namespace {name}"))
            && err.contains("--create-namespace"),
        "{err}"
    );
}

#[test]
fn control_plane_selects_by_either_role_label() {
    let Some(c) = Cluster::from_env() else { return };
    let cp = c.fake_node(
        true,
        false,
        &[("node-role.kubernetes.io/control-plane", "")],
    );
    let old = c.fake_node(true, false, &[("node-role.kubernetes.io/master", "")]);
    let worker = c.fake_node(true, false, &[]);
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let out = disktier(&c, &db)
        .args([
            "fleet",
            "run",
            "--dry-run",
            "--control-plane",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert!(yaml.contains(&format!("nodeName: {}", cp.name)), "{yaml}");
    assert!(yaml.contains(&format!("nodeName: {}", old.name)), "{yaml}");
    assert!(
        !yaml.contains(&format!("nodeName: {}", worker.name)),
        "{yaml}"
    );
}

#[test]
fn create_namespace_makes_the_missing_namespace() {
    let Some(c) = Cluster::from_env() else { return };
    let fake = c.fake_node(true, false, &[]);
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let ns = Ns {
        cluster: c.clone(),
        name: unique("fleet-mkns"),
    };
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &fake.name,
            "-n",
            &ns.name,
            "--create-namespace",
            "--timeout",
            "2s",
            "--",
            "check",
            "etcd",
            "/var/lib/etcd",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.json["nodes"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("deadline exceeded"));
    c.kubectl_ok(&["get", "namespace", &ns.name], None);
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

#[test]
fn prometheus_output_has_each_node_as_a_label_and_passes_promtool() {
    let Some(c) = Cluster::from_env() else { return };
    if !need_image(&c) {
        return;
    }
    let promtool = std::path::Path::new("/usr/bin/promtool");
    if !promtool.exists() {
        if strict() {
            panic!("promtool is missing (Debian package prometheus)");
        }
        skip("promtool (Debian package prometheus)");
        return;
    }
    let ns = c.namespace("fleet-prom");
    let dir = node_dir();
    let db = tempfile::tempdir().unwrap();
    let textfiles = tempfile::tempdir().unwrap();
    let node = c.real_node();
    let path = dir.path().to_str().unwrap();
    let out = disktier(&c, &db.path().join("r.db"))
        .args(["fleet", "run", "--format", "prometheus", "--textfile-dir"])
        .arg(textfiles.path())
        .args([
            "--nodes",
            &node,
            "-n",
            &ns.name,
            "--timeout",
            "180s",
            "--",
            "check",
            "etcd",
            path,
            "--quick",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{stderr}\n{text}"
    );
    // The node's run, labelled with the node's name and the node command.
    let p99 = text
        .lines()
        .find(|l| {
            l.starts_with("disktier_")
                && l.contains("quantile=\"0.99\"")
                && l.contains(&format!("node=\"{node}\""))
                && l.contains("command=\"check\"")
        })
        .unwrap_or_else(|| panic!("no p99 series for node {node}:\n{text}"));
    let v: f64 = p99.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(v > 0.0 && v < 60.0, "{p99}");
    // The same exposition went to the textfile directory, and promtool accepts both.
    let file = textfiles.path().join("disktier_fleet.prom");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let mut lint = std::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    lint.stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let lint = lint.wait_with_output().unwrap();
    assert!(
        lint.status.success(),
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}

/// The test cluster's etcd client port (scripts/kube-env.sh), where etcd also serves /metrics.
fn cluster_etcd_port() -> u16 {
    let env = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/kube-env.sh"
    ))
    .unwrap();
    env.lines()
        .find_map(|l| l.strip_prefix("etcd_port="))
        .and_then(|p| p.trim().parse().ok())
        .expect("etcd_port= in scripts/kube-env.sh")
}

/// `check etcd --metrics` on the control plane reads the cluster's own etcd through the node's
/// network (hostNetwork): the verdict is what etcd itself measured, kept per node.
#[test]
fn etcd_metrics_of_the_cluster_are_judged_on_the_node() {
    let Some(c) = Cluster::from_env() else { return };
    if !need_image(&c) {
        return;
    }
    let ns = c.namespace("fleet-metrics");
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let node = c.real_node();
    let url = format!("http://127.0.0.1:{}", cluster_etcd_port());
    let r = fleet_run(
        &c,
        &db,
        &[
            "--nodes",
            &node,
            "-n",
            &ns.name,
            "--timeout",
            "120s",
            "--",
            "check",
            "etcd",
            "--metrics",
            &url,
        ],
    );
    let n = &r.json["nodes"][0];
    assert!(
        n["status"] == "pass" || n["status"] == "fail",
        "etcd's metrics were read on the node: {n}\n{}",
        r.stderr
    );
    assert_eq!(n["result"]["kind"], "etcd-metrics", "{n}");
    assert_eq!(n["result"]["members"][0]["url"], url.as_str());
    assert!(
        n["result"]["members"][0]["wal_fsync"]["observations"]
            .as_f64()
            .unwrap()
            > 0.0,
        "the cluster's etcd has written its WAL: {n}"
    );
    assert!(n["figures"]["sync_p99_ns"].as_u64().is_some(), "{n}");
    assert_eq!(r.code, if n["status"] == "pass" { 0 } else { 1 });
    // Kept in the store with the node, like a measured run.
    let id = r.json["fleet_run_id"].as_str().unwrap();
    let out = disktier(&c, &db)
        .args(["history", "--group", id, "--format", "json"])
        .output()
        .unwrap();
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(h["runs"].as_array().unwrap().len(), 1, "{h}");
    assert_eq!(h["runs"][0]["hostname"], node.as_str());
    assert_eq!(c.ours(&ns.name), Vec::<String>::new());
}
