//! Versioned schema migrations, compiled in from `crates/store/migrations/*.sql`. Both backends
//! apply the same list in order and record each in `schema_migrations`; a database whose newest
//! recorded version is above [`latest`] comes from a newer disktier and is refused.

/// One schema step.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, oldest first. Append only: a released migration never changes.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "runs",
        sql: include_str!("../migrations/0001_runs.sql"),
    },
    Migration {
        version: 2,
        name: "groups",
        sql: include_str!("../migrations/0002_groups.sql"),
    },
    Migration {
        version: 3,
        name: "interrupted",
        sql: include_str!("../migrations/0003_interrupted.sql"),
    },
    Migration {
        version: 4,
        name: "fingerprint",
        sql: include_str!("../migrations/0004_fingerprint.sql"),
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
