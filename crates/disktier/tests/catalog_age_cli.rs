//! The stale-catalog warning (docs/catalog.md, "How old a catalog may be") through the real
//! binary, its clock pinned with `DISKTIER_TODAY` relative to the embedded catalog's own date,
//! so that the test means the same whatever day it runs.

use disktier_testkit::cli::stdout_ok;
use serde_json::Value;

/// disktier with no overlay, a store nobody writes, and its clock at `today`.
fn at(today: &str) -> assert_cmd::Command {
    let mut c = disktier_testkit::cli::disktier();
    c.env_remove("DISKTIER_CATALOG")
        .env("DISKTIER_DB", "/nonexistent/disktier-test.db")
        .env("DISKTIER_TODAY", today)
        .arg("--no-save");
    c
}

/// The embedded catalog's date, and the day `days` after it.
fn catalog_date_plus(days: i64) -> (String, String) {
    let out = stdout_ok(
        &at(disktier_testkit::cli::TODAY)
            .args(["catalog", "show", "--format", "json"])
            .output()
            .unwrap(),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let date = v["date"].as_str().expect("the catalog's date").to_string();
    let d = time::Date::parse(
        &date,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .unwrap();
    let later = d + time::Duration::days(days);
    (date, later.to_string())
}

const PRICE: &[&str] = &["price", "gp3", "--size", "100GiB"];
const PLAN: &[&str] = &["plan", "--capacity", "100GiB", "--iops", "5000"];
const SHOW: &[&str] = &["catalog", "show", "--region", "us-east-1"];

/// 181 days after the catalog's date, price, plan and catalog show still print their figures
/// and exit 0, warn on stderr naming the date, the age and how to refresh, and carry the same
/// in JSON; 180 days after, and on the catalog's date, none of it. (Before, nothing said how
/// old the catalog was, however old.)
#[test]
fn price_plan_and_show_say_when_the_catalog_is_old() {
    let (date, stale_day) = catalog_date_plus(181);
    let (_, last_fresh_day) = catalog_date_plus(180);
    for args in [PRICE, PLAN, SHOW] {
        let out = at(&stale_day).args(args).output().unwrap();
        let text = stdout_ok(&out);
        assert!(text.contains("us-east-1"), "{args:?}: {text}");
        let err = String::from_utf8_lossy(&out.stderr);
        let want = format!(
            "warning: the price catalog is dated {date}, 181 days ago (over 180): cloud prices may have changed since; to update it: `disktier catalog import aws-offer` (AWS) or `disktier catalog refresh gcp|azure`"
        );
        assert!(err.contains(&want), "{args:?}: {err}");

        let json = at(&stale_day)
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_str(&stdout_ok(&json)).unwrap();
        let s = &v["stale_catalog"];
        assert_eq!(s["catalog_date"], date.as_str(), "{args:?}: {s}");
        assert_eq!(s["age_days"], 181, "{args:?}: {s}");
        assert_eq!(s["stale_after_days"], 180, "{args:?}: {s}");
        assert!(
            s["message"].as_str().unwrap().contains("catalog refresh"),
            "{s}"
        );

        // --quiet keeps stderr clean; the JSON still says it.
        let quiet = at(&stale_day)
            .args(args)
            .args(["--quiet", "--format", "json"])
            .output()
            .unwrap();
        assert!(quiet.stderr.is_empty(), "{args:?}");
        let v: Value = serde_json::from_str(&stdout_ok(&quiet)).unwrap();
        assert_eq!(v["stale_catalog"]["age_days"], 181);

        for day in [&last_fresh_day, &date] {
            let fresh = at(day)
                .args(args)
                .args(["--format", "json"])
                .output()
                .unwrap();
            let v: Value = serde_json::from_str(&stdout_ok(&fresh)).unwrap();
            assert!(v.get("stale_catalog").is_none(), "{args:?} on {day}");
            assert!(
                !String::from_utf8_lossy(&fresh.stderr).contains("warning"),
                "{args:?} on {day}"
            );
        }
    }
}

/// An overlay's date is the catalog's (as `catalog show` names it): a fresh import makes an old
/// embedded catalog current, an old overlay makes it stale.
#[test]
fn an_overlays_date_is_the_catalogs() {
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("old.toml");
    std::fs::write(&old, "version = \"ours\"\ndate = \"2020-01\"\n").unwrap();
    let (_, today) = catalog_date_plus(0);
    let out = at(&today)
        .arg("--catalog")
        .arg(&old)
        .args(PRICE)
        .output()
        .unwrap();
    stdout_ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warning: the price catalog is dated 2020-01, "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A DISKTIER_TODAY that is not a date is an error naming it, not today's date in silence.
#[test]
fn a_clock_that_is_not_a_date_is_refused() {
    at("next tuesday")
        .args(PRICE)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "DISKTIER_TODAY='next tuesday' is not a date: write YYYY-MM-DD (e.g. 2026-11-22), or unset it to use today's",
        ));
}
