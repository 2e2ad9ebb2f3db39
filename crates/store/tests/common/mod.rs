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
