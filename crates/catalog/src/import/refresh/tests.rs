//! `catalog refresh azure`'s size-tier meters.

use super::*;

fn item(product: &str, sku: &str, meter: &str, usd: f64) -> String {
    format!(
        r#"{{"armRegionName":"eastus","serviceName":"Storage","productName":"{product}","skuName":"{sku}","meterName":"{meter}","armSkuName":"","type":"Consumption","currencyCode":"USD","retailPrice":{usd},"unitOfMeasure":"1/Month","effectiveStartDate":"2026-10-01T00:00:00Z"}}"#
    )
}

#[test]
fn azure_size_tier_meters_become_a_whole_tier_table() {
    let c = Catalog::embedded();
    let tiers = c
        .volume_type("premium-ssd")
        .unwrap()
        .size_tiers
        .clone()
        .unwrap();
    let mut items: Vec<String> = tiers
        .iter()
        .enumerate()
        .map(|(i, t)| {
            item(
                "Premium SSD Managed Disks",
                &format!("{} LRS", t.name),
                &format!("{} LRS Disk", t.name),
                1.0 + i as f64,
            )
        })
        .collect();
    // Other meters of the same product and a partial Standard SSD table are left out.
    items.push(item(
        "Premium SSD Managed Disks",
        "P15 LRS",
        "P15 LRS Disk Mount",
        99.0,
    ));
    items.push(item(
        "Standard SSD Managed Disks",
        "E10 LRS",
        "E10 LRS Disk",
        9.6,
    ));
    let page = format!(r#"{{"Items":[{}]}}"#, items.join(","));
    let (cat, summary) = refresh(
        Cloud::Azure,
        [(std::path::PathBuf::from("page.json"), page.as_bytes())],
        "eastus",
    )
    .unwrap();
    assert_eq!(summary.volume_prices, 1);
    let p = cat.volume_price("eastus", "premium-ssd").unwrap();
    assert!(!p.weak);
    let got = p.tier_prices.as_ref().unwrap();
    assert_eq!(got.len(), tiers.len());
    // P15 is the 7th tier: 256 GiB at 7.0.
    assert_eq!(got[6].size_gib, 256);
    assert_eq!(got[6].usd_month, 7.0);
    assert!(cat.volume_price("eastus", "standard-ssd").is_none());
}

/// QA: the Retail Prices API prices Premium SSD v2 throughput per MB/s (meter "Provisioned
/// Throughput (MBps)"); it was stored as the price per MiB/s. A MiB/s is 1.048576 MB/s.
#[test]
fn azure_throughput_per_mbps_is_stored_per_mibs() {
    let meter = |meter: &str, unit: &str, usd: f64| {
        format!(
            r#"{{"armRegionName":"eastus","serviceName":"Storage","productName":"Azure Premium SSD v2","skuName":"Premium LRS","meterName":"{meter}","armSkuName":"","type":"Consumption","currencyCode":"USD","retailPrice":{usd},"unitOfMeasure":"{unit}","effectiveStartDate":"2026-10-01T00:00:00Z"}}"#
        )
    };
    let page = format!(
        r#"{{"Items":[{},{},{}]}}"#,
        meter("Premium LRS Provisioned Capacity", "1 GiB/Hour", 0.000112),
        meter("Premium LRS Provisioned IOPS", "1/Hour", 0.0000068),
        meter(
            "Premium LRS Provisioned Throughput (MBps)",
            "1/Hour",
            0.000054
        )
    );
    let (cat, _) = refresh(
        Cloud::Azure,
        [(std::path::PathBuf::from("page.json"), page.as_bytes())],
        "eastus",
    )
    .unwrap();
    let p = cat.volume_price("eastus", "premium-ssd-v2").unwrap();
    // $0.000054 per MB/s-hour x 730 h = $0.03942 per MB/s-month = $0.041335 per MiB/s-month.
    let per_mibs = p.throughput_mibs_month.unwrap();
    assert!((per_mibs - 0.03942 * 1.048576).abs() < 1e-12, "{per_mibs}");
    // Storage and IOPS are per GiB and per IOPS, unconverted; the note says what was converted.
    assert!((p.storage_gb_month - 0.000112 * 730.0).abs() < 1e-12);
    assert!((p.iops_month.unwrap() - 0.0000068 * 730.0).abs() < 1e-12);
    assert!(
        p.note.as_deref().unwrap().contains("per MB/s x 1.048576"),
        "{p:?}"
    );
}

/// QA: a page whose one item held a 200 MB string took 410 MB; an item is now bounded, and what
/// is skipped unbuilt (a long field outside the item array) is not counted against it.
#[test]
fn an_item_past_the_item_limit_is_refused_and_skipped_parts_are_not_counted() {
    let big = "x".repeat((crate::import::ITEM_LIMIT + (1 << 20)) as usize);
    let vm = r#"{"armRegionName":"eastus","serviceName":"Virtual Machines","productName":"Virtual Machines Lsv3 Series","skuName":"L8s v3","meterName":"L8s v3","armSkuName":"Standard_L8s_v3","type":"Consumption","currencyCode":"USD","retailPrice":0.624,"unitOfMeasure":"1 Hour","effectiveStartDate":"2026-10-01T00:00:00Z"}"#;
    let run = |page: String| {
        refresh(
            Cloud::Azure,
            [(std::path::PathBuf::from("page.json"), page.as_bytes())],
            "eastus",
        )
    };
    let e = run(format!(r#"{{"Items":[{{"padding":"{big}"}},{vm}]}}"#)).unwrap_err();
    assert!(matches!(e, ImportError::Read { .. }), "{e:?}");
    let why = std::error::Error::source(&e).unwrap().to_string();
    assert!(why.contains("is over 16 MiB"), "{why}");
    let (cat, _) = run(format!(r#"{{"Padding":"{big}","Items":[{vm}]}}"#)).unwrap();
    assert!(cat.instance_price("eastus", "Standard_L8s_v3").is_some());
}

fn gcp_sku(desc: &str, usd_nanos: i64) -> String {
    format!(
        r#"{{"description":"{desc}","category":{{"usageType":"OnDemand"}},"serviceRegions":["asia-east1"],"pricingInfo":[{{"effectiveTime":"2026-10-01T00:00:00Z","pricingExpression":{{"usageUnit":"GiBy.mo","tieredRates":[{{"startUsageAmount":0,"unitPrice":{{"currencyCode":"USD","units":"0","nanos":{usd_nanos}}}}}]}}}}]}}"#
    )
}

/// QA: two SKUs of the region that price one thing differently (a second "SSD backed PD
/// Capacity", or the list saved on two days and both pages passed) were taken in reading order,
/// the last one's price written without a word, where `catalog import aws-offer` refuses two
/// SKUs of one price. Now refused naming both and their files; two of one price are one price.
#[test]
fn two_items_that_price_one_thing_differently_are_refused_naming_both() {
    let page = |nanos: i64| {
        format!(
            r#"{{"skus":[{}]}}"#,
            gcp_sku("SSD backed PD Capacity", nanos)
        )
    };
    let (a, b, same) = (page(187_000_000), page(170_000_000), page(187_000_000));
    let gcp = |pages: &[(&str, &String)]| {
        refresh(
            Cloud::Gcp,
            pages
                .iter()
                .map(|(n, p)| (std::path::PathBuf::from(*n), p.as_bytes())),
            "asia-east1",
        )
    };
    let e = gcp(&[("old.json", &a), ("new.json", &b)]).unwrap_err();
    assert!(matches!(e, ImportError::Clash { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "the price list prices pd-ssd storage twice, and differently: SSD backed PD Capacity at 0.187 USD (old.json), and SSD backed PD Capacity at 0.17 USD (new.json); which is the region's is not clear, so nothing is written: pass the pages of one download of the list, or write the price you mean in a --catalog file"
    );
    let (cat, _) = gcp(&[("a.json", &a), ("same.json", &same)]).unwrap();
    assert_eq!(
        cat.volume_price("asia-east1", "pd-ssd")
            .unwrap()
            .storage_gb_month,
        0.187
    );

    // Azure: one VM size priced twice.
    let vm = |usd: f64| {
        format!(
            r#"{{"armRegionName":"eastus","serviceName":"Virtual Machines","productName":"Virtual Machines Lsv3 Series","skuName":"L8s v3","meterName":"L8s v3","armSkuName":"Standard_L8s_v3","type":"Consumption","currencyCode":"USD","retailPrice":{usd},"unitOfMeasure":"1 Hour","effectiveStartDate":"2026-10-01T00:00:00Z"}}"#
        )
    };
    let page = format!(r#"{{"Items":[{},{}]}}"#, vm(0.624), vm(0.7));
    let e = refresh(
        Cloud::Azure,
        [(std::path::PathBuf::from("page.json"), page.as_bytes())],
        "eastus",
    )
    .unwrap_err();
    assert!(
        e.to_string().starts_with("the price list prices Standard_L8s_v3 per hour twice, and differently: L8s v3 (Virtual Machines Lsv3 Series) at 0.624 USD (page.json), and L8s v3 (Virtual Machines Lsv3 Series) at 0.7 USD (page.json);"),
        "{e}"
    );
}
