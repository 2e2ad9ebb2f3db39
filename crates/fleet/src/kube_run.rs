//! The client side of a fleet run: connect, check the namespace, report leftovers, select the
//! nodes, create at most `parallel` Jobs at once, watch their pods (an image that cannot be
//! pulled is reported as soon as the kubelet says so, not at the deadline), read each result
//! from the pod's log, and delete everything the run made — on success, failure, deadline,
//! Ctrl-C and SIGTERM alike.

use crate::error::{FleetError, Result};
use crate::manifest::{self, JobConfig, CONTAINER, NODE_ANNOTATION, RUN_LABEL};
use crate::result::{self, MAX_LOG_BYTES};
use crate::select::{self, Candidate, Selection, CONTROL_PLANE_LABELS};
use crate::summary::{NodeReport, Status};
use futures::{Stream, StreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Client, Config};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// Where the cluster is: `--kubeconfig` (else `KUBECONFIG`, `~/.kube/config`, in-cluster) and
/// `--context`.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
}

/// Container waiting reasons that will not resolve by waiting (kubelet's image manager and
/// runtime errors): the node is reported at once instead of at the deadline.
const FATAL_WAITING: [&str; 7] = [
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// How long the client waits past `activeDeadlineSeconds` before it ends a node itself. The
/// client enforces the deadline because a 1.20 Job controller checks it only when something
/// else makes it look at the Job: with 20 Jobs at once, some of them were still active a
/// minute past their deadline on the test cluster (bench/fleet.sh).
const DEADLINE_GRACE: Duration = Duration::from_secs(3);

/// How long cleanup waits for the objects it deleted to be gone.
const CLEANUP_WAIT: Duration = Duration::from_secs(90);

/// What a run reports while it goes, for the live progress on stderr.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Jobs from earlier runs found in the namespace.
    Leftovers {
        jobs: usize,
        runs: Vec<String>,
    },
    Skipped {
        node: &'a str,
        reason: &'a str,
    },
    /// The Job was created; its pod is pending.
    Created {
        node: &'a str,
        job: &'a str,
    },
    Running {
        node: &'a str,
    },
    Done(&'a NodeReport),
    /// Cleanup started (why: "done", "Ctrl-C", "SIGTERM").
    Cleaning {
        why: &'a str,
    },
}

/// What a run asks for.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub job: JobConfig,
    pub selection: Selection,
    /// Nodes measured at once (at least 1).
    pub parallel: usize,
    pub create_namespace: bool,
}

/// What a run found.
#[derive(Debug)]
pub struct RunOutcome {
    pub run_id: String,
    /// One per selected node, sorted by name.
    pub nodes: Vec<NodeReport>,
    /// `Some("Ctrl-C")` or `Some("SIGTERM")` when a signal stopped the run.
    pub interrupted: Option<&'static str>,
    /// Objects cleanup could not delete (normally empty).
    pub left_behind: Vec<String>,
}

/// Runs `f` on a single-threaded runtime: the client is I/O bound and the CLI is synchronous.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(FleetError::Runtime)?;
    Ok(rt.block_on(f))
}

/// A client from the options (must be called inside the runtime).
pub async fn client(opts: &ClientOptions) -> Result<Client> {
    let kopts = KubeConfigOptions {
        context: opts.context.clone(),
        ..Default::default()
    };
    let config = match &opts.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path).map_err(|err| FleetError::Kubeconfig {
                path: path.clone(),
                err,
            })?;
            Config::from_custom_kubeconfig(kc, &kopts)
                .await
                .map_err(FleetError::Config)?
        }
        None if opts.context.is_some() => Config::from_kubeconfig(&kopts)
            .await
            .map_err(FleetError::Config)?,
        None => Config::infer().await.map_err(FleetError::NoConfig)?,
    };
    Client::try_from(config).map_err(FleetError::Client)
}

fn is_status(e: &kube::Error, f: impl Fn(&kube::core::Status) -> bool) -> bool {
    matches!(e, kube::Error::Api(s) if f(s))
}

/// Fails with the fix when the namespace is missing (or creates it with `create`). A client
/// that may not read namespaces (the minimal RBAC) goes on: creating the Jobs will say.
pub async fn ensure_namespace(client: &Client, ns: &str, create: bool) -> Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    match api.get_opt(ns).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) if create => match api
            .create(&PostParams::default(), &manifest::namespace(ns))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_status(&e, |s| s.is_already_exists()) => Ok(()),
            Err(e) => Err(FleetError::api(format!("creating namespace {ns}"), e)),
        },
        Ok(None) => Err(FleetError::NoNamespace(ns.to_string())),
        Err(e) if is_status(&e, |s| s.is_forbidden()) => Ok(()),
        Err(e) => Err(FleetError::api(format!("reading namespace {ns}"), e)),
    }
}

/// The nodes a selection names, as the API has them.
pub async fn fetch_nodes(client: &Client, sel: &Selection) -> Result<Vec<Node>> {
    let api: Api<Node> = Api::all(client.clone());
    let list = |lp: ListParams| {
        let api = api.clone();
        async move {
            api.list(&lp)
                .await
                .map(|l| l.items)
                .map_err(|e| FleetError::api("listing nodes", e))
        }
    };
    match sel {
        Selection::Names(names) => {
            let mut out = Vec::new();
            for n in names {
                if let Some(node) = api
                    .get_opt(n)
                    .await
                    .map_err(|e| FleetError::api(format!("reading node {n}"), e))?
                {
                    out.push(node);
                }
            }
            Ok(out)
        }
        Selection::Selector(s) => list(ListParams::default().labels(s)).await,
        Selection::ControlPlane => {
            let mut out = Vec::new();
            for key in CONTROL_PLANE_LABELS {
                out.extend(list(ListParams::default().labels(key)).await?);
            }
            Ok(out)
        }
        Selection::All => list(ListParams::default()).await,
    }
}

/// The candidates of a selection; an empty result is an error that names the selection.
pub async fn select(client: &Client, sel: &Selection) -> Result<Vec<Candidate>> {
    let nodes = fetch_nodes(client, sel).await?;
    let c = select::candidates(sel, &nodes);
    if c.is_empty() {
        return Err(FleetError::NoNodes(sel.describe()));
    }
    Ok(c)
}

/// Jobs and pods any fleet run left in the namespace: `(jobs, pods, run ids)`.
pub async fn leftovers(
    client: &Client,
    ns: &str,
) -> Result<(Vec<String>, Vec<String>, Vec<String>)> {
    let lp = ListParams::default().labels(&manifest::managed_selector());
    let jobs = Api::<Job>::namespaced(client.clone(), ns)
        .list_metadata(&lp)
        .await
        .map_err(|e| FleetError::api(format!("listing Jobs in namespace {ns}"), e))?;
    let pods = Api::<Pod>::namespaced(client.clone(), ns)
        .list_metadata(&lp)
        .await
        .map_err(|e| FleetError::api(format!("listing Pods in namespace {ns}"), e))?;
    let metas = jobs
        .items
        .into_iter()
        .map(|m| ("job", m.metadata))
        .chain(pods.items.into_iter().map(|m| ("pod", m.metadata)));
    let (mut job_names, mut pod_names, mut runs) = (Vec::new(), Vec::new(), Vec::new());
    for (kind, m) in metas {
        if let Some(r) = m.labels.as_ref().and_then(|l| l.get(RUN_LABEL)) {
            runs.push(r.clone());
        }
        let Some(name) = m.name else { continue };
        if kind == "job" {
            job_names.push(name);
        } else {
            pod_names.push(name);
        }
    }
    runs.sort();
    runs.dedup();
    Ok((job_names, pod_names, runs))
}

/// What `fleet clean` deleted, and what was still there when it gave up waiting.
#[derive(Debug, Default, serde::Serialize)]
pub struct CleanReport {
    pub jobs: Vec<String>,
    pub pods: Vec<String>,
    pub left_behind: Vec<String>,
}

/// Deletes the Jobs and Pods that match `selector` in `ns` and waits (bounded) until they are
/// gone. Jobs go with propagation Background (else their pods would be orphaned); pods that
/// never started go with grace period 0 (a pod on a node whose kubelet is gone would otherwise
/// wait for a kubelet that never confirms), running ones with their grace period so the node
/// command can stop and remove its test files.
pub async fn delete_matching(client: &Client, ns: &str, selector: &str) -> Result<CleanReport> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let lp = ListParams::default().labels(selector);
    let mut report = CleanReport::default();
    let job_list = jobs
        .list_metadata(&lp)
        .await
        .map_err(|e| FleetError::api(format!("listing Jobs in namespace {ns}"), e))?;
    for j in job_list.items {
        let Some(name) = j.metadata.name else {
            continue;
        };
        match jobs.delete(&name, &DeleteParams::background()).await {
            Ok(_) => report.jobs.push(name),
            Err(e) if is_status(&e, |s| s.is_not_found()) => {}
            Err(e) => return Err(FleetError::api(format!("deleting Job {ns}/{name}"), e)),
        }
    }
    let pod_list = pods
        .list(&lp)
        .await
        .map_err(|e| FleetError::api(format!("listing Pods in namespace {ns}"), e))?;
    for p in pod_list.items {
        let Some(name) = p.metadata.name.clone() else {
            continue;
        };
        let dp = if started(&p) {
            DeleteParams::background()
        } else {
            DeleteParams {
                grace_period_seconds: Some(0),
                ..DeleteParams::background()
            }
        };
        match pods.delete(&name, &dp).await {
            Ok(_) => report.pods.push(name),
            Err(e) if is_status(&e, |s| s.is_not_found()) => {}
            Err(e) => return Err(FleetError::api(format!("deleting Pod {ns}/{name}"), e)),
        }
    }
    report.left_behind = wait_gone(client, ns, selector, CLEANUP_WAIT).await?;
    Ok(report)
}

/// Whether any container of the pod ever ran (so it may hold files to clean up on the node).
fn started(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.state
                    .as_ref()
                    .is_some_and(|s| s.running.is_some() || s.terminated.is_some())
            })
        })
}

/// Polls until nothing matches the selector; returns what is left after `limit`.
async fn wait_gone(
    client: &Client,
    ns: &str,
    selector: &str,
    limit: Duration,
) -> Result<Vec<String>> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let lp = ListParams::default().labels(selector);
    let t0 = Instant::now();
    loop {
        let j = jobs
            .list_metadata(&lp)
            .await
            .map_err(|e| FleetError::api(format!("listing Jobs in namespace {ns}"), e))?;
        let p = pods
            .list_metadata(&lp)
            .await
            .map_err(|e| FleetError::api(format!("listing Pods in namespace {ns}"), e))?;
        let mut left: Vec<String> = j
            .items
            .into_iter()
            .filter_map(|m| m.metadata.name.map(|n| format!("job/{n}")))
            .collect();
        left.extend(
            p.items
                .into_iter()
                .filter_map(|m| m.metadata.name.map(|n| format!("pod/{n}"))),
        );
        if left.is_empty() || t0.elapsed() >= limit {
            return Ok(left);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// One node being measured.
struct Active {
    report: NodeReport,
    job: String,
    created: Instant,
    running: bool,
    /// The pod's last state in words, for the deadline message.
    last_state: String,
}

type Events<K> =
    Pin<Box<dyn Stream<Item = std::result::Result<watcher::Event<K>, watcher::Error>> + Send>>;

/// A whole fleet run. Returns the per-node reports even when a signal stopped it (the nodes
/// that finished keep their results); an `Err` means the run could not start or clean up.
pub async fn run(
    client: &Client,
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<RunOutcome> {
    let cfg = &spec.job;
    let ns = cfg.namespace.as_str();
    // Signals first: a Ctrl-C from here on is ours to handle (nothing exists to clean yet).
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(FleetError::Runtime)?;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);

    ensure_namespace(client, ns, spec.create_namespace).await?;
    let (old_jobs, old_pods, old_runs) = leftovers(client, ns).await?;
    if !old_jobs.is_empty() || !old_pods.is_empty() {
        progress(Progress::Leftovers {
            jobs: old_jobs.len().max(old_pods.len()),
            runs: old_runs,
        });
    }
    let candidates = select(client, &spec.selection).await?;

    let mut done: BTreeMap<String, NodeReport> = BTreeMap::new();
    let mut queue: VecDeque<Candidate> = VecDeque::new();
    for c in candidates {
        if let Some(reason) = &c.skip {
            progress(Progress::Skipped {
                node: &c.node,
                reason,
            });
            let mut r = NodeReport::new(&c.node, c.instance_type.clone(), c.zone.clone());
            r.status = Status::Skipped;
            r.reason = Some(reason.clone());
            done.insert(c.node.clone(), r);
        } else {
            queue.push_back(c);
        }
    }

    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = manifest::run_selector(&cfg.run_id);
    let wc = watcher::Config::default().labels(&selector);
    // A watch error (a dropped connection) is retried by the watcher; the backoff keeps a
    // persistent one (RBAC without `watch`) from spinning.
    let mut pod_events: Events<Pod> = watcher(pods.clone(), wc.clone()).default_backoff().boxed();
    let mut job_events: Events<Job> = watcher(jobs.clone(), wc).default_backoff().boxed();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut active: HashMap<String, Active> = HashMap::new();
    let mut interrupted = None;
    let parallel = spec.parallel.max(1);

    loop {
        while active.len() < parallel {
            let Some(c) = queue.pop_front() else { break };
            let job = manifest::job(cfg, &c.node);
            let name = job.metadata.name.clone().unwrap_or_default();
            let mut report = NodeReport::new(&c.node, c.instance_type.clone(), c.zone.clone());
            match jobs.create(&PostParams::default(), &job).await {
                Ok(_) => {
                    progress(Progress::Created {
                        node: &c.node,
                        job: &name,
                    });
                    active.insert(
                        c.node.clone(),
                        Active {
                            report,
                            job: name,
                            created: Instant::now(),
                            running: false,
                            last_state: "the pod was never created".into(),
                        },
                    );
                }
                Err(e) => {
                    report.reason = Some(format!(
                        "cannot create Job {ns}/{name}: {}",
                        crate::error::describe(&e)
                    ));
                    progress(Progress::Done(&report));
                    done.insert(c.node.clone(), report);
                }
            }
        }
        if active.is_empty() {
            break;
        }
        // What the event says has become of a node: (node, finished?).
        let mut finished: Vec<(String, Finish)> = Vec::new();
        tokio::select! {
            ev = pod_events.next() => {
                for pod in touched(ev) {
                    let Some(node) = node_of(&pod.metadata) else { continue };
                    let Some(a) = active.get_mut(&node) else { continue };
                    match judge_pod(&pod) {
                        PodState::Waiting(s) => a.last_state = s,
                        PodState::Running => {
                            a.last_state = "the container was running".into();
                            if !a.running {
                                a.running = true;
                                progress(Progress::Running { node: &node });
                            }
                        }
                        PodState::Fatal(reason) => finished.push((node, Finish::Error(reason))),
                        PodState::Terminated(t) => finished.push((node, Finish::Terminated(pod.metadata.name.clone().unwrap_or_default(), t))),
                    }
                }
            }
            ev = job_events.next() => {
                for job in touched(ev) {
                    let Some(node) = node_of(&job.metadata) else { continue };
                    let Some(a) = active.get(&node) else { continue };
                    if let Some((reason, message)) = job_failed(&job) {
                        let why = if reason == "DeadlineExceeded" {
                            format!("deadline exceeded: --timeout {}s passed and {}", cfg.timeout.as_secs(), a.last_state)
                        } else {
                            format!("Job failed ({reason}: {message}); {}", a.last_state)
                        };
                        // A pod that terminated carries the better reason: give its event a
                        // moment to arrive, unless the pod never ran.
                        if reason == "DeadlineExceeded" || !a.running {
                            finished.push((node, Finish::Error(why)));
                        }
                    }
                }
            }
            _ = tick.tick() => {
                let limit = cfg.timeout + DEADLINE_GRACE;
                for (node, a) in &active {
                    if a.created.elapsed() > limit {
                        finished.push((node.clone(), Finish::Error(format!(
                            "deadline exceeded: --timeout {}s passed and {}",
                            cfg.timeout.as_secs(), a.last_state))));
                    }
                }
            }
            _ = &mut ctrl_c => interrupted = Some("Ctrl-C"),
            _ = sigterm.recv() => interrupted = Some("SIGTERM"),
        }
        for (node, f) in finished {
            let Some(mut a) = active.remove(&node) else {
                continue;
            };
            a.report.seconds = Some(a.created.elapsed().as_secs_f64());
            match f {
                Finish::Error(reason) => {
                    a.report.status = Status::Error;
                    a.report.reason = Some(reason);
                }
                Finish::Terminated(pod, t) => {
                    collect(&pods, &pod, t, &mut a.report).await;
                    // The Job controller stops a pod at the deadline; the command then ends
                    // with its own "interrupted" error, but the cause is the deadline.
                    if a.report.status == Status::Error && a.created.elapsed() >= cfg.timeout {
                        a.report.reason = Some(format!(
                            "deadline exceeded: --timeout {}s passed while the node command ran ({})",
                            cfg.timeout.as_secs(),
                            a.report.reason.as_deref().unwrap_or("no output")
                        ));
                    }
                }
            }
            // Delete this node's Job now (the pod goes with it); the sweep at the end
            // catches anything this misses.
            let _ = jobs.delete(&a.job, &DeleteParams::background()).await;
            progress(Progress::Done(&a.report));
            done.insert(node, a.report);
        }
        if interrupted.is_some() {
            break;
        }
    }

    for (node, mut a) in active.drain() {
        a.report.status = Status::Error;
        a.report.reason = Some(format!(
            "interrupted by {} ({})",
            interrupted.unwrap_or("a signal"),
            a.last_state
        ));
        a.report.seconds = Some(a.created.elapsed().as_secs_f64());
        done.insert(node, a.report);
    }
    for c in queue {
        let mut r = NodeReport::new(&c.node, c.instance_type, c.zone);
        r.status = Status::Skipped;
        r.reason = Some(format!(
            "not started: interrupted by {}",
            interrupted.unwrap_or("a signal")
        ));
        done.insert(c.node, r);
    }
    progress(Progress::Cleaning {
        why: interrupted.unwrap_or("done"),
    });
    drop(pod_events);
    drop(job_events);
    let cleaned = delete_matching(client, ns, &selector).await?;
    Ok(RunOutcome {
        run_id: cfg.run_id.clone(),
        nodes: done.into_values().collect(),
        interrupted,
        left_behind: cleaned.left_behind,
    })
}

/// The objects an event carries (a watcher error is transient: the watcher retries).
fn touched<K>(ev: Option<std::result::Result<watcher::Event<K>, watcher::Error>>) -> Vec<K> {
    match ev {
        Some(Ok(watcher::Event::Apply(k) | watcher::Event::InitApply(k))) => vec![k],
        _ => Vec::new(),
    }
}

fn node_of(m: &kube::core::ObjectMeta) -> Option<String> {
    m.annotations.as_ref()?.get(NODE_ANNOTATION).cloned()
}

enum Finish {
    Error(String),
    /// The pod's name and its container's end.
    Terminated(String, Terminated),
}

#[derive(Debug, Clone, PartialEq)]
struct Terminated {
    exit_code: i32,
    reason: Option<String>,
    message: Option<String>,
}

#[derive(Debug, PartialEq)]
enum PodState {
    /// Still coming: what it waits for, in words.
    Waiting(String),
    Running,
    /// Will not run: report now.
    Fatal(String),
    Terminated(Terminated),
}

fn judge_pod(p: &Pod) -> PodState {
    let Some(st) = p.status.as_ref() else {
        return PodState::Waiting("the pod had no status yet".into());
    };
    if st.reason.as_deref() == Some("Evicted") {
        return PodState::Fatal(format!(
            "evicted: {}",
            st.message
                .as_deref()
                .unwrap_or("the kubelet evicted the pod")
        ));
    }
    let cs = st
        .container_statuses
        .as_ref()
        .and_then(|cs| cs.iter().find(|c| c.name == CONTAINER));
    let state = cs.and_then(|c| c.state.as_ref());
    if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
        return PodState::Terminated(Terminated {
            exit_code: t.exit_code,
            reason: t.reason.clone(),
            message: t.message.clone(),
        });
    }
    if let Some(w) = state.and_then(|s| s.waiting.as_ref()) {
        let reason = w.reason.as_deref().unwrap_or("Waiting");
        let msg = w.message.as_deref().unwrap_or("");
        if FATAL_WAITING.contains(&reason) {
            let image = cs.map(|c| c.image.as_str()).unwrap_or("");
            return PodState::Fatal(format!(
                "{reason}: {} (is the image {image} on the node or in a registry it can reach? see --image and --image-pull-policy)",
                cut(msg, 300)
            ));
        }
        return PodState::Waiting(format!("the container was waiting ({reason})"));
    }
    if state.is_some_and(|s| s.running.is_some()) {
        return PodState::Running;
    }
    match st.phase.as_deref() {
        Some("Failed") => PodState::Fatal(format!(
            "the pod failed ({}: {})",
            st.reason.as_deref().unwrap_or("no reason"),
            st.message.as_deref().unwrap_or("")
        )),
        phase => PodState::Waiting(format!(
            "the pod never started ({}; is the node's kubelet running?)",
            phase.unwrap_or("Pending")
        )),
    }
}

/// The reason and message of a Job's Failed condition, if it has one (kube-runtime's
/// conditions know only completion).
fn job_failed(j: &Job) -> Option<(String, String)> {
    let c = j
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Failed" && c.status == "True")?;
    Some((
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default(),
    ))
}

/// The verdict a node command wrote to its termination log (`verdict: pass|fail`, see the
/// binary's `termination` module), if the message is one.
fn message_verdict(msg: &str) -> Option<bool> {
    match msg.trim() {
        "verdict: pass" => Some(true),
        "verdict: fail" => Some(false),
        _ => None,
    }
}

fn cut(s: &str, n: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Reads the log of a pod whose container ended and fills the report.
async fn collect(pods: &Api<Pod>, pod: &str, t: Terminated, r: &mut NodeReport) {
    r.status = Status::Error;
    if t.reason.as_deref() == Some("OOMKilled") {
        r.reason = Some("OOMKilled: the node command went past the pod's 1Gi memory limit".into());
        return;
    }
    let lp = LogParams {
        container: Some(CONTAINER.into()),
        limit_bytes: Some(MAX_LOG_BYTES),
        ..Default::default()
    };
    let log = match pods.logs(pod, &lp).await {
        Ok(l) => l,
        Err(e) => {
            r.reason = Some(format!(
                "exit {}, and its log could not be read: {}",
                t.exit_code,
                crate::error::describe(&e)
            ));
            return;
        }
    };
    let last_error = || {
        t.message
            .as_deref()
            .unwrap_or(&log)
            .lines()
            .rev()
            .find(|l| l.starts_with("error:"))
            .or_else(|| log.lines().rev().find(|l| !l.trim().is_empty()))
            .map(|l| cut(l, 400))
            .unwrap_or_else(|| "no output".into())
    };
    match (t.exit_code, result::parse_log(&log)) {
        (0 | 1, Ok((value, doc))) => {
            let f = doc.figures();
            let pass = f.pass.unwrap_or(t.exit_code == 0);
            r.status = if pass { Status::Pass } else { Status::Fail };
            r.verdict = f.pass.map(|p| if p { "pass" } else { "fail" });
            r.figures = f;
            r.result = Some(value);
        }
        (0 | 1, Err(e)) => match t.message.as_deref().and_then(message_verdict) {
            // The log was cut or unreadable as a document, but the node command left its
            // short verdict in the termination message: keep the verdict, say why no figures.
            Some(pass) => {
                r.status = if pass { Status::Pass } else { Status::Fail };
                r.verdict = Some(if pass { "pass" } else { "fail" });
                r.reason = Some(format!(
                    "verdict from the termination message; no figures: {e}"
                ));
            }
            None => r.reason = Some(format!("exit {}: {e}", t.exit_code)),
        },
        (code, _) => {
            r.reason = Some(format!(
                "the node command failed (exit {code}{}): {}",
                t.reason
                    .as_deref()
                    .filter(|x| *x != "Error")
                    .map(|x| format!(", {x}"))
                    .unwrap_or_default(),
                last_error()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, PodStatus,
    };

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
            matches!(judge_pod(&ev), PodState::Fatal(s) if s.starts_with("evicted: The node was low"))
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
}
