//! The fleet's errors: each names the object (node, namespace, path, Job) and, where there is
//! one, the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("no node command: give one after `--`, e.g. `disktier fleet run --control-plane -- check etcd /var/lib/etcd`")]
    NoCommand,
    #[error("the node command `{0}` is not one fleet runs: use check, bench, assess, interfere or setup")]
    UnknownCommand(String),
    #[error("the node command names no absolute path on the node: say which one to measure (e.g. `-- check etcd /var/lib/etcd`); fleet mounts exactly the paths it names")]
    NoHostPath,
    #[error("{path}: {why}")]
    BadHostPath { path: String, why: &'static str },
    #[error("the node command's own {0} is set by fleet (the result comes back as JSON in the pod log): remove it")]
    ReservedOption(String),
    #[error("{what} `{value}`: {why}")]
    Invalid {
        what: &'static str,
        value: String,
        why: String,
    },
    #[error(
        "no node selection: pass --nodes A,B, --selector KEY=VALUE, --control-plane or --all-nodes"
    )]
    NoSelection,
    #[error("cannot read the kubeconfig {path}: {err}")]
    Kubeconfig {
        path: PathBuf,
        err: kube::config::KubeconfigError,
    },
    // The kube errors carry their causes in their own text: shown, not chained.
    #[error(
        "no Kubernetes configuration: set KUBECONFIG, pass --kubeconfig, or run inside a pod ({0})"
    )]
    NoConfig(kube::config::InferConfigError),
    #[error("kubeconfig: {0}")]
    Config(kube::config::KubeconfigError),
    #[error("cannot build the Kubernetes client: {0}")]
    Client(kube::Error),
    #[error("namespace {0} does not exist: create it with `kubectl create namespace {0}`, or pass --create-namespace")]
    NoNamespace(String),
    #[error("{action}: {}", describe(err))]
    Api { action: String, err: kube::Error },
    #[error("the nodes selected by {0} match no node")]
    NoNodes(String),
    #[error("cannot render the manifests as YAML")]
    Yaml(#[from] serde_yaml_ng::Error),
    #[error("cannot start the async runtime or its signal handlers: {0}")]
    Runtime(std::io::Error),
    #[error("interrupted by {0}: every Job and Pod this run made was deleted")]
    Interrupted(&'static str),
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
/// status twice).
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => {
            let hint = if s.is_forbidden() {
                " (see `disktier fleet rbac` for the permissions fleet needs)"
            } else {
                ""
            };
            format!("{} ({} {}){hint}", s.message, s.code, s.reason)
        }
        other => other.to_string(),
    }
}

pub type Result<T, E = FleetError> = std::result::Result<T, E>;
