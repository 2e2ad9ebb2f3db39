//! The embedded store against real SQLite files: round trip, migration from an older schema,
//! refusal of foreign, damaged and newer files (left untouched), and many writer processes.

use disktier_store::{migrate, Filter, NewRun, Store, StoreError};
use serde_json::json;
use std::path::Path;

mod common;
use common::{interrupted_ids, nul_in_names_is_listed_as_replacement, only, save};

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

/// A database at `db` as disktier with schema version `version` wrote it: that version's
/// migrations, applied and recorded as run on 2024-01-01.
fn written_by_version(db: &Path, version: usize) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch(&migrate::schema_as_written_by(version).unwrap())
        .unwrap();
    c
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
    let etcd = only(
        &mut s,
        Filter {
            profile: Some("etcd".into()),
            ..Filter::default()
        },
    );
    assert_eq!(etcd.sync_p99_ns, Some(203776));
    assert_eq!(etcd.hostname.as_deref(), Some("node-a"));
    only(
        &mut s,
        Filter {
            group_id: Some("g1".into()),
            ..Filter::default()
        },
    );
    let got = s.get(&a).unwrap();
    assert_eq!(got.doc, doc("/a", "etcd", 203776));
    assert_eq!(got.device["fs_type"], "xfs");
    // A unique prefix finds the run; a wrong id names the fix.
    assert_eq!(s.get(&a[..a.len() - 1]).unwrap().summary.id, a);
    let e = s.get("nope").unwrap_err().to_string();
    assert!(e.contains("disktier history"), "{e}");
    // Regression (QA): it did not say which store was searched, where an id from another
    // store (another --db, DISKTIER_DB unset in this shell) is the usual reason.
    assert!(
        e.contains(&format!("no run in {} has id nope", db.display())) && e.contains("--db"),
        "{e}"
    );
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
        let c = written_by_version(&db, 1);
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

/// An import stored by schema version 3 has no fingerprint; the migration to version 5
/// computes it from the stored document (QA: re-importing such a file stored it again), and
/// an import saved after is found again too.
#[test]
fn a_version_3_store_is_migrated_and_finds_imports_saved_before_and_after() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("v3.db");
    {
        let c = written_by_version(&db, 3);
        c.execute(
            "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc)
             VALUES ('20240101-000000-abcdef', '2024-01-01T00:00:00Z', 'import', 0, '{}', '{}', '{\"profile\":\"etcd\"}')",
            [],
        )
        .unwrap();
    }
    let mut s = open(&db);
    assert_eq!(s.schema_version().unwrap(), migrate::latest());
    let old = serde_json::json!({"profile": "etcd"});
    let again = NewRun {
        kind: "import",
        group_id: None,
        doc: &old,
    };
    assert_eq!(
        s.stored_import(&again).unwrap().as_deref(),
        Some("20240101-000000-abcdef")
    );
    common::an_import_is_found_again_by_its_document(&mut s);
}

/// QA: a version 4 store could hold two runs of one import (stored at the same instant), and
/// imports stored before version 4 had no fingerprint. The migration to version 5 keeps every
/// run, gives the fingerprint to the oldest of each pair, and computes the missing ones.
#[test]
fn a_version_4_store_with_duplicate_fingerprints_is_migrated_keeping_every_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("v4.db");
    {
        let c = written_by_version(&db, 4);
        // Nor does an index dropped by hand (a DBA's clean-up) stop the migration.
        c.execute_batch("DROP INDEX runs_fingerprint").unwrap();
        common::write_version_4_rows(|id, at, kind, doc, f| {
            c.execute(
                "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc, fingerprint)
                 VALUES (?1, ?2, ?3, 0, '{}', '{}', ?4, ?5)",
                rusqlite::params![id, at, kind, doc, f],
            )
            .unwrap();
        });
    }
    common::version_4_rows_are_kept_and_found(&mut open(&db));
}

#[test]
fn two_connections_saving_one_import_at_once_store_it_once() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("race.db");
    let (mut a, mut b) = (open(&db), open(&db));
    common::two_savers_of_one_import_store_it_once(&mut a, &mut b);
}

#[test]
fn threads_saving_one_import_at_once_store_it_once() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("threads.db");
    open(&db);
    common::racing_threads_store_one_import(move || open(&db));
}

/// Regression (QA): an interrupted run was listed like a complete one. The listing carries the
/// document's `interrupted`, filled in by the migration for runs stored before it (a damaged
/// document does not stop the migration), and by every save after.
#[test]
fn the_listing_marks_interrupted_runs_old_and_new() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("v2.db");
    {
        // What disktier with schema version 2 wrote: a complete run, an interrupted one, a
        // run whose target names the flag, and a damaged row.
        let c = written_by_version(&db, 2);
        let mut cut = doc("/cut", "etcd", 1);
        cut["interrupted"] = true.into();
        let mut named = doc("/x\"interrupted\":true", "etcd", 1);
        named["interrupted"] = false.into();
        for (id, text) in [
            (
                "20240101-000000-000001",
                doc("/whole", "etcd", 1).to_string(),
            ),
            (
                "20240101-000000-000002",
                serde_json::to_string(&cut).unwrap(),
            ),
            (
                "20240101-000000-000003",
                serde_json::to_string(&named).unwrap(),
            ),
            ("20240101-000000-000004", "{not json".to_string()),
        ] {
            c.execute(
                "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc)
                 VALUES (?1, '2024-01-01T00:00:00Z', 'check', 0, '{}', '{}', ?2)",
                [id, &text],
            )
            .unwrap();
        }
    }
    let mut s = open(&db);
    let mut cut = doc("/new-cut", "etcd", 1);
    cut["interrupted"] = true.into();
    let new_cut = save(&mut s, "check", None, &cut);
    save(&mut s, "check", None, &doc("/new-whole", "etcd", 1));
    assert_eq!(
        interrupted_ids(&mut s),
        vec![new_cut, "20240101-000000-000002".to_string()]
    );
}

/// Regression (QA): `--db ""` and `--db :memory:` "saved" runs in a database SQLite keeps only
/// while the process runs; a `file:` location is a URI to SQLite (`mode=memory` likewise).
/// The library refuses the special names (the empty location is the default store, tested
/// through the binary, which owns the environment), and calls a directory a directory.
#[test]
fn locations_sqlite_would_not_keep_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for bad in [
        ":memory:",
        "file:x.db?mode=memory",
        "file::memory:",
        "file:r.db",
    ] {
        for e in [
            Store::open(Some(bad)).err(),
            Store::open_existing(Some(bad)).err(),
        ] {
            let e = e.unwrap_or_else(|| panic!("{bad} opened"));
            assert!(matches!(e, StoreError::BadLocation { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("pass the"), "{e}");
        }
    }
    assert!(!Path::new("file:r.db").exists() && !Path::new("r.db").exists());
    let dir = d.path().to_str().unwrap();
    for e in [
        Store::open(Some(dir)).err(),
        Store::open_existing(Some(dir)).err(),
    ] {
        let e = e.expect("a directory is no store");
        assert!(matches!(e, StoreError::IsDirectory { .. }), "{e}");
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}

/// QA: `--db /proc/self/mem` was "the filesystem holding the SQLite database /proc/self/mem is
/// full: free space there" (a proc file is a regular file of size 0, SQLite took it for an
/// empty database and tried to write its header into it). A location on a kernel
/// pseudo-filesystem, existing or not, is refused as such before anything is opened.
#[test]
fn a_location_on_a_kernel_pseudo_filesystem_is_refused() {
    for (bad, fs) in [
        ("/proc/self/mem", "proc"),
        ("/proc/self/disktier-none/r.db", "proc"),
        ("/sys/kernel/disktier-none.db", "sysfs"),
    ] {
        for e in [
            Store::open(Some(bad)).err(),
            Store::open_existing(Some(bad)).err(),
        ] {
            let e = e.unwrap_or_else(|| panic!("{bad} opened"));
            assert!(matches!(e, StoreError::PseudoFs { .. }), "{bad}: {e}");
            assert!(
                e.to_string().contains(&format!("is on {fs}, a kernel")),
                "{e}"
            );
        }
    }
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
    assert!(e.to_string().contains("upgrade this disktier"));
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

/// Regression (QA): `history --db /tmp/x/newdir/sub/none.db` created the directories and an
/// empty database. Opening to read creates nothing: a missing file, an empty one, and a
/// directory are refused as what they are.
#[test]
fn opening_to_read_creates_no_store() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("newdir/sub/none.db");
    let e = Store::open_existing(Some(missing.to_str().unwrap()))
        .err()
        .expect("no store there");
    assert!(matches!(e, StoreError::NoStore { .. }), "{e}");
    assert!(e.to_string().contains("there is no result store at"), "{e}");
    assert!(!d.path().join("newdir").exists(), "a directory was created");
    let empty = d.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let e = Store::open_existing(Some(empty.to_str().unwrap()))
        .err()
        .expect("no store there");
    assert!(matches!(e, StoreError::NoStore { .. }), "{e}");
    assert_eq!(
        std::fs::metadata(&empty).unwrap().len(),
        0,
        "the file was written"
    );
    assert!(matches!(
        Store::open_existing(Some(d.path().to_str().unwrap())),
        Err(StoreError::IsDirectory { .. })
    ));
    // An existing store opens as usual, and an older one is migrated where it can be written.
    let db = d.path().join("r.db");
    save(&mut open(&db), "check", None, &doc("/a", "etcd", 1));
    let mut s = Store::open_existing(Some(db.to_str().unwrap())).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
}

/// Regression (QA): reading a WAL store in a read-only directory failed with only "unable to
/// open database file" (SQLite could not make its -shm file). It is read without writing; when
/// a -wal file holds data the read would miss, the error says the directory is read-only and
/// what to do.
#[test]
fn a_store_on_a_read_only_filesystem_is_read() {
    let Some(fs) = disktier_testkit::Mount::tmpfs_if_root(16 << 20) else {
        return;
    };
    let db = fs.dir.join("results.db");
    {
        let mut s = open(&db);
        save(&mut s, "check", None, &doc("/a", "etcd", 1));
        save(&mut s, "check", None, &doc("/b", "etcd", 2));
    }
    // A store whose writer is still open: its last run is only in the -wal file.
    let live = fs.dir.join("live");
    std::fs::create_dir(&live).unwrap();
    let mut writer = open(&db);
    let id = save(&mut writer, "check", None, &doc("/c", "etcd", 3));
    for ext in ["", "-wal"] {
        std::fs::copy(
            format!("{}{ext}", db.display()),
            format!("{}/results.db{ext}", live.display()),
        )
        .unwrap();
    }
    drop(writer);
    assert!(!fs.dir.join("results.db-shm").exists());
    fs.remount("ro");
    let mut s = Store::open_existing(Some(db.to_str().unwrap())).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 3);
    assert_eq!(s.get(&id).unwrap().doc["target"]["path"], "/c");
    let live_db = live.join("results.db");
    let e = Store::open_existing(Some(live_db.to_str().unwrap()))
        .err()
        .expect("the -wal data cannot be read without a -shm file");
    assert!(matches!(e, StoreError::ReadOnlyDir { .. }), "{e}");
    assert!(e.to_string().contains("is read-only"), "{e}");
    // Saving there is still refused as before (and spooled by the binary).
    assert!(Store::open(Some(db.to_str().unwrap())).is_err());
    fs.remount("rw");
}

/// Regression (QA): `history --target /abs/path` and `--target ./bd` did not find a run stored
/// with the target `bd` (relative, as typed). A target filter matches the path's canonical
/// spelling and, for older rows stored relative, any trailing part of it.
#[test]
fn a_target_filter_matches_every_spelling_of_the_path() {
    let d = tempfile::tempdir().unwrap();
    let bd = d.path().join("qa/bd");
    std::fs::create_dir_all(&bd).unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&bd, &link).unwrap();
    let canonical = std::fs::canonicalize(&bd).unwrap();
    let canonical = canonical.to_str().unwrap();
    let mut s = open(&d.path().join("r.db"));
    let mut ids = std::collections::BTreeMap::new();
    for target in [
        "bd",
        "./bd/",
        "qa/bd",
        canonical,
        "other/bd",
        "bdx",
        "/elsewhere/bd/x",
    ] {
        ids.insert(target, save(&mut s, "check", None, &doc(target, "etcd", 1)));
    }
    let listed = |s: &mut Store, arg: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .list(&Filter::default().target_path(arg))
            .unwrap()
            .into_iter()
            .map(|r| r.target.unwrap())
            .collect();
        v.sort();
        v
    };
    let mut want = vec!["./bd/", "bd", "qa/bd", canonical];
    want.sort();
    for arg in [
        bd.to_str().unwrap(),
        &format!("{}/", bd.display()),
        link.to_str().unwrap(),
    ] {
        assert_eq!(listed(&mut s, arg), want, "{arg}");
    }
    // A path that no longer exists still matches as typed and by its trailing parts.
    assert_eq!(listed(&mut s, "/elsewhere/bd/x"), vec!["/elsewhere/bd/x"]);
    assert!(listed(&mut s, "/nowhere/qa/bd").contains(&"qa/bd".to_string()));
}

#[test]
fn sqlite_lists_names_holding_nul_as_postgres_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(&dir.path().join("r.db"));
    nul_in_names_is_listed_as_replacement(&mut s);
}

/// QA (helper S): a row whose column another program set to the wrong type (`quick = 'yes'`)
/// made the listing and `show` fail with the driver's "Invalid column type Text at index: 6,
/// name: quick", which names neither the run nor the fix; it now names both.
#[test]
fn a_column_of_the_wrong_type_names_its_run_and_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("s.db");
    let mut s = open(&db);
    let id = save(&mut s, "check", None, &doc("/edited", "etcd", 1));
    drop(s);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE runs SET quick = 'yes' WHERE id = ?1", [&id])
        .unwrap();
    let mut s = open(&db);
    for e in [
        s.list(&Filter::default()).unwrap_err(),
        s.get(&id).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::BadRow { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains(&format!("run {id:?}")), "{text}");
        assert!(text.contains("name: quick"), "{text}");
        assert!(text.contains("delete the run's row"), "{text}");
    }
}
