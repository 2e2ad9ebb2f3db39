//! Remembering and showing: every run in a versioned store (embedded SQLite, or PostgreSQL for a
//! team), comparisons between runs, and the self-contained HTML report.
//!
//! ```no_run
//! # use disktier_store::{Store, NewRun, Filter};
//! let mut store = Store::open(None).unwrap(); // $XDG_DATA_HOME/disktier/results.db
//! let doc = serde_json::json!({"schema_version": 1, "profile": "etcd"});
//! let id = store.save(&NewRun { kind: "check", group_id: None, doc: &doc }).unwrap();
//! let runs = store.list(&Filter::default()).unwrap();
//! let run = store.get(&id).unwrap();
//! ```

pub mod compare;
pub mod doc;
pub mod error;
pub mod migrate;
pub mod model;
pub mod pgconn;
mod pgerror;
mod pgsession;
pub mod postgres;
pub mod report;
pub mod spool;
mod sql;
pub mod sqlite;

pub use error::StoreError;
pub use model::{new_id, Filter, Identity, NewRun, RunSummary, StoredRun};
pub use sql::fingerprint;

use error::Result;
use std::path::PathBuf;

/// What each backend does; [`Store`] picks one from the location.
pub trait Backend {
    /// Where the data lives, for messages (a path, or a URL without its password).
    fn location(&self) -> String;
    /// Inserts a row; `Ok(false)` when the id is already taken (the caller retries).
    fn insert(&mut self, row: &StoredRun) -> Result<bool>;
    /// Listing columns of the runs `filter` selects, newest first.
    fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>>;
    /// The run whose id is `id`, else up to two runs whose id starts with it (two means
    /// ambiguous).
    fn by_id(&mut self, id: &str) -> Result<Vec<StoredRun>>;
    /// The id of the first run stored with this fingerprint ([`sql::fingerprint`]).
    fn by_fingerprint(&mut self, fingerprint: &str) -> Result<Option<String>>;
    /// The newest migration applied.
    fn schema_version(&mut self) -> Result<i64>;
}

/// The result store.
pub struct Store {
    backend: Box<dyn Backend>,
}

/// New ids one save tries before it gives up (see [`Store::save_new`]).
const SAVE_TRIES: u32 = 16;

impl Store {
    /// Opens the store at `location`: a `postgres://` (or `postgresql://`) URL, a SQLite file
    /// path, or `None` (or an empty location, see [`location`]) for [`default_path`].
    pub fn open(location: Option<&str>) -> Result<Store> {
        let backend: Box<dyn Backend> = match self::location(location) {
            Some(pg) if pgconn::is_postgres(pg) => Box::new(postgres::PgStore::open(pg)?),
            // A mistyped URL must not become a SQLite file (and directories) named after it,
            // nor show its password in the error.
            Some(url) if url.contains("://") => {
                return Err(StoreError::BadLocation {
                    location: pgconn::redact(url),
                    why: "only postgres:// and postgresql:// URLs are stores; anything else is a SQLite file path".into(),
                })
            }
            Some(path) => Box::new(sqlite::SqliteStore::open(sqlite_path(path)?)?),
            None => Box::new(sqlite::SqliteStore::open(&default_path()?)?),
        };
        Ok(Store { backend })
    }

    /// Opens the store at `location` (as [`Store::open`]) to read it: a store is never
    /// created (a SQLite file, its directory, or a PostgreSQL schema's tables) — a missing one
    /// is [`StoreError::NoStore`] — and a SQLite store that
    /// cannot be written is read read-only ([`sqlite::SqliteStore::open_existing`]). What
    /// `history`, `show`, `compare` and `report` open.
    pub fn open_existing(location: Option<&str>) -> Result<Store> {
        let backend: Box<dyn Backend> = match self::location(location) {
            Some(pg) if pgconn::is_postgres(pg) => Box::new(postgres::PgStore::open_existing(pg)?),
            Some(l) if l.contains("://") => return Store::open(Some(l)),
            Some(path) => Box::new(sqlite::SqliteStore::open_existing(sqlite_path(path)?)?),
            None => Box::new(sqlite::SqliteStore::open_existing(&default_path()?)?),
        };
        Ok(Store { backend })
    }

    pub fn location(&self) -> String {
        self.backend.location()
    }

    /// Saves a run under `first` (see [`Identity`]), or under a new id when that one is taken:
    /// [`Saved::New`] with its id, or [`Saved::Already`] when it is an import whose document
    /// is stored already (see [`Store::stored_import`]), found before the insert or by the
    /// store's unique index when an identical import was saved at the same instant.
    pub fn save_as(&mut self, run: &NewRun<'_>, first: &Identity) -> Result<Saved> {
        let row = run.to_row(first.id.clone(), first.created_at.clone());
        match self.insert(&row)? {
            Inserted::Saved => Ok(Saved::New(row.summary.id)),
            Inserted::SameImport(id) => Ok(Saved::Already(id)),
            Inserted::IdTaken => self.save_new(run),
        }
    }

    /// Inserts `row`: a refused insert is an id already taken, or, for an import whose
    /// fingerprint another run holds (schema version 5's unique index), that run.
    fn insert(&mut self, row: &StoredRun) -> Result<Inserted> {
        if self.backend.insert(row)? {
            return Ok(Inserted::Saved);
        }
        let [_, _, doc] = sql::json_columns(row)?;
        if let Some(f) = sql::fingerprint(&row.summary.kind, &doc) {
            if let Some(id) = self.backend.by_fingerprint(&f)? {
                if id != row.summary.id {
                    return Ok(Inserted::SameImport(id));
                }
            }
        }
        Ok(Inserted::IdTaken)
    }

    /// The id of the run `run` would store again: an import whose document is `run`'s, byte
    /// for byte (the same file imported with the same options), stored since schema version 4
    /// (and, from version 5, the imports stored before it).
    /// `None` for any other kind of run, which is new every time.
    pub fn stored_import(&mut self, run: &NewRun<'_>) -> Result<Option<String>> {
        let doc = serde_json::to_string(run.doc)?;
        match sql::fingerprint(run.kind, &doc) {
            Some(f) => self.backend.by_fingerprint(&f),
            None => Ok(None),
        }
    }

    /// Saves a run under a new id: [`Saved::New`], or [`Saved::Already`] for an import whose
    /// document is stored already.
    pub fn save_new(&mut self, run: &NewRun<'_>) -> Result<Saved> {
        // A clash needs two saves in the same second drawing the same 24 random bits; a few
        // retries make it practically impossible, so a store that refuses every new id is
        // refusing something else, and the save stops rather than loop.
        for _ in 0..SAVE_TRIES {
            let row = run.to_row(new_id(), model::now_rfc3339());
            match self.insert(&row)? {
                Inserted::Saved => return Ok(Saved::New(row.summary.id)),
                Inserted::SameImport(id) => return Ok(Saved::Already(id)),
                Inserted::IdTaken => {}
            }
        }
        Err(StoreError::IdsRefused {
            location: self.location(),
            tries: SAVE_TRIES,
        })
    }

    /// Saves a run and returns its id: a new one, or for an import whose document is stored
    /// already that run's ([`Store::save_new`] tells the two apart).
    pub fn save(&mut self, run: &NewRun<'_>) -> Result<String> {
        match self.save_new(run)? {
            Saved::New(id) | Saved::Already(id) => Ok(id),
        }
    }

    pub fn list(&mut self, filter: &Filter) -> Result<Vec<RunSummary>> {
        let mut runs = self.backend.list(filter)?;
        // A job file's run saved by an older disktier has no figures in its columns (they
        // were read from a run's `results`): they are read from its document.
        for s in &mut runs {
            if model::BENCHMARK_KINDS.contains(&s.kind.as_str())
                && model::Figures::listed(s) == model::Figures::default()
            {
                let stored = match self.backend.by_id(&s.id) {
                    Ok(stored) => stored,
                    // A damaged row is listed with its columns; `show` names the damage.
                    Err(StoreError::CorruptRow { .. } | StoreError::BadRow { .. }) => continue,
                    Err(e) => return Err(e),
                };
                if let Some(r) = stored.iter().find(|r| r.summary.id == s.id) {
                    if doc::is_job_file(&r.doc) {
                        model::Figures::of(&r.doc).fill(s);
                    }
                }
            }
        }
        Ok(runs)
    }

    /// The run with this id, or the only one whose id starts with it.
    pub fn get(&mut self, id: &str) -> Result<StoredRun> {
        if !spool::is_run_id(id) {
            return Err(StoreError::BadId(id.to_string()));
        }
        let mut found = self.backend.by_id(id)?;
        if let Some(exact) = found.iter().position(|r| r.summary.id == id) {
            return Ok(found.swap_remove(exact));
        }
        match found.len() {
            0 => Err(StoreError::NotFound {
                id: id.to_string(),
                location: self.location(),
            }),
            1 => Ok(found.remove(0)),
            _ => Err(StoreError::Ambiguous {
                id: id.to_string(),
                matches: found.into_iter().map(|r| r.summary.id).collect(),
            }),
        }
    }

    pub fn schema_version(&mut self) -> Result<i64> {
        self.backend.schema_version()
    }

    /// Saves a spooled run under the id and time it was given when it was made:
    /// [`Inserted::IdTaken`] when a run is already stored under that id (an earlier flush that
    /// stopped before deleting the file), [`Inserted::SameImport`] when it is an import whose
    /// document is stored as another run (an import spooled and also saved, or spooled
    /// twice); neither is saved twice.
    pub fn save_spooled(&mut self, s: &spool::Spooled) -> Result<Inserted> {
        let row = s.new_run().to_row(s.id.clone(), s.created_at.clone());
        self.insert(&row)
    }
}

/// What [`Store::save_as`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// Stored under this new id.
    New(String),
    /// Not stored: an import of the same document is stored as this run.
    Already(String),
}

/// What one insert did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    Saved,
    /// A run is stored under the id already.
    IdTaken,
    /// An import of the same document is stored as this (other) run.
    SameImport(String),
}

/// The store `--db`/`DISKTIER_DB` names: an empty value is no value, so the default store, as
/// when it is unset (what a template or manifest leaves behind when it has no value to put there;
/// `DISKTIER_CATALOG` reads an empty value the same way). SQLite would take `""` as a private
/// temporary database that is gone when disktier exits, every run "saved" there lost.
pub fn location(given: Option<&str>) -> Option<&str> {
    given.filter(|l| !l.is_empty())
}

/// `location` as a SQLite file path, refusing the names SQLite does not read as a file: an
/// in-memory database (`:memory:`) keeps nothing past the process, and a `file:` name is a URI
/// to SQLite (`file:x?mode=memory` is in memory too), so neither may take a run.
fn sqlite_path(location: &str) -> Result<&std::path::Path> {
    let why = if location == ":memory:" {
        "SQLite keeps a :memory: database only while disktier runs, so every run saved there would be lost: pass the path of a database file"
    } else if location.starts_with("file:") {
        "SQLite reads a location that starts with file: as a URI (file:...?mode=memory is a database that lives only in memory), and disktier takes a plain path: pass the database file's path (./file:... for a file whose name starts with file:)"
    } else {
        return Ok(std::path::Path::new(location));
    };
    Err(StoreError::BadLocation {
        location: location.to_string(),
        why: why.into(),
    })
}

/// `$XDG_DATA_HOME/disktier` (when it is an absolute path), else `~/.local/share/disktier`.
pub fn data_dir() -> Result<PathBuf> {
    let nonempty = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    // The XDG Base Directory spec: "If an implementation encounters a relative path in any of
    // these variables it should consider the path invalid and ignore it."
    let base = nonempty("XDG_DATA_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| nonempty("HOME").map(|h| h.join(".local/share")))
        .ok_or(StoreError::NoDefaultLocation)?;
    Ok(base.join("disktier"))
}

/// `$XDG_DATA_HOME/disktier/results.db`, else `~/.local/share/disktier/results.db`.
pub fn default_path() -> Result<PathBuf> {
    Ok(data_dir()?.join("results.db"))
}
