//! The catalog model's tests: the embedded catalog round-trips, and overlays merge by key.

use super::*;

#[test]
fn embedded_catalog_parses_and_round_trips() {
    let c = Catalog::embedded();
    assert!(c.volume_type("gp3").is_some());
    let again = Catalog::parse(&c.to_toml(), "round trip").unwrap();
    assert_eq!(c, again);
}

#[test]
fn merge_replaces_by_region_and_type_and_adds_new() {
    let mut c = Catalog::embedded();
    let n = c.volume_prices.len();
    let overlay = Catalog::parse(
        r#"
[[volume_price]]
region = "us-east-1"
type = "gp3"
storage_gb_month = 0.07
source = "negotiated"
date = "2026-10"

[[volume_price]]
region = "eu-north-1"
type = "sc1"
storage_gb_month = 0.0168
source = "negotiated"
date = "2026-10"
"#,
        "overlay",
    )
    .unwrap();
    c.merge(overlay);
    assert_eq!(c.volume_prices.len(), n + 1);
    assert_eq!(
        c.volume_price("us-east-1", "gp3").unwrap().storage_gb_month,
        0.07
    );
    // Untouched fields of other entries stay.
    assert_eq!(
        c.volume_price("us-east-1", "gp2").unwrap().storage_gb_month,
        0.10
    );
    assert!(c.volume_price("eu-north-1", "sc1").is_some());
}

/// An overlay of many entries (a 16 MiB file holds some 400,000 regions) is merged by key in a
/// map, not by scanning the merged list for each entry (minutes at that size; the time is a
/// benchmark's business, not a test's): every new entry is added once, in order, and an entry
/// whose key the catalog has replaces it in its place.
#[test]
fn a_large_overlay_merges_each_entry_by_key() {
    let n = 20_000;
    let region = |name: String, note: Option<&str>| Region {
        name,
        cloud: "aws".into(),
        weak: false,
        usage_prefix: None,
        note: note.map(str::to_string),
    };
    let mut regions: Vec<Region> = (0..n).map(|i| region(format!("r{i}"), None)).collect();
    regions.push(region("us-east-1".into(), Some("from the overlay")));
    regions.push(region("r7".into(), Some("second r7")));
    let overlay = Catalog {
        regions,
        ..Catalog::default()
    };
    let mut c = Catalog::embedded();
    let before = c.regions.len();
    let at = c
        .regions
        .iter()
        .position(|r| r.name == "us-east-1")
        .unwrap();
    c.merge(overlay);
    assert_eq!(c.regions.len(), before + n);
    assert_eq!(c.regions[at].note.as_deref(), Some("from the overlay"));
    assert_eq!(c.regions[before].name, "r0");
    assert_eq!(c.regions[before + n - 1].name, format!("r{}", n - 1));
    assert_eq!(c.regions[before + 7].note.as_deref(), Some("second r7"));
}
