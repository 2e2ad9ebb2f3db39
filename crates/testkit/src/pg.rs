//! The test PostgreSQL server (`DISKTIER_TEST_PG`, which scripts/test.sh starts and exports):
//! a fresh schema a test works in, so tests stay independent.

/// A schema of its own on the test server: a client connected there, the schema's name, and a
/// store URL whose search_path points into it.
pub struct Schema {
    pub client: postgres::Client,
    pub name: String,
    pub url: String,
}

/// Creates the schema `{prefix}_{id}` (`-` in `id` made `_`) on the test server; `None` (the
/// test is skipped, or fails under CI) where `DISKTIER_TEST_PG` is not set.
pub fn fresh_schema(prefix: &str, id: &str) -> Option<Schema> {
    if !crate::require(
        std::env::var("DISKTIER_TEST_PG").is_ok(),
        "a PostgreSQL server in DISKTIER_TEST_PG (scripts/test.sh starts one)",
    ) {
        return None;
    }
    let base = std::env::var("DISKTIER_TEST_PG").unwrap();
    let name = format!("{prefix}_{}", id.replace('-', "_"));
    let mut client = postgres::Client::connect(&base, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("CREATE SCHEMA {name}"))
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{name}");
    Some(Schema { client, name, url })
}
