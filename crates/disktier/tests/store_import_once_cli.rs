//! One import, one stored run, through the real binary: the same file imported by several
//! processes at once, and an import that waited in the spool while the same file was stored
//! (or was spooled twice), each stored once (store schema version 5's unique fingerprint).

use disktier_testkit::cli::{disktier, json_ok, TODAY};
use std::path::{Path, PathBuf};

fn fio_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/etcd-3.33.json")
}

/// The binary with the store at `db` and the data dir (so the spool) under `data`.
fn dt(db: &str, data: &Path) -> assert_cmd::Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", db).env("XDG_DATA_HOME", data);
    c
}

fn import(db: &str, data: &Path) -> std::process::Output {
    import_on("node-1", db, data)
}

/// `import fio` of the fixture as an etcd run of host `host`.
fn import_on(host: &str, db: &str, data: &Path) -> std::process::Output {
    dt(db, data)
        .args(["import", "fio"])
        .arg(fio_fixture())
        .args(["--profile", "etcd", "--host", host])
        .output()
        .unwrap()
}

fn history_ids(db: &str, data: &Path) -> Vec<String> {
    let out = dt(db, data)
        .args(["--format", "json", "history"])
        .output()
        .unwrap();
    json_ok(&out)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn spooled(data: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(data.join("disktier/spool"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// QA: `import fio FILE` run twice at once could store the file twice (the fingerprint was
/// looked up, then inserted). Eight processes import one file into one SQLite store, released
/// together: one run is stored, and each of the others says which.
#[test]
fn one_file_imported_by_processes_at_once_is_stored_once() {
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("r.db").to_str().unwrap().to_string();
    // The store exists first (made by another host's import), so the processes race to save
    // rather than to create it, which would order them.
    assert!(import_on("node-0", &db, data.path()).status.success());
    let children: Vec<_> = (0..8)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("disktier"))
                .args(["import", "fio"])
                .arg(fio_fixture())
                .args(["--profile", "etcd", "--host", "node-1"])
                .env("DISKTIER_DB", &db)
                .env("XDG_DATA_HOME", data.path())
                .env("DISKTIER_TODAY", TODAY)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let out = dt(&db, data.path())
        .args(["--format", "json", "history"])
        .output()
        .unwrap();
    let runs = json_ok(&out)["runs"].as_array().unwrap().clone();
    let ids: Vec<&str> = runs
        .iter()
        .filter(|r| r["hostname"] == "node-1")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!((runs.len(), ids.len()), (2, 1), "{runs:?}");
    for out in &outs {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(
            err.contains(&format!("saved as run {}", ids[0]))
                || err.contains(&format!(
                    "not saved again: this import is already stored as run {}",
                    ids[0]
                )),
            "{err}"
        );
    }
    assert!(spooled(data.path()).is_empty());
}

/// QA: `store flush` did not look at fingerprints, so an import spooled twice, or spooled and
/// also stored, was stored twice. The flush stores it once, says which run holds it, and
/// removes the spool file.
#[test]
fn flush_stores_an_import_once_however_often_it_was_spooled_or_stored() {
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("r.db").to_str().unwrap().to_string();
    // Stored once, then spooled twice (a store that cannot be one: :memory:).
    let first = import(&db, data.path());
    assert!(first.status.success());
    let ids = history_ids(&db, data.path());
    assert_eq!(ids.len(), 1);
    for _ in 0..2 {
        assert!(import(":memory:", data.path()).status.success());
    }
    let files = spooled(data.path());
    assert_eq!(files.len(), 2, "{files:?}");
    let out = dt(&db, data.path())
        .args(["store", "flush", "--all"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for f in &files {
        let spooled_id = f.file_stem().unwrap().to_str().unwrap();
        assert!(
            text.contains(&format!(
                "not saved again: spooled run {spooled_id} is an import already stored as run {} in {db}",
                ids[0]
            )),
            "{text}"
        );
    }
    assert!(!text.contains("saved: run"), "{text}");
    assert_eq!(history_ids(&db, data.path()), ids);
    assert!(spooled(data.path()).is_empty());

    // Spooled twice into an empty store, in --format json: the first is saved, the second
    // named as the same import.
    let (other, _d) = {
        let d = tempfile::tempdir().unwrap();
        (d.path().join("o.db").to_str().unwrap().to_string(), d)
    };
    for _ in 0..2 {
        assert!(import(":memory:", data.path()).status.success());
    }
    let out = dt(&other, data.path())
        .args(["--format", "json", "store", "flush", "--all"])
        .output()
        .unwrap();
    let v = json_ok(&out);
    let saved = v["saved"].as_array().unwrap();
    assert_eq!(saved.len(), 1, "{v}");
    let same = v["same_import"].as_array().unwrap();
    assert_eq!(same.len(), 1, "{v}");
    assert_eq!(same[0]["stored_as"], saved[0], "{v}");
    assert_eq!(history_ids(&other, data.path()).len(), 1);
    assert!(spooled(data.path()).is_empty());
}

/// QA: a newline in the store's path split the notes that name the store ("not saved again:
/// ... in STORE", history's "no stored runs match (store: ...)") over two lines, where store
/// flush escaped it. Each is one line, the newline shown as `\n`.
#[test]
fn a_newline_in_the_stores_path_keeps_each_note_on_its_line() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r\nstore.db");
    let db = db.to_str().unwrap();
    assert_eq!(import(db, d.path()).status.code(), Some(0));
    let again = import(db, d.path());
    let err = String::from_utf8_lossy(&again.stderr);
    let note: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("not saved again"))
        .collect();
    assert_eq!(note.len(), 1, "{err}");
    assert!(
        note[0].ends_with("(the same document: the same file imported with the same options)")
            && note[0].contains("r\\nstore.db"),
        "{err}"
    );
    let out = dt(db, d.path())
        .args(["history", "--profile", "no-such-profile"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let note: Vec<&str> = err.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(note.len(), 1, "{err}");
    assert!(
        note[0].contains("no stored runs match") && note[0].ends_with("r\\nstore.db)"),
        "{err}"
    );
}
