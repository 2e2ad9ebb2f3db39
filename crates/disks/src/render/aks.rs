//! AKS: local NVMe the AKS way — a node pool of Lsv3/Lasv3 VMs (whose NVMe disks are the
//! "temp NVMe": lost on stop or deallocation), Azure Container Storage enabled on the cluster,
//! whose local CSI driver (`localdisk.csi.acstor.io`) pools the node's NVMe disks (striped when
//! there are several) and cuts volumes from them, a StorageClass pinned to the pool's VM size,
//! and a pod with a generic ephemeral volume on it. The platform sets the disks up; we do not
//! fight it (as with Karpenter on EKS, docs/sources.md [karpenter-instance-store]).
//!
//! Sources: "Use Azure Container Storage with local NVMe"
//! (learn.microsoft.com/azure/storage/container-storage/use-container-storage-with-local-disk),
//! the Azure Container Storage 2.0.0 release notes (the provisioner `localdisk.csi.acstor.io`
//! and the annotation `localdisk.csi.acstor.io/accept-ephemeral-storage` replace 1.x's
//! StoragePool), and the Lsv3 / Lasv3 size tables
//! (learn.microsoft.com/azure/virtual-machines/sizes/storage-optimized/lsv3-series, lasv3-series).

use super::quantity::{Quantity, QuantityError};
use super::{
    check_image, dns_label, yaml, FileKind, Platform, RenderError, Rendered, RenderedFile, Renderer,
};
use disktier_cmd::shell_quote;
use serde_json::json;

/// Azure Container Storage's local NVMe CSI driver (version 2.x).
pub const PROVISIONER: &str = "localdisk.csi.acstor.io";
/// The StorageClass annotation that restricts where the driver places volumes.
const NODE_AFFINITY_ANNOTATION: &str = "storageoperator.acstor.io/nodeAffinity";
/// Each NVMe disk of an Lsv3/Lasv3 VM: 1.92 TB (the size tables' "NVMe Disk Size (TB)").
pub const NVME_DISK_BYTES: u64 = 1_920_000_000_000;

/// One VM size with local NVMe, from the Lsv3 / Lasv3 size tables ("Local storage" tab).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvmeSize {
    pub name: &'static str,
    pub disks: u32,
    /// The table's "NVMe Disk IOPS" for the whole VM.
    pub iops: u64,
    /// The table's "NVMe Disk Throughput (MB/s)", MB = 10^6 bytes.
    pub mbps: u64,
}

/// Every Lsv3 and Lasv3 size (both tables give the same disks and figures per size).
pub const NVME_SIZES: &[NvmeSize] = &[
    NvmeSize {
        name: "Standard_L8s_v3",
        disks: 1,
        iops: 400_000,
        mbps: 2_000,
    },
    NvmeSize {
        name: "Standard_L16s_v3",
        disks: 2,
        iops: 800_000,
        mbps: 4_000,
    },
    NvmeSize {
        name: "Standard_L32s_v3",
        disks: 4,
        iops: 1_500_000,
        mbps: 8_000,
    },
    NvmeSize {
        name: "Standard_L48s_v3",
        disks: 6,
        iops: 2_200_000,
        mbps: 14_000,
    },
    NvmeSize {
        name: "Standard_L64s_v3",
        disks: 8,
        iops: 2_900_000,
        mbps: 16_000,
    },
    NvmeSize {
        name: "Standard_L80s_v3",
        disks: 10,
        iops: 3_800_000,
        mbps: 20_000,
    },
    NvmeSize {
        name: "Standard_L8as_v3",
        disks: 1,
        iops: 400_000,
        mbps: 2_000,
    },
    NvmeSize {
        name: "Standard_L16as_v3",
        disks: 2,
        iops: 800_000,
        mbps: 4_000,
    },
    NvmeSize {
        name: "Standard_L32as_v3",
        disks: 4,
        iops: 1_500_000,
        mbps: 8_000,
    },
    NvmeSize {
        name: "Standard_L48as_v3",
        disks: 6,
        iops: 2_200_000,
        mbps: 14_000,
    },
    NvmeSize {
        name: "Standard_L64as_v3",
        disks: 8,
        iops: 2_900_000,
        mbps: 16_000,
    },
    NvmeSize {
        name: "Standard_L80as_v3",
        disks: 10,
        iops: 3_800_000,
        mbps: 20_000,
    },
];

/// The size of that name (Azure compares VM sizes case-insensitively).
pub fn nvme_size(name: &str) -> Option<&'static NvmeSize> {
    NVME_SIZES
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AksConfig {
    pub resource_group: String,
    pub cluster: String,
    /// The node pool to add.
    pub pool: String,
    /// An Lsv3/Lasv3 size, e.g. Standard_L8s_v3.
    pub vm_size: String,
    pub node_count: u32,
    /// The StorageClass's name.
    pub storage_class: String,
    /// The example pod's ephemeral volume size (a Kubernetes quantity).
    pub request: String,
    pub image: String,
}

/// A checked AKS render.
#[derive(Debug, Clone)]
pub struct Aks {
    cfg: AksConfig,
    /// `cfg.request`, checked.
    request: Quantity,
    size: &'static NvmeSize,
}

/// [`RenderError::bad_value`] with the value cut to 100 characters.
fn bad(flag: &'static str, value: &str, why: &str) -> RenderError {
    RenderError::bad_value(flag, value.chars().take(100).collect(), why)
}

impl Aks {
    pub fn new(cfg: AksConfig) -> Result<Aks, RenderError> {
        // Resource group: 1-90 letters, digits, '_', '-', '.', '(' and ')', not ending in '.'
        // (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules).
        let rg = &cfg.resource_group;
        if rg.is_empty()
            || rg.len() > 90
            || rg.ends_with('.')
            || !rg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.()".contains(c))
        {
            return Err(bad(
                "resource-group",
                rg,
                "a resource group name has 1-90 letters, digits and _-.() and does not end in '.' (az group list)",
            ));
        }
        // Managed cluster: 1-63 letters, digits, '_' and '-', starting and ending alphanumeric
        // (same page, Microsoft.ContainerService/managedClusters).
        let c = &cfg.cluster;
        if c.is_empty()
            || c.len() > 63
            || !c.starts_with(|ch: char| ch.is_ascii_alphanumeric())
            || !c.ends_with(|ch: char| ch.is_ascii_alphanumeric())
            || !c
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
        {
            return Err(bad(
                "cluster",
                c,
                "an AKS cluster name has 1-63 letters, digits, _ and -, starting and ending with a letter or digit (az aks list)",
            ));
        }
        // Linux node pool: 1-12 lowercase letters and digits, starting with a letter
        // (learn.microsoft.com/azure/aks/create-node-pools, "Limitations").
        let p = &cfg.pool;
        if p.is_empty()
            || p.len() > 12
            || !p.starts_with(|ch: char| ch.is_ascii_lowercase())
            || !p
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit())
        {
            return Err(bad(
                "pool",
                p,
                "a Linux node pool name has 1-12 lowercase letters and digits, starting with a letter",
            ));
        }
        let size = nvme_size(&cfg.vm_size).ok_or_else(|| {
            bad(
                "vm-size",
                &cfg.vm_size,
                &format!(
                    "local NVMe comes with the Lsv3 and Lasv3 sizes: {}",
                    NVME_SIZES
                        .iter()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        if !(1..=1000).contains(&cfg.node_count) {
            return Err(bad(
                "node-count",
                &cfg.node_count.to_string(),
                "give 1 to 1000 nodes (an AKS node pool holds at most 1000)",
            ));
        }
        let sc = &cfg.storage_class;
        if !dns_label(sc) {
            return Err(bad(
                "storage-class",
                sc,
                "use lowercase letters, digits and '-' (a Kubernetes object name)",
            ));
        }
        check_image(&cfg.image, 100)?;
        let capacity = u64::from(size.disks) * NVME_DISK_BYTES;
        let request = match Quantity::parse(&cfg.request) {
            Ok(q) if q.bytes() <= capacity => q,
            Ok(_) => {
                return Err(bad(
                    "request",
                    &cfg.request,
                    &format!(
                        "{} has {} x 1.92 TB of NVMe ({capacity} bytes): ask for at most that, or pick a larger size",
                        size.name, size.disks
                    ),
                ))
            }
            // Found by QA: 0 was told to "ask for at most" the capacity.
            Err(QuantityError::BelowOneByte) => {
                return Err(bad(
                    "request",
                    &cfg.request,
                    "the volume must be at least 1 byte: write a quantity such as 500Gi",
                ))
            }
            Err(e) => return Err(bad("request", &cfg.request, &e.fix("500Gi"))),
        };
        Ok(Aks { cfg, request, size })
    }

    fn script(&self) -> String {
        let c = &self.cfg;
        format!(
            r#"#!/bin/bash
# Rendered by `disktier render aks`: a node pool of {size} VMs ({disks} x 1.92 TB local NVMe,
# {iops} IOPS and {mbps} MB/s per VM in Azure's size table), and Azure Container Storage on the
# cluster, whose local CSI driver ({prov}) pools each node's NVMe disks and serves volumes
# from them. The NVMe disks are ephemeral: their data is lost when a VM stops, is deallocated
# or is redeployed; a reboot keeps it.
# Needs Azure CLI 2.35.0 or later and Azure Container Storage 2.x (1.x used a StoragePool and
# the provisioner containerstorage.csi.azure.com instead).
set -euo pipefail

RESOURCE_GROUP={rg}
CLUSTER={cluster}

az aks nodepool add \
    --resource-group "$RESOURCE_GROUP" \
    --cluster-name "$CLUSTER" \
    --name {pool} \
    --node-vm-size {size_q} \
    --node-count {count}

az aks update \
    --resource-group "$RESOURCE_GROUP" \
    --name "$CLUSTER" \
    --enable-azure-container-storage
"#,
            size = self.size.name,
            size_q = shell_quote(self.size.name),
            disks = self.size.disks,
            iops = self.size.iops,
            mbps = self.size.mbps,
            prov = PROVISIONER,
            rg = shell_quote(&c.resource_group),
            cluster = shell_quote(&c.cluster),
            pool = shell_quote(&c.pool),
            count = c.node_count,
        )
    }

    fn storage_class(&self) -> Result<String, RenderError> {
        // Node labels carry the size as the VM reports it; the docs warn that the match is
        // case-sensitive and show both spellings, so both are listed.
        let mut sizes = vec![
            self.size.name.to_string(),
            self.size.name.to_ascii_lowercase(),
        ];
        sizes.dedup();
        let affinity = format!(
            "requiredDuringSchedulingIgnoredDuringExecution:\n  nodeSelectorTerms:\n  - matchExpressions:\n    - key: node.kubernetes.io/instance-type\n      operator: In\n      values: [{}]\n",
            sizes.join(", ")
        );
        let obj = json!({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": self.cfg.storage_class,
                "annotations": {NODE_AFFINITY_ANNOTATION: affinity},
            },
            "provisioner": PROVISIONER,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": true,
        });
        yaml::document(
            "StorageClass",
            &[format!(
                "Rendered by `disktier render aks`: volumes cut from the local NVMe of {} nodes.\nWaitForFirstConsumer: the volume is made on the node the pod lands on. Volumes from\nlocal NVMe are generic ephemeral volumes by default; a PersistentVolumeClaim needs the\nannotation localdisk.csi.acstor.io/accept-ephemeral-storage: \"true\" (its data still goes\nwith the node).",
                self.size.name
            )],
            &obj,
        )
    }

    fn pod(&self) -> Result<String, RenderError> {
        let c = &self.cfg;
        yaml::pod(
            "local-nvme-pod",
            json!({"node.kubernetes.io/instance-type": self.size.name}),
            json!({
                "name": "app",
                "image": c.image,
                "volumeMounts": [{"mountPath": "/scratch", "name": "scratch"}],
            }),
            json!({
                "name": "scratch",
                "ephemeral": {"volumeClaimTemplate": {"spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": c.storage_class,
                    "resources": {"requests": {"storage": self.request.as_str()}},
                }}},
            }),
            "Rendered by `disktier render aks`: a generic ephemeral volume on the node's local NVMe,\ncreated with the pod and deleted with it.".to_string(),
        )
    }
}

impl Renderer for Aks {
    fn platform(&self) -> Platform {
        Platform::Aks
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        let files = vec![
            RenderedFile::new(
                format!("node-pool-{}.sh", self.cfg.pool),
                FileKind::Shell,
                self.script(),
            ),
            RenderedFile::new(
                format!("storageclass-{}.yaml", self.cfg.storage_class),
                FileKind::Yaml,
                self.storage_class()?,
            ),
            RenderedFile::new("pod-local-nvme.yaml", FileKind::Yaml, self.pod()?),
        ];
        Ok(Rendered {
            platform: Platform::Aks,
            files,
            notes: vec![format!(
                "{} x {} nodes: {} x 1.92 TB local NVMe each, lost when a VM stops or is deallocated",
                self.cfg.node_count, self.size.name, self.size.disks
            )],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> AksConfig {
        AksConfig {
            resource_group: "rg-prod".into(),
            cluster: "aks1".into(),
            pool: "nvme".into(),
            vm_size: "Standard_L8s_v3".into(),
            node_count: 3,
            storage_class: "local-nvme".into(),
            request: "500Gi".into(),
            image: "nginx".into(),
        }
    }

    #[test]
    fn the_size_decides_the_capacity() {
        assert!(Aks::new(cfg()).is_ok());
        // 1 x 1.92 TB = 1,788 GiB on an L8s_v3; 2,000 GiB needs an L16.
        let e = Aks::new(AksConfig {
            request: "2000Gi".into(),
            ..cfg()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("larger size"), "{e}");
        assert!(Aks::new(AksConfig {
            request: "2000Gi".into(),
            vm_size: "standard_l16as_v3".into(),
            ..cfg()
        })
        .is_ok());
    }

    #[test]
    fn bad_values_are_refused() {
        for c in [
            AksConfig {
                vm_size: "Standard_D4s_v5".into(),
                ..cfg()
            },
            AksConfig {
                pool: "NVMe".into(),
                ..cfg()
            },
            AksConfig {
                pool: "averylongpoolname".into(),
                ..cfg()
            },
            AksConfig {
                resource_group: "rg;rm -rf /".into(),
                ..cfg()
            },
            AksConfig {
                cluster: "-x".into(),
                ..cfg()
            },
            AksConfig {
                node_count: 0,
                ..cfg()
            },
            AksConfig {
                storage_class: "Local".into(),
                ..cfg()
            },
            AksConfig {
                request: "lots".into(),
                ..cfg()
            },
            AksConfig {
                image: "a b".into(),
                ..cfg()
            },
        ] {
            assert!(Aks::new(c.clone()).is_err(), "{c:?}");
        }
    }
}
