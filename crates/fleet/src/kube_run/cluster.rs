//! The cluster around a run: the namespace, the nodes to measure, what earlier runs left
//! behind, and deleting what a run made (waiting until it is gone).

use crate::error::{FleetError, Result};
use crate::manifest::{self, RUN_LABEL};
use crate::select::{self, Candidate, Selection, CONTROL_PLANE_LABELS};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, Toleration};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::Client;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long cleanup waits for the objects it deleted to be gone.
pub(super) const CLEANUP_WAIT: Duration = Duration::from_secs(90);

pub(super) fn is_status(e: &kube::Error, f: impl Fn(&kube::core::Status) -> bool) -> bool {
    matches!(e, kube::Error::Api(s) if f(s))
}

/// Fails with the fix when the namespace is missing (or creates it with `create`). A client
/// that may not read namespaces (the minimal RBAC) goes on: creating the Jobs will say.
pub async fn ensure_namespace(client: &Client, ns: &str, create: bool) -> Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    match api.get_opt(ns).await {
        // The API server makes nothing new in a namespace being deleted: every node's Job
        // would fail alike, said as a permission (QA: 'cannot create Job ...: ... forbidden:
        // unable to create new content in namespace N because it is being terminated (403
        // Forbidden) (see `disktier fleet rbac` ...)', once per node).
        Ok(Some(n))
            if n.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating") =>
        {
            Err(FleetError::NamespaceTerminating(ns.to_string()))
        }
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
        Selection::Selector(s) => api
            .list(&ListParams::default().labels(s))
            .await
            .map(|l| l.items)
            .map_err(|e| selector_error(s, e)),
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

/// A `--selector` the API server refused (400: it parses selectors) is the option's error, with
/// the forms a selector takes. QA: `--selector 'a==b==c'` said "listing nodes: found '==',
/// expected: ',' or 'end of string' (400 BadRequest)", naming neither the option nor a fix.
pub(super) fn selector_error(sel: &str, e: kube::Error) -> FleetError {
    match e {
        kube::Error::Api(s) if s.code == 400 => FleetError::Invalid {
            what: "--selector",
            value: sel.to_string(),
            why: format!("the API server does not take it as a label selector ({}): write KEY=VALUE, KEY!=VALUE, KEY in (A,B), KEY notin (A,B), KEY or !KEY, joined by commas, e.g. node.kubernetes.io/instance-type=m6id.xlarge", s.message),
        },
        e => FleetError::api("listing nodes", e),
    }
}

/// The candidates of a selection, judged for a pod with `tolerations`; an empty result is an
/// error that names the selection, and so is one of more than [`select::MAX_NODES`] nodes.
pub async fn select(
    client: &Client,
    sel: &Selection,
    tolerations: &[Toleration],
) -> Result<Vec<Candidate>> {
    let nodes = fetch_nodes(client, sel).await?;
    let c = select::candidates(sel, &nodes, tolerations);
    if c.is_empty() {
        return Err(FleetError::NoNodes(sel.describe()));
    }
    select::check_count(sel, c.len())?;
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
pub(super) fn started(p: &Pod) -> bool {
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
///
/// A pod still there [`FORCE_AFTER`] past its own grace period is deleted with grace period 0:
/// its kubelet did not confirm the deletion in the time it had, because it is gone (stopped,
/// or its node down). Without this a run whose node lost its kubelet while the command ran
/// waited the whole 90 s here and still left the pod Terminating (QA: a `--timeout 10s` run
/// ended after 100 s with `left_behind: [pod/...]`, and `fleet clean` waited the same way).
/// The kubelet, if it comes back, stops a container whose pod is no longer in the API.
pub(super) async fn wait_gone(
    client: &Client,
    ns: &str,
    selector: &str,
    limit: Duration,
) -> Result<Vec<String>> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let lp = ListParams::default().labels(selector);
    let t0 = Instant::now();
    // When each pod was first seen being deleted, and whether it was forced already.
    let mut deleting: HashMap<String, (Instant, bool)> = HashMap::new();
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
        for m in p.items {
            let Some(name) = m.metadata.name else {
                continue;
            };
            if let Some(grace) = m.metadata.deletion_grace_period_seconds {
                let (seen, forced) = deleting
                    .entry(name.clone())
                    .or_insert((Instant::now(), false));
                let grace = Duration::from_secs(grace.max(0) as u64);
                if !*forced && seen.elapsed() >= grace + FORCE_AFTER {
                    *forced = true;
                    let now = DeleteParams {
                        grace_period_seconds: Some(0),
                        ..DeleteParams::background()
                    };
                    match pods.delete(&name, &now).await {
                        Ok(_) => {}
                        Err(e) if is_status(&e, |s| s.is_not_found()) => {}
                        Err(e) => {
                            return Err(FleetError::api(format!("deleting Pod {ns}/{name}"), e))
                        }
                    }
                }
            }
            left.push(format!("pod/{name}"));
        }
        if left.is_empty() || t0.elapsed() >= limit {
            return Ok(left);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// How long past its grace period a pod being deleted is waited for before it is deleted with
/// grace period 0: a kubelet that is there confirms within a second or two of the container's
/// end (0.1–0.5 s on the test cluster).
pub(super) const FORCE_AFTER: Duration = Duration::from_secs(5);
