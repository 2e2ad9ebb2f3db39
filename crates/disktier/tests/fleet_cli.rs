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

/// A kubeconfig whose one cluster is `server`, with a token user.
fn kubeconfig_for(dir: &Path, server: &str) -> std::path::PathBuf {
    let p = dir.join("kubeconfig");
    std::fs::write(
        &p,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user: {{token: x}}\n"),
    )
    .unwrap();
    p
}

/// A kubeconfig whose server is a closed loopback port: any attempt to contact it fails.
fn unreachable_kubeconfig(dir: &Path) -> std::path::PathBuf {
    kubeconfig_for(dir, "https://127.0.0.1:1")
}

/// The stderr of each command that contacts the API server (`fleet run`, `fleet run
/// --dry-run --all-nodes`, which lists the nodes, and `fleet clean`) with kubeconfig `kc`,
/// each asserted to exit 2.
fn errors_of_every_api_call(kc: &Path) -> Vec<(&'static [&'static str], String)> {
    const RUN: &[&str] = &["fleet", "run", "--nodes", "a", "--", "check", "etcd", "/x"];
    const DRY_ALL: &[&str] = &[
        "fleet",
        "run",
        "--dry-run",
        "--all-nodes",
        "--",
        "check",
        "etcd",
        "/x",
    ];
    const CLEAN: &[&str] = &["fleet", "clean"];
    [RUN, DRY_ALL, CLEAN]
        .into_iter()
        .map(|args| {
            let err = disktier()
                .env("KUBECONFIG", kc)
                .args(args)
                .timeout(std::time::Duration::from_secs(60))
                .stderr_of_exit(2);
            (args, err)
        })
        .collect()
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

/// The manifests are data for `kubectl apply`: a path in any script is kept as it is. One with a
/// bidi character, which text output shows escaped (terminal_safety_cli), was kept raw here
/// too; it is now refused, as is any node command argument holding a character that does not
/// show as itself (a newline went into the Job as a two-line block scalar).
#[test]
fn dry_run_manifests_keep_the_command_as_given() {
    let path = "/var/lib/etcd-données";
    let y = dry_run_yaml(&["--nodes", "cp-1"], &["check", "etcd", path]);
    assert!(y.contains(&format!("- {path}\n")), "{y}");
    let dir = tempfile::tempdir().unwrap();
    let kc = unreachable_kubeconfig(dir.path());
    for bad in ["/var/lib/e\u{202e}tcd", "/var/lib/etcd\nx"] {
        let out = disktier()
            .env("KUBECONFIG", &kc)
            .args(["fleet", "run", "--dry-run", "--nodes", "cp-1", "--"])
            .args(["check", "etcd", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("node command argument"), "{e}");
    }
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
    let long_node = "n".repeat(60);
    let long_id = "a".repeat(40);
    let cases: [(&[&str], &str); 15] = [
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
        // QA: accepted, and a read-write mount of the node's root filesystem.
        (
            &["--nodes", "a", "--", "check", "etcd", "/proc/1/root"],
            "under /proc or /sys",
        ),
        (
            &["--nodes", "a", "--", "check", "etcd", "/sys/kernel"],
            "under /proc or /sys",
        ),
        (
            &["--nodes", "a", "--", "bench", "/dev/shm"],
            "only block devices",
        ),
        (
            &["--nodes", "a", "--", "bench", "/dev/pts/0"],
            "only block devices",
        ),
        // QA: a 0 TTL lost a finished node's result.
        (
            &["--nodes", "a", "--ttl", "0", "--", "check", "etcd", "/x"],
            "at least 60s",
        ),
        (
            &["--nodes", "a", "--ttl", "59s", "--", "check", "etcd", "/x"],
            "--ttl",
        ),
        // QA: panicked at manifest.rs:141 (usize underflow).
        (
            &[
                "--nodes", &long_node, "--run-id", &long_id, "--", "check", "etcd", "/x",
            ],
            "--run-id",
        ),
        (
            &[
                "--nodes",
                "a",
                "--run-id",
                &"b".repeat(64),
                "--",
                "check",
                "etcd",
                "/x",
            ],
            "--run-id",
        ),
        (
            &[
                "--nodes", "a", "--run-id", "Bad_Id", "--", "check", "etcd", "/x",
            ],
            "--run-id",
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
        .args("fleet run --nodes a -- check etcd /var/lib/etcd".split_whitespace())
        .stderr_of_exit(2);
    assert!(err.contains("set KUBECONFIG, pass --kubeconfig"), "{err}");
}

/// QA: `--dry-run --nodes vm,vm` printed the same Job twice (the run measures `vm` once), and
/// `qa.dot` and `qa-dot` got one Job name (the run failed one with AlreadyExists).
#[test]
fn dry_run_has_one_job_per_node_and_a_name_of_its_own() {
    let y = dry_run_yaml(
        &["--nodes", "vm,vm,qa.dot,qa-dot"],
        &["check", "etcd", "/var/lib/etcd"],
    );
    assert_eq!(y.matches("kind: Job").count(), 3, "{y}");
    let mut names: Vec<&str> = y
        .lines()
        .filter_map(|l| l.strip_prefix("  name: "))
        .collect();
    assert_eq!(names.len(), 3, "{y}");
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 3, "two Jobs share a name: {y}");
}

/// QA: `--dry-run` took any number of nodes, printing a Job (about 2 KB of YAML) for each.
/// More than Kubernetes' largest cluster (5,000 nodes) are refused, before a cluster is
/// contacted or a manifest printed, with the count and a node selector suggested.
#[test]
fn more_nodes_than_the_largest_cluster_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let kc = unreachable_kubeconfig(dir.path());
    let names: Vec<String> = (0..=5_000).map(|i| format!("n{i}")).collect();
    for dry in [true, false] {
        let out = disktier()
            .env("KUBECONFIG", &kc)
            .args(["fleet", "run", "--nodes", &names.join(",")])
            .args(dry.then_some("--dry-run"))
            .args(["--", "check", "etcd", "/var/lib/etcd"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "dry run {dry}: {err}");
        assert!(out.stdout.is_empty(), "dry run {dry}: printed something");
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            ["error: --nodes selects 5001 nodes, more than the 5000 of the largest cluster Kubernetes supports (Kubernetes docs, Considerations for large clusters): narrow it with a node selector, e.g. --selector node.kubernetes.io/instance-type=m6id.xlarge, and run once per group of nodes"],
            "dry run {dry}"
        );
    }
}

/// QA: a refused connection read `ServiceError: client error (Connect)`, naming neither the
/// server nor the refusal.
#[test]
fn an_unreachable_server_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let kc = unreachable_kubeconfig(dir.path());
    for (args, err) in errors_of_every_api_call(&kc) {
        assert!(
            err.contains("cannot reach the Kubernetes API server at https://127.0.0.1:1"),
            "{args:?}: {err}"
        );
        assert!(err.to_lowercase().contains("connection refused"), "{err}");
    }
}

/// QA: a server that takes the connection and never answers held `fleet run` and `fleet
/// clean` without a time limit (killed after 8 minutes). The first request is given 30 s. The
/// server here is plain HTTP on loopback, accepting and then silent.
#[test]
fn a_server_that_never_answers_is_given_up_on() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_for(dir.path(), &format!("http://127.0.0.1:{port}"));
    let started = std::time::Instant::now();
    let err = disktier()
        .env("KUBECONFIG", &kc)
        .args(["fleet", "clean"])
        .timeout(std::time::Duration::from_secs(120))
        .stderr_of_exit(2);
    assert!(
        err.contains("sent no answer to GET /version within 30 s"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(100));
}

/// A plain-HTTP server on loopback that gives every request the same answer (`status` such as
/// "404 Not Found", with `body`) and closes the connection. Returns its port.
fn server_answering_every_request(
    status: &'static str,
    content_type: &'static str,
    body: &'static str,
) -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut c in listener.incoming().flatten() {
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = write!(
                c,
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// QA: a server that is not Kubernetes (a web server answering 404 with an HTML page) gave
/// "listing Jobs in namespace disktier: <!DOCTYPE HTML>..." with the whole page. The answer to
/// the first request says what is wrong and where to look. The server is plain HTTP on
/// loopback, answering every request 404 as a web server does.
#[test]
fn a_server_that_is_not_kubernetes_is_named_as_such() {
    let port = server_answering_every_request(
        "404 Not Found",
        "text/html",
        "<!DOCTYPE HTML>\n<html><body><h1>404 Not Found</h1></body></html>\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_for(dir.path(), &format!("http://127.0.0.1:{port}"));
    for (args, err) in errors_of_every_api_call(&kc) {
        assert!(
            err.contains(&format!(
                "the server at http://127.0.0.1:{port}/ answered 404 (Not Found) for GET /version"
            )),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("does not look like a Kubernetes API server")
                && err.contains("check the server URL of the kubeconfig"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("DOCTYPE"), "{args:?}: {err}");
    }
}

/// QA: `--kubeconfig /etc/passwd` printed the file's first line; a kubeconfig whose YAML
/// breaks beside a `token:` would print the token.
#[test]
fn a_broken_kubeconfig_is_named_and_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("kubeconfig");
    std::fs::write(
        &broken,
        "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: s3cr3t-t0ken\n    client-key-data: [unclosed\n",
    )
    .unwrap();
    let passwd = dir.path().join("passwd");
    std::fs::write(&passwd, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    for file in [&broken, &passwd] {
        for how in ["--kubeconfig", "KUBECONFIG"] {
            let mut cmd = disktier();
            cmd.args(["fleet", "clean"]);
            if how == "KUBECONFIG" {
                cmd.env("KUBECONFIG", file)
                    .env_remove("KUBERNETES_SERVICE_HOST");
            } else {
                cmd.arg("--kubeconfig").arg(file);
            }
            let err = cmd.stderr_of_exit(2);
            assert!(!err.contains("s3cr3t"), "{how}: {err}");
            assert!(!err.contains("root:x"), "{how}: {err}");
            assert!(err.contains(file.to_str().unwrap()), "{how}: {err}");
            assert!(err.contains("not a kubeconfig"), "{how}: {err}");
        }
    }
}

/// A plain-HTTP server on loopback that answers GET /version as a Kubernetes API server does
/// and holds every other request without an answer: a server that stopped answering after the
/// first request (hung, or a network path that drops packets). Returns its port.
fn server_that_stops_after_its_version() -> u16 {
    use disktier_testkit::fake_api::{self, Reply};
    fake_api::serve(|req| {
        if req.method == "GET" && req.path.starts_with("/version") {
            Reply::Json(fake_api::VERSION_1_20.into())
        } else {
            Reply::Hold
        }
    })
}

/// QA: an API server that answered the first request and then stopped answering held `fleet
/// run` past its --timeout and `fleet clean` for good (kube sets no time limit on a request; a
/// loopback proxy to the test cluster that stopped forwarding: still running 85 s past a 5 s
/// --timeout, until killed). Every request now has one (here 2 s), and the error says what
/// happened.
#[test]
fn a_server_that_stops_answering_midway_is_given_up_on() {
    let port = server_that_stops_after_its_version();
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_for(dir.path(), &format!("http://127.0.0.1:{port}"));
    for args in [
        &["fleet", "clean"][..],
        &["fleet", "run", "--nodes", "a", "--", "check", "etcd", "/x"],
    ] {
        let started = std::time::Instant::now();
        let err = disktier()
            .env("KUBECONFIG", &kc)
            .env("DISKTIER_KUBE_TIMEOUT_MS", "2000")
            .args(args)
            .timeout(std::time::Duration::from_secs(60))
            .stderr_of_exit(2);
        assert!(
            err.contains("the API server sent no answer within 2 s")
                && err.contains("reading namespace disktier") == (args[1] == "run"),
            "{args:?}: {err}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{args:?}"
        );
    }
}

/// QA: Ctrl-C while `fleet run` looked at a slow cluster (namespace, permissions, nodes) was
/// held until the Jobs were made, which were then deleted again (or, with a server that no
/// longer answered, was never acted on). It now ends the run at once, before anything is made.
#[test]
fn ctrl_c_before_any_job_is_made_ends_the_run_at_once() {
    let port = server_that_stops_after_its_version();
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_for(dir.path(), &format!("http://127.0.0.1:{port}"));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("disktier"))
        .env("KUBECONFIG", &kc)
        .env("DISKTIER_DB", "/nonexistent/fleet-never-saves.db")
        .args(["fleet", "run", "--nodes", "a", "--", "check", "etcd", "/x"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The server answered its version at once; the run now waits on the namespace.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let sent = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if sent.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("fleet run was still there 20 s after Ctrl-C");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: interrupted by Ctrl-C before any Job was made: nothing to clean up"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// QA: a kubeconfig whose token had expired gave "reading namespace disktier: Unauthorized
/// (401 Unauthorized)" (`fleet clean`: "listing Jobs in namespace disktier: ..."), naming
/// neither the credentials nor the fix. The server here is plain HTTP on loopback, answering
/// every request 401 as an API server does to a token it does not know.
#[test]
fn credentials_the_server_refuses_are_named_with_the_fix() {
    let port = server_answering_every_request(
        "401 Unauthorized",
        "application/json",
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_for(dir.path(), &format!("http://127.0.0.1:{port}"));
    for (args, err) in errors_of_every_api_call(&kc) {
        assert!(
            err.contains(&format!(
                "the API server at http://127.0.0.1:{port}/ does not accept this client's credentials (401 Unauthorized)"
            )) && err.contains("kubectl create token"),
            "{args:?}: {err}"
        );
    }
}
