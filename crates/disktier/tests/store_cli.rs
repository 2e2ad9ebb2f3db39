//! `history`, `show` and `compare` through the real binary, against a store filled with fixture
//! documents (the OpenShift instance-disk recipe's two etcd results); store refusals as the user
//! sees them; and many `disktier import` processes saving at once.

use disktier_store::{NewRun, Store};
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::disktier_at as dt;
use disktier_testkit::cli::stdout_ok;
use disktier_testkit::cli::store_fixture as fixture;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

/// Saves the named fixtures in the store at `location` as `check` runs; returns their ids.
fn save_checks(location: &str, names: &[&str]) -> Vec<String> {
    let mut s = Store::open(Some(location)).unwrap();
    names
        .iter()
        .map(|n| {
            s.save(&NewRun {
                kind: "check",
                group_id: None,
                doc: &fixture(n),
            })
            .unwrap()
        })
        .collect()
}

/// A temp store holding the named fixtures; returns the dir guard, the db path and the ids.
fn store_with(names: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<String>) {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let ids = save_checks(db.to_str().unwrap(), names);
    (d, db, ids)
}

#[test]
fn history_lists_and_filters() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral", "ocp-recipe-ebs", "read-iops"]);
    let out = dt(&db)
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    assert_eq!(v["runs"][0]["id"], ids[2].as_str(), "newest first");
    let out = dt(&db)
        .args(["history", "--profile", "etcd", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    dt(&db)
        .args(["history", "--target", "/var/lib/misc/_benchmark_fio"])
        .assert()
        .success()
        .stdout(predicate::str::contains(ids[1].as_str()).and(predicate::str::contains("4.05 ms")))
        .stdout(predicate::str::contains(ids[0].as_str()).not());
}

#[test]
fn show_prints_a_summary_or_the_stored_document() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral"]);
    dt(&db)
        .args(["show", &ids[0]])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "/var/lib/containers/_benchmark_fio",
        ))
        .stdout(predicate::str::contains("PASS etcd"));
    let out = dt(&db)
        .args(["show", &ids[0], "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, fixture("ocp-recipe-ephemeral"));
    dt(&db)
        .args(["show", "no-such-run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("disktier history"));
}

#[test]
fn compare_golden() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral", "ocp-recipe-ebs"]);
    let out = dt(&db)
        .args(["compare", &ids[0], &ids[1]])
        .output()
        .unwrap();
    stdout_ok(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("fdatasync p99 0.20 ms vs 4.05 ms: 19.9x lower"),
        "{text}"
    );
    let text = text.replace(&ids[0], "RUN_A").replace(&ids[1], "RUN_B");
    insta::assert_snapshot!("compare_ocp_recipe", text);
}

#[test]
fn compare_refuses_different_profiles_unless_forced() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral", "read-iops"]);
    dt(&db)
        .args(["compare", &ids[0], &ids[1]])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("different profiles").and(predicate::str::contains("--force")),
        );
    dt(&db)
        .args(["compare", &ids[0], &ids[1], "--force", "--format", "json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"notes\""));
}

#[test]
fn compare_flags_quick_beside_full() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ebs", "quick-etcd"]);
    dt(&db)
        .args(["compare", &ids[0], &ids[1]])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "note: quick and full runs are mixed (B quick)",
        ));
}

#[test]
fn a_corrupted_store_is_refused_and_untouched() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    std::fs::write(
        &db,
        b"this is not a database, and it must survive a disktier run".repeat(200),
    )
    .unwrap();
    let before = std::fs::read(&db).unwrap();
    dt(&db)
        .args(["history"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is not a disktier database or is corrupted: move it aside or pass --db",
        ));
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn ten_import_processes_at_once_lose_no_row() {
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/etcd-3.33.json");
    if !disktier_testkit::require(
        fio.exists(),
        "the fio JSON fixture tests/fixtures/fio/etcd-3.33.json",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("shared.db");
    let bin = assert_cmd::cargo::cargo_bin("disktier");
    let children: Vec<_> = (0..10)
        .map(|_| {
            std::process::Command::new(&bin)
                .args(["import", "fio"])
                .arg(&fio)
                .args(["--format", "json", "--quiet"])
                .env("DISKTIER_DB", &db)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        stdout_ok(&out);
    }
    let rows = Store::open(Some(db.to_str().unwrap()))
        .unwrap()
        .list(&Default::default())
        .unwrap();
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r.kind == "import"));
}

#[test]
fn the_same_commands_work_against_postgres() {
    if !disktier_testkit::require(
        std::env::var("DISKTIER_TEST_PG").is_ok(),
        "a PostgreSQL server in DISKTIER_TEST_PG (scripts/test.sh starts one)",
    ) {
        return;
    }
    let base = std::env::var("DISKTIER_TEST_PG").unwrap();
    let schema = format!("cli_{}", disktier_store::new_id().replace('-', "_"));
    postgres::Client::connect(&base, postgres::NoTls)
        .unwrap()
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
    let ids = save_checks(&url, &["ocp-recipe-ephemeral", "ocp-recipe-ebs"]);
    let mut c = disktier();
    c.env_remove("DISKTIER_DB")
        .args(["--db", &url, "compare", &ids[0], &ids[1]])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "fdatasync p99 0.20 ms vs 4.05 ms: 19.9x lower",
        ));
    let out = disktier()
        .env("DISKTIER_DB", &url)
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
}
