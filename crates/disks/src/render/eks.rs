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

/// The IAM role of Karpenter's nodes when none is given: the name Karpenter's getting-started
/// guide creates, KarpenterNodeRole-CLUSTER.
fn default_node_role(cluster: &str) -> String {
    format!("KarpenterNodeRole-{cluster}")
}

/// An API server URL: `https://HOST[:PORT]` and at most a `/` after it, the host a DNS name
/// (RFC 1123 labels of letters, digits and `-`, at most 253 characters), an IPv4 address or a
/// bracketed IPv6 address, the port 1 to 65535 (found by QA: `https://a"b/$(id)` was accepted).
fn https_endpoint(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => (&authority[..i], Some(&authority[i + 1..])),
        _ => (authority, None),
    };
    let port_ok = port.is_none_or(|p| !p.starts_with('0') && p.parse::<u16>().is_ok_and(|n| n > 0));
    let label = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let host_ok = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        v6.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        host.parse::<std::net::Ipv4Addr>().is_ok()
            || (host.len() <= 253
                && host.split('.').all(label)
                && host.bytes().any(|b| b.is_ascii_alphabetic()))
    };
    port_ok && host_ok
}

/// The network of `ADDR/LEN` (the address with its host bits cleared) and whether `ADDR` had
/// host bits set, or `None` when it is not an IPv4 or IPv6 CIDR.
fn network(cidr: &str) -> Option<(String, bool)> {
    use std::net::{Ipv4Addr, Ipv6Addr};
    let (ip, len) = cidr.split_once('/')?;
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) || len.len() > 3 {
        return None;
    }
    let len: u32 = len.parse().ok()?;
    if let Ok(a) = ip.parse::<Ipv4Addr>() {
        let a = u32::from(a);
        let mask = u32::MAX.checked_shl(32 - len.min(32)).unwrap_or(0);
        (len <= 32).then(|| {
            (
                format!("{}/{len}", Ipv4Addr::from(a & mask)),
                a & !mask != 0,
            )
        })
    } else if let Ok(a) = ip.parse::<Ipv6Addr>() {
        let a = u128::from(a);
        let mask = u128::MAX.checked_shl(128 - len.min(128)).unwrap_or(0);
        (len <= 128).then(|| {
            (
                format!("{}/{len}", Ipv6Addr::from(a & mask)),
                a & !mask != 0,
            )
        })
    } else {
        None
    }
}

/// A checked mount path as a YAML scalar written by hand: plain when it holds only letters,
/// digits and `/ - _ .`, else a JSON string (a YAML double-quoted scalar). A plain scalar cannot
/// hold ": " nor end in ":" (found by QA: `--mount /mnt/x:` wrote `mountPath: /mnt/x:`, which no
/// YAML parser reads, so nodeadm failed on the user data).
fn yaml_path(m: &str) -> String {
    if m.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c))
    {
        m.to_string()
    } else {
        serde_json::Value::from(m).to_string()
    }
}

impl Eks {
    pub fn new(mut cfg: EksConfig) -> Result<Eks, RenderError> {
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
        if !https_endpoint(&cfg.api_server_endpoint) {
            return Err(bad(
                "api-server-endpoint",
                &cfg.api_server_endpoint,
                "give the https:// URL from aws eks describe-cluster --query cluster.endpoint (https://HOST[:PORT], the host a DNS name or an IP address)",
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
        match network(&cfg.cidr) {
            Some((_, false)) => {}
            Some((net, true)) => {
                // Found by QA: 10.100.0.1/16 was accepted.
                return Err(bad(
                    "cidr",
                    &cfg.cidr,
                    &format!("it has host bits set: the service CIDR is a network address, {net} (aws eks describe-cluster --query cluster.kubernetesNetworkConfig)"),
                ));
            }
            None => {
                return Err(bad(
                    "cidr",
                    &cfg.cidr,
                    "give the service CIDR, e.g. 10.100.0.0/16 (aws eks describe-cluster --query cluster.kubernetesNetworkConfig)",
                ))
            }
        }
        if let Some(m) = &cfg.mount_path {
            // It is written into YAML by hand: a validated path (SECURITY.md), quoted below
            // when it holds a blank; normalised, and refused in /proc, /sys or /dev, as setup
            // and the other renderers do (found by QA: `--mount /proc/x//` was written as given).
            let p = crate::valid::MountPath::parse("--mount", m)?;
            super::intent::refuse_as_setup(crate::setup::config::kernel_fs_refusal("--mount", &p))?;
            cfg.mount_path = Some(p.to_string());
        }
        if !dns_label(&cfg.name) {
            // The NodePool's name is also the value of its nodes' karpenter.sh/nodepool label: a
            // DNS label (kubernetes.io/docs/concepts/overview/working-with-objects/names/, "RFC
            // 1123 Label Names"). A name of the right characters was refused as if it had others
            // (QA: 64 lowercase letters, "use lowercase letters, digits and '-'").
            let why = if cfg.name.len() > 63 {
                format!(
                    "it has {} characters and the NodePool's name is also its nodes' karpenter.sh/nodepool label value, which holds at most 63 (an RFC 1123 DNS label): give a shorter name",
                    cfg.name.len()
                )
            } else {
                "use 1 to 63 lowercase letters, digits and '-', starting and ending with a letter or digit (an RFC 1123 DNS label)".to_string()
            };
            return Err(bad("name", &cfg.name, &why));
        }
        if cfg.node_role.is_none() {
            // The default role is Karpenter's getting-started name, KarpenterNodeRole-CLUSTER,
            // held to IAM's 64 characters like a given one (found by QA: a 50-character cluster
            // name rendered a 68-character role, which no IAM role can have).
            let role = default_node_role(&cfg.cluster);
            if role.len() > 64 {
                return Err(bad(
                    "node-role",
                    &role,
                    &format!(
                        "the default role name KarpenterNodeRole-CLUSTER is {} characters here, past IAM's 64 for a role name: pass --node-role with the IAM role name of Karpenter's nodes",
                        role.len()
                    ),
                ));
            }
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
            .unwrap_or_else(|| default_node_role(&c.cluster));
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
                    .map(|m| format!("      mountPath: {}\n", yaml_path(m)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mount: &str) -> EksConfig {
        EksConfig {
            cluster: "prod".into(),
            api_server_endpoint: "https://example.com".into(),
            certificate_authority: "LS0t".into(),
            cidr: "10.100.0.0/16".into(),
            strategy: LocalStorageStrategy::Raid0,
            mount_path: Some(mount.into()),
            node_role: None,
            name: "local-nvme".into(),
        }
    }

    #[test]
    fn the_mount_path_is_normalised_and_not_in_a_kernel_filesystem() {
        let e = Eks::new(cfg("/mnt//k8s-disks/")).unwrap();
        assert_eq!(e.cfg.mount_path.as_deref(), Some("/mnt/k8s-disks"));
        let e = Eks::new(cfg("/proc/x")).unwrap_err().to_string();
        assert!(e.contains("lies in /proc, a kernel filesystem"), "{e}");
    }

    #[test]
    fn a_name_past_63_characters_is_refused_for_its_length() {
        let mut c = cfg("/mnt/k8s-disks");
        c.name = "a".repeat(63);
        assert!(Eks::new(c.clone()).is_ok());
        c.name = "a".repeat(64);
        let e = Eks::new(c.clone()).unwrap_err().to_string();
        assert!(
            e.contains("it has 64 characters") && e.contains("at most 63"),
            "{e}"
        );
        c.name = "a.b".into();
        let e = Eks::new(c).unwrap_err().to_string();
        assert!(e.contains("use 1 to 63 lowercase letters"), "{e}");
    }

    #[test]
    fn a_default_node_role_past_iams_64_characters_is_refused() {
        let mut c = cfg("/mnt/k8s-disks");
        c.cluster = "c".repeat(46);
        let e = Eks::new(c.clone()).unwrap();
        let class = e.ec2_node_class().unwrap();
        assert!(
            class.contains(&format!("role: KarpenterNodeRole-{}", "c".repeat(46))),
            "{class}"
        );
        c.cluster = "c".repeat(47);
        let e = Eks::new(c.clone()).unwrap_err().to_string();
        assert!(
            e.contains("is 65 characters here, past IAM's 64") && e.contains("--node-role"),
            "{e}"
        );
        c.node_role = Some("nodes".into());
        assert!(Eks::new(c).is_ok());
    }

    #[test]
    fn the_user_datas_mount_path_is_read_back_as_given() {
        // Found by QA: --strategy mount --mount /mnt/x: wrote `mountPath: /mnt/x:` into the
        // EC2NodeClass's userData, which no YAML parser reads.
        for mount in [
            "/mnt/x:",
            "/mnt/a: b",
            "/mnt/k8s-disks",
            "/mnt/@x+y:z",
            "/mnt/my disk",
        ] {
            let mut c = cfg(mount);
            c.strategy = LocalStorageStrategy::Mount;
            let eks = Eks::new(c).unwrap();
            let class: serde_json::Value =
                serde_yaml_ng::from_str(&eks.ec2_node_class().unwrap()).unwrap();
            let user_data = class["spec"]["userData"].as_str().unwrap();
            let part = user_data
                .split_once("Content-Type: application/node.eks.aws\n\n")
                .and_then(|(_, p)| p.split_once("--BOUNDARY--"))
                .map(|(p, _)| p)
                .unwrap();
            let node_config: serde_json::Value =
                serde_yaml_ng::from_str(part).unwrap_or_else(|e| panic!("{mount}: {e}\n{part}"));
            assert_eq!(
                node_config["spec"]["instance"]["localStorage"]["mountPath"],
                serde_json::Value::from(mount),
                "{part}"
            );
        }
    }

    #[test]
    fn endpoints_are_https_urls_with_a_valid_host() {
        for ok in [
            "https://ABCDEF0123456789.gr7.us-west-2.eks.amazonaws.com",
            "https://x.eks.amazonaws.com/",
            "https://10.0.0.1:6443",
            "https://[fd00::1]:443",
            "https://localhost",
        ] {
            assert!(https_endpoint(ok), "{ok}");
        }
        for bad in [
            "https://a\"b/$(id)",
            "http://x.eks.amazonaws.com",
            "https://",
            "https://x.eks.amazonaws.com/path",
            "https://x..com",
            "https://-x.com",
            "https://x.com:0",
            "https://x.com:65536",
            "https://user@x.com",
            "https://x.com?q=1",
            "https://1.2.3",
        ] {
            assert!(!https_endpoint(bad), "{bad}");
        }
    }

    #[test]
    fn a_cidr_is_a_network_address() {
        let net = network;
        assert_eq!(net("10.100.0.0/16"), Some(("10.100.0.0/16".into(), false)));
        assert_eq!(net("10.100.0.1/16"), Some(("10.100.0.0/16".into(), true)));
        assert_eq!(net("0.0.0.0/0"), Some(("0.0.0.0/0".into(), false)));
        assert_eq!(net("10.1.2.3/32"), Some(("10.1.2.3/32".into(), false)));
        assert_eq!(net("fd00::1/64"), Some(("fd00::/64".into(), true)));
        assert_eq!(net("FD00::/64"), Some(("fd00::/64".into(), false)));
        for bad in [
            "10.0.0.0/33",
            "10.0.0.0",
            "10.0.0.0/",
            "x/8",
            "10.0.0.0/+8",
            "::/129",
        ] {
            assert_eq!(network(bad), None, "{bad}");
        }
    }
}
