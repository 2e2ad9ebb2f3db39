//! The team backend: the same schema and migrations in PostgreSQL. Migrations run under a
//! transaction-scoped advisory lock so many nodes starting at once migrate exactly once. The
//! schema is the connection's `search_path` (a URL may set it with
//! `?options=-c%20search_path%3Dteam`).

use crate::error::{Result, StoreError};
use crate::migrate::{self, CREATE_SCHEMA_MIGRATIONS};
use crate::model::{now_rfc3339, Filter, RunSummary, StoredRun};
use crate::pgconn::{PgTarget, SslMode};
use crate::sql;
use crate::Backend;
use postgres::{Client, Row};

/// The advisory lock key disktier's migrations hold ("dtier" in ASCII).
const MIGRATION_LOCK: i64 = 0x0064_7469_6572;

pub struct PgStore {
    client: Client,
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
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(crate::pgconn::DEFAULT_CONNECT_TIMEOUT)
        * hosts;
    let (tx, rx) = std::sync::mpsc::channel();
    let attempt = std::thread::Builder::new()
        .name("pg-connect".into())
        .spawn(move || {
            // The receiver is gone when the attempt ran over its time: nothing waits for it.
            let _ = tx.send(config.connect(tls));
        });
    let failed = |message: String| StoreError::Postgres {
        url: target.shown.clone(),
        message,
    };
    if let Err(e) = attempt {
        return Err(failed(format!("cannot start the connection attempt: {e}")));
    }
    match rx.recv_timeout(limit) {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(failed(explained(&e, target))),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(failed(format!(
            "the server did not complete the connection within {} s (it may accept connections and never answer, as a stalled server or another service on that port does): check the host and port, or give it longer with connect_timeout=SECONDS",
            limit.as_secs()
        ))),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(failed(
            "the connection attempt stopped without an answer".into(),
        )),
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
            client,
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
            _ => store.migrate().map(|()| store),
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
        let ms = crate::sqlite::busy_timeout().as_millis();
        self.client
            .batch_execute(&format!("SET lock_timeout = {ms}"))
            .map_err(|e| self.e(e))
    }

    /// The newest migration applied, or `None` when the search path holds no store.
    fn version(&mut self) -> Result<Option<i64>> {
        match self.client.query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
            &[],
        ) {
            Ok(row) => Ok(Some(row.get(0))),
            Err(e) if e.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) => Ok(None),
            Err(e) => Err(self.e(e)),
        }
    }

    fn e(&self, source: postgres::Error) -> StoreError {
        StoreError::Postgres {
            url: self.shown.clone(),
            message: explained(&source, &self.target),
        }
    }

    fn migrate(&mut self) -> Result<()> {
        let shown = self.shown.clone();
        let target = &self.target;
        let e = |source: postgres::Error| StoreError::Postgres {
            url: shown.clone(),
            message: explained(&source, target),
        };
        let mut tx = self.client.transaction().map_err(e)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(e)?;
        tx.batch_execute(CREATE_SCHEMA_MIGRATIONS).map_err(e)?;
        let current: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )
            .map_err(e)?
            .get(0);
        if current > migrate::latest() {
            return Err(StoreError::TooNew {
                location: shown.clone(),
                found: current,
                known: migrate::latest(),
            });
        }
        for m in migrate::pending(current) {
            tx.batch_execute(m.sql).map_err(e)?;
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                &[&m.version, &m.name, &now_rfc3339()],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)
    }

    fn query(
        &mut self,
        q: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<StoredRun>> {
        let rows = self.client.query(q, params).map_err(|s| self.e(s))?;
        rows.iter().map(|r| read_row(r, &self.shown)).collect()
    }
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
        let s = &row.summary;
        let [host, device, doc] = sql::json_columns(row)?;
        let res = self.client.execute(
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
            ],
        );
        match res {
            Ok(_) => Ok(true),
            Err(e) if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) => Ok(false),
            Err(e) => Err(self.e(e)),
        }
    }

    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>> {
        let (q, params) = sql::list(filter, sql::pg_mark);
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn postgres::types::ToSql + Sync))
            .collect();
        Ok(sql::summaries(self.query(&q, &refs)?))
    }

    fn by_id(&mut self, id: &str) -> Result<Vec<StoredRun>> {
        let len = id.chars().count() as i32;
        self.query(&sql::by_prefix(sql::pg_mark), &[&len, &id])
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
