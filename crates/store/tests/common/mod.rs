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
