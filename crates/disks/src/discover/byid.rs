//! `/dev/disk/by-id`: udev's stable names, which survive the kernel renaming `nvme1n1` to
//! `nvme0n1` between boots (EKS and Bottlerocket select by model/by-id for this: docs/sources.md
//! [eks-setup-local-disks], [bottlerocket-ephemeral]).

use std::collections::BTreeMap;
use std::path::Path;

/// Kernel name -> its by-id link names (partition links `-partN` excluded), sorted.
pub fn read(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return map;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let link = e.file_name().to_string_lossy().into_owned();
        // A stable path goes into setup's commands, script and fstab: only names of the
        // characters udev writes unescaped (QA: a link 'nvme-a\n#b c' in a fixture node was the
        // preferred path, and setup's dry run printed it over two lines).
        if !plain_link(&link) {
            continue;
        }
        let Ok(target) = std::fs::read_link(e.path()) else {
            continue;
        };
        let Some(kname) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        map.entry(kname).or_default().push(link);
    }
    for v in map.values_mut() {
        v.sort();
    }
    map
}

/// Rank of a by-id name: model+serial NVMe names first (they say what the disk is), then WWNs,
/// then EUI-based NVMe names, then the rest (`google-*`, `scsi-*`, `ata-*`).
/// A by-id name of ASCII letters, digits and `-_.:=@+` (udev's unescaped characters in device
/// node names, `whitelisted_char_for_devnode`, less `#` and the `\` of its `\xNN` escapes), at
/// most 255 bytes (NAME_MAX).
fn plain_link(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 255
        && !n.starts_with('.')
        && n.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '=' | '@' | '+')
        })
}

fn rank(n: &str) -> u8 {
    if n.starts_with("nvme-eui.") || n.starts_with("nvme-nvme.") || n.starts_with("nvme-uuid.") {
        2
    } else if n.starts_with("nvme-") {
        // `..._1` names repeat the namespace-less name with a namespace suffix.
        if n.ends_with("_1") {
            1
        } else {
            0
        }
    } else if n.starts_with("wwn-") {
        1
    } else {
        3
    }
}

/// The by-id name to show and to select a disk by.
pub fn preferred(names: &[String]) -> Option<&str> {
    names
        .iter()
        .filter(|n| !n.contains("-part"))
        .min_by(|a, b| {
            rank(a)
                .cmp(&rank(b))
                .then(a.len().cmp(&b.len()))
                .then(a.cmp(b))
        })
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_model_serial_nvme_names() {
        let names: Vec<String> = [
            "nvme-nvme.1d0f-4157533131",
            "nvme-Amazon_EC2_NVMe_Instance_Storage_AWS11_1",
            "nvme-Amazon_EC2_NVMe_Instance_Storage_AWS11",
            "nvme-Amazon_EC2_NVMe_Instance_Storage_AWS11-part1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            preferred(&names),
            Some("nvme-Amazon_EC2_NVMe_Instance_Storage_AWS11")
        );
        let g: Vec<String> = ["google-local-nvme-ssd-0", "nvme-nvme_card_nvme_card"]
            .map(String::from)
            .to_vec();
        assert_eq!(preferred(&g), Some("nvme-nvme_card_nvme_card"));
        assert_eq!(preferred(&[]), None);
    }
}
