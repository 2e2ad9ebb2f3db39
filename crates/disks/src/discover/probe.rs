//! Probing a device for what it holds (blkid's low-level superblock probe) and whether it can be
//! opened exclusively, on the real node or from a fixture tree.
//!
//! `blkid -p` reads the device itself instead of blkid's cache, so a disk wiped a second ago is
//! seen blank and a filesystem made a second ago is seen: decisions are made from the disk's real
//! state, never from a cache or a marker file.

use super::DiskError;
use disktier_cmd::{Cmd, CommandRunner};
use std::path::{Path, PathBuf};

/// What blkid found on a device (`blkid -p -o export`): a filesystem, a RAID member superblock or
/// a partition table. All empty means blank.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Signature {
    /// `TYPE`: `xfs`, `ext4`, `linux_raid_member`, `swap`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fstype: Option<String>,
    /// `LABEL` (for an md member: the array name, `homehost:name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// `PTTYPE`: `gpt` or `dos` when the device carries a partition table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pttype: Option<String>,
    /// Why the device could not be probed (blkid could not read it): then it is not blank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unprobed: Option<String>,
}

impl Signature {
    pub fn is_blank(&self) -> bool {
        self.fstype.is_none() && self.pttype.is_none() && self.unprobed.is_none()
    }

    /// Parses `blkid -o export` output (`KEY=value` lines).
    pub fn parse_export(text: &str) -> Signature {
        let mut s = Signature::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            let v = Some(v.trim().to_string());
            match k.trim() {
                "TYPE" => s.fstype = v,
                "LABEL" => s.label = v,
                "UUID" => s.uuid = v,
                "PTTYPE" => s.pttype = v,
                _ => {}
            }
        }
        s
    }
}

/// Whether a device could be opened with `O_EXCL`, which the kernel refuses (EBUSY) while the
/// device is mounted, is part of an md array or device-mapper table, is active swap, or is held
/// exclusively by another program; and, when it could, whether anything uses it without such a
/// claim ([`users`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exclusive {
    Free,
    Busy,
    /// Opened exclusively, yet in use: what [`users`] found (a process with it open, a loop
    /// device backed by it).
    InUse(Vec<String>),
    /// The check itself failed (e.g. not root); the message says why.
    Unknown(String),
}

/// Where discovery gets what sysfs cannot tell: superblock signatures and exclusive-open checks.
pub trait Probe {
    fn signature(&self, name: &str) -> Result<Signature, DiskError>;
    fn exclusive(&self, name: &str) -> Exclusive;
    /// What uses the disk without claiming it now (a process with it open, a loop device backed
    /// by it), read from `/proc` and sysfs without opening the disk ([`users_now`]). A listing
    /// looks again at the disks found in use, all together, for up to [`USERS_SETTLE`].
    fn users(&self, name: &str) -> Vec<String>;
}

/// The real node: `blkid -p` through the command runner and an `O_EXCL` open of `/dev/NAME`.
pub struct SystemProbe<'a> {
    pub runner: &'a dyn CommandRunner,
    pub dev_dir: PathBuf,
}

impl Probe for SystemProbe<'_> {
    fn signature(&self, name: &str) -> Result<Signature, DiskError> {
        let dev = self.dev_dir.join(name);
        let cmd = Cmd::new("blkid")
            .args(["-p", "-o", "export"])
            .arg(dev.display().to_string());
        blkid_result(&cmd, self.runner.output(&cmd)?)
    }

    fn exclusive(&self, name: &str) -> Exclusive {
        exclusive_open(&self.dev_dir.join(name))
    }

    fn users(&self, name: &str) -> Vec<String> {
        users_now(&self.dev_dir.join(name))
    }
}

/// What a `blkid -p -o export` run says, failing closed. blkid(8): exit 0 means a signature
/// was found, exit 2 that none was. Any other exit status is an error (never "blank"); exit 0
/// without a TYPE or PTTYPE says something is there without saying what, so it is reported
/// as TYPE `unknown` (not blank: setup leaves it alone), unless all it names is a partition's
/// entry in its disk's table ([`only_partition_entry`]). blkid also exits 2 when it cannot open
/// the device at all ("Permission denied" for a user, an I/O error): exit 2 with an error on
/// stderr is `unprobed`, not blank.
pub fn blkid_result(cmd: &Cmd, out: disktier_cmd::Output) -> Result<Signature, DiskError> {
    match out.status {
        0 => {
            let mut s = Signature::parse_export(&out.stdout);
            if s.is_blank() && !only_partition_entry(&out.stdout) {
                s.fstype = Some("unknown".into());
            }
            Ok(s)
        }
        2 if out.stderr.trim().is_empty() => Ok(Signature::default()),
        2 => Ok(Signature {
            unprobed: Some(format!("`{cmd}`: {}", out.stderr.trim())),
            ..Signature::default()
        }),
        status => Err(DiskError::Command(disktier_cmd::CmdError::Failed {
            cmd: cmd.to_string(),
            status,
            stdout: out.stdout,
            stderr: out.stderr,
        })),
    }
}

/// Whether `blkid -p -o export` output names nothing but the device and its entry in a
/// partition table: blkid reports a partition's entry (`PART_ENTRY_SCHEME`, `_TYPE`, `_NUMBER`,
/// `_OFFSET`, ...: libblkid's partitions probe) and exits 0 even when the partition holds
/// nothing, and the entry says nothing of what it holds. Found by QA: a blank partition (a
/// GPT disk's BIOS boot partition, a partition made and not yet formatted) was listed with
/// filesystem `unknown`.
fn only_partition_entry(export: &str) -> bool {
    let keys: Vec<&str> = export
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_once('=').map_or("", |(k, _)| k.trim()))
        .collect();
    keys.iter().any(|k| k.starts_with("PART_ENTRY_"))
        && keys
            .iter()
            .all(|k| *k == "DEVNAME" || k.starts_with("PART_ENTRY_"))
}

/// Opens `dev` read-only with `O_EXCL` and closes it at once: no I/O reaches the device. When
/// the open succeeds, the device is also looked for among what other processes hold open and
/// what loop devices are backed by ([`users`]).
pub fn exclusive_open(dev: &Path) -> Exclusive {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
    {
        Ok(f) => {
            drop(f);
            let by = users(dev);
            if by.is_empty() {
                Exclusive::Free
            } else {
                Exclusive::InUse(by)
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Exclusive::Busy,
        Err(e) => Exclusive::Unknown(format!("cannot open {} to check: {e}", dev.display())),
    }
}

/// What uses block device `dev` without claiming it, so that neither an `O_EXCL` open fails
/// nor sysfs lists a holder: a process with it open (an fd in `/proc/PID/fd`: a `dd`, a VM's raw
/// disk, a userspace block server) and a loop device backed by it (`/sys/block/loopN/loop/
/// backing_file`; the loop driver holds the file without a claim). Found by QA: setup formatted
/// the disk behind `/dev/loop3` while loop3 was in use. What is found is looked for again
/// ([`settle`]) and only what stays is reported.
pub fn users(dev: &Path) -> Vec<String> {
    if users_now(dev).is_empty() {
        return Vec::new();
    }
    settle(vec![dev], |d| users_now(d))
        .pop()
        .map(|(_, by)| by)
        .unwrap_or_default()
}

/// What still uses each of `found` (things a first look found in use) after a udev worker's
/// probe has had its moment: a udev worker opens a device for a moment after it changes (a new
/// array, a new loop device), which a look in that moment reports. All are looked at again
/// together with `look`, every tenth of [`USERS_SETTLE`] for up to [`USERS_SETTLE`] in all, and
/// those still in use at the end are returned with what uses them. One wait for all, not one
/// each: a listing of ten such disks took ten seconds when each had its own (QA).
pub fn settle<K>(found: Vec<K>, mut look: impl FnMut(&K) -> Vec<String>) -> Vec<(K, Vec<String>)> {
    let mut left: Vec<(K, Vec<String>)> = found.into_iter().map(|k| (k, Vec::new())).collect();
    for _ in 0..USERS_SETTLE_LOOKS {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(USERS_SETTLE / USERS_SETTLE_LOOKS);
        left.retain_mut(|(k, by)| {
            *by = look(k);
            !by.is_empty()
        });
    }
    left
}

/// How long what uses a disk is looked for again before it counts (a udev probe's moment).
pub const USERS_SETTLE: std::time::Duration = std::time::Duration::from_secs(1);
/// How many times in [`USERS_SETTLE`].
pub const USERS_SETTLE_LOOKS: u32 = 10;

/// What uses block device `dev` now (see [`users`]).
pub fn users_now(dev: &Path) -> Vec<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let rdev = match std::fs::metadata(dev) {
        Ok(m) if m.file_type().is_block_device() => m.rdev(),
        _ => return Vec::new(),
    };
    // stat(2) follows /proc's fd links to the open file itself, whatever path it was opened by.
    let is_dev = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device() && m.rdev() == rdev)
    };
    let entries = |d: &Path| {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
    };
    let mut by = Vec::new();
    for e in entries(Path::new("/sys/block")) {
        let Ok(backing) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        if is_dev(Path::new(backing.trim_end_matches('\n'))) {
            by.push(format!(
                "loop device /dev/{} is backed by it",
                e.file_name().to_string_lossy()
            ));
        }
    }
    let me = std::process::id().to_string();
    for p in entries(Path::new("/proc")) {
        let pid = p.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        // Only links to a device node are followed: a stat of another open file may wait on a
        // network filesystem.
        let open = entries(&p.path().join("fd")).any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|t| t.starts_with("/dev/"))
                && is_dev(&fd.path())
        });
        if open {
            // A process names itself: no control character of its name reaches a terminal.
            let comm: String = std::fs::read_to_string(p.path().join("comm"))
                .unwrap_or_default()
                .trim_end_matches('\n')
                .chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            by.push(format!("process {pid} ({comm}) has it open"));
        }
    }
    by
}

/// A fixture tree: `ROOT/blkid/NAME` holds `blkid -p -o export` output for NAME (absent: blank),
/// and `ROOT/busy` lists names whose exclusive open fails. Never touches a real device.
pub struct FixtureProbe {
    pub root: PathBuf,
}

impl Probe for FixtureProbe {
    fn signature(&self, name: &str) -> Result<Signature, DiskError> {
        use std::io::Read;
        // blkid's export output is a few lines; a fixture file is read up to 64 KiB.
        let read = |p: &Path| -> std::io::Result<String> {
            let mut buf = Vec::new();
            std::fs::File::open(p)?
                .take(64 << 10)
                .read_to_end(&mut buf)?;
            Ok(String::from_utf8_lossy(&buf).into_owned())
        };
        match read(&self.root.join("blkid").join(name)) {
            Ok(t) => Ok(Signature::parse_export(&t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Signature::default()),
            Err(e) => Err(DiskError::Read {
                path: self.root.join("blkid").join(name),
                source: e,
            }),
        }
    }

    fn exclusive(&self, name: &str) -> Exclusive {
        let busy = std::fs::read_to_string(self.root.join("busy")).unwrap_or_default();
        if busy.split_whitespace().any(|b| b == name) {
            Exclusive::Busy
        } else {
            Exclusive::Free
        }
    }

    /// A fixture node has no processes and no loop devices of its own.
    fn users(&self, _name: &str) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_cmd::RecordingRunner;

    /// A udev probe's moment passes: what is gone by a later look is dropped, what stays is
    /// returned with the last look's users, and everything is looked at together, at most
    /// [`USERS_SETTLE_LOOKS`] times each (one wait for all, not one each).
    #[test]
    fn settle_drops_what_goes_and_looks_at_all_together() {
        let mut looks = std::collections::HashMap::<u32, u32>::new();
        let left = settle(vec![1u32, 2, 3], |&k| {
            let n = looks.entry(k).or_default();
            *n += 1;
            match k {
                // a udev worker's open, gone at the second look
                1 if *n < 2 => vec!["pid 7 (udev-worker)".to_string()],
                1 => Vec::new(),
                // a loop device's backing, which stays
                2 => vec![format!("look {n}")],
                _ => Vec::new(),
            }
        });
        assert_eq!(left, vec![(2, vec![format!("look {USERS_SETTLE_LOOKS}")])]);
        assert_eq!(looks[&1], 2);
        assert_eq!(looks[&2], USERS_SETTLE_LOOKS);
        assert_eq!(looks[&3], 1);
        assert!(settle(Vec::<u32>::new(), |_| unreachable!()).is_empty());
    }

    #[test]
    fn blkid_exit_2_is_blank_and_export_is_parsed() {
        let r = RecordingRunner::new();
        r.once("blkid", &["-p", "-o", "export", "/dev/a"], 2, "");
        r.once(
            "blkid",
            &["-p", "-o", "export", "/dev/b"],
            0,
            "DEVNAME=/dev/b\nLABEL=disktier\nUUID=u-1\nTYPE=xfs\n",
        );
        r.once("blkid", &["-p", "-o", "export", "/dev/c"], 4, "");
        let p = SystemProbe {
            runner: &r,
            dev_dir: PathBuf::from("/dev"),
        };
        assert!(p.signature("a").unwrap().is_blank());
        let b = p.signature("b").unwrap();
        assert_eq!(b.fstype.as_deref(), Some("xfs"));
        assert_eq!(b.label.as_deref(), Some("disktier"));
        assert_eq!(b.uuid.as_deref(), Some("u-1"));
        assert!(
            p.signature("c").is_err(),
            "exit 4 (usage error) must not read as blank"
        );
    }

    /// `blkid -p -o export` of a blank partition (util-linux 2.38, a dos table's first
    /// partition) and of one that holds ext4.
    #[test]
    fn a_partitions_table_entry_alone_is_blank() {
        let entry = "DEVNAME=/dev/p1\nPART_ENTRY_SCHEME=dos\nPART_ENTRY_UUID=d4040ec4-01\nPART_ENTRY_TYPE=0x83\nPART_ENTRY_NUMBER=1\nPART_ENTRY_OFFSET=2048\nPART_ENTRY_SIZE=204800\nPART_ENTRY_DISK=7:4\n";
        let r = RecordingRunner::new();
        r.once("blkid", &["-p", "-o", "export", "/dev/p1"], 0, entry);
        r.once(
            "blkid",
            &["-p", "-o", "export", "/dev/p2"],
            0,
            &format!("{entry}TYPE=ext4\nUUID=u-2\n"),
        );
        r.once(
            "blkid",
            &["-p", "-o", "export", "/dev/p3"],
            0,
            &format!("{entry}USAGE=other\n"),
        );
        let p = SystemProbe {
            runner: &r,
            dev_dir: PathBuf::from("/dev"),
        };
        assert_eq!(p.signature("p1").unwrap(), Signature::default());
        assert_eq!(p.signature("p2").unwrap().fstype.as_deref(), Some("ext4"));
        // Anything besides the entry that names no type is still something.
        assert_eq!(
            p.signature("p3").unwrap().fstype.as_deref(),
            Some("unknown")
        );
    }

    #[test]
    fn blkid_failures_never_read_as_blank() {
        // A runner that cannot run blkid at all.
        struct Failing;
        impl CommandRunner for Failing {
            fn output(&self, cmd: &Cmd) -> Result<disktier_cmd::Output, disktier_cmd::CmdError> {
                Err(disktier_cmd::CmdError::NotFound {
                    program: cmd.program.clone(),
                    package: "util-linux".into(),
                })
            }
            fn has_program(&self, _: &str) -> bool {
                false
            }
        }
        let p = SystemProbe {
            runner: &Failing,
            dev_dir: PathBuf::from("/dev"),
        };
        assert!(p.signature("a").is_err());
        // Killed by a signal (-1), or success that names nothing: not blank either.
        let r = RecordingRunner::new();
        r.once("blkid", &["-p", "-o", "export", "/dev/k"], -1, "");
        r.once(
            "blkid",
            &["-p", "-o", "export", "/dev/e"],
            0,
            "DEVNAME=/dev/e\n",
        );
        let p = SystemProbe {
            runner: &r,
            dev_dir: PathBuf::from("/dev"),
        };
        assert!(p.signature("k").is_err());
        let e = p.signature("e").unwrap();
        assert!(!e.is_blank(), "{e:?}");
        assert_eq!(e.fstype.as_deref(), Some("unknown"));
    }

    #[test]
    fn blkid_that_cannot_read_the_device_is_not_blank() {
        // blkid -p run by a user on a root-only device: exit 2 (as for "nothing found"), with
        // the error on stderr. This read as blank.
        let r = RecordingRunner::new();
        r.answer(
            "blkid",
            &["-p", "-o", "export", "/dev/p"],
            disktier_cmd::Output {
                status: 2,
                stdout: String::new(),
                stderr: "blkid: error: /dev/p: Permission denied\n".into(),
            },
        );
        let p = SystemProbe {
            runner: &r,
            dev_dir: PathBuf::from("/dev"),
        };
        let s = p.signature("p").unwrap();
        assert!(!s.is_blank());
        assert!(s.unprobed.unwrap().contains("Permission denied"));
    }

    #[test]
    fn a_user_without_access_does_not_see_a_formatted_disk_as_blank() {
        // The real blkid, as nobody, on a loop device holding ext4.
        if !disktier_testkit::require_loop()
            || !disktier_testkit::require(
                disktier_cmd::which("setpriv").is_some()
                    && disktier_cmd::which("mkfs.ext4").is_some(),
                "setpriv, mkfs.ext4",
            )
        {
            return;
        }
        let dev = disktier_testkit::LoopDev::new(16 << 20);
        let ok = std::process::Command::new("mkfs.ext4")
            .arg("-q")
            .arg(&dev.path)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        struct AsNobody;
        impl CommandRunner for AsNobody {
            fn output(&self, cmd: &Cmd) -> Result<disktier_cmd::Output, disktier_cmd::CmdError> {
                let c = Cmd::new("setpriv")
                    .args([
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        cmd.program.as_str(),
                    ])
                    .args(cmd.args.iter().cloned());
                disktier_cmd::RealRunner.output(&c)
            }
            fn has_program(&self, p: &str) -> bool {
                disktier_cmd::RealRunner.has_program(p)
            }
        }
        let p = SystemProbe {
            runner: &AsNobody,
            dev_dir: PathBuf::from("/dev"),
        };
        let name = dev.path.file_name().unwrap().to_string_lossy().into_owned();
        let s = p.signature(&name).unwrap();
        assert!(!s.is_blank(), "{s:?}");
    }
}
