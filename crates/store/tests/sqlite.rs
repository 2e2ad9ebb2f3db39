//! The embedded store against real SQLite files: round trip, migration from an older schema,
//! refusal of foreign, damaged and newer files (left untouched), and many writer processes.

use disktier_store::{migrate, Filter, Store, StoreError};
use serde_json::json;
use std::path::Path;

mod common;
use common::save;

fn doc(target: &str, profile: &str, p99: u64) -> serde_json::Value {
    json!({
        "schema_version": 1, "engine": "disktier", "profile": profile, "quick": true,
        "target": {"path": target, "kind": "directory", "fs_type": "xfs", "device": "loop3"},
        "host": {"hostname": "node-a", "kernel": "6.18", "cpus": 2},
        "results": {"sync": {"ios": 10, "bytes": 0, "iops": 1.0, "bw_bytes": 0.0,
            "lat_ns": {"mean": 1.0, "stdev": 0.0, "min": 1, "max": 2, "percentiles": {"99": p99}}}}
    })
}

fn open(p: &Path) -> Store {
    Store::open(Some(p.to_str().unwrap())).unwrap()
}

fn digest(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn save_list_show_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("sub/results.db");
    let mut s = open(&db);
    let a = save(&mut s, "check", None, &doc("/a", "etcd", 203776));
    let b = save(&mut s, "bench", Some("g1"), &doc("/b", "read-iops", 9));
    assert_ne!(a, b);
    let all = s.list(&Filter::default()).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].id, b, "newest first");
    let etcd = s
        .list(&Filter {
            profile: Some("etcd".into()),
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(etcd.len(), 1);
    assert_eq!(etcd[0].sync_p99_ns, Some(203776));
    assert_eq!(etcd[0].hostname.as_deref(), Some("node-a"));
    let g = s
        .list(&Filter {
            group_id: Some("g1".into()),
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(g.len(), 1);
    let got = s.get(&a).unwrap();
    assert_eq!(got.doc, doc("/a", "etcd", 203776));
    assert_eq!(got.device["fs_type"], "xfs");
    // A unique prefix finds the run; a wrong id names the fix.
    assert_eq!(s.get(&a[..a.len() - 1]).unwrap().summary.id, a);
    let e = s.get("nope").unwrap_err().to_string();
    assert!(e.contains("disktier history"), "{e}");
    // WAL mode is on.
    let c = rusqlite::Connection::open(&db).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_version_1_database_is_migrated_and_keeps_its_rows() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("old.db");
    {
        // What disktier with schema version 1 wrote.
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(migrate::CREATE_SCHEMA_MIGRATIONS).unwrap();
        c.execute_batch(migrate::MIGRATIONS[0].sql).unwrap();
        c.execute(
            "INSERT INTO schema_migrations VALUES (1, 'runs', '2024-01-01T00:00:00Z')",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO runs (id, created_at, kind, profile, target, quick, host_json, device_json, doc)
             VALUES ('20240101-000000-abcdef', '2024-01-01T00:00:00Z', 'check', 'etcd', '/old', 0, '{}', '{}', '{\"profile\":\"etcd\"}')",
            [],
        )
        .unwrap();
    }
    let mut s = open(&db);
    assert_eq!(s.schema_version().unwrap(), migrate::latest());
    let old = s.get("20240101-000000-abcdef").unwrap();
    assert_eq!(old.summary.group_id, None);
    assert_eq!(old.doc["profile"], "etcd");
    save(&mut s, "assess", Some("g"), &doc("/new", "etcd", 1));
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 2);
}

#[test]
fn a_corrupted_file_is_refused_and_left_untouched() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let junk: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&db, &junk).unwrap();
    let before = digest(&db);
    let e = Store::open(Some(db.to_str().unwrap()))
        .err()
        .expect("must refuse");
    assert!(matches!(e, StoreError::NotOurs { .. }), "{e}");
    assert!(e
        .to_string()
        .contains("is not a disktier database or is corrupted: move it aside or pass --db"));
    assert_eq!(digest(&db), before);
}

#[test]
fn a_foreign_sqlite_database_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("other.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE photos (id INTEGER)")
        .unwrap();
    let before = digest(&db);
    assert!(matches!(
        Store::open(Some(db.to_str().unwrap())),
        Err(StoreError::NotOurs { .. })
    ));
    assert_eq!(digest(&db), before);
}

#[test]
fn a_database_from_a_newer_disktier_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("new.db");
    open(&db);
    let newer = migrate::latest() + 1;
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO schema_migrations VALUES (?1, 'future', '2030-01-01T00:00:00Z')",
            [newer],
        )
        .unwrap();
    let e = Store::open(Some(db.to_str().unwrap()))
        .err()
        .expect("must refuse");
    assert!(
        matches!(e, StoreError::TooNew { found, .. } if found == newer),
        "{e}"
    );
    assert!(e.to_string().contains("upgrade disktier"));
}

const CHILD_ENV: &str = "DISKTIER_STORE_TEST_WRITER_DB";
const PER_CHILD: usize = 5;

/// Not a test on its own: the body of each writer process `ten_writer_processes_lose_no_row` spawns.
#[test]
fn writer_child() {
    let Ok(db) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut s = open(Path::new(&db));
    for i in 0..PER_CHILD {
        let d = doc(&format!("/w{}", std::process::id()), "etcd", i as u64);
        save(&mut s, "import", None, &d);
    }
}

#[test]
fn ten_writer_processes_lose_no_row() {
    let d = tempfile::tempdir().unwrap();
    // A fresh file: the processes also race to create the schema.
    let db = d.path().join("shared.db");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..10)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", "writer_child", "--test-threads=1", "--quiet"])
                .env(CHILD_ENV, &db)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer process failed");
    }
    let rows = open(&db).list(&Filter::default()).unwrap();
    assert_eq!(rows.len(), 10 * PER_CHILD);
    let mut ids: Vec<_> = rows.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10 * PER_CHILD);
}
