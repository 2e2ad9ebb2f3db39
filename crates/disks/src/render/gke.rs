//! GKE: the `gcloud container node-pools create ... --ephemeral-storage-local-ssd count=N` command,
//! checked against the machine type, and the GKE local-SSD recipe's two pods (an emptyDir with an
//! ephemeral-storage request, and the hostPath variant), both pinned to local-SSD nodes.

use super::quantity::{Quantity, QuantityError};
use super::{check_image, yaml, FileKind, Platform, RenderError, Rendered, RenderedFile, Renderer};
use disktier_cmd::shell_quote;
use serde_json::json;

/// GKE labels nodes whose ephemeral storage is on local SSD with this (the GKE local-SSD recipe
/// [recipe-gke-local-ssd]).
const NODE_LABEL: &str = "cloud.google.com/gke-ephemeral-storage-local-ssd";
/// Where GKE mounts the local-SSD ephemeral storage on the node (docs/sources.md [gke-local-ssd],
/// [recipe-gke-local-ssd]).
const HOST_PATH: &str = "/mnt/stateful_partition/kube-ephemeral-ssd";
/// Each local SSD holds 375 GiB (402,653,184,000 bytes): "Each Local SSD disk is 375 GiB in
/// size" (cloud.google.com/compute/docs/disks/local-ssd, "Local SSD disks"); `fdisk -l` on a GKE
/// node shows 402653184000 bytes per disk.
pub const LOCAL_SSD_BYTES: u64 = 375 * (1 << 30);
/// The share of the node's ephemeral storage the kubelet keeps free: its default hard eviction
/// threshold `nodefs.available<10%` (kubernetes.io/docs/concepts/scheduling-eviction/
/// node-pressure-eviction/, "Hard eviction thresholds"), which node allocatable subtracts from
/// capacity, as it does kube-reserved and system-reserved (kubernetes.io/docs/tasks/
/// administer-cluster/reserve-compute-resources/, "Node Allocatable"); the scheduler never
/// places more than allocatable (docs/sources.md [k8s-allocatable]). GKE reserves more for its
/// system besides, so this is an upper bound: a request above it can never be scheduled.
const EVICTION_PERCENT: u64 = 10;

/// The most ephemeral storage `local_ssds` local SSDs can offer pods: their raw size less the
/// kubelet's eviction threshold ([`EVICTION_PERCENT`]). The filesystem's own overhead and GKE's
/// reservation make the node's real allocatable lower still.
pub fn allocatable_bound(local_ssds: u32) -> u64 {
    u64::from(local_ssds).saturating_mul(LOCAL_SSD_BYTES) / 100 * (100 - EVICTION_PERCENT)
}
/// `--ephemeral-storage-local-ssd` needs this GKE version or later (docs/sources.md
/// [gke-local-ssd]).
const MIN_GKE_VERSION: &str = "1.25.3-gke.1800";

/// What is known about a machine type's local SSDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalSsdLimit {
    /// E2 (and shared-core) types take no local SSD.
    None,
    /// These counts are accepted; `source` says where that comes from.
    Counts {
        allowed: Vec<u32>,
        source: &'static str,
    },
    /// No table entry: the count cannot be checked here.
    Unknown,
}

/// The n2/n2d/c2 rows below were transcribed from this page's table (the search tool used while
/// writing this could not show the table itself, so re-check them against the page when it
/// changes); GKE's own error names the maximum when a count is refused.
const GCE_DOC: &str =
    "cloud.google.com/compute/docs/disks/local-ssd#choose_number_local_ssds (Compute Engine's table of valid Local SSD counts per machine type)";

/// The local-SSD counts a machine type accepts. Only series and sizes with a source are listed;
/// everything else is [`LocalSsdLimit::Unknown`] rather than a guess.
///
/// | series | vCPUs | counts | source |
/// |---|---|---|---|
/// | e2 | any | none | [gke-local-ssd] (an n1-standard-1 or larger, not e2) |
/// | n1 | n1-standard-8 | 1..=8 | the GKE local-SSD recipe [recipe-gke-local-ssd]: GKE refused 24 with "the maximum allowed for this machine type (8)" |
/// | n2 | 2-10 / 12-20 / 22-40 / 42-80 / 82-128 | {1,2,4,8,16,24} / {2,4,8,16,24} / {4,8,16,24} / {8,16,24} / {16,24} | Compute Engine table |
/// | n2d | 2-16 / 32-48 / 64-80 / 96-224 | {1,2,4,8,16,24} / {2,4,8,16,24} / {4,8,16,24} / {8,16,24} | Compute Engine table |
/// | c2 | 4-8 / 16 / 30 / 60 | {1,2,4,8} / {2,4,8} / {4,8} / {8} | Compute Engine table |
pub fn local_ssd_limit(machine_type: &str) -> LocalSsdLimit {
    let mut parts = machine_type.split('-');
    let series = parts.next().unwrap_or("");
    let vcpus: Option<u32> = machine_type.rsplit('-').next().and_then(|v| v.parse().ok());
    let counts = |allowed: &[u32], source: &'static str| LocalSsdLimit::Counts {
        allowed: allowed.to_vec(),
        source,
    };
    match (series, vcpus) {
        ("e2", _) => LocalSsdLimit::None,
        ("n1", _) if machine_type == "n1-standard-8" => counts(
            &[1, 2, 3, 4, 5, 6, 7, 8],
            "GKE refused count=24 on n1-standard-8, maximum 8 (the GKE local-SSD recipe)",
        ),
        ("n2", Some(v)) if !machine_type.contains("custom") => match v {
            2..=10 => counts(&[1, 2, 4, 8, 16, 24], GCE_DOC),
            12..=20 => counts(&[2, 4, 8, 16, 24], GCE_DOC),
            22..=40 => counts(&[4, 8, 16, 24], GCE_DOC),
            42..=80 => counts(&[8, 16, 24], GCE_DOC),
            82..=128 => counts(&[16, 24], GCE_DOC),
            _ => LocalSsdLimit::Unknown,
        },
        ("n2d", Some(v)) if !machine_type.contains("custom") => match v {
            2..=16 => counts(&[1, 2, 4, 8, 16, 24], GCE_DOC),
            32..=48 => counts(&[2, 4, 8, 16, 24], GCE_DOC),
            64..=80 => counts(&[4, 8, 16, 24], GCE_DOC),
            96..=224 => counts(&[8, 16, 24], GCE_DOC),
            _ => LocalSsdLimit::Unknown,
        },
        ("c2", Some(v)) => match v {
            4 | 8 => counts(&[1, 2, 4, 8], GCE_DOC),
            16 => counts(&[2, 4, 8], GCE_DOC),
            30 => counts(&[4, 8], GCE_DOC),
            60 => counts(&[8], GCE_DOC),
            _ => LocalSsdLimit::Unknown,
        },
        _ => LocalSsdLimit::Unknown,
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GkeConfig {
    pub cluster: String,
    pub machine_type: String,
    pub local_ssds: u32,
    pub pool: String,
    /// The GCP project that holds the cluster (`gcloud --project`).
    pub project: String,
    /// The cluster's zone (`gcloud --zone`), e.g. asia-east1-a.
    pub zone: String,
    /// `--local-ssd-count`, accepted only to be refused with the reason.
    pub local_ssd_count: Option<u32>,
    /// The emptyDir pod's ephemeral-storage request (a Kubernetes quantity, e.g. 200Gi).
    pub request: String,
    pub image: String,
}

/// A checked GKE render.
#[derive(Debug, Clone)]
pub struct Gke {
    cfg: GkeConfig,
    /// `cfg.request`, checked.
    request: Quantity,
    notes: Vec<String>,
}

/// A name as GCP writes them: `len` lowercase letters, digits or hyphens, starting with a
/// letter and not ending with a hyphen.
fn gcp_name(v: &str, len: std::ops::RangeInclusive<usize>) -> bool {
    len.contains(&v.len())
        && v.starts_with(|c: char| c.is_ascii_lowercase())
        && v.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !v.ends_with('-')
}

fn check_name(flag: &'static str, v: &str) -> Result<(), RenderError> {
    let ok = gcp_name(v, 1..=63);
    RenderError::unless(
        ok,
        flag,
        v.to_string(),
        "use lowercase letters, digits and '-', starting with a letter",
    )
}

/// The most characters GKE takes in a cluster's or a node pool's name: "can be up to 40
/// characters" (GKE API reference, `Cluster.name`; docs/sources.md [gke-names]); the API refuses a
/// longer node pool name with the same rule, `[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?`.
pub const GKE_NAME_MAX: usize = 40;

/// A GKE cluster or node pool name: 1 to 40 lowercase letters, digits or '-', starting with a
/// letter and ending with a letter or digit ([gke-names]). `gcloud container node-pools create`
/// would refuse anything else only when the rendered script runs, after the version check.
fn check_gke_name(flag: &'static str, v: &str) -> Result<(), RenderError> {
    let ok = gcp_name(v, 1..=GKE_NAME_MAX);
    let why = if ok || !gcp_name(v, 1..=usize::MAX) {
        "GKE takes 1 to 40 lowercase letters, digits and '-', starting with a letter and not ending with '-' (GKE API reference, Cluster.name; docs/sources.md [gke-names])".to_string()
    } else {
        format!(
            "it has {} characters and GKE takes at most {GKE_NAME_MAX} in a cluster or node pool name (GKE API reference, Cluster.name; docs/sources.md [gke-names]): give a shorter name",
            v.len()
        )
    };
    RenderError::unless(ok, flag, v.chars().take(64).collect(), &why)
}

/// A GCP project ID: 6 to 30 lowercase letters, digits or hyphens, starting with a letter and not
/// ending with a hyphen (cloud.google.com/resource-manager/docs/creating-managing-projects).
fn check_project(v: &str) -> Result<(), RenderError> {
    let ok = gcp_name(v, 6..=30);
    RenderError::unless(ok, "project", v.chars().take(64).collect(), "a project ID has 6 to 30 lowercase letters, digits and '-', starts with a letter and does not end with '-' (gcloud projects list)")
}

/// A Compute Engine zone: REGION-LETTER, the region being `area-locationN` (asia-east1-a,
/// us-central1-f, europe-west4-b; cloud.google.com/compute/docs/regions-zones).
fn check_zone(v: &str) -> Result<(), RenderError> {
    let parts: Vec<&str> = v.split('-').collect();
    let lower = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase());
    let ok = v.len() <= 63
        && parts.len() == 3
        && lower(parts[0])
        && parts[1].starts_with(|c: char| c.is_ascii_lowercase())
        && parts[1].ends_with(|c: char| c.is_ascii_digit())
        && parts[1]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && parts[2].len() == 1
        && lower(parts[2]);
    RenderError::unless(
        ok,
        "zone",
        v.chars().take(64).collect(),
        "give a zone such as asia-east1-a (gcloud compute zones list)",
    )
}

impl Gke {
    pub fn new(cfg: GkeConfig) -> Result<Gke, RenderError> {
        if cfg.local_ssd_count.is_some() {
            return Err(RenderError::LocalSsdCountConflict);
        }
        check_gke_name("cluster", &cfg.cluster)?;
        check_gke_name("pool", &cfg.pool)?;
        check_name("machine-type", &cfg.machine_type)?;
        check_image(&cfg.image, 200)?;
        check_project(&cfg.project)?;
        check_zone(&cfg.zone)?;
        if cfg.local_ssds == 0 {
            return Err(RenderError::BadValue {
                flag: "local-ssds",
                value: "0".into(),
                why: "give at least 1 local SSD".into(),
            });
        }
        let mut notes = Vec::new();
        match local_ssd_limit(&cfg.machine_type) {
            LocalSsdLimit::None => {
                return Err(RenderError::NoLocalSsd {
                    machine_type: cfg.machine_type.clone(),
                })
            }
            LocalSsdLimit::Counts { allowed, source } => {
                let max = allowed.iter().copied().max().unwrap_or(0);
                if cfg.local_ssds > max {
                    return Err(RenderError::TooManyLocalSsds {
                        machine_type: cfg.machine_type.clone(),
                        count: cfg.local_ssds,
                        max,
                    });
                }
                if !allowed.contains(&cfg.local_ssds) {
                    return Err(RenderError::LocalSsdCountNotAllowed {
                        machine_type: cfg.machine_type.clone(),
                        count: cfg.local_ssds,
                        allowed: allowed
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
                notes.push(format!(
                    "{} local SSDs on {}: within its limit (source: {source})",
                    cfg.local_ssds, cfg.machine_type
                ));
            }
            LocalSsdLimit::Unknown => notes.push(format!(
                "unknown machine type: cannot validate the count ({} local SSDs on {}); gcloud will refuse a count the type does not take",
                cfg.local_ssds, cfg.machine_type
            )),
        }
        // Found by QA: a count the table does not bound (an unknown machine type) overflowed
        // here, a panic (exit 101) in a debug build and a wrapped size in a release build.
        let Some(capacity) = u64::from(cfg.local_ssds).checked_mul(LOCAL_SSD_BYTES) else {
            return Err(RenderError::BadValue {
                flag: "local-ssds",
                value: cfg.local_ssds.to_string(),
                why: format!(
                    "{} local SSDs of 375 GiB would hold more than 16 EiB, far more than any machine type takes: give the count {} takes (gcloud compute machine-types describe {} --zone {})",
                    cfg.local_ssds, cfg.machine_type, cfg.machine_type, cfg.zone
                ),
            });
        };
        // Found by QA: a request up to the SSDs' raw size (750Gi on two) was rendered, though no
        // node offers pods all of it: the pod would stay Pending ("Insufficient
        // ephemeral-storage").
        let allocatable = allocatable_bound(cfg.local_ssds);
        let request = match Quantity::parse(&cfg.request) {
            Ok(q) if q.bytes() <= allocatable => q,
            Ok(_) => {
                return Err(RenderError::RequestTooLarge {
                    request: cfg.request.clone(),
                    count: cfg.local_ssds,
                    capacity,
                    allocatable,
                })
            }
            // Found by QA: 0 was said to exceed the SSDs.
            Err(QuantityError::BelowOneByte) => {
                return Err(RenderError::BadValue {
                    flag: "request",
                    value: cfg.request.clone(),
                    why: "the ephemeral-storage request must be at least 1 byte: write a quantity such as 200Gi".into(),
                })
            }
            Err(e) => {
                return Err(RenderError::BadValue {
                    flag: "request",
                    value: cfg.request.clone(),
                    why: e.fix("200Gi"),
                })
            }
        };
        Ok(Gke {
            cfg,
            request,
            notes,
        })
    }

    fn node_pool_script(&self) -> String {
        let c = &self.cfg;
        let loc_arg = format!(
            " --project={} --zone={}",
            shell_quote(&c.project),
            shell_quote(&c.zone)
        );
        let mut s = format!(
            r#"#!/bin/bash
# Rendered by `disktier render gke`: a node pool whose kubelet and container runtime keep
# their ephemeral storage (emptyDir, images, logs) on {n} local SSD(s) of 375 GiB, which GKE
# itself formats (RAID0 when there are several; the GKE local-SSD recipe). GKE labels the nodes
# {label}=true.
# Needs GKE {min} or later; --ephemeral-storage-local-ssd cannot be combined with
# --local-ssd-count (raw, unformatted SSDs), and E2 machine types have no local SSD.
set -euo pipefail

CLUSTER={cluster}
MIN_VERSION={min}

version=$(gcloud container clusters describe "$CLUSTER"{loc_arg} --format='value(currentMasterVersion)')
if [ "$(printf '%s\n' "$MIN_VERSION" "$version" | sort -V | head -n 1)" != "$MIN_VERSION" ]; then
    echo "cluster $CLUSTER runs GKE $version; --ephemeral-storage-local-ssd needs $MIN_VERSION or later: upgrade the cluster first" >&2
    exit 1
fi

gcloud container node-pools create {pool} \
    --cluster="$CLUSTER"{loc_arg} \
    --machine-type={mt} \
    --ephemeral-storage-local-ssd count={n}"#,
            n = c.local_ssds,
            label = NODE_LABEL,
            min = MIN_GKE_VERSION,
            cluster = shell_quote(&c.cluster),
            pool = shell_quote(&c.pool),
            mt = shell_quote(&c.machine_type),
        );
        s.push('\n');
        s
    }

    fn pod_emptydir(&self) -> Result<String, RenderError> {
        yaml::pod(
            "ssd-pod",
            json!({NODE_LABEL: "true"}),
            json!({
                "name": "app",
                "image": self.cfg.image,
                "resources": {"requests": {"ephemeral-storage": self.request.as_str()}},
                "volumeMounts": [{"mountPath": "/cache", "name": "scratch-volume"}],
            }),
            json!({"name": "scratch-volume", "emptyDir": {}}),
            "Rendered by `disktier render gke`: an emptyDir on the node's local SSDs (the GKE local-SSD recipe). The\nephemeral-storage request makes the scheduler pick a node with room; the nodeSelector\npicks the pool whose ephemeral storage is on local SSD.".to_string(),
        )
    }

    fn pod_hostpath(&self) -> Result<String, RenderError> {
        yaml::pod(
            "test-ssd",
            json!({NODE_LABEL: "true"}),
            json!({
                "name": "shell",
                "image": self.cfg.image,
                "volumeMounts": [{"mountPath": "/test-ssd", "name": "test-ssd"}],
            }),
            json!({"name": "test-ssd", "hostPath": {"path": HOST_PATH, "type": "Directory"}}),
            format!(
                "Rendered by `disktier render gke`: the hostPath variant of the GKE local-SSD recipe, on {HOST_PATH}.\ntype: Directory makes the pod fail to start on a node without local SSD (\"hostPath type\ncheck failed\") instead of writing to the boot disk."
            ),
        )
    }
}

impl Renderer for Gke {
    fn platform(&self) -> Platform {
        Platform::Gke
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        let files = vec![
            RenderedFile::new(
                format!("node-pool-{}.sh", self.cfg.pool),
                FileKind::Shell,
                self.node_pool_script(),
            ),
            RenderedFile::new("pod-emptydir.yaml", FileKind::Yaml, self.pod_emptydir()?),
            RenderedFile::new("pod-hostpath.yaml", FileKind::Yaml, self.pod_hostpath()?),
        ];
        Ok(Rendered {
            platform: Platform::Gke,
            files,
            notes: self.notes.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_ssd_is_375_gib() {
        assert_eq!(LOCAL_SSD_BYTES, 402_653_184_000);
    }

    #[test]
    fn the_kubelet_keeps_a_tenth_of_the_ssds_free() {
        assert_eq!(allocatable_bound(1), 362_387_865_600);
        assert_eq!(allocatable_bound(2), 724_775_731_200);
        assert_eq!(allocatable_bound(24), 24 * 362_387_865_600);
    }

    #[test]
    fn a_count_past_any_size_is_refused_not_overflowed() {
        // Found by QA: --local-ssds 4000000000 on an unknown machine type panicked (attempt to
        // multiply with overflow).
        let cfg = |local_ssds: u32| GkeConfig {
            cluster: "c1".into(),
            machine_type: "n4-standard-8".into(),
            local_ssds,
            pool: "ssd-pool".into(),
            project: "my-project".into(),
            zone: "asia-east1-a".into(),
            local_ssd_count: None,
            request: "200Gi".into(),
            image: "nginx".into(),
        };
        for n in [45_812_985, 4_000_000_000, u32::MAX] {
            let e = Gke::new(cfg(n)).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--local-ssds \"{n}\" is not valid: {n} local SSDs of 375 GiB would hold more than 16 EiB")),
                "{e}"
            );
        }
        // The most that fits in 64 bits still renders (with the unknown type's note).
        assert!(Gke::new(cfg(45_812_984)).is_ok());
        assert_eq!(allocatable_bound(u32::MAX), u64::MAX / 100 * 90);
    }

    #[test]
    fn cluster_and_pool_names_hold_at_most_40_characters() {
        // Found by QA: `render gke` took names of up to 63 characters, which GKE's API refuses
        // (Cluster.name "can be up to 40 characters"); the script failed only when run.
        let forty = format!("a{}", "b".repeat(39));
        let forty_one = format!("a{}", "b".repeat(40));
        for flag in ["cluster", "pool"] {
            assert!(check_gke_name(flag, &forty).is_ok());
            assert!(check_gke_name(flag, "a").is_ok());
            let e = check_gke_name(flag, &forty_one).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--{flag} ")), "{e}");
            assert!(
                e.contains("41 characters") && e.contains("at most 40"),
                "{e}"
            );
            assert!(e.contains("[gke-names]"), "{e}");
            for bad in ["", "1pool", "Pool", "pool-", "po_ol", "p\nool"] {
                assert!(check_gke_name(flag, bad).is_err(), "{bad:?}");
            }
        }
    }

    #[test]
    fn projects_and_zones_are_checked() {
        assert!(check_project("my-project-123").is_ok());
        for bad in [
            "short",
            "My-Project",
            "1project",
            "proj-",
            "a;rm -rf /x",
            "",
        ] {
            assert!(check_project(bad).is_err(), "{bad}");
        }
        for ok in ["asia-east1-a", "us-central1-f", "northamerica-northeast2-b"] {
            assert!(check_zone(ok).is_ok(), "{ok}");
        }
        for bad in [
            "asia-east1",
            "asia-east-a",
            "us-central1-ab",
            "x y-z1-a",
            "",
            "asia-east1-a;",
        ] {
            assert!(check_zone(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn limits_table() {
        assert_eq!(local_ssd_limit("e2-standard-8"), LocalSsdLimit::None);
        assert!(
            matches!(local_ssd_limit("n1-standard-8"), LocalSsdLimit::Counts { ref allowed, .. } if allowed.iter().max() == Some(&8))
        );
        assert_eq!(local_ssd_limit("n1-standard-2"), LocalSsdLimit::Unknown);
        assert!(
            matches!(local_ssd_limit("n2-standard-16"), LocalSsdLimit::Counts { ref allowed, .. } if allowed[0] == 2)
        );
        assert!(
            matches!(local_ssd_limit("c2-standard-60"), LocalSsdLimit::Counts { ref allowed, .. } if allowed == &vec![8])
        );
        assert_eq!(local_ssd_limit("t2d-standard-4"), LocalSsdLimit::Unknown);
    }
}
