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
