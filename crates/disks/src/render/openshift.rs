//! OpenShift: a MachineConfig (Ignition 3.2.0) whose systemd units do the OpenShift instance-disk
//! recipe's three steps safely (make the filesystem only when missing, mount by LABEL, restorecon)
//! before crio and kubelet; optionally the MachineSet of the OpenShift instance-disk recipe
//! [recipe-ocp-instance-disk] and, for a custom role, its MachineConfigPool.

use super::intent::{DiskSelect, Intent};
use super::script::{prepare_script, script_path};
use super::units::{setup_unit, units, Unit};
use super::{
    base64, dns_label, yaml, FileKind, Platform, RenderError, Rendered, RenderedFile, Renderer,
};
use serde_json::{json, Value};

/// Ignition spec version of the rendered config. 3.2.0, not 3.4.0: the Machine Config Operator
/// accepts 3.2.0 since OpenShift 4.8 (OpenShift's own MachineConfig examples use it), while 3.4.0
/// is only accepted by newer releases (4.14+); everything emitted here (storage.files with a data
/// URL, systemd.units) exists since spec 3.0.
pub const IGNITION_VERSION: &str = "3.2.0";

/// crio and kubelet: what must start after the disk is mounted (the OpenShift instance-disk recipe
/// [recipe-ocp-instance-disk] ordered the relabel before crio.service; kubelet is added so pods
/// never land on the root disk first).
const RUNTIMES: [&str; 2] = ["crio.service", "kubelet.service"];

/// The RHCOS image for us-east-1 of the OpenShift instance-disk recipe's MachineSet; other regions
/// need --ami.
const SEED_AMI_US_EAST_1: &str = "ami-0722eb0819717090f";

/// The longest MachineConfig name: metadata.name holds 253 characters (a DNS subdomain), and
/// the file `machineconfig-NAME.yaml` must fit the 255 bytes of a file name.
const MAX_MACHINE_CONFIG_NAME: usize = 255 - "machineconfig-".len() - ".yaml".len();

/// What disktier's catalog says of an instance type's local disks. The caller looks it up
/// (`disktier-catalog` is not a dependency of this crate) and the renderer decides: a type
/// without instance store is refused, an unknown one gets a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalDisks {
    /// The type has instance store.
    Yes,
    /// The type has none; `similar` names types that have (the `d` variant of the same size
    /// first).
    No { similar: Vec<String> },
    /// The catalog does not list the type.
    Unknown,
}

/// The MachineSet of the OpenShift instance-disk recipe [recipe-ocp-instance-disk].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineSetConfig {
    pub instance_type: String,
    pub cluster_id: String,
    pub region: String,
    pub zone: Option<String>,
    pub ami: Option<String>,
    pub replicas: u32,
    /// What the catalog says of `instance_type`'s local disks.
    pub local_disks: LocalDisks,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenShiftConfig {
    pub intent: Intent,
    /// MachineConfigPool role (`worker` by default).
    pub role: String,
    pub machineset: Option<MachineSetConfig>,
    /// `--use-binary`: the path of `disktier` on the node; the unit runs `disktier setup`.
    pub use_binary: Option<String>,
    /// Accept a `use_binary` in a build, temporary or home directory (`--allow-build-binary`).
    pub allow_build_binary: bool,
}

/// A checked OpenShift render.
#[derive(Debug, Clone)]
pub struct OpenShift {
    cfg: OpenShiftConfig,
    zone: Option<String>,
    ami: Option<String>,
    /// Notes found while checking (an instance type the catalog does not know).
    notes: Vec<String>,
}

/// A Kubernetes name: DNS-1123 label (lowercase letters, digits, '-'; at most 63).
fn check_dns_label(flag: &'static str, v: &str) -> Result<(), RenderError> {
    RenderError::unless(
        dns_label(v),
        flag,
        v.to_string(),
        "use lowercase letters, digits and '-' (at most 63, not starting or ending with '-')",
    )
}

impl OpenShift {
    pub fn new(cfg: OpenShiftConfig) -> Result<OpenShift, RenderError> {
        check_dns_label("role", &cfg.role)?;
        if let Some(bin) = &cfg.use_binary {
            // It lands in a unit's ExecStart=: a validated absolute path, like --mount.
            let path = crate::valid::MountPath::parse("--use-binary", bin)?;
            // The same rule as setup's boot-time unit (found by QA: /tmp was accepted here).
            if let (Some(why), false) = (path.transient_reason(), cfg.allow_build_binary) {
                return Err(RenderError::BadValue {
                    flag: "use-binary",
                    value: bin.clone(),
                    why: format!(
                        "{why}, which may be gone at the next boot: install disktier on the node at a lasting path (the default /usr/local/bin/disktier), or pass --allow-build-binary"
                    ),
                });
            }
            if cfg.intent.select != DiskSelect::known_ephemeral() {
                return Err(RenderError::Conflict {
                    what: "--use-binary",
                    other: "--model/--by-id",
                    why: "disktier setup picks the eligible local ephemeral disks itself; drop --model/--by-id",
                });
            }
        }
        let (mut zone, mut ami, mut notes) = (None, None, Vec::new());
        if let Some(ms) = &cfg.machineset {
            // Found by QA: a "master" MachineSet was rendered, booting workers (worker user
            // data, profile and security group). Control-plane machines are not managed by
            // MachineSets (a ControlPlaneMachineSet does, one per cluster).
            if cfg.role == "master" {
                return Err(RenderError::Conflict {
                    what: "--role master",
                    other: "--machineset",
                    why: "OpenShift's control-plane machines are not managed by MachineSets (the cluster's ControlPlaneMachineSet manages them), and this MachineSet would boot workers: drop --machineset to render the master MachineConfig alone, or keep --machineset with a worker role (--role worker, or a custom one such as --role worker-ephemeral)",
                });
            }
            check_dns_label("cluster-id", &ms.cluster_id)?;
            check_machineset_name(&ms.cluster_id, &cfg.role)?;
            check_replicas(ms.replicas)?;
            check_instance_type(&ms.instance_type)?;
            // Found by QA: m6i.xlarge and t3.medium rendered a MachineSet of nodes without a
            // disk for the MachineConfig.
            match &ms.local_disks {
                LocalDisks::Yes => {}
                LocalDisks::No { similar } => {
                    return Err(RenderError::NoInstanceStore {
                        instance_type: ms.instance_type.clone(),
                        similar: if similar.is_empty() {
                            "one with a d in its family name (m6id, c6id) or an i3/i4i".into()
                        } else {
                            similar.join(", ")
                        },
                    })
                }
                LocalDisks::Unknown => notes.push(format!(
                    "{t} is not in disktier's catalog, so whether it has instance store (local NVMe) is not checked: aws ec2 describe-instance-types --instance-types {t} --query 'InstanceTypes[].InstanceStorageSupported' says; without it the MachineConfig finds no disk on these nodes",
                    t = ms.instance_type
                )),
            }
            check_region(&ms.region)?;
            let z = ms.zone.clone().unwrap_or_else(|| format!("{}a", ms.region));
            if !z.starts_with(&ms.region) || z.len() != ms.region.len() + 1 {
                return Err(RenderError::BadValue {
                    flag: "zone",
                    value: z,
                    why: format!(
                        "a zone of {} is {}a, {}b, ...",
                        ms.region, ms.region, ms.region
                    ),
                });
            }
            zone = Some(z);
            ami = Some(match (&ms.ami, ms.region.as_str()) {
                (Some(a), _) => {
                    if !a.starts_with("ami-") || a.len() < 12 || !a[4..].chars().all(|c| c.is_ascii_hexdigit()) {
                        return Err(RenderError::BadValue {
                            flag: "ami",
                            value: a.clone(),
                            why: "an AMI id looks like ami-0722eb0819717090f".into(),
                        });
                    }
                    a.clone()
                }
                (None, "us-east-1") => SEED_AMI_US_EAST_1.to_string(),
                (None, _) => {
                    return Err(RenderError::Missing {
                        what: "--ami",
                        why: "the default RHCOS image (the OpenShift instance-disk recipe's) is a us-east-1 AMI; pass the one your other MachineSets use (oc get machineset -n openshift-machine-api -o yaml | grep -A1 'ami:')",
                    })
                }
            });
        }
        Ok(OpenShift {
            cfg,
            zone,
            ami,
            notes,
        })
    }

    /// `98-[ROLE-]SLUG`, at most [`MAX_MACHINE_CONFIG_NAME`] characters: the slug of a long
    /// mount point is cut (its hash kept) so that the name fits (found by QA: a 205-character
    /// --mount with --role worker-ephemeral named machineconfig-98-...yaml 257 bytes long, and
    /// `-o DIR` failed with "File name too long"; a longer role passed the 253 characters of
    /// metadata.name).
    fn machine_config_name(&self) -> String {
        let prefix = if self.cfg.role == "worker" {
            "98-".to_string()
        } else {
            format!("98-{}-", self.cfg.role)
        };
        let slug = crate::valid::k8s_slug_within(
            &self.cfg.intent.mount,
            MAX_MACHINE_CONFIG_NAME - prefix.len(),
        );
        format!("{prefix}{slug}")
    }

    fn unit_list(&self) -> Vec<Unit> {
        match &self.cfg.use_binary {
            Some(bin) => vec![setup_unit(&self.cfg.intent, bin, &RUNTIMES)],
            None => units(&self.cfg.intent, &RUNTIMES),
        }
    }

    fn machine_config(&self, notes: &mut Vec<String>) -> Result<RenderedFile, RenderError> {
        let intent = &self.cfg.intent;
        let name = self.machine_config_name();
        let units = self.unit_list();
        let unit_values: Vec<Value> = units
            .iter()
            .map(|u| {
                let mut v = json!({"name": u.name, "contents": u.contents});
                if u.enable {
                    v["enabled"] = json!(true);
                }
                v
            })
            .collect();
        let mut config = json!({
            "ignition": {"version": IGNITION_VERSION},
            "systemd": {"units": unit_values},
        });
        let mut comments = vec![
            format!("Rendered by `disktier render openshift`: {} on the node's local ephemeral disk.", intent.mount),
            format!("Ignition {IGNITION_VERSION}: accepted by the Machine Config Operator since OpenShift 4.8; nothing"),
            "here needs a newer spec (3.4.0 is only accepted by OpenShift 4.14 and later).".into(),
            String::new(),
            "Changes from the OpenShift instance-disk recipe's MachineConfig:".into(),
            "- the disk is found at boot by model or /dev/disk/by-id/ glob instead of a hard-coded kernel".into(),
            "  name (nvme1n1), which moves between boots and can name an EBS volume on other instances;".into(),
            "- the filesystem is made only when no filesystem labelled with the label exists and the disk".into(),
            "  is blank (the recipe ran mkfs without checking), and it is mounted by LABEL;".into(),
            "- what the directory held is copied onto the new filesystem once, instead of".into(),
            "  `rm -rf /var/lib/containers/*` on every boot;".into(),
            "- the mount and relabel are ordered before crio and kubelet.".into(),
            "Reboot: the labelled filesystem is found and mounted, nothing is formatted. Stop/start: the".into(),
            "disk comes back blank, so the filesystem is made again. No marker file decides either.".into(),
        ];
        if intent.wants_prjquota() {
            comments.push(
                "prjquota: RHCOS kernels have quota support, so the mount works there (kubelet's"
                    .into(),
            );
            comments.push("ephemeral-storage quota monitoring needs xfs with prjquota).".into());
            if intent.fs == super::FsType::Ext4 {
                comments.push("ext4: made with the quota and project features, which only mount where the kernel".into());
                comments.push("has quota support (RHCOS does).".into());
            }
        }
        if self.cfg.role == "worker" {
            notes.push("role worker applies this MachineConfig to every worker; on a worker without a matching disk the mkfs unit fails visibly and the directory stays on the root disk. A custom role (--role worker-ephemeral) limits it to the MachineSet's nodes.".into());
        }
        if let Some(bin) = &self.cfg.use_binary {
            comments.push(String::new());
            comments.push(format!("--use-binary: the unit runs {bin} setup, which must be on the node (an image layer"));
            comments.push("or a storage.files entry with a verified source); it decides from the same disk state.".into());
            notes.push(format!(
                "{bin} must exist on the node before this MachineConfig applies"
            ));
        } else {
            let script = prepare_script(intent, "openshift");
            config["storage"] = json!({"files": [{
                "path": script_path(intent),
                "mode": 0o755,
                "overwrite": true,
                "contents": {"source": format!("data:text/plain;charset=utf-8;base64,{}", base64(script.as_bytes()))},
            }]});
            comments.push(String::new());
            comments.push(format!(
                "{} (embedded below as a base64 data URL) reads:",
                script_path(intent)
            ));
            comments.push(String::new());
            for line in script.lines() {
                comments.push(format!("  {line}"));
            }
        }
        let mc = json!({
            "apiVersion": "machineconfiguration.openshift.io/v1",
            "kind": "MachineConfig",
            "metadata": {
                "name": name,
                "labels": {"machineconfiguration.openshift.io/role": self.cfg.role},
            },
            "spec": {"config": config},
        });
        Ok(RenderedFile::new(
            format!("machineconfig-{name}.yaml"),
            FileKind::Yaml,
            yaml::document("MachineConfig", &comments, &mc)?,
        ))
    }

    fn machine_set(&self, ms: &MachineSetConfig) -> Result<RenderedFile, RenderError> {
        let id = &ms.cluster_id;
        let role = &self.cfg.role;
        let zone = self.zone.clone().unwrap_or_default();
        let name = machineset_name(id, role);
        let mut node_labels = json!({"disk_type": "ephemeral"});
        if role != "worker" {
            node_labels[format!("node-role.kubernetes.io/{role}")] = json!("");
        }
        let obj = json!({
            "apiVersion": "machine.openshift.io/v1beta1",
            "kind": "MachineSet",
            "metadata": {
                "name": name,
                "namespace": "openshift-machine-api",
                "labels": {"machine.openshift.io/cluster-api-cluster": id},
            },
            "spec": {
                "replicas": ms.replicas,
                "selector": {"matchLabels": {
                    "machine.openshift.io/cluster-api-cluster": id,
                    "machine.openshift.io/cluster-api-machineset": name,
                }},
                "template": {
                    "metadata": {"labels": {
                        "machine.openshift.io/cluster-api-cluster": id,
                        "machine.openshift.io/cluster-api-machine-role": role,
                        "machine.openshift.io/cluster-api-machine-type": role,
                        "machine.openshift.io/cluster-api-machineset": name,
                    }},
                    "spec": {
                        "metadata": {"labels": node_labels},
                        "providerSpec": {"value": {
                            "apiVersion": "machine.openshift.io/v1beta1",
                            "kind": "AWSMachineProviderConfig",
                            "ami": {"id": self.ami.clone().unwrap_or_default()},
                            "blockDevices": [{"ebs": {
                                "encrypted": true,
                                "iops": 0,
                                "kmsKey": {"arn": ""},
                                "volumeSize": 120,
                                "volumeType": "gp3",
                            }}],
                            "credentialsSecret": {"name": "aws-cloud-credentials"},
                            "deviceIndex": 0,
                            "iamInstanceProfile": {"id": format!("{id}-worker-profile")},
                            "instanceType": ms.instance_type,
                            "placement": {"availabilityZone": zone, "region": ms.region},
                            "securityGroups": [{"filters": [{"name": "tag:Name", "values": [format!("{id}-worker-sg")]}]}],
                            "subnet": {"filters": [{"name": "tag:Name", "values": [format!("{id}-private-{zone}")]}]},
                            "tags": [{"name": format!("kubernetes.io/cluster/{id}"), "value": "owned"}],
                            "userDataSecret": {"name": "worker-user-data"},
                        }},
                    },
                },
            },
        });
        let comments = vec![
            format!("Rendered by `disktier render openshift --machineset`: {} instances with local NVMe", ms.instance_type),
            "instance storage, labelled disk_type=ephemeral (the OpenShift instance-disk recipe). Root volume: 120 GiB gp3 as in the recipe.".into(),
            "Watch them join: oc get node -l disk_type=ephemeral -w".into(),
        ];
        Ok(RenderedFile::new(
            format!("machineset-{name}.yaml"),
            FileKind::Yaml,
            yaml::document("MachineSet", &comments, &obj)?,
        ))
    }

    fn machine_config_pool(&self) -> Result<RenderedFile, RenderError> {
        let role = &self.cfg.role;
        let obj = json!({
            "apiVersion": "machineconfiguration.openshift.io/v1",
            "kind": "MachineConfigPool",
            "metadata": {"name": role},
            "spec": {
                "machineConfigSelector": {"matchExpressions": [{
                    "key": "machineconfiguration.openshift.io/role",
                    "operator": "In",
                    "values": ["worker", role],
                }]},
                "nodeSelector": {"matchLabels": {format!("node-role.kubernetes.io/{role}"): ""}},
            },
        });
        let comments = vec![format!(
            "Rendered by `disktier render openshift --role {role}`: a pool with the worker configuration plus\nthis role's MachineConfig, for the nodes labelled node-role.kubernetes.io/{role}."
        )];
        Ok(RenderedFile::new(
            format!("machineconfigpool-{role}.yaml"),
            FileKind::Yaml,
            yaml::document("MachineConfigPool", &comments, &obj)?,
        ))
    }
}

/// The MachineSet's name: the OpenShift instance-disk recipe's `<cluster>-worker-ephemeral`; a
/// role that already says so is not repeated.
fn machineset_name(cluster_id: &str, role: &str) -> String {
    if role.ends_with("ephemeral") {
        format!("{cluster_id}-{role}")
    } else {
        format!("{cluster_id}-{role}-ephemeral")
    }
}

/// The MachineSet's name is also the value of its `machine.openshift.io/cluster-api-machineset`
/// label (selector and template), and a label value holds at most 63 characters (Kubernetes,
/// "Labels and Selectors": "must be 63 characters or less"), so the API server refuses a longer
/// one (found by QA: a 26-character cluster id with `--role worker-ephemeral-nvme-builds`
/// rendered a 64-character label value).
fn check_machineset_name(cluster_id: &str, role: &str) -> Result<(), RenderError> {
    let name = machineset_name(cluster_id, role);
    RenderError::unless(
        name.len() <= 63,
        "role",
        role.to_string(),
        &format!(
            "with --cluster-id {cluster_id} it names the MachineSet {name} ({} characters), which is also the value of its machine.openshift.io/cluster-api-machineset label, and a label value holds at most 63: use a role of at most {} characters",
            name.len(),
            63usize.saturating_sub(name.len() - role.len())
        ),
    )
}

/// A MachineSet's `spec.replicas` is an int32 (Kubernetes API conventions: "All public integer
/// fields MUST use the Go int32 or Go int64 types"; the MachineSet API declares it `*int32`), so
/// the API server refuses a larger count (left item of session 25: any u32 was rendered).
fn check_replicas(n: u32) -> Result<(), RenderError> {
    RenderError::unless(
        i32::try_from(n).is_ok(),
        "replicas",
        n.to_string(),
        "a MachineSet's spec.replicas is an int32: at most 2147483647",
    )
}

fn check_instance_type(t: &str) -> Result<(), RenderError> {
    let ok = t.split_once('.').is_some_and(|(fam, size)| {
        !fam.is_empty()
            && !size.is_empty()
            && fam
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && size
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    RenderError::unless(
        ok,
        "instance-type",
        t.to_string(),
        "an EC2 instance type looks like m6id.xlarge",
    )
}

fn check_region(r: &str) -> Result<(), RenderError> {
    let ok = r.split('-').count() >= 3
        && r.ends_with(|c: char| c.is_ascii_digit())
        && r.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    RenderError::unless(
        ok,
        "region",
        r.to_string(),
        "an AWS region looks like us-east-1",
    )
}

impl Renderer for OpenShift {
    fn platform(&self) -> Platform {
        Platform::Openshift
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        let mut notes = Vec::new();
        let mut files = vec![self.machine_config(&mut notes)?];
        if !matches!(self.cfg.role.as_str(), "worker" | "master") {
            files.push(self.machine_config_pool()?);
        }
        if let Some(ms) = &self.cfg.machineset {
            files.push(self.machine_set(ms)?);
        }
        notes.extend(self.notes.iter().cloned());
        Ok(Rendered {
            platform: Platform::Openshift,
            files,
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::IntentInput;

    fn config(role: &str, cluster_id: &str) -> OpenShiftConfig {
        OpenShiftConfig {
            intent: Intent::new(IntentInput {
                mount: "/var/lib/containers".into(),
                ..Default::default()
            })
            .unwrap(),
            role: role.into(),
            machineset: Some(MachineSetConfig {
                instance_type: "m6id.xlarge".into(),
                cluster_id: cluster_id.into(),
                region: "us-east-1".into(),
                zone: None,
                ami: None,
                replicas: 1,
                local_disks: LocalDisks::Yes,
            }),
            use_binary: None,
            allow_build_binary: false,
        }
    }

    #[test]
    fn a_long_mount_point_gives_a_machine_config_name_that_fits() {
        // Found by QA: 98-worker-ephemeral-<218-character slug> made a 257-byte file name, and
        // a longer role a name past metadata.name's 253 characters.
        let long = |c: &str| format!("/mnt/{c}{}", "a".repeat(199));
        for role in ["worker", "worker-ephemeral", &"r".repeat(63)] {
            let mut names = Vec::new();
            for mount in [long("A"), long("B"), "/var/lib/containers".to_string()] {
                let mut c = config(role, "x7k2p");
                c.machineset = None;
                c.intent.mount = crate::valid::MountPath::parse("--mount", &mount).unwrap();
                let r = OpenShift::new(c).unwrap().render().unwrap();
                let f = &r.files[0];
                assert!(f.name.len() <= 255, "{} bytes: {}", f.name.len(), f.name);
                let v: serde_json::Value = serde_yaml_ng::from_str(&f.content).unwrap();
                let name = v["metadata"]["name"].as_str().unwrap().to_string();
                assert!(name.len() <= 253 && f.name == format!("machineconfig-{name}.yaml"));
                names.push(name);
            }
            assert_ne!(names[0], names[1], "unique per path");
            let short = if role == "worker" {
                "98-var-lib-containers".to_string()
            } else {
                format!("98-{role}-var-lib-containers")
            };
            assert_eq!(names[2], short, "a short mount point is named as before");
        }
    }

    #[test]
    fn a_machineset_name_past_a_label_values_63_characters_is_refused() {
        // Found by QA: it was rendered as the machine.openshift.io/cluster-api-machineset label.
        let e = OpenShift::new(config(
            "worker-ephemeral-nvme-builds",
            "mycluster-name-long-x7k2p",
        ))
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "--role \"worker-ephemeral-nvme-builds\" is not valid: with --cluster-id mycluster-name-long-x7k2p it names the MachineSet mycluster-name-long-x7k2p-worker-ephemeral-nvme-builds-ephemeral (64 characters), which is also the value of its machine.openshift.io/cluster-api-machineset label, and a label value holds at most 63: use a role of at most 27 characters"
        );
        // 63 characters exactly still render, and every label value of the MachineSet fits.
        let id = "c".repeat(63 - "-worker-ephemeral".len());
        let r = OpenShift::new(config("worker-ephemeral", &id))
            .unwrap()
            .render()
            .unwrap();
        let ms = r
            .files
            .iter()
            .find(|f| f.name.starts_with("machineset-"))
            .unwrap();
        let v: serde_json::Value = serde_yaml_ng::from_str(&ms.content).unwrap();
        let labels = &v["spec"]["template"]["metadata"]["labels"];
        assert_eq!(
            labels["machine.openshift.io/cluster-api-machineset"]
                .as_str()
                .map(str::len),
            Some(63)
        );
    }
}
