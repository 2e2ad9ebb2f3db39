//! The engine's errors: one variant per bad input or failure, each message naming the object
//! and, where there is one, the fix (ARCHITECTURE.md, "Rules the code keeps").

use crate::advice;
use crate::advice::{Advice, OptionName, Pass, Render, Spelling};
use std::path::PathBuf;

/// Everything that can stop a run before or while it measures. Written by [`Render::render`]:
/// its advice names the job options as the command line spells them (`Display`), or as a job
/// file does.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A job option has a value the engine cannot run.
    BadOption {
        option: &'static str,
        value: String,
        fix: Advice,
    },
    /// The target (or its parent directory) does not exist.
    MissingPath { path: PathBuf },
    /// The target does not exist and would be a new file in /dev's own filesystem (devtmpfs),
    /// where a name is a device's: a typo, or a disk not attached yet.
    NoSuchDevice { path: PathBuf },
    /// A job that creates its files in a directory (small-files) was given a path that does not
    /// exist: it is no file to create, as it is for other jobs.
    MissingDirectory { path: PathBuf, wanted: &'static str },
    /// Opening or creating the target was refused with EACCES/EPERM; `root`: to root, so no
    /// other user would do (a device cgroup or a security module refused it).
    NoPermission {
        path: PathBuf,
        access: &'static str,
        root: bool,
    },
    /// The target is on a filesystem mounted read-only (EROFS, or `ro` in its mount flags).
    ReadOnlyFs { path: PathBuf, access: &'static str },
    /// A write job on a block device the kernel holds read-only (`losetup -r`, a
    /// write-protected disk: sysfs `ro` is 1).
    DeviceReadOnly { path: PathBuf },
    /// O_DIRECT was asked for on a filesystem that refuses it (tmpfs, some FUSE filesystems).
    DirectUnsupported { path: PathBuf, fs: String },
    /// O_DIRECT needs block-aligned sizes and offsets.
    DirectAlignment {
        path: PathBuf,
        option: &'static str,
        value: u64,
        align: u64,
    },
    /// A write job aimed at a block device that holds a filesystem or other signature.
    DeviceHasSignature { path: PathBuf, what: String },
    /// A write job aimed at a block device with a partition table.
    DeviceHasPartitions { path: PathBuf, table: &'static str },
    /// A write job aimed at a mounted block device.
    DeviceMounted { path: PathBuf, mountpoint: String },
    /// A write job aimed at a block device that another device is built on (LVM, md, dm-crypt, bcache).
    DeviceHasHolders { path: PathBuf, holders: String },
    /// A job would write into (or grow) a regular file that existed before the run. disktier
    /// keeps no marker of the files it laid out earlier, so it cannot tell a kept benchmark file
    /// from the user's data: it refuses unless forced.
    ExistingFile {
        path: PathBuf,
        len: u64,
        why: &'static str,
    },
    /// A file the run would lay out exists, and another process has it open now: another run
    /// on the same directory, most likely ([`crate::run`]'s `openers`).
    FileInUse { path: PathBuf, by: String },
    /// The filesystem filled up (ENOSPC or EDQUOT) while laying out or writing.
    DiskFull {
        path: PathBuf,
        op: &'static str,
        reason: std::io::Error,
    },
    /// O_EXCL on the device failed: something else holds it open exclusively.
    DeviceBusy { path: PathBuf },
    /// The job would need more space than the filesystem has free. `fix` is what makes this
    /// workload smaller (a job's `--size`, small-files' `--nrfiles`).
    NoSpace {
        path: PathBuf,
        need: u64,
        free: u64,
        fix: Advice,
    },
    /// The target is on a kernel pseudo-filesystem (/proc, /sys, a cgroup tree): no disk to
    /// measure.
    PseudoFs { path: PathBuf, fs: String },
    /// A new file would be created, but there is no size to give it.
    SizeRequired { path: PathBuf },
    /// A directory target: the per-job files created in it need a size.
    DirectorySizeRequired { path: PathBuf },
    /// The target is the wrong kind of object for what was asked.
    WrongKind {
        path: PathBuf,
        is: &'static str,
        wanted: String,
        fix: Advice,
    },
    /// The region to run on is empty or outside the target.
    EmptyRegion {
        path: PathBuf,
        len: u64,
        offset: u64,
        fix: Advice,
    },
    /// A system call failed on the target while preparing or running.
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// io_uring could not be set up (the caller falls back to psync with a warning).
    UringUnavailable { reason: String },
    /// A worker thread died.
    WorkerPanicked(u32),
}

impl Render for EngineError {
    /// The message, its advice naming the job options as `sp` spells them (`pass --size (e.g.
    /// --size 1G)` on the command line, `set size= (e.g. size=1G)` in a job file); the options
    /// of the command itself (`--destructive`) read the same in both.
    fn render(&self, sp: Spelling) -> String {
        use OptionName::{Direct, Size};
        let a = |advice: Advice| advice.render(sp);
        match self {
            EngineError::BadOption { option, value, fix } => {
                format!("{option}={value} is not valid: {}", fix.render(sp))
            }
            EngineError::MissingPath { path } => format!(
                "{} does not exist: create it or pick an existing file, directory or block device",
                path.display()
            ),
            EngineError::NoSuchDevice { path } => format!(
                "{} does not exist: a name in /dev is a device's, and disktier makes no file there (it would stand where the device's node goes); check the name (lsblk lists the block devices)",
                path.display()
            ),
            EngineError::MissingDirectory { path, wanted } => format!(
                "{} does not exist, but {wanted}: create it first (mkdir -p {}) on the filesystem to test",
                path.display(),
                path.display()
            ),
            EngineError::NoPermission { path, access, root: false } => format!(
                "{}: no permission: run as a user that may {access} it (e.g. with sudo)",
                path.display()
            ),
            // QA (session 29): root was told to use sudo where a device cgroup refused it.
            EngineError::NoPermission { path, access, root: true } => format!(
                "{}: no permission to {access} it, although disktier runs as root: a container's device cgroup or a security module (SELinux, AppArmor) refuses it; allow the device to the container (or run it privileged), or see the audit log (ausearch -m avc)",
                path.display()
            ),
            EngineError::ReadOnlyFs { path, access } => format!(
                "{} is on a read-only filesystem: this job would {access} it; remount it read-write (mount -o remount,rw) or pick a directory on a writable filesystem",
                path.display()
            ),
            EngineError::DeviceReadOnly { path } => format!(
                "{} is a read-only block device (its sysfs ro flag is 1, e.g. losetup -r or a write-protected disk): a write job cannot run on it; run a read job, or make the device writable (a loop device: set it up again without losetup -r)",
                path.display()
            ),
            EngineError::DirectUnsupported { path, fs } => format!(
                "{} is on {fs}, which has no O_DIRECT: {}",
                path.display(),
                a(advice![Pass, " ", Direct.with(false)])
            ),
            EngineError::DirectAlignment {
                path,
                option,
                value,
                align,
            } => format!(
                "{option}={value} is not a multiple of {align} bytes, which O_DIRECT on {} needs: use a multiple of {align} or {}",
                path.display(),
                a(advice![Pass, " ", Direct.with(false)])
            ),
            EngineError::DeviceHasSignature { path, what } => format!(
                "{} holds {what}: a write job would destroy it; pick an empty device or pass --destructive",
                path.display()
            ),
            EngineError::DeviceHasPartitions { path, table } => format!(
                "{} has {table} partition table: a write job would destroy it; pick an empty device or pass --destructive",
                path.display()
            ),
            EngineError::DeviceMounted { path, mountpoint } => format!(
                "{} is mounted on {mountpoint}: a write job would corrupt it; unmount it first (and pass --destructive) or bench the mounted directory instead",
                path.display()
            ),
            EngineError::DeviceHasHolders { path, holders } => format!(
                "{} is in use by {holders}: a write job would destroy their data; pick a free device or pass --destructive",
                path.display()
            ),
            EngineError::ExistingFile { path, len, why } => format!(
                "{} already exists ({len} bytes) and this {why}: pass --destructive to let disktier overwrite it, or pick a path that does not exist yet (disktier then creates and removes it){}",
                path.display(),
                leftover_hint(path)
            ),
            EngineError::FileInUse { path, by } => format!(
                "{} is open in another process now ({by}), most likely another disktier run on this directory: two runs at once would measure each other; wait for it to end, or measure another directory",
                path.display()
            ),
            EngineError::DiskFull { path, op, reason } => format!(
                "{}: the filesystem is full ({op} failed with {reason}); the files disktier created were removed: free some space or {}",
                path.display(),
                a(advice![Pass, " a smaller ", Size])
            ),
            EngineError::DeviceBusy { path } => format!(
                "{} is busy (opened exclusively by another program, e.g. mounted or in use by LVM/md): free it first",
                path.display()
            ),
            EngineError::NoSpace {
                path,
                need,
                free,
                fix,
            } => format!(
                "{} needs {need} bytes but its filesystem has only {free} bytes free: {}",
                path.display(),
                fix.render(sp)
            ),
            EngineError::PseudoFs { path, fs } => format!(
                "{} is on {fs}, a kernel pseudo-filesystem that no disk is behind: measure a directory on the disk instead (where the data lives, e.g. /var/lib/etcd), a file there, or a block device",
                path.display()
            ),
            EngineError::SizeRequired { path } => format!(
                "{} does not exist yet and no size was given: {}",
                path.display(),
                a(size_example())
            ),
            EngineError::DirectorySizeRequired { path } => format!(
                "{} is a directory: disktier creates a file per job in it (<name>.<jobnum>.0), which needs a size: {}",
                path.display(),
                a(size_example())
            ),
            EngineError::WrongKind {
                path,
                is,
                wanted,
                fix,
            } => format!(
                "{} is a {is}, but {wanted}: {}",
                path.display(),
                fix.render(sp)
            ),
            EngineError::EmptyRegion {
                path,
                len,
                offset,
                fix,
            } => format!(
                "{} is {len} bytes, so offset {offset} leaves nothing to do: {}",
                path.display(),
                fix.render(sp)
            ),
            EngineError::Io { path, op, .. } => format!("{}: {op} failed", path.display()),
            EngineError::UringUnavailable { reason } => {
                format!("io_uring is unavailable: {reason}")
            }
            EngineError::WorkerPanicked(n) => format!("worker thread {n} panicked"),
        }
    }
}

/// "pass --size (e.g. --size 1G)": a new file or a directory's files need one.
fn size_example() -> Advice {
    use OptionName::Size;
    advice![Pass, " ", Size, " (e.g. ", Size.with("1G"), ")"]
}

/// In the command line's spelling ([`Render::render`]).
impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(Spelling::CommandLine))
    }
}

impl EngineError {
    /// Turns an I/O error from a full filesystem (ENOSPC, EDQUOT) into [`EngineError::DiskFull`];
    /// every other error is returned unchanged.
    pub fn full_disk(self) -> Self {
        match self {
            EngineError::Io { path, op, source }
                if matches!(
                    source.raw_os_error(),
                    Some(libc::ENOSPC) | Some(libc::EDQUOT)
                ) =>
            {
                EngineError::DiskFull {
                    path,
                    op,
                    reason: source,
                }
            }
            e => e,
        }
    }

    /// Maps an `io::Error` from opening `path` to the error a user understands.
    pub fn from_open(path: &std::path::Path, access: &'static str, e: std::io::Error) -> Self {
        Self::from_open_as(path, access, e, rustix::process::geteuid().is_root())
    }

    /// [`Self::from_open`] for a process that is root or not.
    fn from_open_as(
        path: &std::path::Path,
        access: &'static str,
        e: std::io::Error,
        root: bool,
    ) -> Self {
        match e.raw_os_error() {
            Some(libc::ENOENT) => EngineError::MissingPath { path: path.into() },
            Some(libc::EROFS) => EngineError::ReadOnlyFs {
                path: path.into(),
                access,
            },
            Some(libc::EACCES) | Some(libc::EPERM) => EngineError::NoPermission {
                path: path.into(),
                access,
                root,
            },
            Some(libc::EBUSY) => EngineError::DeviceBusy { path: path.into() },
            _ => EngineError::Io {
                path: path.into(),
                op: "open",
                source: e,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Error;
    use std::path::Path;

    #[test]
    fn open_errors_name_the_object_and_the_fix() {
        let p = Path::new("/data/x");
        let e =
            EngineError::from_open_as(p, "write", Error::from_raw_os_error(libc::EACCES), false);
        assert!(matches!(e, EngineError::NoPermission { .. }));
        assert_eq!(
            e.to_string(),
            "/data/x: no permission: run as a user that may write it (e.g. with sudo)"
        );
        // Root refused (EPERM from a device cgroup) is not told to use sudo.
        let e = EngineError::from_open_as(p, "read", Error::from_raw_os_error(libc::EPERM), true);
        let text = e.to_string();
        assert!(
            text.starts_with("/data/x: no permission to read it, although disktier runs as root: a container's device cgroup")
                && !text.contains("sudo"),
            "{text}"
        );
        let e = EngineError::from_open(p, "read", Error::from_raw_os_error(libc::ENOENT));
        assert!(matches!(e, EngineError::MissingPath { .. }), "{e}");
        let e = EngineError::from_open(p, "write", Error::from_raw_os_error(libc::EBUSY));
        assert!(matches!(e, EngineError::DeviceBusy { .. }), "{e}");
        // QA: a read-only mount was reported as "no permission ... (e.g. with sudo)".
        let e = EngineError::from_open(p, "write", Error::from_raw_os_error(libc::EROFS));
        assert!(matches!(e, EngineError::ReadOnlyFs { .. }), "{e}");
        assert!(
            e.to_string().contains("read-only filesystem") && !e.to_string().contains("sudo"),
            "{e}"
        );
        let e = EngineError::from_open(p, "read", Error::from_raw_os_error(libc::EIO));
        assert!(e.to_string().starts_with("/data/x: open failed"), "{e}");
    }
}

/// For a refused existing file whose name is the one disktier gives the files it lays out
/// (`JOB.N.M`, fio's naming): a run killed before it removed them (or `--keep-files`) leaves
/// such files, and a user should know it may be one (QA: after a `kill -9`, the next write
/// run was refused with no hint at where the file came from).
fn leftover_hint(path: &std::path::Path) -> &'static str {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let mut parts = name.rsplitn(3, '.');
    let (m, n, job) = (parts.next(), parts.next(), parts.next());
    let digits =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if digits(m) && digits(n) && job.is_some_and(|j| !j.is_empty()) {
        "; its name is the kind disktier gives the files it lays out (JOB.N.M): a disktier run killed before it removed them, or one with --keep-files, may have left it; if so, remove it"
    } else {
        ""
    }
}

#[cfg(test)]
mod leftover_tests {
    use super::*;

    #[test]
    fn a_refused_file_named_as_disktier_names_its_files_gets_the_leftover_hint() {
        let e = |p: &str| {
            EngineError::ExistingFile {
                path: PathBuf::from(p),
                len: 1,
                why: "is a write job",
            }
            .to_string()
        };
        for ours in ["/d/disktier.0.0", "/d/etcd.3.12", "/d/a.b.0.1"] {
            assert!(e(ours).contains("killed before it removed them"), "{ours}");
        }
        for theirs in [
            "/d/data.db",
            "/d/x.0",
            "/d/.0.0",
            "/d/disktier.0.x",
            "/d/a..1",
        ] {
            assert!(!e(theirs).contains("killed"), "{theirs}");
        }
    }
}
