//! The Kubernetes objects a fleet run makes: one Job per node, pinned with `nodeName`. Only
//! fields a 1.20 API server knows are set (the oldest server the project tests against; newer
//! Job fields such as `podFailurePolicy` would be dropped there without a word).

use crate::command::NodeCommand;
use crate::error::{FleetError, Result};
use crate::ttl::check_ttl;
// The names the manifests carry, checked: kept reachable here, where callers look for them.
pub use crate::names::{
    check_dns_label, check_image, check_node_name, check_run_id, check_service_account, job_name,
    job_names, MAX_JOB_NAME,
};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, EnvVarSource, HostPathVolumeSource,
    Namespace, ObjectFieldSelector, PodSpec, PodTemplateSpec, ResourceRequirements,
    SecurityContext, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;
use std::time::Duration;

/// The label every object fleet makes carries (the Kubernetes recommended label).
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const MANAGED_BY_VALUE: &str = "disktier";
/// The label that groups one fleet run's objects.
pub const RUN_LABEL: &str = "disktier.io/fleet-run";
/// The annotation that names the node in full (node names may be longer than a label value).
pub const NODE_ANNOTATION: &str = "disktier.io/node";
/// The container's name (logs are read from it).
pub const CONTAINER: &str = "disktier";

/// The selector that finds everything any fleet run made.
pub fn managed_selector() -> String {
    format!("{MANAGED_BY}={MANAGED_BY_VALUE}")
}

/// The selector that finds one run's objects.
pub fn run_selector(run_id: &str) -> String {
    format!("{MANAGED_BY}={MANAGED_BY_VALUE},{RUN_LABEL}={run_id}")
}

/// What `fleet clean` deletes in `namespace`, checked (the namespace first, then `run`): the
/// selector of one run's objects (`--run`), or of every fleet run's.
pub fn clean_selector(namespace: &str, run: Option<&str>) -> Result<String> {
    check_dns_label("--namespace", namespace)?;
    Ok(match run {
        Some(r) => {
            check_dns_label("--run", r)?;
            run_selector(r)
        }
        None => managed_selector(),
    })
}

/// `imagePullPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullPolicy {
    Always,
    IfNotPresent,
    Never,
}

impl PullPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            PullPolicy::Always => "Always",
            PullPolicy::IfNotPresent => "IfNotPresent",
            PullPolicy::Never => "Never",
        }
    }
}

/// Everything the Jobs are made from, checked.
#[derive(Debug, Clone)]
pub struct JobConfig {
    pub run_id: String,
    pub namespace: String,
    pub image: String,
    pub pull_policy: PullPolicy,
    pub service_account: Option<String>,
    /// The Job's `activeDeadlineSeconds`.
    pub timeout: Duration,
    /// The Job's `ttlSecondsAfterFinished`: the cluster's own cleanup if the client dies
    /// before it deletes the Job (alpha in 1.20, GA in 1.23).
    pub ttl: Duration,
    pub tolerate_all: bool,
    pub command: NodeCommand,
}

/// The options the Jobs are made from, as given: [`JobOptions::into_config`] checks them.
#[derive(Debug, Clone)]
pub struct JobOptions {
    /// The fleet run id (already checked or made by fleet).
    pub run_id: String,
    pub namespace: String,
    pub image: String,
    pub pull_policy: PullPolicy,
    pub service_account: Option<String>,
    /// `--timeout`: the Job's `activeDeadlineSeconds`.
    pub timeout: Duration,
    /// `--ttl`: the Job's `ttlSecondsAfterFinished`.
    pub ttl: Duration,
    pub tolerate_all: bool,
}

impl JobOptions {
    /// The Jobs' configuration with the node command `command` (the words after `--`). The
    /// first problem found is the error, in this order: the namespace, the image, the service
    /// account, a zero timeout, the TTL ([`check_ttl`]), then the node command.
    pub fn into_config(self, command: &[String]) -> Result<JobConfig> {
        check_dns_label("--namespace", &self.namespace)?;
        check_image(&self.image)?;
        if let Some(sa) = &self.service_account {
            check_service_account(sa)?;
        }
        if self.timeout.is_zero() {
            return Err(FleetError::ZeroTimeout);
        }
        // activeDeadlineSeconds is whole seconds (Kubernetes API reference, JobSpec: an
        // int64 of seconds): 500ms was written as 1 and 1.5s as 1, while the client judged the
        // node by the duration as given.
        if self.timeout.subsec_nanos() != 0 {
            return Err(FleetError::Invalid {
                what: "--timeout",
                value: format!("{:?}", self.timeout),
                why: format!(
                    "a Job's activeDeadlineSeconds counts whole seconds: give a whole number of them, e.g. {}s",
                    self.timeout.as_secs().max(1)
                ),
            });
        }
        check_ttl(self.ttl)?;
        Ok(JobConfig {
            run_id: self.run_id,
            namespace: self.namespace,
            image: self.image,
            pull_policy: self.pull_policy,
            service_account: self.service_account,
            timeout: self.timeout,
            ttl: self.ttl,
            tolerate_all: self.tolerate_all,
            command: NodeCommand::parse(command)?,
        })
    }
}

fn labels(run_id: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (MANAGED_BY.to_string(), MANAGED_BY_VALUE.to_string()),
        ("app.kubernetes.io/name".to_string(), "disktier".to_string()),
        (RUN_LABEL.to_string(), run_id.to_string()),
    ])
}

/// Resource requests and limits of the node pod. Requests are small so the pod fits on a busy
/// node; the memory limit bounds the engine (io_uring rings, buffers of up to iodepth x block
/// size); no CPU limit, because CFS throttling would show up as I/O latency and spoil the very
/// figure being measured.
fn resources() -> ResourceRequirements {
    let q = |s: &str| Quantity(s.to_string());
    ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_string(), q("250m")),
            ("memory".to_string(), q("128Mi")),
        ])),
        limits: Some(BTreeMap::from([("memory".to_string(), q("1Gi"))])),
        ..Default::default()
    }
}

/// The node command's environment: `NODE_NAME` (downward API) labels its metrics with the node,
/// and `DISKTIER_TERMINATION_LOG` makes it leave its short verdict in the file the kubelet turns
/// into the container's termination message (the default `terminationMessagePath`).
fn env() -> Vec<EnvVar> {
    vec![
        EnvVar {
            name: "NODE_NAME".into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "spec.nodeName".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
        EnvVar {
            name: "DISKTIER_TERMINATION_LOG".into(),
            value: Some("/dev/termination-log".into()),
            ..Default::default()
        },
    ]
}

/// The pod's tolerations: every taint with `--tolerate-all`, else the control plane's
/// NoSchedule role taints (`master` on clusters before 1.24 and OpenShift).
///
/// A pod bound with `nodeName` never meets the scheduler, and NoSchedule is enforced only by the
/// scheduler (Kubernetes API reference, core/v1 `Taint.effect`: NoSchedule "allow[s] all pods
/// submitted to Kubelet without going through the scheduler to start"), so these two do not
/// decide whether the pod runs; they are kept so the Job says what it means and stays right if
/// someone applies the `--dry-run` YAML with `nodeName` swapped for a node selector. What does
/// act on a bound pod is NoExecute: the node lifecycle controller's taint manager evicts a pod
/// that does not tolerate one ("enforced by NodeController"; kubelets after 1.20 also refuse it
/// at admission, `pkg/kubelet/lifecycle/predicate.go`). [`crate::select`] therefore skips a
/// node with a NoExecute taint these do not tolerate.
pub fn tolerations(all: bool) -> Vec<Toleration> {
    if all {
        return vec![Toleration {
            operator: Some("Exists".into()),
            ..Default::default()
        }];
    }
    [
        "node-role.kubernetes.io/control-plane",
        "node-role.kubernetes.io/master",
    ]
    .into_iter()
    .map(|k| Toleration {
        key: Some(k.into()),
        operator: Some("Exists".into()),
        effect: Some("NoSchedule".into()),
        ..Default::default()
    })
    .collect()
}

fn security_context(cmd: &NodeCommand) -> SecurityContext {
    if cmd.privileged.is_some() {
        return SecurityContext {
            privileged: Some(true),
            run_as_user: Some(0),
            ..Default::default()
        };
    }
    // Root, because the directories measured (/var/lib/etcd, /var/lib/containers) belong to
    // root or to a service user; DAC_OVERRIDE is the one capability that lets root create its
    // test file in a directory another user owns. Everything else is dropped.
    SecurityContext {
        run_as_user: Some(0),
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            add: Some(vec!["DAC_OVERRIDE".into()]),
        }),
        ..Default::default()
    }
}

/// Where the container gets a writable directory besides the paths it measures.
const TMP: &str = "/tmp";

/// The Job that runs the node command on `node`.
pub fn job(cfg: &JobConfig, node: &str) -> Job {
    let labels = labels(&cfg.run_id);
    let annotations = BTreeMap::from([(NODE_ANNOTATION.to_string(), node.to_string())]);
    let mut volumes = Vec::new();
    let mut mounts = Vec::new();
    for (i, hp) in cfg.command.host_paths.iter().enumerate() {
        let name = format!("host-{i}");
        volumes.push(Volume {
            name: name.clone(),
            host_path: Some(HostPathVolumeSource {
                path: hp.path.clone(),
                type_: hp.kind.host_path_type().map(str::to_string),
            }),
            ..Default::default()
        });
        mounts.push(VolumeMount {
            name,
            mount_path: hp.path.clone(),
            ..Default::default()
        });
    }
    // The root filesystem is read-only; the engine and the runtime may still want a /tmp.
    // When the node command names the node's /tmp, that mount is the writable /tmp: a second
    // volume at /tmp would make the API server refuse the Job (mount paths must be unique).
    if !mounts.iter().any(|m| m.mount_path == TMP) {
        volumes.push(Volume {
            name: "tmp".into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Default::default()
        });
        mounts.push(VolumeMount {
            name: "tmp".into(),
            mount_path: TMP.into(),
            ..Default::default()
        });
    }
    let secs = |d: Duration| i64::try_from(d.as_secs().max(1)).unwrap_or(i64::MAX);
    Job {
        metadata: ObjectMeta {
            name: Some(job_name(&cfg.run_id, node)),
            namespace: Some(cfg.namespace.clone()),
            labels: Some(labels.clone()),
            annotations: Some(annotations.clone()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            active_deadline_seconds: Some(secs(cfg.timeout)),
            // check_ttl refused a TTL above i32::MAX seconds.
            ttl_seconds_after_finished: Some(i32::try_from(cfg.ttl.as_secs()).unwrap_or(i32::MAX)),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    annotations: Some(annotations),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    node_name: Some(node.to_string()),
                    restart_policy: Some("Never".into()),
                    service_account_name: cfg.service_account.clone(),
                    // The node command never talks to the API server.
                    automount_service_account_token: Some(false),
                    tolerations: Some(tolerations(cfg.tolerate_all)),
                    host_network: cfg.command.host_network.map(|_| true),
                    // With the node's network, cluster DNS still resolves (Kubernetes docs,
                    // "DNS for Services and Pods", Pod's DNS Policy).
                    dns_policy: cfg
                        .command
                        .host_network
                        .map(|_| "ClusterFirstWithHostNet".to_string()),
                    containers: vec![Container {
                        name: CONTAINER.into(),
                        image: Some(cfg.image.clone()),
                        image_pull_policy: Some(cfg.pull_policy.as_str().into()),
                        args: Some(cfg.command.container_args()),
                        env: Some(env()),
                        resources: Some(resources()),
                        security_context: Some(security_context(&cfg.command)),
                        termination_message_policy: Some("FallbackToLogsOnError".into()),
                        volume_mounts: Some(mounts),
                        ..Default::default()
                    }],
                    volumes: Some(volumes),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

/// The namespace object `--create-namespace` makes.
pub fn namespace(name: &str) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Objects as multi-document YAML, each with its `apiVersion` and `kind`.
pub fn to_yaml<T: serde::Serialize>(objects: &[T]) -> Result<String> {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(o)?);
    }
    Ok(out)
}

/// Options every test of the crate can start from (a run id, the default namespace, the
/// release image, a 600 s timeout and TTL).
#[cfg(test)]
pub(crate) fn example_options() -> JobOptions {
    JobOptions {
        run_id: "20261124-121935-a3f90c".into(),
        namespace: "disktier".into(),
        image: "localhost/disktier:0.1.0".into(),
        pull_policy: PullPolicy::IfNotPresent,
        service_account: None,
        timeout: Duration::from_secs(600),
        ttl: Duration::from_secs(600),
        tolerate_all: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(cmd: &str) -> JobConfig {
        let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        JobOptions {
            ttl: Duration::from_secs(3600),
            ..options()
        }
        .into_config(&words)
        .unwrap()
    }

    fn options() -> JobOptions {
        example_options()
    }

    #[test]
    fn options_are_checked_in_order_before_the_node_command() {
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let c = options().into_config(&words("check etcd /x")).unwrap();
        assert_eq!(
            (c.namespace.as_str(), c.timeout),
            ("disktier", Duration::from_secs(600))
        );
        let err = |o: JobOptions, cmd: &str| o.into_config(&words(cmd)).unwrap_err().to_string();
        let mut o = options();
        o.namespace = "Bad NS".into();
        o.timeout = Duration::ZERO;
        assert!(err(o, "rm -rf /x").starts_with("--namespace"));
        let mut o = options();
        o.service_account = Some("Bad".into());
        o.timeout = Duration::ZERO;
        assert!(err(o, "check etcd /x").starts_with("--service-account"));
        let mut o = options();
        o.timeout = Duration::ZERO;
        o.ttl = Duration::ZERO;
        assert_eq!(
            err(o, "check etcd /x"),
            "--timeout 0 would end every Job at once: give a duration such as 10m"
        );
        let mut o = options();
        o.ttl = Duration::ZERO;
        assert!(err(o, "rm -rf /x").starts_with("--ttl"));
        // QA: --timeout 500ms made a Job with activeDeadlineSeconds 1, 1.5s one with 1.
        for (ms, fix) in [(500, "1s"), (1500, "1s"), (90_250, "90s")] {
            let mut o = options();
            o.timeout = Duration::from_millis(ms);
            let e = err(o, "check etcd /x");
            assert!(
                e.starts_with("--timeout") && e.contains("whole seconds") && e.ends_with(fix),
                "{e}"
            );
        }
        let mut o = options();
        o.timeout = Duration::from_secs(90);
        o.into_config(&words("check etcd /x")).unwrap();
        assert!(err(options(), "rm -rf /x").contains("not one fleet runs"));
    }

    #[test]
    fn clean_selects_one_run_or_every_run() {
        assert_eq!(
            clean_selector("disktier", None).unwrap(),
            "app.kubernetes.io/managed-by=disktier"
        );
        assert_eq!(
            clean_selector("disktier", Some("r-1")).unwrap(),
            "app.kubernetes.io/managed-by=disktier,disktier.io/fleet-run=r-1"
        );
        let e = clean_selector("Bad NS", Some("Bad"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--namespace"), "{e}");
        let e = clean_selector("disktier", Some("Bad"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--run"), "{e}");
    }

    #[test]
    fn job_is_pinned_bounded_and_labelled() {
        let j = job(&cfg("check etcd /var/lib/etcd"), "cp-1");
        let v = serde_json::to_value(&j).unwrap();
        assert_eq!(v["apiVersion"], "batch/v1");
        assert_eq!(v["kind"], "Job");
        assert_eq!(v["spec"]["backoffLimit"], 0);
        assert_eq!(v["spec"]["activeDeadlineSeconds"], 600);
        assert_eq!(v["spec"]["ttlSecondsAfterFinished"], 3600);
        let pod = &v["spec"]["template"]["spec"];
        assert_eq!(pod["nodeName"], "cp-1");
        assert_eq!(pod["restartPolicy"], "Never");
        let c = &pod["containers"][0];
        assert_eq!(c["terminationMessagePolicy"], "FallbackToLogsOnError");
        assert_eq!(c["env"][0]["name"], "NODE_NAME");
        assert_eq!(
            c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
            "spec.nodeName"
        );
        assert_eq!(c["env"][1]["name"], "DISKTIER_TERMINATION_LOG");
        assert_eq!(c["env"][1]["value"], "/dev/termination-log");
        assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
        assert!(c["securityContext"].get("privileged").is_none());
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/var/lib/etcd");
        assert_eq!(pod["volumes"][0]["hostPath"]["path"], "/var/lib/etcd");
        assert_eq!(pod["volumes"][0]["hostPath"]["type"], "Directory");
        assert_eq!(
            v["metadata"]["labels"][MANAGED_BY], "disktier",
            "leftovers are found by this label"
        );
        assert_eq!(
            v["spec"]["template"]["metadata"]["labels"][RUN_LABEL],
            "20261124-121935-a3f90c"
        );
        let keys: Vec<_> = pod["tolerations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["key"].as_str().unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "node-role.kubernetes.io/control-plane",
                "node-role.kubernetes.io/master"
            ]
        );
    }

    #[test]
    fn the_nodes_tmp_named_by_the_command_is_the_only_volume_at_tmp() {
        // QA: `check etcd /tmp` mounted the node's /tmp and an emptyDir both at /tmp, and the
        // API server refused every node's Job ("must be unique").
        for (cmd, tmp_volume) in [
            ("check etcd /tmp", "host-0"),
            ("check etcd /tmp/etcd", "tmp"),
            ("check etcd /var/lib/etcd", "tmp"),
        ] {
            let v = serde_json::to_value(job(&cfg(cmd), "n")).unwrap();
            let pod = &v["spec"]["template"]["spec"];
            let at_tmp: Vec<&serde_json::Value> = pod["containers"][0]["volumeMounts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["mountPath"] == "/tmp")
                .collect();
            assert_eq!(at_tmp.len(), 1, "{cmd}: {at_tmp:?}");
            assert_eq!(at_tmp[0]["name"], tmp_volume, "{cmd}");
            let names: Vec<&str> = pod["volumes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["name"].as_str().unwrap())
                .collect();
            assert_eq!(
                names.contains(&"tmp"),
                tmp_volume == "tmp",
                "{cmd}: {names:?}"
            );
        }
    }

    #[test]
    fn device_runs_privileged_and_tolerate_all_tolerates_everything() {
        let mut c = cfg("bench /dev/sdb --rw randread");
        c.tolerate_all = true;
        let v = serde_json::to_value(job(&c, "n")).unwrap();
        let pod = &v["spec"]["template"]["spec"];
        assert_eq!(pod["containers"][0]["securityContext"]["privileged"], true);
        assert_eq!(pod["volumes"][0]["hostPath"]["type"], "BlockDevice");
        assert_eq!(
            pod["tolerations"],
            serde_json::json!([{"operator": "Exists"}])
        );
    }
}
