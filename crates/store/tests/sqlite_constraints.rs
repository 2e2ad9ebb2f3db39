//! A store whose runs table was given a constraint by hand: a save that the constraint refuses
//! ends with an error that says so, and never retries for ever (a refused insert used to be
//! taken for a taken id whatever refused it, and the save drew new ids without end).

use disktier_store::{NewRun, Store, StoreError};
use serde_json::json;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// Saves one `bench` run into the store at `db` on a thread, and gives its result, or panics
/// when the save has not ended in a minute (it loops).
fn save_or_hang(db: &Path) -> Result<String, StoreError> {
    let db = db.to_str().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let doc = json!({"schema_version": 1, "profile": "etcd", "target": {"path": "/d"}});
        let mut s = Store::open(Some(&db)).unwrap();
        let _ = tx.send(s.save(&NewRun {
            kind: "bench",
            group_id: None,
            doc: &doc,
        }));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the save did not end: it retries a refused insert without end")
}

/// A store with one run saved, then `sql` run on it.
fn store_then(sql: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    save_or_hang(&db).unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
    d
}

#[test]
fn a_trigger_that_refuses_inserts_is_an_error_not_a_retry() {
    let d = store_then(
        "CREATE TRIGGER frozen BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'frozen by policy'); END;",
    );
    let e = save_or_hang(&d.path().join("r.db")).unwrap_err();
    assert!(e.to_string().contains("frozen by policy"), "{e}");
}

#[test]
fn a_unique_index_added_by_hand_ends_the_save_naming_it() {
    let d = store_then("CREATE UNIQUE INDEX one_per_kind ON runs (kind);");
    let e = save_or_hang(&d.path().join("r.db")).unwrap_err();
    assert!(
        matches!(e, StoreError::IdsRefused { tries: 16, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains(".schema runs"), "{e}");
}
