//! The spool: where a run's result waits when the store cannot take it (PostgreSQL down, the
//! SQLite file read-only, locked past its timeout, or its filesystem full), so that no
//! measurement is lost. One JSON document per run in `$XDG_DATA_HOME/disktier/spool/` (a 0700
//! directory), written to a temporary file and renamed. Each carries the run id and time it was
//! given when it was made, so re-saving it is idempotent: a run already in the store (a flush
//! that stopped between the insert and the delete) is not saved twice.
//!
//! The next run that saves successfully flushes the spooled runs meant for the same store;
//! `disktier store flush` flushes them on demand (`--all`: whatever store they were meant for).

use crate::error::{Result, StoreError};
use crate::model::{Identity, NewRun};
use crate::Inserted;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The largest spooled document read back (a result with full histograms is a few MiB).
pub const MAX_SPOOLED_BYTES: u64 = 64 << 20;

/// One spooled run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spooled {
    pub schema_version: u32,
    /// The run id it will have in the store.
    pub id: String,
    /// When the run was made (RFC 3339 UTC), kept as its `created_at`.
    pub created_at: String,
    pub kind: String,
    pub group_id: Option<String>,
    /// The store it was meant for, credentials redacted (matched on flush).
    pub intended_store: String,
    /// Why it could not be saved then.
    pub reason: String,
    pub doc: Value,
}

impl Spooled {
    /// Parses and checks a spooled document: the shape, an id of the form [`new_id`] makes, a
    /// kind of plain letters, a document that is a JSON object.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Spooled, String> {
        if bytes.len() as u64 > MAX_SPOOLED_BYTES {
            return Err(format!(
                "{} bytes, more than {MAX_SPOOLED_BYTES}",
                bytes.len()
            ));
        }
        let s: Spooled = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if s.schema_version != 1 {
            return Err(format!(
                "schema_version {} (this disktier reads 1)",
                s.schema_version
            ));
        }
        if !is_run_id(&s.id) {
            return Err(format!("{:?} is not a run id", s.id));
        }
        if s.kind.is_empty()
            || s.kind.len() > 32
            || !s.kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        {
            return Err(format!("{:?} is not a run kind", s.kind));
        }
        if s.created_at.len() > 40 || s.created_at.chars().any(char::is_control) {
            return Err("created_at is not a time".into());
        }
        if !s.doc.is_object() {
            return Err("the run document is not a JSON object".into());
        }
        Ok(s)
    }

    pub fn new_run(&self) -> NewRun<'_> {
        NewRun {
            kind: &self.kind,
            group_id: self.group_id.as_deref(),
            doc: &self.doc,
        }
    }
}

/// A run id as [`new_id`] makes them (`20231201-201522-a3f90c`): letters, digits and `-`.
pub fn is_run_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// How a spooled run names the store it was meant for: a PostgreSQL location redacted, a
/// SQLite path made absolute (so `--db r.db` from two directories are two stores).
pub fn store_key(location: &str) -> String {
    if crate::pgconn::is_postgres(location) {
        crate::pgconn::redact(location)
    } else {
        std::path::absolute(location)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| location.to_string())
    }
}

/// Whether two stores a spooled run could name are one: SQLite paths made absolute, and
/// PostgreSQL locations by what they connect to (user, hosts, ports, database), so a URL and a
/// `key=value` string for the same database, or a URL with and without its default port, match
/// (QA: a run spooled under one spelling was "meant for another store" when flushed under the
/// other). Keys spooled by older releases, redacted but not normalised, compare the same way.
pub fn same_store(a: &str, b: &str) -> bool {
    a == b || connects_to(a) == connects_to(b)
}

/// What a store key connects to: an absolute path, or `postgres://USER@HOST:PORT,.../DB` with
/// libpq's defaults filled in (port 5432; the database named after the user). A location that
/// does not parse stands for itself.
fn connects_to(location: &str) -> String {
    if !crate::pgconn::is_postgres(location) {
        return sqlite_file(&store_key(location));
    }
    let Ok(t) = crate::pgconn::PgTarget::parse(location) else {
        return crate::pgconn::redact(location);
    };
    let c = &t.config;
    let user = c.get_user().unwrap_or_default();
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.to_ascii_lowercase(),
            postgres::config::Host::Unix(dir) => dir.display().to_string(),
        })
        .chain(c.get_hostaddrs().iter().map(|a| a.to_string()))
        .collect();
    let port = |i: usize| match c.get_ports() {
        [] => 5432,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(5432),
    };
    let at: Vec<String> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| format!("{h}:{}", port(i)))
        .collect();
    let db = c.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{}/{db}", at.join(","))
}

/// The file an absolute SQLite path opens: its directory resolved (symlinks, `.` and `..`) and,
/// when the file exists, the file too, so `--db ../r.db`, `--db r.db` from that directory and a
/// symlink to it are one store (QA: a run spooled under `../lk.db` was "meant for another
/// store" when flushed with `--db lk.db` beside it, and no save there took it). A directory
/// that does not exist (any more) leaves the path as it was.
fn sqlite_file(path: &str) -> String {
    let path = Path::new(path);
    if let Ok(real) = std::fs::canonicalize(path) {
        return real.display().to_string();
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => match std::fs::canonicalize(dir) {
            Ok(dir) => dir.join(name).display().to_string(),
            Err(_) => path.display().to_string(),
        },
        _ => path.display().to_string(),
    }
}

/// The spool directory.
pub struct Spool {
    dir: PathBuf,
}

/// A file of the spool read back: the run it holds, or why it is not a spooled run.
#[derive(Debug)]
pub struct Listed {
    /// The spool file.
    pub file: PathBuf,
    /// The run, or why the file is not one ([`Spool::read`]'s reason).
    pub run: std::result::Result<Spooled, String>,
}

/// What a flush did.
#[derive(Debug, Default, Serialize)]
pub struct Flushed {
    /// Ids now in the store.
    pub saved: Vec<String>,
    /// Ids the store held already (an earlier flush stopped before removing the file): not
    /// saved twice, their files removed.
    pub already_stored: Vec<String>,
    /// Imports whose document the store holds as another run (an import spooled and also
    /// saved, or spooled twice): not saved again, their files removed.
    pub same_import: Vec<SameImport>,
    /// Ids meant for another store, left in the spool.
    pub other_store: Vec<String>,
    /// Files that could not be saved, with why (left in the spool).
    pub failed: Vec<String>,
}

/// A spooled import not saved again: the store holds its document as run `stored_as`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SameImport {
    /// The spooled run's id.
    pub spooled: String,
    /// The stored run with the same document.
    pub stored_as: String,
}

impl Spool {
    /// `$XDG_DATA_HOME/disktier/spool`, else `~/.local/share/disktier/spool`.
    pub fn default_dir() -> Result<PathBuf> {
        Ok(crate::data_dir()?.join("spool"))
    }

    pub fn at(dir: impl Into<PathBuf>) -> Spool {
        Spool { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Why the spool directory cannot be listed, if it cannot: something other than a directory
    /// at its path (QA: with a file there, `store spool` said "the spool ... is empty" and exit
    /// 0, while every run that needed the spool was told "cannot be spooled ... (File exists)"),
    /// or a directory that cannot be read. A spool that does not exist yet is an empty one.
    pub fn unusable(&self) -> Option<String> {
        match std::fs::read_dir(&self.dir) {
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Some(self.not_a_directory()),
            Err(e) => Some(format!("cannot read the spool {}: {e}", self.dir.display())),
        }
    }

    /// The spool's path holds something other than a directory.
    fn not_a_directory(&self) -> String {
        format!(
            "the spool {} is not a directory (a file or other non-directory is at its path): move it aside, and disktier makes the spool there when a run needs it",
            self.dir.display()
        )
    }

    /// Keeps `run` for a later save; returns its id and file.
    pub fn put(
        &self,
        run: &NewRun<'_>,
        intended_store: &str,
        reason: &str,
    ) -> std::io::Result<(String, PathBuf)> {
        self.put_as(run, &Identity::new(), intended_store, reason)
    }

    /// [`Spool::put`] under the id and time the store was offered the run (see [`Identity`]).
    pub fn put_as(
        &self,
        run: &NewRun<'_>,
        identity: &Identity,
        intended_store: &str,
        reason: &str,
    ) -> std::io::Result<(String, PathBuf)> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| match e.kind() {
                // "File exists (os error 17)" named neither the path nor the fix.
                std::io::ErrorKind::AlreadyExists => std::io::Error::other(self.not_a_directory()),
                _ => e,
            })?;
        let s = Spooled {
            schema_version: 1,
            id: identity.id.clone(),
            created_at: identity.created_at.clone(),
            kind: run.kind.to_string(),
            group_id: run.group_id.map(str::to_string),
            intended_store: store_key(intended_store),
            reason: reason.to_string(),
            doc: run.doc.clone(),
        };
        let path = self.dir.join(format!("{}.json", s.id));
        let mut tmp = tempfile::Builder::new()
            .prefix(".spool.")
            .tempfile_in(&self.dir)?;
        tmp.write_all(&serde_json::to_vec(&s).map_err(std::io::Error::other)?)?;
        tmp.as_file().sync_all()?;
        tmp.persist_noclobber(&path).map_err(|e| e.error)?;
        Ok((s.id, path))
    }

    /// The spooled files, oldest first (names start with the run id, which sorts by time).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|x| x == "json")
                        && p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| !n.starts_with('.'))
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }

    /// Every spooled file, oldest first ([`Spool::files`]), each read and classified: a run, or
    /// a file that is not one (listed, not skipped, so the user can look at it).
    pub fn list(&self) -> Vec<Listed> {
        self.files()
            .into_iter()
            .map(|file| Listed {
                run: Self::read(&file),
                file,
            })
            .collect()
    }

    /// Reads one spooled file (a regular file, not followed through a symlink).
    pub fn read(path: &Path) -> std::result::Result<Spooled, String> {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: a FIFO at a spool file's name held `store spool`, `store flush` and
        // every run that saves (which flushes the spool) forever in open(2), waiting for a
        // writer, and a SIGTERM did not end the wait (QA); anything but a regular file is
        // reported, not read.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| e.to_string())?;
        if !f.metadata().map_err(|e| e.to_string())?.is_file() {
            return Err(
                "not a regular file (a FIFO, socket, device or directory): move it out of the spool"
                    .into(),
            );
        }
        let mut bytes = Vec::new();
        f.take(MAX_SPOOLED_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        Spooled::parse(&bytes)
    }

    /// Saves the spooled runs meant for `store` (all of them with `all`) and removes each one
    /// saved. A bad file is reported and left for the user to look at.
    pub fn flush(&self, store: &mut crate::Store, all: bool) -> Flushed {
        flush_files(self.files(), store, all)
    }
}

/// [`Spool::flush`] of the files listed: each one saved and removed, or reported.
fn flush_files(files: Vec<PathBuf>, store: &mut crate::Store, all: bool) -> Flushed {
    let mut out = Flushed::default();
    let here = store_key(&store.location());
    for path in files {
        let s = match Spool::read(&path) {
            Ok(s) => s,
            // Gone since it was listed: another flush (or a save's own flush) took it
            // (QA: concurrent flushes reported every such file as "not a spooled run").
            Err(_) if gone(&path) => continue,
            Err(why) => {
                out.failed
                    .push(format!("{}: not a spooled run ({why})", path.display()));
                continue;
            }
        };
        if !all && !same_store(&s.intended_store, &here) {
            out.other_store.push(s.id);
            continue;
        }
        match store.save_spooled(&s) {
            // NotFound: another flush saved the same run and removed its file first.
            Ok(saved) => match std::fs::remove_file(&path).or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(e)
                }
            }) {
                Ok(()) => match saved {
                    Inserted::Saved => out.saved.push(s.id),
                    Inserted::IdTaken => out.already_stored.push(s.id),
                    Inserted::SameImport(stored_as) => out.same_import.push(SameImport {
                        spooled: s.id,
                        stored_as,
                    }),
                },
                Err(e) => out.failed.push(format!(
                    "{}: {}, but the file could not be removed ({e}); a later flush will find it saved already",
                    path.display(),
                    match saved {
                        Inserted::SameImport(other) => format!(
                            "run {} is an import already stored as run {other}",
                            s.id
                        ),
                        _ => format!("saved as run {}", s.id),
                    }
                )),
            },
            Err(e) => out.failed.push(format!("{}: {e}", path.display())),
        }
    }
    out
}

/// Whether `path` no longer exists (not a dangling link: that is still a file to report).
fn gone(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        StoreError::Spool(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_database_spelled_two_ways_is_one_store() {
        for (a, b) in [
            (
                "postgres://disktier:pw@db.example:5432/results",
                "host=db.example user=disktier password=other dbname=results",
            ),
            (
                "postgresql://u@H/db?sslmode=require",
                "postgres://u:***@h:5432/db",
            ),
            ("postgres://u@h/u", "host=h port=5432 user=u"),
            (
                "host=/run/postgresql user=u dbname=d",
                "postgres://u@%2Frun%2Fpostgresql/d",
            ),
        ] {
            assert!(same_store(&store_key(a), &store_key(b)), "{a} vs {b}");
        }
        for (a, b) in [
            ("postgres://u@h/db", "postgres://u@h/other"),
            ("postgres://u@h/db", "postgres://v@h/db"),
            ("postgres://u@h/db", "postgres://u@h:5433/db"),
            ("postgres://u@h/db", "postgres://u@g/db"),
            ("postgres://u@h/db", "r.db"),
        ] {
            assert!(!same_store(&store_key(a), &store_key(b)), "{a} vs {b}");
        }
    }

    /// QA: a run spooled for `../lk.db` (from a subdirectory) was "meant for another store"
    /// when `store flush --db lk.db` ran beside the database, and no later save there took it;
    /// a symlink to the database was another store too.
    #[test]
    fn one_sqlite_file_spelled_two_ways_is_one_store() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::fs::write(dir.join("r.db"), "").unwrap();
        std::os::unix::fs::symlink(dir.join("r.db"), dir.join("link.db")).unwrap();
        std::os::unix::fs::symlink(dir, dir.join("sub/up")).unwrap();
        let d = |rest: &str| format!("{}/{rest}", dir.display());
        for (a, b) in [
            (d("sub/../r.db"), d("r.db")),
            (d("./r.db"), d("r.db")),
            (d("link.db"), d("r.db")),
            // Not created yet: its directory is resolved.
            (d("sub/up/new.db"), d("new.db")),
            (d("sub/../new.db"), d("new.db")),
        ] {
            assert!(same_store(&store_key(&a), &store_key(&b)), "{a} vs {b}");
        }
        for (a, b) in [
            (d("sub/r.db"), d("r.db")),
            (d("new.db"), d("r.db")),
            (d("gone/../r.db"), d("r.db")),
        ] {
            assert!(!same_store(&store_key(&a), &store_key(&b)), "{a} vs {b}");
        }
    }

    #[test]
    fn stores_are_keyed_by_absolute_path_or_redacted_url() {
        assert!(std::path::Path::new(&store_key("r.db")).is_absolute());
        assert_eq!(
            store_key("postgres://u:pw@h/db"),
            store_key("postgres://u:***@h/db")
        );
        assert!(!store_key("host=h password=pw").contains("pw"));
    }

    /// QA: with flushes running at once, a file listed by one and taken by another was
    /// reported as "not a spooled run", and `store flush` exited 2 with the spool empty. A
    /// file gone since the listing is now passed over; a dangling link is still reported.
    #[test]
    fn a_file_another_flush_took_is_not_a_failure() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("r.db");
        let mut store = crate::Store::open(Some(db.to_str().unwrap())).unwrap();
        let sp = Spool::at(t.path().join("spool"));
        let doc = serde_json::json!({"schema_version": 1, "profile": "etcd"});
        let run = NewRun {
            kind: "check",
            group_id: None,
            doc: &doc,
        };
        let (id, path) = sp.put(&run, &store.location(), "disk full").unwrap();
        let taken = t.path().join("spool/taken.json");
        let dangling = t.path().join("spool/dangling.json");
        std::os::unix::fs::symlink(t.path().join("nowhere"), &dangling).unwrap();
        let out = flush_files(
            vec![taken, path.clone(), dangling.clone()],
            &mut store,
            false,
        );
        assert_eq!(out.saved, vec![id]);
        assert_eq!(out.failed.len(), 1, "{:?}", out.failed);
        assert!(out.failed[0].contains("dangling.json"), "{:?}", out.failed);
        assert!(!path.exists());
    }

    #[test]
    fn put_then_read_round_trips_and_bad_files_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let sp = Spool::at(t.path().join("spool"));
        let doc = serde_json::json!({"schema_version": 1, "profile": "etcd"});
        let (id, path) = sp
            .put(
                &NewRun {
                    kind: "check",
                    group_id: None,
                    doc: &doc,
                },
                "/x.db",
                "disk full",
            )
            .unwrap();
        let s = Spool::read(&path).unwrap();
        assert_eq!(s.id, id);
        assert_eq!(s.doc, doc);
        assert_eq!(sp.files(), vec![path.clone()]);
        // A file that is not a spooled run is listed with why, in name order; hidden and
        // non-JSON files are not spool files.
        let bad = t.path().join("spool/00-bad.json");
        std::fs::write(&bad, "{").unwrap();
        std::fs::write(t.path().join("spool/.tmp.json"), "{").unwrap();
        std::fs::write(t.path().join("spool/notes.txt"), "{").unwrap();
        let listed = sp.list();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].file, bad);
        assert!(listed[0].run.as_ref().unwrap_err().contains("EOF"));
        assert_eq!(listed[1].file, path);
        assert_eq!(listed[1].run.as_ref().unwrap().id, id);
        for bad in [
            &b"{"[..],
            br#"{"schema_version":1,"id":"../../etc","created_at":"t","kind":"check","group_id":null,"intended_store":"x","reason":"r","doc":{}}"#,
            br#"{"schema_version":1,"id":"a","created_at":"t","kind":"Check;drop","group_id":null,"intended_store":"x","reason":"r","doc":{}}"#,
            br#"{"schema_version":1,"id":"a","created_at":"t","kind":"check","group_id":null,"intended_store":"x","reason":"r","doc":[]}"#,
            br#"{"schema_version":2,"id":"a","created_at":"t","kind":"check","group_id":null,"intended_store":"x","reason":"r","doc":{}}"#,
        ] {
            assert!(Spooled::parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
