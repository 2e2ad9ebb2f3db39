//! Unit tests of the fleet client.

use super::pods::{cut, judge_log, judge_read_log, log_text, message_verdict};
use super::*;
use crate::manifest::CONTAINER;
use k8s_openapi::api::core::v1::Event;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, PodStatus,
};
use kube::config::Kubeconfig;

fn pod(state: ContainerState, phase: &str) -> Pod {
    Pod {
        status: Some(PodStatus {
            phase: Some(phase.into()),
            container_statuses: Some(vec![ContainerStatus {
                name: CONTAINER.into(),
                image: "localhost/missing:1".into(),
                state: Some(state),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn the_termination_message_carries_the_verdict() {
    assert_eq!(message_verdict("verdict: pass\n"), Some(true));
    assert_eq!(message_verdict("verdict: fail"), Some(false));
    assert_eq!(message_verdict("error: no such directory"), None);
    assert_eq!(message_verdict("verdict: passed"), None);
}

#[test]
fn image_pull_errors_are_fatal_at_once() {
    for reason in ["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull"] {
        let p = pod(
            ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: Some("pull access denied".into()),
                }),
                ..Default::default()
            },
            "Pending",
        );
        match judge_pod(&p) {
            PodState::Fatal(s) => {
                assert!(s.starts_with(reason), "{s}");
                assert!(s.contains("localhost/missing:1"), "{s}");
            }
            other => panic!("{reason}: {other:?}"),
        }
    }
    let creating = pod(
        ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some("ContainerCreating".into()),
                message: None,
            }),
            ..Default::default()
        },
        "Pending",
    );
    assert!(matches!(judge_pod(&creating), PodState::Waiting(_)));
}

#[test]
fn terminated_and_evicted_and_never_started() {
    let p = pod(
        ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: 137,
                reason: Some("OOMKilled".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        "Failed",
    );
    assert_eq!(
        judge_pod(&p),
        PodState::Terminated(Terminated {
            exit_code: 137,
            reason: Some("OOMKilled".into()),
            message: None
        })
    );
    let ev = Pod {
        status: Some(PodStatus {
            phase: Some("Failed".into()),
            reason: Some("Evicted".into()),
            message: Some("The node was low on resource: ephemeral-storage.".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert!(
        matches!(judge_pod(&ev), PodState::Fatal(s) if s.starts_with("evicted (Evicted: The node was low"))
    );
    let pending = Pod {
        status: Some(PodStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert!(matches!(judge_pod(&pending), PodState::Waiting(s) if s.contains("never started")));
}

#[test]
fn cut_is_char_safe() {
    assert_eq!(cut("ééé", 2), "éé…");
    assert_eq!(cut(" ab ", 5), "ab");
}

fn event(reason: &str, message: &str) -> Event {
    Event {
        reason: Some(reason.into()),
        message: Some(message.into()),
        ..Default::default()
    }
}

/// QA: a node path that does not exist waited out the whole --timeout in ContainerCreating;
/// the kubelet had said why within a second.
#[test]
fn a_failed_mount_fails_the_node_with_the_kubelets_words() {
    let e = event(
        "FailedMount",
        "MountVolume.SetUp failed for volume \"host-0\" : hostPath type check failed: /tmp/qa13-fleet/typo is not a directory",
    );
    match judge_event(&e) {
        Some(PodNote::Fatal(s)) => {
            assert!(
                s.starts_with("FailedMount: MountVolume.SetUp failed"),
                "{s}"
            );
            assert!(s.contains("/tmp/qa13-fleet/typo is not a directory"), "{s}");
        }
        other => panic!("{other:?}"),
    }
}

/// QA: the taint manager evicted each pod of a NoExecute-tainted node, and the Job controller
/// made a new one at once, until the deadline.
#[test]
fn evictions_are_told_apart_from_their_cancellation_and_from_noise() {
    let marked = event(
        "TaintManagerEviction",
        "Marking for deletion Pod disktier/disktier-a3f90c-vm-1a2b3c4d-x7k2p",
    );
    assert!(
        matches!(judge_event(&marked), Some(PodNote::Evicted(s)) if s.starts_with("evicted by the taint manager"))
    );
    let cancelled = event(
        "TaintManagerEviction",
        "Cancelling deletion of Pod disktier/disktier-a3f90c-vm-1a2b3c4d-x7k2p",
    );
    assert_eq!(judge_event(&cancelled), None);
    let kubelet = event(
        "Evicted",
        "The node was low on resource: ephemeral-storage.",
    );
    assert!(
        matches!(judge_event(&kubelet), Some(PodNote::Evicted(s)) if s.contains("low on resource"))
    );
    for noise in [
        "Scheduled",
        "Pulled",
        "Created",
        "Started",
        "Killing",
        "BackOff",
    ] {
        assert_eq!(judge_event(&event(noise, "x")), None, "{noise}");
    }
}

#[test]
fn events_are_matched_to_their_job_by_the_pod_name() {
    let job = "disktier-a3f90c-vm-1a2b3c4d";
    assert!(is_pod_of("disktier-a3f90c-vm-1a2b3c4d-x7k2p", job));
    assert!(!is_pod_of("disktier-a3f90c-vm-1a2b3c4d", job));
    assert!(!is_pod_of("disktier-a3f90c-vm-1a2b3c4d-x7k2p-abcde", job));
    assert!(!is_pod_of("disktier-a3f90c-vm-1a2b3c4dxx7k2p", job));
    assert!(!is_pod_of("disktier-a3f90c-vm-1a2b3c4e-x7k2p", job));
}

/// QA on dt-s24: `KUBECONFIG=/dev/zero disktier fleet run ...` read until memory ran out (kube
/// reads a kubeconfig whole); a device, a directory or a file past the cap is now refused before
/// kube reads it, naming it, and a small file or a pipe is still kube's to read.
#[test]
fn a_kubeconfig_that_is_a_device_or_huge_is_refused_before_it_is_read() {
    let d = tempfile::tempdir().unwrap();
    let huge = d.path().join("huge");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(kubeconfig::MAX_BYTES + 1)
        .unwrap();
    for (path, why) in [
        (
            huge,
            "it is 16777217 bytes, larger than 16 MiB, which no kubeconfig is",
        ),
        ("/dev/zero".into(), "it is a device, not a file"),
        (d.path().to_path_buf(), "it is a directory"),
    ] {
        let opts = ClientOptions {
            kubeconfig: Some(path.clone()),
            context: None,
        };
        let Err(e) = block_on(client(&opts)).unwrap() else {
            panic!("{} made a client", path.display());
        };
        assert_eq!(
            e.to_string(),
            format!(
                "cannot read the kubeconfig {}: {why}: pass the cluster's kubeconfig file (--kubeconfig FILE or KUBECONFIG=FILE)",
                path.display()
            )
        );
    }
    let small = d.path().join("config");
    std::fs::write(&small, "apiVersion: v1\n").unwrap();
    let fifo = d.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let missing = d.path().join("missing");
    kubeconfig::check(&[small, fifo, missing]).unwrap();
    assert_eq!(
        kubeconfig::paths(Some(std::path::Path::new("/k"))),
        [PathBuf::from("/k")]
    );
}

/// QA: `--kubeconfig /etc/passwd` printed the file's first line; a kubeconfig with a syntax
/// error beside a `token:` would have printed the token.
#[test]
fn a_kubeconfig_that_does_not_parse_is_named_not_quoted() {
    for text in [
        "root:x:0:0:root:/root:/bin/bash\nsecret:x:1:1:hunter2-token:/:/bin/sh\n",
        "apiVersion: v1\nusers:\n- name: u\n  user:\n    token: hunter2-token\n    client-key-data: [unclosed\n",
        "apiVersion: v1\nclusters: hunter2-token\n",
    ] {
        let Err(err) = Kubeconfig::from_yaml(text) else {
            panic!("parsed: {text}");
        };
        let shown = FleetError::Kubeconfig {
            path: "/home/u/.kube/broken".into(),
            err,
        }
        .to_string();
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("root:x"), "{shown}");
        assert!(shown.contains("/home/u/.kube/broken"), "{shown}");
        assert!(shown.contains("not a kubeconfig"), "{shown}");
    }
}

#[test]
fn an_error_is_shown_with_its_causes() {
    let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("client error (Connect)")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
    assert_eq!(
        crate::error::with_causes(&Outer(io)),
        "client error (Connect): Connection refused"
    );
}

#[test]
fn a_document_printed_before_the_command_failed_is_kept() {
    // QA: `assess` on a node where the etcd profile could not run printed its document (the
    // other profiles measured) and exited 2; fleet dropped the document, so the node's
    // measured figures were neither shown nor saved.
    let log = "warning: small filesystem\n{\n  \"schema_version\": 1,\n  \"targets\": [{\"path\": \"/var/lib/x\", \"runs\": [{\"profile\": \"randread\", \"read_iops\": 1200.0}, {\"profile\": \"etcd\", \"error\": \"too little room\"}]}]\n}\nerror: the etcd check could not run on /var/lib/x\n";
    let t = Terminated {
        exit_code: 2,
        reason: Some("Error".into()),
        message: None,
    };
    let mut r = NodeReport::new("n", None, None);
    judge_log(&t, log, &mut r);
    assert_eq!(r.status, Status::Error);
    assert_eq!(
        r.reason.as_deref(),
        Some("the node command failed (exit 2): error: the etcd check could not run on /var/lib/x")
    );
    assert_eq!(r.figures.iops, Some(1200.0));
    assert_eq!(
        r.result.as_ref().unwrap()["targets"][0]["path"],
        "/var/lib/x"
    );
    // Without a document, the error alone, as before.
    let mut r = NodeReport::new("n", None, None);
    judge_log(&t, "error: no such directory\n", &mut r);
    assert_eq!(r.status, Status::Error);
    assert!(r.result.is_none());
}

#[test]
fn the_access_check_asks_for_every_permission_fleet_rbac_grants() {
    let need = access::needed("ns1");
    let words: Vec<String> = need.iter().map(|p| p.describe()).collect();
    for w in [
        "create jobs.batch",
        "watch jobs.batch",
        "delete jobs.batch",
        "watch pods",
        "delete pods",
        "get pods/log",
        "list events",
        "get nodes (cluster-wide)",
        "list nodes (cluster-wide)",
    ] {
        assert!(words.iter().any(|x| x == w), "{w} in {words:?}");
    }
    let rules = crate::rbac::namespace_rules().len() + crate::rbac::cluster_rules().len();
    assert!(need.len() > rules);
    for p in &need {
        assert_eq!(p.namespace.is_none(), p.resource == "nodes", "{p:?}");
        assert_eq!(p.optional(), p.resource == "events", "{p:?}");
    }
    // A subresource is asked as one: `pods/log` is `log` of `pods`.
    let log = need.iter().find(|p| p.resource == "pods/log").unwrap();
    let a = log.review().spec.resource_attributes.unwrap();
    assert_eq!(
        (a.resource.as_deref(), a.subresource.as_deref()),
        (Some("pods"), Some("log"))
    );
    assert_eq!(
        (a.verb.as_deref(), a.namespace.as_deref()),
        (Some("get"), Some("ns1"))
    );
    assert_eq!(
        access::list(&need[..2]),
        "create jobs.batch, list jobs.batch"
    );
    // Nothing reads one Job or Pod by name: `fleet rbac` grants no `get` on them.
    assert!(
        !words
            .iter()
            .any(|w| w == "get jobs.batch" || w == "get pods"),
        "{words:?}"
    );
}

#[test]
fn a_log_cut_inside_a_character_keeps_the_document_at_its_top() {
    // The node's document, then output the server cut at MAX_LOG_BYTES in the middle of a
    // three-byte `€` (QA: 20 MB of them after the document lost the node's result).
    let mut log =
        include_bytes!("../../tests/__fuzz__/fuzz_pod_log/corpus/check-etcd.log").to_vec();
    log.extend("€".repeat(1000).as_bytes());
    log.truncate(log.len() - 1);
    assert!(
        String::from_utf8(log.clone()).is_err(),
        "kube's strict decoding refuses it"
    );
    let t = Terminated {
        exit_code: 0,
        reason: Some("Completed".into()),
        message: None,
    };
    let mut r = NodeReport::new("n", None, None);
    judge_log(&t, &log_text(&log), &mut r);
    assert!(r.result.is_some(), "{:?}", r.reason);
    assert!(
        matches!(r.status, Status::Pass | Status::Fail),
        "{:?}",
        r.reason
    );
    assert!(log_text(&log).ends_with('\u{fffd}'));
}

#[test]
fn a_log_that_fills_what_fleet_reads_without_a_document_says_so() {
    let t = Terminated {
        exit_code: 1,
        reason: Some("Error".into()),
        message: None,
    };
    // 16 MiB of output before the document (QA: an image printing 20 MB first).
    let mut log = "x".repeat(99) + "\n";
    log = log.repeat((crate::result::MAX_LOG_BYTES as usize) / 100 + 1);
    log.truncate(crate::result::MAX_LOG_BYTES as usize);
    let mut r = NodeReport::new("n", None, None);
    judge_read_log(&t, log.as_bytes(), &mut r);
    let why = r.reason.unwrap();
    assert!(
        why.starts_with("exit 1: the pod's log holds no JSON document"),
        "{why}"
    );
    assert!(why.contains("longer than the 16 MiB fleet reads"), "{why}");
    // A short log without a document is not said to be long.
    let mut r = NodeReport::new("n", None, None);
    judge_read_log(&t, b"x\n", &mut r);
    assert!(!r.reason.unwrap().contains("16 MiB"));
}

/// QA: a namespace quota on limits.cpu refused every pod at once (FailedCreate on the Job), and
/// the node waited out --timeout as "the pod was never created".
#[test]
fn a_pod_the_api_server_refuses_fails_the_node_unless_the_quota_is_only_full() {
    let mut e = event(
        "FailedCreate",
        "Error creating: pods \"x\" is forbidden: failed quota: q: must specify limits.cpu",
    );
    match judge_job_event(&e, "ns") {
        Some(PodNote::Fatal(why)) => {
            assert!(
                why.starts_with("FailedCreate: the API server refused"),
                "{why}"
            );
            assert!(why.contains("must specify limits.cpu"), "{why}");
            assert!(
                why.contains("kubectl -n ns describe quota,limitrange"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
    e.message = Some("Error creating: pods \"x\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1".into());
    assert!(
        matches!(judge_job_event(&e, "ns"), Some(PodNote::Waiting(w)) if w.contains("quota was full"))
    );
    e.reason = Some("SuccessfulCreate".into());
    assert_eq!(judge_job_event(&e, "ns"), None);
}

/// A pod's status as the API server returned it (`testdata/NAME.json`).
fn recorded_pod(name: &str) -> Pod {
    let path = format!(
        "{}/src/kube_run/testdata/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The reason a node whose pod ended as `pod` is reported with (its log is not read: what the
/// status says decides).
fn reported(pod: &Pod) -> String {
    match judge_pod(pod) {
        PodState::Fatal(reason) => reason,
        PodState::Terminated(t) if t.reason.as_deref() == Some("OOMKilled") => {
            super::pods::terminated_without_log(&t).unwrap()
        }
        other => panic!("{other:?}"),
    }
}

/// QA: a pod the kubelet preempted for a critical pod (status reason `Preempting`, as the
/// 1.20 kubelet's preemption writes it) was reported as 'the node command failed (exit 2):
/// error: interrupted by SIGTERM ...', the command's words for being stopped; an OOM kill and
/// an eviction, recorded from the test cluster's 1.20 kubelet, say so with the kubelet's
/// reason.
#[test]
fn recorded_pod_statuses_name_the_kubelets_reason() {
    let r = reported(&recorded_pod("pod-preempted"));
    assert_eq!(
        r,
        "the kubelet failed the pod (Preempting: Preempted in order to admit critical pod)"
    );
    // Recorded on the test cluster (1.20 kubelet): busybox dd of a 96 MiB buffer in a 24 MiB
    // limit, and 8 MiB written into an emptyDir of sizeLimit 1Mi (the kubelet's eviction
    // writes no container status at all).
    let r = reported(&recorded_pod("pod-oomkilled"));
    assert_eq!(
        r,
        "OOMKilled (exit 137): the node command went past the pod's 1Gi memory limit"
    );
    let r = reported(&recorded_pod("pod-evicted"));
    assert_eq!(
        r,
        "evicted (Evicted: Usage of EmptyDir volume \"tmp\" exceeds the limit \"1Mi\".)"
    );
}

/// QA: `--selector 'a==b==c'` said "listing nodes: found '==', expected: ',' or 'end of
/// string' (400 BadRequest)" (the test cluster's words), naming neither the option nor a fix.
#[test]
fn a_selector_the_api_server_refuses_is_the_options_error() {
    let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": "found '==', expected: ',' or 'end of string'", "reason": "BadRequest", "code": 400});
    let e = kube::Error::Api(serde_json::from_value(status).unwrap());
    let msg = super::cluster::selector_error("a==b==c", e).to_string();
    assert!(
        msg.starts_with(
            "--selector `a==b==c`: the API server does not take it as a label selector (found '=='"
        ) && msg.contains("KEY in (A,B)"),
        "{msg}"
    );
}

#[test]
fn a_node_whose_run_was_cut_short_is_inconclusive_not_too_slow() {
    // A node whose `check etcd --quick` a runtime cap cut short, its p99's interval settling
    // nothing, exits 1 as check does, but its row said "fail" with no reason, as if the disk
    // had been shown too slow.
    let log = crate::result::tests::RUN.replace(
        r#""pass": true, "message": "ok"}"#,
        r#""pass": false, "message": "INCONCLUSIVE", "inconclusive": true}"#,
    );
    let t = Terminated {
        exit_code: 1,
        reason: Some("Error".into()),
        message: None,
    };
    let mut r = NodeReport::new("n", None, None);
    judge_log(&t, &log, &mut r);
    assert_eq!(r.status, Status::Fail, "{r:?}");
    assert_eq!(r.verdict, Some("inconclusive"));
    assert!(
        r.reason
            .as_deref()
            .unwrap_or("")
            .starts_with("inconclusive: the run was cut short"),
        "{r:?}"
    );
}
