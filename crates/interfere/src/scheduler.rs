//! The block device behind a directory and its I/O scheduler, read and switched through
//! `/sys/block/<disk>/queue/scheduler` (kernel doc `Documentation/block/switching-sched.rst`:
//! the file lists the available schedulers with the active one in brackets; writing a name
//! switches to it).

use crate::error::{InterfereError, Result};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The whole disk (never a partition) that holds a filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    /// Kernel name: `loop3`, `vda`, `nvme0n1`.
    pub name: String,
    /// `major:minor` of the whole disk, as the cgroup files want it.
    pub maj_min: String,
    /// The partition the filesystem sits on, when it is not the whole disk.
    pub partition: Option<String>,
}

impl Device {
    /// Finds the device behind `path` through `st_dev` and `/sys/dev/block`.
    pub fn of_path(path: &Path) -> Result<Device> {
        Self::of_path_in(path, Path::new("/sys"))
    }

    /// As [`Device::of_path`], with sysfs mounted at `sys` (tests).
    pub fn of_path_in(path: &Path, sys: &Path) -> Result<Device> {
        let md = std::fs::metadata(path).map_err(|e| InterfereError::io(path, e))?;
        let dev = md.dev();
        let (maj, min) = (libc::major(dev), libc::minor(dev));
        let no_device = |why: String| InterfereError::NoDevice {
            path: path.to_path_buf(),
            why,
        };
        if maj == 0 {
            return Err(no_device(format!(
                "it is on a virtual filesystem (device {maj}:{min}, e.g. tmpfs or overlay) with no block device, so the scheduler and cgroup mitigations cannot apply"
            )));
        }
        let link = sys.join(format!("dev/block/{maj}:{min}"));
        let real = std::fs::canonicalize(&link)
            .map_err(|e| no_device(format!("{}: {e}", link.display())))?;
        let own = file_name(&real);
        if real.join("partition").exists() {
            let disk_dir = real
                .parent()
                .ok_or_else(|| no_device(format!("{} has no parent disk", real.display())))?;
            let maj_min = read_trim(&disk_dir.join("dev"))?;
            Ok(Device {
                name: file_name(disk_dir),
                maj_min,
                partition: Some(own),
            })
        } else {
            Ok(Device {
                name: own,
                maj_min: format!("{maj}:{min}"),
                partition: None,
            })
        }
    }

    pub fn scheduler_file(&self) -> PathBuf {
        Self::scheduler_file_in(&self.name, Path::new("/sys"))
    }

    pub fn scheduler_file_in(name: &str, sys: &Path) -> PathBuf {
        sys.join("block").join(name).join("queue/scheduler")
    }
}

/// What a scheduler file says: the active scheduler and the ones the kernel offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedulers {
    pub active: String,
    pub available: Vec<String>,
}

/// Parses `none [mq-deadline] kyber bfq`.
pub fn parse(line: &str) -> Schedulers {
    let mut active = String::new();
    let mut available = Vec::new();
    for w in line.split_whitespace() {
        if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            active = inner.to_string();
            available.push(inner.to_string());
        } else {
            available.push(w.to_string());
        }
    }
    if active.is_empty() && available.len() == 1 {
        // A queue with a single choice prints it without brackets on some kernels.
        active = available[0].clone();
    }
    Schedulers { active, available }
}

pub fn read(file: &Path) -> Result<Schedulers> {
    Ok(parse(&read_trim(file)?))
}

/// Switches the scheduler and reads it back; an error when the kernel refused or ignored it.
pub fn set(file: &Path, device: &str, name: &str) -> Result<()> {
    std::fs::write(file, name).map_err(|e| InterfereError::io(file, e))?;
    let now = read(file)?;
    if now.active != name {
        return Err(InterfereError::SchedulerNotApplied {
            device: device.to_string(),
            wanted: name.to_string(),
            got: now.active,
        });
    }
    Ok(())
}

fn read_trim(p: &Path) -> Result<String> {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .map_err(|e| InterfereError::io(p, e))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_sysfs_line() {
        let s = parse("none [mq-deadline] kyber bfq\n");
        assert_eq!(s.active, "mq-deadline");
        assert_eq!(s.available, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(parse("[none] mq-deadline").active, "none");
        assert_eq!(parse("none").active, "none");
    }

    #[test]
    fn a_partition_resolves_to_its_disk() {
        // A fake sysfs: /sys/dev/block/M:m -> devices/.../vda/vda1 with a `partition` file.
        let t = tempfile::tempdir().unwrap();
        let md = std::fs::metadata(t.path()).unwrap();
        let (maj, min) = (libc::major(md.dev()), libc::minor(md.dev()));
        if maj == 0 {
            return; // the temp dir is on tmpfs here; nothing to resolve
        }
        let sys = t.path().join("sys");
        let part = sys.join("devices/pci0/block/vda/vda1");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("partition"), "1").unwrap();
        std::fs::write(sys.join("devices/pci0/block/vda/dev"), "254:0\n").unwrap();
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&part, sys.join(format!("dev/block/{maj}:{min}"))).unwrap();
        let d = Device::of_path_in(t.path(), &sys).unwrap();
        assert_eq!(d.name, "vda");
        assert_eq!(d.maj_min, "254:0");
        assert_eq!(d.partition.as_deref(), Some("vda1"));
    }
}
