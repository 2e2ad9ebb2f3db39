//! EKS: a nodeadm NodeConfig (`node.eks.aws/v1alpha1`) with `spec.instance.localStorage`, and a
//! Karpenter EC2NodeClass (`karpenter.k8s.aws/v1`, `instanceStorePolicy: RAID0`) with a NodePool
//! that only launches instances that have local NVMe. Both let the platform's own automation set
//! the disks up (docs/sources.md [karpenter-instance-store]: do not fight it).

use super::{dns_label, yaml, FileKind, Platform, RenderError, Rendered, RenderedFile, Renderer};
use serde_json::json;

/// nodeadm's `localStorage.strategy` (amazon-eks-ami, nodeadm/api/v1alpha1/nodeconfig_types.go:
/// enum RAID0, RAID10, Mount).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalStorageStrategy {
    Raid0,
    Raid10,
    Mount,
}

impl LocalStorageStrategy {
    pub fn name(self) -> &'static str {
        match self {
            LocalStorageStrategy::Raid0 => "RAID0",
            LocalStorageStrategy::Raid10 => "RAID10",
            LocalStorageStrategy::Mount => "Mount",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EksConfig {
    pub cluster: String,
    pub api_server_endpoint: String,
    /// Base64 of the cluster's CA bundle (aws eks describe-cluster ... certificateAuthority.data).
    pub certificate_authority: String,
    /// The service CIDR (kubernetesNetworkConfig.serviceIpv4Cidr).
    pub cidr: String,
    pub strategy: LocalStorageStrategy,
    /// nodeadm's `localStorage.mountPath` (nodeadm's default: /mnt/k8s-disks).
    pub mount_path: Option<String>,
    /// Karpenter's node IAM role.
    pub node_role: Option<String>,
    /// Name of the EC2NodeClass and NodePool.
    pub name: String,
}

/// A checked EKS render.
#[derive(Debug, Clone)]
pub struct Eks {
    cfg: EksConfig,
}

fn bad(flag: &'static str, value: &str, why: &str) -> RenderError {
    RenderError::bad_value(flag, value.to_string(), why)
}

impl Eks {
    pub fn new(cfg: EksConfig) -> Result<Eks, RenderError> {
        let name_ok = |s: &str| {
            !s.is_empty()
                && s.len() <= 100
                && s.starts_with(|c: char| c.is_ascii_alphanumeric())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if !name_ok(&cfg.cluster) {
            return Err(bad(
                "cluster",
                &cfg.cluster,
                "an EKS cluster name holds letters, digits, - and _",
            ));
        }
        if !cfg.api_server_endpoint.starts_with("https://")
            || cfg.api_server_endpoint.len() > 2048
            || !cfg
                .api_server_endpoint
                .chars()
                .all(|c| c.is_ascii_graphic())
        {
            return Err(bad(
                "api-server-endpoint",
                &cfg.api_server_endpoint,
                "give the https:// URL from aws eks describe-cluster --query cluster.endpoint",
            ));
        }
        let b64_ok = !cfg.certificate_authority.is_empty()
            && cfg
                .certificate_authority
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c));
        if !b64_ok {
            return Err(bad(
                "certificate-authority",
                &cfg.certificate_authority,
                "give the base64 data from aws eks describe-cluster --query cluster.certificateAuthority.data",
            ));
        }
        let cidr_ok = cfg.cidr.split_once('/').is_some_and(|(ip, len)| {
            (ip.parse::<std::net::Ipv4Addr>().is_ok() && len.parse::<u8>().is_ok_and(|l| l <= 32))
                || (ip.parse::<std::net::Ipv6Addr>().is_ok()
                    && len.parse::<u8>().is_ok_and(|l| l <= 128))
        });
        if !cidr_ok {
            return Err(bad(
                "cidr",
                &cfg.cidr,
                "give the service CIDR, e.g. 10.100.0.0/16 (aws eks describe-cluster --query cluster.kubernetesNetworkConfig)",
            ));
        }
        if let Some(m) = &cfg.mount_path {
            // It is written into YAML by hand: a validated path (SECURITY.md), quoted below
            // when it holds a blank.
            crate::valid::MountPath::parse("--mount", m)?;
        }
        if !dns_label(&cfg.name) {
            return Err(bad(
                "name",
                &cfg.name,
                "use lowercase letters, digits and '-'",
            ));
        }
        if let Some(r) = &cfg.node_role {
            // IAM role names: letters, digits and +=,.@_- , at most 64 (IAM User Guide,
            // "IAM object quotas": role name).
            if r.is_empty()
                || r.len() > 64
                || !r
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c))
            {
                return Err(bad(
                    "node-role",
                    r,
                    "give the IAM role name of Karpenter's nodes",
                ));
            }
        }
        Ok(Eks { cfg })
    }

    fn local_storage(&self) -> serde_json::Value {
        let mut ls = json!({"strategy": self.cfg.strategy.name()});
        if let Some(m) = &self.cfg.mount_path {
            ls["mountPath"] = json!(m);
        }
        ls
    }

    fn node_config(&self) -> Result<String, RenderError> {
        let c = &self.cfg;
        let obj = json!({
            "apiVersion": "node.eks.aws/v1alpha1",
            "kind": "NodeConfig",
            "spec": {
                "cluster": {
                    "name": c.cluster,
                    "apiServerEndpoint": c.api_server_endpoint,
                    "certificateAuthority": c.certificate_authority,
                    "cidr": c.cidr,
                },
                "instance": {"localStorage": self.local_storage()},
            },
        });
        let comments = vec![
            "Rendered by `disktier render eks`: nodeadm (Amazon Linux 2023 EKS AMIs) puts the instance-store".to_string(),
            format!("NVMe disks to work at boot with strategy {}: {}.", c.strategy.name(), match c.strategy {
                LocalStorageStrategy::Raid0 => "one RAID0 array of all of them, xfs, mounted by UUID",
                LocalStorageStrategy::Raid10 => "one RAID10 array (at least 4 disks)",
                LocalStorageStrategy::Mount => "one mount per disk",
            }),
            "It finds them by their by-id name (*NVMe_Instance_Storage_*), never by kernel name, and binds".into(),
            "kubelet, containerd and /var/log/pods onto them. Pass it as a user-data MIME part with".into(),
            "Content-Type: application/node.eks.aws (launch template of a managed or self-managed group).".into(),
        ];
        yaml::document("NodeConfig", &comments, &obj)
    }

    fn ec2_node_class(&self) -> Result<String, RenderError> {
        let c = &self.cfg;
        let role = c
            .node_role
            .clone()
            .unwrap_or_else(|| format!("KarpenterNodeRole-{}", c.cluster));
        let mut spec = json!({
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": role,
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": c.cluster}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": c.cluster}}],
        });
        let mut comments = vec![
            "Rendered by `disktier render eks`: Karpenter nodes whose instance-store NVMe disks hold kubelet".into(),
            "and containerd state.".into(),
        ];
        if c.strategy == LocalStorageStrategy::Raid0 {
            spec["instanceStorePolicy"] = json!("RAID0");
            comments.push("instanceStorePolicy RAID0: Karpenter has nodeadm build the array, and only with it does".into());
            comments.push("Karpenter count the instance store as the node's ephemeral-storage capacity (Karpenter".into());
            comments.push(
                "NodeClass docs), so pods with ephemeral-storage requests schedule onto these nodes."
                    .into(),
            );
        } else {
            // Karpenter's instanceStorePolicy only knows RAID0; other strategies go through
            // nodeadm's NodeConfig in the user data, which Karpenter merges with its own.
            let user_data = format!(
                "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: {}\n{}--BOUNDARY--\n",
                c.strategy.name(),
                c.mount_path
                    .as_ref()
                    .map(|m| {
                        // A YAML plain scalar cannot hold ": "; a JSON string is a YAML
                        // double-quoted scalar.
                        let v = if m.contains(' ') {
                            serde_json::Value::from(m.as_str()).to_string()
                        } else {
                            m.clone()
                        };
                        format!("      mountPath: {v}\n")
                    })
                    .unwrap_or_default()
            );
            spec["userData"] = json!(user_data);
            comments.push(format!(
                "strategy {}: Karpenter's instanceStorePolicy only takes RAID0, so the NodeConfig travels in",
                c.strategy.name()
            ));
            comments.push("userData; Karpenter then does not count the instance store as ephemeral-storage capacity.".into());
        }
        let obj = json!({
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": c.name},
            "spec": spec,
        });
        yaml::document("EC2NodeClass", &comments, &obj)
    }

    fn node_pool(&self) -> Result<String, RenderError> {
        let c = &self.cfg;
        let obj = json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": c.name},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": c.name},
                "requirements": [{
                    "key": "karpenter.k8s.aws/instance-local-nvme",
                    "operator": "Gt",
                    "values": ["0"],
                }],
            }}},
        });
        yaml::document(
            "NodePool",
            &["Rendered by `disktier render eks`: only instance types with local NVMe (instance-local-nvme > 0 GiB),\nso the EC2NodeClass's instance store policy has disks to work with.".to_string()],
            &obj,
        )
    }
}

impl Renderer for Eks {
    fn platform(&self) -> Platform {
        Platform::Eks
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        let mut notes = vec![];
        if self.cfg.strategy == LocalStorageStrategy::Raid10 {
            notes.push("RAID10 needs at least 4 instance-store disks (nodeadm); instances with fewer fail to set up".into());
        }
        let files = vec![
            RenderedFile::new("nodeconfig.yaml", FileKind::Yaml, self.node_config()?),
            RenderedFile::new(
                format!("ec2nodeclass-{}.yaml", self.cfg.name),
                FileKind::Yaml,
                self.ec2_node_class()?,
            ),
            RenderedFile::new(
                format!("nodepool-{}.yaml", self.cfg.name),
                FileKind::Yaml,
                self.node_pool()?,
            ),
        ];
        Ok(Rendered {
            platform: Platform::Eks,
            files,
            notes,
        })
    }
}
