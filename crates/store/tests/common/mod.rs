//! Helpers the store's backend tests (SQLite, PostgreSQL) share.

use disktier_store::{NewRun, Store};
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
