//! Real OS errors driven through the binary: the message printed (`{:#}`, the whole chain)
//! carries the OS error's text exactly once. Each library error either wraps its cause
//! (`source()`, not in its own message) or quotes it (in its message, no `source()`), never
//! both; a regression here prints "...: No such file or directory (os error 2): No such file
//! or directory (os error 2)".

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use std::path::{Path, PathBuf};

fn bin(db: &Path) -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", db);
    c
}

/// Runs `args`, expects exit code 2 and returns stderr after checking that `os_text` is in
/// it exactly once.
fn fails_once(db: &Path, args: &[&str], os_text: &str) -> String {
    let out = bin(db).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.matches(os_text).count(),
        1,
        "{args:?} should print {os_text:?} once: {err}"
    );
    err
}

/// A temp dir holding a regular file, `plain`: a path below that file cannot be made.
fn dir_with_a_file() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    (d, file)
}

#[test]
fn a_missing_trace_names_the_os_error_once() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("missing/t.dttrace");
    let err = fails_once(
        &d.path().join("db"),
        &[
            "simulate",
            "--trace",
            trace.to_str().unwrap(),
            "--cache-sizes",
            "1GiB",
        ],
        "No such file or directory",
    );
    assert!(err.contains("t.dttrace"), "{err}");
}

#[test]
fn a_trace_written_under_a_regular_file_names_the_os_error_once() {
    let (d, file) = dir_with_a_file();
    let input = d.path().join("in.csv");
    std::fs::write(&input, "").unwrap();
    let out = file.join("t.dtt");
    fails_once(
        &d.path().join("db"),
        &[
            "trace",
            "import",
            "msr",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        "Not a directory",
    );
}

#[test]
fn a_store_under_a_regular_file_names_the_os_error_once() {
    let (_d, file) = dir_with_a_file();
    let db = file.join("sub/runs.db");
    let err = fails_once(&db, &["history"], "(os error");
    assert!(
        err.contains("result store") && err.contains("--db"),
        "{err}"
    );
}

#[test]
fn an_engine_open_error_names_the_os_error_once() {
    let (d, file) = dir_with_a_file();
    let target = file.join("target");
    let err = fails_once(
        &d.path().join("db"),
        &[
            "bench",
            "--no-save",
            "--rw",
            "write",
            "--size",
            "1m",
            target.to_str().unwrap(),
        ],
        "Not a directory",
    );
    assert!(err.contains("open failed"), "{err}");
}

#[test]
fn a_missing_price_list_names_the_os_error_once() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing/offer.json");
    let out = d.path().join("c.toml");
    for args in [
        vec!["catalog", "import", "aws-offer", missing.to_str().unwrap()],
        vec!["catalog", "refresh", "gcp", missing.to_str().unwrap()],
        vec!["catalog", "refresh", "azure", missing.to_str().unwrap()],
    ] {
        let mut args = args.clone();
        args.extend(["--output", out.to_str().unwrap(), "--region", "us-east-1"]);
        let err = fails_once(&d.path().join("db"), &args, "No such file or directory");
        assert!(err.contains("offer.json"), "{err}");
        assert!(!out.exists(), "nothing written on error");
    }
}

/// QA: a usage error (an unknown option, a missing value, a value clap refuses) printed clap's
/// text over several lines (the usage, a tip, "For more information") also under `--format
/// json`, where every other error is one `error: ...` line on stderr and stdout stays empty.
/// `--format json` counts before or after the refused argument; `--format text` and no format
/// keep clap's text; exit status 2 either way.
#[test]
fn a_usage_error_under_format_json_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            &["history", "--bogus", "--format", "json"][..],
            "error: unexpected argument '--bogus' found\n",
        ),
        (
            &["--format=json", "history", "--lats", "3"],
            "error: unexpected argument '--lats' found (tip: a similar argument exists: '--last')\n",
        ),
        (
            &["--format", "json", "history", "--last"],
            "error: a value is required for '--last <N>' but none was supplied\n",
        ),
        (
            &["--format", "json", "render", "openshift", "--mount", "/x", "--fs", "zfs"],
            "error: invalid value 'zfs' for '--fs <FS>' [possible values: xfs, ext4] (tip: a similar value exists: 'xfs')\n",
        ),
        (
            &["--format", "json", "check"],
            "error: a subcommand or argument is missing: run the command with --help for them\n",
        ),
    ] {
        let out = disktier()
            .env("XDG_DATA_HOME", dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{args:?}");
    }
    for args in [
        &["history", "--bogus"][..],
        &["--format", "json", "history", "--format", "text", "--bogus"],
    ] {
        let out = disktier().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("\nUsage: ") && err.contains("For more information"),
            "{err}"
        );
    }
}
