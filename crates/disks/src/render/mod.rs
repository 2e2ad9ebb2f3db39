//! `disktier render PLATFORM`: the intent of `disktier setup` (a mount point, its options, the
//! filesystem, its label, owner and binds, and which disks to use) rendered as the platform's own
//! machinery: an OpenShift MachineConfig, a GKE node pool, an EKS NodeConfig and Karpenter
//! EC2NodeClass, an AKS node pool with Azure Container Storage's local NVMe StorageClass, systemd units, cloud-init user-data, or a bcache / lvmcache script.
//!
//! One file per platform, each a [`Renderer`]. A renderer is built from a checked configuration
//! (its `new` rejects bad input with a one-line error naming the fix) and renders files; it never
//! runs a command and never touches a disk. Disks are always selected by model or by a
//! `/dev/disk/by-id/` glob, never by a kernel name such as `nvme1n1`, which can move between boots
//! (as EKS and Bottlerocket do: docs/sources.md [eks-setup-local-disks], [bottlerocket-ephemeral]).

mod aks;
mod bcache;
mod cachemount;
mod cloudinit;
mod eks;
mod error;
mod gke;
mod image;
mod intent;
mod lvmcache;
mod openshift;
mod quantity;
mod script;
mod systemd;
mod units;
mod yaml;

pub use crate::valid::FsType;
pub use aks::{nvme_size, Aks, AksConfig, NvmeSize, NVME_SIZES};
pub use bcache::{Bcache, BcacheConfig, BcacheMode};
pub use cachemount::{CacheMount, CacheMountInput};
pub use cloudinit::CloudInit;
pub use eks::{Eks, EksConfig, LocalStorageStrategy};
pub use error::RenderError;
pub use gke::{local_ssd_limit, Gke, GkeConfig, LocalSsdLimit};
pub(crate) use image::check_image;
pub use intent::{DiskSelect, Intent, IntentInput, KNOWN_EPHEMERAL_MODELS};
pub use lvmcache::{Lvmcache, LvmcacheConfig, LvmcacheMode};
pub use openshift::{LocalDisks, MachineSetConfig, OpenShift, OpenShiftConfig, IGNITION_VERSION};
pub use quantity::{Quantity, QuantityError};
pub use systemd::Systemd;
pub use units::{escape_path, mount_unit_name};

use serde::Serialize;

/// The platforms `disktier render` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    Openshift,
    Gke,
    Eks,
    Aks,
    Systemd,
    CloudInit,
    Bcache,
    Lvmcache,
}

impl Platform {
    pub fn name(self) -> &'static str {
        match self {
            Platform::Openshift => "openshift",
            Platform::Gke => "gke",
            Platform::Eks => "eks",
            Platform::Aks => "aks",
            Platform::Systemd => "systemd",
            Platform::CloudInit => "cloud-init",
            Platform::Bcache => "bcache",
            Platform::Lvmcache => "lvmcache",
        }
    }
}

/// What a rendered file holds; tells tests which validator applies and the CLI how to print it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    /// One Kubernetes/OpenShift object as YAML.
    Yaml,
    /// cloud-init user-data (`#cloud-config`, YAML).
    CloudConfig,
    /// A systemd unit file.
    Unit,
    /// A bash script.
    Shell,
}

/// One rendered file: its name (no directories), kind and content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RenderedFile {
    pub name: String,
    pub kind: FileKind,
    pub content: String,
}

/// Everything one render produced: the files, and notes for the person applying them (what was
/// assumed, what to check).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rendered {
    pub platform: Platform,
    pub files: Vec<RenderedFile>,
    pub notes: Vec<String>,
}

impl RenderedFile {
    pub(crate) fn new(name: impl Into<String>, kind: FileKind, content: String) -> RenderedFile {
        RenderedFile {
            name: name.into(),
            kind,
            content,
        }
    }
}

impl Rendered {
    pub fn file(&self, name: &str) -> Option<&RenderedFile> {
        self.files.iter().find(|f| f.name == name)
    }
}

/// One platform's renderer. Construction checks the configuration; `render` cannot fail on
/// input, only on a bug (an object that does not serialise).
pub trait Renderer {
    fn platform(&self) -> Platform;
    fn render(&self) -> Result<Rendered, RenderError>;
}

/// Standard base64 (RFC 4648, with padding), for Ignition `data:` URLs.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(ALPHABET[(n >> 18) as usize & 63] as char);
        out.push(ALPHABET[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            ALPHABET[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            ALPHABET[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// A Kubernetes object name (a DNS-1123 label): 1-63 lowercase letters, digits and '-', not
/// starting or ending with '-'.
fn dns_label(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !v.starts_with('-')
        && !v.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        // RFC 4648 section 10 test vectors.
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), want, "{input}");
        }
    }
}
