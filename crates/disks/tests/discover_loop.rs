//! Discovery of the real node (`discover("/")`, blkid run for real) on loop devices made for the
//! test: what `disks` lists for a partition.

use disktier_cmd::RealRunner;
use disktier_disks::discover::{discover, Ineligible, Signature};
use disktier_testkit::{have, loop_dev, require};
use std::path::Path;
use std::process::Command;

fn sh(args: &[&str]) {
    let st = Command::new(args[0]).args(&args[1..]).status().unwrap();
    assert!(st.success(), "{args:?}");
}

/// Found by QA: a blank partition (here one made and not formatted; on a real node, a GPT
/// disk's BIOS boot partition) was listed with filesystem `unknown`, because `blkid -p` exits 0
/// for it with nothing but its entry in the disk's table (`PART_ENTRY_*`).
#[test]
fn a_blank_partition_is_listed_blank() {
    if !require(have("partx"), "partx (util-linux)") {
        return;
    }
    let Some(dev) = loop_dev(64 << 20) else {
        return;
    };
    // An MBR: one Linux partition from sector 2048.
    dev.write_mbr(32_768);
    let disk = dev.path.to_str().unwrap().to_string();
    // A loop device made without --partscan: partx tells the kernel of the partition.
    sh(&["partx", "--add", &disk]);
    let found = discover(Path::new("/"), &RealRunner);
    sh(&["partx", "--delete", &disk]);
    let found = found.unwrap();
    let me = found
        .iter()
        .find(|d| d.name == dev.name())
        .expect("the loop device is listed");
    assert_eq!(me.partitions.len(), 1, "{me:?}");
    assert_eq!(me.partitions[0].name, format!("{}p1", dev.name()));
    assert_eq!(me.partitions[0].signature, Signature::default(), "{me:?}");
    // The disk itself is still partitioned, and not eligible.
    assert_eq!(me.signature.pttype.as_deref(), Some("dos"));
    assert!(
        me.ineligible
            .iter()
            .any(|w| matches!(w, Ineligible::Partitioned { .. })),
        "{me:?}"
    );
}
