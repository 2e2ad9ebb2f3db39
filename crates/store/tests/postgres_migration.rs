//! Migrating a large PostgreSQL store under `query_timeout` (the test server, `DISKTIER_TEST_PG`).

use disktier_store::{migrate, Filter, Store};

/// Imports stored before version 4, none fingerprinted: enough that fingerprinting them all
/// takes several seconds, each page of 64 a small part of one.
const IMPORTS: i64 = 5_000;

/// QA: a version 4 store of 300,000 imports failed every command after `query_timeout` (60 s)
/// as "the server did not answer", the migration being one operation, and rolled back, so it
/// was never migrated. Each step and each page is now one operation: a migration longer as a
/// whole than `query_timeout=1` ends, and the store is at the current version.
#[test]
fn a_migration_longer_than_query_timeout_as_a_whole_ends() {
    let id = disktier_store::new_id();
    let Some(s) = disktier_testkit::pg::fresh_schema("t_longmig", &id) else {
        return;
    };
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    c.batch_execute(&migrate::schema_as_written_by(4).unwrap())
        .unwrap();
    c.execute(
        "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc)
         SELECT '20240101-000000-' || lpad(g::text, 7, '0'), '2024-01-01T00:00:00Z', 'import',
                FALSE, '{}', '{}',
                '{\"schema_version\":1,\"engine\":\"fio\",\"target\":{\"path\":\"/t' || g || '\",\"kind\":\"directory\"},\"host\":{\"hostname\":\"n1\"}}'
         FROM generate_series(1, $1::BIGINT) g",
        &[&IMPORTS],
    )
    .unwrap();
    let mut store = match Store::open(Some(&format!("{}&query_timeout=1", s.url))) {
        Ok(store) => store,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(store.schema_version().unwrap(), migrate::latest());
    assert_eq!(
        store.list(&Filter::default()).unwrap().len() as i64,
        IMPORTS
    );
    let unfingerprinted: i64 = c.query_one(migrate::UNFINGERPRINTED, &[]).unwrap().get(0);
    assert_eq!(unfingerprinted, 0);
}
