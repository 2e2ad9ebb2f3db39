//! Reading `/sys/block`: one entry per whole block device, partitions as subdirectories that
//! hold a `partition` file (Documentation/ABI/stable/sysfs-block).

use super::DiskError;
use std::path::Path;

/// What sysfs says about a whole device.
#[derive(Debug, Clone, Default)]
pub struct RawDisk {
    pub name: String,
    pub maj_min: String,
    /// sysfs `size` is in 512-byte sectors whatever the logical block size (sysfs-block ABI).
    pub size_bytes: u64,
    /// Why the size could not be read (no `size` file, or one that is not a number of
    /// sectors); `size_bytes` is then 0. Such a device is listed, never taken by setup.
    pub size_unknown: Option<String>,
    pub logical_block_size: u64,
    pub read_only: bool,
    pub removable: bool,
    pub rotational: bool,
    pub scheduler: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwid: Option<String>,
    pub holders: Vec<String>,
    /// For md/dm devices: the devices they are built on.
    pub slaves: Vec<String>,
    pub partitions: Vec<RawPartition>,
}

#[derive(Debug, Clone, Default)]
pub struct RawPartition {
    pub name: String,
    pub maj_min: String,
    pub size_bytes: u64,
    pub holders: Vec<String>,
}

/// The trimmed content of a sysfs attribute; at most one page (4096 bytes) is read, as sysfs
/// attributes never hold more (Documentation/filesystems/sysfs.rst) and a fixture tree may
/// hold anything.
fn read(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(p)
        .ok()?
        .take(4096)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).trim().to_string()).filter(|s| !s.is_empty())
}

fn list(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                // Dot files keep empty directories in fixture trees; sysfs has none.
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The active scheduler is the bracketed word of `queue/scheduler` (`none [mq-deadline] kyber`).
pub fn active_scheduler(s: &str) -> Option<String> {
    s.split_whitespace()
        .find(|w| w.starts_with('[') && w.ends_with(']'))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .or_else(|| {
            // A single scheduler without brackets ("none") is the active one.
            let words: Vec<&str> = s.split_whitespace().collect();
            (words.len() == 1).then(|| words[0].to_string())
        })
}

/// The kernel's longest disk name, `DISK_NAME_LEN` (include/linux/blkdev.h).
const DISK_NAME_LEN: usize = 32;

/// Why a name under `/sys/block` is not one setup may put in a command, `None` for a plain
/// kernel name (`nvme1n1`, `sdb`, `dm-0`, `md127`, `loop0`): ASCII letters, digits, `-`, `_`,
/// `.` and `:`, at most [`DISK_NAME_LEN`] bytes. Anything else (a space, a newline, a bidi
/// control, `!` for a `/` in the name) does not name `/dev/NAME` as written (QA: a fixture
/// node's `ev\nil` was eligible and setup's dry run printed `# create RAID0 ... /dev/ev`, then
/// `il ...` as a line of its own).
pub fn odd_name(name: &str) -> Option<String> {
    if name.len() > DISK_NAME_LEN {
        return Some(format!(
            "its kernel name is {} bytes, longer than the kernel's {DISK_NAME_LEN}",
            name.len()
        ));
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
    match name.chars().find(|c| !plain(*c)) {
        Some(c) => Some(format!(
            "its kernel name holds {:?}, which a kernel disk name does not: /dev/NAME is not \
             known to be this disk, so it is not set up",
            c
        )),
        None if name.is_empty() || name.starts_with('.') => {
            Some("its kernel name is not a device name".into())
        }
        None => None,
    }
}

/// The `size` attribute of a device (512-byte sectors), or 0 and why it could not be read: a
/// missing file, or text that is not a decimal number (QA: such a device was hidden as if empty).
fn sectors(p: &Path) -> (u64, Option<String>) {
    match std::fs::metadata(p) {
        Err(e) => return (0, Some(format!("{} cannot be read ({e})", p.display()))),
        Ok(m) if m.is_dir() => return (0, Some(format!("{} is a directory", p.display()))),
        Ok(_) => {}
    }
    let text = read(p).unwrap_or_default();
    match text.parse::<u64>() {
        Ok(n) => (n, None),
        Err(_) => {
            let shown: String = text
                .chars()
                .take(40)
                .collect::<String>()
                .escape_debug()
                .to_string();
            (
                0,
                Some(format!(
                    "{} holds `{shown}`, not a number of 512-byte sectors",
                    p.display()
                )),
            )
        }
    }
}

/// Reads every device under `SYS/block`, sorted by name.
pub fn read_block(sys: &Path) -> Result<Vec<RawDisk>, DiskError> {
    let block = sys.join("block");
    let rd = std::fs::read_dir(&block).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            DiskError::NoSysBlock(sys.to_path_buf())
        } else {
            DiskError::Read {
                path: block.clone(),
                source: e,
            }
        }
    })?;
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let d = block.join(&name);
        let (sectors, size_unknown) = sectors(&d.join("size"));
        let mut partitions = Vec::new();
        for sub in list(&d) {
            let p = d.join(&sub);
            if p.join("partition").exists() {
                partitions.push(RawPartition {
                    maj_min: read(&p.join("dev")).unwrap_or_default(),
                    size_bytes: read(&p.join("size"))
                        .and_then(|s| s.parse::<u64>().ok())
                        .unwrap_or(0)
                        .saturating_mul(512),
                    holders: list(&p.join("holders")),
                    name: sub,
                });
            }
        }
        out.push(RawDisk {
            maj_min: read(&d.join("dev")).unwrap_or_default(),
            size_bytes: sectors.saturating_mul(512),
            size_unknown,
            logical_block_size: read(&d.join("queue/logical_block_size"))
                .and_then(|s| s.parse().ok())
                .unwrap_or(512),
            read_only: read(&d.join("ro")).as_deref() == Some("1"),
            removable: read(&d.join("removable")).as_deref() == Some("1"),
            rotational: read(&d.join("queue/rotational")).as_deref() == Some("1"),
            scheduler: read(&d.join("queue/scheduler")).and_then(|s| active_scheduler(&s)),
            // NVMe namespaces keep model/serial on the controller (`device/`), virtio-blk keeps
            // `serial` on the disk, SCSI keeps `device/model` and `device/wwid`.
            model: read(&d.join("device/model")),
            serial: read(&d.join("device/serial")).or_else(|| read(&d.join("serial"))),
            wwid: read(&d.join("wwid")).or_else(|| read(&d.join("device/wwid"))),
            holders: list(&d.join("holders")),
            slaves: list(&d.join("slaves")),
            partitions,
            name,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_is_the_bracketed_word() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler("none kyber"), None);
    }

    #[test]
    fn kernel_names_are_plain_and_others_odd() {
        for ok in [
            "nvme0n1", "sdb", "dm-0", "md127", "loop0", "zram0", "mmcblk0", "xvda",
        ] {
            assert_eq!(odd_name(ok), None, "{ok}");
        }
        for odd in [
            "",
            ".",
            "..",
            "a b",
            "a\nb",
            "a/b",
            "a!b",
            "é",
            &"x".repeat(33),
        ] {
            assert!(odd_name(odd).is_some(), "{odd:?}");
        }
    }

    #[test]
    fn absurd_sizes_saturate_instead_of_panicking() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("block/vdz");
        std::fs::create_dir_all(d.join("vdz1")).unwrap();
        std::fs::write(d.join("size"), "18446744073709551615\n").unwrap();
        std::fs::write(d.join("vdz1/partition"), "1").unwrap();
        std::fs::write(d.join("vdz1/size"), "18446744073709551615").unwrap();
        std::fs::write(d.join("device"), "x".repeat(1 << 20)).unwrap();
        let disks = read_block(t.path()).unwrap();
        assert_eq!(disks[0].size_bytes, u64::MAX);
        assert_eq!(disks[0].partitions[0].size_bytes, u64::MAX);
    }

    #[test]
    fn reads_this_machines_sysfs() {
        // Every Linux machine has /sys/block; at least one device must parse with a maj:min.
        let disks = read_block(Path::new("/sys")).unwrap();
        assert!(disks.iter().any(|d| d.maj_min.contains(':')));
    }
}
