//! The team store against a real PostgreSQL server (`DISKTIER_TEST_PG`, which scripts/test.sh
//! starts and exports). Each test works in its own schema so tests stay independent.

use disktier_store::{migrate, Filter, Store, StoreError};
use serde_json::json;

mod common;
use common::{
    an_import_is_found_again_by_its_document, interrupted_ids,
    nul_in_names_is_listed_as_replacement, only, save,
};

/// A fresh schema on the test server, and a store URL whose search_path points into it.
fn fresh(name: &str) -> Option<String> {
    let id = disktier_store::new_id();
    disktier_testkit::pg::fresh_schema(&format!("t_{name}"), &id).map(|s| s.url)
}

/// The schema at `url` as disktier with schema version `version` wrote it.
fn written_by_version(url: &str, version: usize) -> postgres::Client {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.batch_execute(&migrate::schema_as_written_by(version).unwrap())
        .unwrap();
    c
}

fn doc(target: &str, p99: u64) -> serde_json::Value {
    json!({"schema_version": 1, "engine": "fio", "profile": "etcd", "quick": false,
           "target": {"path": target, "kind": "directory"}, "host": {"hostname": "pg-node"},
           "results": {"sync": {"lat_ns": {"percentiles": {"99": p99}}}, "write": {"iops": 42.5}}})
}

#[test]
fn postgres_round_trip() {
    let Some(url) = fresh("rt") else { return };
    let mut s = Store::open(Some(&url)).unwrap();
    assert_eq!(s.schema_version().unwrap(), migrate::latest());
    let a = save(&mut s, "check", Some("g"), &doc("/a", 203776));
    save(&mut s, "check", None, &doc("/b", 4046848));
    let row = only(
        &mut s,
        Filter {
            target: Some("/a".into()),
            ..Filter::default()
        },
    );
    assert_eq!(row.sync_p99_ns, Some(203776));
    assert_eq!(row.write_iops, Some(42.5));
    assert_eq!(s.get(&a).unwrap().doc, doc("/a", 203776));
    only(
        &mut s,
        Filter {
            last: Some(1),
            ..Filter::default()
        },
    );
    // Reopening does not migrate again.
    let mut again = Store::open(Some(&url)).unwrap();
    assert_eq!(again.list(&Filter::default()).unwrap().len(), 2);
}

#[test]
fn postgres_version_1_schema_is_migrated_and_newer_is_refused() {
    let Some(url) = fresh("mig") else { return };
    {
        let mut c = written_by_version(&url, 1);
        c.batch_execute(
            "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc)
             VALUES ('20240101-000000-abcdef', '2024-01-01T00:00:00Z', 'check', FALSE, '{}', '{}', '{}');
             INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc)
             VALUES ('20240101-000000-c0ffee', '2024-01-01T00:00:00Z', 'check', FALSE, '{}', '{}', '{\"interrupted\":true}');
             INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc)
             VALUES ('20240101-000000-bad000', '2024-01-01T00:00:00Z', 'check', FALSE, '{}', '{}', '{not json')",
        )
        .unwrap();
    }
    let mut s = Store::open(Some(&url)).unwrap();
    assert_eq!(s.schema_version().unwrap(), migrate::latest());
    assert_eq!(
        s.get("20240101-000000-abcdef").unwrap().summary.kind,
        "check"
    );
    // The migration marks the interrupted run from its document, a damaged one included.
    assert_eq!(
        interrupted_ids(&mut s),
        vec!["20240101-000000-c0ffee".to_string()]
    );
    drop(s);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.execute(
        "INSERT INTO schema_migrations VALUES ($1, 'future', 'x')",
        &[&(migrate::latest() + 1)],
    )
    .unwrap();
    let e = Store::open(Some(&url))
        .err()
        .expect("a newer store is refused");
    assert!(e.to_string().contains("upgraded together"), "{e}");
}

#[test]
fn postgres_concurrent_writers_lose_no_row() {
    let Some(url) = fresh("conc") else { return };
    let threads: Vec<_> = (0..10)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                // Each writer opens its own connection, so they also race to migrate.
                let mut s = Store::open(Some(&url)).unwrap();
                for j in 0..5 {
                    save(&mut s, "import", None, &doc(&format!("/t{i}"), j));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut s = Store::open(Some(&url)).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 50);
}

#[test]
fn postgres_stores_names_holding_nul_as_sqlite_does() {
    let Some(url) = fresh("nul") else { return };
    let mut s = Store::open(Some(&url)).unwrap();
    nul_in_names_is_listed_as_replacement(&mut s);
}

/// Migrating a version 4 store with two runs of one import, and imports without one, as SQLite.
#[test]
fn postgres_version_4_store_with_duplicate_fingerprints_is_migrated_keeping_every_run() {
    let Some(url) = fresh("mig4") else { return };
    let mut c = written_by_version(&url, 4);
    common::write_version_4_rows(|id, at, kind, doc, f| {
        let q = "INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc, fingerprint) VALUES ($1, $2, $3, FALSE, '{}', '{}', $4, $5)";
        c.execute(q, &[&id, &at, &kind, &doc, &f]).unwrap();
    });
    common::version_4_rows_are_kept_and_found(&mut Store::open(Some(&url)).unwrap());
}

#[test]
fn postgres_connections_saving_one_import_at_once_store_it_once() {
    let Some(url) = fresh("race") else { return };
    let (mut a, mut b) = (Store::open(Some(&url)), Store::open(Some(&url)));
    common::two_savers_of_one_import_store_it_once(a.as_mut().unwrap(), b.as_mut().unwrap());
    let url = fresh("threads").unwrap();
    Store::open(Some(&url)).unwrap();
    common::racing_threads_store_one_import(move || Store::open(Some(&url)).unwrap());
}

#[test]
fn postgres_finds_an_import_again_as_sqlite_does() {
    let Some(url) = fresh("fp") else { return };
    let mut s = Store::open(Some(&url)).unwrap();
    an_import_is_found_again_by_its_document(&mut s);
}

/// A server that accepts the connection and never answers (a stalled PostgreSQL, another
/// service on the port) is given up on at connect_timeout: the driver timed the TCP connect
/// only, so disktier waited forever, a measured run's save with it. Needs no PostgreSQL.
#[test]
fn a_server_that_never_answers_is_given_up_on_at_connect_timeout() {
    use std::time::{Duration, Instant};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().collect();
        drop(held);
    });
    for mode in ["disable", "prefer"] {
        let url = format!("postgres://u@127.0.0.1:{port}/x?sslmode={mode}&connect_timeout=1");
        let (tx, rx) = std::sync::mpsc::channel();
        let started = Instant::now();
        std::thread::spawn(move || {
            let _ = tx.send(Store::open(Some(&url)).err().map(|e| e.to_string()));
        });
        let err = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("sslmode={mode}: still connecting after 20 s"))
            .expect("a server that never answers is no store");
        assert!(started.elapsed() < Duration::from_secs(5), "{mode}: {err}");
        assert!(
            err.contains("did not complete the connection within 1 s")
                && err.contains("connect_timeout"),
            "{err}"
        );
    }
}

/// `key=value` location of the test server as `role` (password `pw`), in `schema`.
fn as_role(role: &str, schema: &str) -> String {
    let base: postgres::Config = std::env::var("DISKTIER_TEST_PG").unwrap().parse().unwrap();
    let host = match &base.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        postgres::config::Host::Unix(p) => p.display().to_string(),
    };
    format!(
        "host={host} port={} dbname={} user={role} password=pw sslmode=disable options='-c search_path={schema}'",
        base.get_ports().first().copied().unwrap_or(5432),
        base.get_dbname().unwrap_or("postgres"),
    )
}

/// Regression (QA): every open ran CREATE TABLE IF NOT EXISTS, so a role without CREATE on the
/// schema — a reader granted SELECT, the nodes granted SELECT and INSERT — could neither list
/// nor save ("permission denied for schema"). A current store now takes no DDL; and reading a
/// schema that holds no store creates none, as for SQLite.
#[test]
fn roles_without_create_read_and_save_and_reading_creates_no_store() {
    let id = disktier_store::new_id();
    let Some(disktier_testkit::pg::Schema {
        mut client,
        name,
        url,
    }) = disktier_testkit::pg::fresh_schema("t_roles", &id)
    else {
        return;
    };
    let mut owner = Store::open(Some(&url)).unwrap();
    save(&mut owner, "check", None, &doc("/a", 1000));
    let (reader, writer) = (format!("{name}_r"), format!("{name}_w"));
    client
        .batch_execute(&format!(
            "CREATE ROLE {reader} LOGIN PASSWORD 'pw'; CREATE ROLE {writer} LOGIN PASSWORD 'pw';
             GRANT USAGE ON SCHEMA {name} TO {reader}, {writer};
             GRANT SELECT ON {name}.runs, {name}.schema_migrations TO {reader}, {writer};
             GRANT INSERT ON {name}.runs TO {writer};"
        ))
        .unwrap();
    let mut r = Store::open_existing(Some(&as_role(&reader, &name))).unwrap();
    assert_eq!(r.list(&Filter::default()).unwrap().len(), 1);
    let mut w = Store::open(Some(&as_role(&writer, &name))).unwrap();
    save(&mut w, "check", None, &doc("/b", 2000));
    assert_eq!(owner.list(&Filter::default()).unwrap().len(), 2);

    let empty = format!("{name}_empty");
    client
        .batch_execute(&format!("CREATE SCHEMA {empty}"))
        .unwrap();
    let empty_url = url.replace(&name, &empty);
    assert!(matches!(
        Store::open_existing(Some(&empty_url)),
        Err(StoreError::NoStore { .. })
    ));
    let tables: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1",
            &[&empty],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "reading created tables in {empty}");
}

/// Regression (QA): the driver's errors named no fix ("Connection refused", "invalid
/// connection string" with no reason). Each now says what to change, and none shows the
/// password. Needs no PostgreSQL.
#[test]
fn connection_errors_name_the_fix_without_the_password() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let cases = [
        (
            format!("postgres://app:hunter2@127.0.0.1:{port}/team"),
            "nothing accepts connections at 127.0.0.1:",
        ),
        (
            "host=127.0.0.1 port=abc user=app password=hunter2".to_string(),
            "invalid value for option `port`: correct it in the store location",
        ),
        (
            "postgres://app:hun@ter2@127.0.0.1/team".to_string(),
            "the user or password holds an unencoded @: percent-encode their special characters (@ as %40",
        ),
        // QA: a `/` or `?` after the @ in the password ended the driver's host there: "the
        // host name does not resolve" (host "ter2"), or "invalid value for option `port`".
        (
            format!("postgres://app:hun@ter2/x@127.0.0.1:{port}/team"),
            "the user or password holds an unencoded @",
        ),
        (
            format!("postgres://app:hun@ter2?x@127.0.0.1:{port}/team?sslmode=disable"),
            "the user or password holds an unencoded @",
        ),
        (
            format!("postgres://app:hun@t:er2/x@127.0.0.1:{port}/team"),
            "the user or password holds an unencoded @",
        ),
        // An @ in a database name or a query value is no password's.
        (
            format!("postgres://app:hunter2@127.0.0.1:{port}/team@x?application_name=a@b"),
            "nothing accepts connections at 127.0.0.1:",
        ),
    ];
    for (location, want) in cases {
        let e = Store::open(Some(&location)).err().unwrap().to_string();
        assert!(e.contains(want), "{location}: {e}");
        assert!(!e.contains("hunter2") && !e.contains("ter2"), "{e}");
    }
}

/// Regression (QA): the driver's messages were scrubbed of the password wherever its text
/// appeared, so with the password `a` every "a" of the message became the redaction mark
/// ("nothing ***ccepts connections ***t 127.0.0.1:1: check the host ***nd port ..."). The
/// password is hidden where the location carries it, and the message reads. Needs no server.
#[test]
fn a_one_letter_password_is_hidden_only_where_the_location_carries_it() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    for location in [
        format!("postgres://app:a@127.0.0.1:{port}/team"),
        format!("host=127.0.0.1 port={port} user=app password=a dbname=team"),
        format!("postgres://app@127.0.0.1:{port}/team?password=a"),
    ] {
        let e = Store::open(Some(&location)).err().unwrap().to_string();
        assert!(
            e.contains("nothing accepts connections at 127.0.0.1:")
                && e.contains("and that PostgreSQL runs and listens there")
                && !e.contains("***c"),
            "{location}: {e}"
        );
        assert!(
            !e.contains(":a@") && !e.contains("password=a"),
            "{location}: {e}"
        );
    }
}

/// Regression (QA): a Unix-socket location whose directory does not exist, or holds no
/// server's socket, failed with a bare "No such file or directory". It now names what is
/// missing and the fix (the server's socket directory, or a TCP host). Needs no PostgreSQL.
#[test]
fn a_missing_unix_socket_names_the_directory_and_the_fix() {
    let e = Store::open(Some("host=/nonexistent/dir user=app dbname=team"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("the socket directory /nonexistent/dir does not exist")
            && e.contains("/var/run/postgresql")
            && e.contains("connect over TCP"),
        "{e}"
    );
    assert!(!std::path::Path::new("/nonexistent/dir").exists());
    let empty = tempfile::tempdir().unwrap();
    let location = format!(
        "host={} port=6543 user=app dbname=team",
        empty.path().display()
    );
    let e = Store::open_existing(Some(&location))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("no PostgreSQL listens on port 6543 in") && e.contains(".s.PGSQL.6543"),
        "{e}"
    );
}

/// The server's refusals name the fix: an unknown user, a database that does not exist, a
/// role that lacks the grant to save.
#[test]
fn postgres_refusals_name_the_fix() {
    let id = disktier_store::new_id();
    let Some(disktier_testkit::pg::Schema {
        mut client,
        name,
        url,
    }) = disktier_testkit::pg::fresh_schema("t_refuse", &id)
    else {
        return;
    };
    Store::open(Some(&url)).unwrap();
    let reader = format!("{name}_r");
    client
        .batch_execute(&format!(
            "CREATE ROLE {reader} LOGIN PASSWORD 'pw'; GRANT USAGE ON SCHEMA {name} TO {reader};
             GRANT SELECT ON {name}.runs, {name}.schema_migrations TO {reader};"
        ))
        .unwrap();
    let mut r = Store::open(Some(&as_role(&reader, &name))).unwrap();
    let e = r
        .save(&disktier_store::NewRun {
            kind: "check",
            group_id: None,
            doc: &doc("/a", 1),
        })
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("permission denied") && e.contains("saving INSERT on runs"),
        "{e}"
    );
    let nodb = as_role(&reader, &name).replace("dbname=", &format!("dbname={name}_none"));
    let e = Store::open(Some(&nodb)).err().unwrap().to_string();
    assert!(e.contains(&format!("createdb {name}_none")), "{e}");
    let nouser = as_role(&format!("{name}_nobody"), &name);
    let e = Store::open(Some(&nouser)).err().unwrap().to_string();
    // Under trust authentication the server says there is no such role; under password
    // authentication it refuses the password (it does not tell a missing role apart).
    assert!(
        e.contains("does not admit user") || e.contains("refused the password of user"),
        "{e}"
    );
    assert!(!e.contains("password=pw"), "{e}");
}

/// Regression (QA): a database that does not exist was named in the fix as typed, so `dbname='team
/// db$(id)'` gave "createdb team db$(id)": pasted, it runs `id` and makes the database `team`
/// (createdb's second word is a description). The name is now one quoted shell word.
#[test]
fn the_createdb_fix_quotes_the_database_name() {
    let Some(disktier_testkit::pg::Schema { name, .. }) =
        disktier_testkit::pg::fresh_schema("t_createdb", &disktier_store::new_id())
    else {
        return;
    };
    let db = format!("{name} db$(id)");
    let loc = as_role("postgres", &name);
    let given = loc.split(' ').find(|w| w.starts_with("dbname=")).unwrap();
    let nodb = loc.replace(given, &format!("dbname='{db}'"));
    let e = Store::open(Some(&nodb)).err().unwrap().to_string();
    assert!(e.contains(&format!("(createdb '{db}')")), "{e}");
}

/// Regression (QA): a `key=value` location with `hostaddr` and no `host` (what libpq takes,
/// and what the README suggests for a static binary) failed under the default sslmode against
/// a server that offers TLS: "no hostname provided for TLS handshake". The address now stands
/// for the name, verify-full included (the test certificate holds 127.0.0.1).
#[test]
fn hostaddr_without_host_connects_with_tls() {
    let Some(url) = fresh("hostaddr") else { return };
    let base: postgres::Config = std::env::var("DISKTIER_TEST_PG").unwrap().parse().unwrap();
    let Some(postgres::config::Host::Tcp(host)) = base.get_hosts().first() else {
        return;
    };
    let Ok(addr) = host.parse::<std::net::IpAddr>() else {
        eprintln!("skipped: DISKTIER_TEST_PG names {host}, not an address");
        return;
    };
    let schema = url.rsplit("search_path%3D").next().unwrap();
    let location = format!(
        "hostaddr={addr} port={} user={} dbname={} options='-c search_path={schema}'",
        base.get_ports().first().copied().unwrap_or(5432),
        base.get_user().unwrap_or("postgres"),
        base.get_dbname().unwrap_or("postgres"),
    );
    let mut s = Store::open(Some(&location)).unwrap();
    save(&mut s, "check", None, &doc("/a", 1));
    if let Ok(ca) = std::env::var("DISKTIER_TEST_PG_CA") {
        let verified = format!("{location} sslmode=verify-full sslrootcert={ca}");
        let mut s = Store::open_existing(Some(&verified)).unwrap();
        assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
    }
}

/// Regression (QA): a server that stopped answering once connected (a stopped backend: the
/// kernel still ACKs, so neither keepalives nor a TCP user timeout fire; or the network gone)
/// held every operation forever, a measured run's save with it. Each operation now gives up
/// at the location's query_timeout with an error naming it, and the connection is not used
/// again.
#[test]
fn a_server_that_stops_answering_is_given_up_on_at_query_timeout() {
    use std::time::{Duration, Instant};
    let id = disktier_store::new_id();
    let Some(schema) = disktier_testkit::pg::fresh_schema("t_stall", &id) else {
        return;
    };
    let proxy = disktier_testkit::pg::StallingProxy::to_test_server()
        .expect("DISKTIER_TEST_PG names a TCP host");
    let location = proxy.location(&schema.name, "query_timeout=2");
    proxy.stall_on("INSERT INTO runs");
    let (tx, rx) = std::sync::mpsc::channel();
    let started = Instant::now();
    let at = location.clone();
    std::thread::spawn(move || {
        // Opened (connected, migrated, listed) before the server stops answering.
        let mut s = Store::open(Some(&at)).unwrap();
        assert!(s.list(&Filter::default()).unwrap().is_empty());
        let saved = s.save(&disktier_store::NewRun {
            kind: "check",
            group_id: None,
            doc: &doc("/b", 2),
        });
        let listed = s.list(&Filter::default());
        let _ = tx.send((
            saved.err().map(|e| e.to_string()),
            listed.err().map(|e| e.to_string()),
        ));
    });
    let (saved, listed) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("still waiting for a stalled server after 30 s");
    let saved = saved.expect("a save to a stalled server fails");
    assert!(
        saved.contains("did not answer within 2 s") && saved.contains("query_timeout=SECONDS"),
        "{saved}"
    );
    let listed = listed.expect("the connection given up on is not used again");
    assert!(listed.contains("query_timeout"), "{listed}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // A value that is no number of seconds is named.
    let e = Store::open(Some(
        &location.replace("query_timeout=2", "query_timeout=soon"),
    ))
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("query_timeout \"soon\" is not a whole number"),
        "{e}"
    );
}

/// Regression (QA): a location whose search_path names a schema that does not exist (a typo,
/// or one not made yet) could not save, and said only the server's "no schema has been
/// selected to create in", naming neither the schema nor the fix. It now names the schema
/// and both fixes; reading it is still "there is no result store", creating nothing.
#[test]
fn a_search_path_naming_no_schema_is_named_with_the_fix() {
    let Some(schema) = disktier_testkit::pg::fresh_schema("t_noschema", &disktier_store::new_id())
    else {
        return;
    };
    let missing = format!("{}_typo", schema.name);
    let url = schema.url.replace(&schema.name, &missing);
    let e = Store::open(Some(&url)).err().unwrap().to_string();
    assert!(
        e.contains(&format!(
            "no schema of the connection's search_path ({missing}) exists"
        )) && e.contains("CREATE SCHEMA")
            && e.contains("correct search_path in the options of the store location"),
        "{e}"
    );
    assert!(matches!(
        Store::open_existing(Some(&url)),
        Err(StoreError::NoStore { .. })
    ));
}

/// Regression (QA): a store of an older schema version, opened by a reader or a node granted
/// what docs/store.md lists (USAGE, SELECT, INSERT: no CREATE, which a current store needs
/// not), failed with "permission denied for schema ...: user R lacks a grant", naming grants
/// the role had and not the migration only the owner may make. It now says the store is older
/// and who migrates it; once the owner has, the reader reads.
#[test]
fn an_older_store_a_reader_may_not_migrate_names_the_owner() {
    let id = disktier_store::new_id();
    let Some(disktier_testkit::pg::Schema {
        mut client,
        name,
        url,
    }) = disktier_testkit::pg::fresh_schema("t_oldro", &id)
    else {
        return;
    };
    let reader = format!("{name}_r");
    client
        .batch_execute(&format!(
            "SET search_path = {name}; {} {}
             INSERT INTO schema_migrations VALUES (1, 'runs', '2024-01-01T00:00:00Z');
             INSERT INTO runs (id, created_at, kind, quick, host_json, device_json, doc)
             VALUES ('20240101-000000-abcdef', '2024-01-01T00:00:00Z', 'check', FALSE, '{{}}', '{{}}', '{{}}');
             CREATE ROLE {reader} LOGIN PASSWORD 'pw'; GRANT USAGE ON SCHEMA {name} TO {reader};
             GRANT SELECT ON {name}.runs, {name}.schema_migrations TO {reader};",
            migrate::CREATE_SCHEMA_MIGRATIONS.to_string() + ";",
            migrate::MIGRATIONS[0].sql
        ))
        .unwrap();
    let e = Store::open_existing(Some(&as_role(&reader, &name)))
        .err()
        .unwrap();
    assert!(
        matches!(e, StoreError::OlderNoPrivilege { found: 1, .. }),
        "{e}"
    );
    let e = e.to_string();
    assert!(
        e.contains("has store schema version 1, older than")
            && e.contains(&format!("user {reader} may not migrate it"))
            && e.contains("open it once with this disktier as the store's owner")
            && !e.contains("password=pw"),
        "{e}"
    );
    // The owner migrates it; the reader then reads.
    Store::open_existing(Some(&url)).unwrap();
    let mut r = Store::open_existing(Some(&as_role(&reader, &name))).unwrap();
    assert_eq!(r.list(&Filter::default()).unwrap().len(), 1);
}
