//! The embedded backend: one SQLite file in WAL mode (readers never block the writer), with a
//! busy timeout so many disktier processes can save at once, and migrations applied under an
//! immediate transaction so two processes opening a fresh file do not both create the schema.

use crate::error::{Result, StoreError};
use crate::migrate::{self, CREATE_SCHEMA_MIGRATIONS};
use crate::model::{now_rfc3339, Filter, RunSummary, StoredRun};
use crate::sql;
use crate::Backend;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another writer's lock before giving up. Saves take milliseconds;
/// this covers many processes saving at once on a slow disk.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// [`BUSY_TIMEOUT`], or `DISKTIER_DB_BUSY_TIMEOUT_MS` (tests of a store locked past it).
pub(crate) fn busy_timeout() -> Duration {
    std::env::var("DISKTIER_DB_BUSY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(BUSY_TIMEOUT)
}

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if missing) the store at `path`, refusing files that are not a disktier
    /// database and databases from a newer disktier, migrating older ones.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => return Err(not_a_file(path, &m)),
            _ => {}
        }
        on_pseudo_fs(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut store = SqliteStore::connect(path, path, flags)?;
        // Read before writing anything: a foreign or damaged file must be left exactly as it is.
        let version = store.check_ours()?;
        if version > migrate::latest() {
            return Err(StoreError::TooNew {
                location: path.display().to_string(),
                found: version,
                known: migrate::latest(),
            });
        }
        store.wal()?;
        if version < migrate::latest() {
            store.migrate()?;
        }
        Ok(store)
    }

    /// Opens the store at `path` to read it, creating nothing: no directory, no file, no
    /// schema (a missing or empty file is [`StoreError::NoStore`]). A writable store opens as
    /// for saving (an older schema is migrated); one that cannot be written — a read-only
    /// file, directory or filesystem — opens read-only, and a WAL database whose directory
    /// cannot take its `-shm` file opens as immutable when no `-wal` file holds data it would
    /// miss.
    pub fn open_existing(path: &Path) -> Result<SqliteStore> {
        on_pseudo_fs(path)?;
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(m) => return Err(not_a_file(path, &m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::NoStore {
                    location: path.display().to_string(),
                })
            }
            Err(e) => {
                return Err(StoreError::Unreadable {
                    path: path.to_path_buf(),
                    error: e,
                })
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match Self::open_flags(path, path, flags) {
            Ok(s) => return Ok(s),
            Err(e) if !cannot_write(&e) => return Err(e),
            Err(_) => {}
        }
        let ro = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match Self::open_flags(path, path, ro) {
            Ok(s) => return Ok(s),
            Err(e) if !cannot_write(&e) => return Err(e),
            Err(_) => {}
        }
        // SQLite could not make the -shm file of a WAL database beside it. Without a -wal
        // file (or with an empty one, which a clean close leaves) the database file holds
        // every committed run, and `immutable` reads it without the -shm file.
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
            return Err(StoreError::ReadOnlyDir {
                path: path.to_path_buf(),
                dir,
            });
        }
        let uri = format!("file:{}?immutable=1", uri_path(path));
        Self::open_flags(Path::new(&uri), path, ro | OpenFlags::SQLITE_OPEN_URI).map_err(|e| {
            if cannot_write(&e) {
                StoreError::ReadOnlyDir {
                    path: path.to_path_buf(),
                    dir,
                }
            } else {
                e
            }
        })
    }

    /// A connection to `name` (a path, or a `file:` URI for `path`) with `flags` and the busy
    /// timeout, not yet checked.
    fn connect(name: &Path, path: &Path, flags: OpenFlags) -> Result<SqliteStore> {
        let conn = Connection::open_with_flags(name, flags).map_err(|e| err(path, e))?;
        conn.busy_timeout(busy_timeout())
            .map_err(|e| err(path, e))?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens `name` (a path, or a `file:` URI for `path`) with `flags`, for reading an
    /// existing store: checked, and migrated when it is opened writable.
    fn open_flags(name: &Path, path: &Path, flags: OpenFlags) -> Result<SqliteStore> {
        let mut store = SqliteStore::connect(name, path, flags)?;
        let version = store.check_ours()?;
        if version == 0 {
            return Err(StoreError::NoStore {
                location: path.display().to_string(),
            });
        }
        if version > migrate::latest() {
            return Err(StoreError::TooNew {
                location: path.display().to_string(),
                found: version,
                known: migrate::latest(),
            });
        }
        if flags.contains(OpenFlags::SQLITE_OPEN_READ_ONLY) {
            if version < migrate::latest() {
                return Err(StoreError::OlderReadOnly {
                    path: path.to_path_buf(),
                    found: version,
                    known: migrate::latest(),
                });
            }
            return Ok(store);
        }
        store.wal()?;
        if version < migrate::latest() {
            store.migrate()?;
        }
        Ok(store)
    }

    /// The schema version recorded in the file (0 for a new, empty file), or `NotOurs`.
    fn check_ours(&self) -> Result<i64> {
        let tables: Vec<String> = (|| {
            let mut st = self
                .conn
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
            let rows = st.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<String>>>()
        })()
        .map_err(|e| err(&self.path, e))?;
        if tables.is_empty() {
            return Ok(0);
        }
        if !tables.iter().any(|t| t == "schema_migrations") {
            return Err(StoreError::NotOurs {
                path: self.path.clone(),
            });
        }
        self.conn
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(|e| err(&self.path, e))
    }

    fn wal(&self) -> Result<()> {
        // Switching to WAL takes an exclusive lock; on a fresh file many openers race for it,
        // and SQLite reports busy here without consulting the busy handler, so retry.
        let mut tries = 0;
        loop {
            match self
                .conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
            {
                Ok(_) => return Ok(()),
                Err(e) if is_busy(&e) && tries < 300 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(err(&self.path, e)),
            }
        }
    }

    fn migrate(&mut self) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| err(&path, e))?;
        tx.execute_batch(CREATE_SCHEMA_MIGRATIONS)
            .map_err(|e| err(&path, e))?;
        // Re-read inside the lock: another process may have migrated meanwhile.
        let current: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(|e| err(&path, e))?;
        for m in migrate::pending(current) {
            tx.execute_batch(m.sql).map_err(|e| err(&path, e))?;
            if m.then == Some(migrate::Then::FingerprintImports) {
                let total: i64 = tx
                    .query_row(migrate::UNFINGERPRINTED, [], |r| r.get(0))
                    .map_err(|e| err(&path, e))?;
                let upgrade =
                    migrate::Upgrade::start(&path.display().to_string(), m.version, total);
                fingerprint_imports(&tx, upgrade).map_err(|e| err(&path, e))?;
            }
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
                rusqlite::params![m.version, m.name, now_rfc3339()],
            )
            .map_err(|e| err(&path, e))?;
        }
        tx.commit().map_err(|e| err(&path, e))
    }

    fn query(&self, q: &str, params: &[&dyn rusqlite::ToSql]) -> Result<Vec<StoredRun>> {
        let mut st = self.conn.prepare(q).map_err(|e| err(&self.path, e))?;
        let rows = st
            .query_map(params, read_row)
            .map_err(|e| err(&self.path, e))?;
        let mut out = Vec::new();
        for r in rows {
            let location = self.path.display().to_string();
            let (summary, host, device, doc) = match r.map_err(|e| err(&self.path, e))? {
                Ok(row) => row,
                Err((id, e)) => {
                    return Err(StoreError::BadRow {
                        location,
                        id,
                        why: format!("{e}: the row was changed outside disktier; set that column right with sqlite3, or delete the run's row"),
                    })
                }
            };
            let (host, device, doc) =
                sql::parse_json_columns(&location, &summary.id, [&host, &device, &doc])?;
            out.push(StoredRun {
                host,
                device,
                doc,
                summary,
            });
        }
        Ok(out)
    }
}

/// [`migrate::Then::FingerprintImports`] on SQLite, a page of rows at a time.
fn fingerprint_imports(
    c: &Connection,
    mut upgrade: Option<migrate::Upgrade>,
) -> rusqlite::Result<()> {
    let mut after = String::new();
    loop {
        let page: Vec<(String, String)> = {
            let mut st = c.prepare(&migrate::unfingerprinted_page(sql::sqlite_mark))?;
            let rows = st.query_map([&after], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let Some((last, _)) = page.last() else {
            if let Some(u) = upgrade {
                u.finish();
            }
            return Ok(());
        };
        after = last.clone();
        for (id, doc) in &page {
            if let Some(f) = sql::fingerprint("import", doc) {
                c.execute(&migrate::set_fingerprint(sql::sqlite_mark), [&f, id])?;
            }
        }
        if let Some(u) = upgrade.as_mut() {
            u.advance(page.len());
        }
    }
}

type RawRow = (RunSummary, String, String, String);

/// A row, or (its id, why a column could not be read as disktier stores it): a row edited by
/// hand or by another program (QA: `quick = 'yes'` made history say only "Invalid column type
/// Text at index: 6, name: quick", naming neither the run nor the fix). A failure of the
/// database itself stays the driver's error.
fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<RawRow, (String, rusqlite::Error)>> {
    match read_columns(r) {
        Ok(row) => Ok(Ok(row)),
        Err(
            e @ (rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)),
        ) => Ok(Err((r.get::<_, String>(0).unwrap_or_default(), e))),
        Err(e) => Err(e),
    }
}

fn read_columns(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((
        RunSummary {
            id: r.get(0)?,
            created_at: r.get(1)?,
            kind: r.get(2)?,
            profile: r.get(3)?,
            target: r.get(4)?,
            hostname: r.get(5)?,
            quick: r.get(6)?,
            engine: r.get(7)?,
            group_id: r.get(8)?,
            sync_p99_ns: r.get(9)?,
            read_iops: r.get(10)?,
            write_iops: r.get(11)?,
            read_bw_bytes: r.get(12)?,
            write_bw_bytes: r.get(13)?,
            interrupted: r.get(17)?,
        },
        r.get(14)?,
        r.get(15)?,
        r.get(16)?,
    ))
}

/// Why `path`, which exists and is not a regular file, cannot be a store: a directory, or a
/// FIFO, socket or device (opening a FIFO would wait for a writer).
fn not_a_file(path: &Path, m: &std::fs::Metadata) -> StoreError {
    let path = path.to_path_buf();
    if m.is_dir() {
        StoreError::IsDirectory { path }
    } else {
        StoreError::NotAFile { path }
    }
}

/// Refuses a `path` on a kernel pseudo-filesystem (proc, sysfs, cgroup, debugfs, ...), or in
/// under a directory on one when it does not exist (its nearest existing ancestor): such a file is a regular file of size 0 to
/// stat, so SQLite took it for an empty database and wrote its header into it (as root, into a
/// kernel setting), and its filesystem's 0 bytes free was reported as "the filesystem ... is
/// full: free space there" (QA: `--db /proc/self/mem`).
fn on_pseudo_fs(path: &Path) -> Result<()> {
    let probe = path
        .ancestors()
        .find(|p| !p.as_os_str().is_empty() && p.exists())
        .unwrap_or(Path::new("."));
    match disktier_engine::target::pseudo_fs(probe) {
        Some(fs) => Err(StoreError::PseudoFs {
            path: path.to_path_buf(),
            fs,
        }),
        None => Ok(()),
    }
}

/// Whether opening failed only because the store cannot be written where it is: a read-only
/// file, directory or filesystem (SQLite says "read-only" or, when it cannot make a WAL
/// database's `-shm` file, "unable to open database file").
fn cannot_write(e: &StoreError) -> bool {
    match e {
        StoreError::ReadOnly { .. } => true,
        StoreError::Sqlite { error, .. } => matches!(
            error.sqlite_error_code(),
            Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)
        ),
        _ => false,
    }
}

/// `path` as the path part of a `file:` URI: every byte but unreserved ones and `/`
/// percent-encoded (SQLite's URI filenames take `%HH` escapes; `?` and `#` would end the path).
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether the filesystem holding `db` has less than a SQLite page group (64 KiB) free.
fn nearly_full(db: &Path) -> bool {
    let dir = match db.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    disktier_engine::target::statfs(dir).is_ok_and(|(_, free)| free < 64 << 10)
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Maps SQLite's "not a database", "corrupt", "full", "busy" and "read-only" to the error that
/// tells the user what to do.
fn err(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::NotOurs { path },
        Some(ErrorCode::DiskFull) => StoreError::DiskFull { path },
        // A write that hits ENOSPC in the WAL surfaces as SQLITE_IOERR_WRITE: tell it apart
        // by the free space left where the database lives.
        Some(ErrorCode::SystemIoFailure) if nearly_full(&path) => StoreError::DiskFull { path },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked {
            path,
            secs: busy_timeout().as_secs(),
        },
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly { path },
        _ => StoreError::Sqlite { path, error: e },
    }
}

impl Backend for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn insert(&mut self, row: &StoredRun) -> Result<bool> {
        let s = &row.summary;
        let [host, device, doc] = sql::json_columns(row)?;
        let fingerprint = sql::fingerprint(&s.kind, &doc);
        let res = self.conn.execute(
            &sql::insert(sql::sqlite_mark),
            rusqlite::params![
                s.id,
                s.created_at,
                s.kind,
                s.profile,
                s.target,
                s.hostname,
                s.quick,
                s.engine,
                s.group_id,
                s.sync_p99_ns,
                s.read_iops,
                s.write_iops,
                s.read_bw_bytes,
                s.write_bw_bytes,
                host,
                device,
                doc,
                s.interrupted,
                fingerprint
            ],
        );
        match res {
            Ok(_) => Ok(true),
            // Only a taken id or fingerprint is a refused insert; any other constraint (a
            // trigger or CHECK added to the table by hand) is an error, never retried.
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
            {
                Ok(false)
            }
            Err(e) => Err(err(&self.path, e)),
        }
    }

    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>> {
        let (q, params) = sql::list(filter, sql::sqlite_mark);
        let refs: Vec<&dyn rusqlite::ToSql> =
            params.iter().map(|p| p as &dyn rusqlite::ToSql).collect();
        Ok(sql::summaries(self.query(&q, &refs)?))
    }

    fn by_fingerprint(&mut self, fingerprint: &str) -> Result<Option<String>> {
        self.conn
            .query_row(&sql::by_fingerprint(sql::sqlite_mark), [fingerprint], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| err(&self.path, e))
    }

    fn by_id(&mut self, id: &str) -> Result<Vec<StoredRun>> {
        let exact = self.query(&sql::by_exact(sql::sqlite_mark), &[&id])?;
        if !exact.is_empty() {
            return Ok(exact);
        }
        let len = id.chars().count() as i64;
        self.query(&sql::by_prefix(sql::sqlite_mark), &[&len, &id])
    }

    fn schema_version(&mut self) -> Result<i64> {
        self.check_ours()
    }
}
