//! What the target is and whether the job may touch it: file, directory or block device; the
//! filesystem type (statfs `f_type`, values from linux/magic.h); the block device behind it
//! (`st_dev` -> `/sys/dev/block/MAJ:MIN`) with its model and scheduler from sysfs; and the safety
//! checks that refuse to write over data (filesystem signatures, partition tables, mounts,
//! holders) unless the user passed `--destructive`.

use crate::error::EngineError;
use crate::result::TargetInfo;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What kind of object a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    /// A path that does not exist yet in an existing directory: a file will be created.
    NewFile,
    Directory,
    Device,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::File | Kind::NewFile => "file",
            Kind::Directory => "directory",
            Kind::Device => "device",
        }
    }
}

/// Filesystem names by statfs `f_type` (include/uapi/linux/magic.h and the filesystems' own
/// headers for xfs, zfs, fuse).
const FS_MAGIC: &[(i64, &str)] = &[
    (0x5846_5342, "xfs"),
    (0xEF53, "ext4"),
    (0x0102_1994, "tmpfs"),
    (0x8584_58f6, "ramfs"),
    (0x9123_683E, "btrfs"),
    (0x794c_7630, "overlay"),
    (0x6969, "nfs"),
    (0x6573_5546, "fuse"),
    (0xF2F5_2010, "f2fs"),
    (0x2fc1_2fc1, "zfs"),
    (0xca45_1a4e, "bcachefs"),
    (0x4d44, "vfat"),
    (0x2011_BAB0, "exfat"),
    (0x5346_544e, "ntfs"),
    (0x7371_7368, "squashfs"),
    (0xFF53_4D42, "cifs"),
    (0xFE53_4D42, "smb2"),
    (0x00c3_6400, "ceph"),
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x1cd1, "devpts"),
    (0x0102_1997, "v9fs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0xcafe_4a11, "bpf"),
    (0x6265_6570, "configfs"),
    (0x6165_676c, "pstore"),
    (0x1980_0202, "mqueue"),
    (0xde5e_81e4, "efivarfs"),
];

/// Kernel pseudo-filesystems: their files are the kernel's interfaces, no disk is behind them
/// and they report no free space (QA: `check etcd /proc` was told "only 0 bytes free: pass a
/// smaller --size").
const PSEUDO_FS: &[&str] = &[
    "proc",
    "sysfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "bpf",
    "configfs",
    "pstore",
    "mqueue",
    "efivarfs",
];

/// Filesystems whose O_DIRECT is no direct I/O at all: their pages are RAM, so an O_DIRECT
/// benchmark would measure memory (tmpfs accepts O_DIRECT opens since Linux 6.6, but still
/// serves them from the page cache).
const NO_REAL_DIRECT: &[&str] = &["tmpfs", "ramfs"];

/// The filesystem type name for a statfs magic number.
pub fn fs_name(magic: i64) -> String {
    FS_MAGIC
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| format!("0x{magic:x}"))
}

/// The kernel pseudo-filesystem `p` is on (`proc`, `sysfs`, a cgroup tree, ...), if it is on one.
pub fn pseudo_fs(p: &Path) -> Option<String> {
    let name = fs_name(statfs(p).ok()?.0);
    PSEUDO_FS.contains(&name.as_str()).then_some(name)
}

/// statfs(2) on `p`: (f_type, bytes available to unprivileged users).
pub fn statfs(p: &Path) -> std::io::Result<(i64, u64)> {
    let s = rustix::fs::statfs(p)?;
    let v = rustix::fs::statvfs(p)?;
    // f_type is a 32-bit magic stored in a signed long; mask so that it compares as linux/magic.h writes it.
    Ok((
        (s.f_type as u64 & 0xffff_ffff) as i64,
        v.f_bavail.saturating_mul(v.f_frsize),
    ))
}

/// The kernel name of the block device `maj:min` (`loop3`, `nvme0n1p1`), if sysfs knows it.
pub fn dev_name(maj: u32, min: u32) -> Option<String> {
    let link = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The whole disk a device belongs to (`nvme0n1` for `nvme0n1p1`), itself for a whole disk.
pub fn whole_disk(name: &str) -> String {
    let sys = PathBuf::from(format!("/sys/class/block/{name}"));
    if sys.join("partition").exists() {
        if let Ok(real) = std::fs::canonicalize(&sys) {
            if let Some(parent) = real.parent().and_then(|p| p.file_name()) {
                return parent.to_string_lossy().into_owned();
            }
        }
    }
    name.to_string()
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The active scheduler from a `queue/scheduler` line such as `none [mq-deadline] kyber`.
pub fn active_scheduler(line: &str) -> Option<String> {
    let start = line.find('[')?;
    let end = line[start..].find(']')? + start;
    Some(line[start + 1..end].to_string())
}

/// sysfs facts about a device: (model, scheduler, logical block size).
fn device_facts(name: &str) -> (Option<String>, Option<String>, Option<u64>) {
    let disk = whole_disk(name);
    let base = PathBuf::from(format!("/sys/block/{disk}"));
    let model = read_trim(base.join("device/model"))
        .or_else(|| read_trim(base.join("loop/backing_file")).map(|f| format!("loop over {f}")));
    let sched = read_trim(base.join("queue/scheduler")).and_then(|l| active_scheduler(&l));
    let lbs = read_trim(base.join("queue/logical_block_size")).and_then(|s| s.parse().ok());
    (model, sched, lbs)
}

/// A classified target, with what the safety checks and the runner need beyond [`TargetInfo`].
#[derive(Debug, Clone)]
pub struct Classified {
    pub info: TargetInfo,
    pub kind: Kind,
    /// Device number of the target itself (a device) or of the device holding it (a file).
    pub dev: Option<(u32, u32)>,
    pub logical_block_size: Option<u64>,
    /// Bytes free on the filesystem (files and directories).
    pub free: Option<u64>,
    /// Current length of an existing file or device.
    pub len: u64,
    /// Nothing can be written: the filesystem is mounted read-only (statvfs `ST_RDONLY`), or
    /// the block device is read-only (sysfs `ro`: `losetup -r`, a write-protected disk).
    pub read_only: bool,
}

impl Classified {
    /// Refuses, naming `path`, to use `need` more bytes than the filesystem has free (where
    /// the free space is known); `fix` says how to make the workload smaller.
    pub(crate) fn check_room(
        &self,
        path: &Path,
        need: u64,
        fix: impl FnOnce(u64) -> crate::advice::Advice,
    ) -> Result<(), EngineError> {
        if let Some(fs) = self
            .info
            .fs_type
            .as_deref()
            .filter(|fs| PSEUDO_FS.contains(fs))
        {
            return Err(EngineError::PseudoFs {
                path: path.into(),
                fs: fs.to_string(),
            });
        }
        match self.free {
            Some(free) if need > free => Err(EngineError::NoSpace {
                path: path.into(),
                need,
                free,
                fix: fix(free),
            }),
            _ => Ok(()),
        }
    }

    /// Refuses to write to a read-only filesystem or device before any I/O.
    pub(crate) fn check_writable(&self, path: &Path) -> Result<(), EngineError> {
        match (self.read_only, self.kind) {
            (false, _) => Ok(()),
            (true, Kind::Device) => Err(EngineError::DeviceReadOnly { path: path.into() }),
            (true, _) => Err(EngineError::ReadOnlyFs {
                path: path.into(),
                access: "write",
            }),
        }
    }
}

/// Whether the filesystem holding `p` is mounted read-only.
fn fs_read_only(p: &Path) -> bool {
    rustix::fs::statvfs(p).is_ok_and(|v| v.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
}

/// Whether the kernel holds block device `name` read-only (`/sys/class/block/NAME/ro`).
fn device_read_only(name: &str) -> bool {
    read_trim(format!("/sys/class/block/{name}/ro")).as_deref() == Some("1")
}

/// Classifies `path`: kind, filesystem, device behind it, model and scheduler.
pub fn inspect(path: &Path) -> Result<TargetInfo, EngineError> {
    classify(path).map(|c| c.info)
}

/// [`inspect`] with the extra facts the engine uses.
pub fn classify(path: &Path) -> Result<Classified, EngineError> {
    let (meta, kind, fs_path) = match std::fs::metadata(path) {
        Ok(m) => {
            let ft = m.file_type();
            let kind = if ft.is_block_device() {
                Kind::Device
            } else if ft.is_dir() {
                Kind::Directory
            } else if ft.is_file() {
                Kind::File
            } else {
                return Err(EngineError::WrongKind {
                    path: path.into(),
                    is: if ft.is_char_device() {
                        "character device"
                    } else if ft.is_fifo() {
                        "FIFO (named pipe), which holds no data to measure"
                    } else if ft.is_socket() {
                        "socket"
                    } else {
                        "special file"
                    },
                    wanted: "disktier needs a file, a directory or a block device".into(),
                    fix: "pick a file, a directory or a block device".into(),
                });
            };
            (m, kind, path.to_path_buf())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            // QA: `bench /dev/typo` made, used and removed a regular file in devtmpfs.
            let dev = std::fs::metadata("/dev").map(|d| d.dev()).ok();
            match std::fs::metadata(&parent) {
                Ok(m) if m.is_dir() && Some(m.dev()) == dev => {
                    return Err(EngineError::NoSuchDevice { path: path.into() })
                }
                Ok(m) if m.is_dir() => (m, Kind::NewFile, parent),
                _ => return Err(EngineError::MissingPath { path: path.into() }),
            }
        }
        Err(e) => return Err(EngineError::from_open(path, "read", e)),
    };
    let mut info = TargetInfo {
        path: path.display().to_string(),
        kind: kind.name().into(),
        ..TargetInfo::default()
    };
    let (dev, free, len) = if kind == Kind::Device {
        let rdev = meta.rdev();
        let len = device_len(path)?;
        (Some((libc::major(rdev), libc::minor(rdev))), None, len)
    } else {
        let (magic, free) = statfs(&fs_path).map_err(|e| EngineError::Io {
            path: fs_path.clone(),
            op: "statfs",
            source: e,
        })?;
        info.fs_type = Some(fs_name(magic));
        let d = meta.dev();
        let len = if kind == Kind::File { meta.len() } else { 0 };
        (Some((libc::major(d), libc::minor(d))), Some(free), len)
    };
    let mut lbs = None;
    let mut read_only = kind != Kind::Device && fs_read_only(&fs_path);
    if let Some((maj, min)) = dev {
        if let Some(name) = dev_name(maj, min) {
            let (model, sched, l) = device_facts(&name);
            if kind == Kind::Device {
                read_only = device_read_only(&name);
            }
            info.device = Some(name);
            info.model = model;
            info.scheduler = sched;
            lbs = l;
        }
    }
    Ok(Classified {
        info,
        kind,
        dev,
        logical_block_size: lbs,
        free,
        len,
        read_only,
    })
}

/// A block device's size in bytes (seeking to its end, which needs no ioctl).
fn device_len(path: &Path) -> Result<u64, EngineError> {
    use std::io::{Seek, SeekFrom};
    let mut f = File::open(path).map_err(|e| EngineError::from_open(path, "read", e))?;
    f.seek(SeekFrom::End(0)).map_err(|e| EngineError::Io {
        path: path.into(),
        op: "seek to the end",
        source: e,
    })
}

/// Refuses O_DIRECT where it cannot work: tmpfs/ramfs by type, anything else by trying it.
/// `probe_dir` is where a probe file may be created when the target does not exist yet.
pub fn check_direct(c: &Classified, path: &Path) -> Result<(), EngineError> {
    let fs = c.info.fs_type.clone().unwrap_or_default();
    if NO_REAL_DIRECT.contains(&fs.as_str()) {
        return Err(EngineError::DirectUnsupported {
            path: path.into(),
            fs,
        });
    }
    let probe = |p: &Path, create: bool| -> Result<(), EngineError> {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).custom_flags(libc::O_DIRECT);
        if create {
            o.write(true).create_new(true);
        }
        match o.open(p) {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                Err(EngineError::DirectUnsupported {
                    path: path.into(),
                    fs: if fs.is_empty() {
                        "a filesystem".into()
                    } else {
                        fs.clone()
                    },
                })
            }
            Err(e) => Err(EngineError::from_open(p, "read", e)),
        }
    };
    match c.kind {
        Kind::File | Kind::Device => probe(path, false),
        Kind::Directory | Kind::NewFile => {
            let dir = if c.kind == Kind::Directory {
                path.to_path_buf()
            } else {
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .to_path_buf()
            };
            // One name per probe: jobs of one job file probe the same directory at once.
            static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = dir.join(format!(".disktier-direct-probe.{}.{n}", std::process::id()));
            let r = probe(&p, true);
            let _ = std::fs::remove_file(&p);
            r
        }
    }
}

/// Why writing to a block device would destroy something, if it would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InUse {
    Signature(String),
    Partitions(&'static str),
    Mounted(String),
    Holders(String),
}

/// Recognises what the first bytes of a device hold: a filesystem or other signature, or a
/// partition table. Offsets are the formats' own (xfs_format.h, ext4 superblock at 1024 with the
/// magic at +56, mkswap's tail of the first page, the LUKS header, the UEFI spec for GPT).
pub fn signature(head: &[u8]) -> Option<InUse> {
    let at = |off: usize, m: &[u8]| head.len() >= off + m.len() && &head[off..off + m.len()] == m;
    if at(0, b"XFSB") {
        return Some(InUse::Signature("an xfs filesystem".into()));
    }
    if at(1080, &[0x53, 0xEF]) {
        return Some(InUse::Signature("an ext2/3/4 filesystem".into()));
    }
    if at(0, b"LUKS\xba\xbe") || at(0, b"SKUL\xba\xbe") {
        return Some(InUse::Signature("a LUKS encrypted volume".into()));
    }
    for page in [4096usize, 8192, 16384, 65536] {
        if at(page - 10, b"SWAPSPACE2") || at(page - 10, b"SWAP-SPACE") {
            return Some(InUse::Signature("a swap area".into()));
        }
    }
    if at(65536 + 64, b"_BHRfS_M") {
        return Some(InUse::Signature("a btrfs filesystem".into()));
    }
    if at(512 + 24, b"LVM2 001") || at(512, b"LABELONE") {
        return Some(InUse::Signature("an LVM physical volume".into()));
    }
    if at(4096 + 24, &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca]) {
        return Some(InUse::Signature("a bcache backing device".into()));
    }
    if at(512, b"EFI PART") || at(4096, b"EFI PART") {
        return Some(InUse::Partitions("a GPT"));
    }
    if at(510, &[0x55, 0xAA]) {
        if at(54, b"FAT") || at(82, b"FAT32") {
            return Some(InUse::Signature("a FAT filesystem".into()));
        }
        if at(3, b"NTFS    ") {
            return Some(InUse::Signature("an NTFS filesystem".into()));
        }
        // Four 16-byte entries at 446; an entry is used when its type byte (+4) is non-zero.
        let used = (0..4).any(|i| head.get(446 + i * 16 + 4).is_some_and(|t| *t != 0));
        if used {
            return Some(InUse::Partitions("an MBR"));
        }
    }
    None
}

/// Asks `blkid -p` (low-level probing, no cache) for the signatures this module does not know
/// itself (ZFS, Ceph, md and dm metadata, ...). None when blkid finds nothing (exit 2 with a
/// silent stderr, blkid(8)) or is not installed (the magic table above is then the whole check).
/// Fails closed: blkid that cannot run, times out, exits with any other status, or exits 2 with
/// an error on stderr (it could not open the device) is reported as content it could not
/// identify, so a write job refuses the device unless the user passes --destructive.
pub fn blkid_signature(runner: &dyn disktier_cmd::CommandRunner, path: &Path) -> Option<InUse> {
    if !runner.has_program("blkid") {
        return None;
    }
    let cmd = disktier_cmd::Cmd::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(path.display().to_string());
    let unprobed = |why: String| {
        Some(InUse::Signature(format!(
            "content blkid could not identify (`{cmd}`: {why})"
        )))
    };
    let out = match runner.output(&cmd) {
        Ok(o) => o,
        Err(e) => return unprobed(e.to_string()),
    };
    match out.status {
        0 => {}
        2 if out.stderr.trim().is_empty() => return None,
        status => {
            let err = out.stderr.trim();
            let err: String = err.chars().take(200).collect();
            return unprobed(if err.is_empty() {
                format!("exit status {status}")
            } else {
                format!("exit status {status}: {err}")
            });
        }
    }
    let field = |k: &str| {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
            .filter(|v| !v.is_empty())
    };
    if let Some(t) = field("TYPE=") {
        return Some(InUse::Signature(format!("a {t} signature (blkid)")));
    }
    if let Some(t) = field("PTTYPE=") {
        return Some(InUse::Partitions(match t.as_str() {
            "gpt" => "a GPT",
            "dos" => "an MBR",
            _ => "a",
        }));
    }
    // Exit 0 says blkid found something; without TYPE or PTTYPE it did not say what.
    Some(InUse::Signature(
        "a signature blkid found but did not name".into(),
    ))
}

/// Mount points of device `maj:min` from a mountinfo text (field 3 is `major:minor`, field 5 the
/// mount point; proc(5)).
pub fn mounts_of(mountinfo: &str, maj: u32, min: u32) -> Vec<String> {
    let want = format!("{maj}:{min}");
    mountinfo
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 4 && f[2] == want).then(|| f[4].replace("\\040", " "))
        })
        .collect()
}

fn partitions_of(name: &str) -> Vec<String> {
    let dir = PathBuf::from(format!("/sys/class/block/{name}"));
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    rd.filter_map(|e| e.ok())
        .filter(|e| e.path().join("partition").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn dev_numbers(name: &str) -> Option<(u32, u32)> {
    let s = read_trim(format!("/sys/class/block/{name}/dev"))?;
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Everything that makes a write to block device `path` destructive.
pub fn device_in_use(path: &Path, c: &Classified) -> Result<Option<InUse>, EngineError> {
    let mut head = vec![0u8; 65536 + 4096];
    let mut f = File::open(path).map_err(|e| EngineError::from_open(path, "read", e))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => {
                return Err(EngineError::Io {
                    path: path.into(),
                    op: "read the first 68 KiB",
                    source: e,
                })
            }
        }
    }
    head.truncate(n);
    if let Some(s) = signature(&head).or_else(|| blkid_signature(&disktier_cmd::RealRunner, path)) {
        return Ok(Some(s));
    }
    let Some(name) = c.info.device.clone() else {
        return Ok(None);
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut devs = vec![name.clone()];
    devs.extend(partitions_of(&name));
    for d in &devs {
        if let Some((maj, min)) = dev_numbers(d) {
            if let Some(m) = mounts_of(&mountinfo, maj, min).into_iter().next() {
                return Ok(Some(InUse::Mounted(m)));
            }
        }
        let holders: Vec<String> = std::fs::read_dir(format!("/sys/class/block/{d}/holders"))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if !holders.is_empty() {
            return Ok(Some(InUse::Holders(holders.join(", "))));
        }
    }
    Ok(None)
}

/// Turns [`InUse`] into the error that names the device and the fix.
pub fn refuse(path: &Path, why: InUse) -> EngineError {
    let path = path.to_path_buf();
    match why {
        InUse::Signature(what) => EngineError::DeviceHasSignature { path, what },
        InUse::Partitions(table) => EngineError::DeviceHasPartitions { path, table },
        InUse::Mounted(mountpoint) => EngineError::DeviceMounted { path, mountpoint },
        InUse::Holders(holders) => EngineError::DeviceHasHolders { path, holders },
    }
}

#[cfg(test)]
mod tests;
