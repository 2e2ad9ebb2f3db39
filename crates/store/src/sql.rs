//! SQL shared by both backends: the column list and the `history` query, written once with a
//! placeholder style per backend (`?N` for SQLite, `$N` for PostgreSQL).

use crate::error::{Result, StoreError};
use crate::model::{Filter, RunSummary, StoredRun};
use serde_json::Value;

/// The columns every read returns, in this order.
pub const COLS: &str = "id, created_at, kind, profile, target, hostname, quick, engine, group_id, \
    sync_p99_ns, read_iops, write_iops, read_bw_bytes, write_bw_bytes, host_json, device_json, doc, \
    interrupted";

/// `INSERT` of one row, with placeholders `mark(1)..mark(18)` in [`COLS`] order, then
/// `mark(19)` for its [`fingerprint`] (written, never read back with the row).
pub fn insert(mark: fn(usize) -> String) -> String {
    let marks: Vec<String> = (1..=19).map(mark).collect();
    format!(
        "INSERT INTO runs ({COLS}, fingerprint) VALUES ({})",
        marks.join(", ")
    )
}

/// The kind of run whose fingerprint is kept: an import, which reads a file that can be read
/// again into the same document. A measured run is new every time, even when its figures
/// repeat.
const FINGERPRINTED: &str = "import";

/// The fingerprint of a run of `kind` whose stored document is `doc` (its JSON, as
/// [`json_columns`] writes it): the SHA-256 of that text in hex, for an import; `None` for any
/// other kind. An import's document is made from the file and the options alone (fio's or
/// etcd-perf's figures and times, the target and host named), so one file imported twice with
/// the same options has one fingerprint.
pub fn fingerprint(kind: &str, doc: &str) -> Option<String> {
    if kind != FINGERPRINTED {
        return None;
    }
    // SHA-256 from the crypto provider rustls already brings (ring), rather than another crate.
    let suite = rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256
        .tls13()
        .expect("a TLS 1.3 suite");
    let digest = suite.common.hash_provider.hash(doc.as_bytes());
    Some(digest.as_ref().iter().map(|b| format!("{b:02x}")).collect())
}

/// The id of the oldest run with a fingerprint, `mark(1)`.
pub fn by_fingerprint(mark: fn(usize) -> String) -> String {
    format!(
        "SELECT id FROM runs WHERE fingerprint = {} ORDER BY created_at, id LIMIT 1",
        mark(1)
    )
}

/// The listing query for `filter` (without the document) and its text parameters.
pub fn list(filter: &Filter, mark: fn(usize) -> String) -> (String, Vec<String>) {
    let mut conds = Vec::new();
    let mut params = Vec::new();
    let targets = filter.targets();
    if !targets.is_empty() {
        let marks: Vec<String> = targets
            .iter()
            .map(|t| {
                params.push(t.to_string());
                mark(params.len())
            })
            .collect();
        conds.push(format!("target IN ({})", marks.join(", ")));
    }
    for (col, val) in [
        ("profile", &filter.profile),
        ("kind", &filter.kind),
        ("group_id", &filter.group_id),
    ] {
        if let Some(v) = val {
            params.push(v.clone());
            conds.push(format!("{col} = {}", mark(params.len())));
        }
    }
    // Listing never needs the documents: read placeholders in their place (same column count,
    // so one row reader serves both queries).
    let cols = COLS.replace(
        "host_json, device_json, doc",
        "'null' AS host_json, 'null' AS device_json, 'null' AS doc",
    );
    let mut q = format!("SELECT {cols} FROM runs");
    if !conds.is_empty() {
        q.push_str(" WHERE ");
        q.push_str(&conds.join(" AND "));
    }
    q.push_str(" ORDER BY created_at DESC, id DESC");
    if let Some(n) = filter.last {
        // Both databases take a signed 64-bit LIMIT: more than that is "all".
        let n = n.min(i64::MAX as usize);
        q.push_str(&format!(" LIMIT {n}"));
    }
    (q, params)
}

/// The run of one id, through the primary key's index. Tried before [`by_prefix`], whose
/// `substr` reads every row: `report` of N runs fetched each by its whole id through it,
/// N × N rows read (QA: 10,000 runs took 40 s of SQLite's time).
pub fn by_exact(mark: fn(usize) -> String) -> String {
    format!("SELECT {COLS} FROM runs WHERE id = {}", mark(1))
}

/// Ids that start with a prefix (`substr` exists in both dialects, and needs no LIKE escaping).
pub fn by_prefix(mark: fn(usize) -> String) -> String {
    format!(
        "SELECT {COLS} FROM runs WHERE substr(id, 1, {}) = {} ORDER BY id LIMIT 2",
        mark(1),
        mark(2)
    )
}

/// The JSON columns of `row` (`host_json`, `device_json`, `doc`), in [`COLS`] order.
pub fn json_columns(row: &StoredRun) -> Result<[String; 3]> {
    Ok([
        serde_json::to_string(&row.host)?,
        serde_json::to_string(&row.device)?,
        serde_json::to_string(&row.doc)?,
    ])
}

/// The JSON columns of the run `id` read back (host, device, document); text that does not
/// parse is a damaged row of `location`.
pub fn parse_json_columns(
    location: &str,
    id: &str,
    [host, device, doc]: [&str; 3],
) -> Result<(Value, Value, Value)> {
    let bad = |error| StoreError::CorruptRow {
        location: location.to_string(),
        id: id.to_string(),
        error,
    };
    Ok((
        serde_json::from_str(host).map_err(bad)?,
        serde_json::from_str(device).map_err(bad)?,
        serde_json::from_str(doc).map_err(bad)?,
    ))
}

/// The listing columns of `runs` (a listing query reads no documents).
pub fn summaries(runs: Vec<StoredRun>) -> Vec<RunSummary> {
    runs.into_iter().map(|r| r.summary).collect()
}

pub fn sqlite_mark(i: usize) -> String {
    format!("?{i}")
}

pub fn pg_mark(i: usize) -> String {
    format!("${i}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_imports_fingerprint_is_the_sha256_of_its_document() {
        // `printf abc | sha256sum`
        assert_eq!(
            fingerprint("import", "abc").as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(fingerprint("bench", "abc"), None);
    }

    #[test]
    fn list_query_has_one_placeholder_per_filter() {
        let f = Filter {
            target: Some("/data".into()),
            profile: Some("etcd".into()),
            last: Some(5),
            ..Filter::default()
        };
        let (q, p) = list(&f, pg_mark);
        assert!(q.contains("target IN ($1) AND profile = $2"), "{q}");
        assert!(q.ends_with("LIMIT 5"), "{q}");
        assert_eq!(p, vec!["/data".to_string(), "etcd".to_string()]);
    }
}
