//! `disktier fleet run` against a fake API server on 127.0.0.1 (plain HTTP) that answers what a
//! run asks (version, namespace, access reviews, leftovers, nodes, Jobs, watches that stay
//! open), for what a real cluster does not do on demand: a server that stops answering midway
//! (the run must ask it nothing more once one request went unanswered, and say which one), and
//! a node that goes NotReady at a chosen moment.

use disktier_testkit::cli::Succeeds;
use disktier_testkit::fake_api::{self, Reply, Request};
use std::sync::{Arc, Mutex};

/// What the fake server does besides answering.
#[derive(Clone, Copy, PartialEq)]
enum Freeze {
    /// It holds every Job creation (and answers the rest).
    JobCreation,
    /// It creates the first Job and then holds every request.
    AfterFirstJob,
    /// It answers everything; once the first Job is made, node `b` is NotReady.
    NodeBGoesNotReady,
}

const NAMESPACE: &str = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"disktier"},"status":{"phase":"Active"}}"#;
const ALLOWED: &str = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","metadata":{},"spec":{},"status":{"allowed":true}}"#;
const EMPTY_LIST: &str =
    r#"{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"1"},"items":[]}"#;

/// The answer of an API server to `method path` before it froze (`body` is the request's);
/// `b_ready`: whether node `b` is Ready.
fn answer(method: &str, path: &str, body: &str, b_ready: bool) -> Option<String> {
    let p = path.split('?').next().unwrap_or("");
    Some(match (method, p) {
        ("GET", "/version") => fake_api::VERSION_1_20.into(),
        ("GET", "/api/v1/namespaces/disktier") => NAMESPACE.into(),
        ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") => ALLOWED.into(),
        (
            "GET",
            "/apis/batch/v1/namespaces/disktier/jobs"
            | "/api/v1/namespaces/disktier/pods"
            | "/api/v1/namespaces/disktier/events",
        ) => EMPTY_LIST.into(),
        ("GET", n) if n.starts_with("/api/v1/nodes/") => {
            let name = &n["/api/v1/nodes/".len()..];
            let (status, reason) = match name == "b" && !b_ready {
                true => ("False", "KubeletNotReady"),
                false => ("True", "KubeletReady"),
            };
            format!(
                r#"{{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{name}"}},"status":{{"conditions":[{{"type":"Ready","status":"{status}","reason":"{reason}"}}]}}}}"#
            )
        }
        // The Job as sent is the Job as made.
        ("POST", "/apis/batch/v1/namespaces/disktier/jobs") => body.into(),
        ("DELETE", j) if j.starts_with("/apis/batch/v1/namespaces/disktier/jobs/") => {
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}"#.into()
        }
        _ => return None,
    })
}

/// Starts the fake server; returns its port and the requests it held (method and path), or
/// with [`Freeze::NodeBGoesNotReady`], every Job creation.
fn frozen_server(freeze: Freeze) -> (u16, Arc<Mutex<Vec<String>>>) {
    let held = Arc::new(Mutex::new(Vec::new()));
    let frozen = Mutex::new(false);
    let h = held.clone();
    let port = fake_api::serve(move |req: &Request| {
        let (method, path) = (req.method.as_str(), req.path.as_str());
        let creation = method == "POST" && path.contains("/jobs");
        if freeze == Freeze::NodeBGoesNotReady && path.contains("watch=true") {
            return Reply::OpenWatch;
        }
        let reply = {
            let mut f = frozen.lock().unwrap();
            let reply = match freeze {
                Freeze::NodeBGoesNotReady => {
                    if creation {
                        h.lock().unwrap().push(format!("{method} {path}"));
                    }
                    answer(method, path, &req.body, !*f)
                }
                _ if *f => None,
                Freeze::JobCreation if creation => None,
                _ => answer(method, path, &req.body, true),
            };
            *f |= freeze != Freeze::JobCreation && creation;
            reply
        };
        match reply {
            Some(body) => Reply::Json(body),
            None => {
                h.lock().unwrap().push(format!("{method} {path}"));
                Reply::Hold
            }
        }
    });
    (port, held)
}

/// `fleet run --nodes a,b,c --format json` against the fake server, each request given 2 s:
/// its JSON document and stderr (exit 2).
fn run(port: u16, extra: &[&str]) -> (serde_json::Value, String) {
    run_saving(port, extra, None)
}

/// [`run`], saving the nodes' outcomes in the SQLite store `db` (`None`: `--no-save`).
fn run_saving(
    port: u16,
    extra: &[&str],
    db: Option<&std::path::Path>,
) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user: {{token: x}}\n"),
    )
    .unwrap();
    let mut cmd = disktier_testkit::cli::disktier();
    match db {
        Some(db) => cmd.env("DISKTIER_DB", db).env("XDG_DATA_HOME", dir.path()),
        None => cmd
            .env("DISKTIER_DB", "/nonexistent/fleet-never-saves.db")
            .arg("--no-save"),
    };
    let out = cmd
        .env("KUBECONFIG", &kc)
        .env("DISKTIER_KUBE_TIMEOUT_MS", "2000")
        .args(["--format", "json", "fleet", "run", "--nodes", "a,b,c"])
        .args(extra)
        .args(["--", "check", "etcd", "/var/lib/etcd"])
        .timeout(std::time::Duration::from_secs(120))
        .run_output();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect(&err);
    (doc, err)
}

fn reason(doc: &serde_json::Value, node: &str) -> String {
    let n = doc["nodes"].as_array().unwrap().iter();
    let n = n.clone().find(|n| n["node"] == node).unwrap();
    n["reason"].as_str().unwrap().to_string()
}

/// QA: a server that stopped answering Job creations was waited on once per node (70 s each:
/// 50 nodes, an hour), then once more for the cleanup's first list. The first unanswered
/// creation now ends the run: the other nodes are not started, the cleanup is not tried, and
/// the error names the call, the limit and `fleet clean`.
#[test]
fn a_server_that_stops_answering_job_creations_is_asked_once() {
    let (port, held) = frozen_server(Freeze::JobCreation);
    let (doc, err) = run(port, &[]);
    let held = held.lock().unwrap().clone();
    assert_eq!(held.len(), 1, "{held:?}");
    assert!(held[0].starts_with("POST /apis/batch/v1/namespaces/disktier/jobs"));
    assert!(
        reason(&doc, "a").contains("the API server sent no answer within 2 s"),
        "{doc}"
    );
    for node in ["b", "c"] {
        let r = reason(&doc, node);
        assert!(
            r.starts_with(
                "not started: the API server stopped answering (creating Job disktier/disktier-"
            ) && r.contains("`kubectl get --raw /readyz` asks it"),
            "{r}"
        );
    }
    assert!(
        err.contains("nothing was deleted: the API server stopped answering (creating Job")
            && err.contains("run `disktier fleet clean -n disktier --run "),
        "{err}"
    );
}

/// QA: a server that took the first Job and then stopped answering held the run to the
/// node's --timeout (the watches' lists went unanswered and were retried without a word),
/// then read the node, deleted its Job, created the next nodes' Jobs and listed for the
/// cleanup, each waited on for the whole limit. The first unanswered watch now ends the run
/// with that call named, and nothing more is asked.
#[test]
fn a_server_that_stops_answering_after_the_first_job_is_asked_nothing_more() {
    let (port, held) = frozen_server(Freeze::AfterFirstJob);
    let (doc, err) = run(port, &["--timeout", "20s"]);
    let held = held.lock().unwrap().clone();
    // Only the watches' first lists (pods, Jobs, the events on each) were held.
    assert!(!held.is_empty(), "{err}");
    for r in &held {
        assert!(
            r.starts_with("GET ") && r.contains("limit=500") && !r.contains("/nodes/"),
            "a request after the server stopped answering: {r} (all held: {held:?})"
        );
    }
    let a = reason(&doc, "a");
    assert!(
        a.starts_with("the API server stopped answering (watching ")
            && a.contains("so the node's result is unknown"),
        "{a}"
    );
    assert!(reason(&doc, "b").starts_with("not started: the API server stopped answering"));
    assert!(err.contains("nothing was deleted"), "{err}");
}

/// QA: with `--parallel 1` a node that went NotReady while it waited its turn (its kubelet
/// stopped; a real node controller says so 40 s later) was still given its Job and held the
/// run for a whole `--timeout` as a pod that never started. A node whose turn comes more than
/// 5 s after the nodes were judged is judged again, and skipped with the reason. Here node `a`
/// waits out a 3 s --timeout (its pod never appears) while `b` goes NotReady.
#[test]
fn a_node_that_goes_not_ready_while_it_waits_its_turn_is_skipped() {
    let (port, created) = frozen_server(Freeze::NodeBGoesNotReady);
    let (doc, err) = run(port, &["--timeout", "3s"]);
    let created = created.lock().unwrap().clone();
    assert_eq!(
        created.len(),
        2,
        "a's Job and c's, not b's: {created:?}\n{err}"
    );
    let b = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == "b");
    let b = b.unwrap();
    assert_eq!(b["status"], "skipped", "{b}");
    assert_eq!(
        b["reason"], "NotReady (KubeletNotReady) (found when its turn came)",
        "{b}"
    );
    assert!(
        reason(&doc, "a").starts_with("deadline exceeded: --timeout 3s"),
        "{doc}"
    );
}

/// QA: nodes that gave no result document (here a pod that never started within --timeout,
/// and a node skipped NotReady) were not stored, so `history --group`, `show` and the report's
/// fleet section showed only the nodes that succeeded, and the failures were lost once the
/// terminal scrolled. Each is stored with the fleet run as an `unmeasured` run: its node,
/// status and reason, shown by all three, and none of them carries a figure.
#[test]
fn nodes_that_gave_no_document_are_stored_with_the_fleet_run() {
    let (port, _) = frozen_server(Freeze::NodeBGoesNotReady);
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let (doc, err) = run_saving(port, &["--timeout", "3s"], Some(&db));
    let group = doc["fleet_run_id"].as_str().expect(&err).to_string();
    let dt = || {
        let mut c = disktier_testkit::cli::disktier();
        c.env("DISKTIER_DB", &db);
        c
    };
    let out = dt()
        .args(["--format", "json", "history", "--group", &group])
        .run_output();
    let runs = disktier_testkit::cli::json_ok(&out)["runs"].clone();
    let runs = runs.as_array().unwrap();
    let mut hosts: Vec<&str> = runs
        .iter()
        .map(|r| r["hostname"].as_str().unwrap())
        .collect();
    hosts.sort();
    assert_eq!(hosts, ["a", "b", "c"], "{runs:?}");
    for r in runs {
        assert_eq!(r["kind"], "unmeasured", "{r}");
        assert!(
            r["sync_p99_ns"].is_null() && r["write_iops"].is_null(),
            "{r}"
        );
    }
    let b = runs.iter().find(|r| r["hostname"] == "b").unwrap();
    let b = b["id"].as_str().unwrap();
    let shown = String::from_utf8(dt().args(["show", b]).run_output().stdout).unwrap();
    assert!(
        shown.contains(&format!(
            "node b of fleet run {group} was not measured (skipped): NotReady (KubeletNotReady) (found when its turn came)"
        )),
        "{shown}"
    );
    let out = dt().args(["--format", "json", "show", b]).run_output();
    let stored = disktier_testkit::cli::json_ok(&out);
    assert_eq!(stored["unmeasured"]["status"], "skipped", "{stored}");
    assert_eq!(stored["fleet"]["node"], "b", "{stored}");
    let html = d.path().join("r.html");
    dt().args(["report", "--group", &group, "-o"])
        .arg(&html)
        .assert()
        .success();
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("3 nodes (3 not measured)"), "{html}");
    assert!(
        html.contains("not measured: skipped</span> NotReady (KubeletNotReady)"),
        "{html}"
    );
    assert!(html.contains("not measured: error</span> deadline exceeded: --timeout 3s"));
}
