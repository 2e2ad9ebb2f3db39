//! `--format json` with paths that are not UTF-8 (a Linux path is bytes): every command that
//! names a path in its JSON prints it lossily (U+FFFD), as the result document does for its
//! target, and exits as it would for any other path. QA: `report -o`, `trace import -o`,
//! `trace stats`, `simulate --trace`, `catalog import aws-offer -o` and `store spool` panicked
//! (serde refuses such a path and `json!` unwraps), and `trace record -o` and `assess --report`
//! did their work, then failed with "path contains invalid UTF-8 characters".

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// `dir/<stem>\xff<suffix>`: a name that is not UTF-8.
fn bad(dir: &Path, stem: &str, suffix: &str) -> PathBuf {
    let mut name = OsString::from(stem);
    name.push(OsStr::from_bytes(b"\xff"));
    name.push(suffix);
    dir.join(name)
}

fn dt(home: &Path) -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", home.join("results.db"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("DISKTIER_RUN_DIR", home.join("run"))
        .env_remove("DISKTIER_CATALOG")
        .args(["--format", "json", "--quiet"]);
    c
}

/// Runs `c`; wants exit 0, no panic, and one JSON document on stdout whose `key` (a `/`
/// pointer) is the path `want`, written lossily.
fn json_names(case: &str, c: &mut Command, key: &str, want: &Path) -> Value {
    json_names_exit(case, c, key, want, &[0])
}

/// [`json_names`] for a command that may also exit with one of `codes`.
fn json_names_exit(case: &str, c: &mut Command, key: &str, want: &Path, codes: &[i32]) -> Value {
    let out = c
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{case}: {stderr}");
    assert!(
        out.status.code().is_some_and(|c| codes.contains(&c)),
        "{case}: {:?} {stderr}",
        out.status
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{case}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(
        v.pointer(key).and_then(Value::as_str),
        Some(&*want.to_string_lossy()),
        "{case}: {key} in {v}"
    );
    assert!(v
        .pointer(key)
        .unwrap()
        .as_str()
        .unwrap()
        .contains('\u{fffd}'));
    v
}

#[test]
fn commands_that_write_or_read_files_name_a_non_utf8_path_in_json() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let blk = fixture("../cachesim/tests/fixtures/blkparse.txt");
    let blk_bad = bad(h, "in", ".blk");
    std::fs::copy(&blk, &blk_bad).unwrap();

    let trace = bad(h, "trace", ".dttrace");
    json_names(
        "trace import -o",
        dt(h)
            .args(["trace", "import", "blkparse"])
            .arg(&blk)
            .arg("-o")
            .arg(&trace),
        "/output",
        &trace,
    );
    json_names(
        "trace import FILE",
        dt(h)
            .args(["trace", "import", "blkparse"])
            .arg(&blk_bad)
            .arg("-o")
            .arg(h.join("t2")),
        "/input",
        &blk_bad,
    );
    json_names(
        "trace stats",
        dt(h).args(["trace", "stats"]).arg(&trace),
        "/trace",
        &trace,
    );
    json_names(
        "simulate --trace",
        dt(h)
            .arg("simulate")
            .arg("--trace")
            .arg(&trace)
            .args(["--cache-sizes", "4MiB"]),
        "/trace",
        &trace,
    );
    let toml = bad(h, "catalog", ".toml");
    json_names(
        "catalog import aws-offer -o",
        dt(h)
            .args(["catalog", "import", "aws-offer", "--region", "eu-north-1"])
            .arg(fixture("tests/fixtures/catalog/offer-eu-north-1.json"))
            .arg("-o")
            .arg(&toml),
        "/output",
        &toml,
    );
    assert!(toml.is_file());

    // A stored run, then its report.
    dt(h)
        .args(["import", "fio"])
        .arg(fixture("tests/fixtures/fio/etcd-3.33.json"))
        .assert()
        .success();
    let html = bad(h, "report", ".html");
    json_names(
        "report -o",
        dt(h).arg("report").arg("-o").arg(&html),
        "/report",
        &html,
    );
    assert!(html.is_file());

    // The spool's directory comes from XDG_DATA_HOME.
    let data = bad(h, "data", "");
    json_names(
        "store spool",
        dt(h).env("XDG_DATA_HOME", &data).args(["store", "spool"]),
        "/spool",
        &data.join("disktier/spool"),
    );
}

/// The measuring commands: the work is done and the JSON names the file written.
#[test]
fn trace_record_and_assess_name_a_non_utf8_output_in_json() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let target = tempfile::tempdir().unwrap();
    let trace = bad(h, "rec", ".dttrace");
    json_names(
        "trace record -o",
        dt(h)
            .args(["--no-save", "trace", "record"])
            .arg(target.path())
            .arg("-o")
            .arg(&trace)
            .args(["--rw", "write", "--size", "1m", "--runtime", "1s"]),
        "/trace",
        &trace,
    );
    assert!(trace.is_file());
    let html = bad(h, "assess", ".html");
    // Exit 1 is a failed etcd verdict (CI saw a p99 over 10 ms on a loaded machine): the
    // report and the document are written all the same.
    json_names_exit(
        "assess --report",
        dt(h)
            .args(["--no-save", "assess", "--only", "etcd"])
            .arg(target.path())
            .arg("--report")
            .arg(&html),
        "/report",
        &html,
        &[0, 1],
    );
    assert!(html.is_file());
}

/// QA: a `--db` (or `DISKTIER_DB`) that is not UTF-8 got clap's "invalid UTF-8 was detected in
/// one or more arguments", naming neither the option nor what to do. Every store location is
/// read as text, so it is refused with that reason, exit 2, without echoing the value (a
/// PostgreSQL location may hold a password).
#[test]
fn a_non_utf8_store_location_is_refused_by_name() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut secret = OsString::from("postgres://u:s3cret@db/x");
    secret.push(OsStr::from_bytes(b"\xff"));
    let path = bad(h, "results", ".db").into_os_string();
    for (case, value) in [("path", &path), ("url", &secret)] {
        for via_env in [false, true] {
            let mut c = dt(h);
            if via_env {
                c.env("DISKTIER_DB", value);
            } else {
                c.arg("--db").arg(value);
            }
            let out = c.arg("history").output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let case = format!("{case}, env {via_env}");
            assert_eq!(out.status.code(), Some(2), "{case}: {err}");
            assert!(
                err.contains("error: the result store (--db or DISKTIER_DB) is not UTF-8"),
                "{case}: {err}"
            );
            assert!(err.contains("pass a UTF-8 symlink"), "{case}: {err}");
            assert!(!err.contains("invalid UTF-8 was detected"), "{case}: {err}");
            assert!(!err.contains("s3cret"), "{case}: {err}");
            // One line under --format json, as every error there.
            assert_eq!(err.lines().count(), 1, "{case}: {err}");
        }
    }
    assert!(!h.join("data").exists(), "no store was made");
}

/// QA (dt-s23): a value that is not UTF-8 where disktier reads text (a run group, a region, a
/// run id, a node command) was refused with clap's "invalid UTF-8 was detected in one or more
/// arguments", which names neither the argument nor the fix; it is now named, with its place,
/// its bytes and the fix.
#[test]
fn a_text_value_that_is_not_utf8_is_named() {
    let home = tempfile::tempdir().unwrap();
    let ff = OsStr::from_bytes(b"x\xff");
    for (args, want) in [
        (
            vec![OsStr::new("history"), OsStr::new("--group"), ff],
            "('x\\xff', after --group) is not UTF-8",
        ),
        (vec![OsStr::new("show"), ff], "('x\\xff') is not UTF-8"),
    ] {
        let out = dt(home.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(err.contains("give it in UTF-8"), "{args:?}: {err}");
    }
}
