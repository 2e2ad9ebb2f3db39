//! `disktier fleet` against the real single-node test cluster (scripts/kube-up.sh; Kubernetes
//! 1.20). scripts/test.sh exports its kubeconfig as DISKTIER_TEST_KUBECONFIG; without it every
//! test here prints why it is skipped (and fails under CI, which must run them).
//!
//! The real node runs the disktier image; extra Node objects with no kubelet behind them stand
//! for the rest of a fleet (their pods never start, which exercises the deadline path). Every
//! test works in a namespace and on nodes of its own, so the tests run in parallel.
//!
//! The cluster helpers are testkit's `kube` module; [`Fleet`] below adds a store of the
//! test's own and the `disktier fleet run` calls every test makes.

use assert_cmd::cargo::CommandCargoExt;
use disktier_testkit::cli::{output_with_stdin, stdout_ok};
use disktier_testkit::kube::{self, Cluster, FakeNode, FakeNodeSpec, Namespace};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::{Duration, Instant};

const MANAGED: &str = "app.kubernetes.io/managed-by=disktier";

/// The node command most tests give: it never gets to run on a fake node.
const CHECK_ETCD: &[&str] = &["check", "etcd", "/var/lib/etcd"];

/// A test's cluster and a store of its own: what every test here starts from.
struct Fleet {
    c: Cluster,
    db: PathBuf,
    _store: tempfile::TempDir,
}

impl Fleet {
    /// The test cluster with a fresh store; `None` (the test returns) without a cluster.
    fn new() -> Option<Fleet> {
        let c = Cluster::from_env()?;
        let store = tempfile::tempdir().unwrap();
        Some(Fleet {
            c,
            db: store.path().join("r.db"),
            _store: store,
        })
    }

    /// [`Fleet::new`] for a test that runs the disktier image on the real node: `None` also
    /// where the node lacks the image.
    fn with_image() -> Option<Fleet> {
        let f = Fleet::new()?;
        let image = kube::disktier_image();
        disktier_testkit::require(
            f.c.has_image(&image),
            &format!(
                "the image {image} on the test node (kube-up imports target/image/disktier-oci.tar)"
            ),
        )
        .then_some(f)
    }

    /// `disktier` with the test cluster and the test's store.
    fn disktier(&self) -> Command {
        let mut cmd = Command::cargo_bin("disktier").unwrap();
        cmd.env("KUBECONFIG", self.c.kubeconfig())
            .env("DISKTIER_DB", &self.db);
        cmd
    }

    /// `fleet run --format json ARGS`, timed.
    fn run(&self, args: &[&str]) -> Ran {
        let t0 = Instant::now();
        let out = self
            .disktier()
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

    /// [`Fleet::run`] of `command` on `node` in `ns`, with `timeout`.
    fn run_on(&self, node: &str, ns: &Namespace, timeout: &str, command: &[&str]) -> Ran {
        self.run(&run_args(ns, &["--nodes", node], timeout, command))
    }

    /// `fleet run ARGS` (text output) started with its stderr piped, read until a line
    /// contains `marker`.
    fn spawn_until(&self, args: &[&str], marker: &str) -> Running {
        let child = self
            .disktier()
            .args(["fleet", "run"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut run = Running::new(child);
        run.read_until(marker);
        run
    }

    /// `fleet run --dry-run OPTIONS -- COMMAND`, run to completion (nothing is applied).
    fn dry_run(&self, options: &[&str], command: &[&str]) -> Output {
        self.disktier()
            .args(["fleet", "run", "--dry-run"])
            .args(options)
            .arg("--")
            .args(command)
            .output()
            .unwrap()
    }

    /// The runs the store holds for fleet run `id` (`history --group`).
    fn history(&self, id: &str) -> Value {
        let out = self
            .disktier()
            .args(["history", "--group", id, "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Jobs and pods fleet made in a namespace.
    fn ours(&self, ns: &Namespace) -> Vec<String> {
        let out = self.c.kubectl_ok(&[
            "get",
            "jobs,pods",
            "-n",
            &ns.name,
            "-l",
            MANAGED,
            "-o",
            "name",
        ]);
        out.lines().map(str::to_string).collect()
    }

    /// A Node object with no kubelet behind it, as `edit` makes it (from a Ready, schedulable
    /// worker).
    fn fake(&self, edit: impl FnOnce(&mut FakeNodeSpec)) -> FakeNode {
        let mut spec = FakeNodeSpec::new(&kube::unique_name("fleet-fake"));
        edit(&mut spec);
        self.c.add_fake_node(&spec)
    }

    /// A Ready, schedulable fake node.
    fn fake_node(&self) -> FakeNode {
        self.fake(|_| {})
    }
}

/// A test that runs the disktier image on the real node: its [`Fleet`], a namespace, the
/// node's name and a directory on it.
struct OnNode {
    f: Fleet,
    ns: Namespace,
    node: String,
    dir: tempfile::TempDir,
}

impl OnNode {
    /// `None` (the test returns) without a cluster or without the image on its node.
    fn new(ns_prefix: &str) -> Option<OnNode> {
        let f = Fleet::with_image()?;
        Some(OnNode {
            ns: f.c.namespace(ns_prefix),
            node: f.c.node(),
            dir: node_dir(),
            f,
        })
    }

    /// The directory on the node.
    fn path(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }

    /// The arguments of `fleet run` of `command` on the node in the test's namespace.
    fn args<'a>(&'a self, timeout: &'a str, command: &[&'a str]) -> Vec<&'a str> {
        run_args(&self.ns, &["--nodes", &self.node], timeout, command)
    }

    /// [`Fleet::run`] of `command` on the node in the test's namespace.
    fn run(&self, timeout: &str, command: &[&str]) -> Ran {
        self.f.run(&self.args(timeout, command))
    }

    /// Jobs and pods fleet made in the test's namespace.
    fn ours(&self) -> Vec<String> {
        self.f.ours(&self.ns)
    }
}

/// The arguments of `fleet run` in `ns` with `options` (which nodes, and how), `timeout`, and
/// `command` for the nodes: `-n NS OPTIONS --timeout TIMEOUT -- COMMAND`.
fn run_args<'a>(
    ns: &'a Namespace,
    options: &[&'a str],
    timeout: &'a str,
    command: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["-n", ns.name.as_str()];
    args.extend(options);
    args.extend(["--timeout", timeout, "--"]);
    args.extend(command);
    args
}

/// A `fleet run` in the background, its stderr read line by line.
struct Running {
    child: Child,
    err: BufReader<ChildStderr>,
    /// The stderr read so far.
    seen: String,
}

impl Running {
    fn new(mut child: Child) -> Running {
        let err = BufReader::new(child.stderr.take().unwrap());
        Running {
            child,
            err,
            seen: String::new(),
        }
    }

    /// Reads stderr up to a line that contains `marker`; fails when the run ends before.
    fn read_until(&mut self, marker: &str) {
        loop {
            let mut line = String::new();
            let seen = &self.seen;
            assert!(
                self.err.read_line(&mut line).unwrap() > 0,
                "ended early: {seen}"
            );
            self.seen.push_str(&line);
            if line.contains(marker) {
                return;
            }
        }
    }

    /// Sends `signal` and reads the rest of stderr: the exit code and that rest.
    fn interrupt(mut self, signal: libc::c_int) -> (Option<i32>, String) {
        // kill(2) on the pid of a child this test spawned and has not reaped.
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        let signal = rustix::process::Signal::from_named_raw(signal).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.err, &mut rest).unwrap();
        (self.child.wait().unwrap().code(), rest)
    }

    /// Waits for the run to end: its exit code, the rest of stderr and all of stdout.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.err, &mut rest).unwrap();
        let mut out = String::new();
        let mut stdout = self.child.stdout.take().unwrap();
        std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
        (self.child.wait().unwrap().code(), rest, out)
    }

    /// Closes the read end of the run's stderr (as `2>&1 | head` does once head has its
    /// lines) and waits for the run to end: its exit code and stdout.
    fn close_stderr_and_wait(mut self) -> (Option<i32>, String) {
        drop(self.err);
        let mut out = String::new();
        let mut stdout = self.child.stdout.take().unwrap();
        std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
        (self.child.wait().unwrap().code(), out)
    }
}

/// A label pair as [`FakeNodeSpec::labels`] holds it.
fn label(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

struct Ran {
    code: i32,
    json: Value,
    stderr: String,
    seconds: f64,
}

fn node_dir() -> tempfile::TempDir {
    // The node is this machine: a directory here is a directory on the node.
    tempfile::Builder::new()
        .prefix("disktier-fleet-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

#[test]
fn a_run_on_the_node_is_stored_and_leaves_nothing_behind() {
    let Some(t) = OnNode::new("fleet-ok") else {
        return;
    };
    let path = t.path();
    let r = t.run("180s", &["check", "etcd", path, "--quick"]);
    let n = &r.json["nodes"][0];
    assert!(
        n["status"] == "pass" || n["status"] == "fail",
        "the node was measured: {n}\n{}",
        r.stderr
    );
    assert_eq!(r.code, if n["status"] == "pass" { 0 } else { 1 });
    assert_eq!(n["node"], t.node.as_str());
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
    let h = t.f.history(id);
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{h}");
    assert_eq!(runs[0]["hostname"], t.node.as_str());
    assert_eq!(runs[0]["kind"], "check");
    let out =
        t.f.disktier()
            .args(["show", runs[0]["id"].as_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains(id),
        "the stored document names its fleet run: {shown}"
    );
    assert_eq!(t.ours(), Vec::<String>::new());
    // The node command removed its test file.
    assert_eq!(std::fs::read_dir(t.dir.path()).unwrap().count(), 0);
}

#[test]
fn a_failed_verdict_exits_1_and_a_failing_command_exits_2_with_its_error() {
    let Some(t) = OnNode::new("fleet-fail") else {
        return;
    };
    let path = t.path();
    let r = t.run(
        "180s",
        &["check", "etcd", path, "--quick", "--threshold", "1ns"],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.json, r.stderr);
    assert_eq!(r.json["nodes"][0]["status"], "fail");
    assert_eq!(r.json["nodes"][0]["verdict"], "fail");
    assert_eq!(t.ours(), Vec::<String>::new());
    // The node command refuses its options: exit 2, its own error as the reason.
    let r = t.run("180s", &["check", "etcd", path, "--threshold", "0ms"]);
    assert_eq!(r.code, 2);
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("--threshold 0"), "{reason}");
    assert_eq!(t.ours(), Vec::<String>::new());
}

#[test]
fn a_missing_image_is_reported_within_seconds() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-img");
    let dir = node_dir();
    let node = f.c.node();
    let image = ["--nodes", &node, "--image", "localhost/disktier-missing:0"];
    let check = ["check", "etcd", dir.path().to_str().unwrap()];
    let r = f.run(&run_args(&ns, &image, "300s", &check));
    assert_eq!(r.code, 2);
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("ErrImagePull") || reason.starts_with("ImagePullBackOff"),
        "{reason}"
    );
    assert!(reason.contains("localhost/disktier-missing:0"), "{reason}");
    // Seconds, not the 300 s deadline (cleanup included).
    assert!(r.seconds < 60.0, "took {:.1} s", r.seconds);
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

#[test]
fn a_deadline_is_reported_and_cleaned_up() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-deadline");
    let fake = f.fake_node();
    let r = f.run_on(&fake.name, &ns, "4s", CHECK_ETCD);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("deadline exceeded"), "{reason}");
    assert!(reason.contains("never started"), "{reason}");
    assert!(r.seconds < 60.0, "took {:.1} s", r.seconds);
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

/// The `: pending` and `: done` lines of a run's progress on stderr, in order.
fn job_events(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(": pending") || l.contains(": done"))
        .collect()
}

#[test]
fn selection_skips_not_ready_and_cordoned_and_runs_in_parallel() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-sel");
    let group = kube::unique_name("grp");
    let in_group = label("disktier.test/group", &group);
    let ready: Vec<FakeNode> = (0..3)
        .map(|_| {
            f.fake(|s| {
                s.labels = vec![
                    in_group.clone(),
                    label("node.kubernetes.io/instance-type", "m6id.xlarge"),
                    label("topology.kubernetes.io/zone", "eu-north-1a"),
                ]
            })
        })
        .collect();
    let not_ready = f.fake(|s| {
        s.ready = false;
        s.labels = vec![in_group.clone()];
    });
    let cordoned = f.fake(|s| {
        s.unschedulable = true;
        s.labels = vec![in_group.clone()];
    });
    let selector = format!("disktier.test/group={group}");
    let parallel = ["--selector", &selector, "--parallel", "3"];
    let r = f.run(&run_args(&ns, &parallel, "4s", CHECK_ETCD));
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
    for fake in &ready {
        let n = by(&fake.name);
        assert_eq!(n["status"], "error");
        assert_eq!(n["instance_type"], "m6id.xlarge");
        assert_eq!(n["zone"], "eu-north-1a");
    }
    // All three Jobs were created before any finished: --parallel 3 ran them together.
    let events = job_events(&r.stderr);
    assert_eq!(events.len(), 6, "{}", r.stderr);
    assert!(
        events[..3].iter().all(|l| l.contains(": pending")),
        "{events:?}"
    );
    assert_eq!(r.json["summary"]["skipped"], 2);
    assert_eq!(f.ours(&ns), Vec::<String>::new());

    // --parallel 1: each Job ends before the next starts.
    let r = f.run(&run_args(&ns, &["--selector", &selector], "3s", CHECK_ETCD));
    let events = job_events(&r.stderr);
    for pair in events.chunks(2) {
        assert!(
            pair[0].contains(": pending") && pair[1].contains(": done"),
            "{events:?}"
        );
    }
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

/// Starts a run on a node whose pod never starts, waits until its Job exists, sends `signal`,
/// and checks that nothing is left.
fn interrupted_midway(signal: libc::c_int, name: &str) {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-sig");
    let fake = f.fake_node();
    let args = run_args(&ns, &["--nodes", &fake.name], "300s", CHECK_ETCD);
    let run = f.spawn_until(&args, ": pending");
    assert_eq!(
        f.ours(&ns).iter().filter(|o| o.starts_with("job")).count(),
        1
    );
    let seen = run.seen.clone();
    let (code, rest) = run.interrupt(signal);
    assert_eq!(code, Some(2), "{seen}{rest}");
    assert!(rest.contains(&format!("interrupted by {name}")), "{rest}");
    assert_eq!(f.ours(&ns), Vec::<String>::new(), "{rest}");
}

#[test]
fn ctrl_c_while_the_node_command_runs_stops_it_and_leaves_nothing() {
    let Some(t) = OnNode::new("fleet-sigrun") else {
        return;
    };
    let bench = [
        "bench",
        t.path(),
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
    ];
    let run = t.f.spawn_until(&t.args("300s", &bench), ": running");
    // The engine has created its file on the node.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(t.dir.path()).unwrap().count() == 0 {
        assert!(Instant::now() < deadline, "the node command made no file");
        std::thread::sleep(Duration::from_millis(100));
    }
    let seen = run.seen.clone();
    let (code, rest) = run.interrupt(libc::SIGINT);
    assert_eq!(code, Some(2), "{seen}{rest}");
    assert_eq!(t.ours(), Vec::<String>::new(), "{rest}");
    // The pod was given its grace period: the node command stopped and removed its file.
    assert_eq!(
        std::fs::read_dir(t.dir.path()).unwrap().count(),
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

/// QA: SIGHUP (an ssh session that drops) ended the run at once with 129, leaving its Job
/// and Pod behind.
#[test]
fn sighup_midway_leaves_nothing_behind() {
    interrupted_midway(libc::SIGHUP, "SIGHUP");
}

#[test]
fn sigquit_midway_leaves_nothing_behind() {
    interrupted_midway(libc::SIGQUIT, "SIGQUIT");
}

/// QA: `fleet run ... 2>&1 | head -n 2` ended with exit 0 at the first progress line after
/// head left (the line's `eprintln!` panicked): nothing saved, Jobs and Pods left behind.
#[test]
fn a_closed_stderr_neither_ends_the_run_nor_leaves_anything_behind() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-pipe");
    let fake = f.fake_node();
    let mut args = vec!["--format", "json"];
    args.extend(run_args(&ns, &["--nodes", &fake.name], "4s", CHECK_ETCD));
    let run = f.spawn_until(&args, ": pending");
    let (code, out) = run.close_stderr_and_wait();
    assert_eq!(code, Some(2), "{out}");
    let json: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let reason = json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("deadline exceeded"), "{reason}");
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

/// `kubectl taint node NODE TAINT`.
fn taint(c: &Cluster, node: &str, taint: &str) {
    c.kubectl_ok(&["taint", "node", node, taint]);
}

/// QA: a node tainted NoExecute was measured; the taint manager evicted each pod and the Job
/// controller made a new one at once, about ten a second until the deadline.
#[test]
fn a_no_execute_taint_skips_the_node_unless_tolerated() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-taint");
    let fake = f.fake_node();
    taint(&f.c, &fake.name, "disktier.test/qa=x:NoExecute");
    let r = f.run_on(&fake.name, &ns, "3s", CHECK_ETCD);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let n = &r.json["nodes"][0];
    assert_eq!(n["status"], "skipped", "{n}");
    let reason = n["reason"].as_str().unwrap();
    assert!(
        reason.contains("disktier.test/qa=x:NoExecute") && reason.contains("--tolerate-all"),
        "{reason}"
    );
    assert_eq!(f.ours(&ns), Vec::<String>::new());
    // Tolerated: measured (its pod never starts on a node with no kubelet: the deadline).
    let tolerate = ["--nodes", &fake.name, "--tolerate-all"];
    let r = f.run(&run_args(&ns, &tolerate, "3s", CHECK_ETCD));
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("deadline exceeded"), "{reason}");
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

/// A NoExecute taint that appears while the node's pod waits: the eviction is reported in
/// seconds with the taint, not at the 300 s deadline, and the Job is deleted at once.
#[test]
fn a_no_execute_taint_midway_is_an_eviction_reported_in_seconds() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-evict");
    let fake = f.fake_node();
    let mut args = vec!["--format", "json"];
    args.extend(run_args(&ns, &["--nodes", &fake.name], "300s", CHECK_ETCD));
    let run = f.spawn_until(&args, ": pending");
    let t0 = Instant::now();
    taint(&f.c, &fake.name, "disktier.test/qa=x:NoExecute");
    let (code, rest, out) = run.finish();
    assert_eq!(code, Some(2), "{rest}{out}");
    // Well inside the 300 s deadline. The taint manager of a cluster sharing two CPUs with the
    // rest of the test suite once took 90 s to act (session 17's CI), so the bound is 150 s.
    assert!(
        t0.elapsed() < Duration::from_secs(150),
        "took {:?}: {rest}{out}",
        t0.elapsed()
    );
    let json: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let reason = json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("evicted by the taint manager"), "{reason}");
    assert!(reason.contains("disktier.test/qa=x:NoExecute"), "{reason}");
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

/// QA: a node path that does not exist waited the whole --timeout in ContainerCreating,
/// though the kubelet said why (FailedMount) within a second.
#[test]
fn a_missing_node_path_is_a_failed_mount_reported_in_seconds() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-mount");
    let node = f.c.node();
    let dir = node_dir();
    let missing = dir.path().join("typo");
    let missing = missing.to_str().unwrap();
    let r = f.run_on(&node, &ns, "300s", &["check", "etcd", missing]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let reason = r.json["nodes"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("FailedMount"), "{reason}");
    assert!(reason.contains(missing), "{reason}");
    assert!(r.seconds < 60.0, "took {:.1} s", r.seconds);
    assert_eq!(f.ours(&ns), Vec::<String>::new());
    assert!(!Path::new(missing).exists(), "the mount created the path");
}

/// QA: `qa.dot` and `qa-dot` got one Job name: with --parallel 2 the second node failed with
/// AlreadyExists.
#[test]
fn nodes_whose_names_differ_only_in_dot_and_dash_are_both_measured() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-dots");
    let base = kube::unique_name("fleet-fake");
    let group = kube::unique_name("grp");
    // In the order the run sorts them: `-` before `.`.
    let nodes: Vec<FakeNode> = [format!("{base}-dot"), format!("{base}.dot")]
        .iter()
        .map(|name| {
            let mut spec = FakeNodeSpec::new(name);
            spec.labels = vec![label("disktier.test/group", &group)];
            f.c.add_fake_node(&spec)
        })
        .collect();
    let selector = format!("disktier.test/group={group}");
    let both = ["--selector", &selector, "--parallel", "2"];
    let r = f.run(&run_args(&ns, &both, "3s", CHECK_ETCD));
    let got = r.json["nodes"].as_array().unwrap();
    assert_eq!(got.len(), 2, "{}", r.json);
    for (n, fake) in got.iter().zip(&nodes) {
        assert_eq!(n["node"], fake.name.as_str());
        let reason = n["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("deadline exceeded"),
            "{}: {reason}",
            fake.name
        );
    }
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

#[test]
fn clean_removes_planted_leftovers_and_a_new_run_reports_them() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-clean");
    let fake = f.fake_node();
    // A killed run's Job (and its never-starting pod), planted from fleet's own manifest.
    let planted = [
        "--nodes",
        &fake.name,
        "-n",
        &ns.name,
        "--run-id",
        "20261124-000000-dead00",
    ];
    let yaml = f.dry_run(&planted, CHECK_ETCD).stdout;
    f.c.create(&String::from_utf8(yaml).unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f.ours(&ns).iter().any(|o| o.starts_with("pod/")) {
        assert!(Instant::now() < deadline, "the Job controller made no pod");
        std::thread::sleep(Duration::from_millis(200));
    }
    // A new run says so.
    let other = f.fake_node();
    let r = f.run_on(&other.name, &ns, "2s", CHECK_ETCD);
    assert!(
        r.stderr.contains("20261124-000000-dead00") && r.stderr.contains("fleet clean"),
        "{}",
        r.stderr
    );
    // Its own objects are gone, the planted ones are still there.
    assert!(!f.ours(&ns).is_empty());
    let out = f
        .disktier()
        .args(["fleet", "clean", "-n", &ns.name])
        .output()
        .unwrap();
    let text = stdout_ok(&out);
    assert!(text.contains("deleted job/disktier-dead00-"), "{text}");
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

/// `kubectl apply --dry-run=server` of `yaml`, which must succeed: what it printed.
fn server_dry_run(c: &Cluster, yaml: &str) -> String {
    let out = c.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], Some(yaml));
    assert!(
        out.success,
        "kubectl apply --dry-run=server -f -: {}{}",
        out.stderr, out.stdout
    );
    out.stdout
}

#[test]
fn dry_run_output_is_accepted_by_the_server() {
    let Some(f) = Fleet::new() else { return };
    let ns = f.c.namespace("fleet-dry");
    for command in [
        CHECK_ETCD.to_vec(),
        vec!["bench", "/dev/nvme1n1", "--rw", "randread"],
    ] {
        let out = f.dry_run(
            &["--nodes", "a,b.example", "-n", &ns.name, "--tolerate-all"],
            &command,
        );
        assert!(out.status.success());
        let yaml = String::from_utf8(out.stdout).unwrap();
        let applied = server_dry_run(&f.c, &yaml);
        assert_eq!(
            applied.matches("created (server dry run)").count(),
            2,
            "{applied}"
        );
    }
    let rbac = f
        .disktier()
        .args(["fleet", "rbac", "-n", &ns.name])
        .output()
        .unwrap()
        .stdout;
    server_dry_run(&f.c, &String::from_utf8(rbac).unwrap());
    // The selection form reads nodes (and only reads): the real node's Job is printed.
    let out = f.dry_run(&["--all-nodes", "-n", &ns.name], CHECK_ETCD);
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert!(
        yaml.contains(&format!("nodeName: {}", f.c.node())),
        "{yaml}"
    );
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

#[test]
fn a_missing_namespace_says_how_to_create_it() {
    let Some(f) = Fleet::new() else { return };
    let name = kube::unique_name("fleet-nons");
    let out = f
        .disktier()
        .args(["fleet", "run", "--nodes", "x", "-n", &name, "--"])
        .args(CHECK_ETCD)
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
    let Some(f) = Fleet::new() else { return };
    let cp = f.fake(|s| {
        s.labels = vec![label("node-role.kubernetes.io/control-plane", "")];
    });
    let old = f.fake(|s| s.labels = vec![label("node-role.kubernetes.io/master", "")]);
    let worker = f.fake_node();
    let out = f.dry_run(&["--control-plane"], CHECK_ETCD);
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
    let Some(f) = Fleet::new() else { return };
    let fake = f.fake_node();
    let ns = f.c.namespace_to_create("fleet-mkns");
    let create = ["--nodes", &fake.name, "--create-namespace"];
    let r = f.run(&run_args(&ns, &create, "2s", CHECK_ETCD));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.json["nodes"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("deadline exceeded"));
    f.c.kubectl_ok(&["get", "namespace", &ns.name]);
    assert_eq!(f.ours(&ns), Vec::<String>::new());
}

#[test]
fn prometheus_output_has_each_node_as_a_label_and_passes_promtool() {
    let Some(t) = OnNode::new("fleet-prom") else {
        return;
    };
    let promtool = Path::new("/usr/bin/promtool");
    if !disktier_testkit::require(promtool.exists(), "promtool (Debian package prometheus)") {
        return;
    }
    let textfiles = tempfile::tempdir().unwrap();
    let node = &t.node;
    let out =
        t.f.disktier()
            .args(["fleet", "run", "--format", "prometheus", "--textfile-dir"])
            .arg(textfiles.path())
            .args(t.args("180s", &["check", "etcd", t.path(), "--quick"]))
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
    let lint = output_with_stdin(Command::new(promtool).args(["check", "metrics"]), &text);
    assert!(
        lint.status.success(),
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    assert_eq!(t.ours(), Vec::<String>::new());
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
    let Some(t) = OnNode::new("fleet-metrics") else {
        return;
    };
    let url = format!("http://127.0.0.1:{}", cluster_etcd_port());
    let r = t.run("120s", &["check", "etcd", "--metrics", &url]);
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
    let h = t.f.history(id);
    assert_eq!(h["runs"].as_array().unwrap().len(), 1, "{h}");
    assert_eq!(h["runs"][0]["hostname"], t.node.as_str());
    assert_eq!(t.ours(), Vec::<String>::new());
}

/// A TCP forwarder on loopback to the test cluster's API server, which can be cut (every
/// connection closed, new ones refused) to stand for an API server that went away.
struct Cuttable {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Cuttable {
    fn to(upstream: std::net::SocketAddr) -> Cuttable {
        use std::net::{Shutdown, TcpListener, TcpStream};
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = cut.clone();
        std::thread::spawn(move || {
            let mut open: Vec<TcpStream> = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let Ok(server) = TcpStream::connect(upstream) else {
                            continue;
                        };
                        for (mut from, mut to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server.try_clone().unwrap(), client.try_clone().unwrap()),
                        ] {
                            std::thread::spawn(move || {
                                let _ = std::io::copy(&mut from, &mut to);
                                let _ = to.shutdown(Shutdown::Both);
                            });
                        }
                        open.extend([client, server]);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
            // The listener goes with this thread: new connections are refused.
            for s in open {
                let _ = s.shutdown(Shutdown::Both);
            }
        });
        Cuttable { port, cut }
    }

    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn an_api_server_gone_at_cleanup_keeps_the_results_and_names_fleet_clean() {
    // QA: a cleanup that could not list the run's Jobs failed the whole run ("listing Jobs in
    // namespace ...: Connection refused"): no table, and the node measured was never saved.
    let Some(t) = OnNode::new("fleet-gone") else {
        return;
    };
    let fake = t.f.fake_node();
    let text = std::fs::read_to_string(t.f.c.kubeconfig()).unwrap();
    let server = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://"))
        .unwrap()
        .to_string();
    let proxy = Cuttable::to(server.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let cut_config = dir.path().join("kubeconfig");
    std::fs::write(
        &cut_config,
        text.replace(&server, &format!("127.0.0.1:{}", proxy.port)),
    )
    .unwrap();
    let nodes = format!("{},{}", fake.name, t.node);
    let mut args = vec!["--kubeconfig", cut_config.to_str().unwrap()];
    args.extend(run_args(
        &t.ns,
        &["--nodes", &nodes, "--parallel", "2"],
        "300s",
        &["check", "etcd", t.path(), "--quick"],
    ));
    let mut run = t.f.spawn_until(&args, &format!("{}: done", t.node));
    // The real node is done, the fake one waits for a kubelet: the API server goes away, and
    // the run is stopped (its cleanup then finds no server).
    proxy.cut();
    let pid = rustix::process::Pid::from_raw(run.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    run.read_until("cleaning up");
    let seen = run.seen.clone();
    let (code, rest, out) = run.finish();
    assert_eq!(code, Some(2), "{seen}{rest}");
    let row = out.lines().find(|l| l.starts_with(t.node.as_str()));
    assert!(
        row.is_some_and(|r| r.contains("pass") || r.contains("FAIL")),
        "the measured node is in the table: {out}\n{seen}{rest}"
    );
    assert!(
        rest.contains("could not be deleted")
            && rest.contains(&format!("disktier fleet clean -n {} --run ", t.ns.name)),
        "{rest}"
    );
    let id = seen
        .lines()
        .find_map(|l| l.strip_prefix("fleet run "))
        .and_then(|l| l.split(':').next())
        .unwrap();
    let h = t.f.history(id);
    let runs = h["runs"].as_array().unwrap();
    let measured: Vec<_> = runs.iter().filter(|r| r["kind"] != "unmeasured").collect();
    assert_eq!(measured.len(), 1, "the measured node is saved: {h}");
    assert_eq!(measured[0]["hostname"], t.node.as_str());
    // The node stopped before it gave a result is kept with the run as not measured.
    assert!(
        runs.iter()
            .any(|r| r["kind"] == "unmeasured" && r["hostname"] == fake.name.as_str()),
        "{h}"
    );
    // The fix it names works once the server answers.
    let out =
        t.f.disktier()
            .args(["fleet", "clean", "-n", &t.ns.name, "--run", id])
            .output()
            .unwrap();
    stdout_ok(&out);
    assert_eq!(t.ours(), Vec::<String>::new());
}
