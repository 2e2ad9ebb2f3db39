//! Report: which stored runs a report draws, and the HTML report of them (and a plan document)
//! written atomically to a file.

use anyhow::Context;
use disktier_atomicfile::{Mode, Staged};
use disktier_catalog::plan::StoragePlan;
use disktier_store::report::{render_read, ReadRun, Skipped};
use disktier_store::{Filter, Store, StoreError, StoredRun};
use std::num::NonZeroUsize;
use std::path::Path;

/// Where the assess ids a group is chosen by are found.
const GROUP_HINT: &str = "give the id `disktier assess` printed (\"assess id ...\"); `disktier history --kind assess --format json` lists each run's group_id";

/// The number of runs a report draws when none are named and no group is chosen.
pub const DEFAULT_LAST: usize = 10;

/// Which stored runs a report draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These runs (ids or unique prefixes), in this order; a run named twice is drawn once.
    Runs(Vec<String>),
    /// The newest runs, drawn oldest first: `last` of them ([`DEFAULT_LAST`] when `None`) or,
    /// with `group`, the runs of that `disktier assess` (all of them when `last` is `None`).
    Newest {
        last: Option<NonZeroUsize>,
        group: Option<String>,
    },
}

/// Reads the runs `selection` names from `store`, one after another, each read into its type
/// at once ([`ReadRun`]: no run's JSON is kept, so memory grows with the runs' typed documents,
/// not their JSON trees): the runs to draw and the ones skipped because
/// their stored rows do not read (their JSON does not parse), each skipped one also passed to
/// `warn` as it is met (a run missing from a report is something to know, even when quiet).
/// `note` receives a run named more than once. Refused: a group with no run, and a selection
/// of which no run reads.
pub fn select(
    store: &mut Store,
    selection: &Selection,
    warn: &dyn Fn(&str),
    note: &dyn Fn(&str),
) -> anyhow::Result<(Vec<ReadRun>, Vec<Skipped>)> {
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    match selection {
        Selection::Newest { last, group } => {
            let last = last.map(NonZeroUsize::get);
            let filter = Filter {
                group_id: group.clone(),
                last: if group.is_some() {
                    last
                } else {
                    Some(last.unwrap_or(DEFAULT_LAST))
                },
                ..Filter::default()
            };
            let mut list = store.list(&filter)?;
            if list.is_empty() {
                if let Some(g) = group {
                    // `history`'s table has no group column: the hint names where groups are
                    // (QA: it sent the user to a listing that does not show them).
                    // A newline in it must not split the error's line (the error keeps its line
                    // breaks).
                    anyhow::bail!(
                        "no run is in group {}: {GROUP_HINT}",
                        crate::text::printable(g, false)
                    );
                }
            }
            list.reverse(); // oldest first reads like the order they were made
            for s in list {
                take(store.get(&s.id), &mut runs, &mut skipped, warn)?;
            }
        }
        Selection::Runs(ids) => {
            for id in ids {
                let before = runs.len();
                take(store.get(id), &mut runs, &mut skipped, warn)?;
                // A run named twice (or by two prefixes) is drawn once.
                if runs.len() > before
                    && runs[..before]
                        .iter()
                        .any(|r| r.summary().id == runs[before].summary().id)
                {
                    let dup = runs.pop().expect("pushed above");
                    note(&format!(
                        "run {} is named more than once: it is drawn once",
                        dup.summary().id
                    ));
                }
            }
        }
    }
    if runs.is_empty() && !skipped.is_empty() {
        anyhow::bail!(
            "nothing to report: the {} selected run{} cannot be read (listed above); pick others with RUN or --last",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" }
        );
    }
    Ok((runs, skipped))
}

/// Keeps a run the store handed over; one whose row does not read (its stored JSON does not
/// parse) does not stop the report: it is passed to `warn` and named in the report. Any other
/// error stops it.
fn take(
    got: Result<StoredRun, StoreError>,
    runs: &mut Vec<ReadRun>,
    skipped: &mut Vec<Skipped>,
    warn: &dyn Fn(&str),
) -> anyhow::Result<()> {
    match got {
        Ok(run) => runs.push(ReadRun::read(run)),
        Err(e) => {
            let id = match &e {
                StoreError::CorruptRow { id, .. } | StoreError::BadRow { id, .. } => id.clone(),
                _ => return Err(e.into()),
            };
            warn(&format!(
                "warning: {}; it is left out of the report",
                crate::text::printable(&e.to_string(), false)
            ));
            skipped.push(Skipped {
                id,
                why: e.to_string(),
            });
        }
    }
    Ok(())
}

/// The most of a plan file read: a plan of every option the catalog holds is tens of KiB (18
/// KiB with --allow-hybrid); past this it is no plan (QA: `--plan /dev/zero` read until memory
/// ran out, 3 GiB in 5 s). The catalog file's cap (disktier_catalog::load::MAX_FILE).
const MAX_PLAN: u64 = 16 << 20;

/// Reads and checks a `disktier plan --format json` document (a file, or a pipe such as
/// /dev/stdin, of at most [`MAX_PLAN`] bytes).
pub fn read_plan(path: &Path) -> anyhow::Result<StoragePlan> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PLAN + 1).read_to_string(&mut text))
        .with_context(|| format!("cannot read the plan {}", path.display()))?;
    if text.len() as u64 > MAX_PLAN {
        anyhow::bail!(
            "{} is larger than {} MiB, which no plan is: pass the file `disktier plan --format json` wrote",
            path.display(),
            MAX_PLAN >> 20
        );
    }
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not JSON: write it with `disktier plan --format json > {}`",
            path.display(),
            path.display()
        )
    })?;
    if let Some((at, n)) = absurd_number(&v, String::new()) {
        anyhow::bail!(
            "{} holds {n:e} at {at}, a figure no plan has (its costs, sizes and rates are below 10^15): write it again with `disktier plan --format json`",
            path.display()
        );
    }
    if !v.get("options").is_some_and(|o| o.is_array()) {
        anyhow::bail!(
            "{} has no \"options\" list: it is not a `disktier plan --format json` document",
            path.display()
        );
    }
    match v.get("schema_version").and_then(|s| s.as_u64()) {
        Some(1) => serde_json::from_value(v).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a `disktier plan --format json` document: {e}",
                path.display()
            )
        }),
        other => anyhow::bail!(
            "{} has schema_version {other:?}; this disktier reads version 1 plans",
            path.display()
        ),
    }
}

/// The first number in `v` whose size is 10^15 or more, with where it is (`options[0].
/// monthly_cost_usd`): no plan's cost, size or rate comes near it, and a forged one was drawn as
/// a 309-digit dollar figure (QA: `--plan` with a monthly cost of 1e308).
fn absurd_number(v: &serde_json::Value, at: String) -> Option<(String, f64)> {
    use serde_json::Value;
    match v {
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_nan() || f.abs() >= 1e15)
            .map(|f| (at, f)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| absurd_number(x, format!("{at}[{i}]"))),
        Value::Object(m) => m.iter().find_map(|(k, x)| {
            let key = crate::text::printable(k, false);
            absurd_number(
                x,
                if at.is_empty() {
                    key
                } else {
                    format!("{at}.{key}")
                },
            )
        }),
        _ => None,
    }
}

/// Renders `runs` and writes the HTML to `path`: through a temporary file with a random name
/// created with `O_EXCL` in the same directory (never a name another user can predict and
/// plant), renamed over `path`, so a failed write never leaves half a report. A `path` that is
/// a symlink or not a regular file is refused rather than replaced. `flag` is the option that
/// named `path` (`-o`, `--report`): a refusal says which to change.
pub fn write_report(
    runs: &[StoredRun],
    plan: Option<&StoragePlan>,
    path: &Path,
    flag: &str,
) -> anyhow::Result<()> {
    let read = runs.iter().cloned().map(ReadRun::read).collect();
    write_report_skipping(read, &[], plan, path, flag)
}

/// [`write_report`], naming `skipped` runs (selected, but their stored rows do not read) in the
/// report without drawing them.
pub fn write_report_skipping(
    runs: Vec<ReadRun>,
    skipped: &[Skipped],
    plan: Option<&StoragePlan>,
    path: &Path,
    flag: &str,
) -> anyhow::Result<()> {
    write_atomic(path, render_page(runs, skipped, plan)?.as_bytes(), flag)
}

/// The report's HTML, generated now (`report -o -` prints it as it is).
pub fn render_page(
    runs: Vec<ReadRun>,
    skipped: &[Skipped],
    plan: Option<&StoragePlan>,
) -> anyhow::Result<String> {
    Ok(render_read(runs, skipped, plan, &now_utc())?)
}

/// Whether a report can be written at `path` (named by the option `flag`), and the mode it will
/// have (that of the report it replaces, 0644 for a new one). Checked before anything is
/// rendered or measured, so that `assess --report` in a directory that does not exist or
/// cannot be written is refused at once rather than after minutes of measuring (QA), and
/// `report -o` before a large report is drawn; and again when writing.
pub fn check_destination(path: &Path, flag: &str) -> anyhow::Result<u32> {
    use std::io::ErrorKind;
    use std::os::unix::fs::PermissionsExt;
    let mode = match std::fs::symlink_metadata(path) {
        Ok(md) if md.file_type().is_symlink() => anyhow::bail!(
            "{} is a symlink: refusing to replace it; pass the path of the file itself to {flag}",
            path.display()
        ),
        Ok(md) if !md.file_type().is_file() => anyhow::bail!(
            "{} exists and is not a regular file: pass another {flag}",
            path.display()
        ),
        Ok(md) => {
            if md.len() > 0 && !is_a_report(path) {
                anyhow::bail!(
                    "refusing to replace {}: it exists and is not a disktier report (a report \
                     starts with <!DOCTYPE html> and is titled \"disktier report\"); pass \
                     another {flag}, or remove that file first if it may go",
                    path.display()
                );
            }
            md.permissions().mode() & 0o777
        }
        Err(e) if e.kind() == ErrorKind::NotFound => 0o644,
        // A path through a file ("report.html/x") or one that cannot be reached.
        Err(e) => anyhow::bail!("cannot write {} ({e}): pass another {flag}", path.display()),
    };
    path.file_name().with_context(|| {
        format!(
            "{} names no file: pass a file name to {flag}",
            path.display()
        )
    })?;
    // The temporary file the write makes, made and removed: this finds a directory that does
    // not exist, one the user cannot write and a read-only filesystem as the write would.
    if let Err(e) = Staged::beside(path, Mode::Exact(mode)) {
        let dir_path = disktier_atomicfile::dir_of(path);
        let dir = dir_path.display();
        match e.io().kind() {
            // A directory that exists but makes no new file there (procfs, sysfs) is not missing
            // (QA: `-o /proc/version` said "the directory /proc does not exist").
            ErrorKind::NotFound if !dir_path.is_dir() => anyhow::bail!(
                "cannot write {}: the directory {dir} does not exist; create it, or pass another {flag}",
                path.display()
            ),
            ErrorKind::PermissionDenied => anyhow::bail!(
                "cannot write {}: the directory {dir} is not writable by this user; pass a {flag} in a directory you can write",
                path.display()
            ),
            ErrorKind::ReadOnlyFilesystem => anyhow::bail!(
                "cannot write {}: the directory {dir} is on a read-only filesystem; pass a {flag} on a writable one",
                path.display()
            ),
            ErrorKind::NotADirectory => anyhow::bail!(
                "cannot write {}: {dir} is not a directory; pass another {flag}",
                path.display()
            ),
            _ => anyhow::bail!(
                "cannot create a temporary file in {dir} ({}): pass another {flag}",
                e.io()
            ),
        }
    }
    Ok(mode)
}

/// Writes `bytes` to `path` atomically ([`disktier_atomicfile`]: a random `O_EXCL` temporary
/// file in its directory, synced and renamed); keeps the mode of a file it replaces (0644 for a
/// new one). `flag` is the option that named `path`.
pub fn write_atomic(path: &Path, bytes: &[u8], flag: &str) -> anyhow::Result<()> {
    let mode = check_destination(path, flag)?;
    disktier_atomicfile::replace(path, bytes, Mode::Exact(mode))?;
    Ok(())
}

/// Whether the file at `path` is a report disktier wrote (so replacing it loses nothing the
/// store does not hold): its head is the page header `render` writes. Anything else at `-o`,
/// such as the result store itself or a config file, is refused rather than overwritten.
fn is_a_report(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    let head = String::from_utf8_lossy(&head);
    read.is_ok()
        && head.starts_with("<!DOCTYPE html>")
        && head.contains("<title>disktier report</title>")
}

fn now_utc() -> String {
    let t = disktier_store::model::now_rfc3339();
    format!("{} UTC", t.get(..16).unwrap_or(&t).replace('T', " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_store::NewRun;
    use disktier_testkit::cli::store_fixture;
    use std::cell::RefCell;

    /// A store in a temporary directory holding `n` runs; their ids, oldest first.
    fn store_with(n: usize, group: Option<&str>) -> (tempfile::TempDir, Store, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let mut store = Store::open(Some(path.to_str().unwrap())).unwrap();
        let doc = store_fixture("quick-etcd");
        let ids = (0..n)
            .map(|_| {
                store
                    .save(&NewRun {
                        kind: "check",
                        group_id: group,
                        doc: &doc,
                    })
                    .unwrap()
            })
            .collect();
        (dir, store, ids)
    }

    fn ids(runs: &[ReadRun]) -> Vec<&str> {
        runs.iter().map(|r| r.summary().id.as_str()).collect()
    }

    #[test]
    fn a_run_named_twice_is_drawn_once_with_a_note() {
        let (_dir, mut store, made) = store_with(2, None);
        let notes = RefCell::new(Vec::new());
        let sel = Selection::Runs(vec![made[1].clone(), made[0].clone(), made[1].clone()]);
        let (runs, skipped) = select(&mut store, &sel, &|_| panic!("no warning"), &|m| {
            notes.borrow_mut().push(m.to_string())
        })
        .unwrap();
        assert_eq!(ids(&runs), [made[1].as_str(), made[0].as_str()]);
        assert!(skipped.is_empty());
        assert_eq!(
            notes.into_inner(),
            [format!(
                "run {} is named more than once: it is drawn once",
                made[1]
            )]
        );
    }

    #[test]
    fn the_newest_runs_are_drawn_and_an_empty_group_is_refused() {
        let (_dir, mut store, made) = store_with(3, Some("g1"));
        let quiet = |_: &str| panic!("nothing to say");
        let newest = Selection::Newest {
            last: None,
            group: None,
        };
        let (runs, _) = select(&mut store, &newest, &quiet, &quiet).unwrap();
        let mut got = ids(&runs);
        got.sort_unstable();
        let mut want: Vec<&str> = made.iter().map(String::as_str).collect();
        want.sort_unstable();
        assert_eq!(got, want);
        let two = Selection::Newest {
            last: NonZeroUsize::new(2),
            group: Some("g1".into()),
        };
        assert_eq!(select(&mut store, &two, &quiet, &quiet).unwrap().0.len(), 2);
        let none = Selection::Newest {
            last: None,
            group: Some("nope".into()),
        };
        let e = select(&mut store, &none, &quiet, &quiet).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no run is in group nope: give the id `disktier assess` printed (\"assess id ...\"); `disktier history --kind assess --format json` lists each run's group_id"
        );
    }

    #[test]
    fn a_run_whose_row_does_not_read_is_skipped_and_alone_refused() {
        let (dir, mut store, made) = store_with(2, None);
        rusqlite::Connection::open(dir.path().join("results.db"))
            .unwrap()
            .execute(
                "UPDATE runs SET doc = '{\"truncated' WHERE id = ?1",
                [&made[0]],
            )
            .unwrap();
        let warned = RefCell::new(Vec::new());
        let warn = |m: &str| warned.borrow_mut().push(m.to_string());
        let both = Selection::Runs(made.clone());
        let (runs, skipped) = select(&mut store, &both, &warn, &|_| {}).unwrap();
        assert_eq!(ids(&runs), [made[1].as_str()]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].id, made[0]);
        assert_eq!(warned.borrow().len(), 1);
        assert!(warned.borrow()[0].starts_with("warning: run "));
        assert!(warned.borrow()[0].ends_with("; it is left out of the report"));
        let alone = Selection::Runs(vec![made[0].clone()]);
        let e = select(&mut store, &alone, &warn, &|_| {}).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("nothing to report: the 1 selected run cannot be read"));
    }
}
