//! The boot-time script that the openshift, systemd and cloud-init renders install, run for real
//! against loop devices: first boot makes the filesystem and keeps what the directory held, a
//! reboot changes nothing, a stop/start (wipefs) makes it again, a disk holding anything is left
//! byte-for-byte alone, and several disks without md support fail with the reason. The only
//! change to the rendered script is its by-id glob, pointed at links to the loop devices (loop
//! devices have no /dev/disk/by-id/ links, and tests must not make any in /dev).

use disktier_cmd::{Cmd, CommandRunner, Output, RealRunner};
use disktier_disks::render::{Fs, Intent, IntentInput, Renderer, Systemd};
use disktier_testkit::{have, require, require_loop, LoopDev};
use std::path::{Path, PathBuf};

const GLOB: &str = "/dev/disk/by-id/test-disk-*";
const MIB: u64 = 1 << 20;

/// A rendered script whose glob matches the `disk-*` links in `links`.
struct Script {
    path: PathBuf,
    links: PathBuf,
    label: String,
    mount: PathBuf,
    _dir: tempfile::TempDir,
}

impl Script {
    fn new(fs: Fs, options: &[&str], binds: &[&Path]) -> Script {
        let dir = tempfile::Builder::new()
            .prefix("disktier-render")
            .tempdir_in("/var/tmp")
            .unwrap();
        let mount = dir.path().join("data");
        std::fs::create_dir(&mount).unwrap();
        let links = dir.path().join("links");
        std::fs::create_dir(&links).unwrap();
        // Unique per process and fs, so parallel tests and other areas' filesystems never match.
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let label = format!("dt{:x}-{n}", std::process::id() & 0xfffff);
        let intent = Intent::new(IntentInput {
            mount: mount.display().to_string(),
            options: options.iter().map(|s| s.to_string()).collect(),
            fs: Some(fs),
            label: Some(label.clone()),
            binds: binds.iter().map(|b| b.display().to_string()).collect(),
            by_id: Some(GLOB.into()),
            ..Default::default()
        })
        .unwrap();
        let rendered = Systemd::new(intent).render().unwrap();
        let script = rendered
            .files
            .iter()
            .find(|f| f.name.ends_with(".sh") && f.name != "install.sh")
            .unwrap();
        let want = format!("BY_ID_GLOB='{GLOB}'");
        assert!(script.content.contains(&want), "the script sets {want}");
        let text = script
            .content
            .replace(&want, &format!("BY_ID_GLOB='{}/disk-*'", links.display()));
        let path = dir.path().join("prepare.sh");
        std::fs::write(&path, text).unwrap();
        Script {
            path,
            links,
            label,
            mount,
            _dir: dir,
        }
    }

    fn link(&self, name: &str, dev: &LoopDev) {
        std::os::unix::fs::symlink(&dev.path, self.links.join(format!("disk-{name}"))).unwrap();
    }

    fn run(&self, verb: &str) -> Output {
        RealRunner
            .output(&Cmd::new("bash").args([self.path.display().to_string(), verb.to_string()]))
            .unwrap()
    }
}

fn blkid(dev: &Path, tag: &str) -> String {
    RealRunner
        .output(&Cmd::new("blkid").args([
            "-c",
            "/dev/null",
            "-p",
            "-o",
            "value",
            "-s",
            tag,
            &dev.display().to_string(),
        ]))
        .unwrap()
        .stdout
        .trim()
        .to_string()
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        out.stderr,
        out.stdout
    );
}

fn mount(dev: &Path, dir: &Path) {
    ok(
        &RealRunner
            .output(&Cmd::new("mount").args([dev.display().to_string(), dir.display().to_string()]))
            .unwrap(),
        "mount",
    );
}

fn umount(dir: &Path) {
    ok(
        &RealRunner
            .output(&Cmd::new("umount").arg(dir.display().to_string()))
            .unwrap(),
        "umount",
    );
}

fn usable() -> bool {
    require_loop()
        && require(
            have("mkfs.xfs") && have("mkfs.ext4") && have("blkid") && have("wipefs"),
            "xfsprogs, e2fsprogs, blkid and wipefs",
        )
}

#[test]
fn first_boot_reboot_and_stop_start_converge_from_the_disk_state() {
    if !usable() {
        return;
    }
    let disk = LoopDev::new(320 * MIB);
    let s = Script::new(Fs::Xfs, &["prjquota"], &[]);
    s.link("a", &disk);
    // What the directory holds before the disk is mounted over it (pre-pulled images).
    std::fs::write(s.mount.join("pre-pulled"), "image layer").unwrap();

    // First boot: blank disk -> xfs labelled, content copied in.
    let out = s.run("mkfs");
    ok(&out, "first boot");
    assert_eq!(blkid(&disk.path, "TYPE"), "xfs");
    assert_eq!(blkid(&disk.path, "LABEL"), s.label);
    let uuid = blkid(&disk.path, "UUID");
    let check = tempfile::tempdir_in("/var/tmp").unwrap();
    mount(&disk.path, check.path());
    assert_eq!(
        std::fs::read_to_string(check.path().join("pre-pulled")).unwrap(),
        "image layer"
    );
    umount(check.path());

    // Reboot: the labelled filesystem is there -> nothing is formatted.
    let out = s.run("mkfs");
    ok(&out, "reboot");
    assert!(out.stderr.contains("nothing to do"), "{}", out.stderr);
    assert_eq!(
        blkid(&disk.path, "UUID"),
        uuid,
        "a reboot must not reformat"
    );

    // Stop/start: the disk comes back blank -> made again, from the state, not a marker.
    ok(
        &RealRunner
            .output(&Cmd::new("wipefs").args(["-a", &disk.path.display().to_string()]))
            .unwrap(),
        "wipefs",
    );
    assert_eq!(blkid(&disk.path, "TYPE"), "");
    let out = s.run("mkfs");
    ok(&out, "after stop/start");
    assert_eq!(blkid(&disk.path, "LABEL"), s.label);
    assert_ne!(
        blkid(&disk.path, "UUID"),
        uuid,
        "a new filesystem after stop/start"
    );
}

#[test]
fn a_disk_that_holds_anything_is_left_byte_for_byte_alone() {
    if !usable() {
        return;
    }
    let disk = LoopDev::new(64 * MIB);
    {
        let _m = disk.mkfs_mount("ext4");
    }
    let before = disk.checksum();
    let s = Script::new(Fs::Xfs, &[], &[]);
    s.link("a", &disk);
    let out = s.run("mkfs");
    assert!(!out.success(), "must fail: no blank disk");
    assert!(out.stderr.contains("has a signature"), "{}", out.stderr);
    assert!(out.stderr.contains("TYPE=ext4"), "{}", out.stderr);
    assert_eq!(disk.checksum(), before, "the disk was changed");

    // Mounted: refused as mounted, also unchanged.
    let wiped = LoopDev::new(64 * MIB);
    let m = wiped.mkfs_mount("ext4");
    let s2 = Script::new(Fs::Xfs, &[], &[]);
    s2.link("b", &wiped);
    let out = s2.run("mkfs");
    assert!(!out.success());
    assert!(out.stderr.contains("mounted"), "{}", out.stderr);
    drop(m);
}

#[test]
fn several_blank_disks_without_md_support_fail_with_the_reason_and_stay_blank() {
    if !usable() {
        return;
    }
    let md_works = Path::new("/proc/mdstat").exists() && have("mdadm");
    if md_works {
        eprintln!("skipped: this machine has md RAID; the RAID0 path is covered on nodes");
        return;
    }
    let (a, b) = (LoopDev::new(32 * MIB), LoopDev::new(32 * MIB));
    let (ca, cb) = (a.checksum(), b.checksum());
    let s = Script::new(Fs::Xfs, &[], &[]);
    s.link("a", &a);
    s.link("b", &b);
    let out = s.run("mkfs");
    assert!(!out.success());
    assert!(out.stderr.contains("2 blank disks but"), "{}", out.stderr);
    assert_eq!((a.checksum(), b.checksum()), (ca, cb));
}

#[test]
fn ext4_with_prjquota_gets_the_quota_and_project_features() {
    if !usable() {
        return;
    }
    let disk = LoopDev::new(64 * MIB);
    let s = Script::new(Fs::Ext4, &["prjquota"], &[]);
    s.link("a", &disk);
    ok(&s.run("mkfs"), "mkfs ext4");
    assert_eq!(blkid(&disk.path, "TYPE"), "ext4");
    assert_eq!(blkid(&disk.path, "LABEL"), s.label);
    let features = RealRunner
        .output(&Cmd::new("tune2fs").args(["-l", &disk.path.display().to_string()]))
        .unwrap()
        .stdout;
    let line = features
        .lines()
        .find(|l| l.starts_with("Filesystem features"))
        .unwrap_or("");
    assert!(line.contains("project") && line.contains("quota"), "{line}");
    // Such a filesystem mounts only where the kernel has quota support (not on these machines;
    // RHCOS has it), which is why disktier setup checks before using prjquota.
}

#[test]
fn binds_copy_what_the_target_held_once_and_relabel_skips_without_selinux() {
    if !usable() {
        return;
    }
    let disk = LoopDev::new(64 * MIB);
    let bind_dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let target = bind_dir.path().join("kubelet");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("state"), "kept").unwrap();
    let s = Script::new(Fs::Ext4, &[], &[&target]);
    s.link("a", &disk);
    ok(&s.run("mkfs"), "mkfs ext4");

    // Without the mount, `binds` refuses: it never writes onto the root disk.
    let out = s.run("binds");
    assert!(
        !out.success() && out.stderr.contains("is not mounted"),
        "{}",
        out.stderr
    );

    // The mount unit's job, done by hand: then `binds` copies the bind target in once.
    mount(&disk.path, &s.mount);
    ok(&s.run("binds"), "binds");
    let source = s.mount.join(
        target
            .display()
            .to_string()
            .trim_matches('/')
            .replace('/', "-"),
    );
    assert_eq!(
        std::fs::read_to_string(source.join("state")).unwrap(),
        "kept"
    );
    // A second run keeps what is on the disk (the directory exists: nothing is copied again).
    std::fs::write(source.join("state"), "changed on disk").unwrap();
    ok(&s.run("binds"), "binds again");
    assert_eq!(
        std::fs::read_to_string(source.join("state")).unwrap(),
        "changed on disk"
    );
    // relabel without SELinux tools is a skip, not a failure.
    if !have("restorecon") {
        let out = s.run("relabel");
        ok(&out, "relabel");
        assert!(out.stderr.contains("skipping"), "{}", out.stderr);
    }
    umount(&s.mount);
}
