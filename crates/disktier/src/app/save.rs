//! Save: a run into the result store. Every command that measures calls [`StoreConfig::save`]
//! (a no-op with `--no-save`); the reading commands open the same store with
//! [`StoreConfig::open`].
//!
//! A measurement is never lost to the store: when the store cannot take the run (PostgreSQL
//! down, SQLite read-only, locked past its timeout or on a full filesystem) the run goes to the
//! spool (`disktier_store::spool`) with a warning saying where and how it will be saved, and
//! the command goes on to print its result and exit with its verdict. After a successful save
//! the runs spooled for the same store are saved too.

use disktier_store::spool::Spool;
use disktier_store::{pgconn, NewRun, Store};

/// Where runs are saved.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// A SQLite path, a postgres:// URL or a libpq string; None (or empty) for the default
    /// SQLite file (`disktier_store::location`).
    pub db: Option<String>,
    /// `--no-save`: [`StoreConfig::save`] saves nothing.
    pub no_save: bool,
    /// `--quiet`: no note when spooled runs are saved after a save.
    pub quiet: bool,
}

impl StoreConfig {
    /// Opens the store `db` names, or the default SQLite file.
    pub fn open(&self) -> anyhow::Result<Store> {
        Ok(Store::open(self.db.as_deref())?)
    }

    /// The store's location as shown (credentials redacted), for a store that could not be
    /// opened, or was not (`store flush` with nothing to save).
    pub fn shown_location(&self) -> String {
        match disktier_store::location(self.db.as_deref()) {
            Some(l) => pgconn::redact(l),
            None => disktier_store::default_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "the default store".into()),
        }
    }

    /// Saves a measurement's document (`value`, its JSON, which a command may have added to),
    /// unless a signal stopped the run before one I/O completed: that is no result, and
    /// [`NothingMeasured`](super::measure::NothingMeasured) says so. Saved before anything is
    /// printed: output that cannot be written (a full disk, a closed pipe) must not cost the
    /// measurement (QA: `> /dev/full` lost the run).
    pub fn save_measured(
        &self,
        kind: &str,
        doc: &disktier_engine::RunDoc,
        value: &serde_json::Value,
    ) -> anyhow::Result<Option<String>> {
        if doc.interrupted && super::measure::completed_nothing(doc) {
            return Err(super::measure::NothingMeasured::new(&doc.target.path).into());
        }
        self.save(kind, None, value)
    }

    /// Saves one result document, linked to the others of `group_id` (one `disktier assess`,
    /// one `--repeat`); returns the new run id, or `None` with `--no-save` or when the run was
    /// spooled instead (a warning says so). `kind` is the command ("bench", "check", "assess",
    /// "interfere", "import").
    pub fn save(
        &self,
        kind: &str,
        group_id: Option<&str>,
        doc: &serde_json::Value,
    ) -> anyhow::Result<Option<String>> {
        if self.no_save {
            return Ok(None);
        }
        let run = NewRun {
            kind,
            group_id,
            doc,
        };
        let identity = disktier_store::Identity::new();
        let (location, err) = match self.open() {
            // The same file imported again with the same options is the run it made (QA: two
            // identical runs): nothing is stored, and the note names it.
            // One store holds an import's document once, also when the same file is imported
            // twice at the same instant (schema version 5's unique index decides).
            Ok(mut store) => match store.stored_import(&run).and_then(|found| match found {
                Some(id) => Ok(Err(id)),
                None => store.save_as(&run, &identity).map(|saved| match saved {
                    disktier_store::Saved::New(id) => Ok(id),
                    disktier_store::Saved::Already(id) => Err(id),
                }),
            }) {
                Ok(Err(id)) => {
                    if !self.quiet {
                        errln!(
                            "note: not saved again: this import is already stored as run {id} in {} (the same document: the same file imported with the same options)",
                            one_line(&store.location())
                        );
                    }
                    return Ok(None);
                }
                Ok(Ok(id)) => {
                    flush_after_save(self.quiet, &mut store);
                    // The caller prints the id (bench/check after their table, assess in its summary).
                    return Ok(Some(id));
                }
                Err(e) => (store.location(), anyhow::Error::from(e)),
            },
            Err(e) => (self.shown_location(), e),
        };
        spool(&run, &identity, &location, &err);
        Ok(None)
    }
}

/// Keeps a run the store refused in the spool, and says so on stderr (also with `--quiet`:
/// a result not in the store is something the user must know).
fn spool(
    run: &NewRun<'_>,
    identity: &disktier_store::Identity,
    location: &str,
    err: &anyhow::Error,
) {
    let reason = format!("{err:#}");
    errln!(
        "warning: cannot save the {} run in {location}: {reason}",
        run.kind
    );
    let spool = match Spool::default_dir() {
        Ok(d) => Spool::at(d),
        Err(e) => {
            errln!("warning: and it cannot be spooled either ({e}): the result printed here is the only copy");
            return;
        }
    };
    match spool.put_as(run, identity, location, &reason) {
        // The location itself is what is wrong: no later run saves there, so waiting for it
        // to "work again" is no advice (QA).
        Ok((id, path)) if refused_for_good(err) => errln!(
            "note: the result is kept as run {id} in {}; this location is never a store, so pass a store's --db (or DISKTIER_DB), then save the kept run there with `disktier store flush --all`",
            path.display()
        ),
        Ok((id, path)) => errln!(
            "note: the result is kept as run {id} in {}; it is saved to {location} by the next run that saves there, or now with `disktier store flush` once the store works again",
            path.display()
        ),
        Err(e) => errln!(
            "warning: and it cannot be spooled in {} either ({e}): the result printed here is the only copy",
            spool.dir().display()
        ),
    }
}

/// Whether `err` refuses the store's location itself (`:memory:`, a `file:` URI, a directory,
/// a FIFO, a file that is not a disktier database), which no retry changes.
fn refused_for_good(err: &anyhow::Error) -> bool {
    use disktier_store::StoreError;
    err.chain().any(|e| {
        matches!(
            e.downcast_ref::<StoreError>(),
            Some(
                StoreError::BadLocation { .. }
                    | StoreError::IsDirectory { .. }
                    | StoreError::NotAFile { .. }
                    | StoreError::PseudoFs { .. }
                    | StoreError::NotOurs { .. }
            )
        )
    })
}

/// After a save worked, saves what was spooled for this same store (quietly unless something
/// was saved or failed).
fn flush_after_save(quiet: bool, store: &mut Store) {
    let Ok(dir) = Spool::default_dir() else {
        return;
    };
    let spool = Spool::at(dir);
    if spool.files().is_empty() {
        return;
    }
    let f = spool.flush(store, false);
    if !f.saved.is_empty() && !quiet {
        errln!(
            "saved {} spooled run(s) in {}: {}",
            f.saved.len(),
            one_line(&store.location()),
            f.saved.join(", ")
        );
    }
    if !quiet {
        for same in &f.same_import {
            errln!(
                "note: spooled run {} not saved again: this import is already stored as run {} in {}; its spool file is removed",
                same.spooled,
                same.stored_as,
                one_line(&store.location())
            );
        }
    }
    for why in &f.failed {
        errln!("warning: spooled run not saved: {}", one_line(why));
    }
}

/// A store's location on one line of a note: notes keep their own line breaks, so a newline in
/// the location (a `--db` path may hold one) would split the note (QA).
fn one_line(location: &str) -> String {
    crate::text::printable(location, false)
}
