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
    }
}
