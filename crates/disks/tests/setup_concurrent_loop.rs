//! QA (two at once): two `disktier setup` runs for the same mount point, started together on
//! two blank disks, both found the mount point free, both made an xfs, and each mounted its
//! own there: the first failed with "already mounted", and both disks were left holding a
//! filesystem with the same UUID (setup derives it from the label and the mount point), so
//! `mount UUID=...` and an fstab line by UUID pick either. Now a setup or an undo holds an
//! exclusive lock on `var/lib/disktier/setup.lock` while it runs, and a second one waits for it
//! and then plans from the state the first left. Here the lock is held by the test (the "first
//! setup"), which mounts another disk on the mount point meanwhile: the waiting setup must not
//! touch its disk until the lock is released, and then refuse the mount point.

use disktier_cmd::RealRunner;
use disktier_disks::setup::setup;
use disktier_testkit::{blkid, is_mount_point, LoopDev};
use std::path::Path;
use std::time::Duration;

mod support;
use support::{request_on, xfs_mount, XFS_SIZE};

#[test]
fn a_setup_waits_for_the_one_running_and_then_plans_from_what_it_left() {
    let Some((dev, tmp, mnt, _unmount)) = xfs_mount("data") else {
        return;
    };
    let root = tmp.path().join("root");
    let lock = root.join("var/lib/disktier/setup.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let held = std::fs::File::create(&lock).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();

    let mut req = request_on(&dev, &mnt);
    req.persist_root = root.clone();
    let cfg = req.check().unwrap();
    let second = std::thread::spawn(move || {
        setup(&cfg, Path::new("/"), &RealRunner).map_err(|e| e.to_string())
    });

    // While the "first setup" holds the lock, the second changes nothing.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!second.is_finished(), "setup did not wait for the lock");
    assert_eq!(
        blkid(&dev.path, "TYPE"),
        "",
        "setup made a filesystem while another ran"
    );
    assert!(!is_mount_point(&mnt));

    // The first one mounts its own disk there, then finishes.
    let other = LoopDev::new(XFS_SIZE);
    let st = std::process::Command::new("mkfs.xfs")
        .arg("-q")
        .arg(&other.path)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::create_dir_all(&mnt).unwrap();
    let st = std::process::Command::new("mount")
        .arg(&other.path)
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(st.success());
    drop(held);

    let err = second
        .join()
        .unwrap()
        .expect_err("the mount point is taken now: setup must refuse it");
    assert!(err.contains("already a mount point"), "{err}");
    assert_eq!(
        blkid(&dev.path, "TYPE"),
        "",
        "the refused disk was written to"
    );
}

/// A runner that runs every command for real and, right after the first `blkid -p` of `dev`
/// (setup's last look found it blank), makes an ext4 there as another process would, keeping
/// that mkfs's exit status.
struct IntruderAfterProbe {
    dev: String,
    intruder: std::sync::Mutex<Option<std::process::ExitStatus>>,
}

impl disktier_cmd::CommandRunner for IntruderAfterProbe {
    fn output(
        &self,
        cmd: &disktier_cmd::Cmd,
    ) -> Result<disktier_cmd::Output, disktier_cmd::CmdError> {
        let out = RealRunner.output(cmd);
        let mut intruder = self.intruder.lock().unwrap();
        if cmd.to_string().starts_with("blkid -p") && intruder.is_none() {
            let st = std::process::Command::new("mkfs.ext4")
                .args(["-q", &self.dev])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            *intruder = Some(st.status);
        }
        out
    }
    fn has_program(&self, p: &str) -> bool {
        RealRunner.has_program(p)
    }
}

/// QA (item 4 of session 27): between setup's last look at a disk (blank: no filesystem, no
/// partition table, not mounted) and its mkfs, another process could write a filesystem: the
/// `O_EXCL` open that checked no one held the disk was closed at once, so a mkfs.ext4 started
/// just after the `blkid -p` probe made its ext4, the check passed, and setup's mkfs.ext4
/// (which asks nothing without a terminal) replaced it. The disk now stays claimed from before
/// the probe until the step: the other mkfs is refused ("apparently in use by the system").
#[test]
fn another_mkfs_cannot_write_between_the_last_look_and_mkfs() {
    if !disktier_testkit::require(disktier_testkit::have("mkfs.ext4"), "mkfs.ext4")
        || !disktier_testkit::require_loop()
    {
        return;
    }
    let dev = LoopDev::new(64 << 20);
    let runner = IntruderAfterProbe {
        dev: dev.path.display().to_string(),
        intruder: std::sync::Mutex::new(None),
    };
    let claim = disktier_disks::setup::recheck::claim_blank_and_free(
        &dev.path.display().to_string(),
        &runner,
    )
    .expect("the disk was blank at the last look");
    let intruder = runner
        .intruder
        .lock()
        .unwrap()
        .expect("the probe ran blkid -p");
    assert!(
        !intruder.success(),
        "another mkfs wrote to the disk while setup held it for its own mkfs"
    );
    claim.release();
    assert_eq!(blkid(&dev.path, "TYPE"), "", "the disk is no longer blank");
}
