//! How long the client waits for the API server. kube leaves a request without a time limit
//! (its watches wait on purpose), so an API server that answered the first request and then
//! stopped answering (hung, overloaded past its own limits, or a network path that drops
//! packets) held `fleet run` for good: past its `--timeout`, with its Jobs left, and deaf to
//! Ctrl-C while it waited (QA: a loopback proxy to the test cluster that stopped forwarding;
//! the run was still there 85 s past a 5 s `--timeout`, and after SIGINT, until killed).
//!
//! Every request is given [`ANSWER_LIMIT`] to answer, counted to its response's head: a watch
//! or a log is answered at once and then streams for as long as it has to.

use std::time::Duration;

/// How long the first request (the server's version) is waited for: a healthy server answers
/// in milliseconds, a loaded one in a few seconds.
pub(super) const FIRST_ANSWER: Duration = Duration::from_secs(30);

/// How long every request is waited for: a little more than the API server's own limit on a
/// request (kube-apiserver `--request-timeout`, 60 s by default), so a server that is there
/// answers first, with its own 504.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(70);

/// [`ANSWER_LIMIT`], or `DISKTIER_KUBE_TIMEOUT_MS` (tests of a server that stops answering).
pub fn answer_limit() -> Duration {
    std::env::var("DISKTIER_KUBE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(ANSWER_LIMIT)
}

/// The layer that ends a request the server has not answered within [`answer_limit`].
pub(super) fn layer() -> tower::timeout::TimeoutLayer {
    tower::timeout::TimeoutLayer::new(answer_limit())
}

/// Whether `e` is a request the server did not answer in time.
pub(crate) fn unanswered(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Service(b) if b.is::<tower::timeout::error::Elapsed>())
}

/// Whether a watch stream's item is a list or watch request the server did not answer in
/// time (the watcher retries it; fleet takes it as the server having stopped answering).
pub(crate) fn watch_unanswered<K>(
    ev: &Option<Result<kube::runtime::watcher::Event<K>, kube::runtime::watcher::Error>>,
) -> bool {
    use kube::runtime::watcher::Error as W;
    matches!(ev, Some(Err(W::InitialListFailed(e) | W::WatchStartFailed(e) | W::WatchFailed(e))) if unanswered(e))
}

/// What an unanswered request says (after what it was doing).
pub(crate) fn unanswered_text() -> String {
    let limit = answer_limit();
    let limit = if limit.subsec_millis() == 0 {
        format!("{} s", limit.as_secs())
    } else {
        format!("{} ms", limit.as_millis())
    };
    format!("the API server sent no answer within {limit}: it is overloaded or hung, or the network to it drops packets (`kubectl get --raw /readyz` asks it)")
}
