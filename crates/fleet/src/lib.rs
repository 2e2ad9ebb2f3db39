//! `disktier fleet`: every node of a Kubernetes cluster measured through the cluster itself.
//! One Job per node, pinned with `nodeName`, runs a disktier command with `--format json`; its
//! document comes back through the pod's log, the nodes are compared, and everything made is
//! deleted again.
//!
//! - [`command`]: the node-side command, its host paths and privilege;
//! - [`manifest`]: the Jobs (and the namespace), as objects and as YAML;
//! - [`names`]: the names given and taken (namespace, run id, node, image), and Job names;
//! - [`rbac`]: the least privilege a run needs;
//! - [`select`]: which nodes are measured and which are skipped, with the reason;
//! - [`result`]: a node's document, parsed, and its key figures;
//! - [`summary`]: median, worst, outliers, the exit status;
//! - [`kube_run`]: the client: create, watch, collect, clean up;
//! - [`dry_run`]: `--dry-run`'s nodes and manifests, nothing created.

pub mod command;
pub mod dry_run;
pub mod error;
pub mod kube_run;
pub mod manifest;
pub mod names;
pub mod rbac;
pub mod result;
pub mod select;
pub mod shown;
pub mod summary;
pub mod ttl;

pub use error::{FleetError, Result};
pub use k8s_openapi;
pub use kube;
