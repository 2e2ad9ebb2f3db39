//! `disktier catalog refresh gcp | azure` on price-list pages made for the tests (no network):
//! the right SKUs and meters are kept (not regional, Spot, committed, Windows or other regions'),
//! the written catalog merges and prices, bad input writes nothing, and memory stays bounded on
//! a large page.

use disktier_testkit::cli::json_ok;
use disktier_testkit::cli_cases::PREMIUM_SSD_V2_EASTUS;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

use disktier_testkit::cli::disktier as bin;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/refresh")
        .join(name)
}

/// `catalog refresh CLOUD PAGES... --region REGION -o OUT`, not saved to a store.
fn refresh(cloud: &str, pages: &[&Path], region: &str, out: &Path) -> assert_cmd::Command {
    let mut c = bin();
    c.args(["--no-save", "catalog", "refresh", cloud])
        .args(pages)
        .args(["--region", region, "-o"])
        .arg(out);
    c
}

fn price_json(catalog: &Path, args: &[&str]) -> serde_json::Value {
    let out = bin()
        .args(["--no-save", "--format", "json", "--catalog"])
        .arg(catalog)
        .arg("price")
        .args(args)
        .output()
        .unwrap();
    json_ok(&out)
}

#[test]
fn gcp_pages_refresh_the_region_s_disk_prices() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("gcp.toml");
    refresh(
        "gcp",
        &[
            &fixture("gcp-skus-page1.json"),
            &fixture("gcp-skus-page2.json"),
        ],
        "asia-east1",
        &out,
    )
    .assert()
    .success()
    .stdout(predicate::str::contains("4 volume prices"));
    let text = std::fs::read_to_string(&out).unwrap();
    // The zonal on-demand SKU of the region, not the regional (0.22), Belgian (0.10),
    // committed (0.01) or multi-region (0.02) ones; the paid tier after a free allowance.
    let v = price_json(
        &out,
        &["pd-balanced", "--region", "asia-east1", "--size", "100GiB"],
    );
    assert_eq!(v["monthly_cost_usd"].as_f64().unwrap(), 11.0);
    // The price is no longer weak (the pd-balanced rules still are).
    assert!(!text.contains("weak = true"), "{text}");
    assert!(v["sources"].to_string().contains("Cloud Billing Catalog"));
    let v = price_json(
        &out,
        &["pd-standard", "--region", "asia-east1", "--size", "1000GiB"],
    );
    assert_eq!(v["monthly_cost_usd"].as_f64().unwrap(), 44.0);
    // Local SSD from page 2, not the Spot one.
    assert!(
        text.contains("type = \"local-ssd\"\nstorage_gb_month = 0.088"),
        "{text}"
    );
    // Regression (QA): every price named the first page as its source. Each names its own.
    let out_json = bin()
        .args(["--no-save", "--format", "json", "--catalog"])
        .arg(&out)
        .args(["catalog", "show", "--region", "asia-east1"])
        .output()
        .unwrap();
    let cat = json_ok(&out_json);
    let source = |t: &str| {
        cat["volume_price"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["type"].as_str() == Some(t))
            .unwrap()["source"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for (t, page, other) in [
        ("local-ssd", "gcp-skus-page2.json", "gcp-skus-page1.json"),
        ("pd-balanced", "gcp-skus-page1.json", "gcp-skus-page2.json"),
    ] {
        let s = source(t);
        assert!(s.contains(page) && !s.contains(other), "{t}: {s}");
    }
    // The catalog as a whole names both.
    let top = cat["source"].as_str().unwrap();
    assert!(
        top.contains("gcp-skus-page1.json") && top.contains("gcp-skus-page2.json"),
        "{top}"
    );
    // The merged catalog passes its check.
    bin()
        .args(["--no-save", "--catalog"])
        .arg(&out)
        .args(["catalog", "check"])
        .assert()
        .success();
}

#[test]
fn azure_pages_refresh_premium_ssd_v2_and_lsv3_prices() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("az.toml");
    let o = bin()
        .args("--no-save --format json catalog refresh azure".split_whitespace())
        .arg(fixture("azure-prices.json"))
        .args(["--region", "eastus", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["summary"]["volume_prices"], 1);
    assert_eq!(s["summary"]["instance_prices"], 2);
    assert_eq!(s["summary"]["date"], "2026-09-01");
    // 0.000112 $/GiB-hour x 730 = $0.08176 per GiB-month: 100 GiB = $8.18; the IOPS price is
    // the paid tier above the free 3,000: 0.0000068 x 730 = 0.004964; 7,000 x = $34.75.
    let v = price_json(&out, PREMIUM_SSD_V2_EASTUS);
    assert_eq!(v["items"][0]["monthly_cost_usd"].as_f64().unwrap(), 8.18);
    assert_eq!(v["items"][1]["monthly_cost_usd"].as_f64().unwrap(), 34.75);
    // Linux pay-as-you-go, not Spot, Windows or a reservation.
    let v = price_json(
        &out,
        &["instance", "Standard_L8as_v3", "--region", "eastus"],
    );
    assert_eq!(v["monthly_cost_usd"].as_f64().unwrap(), 409.97);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("Standard_D4s_v5"),
        "not in the catalog: {text}"
    );
    assert!(!text.contains("weak = true"), "{text}");
}

#[test]
fn the_wrong_region_or_a_broken_page_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("x.toml");
    refresh(
        "gcp",
        &[&fixture("gcp-skus-page1.json")],
        "us-central1",
        &out,
    )
    .assert()
    .code(2)
    .stderr(
        predicate::str::contains("asia-east1").and(predicate::str::contains("nothing written")),
    );
    assert!(!out.exists());
    let cut = t.path().join("cut.json");
    let full = std::fs::read_to_string(fixture("azure-prices.json")).unwrap();
    for (page, refused) in [
        (&full[..full.len() / 2], "cut short"),
        // QA: it said "is not a Azure Retail Prices API page".
        (
            r#"{"value": []}"#,
            "is not an Azure Retail Prices API page ({\"Items\": [...]}): no \"Items\" array",
        ),
    ] {
        std::fs::write(&cut, page).unwrap();
        refresh("azure", &[&cut], "eastus", &out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(refused));
    }
    // An Azure region named for GCP is refused.
    refresh("gcp", &[&fixture("gcp-skus-page1.json")], "eastus", &out)
        .assert()
        .code(2);
    assert!(!out.exists());
}

/// Peak resident memory of a child, from wait4's rusage (KiB on Linux). It includes what the
/// child held between fork and exec (this test process's pages), so compare two runs.
// wait4 below reaps the child (std's Child::wait cannot return its rusage).
#[allow(clippy::zombie_processes)]
fn run_max_rss_kib(cmd: &mut std::process::Command) -> (i32, i64) {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: wait4 writes the status and the rusage of our own child into the buffers above.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, ru.as_mut_ptr()) };
    assert!(r > 0);
    // SAFETY: wait4 succeeded, so it filled the rusage.
    let ru = unsafe { ru.assume_init() };
    (libc::WEXITSTATUS(status), ru.ru_maxrss)
}

#[test]
fn a_large_page_is_read_in_bounded_memory() {
    let t = tempfile::tempdir().unwrap();
    let big = t.path().join("big.json");
    // 200,000 SKUs of other products (about 60 MB), then the one that matters.
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        f.write_all(b"{\"skus\": [").unwrap();
        for i in 0..200_000 {
            write!(
                f,
                "{{\"description\": \"N2 Custom Instance Core running in Zone {i}\", \"category\": {{\"usageType\": \"OnDemand\", \"resourceFamily\": \"Compute\"}}, \"serviceRegions\": [\"asia-east1\"], \"pricingInfo\": [{{\"effectiveTime\": \"2026-10-01T00:00:00Z\", \"pricingExpression\": {{\"usageUnit\": \"h\", \"tieredRates\": [{{\"startUsageAmount\": 0, \"unitPrice\": {{\"currencyCode\": \"USD\", \"units\": \"0\", \"nanos\": 33174000}}}}]}}}}]}},"
            )
            .unwrap();
        }
        let page = std::fs::read_to_string(fixture("gcp-skus-page1.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&page).unwrap();
        f.write_all(serde_json::to_string(&v["skus"][0]).unwrap().as_bytes())
            .unwrap();
        f.write_all(b"]}").unwrap();
    }
    let size_kib = (std::fs::metadata(&big).unwrap().len() / 1024) as i64;
    assert!(size_kib > 50_000, "{size_kib}");
    let run = |input: &Path, out: &Path| {
        run_max_rss_kib(
            std::process::Command::new(assert_cmd::cargo::cargo_bin("disktier"))
                .args(["--no-save", "catalog", "refresh", "gcp"])
                .arg(input)
                .args(["--region", "asia-east1", "-o"])
                .arg(out),
        )
    };
    let (code, small) = run(&fixture("gcp-skus-page1.json"), &t.path().join("s.toml"));
    assert_eq!(code, 0);
    let out = t.path().join("o.toml");
    let (code, rss) = run(&big, &out);
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("pd-balanced"));
    // The whole file held in memory would add at least its size; streaming adds next to nothing.
    assert!(
        rss - small < size_kib / 3,
        "peak RSS {rss} KiB for a {size_kib} KiB file, {small} KiB for a 7 KiB one"
    );
}

/// The Retail Prices API dates each item by when its price took effect, which for most prices
/// is years back (Microsoft's own example item: 2020-08-01). The refreshed file took the newest
/// of those as its date, which the stale-catalog warning counts from: the day it was refreshed,
/// `price --catalog` with it warned "the price catalog is dated 2020-08-01, 2,304 days ago ...
/// to update it: ... `disktier catalog refresh gcp|azure`". The file is now dated the day of
/// the refresh; each price keeps the list's effective date.
#[test]
fn a_catalog_refreshed_today_is_not_stale_whatever_its_prices_effective_dates() {
    let t = tempfile::tempdir().unwrap();
    let page = t.path().join("old-prices.json");
    let full = std::fs::read_to_string(fixture("azure-prices.json")).unwrap();
    std::fs::write(
        &page,
        full.replace("2026-09-01T00:00:00Z", "2020-08-01T00:00:00Z"),
    )
    .unwrap();
    let out = t.path().join("az.toml");
    refresh("azure", &[&page], "eastus", &out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    // Top-level keys come before the first table.
    let top = text.split("\n[").next().unwrap_or_default();
    assert!(
        top.contains(&format!("date = \"{}\"", disktier_testkit::cli::TODAY)),
        "{text}"
    );
    assert!(text.contains("date = \"2020-08-01\""), "{text}");
    let o = bin()
        .args(["--no-save", "--catalog"])
        .arg(&out)
        .arg("price")
        .args(PREMIUM_SSD_V2_EASTUS)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("stale") && !err.contains("days ago"), "{err}");
}
