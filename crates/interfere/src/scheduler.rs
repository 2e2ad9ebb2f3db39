//! The block device behind a directory and its I/O scheduler, read and switched through
//! `/sys/block/<disk>/queue/scheduler` (kernel doc `Documentation/block/switching-sched.rst`:
//! the file lists the available schedulers with the active one in brackets; writing a name
//! switches to it).

use crate::error::{InterfereError, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    /// Finds the device behind `path` through `st_dev` and `/sys/dev/block` (or, for a
    /// filesystem whose `st_dev` is no block device's, its mount's source in
    /// `/proc/self/mountinfo`).
    pub fn of_path(path: &Path) -> Result<Device> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        Self::of_path_in(path, Path::new("/sys"), &mountinfo)
    }

    /// As [`Device::of_path`], with sysfs mounted at `sys` and the mount table given (tests).
    pub fn of_path_in(path: &Path, sys: &Path, mountinfo: &str) -> Result<Device> {
        let md = std::fs::metadata(path).map_err(|e| InterfereError::io(path, e))?;
        Self::of_dev_in(path, md.dev(), sys, mountinfo)
    }

    /// As [`Device::of_path_in`] for `path` whose `st_dev` is `dev`. btrfs gives every
    /// subvolume an anonymous device number (major 0) as tmpfs and overlay have, though it sits
    /// on a block device (QA: interfere on btrfs on a loop device said "a virtual filesystem
    /// ... with no block device"); the block device is then its mount's source, when that is
    /// a block device node (a multi-device btrfs lists the one it was mounted by).
    fn of_dev_in(path: &Path, dev: u64, sys: &Path, mountinfo: &str) -> Result<Device> {
        let (mut maj, mut min) = (libc::major(dev), libc::minor(dev));
        let no_device = |why: String| InterfereError::NoDevice {
            path: path.to_path_buf(),
            why,
        };
        if maj == 0 {
            let mount = mount_of(mountinfo, path);
            let block = mount.and_then(|(_, source)| {
                use std::os::unix::fs::FileTypeExt;
                std::fs::metadata(source)
                    .ok()
                    .filter(|m| m.file_type().is_block_device())
                    .map(|m| m.rdev())
            });
            match block {
                Some(rdev) => (maj, min) = (libc::major(rdev), libc::minor(rdev)),
                None => {
                    let on = match mount {
                        Some((fstype, source)) => {
                            format!("{fstype} (mounted from {source}), a filesystem")
                        }
                        None => "a virtual filesystem (e.g. tmpfs or overlay)".into(),
                    };
                    return Err(no_device(format!(
                        "it is on {on} with no block device (device {maj}:{min}), so the scheduler and cgroup mitigations cannot apply"
                    )));
                }
            }
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

    /// `/sys/block/<disk>/queue`: the scheduler file, `nr_requests` and `iosched/`.
    pub fn queue_dir(&self) -> PathBuf {
        Path::new("/sys/block").join(&self.name).join("queue")
    }
}

/// The filesystem type and source of the mount that holds `path` (absolute, without symlinks)
/// in `mountinfo` (proc(5): mount point fifth, then after " - " the type and the source, octal
/// escapes such as `\040` for a blank): the mount whose mount point is the longest prefix of
/// `path`, the last listed of equal ones (it is mounted over the others).
pub fn mount_of<'a>(mountinfo: &'a str, path: &Path) -> Option<(&'a str, &'a str)> {
    let mut best: Option<(usize, &str, &str)> = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let (Some(point), mut r) = (left.split(' ').nth(4), right.split(' ')) else {
            continue;
        };
        let (Some(fstype), Some(source)) = (r.next(), r.next()) else {
            continue;
        };
        let point = unescape(point);
        if !path.starts_with(&point) {
            continue;
        }
        let depth = Path::new(&point).components().count();
        if best.is_none_or(|(d, _, _)| depth >= d) {
            best = Some((depth, fstype, source));
        }
    }
    best.map(|(_, fstype, source)| (fstype, source))
}

/// mountinfo's octal escapes (`\040` blank, `\011` tab, `\012` newline, `\134` backslash).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) if b[i] == b'\\' => {
                let v = d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The queue files a scheduler switch resets to the kernel's defaults, relative to the queue
/// directory: `nr_requests` and every writable file of `iosched/` (the tunables of the scheduler
/// in force; `Documentation/block/queue-sysfs.rst`, `Documentation/block/*-iosched.rst`). Read
/// before a switch so that they can be written back after the scheduler is restored. Files that
/// cannot be read are left out.
pub fn read_tunables(queue: &Path) -> BTreeMap<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut add = |rel: String| {
        let p = queue.join(&rel);
        let writable =
            std::fs::metadata(&p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o200 != 0);
        if let (true, Ok(v)) = (writable, std::fs::read_to_string(&p)) {
            out.insert(rel, v.trim().to_string());
        }
    };
    add(NR_REQUESTS.to_string());
    if let Ok(rd) = std::fs::read_dir(queue.join("iosched")) {
        let mut names: Vec<String> = rd
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        names.sort();
        for n in names {
            add(format!("iosched/{n}"));
        }
    }
    out
}

/// `nr_requests`, relative to the queue directory.
pub const NR_REQUESTS: &str = "nr_requests";

/// Writes back what [`read_tunables`] read under `scheduler`, once `scheduler` is active again:
/// `nr_requests` first (writing it resets mq-deadline's `async_depth`), then `iosched/`. Only
/// values that differ are written. Returns what the kernel refused (each "file = value: why"),
/// which is reported, not fatal; an error when another scheduler is active (the files would
/// be another scheduler's).
pub fn write_tunables(
    queue: &Path,
    scheduler: &str,
    values: &BTreeMap<String, String>,
) -> Result<Vec<String>> {
    let sched_file = queue.join("scheduler");
    let active = read(&sched_file)?.active;
    if active != scheduler {
        return Err(InterfereError::BadInput(format!(
            "{} reads {active}, not {scheduler}: its settings ({}) were not written back",
            sched_file.display(),
            values.keys().cloned().collect::<Vec<_>>().join(", ")
        )));
    }
    let order = values
        .iter()
        .filter(|(k, _)| *k == NR_REQUESTS)
        .chain(values.iter().filter(|(k, _)| *k != NR_REQUESTS));
    let mut refused = Vec::new();
    for (rel, was) in order {
        let p = queue.join(rel);
        match std::fs::read_to_string(&p) {
            Ok(now) if now.trim() == was => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                refused.push(format!("{rel} = {was}: the file is gone"));
                continue;
            }
            _ => {}
        }
        if let Err(e) = std::fs::write(&p, was) {
            refused.push(format!("{rel} = {was}: {e}"));
        }
    }
    Ok(refused)
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

/// The `diskseq` of block device `device` (`/sys/block/DEVICE/diskseq`, Linux 5.15+): a number
/// the kernel gives each disk it attaches, never twice in a boot. `None` where the kernel has
/// none.
pub fn diskseq(device: &str) -> Option<u64> {
    std::fs::read_to_string(Path::new("/sys/block").join(device).join("diskseq"))
        .ok()?
        .trim()
        .parse()
        .ok()
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

    /// A fake queue directory: the scheduler file, nr_requests and mq-deadline's iosched/.
    fn fake_queue(active: &str) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let q = t.path();
        std::fs::write(q.join("scheduler"), format!("none [{active}] bfq\n")).unwrap();
        std::fs::write(q.join("nr_requests"), "64\n").unwrap();
        std::fs::create_dir(q.join("iosched")).unwrap();
        std::fs::write(q.join("iosched/read_expire"), "123\n").unwrap();
        std::fs::write(q.join("iosched/fifo_batch"), "7\n").unwrap();
        t
    }

    #[test]
    fn the_tunables_read_before_a_switch_are_written_back_after_it() {
        let t = fake_queue("mq-deadline");
        let q = t.path();
        let was = read_tunables(q);
        assert_eq!(
            was.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>(),
            [
                "iosched/fifo_batch=7",
                "iosched/read_expire=123",
                "nr_requests=64"
            ]
        );
        // What a switch away and back does: the kernel's defaults.
        std::fs::write(q.join("nr_requests"), "256\n").unwrap();
        std::fs::write(q.join("iosched/read_expire"), "500\n").unwrap();
        std::fs::write(q.join("iosched/fifo_batch"), "16\n").unwrap();
        assert!(write_tunables(q, "mq-deadline", &was).unwrap().is_empty());
        assert_eq!(read_tunables(q), was);
    }

    #[test]
    fn a_refused_tunable_is_reported_and_the_others_are_still_written() {
        let t = fake_queue("mq-deadline");
        let q = t.path();
        let mut was = read_tunables(q);
        was.insert("iosched/gone".into(), "1".into());
        // A directory in place of a file: the write fails as a refused value would.
        std::fs::remove_file(q.join("iosched/fifo_batch")).unwrap();
        std::fs::create_dir(q.join("iosched/fifo_batch")).unwrap();
        std::fs::write(q.join("nr_requests"), "256\n").unwrap();
        let refused = write_tunables(q, "mq-deadline", &was).unwrap();
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(
            refused[0].starts_with("iosched/fifo_batch = 7: "),
            "{refused:?}"
        );
        assert_eq!(refused[1], "iosched/gone = 1: the file is gone");
        assert_eq!(
            std::fs::read_to_string(q.join("nr_requests")).unwrap(),
            "64"
        );
    }

    #[test]
    fn tunables_are_not_written_under_another_scheduler() {
        let t = fake_queue("mq-deadline");
        let q = t.path();
        let was = read_tunables(q);
        std::fs::write(q.join("scheduler"), "none mq-deadline [bfq]\n").unwrap();
        std::fs::write(q.join("nr_requests"), "256\n").unwrap();
        let e = write_tunables(q, "mq-deadline", &was).unwrap_err();
        assert!(e.to_string().contains("reads bfq, not mq-deadline"), "{e}");
        assert_eq!(
            std::fs::read_to_string(q.join("nr_requests")).unwrap(),
            "256\n"
        );
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
        let d = Device::of_path_in(t.path(), &sys, "").unwrap();
        assert_eq!(d.name, "vda");
        assert_eq!(d.maj_min, "254:0");
        assert_eq!(d.partition.as_deref(), Some("vda1"));
    }

    /// QA: interfere on btrfs on a loop device said "it is on a virtual filesystem (device 0:40,
    /// e.g. tmpfs or overlay) with no block device": btrfs's st_dev is anonymous (major 0). The
    /// block device is its mount's source; tmpfs and overlay still have none.
    #[test]
    fn a_filesystem_with_an_anonymous_device_number_resolves_through_its_mount() {
        if !nix_root() {
            eprintln!("skipped: mknod of a block device node needs root");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        // A block device node 7:99 (a loop device's numbers), and a fake sysfs for it.
        let node = t.path().join("loop99");
        let made = std::process::Command::new("mknod")
            .arg(&node)
            .args(["b", "7", "99"])
            .status()
            .unwrap();
        assert!(made.success(), "mknod {}", node.display());
        let sys = t.path().join("sys");
        let dir = sys.join("devices/virtual/block/loop99");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&dir, sys.join("dev/block/7:99")).unwrap();
        let mountinfo = format!(
            "22 1 254:1 / / rw - ext4 /dev/vda1 rw\n\
             45 22 0:39 / /srv/etcd\\040data rw,relatime - btrfs {} rw,subvol=/\n\
             46 22 0:41 / /srv/tmp rw - tmpfs tmpfs rw\n",
            node.display()
        );
        let anon = libc::makedev(0, 40);
        let d =
            Device::of_dev_in(Path::new("/srv/etcd data/member"), anon, &sys, &mountinfo).unwrap();
        assert_eq!((d.name.as_str(), d.maj_min.as_str()), ("loop99", "7:99"));
        let e = Device::of_dev_in(Path::new("/srv/tmp/x"), anon, &sys, &mountinfo)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("on tmpfs (mounted from tmpfs), a filesystem with no block device"),
            "{e}"
        );
    }

    #[test]
    fn the_mount_is_the_longest_mount_point_over_the_path() {
        let m = "1 0 8:1 / / rw - xfs /dev/sda1 rw\n\
                 2 1 8:2 / /var rw - xfs /dev/sda2 rw\n\
                 3 2 8:3 / /var/lib/etcd rw - xfs /dev/sda3 rw\n\
                 4 2 8:4 / /var/lib/etcd rw - xfs /dev/sdb1 rw\n";
        assert_eq!(
            mount_of(m, Path::new("/var/lib/etcd/member")),
            Some(("xfs", "/dev/sdb1"))
        );
        assert_eq!(
            mount_of(m, Path::new("/var/lib/etcd2")),
            Some(("xfs", "/dev/sda2"))
        );
        assert_eq!(mount_of(m, Path::new("/home")), Some(("xfs", "/dev/sda1")));
        assert_eq!(mount_of("garbage\n - \n", Path::new("/")), None);
        assert_eq!(unescape("a\\040b\\134\\9"), "a b\\\\9");
    }

    fn nix_root() -> bool {
        rustix::process::geteuid().is_root()
    }
}
