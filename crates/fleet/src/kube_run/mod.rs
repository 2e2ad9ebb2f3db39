//! The client side of a fleet run: connect, check the namespace, report leftovers, select the
//! nodes, create at most `parallel` Jobs at once, watch their pods and the events on them (an
//! image that cannot be pulled, a node path that cannot be mounted, an eviction are reported as
//! soon as the kubelet or the taint manager says so, not at the deadline), read each result
//! from the pod's log, and delete everything the run made — on success, failure, deadline,
//! Ctrl-C, SIGTERM, SIGHUP and SIGQUIT alike.

use crate::error::{FleetError, Result};
use crate::manifest::{self, JobConfig, NODE_ANNOTATION};
use crate::select::{Candidate, Selection};
use crate::summary::{NodeReport, Status};
use futures::{Stream, StreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::{watcher, WatchStreamExt};
use kube::Client;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

pub mod access;
mod cluster;
mod connect;
mod kubeconfig;
pub mod limits;
mod node_state;
mod pods;
mod signals;
#[cfg(test)]
mod tests;

pub use cluster::{delete_matching, ensure_namespace, fetch_nodes, leftovers, select, CleanReport};
pub use connect::client;
use node_state::{eviction_reason, skip_now, with_node_state, DEADLINE, REJUDGE_AFTER};
use pods::{
    collect, is_pod_of, job_failed, judge_event, judge_job_event, judge_pod, PodNote, PodState,
    Terminated,
};
use signals::Signals;

/// Where the cluster is: `--kubeconfig` (else `KUBECONFIG`, `~/.kube/config`, in-cluster) and
/// `--context`.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
}

/// How long the client waits past `activeDeadlineSeconds` before it ends a node itself. The
/// client enforces the deadline because a 1.20 Job controller checks it only when something
/// else makes it look at the Job: with 20 Jobs at once, some of them were still active a
/// minute past their deadline on the test cluster (bench/fleet.sh).
const DEADLINE_GRACE: Duration = Duration::from_secs(3);

/// How long a node whose pod someone else deleted waits for the event that says why before it
/// is reported with what is known. The taint manager records its `TaintManagerEviction` event
/// through an asynchronous recorder, so it may reach the API server after the deletion it
/// announces.
const DELETION_REASON_WAIT: Duration = Duration::from_secs(2);

/// What a run reports while it goes, for the live progress on stderr.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Jobs of other runs found in the namespace: left by runs that were killed, or of runs
    /// still going (another client's), which the client cannot tell apart.
    Leftovers {
        namespace: &'a str,
        jobs: usize,
        runs: Vec<String>,
    },
    /// Permissions the run does without (events): what it loses is said.
    Unpermitted {
        namespace: &'a str,
        missing: String,
    },
    Skipped {
        node: &'a str,
        reason: &'a str,
    },
    /// The nodes have been judged: how many will be measured (the skipped ones were reported).
    Selected {
        measured: usize,
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
    /// Cleanup started (why: "done", "Ctrl-C", "SIGTERM", "SIGHUP", "SIGQUIT").
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
    /// `Some("Ctrl-C")`, `Some("SIGTERM")`, `Some("SIGHUP")` or `Some("SIGQUIT")` when a
    /// signal stopped the run.
    pub interrupted: Option<&'static str>,
    /// Objects cleanup could not delete (normally empty).
    pub left_behind: Vec<String>,
    /// Why cleanup could not even look for them (the API server went away during the run):
    /// the run's Jobs and Pods may still be there. The nodes' results are kept all the same.
    pub cleanup_error: Option<String>,
}

/// Runs `f` on a single-threaded runtime: the client is I/O bound and the CLI is synchronous.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(FleetError::Runtime)?;
    Ok(rt.block_on(f))
}

/// One node being measured.
struct Active {
    report: NodeReport,
    job: String,
    created: Instant,
    running: bool,
    /// The pod's last state in words, for the deadline message.
    last_state: String,
    /// When its pod was first seen deleted by someone other than fleet, and why as far as is
    /// known then (its Job is deleted at once: the 1.20 Job controller counts a deleted pod
    /// neither as failed nor as active, so `backoffLimit: 0` does not stop it from making a
    /// new pod, and a NoExecute taint made about ten a second until the deadline).
    deleted: Option<(Instant, String)>,
}

type Events<K> =
    Pin<Box<dyn Stream<Item = std::result::Result<watcher::Event<K>, watcher::Error>> + Send>>;

/// A whole fleet run. Returns the per-node reports even when a signal stopped it or its cleanup
/// failed (the nodes that finished keep their results); an `Err` means the run could not start.
pub async fn run(
    client: &Client,
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<RunOutcome> {
    let cfg = &spec.job;
    let ns = cfg.namespace.as_str();
    // Signals first: from here on a signal is ours to handle (nothing exists to clean yet).
    // SIGHUP (the ssh session or terminal went away) and SIGQUIT stop the run like Ctrl-C:
    // their default action would end the process and leave the Jobs and Pods behind.
    let mut signals = Signals::new()?;
    // A signal while the cluster is looked at ends the run before anything is made (QA: a
    // Ctrl-C while a slow API server answered was held until the loop below, which first made
    // the Jobs it had just been told not to make).
    let candidates = tokio::select! {
        c = prepare(client, spec, progress) => c?,
        sig = signals.recv() => return Err(FleetError::Interrupted(sig)),
    };

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
    let measured: Vec<String> = queue.iter().map(|c| c.node.clone()).collect();
    manifest::job_names(&cfg.run_id, &measured)?;
    let judged = Instant::now();
    let tolerations = manifest::tolerations(cfg.tolerate_all);
    progress(Progress::Selected {
        measured: queue.len(),
    });

    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = manifest::run_selector(&cfg.run_id);
    let wc = watcher::Config::default().labels(&selector);
    // A watch error (a dropped connection) is retried by the watcher; the backoff keeps a
    // persistent one (RBAC without `watch`) from spinning.
    let mut pod_events: Events<Pod> = watcher(pods.clone(), wc.clone()).default_backoff().boxed();
    let mut job_events: Events<Job> = watcher(jobs.clone(), wc).default_backoff().boxed();
    // Events carry no labels: every pod event of the namespace, matched to a Job by name. A
    // Role from an older `fleet rbac` without `events` only loses the early reports.
    let events: Api<Event> = Api::namespaced(client.clone(), ns);
    let ec = watcher::Config::default().fields("involvedObject.kind=Pod");
    let mut pod_notes: Events<Event> = watcher(events.clone(), ec).default_backoff().boxed();
    // And the Job controller's on the Jobs: a pod the API server refuses (a quota) is never
    // made, which no pod watch sees.
    let jc = watcher::Config::default().fields("involvedObject.kind=Job");
    let mut job_notes: Events<Event> = watcher(events, jc).default_backoff().boxed();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut active: HashMap<String, Active> = HashMap::new();
    let mut interrupted = None;
    // The first request the API server left unanswered (what it was, for the messages): from
    // then on the run asks it nothing more, so a hung server costs one answer limit, not one
    // per node and per call (QA: a server that took the Jobs and then stopped answering held
    // the run to its --timeout, then 70 s for the node, for each Job's deletion and creation
    // and for the cleanup's first list: 3 nodes, 10 minutes and 5 times 70 s).
    let mut hung: Option<String> = None;
    let parallel = spec.parallel.max(1);

    loop {
        while active.len() < parallel && hung.is_none() {
            let Some(c) = queue.pop_front() else { break };
            // A node that waited its turn is judged again: one that went NotReady, was
            // cordoned or tainted since would otherwise hold the run for a whole --timeout.
            if judged.elapsed() > REJUDGE_AFTER {
                if let Some(reason) = skip_now(client, &c.node, &tolerations, &mut hung).await {
                    progress(Progress::Skipped {
                        node: &c.node,
                        reason: &reason,
                    });
                    let mut r = NodeReport::new(&c.node, c.instance_type, c.zone);
                    r.status = Status::Skipped;
                    r.reason = Some(reason);
                    done.insert(c.node, r);
                    continue;
                }
            }
            let job = manifest::job(cfg, &c.node);
            let name = job.metadata.name.clone().unwrap_or_default();
            let mut report = NodeReport::new(&c.node, c.instance_type.clone(), c.zone.clone());
            // A signal while a Job is being made stops the making: the node goes back to the
            // queue (reported not started), and the sweep at the end deletes the Job should
            // the server have made it.
            let post = PostParams::default();
            let created = tokio::select! {
                r = jobs.create(&post, &job) => r,
                sig = signals.recv() => {
                    interrupted = Some(sig);
                    queue.push_front(c);
                    break;
                }
            };
            match created {
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
                            deleted: None,
                        },
                    );
                }
                Err(e) => {
                    if limits::unanswered(&e) {
                        hung = Some(format!("creating Job {ns}/{name}"));
                    }
                    report.reason = Some(format!(
                        "cannot create Job {ns}/{name}: {}",
                        crate::error::describe(&e)
                    ));
                    progress(Progress::Done(&report));
                    done.insert(c.node.clone(), report);
                }
            }
        }
        if active.is_empty() || interrupted.is_some() || hung.is_some() {
            break;
        }
        // What the event says has become of a node: (node, finished?).
        let mut finished: Vec<(String, Finish)> = Vec::new();
        tokio::select! {
            ev = pod_events.next() => {
                if limits::watch_unanswered(&ev) {
                    hung.get_or_insert_with(|| "watching this run's pods".into());
                }
                for (pod, gone) in touched_or_gone(ev) {
                    let Some(node) = node_of(&pod.metadata) else { continue };
                    let Some(a) = active.get_mut(&node) else { continue };
                    // Deleted (or being deleted) by someone else: fleet deletes a node's Job
                    // only once the node is done. The Job controller deletes the pod at the
                    // deadline: that is the deadline's to report (its condition, or the tick).
                    let external = (gone || pod.metadata.deletion_timestamp.is_some())
                        && a.created.elapsed() + Duration::from_secs(1) < cfg.timeout;
                    match judge_pod(&pod) {
                        PodState::Terminated(t) if external || a.deleted.is_some() => {
                            let why = a.deleted.as_ref().map(|d| d.1.clone()).unwrap_or_else(deleted_by_someone);
                            finished.push((node, Finish::Error(format!("{why}; the node command was stopped (exit {})", t.exit_code))));
                        }
                        PodState::Terminated(t) => finished.push((node, Finish::Terminated(pod.metadata.name.clone().unwrap_or_default(), t))),
                        PodState::Fatal(reason) => finished.push((node, Finish::Error(reason))),
                        _ if external => {
                            if a.deleted.is_none() {
                                a.deleted = Some((Instant::now(), deleted_by_someone()));
                                let _ = jobs.delete(&a.job, &DeleteParams::background()).await;
                            }
                        }
                        PodState::Waiting(s) => a.last_state = s,
                        PodState::Running => {
                            a.last_state = "the container was running".into();
                            if !a.running {
                                a.running = true;
                                progress(Progress::Running { node: &node });
                            }
                        }
                    }
                }
            }
            ev = pod_notes.next() => {
                if limits::watch_unanswered(&ev) {
                    hung.get_or_insert_with(|| "watching the events on pods".into());
                }
                for e in touched(ev) {
                    let Some(pod) = e.involved_object.name.as_deref() else { continue };
                    let Some(node) = active.iter().find(|(_, a)| is_pod_of(pod, &a.job)).map(|(n, _)| n.clone()) else { continue };
                    match judge_event(&e) {
                        Some(PodNote::Fatal(reason)) => finished.push((node, Finish::Error(reason))),
                        Some(PodNote::Evicted(reason)) => finished.push((node, Finish::Evicted(reason))),
                        Some(PodNote::Waiting(_)) | None => {}
                    }
                }
            }
            ev = job_notes.next() => {
                if limits::watch_unanswered(&ev) {
                    hung.get_or_insert_with(|| "watching the events on Jobs".into());
                }
                for e in touched(ev) {
                    let job = e.involved_object.name.as_deref();
                    let Some((node, a)) = active.iter_mut().find(|(_, a)| job == Some(a.job.as_str())) else { continue };
                    match judge_job_event(&e, ns) {
                        Some(PodNote::Fatal(reason)) => finished.push((node.clone(), Finish::Error(reason))),
                        Some(PodNote::Waiting(s)) if !a.running => a.last_state = s,
                        _ => {}
                    }
                }
            }
            ev = job_events.next() => {
                if limits::watch_unanswered(&ev) {
                    hung.get_or_insert_with(|| "watching this run's Jobs".into());
                }
                for job in touched(ev) {
                    let Some(node) = node_of(&job.metadata) else { continue };
                    let Some(a) = active.get(&node) else { continue };
                    if let Some((reason, message)) = job_failed(&job) {
                        let why = if reason == "DeadlineExceeded" {
                            format!("{DEADLINE}: --timeout {}s passed and {}", cfg.timeout.as_secs(), a.last_state)
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
                    if let Some((at, why)) = &a.deleted {
                        if at.elapsed() >= DELETION_REASON_WAIT {
                            finished.push((node.clone(), Finish::Error(why.clone())));
                        }
                    } else if a.created.elapsed() > limit {
                        finished.push((node.clone(), Finish::Error(format!(
                            "{DEADLINE}: --timeout {}s passed and {}",
                            cfg.timeout.as_secs(), a.last_state))));
                    }
                }
            }
            sig = signals.recv() => interrupted = Some(sig),
        }
        for (node, f) in finished {
            let Some(mut a) = active.remove(&node) else {
                continue;
            };
            a.report.seconds = Some(a.created.elapsed().as_secs_f64());
            match f {
                Finish::Error(reason) => {
                    a.report.status = Status::Error;
                    a.report.reason = Some(if reason.starts_with(DEADLINE) {
                        with_node_state(client, &node, reason, &mut hung).await
                    } else {
                        reason
                    });
                }
                Finish::Evicted(reason) => {
                    a.report.status = Status::Error;
                    a.report.reason =
                        Some(eviction_reason(client, &node, cfg, reason, &mut hung).await);
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
            if hung.is_none() {
                if let Err(e) = jobs.delete(&a.job, &DeleteParams::background()).await {
                    if limits::unanswered(&e) {
                        hung = Some(format!("deleting Job {ns}/{}", a.job));
                    }
                }
            }
            progress(Progress::Done(&a.report));
            done.insert(node, a.report);
        }
        if interrupted.is_some() || hung.is_some() {
            break;
        }
    }
    // What the nodes still active or queued are told when the server stopped answering.
    let hung_text = hung.as_ref().map(|call| {
        format!(
            "the API server stopped answering ({call}: {})",
            limits::unanswered_text()
        )
    });

    for (node, mut a) in active.drain() {
        a.report.status = Status::Error;
        a.report.reason = Some(match (&hung_text, interrupted) {
            (Some(h), None) => format!(
                "{h}, so the node's result is unknown ({}); its Job ends at --timeout, and the cluster deletes it --ttl later",
                a.last_state
            ),
            _ => format!(
                "interrupted by {} ({})",
                interrupted.unwrap_or("a signal"),
                a.last_state
            ),
        });
        a.report.seconds = Some(a.created.elapsed().as_secs_f64());
        done.insert(node, a.report);
    }
    for c in queue {
        let mut r = NodeReport::new(&c.node, c.instance_type, c.zone);
        match (&hung_text, interrupted) {
            (Some(h), None) => {
                r.status = Status::Error;
                r.reason = Some(format!("not started: {h}"));
            }
            _ => {
                r.status = Status::Skipped;
                r.reason = Some(format!(
                    "not started: interrupted by {}",
                    interrupted.unwrap_or("a signal")
                ));
            }
        }
        done.insert(c.node, r);
    }
    progress(Progress::Cleaning {
        why: match (interrupted, &hung_text) {
            (Some(sig), _) => sig,
            (None, Some(_)) => "the API server stopped answering: nothing is asked of it",
            (None, None) => "done",
        },
    });
    drop(pod_events);
    drop(job_events);
    drop(pod_notes);
    drop(job_notes);
    // A cleanup that fails (the API server gone since the nodes finished) must not lose the
    // results already read: they are returned with the error, which names `fleet clean`.
    // A server that left a request unanswered is asked nothing more: the cleanup would wait
    // the answer limit again for its first list. The error names `fleet clean`.
    let (left_behind, cleanup_error) = match hung_text {
        Some(h) => (Vec::new(), Some(format!("nothing was deleted: {h}"))),
        None => match delete_matching(client, ns, &selector).await {
            Ok(cleaned) => (cleaned.left_behind, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        },
    };
    Ok(RunOutcome {
        run_id: cfg.run_id.clone(),
        nodes: done.into_values().collect(),
        interrupted,
        left_behind,
        cleanup_error,
    })
}

/// What a run does before it makes anything: the namespace, the permissions, other runs'
/// objects, and the nodes of the selection judged.
async fn prepare(
    client: &Client,
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<Candidate>> {
    let ns = spec.job.namespace.as_str();
    ensure_namespace(client, ns, spec.create_namespace).await?;
    let optional = access::check(client, ns).await?;
    if !optional.is_empty() {
        progress(Progress::Unpermitted {
            namespace: ns,
            missing: access::list(&optional),
        });
    }
    let (old_jobs, old_pods, old_runs) = leftovers(client, ns).await?;
    if !old_jobs.is_empty() || !old_pods.is_empty() {
        progress(Progress::Leftovers {
            namespace: ns,
            jobs: old_jobs.len().max(old_pods.len()),
            runs: old_runs,
        });
    }
    let tolerations = manifest::tolerations(spec.job.tolerate_all);
    select(client, &spec.selection, &tolerations).await
}

/// Why a pod was deleted when no event has said yet.
fn deleted_by_someone() -> String {
    "the pod was deleted before the node command finished, and not by fleet (kubectl delete, a node drain, or an eviction; see `kubectl get events`)".into()
}

/// The objects an event carries (a watcher error is transient: the watcher retries).
fn touched<K>(ev: Option<std::result::Result<watcher::Event<K>, watcher::Error>>) -> Vec<K> {
    touched_or_gone(ev)
        .into_iter()
        .filter(|(_, gone)| !gone)
        .map(|(k, _)| k)
        .collect()
}

/// The objects an event carries, each with whether it was deleted.
fn touched_or_gone<K>(
    ev: Option<std::result::Result<watcher::Event<K>, watcher::Error>>,
) -> Vec<(K, bool)> {
    match ev {
        Some(Ok(watcher::Event::Apply(k) | watcher::Event::InitApply(k))) => vec![(k, false)],
        Some(Ok(watcher::Event::Delete(k))) => vec![(k, true)],
        _ => Vec::new(),
    }
}

fn node_of(m: &kube::core::ObjectMeta) -> Option<String> {
    m.annotations.as_ref()?.get(NODE_ANNOTATION).cloned()
}

enum Finish {
    Error(String),
    /// Evicted: the reason so far (the node's taints are added).
    Evicted(String),
    /// The pod's name and its container's end.
    Terminated(String, Terminated),
}
