//! Setup persisting into a read-only /etc, on a real loop device: refused before mkfs, with the
//! device's bytes unchanged. Skipped, with the reason printed, where loop devices or mkfs.xfs
//! are missing.

use disktier_cmd::RealRunner;
use disktier_disks::setup::{setup, Persist};
use disktier_testkit::{blkid, Unmount};
use std::path::Path;
use std::process::Command;

mod support;
use support::{request_on, xfs_loop};

/// Bind-mounts `dir` on itself and makes that mount read-only.
fn read_only(dir: &Path) {
    for args in [&["--bind"][..], &["-o", "remount,bind,ro"][..]] {
        let ok = Command::new("mount")
            .args(args)
            .arg(dir)
            .arg(dir)
            .status()
            .unwrap();
        assert!(ok.success(), "mount {args:?} {}", dir.display());
    }
}

#[test]
fn a_read_only_etc_is_refused_before_mkfs() {
    // Found by QA: `--persist fstab` with /etc read-only made the filesystem and mounted it,
    // then failed writing fstab (a mount the next boot forgets); systemd's units the same.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let root = tmp.path().join("root");
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(etc.join("fstab"), "UUID=x /boot xfs defaults 0 0\n").unwrap();
    let mnt = tmp.path().join("m");
    let _guard = Unmount(vec![mnt.clone(), etc.clone()]);
    read_only(&etc);
    for persist in [Persist::Fstab, Persist::Systemd] {
        let mut c = request_on(&dev, &mnt);
        c.persist = persist;
        c.persist_root = root.clone();
        let before = dev.checksum();
        let e = setup(&c.check().unwrap(), Path::new("/"), &RealRunner)
            .expect_err("setup must refuse")
            .to_string();
        assert!(
            e.contains(&format!(
                "cannot be written: {} is on a read-only filesystem",
                etc.display()
            )),
            "{persist:?}: {e}"
        );
        assert_eq!(dev.checksum(), before, "{persist:?}: the device changed");
        assert_eq!(blkid(&dev.path, "TYPE"), "");
        assert!(!mnt.exists(), "{persist:?}");
    }
}
