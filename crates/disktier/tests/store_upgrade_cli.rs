//! The first command after an upgrade migrates an older store: a step that rewrites many rows
//! (schema version 5 fingerprints every import stored before version 4) says what it does on
//! stderr, and nothing on stdout (QA: on a large store it printed nothing and looked hung).

use disktier_store::migrate;
use disktier_testkit::cli::disktier;

/// More imports than one page of the migration's fill (`FILL_PAGE`), none fingerprinted.
const IMPORTS: usize = 150;

fn import_doc(i: usize) -> String {
    serde_json::json!({"schema_version": 1, "engine": "fio", "job": {"rw": "randwrite"},
        "target": {"path": format!("/t{i}"), "kind": "directory"}, "host": {"hostname": "n1"},
        "started_at": "2026-11-28T14:34:36.074Z", "results": {"write": {"iops": 9.0}}})
    .to_string()
}

fn import_id(i: usize) -> String {
    format!("20240101-000000-{i:06}")
}

/// Runs `history --format json` (plus `extra`) against `location`: its stdout must be one
/// JSON document listing every run; returns its stderr.
fn history(location: &str, extra: &[&str]) -> String {
    let out = disktier()
        .env_remove("DISKTIER_DB")
        .args(["--db", location, "history", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {stderr}"));
    assert_eq!(v["runs"].as_array().unwrap().len(), IMPORTS);
    stderr
}

/// The upgrade is told once, on stderr, with its count; then never again; never with --quiet.
fn upgrade_is_told(location: &str, again: &str) {
    let told = history(location, &[]);
    assert!(
        told.contains(&format!(
            "upgrading the store {location} to schema v5: fingerprinting {IMPORTS} stored imports, in one transaction"
        )),
        "{told}"
    );
    assert!(
        told.contains(&format!("{IMPORTS} imports fingerprinted")),
        "{told}"
    );
    let after = history(location, &[]);
    assert!(!after.contains("upgrad"), "{after}");
    let quiet = history(again, &["--quiet"]);
    assert!(!quiet.contains("upgrad"), "{quiet}");
    assert!(!history(again, &[]).contains("upgrad"));
}

fn sqlite_v4(db: &std::path::Path) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch(&migrate::schema_as_written_by(4).unwrap())
        .unwrap();
    for i in 0..IMPORTS {
        c.execute(
            "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc) VALUES (?1, '2024-01-01T00:00:00Z', 'import', 0, '{}', '{}', ?2)",
            rusqlite::params![import_id(i), import_doc(i)],
        )
        .unwrap();
    }
}

#[test]
fn a_long_sqlite_migration_says_what_it_does_on_stderr() {
    let d = tempfile::tempdir().unwrap();
    let (db, quiet) = (d.path().join("v4.db"), d.path().join("v4-quiet.db"));
    sqlite_v4(&db);
    sqlite_v4(&quiet);
    upgrade_is_told(db.to_str().unwrap(), quiet.to_str().unwrap());
}

fn postgres_v4() -> Option<String> {
    let id = disktier_store::new_id();
    let s = disktier_testkit::pg::fresh_schema("upgrade", &id)?;
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    c.batch_execute(&migrate::schema_as_written_by(4).unwrap())
        .unwrap();
    for i in 0..IMPORTS {
        c.execute(
            "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc) VALUES ($1, '2024-01-01T00:00:00Z', 'import', FALSE, '{}', '{}', $2)",
            &[&import_id(i), &import_doc(i)],
        )
        .unwrap();
    }
    Some(s.url)
}

#[test]
fn a_long_postgres_migration_says_what_it_does_on_stderr() {
    let (Some(url), Some(quiet)) = (postgres_v4(), postgres_v4()) else {
        return;
    };
    // The location as disktier shows it (a password would be hidden; the test's has none).
    let out = disktier()
        .env_remove("DISKTIER_DB")
        .args(["--db", &url, "history", "--format", "json"])
        .output()
        .unwrap();
    let told = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{told}");
    assert!(serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok());
    assert!(
        told.contains(&format!(
            "to schema v5: fingerprinting {IMPORTS} stored imports, in one transaction"
        )),
        "{told}"
    );
    assert!(
        told.contains(&format!("{IMPORTS} imports fingerprinted")),
        "{told}"
    );
    assert!(!history(&url, &[]).contains("upgrad"));
    assert!(!history(&quiet, &["--quiet"]).contains("upgrad"));
}

/// A first Ctrl-C during the upgrade, in a command that measures (which holds it until it can
/// stop cleanly): it says the upgrade finishes and commits, and it does (QA: the Ctrl-C seemed
/// to do nothing while a large store was migrated). The signal is sent once the upgrade has
/// said it started; fingerprinting 100,000 imports takes seconds after that.
#[test]
fn a_first_ctrl_c_during_the_upgrade_says_it_finishes() {
    use std::io::BufRead;
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("v4.db");
    sqlite_v4(&db);
    {
        let mut c = rusqlite::Connection::open(&db).unwrap();
        let tx = c.transaction().unwrap();
        for i in IMPORTS..100_000 {
            tx.execute(
                "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc) VALUES (?1, '2024-01-01T00:00:00Z', 'import', 0, '{}', '{}', ?2)",
                rusqlite::params![import_id(i), import_doc(i)],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_disktier"))
        .env("DISKTIER_DB", &db)
        .arg("bench")
        .arg(&dir)
        .args("--rw write --size 4m --runtime 1s".split_whitespace())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("upgrading the store") {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("the upgrade said nothing: {said}");
        }
        said.push_str(&line);
    }
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    said.push_str(&rest);
    child.wait().unwrap();
    assert!(
        said.contains("the store upgrade under way finishes and commits before disktier stops"),
        "{said}"
    );
    assert!(said.contains("100000 imports fingerprinted"), "{said}");
    let version: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, migrate::latest());
}
