//! The client side of a fleet run: connect, check the namespace, report leftovers, select the
//! nodes, create at most `parallel` Jobs at once, watch their pods (an image that cannot be
//! pulled is reported as soon as the kubelet says so, not at the deadline), read each result
//! from the pod's log, and delete everything the run made — on success, failure, deadline,
//! Ctrl-C and SIGTERM alike.

use crate::error::{FleetError, Result};
use crate::manifest::{self, JobConfig, NODE_ANNOTATION};
use crate::select::{Candidate, Selection};
use crate::summary::{NodeReport, Status};
use futures::{Stream, StreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Client, Config};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

mod cluster;
mod pods;
#[cfg(test)]
mod tests;

pub use cluster::{delete_matching, ensure_namespace, fetch_nodes, leftovers, select, CleanReport};
use pods::{collect, job_failed, judge_pod, PodState, Terminated};

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
