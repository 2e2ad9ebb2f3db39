//! Regressions of the QA pass on `setup`, on the cloud fixture trees through the recording
//! runner: each refusal happens before any command runs (the transcript is empty), and each fix
//! plans exactly what the node needs. The same defects on real loop devices are in
//! setup_refusals.rs, setup_loop.rs and undo_loop.rs.

use disktier_cmd::RecordingRunner;
use disktier_disks::setup::plan::derived_uuid;
use disktier_disks::setup::{setup, LayoutChoice, Persist, Report, SetupRequest};
use std::path::{Path, PathBuf};

mod nodes;

/// The instance store of the m6id fixture (kernel name nvme1n1, 259:1).
const M6ID_STORE: &str =
    "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1A2B3C4D5E6F70809";

fn m6id(tmp: &Path) -> PathBuf {
    nodes::copy_node("aws-m6id-xlarge", tmp.join("node"))
}

/// Makes the m6id fixture's instance store hold disktier's xfs with `uuid`.
fn store_holds(root: &Path, uuid: &str) {
    std::fs::write(
        root.join("blkid/nvme1n1"),
        format!("TYPE=xfs\nLABEL=disktier\nUUID={uuid}\n"),
    )
    .unwrap();
}

/// Adds a mountinfo line for the instance store mounted at `at` with the per-mount and
/// superblock options given.
fn store_mounted(root: &Path, at: &str, per: &str, sup: &str) {
    let mi = root.join("proc/self/mountinfo");
    let mut text = std::fs::read_to_string(&mi).unwrap();
    text.push_str(&format!(
        "60 24 259:1 / {at} {per} shared:30 - xfs /dev/nvme1n1 {sup}\n"
    ));
    std::fs::write(&mi, text).unwrap();
}

fn error(root: &Path, c: SetupRequest) -> String {
    let r = RecordingRunner::new();
    let e = setup(&c.check().unwrap(), root, &r)
        .unwrap_err()
        .to_string();
    assert_eq!(r.transcript(), "", "a refusal runs nothing: {e}");
    e
}

fn run(root: &Path, c: SetupRequest) -> (Report, String) {
    let r = RecordingRunner::new();
    let rep = setup(&c.check().unwrap(), root, &r).unwrap();
    (rep, r.transcript())
}

#[test]
fn a_filesystem_setup_made_for_another_mount_point_is_refused_and_where_it_was_named() {
    // Found by QA: `setup --mount /mnt/other` remounted disktier's filesystem made for /mnt/o
    // at the new place, where `--undo` then refused it.
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let uuid = derived_uuid("disktier", Path::new("/mnt/o"));
    store_holds(&root, &uuid);
    let persist_root = tmp.path().join("root");
    std::fs::create_dir_all(persist_root.join("etc")).unwrap();
    std::fs::write(
        persist_root.join("etc/fstab"),
        format!("UUID={uuid} /mnt/o xfs defaults,noatime,nofail 0 0 # disktier\n"),
    )
    .unwrap();
    let mut c = SetupRequest::new("/mnt/other");
    c.persist_root = persist_root.clone();
    let e = error(&root, c);
    assert_eq!(
        e,
        format!("{M6ID_STORE} holds a filesystem disktier setup made for another mount point (/mnt/o) (label disktier, UUID {uuid}; for /mnt/other it would be {}): undo that setup first (disktier setup --undo --mount /mnt/o), or, if its data can go, wipe it (wipefs -a {M6ID_STORE}) and re-run setup", derived_uuid("disktier", Path::new("/mnt/other")))
    );
    // Without a persisted line (QA: as `setup --undo` without --wipe leaves it) the message
    // says that nothing is left to undo, and what to do: it said "undo that setup first", and
    // that undo said "nothing to undo".
    let e = error(&root, SetupRequest::new("/mnt/other"));
    assert_eq!(
        e,
        format!("{M6ID_STORE} holds a filesystem disktier setup made for another mount point (label disktier, UUID {uuid}; for /mnt/other it would be {}), which is mounted nowhere else and which no fstab line or unit of setup names: a `disktier setup --undo --mount DIR` without --wipe leaves it so; if its data can go, wipe it (wipefs -a {M6ID_STORE}) and re-run setup, or pass the --mount it was made for", derived_uuid("disktier", Path::new("/mnt/other")))
    );
    // At its own mount point it is remounted, never reformatted.
    let (_, t) = run(&root, SetupRequest::new("/mnt/o"));
    assert!(
        t.contains(&format!("UUID={uuid} /mnt/o")) && !t.contains("mkfs"),
        "{t}"
    );
    // A filesystem labelled disktier by something else (random UUID, as render's boot script
    // makes) is not setup's to judge: used as before.
    store_holds(&root, "11111111-2222-4333-8444-555555555555");
    let (_, t) = run(&root, SetupRequest::new("/mnt/other"));
    assert!(
        t.contains("UUID=11111111-2222-4333-8444-555555555555 /mnt/other"),
        "{t}"
    );
}

#[test]
fn one_disk_named_twice_is_refused_and_raid0_of_one_disk_says_what_it_does() {
    // Found by QA: `--devices X,X` and `--bind X,X` were deduplicated silently.
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let mut c = SetupRequest::new("/data");
    c.devices = Some(vec!["/dev/nvme1n1".into(), M6ID_STORE.into()]);
    assert_eq!(
        error(&root, c),
        format!("--devices /dev/nvme1n1 and {M6ID_STORE} are the same disk (nvme1n1): name each disk once")
    );
    let mut c = SetupRequest::new("/data");
    c.devices = Some(vec![M6ID_STORE.into(), M6ID_STORE.into()]);
    assert_eq!(
        c.check().unwrap_err().to_string(),
        format!("--devices {M6ID_STORE} is given twice: name each disk once")
    );
    let mut c = SetupRequest::new("/data");
    c.bind = vec!["/var/lib/x".into(), "/var/lib/x/".into()];
    assert_eq!(
        c.check().unwrap_err().to_string(),
        "--bind /var/lib/x is given twice: name each directory once"
    );
    // docs/disks.md: one disk is used directly; --layout raid0 says so instead of ignoring it.
    let mut c = SetupRequest::new("/data");
    c.layout = LayoutChoice::Raid0;
    c.dry_run = true;
    let (rep, _) = run(&root, c);
    assert_eq!(rep.layout, Some(disktier_disks::setup::Layout::Direct));
    assert!(
        rep.notes.iter().any(|n| n
            == &format!("--layout raid0 with one disk: RAID0 needs two or more, so {M6ID_STORE} is used directly (no md array)")),
        "{:?}",
        rep.notes
    );
    assert!(!rep.steps.iter().any(|s| s.description.contains("RAID0")));
}

#[test]
fn a_mounted_filesystem_gets_the_flags_asked_for_by_a_remount() {
    // Found by QA: a re-run with `--options nodev,nosuid` said "nothing to change" though the
    // live mount lacked them (and the fstab line had them).
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let at = "/var/lib/containers";
    store_holds(&root, &derived_uuid("disktier", Path::new(at)));
    store_mounted(&root, at, "rw,noatime", "rw,seclabel,attr2,inode64,noquota");
    // As asked: nothing.
    let (rep, t) = run(&root, SetupRequest::new(at));
    assert!(t.is_empty() && !rep.changed, "{t}");
    let mut c = SetupRequest::new(at);
    c.options = vec!["nodev,nosuid".into()];
    let (rep, t) = run(&root, c);
    assert_eq!(
        t,
        "mount -o remount,rw,nosuid,nodev,exec,noatime,diratime,async,nolazytime /var/lib/containers\n"
    );
    assert!(rep.changed);
    assert!(
        rep.notes
            .iter()
            .any(|n| n.contains("nosuid (now suid), nodev (now dev)")),
        "{:?}",
        rep.notes
    );
}

#[test]
fn a_filesystem_option_the_mount_lacks_is_refused_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let at = "/var/lib/containers";
    store_holds(&root, &derived_uuid("disktier", Path::new(at)));
    store_mounted(&root, at, "rw,noatime", "rw,seclabel,attr2,inode64,noquota");
    let mut c = SetupRequest::new(at);
    c.options = vec!["prjquota".into()];
    let e = error(&root, c);
    assert!(
        e.starts_with("/var/lib/containers is mounted without prjquota (its options: rw,noatime rw,seclabel,attr2,inode64,noquota): the kernel cannot change it on a mounted filesystem: unmount /var/lib/containers"),
        "{e}"
    );
}

#[test]
fn read_only_with_owner_mode_or_binds_is_refused_before_anything() {
    // Found by QA: `--options ro --owner 1000:1000` failed at chown on the read-only mount,
    // and every re-run failed there again.
    for (flag, set) in [
        (
            "--owner",
            &(|c: &mut SetupRequest| c.owner = Some("1000:1000".into()))
                as &dyn Fn(&mut SetupRequest),
        ),
        ("--mode", &|c: &mut SetupRequest| {
            c.mode = Some("0755".into())
        }),
        ("--bind", &|c: &mut SetupRequest| {
            c.bind = vec!["/var/lib/x".into()]
        }),
    ] {
        let mut c = SetupRequest::new("/data");
        c.options = vec!["ro".into()];
        set(&mut c);
        let e = c.check().unwrap_err().to_string();
        assert_eq!(
            e,
            format!("--options ro mounts the filesystem read-only, but {flag} must write to it: drop ro, or drop {flag}")
        );
    }
    // ro alone, or ro undone by a later rw, is fine.
    let mut c = SetupRequest::new("/data");
    c.options = vec!["ro,rw".into()];
    c.owner = Some("1000:1000".into());
    assert!(c.check().is_ok());
}

#[test]
fn mount_points_under_proc_sys_and_dev_are_refused() {
    for (mount, bind) in [
        ("/proc/x", None),
        ("/sys", None),
        ("/dev/shm/x", None),
        ("/data", Some("/proc/sys")),
    ] {
        let mut c = SetupRequest::new(mount);
        if let Some(b) = bind {
            c.bind = vec![b.into()];
        }
        let e = c.check().unwrap_err().to_string();
        assert!(e.contains("a kernel filesystem that holds no data"), "{e}");
    }
    // /procfs is not /proc.
    assert!(SetupRequest::new("/procfs/x").check().is_ok());
}

#[test]
fn a_symlinked_fstab_or_unit_is_refused_in_planning() {
    // Found by QA: a linked <root>/etc/fstab was refused only when written, after mkfs and mount.
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let etc = tmp.path().join("root/etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(
        tmp.path().join("real-fstab"),
        "UUID=root / xfs defaults 0 1\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(tmp.path().join("real-fstab"), etc.join("fstab")).unwrap();
    let mut c = SetupRequest::new("/data");
    c.persist = Persist::Fstab;
    c.persist_root = tmp.path().join("root");
    let e = error(&root, c);
    assert!(e.contains("etc/fstab is a symbolic link"), "{e}");
    // A masked unit (a link to /dev/null) where setup writes its mount unit.
    let units = etc.join("systemd/system");
    std::fs::create_dir_all(&units).unwrap();
    std::os::unix::fs::symlink("/dev/null", units.join("data.mount")).unwrap();
    let mut c = SetupRequest::new("/data");
    c.persist = Persist::Systemd;
    c.persist_root = tmp.path().join("root");
    let e = error(&root, c);
    assert!(e.contains("data.mount is a symbolic link"), "{e}");
}

#[test]
fn an_owner_id_past_the_largest_and_a_quota_option_in_capitals_are_refused() {
    // Found by QA: 4294967295 is -1 to chown ("leave unchanged"), and PRJQUOTA passed the
    // (case-sensitive) quota check, then failed the mount after mkfs.
    let mut c = SetupRequest::new("/data");
    c.owner = Some("4294967295:0".into());
    let e = c.check().unwrap_err().to_string();
    assert!(e.contains("a numeric id is at most 4294967294"), "{e}");
    let mut c = SetupRequest::new("/data");
    c.owner = Some("4294967294:4294967294".into());
    assert!(c.check().is_ok());
    let mut c = SetupRequest::new("/data");
    c.options = vec!["PRJQUOTA".into()];
    let e = c.check().unwrap_err().to_string();
    assert!(
        e.contains("mount options are case-sensitive: write prjquota"),
        "{e}"
    );
}

#[test]
fn a_mount_unit_setup_did_not_write_is_refused_not_replaced() {
    // Found by QA: `--persist systemd` replaced an admin's (or `render systemd`'s) unit for the
    // same mount point, and `--undo` then removed it as setup's; fstab's foreign line was refused.
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let units = tmp.path().join("root/etc/systemd/system");
    std::fs::create_dir_all(&units).unwrap();
    let theirs = "[Unit]\nDescription=the admin's /data\n\n[Mount]\nWhat=/dev/disk/by-label/data\nWhere=/data\n";
    std::fs::write(units.join("data.mount"), theirs).unwrap();
    let mut c = SetupRequest::new("/data");
    c.persist = Persist::Systemd;
    c.persist_root = tmp.path().join("root");
    let e = error(&root, c.clone());
    assert!(
        e.ends_with("data.mount exists and was not written by disktier setup (it starts \"[Unit]\"): setup does not replace another's unit; if setup's should take its place, disable it and move it away (systemctl disable data.mount), then re-run setup; or leave --persist out"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(units.join("data.mount")).unwrap(),
        theirs
    );
    // A unit setup wrote is rewritten as before.
    std::fs::write(
        units.join("data.mount"),
        "# Written by `disktier setup`: local disk(s) at /data. Re-running setup rewrites it.\n",
    )
    .unwrap();
    let (rep, _) = run(&root, c);
    assert!(
        rep.steps
            .iter()
            .any(|s| s.description.ends_with("etc/systemd/system/data.mount")),
        "{:?}",
        rep.steps
    );
}

#[test]
fn a_bind_directory_with_mounts_below_it_is_refused() {
    // Found by QA: `--bind /var/lib/kubelet` on a node whose kubelet had pod volumes mounted
    // below it: `cp -a` copied what each volume held onto the disk, and the bind hid them.
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let mi = root.join("proc/self/mountinfo");
    let mut text = std::fs::read_to_string(&mi).unwrap();
    text.push_str("70 24 0:60 / /var/lib/kubelet/pods/p1/volumes/kubernetes.io~secret/s rw,relatime shared:40 - tmpfs tmpfs rw\n");
    std::fs::write(&mi, text).unwrap();
    let mut c = SetupRequest::new("/mnt/disks/ssd");
    c.bind = vec!["/var/lib/containerd".into(), "/var/lib/kubelet".into()];
    let e = error(&root, c);
    assert_eq!(
        e,
        "--bind /var/lib/kubelet has 1 filesystem mounted below it (/var/lib/kubelet/pods/p1/volumes/kubernetes.io~secret/s): setup would copy what they hold onto the disk and hide them under the bind; unmount them (stop what mounted them first: kubelet, the container runtime) and re-run setup"
    );
    // A directory with nothing mounted below it is bound as before.
    let mut c = SetupRequest::new("/mnt/disks/ssd");
    c.bind = vec!["/var/lib/containerd".into()];
    c.dry_run = true;
    let (rep, _) = run(&root, c);
    assert!(
        rep.steps
            .iter()
            .any(|s| s.description
                == "bind /mnt/disks/ssd/var/lib/containerd on /var/lib/containerd"),
        "{:?}",
        rep.steps
    );
}

#[test]
fn a_disk_of_size_zero_is_named_as_empty_not_missing() {
    // Found by QA: `setup --devices /dev/loop1` on a loop device over an empty file said
    // "/dev/loop1: no such block device", though it exists (discovery leaves out size 0).
    let tmp = tempfile::tempdir().unwrap();
    let root = m6id(tmp.path());
    let dir = root.join("sys/block/loop5");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("size"), "0\n").unwrap();
    let mut c = SetupRequest::new(PathBuf::from("/data"));
    c.devices = Some(vec!["/dev/loop5".into()]);
    c.dry_run = true;
    assert_eq!(
        error(&root, c.clone()),
        "/dev/loop5 has a size of 0 (no medium, or a loop device over an empty file): there is nothing to make a filesystem on; see `disktier disks` for the node's disks"
    );
    c.devices = Some(vec!["/dev/loop6".into()]);
    assert_eq!(
        error(&root, c),
        "/dev/loop6: no such block device: see `disktier disks` for the node's disks"
    );
}

#[test]
fn a_mount_ending_in_a_blank_is_refused_only_for_a_mount_unit() {
    // Found by QA: --persist systemd wrote `Where=/data ` in data\x20.mount, which systemd
    // refuses (it strips the blank); fstab (\040) and mount(8) carry it, and so does an undo.
    let mut c = SetupRequest::new(PathBuf::from("/data "));
    c.persist = Persist::Systemd;
    let e = c.clone().check().unwrap_err().to_string();
    assert!(
        e.starts_with("--mount \"/data \" is not usable: it ends with a blank"),
        "{e}"
    );
    let mut b = SetupRequest::new(PathBuf::from("/data"));
    b.persist = Persist::Systemd;
    b.bind = vec![PathBuf::from("/var/lib/x ")];
    let e = b.check().unwrap_err().to_string();
    assert!(e.starts_with("--bind \"/var/lib/x \" is not usable"), "{e}");
    c.persist = Persist::Fstab;
    assert_eq!(c.check().unwrap().mount.as_str(), "/data ");
}
