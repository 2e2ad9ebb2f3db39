//! Reading a measuring pod: its state (waiting, running, failed for good, ended), the events
//! the kubelet and the taint manager record on it, its Job's failure, and its log with the
//! result.

use crate::manifest::CONTAINER;
use crate::result::{self, MAX_LOG_BYTES};
use crate::summary::{NodeReport, Status};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, LogParams};

/// Container waiting reasons that will not resolve by waiting (kubelet's image manager and
/// runtime errors): the node is reported at once instead of at the deadline.
pub(super) const FATAL_WAITING: [&str; 7] = [
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Terminated {
    pub(super) exit_code: i32,
    pub(super) reason: Option<String>,
    pub(super) message: Option<String>,
}

#[derive(Debug, PartialEq)]
pub(super) enum PodState {
    /// Still coming: what it waits for, in words.
    Waiting(String),
    Running,
    /// Will not run: report now.
    Fatal(String),
    Terminated(Terminated),
}

pub(super) fn judge_pod(p: &Pod) -> PodState {
    let Some(st) = p.status.as_ref() else {
        return PodState::Waiting("the pod had no status yet".into());
    };
    // The kubelet's own end of a pod is its reason, not the container's: an eviction (node
    // pressure, or an emptyDir over its sizeLimit) or a preemption for a critical pod kills the
    // container with exit 137, which read as 'the node command failed (exit 137): ...' with
    // the last line of its log (QA: a kubelet preemption, `Preempting`; `Evicted` was known).
    if st.reason.as_deref() == Some("Evicted") {
        return PodState::Fatal(format!(
            "evicted (Evicted: {})",
            cut(
                st.message
                    .as_deref()
                    .unwrap_or("the kubelet evicted the pod"),
                400
            )
        ));
    }
    if let Some(reason) = st.reason.as_deref().filter(|r| !r.is_empty()) {
        if st.phase.as_deref() == Some("Failed") {
            return PodState::Fatal(format!(
                "the kubelet failed the pod ({reason}: {})",
                cut(st.message.as_deref().unwrap_or(""), 400)
            ));
        }
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
            "the pod failed (no reason: {})",
            cut(st.message.as_deref().unwrap_or(""), 400)
        )),
        phase => PodState::Waiting(format!(
            "the pod never started ({}; is the node's kubelet running?)",
            phase.unwrap_or("Pending")
        )),
    }
}

/// What an event recorded on a measuring pod says, when it decides the node.
#[derive(Debug, PartialEq)]
pub(super) enum PodNote {
    /// The pod will not run: report now.
    Fatal(String),
    /// The pod is being evicted (deleted by the taint manager or the kubelet): report now, and
    /// delete the Job, whose controller would otherwise make a new pod at once.
    Evicted(String),
    /// Not yet: what the pod waits for, in words (for the deadline's message).
    Waiting(String),
}

/// Judges an event on a measuring pod (core/v1 Events, `involvedObject` the pod).
///
/// - `FailedMount` (kubelet): the pod's volumes are hostPaths and an emptyDir only, so a
///   failed mount is a node path that is missing or not of the kind the command needs
///   (`hostPath type check failed: /x is not a directory`); it would otherwise wait out
///   `--timeout` in ContainerCreating.
/// - `TaintManagerEviction` "Marking for deletion Pod ..." (the node lifecycle controller's
///   taint manager, on a NoExecute taint the pod does not tolerate); its "Cancelling deletion"
///   twin is no eviction.
/// - `Evicted` (the kubelet's eviction manager) and `Preempting` (the kubelet making room for a
///   critical pod).
pub(super) fn judge_event(e: &Event) -> Option<PodNote> {
    let reason = e.reason.as_deref()?;
    let msg = cut(e.message.as_deref().unwrap_or(""), 400);
    match reason {
        "FailedMount" => Some(PodNote::Fatal(format!(
            "FailedMount: {msg} (a path the node command names is missing on the node, or is not a directory, file or block device as the command needs)"
        ))),
        "TaintManagerEviction" if msg.starts_with("Marking for deletion") => Some(
            PodNote::Evicted(format!("evicted by the taint manager ({msg})")),
        ),
        "Evicted" | "Preempting" => Some(PodNote::Evicted(format!("evicted ({reason}: {msg})"))),
        _ => None,
    }
}

/// Judges an event on a measuring Job (`involvedObject` the Job): the Job controller's
/// `FailedCreate`, when the API server refused the Job's pod. A ResourceQuota that asks every
/// pod for a CPU limit ("failed quota: q: must specify limits.cpu"; fleet sets none, on
/// purpose), a LimitRange whose maximum is under the pod's, or an admission policy refuses it
/// for good, and the node would otherwise wait out `--timeout` as "the pod was never created"
/// (QA: a namespace with `kubectl create quota q --hard=limits.cpu=2,limits.memory=4Gi`):
/// `PodNote::Fatal`. A quota that is only full now ("exceeded quota") may make room when other
/// pods end, so the Job controller's retries are waited for: `PodNote::Waiting`, for the
/// deadline's message.
pub(super) fn judge_job_event(e: &Event, ns: &str) -> Option<PodNote> {
    if e.reason.as_deref() != Some("FailedCreate") {
        return None;
    }
    let msg = cut(e.message.as_deref().unwrap_or(""), 400);
    Some(if msg.contains("exceeded quota") {
        PodNote::Waiting(format!(
            "the pod was never created: the namespace's quota was full ({msg})"
        ))
    } else {
        PodNote::Fatal(format!(
            "FailedCreate: the API server refused the Job's pod ({msg}): a ResourceQuota, LimitRange or admission policy of namespace {ns} does not admit it (it requests cpu 250m and memory 128Mi, limits memory to 1Gi, and sets no CPU limit, which would show as I/O latency); see `kubectl -n {ns} describe quota,limitrange`, or run in a namespace without them (-n)"
        ))
    })
}

/// Whether `pod` is a pod the Job controller made for the Job `job`: its name is the Job's,
/// `-` and 5 random characters (the controller's `generateName`).
pub(super) fn is_pod_of(pod: &str, job: &str) -> bool {
    pod.len() == job.len() + 6 && pod.starts_with(job) && pod.as_bytes()[job.len()] == b'-'
}

/// The reason and message of a Job's Failed condition, if it has one (kube-runtime's
/// conditions know only completion).
pub(super) fn job_failed(j: &Job) -> Option<(String, String)> {
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
pub(super) fn message_verdict(msg: &str) -> Option<bool> {
    match msg.trim() {
        "verdict: pass" => Some(true),
        "verdict: fail" => Some(false),
        _ => None,
    }
}

pub(super) fn cut(s: &str, n: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The reason of a container end that its status says all of, so its log is not read: the
/// kernel's OOM kill in the pod's memory limit.
pub(super) fn terminated_without_log(t: &Terminated) -> Option<String> {
    (t.reason.as_deref() == Some("OOMKilled")).then(|| {
        format!(
            "OOMKilled (exit {}): the node command went past the pod's 1Gi memory limit",
            t.exit_code
        )
    })
}

/// Reads the log of a pod whose container ended and fills the report.
pub(super) async fn collect(pods: &Api<Pod>, pod: &str, t: Terminated, r: &mut NodeReport) {
    r.status = Status::Error;
    if let Some(why) = terminated_without_log(&t) {
        r.reason = Some(why);
        return;
    }
    let lp = LogParams {
        container: Some(CONTAINER.into()),
        limit_bytes: Some(MAX_LOG_BYTES),
        ..Default::default()
    };
    match read_log(pods, pod, &lp).await {
        Ok(log) => judge_read_log(&t, &log, r),
        Err(why) => {
            r.reason = Some(format!(
                "exit {}, and its log could not be read: {why}",
                t.exit_code
            ))
        }
    }
}

/// The first [`MAX_LOG_BYTES`] of a pod's log, as bytes: the server cuts it there
/// (`limitBytes`), and the read stops there too should a server not.
async fn read_log(pods: &Api<Pod>, pod: &str, lp: &LogParams) -> Result<Vec<u8>, String> {
    use futures::AsyncReadExt;
    let stream = pods
        .log_stream(pod, lp)
        .await
        .map_err(|e| crate::error::describe(&e))?;
    let mut log = Vec::new();
    Box::pin(stream)
        .take(MAX_LOG_BYTES as u64)
        .read_to_end(&mut log)
        .await
        .map_err(|e| crate::error::with_causes(&e))?;
    Ok(log)
}

/// Fills the report from the log as read (at most [`MAX_LOG_BYTES`]).
pub(super) fn judge_read_log(t: &Terminated, log: &[u8], r: &mut NodeReport) {
    judge_log(t, &log_text(log), r);
    if r.result.is_none() && log.len() as u64 >= MAX_LOG_BYTES as u64 {
        r.reason = r.reason.take().map(|why| cut_off(&why));
    }
}

/// The reason of a node whose log filled the [`MAX_LOG_BYTES`] fleet reads and held no whole
/// document in them: said as it is, instead of the parser's guess "was the node command's
/// output cut?" (QA: an image printing 20 MB before its document).
fn cut_off(why: &str) -> String {
    format!(
        "{why}; its log is longer than the {} MiB fleet reads of it, and its document was not whole in them: the node command printed that much besides its result",
        MAX_LOG_BYTES >> 20
    )
}

/// A pod's log as text. A byte that is not UTF-8 becomes U+FFFD instead of making the whole
/// log unreadable: kube's `logs` decodes it strictly, so a log over [`MAX_LOG_BYTES`] that
/// the server cut inside a character lost the document at its top (QA: a node command that
/// printed its document and then 20 MB of `€`: "exit 1, and its log could not be read: UTF-8
/// Error: incomplete utf-8 byte sequence from index 16777214").
pub(super) fn log_text(log: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(log)
}

/// Fills the report of a node whose container ended with `t` from its log `log`.
pub(super) fn judge_log(t: &Terminated, log: &str, r: &mut NodeReport) {
    let last_error = || {
        t.message
            .as_deref()
            .unwrap_or(log)
            .lines()
            .rev()
            .find(|l| l.starts_with("error:"))
            .or_else(|| log.lines().rev().find(|l| !l.trim().is_empty()))
            .map(|l| cut(l, 400))
            .unwrap_or_else(|| "no output".into())
    };
    match (t.exit_code, result::parse_log(log)) {
        (0 | 1, Ok((value, doc))) => {
            let f = doc.figures();
            let pass = f.pass.unwrap_or(t.exit_code == 0);
            r.status = if pass { Status::Pass } else { Status::Fail };
            r.verdict = f.pass.map(|p| match (p, f.inconclusive) {
                (true, _) => "pass",
                (false, true) => "inconclusive",
                (false, false) => "fail",
            });
            if f.inconclusive {
                // Still not ready (exit 1, as `check etcd` gives), but not shown too slow.
                r.reason = Some(
                    "inconclusive: the run was cut short and its p99's interval settles neither pass nor fail: run without --quick (or with a longer --runtime)".into(),
                );
            }
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
        (code, parsed) => {
            // A command that printed its document and then failed (assess on a target where
            // the etcd profile could not run: the other profiles were measured) keeps it: the
            // node stays an error, but its figures are shown and its document saved.
            if let Ok((value, doc)) = parsed {
                r.figures = doc.figures();
                r.result = Some(value);
            }
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
