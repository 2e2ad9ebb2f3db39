//! Regressions of the QA pass on `setup` and `setup --undo`, on real loop devices with real
//! mkfs.xfs, mount and blkid: each refusal leaves the device's bytes and the directories as they
//! were, and each fix converges (a re-run changes nothing). Skipped, with the reason printed,
//! where loop devices or mkfs.xfs are missing.

use disktier_cmd::RealRunner;
use disktier_disks::setup::undo::{undo, UndoRequest};
use disktier_disks::setup::{setup, LayoutChoice, Persist, Report, SetupRequest};
use disktier_disks::valid::MountPath;
use disktier_testkit::{blkid, is_mount_point, require_loop_xfs, LoopDev, Unmount};
use std::path::Path;

/// A blank loop device big enough for xfs (300 MiB at least) and a scratch directory in
/// /var/tmp; `None` (the test is skipped) where loop devices or mkfs.xfs are missing.
fn xfs_loop() -> Option<(LoopDev, tempfile::TempDir)> {
    require_loop_xfs().then(|| {
        (
            LoopDev::new(320 << 20),
            tempfile::tempdir_in("/var/tmp").unwrap(),
        )
    })
}

/// A setup request for `mount` that takes exactly `dev`.
fn request_on(dev: &LoopDev, mount: &Path) -> SetupRequest {
    let mut c = SetupRequest::new(mount);
    c.devices = Some(vec![dev.path.display().to_string()]);
    c
}

fn mp(p: &Path) -> MountPath {
    MountPath::parse_path("--mount", p).unwrap()
}

fn run(c: SetupRequest) -> Report {
    setup(&c.check().unwrap(), Path::new("/"), &RealRunner)
        .unwrap_or_else(|e| panic!("setup failed: {e:#}"))
}

/// Setup refuses `c` on `dev`: the error, with the device's bytes unchanged.
fn refused(dev: &LoopDev, c: SetupRequest) -> String {
    let before = dev.checksum();
    let e = setup(&c.check().unwrap(), Path::new("/"), &RealRunner)
        .expect_err("setup must refuse")
        .to_string();
    assert_eq!(dev.checksum(), before, "the device changed: {e}");
    e
}

/// The per-mount options of the mount at `p` (mountinfo's sixth field).
fn live_options(p: &Path) -> String {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    mi.lines()
        .rev()
        .find(|l| l.split(' ').nth(4) == p.to_str())
        .and_then(|l| l.split(' ').nth(5))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_rerun_with_more_flags_remounts_and_then_changes_nothing() {
    // Found by QA: `--options nodev,nosuid` on an existing mount said "nothing to change".
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let mnt = tmp.path().join("m");
    let _guard = Unmount(vec![mnt.clone()]);
    let mut c = request_on(&dev, &mnt);
    c.persist = Persist::Fstab;
    c.persist_root = tmp.path().join("root");
    run(c.clone());
    assert!(!live_options(&mnt).contains("nodev"));
    c.options = vec!["nodev,nosuid".into()];
    let rep = run(c.clone());
    assert!(
        rep.steps.iter().any(|s| s.status == "done"
            && s.commands
                == [format!(
                    "mount -o remount,rw,nosuid,nodev,exec,noatime,diratime,async,nolazytime {}",
                    mnt.display()
                )]),
        "{:#?}",
        rep.steps
    );
    let live = live_options(&mnt);
    assert!(live.contains("nodev") && live.contains("nosuid"), "{live}");
    // Live and persisted agree now.
    let fstab = std::fs::read_to_string(tmp.path().join("root/etc/fstab")).unwrap();
    assert!(
        fstab.contains("defaults,noatime,nodev,nosuid,nofail"),
        "{fstab}"
    );
    let rep = run(c);
    assert!(!rep.changed && rep.steps.is_empty(), "{:#?}", rep.steps);
}

#[test]
fn atime_and_bind_flags_converge_in_one_remount() {
    // `mount -o remount,relatime` alone leaves a noatime mount as it was (mount(8) merges the
    // current options): each request must converge in one run, the bind's flags with it.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let mnt = tmp.path().join("m");
    let bind = tmp.path().join("b");
    std::fs::create_dir_all(&bind).unwrap();
    let _guard = Unmount(vec![mnt.clone(), bind.clone()]);
    let mut c = request_on(&dev, &mnt);
    c.bind = vec![bind.clone()];
    run(c.clone());
    for (options, want) in [
        ("relatime,nodev", "rw,nodev,relatime"),
        ("strictatime", "rw"),
        ("", "rw,noatime"),
    ] {
        c.options = vec![options.into()];
        let rep = run(c.clone());
        assert!(rep.changed, "{options}: {:#?}", rep.steps);
        assert_eq!(live_options(&mnt), want, "{options}");
        assert_eq!(live_options(&bind), want, "{options}: the bind");
        let rep = run(c.clone());
        assert!(rep.steps.is_empty(), "{options}: {:#?}", rep.steps);
    }
}

#[test]
fn a_mount_point_that_holds_something_is_refused_unless_allowed() {
    // Found by QA: setup mounted over a non-empty --mount directory, hiding its content.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let mnt = tmp.path().join("m");
    let _guard = Unmount(vec![mnt.clone()]);
    std::fs::create_dir_all(mnt.join("sub")).unwrap();
    for f in ["a", "b", "c"] {
        std::fs::write(mnt.join(f), f).unwrap();
    }
    let e = refused(&dev, request_on(&dev, &mnt));
    assert_eq!(
        e,
        format!("{} is not empty: it holds 4 entries (a, b, c, ...), which mounting over it would hide; choose an empty or new directory, move the content away, or pass --allow-nonempty to mount over it anyway", mnt.display())
    );
    assert!(!is_mount_point(&mnt));
    let mut c = request_on(&dev, &mnt);
    c.allow_nonempty = true;
    let rep = run(c.clone());
    assert!(is_mount_point(&mnt) && rep.changed);
    assert!(
        rep.notes
            .iter()
            .any(|n| n.starts_with("warning: ") && n.contains("hidden under the mount")),
        "{:?}",
        rep.notes
    );
    // The boot-time unit repeats the choice.
    assert!(c
        .check()
        .unwrap()
        .to_args()
        .contains(&"--allow-nonempty".to_string()));
}

#[test]
fn files_where_directories_belong_are_refused_before_mkfs() {
    // Found by QA: `--bind F` and `--mount F` with F a regular file failed after mkfs and mount.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let file = tmp.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let mnt = tmp.path().join("m");
    let _guard = Unmount(vec![mnt.clone()]);
    let e = refused(&dev, request_on(&dev, &file));
    assert!(
        e.starts_with(&format!(
            "--mount {} is a file, not a directory",
            file.display()
        )),
        "{e}"
    );
    let mut c = request_on(&dev, &mnt);
    c.bind = vec![file.clone()];
    let e = refused(&dev, c);
    assert!(
        e.starts_with(&format!(
            "--bind {} is a file, not a directory",
            file.display()
        )),
        "{e}"
    );
    assert_eq!(blkid(&dev.path, "TYPE"), "");
    assert!(!mnt.exists());
}

#[test]
fn a_filesystem_made_for_another_mount_point_is_refused_not_remounted() {
    // Found by QA: it was remounted at the new place, where --undo then refused it.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let first = tmp.path().join("o");
    let other = tmp.path().join("other");
    let _guard = Unmount(vec![first.clone(), other.clone()]);
    run(request_on(&dev, &first));
    drop(_guard);
    assert!(!is_mount_point(&first));
    let _guard = Unmount(vec![first.clone(), other.clone()]);
    let e = refused(&dev, request_on(&dev, &other));
    assert!(
        e.contains("holds a filesystem disktier setup made for another mount point")
            && e.contains(&format!("wipefs -a {}", dev.path.display())),
        "{e}"
    );
    assert!(!is_mount_point(&other));
    // Where it was made, it is remounted.
    run(request_on(&dev, &first));
    assert!(is_mount_point(&first));
}

#[test]
fn a_separate_layout_mount_is_undone_with_the_label_setup_was_given() {
    // Found by QA: `--undo --mount DIR/0` after `--layout separate` was refused unless given
    // `--label disktier-0`; docs/disks.md says they are undone one at a time.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let dir = tmp.path().join("disks");
    let zero = dir.join("0");
    let _guard = Unmount(vec![zero.clone()]);
    let mut c = request_on(&dev, &dir);
    c.layout = LayoutChoice::Separate;
    run(c);
    assert!(is_mount_point(&zero));
    assert_eq!(blkid(&dev.path, "LABEL"), "disktier-0");
    let mut r = UndoRequest::new(mp(&zero));
    r.persist_root = tmp.path().join("root");
    let rep = undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.changed && !is_mount_point(&zero), "{rep:#?}");
    // The old way still works too.
    let mut c = request_on(&dev, &dir);
    c.layout = LayoutChoice::Separate;
    run(c);
    let mut r = UndoRequest::new(mp(&zero));
    r.persist_root = tmp.path().join("root");
    r.label = "disktier-0".into();
    undo(&r, &RealRunner).unwrap();
    assert!(!is_mount_point(&zero));
}
