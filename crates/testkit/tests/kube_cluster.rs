//! The test cluster of `scripts/kube-up.sh`, used the way `disktier fleet` uses it: a Job pinned
//! to the node with `nodeName`, a local image, a hostPath volume on a loop-device xfs mount; it
//! completes, its log is read, it is deleted and no pod is left. A missing `localhost/...` image
//! shows as ErrImagePull/ImagePullBackOff within seconds. Fake nodes register with their state.
//!
//! Needs `DISKTIER_TEST_KUBECONFIG` (scripts/test.sh sets it); skipped with a reason otherwise.

use std::time::Duration;

use disktier_testkit::kube::{self, Cluster, FakeNodeSpec, Namespace};
use disktier_testkit::{require, require_loop, LoopDev};
use serde_json::Value;

/// A Job of one pod pinned to `node`, running `command` in `image` (or, when `command` starts
/// with `--`, the image's entrypoint with the rest as arguments), with `host_dir` mounted at the
/// same path, as fleet makes them.
fn pinned_job(
    name: &str,
    node: &str,
    image: &str,
    command: &[&str],
    host_dir: Option<&str>,
) -> String {
    let mut pod = serde_json::json!({
        "nodeName": node,
        "restartPolicy": "Never",
        "tolerations": [{"operator": "Exists"}],
        "containers": [{
            "name": "run",
            "image": image,
            "imagePullPolicy": "IfNotPresent",
        }],
    });
    match command.split_first() {
        Some((&"--", args)) => pod["containers"][0]["args"] = serde_json::json!(args),
        _ => pod["containers"][0]["command"] = serde_json::json!(command),
    }
    if let Some(dir) = host_dir {
        pod["volumes"] = serde_json::json!([
            {"name": "target", "hostPath": {"path": dir, "type": "Directory"}}
        ]);
        pod["containers"][0]["volumeMounts"] =
            serde_json::json!([{"name": "target", "mountPath": dir}]);
    }
    serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "disktier-test"}},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 120,
            "ttlSecondsAfterFinished": 600,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/managed-by": "disktier-test"}},
                "spec": pod,
            },
        },
    })
    .to_string()
}

/// Runs the Job to completion, returns its log; then deletes it (propagation Background) and
/// checks that its pod is gone.
fn run_job_to_completion(cluster: &Cluster, ns: &Namespace, job: &str, manifest: &str) -> String {
    let n = ns.name.as_str();
    cluster.create_in(n, manifest);
    let waited = cluster.kubectl(&[
        "-n",
        n,
        "wait",
        "--for=condition=complete",
        "--timeout=90s",
        &format!("job/{job}"),
    ]);
    if !waited.success {
        let describe = cluster.kubectl(&["-n", n, "describe", "job,pods"]);
        panic!(
            "job {job} did not complete: {}\n{}",
            waited.stderr, describe.stdout
        );
    }
    let log = cluster.kubectl_ok(&["-n", n, "logs", &format!("job/{job}")]);
    let selector = format!("job-name={job}");
    assert_eq!(
        cluster.pod_names(n, &selector).len(),
        1,
        "the Job's one pod"
    );
    cluster.kubectl_ok(&["-n", n, "delete", "job", job, "--cascade=background"]);
    kube::wait_until(Duration::from_secs(60), "the Job's pod deleted", || {
        cluster.pod_names(n, &selector).is_empty()
    });
    assert!(
        !cluster.kubectl(&["-n", n, "get", "job", job]).success,
        "job {job} still exists after delete"
    );
    log
}

#[test]
fn pinned_job_writes_to_a_hostpath_on_an_xfs_loop_mount_and_leaves_nothing() {
    let Some(cluster) = Cluster::from_env() else {
        return;
    };
    if !require_loop() || !require(disktier_testkit::have("mkfs.xfs"), "mkfs.xfs") {
        return;
    }
    let dev = LoopDev::new(320 << 20);
    let mnt = dev.mkfs_mount("xfs");
    let dir = mnt.dir.to_str().unwrap().to_string();
    let node = cluster.node();
    let ns = cluster.namespace("disktier-kube-test");

    // The test image: busybox writes and fsyncs 64 KiB on the host's xfs mount.
    let script = format!(
        "busybox dd if=/dev/zero of={dir}/written bs=4096 count=16 conv=fsync && \
         busybox stat -c 'size=%s' {dir}/written && echo wrote-on-xfs"
    );
    let job = kube::unique_name("hostpath");
    let manifest = pinned_job(
        &job,
        &node,
        kube::TESTBOX_IMAGE,
        &["/bin/sh", "-c", &script],
        Some(&dir),
    );
    let log = run_job_to_completion(&cluster, &ns, &job, &manifest);
    assert!(
        log.contains("size=65536") && log.contains("wrote-on-xfs"),
        "log: {log}"
    );
    // What the pod wrote is on the loop device's filesystem, seen from the host.
    let written = std::fs::metadata(mnt.dir.join("written")).expect("file written by the pod");
    assert_eq!(written.len(), 65536);

    // The same with the disktier image, as fleet runs it (when kube-up could import it).
    let image = kube::disktier_image();
    if !cluster.has_image(&image) {
        eprintln!(
            "skipped the disktier image part: the node has no {image} \
             (kube-up imports target/image/disktier-oci.tar, made by scripts/image.sh)"
        );
        return;
    }
    let job = kube::unique_name("disktier");
    let manifest = pinned_job(&job, &node, &image, &["--", "--version"], Some(&dir));
    let log = run_job_to_completion(&cluster, &ns, &job, &manifest);
    assert!(
        log.contains(env!("CARGO_PKG_VERSION")),
        "disktier --version in the pod printed: {log}"
    );
}

/// The waiting reason of the first container of the pod(s) matching `selector`, if any.
fn waiting_reason(cluster: &Cluster, ns: &str, selector: &str) -> Option<String> {
    let pods: Value = cluster.get_json(&["-n", ns, "get", "pods", "-l", selector]);
    pods["items"].as_array()?.iter().find_map(|p| {
        p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
            .as_str()
            .map(str::to_string)
    })
}

#[test]
fn missing_localhost_image_shows_errimagepull_within_seconds() {
    let Some(cluster) = Cluster::from_env() else {
        return;
    };
    let node = cluster.node();
    let ns = cluster.namespace("disktier-kube-test");
    let job = kube::unique_name("missing-image");
    let image = format!("localhost/disktier-missing-{job}:0");
    let manifest = pinned_job(&job, &node, &image, &["/nothing"], None);
    cluster.create_in(&ns.name, &manifest);
    let selector = format!("job-name={job}");
    let mut seen = None;
    let took = kube::wait_until(Duration::from_secs(30), "ErrImagePull", || {
        seen = waiting_reason(&cluster, &ns.name, &selector);
        matches!(seen.as_deref(), Some("ErrImagePull" | "ImagePullBackOff"))
    });
    eprintln!("{image}: {seen:?} after {took:?}");
    // The Job itself does not fail on a missing image (Kubernetes 1.20): it stays active.
    let j = cluster.get_json(&["-n", &ns.name, "get", "job", &job]);
    assert_eq!(j["status"]["active"], 1, "job status: {}", j["status"]);
    // A pod that never started: delete the Job, and the pod with grace period 0.
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "delete",
        "job",
        &job,
        "--cascade=background",
    ]);
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "delete",
        "pods",
        "-l",
        &selector,
        "--grace-period=0",
        "--force",
    ]);
    kube::wait_until(Duration::from_secs(30), "the pod gone", || {
        cluster.pod_names(&ns.name, &selector).is_empty()
    });
}

#[test]
fn fake_nodes_register_with_their_state_and_go_away() {
    let Some(cluster) = Cluster::from_env() else {
        return;
    };
    let group = kube::unique_name("fakes");
    let spec = |suffix: &str| {
        let mut s = FakeNodeSpec::new(&format!("{group}-{suffix}"));
        s.labels.push(("disktier.test/group".into(), group.clone()));
        s
    };
    let mut ready = spec("ready");
    ready.instance_type = Some("m6id.xlarge".into());
    ready.zone = Some("eu-north-1a".into());
    let mut not_ready = spec("notready");
    not_ready.ready = false;
    let mut cordoned = spec("cordoned");
    cordoned.unschedulable = true;
    let mut control = spec("control");
    control.control_plane = true;
    let nodes: Vec<_> = [&ready, &not_ready, &cordoned, &control]
        .iter()
        .map(|s| cluster.add_fake_node(s))
        .collect();

    let list = cluster.get_json(&[
        "get",
        "nodes",
        "-l",
        &format!("disktier.test/group={group}"),
    ]);
    let items = list["items"].as_array().expect("node list");
    assert_eq!(items.len(), 4, "{list}");
    let by_name = |name: &str| {
        items
            .iter()
            .find(|n| n["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("node {name} listed"))
    };
    let r = by_name(&ready.name);
    assert_eq!(kube::node_ready(r), Some(true));
    assert_eq!(kube::type_and_zone(r), ("m6id.xlarge", "eu-north-1a"));
    assert_eq!(kube::node_ready(by_name(&not_ready.name)), Some(false));
    assert_eq!(by_name(&cordoned.name)["spec"]["unschedulable"], true);
    let selected = cluster.kubectl_ok(&[
        "get",
        "nodes",
        "-l",
        &format!("disktier.test/group={group},node-role.kubernetes.io/control-plane"),
        "-o",
        "name",
    ]);
    assert_eq!(selected.trim(), format!("node/{}", control.name));

    // A pod pinned to a fake node stays Pending (no kubelet), until the node's drop removes it.
    let ns = cluster.namespace("disktier-kube-test");
    let job = kube::unique_name("on-fake");
    let manifest = pinned_job(&job, &ready.name, kube::TESTBOX_IMAGE, &["true"], None);
    cluster.create_in(&ns.name, &manifest);
    let selector = format!("job-name={job}");
    kube::wait_until(Duration::from_secs(20), "the pod created", || {
        !cluster.pod_names(&ns.name, &selector).is_empty()
    });
    std::thread::sleep(Duration::from_secs(2));
    let pods = cluster.get_json(&["-n", &ns.name, "get", "pods", "-l", &selector]);
    assert_eq!(pods["items"][0]["status"]["phase"], "Pending", "{pods}");
    cluster.kubectl_ok(&["-n", &ns.name, "delete", "job", &job, "--cascade=orphan"]);

    drop(nodes);
    kube::wait_until(
        Duration::from_secs(30),
        "the fake nodes and their pod gone",
        || {
            cluster
                .kubectl_ok(&[
                    "get",
                    "nodes",
                    "-l",
                    &format!("disktier.test/group={group}"),
                    "-o",
                    "name",
                ])
                .trim()
                .is_empty()
                && cluster.pod_names(&ns.name, &selector).is_empty()
        },
    );
}

/// The TTLAfterFinished gate (alpha in 1.20) is on: a finished Job with
/// `ttlSecondsAfterFinished` is deleted by the controller manager, its pod with it.
#[test]
fn finished_job_is_deleted_after_its_ttl() {
    let Some(cluster) = Cluster::from_env() else {
        return;
    };
    let node = cluster.node();
    let ns = cluster.namespace("disktier-kube-test");
    let job = kube::unique_name("ttl");
    let mut manifest: Value = serde_json::from_str(&pinned_job(
        &job,
        &node,
        kube::TESTBOX_IMAGE,
        &["/bin/sh", "-c", "echo done"],
        None,
    ))
    .unwrap();
    manifest["spec"]["ttlSecondsAfterFinished"] = 2.into();
    cluster.create_in(&ns.name, &manifest.to_string());
    // The server kept the field (a server without the gate drops it without a word).
    let stored = cluster.get_json(&["-n", &ns.name, "get", "job", &job]);
    assert_eq!(stored["spec"]["ttlSecondsAfterFinished"], 2, "{stored}");
    let selector = format!("job-name={job}");
    let took = kube::wait_until(
        Duration::from_secs(60),
        "the Job deleted by its TTL",
        || {
            !cluster
                .kubectl(&["-n", &ns.name, "get", "job", &job])
                .success
                && cluster.pod_names(&ns.name, &selector).is_empty()
        },
    );
    eprintln!("job with ttlSecondsAfterFinished=2 gone after {took:?}");
}
