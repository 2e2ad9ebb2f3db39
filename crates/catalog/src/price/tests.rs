//! `price`'s tests.

use super::*;

/// The embedded catalog's quote for a volume of `type_` in `region` of `size_gib`, with
/// `iops` and `mibs` provisioned.
fn quote(
    region: &str,
    type_: &str,
    size_gib: u64,
    iops: Option<u64>,
    mibs: Option<f64>,
) -> Result<Quote, PriceError> {
    let cfg = VolumeConfig::new(size_gib, iops, mibs);
    volume(&Catalog::embedded(), region, type_, &cfg)
}

#[test]
fn seed_001_cache_volume() {
    let q = quote("eu-north-1", "gp3", 36, Some(16000), Some(1000.0)).unwrap();
    // 36 x 0.0836 = 3.0096 -> 3.01; 13,000 x 0.0052 = 67.60; 875 x 0.0418 = 36.575 -> 36.58;
    // 3.01 + 67.60 + 36.58 = 107.19 (the bcache-on-EBS recipe [recipe-bcache-ebs]: $107.19).
    let got: Vec<f64> = q.items.iter().map(|i| i.monthly_cost_usd).collect();
    assert_eq!(got, vec![3.01, 67.60, 36.58]);
    assert_eq!(q.monthly_cost_usd, 107.19);
    assert!(q.weak);
}

#[test]
fn included_iops_and_throughput_are_not_billed() {
    let q = quote("us-east-1", "gp3", 100, Some(3000), Some(125.0)).unwrap();
    // 100 x $0.08 = $8.00; 3,000 IOPS and 125 MiB/s are included.
    assert_eq!(q.items.len(), 1);
    assert_eq!(q.monthly_cost_usd, 8.0);
    // io1 bills every provisioned IOPS: 100 x 0.125 = 12.50 + 1,000 x 0.065 = 65.00.
    let q = quote("us-east-1", "io1", 100, Some(1000), None).unwrap();
    assert_eq!(q.monthly_cost_usd, 77.5);
    // GCP local SSD comes in 375 GiB units.
    assert!(quote("us-central1", "local-ssd", 400, None, None).is_err());
    let q = quote("us-central1", "local-ssd", 750, None, None).unwrap();
    assert_eq!(q.monthly_cost_usd, 60.0);
}

#[test]
fn io2_tiers_apply_bracket_by_bracket() {
    let q = quote("us-east-1", "io2", 100, Some(70000), None).unwrap();
    // 100 x 0.125 = 12.50; 32,000 x 0.065 = 2,080.00; 32,000 x 0.0455 = 1,456.00;
    // 6,000 x 0.03185 = 191.10; total 3,739.60.
    let got: Vec<f64> = q.items.iter().map(|i| i.monthly_cost_usd).collect();
    assert_eq!(got, vec![12.50, 2080.00, 1456.00, 191.10]);
    assert_eq!(q.monthly_cost_usd, 3739.60);
    assert_eq!(q.items[2].name, "iops 32,001-64,000");
}

#[test]
fn unknown_things_list_close_matches() {
    let c = Catalog::embedded();
    let e = quote("eu-nort-1", "gp3", 10, None, None).unwrap_err();
    assert!(e.to_string().contains("did you mean eu-north-1"), "{e}");
    let e = quote("us-east-1", "gp4", 10, None, None).unwrap_err();
    assert!(e.to_string().contains("gp3"), "{e}");
    let e = instance(&c, "us-east-1", "m6id.xlarg").unwrap_err();
    assert!(e.to_string().contains("m6id.xlarge"), "{e}");
    // Nothing close: no guess, the region list once.
    let e = quote("mars-1", "gp3", 10, None, None)
        .unwrap_err()
        .to_string();
    assert!(!e.contains("did you mean"), "{e}");
    assert_eq!(e.matches("us-east-1").count(), 1, "{e}");
    let e = quote("us-east-1", "floppy", 10, None, None)
        .unwrap_err()
        .to_string();
    assert!(
        !e.contains("did you mean") && e.contains("the catalog has"),
        "{e}"
    );
    let e = instance(&c, "us-east-1", "zzzz").unwrap_err().to_string();
    assert!(
        !e.contains("did you mean") && e.contains("catalog show"),
        "{e}"
    );
    // A huge name is quoted cut short.
    let e = quote(&"x".repeat(5000), "gp3", 10, None, None)
        .unwrap_err()
        .to_string();
    assert!(e.len() < 500 && e.contains("xxx..."), "{e}");
    let e = quote("eu-north-1", "sc1", 500, None, None).unwrap_err();
    assert!(
        e.to_string().contains("it has one in ") && e.to_string().contains("us-east-1"),
        "{e}"
    );
    let e = quote("us-central1", "gp3", 500, None, None).unwrap_err();
    assert!(e.to_string().contains("pick one of the aws regions"), "{e}");
    assert!(
        e.to_string()
            .starts_with("gp3 is an aws type but us-central1 is a gcp region"),
        "{e}"
    );
}

/// Regression (QA): `price m6id.xlarge` asked for --size, then called it an unknown volume
/// type; an instance of another cloud than the region's had "no on-demand price".
#[test]
fn an_instance_name_or_cloud_is_named_as_such() {
    let c = Catalog::embedded();
    let e = quote("us-east-1", "m6id.xlarge", 10, None, None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "m6id.xlarge is an instance type, not a volume type: price it with `disktier price instance m6id.xlarge --region us-east-1`"
    );
    // An instance of another cloud than the region's: the suggestion names a region of its own
    // cloud, one that prices it when the catalog has one, so that it works as given (QA: it said
    // `--region us-east-1` for a GCP machine, which then failed as of the wrong cloud).
    let suggested = |region: &str, name: &str| {
        let msg = quote(region, name, 10, None, None).unwrap_err().to_string();
        let want = format!("{name} is an instance type, not a volume type: price it with `disktier price instance {name} --region ");
        msg.strip_prefix(&want)
            .and_then(|r| r.strip_suffix('`'))
            .unwrap_or_else(|| panic!("{msg}"))
            .to_string()
    };
    assert_eq!(suggested("us-east-1", "Standard_L8s_v3"), "eastus");
    assert!(instance(&c, "eastus", "Standard_L8s_v3").is_ok());
    // n1-standard-8 has no price in the catalog: a GCP region, where `price instance` says so.
    let region = suggested("us-east-1", "n1-standard-8");
    assert_eq!(c.region(&region).unwrap().cloud, "gcp");
    assert!(matches!(
        instance(&c, &region, "n1-standard-8"),
        Err(PriceError::NoPrice { .. })
    ));
    let e = instance(&c, "us-central1", "m6id.xlarge").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "m6id.xlarge is an aws instance type but us-central1 is a gcp region: pick one of the aws regions (us-east-1,"
        ),
        "{e}"
    );
}

/// Regression (QA): the hint for provisioned IOPS on a type whose IOPS follow size named AWS
/// types for a GCP disk, ignored local SSD's 375 GiB units, and told a size that already
/// delivers the IOPS to grow to itself.
#[test]
fn iops_on_a_size_scaled_type_name_a_real_size_and_the_clouds_own_types() {
    // 375 GiB of local SSD: 375 x 240 = 90,000 IOPS >= 1,000.
    let e = quote("us-central1", "local-ssd", 375, Some(1000), None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "local-ssd does not take provisioned IOPS: 375 GiB already delivers 90,000 IOPS, which is at least the 1,000 asked: leave --iops out"
    );
    // pd-ssd 100 GiB: 6,000 + 30 x 100 = 9,000.
    let e = quote("us-central1", "pd-ssd", 100, Some(9000), None).unwrap_err();
    assert!(
        e.to_string()
            .contains("100 GiB already delivers 9,000 IOPS"),
        "{e}"
    );
    // 9,001 IOPS: (9,001 - 6,000) / 30 = 100.03 -> 101 GiB; the GCP types priced in
    // us-central1 that take 9,001 provisioned IOPS, not gp3/io2.
    let e = quote("us-central1", "pd-ssd", 100, Some(9001), None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "pd-ssd does not take provisioned IOPS: its IOPS follow size (6,000 + 30 per GiB): for 9,001 IOPS use at least 101 GiB; or a type that takes 9,001 provisioned IOPS in us-central1: pd-extreme, hyperdisk-extreme"
    );
    // Local SSD in units: 200,000 / 240 = 833.3 -> 834 -> 3 x 375 = 1,125 GiB; pd-extreme
    // stops at 120,000, so only hyperdisk-extreme is named.
    let e = quote("us-central1", "local-ssd", 375, Some(200_000), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("for 200,000 IOPS use at least 1,125 GiB (3 x 375 GiB)")
            && e.ends_with("in us-central1: hyperdisk-extreme"),
        "{e}"
    );
    // Above what the rule ever gives: no size, the cap and where it is reached.
    let e = quote("us-east-1", "gp2", 100, Some(20_000), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("reach at most 16,000 IOPS (from 5,334 GiB): 20,000 cannot be had")
            && e.ends_with("in us-east-1: gp3, io1, io2"),
        "{e}"
    );
}

#[test]
fn price_instance_gives_the_store_figures_plan_ranks_it_by() {
    // Azure's Lsv3 size table gives one NVMe IOPS figure and MB/s; plan ranked L8s_v3 by
    // 400,000 IOPS and 2,000 MB/s while `price instance` said 'performance not in the catalog'.
    let c = Catalog::embedded();
    let q = instance(&c, "eastus", "Standard_L8s_v3").unwrap();
    assert_eq!(q.performance.baseline_iops, Some(400000.0));
    assert_eq!(
        q.performance.baseline_throughput_mibs,
        Some(2000.0 * MIBS_PER_MBPS)
    );
    assert!(q
        .performance
        .notes
        .iter()
        .any(|n| n == "instance store throughput: 2,000 MB/s (1,907.35 MiB/s)"));
    // EC2 publishes read and write IOPS: the lower is counted, as plan does.
    let q = instance(&c, "us-east-1", "m6id.xlarge").unwrap();
    assert_eq!(q.performance.baseline_iops, Some(33542.0));
    assert_eq!(q.performance.baseline_throughput_mibs, None);
}

#[test]
fn an_ephemeral_type_says_its_data_is_lost_on_stop() {
    let q = quote("us-central1", "local-ssd", 375, None, None).unwrap();
    assert_eq!(
        q.performance.notes[0],
        "local-ssd data is lost when the machine stops (kept across a reboot): only for data you can rebuild"
    );
    let q = quote("us-central1", "pd-ssd", 375, None, None).unwrap();
    assert!(q.performance.notes.iter().all(|n| !n.contains("lost")));
}

#[test]
fn only_billed_weak_iops_tiers_make_a_price_weak() {
    // us-east-1 io2: the first tier (to 32,000) is confirmed, the upper two are weak.
    assert!(
        !quote("us-east-1", "io2", 100, Some(500), None)
            .unwrap()
            .weak
    );
    assert!(
        !quote("us-east-1", "io2", 100, Some(32000), None)
            .unwrap()
            .weak
    );
    assert!(
        quote("us-east-1", "io2", 100, Some(32001), None)
            .unwrap()
            .weak
    );
}

/// `price instance --format json` gives the local disks as figures (count, size, total, the
/// published IOPS, when they are lost), not only inside a note's sentence; an EBS-only instance
/// has a count of 0, and a volume's quote has no such field.
#[test]
fn price_instance_json_carries_the_local_disks() {
    let c = Catalog::embedded();
    let json = |q: &Quote| serde_json::to_value(q).unwrap();
    let v = json(&instance(&c, "us-east-1", "i4i.8xlarge").unwrap());
    assert_eq!(
        v["instance_store"],
        serde_json::json!({
            "count": 4, "size_gb": 1875, "total_gib": 6984,
            "read_iops": null, "write_iops": null, "throughput_mbps": null,
            "lost_when": "lost when the instance stops or terminates (kept across a reboot)"
        })
    );
    let v = json(&instance(&c, "us-east-1", "m6id.xlarge").unwrap());
    assert_eq!(v["instance_store"]["read_iops"], 67083);
    assert_eq!(v["instance_store"]["write_iops"], 33542);
    let v = json(&instance(&c, "us-east-1", "m6i.xlarge").unwrap());
    assert_eq!(v["instance_store"]["count"], 0);
    assert!(v["instance_store"].get("lost_when").is_none());
    let v = json(&quote("us-east-1", "gp3", 100, None, None).unwrap());
    assert!(v.get("instance_store").is_none());
}

/// A size tier's monthly price is written as money, as the line's amount is: thousands
/// separated and two decimals (before: "at $3604.11 per month", "at $0.3 per month").
#[test]
fn a_size_tiers_price_is_written_as_money() {
    let detail = |t, gib| {
        quote("eastus", t, gib, None, None).unwrap().items[0]
            .detail
            .clone()
    };
    assert_eq!(
        detail("premium-ssd", 32767),
        "32,767 GiB billed as P80 (32,767 GiB) at $3,604.11 per month"
    );
    assert_eq!(
        detail("standard-ssd", 4),
        "4 GiB billed as E1 (4 GiB) at $0.30 per month"
    );
    assert_eq!(tier_usd(1.2345), "$1.2345");
}

/// A volume type given as an instance type says so, as the reverse does (before: "unknown
/// instance type 'gp3': `disktier catalog show` lists the catalog's").
#[test]
fn a_volume_type_given_as_an_instance_type_says_so() {
    let cat = Catalog::embedded();
    let e = instance(&cat, "us-east-1", "gp3").unwrap_err();
    assert_eq!(
        e.to_string(),
        "gp3 is a volume type, not an instance type: price it with `disktier price gp3 --size 100GiB`, or give an instance type (`disktier catalog show` lists them)"
    );
    assert!(matches!(
        instance(&cat, "us-east-1", "m6id.xlarg"),
        Err(PriceError::UnknownInstance { .. })
    ));
}

/// QA: an overlay's price with a blank source was quoted as "source: m6i.large us-east-1:
/// (2026-01)"; the quote now says the figure is unsourced.
#[test]
fn a_price_without_a_source_is_quoted_as_unsourced() {
    let mut cat = Catalog::embedded();
    cat.merge(
        Catalog::parse(
            "[[instance_price]]\nregion = \"us-east-1\"\ntype = \"m6id.xlarge\"\nusd_per_hour = 0.1\nsource = \" \"\ndate = \"\"\n",
            "overlay.toml",
        )
        .unwrap(),
    );
    let q = instance(&cat, "us-east-1", "m6id.xlarge").unwrap();
    assert_eq!(
        q.sources[0],
        "m6id.xlarge us-east-1: UNSOURCED: no source given (catalog check reports it) (no date)"
    );
    assert!(q.sources[1].starts_with("m6id.xlarge instance store: [aws-instance-types]"));
    assert_eq!(cited("[x] page", "2026-01"), "[x] page (2026-01)");
}

/// QA: `price instance n1-standard-8 --region us-central1` said only "the catalog has no
/// on-demand price for n1-standard-8 in us-central1: add one with --catalog FILE", as if one
/// region's price were missing; no region has one, since none was found in a primary source.
#[test]
fn an_item_priced_nowhere_says_no_primary_source_gave_a_price() {
    let c = Catalog::embedded();
    let e = instance(&c, "us-central1", "n1-standard-8")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "the catalog has no on-demand price for n1-standard-8 in us-central1 nor in any region: none was found in a primary source, so the catalog leaves it unpriced rather than guess: add one with --catalog FILE, citing the cloud's price page as its source");
    let e = instance(&c, "us-west-2", "m6i.xlarge")
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("in us-west-2 (it has one in us-east-1): add one with --catalog FILE"),
        "{e}"
    );
}
