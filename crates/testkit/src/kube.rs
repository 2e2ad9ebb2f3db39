//! The real single-node test cluster that `scripts/kube-up.sh` starts (Kubernetes 1.20 from
//! Debian's source package, one node, everything on 127.0.0.1).
//!
//! `scripts/test.sh` starts it before `cargo test` and exports its kubeconfig as
//! `DISKTIER_TEST_KUBECONFIG`. [`Cluster::from_env`] gives `None` when that is unset, after
//! printing why the test is skipped; in CI (`CI` or `DISKTIER_TEST_REQUIRE_ROOT_FEATURES` set) it
//! panics instead, because CI must run the cluster tests.
//!
//! Multi-node behaviour is tested with [`FakeNode`]s: Node objects with no kubelet behind them
//! (Ready or NotReady, cordoned, labelled). Pods bound to them stay Pending forever, which also
//! exercises deadline paths; a [`FakeNode`] force-deletes such pods and itself on drop. Tests run
//! in parallel against the one cluster, so give every fake node of a test a label of its own
//! ([`unique_name`]) and select by it, rather than selecting by shared labels or `--all-nodes`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The environment variable that holds the test cluster's kubeconfig path.
pub const KUBECONFIG_ENV: &str = "DISKTIER_TEST_KUBECONFIG";

/// A tiny image every cluster from `scripts/kube-up.sh` has: busybox-static as `/bin/sh` and
/// `/bin/busybox` (use `busybox cat`, `busybox dd`...).
pub const TESTBOX_IMAGE: &str = "localhost/disktier-testbox:1";

/// The image `disktier fleet run` uses by default, which kube-up imports from
/// `target/image/disktier-oci.tar` when that archive exists.
pub fn disktier_image() -> String {
    format!("localhost/disktier:{}", env!("CARGO_PKG_VERSION"))
}

/// Label every fake node carries (value: the test's unique name), so leftovers can be found.
pub const FAKE_NODE_LABEL: &str = "disktier.test/fake-node";

fn strict() -> bool {
    crate::strict()
        || std::env::var_os("DISKTIER_TEST_REQUIRE_ROOT_FEATURES").is_some_and(|v| !v.is_empty())
}

/// A name unique to this process and call, for namespaces, nodes, Jobs and labels:
/// `PREFIX-PID-N` (lowercase, valid as a DNS-1123 label when `prefix` is).
pub fn unique_name(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// What a kubectl run gave back.
#[derive(Debug, Clone)]
pub struct Output {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// The test cluster, reached through its kubeconfig.
#[derive(Debug, Clone)]
pub struct Cluster {
    kubeconfig: PathBuf,
}

impl Cluster {
    /// The cluster of `DISKTIER_TEST_KUBECONFIG`. When it is unset (or names no file) this prints
    /// `skipped: ...` and returns `None` (and panics in CI). It also fails the same way when
    /// `kubectl` is missing.
    pub fn from_env() -> Option<Cluster> {
        let path = std::env::var_os(KUBECONFIG_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let why = match &path {
            None => format!(
                "a test cluster: {KUBECONFIG_ENV} is unset (scripts/test.sh starts one with \
                 scripts/kube-up.sh as root)"
            ),
            Some(p) if !p.is_file() => {
                format!(
                    "a test cluster: {KUBECONFIG_ENV}={} is not a file",
                    p.display()
                )
            }
            Some(_) if !crate::have("kubectl") => "kubectl for the test cluster".to_string(),
            Some(p) => {
                return Some(Cluster {
                    kubeconfig: p.clone(),
                })
            }
        };
        if strict() {
            panic!("CI must have {why}");
        }
        eprintln!("skipped: needs {why}");
        None
    }

    /// A cluster reached with this kubeconfig (no check).
    pub fn with_kubeconfig(kubeconfig: &Path) -> Cluster {
        Cluster {
            kubeconfig: kubeconfig.to_path_buf(),
        }
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// `kubectl --kubeconfig K ARGS...` with its outcome; never panics on a failed run.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_stdin(args, None)
    }

    /// `kubectl ARGS...` with `stdin` fed to it (for `-f -`).
    pub fn kubectl_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--request-timeout=30s")
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run kubectl: {e}"));
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("kubectl stdin");
            pipe.write_all(input.as_bytes())
                .expect("write kubectl stdin");
        }
        let out = child.wait_with_output().expect("wait for kubectl");
        Output {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `kubectl ARGS...`, panicking with its stderr when it fails; returns stdout.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.success,
            "kubectl {} failed: {}{}",
            args.join(" "),
            out.stderr,
            out.stdout
        );
        out.stdout
    }

    /// `kubectl ARGS... -o json`, parsed.
    pub fn get_json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        let text = self.kubectl_ok(&a);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("kubectl {args:?}: bad JSON: {e}"))
    }

    /// `kubectl create -f -` of a manifest (YAML or JSON); panics when the server refuses it.
    pub fn create(&self, manifest: &str) {
        let out = self.kubectl_stdin(&["create", "-f", "-"], Some(manifest));
        assert!(
            out.success,
            "kubectl create failed: {}\n{manifest}",
            out.stderr
        );
    }

    /// [`Cluster::create`] in `namespace`.
    pub fn create_in(&self, namespace: &str, manifest: &str) {
        let out = self.kubectl_stdin(&["-n", namespace, "create", "-f", "-"], Some(manifest));
        assert!(
            out.success,
            "kubectl create failed: {}\n{manifest}",
            out.stderr
        );
    }

    /// The node that has a kubelet (the one kube-up started): the Ready node that is not fake.
    pub fn node(&self) -> String {
        let nodes = self.get_json(&["get", "nodes", "-l", &format!("!{FAKE_NODE_LABEL}")]);
        nodes["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|n| node_ready(n) == Some(true))
            .and_then(|n| n["metadata"]["name"].as_str())
            .map(str::to_string)
            .expect("the test cluster has a Ready node with a kubelet")
    }

    /// Whether the real node reports `image` among its images (the kubelet lists what the
    /// node's containerd holds).
    pub fn has_image(&self, image: &str) -> bool {
        let node = self.get_json(&["get", "node", &self.node()]);
        node["status"]["images"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|i| i["names"].as_array().into_iter().flatten())
            .any(|n| n.as_str() == Some(image))
    }

    /// A fresh namespace (see [`Namespace`]), deleted on drop.
    pub fn namespace(&self, prefix: &str) -> Namespace {
        let ns = self.namespace_to_create(prefix);
        self.kubectl_ok(&["create", "namespace", &ns.name]);
        // Pods cannot be created before the namespace's default service account exists.
        wait_until(
            Duration::from_secs(30),
            "the namespace's service account",
            || {
                self.kubectl(&["-n", &ns.name, "get", "serviceaccount", "default"])
                    .success
            },
        );
        ns
    }

    /// A fresh namespace name that is not created yet (for a test of what creates it), deleted
    /// on drop all the same.
    pub fn namespace_to_create(&self, prefix: &str) -> Namespace {
        Namespace {
            cluster: self.clone(),
            name: unique_name(prefix),
        }
    }

    /// Registers a Node object with no kubelet behind it; deleted (with its pods) on drop.
    pub fn add_fake_node(&self, spec: &FakeNodeSpec) -> FakeNode {
        self.create(&spec.manifest());
        FakeNode {
            cluster: self.clone(),
            name: spec.name.clone(),
        }
    }

    /// Names of the pods in `namespace` that match `selector`.
    pub fn pod_names(&self, namespace: &str, selector: &str) -> Vec<String> {
        let pods = self.get_json(&["-n", namespace, "get", "pods", "-l", selector]);
        pods["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    }
}

/// The Ready condition's status of a node object: `Some(true)`, `Some(false)` (False or
/// Unknown), or `None` when it has no Ready condition.
pub fn node_ready(node: &Value) -> Option<bool> {
    node["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .map(|c| c["status"] == "True")
}

/// A node object's well-known instance-type and zone labels ("" where one is missing).
pub fn type_and_zone(node: &Value) -> (&str, &str) {
    let label = |k: &str| node["metadata"]["labels"][k].as_str().unwrap_or("");
    (
        label("node.kubernetes.io/instance-type"),
        label("topology.kubernetes.io/zone"),
    )
}

/// Polls `done` every 100 ms until it returns true; panics naming `what` after `limit`.
/// Returns how long it took.
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if done() {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "{what}: not reached within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A namespace of the test cluster, deleted (without waiting) on drop.
pub struct Namespace {
    cluster: Cluster,
    pub name: String,
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self
            .cluster
            .kubectl(&["delete", "namespace", &self.name, "--wait=false"]);
    }
}

/// What a fake node looks like. [`FakeNodeSpec::new`] gives a Ready, schedulable worker with
/// the label `disktier.test/fake-node=NAME`; set the fields for the rest.
#[derive(Debug, Clone)]
pub struct FakeNodeSpec {
    pub name: String,
    pub ready: bool,
    /// Cordoned (`spec.unschedulable`).
    pub unschedulable: bool,
    /// `node.kubernetes.io/instance-type`
    pub instance_type: Option<String>,
    /// `topology.kubernetes.io/zone`
    pub zone: Option<String>,
    /// `node-role.kubernetes.io/control-plane` and `node-role.kubernetes.io/master` labels and
    /// the `node-role.kubernetes.io/master:NoSchedule` taint, as kubeadm sets them.
    pub control_plane: bool,
    pub labels: Vec<(String, String)>,
}

impl FakeNodeSpec {
    pub fn new(name: &str) -> FakeNodeSpec {
        FakeNodeSpec {
            name: name.to_string(),
            ready: true,
            unschedulable: false,
            instance_type: None,
            zone: None,
            control_plane: false,
            labels: Vec::new(),
        }
    }

    /// The Node object as JSON (status included: the API server keeps a node's status on
    /// create, as it does for a kubelet registering itself).
    pub fn manifest(&self) -> String {
        let mut labels = serde_json::Map::new();
        labels.insert(FAKE_NODE_LABEL.into(), self.name.clone().into());
        labels.insert("kubernetes.io/hostname".into(), self.name.clone().into());
        labels.insert("kubernetes.io/os".into(), "linux".into());
        labels.insert("kubernetes.io/arch".into(), "amd64".into());
        if let Some(t) = &self.instance_type {
            labels.insert("node.kubernetes.io/instance-type".into(), t.clone().into());
            labels.insert("beta.kubernetes.io/instance-type".into(), t.clone().into());
        }
        if let Some(z) = &self.zone {
            labels.insert("topology.kubernetes.io/zone".into(), z.clone().into());
            labels.insert(
                "failure-domain.beta.kubernetes.io/zone".into(),
                z.clone().into(),
            );
        }
        let mut taints = Vec::new();
        if self.control_plane {
            labels.insert("node-role.kubernetes.io/control-plane".into(), "".into());
            labels.insert("node-role.kubernetes.io/master".into(), "".into());
            taints.push(serde_json::json!({
                "key": "node-role.kubernetes.io/master", "effect": "NoSchedule"
            }));
        }
        for (k, v) in &self.labels {
            labels.insert(k.clone(), v.clone().into());
        }
        let now = rfc3339_now();
        let (status, reason) = if self.ready {
            ("True", "KubeletReady")
        } else {
            ("False", "KubeletNotReady")
        };
        let capacity = serde_json::json!({"cpu": "2", "memory": "4Gi", "pods": "110"});
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.name, "labels": labels},
            "spec": {"unschedulable": self.unschedulable, "taints": taints},
            "status": {
                "capacity": capacity,
                "allocatable": capacity,
                "conditions": [{
                    "type": "Ready", "status": status, "reason": reason,
                    "message": "a node registered by a disktier test, with no kubelet",
                    "lastHeartbeatTime": now, "lastTransitionTime": now
                }],
                "addresses": [{"type": "Hostname", "address": self.name}],
                "nodeInfo": {
                    "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
                    "osImage": "", "containerRuntimeVersion": "", "kubeletVersion": "",
                    "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"
                }
            }
        })
        .to_string()
    }
}

/// A Node object with no kubelet; on drop, the pods bound to it are force-deleted (nothing
/// else would ever confirm their deletion) and the node is deleted.
pub struct FakeNode {
    cluster: Cluster,
    pub name: String,
}

impl FakeNode {
    pub fn delete_now(&self) {
        let selector = format!("spec.nodeName={}", self.name);
        let _ = self.cluster.kubectl(&[
            "delete",
            "pods",
            "--all-namespaces",
            "--field-selector",
            &selector,
            "--grace-period=0",
            "--force",
            "--wait=false",
        ]);
        let _ = self.cluster.kubectl(&[
            "delete",
            "node",
            &self.name,
            "--ignore-not-found",
            "--wait=false",
        ]);
    }
}

impl Drop for FakeNode {
    fn drop(&mut self) {
        self.delete_now();
    }
}

/// The current UTC time as RFC 3339 (`2026-11-24T12:00:00Z`), from the system clock.
fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm), valid for all dates after 1970.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_node_manifest_carries_state_and_labels() {
        let mut spec = FakeNodeSpec::new("n1");
        spec.ready = false;
        spec.unschedulable = true;
        spec.instance_type = Some("m6id.xlarge".into());
        spec.zone = Some("eu-north-1a".into());
        spec.control_plane = true;
        spec.labels.push(("group".into(), "g1".into()));
        let v: Value = serde_json::from_str(&spec.manifest()).unwrap();
        assert_eq!(type_and_zone(&v), ("m6id.xlarge", "eu-north-1a"));
        assert_eq!(
            v["metadata"]["labels"]["node-role.kubernetes.io/control-plane"],
            ""
        );
        assert_eq!(v["metadata"]["labels"]["group"], "g1");
        assert_eq!(v["metadata"]["labels"][FAKE_NODE_LABEL], "n1");
        assert_eq!(v["spec"]["unschedulable"], true);
        assert_eq!(
            v["spec"]["taints"][0]["key"],
            "node-role.kubernetes.io/master"
        );
        assert_eq!(node_ready(&v), Some(false));
    }

    #[test]
    fn rfc3339_now_is_well_formed() {
        let s = rfc3339_now();
        assert_eq!(s.len(), 20, "{s}");
        assert!(
            s.starts_with("20") && s.ends_with('Z') && &s[10..11] == "T",
            "{s}"
        );
    }
}
