//! Errors of reading a live etcd's metrics.

/// What can go wrong scraping and judging an etcd member.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{what} is over the limit of {limit}: is this an etcd /metrics endpoint?")]
    TooLarge { what: &'static str, limit: usize },
    #[error("metrics line {line}: {why}")]
    Parse { line: usize, why: String },
    /// `hint` says what the failure most likely means and what to check (see
    /// [`crate::fetch::hint`]); the client's own error follows as the source.
    #[error("{url}: {hint}")]
    Http {
        url: String,
        hint: &'static str,
        #[source]
        source: Box<ureq::Error>,
    },
    /// A body that is not the text exposition format: the member is named, as with several
    /// `--metrics` URLs the parse error alone does not say which one served it.
    #[error("{url} does not serve Prometheus metrics: is it an etcd member's /metrics (its --listen-metrics-urls, e.g. http://127.0.0.1:2381/metrics, or its client URL)?")]
    Body {
        url: String,
        #[source]
        source: Box<Error>,
    },
    #[error("{url} answered HTTP {status}: give the member's metrics URL (e.g. http://127.0.0.1:2379/metrics, or its --listen-metrics-urls)")]
    Status { url: String, status: u16 },
    /// A redirect, which is not followed (a member serves its metrics where it is asked): the
    /// answer names where it points, so the user can judge whether that is the member.
    #[error("{url} answered HTTP {status}, a redirect to {location:?}, which is not followed: give the member's own metrics URL (its --listen-metrics-urls or client URL, e.g. http://127.0.0.1:2381/metrics), that one if it is the member's")]
    Redirect {
        url: String,
        status: u16,
        location: String,
    },
    /// A metric etcd's verdict reads, served in a form no figure can be read from (a histogram
    /// without its `+Inf` bucket, a count that is NaN, infinite or negative).
    #[error("{url}: {metric} {why}, so nothing can be judged from it: is it an etcd member's own /metrics, served unchanged?")]
    Malformed {
        url: String,
        metric: &'static str,
        why: String,
    },
    #[error("{url} serves no {metric}: is it an etcd member's /metrics?")]
    NotEtcd { url: String, metric: &'static str },
    #[error(
        "{url}: the counters went down between the two samples (the member restarted?): run again"
    )]
    Restarted { url: String },
    #[error(
        "{url}: the member restarted between the two samples (process_start_time_seconds {before} then {after}), so the difference of its counters is not what happened in the interval: run again"
    )]
    RestartedBetween {
        url: String,
        before: f64,
        after: f64,
    },
    #[error("cannot read {path}")]
    ReadFile {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is larger than {max_mib} MiB, which no PEM certificate or key file is: pass the file etcdctl takes as --cacert, --cert or --key")]
    PemTooLarge { path: String, max_mib: u64 },
    #[error("{path} holds no {what} in PEM form")]
    Pem { path: String, what: &'static str },
    #[error("{0:?} is not an http:// or https:// URL")]
    BadUrl(String),
    #[error("URL {position} of --metrics is empty (a doubled or trailing comma?): give the members' URLs separated by single commas")]
    EmptyUrl { position: usize },
    #[error("{0} is given twice in --metrics (as a client URL and its /metrics, or twice): give each member once, or its verdicts count twice")]
    DuplicateUrl(String),
    #[error("--cert and --key go together: give both, or neither")]
    CertWithoutKey,
}
