//! Test support shared by disktier's crates: real loop devices (detached on drop), real
//! filesystems on them (unmounted on drop), and cgroup v1 blkio throttles that make a loop device
//! behave like a slow cloud volume.
//!
//! Tests that need root or a kernel feature call [`require`]: outside CI it prints the reason and
//! the test returns early; in CI (`CI` set, as `.ci/run` runs) a missing feature fails the test,
//! because CI runs as root on a machine that has them all.

pub mod cli;
pub mod cli_cases;
pub mod fake_api;
pub mod fuzz;
pub mod kube;
pub mod pg;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether the environment promises root and the kernel features (CI does).
pub fn strict() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Returns true when `ok`; otherwise prints why the test is skipped (or panics in CI).
pub fn require(ok: bool, what: &str) -> bool {
    if ok {
        return true;
    }
    if strict() {
        panic!("CI must have {what}, but this machine lacks it");
    }
    eprintln!("skipped: needs {what}");
    false
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program} >/dev/null 2>&1 || test -x /usr/sbin/{program} || test -x /sbin/{program}")])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Root and losetup: what every loop-device test needs.
pub fn require_loop() -> bool {
    require(
        is_root() && have("losetup"),
        "root and losetup (loop devices)",
    )
}

/// A fresh `fstype` filesystem on a new loop device of `size` bytes, mounted: the set-up of
/// every test that measures a real filesystem. `None` (the test returns) where loop devices
/// cannot be made. Bind it as `let Some((dev, m)) = loop_fs(..) else { return };`: the mount
/// is dropped (unmounted) before the device is detached.
pub fn loop_fs(size: u64, fstype: &str) -> Option<(LoopDev, Mount)> {
    if !require_loop() {
        return None;
    }
    let dev = LoopDev::new(size);
    let m = dev.mkfs_mount(fstype);
    Some((dev, m))
}

/// [`loop_fs`] whose writes, by processes run through [`BlkioThrottle::wrap`], are throttled to
/// `write_iops`: a slow cloud volume. `None` (the test returns) where blkio throttling or loop
/// devices are missing. Bind it as `let Some((dev, m, throttle)) = ..`: the throttle is dropped
/// first, then the mount, then the device.
pub fn throttled_fs(
    size: u64,
    fstype: &str,
    write_iops: u64,
) -> Option<(LoopDev, Mount, BlkioThrottle)> {
    if !BlkioThrottle::require() {
        return None;
    }
    let (dev, m) = loop_fs(size, fstype)?;
    let throttle = BlkioThrottle::new(&dev.maj_min(), write_iops, None);
    Some((dev, m, throttle))
}

/// A new blank loop device of `size` bytes, a scratch directory in /var/tmp, and the mount point
/// `name` in it, unmounted on drop: the set-up of the tests that mount what they set up. Call it
/// after the test's [`require`]s, and bind it as `let (dev, tmp, mnt, _guard) = ..`: the guard is
/// dropped (unmounts) first, the device (detached) last.
pub fn loop_with_mount_point(
    size: u64,
    name: &str,
) -> (LoopDev, tempfile::TempDir, PathBuf, Unmount) {
    let dev = LoopDev::new(size);
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let mnt = tmp.path().join(name);
    let guard = Unmount(vec![mnt.clone()]);
    (dev, tmp, mnt, guard)
}

/// A fresh loop device of `size` bytes with nothing on it; `None` (the test returns) where loop
/// devices cannot be made.
pub fn loop_dev(size: u64) -> Option<LoopDev> {
    require_loop().then(|| LoopDev::new(size))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A loop device over a sparse file in a temp dir; detached and removed on drop.
pub struct LoopDev {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    /// Writes an MBR by hand: one Linux partition (type 0x83) of `sectors` 512-byte sectors
    /// from sector 2048, and the 0x55AA signature (a partition table, for the tests of what
    /// is refused or listed for one).
    pub fn write_mbr(&self, sectors: u32) {
        use std::io::Write;
        let mut mbr = [0u8; 512];
        mbr[446 + 4] = 0x83;
        mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        mbr[446 + 12..446 + 16].copy_from_slice(&sectors.to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xaa;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .unwrap();
        f.write_all(&mbr).unwrap();
        f.sync_all().unwrap();
    }

    /// A loop device of `size` bytes with direct I/O on, backed by a file under `/var/tmp`
    /// (a real disk; use [`LoopDev::in_dir`] with `/dev/shm` for a CPU-bound RAM-backed one).
    /// xfs needs at least 300 MiB.
    pub fn new(size: u64) -> LoopDev {
        Self::in_dir(Path::new("/var/tmp"), size)
    }

    pub fn in_dir(dir: &Path, size: u64) -> LoopDev {
        let d = tempfile::Builder::new()
            .prefix("disktier-loop")
            .tempdir_in(dir)
            .expect("temp dir for loop backing file");
        let img = d.path().join("disk.img");
        let f = std::fs::File::create(&img).expect("backing file");
        f.set_len(size).expect("size backing file");
        drop(f);
        let dev = run(Command::new("losetup").args([
            "--find",
            "--show",
            "--direct-io=on",
            img.to_str().unwrap(),
        ]));
        LoopDev {
            path: PathBuf::from(dev),
            _dir: d,
        }
    }

    /// Kernel name, e.g. `loop3`.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// `major:minor`, as cgroup files want it.
    pub fn maj_min(&self) -> String {
        let s = std::fs::read_to_string(format!("/sys/block/{}/dev", self.name())).unwrap();
        s.trim().to_string()
    }

    /// Makes a filesystem (`xfs` or `ext4`) and mounts it on a fresh temp dir.
    pub fn mkfs_mount(&self, fstype: &str) -> Mount {
        match fstype {
            "xfs" => run(Command::new("mkfs.xfs").args(["-q", "-f", self.path.to_str().unwrap()])),
            "ext4" => {
                run(Command::new("mkfs.ext4").args(["-q", "-F", self.path.to_str().unwrap()]))
            }
            other => panic!("unsupported fs {other}"),
        };
        Mount::new(&self.path)
    }

    /// sha256-free checksum of the whole device (FNV-1a over all bytes), for "unchanged" checks.
    pub fn checksum(&self) -> u64 {
        use std::io::Read;
        let mut f = std::fs::File::open(&self.path).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut h: u64 = 0xcbf29ce484222325;
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            for b in &buf[..n] {
                h ^= *b as u64;
                h = h.wrapping_mul(0x100000001b3);
            }
        }
        h
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        // Unmount anything still on it (a test that failed midway), then detach.
        let _ = Command::new("sh")
            .args([
                "-c",
                &format!(
                    "for m in $(findmnt -rn -S {0} -o TARGET | sort -r); do umount -l \"$m\"; done",
                    self.path.display()
                ),
            ])
            .status();
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

/// A mounted filesystem on a temp dir; unmounted on drop.
pub struct Mount {
    pub dir: PathBuf,
    _dir: tempfile::TempDir,
}

impl Mount {
    pub fn new(dev: &Path) -> Mount {
        let d = tempfile::Builder::new()
            .prefix("disktier-mnt")
            .tempdir_in("/var/tmp")
            .unwrap();
        run(Command::new("mount").arg(dev).arg(d.path()));
        Mount {
            dir: d.path().to_path_buf(),
            _dir: d,
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

impl Mount {
    /// A tmpfs of `bytes` on a temp dir (root only): a tiny real filesystem that fills up, for
    /// the ENOSPC tests. Unmounted on drop.
    pub fn tmpfs(bytes: u64) -> Mount {
        let d = tempfile::Builder::new()
            .prefix("disktier-tmpfs")
            .tempdir_in("/var/tmp")
            .unwrap();
        run(Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={bytes},mode=0700"))
            .arg("disktier-test")
            .arg(d.path()));
        Mount {
            dir: d.path().to_path_buf(),
            _dir: d,
        }
    }
}

impl Mount {
    /// [`Mount::tmpfs`] where the tests run as root; `None` (the test is skipped, or fails
    /// under DISKTIER_STRICT_TESTS) elsewhere.
    pub fn tmpfs_if_root(bytes: u64) -> Option<Mount> {
        require(is_root(), "root (mounting a tmpfs)").then(|| Mount::tmpfs(bytes))
    }

    /// Remounts it with `mode` (`ro`, `rw`).
    pub fn remount(&self, mode: &str) {
        run(Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(&self.dir));
    }
}

/// A cgroup v1 blkio group with throttles; removed on drop. Put a process in it by running it
/// through [`BlkioThrottle::wrap`].
pub struct BlkioThrottle {
    pub dir: PathBuf,
}

impl BlkioThrottle {
    pub fn available() -> bool {
        Path::new("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device").exists()
    }

    /// [`require`] of [`BlkioThrottle::available`].
    pub fn require() -> bool {
        require(Self::available(), "cgroup v1 blkio throttling")
    }

    /// Limits write IOPS (and optionally read IOPS) of `maj_min` for processes in the group.
    pub fn new(maj_min: &str, write_iops: u64, read_iops: Option<u64>) -> BlkioThrottle {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = PathBuf::from(format!(
            "/sys/fs/cgroup/blkio/disktier-test-{}-{n}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create blkio cgroup");
        std::fs::write(
            dir.join("blkio.throttle.write_iops_device"),
            format!("{maj_min} {write_iops}"),
        )
        .expect("set write_iops throttle");
        if let Some(r) = read_iops {
            std::fs::write(
                dir.join("blkio.throttle.read_iops_device"),
                format!("{maj_min} {r}"),
            )
            .expect("set read_iops throttle");
        }
        BlkioThrottle { dir }
    }

    /// A command that enters the group, then execs `program args...`.
    pub fn wrap(&self, program: &Path, args: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
                self.dir.display()
            ))
            .arg(program)
            .args(args);
        c
    }
}

impl Drop for BlkioThrottle {
    fn drop(&mut self) {
        // Move stragglers back to the root group, then remove.
        if let Ok(p) = std::fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in p.lines() {
                let _ = std::fs::write("/sys/fs/cgroup/blkio/cgroup.procs", pid);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Root, losetup, mkfs.xfs and wipefs: what the setup and undo tests on loop devices need.
pub fn require_loop_xfs() -> bool {
    require_loop() && require(have("mkfs.xfs") && have("wipefs"), "mkfs.xfs and wipefs")
}

/// Mount points below `dir` in /proc/self/mountinfo (the mount table as far as a test owns it).
pub fn mount_points_under(dir: &Path) -> Vec<String> {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let d = dir.display().to_string();
    mi.lines()
        .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
        .filter(|m| m.starts_with(&d))
        .collect()
}

/// Whether `p` is a mount point.
pub fn is_mount_point(p: &Path) -> bool {
    let t = p.display().to_string();
    mount_points_under(p).contains(&t)
}

/// One tag (`TYPE`, `UUID`, `LABEL`) of `dev` as `blkid -p` probes it; empty when it has none.
pub fn blkid(dev: &Path, tag: &str) -> String {
    let o = Command::new("blkid")
        .args(["-p", "-s", tag, "-o", "value"])
        .arg(dev)
        .output()
        .expect("run blkid");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Unmounts what a test mounted (deepest first) on drop, even when the test fails half-way.
pub struct Unmount(pub Vec<PathBuf>);

impl Drop for Unmount {
    fn drop(&mut self) {
        let mut v = self.0.clone();
        v.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        for p in v {
            while is_mount_point(&p) {
                if !Command::new("umount")
                    .arg("-l")
                    .arg(&p)
                    .status()
                    .is_ok_and(|s| s.success())
                {
                    break;
                }
            }
        }
    }
}

/// [`serial_loop_fs`] for tests that throttle the device: `None` (the test returns) where blkio
/// throttling or loop devices are missing.
pub fn serial_throttleable_fs(
    lock: &'static std::sync::Mutex<()>,
    size: u64,
    fstype: &str,
) -> Option<(std::sync::MutexGuard<'static, ()>, LoopDev, Mount)> {
    if !BlkioThrottle::require() {
        return None;
    }
    serial_loop_fs(lock, size, fstype)
}

/// [`loop_fs`] for tests that must run one at a time (they change a device's scheduler or the
/// cgroup root): holds `lock` first. Bind it as `let Some((_serial, dev, m)) = ..`.
pub fn serial_loop_fs(
    lock: &'static std::sync::Mutex<()>,
    size: u64,
    fstype: &str,
) -> Option<(std::sync::MutexGuard<'static, ()>, LoopDev, Mount)> {
    if !require_loop() {
        return None;
    }
    let serial = lock.lock().unwrap_or_else(|e| e.into_inner());
    let (dev, m) = loop_fs(size, fstype)?;
    Some((serial, dev, m))
}
