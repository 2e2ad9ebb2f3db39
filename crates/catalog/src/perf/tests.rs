//! `perf`'s tests.

use super::*;
use crate::model::Catalog;

/// What a volume of the type at `size_gib` delivers, with the rules' defaults.
fn perf_at(vt: &VolumeType, size_gib: u64) -> Performance {
    performance(
        vt,
        &resolve(vt, &VolumeConfig::new(size_gib, None, None)).unwrap(),
    )
}

/// Why the rules refuse a volume of the type of `size_gib` with `iops` and `mibs`.
fn refused(vt: &VolumeType, size_gib: u64, iops: Option<u64>, mibs: Option<f64>) -> RuleError {
    resolve(vt, &VolumeConfig::new(size_gib, iops, mibs)).unwrap_err()
}

#[test]
fn gp3_refuses_16000_iops_on_20_gib_naming_the_rule() {
    let c = Catalog::embedded();
    let e = refused(c.volume_type("gp3").unwrap(), 20, Some(16000), None);
    assert_eq!(e.rule, "iops_per_gib");
    // 500 IOPS/GiB x 20 GiB = 10,000; 16,000 / 500 = 32 GiB.
    assert_eq!(
        e.message,
        "gp3 allows at most 500 IOPS per GiB: 20 GiB allows 10,000; use at least 32 GiB"
    );
}

#[test]
fn included_iops_come_at_every_size_and_the_ratio_bounds_only_what_is_above() {
    let c = Catalog::embedded();
    for t in ["gp3", "premium-ssd-v2"] {
        let vt = c.volume_type(t).unwrap();
        // 1 GiB: 3,000 IOPS included although 500 x 1 = 500.
        assert_eq!(perf_at(vt, 1).baseline_iops, Some(3000.0), "{t}");
        // 7 GiB allows 3,500: 3,500 is fine, 3,501 needs 8 GiB.
        assert!(resolve(vt, &VolumeConfig::new(7, Some(3500), None)).is_ok());
        let e = refused(vt, 7, Some(3501), None);
        assert_eq!(e.rule, "iops_per_gib");
        assert!(
            e.message
                .ends_with("7 GiB allows 3,500; use at least 8 GiB"),
            "{e}"
        );
        // Below 6 GiB the included 3,000 are the limit.
        let e = refused(vt, 2, Some(3001), None);
        assert!(
            e.message
                .ends_with("2 GiB allows 3,000; use at least 7 GiB"),
            "{e}"
        );
    }
}

#[test]
fn io1_throughput_stops_at_500_mibs_until_32000_iops() {
    // EBS user guide, Provisioned IOPS SSD volumes: 256 KiB I/O reach 500 MiB/s at 2,000 IOPS and
    // stay there to 32,000 IOPS; above, 16 KiB per IOPS: 48,000 IOPS give 750, 64,000 give 1,000.
    let c = Catalog::embedded();
    let vt = c.volume_type("io1").unwrap();
    for (iops, mibs) in [
        (100u64, 25.0),
        (2000, 500.0),
        (4000, 500.0),
        (32000, 500.0),
        (48000, 750.0),
        (64000, 1000.0),
    ] {
        let size = iops.div_ceil(50).max(4);
        let r = resolve(vt, &VolumeConfig::new(size, Some(iops), None)).unwrap();
        assert_eq!(
            performance(vt, &r).baseline_throughput_mibs,
            Some(mibs),
            "{iops} IOPS"
        );
    }
}

#[test]
fn gp3_throughput_is_provisioned_in_whole_mibs() {
    // The EC2 API's Throughput is an integer (MiB/s): 125.5 was priced at $0.02 above 125.
    let c = Catalog::embedded();
    let gp3 = c.volume_type("gp3").unwrap();
    let e = refused(gp3, 10, None, Some(125.5));
    assert_eq!(e.rule, "throughput_step");
    assert_eq!(
        e.message,
        "gp3 throughput is provisioned in whole steps of 1 MiB/s: 125.5 MiB/s is not one; use 126 MiB/s"
    );
    assert!(resolve(gp3, &VolumeConfig::new(10, None, Some(126.0))).is_ok());
}

#[test]
fn premium_ssd_v2_throughput_is_provisioned_in_whole_mb_per_s() {
    // Azure's diskMBpsReadWrite is an integer of 10^6 bytes a second: 300 MiB/s (314.57 MB/s)
    // was priced as such, though only 315 MB/s can be provisioned.
    let c = Catalog::embedded();
    let vt = c.volume_type("premium-ssd-v2").unwrap();
    let e = refused(vt, 100, None, Some(300.0));
    assert_eq!(e.rule, "throughput_step");
    assert_eq!(
        e.message,
        "premium-ssd-v2 throughput is provisioned in whole steps of 0.9537 MiB/s (1 MB/s, 10^6 bytes): 300 MiB/s is not one; use 300.41 MiB/s"
    );
    // The suggestion, as typed, is 315 MB/s exactly; so is the exact figure.
    let mb315 = 315e6 / (1u64 << 20) as f64;
    for typed in [300.41, mb315] {
        let r = resolve(vt, &VolumeConfig::new(100, None, Some(typed))).unwrap();
        assert_eq!(r.throughput_mibs, Some(mb315), "{typed}");
    }
    // 300.4 is 314.99 MB/s: not a step, and not a figure shown for one.
    assert_eq!(refused(vt, 100, None, Some(300.4)).rule, "throughput_step");
    // Hyperdisk Balanced: whole MiB/s (the Compute Engine API's provisionedThroughput).
    let hd = c.volume_type("hyperdisk-balanced").unwrap();
    assert_eq!(refused(hd, 100, None, Some(140.5)).rule, "throughput_step");
    let e = refused(hd, 100, None, Some(1140.5)).message;
    assert!(e.ends_with("use 1141 MiB/s"), "{e}");
    assert!(!e.contains("MB/s"), "{e}");
}

#[test]
fn io2_throughput_is_0_256_mibs_per_iops_to_4000() {
    // EBS user guide, io2 Block Express: "up to 0.256 MiB/s per provisioned IOPS", 4,000 MiB/s
    // "at 16,000 IOPS or higher". It was io1's 0.25, marked weak as assumed.
    let c = Catalog::embedded();
    let vt = c.volume_type("io2").unwrap();
    for (iops, mibs) in [
        (1000u64, 256.0),
        (10000, 2560.0),
        (15625, 4000.0),
        (16000, 4000.0),
    ] {
        let r = resolve(vt, &VolumeConfig::new(100, Some(iops), None)).unwrap();
        assert_eq!(
            performance(vt, &r).baseline_throughput_mibs,
            Some(mibs),
            "{iops} IOPS"
        );
    }
    assert!(!matches!(
        vt.throughput,
        ThroughputRule::PerIops { weak: true, .. }
    ));
}

#[test]
fn gp3_throughput_needs_iops() {
    let c = Catalog::embedded();
    let e = refused(c.volume_type("gp3").unwrap(), 100, None, Some(1000.0));
    // 3,000 IOPS x 0.25 = 750 MiB/s; 1,000 / 0.25 = 4,000 IOPS.
    assert_eq!(e.rule, "throughput_per_iops");
    assert!(e.message.contains("provision at least 4,000 IOPS"), "{e}");
}

#[test]
fn gp3_limits_are_the_2025_ones() {
    let c = Catalog::embedded();
    let gp3 = c.volume_type("gp3").unwrap();
    // 80,000 IOPS needs 160 GiB (80,000 / 500); 2,000 MiB/s needs 8,000 IOPS.
    assert!(resolve(gp3, &VolumeConfig::new(160, Some(80000), Some(2000.0))).is_ok());
    assert_eq!(refused(gp3, 200, Some(80001), None).rule, "iops_range");
    assert!(resolve(gp3, &VolumeConfig::new(65536, None, None)).is_ok());
    assert_eq!(refused(gp3, 65537, None, None).rule, "size");
}

#[test]
fn gp2_burst_lasts_bucket_over_burst_minus_baseline() {
    let c = Catalog::embedded();
    let gp2 = c.volume_type("gp2").unwrap();
    let p = perf_at(gp2, 100);
    // 100 GiB x 3 = 300 IOPS baseline; 5.4M / (3,000 - 300) = 2,000 s.
    assert_eq!(p.baseline_iops, Some(300.0));
    assert_eq!(p.burst_iops, Some(3000.0));
    assert_eq!(p.burst_seconds, Some(2000.0));
    // 300 IOPS x 256 KiB = 75 MiB/s sustained; 128 while credits last.
    assert_eq!(p.baseline_throughput_mibs, Some(75.0));
    assert_eq!(p.burst_throughput_mibs, Some(128.0));
    // 10 GiB: 30 IOPS -> min 100.
    let p = perf_at(gp2, 10);
    assert_eq!(p.baseline_iops, Some(100.0));
    // 1,000 GiB: 3,000 baseline, no burst; 250 MiB/s from 334 GiB.
    let p = perf_at(gp2, 1000);
    assert_eq!(p.baseline_iops, Some(3000.0));
    assert_eq!(p.burst_iops, None);
    assert_eq!(p.baseline_throughput_mibs, Some(250.0));
    // 200 GiB: 600 IOPS x 256 KiB = 150 sustained, 250 while credits last.
    let p = perf_at(gp2, 200);
    assert_eq!(p.baseline_throughput_mibs, Some(150.0));
    assert_eq!(p.burst_throughput_mibs, Some(250.0));
    // Max 16,000 at 5,334 GiB.
    let p = perf_at(gp2, 6000);
    assert_eq!(p.baseline_iops, Some(16000.0));
    assert!(resolve(gp2, &VolumeConfig::new(100, Some(3000), None)).is_err());
}

#[test]
fn gp2_sustained_throughput_is_baseline_iops_times_256_kib() {
    // EBS user guide: gp2 throughput = IOPS x I/O size, an I/O of up to 256 KiB counting as
    // one, at most 128 MiB/s to 170 GiB and 250 above; 334 GiB and more deliver 250 whatever
    // the credits. It was 128 MiB/s sustained for every size to 333 GiB.
    let c = Catalog::embedded();
    let gp2 = c.volume_type("gp2").unwrap();
    for (size, base, burst) in [
        (1, 25.0, Some(128.0)),
        (33, 25.0, Some(128.0)),
        (170, 127.5, Some(128.0)),
        (171, 128.25, Some(250.0)),
        (333, 249.75, Some(250.0)),
        (334, 250.0, None),
        (999, 250.0, None),
        (5334, 250.0, None),
    ] {
        let p = perf_at(gp2, size);
        assert_eq!(p.baseline_throughput_mibs, Some(base), "{size} GiB");
        assert_eq!(p.burst_throughput_mibs, burst, "{size} GiB");
    }
}

#[test]
fn st1_per_tib_throughput_and_one_mib_accounting() {
    let c = Catalog::embedded();
    let st1 = c.volume_type("st1").unwrap();
    let p = perf_at(st1, 1024);
    // 1 TiB: 40 MiB/s baseline, 250 burst; bucket 1 TiB = 1,048,576 MiB drains at 210 MiB/s:
    // 1,048,576 / 210 = 4,993.2 s.
    assert_eq!(p.baseline_throughput_mibs, Some(40.0));
    assert_eq!(p.burst_throughput_mibs, Some(250.0));
    assert!((p.burst_seconds.unwrap() - 4993.219).abs() < 0.01);
    // Small random I/O counts as 1 MiB: 40 IOPS sustained, 250 burst, 500 cap.
    assert_eq!(p.baseline_iops, Some(40.0));
    assert_eq!(p.burst_iops, Some(250.0));
    assert_eq!(p.max_iops, Some(500.0));
    // 16 TiB: 640 -> capped at 500 MiB/s, no burst.
    let p = perf_at(st1, 16384);
    assert_eq!(p.baseline_throughput_mibs, Some(500.0));
    assert_eq!(p.burst_throughput_mibs, None);
    assert_eq!(refused(st1, 100, None, None).rule, "size");
}

#[test]
fn a_size_tier_is_the_smallest_tier_holding_the_size() {
    let c = Catalog::embedded();
    let p = c.volume_type("premium-ssd").unwrap();
    let name = |g: u64| tier_for(p, g).map(|t| t.name.as_str());
    assert_eq!(name(1), Some("P1"));
    assert_eq!(name(4), Some("P1"));
    assert_eq!(name(5), Some("P2"));
    assert_eq!(name(256), Some("P15"));
    assert_eq!(name(257), Some("P20"));
    assert_eq!(name(32767), Some("P80"));
    assert_eq!(name(32768), None);
    // plan: 2,000 IOPS needs P20 (2,300); 130 MiB/s needs P20 too (150 MB/s = 143 MiB/s).
    assert_eq!(tier_size_meeting(p, Some(2000), None), Ok(512));
    assert_eq!(tier_size_meeting(p, None, Some(130.0)), Ok(512));
    let e = tier_size_meeting(p, Some(20001), None).unwrap_err();
    assert!(
        e.contains("at most 20,000 IOPS") && e.contains("P80"),
        "{e}"
    );
    // A tiered type takes no provisioned IOPS, and says which size would give them.
    let e = refused(p, 200, Some(2000), None);
    assert_eq!(e.rule, "iops_not_provisioned");
    assert!(e.message.contains("use at least 512 GiB"), "{e}");
}
