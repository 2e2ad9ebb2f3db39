//! `--options` the filesystem does not take, on a real loop device: refused before mkfs, by
//! asking the running kernel (`fsopen`/`fsconfig`), with the device's bytes unchanged. Skipped,
//! with the reason printed, where loop devices or mkfs.xfs are missing.

use disktier_cmd::RealRunner;
use disktier_disks::setup::config::FsType;
use disktier_disks::setup::setup;
use disktier_testkit::{blkid, Unmount};
use std::path::Path;

mod support;
use support::{request_on, xfs_loop};

#[test]
fn an_option_the_filesystem_does_not_take_is_refused_before_mkfs() {
    // Found by QA: `--options bogusopt` (or xfs's removed `nobarrier`, ext4's `data=journalx`)
    // made the filesystem, then `mount` failed with "wrong fs type, bad option".
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let mnt = tmp.path().join("m");
    let _guard = Unmount(vec![mnt.clone()]);
    for (fs, option, said) in [
        (FsType::Xfs, "bogusopt", "Unknown parameter 'bogusopt'"),
        (FsType::Xfs, "nobarrier", "Unknown parameter 'nobarrier'"),
        (FsType::Ext4, "data=journalx", "Bad value for 'data'"),
    ] {
        let mut c = request_on(&dev, &mnt);
        c.fs = fs;
        c.options = vec![option.into()];
        let before = dev.checksum();
        let e = setup(&c.check().unwrap(), Path::new("/"), &RealRunner)
            .expect_err("setup must refuse")
            .to_string();
        assert!(
            e.starts_with(&format!("--options {option} is refused by this kernel's"))
                && e.contains(said),
            "{e}"
        );
        assert_eq!(dev.checksum(), before, "{option}: the device changed");
    }
    assert_eq!(blkid(&dev.path, "TYPE"), "");
    assert!(!mnt.exists());
    // What the filesystem takes still sets up.
    let mut c = request_on(&dev, &mnt);
    c.options = vec!["discard,logbsize=64k,nodev".into()];
    let rep =
        setup(&c.check().unwrap(), Path::new("/"), &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.changed);
}
