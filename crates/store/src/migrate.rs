//! Versioned schema migrations, compiled in from `crates/store/migrations/*.sql`. Both backends
//! apply the same list in order and record each in `schema_migrations`; a database whose newest
//! recorded version is above [`latest`] comes from a newer disktier and is refused.

/// One schema step.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
    /// What the backend does in Rust after `sql`, in the same transaction.
    pub then: Option<Then>,
}

/// A migration step SQL cannot take in both dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// Gives each import stored without a fingerprint (before version 4) the fingerprint an
    /// import computes ([`crate::sql::fingerprint`] of its stored document, the very text
    /// that was hashed when it was saved), unless another run has it already: the SHA-256 that
    /// version 4 could not compute in SQL. Read a page of rows at a time, so memory stays
    /// bounded by the page, not the store.
    FingerprintImports,
}

/// Rows of imports read per page by [`Then::FingerprintImports`].
pub const FILL_PAGE: i64 = 64;

/// How many imports [`Then::FingerprintImports`] has to fingerprint.
pub const UNFINGERPRINTED: &str =
    "SELECT COUNT(*) FROM runs WHERE kind = 'import' AND fingerprint IS NULL";

/// Whether a migration step that rewrites rows is running in this process now: a first Ctrl-C
/// then says the upgrade will finish or roll back, rather than seeming to do nothing (the
/// binary's signal thread asks [`upgrading`]).
static UPGRADING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a long migration step ([`Upgrade`]) is under way in this process.
pub fn upgrading() -> bool {
    UPGRADING.load(std::sync::atomic::Ordering::SeqCst)
}

/// How often [`Upgrade`] says how far it is (QA: on a large store the first command after an
/// upgrade printed nothing while the migration ran and looked hung).
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(3);

/// Where [`Upgrade`] says what it does: set by the binary (its notes go to stderr, never
/// stdout, so `--format json` stays one document; `--quiet` sets none). Unset, a library
/// user hears nothing.
static NOTES: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

/// Sends what a long migration step says to `to`, from now on (the first call only).
pub fn tell_upgrades(to: fn(&str)) {
    let _ = NOTES.set(to);
}

fn say(msg: &str) {
    if let Some(to) = NOTES.get() {
        to(msg);
    }
}

/// Says what a migration step that rewrites many rows does and how far it is, through
/// [`tell_upgrades`], and nothing when there is nothing to rewrite.
pub struct Upgrade {
    location: String,
    version: i64,
    total: i64,
    done: i64,
    said: std::time::Instant,
}

impl Upgrade {
    /// Starts telling of the upgrade of the store at `location` to `version`, `total` imports
    /// to fingerprint: `None`, and nothing said, when there are none.
    pub fn start(location: &str, version: i64, total: i64) -> Option<Upgrade> {
        if total <= 0 {
            return None;
        }
        say(&format!(
            "upgrading the store {location} to schema v{version}: fingerprinting {total} stored imports, in one transaction (if disktier is stopped before it ends, it rolls back, and the next command that opens the store starts it again)"
        ));
        UPGRADING.store(true, std::sync::atomic::Ordering::SeqCst);
        Some(Upgrade {
            location: location.to_string(),
            version,
            total,
            done: 0,
            said: std::time::Instant::now(),
        })
    }

    /// `n` more imports are done.
    pub fn advance(&mut self, n: usize) {
        self.done += n as i64;
        if self.said.elapsed() >= PROGRESS_EVERY {
            self.said = std::time::Instant::now();
            say(&format!(
                "upgrading the store to schema v{}: {} of {} imports fingerprinted",
                self.version, self.done, self.total
            ));
        }
    }

    /// The step is done (its transaction commits next).
    pub fn finish(self) {
        say(&format!(
            "upgraded the store {} to schema v{}: {} imports fingerprinted",
            self.location, self.version, self.done
        ));
    }
}

impl Drop for Upgrade {
    fn drop(&mut self) {
        UPGRADING.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The page of imports without a fingerprint after id `mark(1)`, `FILL_PAGE` of them, in id
/// order (ids start with the UTC time, so the oldest of identical imports gets it).
pub fn unfingerprinted_page(mark: fn(usize) -> String) -> String {
    format!(
        "SELECT id, doc FROM runs WHERE kind = 'import' AND fingerprint IS NULL AND id > {} ORDER BY id LIMIT {FILL_PAGE}",
        mark(1)
    )
}

/// Sets run `mark(2)`'s fingerprint to `mark(1)` unless a run has it already.
pub fn set_fingerprint(mark: fn(usize) -> String) -> String {
    format!(
        "UPDATE runs SET fingerprint = {f} WHERE id = {id} AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.fingerprint = {f})",
        f = mark(1),
        id = mark(2)
    )
}

/// Every migration, oldest first. Append only: a released migration never changes.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "runs",
        sql: include_str!("../migrations/0001_runs.sql"),
        then: None,
    },
    Migration {
        version: 2,
        name: "groups",
        sql: include_str!("../migrations/0002_groups.sql"),
        then: None,
    },
    Migration {
        version: 3,
        name: "interrupted",
        sql: include_str!("../migrations/0003_interrupted.sql"),
        then: None,
    },
    Migration {
        version: 4,
        name: "fingerprint",
        sql: include_str!("../migrations/0004_fingerprint.sql"),
        then: None,
    },
    Migration {
        version: 5,
        name: "unique_fingerprint",
        sql: include_str!("../migrations/0005_unique_fingerprint.sql"),
        then: Some(Then::FingerprintImports),
    },
];

/// The schema version this build writes.
pub fn latest() -> i64 {
    MIGRATIONS.last().map(|m| m.version).unwrap_or(0)
}

/// The bookkeeping table, in SQL both backends accept.
pub const CREATE_SCHEMA_MIGRATIONS: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    version BIGINT PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)";

/// SQL both backends run as one batch to give a database the schema an older build wrote:
/// the bookkeeping table, the SQL of the first `version` migrations, each recorded as applied
/// on 2024-01-01 (their Rust steps, [`Then`], are not run). For tests of upgrades; a version
/// past [`latest`] is refused.
pub fn schema_as_written_by(version: usize) -> Option<String> {
    let mut sql = format!("{CREATE_SCHEMA_MIGRATIONS};\n");
    for m in MIGRATIONS.get(..version)? {
        sql.push_str(m.sql);
        // Names are fixed identifiers above (`runs`, `unique_fingerprint`): no quoting needed.
        sql.push_str(&format!(
            ";\nINSERT INTO schema_migrations VALUES ({}, '{}', '2024-01-01T00:00:00Z');\n",
            m.version, m.name
        ));
    }
    Some(sql)
}

/// The migrations a database at version `current` still needs.
pub fn pending(current: i64) -> impl Iterator<Item = &'static Migration> {
    MIGRATIONS.iter().filter(move |m| m.version > current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_increase_by_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "{}", m.name);
        }
        assert_eq!(pending(1).count(), MIGRATIONS.len() - 1);
        assert!(schema_as_written_by(MIGRATIONS.len() + 1).is_none());
        for m in MIGRATIONS {
            assert!(
                m.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{}",
                m.name
            );
        }
    }
}
