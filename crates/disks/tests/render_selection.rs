//! Which disks the rendered boot-time script may take: a `--model` or `--by-id` pattern that
//! also matches a network volume (EBS, GCP persistent disk, Azure managed disk) is refused, as
//! one matching every disk is, since the script would format any blank one attached.

use disktier_disks::render::{Bcache, BcacheConfig, BcacheMode, Intent, IntentInput, RenderError};

fn by_model(model: &str) -> Result<Intent, RenderError> {
    Intent::new(IntentInput {
        mount: "/data".into(),
        models: vec![model.into()],
        ..Default::default()
    })
}

fn by_id(glob: &str) -> Result<Intent, RenderError> {
    Intent::new(IntentInput {
        mount: "/data".into(),
        by_id: Some(glob.into()),
        ..Default::default()
    })
}

/// Found by QA: `--model '*e*'` and `--by-id '/dev/disk/by-id/nvme-*'` passed the "matches every
/// disk" check (they have a fixed character) and were rendered, though on AWS both match every
/// EBS volume, which the script would format once blank (a volume just attached).
#[test]
fn patterns_that_match_a_network_volume_are_refused() {
    for (model, name) in [
        ("*e*", "Amazon Elastic Block Store"),
        ("Amazon Elastic Block Store", "Amazon Elastic Block Store"),
        ("Amazon*", "Amazon Elastic Block Store"),
        ("nvme_card*", "nvme_card-pd"),
        ("*Disk", "PersistentDisk"),
        ("[A-Z]*", "Amazon Elastic Block Store"),
        ("MSFT NVMe Accelerator v?.?", "MSFT NVMe Accelerator v1.0"),
    ] {
        let e = by_model(model).unwrap_err();
        assert!(
            matches!(&e, RenderError::MatchesNetworkVolume { name: n, .. } if n == name),
            "{model}: {e}"
        );
        assert_eq!(
            e.to_string(),
            format!("--model {model:?} also matches {name}, a network volume, so the rendered script would format any blank one attached to the node (a new EBS volume too): give the local disks' model (cat /sys/block/*/device/model), e.g. 'Amazon EC2 NVMe Instance Storage'")
        );
    }
    for glob in [
        "/dev/disk/by-id/nvme-*",
        "/dev/disk/by-id/[a-z]*",
        "/dev/disk/by-id/*-*",
        "/dev/disk/by-id/*[0-9]",
        "/dev/disk/by-id/nvme-nvme.1d0f-*",
        "/dev/disk/by-id/nvme-Amazon_*",
        "/dev/disk/by-id/google-*",
        "/dev/disk/by-id/nvme-[!A]*",
    ] {
        let e = by_id(glob).unwrap_err();
        assert!(
            matches!(
                e,
                RenderError::MatchesNetworkVolume {
                    flag: "--by-id",
                    ..
                }
            ),
            "{glob}: {e}"
        );
        assert!(
            e.to_string()
                .contains("a network volume, so the rendered script would format"),
            "{e}"
        );
    }
}

#[test]
fn patterns_of_local_disks_and_exact_paths_are_taken() {
    for model in [
        "Amazon EC2 NVMe Instance Storage",
        "Amazon EC2 NVMe Instance Storage*",
        "nvme_card",
        "Microsoft NVMe Direct Disk*",
        "Microsoft NVMe Direct Disk v[12]",
    ] {
        by_model(model).unwrap_or_else(|e| panic!("{model}: {e}"));
    }
    for glob in [
        "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*",
        "/dev/disk/by-id/google-local-nvme-ssd-*",
        "/dev/disk/by-id/nvme-Microsoft_NVMe_Direct_Disk*",
        "/dev/disk/by-id/nvme-nvme.1d0f-4157*",
        // One disk named exactly is taken as meant, a network volume too.
        "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0aaaaaaaaaaaaaaaa",
        // by-path names no model or serial: not judged.
        "/dev/disk/by-path/pci-0000:00:1f.0-nvme-*",
    ] {
        by_id(glob).unwrap_or_else(|e| panic!("{glob}: {e}"));
    }
    // The cache scripts put a cache in front of a network volume on purpose.
    Bcache::new(BcacheConfig {
        fast: "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0fast00000000001".into(),
        slow: "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0slow00000000002".into(),
        mode: BcacheMode::Writeback,
        sequential_cutoff: 0,
    })
    .unwrap();
}
