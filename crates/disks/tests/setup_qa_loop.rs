//! Regressions of the QA pass on `setup` and `setup --undo`, on real loop devices with real
//! mkfs.xfs, mount and blkid: each refusal leaves the device's bytes and the directories as they
//! were, and each fix converges (a re-run changes nothing). Skipped, with the reason printed,
//! where loop devices or mkfs.xfs are missing.

use disktier_cmd::RealRunner;
use disktier_disks::setup::undo::{undo, UndoRequest};
use disktier_disks::setup::{setup, LayoutChoice, Persist, Report, SetupRequest};
use disktier_testkit::{blkid, is_mount_point, LoopDev, Unmount};
use std::path::{Path, PathBuf};

mod support;
use support::{mp, request_on, xfs_loop, xfs_mount, XFS_SIZE};

fn run(c: SetupRequest) -> Report {
    setup(&c.check().unwrap(), Path::new("/"), &RealRunner)
        .unwrap_or_else(|e| panic!("setup failed: {e:#}"))
}

/// The error setup refuses `c` with.
fn refusal(c: SetupRequest) -> String {
    setup(&c.check().unwrap(), Path::new("/"), &RealRunner)
        .expect_err("setup must refuse")
        .to_string()
}

/// Setup refuses `c` on `dev`: the error, with the device's bytes unchanged.
fn refused(dev: &LoopDev, c: SetupRequest) -> String {
    let before = dev.checksum();
    let e = refusal(c);
    assert_eq!(dev.checksum(), before, "the device changed: {e}");
    e
}

/// A request for `mnt` on `dev` persisted in fstab under `root`.
fn fstab_request(dev: &LoopDev, mnt: &Path, root: PathBuf) -> SetupRequest {
    let mut c = request_on(dev, mnt);
    c.persist = Persist::Fstab;
    c.persist_root = root;
    c
}

/// A `--layout separate` request for `dir` on `dev`.
fn separate_on(dev: &LoopDev, dir: &Path) -> SetupRequest {
    let mut c = request_on(dev, dir);
    c.layout = LayoutChoice::Separate;
    c
}

/// An undo request for the mount at `m`, persisted under `root`.
fn undo_of(m: &Path, root: PathBuf) -> UndoRequest {
    let mut r = UndoRequest::new(mp(m));
    r.persist_root = root;
    // Units under a temp root are not the node's: its systemd is not reloaded.
    r.reload_systemd = false;
    r
}

/// `--layout separate` for `dir` on `dev0` and `dev1`, persisted in fstab under `root`.
fn separate_pair(dev0: &LoopDev, dev1: &LoopDev, dir: &Path, root: &Path) -> SetupRequest {
    let mut c = SetupRequest::new(dir);
    c.devices = Some(vec![
        dev0.path.display().to_string(),
        dev1.path.display().to_string(),
    ]);
    c.layout = LayoutChoice::Separate;
    c.persist = Persist::Fstab;
    c.persist_root = root.to_path_buf();
    c
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
    let Some((dev, tmp, mnt, _guard)) = xfs_mount("m") else {
        return;
    };
    let mut c = fstab_request(&dev, &mnt, tmp.path().join("root"));
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
fn an_owner_without_a_group_converges() {
    // Found by QA: `--owner nobody` ran `chown nobody` (the group stays), then compared the
    // mount point with nobody's primary group, so every re-run chowned again and said "done".
    let Some((dev, tmp, mnt, _guard)) = xfs_mount("m") else {
        return;
    };
    let Some(nobody) = uzers::get_user_by_name("nobody") else {
        eprintln!("skipped: no user nobody");
        return;
    };
    let mut c = fstab_request(&dev, &mnt, tmp.path().join("root"));
    c.owner = Some("nobody".into());
    run(c.clone());
    let meta = std::fs::metadata(&mnt).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), nobody.uid());
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
fn an_atime_option_is_honoured_at_the_first_mount_and_a_rerun_changes_nothing() {
    // Found by QA: `--options relatime` mounted with defaults,noatime,relatime, which the kernel
    // makes noatime; the second run then remounted relatime, and fstab kept both words.
    let Some((dev, tmp, mnt, _guard)) = xfs_mount("m") else {
        return;
    };
    // The kernel's reading, not the last word: norelatime mounts relatime, and noatime wins
    // over a relatime after it.
    for (options, live) in [
        ("relatime", "rw,relatime"),
        ("strictatime", "rw"),
        ("norelatime", "rw,relatime"),
        ("noatime,relatime", "rw,noatime"),
    ] {
        let mut c = fstab_request(&dev, &mnt, tmp.path().join("root"));
        c.options = vec![options.into()];
        let rep = run(c.clone());
        assert!(rep.changed, "{options}: {:#?}", rep.steps);
        assert_eq!(rep.options, format!("defaults,{options}"));
        assert_eq!(live_options(&mnt), live, "{options}");
        let fstab = std::fs::read_to_string(tmp.path().join("root/etc/fstab")).unwrap();
        assert!(
            fstab.contains(&format!(" xfs defaults,{options},nofail 0 0")),
            "{fstab}"
        );
        let rep = run(c);
        assert!(
            !rep.changed && rep.steps.is_empty(),
            "{options}: {:#?}",
            rep.steps
        );
        // Unmounted for the next option's first mount.
        assert!(std::process::Command::new("umount")
            .arg(&mnt)
            .status()
            .unwrap()
            .success());
    }
}

#[test]
fn a_mount_point_that_holds_something_is_refused_unless_allowed() {
    // Found by QA: setup mounted over a non-empty --mount directory, hiding its content.
    let Some((dev, _tmp, mnt, _guard)) = xfs_mount("m") else {
        return;
    };
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
fn a_mount_point_that_cannot_be_created_is_refused_before_mkfs() {
    // Found by QA: `--mount /ro/x`, /ro a read-only mount, made the filesystem on the disk and
    // then failed at `mkdir -p`; a path under a regular file did the same.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let _guard = Unmount(vec![ro.clone()]);
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
        .arg(&ro)
        .status()
        .unwrap();
    assert!(ok.success());
    let under_ro = ro.join("x");
    let e = refused(&dev, request_on(&dev, &under_ro));
    assert!(
        e.starts_with(&format!(
            "--mount {} does not exist and cannot be created: {} is on a read-only filesystem",
            under_ro.display(),
            ro.display()
        )),
        "{e}"
    );
    let mnt = tmp.path().join("m");
    let mut c = request_on(&dev, &mnt);
    c.bind = vec![ro.join("a/b")];
    let e = refused(&dev, c);
    assert!(e.starts_with("--bind "), "{e}");
    let file = tmp.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let e = refused(&dev, request_on(&dev, file.join("x")));
    assert!(e.contains("is not a directory"), "{e}");
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
    let Some((dev, tmp, zero, _guard)) = xfs_mount("disks/0") else {
        return;
    };
    let dir = tmp.path().join("disks");
    run(separate_on(&dev, &dir));
    assert!(is_mount_point(&zero));
    assert_eq!(blkid(&dev.path, "LABEL"), "disktier-0");
    let r = undo_of(&zero, tmp.path().join("root"));
    let rep = undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.changed && !is_mount_point(&zero), "{rep:#?}");
    // The old way still works too.
    run(separate_on(&dev, &dir));
    let mut r = undo_of(&zero, tmp.path().join("root"));
    r.label = "disktier-0".into();
    undo(&r, &RealRunner).unwrap();
    assert!(!is_mount_point(&zero));
}

#[test]
fn another_fs_than_the_one_setup_made_is_refused_not_misreported() {
    // Found by QA: `--fs ext4` on the xfs setup made for the mount point was remounted as xfs
    // and reported as ext4.
    let Some((dev, tmp, mnt, _guard)) = xfs_mount("m") else {
        return;
    };
    let mut c = fstab_request(&dev, &mnt, tmp.path().join("root"));
    let rep = run(c.clone());
    assert_eq!(rep.fs.as_str(), "xfs");
    let fstab = std::fs::read_to_string(tmp.path().join("root/etc/fstab")).unwrap();
    c.fs = disktier_disks::setup::FsType::Ext4;
    let e = refusal(c.clone());
    assert!(
        e.starts_with(&format!(
            "{} holds xfs, made by an earlier setup for {}, not the ext4 asked for",
            dev.path.display(),
            mnt.display()
        )) && e.contains("undo with --wipe")
            && e.contains("pass --fs xfs"),
        "{e}"
    );
    assert_eq!(blkid(&dev.path, "TYPE"), "xfs");
    assert!(is_mount_point(&mnt));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("root/etc/fstab")).unwrap(),
        fstab
    );
    // Unmounted, it is refused too (it would have been mounted as xfs).
    drop(_guard);
    let _guard = Unmount(vec![mnt.clone()]);
    let e = refused(&dev, c.clone());
    assert!(e.contains("holds xfs, made by an earlier setup"), "{e}");
    assert!(!is_mount_point(&mnt));
    c.fs = disktier_disks::setup::FsType::Xfs;
    let rep = run(c);
    assert!(rep.changed && is_mount_point(&mnt) && rep.fs.as_str() == "xfs");
}

#[test]
fn a_bind_that_bind_no_longer_lists_is_named_as_this_setups() {
    // Found by QA: `--bind A,B` then `--bind A` advised `--mount B`.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let mnt = tmp.path().join("m");
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let _guard = Unmount(vec![mnt.clone(), a.clone(), b.clone()]);
    let mut c = request_on(&dev, &mnt);
    c.bind = vec![a.clone(), b.clone()];
    run(c.clone());
    c.bind = vec![a.clone()];
    let e = refusal(c.clone());
    assert!(
        e.starts_with(&format!(
            "{} is one of this setup's binds (of {}{}) that --bind no longer lists: unmount it",
            b.display(),
            mnt.display(),
            b.display()
        )),
        "{e}"
    );
    assert!(
        !e.contains(&format!("--mount {}", b.display())),
        "never advises --mount B: {e}"
    );
    assert!(is_mount_point(&b) && is_mount_point(&a) && is_mount_point(&mnt));
    // Unmounted as told, the re-run converges.
    assert!(std::process::Command::new("umount")
        .arg(&b)
        .status()
        .unwrap()
        .success());
    let rep = run(c.clone());
    assert!(rep.steps.is_empty(), "{:#?}", rep.steps);
}

#[test]
fn a_separate_mount_with_a_custom_label_is_refused_with_the_label_to_pass() {
    // Found by QA: the refusal of `--undo --mount DIR/0` made with `--label scratch` did not
    // suggest `--label`.
    let Some((dev, tmp, zero, _guard)) = xfs_mount("disks/0") else {
        return;
    };
    let dir = tmp.path().join("disks");
    let mut c = separate_on(&dev, &dir);
    c.label = "scratch".into();
    run(c);
    let mut r = undo_of(&zero, tmp.path().join("root"));
    let e = undo(&r, &RealRunner).unwrap_err().to_string();
    assert!(
        e.contains("which disktier setup did not make with --label disktier")
            && e.ends_with("pass --label scratch"),
        "{e}"
    );
    assert!(is_mount_point(&zero));
    r.label = "scratch".into();
    let rep = undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.changed && !is_mount_point(&zero), "{rep:#?}");
}

#[test]
fn the_undo_of_a_separate_layouts_parent_is_refused_naming_each_mount() {
    // Found by QA: `--undo --mount DIR` after `--layout separate` said "setup undone" and left
    // DIR/0, DIR/1 mounted and persisted.
    let Some((dev0, tmp)) = xfs_loop() else {
        return;
    };
    let dev1 = LoopDev::new(XFS_SIZE);
    let dir = tmp.path().join("disks");
    let (zero, one) = (dir.join("0"), dir.join("1"));
    let _guard = Unmount(vec![zero.clone(), one.clone()]);
    let root = tmp.path().join("root");
    run(separate_pair(&dev0, &dev1, &dir, &root));
    let fstab = std::fs::read_to_string(root.join("etc/fstab")).unwrap();
    let mut r = undo_of(&dir, root.clone());
    r.wipe = true;
    for dry_run in [true, false] {
        r.dry_run = dry_run;
        let e = undo(&r, &RealRunner).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{} is not a mount point: setup made one filesystem per disk below it (--layout separate): {} (mounted), {} (mounted); nothing was undone",
                dir.display(),
                zero.display(),
                one.display()
            )) && e.contains(&format!(
                "disktier setup --undo --mount {} --wipe, then disktier setup --undo --mount {} --wipe",
                zero.display(),
                one.display()
            )),
            "{e}"
        );
    }
    assert!(is_mount_point(&zero) && is_mount_point(&one));
    assert_eq!(
        std::fs::read_to_string(root.join("etc/fstab")).unwrap(),
        fstab
    );
    // Unmounted but still persisted: refused too, naming fstab.
    drop(_guard);
    let _guard = Unmount(vec![zero.clone(), one.clone()]);
    r.dry_run = false;
    let e = undo(&r, &RealRunner).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "{} (in fstab), {} (in fstab)",
            zero.display(),
            one.display()
        )),
        "{e}"
    );
    // Mounted again (setup remounts what it made), then as told: each in turn, then the
    // parent has nothing left.
    run(separate_pair(&dev0, &dev1, &dir, &root));
    assert!(is_mount_point(&zero) && is_mount_point(&one));
    for (m, dev) in [(&zero, &dev0), (&one, &dev1)] {
        let mut r = undo_of(m, root.clone());
        r.wipe = true;
        undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
        assert!(!is_mount_point(m));
        assert_eq!(blkid(&dev.path, "TYPE"), "");
    }
    let rep = undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(!rep.changed && rep.steps.is_empty(), "{rep:#?}");
    assert!(!std::fs::read_to_string(root.join("etc/fstab"))
        .unwrap()
        .contains("# disktier"));
}

/// Unmounts `0` (lazily) on drop, whatever its name holds: testkit's `Unmount` compares with
/// mountinfo's escaped form, so it misses a path with a space.
struct LazyUnmount(PathBuf);

impl Drop for LazyUnmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Whether `p` is a mount point, as mountinfo says once unescaped (`\040` is a space).
fn mounted(p: &Path) -> bool {
    disktier_disks::discover::mountinfo::read(Path::new("/proc/self/mountinfo"))
        .unwrap()
        .iter()
        .any(|e| Path::new(&e.mount_point) == p)
}

#[test]
fn the_parents_refusal_suggests_the_label_setup_was_given_shell_quoted() {
    // Found by QA: after `--layout separate --label ab`, the refusal of `--undo --mount DIR`
    // suggested `disktier setup --undo --mount DIR/0` without `--label ab`, and left a path
    // with a space unquoted.
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let dir = tmp.path().join("my disks");
    let zero = dir.join("0");
    let _guard = LazyUnmount(zero.clone());
    let mut c = separate_on(&dev, &dir);
    c.label = "ab".into();
    run(c);
    assert!(mounted(&zero));
    let e = undo(&undo_of(&dir, tmp.path().join("root")), &RealRunner)
        .unwrap_err()
        .to_string();
    let suggested = format!(
        "disktier setup --undo --mount '{}' --label ab",
        zero.display()
    );
    assert!(e.ends_with(&suggested), "{e}");
    assert!(mounted(&zero));
    // Run as suggested, it undoes DIR/0.
    let mut r = undo_of(&zero, tmp.path().join("root"));
    r.label = "ab".into();
    let rep = undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.changed && !mounted(&zero), "{rep:#?}");
}
