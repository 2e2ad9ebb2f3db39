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

    /// `/sys/block/<disk>/queue`: the scheduler file, `nr_requests` and `iosched/`.
    pub fn queue_dir(&self) -> PathBuf {
        Path::new("/sys/block").join(&self.name).join("queue")
    }
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
        let d = Device::of_path_in(t.path(), &sys).unwrap();
        assert_eq!(d.name, "vda");
        assert_eq!(d.maj_min, "254:0");
        assert_eq!(d.partition.as_deref(), Some("vda1"));
    }
}
