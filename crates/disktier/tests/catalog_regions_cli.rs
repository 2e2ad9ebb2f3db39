//! The regions most clusters run in (AWS, GCP, Azure) and the Azure entries: each price names
//! its source, unconfirmed prices say so, and `price` / `plan` work in them.

use assert_cmd::Command;

fn json(args: &[&str]) -> serde_json::Value {
    let out = Command::cargo_bin("disktier")
        .unwrap()
        .args(["--no-save", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn cents(v: &serde_json::Value) -> i64 {
    (v.as_f64().unwrap() * 100.0).round() as i64
}

#[test]
fn every_common_region_prices_its_volumes_with_a_source_and_says_when_unconfirmed() {
    for (region, t) in [
        ("us-west-2", "gp3"),
        ("eu-west-1", "gp3"),
        ("eu-central-1", "gp3"),
        ("ap-northeast-1", "gp3"),
        ("ap-southeast-1", "gp3"),
        ("us-east1", "pd-balanced"),
        ("europe-west1", "pd-ssd"),
        ("asia-east1", "pd-ssd"),
        ("asia-northeast1", "pd-standard"),
        ("eastus", "premium-ssd-v2"),
        ("westeurope", "premium-ssd-v2"),
    ] {
        let v = json(&["price", t, "--region", region, "--size", "100GiB"]);
        assert_eq!(v["weak"], true, "{region} {t}");
        let sources = v["sources"].to_string();
        assert!(sources.contains("https://"), "{region}: {sources}");
        assert!(sources.contains("not confirmed"), "{region}: {sources}");
    }
}

#[test]
fn premium_ssd_v2_is_provisioned_like_gp3() {
    // 100 GiB x 0.08176 = 8.18; (10,000 - 3,000) x 0.00488 = 34.16; (300 - 125) x 0.03904 = 6.83.
    let v = json(&[
        "price",
        "premium-ssd-v2",
        "--region",
        "eastus",
        "--size",
        "100GiB",
        "--iops",
        "10000",
        "--throughput",
        "300MiB/s",
    ]);
    assert_eq!(cents(&v["monthly_cost_usd"]), 4917);
    // Above 500 IOPS per GiB: refused by the rule.
    let out = Command::cargo_bin("disktier")
        .unwrap()
        .args([
            "--no-save",
            "price",
            "premium-ssd-v2",
            "--region",
            "eastus",
            "--size",
            "10GiB",
            "--iops",
            "10000",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn seed_002s_region_plans_and_azure_lsv3_has_its_local_nvme() {
    let v = json(&[
        "plan",
        "--region",
        "asia-east1",
        "--capacity",
        "500GiB",
        "--iops",
        "20000",
    ]);
    assert!(!v["options"].as_array().unwrap().is_empty());
    let v = json(&["price", "instance", "Standard_L8s_v3", "--region", "eastus"]);
    // 0.624 $/h x 730 h.
    assert_eq!(cents(&v["monthly_cost_usd"]), 45552);
    let notes = v["performance"]["notes"].to_string();
    assert!(
        notes.contains("1 x 1920 GB") || notes.contains("1,920"),
        "{notes}"
    );
}

#[test]
fn catalog_show_prints_the_note_of_an_unconfirmed_price() {
    let out = Command::cargo_bin("disktier")
        .unwrap()
        .args(["--no-save", "catalog", "show", "--region", "eu-west-1"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("note: not confirmed from a stored source"),
        "{text}"
    );
}
