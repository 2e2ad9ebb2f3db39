//! Helpers the store's backend tests (SQLite, PostgreSQL) share.

use disktier_store::{Filter, NewRun, RunSummary, Store};
use serde_json::Value;

/// Saves `doc` as a run of `kind` (in `group_id`, if any); returns its id.
pub fn save(s: &mut Store, kind: &str, group_id: Option<&str>, doc: &Value) -> String {
    s.save(&NewRun {
        kind,
        group_id,
        doc,
    })
    .unwrap()
}

/// The one run `filter` lists (it must list exactly one).
pub fn only(s: &mut Store, filter: Filter) -> RunSummary {
    let mut rows = s.list(&filter).unwrap();
    assert_eq!(rows.len(), 1, "{filter:?}: {rows:?}");
    rows.remove(0)
}

/// The ids of the runs the listing marks interrupted, in listing order.
pub fn interrupted_ids(s: &mut Store) -> Vec<String> {
    s.list(&Filter::default())
        .unwrap()
        .into_iter()
        .filter(|r| r.interrupted)
        .map(|r| r.id)
        .collect()
}

/// Saves a run whose target, profile and host name hold a NUL (an imported fio file can name
/// anything) and checks it lists the same in every backend, U+FFFD in the NUL's place, with the
/// document kept as given. PostgreSQL's text cannot hold NUL: such a run was refused there (and
/// spooled for good) while SQLite kept it.
pub fn nul_in_names_is_listed_as_replacement(s: &mut Store) {
    let doc = serde_json::json!({"schema_version": 1, "engine": "fio", "profile": "et\u{0}cd",
        "target": {"path": "/var/tmp/a\u{0}b", "kind": "directory"},
        "host": {"hostname": "node\u{0}1"},
        "results": {"write": {"iops": 7.0}}});
    let id = save(s, "import", None, &doc);
    let row = only(
        s,
        Filter {
            target: Some("/var/tmp/a\u{FFFD}b".into()),
            ..Filter::default()
        },
    );
    assert_eq!(row.id, id);
    assert_eq!(row.profile.as_deref(), Some("et\u{FFFD}cd"));
    assert_eq!(row.hostname.as_deref(), Some("node\u{FFFD}1"));
    assert_eq!(row.write_iops, Some(7.0));
    assert_eq!(s.get(&id).unwrap().doc, doc);
}

/// QA: importing one fio file twice stored two identical runs. An import is found again by its
/// document (the same file imported with the same options); another document, or a measured
/// run of the same document, is not.
pub fn an_import_is_found_again_by_its_document(s: &mut Store) {
    let doc = serde_json::json!({"schema_version": 1, "engine": "fio", "job": {"rw": "write"},
        "target": {"path": "/var/tmp/ecfio", "kind": "directory"}, "host": {"hostname": ""},
        "started_at": "2026-11-28T14:34:36.074Z"});
    let run = |kind, doc| NewRun {
        kind,
        group_id: None,
        doc,
    };
    assert_eq!(s.stored_import(&run("import", &doc)).unwrap(), None);
    let id = save(s, "import", None, &doc);
    assert_eq!(s.stored_import(&run("import", &doc)).unwrap(), Some(id));
    assert_eq!(s.stored_import(&run("bench", &doc)).unwrap(), None);
    let mut other = doc.clone();
    other["target"]["path"] = "/elsewhere".into();
    assert_eq!(s.stored_import(&run("import", &other)).unwrap(), None);
}

/// An import document for the race and migration tests.
pub fn import_doc(target: &str) -> Value {
    serde_json::json!({"schema_version": 1, "engine": "fio", "job": {"rw": "randwrite"},
        "target": {"path": target, "kind": "directory"}, "host": {"hostname": "n1"},
        "started_at": "2026-11-28T14:34:36.074Z", "results": {"write": {"iops": 9.0}}})
}

/// QA: two identical imports at the same instant were both stored (schema version 4 looked
/// the fingerprint up, then inserted). Here the race's interleaving, on two connections to one
/// store: both look it up and find nothing, both save; the second is refused by the store
/// and answers with the first's id, and one run is stored.
pub fn two_savers_of_one_import_store_it_once(a: &mut Store, b: &mut Store) {
    let doc = import_doc("/var/tmp/race");
    let run = NewRun {
        kind: "import",
        group_id: None,
        doc: &doc,
    };
    assert_eq!(a.stored_import(&run).unwrap(), None);
    assert_eq!(b.stored_import(&run).unwrap(), None);
    let first = a.save_as(&run, &disktier_store::Identity::new()).unwrap();
    let disktier_store::Saved::New(id) = first else {
        panic!("the first save stored nothing: {first:?}")
    };
    assert_eq!(
        b.save_as(&run, &disktier_store::Identity::new()).unwrap(),
        disktier_store::Saved::Already(id.clone())
    );
    assert_eq!(
        b.save_new(&run).unwrap(),
        disktier_store::Saved::Already(id)
    );
    assert_eq!(a.list(&Filter::default()).unwrap().len(), 1);
}

/// Threads that each open `open()` and save the same import at once (released together by a
/// barrier): exactly one stores it, the others are told its id.
pub fn racing_threads_store_one_import(open: impl Fn() -> Store + Send + Sync + 'static) {
    use std::sync::{Arc, Barrier};
    const N: usize = 8;
    let open = Arc::new(open);
    let barrier = Arc::new(Barrier::new(N));
    let threads: Vec<_> = (0..N)
        .map(|_| {
            let (open, barrier) = (open.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut s = open();
                let doc = import_doc("/var/tmp/threads");
                let run = NewRun {
                    kind: "import",
                    group_id: None,
                    doc: &doc,
                };
                barrier.wait();
                s.save_new(&run).unwrap()
            })
        })
        .collect();
    let saved: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let new: Vec<_> = saved
        .iter()
        .filter_map(|s| match s {
            disktier_store::Saved::New(id) => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(new.len(), 1, "{saved:?}");
    for s in &saved {
        if let disktier_store::Saved::Already(id) = s {
            assert_eq!(id, &new[0]);
        }
    }
    assert_eq!(open().list(&Filter::default()).unwrap().len(), 1);
}

/// The rows a version 4 store may hold, written with `exec(id, created_at, doc, fingerprint)`:
/// two imports of one document stored at once (both with its fingerprint, as version 4 let
/// happen), an import stored before version 4 (no fingerprint), two identical imports stored
/// before version 4, and a measured run.
pub fn write_version_4_rows(mut exec: impl FnMut(&str, &str, &str, &str, Option<&str>)) {
    let raced = serde_json::to_string(&import_doc("/raced")).unwrap();
    let f = disktier_store::fingerprint("import", &raced).unwrap();
    exec(
        "20250101-000000-00000b",
        "2025-01-01T00:00:00Z",
        "import",
        &raced,
        Some(&f),
    );
    exec(
        "20250101-000000-00000a",
        "2025-01-01T00:00:00Z",
        "import",
        &raced,
        Some(&f),
    );
    let old = serde_json::to_string(&import_doc("/old")).unwrap();
    exec(
        "20240101-000000-000001",
        "2024-01-01T00:00:00Z",
        "import",
        &old,
        None,
    );
    let twice = serde_json::to_string(&import_doc("/twice")).unwrap();
    exec(
        "20240102-000000-000002",
        "2024-01-02T00:00:00Z",
        "import",
        &twice,
        None,
    );
    exec(
        "20240103-000000-000003",
        "2024-01-03T00:00:00Z",
        "import",
        &twice,
        None,
    );
    exec(
        "20240104-000000-000004",
        "2024-01-04T00:00:00Z",
        "check",
        &old,
        None,
    );
}

/// After the migration to version 5 of [`write_version_4_rows`]'s store: every run is kept; of
/// two runs with one document the oldest (by time, then id) is the one an import finds; an
/// import stored before version 4 is found again (its fingerprint computed from its stored
/// document); a measured run of the same document is not fingerprinted.
pub fn version_4_rows_are_kept_and_found(s: &mut Store) {
    assert_eq!(
        s.schema_version().unwrap(),
        disktier_store::migrate::latest()
    );
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 6);
    let found = |s: &mut Store, kind: &str, target: &str| {
        let doc = import_doc(target);
        s.stored_import(&NewRun {
            kind,
            group_id: None,
            doc: &doc,
        })
        .unwrap()
    };
    assert_eq!(
        found(s, "import", "/raced").as_deref(),
        Some("20250101-000000-00000a")
    );
    assert_eq!(
        found(s, "import", "/old").as_deref(),
        Some("20240101-000000-000001")
    );
    assert_eq!(
        found(s, "import", "/twice").as_deref(),
        Some("20240102-000000-000002")
    );
    // Saving any of them again stores nothing.
    for target in ["/raced", "/old", "/twice"] {
        let doc = import_doc(target);
        let run = NewRun {
            kind: "import",
            group_id: None,
            doc: &doc,
        };
        assert!(matches!(
            s.save_new(&run).unwrap(),
            disktier_store::Saved::Already(_)
        ));
    }
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 6);
}
