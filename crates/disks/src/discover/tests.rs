use super::Ineligible;

/// QA (the GKE local-SSD recipe's node, whose local SSD GKE had formatted): `disks` and
/// `setup` said "has a ext4 signature".
#[test]
fn a_signature_takes_the_article_it_is_read_with() {
    let said = |fstype: &str| {
        Ineligible::HasFilesystem {
            fstype: fstype.into(),
            label: None,
        }
        .to_string()
    };
    assert_eq!(said("ext4"), "has an ext4 signature");
    assert_eq!(said("xfs"), "has an xfs signature");
    assert_eq!(said("LVM2_member"), "has an LVM2_member signature");
    assert_eq!(said("btrfs"), "has a btrfs signature");
    assert_eq!(
        said("linux_raid_member"),
        "has a linux_raid_member signature"
    );
    assert_eq!(said("swap"), "has a swap signature");
}
