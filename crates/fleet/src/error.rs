//! The fleet's errors: each names the object (node, namespace, path, Job) and, where there is
//! one, the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("no node command: give one after `--`, e.g. `disktier fleet run --control-plane -- check etcd /var/lib/etcd`")]
    NoCommand,
    #[error("the node command `{}` is not one fleet runs: use check, bench, assess or interfere", one_line(.0))]
    UnknownCommand(String),
    /// `fleet run -- setup`: a pod cannot set up its node (see the message).
    #[error("setup is not one fleet runs: the image holds only disktier (no blkid, mkfs or mount), and a pod's mounts and /etc/fstab stay in the pod; render the node's setup instead (`disktier render openshift|gke|eks|aks|systemd|cloud-init`, docs/render.md) or run `disktier setup` on the node")]
    SetupInPod,
    #[error("the node command names no absolute path on the node: say which one to measure (e.g. `-- check etcd /var/lib/etcd`); fleet mounts exactly the paths it names")]
    NoHostPath,
    #[error("{}: {why}", one_line(path))]
    BadHostPath { path: String, why: &'static str },
    #[error("the node command's own {0} is set by fleet (the result comes back as JSON in the pod log): remove it")]
    ReservedOption(String),
    #[error("{what} `{}`: {why}", one_line(value))]
    Invalid {
        what: &'static str,
        value: String,
        why: String,
    },
    #[error(
        "no node selection: pass --nodes A,B, --selector KEY=VALUE, --control-plane or --all-nodes"
    )]
    NoSelection,
    /// `--selector` that is empty, over 1024 bytes or holds control characters.
    #[error("--selector {0:?}: give a label selector such as node.kubernetes.io/instance-type=m6id.xlarge")]
    BadSelector(String),
    /// `--timeout 0`.
    #[error("--timeout 0 would end every Job at once: give a duration such as 10m")]
    ZeroTimeout,
    /// `fleet rbac --user` that is empty or holds a character that does not show as itself
    /// (a control, bidi, invisible or line-separating character).
    #[error("--user {user:?}: {why}: give the user name the cluster authenticates (kubectl auth whoami shows it)")]
    BadUser { user: String, why: String },
    // A kubeconfig's errors are shown through `kubeconfig_problem`, never as kube prints them:
    // a YAML error there quotes the file's lines, which may hold a token or a key.
    #[error("cannot read the kubeconfig {}: {}", path.display(), kubeconfig_problem(err))]
    Kubeconfig {
        path: PathBuf,
        err: kube::config::KubeconfigError,
    },
    #[error("cannot read the kubeconfig {}: {why}: pass the cluster's kubeconfig file (--kubeconfig FILE or KUBECONFIG=FILE)", path.display())]
    KubeconfigFile { path: PathBuf, why: String },
    #[error(
        "no Kubernetes configuration: set KUBECONFIG, pass --kubeconfig, or run inside a pod (kubeconfig {from}: {}; in-cluster: {in_cluster})",
        kubeconfig_problem(kubeconfig)
    )]
    NoConfig {
        /// Where the kubeconfig was looked for (`$KUBECONFIG=...` or `~/.kube/config`).
        from: String,
        kubeconfig: kube::config::KubeconfigError,
        in_cluster: String,
    },
    #[error("kubeconfig{}: {}", from.as_deref().map(|f| format!(" ({f})")).unwrap_or_default(), kubeconfig_problem(err))]
    Config {
        /// Where it was read from, when that is known (`--kubeconfig`, `$KUBECONFIG`).
        from: Option<String>,
        err: kube::config::KubeconfigError,
    },
    #[error("cannot build the Kubernetes client: {0}")]
    Client(kube::Error),
    #[error("cannot reach the Kubernetes API server at {server}: {why} (is the cluster up, and are --kubeconfig/--context the right ones?)")]
    Unreachable { server: String, why: String },
    /// The first request (`GET /version`, which every Kubernetes API server answers) was
    /// answered 404: a web server, or a URL whose path is not the API server's.
    #[error("the server at {server} answered 404 (Not Found) for GET {path}: it does not look like a Kubernetes API server; check the server URL of the kubeconfig's cluster (--kubeconfig/--context, or `kubectl config view --minify`)")]
    NotKubernetes { server: String, path: &'static str },
    /// The server answered 401 to the first request: it does not take the client's credentials.
    #[error("the API server at {server} does not accept this client's credentials (401 Unauthorized): the kubeconfig's token or client certificate has expired or is not this cluster's; get new ones (for a service account `kubectl create token NAME`, for a cloud cluster its get-credentials command) and check --kubeconfig/--context")]
    Unauthenticated { server: String },
    #[error("namespace {0} does not exist: create it with `kubectl create namespace {0}`, or pass --create-namespace")]
    NoNamespace(String),
    /// The namespace is being deleted: nothing can be made in it.
    #[error("namespace {0} is being deleted (Terminating), and the API server makes nothing new in it: run again once `kubectl get namespace {0}` says NotFound (with --create-namespace), or pass another -n; a namespace that stays Terminating waits on a finalizer, which `kubectl get namespace {0} -o yaml` and the objects left in it name")]
    NamespaceTerminating(String),
    /// The client may not do what a run needs (asked before anything is made).
    #[error("the cluster does not let this client {missing} in namespace {namespace}, which a fleet run needs, so nothing was made: as a cluster admin, grant what `disktier fleet rbac -n {namespace} --service-account NAME` (or `--user NAME`) prints, with `| kubectl apply -f -` (docs/fleet.md, Permissions)")]
    Forbidden { namespace: String, missing: String },
    #[error("{action}: {}", describe(err))]
    Api { action: String, err: kube::Error },
    #[error("the nodes selected by {0} match no node")]
    NoNodes(String),
    /// A selection of more nodes than [`crate::select::MAX_NODES`].
    #[error("{selection} selects {count} nodes, more than the {max} of the largest cluster Kubernetes supports (Kubernetes docs, Considerations for large clusters): narrow it with a node selector, e.g. --selector node.kubernetes.io/instance-type=m6id.xlarge, and run once per group of nodes")]
    TooManyNodes {
        /// The option that selected them (`--nodes`, without the names).
        selection: String,
        count: usize,
        max: usize,
    },
    #[error("cannot render the manifests as YAML")]
    Yaml(#[from] serde_yaml_ng::Error),
    #[error("cannot start the async runtime or its signal handlers: {0}")]
    Runtime(std::io::Error),
    /// A signal before the run made anything.
    #[error("interrupted by {0} before any Job was made: nothing to clean up")]
    Interrupted(&'static str),
}

/// `s` quoted on the error's one line: a newline in what the user gave (a node name, a path, an
/// image) is shown as `\n`. The binary escapes every other control character of an error but
/// keeps its line breaks, so `--nodes $'a\nb'` split the error in two (QA).
fn one_line(s: &str) -> String {
    s.replace('\n', "\\n")
}

impl FleetError {
    pub(crate) fn api(action: impl Into<String>, err: kube::Error) -> FleetError {
        FleetError::Api {
            action: action.into(),
            err,
        }
    }
}

/// An API error in words: the server's message and reason (kube's own text repeats the whole
/// status twice); any other error with its causes down to the last (kube's `ServiceError:
/// client error (Connect)` says nothing of the refused connection that its cause names).
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => {
            // A namespace being deleted refuses new objects with 403 as well: no permission
            // would help there.
            let hint = if s.is_forbidden() && !s.message.contains("because it is being terminated")
            {
                " (see `disktier fleet rbac` for the permissions fleet needs)"
            } else {
                ""
            };
            format!("{} ({} {}){hint}", s.message, s.code, s.reason)
        }
        e if crate::kube_run::limits::unanswered(e) => crate::kube_run::limits::unanswered_text(),
        other => with_causes(other),
    }
}

/// An error's text followed by each cause's that it does not already include.
pub(crate) fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let t = c.to_string();
        if !t.is_empty() && !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        cause = c.source();
    }
    text
}

/// A kubeconfig error in words that never quote the file: a parse error becomes its position
/// (kube's own text quotes the offending lines, which may hold a token or a private key);
/// the others name a path, a context or a field, and are shown as kube words them.
pub fn kubeconfig_problem(e: &kube::config::KubeconfigError) -> String {
    use kube::config::KubeconfigError as K;
    match e {
        K::Parse(p) => {
            let at = p
                .location()
                .map(|l| format!(" at line {}, column {}", l.line(), l.column()))
                .unwrap_or_default();
            format!("not a kubeconfig: its YAML does not parse as one{at} (the file's text is not shown: it may hold credentials)")
        }
        K::ReadConfig(io, path) => format!("cannot read {}: {io}", path.display()),
        other => other.to_string(),
    }
}

pub type Result<T, E = FleetError> = std::result::Result<T, E>;
