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
    #[error("no node selection: pass --nodes A,B, --selector KEY=VALUE, --control-plane or --all-nodes")]
    NoSelection,
    #[error("cannot read the kubeconfig {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        source: kube::config::KubeconfigError,
    },
    #[error("no Kubernetes configuration: set KUBECONFIG, pass --kubeconfig, or run inside a pod ({0})")]
    NoConfig(#[source] kube::config::InferConfigError),
    #[error("kubeconfig: {0}")]
    Config(#[source] kube::config::KubeconfigError),
    #[error("cannot build the Kubernetes client: {0}")]
    Client(#[source] kube::Error),
    #[error("namespace {0} does not exist: create it with `kubectl create namespace {0}`, or pass --create-namespace")]
    NoNamespace(String),
    #[error("{action}: {source}")]
    Api {
        action: String,
        source: kube::Error,
    },
    #[error("the nodes selected by {0} match no node")]
    NoNodes(String),
    #[error("cannot render the manifests as YAML: {0}")]
    Yaml(#[from] serde_yaml_ng::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("interrupted by {0}: every Job and Pod this run made was deleted")]
    Interrupted(&'static str),
}

impl FleetError {
    pub(crate) fn api(action: impl Into<String>, source: kube::Error) -> FleetError {
        FleetError::Api {
            action: action.into(),
            source,
        }
    }
}

pub type Result<T, E = FleetError> = std::result::Result<T, E>;
