//! The store's errors: each names the database and, where there is one, the fix. An error
//! wraps its cause (`source()`, printed by the binary's `{:#}`) unless its text is also shown
//! on its own (a list of failures): then it quotes the cause and has no `source()`.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path} is not a disktier database or is corrupted: move it aside or pass --db")]
    NotOurs { path: PathBuf },
    /// `--db` names a directory (SQLite would say "unable to open database file", or reading
    /// it "not a database").
    #[error("{path} is a directory, not a SQLite database file: pass --db with a file's path (such as {path}/results.db)")]
    IsDirectory { path: PathBuf },
    /// `--db` names a FIFO, socket or device.
    #[error("{path} is not a regular file (a FIFO, socket or device), so it cannot be a SQLite database: pass --db with a file's path")]
    NotAFile { path: PathBuf },
    /// `--db` names a file (or a directory) on a kernel pseudo-filesystem: its files are the
    /// kernel's interfaces, and writing a database header into one is writing to the kernel.
    #[error("{path} is on {fs}, a kernel pseudo-filesystem whose files are the kernel's interfaces, not storage, so it cannot hold a SQLite database: pass --db with a file's path on a disk's filesystem")]
    PseudoFs { path: PathBuf, fs: String },
    #[error(
        "{location} has store schema version {found}, newer than this disktier understands ({known}): upgrade this disktier (a store several machines share, such as a PostgreSQL store, needs every disktier that uses it upgraded together), or pass --db with another store"
    )]
    TooNew {
        location: String,
        found: i64,
        known: i64,
    },
    #[error("cannot create the directory {path} for the result store (pass --db or --no-save)")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("neither XDG_DATA_HOME nor HOME is set, so there is no default result store: pass --db (a command that measures can also take --no-save)")]
    NoDefaultLocation,
    /// A reading command found no store: it never creates one.
    #[error("there is no result store at {location}: nothing has been saved there (runs are saved by `disktier assess`, bench, check, import and interfere); check --db or DISKTIER_DB if you meant another store")]
    NoStore { location: String },
    /// A WAL database in a directory SQLite cannot create its `-shm` file in.
    #[error("cannot read the SQLite database {path}: it is in WAL mode and its directory {dir} is read-only, so SQLite cannot make the {path}-shm file it reads through; make {dir} writable, or copy the database to a writable directory and pass --db with the copy")]
    ReadOnlyDir { path: PathBuf, dir: PathBuf },
    /// An older store that cannot be written, so cannot be migrated for reading.
    #[error("{path} has store schema version {found}, older than this disktier's {known}, and cannot be migrated because it cannot be written here; make it writable once (the next command that opens it migrates it), or copy it to a writable directory and pass --db with the copy")]
    OlderReadOnly {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// An older PostgreSQL store opened by a role that may not migrate it (no CREATE on its
    /// schema, as readers and nodes are granted): `why` is the server's refusal, scrubbed.
    #[error("PostgreSQL store {location} has store schema version {found}, older than this disktier's {known}, and user {user} may not migrate it (it may not create tables in the store's schema, which readers and saving nodes need not): open it once with this disktier as the store's owner (any command migrates it, e.g. `disktier history` with the owner's location), after which this user's grants suffice; until then use the disktier that wrote it (the server said: {why})")]
    OlderNoPrivilege {
        location: String,
        user: String,
        found: i64,
        known: i64,
        why: String,
    },
    /// Quotes the driver's error (no `source()`): `store flush` lists failures as text.
    #[error("SQLite database {path}: {error}")]
    Sqlite {
        path: PathBuf,
        error: rusqlite::Error,
    },
    /// `message` is the driver's error chain with every credential scrubbed (it is kept as text
    /// so that no later `{:#}` can print an unscrubbed source).
    #[error("PostgreSQL store {url}: {message}")]
    Postgres { url: String, message: String },
    /// A connected server stopped answering (a stopped or hung server, or the network to it
    /// gone): the operation was given up on after `secs`.
    #[error("PostgreSQL store {url}: the server did not answer within {secs} s (it is stopped or overloaded, or the network to it is down): check the server, or give it longer with query_timeout=SECONDS in the store location (0 waits as long as it takes)")]
    NoAnswer { url: String, secs: u64 },
    #[error("store location {location}: {why}")]
    BadLocation { location: String, why: String },
    /// Every new id a save drew was refused as taken: not a clash of random ids but a unique
    /// constraint the store's table has and disktier did not make.
    #[error("store {location} refused {tries} new run ids in a row as already taken, which random ids do not do: its runs table has a unique index or constraint disktier did not make (list them with `.schema runs` in sqlite3 or `\\d runs` in psql): remove it")]
    IdsRefused { location: String, tries: u32 },
    #[error("PostgreSQL store {location}: TLS: {why}")]
    Tls { location: String, why: String },
    #[error("{0:?} is not a run id (ids look like 20231201-201522-a3f90c; a unique prefix will do): list them with `disktier history`")]
    BadId(String),
    /// Names the store: an id from another store (another `--db`, `DISKTIER_DB` unset in
    /// this shell) is the usual reason (QA: the message did not say which store was searched).
    #[error("no run in {location} has id {id}: list them with `disktier history`, or pass the --db (or DISKTIER_DB) of the store that saved it")]
    NotFound { id: String, location: String },
    /// `matches`: the first two ids that start with it (the lookup reads no more than two).
    #[error("run id {id} is ambiguous: {} and maybe more start with it; give more characters", matches.join(", "))]
    Ambiguous { id: String, matches: Vec<String> },
    #[error("the filesystem holding the SQLite database {path} is full: free space there, then run `disktier store flush` to save the spooled result")]
    DiskFull { path: PathBuf },
    #[error("the SQLite database {path} is locked by another process for longer than {secs} s: try again when it is done")]
    Locked { path: PathBuf, secs: u64 },
    #[error("the SQLite database {path} cannot be written (a read-only file or filesystem): pass a writable --db")]
    ReadOnly { path: PathBuf },
    /// Quotes the OS error (no `source()`), like [`StoreError::Sqlite`].
    #[error("cannot read the result store {path}: {error}; check --db or DISKTIER_DB")]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the spool directory: {0}")]
    Spool(std::io::Error),
    /// Quotes the parser's error (no `source()`), like [`StoreError::BadRow`].
    #[error("run {id:?} in {location} is damaged: its stored JSON does not parse ({error}); other runs are unaffected")]
    CorruptRow {
        location: String,
        id: String,
        error: serde_json::Error,
    },
    #[error("run {id:?} in {location} is damaged: {why}")]
    BadRow {
        location: String,
        id: String,
        why: String,
    },
    #[error("the run document is not valid JSON")]
    Json(#[from] serde_json::Error),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
