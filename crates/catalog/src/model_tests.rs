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

/// An overlay of many entries (a 16 MiB file holds some 400,000 regions) merges in linear
/// time: it scanned the merged list for each entry, quadratic, minutes at that size.
#[test]
fn a_large_overlay_merges_in_linear_time() {
    let n = 200_000;
    let overlay = Catalog {
        regions: (0..n)
            .map(|i| Region {
                name: format!("r{i}"),
                cloud: "aws".into(),
                weak: false,
                usage_prefix: None,
                note: None,
            })
            .collect(),
        ..Catalog::default()
    };
    let mut c = Catalog::embedded();
    let before = c.regions.len();
    let t = std::time::Instant::now();
    c.merge(overlay);
    let took = t.elapsed();
    assert_eq!(c.regions.len(), before + n);
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}
