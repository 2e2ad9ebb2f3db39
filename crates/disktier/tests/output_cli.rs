//! QA: when stdout could not be written the CLI panicked (exit 101, `> /dev/full`) or exited 0
//! from a panic hook (a closed pipe, `| true`), and a measured run was lost because it was
//! printed before it was saved. Now:
//! - stdout that cannot take the output (ENOSPC, EIO): `error: cannot write the output: ...`,
//!   exit 2;
//! - a reader that went away (EPIPE): no error, and the exit status is the command's own (a
//!   failed check still exits 1);
//! - stderr that cannot be written (full, or a closed pipe) changes nothing;
//! - a measured run is in the store in every case.

use disktier_testkit::cli::disktier_at;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Where a stream goes.
#[derive(Clone, Copy, Debug)]
enum To {
    /// A pipe nobody reads any more (the reader closed it: EPIPE on write).
    ClosedPipe,
    /// /dev/full: every write fails with ENOSPC.
    Full,
    /// Captured by the test.
    Captured,
}

fn stdio(to: To) -> Stdio {
    match to {
        To::ClosedPipe => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            Stdio::from(writer)
        }
        To::Full => Stdio::from(File::options().write(true).open("/dev/full").unwrap()),
        To::Captured => Stdio::piped(),
    }
}

/// Runs disktier (store `db`) with `args`, stdout and stderr sent where asked.
fn run(db: &Path, args: &[&str], out: To, err: To) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_disktier"));
    c.env("DISKTIER_DB", db)
        .env("DISKTIER_TODAY", disktier_testkit::cli::TODAY)
        .env_remove("XDG_DATA_HOME")
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdio(out))
        .stderr(stdio(err));
    c.output().unwrap()
}

/// How many runs the store at `db` holds.
fn runs(db: &Path) -> usize {
    if !db.exists() {
        return 0;
    }
    let out = disktier_at(db)
        .args(["--format", "json", "history", "--last", "1000"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("history: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    v["runs"].as_array().map_or(0, Vec::len)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A check etcd that passes (any disk meets a 1 h threshold) and one that fails (none meets 1 us).
const PASS: &str = "1h";
const FAIL: &str = "1us";

fn check(dir: &Path, threshold: &'static str, json: bool) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    if json {
        a.extend(["--format".into(), "json".into()]);
    }
    a.extend(["check".into(), "etcd".into()]);
    a.push(dir.display().to_string());
    a.extend(["--quick".into(), "--threshold".into(), threshold.into()]);
    a
}

/// A temporary directory with the store's path in it and an empty `data` directory to measure.
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    (d, db, dir)
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_full_stdout_is_an_error_and_the_run_is_saved_all_the_same() {
    let (_d, db, dir) = scratch();
    let dir_s = dir.display().to_string();
    let bench = ["bench", &dir_s, "--rw", "write", "--size", "1m"];
    for (args, kind) in [
        (
            bench.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "bench",
        ),
        (check(&dir, FAIL, false), "check (fail)"),
        (check(&dir, PASS, true), "check --format json"),
    ] {
        let before = runs(&db);
        let o = run(&db, &strs(&args), To::Full, To::Captured);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
        assert!(
            err.contains("error: cannot write the output: No space left on device"),
            "{kind}: {err}"
        );
        assert!(!err.contains("panicked"), "{kind}: {err}");
        assert_eq!(
            runs(&db),
            before + 1,
            "{kind}: the run was not saved: {err}"
        );
    }
    // Commands that only print: the same error.
    for args in [
        &["history"][..],
        &["catalog", "show"],
        &["completions", "bash"],
        &["man"],
        &["--format", "json", "history"],
        &["--help"],
        &["bench", "--help"],
        &["--version"],
    ] {
        let o = run(&db, args, To::Full, To::Captured);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("error: cannot write the output: No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_reader_that_went_away_leaves_the_verdict_and_the_save() {
    let (_d, db, dir) = scratch();
    // QA: `check etcd DIR --threshold 1us | true` exited 0 and saved nothing.
    for json in [false, true] {
        for (threshold, code) in [(FAIL, 1), (PASS, 0)] {
            let before = runs(&db);
            let args = check(&dir, threshold, json);
            let o = run(&db, &strs(&args), To::ClosedPipe, To::Captured);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
            assert!(!err.contains("error:"), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            assert_eq!(runs(&db), before + 1, "{args:?}: not saved: {err}");
        }
    }
    let dir_s = dir.display().to_string();
    for args in [
        &["bench", &dir_s, "--rw", "write", "--size", "1m"][..],
        &["history"],
        &["catalog", "show"],
        &["completions", "fish"],
        &["--help"],
    ] {
        let o = run(&db, args, To::ClosedPipe, To::Captured);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty() || !err.contains("error"), "{args:?}: {err}");
    }
}

#[test]
fn stderr_that_cannot_be_written_stops_nothing() {
    let (_d, db, dir) = scratch();
    let dir_s = dir.display().to_string();
    let bench = ["bench", &dir_s, "--rw", "write", "--size", "1m"];
    for err in [To::Full, To::ClosedPipe] {
        let before = runs(&db);
        let o = run(&db, &bench, To::Captured, err);
        assert_eq!(o.status.code(), Some(0), "{err:?}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("measured"));
        assert_eq!(runs(&db), before + 1, "{err:?}");
        // The verdict's exit status stands too.
        let args = check(&dir, FAIL, false);
        let o = run(&db, &strs(&args), To::Captured, err);
        assert_eq!(o.status.code(), Some(1), "{err:?}");
    }
    // A closed stderr (`2>&-`).
    let o = Command::new("sh")
        .arg("-c")
        .arg("exec 2>&-; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_disktier"))
        .args(bench)
        .env("DISKTIER_DB", &db)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("measured"));
}
