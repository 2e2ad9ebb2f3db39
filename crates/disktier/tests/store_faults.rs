//! The store failing under a run, through the real binary: its filesystem full (a tiny tmpfs),
//! read-only, locked past the timeout, PostgreSQL down. Each time the run's result is still
//! printed, nothing already stored is lost, the run waits in the spool with a note saying where
//! and how it will be saved, and `disktier store flush` (or the next run that saves) saves it.

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::json_ok;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn fio_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/etcd-3.33.json")
}

/// The binary with the store at `db` and the data dir (so the spool) under `data`.
fn dt(db: &str, data: &Path) -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", db).env("XDG_DATA_HOME", data);
    c
}

/// `import fio` of the fixture as an etcd run, saved to `db`: each on a host of its own, as
/// the same import twice is stored once (import_fio_cli::the_same_import_twice_is_stored_once).
fn import_cmd(db: &str, data: &Path) -> Command {
    static IMPORTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = IMPORTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut c = dt(db, data);
    c.args(["import", "fio"]).arg(fio_fixture()).args([
        "--profile",
        "etcd",
        "--host",
        &format!("node-{n}"),
    ]);
    c
}

fn import(db: &str, data: &Path) -> assert_cmd::assert::Assert {
    import_cmd(db, data).assert()
}

/// `store flush` (then `extra`) of the spool under `data` into `db`.
fn flush(db: &str, data: &Path, extra: &[&str]) -> Command {
    let mut c = dt(db, data);
    c.args(["store", "flush"]).args(extra);
    c
}

/// A store `r.db` on a tmpfs of `bytes` (root only), and a data dir for its spool; `None`
/// (skipped) where tmpfs cannot be mounted.
fn tmpfs_store(bytes: u64) -> Option<(disktier_testkit::Mount, tempfile::TempDir, String)> {
    let fs = disktier_testkit::Mount::tmpfs_if_root(bytes)?;
    let data = tempfile::tempdir().unwrap();
    let db = fs.dir.join("r.db").to_str().unwrap().to_string();
    Some((fs, data, db))
}

/// A scratch directory holding the SQLite store `r.db`, and its path.
fn scratch_db() -> (tempfile::TempDir, String) {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db").to_str().unwrap().to_string();
    (d, db)
}

/// The (first) run waiting in the spool under `data`.
fn spool_file(data: &Path) -> PathBuf {
    std::fs::read_dir(data.join("disktier/spool"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
}

fn history_len(db: &str, data: &Path) -> usize {
    let out = dt(db, data)
        .args(["--format", "json", "history"])
        .output()
        .unwrap();
    let v = json_ok(&out);
    v["runs"].as_array().unwrap().len()
}

fn spooled(data: &Path) -> usize {
    std::fs::read_dir(data.join("disktier/spool"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0)
}

/// Fills the filesystem at `dir` to the last byte; returns the filler file.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let p = dir.join("filler");
    let mut f = std::fs::File::create(&p).unwrap();
    let chunk = vec![0xa5u8; 4096];
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("{e}"),
        }
    }
    // Byte by byte for the last partial block.
    while f.write(&[0]).is_ok_and(|n| n == 1) {}
    p
}

#[test]
fn a_full_filesystem_loses_no_stored_run_and_spools_the_new_one() {
    let Some((fs, data, db)) = tmpfs_store(2 << 20) else {
        return;
    };
    let db = db.as_str();
    for _ in 0..3 {
        import(db, data.path()).success();
    }
    assert_eq!(history_len(db, data.path()), 3);
    let filler = fill(&fs.dir);
    let out = import_cmd(db, data.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The verdict stands; the result is printed; the failure is named with its fix.
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("fdatasync"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains("is full"), "{err}");
    assert!(err.contains("disktier store flush"), "{err}");
    assert!(
        err.contains(&data.path().join("disktier/spool").display().to_string()),
        "{err}"
    );
    assert_eq!(spooled(data.path()), 1);
    // Reading needs room for SQLite's WAL index: while full, a clear error, not a panic.
    dt(db, data.path())
        .arg("history")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is full"));
    std::fs::remove_file(filler).unwrap();
    // Nothing stored before was lost.
    assert_eq!(history_len(db, data.path()), 3);
    flush(db, data.path(), &[])
        .assert()
        .success()
        .stdout(predicate::str::contains("saved: run"));
    assert_eq!(spooled(data.path()), 0);
    assert_eq!(history_len(db, data.path()), 4);
    // Flushing again is a no-op.
    flush(db, data.path(), &[])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to flush"));
}

#[test]
fn a_read_only_store_spools_and_the_next_save_flushes() {
    let Some((fs, data, db)) = tmpfs_store(8 << 20) else {
        return;
    };
    let db = db.as_str();
    import(db, data.path()).success();
    fs.remount("ro");
    import(db, data.path())
        .success()
        .stdout(predicate::str::contains("fdatasync"))
        .stderr(
            predicate::str::contains("cannot save").and(predicate::str::contains("store flush")),
        );
    assert_eq!(spooled(data.path()), 1);
    // Regression (QA): reading the store there failed with only "unable to open database
    // file" (SQLite's WAL -shm file cannot be made on a read-only filesystem). It is read.
    assert_eq!(history_len(db, data.path()), 1);
    let id = dt(db, data.path())
        .args(["--format", "json", "history"])
        .output()
        .unwrap();
    let id = json_ok(&id)["runs"][0]["id"].as_str().unwrap().to_string();
    dt(db, data.path())
        .args(["show", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains("/var/tmp/ecfio"));
    fs.remount("rw");
    // The next run that saves there saves the spooled one too.
    import(db, data.path())
        .success()
        .stderr(predicate::str::contains("saved 1 spooled run"));
    assert_eq!(spooled(data.path()), 0);
    assert_eq!(history_len(db, data.path()), 3);
}

#[test]
fn a_store_locked_past_the_timeout_spools() {
    let d = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let dbs = db.to_str().unwrap();
    import(dbs, data.path()).success();
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    dt(dbs, data.path())
        .env("DISKTIER_DB_BUSY_TIMEOUT_MS", "300")
        .args(["import", "fio"])
        .arg(fio_fixture())
        .assert()
        .success()
        .stderr(predicate::str::contains("locked").and(predicate::str::contains("kept as run")));
    assert_eq!(spooled(data.path()), 1);
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    dt(dbs, data.path())
        .args(["--format", "json", "store", "flush"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"saved\""));
    assert_eq!(history_len(dbs, data.path()), 2);
}

/// Regression (QA): a PostgreSQL store whose table another session held locked made the save
/// wait forever (PostgreSQL has no lock timeout by default), the measured run with it, where a
/// locked SQLite file gives up after its busy timeout. The save now gives up as SQLite's does,
/// the run is spooled with the reason, and a flush saves it once the lock is gone.
#[test]
fn a_postgres_store_locked_past_the_timeout_spools() {
    let Some(disktier_testkit::pg::Schema {
        mut client,
        url,
        name,
    }) = disktier_testkit::pg::fresh_schema("faults_lock", &disktier_store::new_id())
    else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    import(&url, data.path()).success();
    let mut holder = client.transaction().unwrap();
    holder
        .batch_execute(&format!("LOCK TABLE {name}.runs IN ACCESS EXCLUSIVE MODE"))
        .unwrap();
    let started = std::time::Instant::now();
    dt(&url, data.path())
        .env("DISKTIER_DB_BUSY_TIMEOUT_MS", "300")
        .timeout(std::time::Duration::from_secs(60))
        .args(["import", "fio"])
        .arg(fio_fixture())
        .assert()
        .success()
        .stderr(
            predicate::str::contains("lock_timeout").and(predicate::str::contains("kept as run")),
        );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(spooled(data.path()), 1);
    holder.commit().unwrap();
    flush(&url, data.path(), &[]).assert().success();
    assert_eq!(spooled(data.path()), 0);
    assert_eq!(history_len(&url, data.path()), 2);
}

/// Regression (QA): a PostgreSQL server that stopped answering between the connection and the
/// INSERT (a stopped backend, which the kernel still ACKs for; a network gone) held the
/// measured run forever. The save now gives up at the location's query_timeout and the run is
/// spooled with an error naming that setting; a reading command fails (exit 2) as quickly.
#[test]
fn a_postgres_server_that_stops_answering_spools_the_run() {
    use disktier_testkit::pg::StallingProxy;
    use std::time::{Duration, Instant};
    let Some(schema) =
        disktier_testkit::pg::fresh_schema("faults_stall", &disktier_store::new_id())
    else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let saving = StallingProxy::to_test_server().expect("DISKTIER_TEST_PG names a TCP host");
    saving.stall_on("INSERT INTO runs");
    let started = Instant::now();
    import_cmd(
        &saving.location(&schema.name, "query_timeout=2"),
        data.path(),
    )
    .timeout(Duration::from_secs(60))
    .assert()
    .success()
    .stdout(predicate::str::contains("99th percentile"))
    .stderr(
        predicate::str::contains("did not answer within 2 s")
            .and(predicate::str::contains("query_timeout=SECONDS"))
            .and(predicate::str::contains("kept as run")),
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(spooled(data.path()), 1);
    let reading = StallingProxy::to_test_server().unwrap();
    reading.stall_on("FROM runs");
    let started = Instant::now();
    dt(
        &reading.location(&schema.name, "query_timeout=2"),
        data.path(),
    )
    .arg("history")
    .timeout(Duration::from_secs(60))
    .assert()
    .code(2)
    .stderr(predicate::str::contains("did not answer within 2 s"));
    assert!(started.elapsed() < Duration::from_secs(30));
    // Once the server answers, the spooled run is saved.
    flush(&schema.url, data.path(), &["--all"])
        .assert()
        .success();
    assert_eq!(spooled(data.path()), 0);
    assert_eq!(history_len(&schema.url, data.path()), 1);
}

/// A save the server committed but whose answer never came (the client gave up at its
/// deadline, and spooled the run) is not stored twice: the spool keeps the id the save was
/// tried under, and the flush finds it already stored.
#[test]
fn a_save_committed_after_the_deadline_is_not_stored_twice() {
    use disktier_testkit::pg::StallingProxy;
    let Some(schema) =
        disktier_testkit::pg::fresh_schema("faults_twice", &disktier_store::new_id())
    else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    // The store is made first: its migration's own INSERT answers `INSERT 0 1` too.
    import(&schema.url, data.path()).success();
    let proxy = StallingProxy::to_test_server().expect("DISKTIER_TEST_PG names a TCP host");
    proxy.stall_on_answer("INSERT 0 1");
    import_cmd(
        &proxy.location(&schema.name, "query_timeout=2"),
        data.path(),
    )
    .timeout(std::time::Duration::from_secs(60))
    .assert()
    .success()
    .stderr(predicate::str::contains("kept as run"));
    assert_eq!(spooled(data.path()), 1);
    // The server has the row: the save did commit.
    assert_eq!(history_len(&schema.url, data.path()), 2);
    flush(&schema.url, data.path(), &["--all"])
        .assert()
        .success()
        .stdout(predicate::str::contains("already stored"));
    assert_eq!(spooled(data.path()), 0);
    assert_eq!(history_len(&schema.url, data.path()), 2);
}

/// Regression (QA): `store flush` with nothing in the spool still opened the store, so it
/// failed (exit 2) when the store was down, which is when one runs it, and created a SQLite
/// store (and its directory) that nothing was saved to. It now says the spool is empty and
/// exits 0 without opening the store.
#[test]
fn flushing_an_empty_spool_opens_no_store() {
    let data = tempfile::tempdir().unwrap();
    let down = "postgres://disktier:Sekr1tPw@127.0.0.1:1/results?sslmode=disable";
    flush(down, data.path(), &[]).assert().success().stdout(
        predicate::str::contains("nothing to flush: the spool")
            .and(predicate::str::contains("is empty")),
    );
    let out = dt(down, data.path())
        .args(["--format", "json", "store", "flush"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["saved"], serde_json::json!([]));
    assert_eq!(v["failed"], serde_json::json!([]));
    assert_eq!(
        v["store"],
        "postgres://disktier:***@127.0.0.1:1/results?sslmode=disable"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new/r.db");
    flush(db.to_str().unwrap(), data.path(), &["--all"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to flush"));
    assert!(
        !dir.path().join("new").exists(),
        "the flush created a store"
    );
}

#[test]
fn postgres_down_spools_and_flush_saves_elsewhere_on_request() {
    let data = tempfile::tempdir().unwrap();
    let down = "postgres://disktier:Sekr1tPw@127.0.0.1:1/results?sslmode=disable";
    let out = dt(down, data.path())
        .args(["--format", "json", "import", "fio"])
        .arg(fio_fixture())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert!(!err.contains("Sekr1tPw"), "{err}");
    assert!(err.contains("disktier:***@127.0.0.1:1"), "{err}");
    assert_eq!(spooled(data.path()), 1);
    let file = spool_file(data.path());
    assert!(!std::fs::read_to_string(&file).unwrap().contains("Sekr1tPw"));
    dt(down, data.path())
        .args(["store", "spool"])
        .assert()
        .success()
        .stdout(predicate::str::contains("disktier:***@127.0.0.1:1"));
    // Still down: the flush fails, keeps the run, exit 2.
    flush(down, data.path(), &[]).assert().code(2);
    assert_eq!(spooled(data.path()), 1);
    // Into another store only when asked.
    let (_d, db) = scratch_db();
    let db = db.as_str();
    flush(db, data.path(), &[])
        .assert()
        .success()
        .stdout(predicate::str::contains("--all"));
    assert_eq!(spooled(data.path()), 1);
    flush(db, data.path(), &["--all"]).assert().success();
    assert_eq!(spooled(data.path()), 0);
    assert_eq!(history_len(db, data.path()), 1);
}

/// Regression (QA): `DISKTIER_DB=` (what a template leaves when it has no value) and `--db ""`
/// "saved as run ID" into a private temporary SQLite database, and `--db :memory:` into an
/// in-memory one: both gone when the process exited, the run lost. An empty location is the
/// default store, as an unset one is (docs/store.md); `:memory:` and `file:` URIs are refused,
/// so the run is spooled, not lost.
#[test]
fn an_empty_location_is_the_default_store_and_memory_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let default_db = data.path().join("disktier/results.db");
    import("", data.path())
        .success()
        .stderr(predicate::str::contains("saved as run"));
    import_cmd("/unused.db", data.path())
        .args(["--db", ""])
        .assert()
        .success();
    assert!(default_db.is_file());
    assert_eq!(history_len("", data.path()), 2);
    assert_eq!(history_len(default_db.to_str().unwrap(), data.path()), 2);
    assert_eq!(spooled(data.path()), 0);
    for memory in [":memory:", "file:r.db?mode=memory&cache=shared"] {
        let out = import_cmd(memory, data.path()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("saved as run"), "{err}");
        assert!(
            err.contains("warning: cannot save the import run in"),
            "{err}"
        );
        assert!(err.contains("pass the"), "{err}");
        assert!(err.contains("note: the result is kept as run"), "{err}");
        // No "once the store works again": this location never will.
        assert!(err.contains("this location is never a store"), "{err}");
        assert!(!err.contains("works again"), "{err}");
        dt(memory, data.path())
            .arg("history")
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("store location {memory}")));
    }
    assert_eq!(spooled(data.path()), 2);
    assert_eq!(history_len("", data.path()), 2, "nothing reached the store");
    // --help says so too.
    let help = dt("", data.path())
        .args(["history", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("(unset or empty: $XDG_DATA_HOME/disktier/results.db)"),
        "{help}"
    );
}

/// Regression (QA): a directory as --db was "not a disktier database or is corrupted" when
/// read and "unable to open database file" when saved to. Both say it is a directory; the run
/// is spooled.
#[test]
fn a_directory_as_the_store_is_called_a_directory() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("dir.db");
    std::fs::create_dir(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let want =
        format!("{dir} is a directory, not a SQLite database file: pass --db with a file's path");
    dt(dir, data.path())
        .arg("history")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(want.as_str()));
    import(dir, data.path())
        .success()
        .stderr(predicate::str::contains(want.as_str()));
    assert_eq!(spooled(data.path()), 1);
}

/// Regression (QA): `store flush` of a spooled run that was already in the store (a flush
/// stopped between the save and the removal of the file) said "saved" again.
#[test]
fn flushing_a_run_already_stored_says_so() {
    let data = tempfile::tempdir().unwrap();
    import(":memory:", data.path()).success();
    let file = spool_file(data.path());
    let kept = std::fs::read(&file).unwrap();
    let id = file.file_stem().unwrap().to_str().unwrap().to_string();
    let (_d, db) = scratch_db();
    let db = db.as_str();
    flush(db, data.path(), &["--all"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("saved: run {id} in {db}")));
    std::fs::write(&file, kept).unwrap();
    let out = flush(db, data.path(), &["--all"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("already stored: run {id} is in {db}")),
        "{text}"
    );
    assert!(!text.contains("saved:"), "{text}");
    assert_eq!(spooled(data.path()), 0);
    assert_eq!(history_len(db, data.path()), 1);
}

/// Regression (QA): a store password holding `#` or `?` unencoded (the driver takes it) was
/// printed in clear in the warning, the spool note, `store spool` and the spool file itself;
/// one holding `@`, `/` and `:` as well left most of it shown.
#[test]
fn a_password_with_url_delimiters_is_never_shown_or_spooled() {
    for (down, shown) in [
        (
            "postgres://qa:Hunter#2secret@127.0.0.1:1/qa",
            "postgres://qa:***@127.0.0.1:1/qa",
        ),
        (
            "postgres://qa:Hunter?2secret@127.0.0.1:1/qa?sslmode=disable",
            "postgres://qa:***@127.0.0.1:1/qa?sslmode=disable",
        ),
        (
            "postgres://qa:p@ss:w/rd?&=#Hunter2secret@127.0.0.1:1/qa",
            "postgres://qa:***@127.0.0.1:1/qa",
        ),
    ] {
        let data = tempfile::tempdir().unwrap();
        let out = import_cmd(down, data.path()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            err.contains(&format!("cannot save the import run in {shown}")),
            "{err}"
        );
        let listed = dt(down, data.path())
            .args(["store", "spool"])
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&listed.stdout);
        assert!(listed.contains(shown), "{listed}");
        let file = spool_file(data.path());
        let spooled = std::fs::read_to_string(&file).unwrap();
        for text in [&*err, &*listed, &spooled] {
            for piece in ["Hunter", "2secret", "ss:w/rd"] {
                assert!(!text.contains(piece), "{down}: {piece} in {text}");
            }
        }
    }
}
