//! `setup` against the cloud fixture trees through the recording runner: what cannot run here
//! (md RAID, SELinux, NVMe cloud disks) is checked as golden transcripts of the exact commands,
//! plus the persisted units and fstab lines.

use disktier_cmd::RecordingRunner;
use disktier_disks::setup::{setup, LayoutChoice, Persist, Report, SetupError, SetupRequest};
use disktier_testkit::cli::assert_any_starts_with;
use disktier_testkit::cli::sysfs_fixture as fixture;
use std::path::{Path, PathBuf};

mod nodes;

/// A writable copy of a fixture in `tmp`, to put a node in another state.
fn copy(name: &str, tmp: &Path) -> PathBuf {
    nodes::copy_node(name, tmp.join(name))
}

fn cfg(mount: &str) -> SetupRequest {
    SetupRequest::new(mount)
}

/// A request that persists the mount with `persist` below `tmp/root`.
fn persisted(mount: &str, persist: Persist, tmp: &Path) -> SetupRequest {
    let mut c = cfg(mount);
    c.persist = persist;
    c.persist_root = tmp.join("root");
    c
}

/// Runs setup through the recording runner where it must refuse before running any command;
/// returns the error.
fn refused(root: &Path, c: SetupRequest) -> SetupError {
    let r = RecordingRunner::new();
    let e = setup(&c.check().unwrap(), root, &r).unwrap_err();
    assert_eq!(r.transcript(), "", "{e}");
    e
}

/// Runs setup for real through the recording runner; returns the report and the transcript
/// with temp paths replaced by `<TMP>`.
fn run(root: &Path, c: SetupRequest, tmp: &Path) -> (Report, String) {
    let r = RecordingRunner::new();
    let rep = setup(&c.check().unwrap(), root, &r).unwrap();
    (rep, scrub(&r.transcript(), tmp))
}

/// Replaces the temp dir (plain and systemd-escaped) with `<TMP>`.
fn scrub(text: &str, tmp: &Path) -> String {
    let esc = disktier_disks::valid::unit_escape_path(&tmp.display().to_string());
    text.replace(&tmp.display().to_string(), "<TMP>")
        .replace(&esc, "<TMP>")
}

/// Makes blkid on the fixture node `root` report `tags` (`TYPE=...\nLABEL=...\n`) for `disk`.
fn set_blkid(root: &Path, disk: &str, tags: &str) {
    std::fs::write(root.join("blkid").join(disk), tags).unwrap();
}

/// A copy of the i3 fixture whose four disks are members of our md array (not running).
fn i3_in_our_array(tmp: &Path) -> PathBuf {
    let root = copy("aws-i3-8xlarge", tmp);
    for n in ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"] {
        set_blkid(&root, n, "TYPE=linux_raid_member\nLABEL=any:disktier\n");
    }
    root
}

/// `tmp/dir`, created with the subdirectory `inside` (content a bind must carry over).
fn dir_holding(tmp: &Path, dir: &str, inside: &str) -> PathBuf {
    let d = tmp.join(dir);
    std::fs::create_dir_all(d.join(inside)).unwrap();
    d
}

fn commands(rep: &Report) -> Vec<String> {
    rep.steps.iter().flat_map(|s| s.commands.clone()).collect()
}

#[test]
fn m6id_auto_takes_the_instance_store_relabels_selinux_and_persists_units() {
    let tmp = tempfile::tempdir().unwrap();
    let c = persisted("/var/lib/containers", Persist::Systemd, tmp.path());
    let (rep, t) = run(&fixture("aws-m6id-xlarge"), c, tmp.path());
    assert_eq!(rep.devices.len(), 1);
    assert_eq!(
        rep.devices[0].path,
        "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1A2B3C4D5E6F70809"
    );
    assert!(t.contains("restorecon -R /var/lib/containers"), "{t}");
    assert!(
        !t.contains("nvme0n1"),
        "the EBS root must not be touched:\n{t}"
    );
    insta::assert_snapshot!("m6id_auto", t);
    let unit = std::fs::read_to_string(
        tmp.path()
            .join("root/etc/systemd/system/var-lib-containers.mount"),
    )
    .unwrap();
    assert!(unit.contains("What=/dev/disk/by-uuid/"));
    assert!(unit.contains("Before=crio.service containerd.service kubelet.service"));
    insta::assert_snapshot!("m6id_unit", unit);
}

#[test]
fn dry_run_prints_the_same_commands_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cfg("/var/lib/containers");
    c.dry_run = true;
    let (rep, t) = run(&fixture("aws-m6id-xlarge"), c, tmp.path());
    assert_eq!(t, "", "a dry run runs no command");
    assert!(!rep.changed);
    let (_, real) = run(
        &fixture("aws-m6id-xlarge"),
        cfg("/var/lib/containers"),
        tmp.path(),
    );
    assert_eq!(commands(&rep).join("\n") + "\n", real);
}

#[test]
fn i3_four_disks_become_raid0_with_name_homehost_chunk_and_stripe_aware_xfs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = persisted("/data", Persist::Fstab, tmp.path());
    c.owner = Some("ec2-user:ec2-user".into());
    let (rep, t) = run(&fixture("aws-i3-8xlarge"), c, tmp.path());
    assert_eq!(rep.devices.len(), 4);
    assert!(
        t.contains("--name=disktier --homehost=any --level=0 --chunk=256"),
        "{t}"
    );
    assert!(t.contains("-d su=256k,sw=4"), "{t}");
    assert!(!t.contains("--force") && !t.contains("--run") && !t.contains(" -f "));
    insta::assert_snapshot!("i3_raid0", t);
    let fstab = std::fs::read_to_string(tmp.path().join("root/etc/fstab")).unwrap();
    insta::assert_snapshot!("i3_fstab", fstab);
}

#[test]
fn i3_separate_layout_mounts_each_disk_by_uuid() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cfg("/mnt/k8s-disks");
    c.layout = LayoutChoice::Separate;
    c.fs = disktier_disks::setup::FsType::Ext4;
    let (rep, t) = run(&fixture("aws-i3-8xlarge"), c, tmp.path());
    assert_eq!(
        rep.steps
            .iter()
            .filter(|s| s.description.starts_with("make ext4"))
            .count(),
        4
    );
    assert!(t.contains("/mnt/k8s-disks/3"));
    insta::assert_snapshot!("i3_separate", t);
}

#[test]
fn raid_without_md_support_says_so_and_suggests_separate() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy("aws-i3-8xlarge", tmp.path());
    std::fs::remove_file(root.join("proc/mdstat")).unwrap();
    let e = refused(&root, cfg("/data"));
    assert_eq!(
        e.to_string(),
        "this kernel has no md RAID support (no /proc/mdstat and no md_mod module): cannot stripe 4 disks into RAID0; use --layout separate for one mount per disk"
    );
}

#[test]
fn an_array_of_ours_is_assembled_not_recreated_and_its_filesystem_remounted() {
    let tmp = tempfile::tempdir().unwrap();
    let root = i3_in_our_array(tmp.path());
    // Stopped array (after a reboot without mdadm.conf): assemble, never create.
    let mut c = cfg("/data");
    c.dry_run = true;
    let (rep, _) = run(&root, c, tmp.path());
    let cmds = commands(&rep);
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    assert!(
        cmds[0].starts_with("mdadm --assemble /dev/md/disktier "),
        "{cmds:?}"
    );
    // Running array holding our filesystem: mount it, no mkfs.
    let md = root.join("sys/block/md127");
    std::fs::create_dir_all(md.join("queue")).unwrap();
    std::fs::create_dir_all(md.join("slaves")).unwrap();
    std::fs::write(md.join("dev"), "9:127\n").unwrap();
    std::fs::write(md.join("size"), "14843750000\n").unwrap();
    for n in ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"] {
        std::fs::write(root.join("sys/block").join(n).join("holders/md127"), "").unwrap();
    }
    set_blkid(
        &root,
        "md127",
        "TYPE=xfs\nLABEL=disktier\nUUID=0d15c0de-0000-4000-8000-000000000001\n",
    );
    let (rep, t) = run(&root, cfg("/data"), tmp.path());
    assert!(!t.contains("mkfs") && !t.contains("mdadm"), "{t}");
    assert_eq!(
        t,
        "mkdir -p /data\nmount -t xfs -o defaults,noatime UUID=0d15c0de-0000-4000-8000-000000000001 /data\n"
    );
    assert!(rep.changed);
    // Mounted already: nothing to do.
    let mi = root.join("proc/self/mountinfo");
    let mut text = std::fs::read_to_string(&mi).unwrap();
    text.push_str("60 22 9:127 / /data rw,noatime shared:30 - xfs /dev/md127 rw\n");
    std::fs::write(&mi, text).unwrap();
    let (rep, t) = run(&root, cfg("/data"), tmp.path());
    assert_eq!(t, "");
    assert!(!rep.changed && rep.steps.is_empty());
    // A blank running array (crash after create, before mkfs): mkfs with stripe geometry.
    std::fs::remove_file(root.join("blkid/md127")).unwrap();
    let text = std::fs::read_to_string(&mi).unwrap().replace(
        "60 22 9:127 / /data rw,noatime shared:30 - xfs /dev/md127 rw\n",
        "",
    );
    std::fs::write(&mi, text).unwrap();
    let (_, t) = run(&root, cfg("/data"), tmp.path());
    assert!(t.starts_with("mkfs.xfs -K -L disktier -m uuid="), "{t}");
    assert!(t.contains("-d su=256k,sw=4 /dev/md127"), "{t}");
}

#[test]
fn gke_local_ssd_already_mounted_by_gke_is_nothing_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let (rep, t) = run(&fixture("gke-local-ssd"), cfg("/mnt/disks/ssd"), tmp.path());
    assert_eq!(t, "");
    assert!(rep.steps.is_empty() && rep.layout.is_none() && !rep.changed);
    assert_eq!(rep.skipped.len(), 1);
    assert!(rep.skipped[0]
        .why
        .contains("mounted at /mnt/stateful_partition/kube-ephemeral-ssd"));
    assert!(
        rep.notes.iter().any(|n| n.contains("nothing to do")),
        "{:?}",
        rep.notes
    );
}

#[test]
fn azure_temp_nvme_direct_with_binds_copies_then_binds_parent_first() {
    let tmp = tempfile::tempdir().unwrap();
    // Real directories to bind, with content that must be copied in first.
    let containerd = dir_holding(
        tmp.path(),
        "var/lib/containerd",
        "io.containerd.content.v1.content",
    );
    let kubelet = dir_holding(tmp.path(), "var/lib/kubelet", "pods");
    let mut c = persisted("/mnt/disks/ssd", Persist::Systemd, tmp.path());
    c.bind = vec![kubelet.join("pods"), containerd.clone(), kubelet.clone()];
    let (rep, t) = run(&fixture("azure-e4pds-v6"), c, tmp.path());
    assert_eq!(
        rep.devices[0].path,
        "/dev/disk/by-id/nvme-Microsoft_NVMe_Direct_Disk_v2_6f3d0c2a1b9e8d7c"
    );
    assert!(rep
        .notes
        .iter()
        .any(|n| n.contains("SELinux is not enabled")));
    let kubelet_bind = t
        .find("mount --bind /mnt/disks/ssd<TMP>/var/lib/kubelet <TMP>/var/lib/kubelet\n")
        .unwrap();
    let pods_bind = t
        .find("mount --bind /mnt/disks/ssd<TMP>/var/lib/kubelet/pods")
        .unwrap();
    assert!(kubelet_bind < pods_bind, "parent before child:\n{t}");
    assert!(t.contains("cp -a <TMP>/var/lib/containerd/. "), "{t}");
    assert!(
        !t.contains("cp -a <TMP>/var/lib/kubelet/pods/."),
        "child content comes with the parent:\n{t}"
    );
    insta::assert_snapshot!("azure_binds", t);
    let units: Vec<String> = std::fs::read_dir(tmp.path().join("root/etc/systemd/system"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(units.len(), 4, "{units:?}");
}

#[test]
fn explicit_devices_refuse_the_system_disk_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cfg("/data");
    c.devices = Some(vec![
        "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0a1b2c3d4e5f60718".into(),
    ]);
    let m = refused(&fixture("aws-m6id-xlarge"), c).to_string();
    assert!(m.starts_with("refusing /dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0a1b2c3d4e5f60718: system disk (holds /sysroot, /boot)"), "{m}");
    // QA: the system disk's refusal ended with "wipe it yourself if you mean it".
    assert!(
        !m.contains("wipe it yourself") && m.contains("holds this node's operating system"),
        "{m}"
    );
    let _ = tmp;
    let mut c = cfg("/data");
    c.devices = Some(vec!["/dev/nvme0n1p4".into()]);
    let e = refused(&fixture("aws-m6id-xlarge"), c);
    assert!(matches!(e, SetupError::Partition { .. }), "{e}");
}

#[test]
fn prjquota_is_refused_where_xfs_has_no_quota_support() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy("azure-e4pds-v6", tmp.path());
    std::fs::create_dir_all(root.join("proc/fs/xfs")).unwrap();
    let mut c = cfg("/var/lib/containers");
    c.options = vec!["prjquota".into()];
    let e = refused(&root, c);
    assert_eq!(
        e.to_string(),
        "this kernel has no quota support (no /proc/fs/xfs/xqmstat: CONFIG_XFS_QUOTA is not set): prjquota cannot be mounted; drop it or use a kernel with CONFIG_QUOTA/XFS_QUOTA"
    );
}

/// Found by QA: on a kernel with CONFIG_QUOTA but not CONFIG_QFMT_V2 (as this test machine's),
/// `--fs ext4 --options prjquota` was refused with the fix "use a kernel with
/// CONFIG_QUOTA/XFS_QUOTA": the kernel has CONFIG_QUOTA, and XFS quota is not what ext4 needs.
#[test]
fn prjquota_on_ext4_names_the_quota_format_ext4_needs() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let root = copy("azure-e4pds-v6", tmp.path());
    std::fs::create_dir_all(root.join("proc/sys/fs/quota")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(root.join("proc/config.gz")).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(b"CONFIG_QUOTA=y\n# CONFIG_QFMT_V2 is not set\n")
        .unwrap();
    gz.finish().unwrap();
    let mut c = cfg("/var/lib/containers");
    c.fs = disktier_disks::setup::FsType::Ext4;
    c.options = vec!["prjquota".into()];
    let e = refused(&root, c);
    assert_eq!(
        e.to_string(),
        "this kernel has no quota support (CONFIG_QFMT_V2 is not set (ext4 quotas need it)): prjquota cannot be mounted; drop it or use a kernel with CONFIG_QUOTA/QFMT_V2"
    );
}

#[test]
fn a_disk_with_our_label_is_remounted_never_reformatted() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy("aws-m6id-xlarge", tmp.path());
    set_blkid(
        &root,
        "nvme1n1",
        "TYPE=xfs\nLABEL=disktier\nUUID=11111111-2222-4333-8444-555555555555\n",
    );
    let (rep, t) = run(&root, cfg("/var/lib/containers"), tmp.path());
    assert!(!t.contains("mkfs"), "{t}");
    assert!(t.contains("mount -t xfs -o defaults,noatime UUID=11111111-2222-4333-8444-555555555555 /var/lib/containers"), "{t}");
    assert_eq!(rep.devices[0].state, "ours");
    // Someone else's filesystem on the same disk: skipped in auto mode, with the reason.
    set_blkid(&root, "nvme1n1", "TYPE=xfs\nLABEL=scratch\n");
    let (rep, t) = run(&root, cfg("/var/lib/containers"), tmp.path());
    assert_eq!(t, "");
    assert!(
        rep.skipped[0]
            .why
            .contains("has an xfs signature labelled \"scratch\""),
        "{:?}",
        rep.skipped
    );
}

#[test]
fn selinux_relabels_the_mount_and_each_bind_after_binding() {
    let tmp = tempfile::tempdir().unwrap();
    let crio = dir_holding(tmp.path(), "var/lib/containers", "storage");
    let mut c = cfg("/mnt/disks/ssd");
    c.bind = vec![crio.clone()];
    c.options = vec!["prjquota".into()];
    let (rep, t) = run(&fixture("aws-m6id-xlarge"), c, tmp.path());
    let lines: Vec<&str> = t.lines().collect();
    let pos = |p: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("{p}:\n{t}"))
    };
    assert!(pos("mount -t xfs -o defaults,noatime,prjquota") < pos("restorecon -R /mnt/disks/ssd"));
    assert!(pos("mount --bind") < pos("restorecon -R <TMP>/var/lib/containers"));
    assert!(!rep
        .notes
        .iter()
        .any(|n| n.contains("SELinux is not enabled")));
    insta::assert_snapshot!("m6id_selinux_binds", t);
}

#[test]
fn separate_layout_keeps_each_disks_index_from_its_label() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy("aws-i3-8xlarge", tmp.path());
    set_blkid(
        &root,
        "nvme2n1",
        "TYPE=xfs\nLABEL=disktier-2\nUUID=22222222-0000-4000-8000-000000000002\n",
    );
    let mut c = cfg("/mnt/k8s-disks");
    c.layout = LayoutChoice::Separate;
    let (rep, t) = run(&root, c, tmp.path());
    assert!(t.contains("mount -t xfs -o defaults,noatime UUID=22222222-0000-4000-8000-000000000002 /mnt/k8s-disks/2"), "{t}");
    assert_eq!(t.matches("mkfs.xfs").count(), 3, "{t}");
    for i in ["disktier-0", "disktier-1", "disktier-3"] {
        assert!(t.contains(&format!("-L {i} ")), "{i}: {t}");
    }
    assert!(!t.contains("-L disktier-2"), "{t}");
    assert_eq!(rep.devices.iter().filter(|d| d.state == "ours").count(), 1);
}

#[test]
fn an_array_that_does_not_appear_after_assembling_is_an_error_not_a_loop() {
    let tmp = tempfile::tempdir().unwrap();
    let root = i3_in_our_array(tmp.path());
    let r = RecordingRunner::new();
    let e = setup(&cfg("/data").check().unwrap(), &root, &r)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the array did not appear"), "{e}");
    assert_eq!(
        r.transcript().matches("mdadm --assemble").count(),
        1,
        "{}",
        r.transcript()
    );
    assert!(!r.transcript().contains("mdadm --create"));
}

#[test]
fn a_raw_gke_local_ssd_is_taken_in_auto_mode_and_the_boot_disk_never() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy("gke-local-ssd", tmp.path());
    // The same node before GKE formatted the SSD (raw block local SSD node pool).
    std::fs::remove_file(root.join("blkid/nvme0n1")).unwrap();
    let mi = root.join("proc/self/mountinfo");
    let kept: String = std::fs::read_to_string(&mi)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(" 259:0 "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&mi, kept).unwrap();
    let (rep, t) = run(&root, cfg("/mnt/disks/ssd"), tmp.path());
    assert_eq!(rep.devices.len(), 1);
    assert_eq!(
        rep.devices[0].path,
        "/dev/disk/by-id/google-local-nvme-ssd-0"
    );
    assert!(t.starts_with("mkfs.xfs -K -L disktier "), "{t}");
    assert!(
        t.contains("/dev/disk/by-id/google-local-nvme-ssd-0\n"),
        "{t}"
    );
    assert!(
        !t.contains("nvme1n1") && !t.contains("google-persistent-disk"),
        "{t}"
    );
}

/// Another program writes fstab between setup's plan and its write: setup stops instead of
/// overwriting that change, and the file keeps it. Then a re-run plans from the new content.
#[test]
fn an_fstab_changed_between_plan_and_write_is_not_overwritten() {
    use disktier_cmd::{Cmd, CmdError, CommandRunner, Output};
    struct WriteFstabAtMkfs(PathBuf, RecordingRunner);
    impl CommandRunner for WriteFstabAtMkfs {
        fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
            if cmd.program.starts_with("mkfs") {
                std::fs::write(&self.0, "UUID=theirs /srv xfs defaults 0 0\n").unwrap();
            }
            self.1.output(cmd)
        }
        fn has_program(&self, p: &str) -> bool {
            self.1.has_program(p)
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let fstab = tmp.path().join("root/etc/fstab");
    std::fs::create_dir_all(fstab.parent().unwrap()).unwrap();
    std::fs::write(&fstab, "UUID=root / xfs defaults 0 1\n").unwrap();
    let c = persisted("/data", Persist::Fstab, tmp.path())
        .check()
        .unwrap();
    let r = WriteFstabAtMkfs(fstab.clone(), RecordingRunner::new());
    let e = setup(&c, &fixture("aws-m6id-xlarge"), &r).unwrap_err();
    let msg = format!("{e:#}");
    let src = match &e {
        SetupError::Step { source, .. } => source.to_string(),
        _ => panic!("{msg}"),
    };
    assert!(src.contains("changed since setup read it"), "{src}");
    assert_eq!(
        std::fs::read_to_string(&fstab).unwrap(),
        "UUID=theirs /srv xfs defaults 0 0\n"
    );
    // The re-run keeps their line and adds ours.
    let rep = setup(&c, &fixture("aws-m6id-xlarge"), &RecordingRunner::new()).unwrap();
    assert!(rep.changed);
    let now = std::fs::read_to_string(&fstab).unwrap();
    assert!(
        now.starts_with("UUID=theirs /srv xfs defaults 0 0\n"),
        "{now}"
    );
    assert!(
        now.contains("/data xfs defaults,noatime,nofail 0 0 # disktier"),
        "{now}"
    );
}

/// `--devices /dev/nvme1n1` (a kernel name) with `--persist systemd` and a boot-time unit: the
/// unit re-runs setup with the disk's /dev/disk/by-id/ link, the mount unit names the UUID, and a
/// warning says so. With `--persist fstab` the line names the UUID.
#[test]
fn a_kernel_name_in_devices_is_persisted_by_id_and_uuid_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = persisted("/var/lib/containers", Persist::Systemd, tmp.path());
    c.devices = Some(vec!["/dev/nvme1n1".into()]);
    c.boot_binary = Some(std::env::current_exe().unwrap());
    c.allow_build_binary = true;
    let (rep, _) = run(&fixture("aws-m6id-xlarge"), c, tmp.path());
    assert_any_starts_with(
        &rep.notes,
        "warning: --devices /dev/nvme1n1 is a kernel name",
    );
    let units = tmp.path().join("root/etc/systemd/system");
    let boot =
        std::fs::read_to_string(units.join("disktier-setup-var-lib-containers.service")).unwrap();
    assert!(
        boot.contains(
            "--devices /dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1A2B3C4D5E6F70809"
        ),
        "{boot}"
    );
    // It waits for a separate /var (found by QA: it ran before /var was mounted).
    let bin_dir = std::env::current_exe().unwrap();
    let bin_dir = bin_dir.parent().unwrap().display();
    assert!(
        boot.contains(&format!(
            "\nRequiresMountsFor={bin_dir} /var/lib /var/lib/disktier\n"
        )),
        "{boot}"
    );
    let mount = std::fs::read_to_string(units.join("var-lib-containers.mount")).unwrap();
    assert!(mount.contains("What=/dev/disk/by-uuid/"), "{mount}");
    for t in [&boot, &mount] {
        assert!(!t.contains("nvme1n1"), "the kernel name is persisted:\n{t}");
    }

    let tmp = tempfile::tempdir().unwrap();
    let mut c = persisted("/data", Persist::Fstab, tmp.path());
    c.devices = Some(vec!["/dev/nvme1n1".into()]);
    let (rep, _) = run(&fixture("aws-m6id-xlarge"), c, tmp.path());
    let fstab = std::fs::read_to_string(tmp.path().join("root/etc/fstab")).unwrap();
    let uuid = disktier_disks::setup::plan::derived_uuid("disktier", Path::new("/data"));
    assert!(fstab.contains(&format!("UUID={uuid} /data xfs")), "{fstab}");
    assert!(!fstab.contains("nvme1n1"), "{fstab}");
    assert_any_starts_with(&rep.notes, "warning:");
}
