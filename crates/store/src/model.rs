//! What a stored run looks like: the columns kept for listing (extracted from the result
//! document when it is saved), the filters `history` uses, and run ids.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The listing columns of one stored run (everything but the document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: String,
    /// RFC 3339 UTC time the run was saved.
    pub created_at: String,
    /// The command that produced it: "bench", "check", "assess", "import", "interfere".
    pub kind: String,
    pub profile: Option<String>,
    pub target: Option<String>,
    pub hostname: Option<String>,
    pub quick: bool,
    pub engine: Option<String>,
    /// Runs made together (one `disktier assess`) share this id.
    pub group_id: Option<String>,
    pub sync_p99_ns: Option<i64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub read_bw_bytes: Option<f64>,
    pub write_bw_bytes: Option<f64>,
    /// Ctrl-C or a signal stopped the run early: its figures are partial.
    #[serde(default)]
    pub interrupted: bool,
}

/// One stored run: its listing columns, host and device facts, and the whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    #[serde(flatten)]
    pub summary: RunSummary,
    pub host: Value,
    pub device: Value,
    pub doc: Value,
}

/// The kinds of run a store holds: the command that made each (`fleet run` stores its nodes'
/// runs under their command's kind, `setup` included, and a node that gave no document as
/// `unmeasured`: `disktier_fleet::result::Unmeasured`).
pub const KINDS: [&str; 7] = [
    "bench",
    "check",
    "assess",
    "import",
    "interfere",
    "setup",
    "unmeasured",
];

/// The kinds whose document is a benchmark result (`engine::RunDoc`), which `compare` takes.
pub const BENCHMARK_KINDS: [&str; 4] = ["bench", "check", "assess", "import"];

/// Which runs `history` lists. Empty fields match everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// The target as given; [`Filter::target_path`] fills [`Filter::target_also`] with the
    /// other spellings the same path may be stored under.
    pub target: Option<String>,
    /// Further spellings of `target` that match too.
    pub target_also: Vec<String>,
    pub profile: Option<String>,
    pub kind: Option<String>,
    pub group_id: Option<String>,
    /// The newest N runs only.
    pub last: Option<usize>,
}

impl Filter {
    /// Filters on the target path `arg`, matching every spelling it may be stored under
    /// ([`target_spellings`]).
    pub fn target_path(mut self, arg: &str) -> Filter {
        let mut all = target_spellings(arg);
        self.target = Some(all.remove(0));
        self.target_also = all;
        self
    }

    /// [`Filter::target_path`] for a path given as any bytes: a target whose name is not UTF-8
    /// is stored with U+FFFD in their place, so it is matched by the same lossy reading of
    /// `arg`; as that spelling names no file, the canonical form of the path the bytes name
    /// (when it exists) matches too.
    pub fn target_os_path(self, arg: &std::ffi::OsStr) -> Filter {
        let mut f = self.target_path(&arg.to_string_lossy());
        if let Ok(c) = std::fs::canonicalize(arg) {
            let c = c.to_string_lossy().into_owned();
            if !f.targets().contains(&c.as_str()) {
                f.target_also.push(c);
            }
        }
        f
    }

    /// The target values that match: none (any target) or the target and its spellings.
    pub fn targets(&self) -> Vec<&str> {
        self.target
            .iter()
            .chain(&self.target_also)
            .map(String::as_str)
            .collect()
    }

    pub fn matches(&self, s: &RunSummary) -> bool {
        fn eq(want: &Option<String>, have: &Option<String>) -> bool {
            want.as_ref()
                .is_none_or(|w| have.as_deref() == Some(w.as_str()))
        }
        let targets = self.targets();
        (targets.is_empty() || s.target.as_deref().is_some_and(|t| targets.contains(&t)))
            && eq(&self.profile, &s.profile)
            && self.kind.as_ref().is_none_or(|k| *k == s.kind)
            && eq(&self.group_id, &s.group_id)
    }
}

/// The spellings a run on the path `arg` may be stored under, `arg` first: as typed; the
/// canonical absolute path when it exists (symlinks and `..` resolved), else the absolute
/// path made from the working directory; and, for runs stored before targets were stored
/// canonical (with the path as typed, relative), every trailing part of that absolute path,
/// bare, with `./` in front or `/` behind — `bd`, `./bd`, `bd/`, `qa/bd` for `/tmp/qa/bd`.
/// A relative target stored by an older disktier cannot say which directory it was relative
/// to, so it matches any path that ends with it (docs/store.md).
///
/// An `arg` longer than PATH_MAX (4096 bytes, linux/limits.h) names no path a run measured
/// (the kernel refuses longer ones) and is matched as typed only: its trailing parts made
/// memory and SQL parameters grow with the square of its length (QA: `history --target` of
/// 20,000 `a/` ran past 20 s, as SQLite takes at most 32,766 parameters).
pub fn target_spellings(arg: &str) -> Vec<String> {
    use std::path::{Component, Path, PathBuf};
    const PATH_MAX: usize = 4096;
    let mut out = vec![arg.to_string()];
    if arg.len() > PATH_MAX {
        return out;
    }
    let mut seen: std::collections::HashSet<String> = out.iter().cloned().collect();
    let mut push = |s: String| {
        if !s.is_empty() && seen.insert(s.clone()) {
            out.push(s);
        }
    };
    let typed = Path::new(arg);
    // The absolute forms: resolved on disk, and lexical (".", a trailing "/" dropped).
    let lexical: Option<PathBuf> = std::path::absolute(typed).ok().map(|p| {
        p.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect()
    });
    let canonical = std::fs::canonicalize(typed).ok();
    for abs in canonical.iter().chain(lexical.iter()) {
        push(abs.display().to_string());
    }
    for abs in canonical.iter().chain(lexical.iter()) {
        let names: Vec<String> = abs
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        for k in (0..names.len()).rev() {
            let tail = names[k..].join("/");
            push(tail.clone());
            push(format!("./{tail}"));
            push(format!("{tail}/"));
            push(format!("./{tail}/"));
        }
    }
    out
}

/// A run about to be saved: the document plus what the caller knows about it.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub kind: &'a str,
    pub group_id: Option<&'a str>,
    pub doc: &'a Value,
}

impl NewRun<'_> {
    /// The row to insert (or to report without storing), with listing columns taken from the document. Documents that are not
    /// a `RunDoc` (interfere's) simply leave the missing columns empty.
    pub fn to_row(&self, id: String, created_at: String) -> StoredRun {
        let d = self.doc;
        // An empty string is as unknown as a missing one (QA: an import of fio's text, which
        // names no file or host, was listed with blank TARGET and HOST cells instead of "-").
        // PostgreSQL's text cannot hold NUL (SQLite's can): a NUL in an imported name is
        // listed as U+FFFD in both backends, as a name that is not UTF-8 is; the document
        // keeps it (QA: such an import was spooled for PostgreSQL, and no flush could save it).
        let s = |ptr: &str| {
            d.pointer(ptr)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
                .map(|v| v.replace('\0', "\u{FFFD}"))
        };
        let figures = Figures::of(d);
        let summary = RunSummary {
            id,
            created_at,
            kind: self.kind.to_string(),
            profile: s("/profile"),
            // RunDoc has a target object; interfere's document names its directory directly.
            target: s("/target/path").or_else(|| s("/target")),
            hostname: s("/host/hostname"),
            quick: d
                .pointer("/quick")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            engine: s("/engine"),
            group_id: self.group_id.map(str::to_string),
            sync_p99_ns: figures.sync_p99_ns,
            read_iops: figures.read_iops,
            write_iops: figures.write_iops,
            read_bw_bytes: figures.read_bw_bytes,
            write_bw_bytes: figures.write_bw_bytes,
            interrupted: d
                .get("interrupted")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        StoredRun {
            summary,
            host: d.pointer("/host").cloned().unwrap_or(Value::Null),
            device: match d.get("target") {
                Some(t @ Value::Object(_)) => t.clone(),
                _ => serde_json::json!({"device": d.get("device")}),
            },
            doc: d.clone(),
        }
    }
}

/// The figure columns of a run's listing, from its document: a run's own `results`, or a job
/// file's first reporting group's ([`crate::doc::job_file_listing`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    pub sync_p99_ns: Option<i64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub read_bw_bytes: Option<f64>,
    pub write_bw_bytes: Option<f64>,
}

impl Figures {
    pub fn of(doc: &Value) -> Figures {
        let base = crate::doc::listing_base(doc);
        let at = |ptr: &str| doc.pointer(&format!("{base}/results{ptr}"));
        let f = |ptr: &str| at(ptr).and_then(Value::as_f64);
        Figures {
            sync_p99_ns: at("/sync/lat_ns/percentiles/99").and_then(Value::as_i64),
            read_iops: f("/read/iops"),
            write_iops: f("/write/iops"),
            read_bw_bytes: f("/read/bw_bytes"),
            write_bw_bytes: f("/write/bw_bytes"),
        }
    }

    /// Fills the listing's figure columns.
    pub fn fill(self, s: &mut RunSummary) {
        s.sync_p99_ns = self.sync_p99_ns;
        s.read_iops = self.read_iops;
        s.write_iops = self.write_iops;
        s.read_bw_bytes = self.read_bw_bytes;
        s.write_bw_bytes = self.write_bw_bytes;
    }

    /// The figures `s` lists.
    pub fn listed(s: &RunSummary) -> Figures {
        Figures {
            sync_p99_ns: s.sync_p99_ns,
            read_iops: s.read_iops,
            write_iops: s.write_iops,
            read_bw_bytes: s.read_bw_bytes,
            write_bw_bytes: s.write_bw_bytes,
        }
    }
}

/// The current UTC time in RFC 3339 with microseconds (sorts as text).
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let fmt = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z"
    );
    now.format(&fmt)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}

/// A new run id: UTC time to the second, then 6 random hex digits, e.g. `20231201-201522-a3f90c`.
/// Sorts by time, prints without quoting, and is unique enough for many writers at once (the
/// primary key catches the rare clash and the caller retries).
/// The id and time a run is first offered to the store under. When that save fails, the
/// spool keeps the same two, so a save the store did commit after disktier gave up on it (a
/// PostgreSQL server that answered past the deadline) is found already stored by the flush,
/// not stored a second time.
#[derive(Debug, Clone)]
pub struct Identity {
    pub id: String,
    pub created_at: String,
}

impl Identity {
    /// A fresh id ([`new_id`]) made now.
    pub fn new() -> Identity {
        Identity {
            id: new_id(),
            created_at: now_rfc3339(),
        }
    }
}

impl Default for Identity {
    fn default() -> Self {
        Identity::new()
    }
}

pub fn new_id() -> String {
    let now = time::OffsetDateTime::now_utc();
    let fmt = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    let stamp = now.format(&fmt).unwrap_or_default();
    format!("{stamp}-{:06x}", random_u64() & 0xff_ffff)
}

/// Random bits without a dependency: std's per-process random hasher keys mixed with the pid
/// and the clock.
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (QA): `history --target` of 20,000 `a/` ran past 20 s: every trailing part of
    /// the path, four spellings each, was a parameter of the query. A target longer than
    /// PATH_MAX is matched as typed; one within it keeps its spellings.
    #[test]
    fn a_target_longer_than_path_max_is_matched_as_typed() {
        let long = "a/".repeat(2100);
        assert_eq!(target_spellings(&long), vec![long.clone()]);
        let within = "a/".repeat(1000);
        let all = target_spellings(&within);
        assert!(all.len() > 1000 && all.len() < 32_766, "{}", all.len());
        let unique: std::collections::HashSet<&String> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
    }

    #[test]
    fn a_target_that_is_not_utf8_matches_its_canonical_path() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        std::fs::create_dir(&odd).unwrap();
        let arg = odd.join("..");
        let f = Filter::default().target_os_path(arg.as_os_str());
        assert_eq!(f.target.as_deref(), Some(&*arg.to_string_lossy()));
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        assert!(f.targets().contains(&&*canonical.to_string_lossy()));
        assert_eq!(
            Filter::default().target_os_path("bd".as_ref()).targets(),
            Filter::default().target_path("bd").targets()
        );
    }

    #[test]
    fn ids_are_printable_and_distinct() {
        let a = new_id();
        let b = new_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 22, "{a}");
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    }

    #[test]
    fn columns_come_from_the_document() {
        let doc = serde_json::json!({
            "engine": "fio", "profile": "etcd", "quick": true,
            "target": {"path": "/var/lib/etcd", "kind": "directory", "device": "nvme1n1"},
            "host": {"hostname": "node-1"},
            "results": {"sync": {"lat_ns": {"percentiles": {"99": 203776}}},
                        "write": {"iops": 120.5, "bw_bytes": 2048.0}}
        });
        let row = NewRun {
            kind: "check",
            group_id: None,
            doc: &doc,
        }
        .to_row("x".into(), "t".into());
        assert_eq!(row.summary.profile.as_deref(), Some("etcd"));
        assert_eq!(row.summary.target.as_deref(), Some("/var/lib/etcd"));
        assert_eq!(row.summary.sync_p99_ns, Some(203776));
        assert_eq!(row.summary.write_iops, Some(120.5));
        assert_eq!(row.summary.read_iops, None);
        assert!(row.summary.quick);
        assert_eq!(row.device["device"], "nvme1n1");
        // What an import of fio's text leaves empty is unknown, as a missing field is.
        let doc = serde_json::json!({"target": {"path": ""}, "host": {"hostname": ""}});
        let row = NewRun {
            kind: "import",
            group_id: None,
            doc: &doc,
        }
        .to_row("y".into(), "t".into());
        assert_eq!((row.summary.target, row.summary.hostname), (None, None));
    }

    #[test]
    fn a_job_files_columns_are_its_first_groups_figures() {
        let doc = disktier_testkit::cli::store_fixture("jobfile-import");
        let row = NewRun {
            kind: "import",
            group_id: None,
            doc: &doc,
        }
        .to_row("x".into(), "t".into());
        let g = &doc["groups"][0]["results"];
        assert_eq!(
            row.summary.sync_p99_ns,
            g["sync"]["lat_ns"]["percentiles"]["99"].as_i64()
        );
        assert_eq!(row.summary.write_iops, g["write"]["iops"].as_f64());
        assert!(row.summary.write_iops.is_some());
        assert_eq!(row.summary.read_iops, None, "group 0 only writes");
        assert_eq!(
            row.summary.target.as_deref(),
            doc["target"]["path"].as_str()
        );
    }
}
