//! Discovery against fixture trees of real cloud nodes (m6id.xlarge, i3.8xlarge, a GKE node with
//! a local SSD, an Azure v6 VM): classification, eligibility and reasons, plus a golden JSON of
//! each node.

use disktier_cmd::RecordingRunner;
use disktier_disks::discover::{discover, Disk, DiskClass, Ineligible};
use disktier_testkit::cli::sysfs_fixture;

mod nodes;
use nodes::copy_node;

fn disks(name: &str) -> Vec<Disk> {
    let r = RecordingRunner::new();
    let d = discover(&sysfs_fixture(name), &r).unwrap();
    assert_eq!(r.transcript(), "", "fixture discovery must run no command");
    d
}

fn get<'a>(d: &'a [Disk], name: &str) -> &'a Disk {
    d.iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("{name} missing"))
}

#[test]
fn m6id_ebs_root_is_system_and_instance_store_is_eligible() {
    let d = disks("aws-m6id-xlarge");
    let root = get(&d, "nvme0n1");
    assert_eq!(root.class, DiskClass::System);
    assert!(!root.eligible);
    assert!(root.ineligible.contains(&Ineligible::SystemDisk {
        holds: vec!["/sysroot".into(), "/boot".into()]
    }));
    assert!(root
        .ineligible
        .iter()
        .any(|r| matches!(r, Ineligible::Partitioned { .. })));
    let is = get(&d, "nvme1n1");
    assert_eq!(is.class, DiskClass::InstanceStore);
    assert!(is.ephemeral && is.eligible, "{:?}", is.ineligible);
    assert_eq!(is.size_bytes, Some(237_000_000_000));
    assert_eq!(
        is.stable_path.as_deref(),
        Some("/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1A2B3C4D5E6F70809")
    );
    assert_eq!(
        is.model.as_deref(),
        Some("Amazon EC2 NVMe Instance Storage")
    );
    assert_eq!(is.scheduler.as_deref(), Some("none"));
    insta::assert_json_snapshot!("m6id", d);
}

#[test]
fn i3_has_four_eligible_instance_store_disks_and_a_xen_root() {
    let d = disks("aws-i3-8xlarge");
    let store: Vec<&Disk> = d
        .iter()
        .filter(|x| x.class == DiskClass::InstanceStore)
        .collect();
    assert_eq!(store.len(), 4);
    assert!(store
        .iter()
        .all(|x| x.eligible && x.size_bytes == Some(1_900_000_000_000)));
    let x = get(&d, "xvda");
    assert_eq!(x.class, DiskClass::System);
    assert_eq!(x.partitions.len(), 3);
    assert_eq!(
        x.partitions
            .iter()
            .find(|p| p.name == "xvda128")
            .unwrap()
            .mountpoints,
        ["/boot/efi"]
    );
    assert_eq!(x.stable_path, None);
    insta::assert_json_snapshot!("i3", d);
}

#[test]
fn gke_local_ssd_mounted_by_gke_is_refused_and_dm_verity_root_is_system() {
    let d = disks("gke-local-ssd");
    let ssd = get(&d, "nvme0n1");
    assert_eq!(ssd.class, DiskClass::LocalSsd);
    assert_eq!(ssd.size_bytes, Some(375 * 1024 * 1024 * 1024));
    assert_eq!(ssd.logical_block_size, 4096);
    assert!(!ssd.eligible);
    assert!(ssd.ineligible.contains(&Ineligible::Mounted {
        at: vec![
            "/mnt/stateful_partition/kube-ephemeral-ssd".into(),
            "/var/lib/kubelet".into()
        ]
    }));
    assert_eq!(
        ssd.stable_path.as_deref(),
        Some("/dev/disk/by-id/google-local-nvme-ssd-0")
    );
    // The root is on dm-0 (dm-verity) over nvme1n1p3: the boot disk is system through a holder.
    let boot = get(&d, "nvme1n1");
    assert_eq!(boot.class, DiskClass::System);
    assert!(boot.ineligible.contains(&Ineligible::HasHolders {
        holders: vec!["dm-0".into()]
    }));
    assert_eq!(get(&d, "dm-0").class, DiskClass::System);
    insta::assert_json_snapshot!("gke", d);
}

#[test]
fn azure_v6_temp_nvme_is_eligible_and_managed_os_disk_is_system() {
    let d = disks("azure-e4pds-v6");
    let t = get(&d, "nvme1n1");
    assert_eq!(t.class, DiskClass::AzureTempNvme);
    assert!(t.eligible);
    assert_eq!(get(&d, "nvme0n1").class, DiskClass::System);
    insta::assert_json_snapshot!("azure", d);
}

#[test]
fn model_strings_classify_exactly() {
    for (model, want) in [
        ("nvme_card", Some(DiskClass::LocalSsd)),
        ("nvme_card-pd", Some(DiskClass::NetworkVolume)),
        ("nvme_card2", None),
        ("PersistentDisk  ", Some(DiskClass::NetworkVolume)),
        (
            "Amazon Elastic Block Store              ",
            Some(DiskClass::NetworkVolume),
        ),
        ("Microsoft NVMe Direct Disk", Some(DiskClass::AzureTempNvme)),
        (
            "Microsoft NVMe Direct Disk v2",
            Some(DiskClass::AzureTempNvme),
        ),
    ] {
        assert_eq!(DiskClass::from_model(model), want, "{model:?}");
    }
}

/// A fixture copy whose instance-store disk is held by a foreign md array, read-only, or busy:
/// each state is refused with its own reason.
#[test]
fn holders_readonly_and_busy_are_refused_with_their_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_node("aws-i3-8xlarge", tmp.path().join("node"));
    let b = root.join("sys/block");
    std::fs::write(b.join("nvme0n1/holders/md127"), "").unwrap();
    std::fs::write(b.join("nvme1n1/ro"), "1\n").unwrap();
    std::fs::write(root.join("busy"), "nvme2n1\n").unwrap();
    std::fs::write(root.join("blkid/nvme3n1"), "TYPE=ext4\nLABEL=scratch\n").unwrap();
    // `scan` makes the exclusive-open check (setup's view); a listing (`discover`) never
    // opens a disk with O_EXCL, so it cannot see "busy".
    let listed = discover(&root, &RecordingRunner::new()).unwrap();
    assert!(get(&listed, "nvme2n1").ineligible.is_empty());
    let d = disktier_disks::discover::scan(&root, &RecordingRunner::new())
        .unwrap()
        .disks;
    assert_eq!(
        get(&d, "nvme0n1").ineligible,
        [Ineligible::HasHolders {
            holders: vec!["md127".into()]
        }]
    );
    assert_eq!(get(&d, "nvme1n1").ineligible, [Ineligible::ReadOnly]);
    assert_eq!(get(&d, "nvme2n1").ineligible, [Ineligible::Busy]);
    assert_eq!(
        get(&d, "nvme3n1").ineligible,
        [Ineligible::HasFilesystem {
            fstype: "ext4".into(),
            label: Some("scratch".into())
        }]
    );
    assert_eq!(
        get(&d, "nvme0n1").ineligible[0].to_string(),
        "has holders (md127 built on it)"
    );
}

/// QA: a device whose sysfs `size` does not read (text, a number too large for u64, a missing
/// file) was hidden as if it were an empty drive. It is listed with its size unknown and the
/// reason, and setup never takes it; a size of 0 (an unbound loop device) is still not listed.
#[test]
fn a_device_whose_size_does_not_read_is_listed_and_never_eligible() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_node("aws-i3-8xlarge", tmp.path().join("node"));
    let b = root.join("sys/block");
    std::fs::write(b.join("nvme0n1/size"), "lots\n").unwrap();
    std::fs::write(b.join("nvme1n1/size"), "18446744073709551616\n").unwrap();
    std::fs::remove_file(b.join("nvme2n1/size")).unwrap();
    std::fs::write(b.join("nvme3n1/size"), "0\n").unwrap();
    for d in [
        discover(&root, &RecordingRunner::new()).unwrap(),
        disktier_disks::discover::scan(&root, &RecordingRunner::new())
            .unwrap()
            .disks,
    ] {
        assert!(
            d.iter().all(|x| x.name != "nvme3n1"),
            "size 0 is not listed"
        );
        for name in ["nvme0n1", "nvme1n1", "nvme2n1"] {
            let x = get(&d, name);
            assert_eq!(x.size_bytes, None, "{name}");
            assert!(!x.eligible, "{name}");
            assert!(
                matches!(&x.ineligible[0], Ineligible::SizeUnknown { .. }),
                "{name}: {:?}",
                x.ineligible
            );
        }
        let said = get(&d, "nvme0n1").ineligible[0].to_string();
        assert!(said.starts_with("size unknown: "), "{said}");
        assert!(
            said.ends_with(
                "/sys/block/nvme0n1/size holds `lots`, not a number of 512-byte sectors"
            ),
            "{said}"
        );
        let said = get(&d, "nvme2n1").ineligible[0].to_string();
        assert!(
            said.contains("/sys/block/nvme2n1/size cannot be read ("),
            "{said}"
        );
    }
}

/// QA: names under /sys/block that are no kernel name (a newline, a space, a bidi control, 200
/// bytes) were eligible, and setup's dry run put `/dev/ev` and `il` on two lines of its script.
/// They are listed, never eligible, with the reason.
#[test]
fn a_device_whose_name_is_no_kernel_name_is_never_eligible() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_node("aws-i3-8xlarge", tmp.path().join("node"));
    let b = root.join("sys/block");
    let long = "x".repeat(33);
    let odd = ["ev\nil", "sp ace", "bidi\u{202e}", "a!b", long.as_str()];
    for name in odd {
        let st = std::process::Command::new("cp")
            .arg("-a")
            .arg(b.join("nvme1n1"))
            .arg(b.join(name))
            .status()
            .unwrap();
        assert!(st.success());
    }
    let d = disktier_disks::discover::scan(&root, &RecordingRunner::new())
        .unwrap()
        .disks;
    assert!(get(&d, "nvme1n1").eligible);
    for name in odd {
        let x = get(&d, name);
        assert!(!x.eligible, "{name:?}");
        assert!(
            x.ineligible
                .iter()
                .any(|r| matches!(r, Ineligible::OddName { .. })),
            "{name:?}: {:?}",
            x.ineligible
        );
    }
    let said = get(&d, "ev\nil")
        .ineligible
        .iter()
        .find(|r| matches!(r, Ineligible::OddName { .. }))
        .unwrap()
        .to_string();
    assert!(
        said.starts_with(
            "odd name: its kernel name holds '\\n', which a kernel disk name does not"
        ),
        "{said}"
    );
}

/// QA: a by-id link named with a newline (`nvme-a\n#b c`) was nvme2n1's preferred stable path,
/// and setup's dry run printed it over two lines of its script. Such a link is not used.
#[test]
fn a_by_id_link_of_odd_characters_is_not_a_stable_path() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_node("aws-i3-8xlarge", tmp.path().join("node"));
    let ids = root.join("dev/disk/by-id");
    for odd in ["nvme-a\n#b c", "nvme-x;y", "nvme-\u{202e}"] {
        std::os::unix::fs::symlink("../../nvme2n1", ids.join(odd)).unwrap();
    }
    let d = discover(&root, &RecordingRunner::new()).unwrap();
    let x = get(&d, "nvme2n1");
    assert_eq!(
        x.stable_path.as_deref(),
        Some("/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS2F2A5E0B8D1A7A5C2")
    );
    assert_eq!(x.by_id.len(), 1, "{:?}", x.by_id);
}

/// A probe over a fixture tree whose users are scripted: `udev` uses nvme0n1 for its first
/// three looks (a probe after a change, which passes), `qemu` uses nvme1n1 for good. Every look
/// is recorded, in order.
struct ScriptedUsers {
    fixture: disktier_disks::discover::probe::FixtureProbe,
    looks: std::cell::RefCell<Vec<String>>,
}

impl disktier_disks::discover::probe::Probe for ScriptedUsers {
    fn signature(
        &self,
        name: &str,
    ) -> Result<disktier_disks::discover::probe::Signature, disktier_disks::discover::DiskError>
    {
        self.fixture.signature(name)
    }
    fn exclusive(&self, name: &str) -> disktier_disks::discover::probe::Exclusive {
        self.fixture.exclusive(name)
    }
    fn users(&self, name: &str) -> Vec<String> {
        let mut looks = self.looks.borrow_mut();
        looks.push(name.to_string());
        let n = looks.iter().filter(|l| *l == name).count();
        match name {
            "nvme0n1" if n <= 3 => vec!["pid 7 (systemd-udevd)".into()],
            "nvme1n1" => vec!["pid 9 (qemu)".into()],
            _ => Vec::new(),
        }
    }
}

/// A listing looks again at the disks it found in use, all together, for up to a second: what
/// a udev probe used for a moment is eligible, what stays in use is not, and two such disks are
/// looked at in turn, not one second each (a listing of ten took ten seconds).
#[test]
fn a_listing_waits_out_a_udev_probe_once_for_every_disk_in_use() {
    use disktier_disks::discover::{scan_with, InUse};
    let root = sysfs_fixture("aws-i3-8xlarge");
    let probe = ScriptedUsers {
        fixture: disktier_disks::discover::probe::FixtureProbe { root: root.clone() },
        looks: Default::default(),
    };
    let node = scan_with(&root, &probe, &|_, _| InUse::Users).unwrap();
    assert!(get(&node.disks, "nvme0n1").eligible);
    let busy = get(&node.disks, "nvme1n1");
    assert!(!busy.eligible);
    assert!(busy.ineligible.contains(&Ineligible::InUse {
        by: vec!["pid 9 (qemu)".into()]
    }));
    let looks = probe.looks.borrow();
    // After the first pass over every disk: nvme0n1 and nvme1n1 in turn, then nvme1n1 alone
    // once nvme0n1 is free, ten looks again in all.
    let first_pass = looks.iter().position(|l| l == "nvme1n1").unwrap();
    let again: Vec<&str> = looks[first_pass + 1..]
        .iter()
        .filter(|l| *l == "nvme0n1" || *l == "nvme1n1")
        .map(String::as_str)
        .collect();
    assert_eq!(
        again[..5],
        ["nvme0n1", "nvme1n1", "nvme0n1", "nvme1n1", "nvme0n1"],
        "{looks:?}"
    );
    assert_eq!(
        again.iter().filter(|l| **l == "nvme1n1").count(),
        10,
        "{looks:?}"
    );
}
