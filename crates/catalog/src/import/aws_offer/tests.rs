use super::stream::{parse_count, parse_mibs, parse_size_gib, parse_store};
use super::*;
use crate::model::Store;

fn run(json: &str, region: &str) -> Result<(Catalog, Summary), ImportError> {
    import_from(|| Ok(json.as_bytes()), Path::new("inline.json"), region)
}

/// Imports a file holding `json` for us-east-1: the catalog, and how often the file was opened.
fn opened_file(json: &str) -> (Catalog, usize) {
    let mut opened = 0;
    let (cat, _) = import_from(
        || {
            opened += 1;
            Ok(json.as_bytes())
        },
        Path::new("f.json"),
        "us-east-1",
    )
    .unwrap();
    (cat, opened)
}

fn term(sku: &str, unit: &str, usd: &str) -> String {
    format!(
        r#""{sku}": {{"{sku}.JRTCKXETXF": {{"priceDimensions": {{"{sku}.JRTCKXETXF.6YS6EN2CT7": {{"unit": "{unit}", "pricePerUnit": {{"USD": "{usd}"}}}}}}}}}}"#
    )
}

#[test]
fn terms_before_products_and_usagetype_prefixes_without_region_code() {
    // Older files carry no regionCode: the usagetype prefix decides ("EUN1-" is eu-north-1,
    // none is us-east-1). Terms may come first: their prices wait for the products.
    let json = format!(
        r#"{{"terms": {{"OnDemand": {{{}, {}}}}},
           "products": {{
             "A": {{"productFamily": "Storage", "attributes": {{"usagetype": "EUN1-EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}},
             "B": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}
           }},
           "publicationDate": "2026-07-01T00:00:00Z"}}"#,
        term("A", "GB-Mo", "0.0475"),
        term("B", "GB-Mo", "0.045")
    );
    let (cat, _) = run(&json, "eu-north-1").unwrap();
    assert_eq!(cat.volume_prices.len(), 1);
    assert_eq!(cat.volume_prices[0].storage_gb_month, 0.0475);
    let (cat, _) = run(&json, "us-east-1").unwrap();
    assert_eq!(cat.volume_prices[0].storage_gb_month, 0.045);
    assert_eq!(cat.date.as_deref(), Some("2026-07-01"));
}

/// Terms first in a stream that cannot be read twice: a clear error, not every SKU's
/// prices held in memory (#13).
#[test]
fn terms_first_in_a_stream_is_an_error_and_in_a_file_two_passes() {
    let json = format!(
        r#"{{"terms": {{"OnDemand": {{{}, {}}}}},
           "products": {{"B": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}}}}}"#,
        term("B", "GB-Mo", "0.045"),
        term("UNRELATED", "Hrs", "9.99")
    );
    let e = import(json.as_bytes(), Path::new("-"), "us-east-1").unwrap_err();
    // The error wraps its cause (shown once, by the chain): read the whole chain.
    let chain = format!(
        "{e}: {}",
        std::error::Error::source(&e)
            .map(|s| s.to_string())
            .unwrap_or_default()
    );
    assert!(chain.contains("save it to a file"), "{chain}");
    let (cat, opened) = opened_file(&json);
    assert_eq!(opened, 2);
    assert_eq!(cat.volume_prices[0].storage_gb_month, 0.045);
    // Products first: one pass.
    let json = format!(
        r#"{{"products": {{"B": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}}}, "terms": {{"OnDemand": {{{}}}}}}}"#,
        term("B", "GB-Mo", "0.045")
    );
    assert_eq!(opened_file(&json).1, 1);
}

#[test]
fn an_incomplete_price_list_fails_check_and_is_not_written() {
    // gp3 storage without its IOPS and throughput prices: `catalog check` would fail.
    let json = format!(
        r#"{{"products": {{"A": {{"productFamily": "Storage", "attributes": {{"regionCode": "us-east-1", "usagetype": "EBS:VolumeUsage.gp3", "volumeApiName": "gp3"}}}}}},
           "terms": {{"OnDemand": {{{}}}}}}}"#,
        term("A", "GB-Mo", "0.08")
    );
    let e = run(&json, "us-east-1").unwrap_err();
    assert!(e.to_string().contains("no IOPS price"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.json");
    std::fs::write(&input, json).unwrap();
    let out = dir.path().join("out.toml");
    assert!(import_file(&input, "us-east-1", &out).is_err());
    assert!(!out.exists());
}

#[test]
fn parses_free_text_attributes() {
    assert_eq!(parse_size_gib("16 TiB"), Some(16384));
    assert_eq!(parse_size_gib("64 TiB"), Some(65536));
    assert_eq!(parse_count("16,000"), Some(16000));
    assert_eq!(parse_count("Up to 256000 IOPS"), Some(256000));
    assert_eq!(parse_mibs("1,000 MiB/s"), Some(1000.0));
    assert_eq!(
        parse_store("2 x 1900 NVMe SSD"),
        Some(Store {
            count: 2,
            size_gb: 1900
        })
    );
    assert_eq!(parse_store("EBS only"), None);
}

/// QA: a storage price of "NaN" (or 0) was dropped with the type, and the import then said the
/// file had "no region codes found in its products". The unusable price is named instead.
#[test]
fn an_unusable_storage_price_is_named() {
    for usd in ["NaN", "0", "-0.045", "inf"] {
        let json = format!(
            r#"{{"products": {{"B": {{"productFamily": "Storage", "attributes": {{"regionCode": "us-east-1", "usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}}},
               "terms": {{"OnDemand": {{{}}}}}}}"#,
            term("B", "GB-Mo", usd)
        );
        let e = run(&json, "us-east-1").unwrap_err().to_string();
        assert!(
            e.starts_with("inline.json prices st1 storage (SKU B) at ")
                && e.contains(" USD per GB-Mo, which is no price (a number above 0)"),
            "{usd}: {e}"
        );
        assert!(!e.contains("region"), "{usd}: {e}");
    }
}

/// QA: a product holding a 200 MB string took 410 MB; a product (or a SKU's terms, or a key)
/// past the item limit is now refused, and the terms skipped unbuilt are not counted.
#[test]
fn a_product_past_the_item_limit_is_refused() {
    let big = "x".repeat((crate::import::ITEM_LIMIT + (1 << 20)) as usize);
    let json = format!(
        r#"{{"products": {{"A": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1", "note": "{big}"}}}}}},
           "terms": {{"OnDemand": {{{}}}}}}}"#,
        term("A", "GB-Mo", "0.045")
    );
    let e = run(&json, "us-east-1").unwrap_err();
    assert!(matches!(e, ImportError::Read { .. }), "{e:?}");
    let why = std::error::Error::source(&e).unwrap().to_string();
    assert!(why.contains("is over 16 MiB"), "{why}");
    // The same long string in a SKU nobody keeps, read once the products are known, is skipped.
    let json = format!(
        r#"{{"products": {{"A": {{"productFamily": "Storage", "attributes": {{"usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}}},
           "terms": {{"OnDemand": {{{}, "Z": {{"note": "{big}"}}}}}}}}"#,
        term("A", "GB-Mo", "0.045")
    );
    let (cat, _) = run(&json, "us-east-1").unwrap();
    assert!(cat.volume_price("us-east-1", "st1").is_some());
}

/// Two SKUs that price one type's storage differently in the region are refused naming both
/// (before, the later SKU in SKU order was the price, whichever it was); two that price it
/// alike are one price.
#[test]
fn two_skus_pricing_one_volume_differently_are_refused() {
    let offer = |b_usd: &str| {
        format!(
            r#"{{"products": {{
                 "A": {{"productFamily": "Storage", "attributes": {{"regionCode": "us-east-1", "usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}},
                 "B": {{"productFamily": "Storage", "attributes": {{"regionCode": "us-east-1", "usagetype": "EBS:VolumeUsage.st1", "volumeApiName": "st1"}}}}
               }},
               "terms": {{"OnDemand": {{{}, {}}}}},
               "publicationDate": "2026-07-01T00:00:00Z"}}"#,
            term("A", "GB-Mo", "0.045"),
            term("B", "GB-Mo", b_usd)
        )
    };
    let e = run(&offer("0.20"), "us-east-1").unwrap_err().to_string();
    assert_eq!(
        e,
        "inline.json prices st1 storage twice, and differently: SKU A at 0.045 USD per GB-Mo and SKU B at 0.2 USD per GB-Mo; which is the region's is not clear, so nothing is written: check it is the offer file of one region as AWS publishes it, or write the price you mean in a --catalog file"
    );
    let (cat, _) = run(&offer("0.0450000000"), "us-east-1").unwrap();
    assert_eq!(cat.volume_prices.len(), 1);
    assert_eq!(cat.volume_prices[0].storage_gb_month, 0.045);
}

/// Two SKUs that price one instance type's Linux on-demand hour differently are refused naming
/// both, as two of a volume's storage are (before, the first in SKU order was kept and the
/// other dropped without a word); two that agree are one price.
#[test]
fn two_skus_pricing_one_instance_type_differently_are_refused() {
    let offer = |b_usd: &str| {
        let product = |sku: &str| {
            format!(
                r#""{sku}": {{"productFamily": "Compute Instance", "attributes": {{"regionCode": "us-east-1", "instanceType": "m6id.xlarge", "storage": "1 x 237 NVMe SSD", "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used", "licenseModel": "No License required"}}}}"#
            )
        };
        format!(
            r#"{{"products": {{{}, {}}},
               "terms": {{"OnDemand": {{{}, {}}}}},
               "publicationDate": "2026-07-01T00:00:00Z"}}"#,
            product("A"),
            product("B"),
            term("A", "Hrs", "0.2373"),
            term("B", "Hrs", b_usd)
        )
    };
    let e = run(&offer("0.0237"), "us-east-1").unwrap_err().to_string();
    assert_eq!(
        e,
        "inline.json prices m6id.xlarge instance hours twice, and differently: SKU A at 0.2373 USD per Hrs and SKU B at 0.0237 USD per Hrs; which is the region's is not clear, so nothing is written: check it is the offer file of one region as AWS publishes it, or write the price you mean in a --catalog file"
    );
    let (cat, _) = run(&offer("0.2373000000"), "us-east-1").unwrap();
    assert_eq!(cat.instance_prices.len(), 1);
    assert_eq!(cat.instance_prices[0].usd_per_hour, 0.2373);
}

/// Two SKUs of one io2 IOPS tier (left item of session 25): both were taken as tiers, so the
/// list had a second tier 2 without a bound and the import failed `catalog check` with "up_to
/// = (none) is missing on a tier that is not the last", which names nothing in the file. Now a
/// tier is priced once like any dimension: alike, one tier; different, refused naming both.
#[test]
fn two_skus_of_one_io2_iops_tier_are_one_tier_or_refused() {
    let offer = |b_usd: &str| {
        let product = |sku: &str, usage: &str| {
            format!(
                r#""{sku}": {{"productFamily": "System Operation", "attributes": {{"regionCode": "us-east-1", "usagetype": "{usage}", "volumeApiName": "io2", "group": "EBS IOPS"}}}}"#
            )
        };
        format!(
            r#"{{"products": {{
                 "S": {{"productFamily": "Storage", "attributes": {{"regionCode": "us-east-1", "usagetype": "EBS:VolumeUsage.io2", "volumeApiName": "io2"}}}},
                 {}, {}, {}, {}
               }},
               "terms": {{"OnDemand": {{{}, {}, {}, {}, {}}}}},
               "publicationDate": "2026-07-01T00:00:00Z"}}"#,
            product("T1", "EBS:VolumeP-IOPS.io2"),
            product("T2", "EBS:VolumeP-IOPS.io2.tier2"),
            product("T2B", "EBS:VolumeP-IOPS.io2.tier2"),
            product("T3", "EBS:VolumeP-IOPS.io2.tier3"),
            term("S", "GB-Mo", "0.125"),
            term("T1", "IOPS-Mo", "0.065"),
            term("T2", "IOPS-Mo", "0.0455"),
            term("T2B", "IOPS-Mo", b_usd),
            term("T3", "IOPS-Mo", "0.03185"),
        )
    };
    let (cat, _) = run(&offer("0.0455"), "us-east-1").unwrap();
    let tiers = cat.volume_prices[0].iops_tiers.as_ref().unwrap();
    let got: Vec<(Option<u64>, f64)> = tiers.iter().map(|t| (t.up_to, t.usd)).collect();
    assert_eq!(
        got,
        [(Some(32000), 0.065), (Some(64000), 0.0455), (None, 0.03185)]
    );
    let e = run(&offer("0.05"), "us-east-1").unwrap_err().to_string();
    assert!(
        e.starts_with("inline.json prices io2 IOPS tier 2 twice, and differently: SKU T2 at 0.0455 USD per IOPS-Mo and SKU T2B at 0.05 USD per IOPS-Mo;"),
        "{e}"
    );
}
