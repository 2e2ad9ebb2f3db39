//! The team backend: the same schema and migrations in PostgreSQL. Migrations run under a
//! transaction-scoped advisory lock so many nodes starting at once migrate exactly once. The
//! schema is the connection's `search_path` (a URL may set it with
//! `?options=-c%20search_path%3Dteam`). Connecting is timed by `connect_timeout`, and every
//! request after it by `query_timeout` ([`crate::pgsession`]), so that a server that stops
//! answering cannot hold a run.

use crate::error::{Result, StoreError};
use crate::migrate::{self, CREATE_SCHEMA_MIGRATIONS};
use crate::model::{now_rfc3339, Filter, RunSummary, StoredRun};
use crate::pgconn::{PgTarget, SslMode};
use crate::pgsession::{Failed, Session, Within};
use crate::sql;
use crate::Backend;
use postgres::{Client, Row};
use std::time::Duration;

/// The advisory lock key disktier's migrations hold ("dtier" in ASCII).
const MIGRATION_LOCK: i64 = 0x0064_7469_6572;

pub struct PgStore {
    /// The connection, each operation given up on at the location's `query_timeout`.
    session: Session,
    /// The location with every credential replaced, for messages.
    shown: String,
    /// Scrubs the location's secrets from driver messages.
    target: PgTarget,
}

/// The driver's error `e` with the fix ([`crate::pgerror::explain`]), scrubbed of `target`'s
/// secrets.
fn explained(e: &postgres::Error, target: &PgTarget) -> String {
    let verify_full = target.ssl == SslMode::VerifyFull;
    target.scrub(&crate::pgerror::explain(e, &target.config, verify_full))
}

/// Connects to `target`, giving up when the whole start-up (TCP, TLS, authentication) takes
/// longer than its connect timeout for each host it names. The driver times the TCP connect
/// only: a server that accepts the connection and never answers (a stalled PostgreSQL, a
/// port of some other service) held disktier forever, and a measured run with it (QA). The
/// attempt runs on a thread that is left behind when it does not finish in time.
fn connect(target: &PgTarget) -> Result<Client> {
    let tls = target.tls()?;
    let mut config = target.config.clone();
    // libpq takes `hostaddr` without `host`; the driver then has no name for TLS and fails
    // ("no hostname provided for TLS handshake") under the default sslmode, prefer, against
    // any server that offers TLS (QA). The address stands for the name, as in libpq, which
    // checks a verify-full certificate against hostaddr when no host is given.
    if config.get_hosts().is_empty() {
        for addr in config.get_hostaddrs().to_vec() {
            config.host(&addr.to_string());
        }
    }
    let hosts = config
        .get_hosts()
        .len()
        .max(config.get_hostaddrs().len())
        .max(1) as u32;
    // `connect_timeout=0` (libpq: wait indefinitely) sets no limit.
    let limit = target
        .connect_timeout
        .map(|t| t.saturating_mul(hosts))
        .unwrap_or(Duration::MAX);
    let failed = |message: String| StoreError::Postgres {
        url: target.shown.clone(),
        message,
    };
    match crate::pgsession::within("pg-connect", limit, move || config.connect(tls)) {
        Within::Done(Ok(client)) => Ok(client),
        Within::Done(Err(e)) => Err(failed(explained(&e, target))),
        Within::TimedOut => Err(failed(format!(
            "the server did not complete the connection within {} s (it may accept connections and never answer, as a stalled server or another service on that port does): check the host and port, or give it longer with connect_timeout=SECONDS",
            limit.as_secs()
        ))),
        Within::Failed(why) => Err(failed(why)),
    }
}

impl PgStore {
    /// Connects to a `postgres://` URL or libpq `key=value` string (see [`crate::pgconn`] for
    /// TLS) and migrates the schema.
    pub fn open(location: &str) -> Result<PgStore> {
        PgStore::open_as(location, true)
    }

    /// Connects as [`PgStore::open`] to read the store: a database (or schema) that holds no
    /// store is [`StoreError::NoStore`], and nothing is created in it (as for SQLite).
    pub fn open_existing(location: &str) -> Result<PgStore> {
        PgStore::open_as(location, false)
    }

    /// Connects; migrates only a store that needs it, so a store at the current version takes
    /// no DDL and no lock: a role granted only SELECT (a reader) or SELECT and INSERT (the
    /// nodes) on the tables, without CREATE on the schema, reads and saves (QA: every open
    /// ran CREATE TABLE IF NOT EXISTS, which such a role is refused, "permission denied for
    /// schema public"). `create`: make the store when there is none.
    fn open_as(location: &str, create: bool) -> Result<PgStore> {
        let target = PgTarget::parse(location)?;
        let shown = target.shown.clone();
        let client = connect(&target)?;
        let mut store = PgStore {
            session: Session::new(client, target.query_timeout),
            shown,
            target,
        };
        store.limit_lock_waits()?;
        match store.version()? {
            Some(v) if v > migrate::latest() => Err(StoreError::TooNew {
                location: store.shown.clone(),
                found: v,
                known: migrate::latest(),
            }),
            Some(v) if v == migrate::latest() => Ok(store),
            None if !create => Err(StoreError::NoStore {
                location: store.shown.clone(),
            }),
            Some(found) if found > 0 => store.migrate(Some(found)).map(|()| store),
            _ => store.migrate(None).map(|()| store),
        }
    }

    /// Gives up a wait for another session's lock (a table locked by a stuck transaction, a
    /// migration that does not end) after SQLite's busy timeout, so that the run is spooled as
    /// it is for a locked SQLite file; PostgreSQL waits forever by default (QA: a save, and
    /// the measured run with it, hung while another session held the table). A location that
    /// sets its own `lock_timeout` (in `options`) keeps it.
    fn limit_lock_waits(&mut self) -> Result<()> {
        if self
            .target
            .config
            .get_options()
            .is_some_and(|o| o.contains("lock_timeout"))
        {
            return Ok(());
        }
        let set = format!(
            "SET lock_timeout = {}",
            crate::sqlite::busy_timeout().as_millis()
        );
        self.run(move |c| c.batch_execute(&set))
    }

    /// Runs `op` on the connection, giving up at the location's `query_timeout` (a server that
    /// stops answering once connected, or a network gone under the connection, held the
    /// driver, and a measured run's save with it, forever: [`crate::pgsession`]).
    fn run<T, F>(&mut self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Client) -> std::result::Result<T, postgres::Error> + Send + 'static,
    {
        self.session.run(op).map_err(|f| self.failed(f))
    }

    fn failed(&self, f: Failed) -> StoreError {
        let message = match f {
            Failed::Driver(e) => return self.e(e),
            Failed::TimedOut(limit) => {
                return StoreError::NoAnswer {
                    url: self.shown.clone(),
                    secs: limit.as_secs(),
                }
            }
            Failed::Abandoned => {
                "an earlier request got no answer in time and its connection was given up: check the server, or give it longer with query_timeout=SECONDS in the store location".into()
            }
            Failed::Thread(m) => m,
        };
        StoreError::Postgres {
            url: self.shown.clone(),
            message,
        }
    }

    /// The newest migration applied, or `None` when the search path holds no store.
    fn version(&mut self) -> Result<Option<i64>> {
        match self.session.run(|c| {
            c.query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )?
            .try_get(0)
        }) {
            Ok(v) => Ok(Some(v)),
            Err(Failed::Driver(e))
                if e.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) =>
            {
                Ok(None)
            }
            Err(f) => Err(self.failed(f)),
        }
    }

    fn e(&self, source: postgres::Error) -> StoreError {
        StoreError::Postgres {
            url: self.shown.clone(),
            message: explained(&source, &self.target),
        }
    }

    /// Migrates the store in one transaction under the advisory lock; a store found newer
    /// under the lock is refused. `older`: the version of the store found, when there is one
    /// to migrate (not a new one to create). Each step is its own operation under
    /// `query_timeout`, each page of a fill too, in the one transaction `BEGIN` opened: a
    /// migration that takes longer as a whole than `query_timeout` still ends (QA: a version
    /// 4 store of 300,000 imports failed every command after 60 s as "the server did not
    /// answer", and rolled back, so it was never migrated), while a server that stops
    /// answering is still given up on within it.
    fn migrate(&mut self, older: Option<i64>) -> Result<()> {
        let too_new = self.migrate_steps();
        if let Err(Failed::Driver(_)) = too_new {
            // Leave the connection usable; a failed ROLLBACK changes nothing more.
            let _ = self.session.run(|c| c.batch_execute("ROLLBACK"));
        }
        let too_new = match (too_new, older) {
            (Ok(v), _) => v,
            // A reader or a node granted only what a current store needs (no CREATE on the
            // schema) meets an older one: the grants are right, the store is not migrated yet
            // (QA: "user ro lacks a grant", listing grants it had).
            (Err(Failed::Driver(e)), Some(found))
                if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) =>
            {
                return Err(StoreError::OlderNoPrivilege {
                    location: self.shown.clone(),
                    user: self.target.config.get_user().unwrap_or("").to_string(),
                    found,
                    known: migrate::latest(),
                    why: self.target.scrub(&crate::pgerror::chain(&e)),
                });
            }
            (Err(f), _) => return Err(self.failed(f)),
        };
        match too_new {
            Some(found) => Err(StoreError::TooNew {
                location: self.shown.clone(),
                found,
                known: migrate::latest(),
            }),
            None => Ok(()),
        }
    }

    /// [`PgStore::migrate`]'s operations: `Some(version)` of a store too new (nothing done).
    fn migrate_steps(&mut self) -> std::result::Result<Option<i64>, Failed> {
        let current = self.session.run(|c| {
            c.batch_execute("BEGIN")?;
            c.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
            c.batch_execute(CREATE_SCHEMA_MIGRATIONS)?;
            c.query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )?
            .try_get::<_, i64>(0)
        })?;
        if current > migrate::latest() {
            self.session.run(|c| c.batch_execute("ROLLBACK"))?;
            return Ok(Some(current));
        }
        for m in migrate::pending(current) {
            let total = self.session.run(move |c| {
                c.batch_execute(m.sql)?;
                match m.then {
                    Some(migrate::Then::FingerprintImports) => c
                        .query_one(migrate::UNFINGERPRINTED, &[])?
                        .try_get::<_, i64>(0),
                    None => Ok(0),
                }
            })?;
            if m.then == Some(migrate::Then::FingerprintImports) {
                let mut upgrade = migrate::Upgrade::start(&self.shown, m.version, total);
                let mut after = String::new();
                loop {
                    let mark = after.clone();
                    let Some((last, n)) = self.session.run(move |c| fingerprint_page(c, &mark))?
                    else {
                        break;
                    };
                    after = last;
                    if let Some(u) = upgrade.as_mut() {
                        u.advance(n);
                    }
                }
                if let Some(u) = upgrade {
                    u.finish();
                }
            }
            self.session.run(move |c| {
                c.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                    &[&m.version, &m.name, &now_rfc3339()],
                )
            })?;
        }
        self.session.run(|c| c.batch_execute("COMMIT"))?;
        Ok(None)
    }

    /// The runs `rows` hold.
    fn read(&self, rows: Vec<Row>) -> Result<Vec<StoredRun>> {
        rows.iter().map(|r| read_row(r, &self.shown)).collect()
    }
}

/// [`migrate::Then::FingerprintImports`] in PostgreSQL: the page of imports after id `after`
/// fingerprinted; the page's last id and size, or `None` when none is left.
fn fingerprint_page(
    c: &mut Client,
    after: &str,
) -> std::result::Result<Option<(String, usize)>, postgres::Error> {
    let page = c.query(&migrate::unfingerprinted_page(sql::pg_mark), &[&after])?;
    let Some(last) = page.last() else {
        return Ok(None);
    };
    let last: String = last.try_get(0)?;
    let set = migrate::set_fingerprint(sql::pg_mark);
    for r in &page {
        let id: String = r.try_get(0)?;
        let doc: String = r.try_get(1)?;
        if let Some(f) = sql::fingerprint("import", &doc) {
            c.execute(&set, &[&f, &id])?;
        }
    }
    Ok(Some((last, page.len())))
}

fn read_row(r: &Row, location: &str) -> Result<StoredRun> {
    let host: String = r.try_get(14).map_err(|e| corrupt_col(r, location, e))?;
    let device: String = r.try_get(15).map_err(|e| corrupt_col(r, location, e))?;
    let doc: String = r.try_get(16).map_err(|e| corrupt_col(r, location, e))?;
    let id: String = r.try_get(0).unwrap_or_default();
    let (host, device, doc) = sql::parse_json_columns(location, &id, [&host, &device, &doc])?;
    Ok(StoredRun {
        summary: RunSummary {
            id: r.try_get(0).map_err(|e| corrupt_col(r, location, e))?,
            created_at: r.try_get(1).map_err(|e| corrupt_col(r, location, e))?,
            kind: r.try_get(2).map_err(|e| corrupt_col(r, location, e))?,
            profile: r.try_get(3).map_err(|e| corrupt_col(r, location, e))?,
            target: r.try_get(4).map_err(|e| corrupt_col(r, location, e))?,
            hostname: r.try_get(5).map_err(|e| corrupt_col(r, location, e))?,
            quick: r.try_get(6).map_err(|e| corrupt_col(r, location, e))?,
            engine: r.try_get(7).map_err(|e| corrupt_col(r, location, e))?,
            group_id: r.try_get(8).map_err(|e| corrupt_col(r, location, e))?,
            sync_p99_ns: r.try_get(9).map_err(|e| corrupt_col(r, location, e))?,
            read_iops: r.try_get(10).map_err(|e| corrupt_col(r, location, e))?,
            write_iops: r.try_get(11).map_err(|e| corrupt_col(r, location, e))?,
            read_bw_bytes: r.try_get(12).map_err(|e| corrupt_col(r, location, e))?,
            write_bw_bytes: r.try_get(13).map_err(|e| corrupt_col(r, location, e))?,
            interrupted: r.try_get(17).map_err(|e| corrupt_col(r, location, e))?,
        },
        host,
        device,
        doc,
    })
}

fn corrupt_col(r: &Row, location: &str, e: postgres::Error) -> StoreError {
    StoreError::BadRow {
        location: location.to_string(),
        id: r.try_get::<_, String>(0).unwrap_or_default(),
        why: e.to_string(),
    }
}

/// Every credential in a location replaced by `***` (see [`crate::pgconn::redact`]).
pub fn redact(location: &str) -> String {
    crate::pgconn::redact(location)
}

impl Backend for PgStore {
    fn location(&self) -> String {
        self.shown.clone()
    }

    fn insert(&mut self, row: &StoredRun) -> Result<bool> {
        let [host, device, doc] = sql::json_columns(row)?;
        let fingerprint = sql::fingerprint(&row.summary.kind, &doc);
        let row = row.clone();
        let res = self.session.run(move |c| {
            let s = &row.summary;
            c.execute(
                &sql::insert(sql::pg_mark),
                &[
                    &s.id,
                    &s.created_at,
                    &s.kind,
                    &s.profile,
                    &s.target,
                    &s.hostname,
                    &s.quick,
                    &s.engine,
                    &s.group_id,
                    &s.sync_p99_ns,
                    &s.read_iops,
                    &s.write_iops,
                    &s.read_bw_bytes,
                    &s.write_bw_bytes,
                    &host,
                    &device,
                    &doc,
                    &s.interrupted,
                    &fingerprint,
                ],
            )
        });
        match res {
            Ok(_) => Ok(true),
            Err(Failed::Driver(e))
                if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) =>
            {
                Ok(false)
            }
            Err(f) => Err(self.failed(f)),
        }
    }

    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>> {
        let (q, params) = sql::list(filter, sql::pg_mark);
        let rows = self.run(move |c| {
            let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
                .iter()
                .map(|p| p as &(dyn postgres::types::ToSql + Sync))
                .collect();
            c.query(&q, &refs)
        })?;
        Ok(sql::summaries(self.read(rows)?))
    }

    fn by_fingerprint(&mut self, fingerprint: &str) -> Result<Option<String>> {
        let fingerprint = fingerprint.to_string();
        let rows =
            self.run(move |c| c.query(&sql::by_fingerprint(sql::pg_mark), &[&fingerprint]))?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn by_id(&mut self, id: &str) -> Result<Vec<StoredRun>> {
        let len = id.chars().count() as i32;
        let id = id.to_string();
        let whole = id.clone();
        let rows = self.run(move |c| c.query(&sql::by_exact(sql::pg_mark), &[&whole]))?;
        let exact = self.read(rows)?;
        if !exact.is_empty() {
            return Ok(exact);
        }
        let rows = self.run(move |c| c.query(&sql::by_prefix(sql::pg_mark), &[&len, &id]))?;
        self.read(rows)
    }

    fn schema_version(&mut self) -> Result<i64> {
        Ok(self.version()?.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            super::redact("postgres://app:hunter2@db:5432/x"),
            "postgres://app:***@db:5432/x"
        );
        assert_eq!(super::redact("postgres://app@db/x"), "postgres://app@db/x");
    }
}
