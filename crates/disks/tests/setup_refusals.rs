//! The refusal matrix on real loop devices: every state that makes a disk ineligible is refused
//! with its reason, and the device's bytes are the same afterwards. Holders and system disks
//! cannot be made here (no md/dm): they come from the fixture trees.

use disktier_cmd::{RealRunner, RecordingRunner};
use disktier_disks::setup::kernel::quota_missing;
use disktier_disks::setup::{setup, FsType, SetupRequest};
use disktier_testkit::{have, require, require_loop, LoopDev};
use std::path::Path;
use std::process::Command;

mod nodes;
use nodes::copy_node;

/// Refusals happen before any write, so a small device does (and checksums fast).
const SMALL: u64 = 16 << 20;

fn refuse(dev: &LoopDev, options: &[&str]) -> String {
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let before = dev.checksum();
    let mut c = SetupRequest::new(tmp.path().join("m"));
    c.devices = Some(vec![dev.path.display().to_string()]);
    c.options = options.iter().map(|s| s.to_string()).collect();
    let err = setup(&c.check().unwrap(), Path::new("/"), &RealRunner)
        .expect_err("setup must refuse")
        .to_string();
    assert_eq!(dev.checksum(), before, "the device changed: {err}");
    assert!(!tmp.path().join("m").exists(), "nothing created: {err}");
    err
}

fn sh(args: &[&str]) {
    let st = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        st.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

/// `mkfs.ext4 -q ARGS... DEV`.
fn mkfs_ext4(dev: &LoopDev, args: &[&str]) {
    sh(&[&["mkfs.ext4", "-q"], args, &[dev.path.to_str().unwrap()]].concat());
}

/// A fresh [`SMALL`] loop device, where loop devices, mkfs.ext4 and blockdev are here.
fn small_dev() -> Option<LoopDev> {
    let ok = require_loop()
        && require(
            have("mkfs.ext4") && have("blockdev"),
            "mkfs.ext4 and blockdev",
        );
    ok.then(|| LoopDev::new(SMALL))
}

#[test]
fn mounted_disk_is_refused() {
    let Some(dev) = small_dev() else {
        return;
    };
    mkfs_ext4(
        &dev,
        &["-E", "lazy_itable_init=0,lazy_journal_init=0", "-L", "x"],
    );
    let m = tempfile::tempdir_in("/var/tmp").unwrap();
    // Read-only, so the mounted filesystem writes nothing while we checksum it.
    sh(&[
        "mount",
        "-o",
        "ro",
        dev.path.to_str().unwrap(),
        m.path().to_str().unwrap(),
    ]);
    let err = refuse(&dev, &[]);
    let _ = Command::new("umount").arg(m.path()).status();
    assert!(
        err.contains(&format!("mounted at {}", m.path().display())),
        "{err}"
    );
}

#[test]
fn a_foreign_filesystem_is_refused() {
    let Some(dev) = small_dev() else {
        return;
    };
    mkfs_ext4(&dev, &["-L", "scratch"]);
    let err = refuse(&dev, &[]);
    assert!(
        err.contains("has an ext4 signature labelled \"scratch\""),
        "{err}"
    );
}

#[test]
fn a_partitioned_disk_is_refused() {
    let Some(dev) = small_dev() else {
        return;
    };
    // An MBR: one Linux partition from sector 2048.
    dev.write_mbr(100_000);
    let err = refuse(&dev, &[]);
    assert!(err.contains("partitioned (dos partition table)"), "{err}");
}

#[test]
fn a_read_only_disk_is_refused() {
    let Some(dev) = small_dev() else {
        return;
    };
    sh(&["blockdev", "--setro", dev.path.to_str().unwrap()]);
    let err = refuse(&dev, &[]);
    sh(&["blockdev", "--setrw", dev.path.to_str().unwrap()]);
    assert!(err.contains("read-only"), "{err}");
}

#[test]
fn a_disk_held_open_exclusively_is_refused_as_busy() {
    let Some(dev) = small_dev() else {
        return;
    };
    use std::os::unix::fs::OpenOptionsExt;
    let _held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&dev.path)
        .unwrap();
    let err = refuse(&dev, &[]);
    assert!(err.contains("busy: cannot be opened exclusively"), "{err}");
}

/// QA: a disk that a process holds open without O_EXCL (a `dd`, a VM's raw disk), or that
/// backs a loop device, opens exclusively and lists no holder in sysfs: setup took it as blank
/// and formatted it under its user.
#[test]
fn a_disk_open_in_a_process_is_refused_as_in_use() {
    let Some(dev) = small_dev() else {
        return;
    };
    let mut user = Command::new("sleep")
        .arg("60")
        .stdin(std::fs::File::open(&dev.path).unwrap())
        .spawn()
        .unwrap();
    let err = refuse(&dev, &[]);
    let _ = user.kill();
    let _ = user.wait();
    assert!(
        err.contains(&format!(
            "in use: process {} (sleep) has it open; stop what uses it (the process named; losetup -d for a loop device) and re-run setup",
            user.id()
        )),
        "{err}"
    );
}

#[test]
fn a_process_name_reaches_the_refusal_without_its_control_characters() {
    let Some(dev) = small_dev() else {
        return;
    };
    // A process names itself (here: the name it was run by, an escape sequence in it).
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("sl\x1b[2Jp");
    std::os::unix::fs::symlink("/bin/sleep", &named).unwrap();
    let mut user = Command::new(&named)
        .arg("60")
        .stdin(std::fs::File::open(&dev.path).unwrap())
        .spawn()
        .unwrap();
    let err = refuse(&dev, &[]);
    let _ = user.kill();
    let _ = user.wait();
    assert!(
        err.contains(&format!("process {} (sl?[2Jp) has it open", user.id())),
        "{err:?}"
    );
}

#[test]
fn a_disk_backing_a_loop_device_is_refused_as_in_use() {
    let Some(dev) = small_dev() else {
        return;
    };
    let out = Command::new("losetup")
        .args(["--find", "--show", dev.path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let upper = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let err = refuse(&dev, &[]);
    sh(&["losetup", "-d", &upper]);
    assert!(
        err.contains(&format!("in use: loop device {upper} is backed by it")),
        "{err}"
    );
}

#[test]
fn prjquota_is_refused_with_the_quota_message_where_the_kernel_lacks_it() {
    let Some(dev) = small_dev() else {
        return;
    };
    match quota_missing(Path::new("/"), FsType::Xfs) {
        Some(why) => {
            let err = refuse(&dev, &["prjquota"]);
            drop(dev);
            // xfs needs 300 MiB.
            let dev = LoopDev::new(320 << 20);
            assert_eq!(
                err,
                format!("this kernel has no quota support ({why}): prjquota cannot be mounted; drop it or use a kernel with CONFIG_QUOTA/XFS_QUOTA")
            );
            // Cross-check with the kernel itself: a prjquota mount of real xfs does fail here.
            let m = dev.mkfs_mount("xfs");
            let dir = m.dir.clone();
            drop(m);
            let st = Command::new("mount")
                .args([
                    "-o",
                    "prjquota",
                    dev.path.to_str().unwrap(),
                    dir.to_str().unwrap(),
                ])
                .output()
                .unwrap();
            if st.status.success() {
                let _ = Command::new("umount").arg(&dir).status();
                panic!("prjquota mounted, yet disktier said the kernel cannot");
            }
        }
        None => eprintln!("this kernel has XFS quota support: nothing to refuse"),
    }
}

#[test]
fn holders_and_system_disks_from_fixtures_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_node("aws-i3-8xlarge", tmp.path().join("node"));
    std::fs::write(root.join("sys/block/nvme0n1/holders/dm-3"), "").unwrap();
    let r = RecordingRunner::new();
    for (dev, want) in [
        ("/dev/nvme0n1", "has holders (dm-3 built on it)"),
        ("/dev/xvda", "system disk (holds /, /boot/efi)"),
    ] {
        let mut c = SetupRequest::new("/data");
        c.devices = Some(vec![dev.into()]);
        let err = setup(&c.check().unwrap(), &root, &r)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("refusing {dev}: ")) && err.contains(want),
            "{err}"
        );
    }
    assert_eq!(r.transcript(), "");
}
